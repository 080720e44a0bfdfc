/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the RESP request parser (netd/resp_proto.c): multibulk
 * and inline requests, pipelines, truncated input at every byte, big
 * bulks, and malformed and hostile requests with Redis 7's error texts.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "resp_proto.h"

static struct resp_req req;
static size_t used;
static struct resp_limits lim = {
	.whole_max = 32768,
	.big_min = 8192,
	.bulk_max = 1u << 30,
	.mbulk_max = RESP_MBULK_MAX,
};

static enum resp_parse_result P(const char *s)
{
	used = 0;
	return resp_parse(s, strlen(s), &lim, &req, &used);
}

static void assert_arg(unsigned i, const char *want)
{
	assert_true(i < req.argc);
	assert_int_equal(req.argv[i].len, strlen(want));
	assert_memory_equal(req.argv[i].p, want, req.argv[i].len);
}

static void test_multibulk(void **state)
{
	const char *s = "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n*1\r\n$4\r\n"
			"PING\r\n";

	(void)state;
	assert_int_equal(P(s), RESP_PARSE_OK);
	assert_int_equal(req.argc, 3);
	assert_int_equal(req.nargs, 3);
	assert_arg(0, "SET");
	assert_arg(1, "k");
	assert_arg(2, "");
	assert_int_equal(used,
			 strlen("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n"));
	/* the pipelined request after it */
	assert_int_equal(resp_parse(s + used, strlen(s + used), &lim, &req,
				    &used),
			 RESP_PARSE_OK);
	assert_arg(0, "PING");
	/* binary bytes in a bulk */
	assert_int_equal(resp_parse("*1\r\n$3\r\n\0\r\n\r\n", 13, &lim, &req,
				    &used),
			 RESP_PARSE_OK);
	assert_int_equal(req.argv[0].len, 3);
	assert_memory_equal(req.argv[0].p, "\0\r\n", 3);
}

/* Every prefix of a request is "more", never a request or an error. */
static void test_truncated(void **state)
{
	const char *s = "*2\r\n$4\r\nECHO\r\n$5\r\nhello\r\n";
	size_t n = strlen(s);

	(void)state;
	for (size_t i = 0; i < n; i++)
		assert_int_equal(resp_parse(s, i, &lim, &req, &used),
				 RESP_PARSE_MORE);
	assert_int_equal(resp_parse(s, n, &lim, &req, &used), RESP_PARSE_OK);
	assert_int_equal(used, n);
	assert_int_equal(P("ping"), RESP_PARSE_MORE); /* inline, no newline */
}

static void test_empty(void **state)
{
	(void)state;
	assert_int_equal(P("*0\r\n"), RESP_PARSE_EMPTY);
	assert_int_equal(used, 4);
	assert_int_equal(P("*-1\r\n"), RESP_PARSE_EMPTY);
	assert_int_equal(P("\r\n"), RESP_PARSE_EMPTY);
	assert_int_equal(P("   \n"), RESP_PARSE_EMPTY);
}

static void test_inline(void **state)
{
	(void)state;
	assert_int_equal(P("set  k \"a b\\x41\\n\" 'it''s'\r\n"),
			 RESP_PARSE_ERROR); /* 'it''s': a quote then a letter */
	assert_int_equal(P("set  k \"a b\\x41\\n\" 'it\\'s'\r\n"),
			 RESP_PARSE_OK);
	assert_true(req.inline_req);
	assert_int_equal(req.argc, 4);
	assert_arg(0, "set");
	assert_arg(1, "k");
	assert_arg(2, "a bA\n");
	assert_arg(3, "it's");
	assert_int_equal(P("PING\n"), RESP_PARSE_OK); /* LF alone ends it */
	assert_arg(0, "PING");
	assert_int_equal(P("get \"abc\r\n"), RESP_PARSE_ERROR);
	assert_string_equal(req.err, "unbalanced quotes in request");
	assert_int_equal(P("get \"a\"b\r\n"), RESP_PARSE_ERROR);
}

static void test_errors(void **state)
{
	(void)state;
	assert_int_equal(P("*x\r\n"), RESP_PARSE_ERROR);
	assert_string_equal(req.err, "invalid multibulk length");
	assert_int_equal(P("*99999999999\r\n"), RESP_PARSE_ERROR);
	assert_string_equal(req.err, "invalid multibulk length");
	assert_int_equal(P("*1\r\n+PING\r\n"), RESP_PARSE_ERROR);
	assert_string_equal(req.err, "expected '$', got '+'");
	/* nesting: an array inside a request is no bulk */
	assert_int_equal(P("*1\r\n*1\r\n*1\r\n$1\r\na\r\n"), RESP_PARSE_ERROR);
	assert_string_equal(req.err, "expected '$', got '*'");
	assert_int_equal(P("*1\r\n$-1\r\n"), RESP_PARSE_ERROR);
	assert_string_equal(req.err, "invalid bulk length");
	assert_int_equal(P("*1\r\n$01\r\na\r\n"), RESP_PARSE_ERROR);
	assert_int_equal(P("*1\r\n$99999999999999999999\r\n"),
			 RESP_PARSE_ERROR);
	assert_string_equal(req.err, "invalid bulk length");
	assert_int_equal(P("*1\r\n$2000000000\r\n"), RESP_PARSE_ERROR);
	assert_string_equal(req.err, "invalid bulk length"); /* > bulk_max */
	/* a miscounted bulk: its bytes are not followed by CRLF */
	assert_int_equal(P("*1\r\n$2\r\nabc\r\n"), RESP_PARSE_ERROR);
}

static void test_unauth(void **state)
{
	struct resp_limits u = lim;

	(void)state;
	u.unauth = true;
	assert_int_equal(resp_parse("*11\r\n", 5, &u, &req, &used),
			 RESP_PARSE_ERROR);
	assert_string_equal(req.err, "unauthenticated multibulk length");
	assert_int_equal(resp_parse("*1\r\n$16385\r\n", 12, &u, &req, &used),
			 RESP_PARSE_ERROR);
	assert_string_equal(req.err, "unauthenticated bulk length");
}

static void test_big(void **state)
{
	const char *s = "*5\r\n$3\r\nset\r\n$1\r\nk\r\n$100000\r\nabc";

	(void)state;
	assert_int_equal(P(s), RESP_PARSE_BIG);
	assert_int_equal(req.argc, 2);
	assert_int_equal(req.nargs, 5);
	assert_int_equal(req.big_len, 100000);
	assert_int_equal(used, strlen(s) - 3);
	/* the arguments after the big bulk */
	req.argc = 0;
	assert_int_equal(resp_parse_bulks("$2\r\nEX\r\n$2\r\n10\r\n", 16, 2,
					  &lim, &req, &used),
			 RESP_PARSE_OK);
	assert_arg(0, "EX");
	assert_arg(1, "10");
	assert_int_equal(used, 16);
}

static void test_too_long(void **state)
{
	char *b = malloc(lim.whole_max + 16);
	size_t n;

	(void)state;
	assert_non_null(b);
	/* many small bulks past whole_max: too long, not more */
	n = (size_t)sprintf(b, "*100000\r\n");
	while (n + 7 < lim.whole_max + 8) {
		memcpy(b + n, "$1\r\na\r\n", 7);
		n += 7;
	}
	assert_int_equal(resp_parse(b, n, &lim, &req, &used),
			 RESP_PARSE_TOO_LONG);
	/* an inline line with no newline in whole_max bytes */
	memset(b, 'a', lim.whole_max);
	assert_int_equal(resp_parse(b, lim.whole_max, &lim, &req, &used),
			 RESP_PARSE_ERROR);
	assert_string_equal(req.err, "too big inline request");
	/* a count line that never ends */
	b[0] = '*';
	memset(b + 1, '1', lim.whole_max - 1);
	assert_int_equal(resp_parse(b, lim.whole_max, &lim, &req, &used),
			 RESP_PARSE_MORE);
	assert_int_equal(resp_parse(b, RESP_COUNT_LINE_MAX + 1, &lim, &req,
				    &used),
			 RESP_PARSE_ERROR);
	assert_string_equal(req.err, "too big mbulk count string");
	free(b);
}

static void test_numbers(void **state)
{
	long long v;
	double d;

	(void)state;
	assert_true(resp_ll("0", 1, &v) && v == 0);
	assert_true(resp_ll("-12", 3, &v) && v == -12);
	assert_true(resp_ll("9223372036854775807", 19, &v) &&
		    v == 9223372036854775807ll);
	assert_true(resp_ll("-9223372036854775808", 20, &v) && v < 0);
	assert_false(resp_ll("9223372036854775808", 19, &v));
	assert_false(resp_ll("01", 2, &v));
	assert_false(resp_ll("+1", 2, &v));
	assert_false(resp_ll(" 1", 2, &v));
	assert_false(resp_ll("-", 1, &v));
	assert_false(resp_ll("-0", 2, &v));
	assert_false(resp_ll("", 0, &v));
	assert_true(resp_double("1.5", 3, &d) && d == 1.5);
	assert_true(resp_double("-inf", 4, &d) && d < 0);
	assert_false(resp_double("nan", 3, &d));
	assert_false(resp_double("1x", 2, &d));
}

static void test_glob(void **state)
{
	(void)state;
	assert_true(resp_glob("*", 1, "abc", 3));
	assert_true(resp_glob("a*c", 3, "abbbc", 5));
	assert_false(resp_glob("a*c", 3, "abbb", 4));
	assert_true(resp_glob("h?llo", 5, "hello", 5));
	assert_true(resp_glob("h[ae]llo", 8, "hallo", 5));
	assert_false(resp_glob("h[^e]llo", 8, "hello", 5));
	assert_true(resp_glob("h[a-c]llo", 9, "hbllo", 5));
	assert_true(resp_glob("a\\*", 3, "a*", 2));
	assert_false(resp_glob("a\\*", 3, "ab", 2));
	assert_true(resp_glob("user:*:x", 8, "user:12:x", 9));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_multibulk),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_inline),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_unauth),
		cmocka_unit_test(test_big),
		cmocka_unit_test(test_too_long),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_glob),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
