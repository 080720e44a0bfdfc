/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The HTTP/1.1 front-end: GET, HEAD, PUT and DELETE of /<key> on the
 * store, with ranges, validators, keep-alive and pipelining; with --mirror
 * a caching reverse proxy over the origin fetcher (fetch.c).  Heads are
 * parsed by http_proto.c and the semantics decided by http_sem.c; bodies
 * stream both ways as in memcache: the RAM head goes out zero-copy from
 * its slot before the tail is read, and a PUT body flows into a store
 * writer as it arrives.
 *
 * This room is the request loop and the seam (http_ops): parse a head,
 * dispatch it to the rooms of http.h, run the phase in progress, time
 * out slow heads, release.
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

#define STATS_KEY   "_goblin/stats"
#define METRICS_KEY "metrics"

/* ---- GET and HEAD: from the store, or from the origin ---- */

static bool key_is(const struct http_req *q, const char *k)
{
	return q->klen == strlen(k) && !memcmp(q->key, k, q->klen);
}

/*
 * A mirror's object or variant @key: served if fresh, revalidated if
 * stale, fetched if missing.  @r is open on @key, or NULL after -ENOENT.
 */
static int mirror_get(struct conn *c, const struct http_req *q, const char *key,
		      size_t klen, struct gs_reader *r, struct gs_attr *a)
{
	bool fresh = r && (!gs_reader_meta(r)->cas || http_fresh_enough(q, a));

	if (!fresh && q->cache_control.p) {
		struct http_cc cc;

		http_cc_init(&cc);
		http_cc_parse(&cc, q->cache_control.p, q->cache_control.len);
		/* RFC 9111 sec. 5.2.1.7: what is stored, or 504 */
		if (cc.only_if_cached) {
			if (r)
				gd_reader_close(c->w, r);
			CNT(c->w, http_misses);
			http_reply_text(c, 504,
					"only-if-cached: no fresh "
					"copy is stored");
			return http_request_done(c);
		}
	}
	if (!r) {
		CNT(c->w, http_misses);
		return http_fetch_start(c, q, key, klen, NULL);
	}
	if (!fresh)
		return http_stale_run(c, q, key, klen, r, a);
	CNT(c->w, http_hits);
	return http_serve(c, q, r, a, "HIT");
}

/* The URL's Vary stub (@r, @a) is in: the variant @q selects. */
static int variant_get(struct conn *c, const struct http_req *q,
		       struct gs_reader *r, struct gs_attr *a)
{
	char vk[GS_KEY_MAX + 1];
	long vlen = fetch_variant_key(q->key, q->klen, a, q->fields.p,
				      q->fields.len, vk, GS_KEY_MAX);
	int ret;

	gd_reader_close(c->w, r);
	if (vlen < 0) /* a stub without Vary: the origin's answer */
		return mirror_get(c, q, q->key, q->klen, NULL, a);
	ret = gd_reader_open(c->w, vk, (size_t)vlen, GS_GET_FILL, &r);
	if (ret == -ENOENT)
		return mirror_get(c, q, vk, (size_t)vlen, NULL, a);
	if (ret < 0)
		return reply_close(c, 500, "cannot read: %s", gs_strerror(ret));
	http_meta_attr(gs_reader_meta(r), a);
	return mirror_get(c, q, vk, (size_t)vlen, r, a);
}

static int get_start(struct conn *c, const struct http_req *q)
{
	struct gd *gd = c->w->gd;
	struct gs_reader *r;
	struct gs_attr a;
	int ret;

	if (key_is(q, STATS_KEY))
		return http_stats_reply(c, true);
	if (key_is(q, METRICS_KEY))
		return http_stats_reply(c, false);
	CNT(c->w, http_gets);
	if (!q->klen) {
		CNT(c->w, http_misses);
		http_reply_text(c, 404, "no key: GET /<key>");
		return http_request_done(c);
	}
	/* RFC 9111 §3.5: a request with credentials goes to the origin */
	if (gd->fetcher && q->authorization.p) {
		CNT(c->w, http_misses);
		return http_fetch_start(c, q, q->key, q->klen, NULL);
	}
	ret = gd_reader_open(c->w, q->key, q->klen,
			     gd->fetcher ? GS_GET_FILL : 0, &r);
	if (ret == -ENOENT && gd->fetcher)
		return mirror_get(c, q, q->key, q->klen, NULL, &a);
	if (ret == -ENOENT) {
		CNT(c->w, http_misses);
		http_reply_text(c, 404, "not found");
		return http_request_done(c);
	}
	if (ret < 0)
		return reply_close(c, 500, "cannot read: %s", gs_strerror(ret));
	http_meta_attr(gs_reader_meta(r), &a);
	if (gd->fetcher && (a.flags & GS_ATTR_VARY))
		return variant_get(c, q, r, &a);
	if (gd->fetcher)
		return mirror_get(c, q, q->key, q->klen, r, &a);
	CNT(c->w, http_hits);
	return http_serve(c, q, r, &a, NULL);
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
	bool fwd = gd->fetcher && q->method != HTTP_M_GET &&
		   q->method != HTTP_M_HEAD;

	if (q->expect_other)
		return reply_close(c, 417, "only 100-continue is expected");
	if (key_reserved(q) &&
	    (q->method == HTTP_M_PUT || q->method == HTTP_M_DELETE ||
	     q->method == HTTP_M_POST || fwd))
		return http_reply_close_extra(c, 405, "Allow: GET, HEAD\r\n",
					      "/_goblin/ and /metrics are read "
					      "only");
	/* a mirror forwards any method but GET and HEAD, body and all
	 * (RFC 9110 sec. 9.3.5: DELETE may have one) */
	if (fwd)
		return http_forward_start(c, q);
	if (http_has_body(q) && q->method != HTTP_M_PUT &&
	    q->method != HTTP_M_POST)
		return reply_close(c, 400,
				   "a body is not taken with this "
				   "method");
	switch (q->method) {
	case HTTP_M_GET:
	case HTTP_M_HEAD:
		return get_start(c, q);
	case HTTP_M_PUT:
		return http_put_start(c, q);
	case HTTP_M_DELETE:
		return http_delete_run(c, q);
	case HTTP_M_POST:
		return http_reply_close_extra(c, 405,
					      "Allow: GET, HEAD, PUT, "
					      "DELETE\r\n",
					      "method not allowed");
	default: /* counted as when http-parser refused unknown ones */
		CNT(c->w, http_bad_requests);
		return reply_close(c, 501, "method not implemented");
	}
}

/* HP_HEAD: parse the next request head in rbuf and start it. */
static int head_run(struct conn *c)
{
	struct http_state *h = h_of(c);
	struct worker *w = c->w;
	struct http_worker *hw = http_worker_of(c);
	struct http_req *q = &hw->hreq;
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
			h->head_since = gs_mono_sec();
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
	if ((q->method == HTTP_M_GET || q->method == HTTP_M_HEAD) &&
	    used <= sizeof(hw->last)) {
		memcpy(hw->last, buf, used);
		hw->last_len = used;
	}
	if (w->gd->fetcher && http_mirror_key(q) < 0) {
		CNT(w, http_bad_requests);
		if (q->origin_form.len > HTTP_KEY_MAX)
			return reply_close(c, 414, "request target too long");
		return reply_close(c, 400,
				   "bad request target: an invalid "
				   "percent escape");
	}
	return request_start(c, q);
}

static enum conn_run http_conn_run(struct conn *c)
{
	struct http_state *h = h_of(c);

	for (;;) {
		int st = RUN_CLOSE;

		if (c->closing)
			return RUN_CLOSE;
		switch (h->phase) {
		case HP_HEAD:
			st = head_run(c);
			break;
		case HP_BODY:
			st = http_body_run(c);
			break;
		case HP_SEND:
			st = http_send_run(c);
			break;
		case HP_FETCH:
			st = http_fetch_run(c);
			break;
		case HP_FWD_BODY:
			st = http_fwd_run(c);
			break;
		}
		if (st != STEP_NEXT)
			return (enum conn_run)st;
	}
}

static void http_conn_release(struct conn *c)
{
	struct http_state *h = h_of(c);

	http_fetch_release(c);
	http_send_close_reader(c);
	if (h->wr)
		gs_put_abort(h->wr);
	h->wr = NULL;
	http_saved_free(h);
	conn_chunks_drop(c);
	h->phase = HP_HEAD;
}

static bool http_conn_idle(const struct conn *c)
{
	return h_of(c)->phase == HP_HEAD && !h_of(c)->head_since;
}

/* A head not in within --http-timeout: 408 and close.  True: closed. */
static bool http_conn_expired(struct conn *c, int64_t now)
{
	struct http_state *h = h_of(c);
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

/*
 * proto_ops.warm: the worker's last GET or HEAD again, dry, on its scratch
 * connection, before the last bytes of a long answer (GD_WARM_TAIL).
 * The head is parsed again, its key looked up (gs_stat: no pin, no
 * counter, no recency), its attributes decoded and freshness judged, and
 * its reply's head built and dropped (http_serve_dry).
 */
static void http_warm(struct conn *c)
{
	struct http_worker *hw = http_worker_of(c);
	struct gd *gd = c->w->gd;
	struct http_req *q = &hw->hreq;
	struct gs_attr a;
	size_t used;

	if (!hw->last_len ||
	    http_parse_head(hw->last, hw->last_len, q, &used) != HTTP_PARSE_OK)
		return;
	if (gd->fetcher && http_mirror_key(q) < 0)
		return;
	if (!q->klen || gs_stat(gd->s, q->key, q->klen, hw->meta) < 0 ||
	    gs_attr_kind(hw->meta->attr, hw->meta->attr_len) > GS_KIND_DIR)
		return;
	http_meta_attr(hw->meta, &a);
	if (gd->fetcher &&
	    ((a.flags & GS_ATTR_VARY) || !http_fresh_enough(q, &a)))
		return; /* a variant, or stale: the next request's own way */
	if (!hw->dry) {
		if (!(hw->dry = calloc(1, sizeof(*hw->dry))))
			return;
		hw->dry->c.w = c->w;
		hw->dry->c.ops = c->ops;
		hw->dry->c.proto = c->proto;
		hw->dry->c.fd = -1;
	}
	http_serve_dry(&hw->dry->c, q, hw->meta, &a,
		       gd->fetcher ? "HIT" : NULL);
}

static void *http_worker_init(struct worker *w)
{
	struct http_worker *hw = calloc(1, sizeof(*hw));

	(void)w;
	if (hw && !(hw->meta = malloc(sizeof(*hw->meta)))) {
		free(hw);
		return NULL;
	}
	return hw;
}

static void http_worker_fini(struct worker *w, void *pstate)
{
	struct http_worker *hw = pstate;

	(void)w;
	if (hw->dry)
		free(hw->dry->c.wbuf);
	free(hw->dry);
	free(hw->meta);
	free(hw);
}

const struct proto_ops http_ops = {
	.name = "http",
	.conn_size = sizeof(struct http_conn),
	.run = http_conn_run,
	.release = http_conn_release,
	.idle = http_conn_idle,
	.expired = http_conn_expired,
	.posted = http_posted,
	.warm = http_warm,
	.worker_init = http_worker_init,
	.worker_fini = http_worker_fini,
	.busy_reply = "HTTP/1.1 503 Service Unavailable\r\n"
		      "Content-Type: text/plain\r\n"
		      "Content-Length: 26\r\n"
		      "Retry-After: 1\r\n"
		      "Connection: close\r\n"
		      "\r\ntoo many open connections\n",
	.linger = true,
};
