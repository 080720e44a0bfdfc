/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The HTTP/1.1 request-head parser and chunked-body decoder: bytes in,
 * requests out.  Pure: no sockets, no store, no allocation.  Built on
 * nodejs http-parser 2.9 (Debian libhttp-parser-dev) plus our own checks.
 *
 * How http-parser is used, and why:
 *  - A head is handed to http-parser only once it is whole ("\r\n\r\n"
 *    found by our own pre-scan), in one http_parser_execute() call on a
 *    fresh parser, paused in on_headers_complete: the parser never sees
 *    body bytes, and every callback span is contiguous in the caller's
 *    buffer, so header values are pointers into it.  Re-scanning on each
 *    call costs at most HTTP_HEAD_MAX bytes per read.
 *  - The library's strictness is a compile-time choice (HTTP_PARSER_STRICT)
 *    of whoever built it; we do not rely on it.  Our pre-scan rejects NUL,
 *    bare CR, bare LF (lines end in CRLF only), obs-fold, an over-long
 *    request line and an over-long head.  Our callbacks reject header names
 *    that are not tokens (no "Content-Length :"), a request target with
 *    bytes outside 0x21-0x7e, a Transfer-Encoding other than exactly
 *    "chunked" (and any in HTTP/1.0), Content-Length with Transfer-Encoding,
 *    repeated framing headers, and more than HTTP_HEADERS_MAX fields.
 *  - lenient_http_headers and allow_chunked_length stay 0 (the defaults):
 *    http-parser itself then also refuses CL + TE and invalid header bytes.
 *  - http_parser_set_max_header_size() is not called: it is process-wide
 *    and our pre-scan enforces HTTP_HEAD_MAX before the library runs.
 *  - Methods: http-parser knows a fixed list; the rest of a head whose
 *    method token it does not know (an extension method, RFC 9110 sec.
 *    9.1, e.g. "BREW") is parsed after a stand-in "POST " fed first in
 *    place of the token, so every span still points into the caller's
 *    buffer.  Any method but GET, HEAD, PUT, DELETE and POST parses as
 *    HTTP_M_OTHER with its token in method_tok: the server replies 501
 *    and may keep the connection, as the body framing is known; a mirror
 *    forwards it to the origin.
 *  - Chunked bodies: every byte goes first through our own strict framing
 *    scanner (RFC 9112 sec. 7.1 grammar, nothing lenient), then to
 *    http-parser, which decodes; the two must agree on where the body ends.
 *    Why our own layer: Debian's http-parser is built without
 *    HTTP_PARSER_STRICT, and then it does not check the CRLF after a size
 *    line or after chunk data (any two bytes pass), so "3\r\nabcXX0\r\n"
 *    ends a body early and what follows is a request the client hid in it
 *    (issue 16).  Debian 12 packages no strict alternative: llhttp 8.1
 *    comes only as generated C sources inside node-llhttp (no library),
 *    and built from them it serves the same smuggled request, and takes a
 *    bare LF ending the trailers and obs-fold in a trailer (checked by
 *    hand, Dec 2026).  The scanner refuses: a size that
 *    is not 1*HEXDIG, a size over HTTP_CHUNK_MAX (413) or 64 bits, a size
 *    line over HTTP_CHUNK_LINE_MAX, an extension that is not
 *    BWS ";" BWS token [BWS "=" BWS (token / quoted-string)], chunk data not
 *    followed by exactly CRLF, bare CR or LF anywhere, a trailer line that
 *    is not "token:value" (no space before the colon, no obs-fold, no
 *    control bytes), and a trailer section over HTTP_HEAD_MAX bytes or
 *    HTTP_HEADERS_MAX fields.  Extensions are ignored and trailers dropped.
 */
#ifndef HTTP_PROTO_H
#define HTTP_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <http_parser.h>

#define HTTP_HEAD_MAX	    16384 /* request line + header fields + CRLFs */
#define HTTP_LINE_MAX	    8192  /* request line with its CRLF */
#define HTTP_HEADERS_MAX    64	  /* header fields per request */
#define HTTP_KEY_MAX	    4096  /* decoded key (GS_KEY_MAX) */
#define HTTP_CHUNK_MAX	    (UINT64_C(1) << 40) /* largest chunk size */
#define HTTP_CHUNK_LINE_MAX 4096 /* chunk size + extensions, no CRLF */

enum http_method_id {
	HTTP_M_GET = 0,
	HTTP_M_HEAD,
	HTTP_M_PUT,
	HTTP_M_DELETE,
	HTTP_M_POST,
	HTTP_M_OTHER, /* any other token: method_tok */
};

/* Why a head or a chunked body was refused; see http_strerror(). */
enum http_err {
	HTTP_E_OK = 0,
	HTTP_E_NUL,		 /* a NUL byte */
	HTTP_E_BARE_CR,		 /* CR not followed by LF */
	HTTP_E_BARE_LF,		 /* LF not preceded by CR */
	HTTP_E_OBS_FOLD,	 /* a line starting with SP or HT */
	HTTP_E_LINE_TOO_LONG,	 /* request line over HTTP_LINE_MAX: 414 */
	HTTP_E_HEAD_TOO_LONG,	 /* head over HTTP_HEAD_MAX: 431 */
	HTTP_E_TOO_MANY_HEADERS, /* over HTTP_HEADERS_MAX: 431 */
	HTTP_E_METHOD,		 /* not a method token */
	HTTP_E_METHOD_UNKNOWN,	 /* a token http-parser does not know: 501 */
	HTTP_E_TARGET,		 /* bad request target */
	HTTP_E_ESCAPE,		 /* invalid percent escape in the path */
	HTTP_E_ESCAPE_NUL,	 /* %00 in the path */
	HTTP_E_KEY_TOO_LONG,	 /* decoded key over HTTP_KEY_MAX: 414 */
	HTTP_E_VERSION,		 /* not HTTP/1.0 or HTTP/1.1: 505 */
	HTTP_E_HEADER_NAME,	 /* a header name that is not a token */
	HTTP_E_CL,		 /* invalid or repeated Content-Length */
	HTTP_E_TE,		 /* Transfer-Encoding other than "chunked" */
	HTTP_E_CL_TE,		 /* both Content-Length and Transfer-Encoding */
	HTTP_E_DUP_HEADER,	 /* Host or a framing header given twice */
	HTTP_E_NO_HOST,		 /* HTTP/1.1 without Host */
	HTTP_E_CHUNK_SIZE,	 /* invalid chunk size or chunk framing */
	HTTP_E_CHUNK_TOO_BIG,	 /* chunk size over HTTP_CHUNK_MAX: 413 */
	HTTP_E_CHUNK_EXT,  /* a chunk extension not in RFC 9112's grammar */
	HTTP_E_CHUNK_CRLF, /* chunk data not followed by CRLF */
	HTTP_E_TRAILER,	   /* a malformed or over-long trailer section */
	HTTP_E_TE_HTTP10,  /* Transfer-Encoding in an HTTP/1.0 request */
	HTTP_E_SYNTAX,	   /* anything else http-parser refused */
	HTTP_E_COUNT,
};

/* What http_parse_head() found. */
enum http_parse_result {
	HTTP_PARSE_OK = 0, /* a request head in *req */
	HTTP_PARSE_MORE,   /* no whole head yet: read more */
	HTTP_PARSE_BAD,	   /* req->err: reply http_err_status() + close */
};

/* A header value: points into the caller's buffer, OWS trimmed. */
struct http_str {
	const char *p; /* NULL: header absent */
	size_t len;
};

struct http_req {
	enum http_method_id method;
	struct http_str method_tok;  /* the method as sent */
	unsigned short major, minor; /* HTTP version: 1.0 or 1.1 */
	bool keep_alive; /* after this request, per version/Connection */
	bool has_length; /* Content-Length given: @length body bytes */
	uint64_t length;
	bool chunked;		/* Transfer-Encoding: chunked */
	bool expect_continue;	/* Expect: 100-continue */
	bool expect_other;	/* an Expect other than 100-continue: 417 */
	struct http_str target; /* the raw request target */
	struct http_str query;	/* after '?', raw (not decoded) */
	struct http_str origin_form; /* the target from its path's '/' on:
				      * path and query, raw */
	struct http_str fields;	     /* the header field lines, each with its
				 * CRLF (none: len 0) */
	struct http_str host, range, if_none_match, if_match, if_modified_since,
		if_unmodified_since, if_range, authorization, content_type,
		cache_control, pragma,	    /* these two: the first line */
		x_forwarded_for, forwarded; /* these: the last line */
	enum http_err err;		    /* HTTP_PARSE_BAD: why */
	size_t klen;
	char key[HTTP_KEY_MAX + 1]; /* the path after '/', decoded, NUL
				     * terminated, no NUL inside */
};

/*
 * Parse one request head at the start of @buf (@len bytes, not NUL
 * terminated), as far as it has arrived.  HTTP_PARSE_OK: *@consumed is
 * the length of the head (with any empty lines before it and the final
 * CRLF); the body, if any (req->has_length or req->chunked), follows and
 * is the caller's to read; the next request starts after it.
 * HTTP_PARSE_MORE: call again with the same bytes and more (at EOF this
 * is a truncated request).  HTTP_PARSE_BAD: req->err says why; *@consumed
 * is 0 and the connection must close after the error reply.
 */
enum http_parse_result http_parse_head(const char *buf, size_t len,
				       struct http_req *req, size_t *consumed);

/* The status to reply for @e: 400, 413, 414, 431, 501 or 505. */
int http_err_status(enum http_err e);

/* A lower-case reason for @e, for logs and error bodies. */
const char *http_strerror(enum http_err e);

/*
 * Percent-decode @len bytes of @in into @out (room for @max bytes plus a
 * NUL).  Returns the decoded length, or -HTTP_E_ESCAPE, -HTTP_E_ESCAPE_NUL,
 * -HTTP_E_KEY_TOO_LONG.  '+' is not a space (paths, not forms).
 */
long http_pct_decode(const char *in, size_t len, char *out, size_t max);

/* An incremental chunked-body decoder; init with http_chunked_init(). */
struct http_chunked {
	http_parser hp;
	/* the strict framing scanner, ahead of http-parser */
	unsigned state;
	uint64_t left;	 /* in a size line: the size; in data: to go */
	size_t line;	 /* bytes of this size line / trailer section */
	unsigned fields; /* trailer fields */
	char *out;	 /* while feeding: where body bytes go */
	size_t out_len;
	bool done; /* last chunk and trailers seen */
	enum http_err err;
};

void http_chunked_init(struct http_chunked *c);

/*
 * Feed @len bytes of a chunked body.  The decoded body bytes are written
 * to @out (room for @len bytes; @out may be @in: decoding only shrinks)
 * and their count is in *@out_len.  *@consumed is how many input bytes
 * were used: all of them unless the body ended (c->done), when the rest
 * belongs to the next request.  Returns 0, or -1 with c->err set (reply
 * 400/413 and close).  Trailer fields are parsed and dropped.
 */
int http_chunked_feed(struct http_chunked *c, const char *in, size_t len,
		      char *out, size_t *out_len, size_t *consumed);

#endif
