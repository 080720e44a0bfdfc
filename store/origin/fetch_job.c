/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The fetcher's jobs and their waiters (see internal.h): the per-shard
 * table that collapses concurrent misses of one key into one origin
 * fetch, the delivery of readers (or a reply) to every waiter, and the
 * shard side of fetcher_get(), fetcher_forward() and fetcher_cancel(),
 * which run on the callers' threads under f->lock.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <xxhash.h>

#include "internal.h"

/* ---- waiters ---- */

static void result_reply(struct fetch_waiter *fw, int status, const char *msg)
{
	fw->kind = FETCH_REPLY;
	fw->status = status;
	fw->r = NULL;
	snprintf(fw->msg, sizeof(fw->msg), "%s", msg);
}

/* Take the job's waiters: from now on fetcher_cancel cannot have them. */
static struct fetch_waiter *take_waiters(struct fshard *f, struct job *j)
{
	struct fetch_waiter *list, *fw;

	pthread_mutex_lock(&f->lock);
	list = j->waiters;
	j->waiters = NULL;
	for (fw = list; fw; fw = fw->next)
		fw->job = NULL;
	pthread_mutex_unlock(&f->lock);
	return list;
}

/* Give every waiter of @j the reply @status. */
void job_reply_all(struct job *j, int status, const char *fmt, ...)
{
	struct fetch_waiter *fw = take_waiters(j->f, j), *next;
	char msg[sizeof(fw->msg)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	for (; fw; fw = next) {
		next = fw->next;
		fw->next = NULL;
		result_reply(fw, status, msg);
		fw->done(fw);
	}
}

/* Give every waiter of @j its own reader on @key. */
void job_deliver(struct job *j, const void *key, size_t klen,
		 enum fetch_kind kind, int getflags)
{
	struct fshard *f = j->f;
	struct fetch_waiter *fw = take_waiters(f, j), *next;

	for (; fw; fw = next) {
		int ret;

		next = fw->next;
		fw->next = NULL;
		if (!job_selects(j, fw)) { /* another variant's */
			fw->kind = FETCH_RETRY;
			fw->r = NULL;
			fw->done(fw);
			continue;
		}
		ret = gs_get_open(f->s, key, klen, getflags, &fw->r);
		fw->stale = ret == 0 && j->stale_served;
		if (ret < 0) {
			char msg[sizeof(fw->msg)];

			snprintf(msg, sizeof(msg),
				 "cannot read the origin's response: %s",
				 gs_strerror(ret));
			result_reply(fw, 502, msg);
		} else {
			fw->kind = kind;
		}
		fw->done(fw);
	}
}

bool job_serve_stale(struct job *j)
{
	struct http_cc resp, q;

	if (j->forward || !j->has_stale || j->background)
		return false;
	/* the stored response's own stale-if-error, and the request's */
	http_cc_init(&resp);
	http_cc_parse_block(&resp, "Cache-Control", j->stale.headers,
			    j->stale.headers_len);
	http_cc_init(&q);
	if (j->cc)
		http_cc_parse(&q, j->cc, j->cc_len);
	if (!http_stale_ok(HTTP_STALE_ERROR, &resp, &q, j->stale.fresh_until,
			   j->stale.age_base, j->stale.flags & GS_ATTR_NO_CACHE,
			   j->stale.flags & GS_ATTR_REVALIDATE,
			   j->f->o.stale_on_error_s, time(NULL)))
		return false;
	/* joiners from now on start a fetch of their own */
	job_unpublish(j);
	j->stale_served = true;
	STAT(j->f, served_stale);
	job_deliver(j, j->key, j->klen, FETCH_OBJECT, 0);
	return true;
}

void job_deliver_current(struct job *j)
{
	if (j->pass) /* of unknown length, it may still be stored: MISS */
		job_deliver(j, j->rkey, j->rklen,
			    j->late && j->storable ? FETCH_OBJECT : FETCH_PASS,
			    GS_GET_FILL);
	else
		job_deliver(j, j->key, j->klen, FETCH_OBJECT, GS_GET_FILL);
}

/* ---- the job table (f->lock held) ---- */

static struct job **bucket(struct fshard *f, uint64_t hash)
{
	return &f->table[hash % NBUCKETS];
}

static struct job *table_find(struct fshard *f, const char *key, size_t klen,
			      uint64_t hash)
{
	for (struct job *j = *bucket(f, hash); j; j = j->hnext)
		if (j->hash == hash && j->klen == klen &&
		    memcmp(j->key, key, klen) == 0)
			return j;
	return NULL;
}

void job_table_remove(struct fshard *f, struct job *j)
{
	struct job **p;

	if (!j->in_table)
		return;
	for (p = bucket(f, j->hash); *p != j; p = &(*p)->hnext)
		;
	*p = j->hnext;
	j->in_table = false;
}

void job_unkick(struct fshard *f, struct job *j)
{
	struct job **p;

	if (!j->kicked)
		return;
	for (p = &f->kicked; *p != j; p = &(*p)->qnext)
		;
	*p = j->qnext;
	j->kicked = false;
}

/* Take @j out of the table: a later fetcher_get starts a new fetch. */
void job_unpublish(struct job *j)
{
	pthread_mutex_lock(&j->f->lock);
	job_table_remove(j->f, j);
	pthread_mutex_unlock(&j->f->lock);
}

/* The same, if @j has no waiters (atomically: none can join after). */
bool job_unpublish_if_unwanted(struct job *j)
{
	bool unwanted;

	pthread_mutex_lock(&j->f->lock);
	unwanted = j->waiters == NULL;
	if (unwanted)
		job_table_remove(j->f, j);
	pthread_mutex_unlock(&j->f->lock);
	return unwanted;
}

static void waiter_add(struct job *j, struct fetch_waiter *fw)
{
	fw->job = j;
	fw->next = j->waiters;
	j->waiters = fw;
}

void job_release_handle(struct job *j)
{
	if (j->h) {
		curl_multi_remove_handle(j->f->multi, j->h);
		curl_easy_cleanup(j->h);
		j->h = NULL;
	}
	curl_slist_free_all(j->hdrs);
	j->hdrs = NULL;
	free(j->head);
	j->head = NULL;
	j->head_len = 0;
}

void job_free(struct job *j)
{
	job_release_handle(j);
	free(j->key);
	free(j->auth);
	free(j->cc);
	free(j->target);
	free(j->fields);
	free(j->method);
	free(j->vary);
	free(j);
}

/* ---- the callers' side ---- */

static struct job *job_new(struct fshard *f, const char *key, size_t klen)
{
	struct job *j = calloc(1, sizeof(*j));

	if (!j || !(j->key = malloc(klen))) {
		free(j);
		return NULL;
	}
	memcpy(j->key, key, klen);
	j->klen = klen;
	j->hash = XXH3_64bits(key, klen);
	j->f = f;
	return j;
}

/* Queue @j for the fetcher thread.  f->lock held. */
static void enqueue(struct fshard *f, struct job *j)
{
	j->qnext = f->incoming;
	f->incoming = j;
}

/* Copy what the client's request says into @j: 0 or -ENOMEM. */
static int job_take_req(struct job *j, const struct fetch_req *req)
{
	if (!req)
		return 0;
	if (req->authorization &&
	    !(j->auth = strndup(req->authorization, req->authorization_len)))
		return -ENOMEM;
	j->auth_len = req->authorization_len;
	if (req->cache_control &&
	    !(j->cc = strndup(req->cache_control, req->cache_control_len)))
		return -ENOMEM;
	j->cc_len = req->cache_control_len;
	if (req->target && !(j->target = strndup(req->target, req->target_len)))
		return -ENOMEM;
	j->target_len = req->target_len;
	if (req->fields && !(j->fields = strndup(req->fields, req->fields_len)))
		return -ENOMEM;
	j->fields_len = req->fields_len;
	snprintf(j->client, sizeof(j->client), "%s",
		 req->client ? req->client : "");
	j->passreq = req->pass || req->authorization;
	j->no_auth = req->no_authorization;
	j->alone = req->alone;
	return 0;
}

int shard_get(struct fshard *f, const char *key, size_t klen, uint64_t hash,
	      const struct gs_meta *stale, const struct fetch_req *req,
	      struct fetch_waiter *fw)
{
	bool private = req && (req->authorization || req->alone);
	struct job *j, *nj = NULL;

	if (klen == 0 || klen > GS_KEY_MAX || (!fw && private))
		return -EINVAL;
	if (fw) {
		fw->next = NULL;
		fw->job = NULL;
		fw->r = NULL;
	}
	pthread_mutex_lock(&f->lock);
	for (;;) {
		if (f->stopping) {
			pthread_mutex_unlock(&f->lock);
			if (nj)
				job_free(nj);
			return -ESHUTDOWN;
		}
		/* one with credentials neither joins nor is joined */
		j = private ? NULL : table_find(f, key, klen, hash);
		if (j && !fw) { /* a background one: that fetch will do */
			pthread_mutex_unlock(&f->lock);
			if (nj)
				job_free(nj);
			return 0;
		}
		if (j) {
			waiter_add(j, fw);
			STAT(f, collapsed);
			if (j->delivered && !j->kicked) {
				j->kicked = true;
				j->qnext = f->kicked;
				f->kicked = j;
			}
			pthread_mutex_unlock(&f->lock);
			if (nj)
				job_free(nj);
			curl_multi_wakeup(f->multi);
			return 0;
		}
		if (nj)
			break;
		/* allocate without the lock, then look again */
		pthread_mutex_unlock(&f->lock);
		nj = job_new(f, key, klen);
		if (!nj)
			return -ENOMEM;
		if (job_take_req(nj, req) < 0) {
			job_free(nj);
			return -ENOMEM;
		}
		if (stale && gs_attr_decode(stale->attr, stale->attr_len,
					    &nj->stale) == 0) {
			/* kept for stale-if-error even without validators */
			nj->has_stale = true;
			nj->stale_cas = stale->cas;
			nj->conditional = nj->stale.etag_len ||
					  nj->stale.last_modified;
		}
		pthread_mutex_lock(&f->lock);
	}
	if (fw)
		waiter_add(nj, fw);
	nj->background = !fw;
	nj->owner = fw;
	if (!private) {
		nj->hnext = *bucket(f, hash);
		*bucket(f, hash) = nj;
		nj->in_table = true;
	}
	enqueue(f, nj);
	pthread_mutex_unlock(&f->lock);
	curl_multi_wakeup(f->multi);
	return 0;
}

int shard_forward(struct fshard *f, const char *key, size_t klen,
		  const struct fetch_forward *fwd, struct fetch_waiter *fw)
{
	struct job *j;

	if (klen > GS_KEY_MAX || !fwd->method) /* "/": no key */
		return -EINVAL;
	j = job_new(f, key, klen);
	if (!j)
		return -ENOMEM;
	j->forward = true;
	j->fwd = *fwd;
	if (!(j->method = strdup(fwd->method)) ||
	    job_take_req(j, &fwd->req) < 0) {
		job_free(j);
		return -ENOMEM;
	}
	j->fwd.method = j->method;
	j->passreq = true;
	fw->next = NULL;
	fw->r = NULL;
	pthread_mutex_lock(&f->lock);
	if (f->stopping) {
		pthread_mutex_unlock(&f->lock);
		job_free(j);
		return -ESHUTDOWN;
	}
	waiter_add(j, fw);
	enqueue(f, j);
	pthread_mutex_unlock(&f->lock);
	curl_multi_wakeup(f->multi);
	return 0;
}

bool shard_cancel(struct fshard *f, struct fetch_waiter *fw)
{
	struct fetch_waiter **p;
	struct job *j;
	bool found = false;

	pthread_mutex_lock(&f->lock);
	j = fw->job;
	if (j) {
		for (p = &j->waiters; *p; p = &(*p)->next)
			if (*p == fw) {
				*p = fw->next;
				fw->next = NULL;
				fw->job = NULL;
				found = true;
				break;
			}
	}
	pthread_mutex_unlock(&f->lock);
	return found;
}

/* ---- the origin URL ---- */

char *fetch_url(const char *base, CURL *h, const char *key, size_t klen)
{
	size_t cap = strlen(base) + 3 * klen + 2, len;
	char *url = malloc(cap);
	size_t i = 0;

	if (!url)
		return NULL;
	len = (size_t)snprintf(url, cap, "%s/", base);
	while (i < klen) {
		const char *seg = key + i;
		const char *slash = memchr(seg, '/', klen - i);
		size_t n = slash ? (size_t)(slash - seg) : klen - i;

		if (n) {
			char *e = curl_easy_escape(h, seg, (int)n);

			if (!e) {
				free(url);
				return NULL;
			}
			len += (size_t)snprintf(url + len, cap - len, "%s", e);
			curl_free(e);
		}
		i += n;
		if (i < klen) { /* the '/' itself */
			url[len++] = '/';
			url[len] = '\0';
			i++;
		}
	}
	return url;
}

/* ---- keys ---- */

static int hexval(unsigned char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

static bool unreserved(unsigned char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	       (ch >= '0' && ch <= '9') || ch == '-' || ch == '.' ||
	       ch == '_' || ch == '~';
}

long fetch_key_of(const char *t, size_t len, char *out, size_t max)
{
	static const char hex[] = "0123456789ABCDEF";
	bool query = false;
	size_t o = 0;

	if (!len || t[0] != '/')
		return -EINVAL;
	for (size_t i = 1; i < len; i++) {
		unsigned char ch = (unsigned char)t[i];
		int hi, lo;

		if (!ch)
			return -EINVAL;
		if (ch == '?')
			query = true;
		hi = ch == '%' && i + 2 < len ?
			     hexval((unsigned char)t[i + 1]) :
			     -1;
		lo = hi >= 0 ? hexval((unsigned char)t[i + 2]) : -1;
		if (lo >= 0) {
			unsigned char v = (unsigned char)(hi << 4 | lo);

			if (!v && !query)
				return -EINVAL;
			if (o + 3 > max)
				return -ENAMETOOLONG;
			if (unreserved(v)) {
				out[o++] = (char)v;
			} else {
				out[o++] = '%';
				out[o++] = hex[hi];
				out[o++] = hex[lo];
			}
			i += 2;
			continue;
		}
		if (ch == '%' && !query)
			return -EINVAL;
		if (o + 1 > max)
			return -ENAMETOOLONG;
		out[o++] = (char)ch;
	}
	out[o] = '\0';
	return (long)o;
}

/*
 * The key of a URL the origin named (Location, Content-Location): a path
 * ("/x"), or an absolute URL of the origin itself; under the origin
 * URL's own path, which the key does not carry.  Relative references
 * other than a path are not resolved (nothing is invalidated for them).
 */
static long key_of_url(const char *base, const char *u, size_t len, char *out,
		       size_t max)
{
	const char *auth_end, *bpath;
	size_t alen, plen;

	auth_end = strstr(base, "://");
	bpath = auth_end ? strchr(auth_end + 3, '/') : NULL;
	alen = bpath ? (size_t)(bpath - base) : strlen(base);
	plen = bpath ? strlen(bpath) : 0;
	if (len >= 2 && u[0] == '/' && u[1] == '/')
		return -EINVAL; /* another host, scheme-relative */
	if (len && u[0] != '/') {
		if (len < alen || strncasecmp(u, base, alen) ||
		    (len > alen && u[alen] != '/'))
			return -EINVAL; /* not the origin's */
		u += alen;
		len -= alen;
		if (!len)
			u = "/", len = 1;
	}
	if (plen) {
		if (len < plen || memcmp(u, bpath, plen) ||
		    (len > plen && u[plen] != '/' && u[plen] != '?'))
			return -EINVAL; /* outside what we mirror */
		u += plen;
		len -= plen;
	}
	if (!len || u[0] != '/')
		return -EINVAL;
	return fetch_key_of(u, len, out, max);
}

void job_invalidate_locations(struct job *j)
{
	const char *p = j->head, *end = j->head + j->head_len;
	char *key = malloc(GS_KEY_MAX + 1);

	if (!key)
		return; /* they stay until they expire */
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end, *v;
		size_t n;
		long klen;

		if ((size_t)(le - p) > 9 && !strncasecmp(p, "location:", 9))
			v = p + 9;
		else if ((size_t)(le - p) > 17 &&
			 !strncasecmp(p, "content-location:", 17))
			v = p + 17;
		else
			v = NULL;
		if (v) {
			while (v < le && (*v == ' ' || *v == '\t'))
				v++;
			n = (size_t)(le - v);
			while (n && (v[n - 1] == '\r' || v[n - 1] == ' ' ||
				     v[n - 1] == '\t'))
				n--;
			klen = key_of_url(j->f->base, v, n, key, GS_KEY_MAX);
			if (klen > 0)
				job_delete_url(j->f, key, (size_t)klen);
		}
		p = le + 1;
	}
	free(key);
}

/* ---- Vary (see origin.h) ---- */

static bool ows(char ch)
{
	return ch == ' ' || ch == '\t';
}

/* Call @fn for each "Name: value" line of @p (LF or CRLF ends). */
static void each_line(const char *p, size_t len,
		      void (*fn)(void *arg, const char *name, size_t nlen,
				 const char *v, size_t vlen),
		      void *arg)
{
	const char *end = p + len;

	while (p && p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		const char *colon = memchr(p, ':', (size_t)(le - p));

		if (colon) {
			const char *v = colon + 1, *ve = le;

			while (v < ve && ows(*v))
				v++;
			while (ve > v && (ve[-1] == '\r' || ows(ve[-1])))
				ve--;
			fn(arg, p, (size_t)(colon - p), v, (size_t)(ve - v));
		}
		p = le + 1;
	}
}

struct names_ctx {
	const char *want; /* the field name whose lines are collected */
	size_t wlen;
	char *out; /* normalised, comma-joined; NULL: out of room */
	size_t len, cap;
	bool star, any;
	bool seen; /* a line of the wanted field, if empty */
};

static void out_byte(struct names_ctx *x, char ch)
{
	if (x->out && x->len + 1 < x->cap)
		x->out[x->len++] = ch;
	else
		x->out = NULL;
}

/*
 * A #list value, normalised into x->out: elements trimmed, inner runs of
 * whitespace one space, joined by ",", empty ones dropped; @lower for
 * field names.
 */
static void list_add(struct names_ctx *x, const char *v, size_t vlen,
		     bool lower)
{
	const char *end = v + vlen;

	while (v < end) {
		const char *comma = memchr(v, ',', (size_t)(end - v));
		const char *e = comma ? comma : end;

		while (v < e && ows(*v))
			v++;
		while (e > v && ows(e[-1]))
			e--;
		if (e > v) {
			if (x->any)
				out_byte(x, ',');
			x->any = true;
			if (e - v == 1 && *v == '*')
				x->star = true;
			for (; v < e; v++) {
				if (ows(*v) && v + 1 < e && ows(v[1]))
					continue;
				out_byte(x, ows(*v) ? ' ' :
					    lower   ? (char)tolower(*v) :
						      *v);
			}
		}
		v = comma ? comma + 1 : end;
	}
}

static void collect(void *arg, const char *name, size_t nlen, const char *v,
		    size_t vlen)
{
	struct names_ctx *x = arg;

	if (nlen != x->wlen || strncasecmp(name, x->want, nlen))
		return;
	x->seen = true;
	list_add(x, v, vlen, false);
}

/* The response head's Vary field names, normalised, into @out. */
static size_t vary_names(const char *head, size_t len, char *out, size_t cap,
			 bool *star)
{
	struct names_ctx x = { .out = out, .cap = cap };
	const char *p = head, *end = head + len;

	/* the status line has no colon before its end, or one we skip:
	 * only "Vary:" lines count */
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;

		if ((size_t)(le - p) >= 5 && !strncasecmp(p, "vary:", 5)) {
			const char *v = p + 5, *ve = le;

			while (ve > v && (ve[-1] == '\r' || ows(ve[-1])))
				ve--;
			list_add(&x, v, (size_t)(ve - v), true);
		}
		p = le + 1;
	}
	*star = x.star;
	if (!x.out)
		return (size_t)-1; /* too long: not stored */
	out[x.len] = '\0';
	return x.len;
}

/* The digest of the values of @names (comma-separated) in @fields. */
static uint64_t vary_digest(const char *names, size_t nlen, const char *fields,
			    size_t flen)
{
	XXH3_state_t *st = XXH3_createState();
	const char *p = names, *end = names + nlen;
	char *buf = malloc(HEAD_MAX + 1);
	uint64_t d;

	if (!st || !buf) {
		XXH3_freeState(st);
		free(buf);
		return 0; /* matches nothing stored by a digest */
	}
	XXH3_64bits_reset(st);
	while (p < end) {
		const char *comma = memchr(p, ',', (size_t)(end - p));
		const char *e = comma ? comma : end;
		struct names_ctx x = { .want = p,
				       .wlen = (size_t)(e - p),
				       .out = buf,
				       .cap = HEAD_MAX };

		each_line(fields, flen, collect, &x);
		/* absent ("\1") is not empty ("\2"); names end in "\0" */
		XXH3_64bits_update(st, x.seen ? "\2" : "\1", 1);
		if (x.out)
			XXH3_64bits_update(st, buf, x.len);
		XXH3_64bits_update(st, "", 1);
		p = comma ? comma + 1 : end;
	}
	d = XXH3_64bits_digest(st);
	XXH3_freeState(st);
	free(buf);
	return d;
}

/* The URL's key of @key: itself, or what a variant's key starts with. */
static size_t primary_len(const char *key, size_t klen)
{
	const char *sep = memchr(key, '\0', klen);

	return sep ? (size_t)(sep - key) : klen;
}

static long variant_of(const char *key, size_t plen, uint64_t d, char *out,
		       size_t max)
{
	if (plen + VARY_SEP_LEN + 16 > max)
		return -ENAMETOOLONG;
	memcpy(out, key, plen);
	memcpy(out + plen, VARY_SEP, VARY_SEP_LEN);
	snprintf(out + plen + VARY_SEP_LEN, 17, "%016" PRIx64, d);
	return (long)(plen + VARY_SEP_LEN + 16);
}

/* A stub's two lines, found in its header block. */
struct stub_ctx {
	const char *names, *list;
	size_t nlen, llen;
};

static void stub_line(void *arg, const char *name, size_t nlen, const char *v,
		      size_t vlen)
{
	struct stub_ctx *x = arg;

	if (nlen == 4 && !strncasecmp(name, "vary", 4)) {
		x->names = v;
		x->nlen = vlen;
	} else if (nlen == 15 && !strncasecmp(name, "goblin-variants", 15)) {
		x->list = v;
		x->llen = vlen;
	}
}

static void stub_parse(const struct gs_attr *a, struct stub_ctx *x)
{
	memset(x, 0, sizeof(*x));
	each_line(a->headers, a->headers_len, stub_line, x);
}

long fetch_variant_key(const char *key, size_t klen, const struct gs_attr *stub,
		       const char *fields, size_t fields_len, char *out,
		       size_t max)
{
	struct stub_ctx x;

	stub_parse(stub, &x);
	if (!(stub->flags & GS_ATTR_VARY) || !x.names || !x.nlen)
		return -EINVAL;
	return variant_of(key, primary_len(key, klen),
			  vary_digest(x.names, x.nlen, fields, fields_len), out,
			  max);
}

/* Delete the variants @x lists of the URL @key (its first @plen bytes). */
static void delete_listed(struct fshard *f, const char *key, size_t plen,
			  const struct stub_ctx *x, const char *keep)
{
	char vk[GS_KEY_MAX + 1];
	const char *p = x->list, *end = x->list + x->llen;

	if (plen + VARY_SEP_LEN + 16 > GS_KEY_MAX)
		return;
	memcpy(vk, key, plen);
	memcpy(vk + plen, VARY_SEP, VARY_SEP_LEN);
	while (p && p + 16 <= end) {
		if (!keep || memcmp(p, keep, 16)) {
			memcpy(vk + plen + VARY_SEP_LEN, p, 16);
			gs_delete(f->s, vk, plen + VARY_SEP_LEN + 16);
		}
		p += 17;
	}
}

/* @key's stub, decoded into @a: true if there is one. */
static bool stub_get(struct fshard *f, const char *key, size_t plen,
		     struct gs_attr *a, struct stub_ctx *x)
{
	struct gs_meta *m = malloc(sizeof(*m));
	bool ok = m && gs_stat(f->s, key, plen, m) == 0 &&
		  gs_attr_decode(m->attr, m->attr_len, a) == 0 &&
		  (a->flags & GS_ATTR_VARY);

	free(m);
	if (ok)
		stub_parse(a, x);
	return ok;
}

void job_delete_url(struct fshard *f, const char *key, size_t klen)
{
	struct gs_attr *a = malloc(sizeof(*a));
	size_t plen = primary_len(key, klen);
	struct stub_ctx x;

	if (a && stub_get(f, key, plen, a, &x))
		delete_listed(f, key, plen, &x, NULL);
	free(a);
	gs_delete(f->s, key, plen);
	if (plen != klen)
		gs_delete(f->s, key, klen);
}

/*
 * Write the stub of the URL @key (@plen bytes) naming @names, with the
 * variant @hex added to what it listed (when it named the same fields;
 * otherwise the variants it listed are deleted).  -errno: not stored.
 */
static int stub_update(struct fshard *f, const char *key, size_t plen,
		       const char *names, const char *hex)
{
	struct gs_attr *old = malloc(sizeof(*old)), *a = malloc(sizeof(*a));
	uint8_t *rec = malloc(GS_ATTR_MAX);
	struct gs_put_args args = { 0 };
	struct stub_ctx x;
	char list[VARIANTS_MAX * 17 + 1];
	size_t ll = 0, n = 0;
	long alen;
	int ret = -ENOMEM;

	if (!old || !a || !rec)
		goto out;
	if (stub_get(f, key, plen, old, &x)) {
		if (x.nlen == strlen(names) &&
		    !memcmp(x.names, names, x.nlen)) {
			/* the same fields: keep the list but @hex, less the
			 * oldest while it is full */
			const char *p = x.list, *end = x.list + x.llen;
			const char *keep[VARIANTS_MAX * 2];

			for (; p && p + 16 <= end && n < VARIANTS_MAX * 2;
			     p += 17)
				if (memcmp(p, hex, 16))
					keep[n++] = p;
			for (size_t i = 0; i < n; i++) {
				if (n - i >= VARIANTS_MAX) {
					struct stub_ctx one = { .list = keep[i],
								.llen = 16 };

					delete_listed(f, key, plen, &one, NULL);
					continue;
				}
				memcpy(list + ll, keep[i], 16);
				list[ll + 16] = ' ';
				ll += 17;
			}
		} else {
			delete_listed(f, key, plen, &x, NULL);
		}
	}
	memcpy(list + ll, hex, 16);
	ll += 16;
	gs_attr_init(a);
	a->flags = GS_ATTR_ORIGIN | GS_ATTR_VARY;
	a->headers_len = (size_t)snprintf(
		a->headers, sizeof(a->headers),
		"Vary: %s\r\nGoblin-Variants: %.*s\r\n", names, (int)ll, list);
	if (a->headers_len >= sizeof(a->headers)) {
		ret = -ENAMETOOLONG;
		goto out;
	}
	alen = gs_attr_encode(a, rec, GS_ATTR_MAX);
	if (alen < 0) {
		ret = (int)alen;
		goto out;
	}
	args.attr = rec;
	args.attr_len = (size_t)alen;
	ret = gs_put(f->s, key, plen, "", 0, &args);
out:
	free(old);
	free(a);
	free(rec);
	return ret;
}

static int job_rekey(struct job *j, const char *key, size_t klen)
{
	char *k = malloc(klen), *old;

	if (!k)
		return -ENOMEM;
	memcpy(k, key, klen);
	pthread_mutex_lock(&j->f->lock);
	old = j->key;
	j->key = k;
	j->klen = klen;
	pthread_mutex_unlock(&j->f->lock);
	free(old);
	return 0;
}

void job_vary(struct job *j, bool *storable)
{
	struct fshard *f = j->f;
	char names[1024], vk[GS_KEY_MAX + 1], hex[17];
	size_t nlen, plen = primary_len(j->key, j->klen);
	long vlen;

	if (!j->fields || !j->head)
		return; /* goblinfs: Vary is passed (rfc9111.c) */
	nlen = vary_names(j->head, j->head_len, names, sizeof(names),
			  &j->vary_star);
	if (nlen == (size_t)-1) {
		*storable = false;
		j->vary_star = true; /* too many names: none may share */
		return;
	}
	if (j->vary_star)
		return; /* never stored (rfc9111.c) */
	if (nlen) {
		if (!(j->vary = strdup(names))) {
			*storable = false;
			j->vary_star = true;
			return;
		}
		j->vdigest = vary_digest(names, nlen, j->fields, j->fields_len);
	}
	if (!*storable)
		return;
	if (!nlen) {
		if (plen != j->klen) { /* it varied, and no longer does */
			job_delete_url(f, j->key, plen);
			if (job_rekey(j, j->key, plen) < 0)
				*storable = false;
		}
		return;
	}
	vlen = variant_of(j->key, plen, j->vdigest, vk, GS_KEY_MAX);
	snprintf(hex, sizeof(hex), "%016" PRIx64, j->vdigest);
	if (vlen < 0 || stub_update(f, j->key, plen, names, hex) < 0)
		*storable = false;
	else if (((size_t)vlen != j->klen || memcmp(vk, j->key, j->klen)) &&
		 job_rekey(j, vk, (size_t)vlen) < 0)
		*storable = false;
}

/* May @fw have @j's response?  Only if its request selects it. */
bool job_selects(const struct job *j, const struct fetch_waiter *fw)
{
	if (j->vary_star)
		return fw == j->owner;
	if (!j->vary)
		return true;
	return vary_digest(j->vary, strlen(j->vary), fw->fields,
			   fw->fields_len) == j->vdigest;
}
