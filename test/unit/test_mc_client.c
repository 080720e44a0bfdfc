/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of goblinctl's memcache reply parsers (cli/mc_client.c):
 * reply lines, VALUE headers and metadump lines, well-formed, truncated
 * and hostile.
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

#include "mc_client.h"

static struct mcc_reply r;
static size_t used;

static int R(const char *s)
{
	used = 0;
	return mcc_reply_parse(s, strlen(s), &r, &used);
}

static void test_reply_lines(void **state)
{
	(void)state;
	assert_int_equal(R("STORED\r\nEND\r\n"), 0);
	assert_int_equal(r.kind, MCC_STORED);
	assert_int_equal(used, 8);
	assert_int_equal(R("END\n"), 0);
	assert_int_equal(r.kind, MCC_END);
	assert_int_equal(R("ENDX\r\n"), 0);
	assert_int_equal(r.kind, MCC_OTHER);
	assert_int_equal(R("NOT_FOUND\r\n"), 0);
	assert_int_equal(r.kind, MCC_NOT_FOUND);
	assert_int_equal(R("DELETED\r\n"), 0);
	assert_int_equal(r.kind, MCC_DELETED);
	assert_int_equal(R("SERVER_ERROR object too large for cache\r\n"), 0);
	assert_int_equal(r.kind, MCC_ERROR);
	assert_int_equal(r.len,
			 strlen("SERVER_ERROR object too large for cache"));
	assert_int_equal(R("ERROR\r\n"), 0);
	assert_int_equal(r.kind, MCC_ERROR);
	assert_int_equal(R("STAT pid 12\r\n"), 0);
	assert_int_equal(r.kind, MCC_STAT);
	assert_int_equal(R("STORED"), 1); /* no newline yet */
	assert_int_equal(R(""), 1);
}

static void test_value(void **state)
{
	(void)state;
	assert_int_equal(R("VALUE k 7 6000000\r\n"), 0);
	assert_int_equal(r.kind, MCC_VALUE);
	assert_int_equal(r.flags, 7);
	assert_int_equal(r.bytes, 6000000);
	assert_int_equal(R("VALUE k 0 5 99\r\n"), 0);
	assert_int_equal(r.bytes, 5);
	assert_int_equal(R("VALUE k 4294967296 5\r\n"), -EPROTO);
	assert_int_equal(R("VALUE k 0 -5\r\n"), -EPROTO);
	assert_int_equal(R("VALUE k 0 99999999999999999999\r\n"), -EPROTO);
	assert_int_equal(R("VALUE k 0\r\n"), -EPROTO);
	assert_int_equal(R("VALUE k\r\n"), -EPROTO);
	assert_int_equal(R("VALUE k 0 5x\r\n"), -EPROTO);
}

static void test_long_line(void **state)
{
	char *big = malloc(MCC_LINE_MAX + 10);

	(void)state;
	assert_non_null(big);
	memset(big, 'a', MCC_LINE_MAX + 10);
	assert_int_equal(mcc_reply_parse(big, MCC_LINE_MAX, &r, &used), 1);
	assert_int_equal(mcc_reply_parse(big, MCC_LINE_MAX + 10, &r, &used),
			 -EPROTO);
	free(big);
}

static void test_dump(void **state)
{
	struct mcc_dump d;
	const char *l;

	(void)state;
	l = "key=w%25b exp=-1 la=1700000000 cas=3 fetch=no cls=1 size=10";
	assert_int_equal(mcc_dump_parse(l, strlen(l), &d), 0);
	assert_string_equal(d.key, "w%b");
	assert_int_equal(d.klen, 3);
	assert_int_equal(d.exp, -1);
	assert_int_equal(d.la, 1700000000);
	assert_int_equal(d.size, 10);
	l = "size=5 key=a";
	assert_int_equal(mcc_dump_parse(l, strlen(l), &d), 0);
	assert_int_equal(d.size, 5);
	l = "exp=5 size=1"; /* no key */
	assert_int_equal(mcc_dump_parse(l, strlen(l), &d), -EPROTO);
	l = "key=a%2"; /* truncated escape */
	assert_int_equal(mcc_dump_parse(l, strlen(l), &d), -EPROTO);
	l = "key=a%zz";
	assert_int_equal(mcc_dump_parse(l, strlen(l), &d), -EPROTO);
	l = "key=a%00b"; /* a NUL in a key */
	assert_int_equal(mcc_dump_parse(l, strlen(l), &d), -EPROTO);
	l = "key=a size=-1";
	assert_int_equal(mcc_dump_parse(l, strlen(l), &d), -EPROTO);
	l = "key=a size=1x";
	assert_int_equal(mcc_dump_parse(l, strlen(l), &d), -EPROTO);
	l = "key= size=1";
	assert_int_equal(mcc_dump_parse(l, strlen(l), &d), -EPROTO);
	l = "garbage";
	assert_int_equal(mcc_dump_parse(l, strlen(l), &d), -EPROTO);
}

/* issue 19: a store key longer than memcache's (HTTP's) is listed whole */
static void test_dump_long_key(void **state)
{
	static char line[4 + 3 * (MCC_STORE_KEY_MAX + 1) + 1];
	static struct mcc_dump d;
	size_t i;

	(void)state;
	memcpy(line, "key=", 4);
	for (i = 0; i < MCC_STORE_KEY_MAX + 1; i++)
		memcpy(line + 4 + 3 * i, i % 2 ? "%20" : "%41", 3);
	line[sizeof(line) - 1] = 0;
	assert_int_equal(mcc_dump_parse(line, strlen(line), &d), -EPROTO);
	/* exactly the store's limit is fine, and the line fits a reply */
	assert_int_equal(mcc_dump_parse(line, strlen(line) - 3, &d), 0);
	assert_int_equal(d.klen, MCC_STORE_KEY_MAX);
	assert_memory_equal(d.key, "A A ", 4);
	assert_true(strlen(line) + 100 < MCC_LINE_MAX);
}

static void test_key_valid(void **state)
{
	char k[MCC_KEY_MAX + 1];

	(void)state;
	memset(k, 'k', sizeof(k));
	assert_true(mcc_key_valid(k, MCC_KEY_MAX));
	assert_false(mcc_key_valid(k, MCC_KEY_MAX + 1));
	assert_false(mcc_key_valid("", 0));
	assert_false(mcc_key_valid("a b", 3));
	assert_false(mcc_key_valid("a\r", 2));
	assert_true(mcc_key_valid("art:1%", 6));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reply_lines),
		cmocka_unit_test(test_value),
		cmocka_unit_test(test_long_line),
		cmocka_unit_test(test_dump),
		cmocka_unit_test(test_dump_long_key),
		cmocka_unit_test(test_key_valid),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
