/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of goblinctl bench's HTTP response parser and body framer
 * (cli/http_client.c): well-formed, truncated at every byte, and hostile
 * responses.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "http_client.h"

static struct httpc_resp r;
static size_t used;

static int H(const char *s)
{
	used = 0;
	return httpc_parse_head(s, strlen(s), false, &r, &used);
}

/*
 * Run the body framer over @s fed @step bytes at a time (as a socket
 * would), the payload into @out; returns 0 when done, 1 when it wants
 * more, or the error.  *@rest: bytes left after the body.
 */
static int body(const struct httpc_resp *resp, const char *s, size_t step,
		char *out, size_t *outlen, size_t *rest)
{
	struct httpc_body b;
	size_t len = strlen(s), pos = 0, avail = 0;

	httpc_body_init(&b, resp);
	*outlen = 0;
	while (!b.done) {
		size_t c, off, dl;
		int rc;

		if (pos == avail) {
			if (avail == len)
				break;
			avail = avail + step < len ? avail + step : len;
		}
		rc = httpc_body_take(&b, s + pos, avail - pos, &c, &off, &dl);
		if (rc)
			return rc;
		assert_true(off + dl <= c);
		memcpy(out + *outlen, s + pos + off, dl);
		*outlen += dl;
		pos += c;
	}
	*rest = len - pos;
	return b.done ? 0 : 1;
}

static void test_status_and_length(void **state)
{
	const char *s = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n"
			"Server: x\r\n\r\nhello";

	(void)state;
	assert_int_equal(H(s), 0);
	assert_int_equal(r.status, 200);
	assert_int_equal(r.minor, 1);
	assert_int_equal(r.framing, HTTPC_BODY_LENGTH);
	assert_int_equal(r.length, 5);
	assert_false(r.close);
	assert_int_equal(used, strlen(s) - 5);
	/* bare LF lines, no reason phrase, case-insensitive names */
	assert_int_equal(H("HTTP/1.1 404\ncontent-LENGTH:0\n\n"), 0);
	assert_int_equal(r.status, 404);
	assert_int_equal(r.length, 0);
	assert_int_equal(used, strlen("HTTP/1.1 404\ncontent-LENGTH:0\n\n"));
	/* the same length twice is one length */
	assert_int_equal(H("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n"
			   "Content-Length: 3\r\n\r\n"),
			 0);
	assert_int_equal(r.length, 3);
}

static void test_framing(void **state)
{
	(void)state;
	assert_int_equal(
		H("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"), 0);
	assert_int_equal(r.framing, HTTPC_BODY_CHUNKED);
	assert_int_equal(
		H("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, Chunked\r\n\r\n"),
		0);
	assert_int_equal(r.framing, HTTPC_BODY_CHUNKED);
	/* chunked not last: the length is unknown, read until the close */
	assert_int_equal(
		H("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\n"),
		0);
	assert_int_equal(r.framing, HTTPC_BODY_CLOSE);
	assert_true(r.close);
	/* neither: until the close */
	assert_int_equal(H("HTTP/1.1 200 OK\r\n\r\n"), 0);
	assert_int_equal(r.framing, HTTPC_BODY_CLOSE);
	assert_true(r.close);
	/* no body whatever the fields say */
	assert_int_equal(
		H("HTTP/1.1 304 Not Modified\r\nContent-Length: 9\r\n\r\n"), 0);
	assert_int_equal(r.framing, HTTPC_BODY_NONE);
	assert_int_equal(H("HTTP/1.1 204 No Content\r\n\r\n"), 0);
	assert_int_equal(r.framing, HTTPC_BODY_NONE);
	assert_false(r.close);
	assert_int_equal(H("HTTP/1.1 100 Continue\r\n\r\n"), 0);
	assert_int_equal(r.status, 100);
	assert_int_equal(r.framing, HTTPC_BODY_NONE);
	assert_int_equal(
		httpc_parse_head("HTTP/1.1 200 OK\r\nContent-Length: 7\r\n\r\n",
				 38, true, &r, &used),
		0);
	assert_int_equal(r.framing, HTTPC_BODY_NONE);
}

static void test_connection(void **state)
{
	(void)state;
	assert_int_equal(
		H("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"),
		0);
	assert_true(r.close);
	assert_int_equal(
		H("HTTP/1.1 200 OK\r\nConnection: Upgrade, CLOSE\r\nContent-Length: 0\r\n\r\n"),
		0);
	assert_true(r.close);
	assert_int_equal(
		H("HTTP/1.1 200 OK\r\nConnection: closed\r\nContent-Length: 0\r\n\r\n"),
		0);
	assert_false(r.close);
	/* HTTP/1.0 closes unless it says keep-alive */
	assert_int_equal(H("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n"), 0);
	assert_true(r.close);
	assert_int_equal(
		H("HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n"),
		0);
	assert_false(r.close);
}

static void test_truncated(void **state)
{
	const char *s =
		"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nETag: \"x\"\r\n\r\n";
	size_t n = strlen(s);

	(void)state;
	/* every proper prefix wants more, never an error */
	for (size_t i = 0; i < n; i++)
		assert_int_equal(httpc_parse_head(s, i, false, &r, &used), 1);
	assert_int_equal(httpc_parse_head(s, n, false, &r, &used), 0);
	assert_int_equal(used, n);
}

static void test_hostile_heads(void **state)
{
	static char big[HTTPC_HEAD_MAX + 64];

	(void)state;
	/* not HTTP at all: said at once, without waiting for a newline */
	assert_int_equal(H("VALUE k 0 5"), -EPROTO);
	assert_int_equal(H("HTTP/2 200\r\n\r\n"), -EPROTO);
	assert_int_equal(H("HTTP/1.1 20 OK\r\n\r\n"), -EPROTO);
	assert_int_equal(H("HTTP/1.1 2000 OK\r\n\r\n"), -EPROTO);
	assert_int_equal(H("HTTP/1.1 099 OK\r\n\r\n"), -EPROTO);
	assert_int_equal(H("HTTP/1.1  200 OK\r\n\r\n"), -EPROTO);
	assert_int_equal(H("HTTP/1.x 200 OK\r\n\r\n"), -EPROTO);
	/* request smuggling shapes */
	assert_int_equal(H("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n"
			   "Content-Length: 6\r\n\r\n"),
			 -EPROTO);
	assert_int_equal(H("HTTP/1.1 200 OK\r\nContent-Length: 5, 6\r\n\r\n"),
			 -EPROTO);
	assert_int_equal(H("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n"
			   "Transfer-Encoding: chunked\r\n\r\n"),
			 -EPROTO);
	assert_int_equal(H("HTTP/1.1 200 OK\r\nContent-Length : 5\r\n\r\n"),
			 -EPROTO);
	assert_int_equal(H("HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n"),
			 -EPROTO);
	assert_int_equal(H("HTTP/1.1 200 OK\r\nContent-Length: +5\r\n\r\n"),
			 -EPROTO);
	assert_int_equal(H("HTTP/1.1 200 OK\r\nContent-Length:\r\n\r\n"),
			 -EPROTO);
	assert_int_equal(
		H("HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999999\r\n\r\n"),
		-EPROTO);
	assert_int_equal(
		H("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n x\r\n\r\n"),
		-EPROTO);
	assert_int_equal(H("HTTP/1.1 200 OK\r\nno colon\r\n\r\n"), -EPROTO);
	assert_int_equal(H("HTTP/1.1 200 OK\r\n: empty name\r\n\r\n"), -EPROTO);
	assert_int_equal(H("HTTP/1.1 200 OK\r\nX: a\rb\r\n\r\n"), -EPROTO);
	assert_int_equal(httpc_parse_head("HTTP/1.1 200 OK\r\nX: a\0b\r\n\r\n",
					  27, false, &r, &used),
			 -EPROTO);
	/* a head that never ends */
	memcpy(big, "HTTP/1.1 200 OK\r\n", 17);
	memset(big + 17, 'a', sizeof(big) - 17);
	assert_int_equal(httpc_parse_head(big, sizeof(big), false, &r, &used),
			 -EMSGSIZE);
	assert_int_equal(httpc_parse_head(big, 1000, false, &r, &used), 1);
}

static void test_body_length(void **state)
{
	struct httpc_resp lr = { .status = 200,
				 .framing = HTTPC_BODY_LENGTH,
				 .length = 5 };
	char out[64];
	size_t n, rest;

	(void)state;
	assert_int_equal(body(&lr, "helloHTTP/1.1", 2, out, &n, &rest), 0);
	assert_int_equal(n, 5);
	assert_memory_equal(out, "hello", 5);
	assert_int_equal(rest, 8); /* the next response is not eaten */
	assert_int_equal(body(&lr, "hel", 1, out, &n, &rest), 1);
}

static void test_body_chunked(void **state)
{
	struct httpc_resp cr = { .status = 200, .framing = HTTPC_BODY_CHUNKED };
	const char *s = "5\r\nhello\r\nA;ext=1\r\n0123456789\r\n"
			"0\r\nX-Trailer: y\r\n\r\nNEXT";
	char out[64];
	size_t n, rest;

	(void)state;
	for (size_t step = 1; step <= strlen(s); step++) {
		assert_int_equal(body(&cr, s, step, out, &n, &rest), 0);
		assert_int_equal(n, 15);
		assert_memory_equal(out, "hello0123456789", 15);
		assert_int_equal(rest, 4);
	}
	/* bare LFs, upper-case hex, no trailer */
	assert_int_equal(body(&cr, "3\nabc\n0\n\n", 4, out, &n, &rest), 0);
	assert_int_equal(n, 3);
	/* truncated anywhere: more wanted, never done */
	for (size_t i = 0; i < strlen(s) - 4; i++) {
		char t[128];

		memcpy(t, s, i);
		t[i] = 0;
		assert_int_equal(body(&cr, t, 3, out, &n, &rest), 1);
	}
}

static void test_body_chunked_hostile(void **state)
{
	struct httpc_resp cr = { .status = 200, .framing = HTTPC_BODY_CHUNKED };
	char out[64], big[8000];
	size_t n, rest;

	(void)state;
	assert_int_equal(body(&cr, "x\r\n", 8, out, &n, &rest), -EPROTO);
	assert_int_equal(body(&cr, "\r\n", 8, out, &n, &rest), -EPROTO);
	assert_int_equal(body(&cr, "-5\r\n", 8, out, &n, &rest), -EPROTO);
	assert_int_equal(body(&cr, "\x10\r\n", 8, out, &n, &rest), -EPROTO);
	/* a chunk longer than it said */
	assert_int_equal(body(&cr, "3\r\nabcd\r\n0\r\n\r\n", 8, out, &n, &rest),
			 -EPROTO);
	/* a size that overflows */
	assert_int_equal(body(&cr, "fffffffffffffffffff\r\n", 8, out, &n,
			      &rest),
			 -EPROTO);
	assert_int_equal(body(&cr, "5\rX", 8, out, &n, &rest), -EPROTO);
	assert_int_equal(body(&cr, "5\x01\r\n", 8, out, &n, &rest), -EPROTO);
	/* an endless extension or trailer */
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	big[0] = '1';
	big[1] = ';';
	assert_int_equal(body(&cr, big, 512, out, &n, &rest), -EPROTO);
	memcpy(big, "0\r\n", 3);
	assert_int_equal(body(&cr, big, 512, out, &n, &rest), -EPROTO);
}

static void test_body_close_and_eof(void **state)
{
	struct httpc_resp xr = { .status = 200, .framing = HTTPC_BODY_CLOSE };
	struct httpc_resp lr = { .status = 200,
				 .framing = HTTPC_BODY_LENGTH,
				 .length = 10 };
	struct httpc_resp cr = { .status = 200, .framing = HTTPC_BODY_CHUNKED };
	struct httpc_body b;
	size_t c, off, dl;

	(void)state;
	httpc_body_init(&b, &xr);
	assert_int_equal(httpc_body_take(&b, "abc", 3, &c, &off, &dl), 0);
	assert_int_equal(dl, 3);
	assert_false(b.done);
	assert_int_equal(httpc_body_eof(&b), 0);
	assert_true(b.done);
	httpc_body_init(&b, &lr);
	assert_int_equal(httpc_body_take(&b, "abc", 3, &c, &off, &dl), 0);
	assert_int_equal(httpc_body_eof(&b), -EPIPE);
	httpc_body_init(&b, &cr);
	assert_int_equal(httpc_body_take(&b, "3\r\nabc", 6, &c, &off, &dl), 0);
	assert_int_equal(httpc_body_eof(&b), -EPIPE);
}

static void test_target(void **state)
{
	char buf[32];

	(void)state;
	assert_int_equal(httpc_target(buf, sizeof(buf), "/", "big:0001"), 9);
	assert_string_equal(buf, "/big:0001");
	assert_int_equal(httpc_target(buf, sizeof(buf), "/c/", "a b%?#\x7f"),
			 20);
	assert_string_equal(buf, "/c/a%20b%25%3F%23%7F");
	assert_int_equal(httpc_target(buf, 9, "/", "big:0001"), -ENAMETOOLONG);
	assert_int_equal(httpc_target(buf, 5, "/", "a%"), -ENAMETOOLONG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_status_and_length),
		cmocka_unit_test(test_framing),
		cmocka_unit_test(test_connection),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_hostile_heads),
		cmocka_unit_test(test_body_length),
		cmocka_unit_test(test_body_chunked),
		cmocka_unit_test(test_body_chunked_hostile),
		cmocka_unit_test(test_body_close_and_eof),
		cmocka_unit_test(test_target),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
