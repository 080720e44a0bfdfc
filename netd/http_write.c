/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * HTTP writes on the store: PUT (Content-Length or chunked bodies
 * flowing into a store writer as they arrive, If-Match/If-None-Match/
 * If-Unmodified-Since committed on the version they held for) and
 * DELETE, and the write gate they pass first (loopback, the
 * --trusted-proxy's X-Forwarded-For, or --http-write-token).
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
int http_write_gate(struct conn *c, const struct http_req *q)
{
	const char *tok = c->w->gd->set.http_token;
	const struct http_str *au = &q->authorization;

	if (!tok) {
		if (client_local(c, q))
			return 0;
		CNT(c->w, http_denied);
		return reply_close(c, 403,
				   "writes are accepted from "
				   "loopback only (see --http-write-token)");
	}
	if (au->p && au->len > 7 && !strncasecmp(au->p, "Bearer ", 7) &&
	    token_equal(au->p + 7, au->len - 7, tok))
		return 0;
	CNT(c->w, http_denied);
	return http_reply_close_extra(c, 401,
				      "WWW-Authenticate: Bearer "
				      "realm=\"goblind\"\r\n",
				      "a write token is required");
}

/* ---- PUT and DELETE ---- */

/* The live version a write's preconditions are evaluated against. */
struct current {
	bool exists;
	struct gs_meta m;
	size_t elen;
	char etag[GS_ATTR_ETAG_MAX + 48];
};

/* Look up @q's key and evaluate @q's preconditions for a write. */
static enum http_cond_result
write_cond(struct conn *c, const struct http_req *q, struct current *cur)
{
	struct http_cond cond = http_cond_of(q);
	struct gs_attr a;

	cur->elen = 0;
	cur->exists = gs_stat(c->w->gd->s, q->key, q->klen, &cur->m) == 0;
	if (cur->exists) {
		http_meta_attr(&cur->m, &a);
		cur->elen = http_etag_of(&cur->m, &a, false, cur->etag,
					 sizeof(cur->etag));
	}
	return http_cond_eval(&cond, false, cur->exists, cur->etag, cur->elen,
			      cur->exists ? http_last_modified_of(&cur->m, &a) :
					    0);
}

static void body_feed(struct conn *c, const void *p, size_t n)
{
	struct http_state *h = h_of(c);

	h->total += n;
	if (!h->err && h->total > c->w->gd->set.max_item)
		h->err = -EFBIG;
	if (!h->err)
		h->err = gs_put_write(h->wr, p, n);
}

static int put_finish(struct conn *c)
{
	struct http_state *h = h_of(c);
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
		http_head_begin(c, h->existed ? 204 : 201);
		if (!h->existed)
			OUT(c, "Content-Length: 0\r\n");
		OUT(c, "\r\n");
		return http_request_done(c);
	case -EEXIST:
	case -ESTALE:
	case -ENOENT:
		http_reply_text(c, 412,
				"precondition failed: the object changed");
		return http_request_done(c);
	case -EPROTO:
		return reply_close(c, 400,
				   "the body was shorter than its "
				   "Content-Length");
	default:
		return reply_close(c, 500, "commit failed: %s",
				   gs_strerror(ret));
	}
}

/* A chunked body: decoded in place in rbuf, which the driver refills. */
static int chunked_run(struct conn *c)
{
	struct http_state *h = h_of(c);

	for (;;) {
		char *in = c->rbuf + c->rstart;
		size_t avail = c->rend - c->rstart, out_len, used;

		if (!avail)
			return RUN_INPUT;
		if (http_chunked_feed(&h->ch, in, avail, in, &out_len, &used) <
		    0) {
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
int http_body_run(struct conn *c)
{
	struct http_state *h = h_of(c);

	if (h->chunked)
		return chunked_run(c);
	while (h->left) {
		const uint8_t *p;
		ssize_t got = conn_take(c, h->left, &p);

		if (got == 0)
			return RUN_WAIT;
		if (got < 0)
			return RUN_CLOSE; /* the put is aborted */
		h->left -= (uint64_t)got;
		body_feed(c, p, (size_t)got);
	}
	return put_finish(c);
}

bool http_has_body(const struct http_req *q)
{
	return q->chunked || (q->has_length && q->length);
}

int http_put_start(struct conn *c, const struct http_req *q)
{
	struct http_state *h = h_of(c);
	struct gd *gd = c->w->gd;
	struct gs_put_args pa = { 0 };
	struct gs_attr a;
	struct current cur;
	uint8_t abuf[GS_ATTR_MAX];
	long alen;
	int ret;

	if ((ret = http_write_gate(c, q)))
		return ret;
	if (!q->klen)
		return reply_close(c, 400, "no key: PUT /<key>");
	if (!q->has_length && !q->chunked)
		return reply_close(c, 411,
				   "Content-Length or chunked "
				   "Transfer-Encoding required");
	if (q->has_length && q->length > gd->set.max_item) {
		CNT(c->w, store_too_large);
		return reply_close(c, 413,
				   "%" PRIu64 " bytes is larger than "
				   "--max-item",
				   q->length);
	}
	if (write_cond(c, q, &cur) == HTTP_COND_FAILED)
		return reply_close(c, 412, "precondition failed");
	h->existed = cur.exists;
	gs_attr_init(&a);
	if (q->content_type.p) {
		if (q->content_type.len > GS_ATTR_CTYPE_MAX)
			return reply_close(c, 400, "Content-Type too long");
		memcpy(a.ctype, q->content_type.p, q->content_type.len);
		a.ctype_len = q->content_type.len;
	}
	alen = gs_attr_encode(&a, abuf, sizeof(abuf));
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

int http_delete_run(struct conn *c, const struct http_req *q)
{
	struct current cur;
	int ret;

	if ((ret = http_write_gate(c, q)))
		return ret;
	if (write_cond(c, q, &cur) == HTTP_COND_FAILED) {
		http_reply_text(c, 412, "precondition failed");
		return http_request_done(c);
	}
	ret = cur.exists ? gs_delete(c->w->gd->s, q->key, q->klen) : -ENOENT;
	if (ret == -ENOENT) {
		http_reply_text(c, 404, "not found");
	} else if (ret < 0) {
		http_reply_text(c, 500, "cannot delete: %s", gs_strerror(ret));
	} else {
		CNT(c->w, http_deletes);
		http_head_begin(c, 204);
		OUT(c, "\r\n");
	}
	return http_request_done(c);
}
