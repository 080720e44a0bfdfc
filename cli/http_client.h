/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * goblinctl bench's HTTP/1.1 client side: a pure parser of response heads
 * and a body framer (Content-Length, chunked, until close), unit-tested
 * alone (test/unit/test_http_client.c): no I/O, no allocation.
 */
#ifndef GOBLINCTL_HTTP_CLIENT_H
#define GOBLINCTL_HTTP_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HTTPC_HEAD_MAX (64u << 10)  /* a longer head: -EMSGSIZE */
#define HTTPC_LEN_MAX  (1ull << 50) /* a larger Content-Length: -EPROTO */

/* How the body of a response is delimited (RFC 9112 section 6.3). */
enum httpc_framing {
	HTTPC_BODY_NONE,    /* HEAD, 1xx, 204, 304: no body */
	HTTPC_BODY_LENGTH,  /* Content-Length bytes */
	HTTPC_BODY_CHUNKED, /* Transfer-Encoding: chunked */
	HTTPC_BODY_CLOSE,   /* until the server closes */
};

struct httpc_resp {
	int status; /* 100..999 */
	int minor;  /* HTTP/1.minor */
	enum httpc_framing framing;
	uint64_t length; /* HTTPC_BODY_LENGTH */
	bool close;	 /* the connection ends after this one */
};

/*
 * Parse a response head (status line and header fields, up to and with
 * the empty line) at the start of @buf (@len bytes).  @head_request: the
 * request was a HEAD (no body whatever the fields say).
 *
 * Returns 1 when the head is not complete yet, 0 with *@r filled and
 * *@consumed the head's length, -EMSGSIZE when no head ends within
 * HTTPC_HEAD_MAX bytes, -EPROTO on a malformed status line or field, a
 * folded line, an invalid or conflicting Content-Length, or both
 * Content-Length and Transfer-Encoding (RFC 9112 6.3: a smuggling sign).
 * A Transfer-Encoding whose last coding is not "chunked" is read until
 * the close.  Lines may end in CRLF or a bare LF.  A 1xx response is returned like
 * any other (framing NONE): the caller skips it and parses the next.
 */
int httpc_parse_head(const char *buf, size_t len, bool head_request,
		     struct httpc_resp *r, size_t *consumed);

/* The body framer: feed it bytes, it says which of them are payload. */
struct httpc_body {
	enum httpc_framing framing;
	uint64_t left; /* LENGTH: bytes to come; CHUNKED: of chunk */
	int state;     /* CHUNKED: where in the framing (private) */
	unsigned line; /* CHUNKED: bytes of the current size line */
	bool done;
};

/* Start the body of response @r. */
void httpc_body_init(struct httpc_body *b, const struct httpc_resp *r);

/*
 * Consume bytes of the body from @buf (@len bytes).  Returns 0 with
 * *@consumed bytes used, of which the payload is buf[*@data_off ..
 * *@data_off + *@data_len) (one span per call: call again while bytes
 * remain and the body is not done), b->done once the body is complete;
 * or -EPROTO on bad chunk framing (a size that is not hex, too large, or
 * a chunk not followed by CRLF).  Bytes after the end are not consumed.
 * HTTPC_BODY_CLOSE bodies end by httpc_body_eof().
 */
int httpc_body_take(struct httpc_body *b, const char *buf, size_t len,
		    size_t *consumed, size_t *data_off, size_t *data_len);

/*
 * The connection was closed by the server: 0 when that completes the body
 * (HTTPC_BODY_CLOSE), -EPIPE when the body was cut short.
 */
int httpc_body_eof(struct httpc_body *b);

/*
 * Write into @out (@size bytes) the request target for @key: @prefix then
 * @key, each byte outside RFC 3986's unreserved, sub-delims, ':', '@' and
 * '/' percent-encoded.  Returns the length, or -ENAMETOOLONG when it does
 * not fit (with its NUL).
 */
int httpc_target(char *out, size_t size, const char *prefix, const char *key);

#endif
