/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The response head (see internal.h): libcurl hands it over line by
 * line; once it is complete it is parsed, RFC 9111's decision is taken
 * (rfc9111.c), and the body is admitted to the store as a fill under the
 * key, passed through a fill under a private key, or, for a 304 to a
 * revalidation, not needed: the stored version's record is refreshed.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../httptok.h"
#include "internal.h"

static _Atomic uint64_t pass_seq;

/* ---- the response head ---- */

static bool name_is(const char *line, size_t nlen, const char *name)
{
	return strlen(name) == nlen && strncasecmp(line, name, nlen) == 0;
}

/* Split "Name: value" (no CRLF) into its parts, value trimmed. */
static bool header_split(const char *line, size_t len, size_t *nlen,
			 const char **v, size_t *vlen)
{
	const char *colon = memchr(line, ':', len);
	const char *e = line + len;

	if (!colon || colon == line)
		return false;
	*nlen = (size_t)(colon - line);
	*v = colon + 1;
	while (*v < e && (**v == ' ' || **v == '\t'))
		(*v)++;
	while (e > *v && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	*vlen = (size_t)(e - *v);
	return true;
}

/*
 * Header fields neither stored nor relayed: the hop-by-hop ones (RFC
 * 9110 sec. 7.6.1; Proxy-Authenticate and Proxy-Authentication-Info
 * address the next proxy, sec. 11.7), the framing and Age, which the
 * cache writes itself when it serves (Content-Length of what it sends,
 * RFC 9111 sec. 4.2.3's Age), Accept-Ranges (goblind serves ranges of
 * whatever it holds), and what the record keeps in fields of its own
 * and serving writes back (ETag, Last-Modified, Content-Type).  Every
 * other field is end-to-end and kept, Date and Server included: a
 * stored response is replayed as the origin sent it (sec. 3.1).
 */
static const char *const not_kept[] = {
	"Connection",
	"Keep-Alive",
	"Proxy-Connection",
	"TE",
	"Trailer",
	"Transfer-Encoding",
	"Upgrade",
	"Proxy-Authenticate",
	"Proxy-Authentication-Info",
	"Content-Length",
	"Age",
	"Accept-Ranges",
	"ETag",
	"Last-Modified",
	"Content-Type",
	NULL,
};

/* Connection's options name more hop-by-hop fields (sec. 7.6.1). */
static bool in_connection(const struct job *j, const char *line, size_t nlen);

/*
 * A line is replayed as it came, so only a well-formed one: a token for
 * a name (not an obs-fold continuation, RFC 9112 sec. 5.2), no CR or NUL
 * in it that a client could take for the end of a line.
 */
static bool kept(const struct job *j, const char *line, size_t len, size_t nlen)
{
	for (size_t i = 0; i < nlen; i++)
		if (line[i] <= ' ' || line[i] >= 127 ||
		    strchr("\"(),/:;<=>?@[\\]{}", line[i]))
			return false;
	if (memchr(line, '\r', len) || memchr(line, '\0', len))
		return false;
	for (int i = 0; not_kept[i]; i++)
		if (name_is(line, nlen, not_kept[i]))
			return false;
	return !in_connection(j, line, nlen);
}

/*
 * Append the line @line (@len bytes, no CRLF) to @a's header block.
 * False when it does not fit: the record has a bounded room.
 */
static bool block_add(struct gs_attr *a, const char *line, size_t len)
{
	if (len + 2 > KEPT_HEADERS_MAX - a->headers_len)
		return false;
	memcpy(a->headers + a->headers_len, line, len);
	a->headers_len += len;
	memcpy(a->headers + a->headers_len, "\r\n", 2);
	a->headers_len += 2;
	return true;
}

/* Call @fn for each header line of @j's final response head. */
static void head_each(struct job *j,
		      void (*fn)(void *arg, const char *line, size_t len,
				 size_t nlen, const char *v, size_t vlen),
		      void *arg)
{
	const char *p = j->head, *end = j->head + j->head_len;

	/* the status line first */
	p = memchr(p, '\n', (size_t)(end - p));
	while (p && ++p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		const char *v;
		size_t nlen, vlen;

		if (len && p[len - 1] == '\r')
			len--;
		if (header_split(p, len, &nlen, &v, &vlen))
			fn(arg, p, len, nlen, v, vlen);
		p = nl;
	}
}

struct head_info {
	const struct job *j;
	struct http_resp_info ri;
	struct gs_attr a;
	bool has_etag, has_lm, has_ctype;
	bool has_date;	/* a valid Date is in the block */
	bool truncated; /* a line did not fit in the record */
	uint64_t clen;	/* Content-Length, GS_SIZE_UNKNOWN: none */
	bool chunked;
};

static void head_line(void *arg, const char *line, size_t len, size_t nlen,
		      const char *v, size_t vlen)
{
	struct head_info *hi = arg;
	bool keep = kept(hi->j, line, len, nlen);
	int64_t t;

	if (name_is(line, nlen, "Cache-Control")) {
		http_cc_parse(&hi->ri.cc, v, vlen);
	} else if (name_is(line, nlen, "Date")) {
		/* RFC 9110 sec. 6.6.1: an invalid Date may be replaced */
		if (hi->has_date || gs_http_date_parse(v, vlen, &t) < 0)
			keep = false;
		else
			hi->ri.date = t;
		hi->has_date = hi->has_date || keep;
	} else if (name_is(line, nlen, "Expires")) {
		http_resp_expires(&hi->ri, v, vlen);
	} else if (name_is(line, nlen, "Last-Modified")) {
		if (gs_http_date_parse(v, vlen, &t) == 0) {
			hi->ri.last_modified = t;
			hi->a.last_modified = t;
			hi->has_lm = true;
			hi->ri.has_validator = true;
		}
	} else if (name_is(line, nlen, "Age")) {
		http_resp_age(&hi->ri, v, vlen);
	} else if (name_is(line, nlen, "Vary")) {
		if (vlen)
			hi->ri.has_vary = true;
		if (memchr(v, '*', vlen))
			hi->ri.vary_star = true;
	} else if (name_is(line, nlen, "ETag")) {
		hi->ri.has_validator = true;
		if (vlen <= GS_ATTR_ETAG_MAX) {
			memcpy(hi->a.etag, v, vlen);
			hi->a.etag_len = vlen;
			hi->has_etag = true;
		}
	} else if (name_is(line, nlen, "Surrogate-Control")) {
		/* for this cache only: it never leaves (Edge Architecture) */
		http_sc_parse(&hi->ri.sc, v, vlen, HTTP_SC_TOKEN);
		keep = false;
	} else if (name_is(line, nlen, "Content-Type")) {
		size_t n = vlen < GS_ATTR_CTYPE_MAX ? vlen : GS_ATTR_CTYPE_MAX;

		memcpy(hi->a.ctype, v, n);
		hi->a.ctype_len = n;
		hi->has_ctype = true;
	} else if (name_is(line, nlen, "Content-Length")) {
		char num[24];
		char *e;

		if (vlen && vlen < sizeof(num)) {
			memcpy(num, v, vlen);
			num[vlen] = '\0';
			hi->clen = strtoull(num, &e, 10);
			if (*e || num[0] == '-')
				hi->clen = GS_SIZE_UNKNOWN;
		}
	} else if (name_is(line, nlen, "Transfer-Encoding")) {
		hi->chunked = true;
	}
	if (keep && !block_add(&hi->a, line, len))
		hi->truncated = true;
}

static bool in_connection(const struct job *j, const char *line, size_t nlen)
{
	const char *p = j->head, *end = j->head + j->head_len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		const char *v, *e;
		size_t n, vlen, elen;
		struct ht_list l;

		if (len && p[len - 1] == '\r')
			len--;
		if (len > 11 && strncasecmp(p, "Connection:", 11) == 0 &&
		    header_split(p, len, &n, &v, &vlen)) {
			ht_list_init(&l, v, vlen);
			while (ht_list_next(&l, &e, &elen))
				if (elen == nlen && !strncasecmp(e, line, nlen))
					return true;
		}
		p = nl ? nl + 1 : end;
	}
	return false;
}

/*
 * Parse @j's response head into @hi.  The header block keeps every
 * end-to-end field; without a valid Date it gets one, the time it was
 * received (RFC 9110 sec. 6.6.1: a cache appends it).
 */
static void head_parse(struct job *j, struct head_info *hi)
{
	memset(hi, 0, sizeof(*hi));
	http_resp_info_init(&hi->ri);
	gs_attr_init(&hi->a);
	hi->j = j;
	hi->clen = GS_SIZE_UNKNOWN;
	hi->ri.status = j->status;
	hi->a.status = (uint16_t)j->status;
	hi->a.flags = GS_ATTR_ORIGIN;
	head_each(j, head_line, hi);
	if (!hi->has_date) {
		char d[GS_HTTP_DATE_LEN + 1], line[6 + GS_HTTP_DATE_LEN + 1];

		gs_http_date_format(time(NULL), d);
		snprintf(line, sizeof(line), "Date: %s", d);
		if (!block_add(&hi->a, line, strlen(line)))
			hi->truncated = true;
	}
	if (hi->chunked)
		hi->clen = GS_SIZE_UNKNOWN;
	/* no body, whatever Content-Length says */
	if (j->status == 204 || j->status == 304 || j->status < 200)
		hi->clen = 0;
}

static void attr_freshness(struct gs_attr *a,
			   const struct http_store_decision *d)
{
	a->age_base = d->age_base;
	/* 0 would mean "always fresh" */
	a->fresh_until = d->fresh_until ? d->fresh_until : 1;
	a->flags &= (uint8_t) ~(GS_ATTR_REVALIDATE | GS_ATTR_NO_CACHE);
	if (d->must_revalidate)
		a->flags |= GS_ATTR_REVALIDATE;
	if (d->revalidate_always)
		a->flags |= GS_ATTR_NO_CACHE;
}

static void decide(struct job *j, const struct http_resp_info *ri,
		   struct http_store_decision *d)
{
	struct http_policy pol = {
		.heuristic_pct = j->f->o.heuristic_pct < 0 ?
					 0 :
					 (unsigned)j->f->o.heuristic_pct,
		.heuristic_max = j->f->o.heuristic_max,
	};
	struct http_req_info q;

	memset(&q, 0, sizeof(q));
	http_cc_init(&q.cc);
	q.authorization = j->auth != NULL;
	q.variants = j->fields != NULL; /* the gateway's requests */
	if (j->cc)
		http_cc_parse(&q.cc, j->cc, j->cc_len);
	http_store_decide_policy(&q, ri, &pol, j->request_time, time(NULL), d);
}

/* Begin the writer under the private key. */
static int begin_pass(struct job *j, const struct gs_attr *a, uint64_t size)
{
	uint8_t rec[GS_ATTR_MAX];
	long alen = gs_attr_encode(a, rec, sizeof(rec));
	struct gs_put_args args = {
		.size = size,
		.attr = rec,
		.attr_len = alen > 0 ? (size_t)alen : 0,
		.fill = true,
	};
	uint64_t seq = atomic_fetch_add(&pass_seq, 1) + 1;

	memcpy(j->rkey, PASS_PREFIX, PASS_PREFIX_LEN);
	j->rklen = PASS_PREFIX_LEN +
		   (size_t)snprintf(j->rkey + PASS_PREFIX_LEN,
				    sizeof(j->rkey) - PASS_PREFIX_LEN,
				    "%" PRIu64, seq);
	j->pass = true;
	return gs_put_begin(j->f->s, j->rkey, j->rklen, &args, &j->w);
}

/*
 * Fields a 304 does not update (RFC 9111 §4.3.4): the stored body
 * depends on them, and it is the stored body that is served.
 */
static const char *const not_updated[] = {
	"Content-Encoding", "Content-Length", "Content-MD5",
	"Content-Range",    "Digest",	      NULL,
};

/* Is there a "@name:" line (@nlen bytes of name) in @block? */
static bool block_has(const char *block, size_t blen, const char *name,
		      size_t nlen)
{
	const char *p = block, *end = block + blen;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));

		if ((size_t)(end - p) > nlen && p[nlen] == ':' &&
		    strncasecmp(p, name, nlen) == 0)
			return true;
		p = nl ? nl + 1 : end;
	}
	return false;
}

/*
 * The stored header block @a with a 304's fields @upd merged in, parsed
 * into @mi as a response head would be: each field the 304 carries
 * replaces the stored ones of its name, but for not_updated.
 */
static void merge_304(struct job *j, const struct gs_attr *a,
		      const struct head_info *upd, struct head_info *mi)
{
	const char *blocks[2] = { a->headers, upd->a.headers };
	size_t lens[2] = { a->headers_len, upd->a.headers_len };

	memset(mi, 0, sizeof(*mi));
	http_resp_info_init(&mi->ri);
	gs_attr_init(&mi->a);
	mi->j = j;
	mi->clen = 0;
	for (int b = 0; b < 2; b++) {
		const char *p = blocks[b], *end = blocks[b] + lens[b];

		while (p < end) {
			const char *nl = memchr(p, '\n', (size_t)(end - p));
			size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
			const char *v, *next = nl ? nl + 1 : end;
			size_t nlen, vlen;
			bool fixed = false;

			if (len && p[len - 1] == '\r')
				len--;
			if (!header_split(p, len, &nlen, &v, &vlen)) {
				p = next;
				continue;
			}
			for (int i = 0; not_updated[i]; i++)
				fixed = fixed ||
					name_is(p, nlen, not_updated[i]);
			/* stored: unless the 304 has it; 304: unless fixed */
			if (b == 0 ? !block_has(upd->a.headers,
						upd->a.headers_len, p, nlen) ||
					     fixed :
				     !fixed)
				head_line(mi, p, len, nlen, v, vlen);
			p = next;
		}
	}
}

static bool etag_strong(const char *e, size_t len)
{
	return len >= 2 && e[0] == '"';
}

/* A 304 to our conditional request: refresh the stored version. */
static int head_not_modified(struct job *j)
{
	struct fshard *f = j->f;
	struct http_store_decision d;
	struct head_info *hi = malloc(2 * sizeof(*hi)), *mi = hi + 1;
	struct gs_attr *a = &j->stale;
	uint8_t *rec = malloc(GS_ATTR_MAX);
	long alen;
	int ret = 0;

	if (!hi || !rec) {
		job_reply_all(j, 502, "out of memory");
		j->drop = true;
		ret = -1;
		goto out;
	}
	head_parse(j, hi);
	/*
	 * §4.3.4: a strong validator that is not the stored one says the
	 * 304 is about another representation: ask again, unconditionally.
	 */
	if (hi->has_etag && etag_strong(hi->a.etag, hi->a.etag_len) &&
	    etag_strong(a->etag, a->etag_len) &&
	    (hi->a.etag_len != a->etag_len ||
	     memcmp(hi->a.etag, a->etag, a->etag_len))) {
		j->restart = true;
		ret = -1;
		goto out;
	}
	/* the stored response, updated, decides its freshness from now */
	merge_304(j, a, hi, mi);
	mi->ri.status = a->status ? a->status : 200;
	mi->ri.age = hi->ri.age;
	mi->ri.sc = hi->ri.sc;
	mi->ri.has_validator = true;
	mi->ri.last_modified = hi->has_lm ? hi->a.last_modified :
					    a->last_modified;
	decide(j, &mi->ri, &d);
	if (d.why != HTTP_STORE_OK || mi->truncated) {
		/*
		 * The origin says the stored response is current but may not
		 * be stored any more (or its updated head does not fit):
		 * serve it this once, then drop it.
		 */
		job_deliver(j, j->key, j->klen, FETCH_OBJECT, 0);
		gs_delete(f->s, j->key, j->klen);
		STAT(f, not_modified);
		goto out;
	}
	attr_freshness(a, &d);
	memcpy(a->headers, mi->a.headers, mi->a.headers_len);
	a->headers_len = mi->a.headers_len;
	if (hi->has_ctype) {
		memcpy(a->ctype, hi->a.ctype, hi->a.ctype_len);
		a->ctype_len = hi->a.ctype_len;
	}
	if (hi->has_etag && !a->etag_len) {
		memcpy(a->etag, hi->a.etag, hi->a.etag_len);
		a->etag_len = hi->a.etag_len;
	}
	if (hi->has_lm)
		a->last_modified = hi->a.last_modified;
	/* the body stays where it is: only the record changes */
	alen = gs_attr_encode(a, rec, GS_ATTR_MAX);
	ret = alen < 0 ? -EINVAL :
			 gs_set_attr(f->s, j->key, j->klen, j->stale_cas, rec,
				     (size_t)alen, 0);
	if (ret == -ESTALE || ret == -ENOENT) {
		/* replaced or gone meanwhile: ask again, unconditionally */
		j->restart = true;
		ret = -1;
		goto out;
	}
	STAT(f, not_modified);
	job_deliver(j, j->key, j->klen, FETCH_OBJECT, 0);
	ret = 0;
out:
	free(hi);
	free(rec);
	return ret;
}

/*
 * The final response head is in: decide where its body goes and give the
 * waiters their readers.  Returns 0, or -1 to stop the transfer.
 */
static int head_done(struct job *j)
{
	struct fshard *f = j->f;
	struct http_store_decision d;
	struct head_info hi;
	int ret;

	j->state = JOB_BODY;
	j->deadline_ms = gs_mono_ms() + f->o.timeout_ms;
	if (!j->forward && j->conditional && j->status == 304)
		return head_not_modified(j);
	/* RFC 5861 §4: an error is a 500, 502, 503 or 504 */
	if ((j->status == 500 || (j->status >= 502 && j->status <= 504)) &&
	    job_serve_stale(j)) {
		j->drop = true; /* the error's body is not needed */
		return -1;
	}
	head_parse(j, &hi);
	if (j->forward && !j->fwd.safe && j->status >= 200 &&
	    j->status < 400) { /* invalidated, RFC 9111 sec. 4.4 */
		url_delete(f, j->key, j->klen);
		job_invalidate_locations(j);
	}
	if (!j->forward && (j->conditional || j->has_stale) &&
	    ((j->status >= 200 && j->status < 300) || j->status == 404 ||
	     j->status == 410))
		gs_delete(f->s, j->key, j->klen); /* no longer current */
	j->size = hi.clen;
	if (!j->forward) {
		decide(j, &hi.ri, &d);
		/* a head over the bound, or one that does not fit: passed */
		if (d.why == HTTP_STORE_OK && j->head_len <= f->o.max_header &&
		    !hi.truncated) {
			attr_freshness(&hi.a, &d);
			j->storable = true;
		}
		job_vary(j, &j->storable); /* may move j to its variant */
	}
	if (j->storable && hi.clen != GS_SIZE_UNKNOWN &&
	    hi.clen <= f->o.max_object) {
		uint8_t rec[GS_ATTR_MAX];
		long alen = gs_attr_encode(&hi.a, rec, sizeof(rec));
		struct gs_put_args args = {
			.size = hi.clen,
			.attr = rec,
			.attr_len = alen > 0 ? (size_t)alen : 0,
			.fill = true,
		};

		ret = gs_put_begin(f->s, j->key, j->klen, &args, &j->w);
		if (ret == 0) {
			/* a live older version would hide the fill */
			gs_delete(f->s, j->key, j->klen);
			goto readers;
		}
		/* -ENOSPC, -EFBIG, -EEXIST (someone else fills it): pass */
		j->storable = false;
	}
	if (hi.clen != GS_SIZE_UNKNOWN)
		j->storable = false; /* too large to store */
	/* kept by no cache: later misses ask the origin themselves */
	if (!j->storable && !j->forward && !job_unpublish_wanted(j)) {
		j->drop = true; /* and nobody wants this one */
		return -1;
	}
	ret = begin_pass(j, &hi.a, hi.clen);
	if (ret < 0) {
		STAT(f, passed);
		j->w = NULL;
		job_unpublish(j); /* joiners start a fetch of their own */
		job_reply_all(j, 502, "cannot relay the origin's response: %s",
			      gs_strerror(ret));
		j->drop = true;
		return -1;
	}
	if (hi.clen == GS_SIZE_UNKNOWN)
		j->late = true; /* stored or passed: known at the end */
	else
		STAT(f, passed);
readers:
	pthread_mutex_lock(&f->lock);
	j->delivered = true;
	pthread_mutex_unlock(&f->lock);
	job_deliver_current(j);
	return 0;
}

size_t fetch_on_header(char *p, size_t one, size_t n, void *arg)
{
	struct job *j = arg;

	(void)one;
	if (j->state != JOB_HEAD)
		return n; /* trailers */
	if (n > HEAD_MAX - j->head_len)
		return 0; /* a head this large is a bad response */
	if (!j->head && !(j->head = malloc(HEAD_MAX)))
		return 0;
	if (j->head_len == 0) { /* the status line */
		int st = 0;

		if (n < 12 || strncmp(p, "HTTP/", 5) ||
		    sscanf(p, "HTTP/%*s %d", &st) != 1 || st < 100 || st > 999)
			return 0;
		j->status = st;
	}
	if ((n == 2 && p[0] == '\r' && p[1] == '\n') ||
	    (n == 1 && p[0] == '\n')) {
		if (j->status < 200) { /* 100 Continue and the like */
			j->head_len = 0;
			return n;
		}
		return head_done(j) < 0 ? 0 : n;
	}
	memcpy(j->head + j->head_len, p, n);
	j->head_len += n;
	return n;
}

size_t fetch_on_body(char *p, size_t one, size_t n, void *arg)
{
	struct job *j = arg;
	struct fshard *f = j->f;

	(void)one;
	STAT_ADD(f, origin_bytes, n);
	if (n)
		j->deadline_ms = gs_mono_ms() + f->o.timeout_ms;
	if (!j->w)
		return n; /* a 304: nothing should come */
	if (j->storable && j->late && j->got + n > f->o.max_object)
		j->storable = false; /* passed whole, not stored */
	if (gs_put_write(j->w, p, n) < 0)
		return 0; /* stops the transfer */
	j->got += n;
	return n;
}
