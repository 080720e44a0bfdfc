/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * HTTP responses: the status line and common headers, whole replies and
 * error replies, validators (ETag, Last-Modified, the conditional
 * headers of a request), and the end of a request.  Every other HTTP
 * room writes its responses through these.
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

/* The Date header's value: formatted once a second on each worker. */
static const char *date_now(struct conn *c)
{
	struct http_worker *hw = http_worker_of(c);
	int64_t now = time(NULL);

	if (now != hw->date_sec) {
		http_date_format(now, hw->date);
		hw->date_sec = now;
	}
	return hw->date;
}

static const char *reason(int st)
{
	switch (st) {
	case 100:
		return "Continue";
	case 200:
		return "OK";
	case 201:
		return "Created";
	case 203:
		return "Non-Authoritative Information";
	case 204:
		return "No Content";
	case 206:
		return "Partial Content";
	case 300:
		return "Multiple Choices";
	case 301:
		return "Moved Permanently";
	case 302:
		return "Found";
	case 303:
		return "See Other";
	case 307:
		return "Temporary Redirect";
	case 308:
		return "Permanent Redirect";
	case 304:
		return "Not Modified";
	case 400:
		return "Bad Request";
	case 401:
		return "Unauthorized";
	case 403:
		return "Forbidden";
	case 404:
		return "Not Found";
	case 405:
		return "Method Not Allowed";
	case 408:
		return "Request Timeout";
	case 410:
		return "Gone";
	case 411:
		return "Length Required";
	case 412:
		return "Precondition Failed";
	case 413:
		return "Content Too Large";
	case 414:
		return "URI Too Long";
	case 416:
		return "Range Not Satisfiable";
	case 417:
		return "Expectation Failed";
	case 431:
		return "Request Header Fields Too Large";
	case 500:
		return "Internal Server Error";
	case 501:
		return "Not Implemented";
	case 502:
		return "Bad Gateway";
	case 503:
		return "Service Unavailable";
	case 504:
		return "Gateway Timeout";
	case 505:
		return "HTTP Version Not Supported";
	case 507:
		return "Insufficient Storage";
	default:
		return st < 300 ? "OK" :
		       st < 400 ? "Redirect" :
		       st < 500 ? "Client Error" :
				  "Server Error";
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

/* The header block @b (@len bytes of "Name: value\r\n") has @name. */
static bool block_has(const char *b, size_t len, const char *name)
{
	size_t nlen = strlen(name);
	const char *p = b, *end = b + len;

	while (p && (size_t)(end - p) > nlen) {
		if (p[nlen] == ':' && strncasecmp(p, name, nlen) == 0)
			return true;
		p = memchr(p, '\n', (size_t)(end - p));
		if (p)
			p++;
	}
	return false;
}

/*
 * The status line and the headers every response has.  A stored
 * response's header block @hdrs (may be NULL) goes out after them, and
 * where it has the origin's Date and Server, those stand (RFC 9111 sec.
 * 3.1 and 4: a stored response is replayed with its own; its Age says
 * how old it is).
 */
void http_head_begin_stored(struct conn *c, int st, const char *hdrs,
			    size_t len)
{
	struct http_state *h = h_of(c);

	count_status(c->w, st);
	conn_printf(c, "HTTP/1.1 %d %s\r\n", st, reason(st));
	if (!hdrs || !block_has(hdrs, len, "Date"))
		conn_printf(c, "Date: %s\r\n", date_now(c));
	if (!hdrs || !block_has(hdrs, len, "Server"))
		OUT(c, "Server: goblind/" GD_VERSION "\r\n");
	if (!h->keep_alive)
		OUT(c, "Connection: close\r\n");
	else if (h->http10)
		OUT(c, "Connection: keep-alive\r\n");
	if (hdrs)
		conn_out(c, hdrs, len);
}

void http_head_begin(struct conn *c, int st)
{
	http_head_begin_stored(c, st, NULL, 0);
}

/* A whole response with a body built in memory; @extra: header lines. */
void http_reply_full(struct conn *c, int st, const char *extra,
		     const char *ctype, const void *body, size_t len)
{
	http_head_begin(c, st);
	if (extra)
		conn_out(c, extra, strlen(extra));
	conn_printf(c, "Content-Type: %s\r\nContent-Length: %zu\r\n\r\n", ctype,
		    len);
	if (!h_of(c)->head_only)
		conn_out(c, body, len);
}

void http_reply_body(struct conn *c, int st, const char *ctype,
		     const void *body, size_t len)
{
	http_reply_full(c, st, NULL, ctype, body, len);
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
	http_reply_full(c, st, extra, "text/plain; charset=utf-8", body,
			(size_t)n);
}

/* A whole response with a one-line text body: errors and the like. */
__attribute__((format(printf, 3, 4))) void
http_reply_text(struct conn *c, int st, const char *fmt, ...)
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
__attribute__((format(printf, 4, 5))) int
http_reply_close_extra(struct conn *c, int st, const char *extra,
		       const char *fmt, ...)
{
	va_list ap;

	h_of(c)->keep_alive = false;
	va_start(ap, fmt);
	reply_vtext(c, st, extra, fmt, ap);
	va_end(ap);
	return RUN_CLOSE;
}

/* ---- validators ---- */

/* @m's HTTP attribute record; a memcache value has none: defaults. */
void http_meta_attr(const struct gs_meta *m, struct gs_attr *a)
{
	if (gs_attr_decode(m->attr, m->attr_len, a) < 0)
		gs_attr_init(a);
}

/*
 * The entity tag of a stored version: the origin's when it gave one,
 * else derived from the value's hash and size (a strong validator: the
 * same bytes, the same tag).  A fill has no hash yet: no tag.
 */
size_t http_etag_of(const struct gs_meta *m, const struct gs_attr *a,
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

int64_t http_last_modified_of(const struct gs_meta *m, const struct gs_attr *a)
{
	return a->last_modified ? a->last_modified : m->mtime_ns / 1000000000;
}

void http_validators_out(struct conn *c, const char *etag, size_t elen,
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

struct http_cond http_cond_of(const struct http_req *q)
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

void http_saved_free(struct http_state *h)
{
	free(h->saved);
	h->saved = NULL;
	free(h->fwd);
	h->fwd = NULL;
}

int http_request_done(struct conn *c)
{
	struct http_state *h = h_of(c);

	h->phase = HP_HEAD;
	h->nranges = 0;
	h->multipart = h->chunked_out = h->crlf_due = false;
	http_saved_free(h);
	return h->keep_alive ? STEP_NEXT : RUN_CLOSE;
}
