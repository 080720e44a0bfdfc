/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the HTTP attribute record (netd/http_attr.c): a record
 * survives encode/decode, an empty one decodes to defaults, and truncated,
 * oversized, trailing-garbage and wrong-version bytes are refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "http_attr.h"

#define GS_ATTR_MAX 1024

static void full(struct http_attr *a)
{
	http_attr_init(a);
	a->flags = HTTP_ATTR_ORIGIN | HTTP_ATTR_REVALIDATE;
	a->status = 404;
	a->last_modified = 784111777;
	a->age_base = -5;
	a->fresh_until = INT64_MAX;
	a->etag_len = HTTP_ATTR_ETAG_MAX;
	memset(a->etag, 'e', a->etag_len);
	a->ctype_len = HTTP_ATTR_CTYPE_MAX;
	memset(a->ctype, 'c', a->ctype_len);
	a->extra_len = HTTP_ATTR_EXTRA_MAX;
	memset(a->extra, 'x', a->extra_len);
}

static void test_round_trip(void **state)
{
	struct http_attr a, b;
	uint8_t buf[GS_ATTR_MAX];
	long n;

	(void)state;
	full(&a);
	n = http_attr_encode(&a, buf, sizeof(buf));
	assert_true(n > 0 && n <= GS_ATTR_MAX);	/* the largest fits */
	assert_int_equal(http_attr_decode(buf, (size_t)n, &b), 0);
	assert_int_equal(b.flags, a.flags);
	assert_int_equal(b.status, 404);
	assert_int_equal(b.last_modified, a.last_modified);
	assert_int_equal(b.age_base, -5);
	assert_int_equal(b.fresh_until, INT64_MAX);
	assert_int_equal(b.etag_len, a.etag_len);
	assert_memory_equal(b.etag, a.etag, a.etag_len);
	assert_memory_equal(b.ctype, a.ctype, a.ctype_len);
	assert_memory_equal(b.extra, a.extra, a.extra_len);
}

static void test_empty_is_default(void **state)
{
	struct http_attr a;

	(void)state;
	memset(&a, 0x55, sizeof(a));
	assert_int_equal(http_attr_decode(NULL, 0, &a), 0);
	assert_int_equal(a.status, 200);
	assert_int_equal(a.etag_len, 0);
	assert_int_equal(a.fresh_until, 0);
}

static void test_refused(void **state)
{
	struct http_attr a, b;
	uint8_t buf[GS_ATTR_MAX + 8];
	long n;

	(void)state;
	full(&a);
	n = http_attr_encode(&a, buf, sizeof(buf));
	/* every truncation */
	for (long i = 1; i < n; i++)
		assert_int_equal(http_attr_decode(buf, (size_t)i, &b), -1);
	/* trailing bytes */
	buf[n] = 0;
	assert_int_equal(http_attr_decode(buf, (size_t)n + 1, &b), -1);
	/* another version */
	buf[0] = HTTP_ATTR_VERSION + 1;
	assert_int_equal(http_attr_decode(buf, (size_t)n, &b), -1);
	/* a length over its maximum, though the bytes are there */
	http_attr_init(&a);
	n = http_attr_encode(&a, buf, sizeof(buf));
	buf[n - 6] = 0xff;	/* the ETag's length: 2 bytes at n - 6 */
	buf[n - 5] = 0x00;
	assert_int_equal(http_attr_decode(buf, (size_t)n, &b), -1);
	assert_int_equal(b.status, 200);	/* left at defaults */
	/* encoding refuses oversized fields and small buffers */
	a.etag_len = HTTP_ATTR_ETAG_MAX + 1;
	assert_int_equal(http_attr_encode(&a, buf, sizeof(buf)), -1);
	http_attr_init(&a);
	assert_int_equal(http_attr_encode(&a, buf, 10), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_empty_is_default),
		cmocka_unit_test(test_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
