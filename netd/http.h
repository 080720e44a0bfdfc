/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The HTTP/1.1 protocol's rooms share this header (internal to netd/):
 * an HTTP connection's state, and what one room calls in another.
 *
 *   http.c        the request loop and the seam (http_ops): heads parsed
 *                 and dispatched, GET's store-or-origin decision,
 *                 timeouts, release
 *   http_get.c    GET and HEAD: serving a reader with validators (304,
 *                 412), single and multipart ranges (206, 416), bodies
 *                 head first; the stats pages
 *   http_write.c  PUT and DELETE on the store, their preconditions, and
 *                 the write gate (loopback, --trusted-proxy, token)
 *   http_mirror.c the --mirror glue: misses and stale copies handed to the
 *                 fetcher (fetch.c) and its results served; writes
 *                 forwarded to the origin
 *   http_reply.c  response heads, whole replies and errors, validators,
 *                 the end of a request
 *   http_proto.c  the pure head parser and chunked decoder (http_proto.h)
 *   http_sem.c    the pure semantics: dates, ranges, conditionals and
 *                 the RFC 9111 rules (http_sem.h)
 *
 * Calls go one way: the loop calls every room; http_mirror.c calls
 * http_get.c (serve a fetched reader) and http_write.c (the write gate);
 * http_write.c and http_get.c call http_reply.c only.
 */
#ifndef GOBLIND_HTTP_H
#define GOBLIND_HTTP_H

#include "goblind.h"
#include "../store/origin/origin.h"
#include "http_proto.h"
#include "http_sem.h"

#define OUT(c, lit) conn_out(c, lit, sizeof(lit) - 1)

#define GD_FIRST_SEND (16u << 10) /* the first write's body bytes */
#define DEFAULT_CTYPE "application/octet-stream"

/* A step of a request: go on with the next phase or request. */
#define STEP_NEXT (-1)

/* An HTTP connection's request in progress. */
enum http_phase {
	HP_HEAD = 0, /* between requests: parse the next head */
	HP_BODY,     /* a PUT body flowing into a store writer */
	HP_SEND,     /* a response body flowing out of a reader */
	HP_FETCH,    /* waiting for the mirror's fetcher */
	HP_FWD_BODY, /* a body being buffered to forward to the origin */
};

/* A request kept across a fetch: its head copied and parsed again. */
struct http_saved {
	struct http_req req; /* its pointers are into head[] */
	size_t len;
	char head[];
};

struct http_state {
	enum http_phase phase;
	bool keep_alive;  /* this request's */
	bool http10;	  /* an HTTP/1.0 request */
	bool head_only;	  /* HEAD: no body goes out */
	const char *head; /* while a request starts: its head in rbuf */
	size_t head_len;
	int64_t head_since; /* monotonic s: a partial head began */
	/* HP_BODY */
	struct gs_writer *wr;
	uint64_t left;	/* Content-Length bytes still to come */
	uint64_t total; /* body bytes taken so far */
	bool chunked;	/* the body is chunked: decoded by ch */
	struct http_chunked ch;
	int err;      /* first store error of the body */
	bool existed; /* the key existed: 204, else 201 */
	/* HP_SEND */
	struct gs_reader *r;
	struct http_range ranges[HTTP_RANGES_MAX];
	unsigned nranges, cur; /* 0 ranges: the whole object */
	bool multipart;
	bool range_started;  /* gs_reader_range() done for ranges[cur] */
	bool chunked_out;    /* size unknown (a fill): chunked encoding */
	bool crlf_due;	     /* a chunk's CRLF follows the zero-copy one */
	bool sent_body;	     /* a zero-copy chunk went out already */
	const uint8_t *rest; /* a split first chunk's second part */
	size_t rest_len;
	uint64_t size; /* the object's, for part headers */
	uint64_t boundary;
	char ctype[GS_ATTR_CTYPE_MAX + 1];
	/* HP_FETCH, HP_FWD_BODY */
	struct fetch_waiter fw;
	bool fw_pending;	  /* given to the fetcher, result not taken */
	bool fw_ready;		  /* the result is in fw */
	bool fw_revalidate;	  /* the fetch revalidates a stale copy */
	struct http_saved *saved; /* the request, kept across the fetch */
	char *fwd;		  /* HP_FWD_BODY: the body (malloc) */
	size_t fwd_cap;
};

/* An HTTP connection: the worker's part, then ours. */
struct http_conn {
	struct conn c;
	struct http_state h;
};

/* The longest request head kept for http_warm(); longer ones are not. */
#define HTTP_WARM_HEAD 2048

/* A worker's HTTP state (http_ops.worker_init). */
struct http_worker {
	struct http_req hreq; /* the HTTP head being parsed */
	/* the last GET or HEAD parsed, and where http_warm() looks it up */
	char last[HTTP_WARM_HEAD];
	size_t last_len;
	struct gs_meta *meta;
	struct http_conn *dry; /* a connection of no client's, for it */
	int64_t date_sec;      /* the second date[] was formatted for */
	char date[HTTP_DATE_LEN + 1];
};

static inline struct http_state *h_of(const struct conn *c)
{
	return &((struct http_conn *)(uintptr_t)c)->h;
}

static inline struct conn *conn_of_h(struct http_state *h)
{
	return &((struct http_conn *)((char *)h -
				      offsetof(struct http_conn, h)))
			->c;
}

static inline struct http_worker *http_worker_of(const struct conn *c)
{
	return conn_pstate(c);
}

/* The seam (http.c). */
extern const struct proto_ops http_ops;

/* ---- http_reply.c ---- */

/*
 * The status line and the headers every response has; _stored: then a
 * stored response's header block, whose Date and Server stand.
 */
void http_head_begin_stored(struct conn *c, int st, const char *hdrs,
			    size_t len);
void http_head_begin(struct conn *c, int st);
/* A whole response with a body built in memory; @extra: header lines. */
void http_reply_full(struct conn *c, int st, const char *extra,
		     const char *ctype, const void *body, size_t len);
void http_reply_body(struct conn *c, int st, const char *ctype,
		     const void *body, size_t len);
/* A whole response with a one-line text body: errors and the like. */
__attribute__((format(printf, 3, 4))) void
http_reply_text(struct conn *c, int st, const char *fmt, ...);
/*
 * An error that ends the connection (the request's body, if any, is not
 * read), with @extra header lines.  Returns RUN_CLOSE.
 */
__attribute__((format(printf, 4, 5))) int
http_reply_close_extra(struct conn *c, int st, const char *extra,
		       const char *fmt, ...);
#define reply_close(c, st, ...) http_reply_close_extra(c, st, NULL, __VA_ARGS__)
/* The request is answered: the next one, or RUN_CLOSE. */
int http_request_done(struct conn *c);
void http_saved_free(struct http_state *h);
/* @m's HTTP attribute record; a memcache value has none: defaults. */
void http_meta_attr(const struct gs_meta *m, struct gs_attr *a);
/* The entity tag of a stored version (0: none) and its Last-Modified. */
size_t http_etag_of(const struct gs_meta *m, const struct gs_attr *a,
		    bool filling, char *out, size_t cap);
int64_t http_last_modified_of(const struct gs_meta *m, const struct gs_attr *a);
void http_validators_out(struct conn *c, const char *etag, size_t elen,
			 int64_t lm);
struct http_cond http_cond_of(const struct http_req *q);

/* ---- http_get.c ---- */

/* Answer a GET or HEAD from the pinned version @r (ours now). */
int http_serve(struct conn *c, const struct http_req *q, struct gs_reader *r,
	       const struct gs_attr *a, const char *xcache);
/* Its reply's head for @m, built and dropped: http_warm(). */
void http_serve_dry(struct conn *c, const struct http_req *q,
		    const struct gs_meta *m, const struct gs_attr *a,
		    const char *xcache);
/* HP_SEND: the body, head first. */
int http_send_run(struct conn *c);
void http_send_close_reader(struct conn *c);
/* /_goblin/stats (JSON) and /metrics (Prometheus text). */
int http_stats_reply(struct conn *c, bool json);

/* ---- http_write.c ---- */

/* 0, or the status of the refusal (the reply is queued). */
int http_write_gate(struct conn *c, const struct http_req *q);
bool http_has_body(const struct http_req *q);
int http_put_start(struct conn *c, const struct http_req *q);
/* HP_BODY: a PUT body into its store writer. */
int http_body_run(struct conn *c);
int http_delete_run(struct conn *c, const struct http_req *q);

/* ---- http_mirror.c ---- */

/* Mirror mode: @q's key from its target (path and query).  0 or -errno. */
int http_mirror_key(struct http_req *q);
/* Is a stored version with attributes @a fresh enough for @q? */
bool http_fresh_enough(const struct http_req *q, const struct gs_attr *a);
/* A miss (@stale NULL) or a stale copy of @key: ask the origin. */
int http_fetch_start(struct conn *c, const struct http_req *q, const char *key,
		     size_t klen, const struct gs_meta *stale);
/* A stored @r not fresh enough for @q: served stale or revalidated. */
int http_stale_run(struct conn *c, const struct http_req *q, const char *key,
		   size_t klen, struct gs_reader *r, const struct gs_attr *a);
/* HP_FETCH: serve the fetcher's result once it is in. */
int http_fetch_run(struct conn *c);
/* A write in mirror mode: buffer its body, then forward it. */
int http_forward_start(struct conn *c, const struct http_req *q);
/* HP_FWD_BODY */
int http_fwd_run(struct conn *c);
/* http_ops.posted: the fetcher's result reached the worker. */
void http_posted(struct conn *c);
/* Before the connection goes: the fetch cancelled or its result taken. */
void http_fetch_release(struct conn *c);

#endif
