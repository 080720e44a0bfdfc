/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * HTTP GET and HEAD: a pinned version served with its validators (304,
 * 412), by its Range (206, single or multipart/byteranges; 416), or
 * whole.  The body goes head first: chunks up to GD_COPY_MAX are copied
 * behind the response head, bigger ones sent zero-copy from the store's
 * buffers (the RAM head from its slot) as reads complete.  Also the
 * stats pages, /_goblin/stats and /metrics.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "http.h"

/* ---- GET and HEAD: serving a reader ---- */

static void part_head(struct conn *c, unsigned i, struct gd_buf *b)
{
	struct http_state *h = h_of(c);
	const struct http_range *rg = &h->ranges[i];
	char line[512];
	int n = snprintf(line, sizeof(line),
			 "\r\n--%016" PRIx64 "\r\nContent-Type: %s\r\n"
			 "Content-Range: bytes %" PRIu64 "-%" PRIu64 "/%" PRIu64
			 "\r\n\r\n",
			 h->boundary, h->ctype, rg->first, rg->last, h->size);

	if (b)
		b->len += (size_t)n;
	else
		conn_out(c, line, (size_t)n);
}

/* The exact length of a multipart/byteranges body. */
static uint64_t multipart_len(struct conn *c)
{
	struct http_state *h = h_of(c);
	struct gd_buf b = { 0 };
	uint64_t n = 0;

	for (unsigned i = 0; i < h->nranges; i++) {
		part_head(c, i, &b);
		n += h->ranges[i].last - h->ranges[i].first + 1;
	}
	return n + b.len + 24; /* "\r\n--", 16 hex digits, "--\r\n" */
}

void http_send_close_reader(struct conn *c)
{
	if (h_of(c)->r)
		gd_reader_close(c->w, h_of(c)->r);
	h_of(c)->r = NULL;
}

/*
 * The last headers of a 200 or 206, which say what the body is: its
 * type and length (multipart/byteranges, one range, the whole object, or
 * chunked for a fill of unknown length), then the blank line.  A 204 or
 * 304 has no body and says nothing of one (RFC 9110 sec. 8.6); @ctype
 * false: the origin named no type, and a cache invents none.
 */
static void body_head(struct conn *c, const struct gs_meta *m, int st,
		      bool ctype)
{
	struct http_state *h = h_of(c);

	h->multipart = h->nranges > 1;
	if (st == 204 || st == 304) {
		OUT(c, "\r\n");
	} else if (!ctype && !h->nranges && m->size != GS_SIZE_UNKNOWN) {
		conn_printf(c, "Content-Length: %" PRIu64 "\r\n\r\n", m->size);
	} else if (h->multipart) {
		h->boundary = m->xxh3 ^ m->cas ^ (uint64_t)(uintptr_t)c ^
			      ((uint64_t)time(NULL) << 24);
		conn_printf(c,
			    "Content-Type: multipart/byteranges; "
			    "boundary=%016" PRIx64
			    "\r\nContent-Length: %" PRIu64 "\r\n\r\n",
			    h->boundary, multipart_len(c));
	} else if (h->nranges) {
		const struct http_range *rg = &h->ranges[0];

		conn_printf(c,
			    "Content-Type: %s\r\nContent-Range: bytes %" PRIu64
			    "-%" PRIu64 "/%" PRIu64 "\r\n"
			    "Content-Length: %" PRIu64 "\r\n\r\n",
			    h->ctype, rg->first, rg->last, m->size,
			    rg->last - rg->first + 1);
	} else if (m->size != GS_SIZE_UNKNOWN) {
		conn_printf(c,
			    "Content-Type: %s\r\nContent-Length: %" PRIu64
			    "\r\n\r\n",
			    h->ctype, m->size);
	} else {
		/* a fill of unknown length: chunked, or up to the close */
		if (ctype)
			conn_printf(c, "Content-Type: %s\r\n", h->ctype);
		if (h->http10)
			h->keep_alive = false;
		else
			OUT(c, "Transfer-Encoding: chunked\r\n");
		h->chunked_out = !h->http10;
		OUT(c, "\r\n");
	}
}

/* Does a Cache-Control line of the header block @b list @name in a
 * no-cache="..."? */
static bool block_lists(const char *b, size_t blen, const char *name,
			size_t nlen)
{
	const char *p = b, *end = b + blen;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		const char *v = p + 14;
		size_t vlen;

		if (le - p > 14 && !strncasecmp(p, "Cache-Control:", 14)) {
			vlen = (size_t)(le - v);
			if (vlen && v[vlen - 1] == '\r')
				vlen--;
			if (http_cc_names_field(v, vlen, name, nlen))
				return true;
		}
		p = nl ? nl + 1 : end;
	}
	return false;
}

/*
 * RFC 9111 sec. 5.2.2.4: the fields a stored response's no-cache="..."
 * lists do not go out from the cache without a successful revalidation
 * (a hit or a stale copy: @fresh false).  Returns the header block to
 * send, in *@out (free() it) when it had to be filtered, and clears
 * the ETag and Last-Modified to send when they are listed.
 */
static const char *unlisted_block(const struct gs_attr *a, bool fresh,
				  size_t *len, char **out, size_t *elen,
				  int64_t *lm)
{
	struct http_cc cc;
	size_t in = 0, n = 0;
	char *f;

	*out = NULL;
	*len = a->headers_len;
	if (fresh || !memmem(a->headers, a->headers_len, "no-cache=", 9))
		return a->headers;
	http_cc_init(&cc);
	http_cc_parse_block(&cc, "Cache-Control", a->headers, a->headers_len);
	if (!cc.no_cache_fields)
		return a->headers;
	if (block_lists(a->headers, a->headers_len, "ETag", 4))
		*elen = 0;
	if (block_lists(a->headers, a->headers_len, "Last-Modified", 13))
		*lm = 0;
	if (!(f = malloc(a->headers_len ? a->headers_len : 1))) {
		*len = 0; /* none rather than the listed ones */
		return a->headers;
	}
	while (in < a->headers_len) {
		const char *p = a->headers + in;
		const char *nl = memchr(p, '\n', a->headers_len - in);
		size_t l = nl ? (size_t)(nl - p + 1) : a->headers_len - in;
		const char *colon = memchr(p, ':', l);

		if (!colon || !block_lists(a->headers, a->headers_len, p,
					   (size_t)(colon - p))) {
			memcpy(f + n, p, l);
			n += l;
		}
		in += l;
	}
	*out = f;
	*len = n;
	return f;
}

/*
 * Answer a GET or HEAD from the pinned version @r (ours now), whose
 * attributes are @a: 304/412 by the validators, 206/416 by the Range,
 * else the whole object.  @xcache is the X-Cache header's word in mirror
 * mode (NULL: none).
 */
static int serve(struct conn *c, const struct http_req *q, struct gs_reader *r,
		 const struct gs_meta *m, const struct gs_attr *a,
		 const char *xcache)
{
	struct http_state *h = h_of(c);
	char etag[GS_ATTR_ETAG_MAX + 48];
	bool known = m->size != GS_SIZE_UNKNOWN;
	bool cached = xcache &&
		      (!strcmp(xcache, "HIT") || !strcmp(xcache, "STALE"));
	const char *hdrs;
	char *filtered;
	size_t elen, out_elen, hlen;
	int64_t lm, out_lm;
	int st;

	elen = http_etag_of(m, a, !m->cas, etag, sizeof(etag));
	lm = http_last_modified_of(m, a);
	out_elen = elen;
	out_lm = lm;
	hdrs = unlisted_block(a, !cached, &hlen, &filtered, &out_elen, &out_lm);
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
	/* preconditions for a 2xx only (RFC 9110 sec. 13.2.1), ranges for
	 * a 200 */
	if (st == 200 || st == 203) {
		struct http_cond cond = http_cond_of(q);

		switch (http_cond_eval(&cond, true, true, etag, elen, lm)) {
		case HTTP_COND_NOT_MODIFIED:
			http_send_close_reader(c);
			http_head_begin(c, 304);
			http_validators_out(c, etag, out_elen, out_lm);
			OUT(c, "\r\n");
			free(filtered);
			return http_request_done(c);
		case HTTP_COND_FAILED:
			http_send_close_reader(c);
			http_reply_text(c, 412, "precondition failed");
			free(filtered);
			return http_request_done(c);
		case HTTP_COND_PASS:
			break;
		}
		if (q->range.p && known && st == 200 &&
		    (!q->if_range.p ||
		     http_if_range(q->if_range.p, q->if_range.len, etag, elen,
				   lm))) {
			switch (http_range_parse(
				q->range.p, q->range.len, m->size, h->ranges,
				HTTP_RANGES_MAX, &h->nranges)) {
			case HTTP_RANGE_UNSATISFIABLE:
				http_send_close_reader(c);
				http_head_begin(c, 416);
				conn_printf(c,
					    "Content-Range: bytes */%" PRIu64
					    "\r\nContent-Length: 0\r\n\r\n",
					    m->size);
				free(filtered);
				return http_request_done(c);
			case HTTP_RANGE_OK:
				break;
			case HTTP_RANGE_NONE:
				h->nranges = 0;
				break;
			}
		}
	}
	http_head_begin_stored(c, h->nranges ? 206 : st, hdrs, hlen);
	free(filtered); /* copied out */
	http_validators_out(c, etag, out_elen, out_lm);
	if (known)
		OUT(c, "Accept-Ranges: bytes\r\n");
	if (xcache)
		conn_printf(c, "X-Cache: %s\r\n", xcache);
	if (a->age_base) {
		/* RFC 9111 sec. 4.2.3: current_age */
		int64_t age = (int64_t)time(NULL) - a->age_base;

		conn_printf(c, "Age: %" PRId64 "\r\n", age > 0 ? age : 0);
	}
	/* the origin sent no type: none is made up (sec. 8.3) */
	body_head(c, m, h->nranges ? 206 : st,
		  a->ctype_len || !(a->flags & GS_ATTR_ORIGIN));
	if (h->head_only) {
		http_send_close_reader(c);
		return http_request_done(c);
	}
	h->cur = 0;
	h->range_started = false;
	h->sent_body = false;
	h->rest_len = 0;
	h->phase = HP_SEND;
	return STEP_NEXT;
}

int http_serve(struct conn *c, const struct http_req *q, struct gs_reader *r,
	       const struct gs_attr *a, const char *xcache)
{
	return serve(c, q, r, gs_reader_meta(r), a, xcache);
}

/*
 * http_serve's work for http_warm(), on @c, a connection of no client's:
 * the reply's head for @q and @m is built and dropped, no reader held.
 */
void http_serve_dry(struct conn *c, const struct http_req *q,
		    const struct gs_meta *m, const struct gs_attr *a,
		    const char *xcache)
{
	struct http_state *h = h_of(c);

	h->keep_alive = q->keep_alive;
	h->http10 = q->minor == 0;
	h->head_only = true; /* no body: http_send_run is not reached */
	serve(c, q, NULL, m, a, xcache);
	c->wstart = c->wend = 0;
	c->closing = false;
	http_request_done(c);
}

static int send_done(struct conn *c)
{
	http_send_close_reader(c);
	return http_request_done(c);
}

/*
 * Start the next range of a 206: its part head, and the reader on it.
 * 1: started, 0: no range left (the closing boundary is queued),
 * -EBUSY: the last range's reads are still finishing, or an error.
 */
static int range_next(struct conn *c)
{
	struct http_state *h = h_of(c);
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
int http_send_run(struct conn *c)
{
	struct http_state *h = h_of(c);

	for (;;) {
		struct gs_chunk ch;
		int ret;

		if (c->chunk_len || c->wend - c->wstart > GD_WBUF_HIGH)
			return RUN_OUTPUT;
		if (h->rest_len) { /* the rest of a split first chunk */
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
			if (!h->nranges && !h->chunked_out &&
			    h->size >= GD_BUSY_POLL_MIN) {
				uint64_t tail = h->size - GD_WARM_TAIL;

				if (ch.off <= tail && ch.off + ch.len > tail)
					c->warm_hold =
						(uint32_t)(ch.off + ch.len -
							   tail);
			}
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
		gd_log(GD_LOG_WARN,
		       "read of an object failed: %s; closing "
		       "the connection",
		       gs_strerror(ret));
		http_send_close_reader(c);
		return RUN_CLOSE;
	}
}

int http_stats_reply(struct conn *c, bool json)
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
	http_reply_body(c, 200,
			json ? "application/json" :
			       "text/plain; version=0.0.4; charset=utf-8",
			b.p, b.len);
	free(b.p);
	return http_request_done(c);
}
