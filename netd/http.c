/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The HTTP/1.1 front-end: GET, HEAD, PUT and DELETE of /<key> on the
 * store, with ranges, validators, keep-alive and pipelining; with --mirror
 * a caching reverse proxy over the origin fetcher (fetch.c).  Heads are
 * parsed by http_proto.c and the semantics decided by http_sem.c; bodies
 * stream both ways as in memcache.c: the RAM head goes out zero-copy from
 * its slot before the tail is read, and a PUT body flows into a store
 * writer as it arrives.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include "goblind.h"

#define OUT(c, lit) conn_out(c, lit, sizeof(lit) - 1)

#define STATS_KEY "_goblin/stats"
#define METRICS_KEY "metrics"
#define FWD_BODY_MAX (16u << 20)	/* a write forwarded to the origin */
#define DEFAULT_CTYPE "application/octet-stream"

/* A step of a request: go on with the next phase or request. */
#define STEP_NEXT (-1)

/* A request kept across a fetch: its head copied and parsed again. */
struct http_saved {
	struct http_req req;	/* its pointers are into head[] */
	size_t len;
	char head[];
};

static const char *date_now(struct worker *w)
{
	int64_t now = time(NULL);

	if (now != w->date_sec) {
		http_date_format(now, w->date);
		w->date_sec = now;
	}
	return w->date;
}

static const char *reason(int st)
{
	switch (st) {
	case 100: return "Continue";
	case 200: return "OK";
	case 201: return "Created";
	case 204: return "No Content";
	case 206: return "Partial Content";
	case 301: return "Moved Permanently";
	case 302: return "Found";
	case 304: return "Not Modified";
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 408: return "Request Timeout";
	case 411: return "Length Required";
	case 412: return "Precondition Failed";
	case 413: return "Content Too Large";
	case 414: return "URI Too Long";
	case 416: return "Range Not Satisfiable";
	case 417: return "Expectation Failed";
	case 431: return "Request Header Fields Too Large";
	case 500: return "Internal Server Error";
	case 501: return "Not Implemented";
	case 502: return "Bad Gateway";
	case 503: return "Service Unavailable";
	case 504: return "Gateway Timeout";
	case 505: return "HTTP Version Not Supported";
	case 507: return "Insufficient Storage";
	default: return st < 300 ? "OK" : st < 400 ? "Redirect"
		       : st < 500 ? "Client Error" : "Server Error";
	}
}

/* ---- response heads ---- */

static void count_status(struct worker *w, int st)
{
	if (st == 304)
		CNT(w, http_not_modified);
	else if (st == 206)
		CNT(w, http_partial);
	else if (st >= 500)
		CNT(w, http_server_errors);
	else if (st >= 400)
		CNT(w, http_client_errors);
}

/* The status line and the headers every response has. */
static void head_begin(struct conn *c, int st)
{
	struct http_state *h = &c->h;

	count_status(c->w, st);
	conn_printf(c, "HTTP/1.1 %d %s\r\nDate: %s\r\n"
		    "Server: goblind/" GD_VERSION "\r\n",
		    st, reason(st), date_now(c->w));
	if (!h->keep_alive)
		OUT(c, "Connection: close\r\n");
	else if (h->http10)
		OUT(c, "Connection: keep-alive\r\n");
}

/* A whole response with a body built in memory; @extra: header lines. */
static void reply_full(struct conn *c, int st, const char *extra,
		       const char *ctype, const void *body, size_t len)
{
	head_begin(c, st);
	if (extra)
		conn_out(c, extra, strlen(extra));
	conn_printf(c, "Content-Type: %s\r\nContent-Length: %zu\r\n\r\n",
		    ctype, len);
	if (!c->h.head_only)
		conn_out(c, body, len);
}

static void reply_body(struct conn *c, int st, const char *ctype,
		       const void *body, size_t len)
{
	reply_full(c, st, NULL, ctype, body, len);
}

static void reply_vtext(struct conn *c, int st, const char *extra,
			const char *fmt, va_list ap)
{
	char body[512];
	int n = vsnprintf(body, sizeof(body) - 1, fmt, ap);

	if (n < 0)
		n = 0;
	if ((size_t)n > sizeof(body) - 2)
		n = (int)sizeof(body) - 2;
	body[n++] = '\n';
	reply_full(c, st, extra, "text/plain; charset=utf-8", body, (size_t)n);
}

/* A whole response with a one-line text body: errors and the like. */
__attribute__((format(printf, 3, 4))) static void
reply_text(struct conn *c, int st, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	reply_vtext(c, st, NULL, fmt, ap);
	va_end(ap);
}

/*
 * An error that ends the connection (the request's body, if any, is not
 * read), with @extra header lines.  Returns RUN_CLOSE.
 */
__attribute__((format(printf, 4, 5))) static int
reply_close_extra(struct conn *c, int st, const char *extra,
		  const char *fmt, ...)
{
	va_list ap;

	c->h.keep_alive = false;
	va_start(ap, fmt);
	reply_vtext(c, st, extra, fmt, ap);
	va_end(ap);
	return RUN_CLOSE;
}

#define reply_close(c, st, ...) reply_close_extra(c, st, NULL, __VA_ARGS__)

/* ---- validators ---- */

/*
 * The entity tag of a stored version: the origin's when it gave one,
 * else derived from the value's hash and size (a strong validator: the
 * same bytes, the same tag).  A fill has no hash yet: no tag.
 */
static size_t etag_of(const struct gs_meta *m, const struct http_attr *a,
		      bool filling, char *out, size_t cap)
{
	int n;

	if (a->etag_len) {
		memcpy(out, a->etag, a->etag_len);
		return a->etag_len;
	}
	if (filling)
		return 0;
	n = snprintf(out, cap, "\"%016" PRIx64 "-%" PRIx64 "\"", m->xxh3,
		     m->size);
	return n > 0 && (size_t)n < cap ? (size_t)n : 0;
}

static int64_t last_modified_of(const struct gs_meta *m,
				const struct http_attr *a)
{
	return a->last_modified ? a->last_modified : m->mtime_ns / 1000000000;
}

static void validators_out(struct conn *c, const char *etag, size_t elen,
			   int64_t lm)
{
	char d[HTTP_DATE_LEN + 1];

	if (elen) {
		OUT(c, "ETag: ");
		conn_out(c, etag, elen);
		OUT(c, "\r\n");
	}
	if (lm > 0) {
		http_date_format(lm, d);
		conn_printf(c, "Last-Modified: %s\r\n", d);
	}
}

static struct http_cond cond_of(const struct http_req *q)
{
	return (struct http_cond){
		.if_match = q->if_match.p,
		.if_match_len = q->if_match.len,
		.if_none_match = q->if_none_match.p,
		.if_none_match_len = q->if_none_match.len,
		.if_modified_since = q->if_modified_since.p,
		.if_modified_since_len = q->if_modified_since.len,
		.if_unmodified_since = q->if_unmodified_since.p,
		.if_unmodified_since_len = q->if_unmodified_since.len,
		.if_range = q->if_range.p,
		.if_range_len = q->if_range.len,
	};
}

/* ---- the end of a request ---- */

static void saved_free(struct http_state *h)
{
	free(h->saved);
	h->saved = NULL;
	free(h->fwd);
	h->fwd = NULL;
}

static int request_done(struct conn *c)
{
	struct http_state *h = &c->h;

	h->phase = HP_HEAD;
	h->nranges = 0;
	h->multipart = h->chunked_out = h->crlf_due = false;
	saved_free(h);
	return h->keep_alive ? STEP_NEXT : RUN_CLOSE;
}

/* ---- GET and HEAD: serving a reader ---- */

static void part_head(struct conn *c, unsigned i, struct gd_buf *b)
{
	struct http_state *h = &c->h;
	const struct http_range *rg = &h->ranges[i];
	char line[512];
	int n = snprintf(line, sizeof(line),
			 "\r\n--%016" PRIx64 "\r\nContent-Type: %s\r\n"
			 "Content-Range: bytes %" PRIu64 "-%" PRIu64 "/%" PRIu64
			 "\r\n\r\n", h->boundary, h->ctype, rg->first,
			 rg->last, h->size);

	if (b)
		b->len += (size_t)n;
	else
		conn_out(c, line, (size_t)n);
}

/* The exact length of a multipart/byteranges body. */
static uint64_t multipart_len(struct conn *c)
{
	struct http_state *h = &c->h;
	struct gd_buf b = { 0 };
	uint64_t n = 0;

	for (unsigned i = 0; i < h->nranges; i++) {
		part_head(c, i, &b);
		n += h->ranges[i].last - h->ranges[i].first + 1;
	}
	return n + b.len + 24;	/* "\r\n--", 16 hex digits, "--\r\n" */
}

static void send_close_reader(struct conn *c)
{
	if (c->h.r)
		gd_reader_close(c->w, c->h.r);
	c->h.r = NULL;
}

/* @m's HTTP attribute record; a memcache value has none: defaults. */
static void attr_of(const struct gs_meta *m, struct http_attr *a)
{
	if (http_attr_decode(m->attr, m->attr_len, a) < 0)
		http_attr_init(a);
}

/*
 * Answer a GET or HEAD from the pinned version @r (ours now), whose
 * attributes are @a: 304/412 by the validators, 206/416 by the Range,
 * else the whole object.  @xcache is the X-Cache header's word in mirror
 * mode (NULL: none).
 */
static int serve(struct conn *c, const struct http_req *q,
		 struct gs_reader *r, const struct http_attr *a,
		 const char *xcache)
{
	struct http_state *h = &c->h;
	const struct gs_meta *m = gs_reader_meta(r);
	char etag[HTTP_ATTR_ETAG_MAX + 48];
	bool known = m->size != GS_SIZE_UNKNOWN;
	size_t elen;
	int64_t lm;
	int st;

	elen = etag_of(m, a, !m->cas, etag, sizeof(etag));
	lm = last_modified_of(m, a);
	st = a->status ? a->status : 200;
	h->r = r;
	h->size = m->size;
	h->nranges = 0;
	if (a->ctype_len) {
		memcpy(h->ctype, a->ctype, a->ctype_len);
		h->ctype[a->ctype_len] = 0;
	} else {
		strcpy(h->ctype, DEFAULT_CTYPE);
	}
	if (st == 200) {
		struct http_cond cond = cond_of(q);

		switch (http_cond_eval(&cond, true, true, etag, elen, lm)) {
		case HTTP_COND_NOT_MODIFIED:
			send_close_reader(c);
			head_begin(c, 304);
			validators_out(c, etag, elen, lm);
			OUT(c, "\r\n");
			return request_done(c);
		case HTTP_COND_FAILED:
			send_close_reader(c);
			reply_text(c, 412, "precondition failed");
			return request_done(c);
		case HTTP_COND_PASS:
			break;
		}
		if (q->range.p && known &&
		    (!q->if_range.p ||
		     http_if_range(q->if_range.p, q->if_range.len, etag, elen,
				   lm))) {
			switch (http_range_parse(q->range.p, q->range.len,
						 m->size, h->ranges,
						 HTTP_RANGES_MAX,
						 &h->nranges)) {
			case HTTP_RANGE_UNSATISFIABLE:
				send_close_reader(c);
				head_begin(c, 416);
				conn_printf(c, "Content-Range: bytes */%" PRIu64
					    "\r\nContent-Length: 0\r\n\r\n",
					    m->size);
				return request_done(c);
			case HTTP_RANGE_OK:
				break;
			case HTTP_RANGE_NONE:
				h->nranges = 0;
				break;
			}
		}
	}
	head_begin(c, h->nranges ? 206 : st);
	validators_out(c, etag, elen, lm);
	if (known)
		OUT(c, "Accept-Ranges: bytes\r\n");
	if (xcache)
		conn_printf(c, "X-Cache: %s\r\n", xcache);
	if (a->age_base) {
		int64_t age = (int64_t)time(NULL) - a->age_base;

		conn_printf(c, "Age: %" PRId64 "\r\n", age > 0 ? age : 0);
	}
	conn_out(c, a->extra, a->extra_len);
	h->multipart = h->nranges > 1;
	if (h->multipart) {
		h->boundary = m->xxh3 ^ m->cas ^ (uint64_t)(uintptr_t)c ^
			      ((uint64_t)time(NULL) << 24);
		conn_printf(c, "Content-Type: multipart/byteranges; "
			    "boundary=%016" PRIx64 "\r\nContent-Length: %"
			    PRIu64 "\r\n\r\n", h->boundary, multipart_len(c));
	} else if (h->nranges) {
		const struct http_range *rg = &h->ranges[0];

		conn_printf(c, "Content-Type: %s\r\nContent-Range: bytes %"
			    PRIu64 "-%" PRIu64 "/%" PRIu64 "\r\n"
			    "Content-Length: %" PRIu64 "\r\n\r\n", h->ctype,
			    rg->first, rg->last, m->size,
			    rg->last - rg->first + 1);
	} else if (known) {
		conn_printf(c, "Content-Type: %s\r\nContent-Length: %" PRIu64
			    "\r\n\r\n", h->ctype, m->size);
	} else {
		/* a fill of unknown length: chunked, or up to the close */
		conn_printf(c, "Content-Type: %s\r\n", h->ctype);
		if (h->http10)
			h->keep_alive = false;
		else
			OUT(c, "Transfer-Encoding: chunked\r\n");
		h->chunked_out = !h->http10;
		OUT(c, "\r\n");
	}
	if (h->head_only) {
		send_close_reader(c);
		return request_done(c);
	}
	h->cur = 0;
	h->range_started = false;
	h->sent_body = false;
	h->rest_len = 0;
	h->phase = HP_SEND;
	return STEP_NEXT;
}

static int send_done(struct conn *c)
{
	send_close_reader(c);
	return request_done(c);
}

/*
 * Start the next range of a 206: its part head, and the reader on it.
 * 1: started, 0: no range left (the closing boundary is queued),
 * -EBUSY: the last range's reads are still finishing, or an error.
 */
static int range_next(struct conn *c)
{
	struct http_state *h = &c->h;
	const struct http_range *rg;
	int ret;

	if (h->cur == h->nranges) {
		if (h->multipart)
			conn_printf(c, "\r\n--%016" PRIx64 "--\r\n",
				    h->boundary);
		return 0;
	}
	rg = &h->ranges[h->cur];
	ret = gs_reader_range(h->r, rg->first, rg->last - rg->first + 1);
	if (ret < 0)
		return ret;
	if (h->multipart)
		part_head(c, h->cur, NULL);
	h->range_started = true;
	return 1;
}

/*
 * HP_SEND: the body, head first: chunks up to GD_COPY_MAX are copied
 * behind the response head, bigger ones go out zero-copy from the
 * store's buffers.
 */
static int send_run(struct conn *c)
{
	struct http_state *h = &c->h;

	for (;;) {
		struct gs_chunk ch;
		int ret;

		if (c->chunk_len || c->wend - c->wstart > GD_WBUF_HIGH)
			return RUN_OUTPUT;
		if (h->rest_len) {	/* the rest of a split first chunk */
			c->chunk = h->rest;
			c->chunk_len = h->rest_len;
			h->rest_len = 0;
			return RUN_OUTPUT;
		}
		if (h->crlf_due) {
			OUT(c, "\r\n");
			h->crlf_due = false;
		}
		if (h->nranges && !h->range_started) {
			ret = range_next(c);
			if (ret == 0)
				return send_done(c);
			if (ret == -EBUSY)
				return RUN_DISK;
			if (ret < 0)
				goto fail;
		}
		ret = gs_reader_poll(h->r, &ch);
		if (ret == 1) {
			if (h->chunked_out)
				conn_printf(c, "%zx\r\n", ch.len);
			if (ch.len <= GD_COPY_MAX) {
				conn_out(c, ch.data, ch.len);
				if (h->chunked_out)
					OUT(c, "\r\n");
				continue;
			}
			c->chunk = ch.data;
			c->chunk_len = ch.len;
			h->crlf_due = h->chunked_out;
			/*
			 * The first write of a response with a tail to come:
			 * its head and only the first GD_FIRST_SEND bytes of
			 * the RAM head, so they reach the client before the
			 * rest is copied into the socket (the chunk stays
			 * valid until the next poll).  This took the median
			 * time to first byte of a 1 GiB object from about 100
			 * to 45 us.  An object that is one chunk goes out in
			 * one write: its client waits for all of it anyway.
			 */
			if (!h->sent_body && ch.len > GD_FIRST_SEND &&
			    ch.off + ch.len < h->size) {
				h->rest = (const uint8_t *)ch.data +
					  GD_FIRST_SEND;
				h->rest_len = ch.len - GD_FIRST_SEND;
				c->chunk_len = GD_FIRST_SEND;
			}
			h->sent_body = true;
			return RUN_OUTPUT;
		}
		if (ret == -EAGAIN)
			return RUN_DISK;
		if (ret == 0) {
			if (h->nranges) {
				h->cur++;
				h->range_started = false;
				continue;
			}
			if (h->chunked_out)
				OUT(c, "0\r\n\r\n");
			return send_done(c);
		}
fail:
		/* the head promised bytes we cannot send */
		gd_log(GD_LOG_WARN, "read of an object failed: %s; closing "
		       "the connection", gs_strerror(ret));
		send_close_reader(c);
		return RUN_CLOSE;
	}
}

/* ---- the mirror: fetches and their results ---- */

void http_fetch_done(struct fetch_waiter *fw)
{
	struct conn *c = (struct conn *)((char *)fw -
					 offsetof(struct conn, h.fw));
	struct worker *w = c->w;

	pthread_mutex_lock(&w->mail_lock);
	c->h.mnext = w->mail;
	w->mail = c;
	pthread_mutex_unlock(&w->mail_lock);
	gd_worker_wake_disk(w);
}

void http_mail_run(struct worker *w)
{
	struct conn *list;

	pthread_mutex_lock(&w->mail_lock);
	list = w->mail;
	w->mail = NULL;
	pthread_mutex_unlock(&w->mail_lock);
	for (struct conn *c = list; c; c = c->h.mnext)
		c->h.fw_ready = true;	/* in disk_wait: driven next */
}

/* Take @c's result out of the mailbox before the connection goes. */
static void mail_take(struct conn *c)
{
	struct worker *w = c->w;

	while (!c->h.fw_ready) {
		struct conn **p;
		bool found = false;

		pthread_mutex_lock(&w->mail_lock);
		for (p = &w->mail; *p; p = &(*p)->h.mnext) {
			if (*p == c) {
				*p = c->h.mnext;
				found = true;
				break;
			}
		}
		pthread_mutex_unlock(&w->mail_lock);
		if (found)
			break;
		sched_yield();	/* done() is on its way */
	}
	c->h.fw_ready = true;
}

static struct http_saved *save_request(struct conn *c)
{
	struct http_state *h = &c->h;
	struct http_saved *sv = malloc(sizeof(*sv) + h->head_len);
	size_t used;

	if (!sv)
		return NULL;
	memcpy(sv->head, h->head, h->head_len);
	sv->len = h->head_len;
	if (http_parse_head(sv->head, sv->len, &sv->req, &used) !=
	    HTTP_PARSE_OK) {
		free(sv);	/* it parsed in rbuf: cannot happen */
		return NULL;
	}
	return sv;
}

static int fetch_begin(struct conn *c)
{
	struct http_state *h = &c->h;

	memset(&h->fw, 0, sizeof(h->fw));
	h->fw.done = http_fetch_done;
	h->fw_pending = true;
	h->fw_ready = false;
	h->phase = HP_FETCH;
	return STEP_NEXT;
}

/* The fetcher refused a job (@ret < 0): no result will come. */
static int fetch_refused(struct conn *c, const char *what, int ret)
{
	c->h.fw_pending = false;
	c->h.phase = HP_HEAD;
	return reply_close(c, 503, "cannot %s: %s", what, strerror(-ret));
}

/* A miss (@stale NULL) or a stale copy: ask the origin. */
static int fetch_start(struct conn *c, const struct http_req *q,
		       const struct gs_meta *stale)
{
	struct http_state *h = &c->h;
	struct fetch_req fr = {
		.authorization = q->authorization.p,
		.authorization_len = q->authorization.len,
		.cache_control = q->cache_control.p,
		.cache_control_len = q->cache_control.len,
	};
	int ret;

	if (!(h->saved = save_request(c)))
		return reply_close(c, 500, "out of memory");
	h->fw_revalidate = stale != NULL;
	fetch_begin(c);
	ret = fetcher_get(c->w->gd->fetcher, q->key, q->klen, stale, &fr,
			  &h->fw);
	if (ret < 0)
		return fetch_refused(c, "fetch", ret);
	return STEP_NEXT;
}

static int fetch_run(struct conn *c)
{
	struct http_state *h = &c->h;
	struct fetch_waiter *fw = &h->fw;
	const struct http_req *q;
	struct http_attr a;
	int ret;

	if (!h->fw_ready)
		return RUN_DISK;
	h->fw_ready = h->fw_pending = false;
	q = &h->saved->req;
	switch (fw->kind) {
	case FETCH_OBJECT:
	case FETCH_PASS:
		ret = gd_reader_attach(c->w, fw->r);
		if (ret < 0) {
			gs_reader_close(fw->r);
			fw->r = NULL;
			return reply_close(c, 500, "cannot read: %s",
					   gs_strerror(ret));
		}
		h->head_only = q->method == HTTP_M_HEAD;
		attr_of(gs_reader_meta(fw->r), &a);
		ret = serve(c, q, fw->r, &a, fw->kind == FETCH_PASS ? "PASS"
					 : h->fw_revalidate ? "REVALIDATED"
					 : "MISS");
		fw->r = NULL;
		return ret;
	case FETCH_REPLY:
	default:
		reply_text(c, fw->status ? fw->status : 502, "%s", fw->msg);
		return request_done(c);
	}
}

/* ---- the write gate ---- */

/* Constant-time: the token's length leaks, its bytes do not. */
static bool token_equal(const char *a, size_t alen, const char *b)
{
	size_t blen = strlen(b);
	unsigned char d = alen != blen;

	for (size_t i = 0; i < alen && i < blen; i++)
		d |= (unsigned char)(a[i] ^ b[i]);
	return !d;
}

/*
 * Is the client of @q on this host?  The --trusted-proxy is believed: its
 * requests are judged by the last address of X-Forwarded-For, the one it
 * appended (a client may send its own list before it); without one, the
 * proxy did not say who its client is: not local.  From any other peer,
 * X-Forwarded-For and Forwarded are not believed, but they say a proxy
 * speaks for someone else: not local either, so a reverse proxy on this
 * host does not make every client local.
 */
static bool client_local(const struct conn *c, const struct http_req *q)
{
	const struct http_str *xff = &q->x_forwarded_for;
	struct gd_addr a;
	const char *p, *e;

	if (!c->from_proxy)
		return c->loopback && !xff->p && !q->forwarded.p;
	if (!xff->p)
		return false;
	e = xff->p + xff->len;
	for (p = e; p > xff->p && p[-1] != ','; p--)
		;
	while (p < e && (*p == ' ' || *p == '\t'))
		p++;
	while (e > p && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	return gd_addr_parse(p, (size_t)(e - p), &a) == 0 &&
	       gd_addr_loopback(&a);
}

/*
 * The write policy, as memcache's (memcache.c, may_write()): writes need
 * a local client (client_local()), or, with --http-write-token, the
 * token as "Authorization: Bearer TOKEN" (from any peer, loopback
 * included).  Returns 0, or the status of the refusal (the reply is
 * queued).
 */
static int write_gate(struct conn *c, const struct http_req *q)
{
	const char *tok = c->w->gd->set.http_token;
	const struct http_str *au = &q->authorization;

	if (!tok) {
		if (client_local(c, q))
			return 0;
		CNT(c->w, http_denied);
		return reply_close(c, 403, "writes are accepted from "
				   "loopback only (see --http-write-token)");
	}
	if (au->p && au->len > 7 && !strncasecmp(au->p, "Bearer ", 7) &&
	    token_equal(au->p + 7, au->len - 7, tok))
		return 0;
	CNT(c->w, http_denied);
	return reply_close_extra(c, 401, "WWW-Authenticate: Bearer "
				 "realm=\"goblind\"\r\n",
				 "a write token is required");
}

/* ---- PUT and DELETE ---- */

/* The live version a write's preconditions are evaluated against. */
struct current {
	bool exists;
	struct gs_meta m;
	size_t elen;
	char etag[HTTP_ATTR_ETAG_MAX + 48];
};

/* Look up @q's key and evaluate @q's preconditions for a write. */
static enum http_cond_result write_cond(struct conn *c,
					const struct http_req *q,
					struct current *cur)
{
	struct http_cond cond = cond_of(q);
	struct http_attr a;

	cur->elen = 0;
	cur->exists = gs_stat(c->w->gd->s, q->key, q->klen, &cur->m) == 0;
	if (cur->exists) {
		attr_of(&cur->m, &a);
		cur->elen = etag_of(&cur->m, &a, false, cur->etag,
				    sizeof(cur->etag));
	}
	return http_cond_eval(&cond, false, cur->exists, cur->etag,
			      cur->elen, cur->exists ? last_modified_of(&cur->m,
								       &a)
						     : 0);
}

static void body_feed(struct conn *c, const void *p, size_t n)
{
	struct http_state *h = &c->h;

	h->total += n;
	if (!h->err && h->total > c->w->gd->set.max_item)
		h->err = -EFBIG;
	if (!h->err)
		h->err = gs_put_write(h->wr, p, n);
}

static int put_finish(struct conn *c)
{
	struct http_state *h = &c->h;
	int ret;

	if (h->err) {
		gs_put_abort(h->wr);
		h->wr = NULL;
		if (h->err == -EFBIG) {
			CNT(c->w, store_too_large);
			return reply_close(c, 413, "larger than --max-item");
		}
		if (h->err == -ENOSPC)
			return reply_close(c, 507, "no room in the store");
		return reply_close(c, 500, "store write failed: %s",
				   gs_strerror(h->err));
	}
	ret = gs_put_commit(h->wr, NULL);
	h->wr = NULL;
	switch (ret) {
	case 0:
		CNT(c->w, http_puts);
		head_begin(c, h->existed ? 204 : 201);
		if (!h->existed)
			OUT(c, "Content-Length: 0\r\n");
		OUT(c, "\r\n");
		return request_done(c);
	case -EEXIST:
	case -ESTALE:
	case -ENOENT:
		reply_text(c, 412, "precondition failed: the object changed");
		return request_done(c);
	case -EPROTO:
		return reply_close(c, 400, "the body was shorter than its "
				   "Content-Length");
	default:
		return reply_close(c, 500, "commit failed: %s",
				   gs_strerror(ret));
	}
}

/* A chunked body: decoded in place in rbuf, which the driver refills. */
static int chunked_run(struct conn *c)
{
	struct http_state *h = &c->h;

	for (;;) {
		char *in = c->rbuf + c->rstart;
		size_t avail = c->rend - c->rstart, out_len, used;

		if (!avail)
			return RUN_INPUT;
		if (http_chunked_feed(&h->ch, in, avail, in, &out_len,
				      &used) < 0) {
			gs_put_abort(h->wr);
			h->wr = NULL;
			CNT(c->w, http_bad_requests);
			return reply_close(c, http_err_status(h->ch.err),
					   "bad chunked body: %s",
					   http_strerror(h->ch.err));
		}
		c->rstart += used;
		if (out_len)
			body_feed(c, in, out_len);
		if (h->ch.done)
			return put_finish(c);
	}
}

/*
 * HP_BODY: a Content-Length body, from rbuf and then straight off the
 * socket into the worker's scratch buffer, never past its end (the next
 * request may follow).
 */
static int body_run(struct conn *c)
{
	struct http_state *h = &c->h;

	if (h->chunked)
		return chunked_run(c);
	while (h->left) {
		const uint8_t *p;
		ssize_t got = conn_take(c, h->left, &p);

		if (got == 0)
			return RUN_WAIT;
		if (got < 0)
			return RUN_CLOSE;	/* the put is aborted */
		h->left -= (uint64_t)got;
		body_feed(c, p, (size_t)got);
	}
	return put_finish(c);
}

static bool has_body(const struct http_req *q)
{
	return q->chunked || (q->has_length && q->length);
}

static int put_start(struct conn *c, const struct http_req *q)
{
	struct http_state *h = &c->h;
	struct gd *gd = c->w->gd;
	struct gs_put_args pa = { 0 };
	struct http_attr a;
	struct current cur;
	uint8_t abuf[GS_ATTR_MAX];
	long alen;
	int ret;

	if ((ret = write_gate(c, q)))
		return ret;
	if (!q->klen)
		return reply_close(c, 400, "no key: PUT /<key>");
	if (!q->has_length && !q->chunked)
		return reply_close(c, 411, "Content-Length or chunked "
				   "Transfer-Encoding required");
	if (q->has_length && q->length > gd->set.max_item) {
		CNT(c->w, store_too_large);
		return reply_close(c, 413, "%" PRIu64 " bytes is larger than "
				   "--max-item", q->length);
	}
	if (write_cond(c, q, &cur) == HTTP_COND_FAILED)
		return reply_close(c, 412, "precondition failed");
	h->existed = cur.exists;
	http_attr_init(&a);
	if (q->content_type.p) {
		if (q->content_type.len > HTTP_ATTR_CTYPE_MAX)
			return reply_close(c, 400, "Content-Type too long");
		memcpy(a.ctype, q->content_type.p, q->content_type.len);
		a.ctype_len = q->content_type.len;
	}
	alen = http_attr_encode(&a, abuf, sizeof(abuf));
	pa.size = q->has_length ? q->length : GS_SIZE_UNKNOWN;
	pa.attr = abuf;
	pa.attr_len = alen > 0 ? (size_t)alen : 0;
	/* a condition held for this version: commit on it or fail */
	if (q->if_none_match.p && q->if_none_match.len == 1 &&
	    q->if_none_match.p[0] == '*') {
		pa.mode = GS_ADD;
	} else if (h->existed && (q->if_match.p || q->if_none_match.p ||
				  q->if_unmodified_since.p)) {
		pa.mode = GS_CAS;
		pa.cas_match = cur.m.cas;
	}
	ret = gs_put_begin(gd->s, q->key, q->klen, &pa, &h->wr);
	if (ret == -EFBIG || ret == -ENOSPC) {
		CNT(c->w, store_no_memory);
		return reply_close(c, 507, "no room in the store: %s",
				   gs_strerror(ret));
	}
	if (ret < 0)
		return reply_close(c, ret == -EINVAL ? 400 : 500,
				   "cannot store: %s", gs_strerror(ret));
	h->left = q->has_length ? q->length : 0;
	h->total = 0;
	h->err = 0;
	h->chunked = q->chunked;
	if (h->chunked)
		http_chunked_init(&h->ch);
	if (q->expect_continue && !h->http10)
		OUT(c, "HTTP/1.1 100 Continue\r\n\r\n");
	h->phase = HP_BODY;
	return STEP_NEXT;
}

/* ---- DELETE ---- */

static int delete_run(struct conn *c, const struct http_req *q)
{
	struct current cur;
	int ret;

	if ((ret = write_gate(c, q)))
		return ret;
	if (write_cond(c, q, &cur) == HTTP_COND_FAILED) {
		reply_text(c, 412, "precondition failed");
		return request_done(c);
	}
	ret = cur.exists ? gs_delete(c->w->gd->s, q->key, q->klen) : -ENOENT;
	if (ret == -ENOENT) {
		reply_text(c, 404, "not found");
	} else if (ret < 0) {
		reply_text(c, 500, "cannot delete: %s", gs_strerror(ret));
	} else {
		CNT(c->w, http_deletes);
		head_begin(c, 204);
		OUT(c, "\r\n");
	}
	return request_done(c);
}

/* ---- mirror mode: writes go to the origin ---- */

static int forward_send(struct conn *c)
{
	struct http_state *h = &c->h;
	const struct http_req *q = &h->saved->req;
	struct fetch_forward fwd = {
		.method = q->method == HTTP_M_PUT ? "PUT"
			: q->method == HTTP_M_POST ? "POST" : "DELETE",
		.body = h->fwd,
		.body_len = (size_t)h->total,
		.ctype = q->content_type.p,
		.ctype_len = q->content_type.len,
	};
	int ret;

	fetch_begin(c);
	h->fw_revalidate = false;
	ret = fetcher_forward(c->w->gd->fetcher, q->key, q->klen, &fwd,
			      &h->fw);
	if (ret < 0)
		return fetch_refused(c, "forward", ret);
	return STEP_NEXT;
}

/* HP_FWD_BODY: the body, whole in memory (at most FWD_BODY_MAX). */
static int fwd_run(struct conn *c)
{
	struct http_state *h = &c->h;

	for (;;) {
		char *in = c->rbuf + c->rstart;
		size_t avail = c->rend - c->rstart, n, used;

		if (h->chunked ? h->ch.done : !h->left)
			return forward_send(c);
		if (!avail)
			return RUN_INPUT;
		if (h->chunked) {
			if (http_chunked_feed(&h->ch, in, avail, in, &n,
					      &used) < 0) {
				CNT(c->w, http_bad_requests);
				return reply_close(c,
						   http_err_status(h->ch.err),
						   "bad chunked body: %s",
						   http_strerror(h->ch.err));
			}
		} else {
			n = used = avail < h->left ? avail : (size_t)h->left;
			h->left -= n;
		}
		c->rstart += used;
		if (h->total + n > FWD_BODY_MAX)
			return reply_close(c, 413, "a body forwarded to the "
					   "origin is limited to %u bytes",
					   FWD_BODY_MAX);
		if (h->total + n > h->fwd_cap) {	/* chunked: grow */
			size_t cap = h->fwd_cap * 2 > h->total + n
					     ? h->fwd_cap * 2 : h->total + n;
			char *nb = realloc(h->fwd, cap);

			if (!nb)
				return reply_close(c, 500, "out of memory");
			h->fwd = nb;
			h->fwd_cap = cap;
		}
		memcpy(h->fwd + h->total, in, n);
		h->total += n;
	}
}

static int forward_start(struct conn *c, const struct http_req *q)
{
	struct http_state *h = &c->h;
	int ret;

	if ((ret = write_gate(c, q)))
		return ret;
	if (q->has_length && q->length > FWD_BODY_MAX)
		return reply_close(c, 413, "a body forwarded to the origin is "
				   "limited to %u bytes", FWD_BODY_MAX);
	h->fwd_cap = q->chunked ? 64u << 10 : q->has_length ? q->length : 0;
	if (!(h->saved = save_request(c)) ||
	    !(h->fwd = malloc(h->fwd_cap ? h->fwd_cap : 1)))
		return reply_close(c, 500, "out of memory");
	h->left = q->has_length ? q->length : 0;
	h->total = 0;
	h->chunked = q->chunked;
	if (h->chunked)
		http_chunked_init(&h->ch);
	if (q->expect_continue && !h->http10)
		OUT(c, "HTTP/1.1 100 Continue\r\n\r\n");
	h->phase = HP_FWD_BODY;
	return STEP_NEXT;
}

/* ---- GET and HEAD ---- */

static bool key_is(const struct http_req *q, const char *k)
{
	return q->klen == strlen(k) && !memcmp(q->key, k, q->klen);
}

static int stats_reply(struct conn *c, bool json)
{
	struct gd_buf b = { 0 };

	if (json)
		gd_stats_json(c->w->gd, &b);
	else
		gd_stats_prom(c->w->gd, &b);
	if (b.oom) {
		free(b.p);
		return reply_close(c, 500, "out of memory");
	}
	reply_body(c, 200, json ? "application/json"
				: "text/plain; version=0.0.4; charset=utf-8",
		   b.p, b.len);
	free(b.p);
	return request_done(c);
}

/*
 * Is a stored version with attributes @a fresh enough for request @q
 * (mirror mode)?  What was not fetched from the origin always is.
 */
static bool fresh_enough(const struct http_req *q, const struct http_attr *a)
{
	struct http_cc cc;

	if (!(a->flags & HTTP_ATTR_ORIGIN))
		return true;
	http_cc_init(&cc);
	if (q->cache_control.p)
		http_cc_parse(&cc, q->cache_control.p, q->cache_control.len);
	else if (q->pragma.p && q->pragma.len == 8 &&
		 !strncasecmp(q->pragma.p, "no-cache", 8))
		cc.no_cache = true;
	return http_fresh_for(&cc, a->fresh_until, a->age_base,
			      a->flags & HTTP_ATTR_NO_CACHE,
			      a->flags & HTTP_ATTR_REVALIDATE, time(NULL));
}

static int get_start(struct conn *c, const struct http_req *q)
{
	struct gd *gd = c->w->gd;
	struct gs_reader *r;
	struct http_attr a;
	int ret;

	if (key_is(q, STATS_KEY))
		return stats_reply(c, true);
	if (key_is(q, METRICS_KEY))
		return stats_reply(c, false);
	CNT(c->w, http_gets);
	if (!q->klen) {
		CNT(c->w, http_misses);
		reply_text(c, 404, "no key: GET /<key>");
		return request_done(c);
	}
	/* RFC 9111 §3.5: a request with credentials goes to the origin */
	if (gd->fetcher && q->authorization.p) {
		CNT(c->w, http_misses);
		return fetch_start(c, q, NULL);
	}
	ret = gd_reader_open(c->w, q->key, q->klen,
			     gd->fetcher ? GS_GET_FILL : 0, &r);
	if (ret == -ENOENT) {
		CNT(c->w, http_misses);
		if (gd->fetcher)
			return fetch_start(c, q, NULL);
		reply_text(c, 404, "not found");
		return request_done(c);
	}
	if (ret < 0)
		return reply_close(c, 500, "cannot read: %s",
				   gs_strerror(ret));
	attr_of(gs_reader_meta(r), &a);
	if (gd->fetcher && gs_reader_meta(r)->cas && !fresh_enough(q, &a)) {
		/* the fetcher reads the stale metadata before it returns */
		CNT(c->w, http_misses);
		ret = fetch_start(c, q, gs_reader_meta(r));
		gd_reader_close(c->w, r);
		return ret;
	}
	CNT(c->w, http_hits);
	return serve(c, q, r, &a, gd->fetcher ? "HIT" : NULL);
}

/* ---- requests ---- */

/*
 * /_goblin/ and /metrics are goblind's own: a GET there serves stats, so
 * a write there would store what no GET can read (and in a mirror would
 * reach the origin for a path the mirror never fetches).
 */
static bool key_reserved(const struct http_req *q)
{
	return key_is(q, METRICS_KEY) || key_is(q, "_goblin") ||
	       (q->klen >= 8 && !memcmp(q->key, "_goblin/", 8));
}

static int request_start(struct conn *c, const struct http_req *q)
{
	struct gd *gd = c->w->gd;

	if (q->expect_other)
		return reply_close(c, 417, "only 100-continue is expected");
	if (key_reserved(q) && (q->method == HTTP_M_PUT ||
	    q->method == HTTP_M_DELETE || q->method == HTTP_M_POST))
		return reply_close_extra(c, 405, "Allow: GET, HEAD\r\n",
					 "/_goblin/ and /metrics are read "
					 "only");
	if (has_body(q) && q->method != HTTP_M_PUT &&
	    q->method != HTTP_M_POST)
		return reply_close(c, 400, "a body is not taken with this "
				   "method");
	switch (q->method) {
	case HTTP_M_GET:
	case HTTP_M_HEAD:
		return get_start(c, q);
	case HTTP_M_PUT:
		if (gd->fetcher)
			return forward_start(c, q);
		return put_start(c, q);
	case HTTP_M_DELETE:
		if (gd->fetcher)
			return forward_start(c, q);
		return delete_run(c, q);
	case HTTP_M_POST:
		if (gd->fetcher)
			return forward_start(c, q);
		return reply_close_extra(c, 405, "Allow: GET, HEAD, PUT, "
					 "DELETE\r\n", "method not allowed");
	default:
		return reply_close(c, 501, "method not implemented");
	}
}

/* HP_HEAD: parse the next request head in rbuf and start it. */
static int head_run(struct conn *c)
{
	struct http_state *h = &c->h;
	struct worker *w = c->w;
	struct http_req *q = &w->hreq;
	const char *buf = c->rbuf + c->rstart;
	size_t len = c->rend - c->rstart, used = 0;

	if (c->wend - c->wstart > GD_WBUF_HIGH || c->chunk_len)
		return RUN_OUTPUT;
	if (!len) {
		h->head_since = 0;
		return RUN_INPUT;
	}
	switch (http_parse_head(buf, len, q, &used)) {
	case HTTP_PARSE_MORE:
		if (!h->head_since)
			h->head_since = gd_mono_sec();
		return RUN_INPUT;
	case HTTP_PARSE_BAD:
		CNT(w, http_bad_requests);
		h->http10 = h->head_only = false;
		c->rstart = c->rend;
		return reply_close(c, http_err_status(q->err),
				   "bad request: %s", http_strerror(q->err));
	case HTTP_PARSE_OK:
		break;
	}
	CNT(w, http_requests);
	h->head_since = 0;
	h->keep_alive = q->keep_alive;
	h->http10 = q->minor == 0;
	h->head_only = q->method == HTTP_M_HEAD;
	h->head = buf;
	h->head_len = used;
	c->rstart += used;
	return request_start(c, q);
}

enum mc_run http_conn_run(struct conn *c)
{
	struct http_state *h = &c->h;

	for (;;) {
		int st = RUN_CLOSE;

		if (c->closing)
			return RUN_CLOSE;
		switch (h->phase) {
		case HP_HEAD: st = head_run(c); break;
		case HP_BODY: st = body_run(c); break;
		case HP_SEND: st = send_run(c); break;
		case HP_FETCH: st = fetch_run(c); break;
		case HP_FWD_BODY: st = fwd_run(c); break;
		}
		if (st != STEP_NEXT)
			return (enum mc_run)st;
	}
}

void http_conn_release(struct conn *c)
{
	struct http_state *h = &c->h;

	if (h->fw_pending && !h->fw_ready &&
	    !fetcher_cancel(c->w->gd->fetcher, &h->fw))
		mail_take(c);
	if ((h->fw_pending || h->fw_ready) && h->fw.r)
		gs_reader_close(h->fw.r);
	h->fw.r = NULL;
	h->fw_pending = h->fw_ready = false;
	send_close_reader(c);
	if (h->wr)
		gs_put_abort(h->wr);
	h->wr = NULL;
	saved_free(h);
	c->chunk = NULL;
	c->chunk_len = 0;
	h->phase = HP_HEAD;
}

bool http_conn_idle(const struct conn *c)
{
	return c->h.phase == HP_HEAD && !c->h.head_since;
}

bool http_conn_expired(struct conn *c, int64_t now)
{
	struct http_state *h = &c->h;
	unsigned limit = c->w->gd->set.http_timeout;

	if (h->phase != HP_HEAD || !h->head_since || !limit ||
	    now - h->head_since <= (int64_t)limit || c->closing)
		return false;
	CNT(c->w, http_timeouts);
	h->http10 = h->head_only = false;
	h->head_since = 0;
	c->rstart = c->rend;
	reply_close(c, 408, "the request head did not arrive within %u s",
		    limit);
	c->closing = true;
	return true;
}
