/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the HTTP request-head parser and chunked decoder
 * (netd/http_proto.c): good heads with every field, heads arriving byte
 * by byte, pipelining, percent-decoding, and the hostile and malformed
 * heads and chunk streams each with the error the server replies with.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "http_proto.h"

static struct http_req req;
static size_t used;

static enum http_parse_result P(const char *head)
{
	used = 12345;
	return http_parse_head(head, strlen(head), &req, &used);
}

/* @head must be refused with @err */
static void bad(const char *head, enum http_err err)
{
	enum http_parse_result r = P(head);

	if (r != HTTP_PARSE_BAD || req.err != err)
		fail_msg("'%s': result %d err '%s', want '%s'", head, r,
			 http_strerror(req.err), http_strerror(err));
	assert_int_equal(used, 0);
}

static void assert_str(struct http_str s, const char *want)
{
	assert_non_null(s.p);
	assert_int_equal(s.len, strlen(want));
	assert_memory_equal(s.p, want, s.len);
}

static const char full[] =
	"PUT /dir/a%2Fb%25c?x=1&y HTTP/1.1\r\n"
	"Host: goblin:11211\r\n"
	"Content-Length:  1234 \r\n"
	"Expect: 100-continue\r\n"
	"Range: bytes=0-99\r\n"
	"If-None-Match: \"abc\"\r\n"
	"If-Match: *\r\n"
	"If-Modified-Since: Sun, 06 Nov 1994 08:49:37 GMT\r\n"
	"If-Unmodified-Since: Mon, 07 Nov 1994 08:49:37 GMT\r\n"
	"If-Range: \"xyz\"\r\n"
	"Authorization: Bearer t0k3n\r\n"
	"X-Other: ignored\r\n"
	"\r\n";

static void check_full(void)
{
	assert_int_equal(req.method, HTTP_M_PUT);
	assert_int_equal(req.major, 1);
	assert_int_equal(req.minor, 1);
	assert_true(req.keep_alive);
	assert_true(req.has_length);
	assert_int_equal(req.length, 1234);
	assert_false(req.chunked);
	assert_true(req.expect_continue);
	assert_false(req.expect_other);
	assert_int_equal(req.klen, 9);
	assert_string_equal(req.key, "dir/a/b%c");
	assert_str(req.query, "x=1&y");
	assert_str(req.host, "goblin:11211");
	assert_str(req.range, "bytes=0-99");
	assert_str(req.if_none_match, "\"abc\"");
	assert_str(req.if_match, "*");
	assert_str(req.if_modified_since, "Sun, 06 Nov 1994 08:49:37 GMT");
	assert_str(req.if_unmodified_since, "Mon, 07 Nov 1994 08:49:37 GMT");
	assert_str(req.if_range, "\"xyz\"");
	assert_str(req.authorization, "Bearer t0k3n");
}

static void test_full_head(void **state)
{
	(void)state;
	assert_int_equal(P(full), HTTP_PARSE_OK);
	assert_int_equal(used, strlen(full));
	check_full();
}

/* every prefix is "more", the whole head parses the same */
static void test_split_every_byte(void **state)
{
	size_t len = strlen(full);
	char *buf = malloc(len);

	(void)state;
	assert_non_null(buf);
	for (size_t cut = 0; cut < len; cut++) {
		memcpy(buf, full,
		       cut); /* exactly cut bytes: ASan sees overreads */
		used = 1;
		assert_int_equal(http_parse_head(buf, cut, &req, &used),
				 HTTP_PARSE_MORE);
		assert_int_equal(used, 0);
	}
	memcpy(buf, full, len);
	assert_int_equal(http_parse_head(buf, len, &req, &used), HTTP_PARSE_OK);
	assert_int_equal(used, len);
	check_full();
	free(buf);
}

static void test_methods_versions(void **state)
{
	static const struct {
		const char *m;
		enum http_method_id id;
	} ms[] = {
		{ "GET", HTTP_M_GET },	   { "HEAD", HTTP_M_HEAD },
		{ "PUT", HTTP_M_PUT },	   { "DELETE", HTTP_M_DELETE },
		{ "POST", HTTP_M_POST },   { "OPTIONS", HTTP_M_OTHER },
		{ "PATCH", HTTP_M_OTHER },
	};
	char buf[128];

	(void)state;
	for (size_t i = 0; i < sizeof(ms) / sizeof(ms[0]); i++) {
		snprintf(buf, sizeof(buf), "%s /k HTTP/1.1\r\nHost: h\r\n\r\n",
			 ms[i].m);
		assert_int_equal(P(buf), HTTP_PARSE_OK);
		assert_int_equal(req.method, ms[i].id);
		assert_string_equal(req.key, "k");
	}
	/* HTTP/1.0: no Host needed, close by default, keep-alive on ask */
	assert_int_equal(P("GET /a HTTP/1.0\r\n\r\n"), HTTP_PARSE_OK);
	assert_int_equal(req.minor, 0);
	assert_false(req.keep_alive);
	assert_null(req.host.p);
	assert_int_equal(P("GET /a HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n"),
			 HTTP_PARSE_OK);
	assert_true(req.keep_alive);
	assert_int_equal(
		P("GET /a HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n"),
		HTTP_PARSE_OK);
	assert_false(req.keep_alive);
	assert_int_equal(P("GET /a HTTP/1.1\r\nHost: h\r\n\r\n"),
			 HTTP_PARSE_OK);
	assert_true(req.keep_alive);
	assert_false(req.has_length);
	assert_null(req.query.p);
	assert_int_equal(http_err_status(HTTP_E_METHOD_UNKNOWN), 501);
	bad("G(T /a HTTP/1.1\r\nHost: h\r\n\r\n", HTTP_E_METHOD);
	bad("BREW  /a HTTP/1.1\r\nHost: h\r\n\r\n", HTTP_E_SYNTAX);
	bad("GET /a HTTP/2.0\r\nHost: h\r\n\r\n", HTTP_E_VERSION);
	bad("GET /a HTTP/1.2\r\nHost: h\r\n\r\n", HTTP_E_VERSION);
	assert_int_equal(http_err_status(HTTP_E_VERSION), 505);
	bad("GET /a HTTP/1.1\r\n\r\n", HTTP_E_NO_HOST);
	bad("GET /a HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", HTTP_E_DUP_HEADER);
}

/* issue 18: extension methods parse (a mirror forwards them) */
static void test_issue18_extension_methods(void **state)
{
	static const char *const ms[] = { "BREW", "get",      "M-SEARCH",
					  "FOO",  "PROPFIND", "X" };
	char buf[160];

	(void)state;
	for (size_t i = 0; i < sizeof(ms) / sizeof(ms[0]); i++) {
		snprintf(buf, sizeof(buf),
			 "%s /k?a=1 HTTP/1.1\r\nHost: h\r\n"
			 "Content-Length: 3\r\nX-A: b\r\n\r\n",
			 ms[i]);
		assert_int_equal(P(buf), HTTP_PARSE_OK);
		assert_int_equal(req.method, HTTP_M_OTHER);
		assert_int_equal(req.method_tok.len, strlen(ms[i]));
		assert_memory_equal(req.method_tok.p, ms[i], strlen(ms[i]));
		assert_ptr_equal(req.method_tok.p, buf); /* in the buffer */
		assert_string_equal(req.key, "k");
		assert_int_equal(req.origin_form.len, 6);
		assert_memory_equal(req.origin_form.p, "/k?a=1", 6);
		assert_true(req.has_length);
		assert_int_equal(req.length, 3);
		assert_int_equal(req.fields.len,
				 strlen("Host: h\r\nContent-Length: 3\r\n"
					"X-A: b\r\n"));
		assert_memory_equal(req.fields.p, "Host: h\r\n", 9);
		assert_ptr_equal(req.host.p, strstr(buf, "h\r\nContent"));
	}
	/* the smuggling checks hold for them as for the others */
	bad("BREW /a HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n",
	    HTTP_E_CL_TE);
	bad("BREW /a HTTP/1.1\r\n\r\n", HTTP_E_NO_HOST);
	/* the absolute form: the origin form is the path on */
	assert_int_equal(P("GET http://h:1/p/q?x=%41 HTTP/1.1\r\nHost: h\r\n"
			   "\r\n"),
			 HTTP_PARSE_OK);
	assert_int_equal(req.origin_form.len, 10);
	assert_memory_equal(req.origin_form.p, "/p/q?x=%41", 10);
	assert_int_equal(req.method_tok.len, 3);
	assert_int_equal(P("GET / HTTP/1.0\r\n\r\n"), HTTP_PARSE_OK);
	assert_int_equal(req.fields.len, 0);
}

static void test_body_framing(void **state)
{
	(void)state;
	assert_int_equal(P("PUT /k HTTP/1.1\r\nHost: h\r\n"
			   "Transfer-Encoding: chunked\r\n\r\n"),
			 HTTP_PARSE_OK);
	assert_true(req.chunked);
	assert_false(req.has_length);
	assert_int_equal(P("PUT /k HTTP/1.1\r\nHost: h\r\n"
			   "Transfer-Encoding: Chunked\r\n\r\n"),
			 HTTP_PARSE_OK);
	assert_true(req.chunked);
	assert_int_equal(
		P("PUT /k HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n"),
		HTTP_PARSE_OK);
	assert_true(req.has_length);
	assert_int_equal(req.length, 0);
	assert_int_equal(P("PUT /k HTTP/1.1\r\nHost: h\r\n"
			   "Content-Length: 1000000000000000000\r\n\r\n"),
			 HTTP_PARSE_OK);
	assert_true(req.length == UINT64_C(1000000000000000000));
	assert_int_equal(
		P("PUT /k HTTP/1.1\r\nHost: h\r\nExpect: 200-ok\r\n\r\n"),
		HTTP_PARSE_OK);
	assert_true(req.expect_other);
	assert_false(req.expect_continue);
}

static void test_smuggling(void **state)
{
	(void)state;
	bad("PUT /k HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n",
	    HTTP_E_CL_TE);
	bad("PUT /k HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n"
	    "Content-Length: 5\r\n\r\n",
	    HTTP_E_CL_TE);
	bad("PUT /k HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n"
	    "Content-Length: 5\r\n\r\n",
	    HTTP_E_CL);
	bad("PUT /k HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n"
	    "Content-Length: 6\r\n\r\n",
	    HTTP_E_CL);
	bad("PUT /k HTTP/1.1\r\nHost: h\r\nContent-Length: 5, 5\r\n\r\n",
	    HTTP_E_CL);
	bad("PUT /k HTTP/1.1\r\nHost: h\r\nContent-Length: -1\r\n\r\n",
	    HTTP_E_CL);
	bad("PUT /k HTTP/1.1\r\nHost: h\r\nContent-Length: +1\r\n\r\n",
	    HTTP_E_CL);
	bad("PUT /k HTTP/1.1\r\nHost: h\r\nContent-Length:\r\n\r\n", HTTP_E_CL);
	bad("PUT /k HTTP/1.1\r\nHost: h\r\n"
	    "Content-Length: 99999999999999999999999\r\n\r\n",
	    HTTP_E_CL);
	bad("PUT /k HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
	    HTTP_E_TE);
	bad("PUT /k HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked, chunked\r\n\r\n",
	    HTTP_E_TE);
	bad("PUT /k HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: identity\r\n\r\n",
	    HTTP_E_TE);
	bad("PUT /k HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n",
	    HTTP_E_DUP_HEADER);
	bad("PUT /k HTTP/1.1\r\nHost: h\r\nContent-Length : 5\r\n\r\n",
	    HTTP_E_HEADER_NAME);
	bad("PUT /k HTTP/1.1\r\nHost: h\r\nTransfer-Encoding\t: chunked\r\n\r\n",
	    HTTP_E_HEADER_NAME);
	bad("PUT /k HTTP/1.1\r\nHost: h\r\nX-A: 1\r\n chunked\r\n\r\n",
	    HTTP_E_OBS_FOLD);
	bad("PUT /k HTTP/1.1\r\nHost: h\r\nX-A: 1\r\n\tchunked\r\n\r\n",
	    HTTP_E_OBS_FOLD);
	bad("PUT /k HTTP/1.1\r\n Host: h\r\n\r\n", HTTP_E_OBS_FOLD);
	bad("PUT /k HTTP/1.1\r\nHost: h\rX: 1\r\n\r\n", HTTP_E_BARE_CR);
	bad("PUT /k HTTP/1.1\r\nHost: h\r\r\n\r\n", HTTP_E_BARE_CR);
	bad("PUT /k HTTP/1.1\nHost: h\r\n\r\n", HTTP_E_BARE_LF);
	bad("PUT /k HTTP/1.1\r\nHost: h\n\n", HTTP_E_BARE_LF);
	bad("PUT /k HTTP/1.1\r\nHost: h\r\n\r\r\n", HTTP_E_BARE_CR);
	bad("PUT /k HTTP/1.1\r\nHost: h\r\nX: 1\x7f\r\n\r\n",
	    HTTP_E_HEADER_NAME);
	bad(":x / HTTP/1.1\r\nHost: h\r\n\r\n", HTTP_E_METHOD);
	bad("GET  /k HTTP/1.1\r\nHost: h\r\n\r\n", HTTP_E_SYNTAX);
	bad("GET /k\tx HTTP/1.1\r\nHost: h\r\n\r\n", HTTP_E_TARGET);
	bad("GET /k\x80 HTTP/1.1\r\nHost: h\r\n\r\n", HTTP_E_TARGET);
	bad("GET /k#f HTTP/1.1\r\nHost: h\r\n\r\n", HTTP_E_TARGET);
	bad("GET /k  HTTP/1.1\r\nHost: h\r\n\r\n", HTTP_E_SYNTAX);
	bad("GET /k HTTP/1.1 \r\nHost: h\r\n\r\n", HTTP_E_VERSION);
	bad("GET k HTTP/1.1\r\nHost: h\r\n\r\n", HTTP_E_TARGET);
	bad("GET * HTTP/1.1\r\nHost: h\r\n\r\n", HTTP_E_TARGET);
}

/* NUL anywhere in a head is refused, not truncated at */
static void test_nul(void **state)
{
	static const char head[] = "GET /k HTTP/1.1\r\nHost: h\r\n\r\n";

	(void)state;
	for (size_t i = 0; i < sizeof(head) - 3; i++) {
		char buf[sizeof(head)];

		memcpy(buf, head, sizeof(head));
		buf[i] = '\0';
		used = 1;
		assert_int_equal(http_parse_head(buf, sizeof(head) - 1, &req,
						 &used),
				 HTTP_PARSE_BAD);
		/* a NUL for the LF of a CRLF is seen as a bare CR first */
		assert_int_equal(req.err, i && head[i - 1] == '\r' ?
						  HTTP_E_BARE_CR :
						  HTTP_E_NUL);
		assert_int_equal(used, 0);
	}
}

static void test_limits(void **state)
{
	size_t big = HTTP_HEAD_MAX + 100;
	char *buf = malloc(big);
	size_t n;

	(void)state;
	assert_non_null(buf);
	/* a request line of HTTP_LINE_MAX bytes with its CRLF is fine ... */
	n = (size_t)snprintf(buf, big, "GET /k?");
	memset(buf + n, 'a', HTTP_LINE_MAX - n - 11);
	n = HTTP_LINE_MAX - 11;
	n += (size_t)snprintf(buf + n, big - n, " HTTP/1.1\r\nHost: h\r\n\r\n");
	assert_int_equal(http_parse_head(buf, n, &req, &used), HTTP_PARSE_OK);
	assert_int_equal(req.klen, 1);
	assert_int_equal(req.query.len, HTTP_LINE_MAX - 18);
	/* ... one more is 414, with or without the CRLF yet */
	memmove(buf + 6, buf + 5, n - 5);
	n++;
	assert_int_equal(http_parse_head(buf, n, &req, &used), HTTP_PARSE_BAD);
	assert_int_equal(req.err, HTTP_E_LINE_TOO_LONG);
	assert_int_equal(http_err_status(req.err), 414);
	assert_int_equal(http_parse_head(buf, HTTP_LINE_MAX, &req, &used),
			 HTTP_PARSE_BAD);
	assert_int_equal(req.err, HTTP_E_LINE_TOO_LONG);
	assert_int_equal(http_parse_head(buf, HTTP_LINE_MAX - 1, &req, &used),
			 HTTP_PARSE_MORE);
	/* a head with no end within HTTP_HEAD_MAX is 431 */
	n = (size_t)snprintf(buf, big, "GET /k HTTP/1.1\r\nHost: h\r\nX: ");
	memset(buf + n, 'v', big - n);
	assert_int_equal(http_parse_head(buf, HTTP_HEAD_MAX - 1, &req, &used),
			 HTTP_PARSE_MORE);
	assert_int_equal(http_parse_head(buf, HTTP_HEAD_MAX, &req, &used),
			 HTTP_PARSE_BAD);
	assert_int_equal(req.err, HTTP_E_HEAD_TOO_LONG);
	assert_int_equal(http_err_status(req.err), 431);
	assert_int_equal(http_parse_head(buf, big, &req, &used),
			 HTTP_PARSE_BAD);
	assert_int_equal(req.err, HTTP_E_HEAD_TOO_LONG);
	/* endless empty lines before a request line too */
	for (size_t i = 0; i + 1 < big; i += 2)
		memcpy(buf + i, "\r\n", 2);
	assert_int_equal(http_parse_head(buf, big - 1, &req, &used),
			 HTTP_PARSE_BAD);
	assert_int_equal(req.err, HTTP_E_HEAD_TOO_LONG);
	/* too many header fields */
	n = (size_t)snprintf(buf, big, "GET /k HTTP/1.1\r\nHost: h\r\n");
	for (int i = 0; i < HTTP_HEADERS_MAX; i++)
		n += (size_t)snprintf(buf + n, big - n, "X-%d: v\r\n", i);
	n += (size_t)snprintf(buf + n, big - n, "\r\n");
	assert_int_equal(http_parse_head(buf, n, &req, &used), HTTP_PARSE_BAD);
	assert_int_equal(req.err, HTTP_E_TOO_MANY_HEADERS);
	/* a decoded key over HTTP_KEY_MAX */
	n = (size_t)snprintf(buf, big, "GET /");
	memset(buf + n, 'k', HTTP_KEY_MAX + 1);
	n += HTTP_KEY_MAX + 1;
	n += (size_t)snprintf(buf + n, big - n, " HTTP/1.1\r\nHost: h\r\n\r\n");
	assert_int_equal(http_parse_head(buf, n, &req, &used), HTTP_PARSE_BAD);
	assert_int_equal(req.err, HTTP_E_KEY_TOO_LONG);
	free(buf);
}

static void test_truncated(void **state)
{
	static const char *const cut[] = {
		"",
		"GET",
		"GET /k HTTP/1.1\r",
		"GET /k HTTP/1.1\r\nHost: h\r\n",
		"GET /k HTTP/1.1\r\nHost: h\r\n\r",
		"\r\n\r\n\r\n",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cut) / sizeof(cut[0]); i++) {
		assert_int_equal(P(cut[i]), HTTP_PARSE_MORE);
		assert_int_equal(used, 0);
	}
}

static void test_pipelined(void **state)
{
	static const char stream[] =
		"\r\nGET /one HTTP/1.1\r\nHost: h\r\n\r\n"
		"PUT /two HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello"
		"DELETE /three?x HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n"
		"GET /four HTTP/1.1\r\n";
	const char *p = stream, *end = stream + sizeof(stream) - 1;

	(void)state;
	assert_int_equal(http_parse_head(p, (size_t)(end - p), &req, &used),
			 HTTP_PARSE_OK);
	assert_int_equal(used,
			 strlen("\r\nGET /one HTTP/1.1\r\nHost: h\r\n\r\n"));
	assert_string_equal(req.key, "one");
	p += used;
	assert_int_equal(http_parse_head(p, (size_t)(end - p), &req, &used),
			 HTTP_PARSE_OK);
	assert_string_equal(req.key, "two");
	assert_int_equal(req.length, 5);
	p += used;
	assert_memory_equal(p, "hello", 5);
	p += req.length;
	assert_int_equal(http_parse_head(p, (size_t)(end - p), &req, &used),
			 HTTP_PARSE_OK);
	assert_int_equal(req.method, HTTP_M_DELETE);
	assert_string_equal(req.key, "three");
	assert_str(req.query, "x");
	assert_false(req.keep_alive);
	p += used;
	assert_int_equal(http_parse_head(p, (size_t)(end - p), &req, &used),
			 HTTP_PARSE_MORE);
}

static void test_pct_decode(void **state)
{
	char out[16];

	(void)state;
	assert_int_equal(http_pct_decode("a%41%7e%7E+b", 12, out, 15), 6);
	assert_string_equal(out, "aA~~+b");
	assert_int_equal(http_pct_decode("%25%32%35", 9, out, 15), 3);
	assert_string_equal(out, "%25"); /* decoded once, not twice */
	assert_int_equal(http_pct_decode("%ff%0a", 6, out, 15), 2);
	assert_memory_equal(out, "\xff\n", 3);
	assert_int_equal(http_pct_decode("", 0, out, 15), 0);
	assert_int_equal(http_pct_decode("a%00", 4, out, 15),
			 -HTTP_E_ESCAPE_NUL);
	assert_int_equal(http_pct_decode("a%0", 3, out, 15), -HTTP_E_ESCAPE);
	assert_int_equal(http_pct_decode("a%", 2, out, 15), -HTTP_E_ESCAPE);
	assert_int_equal(http_pct_decode("%g0", 3, out, 15), -HTTP_E_ESCAPE);
	assert_int_equal(http_pct_decode("%0g", 3, out, 15), -HTTP_E_ESCAPE);
	assert_int_equal(http_pct_decode("abcd", 4, out, 3),
			 -HTTP_E_KEY_TOO_LONG);
	assert_int_equal(http_pct_decode("%41%41%41", 9, out, 3), 3);
	/* in a head: the path is decoded, the query is not */
	assert_int_equal(P("GET /a%20b/%2F?q=%20 HTTP/1.1\r\nHost: h\r\n\r\n"),
			 HTTP_PARSE_OK);
	assert_string_equal(req.key, "a b//");
	assert_str(req.query, "q=%20");
	assert_str(req.target, "/a%20b/%2F?q=%20");
	assert_int_equal(P("GET /?a HTTP/1.1\r\nHost: h\r\n\r\n"),
			 HTTP_PARSE_OK);
	assert_int_equal(req.klen, 0);
	assert_int_equal(
		P("GET http://h:80/x%2By?z HTTP/1.1\r\nHost: h\r\n\r\n"),
		HTTP_PARSE_OK);
	assert_string_equal(req.key, "x+y");
	assert_str(req.query, "z");
	bad("GET /a%00b HTTP/1.1\r\nHost: h\r\n\r\n", HTTP_E_ESCAPE_NUL);
	bad("GET /a%zzb HTTP/1.1\r\nHost: h\r\n\r\n", HTTP_E_ESCAPE);
	bad("GET /a% HTTP/1.1\r\nHost: h\r\n\r\n", HTTP_E_ESCAPE);
	assert_int_equal(http_err_status(HTTP_E_ESCAPE), 400);
}

/* decode @in fed in pieces of @step bytes; returns the consumed total */
static size_t chunked(const char *in, size_t len, size_t step, char *out,
		      size_t *out_len, int *rc, struct http_chunked *c)
{
	size_t pos = 0;

	http_chunked_init(c);
	*out_len = 0;
	*rc = 0;
	while (pos < len && !c->done) {
		size_t n = len - pos < step ? len - pos : step, ol, cons;

		*rc = http_chunked_feed(c, in + pos, n, out + *out_len, &ol,
					&cons);
		*out_len += ol;
		pos += cons;
		if (*rc)
			break;
		assert_true(cons == n || c->done);
	}
	return pos;
}

static void test_chunked(void **state)
{
	static const char body[] =
		"5\r\nhello\r\n1;ext=1\r\n \r\n10\r\n0123456789abcdef\r\n"
		"0\r\nTrailer: x\r\n\r\nNEXT";
	size_t len = sizeof(body) - 1, ol;
	struct http_chunked c;
	char out[64], copy[sizeof(body)];
	int rc;

	(void)state;
	for (size_t step = 1; step <= len; step++) {
		size_t used_in = chunked(body, len, step, out, &ol, &rc, &c);

		assert_int_equal(rc, 0);
		assert_true(c.done);
		assert_int_equal(used_in, len - 4);
		assert_int_equal(ol, 22);
		assert_memory_equal(out, "hello 0123456789abcdef", 22);
	}
	/* in place: out == in */
	memcpy(copy, body, sizeof(body));
	http_chunked_init(&c);
	assert_int_equal(http_chunked_feed(&c, copy, len, copy, &ol, &used), 0);
	assert_int_equal(ol, 22);
	assert_memory_equal(copy, "hello 0123456789abcdef", 22);
	/* after the end, nothing more is taken */
	assert_int_equal(http_chunked_feed(&c, "5\r\n", 3, out, &ol, &used), 0);
	assert_int_equal(used, 0);
	assert_int_equal(ol, 0);
	/* unfinished: all consumed, not done */
	chunked("5\r\nhel", 6, 2, out, &ol, &rc, &c);
	assert_int_equal(rc, 0);
	assert_false(c.done);
	assert_int_equal(ol, 3);
}

static void chunk_bad(const char *in, enum http_err err)
{
	struct http_chunked c;
	char out[64];
	size_t ol;
	int rc;

	chunked(in, strlen(in), 1, out, &ol, &rc, &c);
	if (rc != -1 || c.err != err)
		fail_msg("chunked '%s': rc %d err '%s'", in, rc,
			 http_strerror(c.err));
	/* and stays failed */
	assert_int_equal(http_chunked_feed(&c, "0\r\n\r\n", 5, out, &ol, &used),
			 -1);
}

static void test_chunked_bad(void **state)
{
	(void)state;
	chunk_bad("x\r\n", HTTP_E_CHUNK_SIZE);
	chunk_bad("-1\r\n", HTTP_E_CHUNK_SIZE);
	chunk_bad("\r\n", HTTP_E_CHUNK_SIZE);
	chunk_bad("5\r\nhelloX\r\n", HTTP_E_CHUNK_CRLF);
	chunk_bad("5\r\nhello\r\nzz\r\n", HTTP_E_CHUNK_SIZE);
	chunk_bad("ffffffffffffffffff\r\n", HTTP_E_CHUNK_SIZE);
	chunk_bad("10000000001\r\n", HTTP_E_CHUNK_TOO_BIG);
	assert_int_equal(http_err_status(HTTP_E_CHUNK_TOO_BIG), 413);
	chunk_bad("0\r\nBad Trailer: x\r\n\r\n", HTTP_E_TRAILER);
}

/* @len bytes of @in are a whole chunked body: decoded to @want, fed
 * whole and byte by byte, and nothing after it is taken */
static void chunk_good(const char *in, size_t len, const char *want)
{
	struct http_chunked c;
	char out[256];
	size_t ol;
	int rc;

	for (size_t step = 1; step <= len; step += len - 1 ? len - 1 : 1) {
		size_t n = chunked(in, len, step, out, &ol, &rc, &c);

		if (rc || !c.done)
			fail_msg("chunked '%s' step %zu: rc %d err '%s'", in,
				 step, rc, http_strerror(c.err));
		assert_int_equal(n, len - 3); /* "GET" after it */
		assert_int_equal(ol, strlen(want));
		assert_memory_equal(out, want, ol);
	}
}

/* @len bytes of @in are refused with @err, whole and byte by byte */
static void chunk_bad_n(const char *in, size_t len, enum http_err err)
{
	struct http_chunked c;
	size_t ol, steps[] = { 1, len };
	int rc;
	static char out[65536];

	for (size_t i = 0; i < 2; i++) {
		chunked(in, len, steps[i], out, &ol, &rc, &c);
		if (rc != -1 || c.err != err)
			fail_msg("chunked '%.60s' step %zu: rc %d done %d err "
				 "'%s', want '%s'",
				 in, steps[i], rc, c.done, http_strerror(c.err),
				 http_strerror(err));
	}
}

#define CHUNK_GOOD(s, want) chunk_good(s "GET", sizeof(s "GET") - 1, want)
#define CHUNK_BAD(s, err)   chunk_bad_n(s, sizeof(s) - 1, err)

/*
 * issue 16: the chunked framing is strict.  Debian's http-parser, built
 * non-strict, took any two bytes for the CRLF after chunk data and after
 * a size line: "3\r\nabcXX0\r\n\r\n" ended the body and what came after
 * it was served as a request of its own (request smuggling).  Every
 * shape of RFC 9112 sec. 7.1 / 11.2 a front proxy might frame otherwise
 * is refused here.
 */
static void test_issue16_chunk_framing(void **state)
{
	static char big[HTTP_HEAD_MAX + 64];
	size_t n;

	(void)state;
	/* what is well-formed still passes, whatever the spacing allows */
	CHUNK_GOOD("3\r\nabc\r\n0\r\n\r\n", "abc");
	CHUNK_GOOD("A\r\n0123456789\r\n0\r\n\r\n", "0123456789");
	CHUNK_GOOD("000000000000000000000003\r\nabc\r\n0000\r\n\r\n", "abc");
	CHUNK_GOOD("3;a=b;c; d = \"q\\\"; x\"\r\nabc\r\n0;z\r\n\r\n", "abc");
	CHUNK_GOOD("3 ;a\r\nabc\r\n0\r\nT: 1\r\nU:\r\nV:\t\x80 w \r\n\r\n",
		   "abc");
	/* the CRLF after chunk data: exactly CR LF */
	CHUNK_BAD("3\r\nabcXX0\r\n\r\n", HTTP_E_CHUNK_CRLF);
	CHUNK_BAD("3\r\nabcX\n0\r\n\r\n", HTTP_E_CHUNK_CRLF);
	CHUNK_BAD("3\r\nabc\rX0\r\n\r\n", HTTP_E_CHUNK_CRLF);
	CHUNK_BAD("3\r\nabc\n0\r\n\r\n", HTTP_E_CHUNK_CRLF);
	CHUNK_BAD("3\r\nabc0\r\n\r\n", HTTP_E_CHUNK_CRLF);
	CHUNK_BAD("3\r\nabcd\r\n0\r\n\r\n", HTTP_E_CHUNK_CRLF);
	/* the CRLF after a size line */
	CHUNK_BAD("3\nabc\r\n0\r\n\r\n", HTTP_E_CHUNK_SIZE);
	CHUNK_BAD("3\rXabc\r\n0\r\n\r\n", HTTP_E_CHUNK_SIZE);
	CHUNK_BAD("3\r\r\nabc\r\n0\r\n\r\n", HTTP_E_CHUNK_SIZE);
	CHUNK_BAD("0\n\r\n", HTTP_E_CHUNK_SIZE);
	CHUNK_BAD("0\rX\r\n", HTTP_E_CHUNK_SIZE);
	/* chunk sizes: 1*HEXDIG, nothing else, no overflow */
	CHUNK_BAD("0x3\r\nabc\r\n0\r\n\r\n", HTTP_E_CHUNK_SIZE);
	CHUNK_BAD(" 3\r\nabc\r\n0\r\n\r\n", HTTP_E_CHUNK_SIZE);
	CHUNK_BAD("+3\r\nabc\r\n0\r\n\r\n", HTTP_E_CHUNK_SIZE);
	CHUNK_BAD("-3\r\nabc\r\n0\r\n\r\n", HTTP_E_CHUNK_SIZE);
	CHUNK_BAD("3g\r\nabc\r\n0\r\n\r\n", HTTP_E_CHUNK_SIZE);
	CHUNK_BAD("3,4\r\nabc\r\n0\r\n\r\n", HTTP_E_CHUNK_SIZE);
	CHUNK_BAD("10000000000000000\r\n", HTTP_E_CHUNK_SIZE); /* 2^64 */
	CHUNK_BAD("10000000000000003\r\nabc\r\n", HTTP_E_CHUNK_SIZE);
	CHUNK_BAD("fffffffffffffffff\r\n", HTTP_E_CHUNK_SIZE);
	CHUNK_BAD("10000000001\r\n", HTTP_E_CHUNK_TOO_BIG);
	CHUNK_BAD("\r\n", HTTP_E_CHUNK_SIZE);
	CHUNK_BAD(";a\r\n", HTTP_E_CHUNK_SIZE);
	/* chunk extensions: RFC 9112's grammar, no bare CR/LF, bounded */
	CHUNK_BAD("3 \r\nabc\r\n0\r\n\r\n", HTTP_E_CHUNK_EXT);
	CHUNK_BAD("3;\r\nabc\r\n0\r\n\r\n", HTTP_E_CHUNK_EXT);
	CHUNK_BAD("3;a\nabc\r\n0\r\n\r\n", HTTP_E_CHUNK_EXT);
	CHUNK_BAD("3;a=\r\nabc\r\n0\r\n\r\n", HTTP_E_CHUNK_EXT);
	CHUNK_BAD("3;a b\r\nabc\r\n0\r\n\r\n", HTTP_E_CHUNK_EXT);
	CHUNK_BAD("3;a=b c\r\nabc\r\n0\r\n\r\n", HTTP_E_CHUNK_EXT);
	CHUNK_BAD("3;a=\x01\r\nabc\r\n0\r\n\r\n", HTTP_E_CHUNK_EXT);
	CHUNK_BAD("3;a=\"x\r\nabc\r\n0\r\n\r\n", HTTP_E_CHUNK_EXT);
	CHUNK_BAD("3;a=\"x\ny\"\r\nabc\r\n0\r\n\r\n", HTTP_E_CHUNK_EXT);
	CHUNK_BAD("3;a=\"\\\n\"\r\nabc\r\n0\r\n\r\n", HTTP_E_CHUNK_EXT);
	CHUNK_BAD("3;a=\"x\"y\r\nabc\r\n0\r\n\r\n", HTTP_E_CHUNK_EXT);
	CHUNK_BAD("0;a\n\r\n", HTTP_E_CHUNK_EXT);
	n = (size_t)snprintf(big, sizeof(big), "3;a=");
	memset(big + n, 'x', HTTP_CHUNK_LINE_MAX);
	chunk_bad_n(big, n + HTTP_CHUNK_LINE_MAX, HTTP_E_CHUNK_EXT);
	/* BWS after the size: SP only (http-parser, the decoder, takes no HT) */
	CHUNK_BAD("3\t;a\r\nabc\r\n0\r\n\r\n", HTTP_E_CHUNK_SIZE);
	CHUNK_BAD("3\t\r\nabc\r\n0\r\n\r\n", HTTP_E_CHUNK_SIZE);
	/* trailers: field lines only, CRLF only, bounded */
	CHUNK_BAD("0\r\n\n", HTTP_E_TRAILER);
	CHUNK_BAD("0\r\n\r\r", HTTP_E_TRAILER);
	CHUNK_BAD("0\r\n\rX", HTTP_E_TRAILER);
	CHUNK_BAD("0\r\nX: a\r\n b\r\n\r\n", HTTP_E_TRAILER);
	CHUNK_BAD("0\r\nX: a\r\n\tb\r\n\r\n", HTTP_E_TRAILER);
	CHUNK_BAD("0\r\nX : a\r\n\r\n", HTTP_E_TRAILER);
	CHUNK_BAD("0\r\nX\t: a\r\n\r\n", HTTP_E_TRAILER);
	CHUNK_BAD("0\r\n: a\r\n\r\n", HTTP_E_TRAILER);
	CHUNK_BAD("0\r\nX\r\n\r\n", HTTP_E_TRAILER);
	CHUNK_BAD("0\r\nX: a\nY: b\r\n\r\n", HTTP_E_TRAILER);
	CHUNK_BAD("0\r\nX: a\rY: b\r\n\r\n", HTTP_E_TRAILER);
	CHUNK_BAD("0\r\nX: a\x01\r\n\r\n", HTTP_E_TRAILER);
	CHUNK_BAD("0\r\nX: a\x7f\r\n\r\n", HTTP_E_TRAILER);
	CHUNK_BAD("0\r\nGET /_goblin/stats HTTP/1.1\r\nHost: a\r\n\r\n",
		  HTTP_E_TRAILER);
	chunk_bad_n("0\r\nX: a\0\r\n\r\n", 12, HTTP_E_TRAILER);
	n = (size_t)snprintf(big, sizeof(big), "0\r\n");
	for (int i = 0; i <= HTTP_HEADERS_MAX; i++)
		n += (size_t)snprintf(big + n, sizeof(big) - n, "T%d: 1\r\n",
				      i);
	n += (size_t)snprintf(big + n, sizeof(big) - n, "\r\n");
	chunk_bad_n(big, n, HTTP_E_TRAILER);
	n = (size_t)snprintf(big, sizeof(big), "0\r\nT: ");
	memset(big + n, 'x', HTTP_HEAD_MAX);
	chunk_bad_n(big, n + HTTP_HEAD_MAX, HTTP_E_TRAILER);
	assert_int_equal(http_err_status(HTTP_E_CHUNK_CRLF), 400);
	assert_int_equal(http_err_status(HTTP_E_CHUNK_EXT), 400);
	assert_int_equal(http_err_status(HTTP_E_TRAILER), 400);
}

/* issue 16: the head shapes of RFC 9112 sec. 6.1, 6.3 and 11.2 */
static void test_issue16_head_framing(void **state)
{
	(void)state;
	/* Transfer-Encoding in HTTP/1.0: the framing cannot be trusted */
	bad("PUT /k HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n",
	    HTTP_E_TE_HTTP10);
	bad("PUT /k HTTP/1.0\r\nHost: h\r\nTransfer-Encoding: chunked\r\n"
	    "Connection: keep-alive\r\n\r\n",
	    HTTP_E_TE_HTTP10);
	assert_int_equal(http_err_status(HTTP_E_TE_HTTP10), 400);
	/* chunked not the final (only) coding */
	bad("PUT /k HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked, gzip\r\n\r\n",
	    HTTP_E_TE);
	bad("PUT /k HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked;q=1\r\n\r\n",
	    HTTP_E_TE);
	bad("PUT /k HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: xchunked\r\n\r\n",
	    HTTP_E_TE);
	bad("PUT /k HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: \"chunked\"\r\n\r\n",
	    HTTP_E_TE);
	bad("PUT /k HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: \x0b"
	    "chunked\r\n\r\n",
	    HTTP_E_TE);
	bad("PUT /k HTTP/1.1\r\nHost: h\r\nTransfer-Encoding:\r\n\r\n",
	    HTTP_E_TE);
	bad("PUT /k HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n"
	    "Transfer-Encoding: identity\r\n\r\n",
	    HTTP_E_DUP_HEADER);
	/* obs-fold in Transfer-Encoding */
	bad("PUT /k HTTP/1.1\r\nHost: h\r\nTransfer-Encoding:\r\n chunked\r\n\r\n",
	    HTTP_E_OBS_FOLD);
	bad("PUT /k HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: identity\r\n"
	    "\tchunked\r\n\r\n",
	    HTTP_E_OBS_FOLD);
	/* whitespace before the colon, or in a name */
	bad("PUT /k HTTP/1.1\r\nHost: h\r\nTransfer-Encoding : chunked\r\n\r\n",
	    HTTP_E_HEADER_NAME);
	bad("PUT /k HTTP/1.1\r\nHost: h\r\n Transfer-Encoding: chunked\r\n\r\n",
	    HTTP_E_OBS_FOLD);
	bad("PUT /k HTTP/1.1\r\nHost : h\r\n\r\n", HTTP_E_HEADER_NAME);
	/* CL and TE together, in either order, in 1.0 too */
	bad("PUT /k HTTP/1.0\r\nContent-Length: 3\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n",
	    HTTP_E_CL_TE);
	/* conflicting, repeated and malformed lengths */
	bad("PUT /k HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n"
	    "content-length: 3\r\n\r\n",
	    HTTP_E_CL);
	bad("PUT /k HTTP/1.1\r\nHost: h\r\nContent-Length: 3,4\r\n\r\n",
	    HTTP_E_CL);
	bad("PUT /k HTTP/1.1\r\nHost: h\r\nContent-Length: 0x3\r\n\r\n",
	    HTTP_E_CL);
	bad("PUT /k HTTP/1.1\r\nHost: h\r\nContent-Length: 3 4\r\n\r\n",
	    HTTP_E_CL);
	bad("PUT /k HTTP/1.1\r\nHost: h\r\n"
	    "Content-Length: 18446744073709551616\r\n\r\n",
	    HTTP_E_CL);
	/* bare LF ending a framing header */
	bad("PUT /k HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\n\r\n",
	    HTTP_E_BARE_LF);
}

/* issue 16: the write gate reads the last X-Forwarded-For line: the one
 * the nearest proxy appended to */
static void test_forwarded(void **state)
{
	(void)state;
	assert_int_equal(P("GET /k HTTP/1.1\r\nHost: h\r\n\r\n"),
			 HTTP_PARSE_OK);
	assert_null(req.x_forwarded_for.p);
	assert_null(req.forwarded.p);
	assert_int_equal(P("GET /k HTTP/1.1\r\nHost: h\r\n"
			   "X-Forwarded-For: 127.0.0.1\r\n"
			   "x-forwarded-for:  10.0.0.1, 192.0.2.7 \r\n"
			   "Forwarded: for=a\r\nForwarded: for=b\r\n\r\n"),
			 HTTP_PARSE_OK);
	assert_str(req.x_forwarded_for, "10.0.0.1, 192.0.2.7");
	assert_str(req.forwarded, "for=b");
}

static void test_strerror(void **state)
{
	(void)state;
	for (int e = 0; e < HTTP_E_COUNT; e++) {
		assert_non_null(http_strerror((enum http_err)e));
		assert_true(strlen(http_strerror((enum http_err)e)) > 0);
	}
	assert_string_equal(http_strerror(HTTP_E_COUNT), "unknown error");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full_head),
		cmocka_unit_test(test_split_every_byte),
		cmocka_unit_test(test_methods_versions),
		cmocka_unit_test(test_issue18_extension_methods),
		cmocka_unit_test(test_body_framing),
		cmocka_unit_test(test_smuggling),
		cmocka_unit_test(test_nul),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_pipelined),
		cmocka_unit_test(test_pct_decode),
		cmocka_unit_test(test_chunked),
		cmocka_unit_test(test_chunked_bad),
		cmocka_unit_test(test_issue16_chunk_framing),
		cmocka_unit_test(test_issue16_head_framing),
		cmocka_unit_test(test_strerror),
		cmocka_unit_test(test_forwarded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
