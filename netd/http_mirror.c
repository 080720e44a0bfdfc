/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * HTTP --mirror glue: the caching reverse proxy over the origin fetcher
 * (fetch.c).  A miss, a stale copy or a request with credentials is
 * handed to the fetcher; its result comes back through the worker's
 * mailbox (conn_post) and is served as any reader (http_serve), or
 * relayed as the origin's reply.  Writes are buffered and forwarded to
 * the origin.  The RFC 9111 rules themselves are http_sem.c's.
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
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "http.h"

#define FWD_BODY_MAX (16u << 20) /* a write forwarded to the origin */

/* ---- the mirror: fetches and their results ---- */

/*
 * Is a stored version with attributes @a fresh enough for request @q
 * (mirror mode)?  What was not fetched from the origin always is.  The
 * request's Pragma does not count: RFC 9111 sec. 5.4 deprecates it
 * (RFC 7234's "no-cache as if Cache-Control: no-cache" is gone); it
 * still reaches the origin on a miss.
 */
bool http_fresh_enough(const struct http_req *q, const struct gs_attr *a)
{
	struct http_cc cc;

	if (!(a->flags & GS_ATTR_ORIGIN))
		return true;
	http_cc_init(&cc);
	if (q->cache_control.p)
		http_cc_parse(&cc, q->cache_control.p, q->cache_control.len);
	return http_fresh_for(&cc, a->fresh_until, a->age_base,
			      a->flags & GS_ATTR_NO_CACHE,
			      a->flags & GS_ATTR_REVALIDATE, time(NULL));
}

/*
 * The fetcher's done(), on its thread: the result goes to the
 * connection's worker, which calls http_posted() and drives it.
 */
static void fetch_done(struct fetch_waiter *fw)
{
	struct http_state *h =
		(struct http_state *)((char *)fw -
				      offsetof(struct http_state, fw));

	conn_post(conn_of_h(h));
}

void http_posted(struct conn *c)
{
	h_of(c)->fw_ready = true; /* in disk_wait: driven next */
}

/* Take @c's result out of the mailbox before the connection goes. */
static void mail_take(struct conn *c)
{
	while (!h_of(c)->fw_ready) {
		if (conn_unpost(c))
			break;
		sched_yield(); /* done() is on its way */
	}
	h_of(c)->fw_ready = true;
}

void http_fetch_release(struct conn *c)
{
	struct http_state *h = h_of(c);

	if (h->fw_pending && !h->fw_ready &&
	    !fetcher_cancel(c->w->gd->fetcher, &h->fw))
		mail_take(c);
	if ((h->fw_pending || h->fw_ready) && h->fw.r)
		gs_reader_close(h->fw.r);
	h->fw.r = NULL;
	h->fw_pending = h->fw_ready = false;
}

/*
 * Mirror mode: @q's key is its target's, path and query (fetch_key_of),
 * not the decoded path an origin server's keys are.  0 or -errno.
 */
int http_mirror_key(struct http_req *q)
{
	long n = fetch_key_of(q->origin_form.p, q->origin_form.len, q->key,
			      HTTP_KEY_MAX);

	if (n < 0)
		return (int)n;
	q->klen = (size_t)n;
	return 0;
}

/* The peer's address, for X-Forwarded-For ("" if unknown). */
static void peer_name(const struct conn *c, char *out, size_t cap)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	const void *a = NULL;

	out[0] = '\0';
	if (getpeername(c->fd, (struct sockaddr *)&ss, &sl) < 0)
		return;
	if (ss.ss_family == AF_INET)
		a = &((struct sockaddr_in *)&ss)->sin_addr;
	else if (ss.ss_family == AF_INET6)
		a = &((struct sockaddr_in6 *)&ss)->sin6_addr;
	if (!a || !inet_ntop(ss.ss_family, a, out, (socklen_t)cap))
		out[0] = '\0';
	if (!strncmp(out, "::ffff:", 7) && strchr(out, '.'))
		memmove(out, out + 7, strlen(out + 7) + 1);
}

/*
 * What the fetcher forwards of @q (see fetch_req), into @fr; @client has
 * room for INET6_ADDRSTRLEN.
 */
static void fetch_req_of(struct conn *c, const struct http_req *q,
			 struct fetch_req *fr, char *client)
{
	peer_name(c, client, INET6_ADDRSTRLEN);
	*fr = (struct fetch_req){
		.target = q->origin_form.p,
		.target_len = q->origin_form.len,
		.fields = q->fields.p ? q->fields.p : "",
		.fields_len = q->fields.len,
		.client = client,
		.pass = q->authorization.p != NULL,
		.authorization = q->authorization.p,
		.authorization_len = q->authorization.len,
		.cache_control = q->cache_control.p,
		.cache_control_len = q->cache_control.len,
	};
}

static struct http_saved *save_request(struct conn *c)
{
	struct http_state *h = h_of(c);
	struct http_saved *sv = malloc(sizeof(*sv) + h->head_len);
	size_t used;

	if (!sv)
		return NULL;
	memcpy(sv->head, h->head, h->head_len);
	sv->len = h->head_len;
	if (http_parse_head(sv->head, sv->len, &sv->req, &used) !=
	    HTTP_PARSE_OK) {
		free(sv); /* it parsed in rbuf: cannot happen */
		return NULL;
	}
	if (c->w->gd->fetcher && http_mirror_key(&sv->req) < 0) {
		free(sv); /* nor this */
		return NULL;
	}
	return sv;
}

static int fetch_begin(struct conn *c)
{
	struct http_state *h = h_of(c);

	memset(&h->fw, 0, sizeof(h->fw));
	h->fw.done = fetch_done;
	h->fw_pending = true;
	h->fw_ready = false;
	h->phase = HP_FETCH;
	return STEP_NEXT;
}

/* The fetcher refused a job (@ret < 0): no result will come. */
static int fetch_refused(struct conn *c, const char *what, int ret)
{
	h_of(c)->fw_pending = false;
	h_of(c)->phase = HP_HEAD;
	return reply_close(c, 503, "cannot %s: %s", what, strerror(-ret));
}

/* A miss (@stale NULL) or a stale copy: ask the origin. */
int http_fetch_start(struct conn *c, const struct http_req *q, const char *key,
		     size_t klen, const struct gs_meta *stale)
{
	struct http_state *h = h_of(c);
	char client[INET6_ADDRSTRLEN];
	struct fetch_req fr;
	int ret;

	fetch_req_of(c, q, &fr, client);
	if (!(h->saved = save_request(c)))
		return reply_close(c, 500, "out of memory");
	h->fw_revalidate = stale != NULL;
	fetch_begin(c);
	/* the saved copy: it stays until the result is taken */
	h->fw.fields = h->saved->req.fields.p;
	h->fw.fields_len = h->saved->req.fields.len;
	ret = fetcher_get(c->w->gd->fetcher, key, klen, stale, &fr, &h->fw);
	if (ret < 0)
		return fetch_refused(c, "fetch", ret);
	return STEP_NEXT;
}

/*
 * The fetch this request joined brought another variant than it selects:
 * a fetch of its own (which no request joins, so this happens once).
 */
static int fetch_retry(struct conn *c)
{
	struct http_state *h = h_of(c);
	const struct http_req *q = &h->saved->req;
	char client[INET6_ADDRSTRLEN];
	struct fetch_req fr;
	int ret;

	fetch_req_of(c, q, &fr, client);
	fr.alone = true;
	h->fw_revalidate = false;
	fetch_begin(c);
	h->fw.fields = fr.fields;
	h->fw.fields_len = fr.fields_len;
	ret = fetcher_get(c->w->gd->fetcher, q->key, q->klen, NULL, &fr,
			  &h->fw);
	if (ret < 0)
		return fetch_refused(c, "fetch", ret);
	return STEP_NEXT;
}

/* A stale copy served at once: revalidate it in the background. */
static int fetch_background(struct conn *c, const struct http_req *q,
			    const char *key, size_t klen,
			    const struct gs_meta *stale)
{
	char client[INET6_ADDRSTRLEN];
	struct fetch_req fr;

	fetch_req_of(c, q, &fr, client);
	return fetcher_refresh(c->w->gd->fetcher, key, klen, stale, &fr);
}

/*
 * A stored version @r that is not fresh enough for @q (mirror mode).
 * Within the response's stale-while-revalidate (RFC 5861) it is served
 * at once, with its Age, while one background revalidation brings the
 * next; otherwise it is revalidated (or refetched) first.
 */
int http_stale_run(struct conn *c, const struct http_req *q, const char *key,
		   size_t klen, struct gs_reader *r, const struct gs_attr *a)
{
	const struct gs_meta *m = gs_reader_meta(r);
	struct http_cc resp, req;
	int ret;

	http_cc_init(&resp);
	http_cc_parse_block(&resp, "Cache-Control", a->headers, a->headers_len);
	http_cc_init(&req);
	if (q->cache_control.p) /* Pragma does not count, as in
				 * http_fresh_enough() */
		http_cc_parse(&req, q->cache_control.p, q->cache_control.len);
	if (resp.stale_while_revalidate >= 0 && !q->authorization.p &&
	    http_stale_ok(HTTP_STALE_REVALIDATE, &resp, &req, a->fresh_until,
			  a->age_base, a->flags & GS_ATTR_NO_CACHE,
			  a->flags & GS_ATTR_REVALIDATE, 0, time(NULL)) &&
	    fetch_background(c, q, key, klen, m) == 0) {
		CNT(c->w, http_hits);
		return http_serve(c, q, r, a, "STALE");
	}
	/* the fetcher reads the stale metadata before it returns */
	CNT(c->w, http_misses);
	ret = http_fetch_start(c, q, key, klen, m);
	gd_reader_close(c->w, r);
	return ret;
}

int http_fetch_run(struct conn *c)
{
	struct http_state *h = h_of(c);
	struct fetch_waiter *fw = &h->fw;
	const struct http_req *q;
	struct gs_attr a;
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
		http_meta_attr(gs_reader_meta(fw->r), &a);
		ret = http_serve(c, q, fw->r, &a,
				 fw->kind == FETCH_PASS ? "PASS" :
				 fw->stale		? "STALE" :
				 h->fw_revalidate	? "REVALIDATED" :
							  "MISS");
		fw->r = NULL;
		return ret;
	case FETCH_RETRY:
		return fetch_retry(c);
	case FETCH_REPLY:
	default:
		http_reply_text(c, fw->status ? fw->status : 502, "%s",
				fw->msg);
		return http_request_done(c);
	}
}

/* ---- mirror mode: other methods go to the origin ---- */

#define HTTP_METHOD_FWD_MAX 31 /* a longer method gets 501 */

/* Safe methods but GET and HEAD (RFC 9110 sec. 9.2.1): no invalidation. */
static bool method_safe(const struct http_req *q)
{
	const struct http_str *m = &q->method_tok;

	return (m->len == 7 && !memcmp(m->p, "OPTIONS", 7)) ||
	       (m->len == 5 && !memcmp(m->p, "TRACE", 5));
}

static int forward_send(struct conn *c)
{
	struct http_state *h = h_of(c);
	const struct http_req *q = &h->saved->req;
	char method[HTTP_METHOD_FWD_MAX + 1], client[INET6_ADDRSTRLEN];
	struct fetch_forward fwd = {
		.method = method,
		.body = q->has_length || q->chunked ? h->fwd : NULL,
		.body_len = (size_t)h->total,
		.ctype = q->content_type.p,
		.ctype_len = q->content_type.len,
		.safe = method_safe(q),
	};
	int ret;

	/* http_forward_start() checked its length */
	memcpy(method, q->method_tok.p, q->method_tok.len);
	method[q->method_tok.len] = '\0';
	fetch_req_of(c, q, &fwd.req, client);
	/* goblind's own write token is not the origin's business */
	fwd.req.no_authorization = c->w->gd->set.http_token != NULL;
	fetch_begin(c);
	h->fw_revalidate = false;
	ret = fetcher_forward(c->w->gd->fetcher, q->key, q->klen, &fwd, &h->fw);
	if (ret < 0)
		return fetch_refused(c, "forward", ret);
	return STEP_NEXT;
}

/* HP_FWD_BODY: the body, whole in memory (at most FWD_BODY_MAX). */
int http_fwd_run(struct conn *c)
{
	struct http_state *h = h_of(c);

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
			return reply_close(c, 413,
					   "a body forwarded to the "
					   "origin is limited to %u bytes",
					   FWD_BODY_MAX);
		if (h->total + n > h->fwd_cap) { /* chunked: grow */
			size_t cap = h->fwd_cap * 2 > h->total + n ?
					     h->fwd_cap * 2 :
					     h->total + n;
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

int http_forward_start(struct conn *c, const struct http_req *q)
{
	struct http_state *h = h_of(c);
	int ret;

	if (q->method_tok.len > HTTP_METHOD_FWD_MAX ||
	    (q->method_tok.len == 7 && !memcmp(q->method_tok.p, "CONNECT", 7)))
		return reply_close(c, 501, "method not implemented");
	/* what may change the origin's state needs the write gate */
	if (!method_safe(q) && (ret = http_write_gate(c, q)))
		return ret;
	if (q->has_length && q->length > FWD_BODY_MAX)
		return reply_close(c, 413,
				   "a body forwarded to the origin is "
				   "limited to %u bytes",
				   FWD_BODY_MAX);
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
