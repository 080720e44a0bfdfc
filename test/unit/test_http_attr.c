/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the attribute record (store/attr.c, gs_attr_*): a record
 * survives encode/decode, an empty one decodes to defaults, truncated,
 * oversized, trailing-garbage and wrong-version bytes are refused with
 * their error, and the formats written before it (goblind's version 1,
 * goblinfs's text) still decode.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <errno.h>

#include <cmocka.h>

#include "goblin.h"

static void full(struct gs_attr *a)
{
	gs_attr_init(a);
	a->flags = GS_ATTR_ORIGIN | GS_ATTR_REVALIDATE;
	a->status = 404;
	a->last_modified = 784111777;
	a->age_base = -5;
	a->fresh_until = INT64_MAX;
	a->etag_len = GS_ATTR_ETAG_MAX;
	memset(a->etag, 'e', a->etag_len);
	a->ctype_len = GS_ATTR_CTYPE_MAX;
	memset(a->ctype, 'c', a->ctype_len);
	/* what is left of GS_ATTR_MAX */
	a->headers_len = GS_ATTR_HEADERS_MAX - a->etag_len - a->ctype_len;
	memset(a->headers, 'x', a->headers_len);
}

static void test_round_trip(void **state)
{
	struct gs_attr a, b;
	uint8_t buf[GS_ATTR_MAX];
	long n;

	(void)state;
	full(&a);
	n = gs_attr_encode(&a, buf, sizeof(buf));
	assert_int_equal(n, GS_ATTR_MAX); /* the largest fits exactly */
	assert_int_equal(buf[0], GS_ATTR_VERSION);
	assert_int_equal(gs_attr_decode(buf, (size_t)n, &b), 0);
	assert_int_equal(b.flags, a.flags);
	assert_int_equal(b.status, 404);
	assert_int_equal(b.last_modified, a.last_modified);
	assert_int_equal(b.age_base, -5);
	assert_int_equal(b.fresh_until, INT64_MAX);
	assert_int_equal(b.etag_len, a.etag_len);
	assert_memory_equal(b.etag, a.etag, a.etag_len);
	assert_memory_equal(b.ctype, a.ctype, a.ctype_len);
	assert_int_equal(b.headers_len, a.headers_len);
	assert_memory_equal(b.headers, a.headers, a.headers_len);
	/* a header block of GS_ATTR_HEADERS_MAX alone fits too */
	gs_attr_init(&a);
	a.headers_len = GS_ATTR_HEADERS_MAX;
	memset(a.headers, 'h', a.headers_len);
	assert_int_equal(gs_attr_encode(&a, buf, sizeof(buf)), GS_ATTR_MAX);
	assert_int_equal(gs_attr_decode(buf, GS_ATTR_MAX, &b), 0);
	assert_int_equal(b.headers_len, GS_ATTR_HEADERS_MAX);
}

static void test_empty_is_default(void **state)
{
	struct gs_attr a;

	(void)state;
	memset(&a, 0x55, sizeof(a));
	assert_int_equal(gs_attr_decode(NULL, 0, &a), 0);
	assert_int_equal(a.status, 200);
	assert_int_equal(a.flags, 0);
	assert_int_equal(a.etag_len, 0);
	assert_int_equal(a.headers_len, 0);
	assert_int_equal(a.fresh_until, 0);
}

/* After a refused decode the record is at its defaults, not half set. */
static void assert_default(const struct gs_attr *b)
{
	assert_int_equal(b->status, 200);
	assert_int_equal(b->flags, 0);
	assert_int_equal(b->last_modified, 0);
	assert_int_equal(b->etag_len, 0);
	assert_int_equal(b->ctype_len, 0);
	assert_int_equal(b->headers_len, 0);
}

static void test_refused(void **state)
{
	struct gs_attr a, b;
	uint8_t buf[GS_ATTR_MAX + 8];
	long n;

	(void)state;
	full(&a);
	a.headers_len = 100;
	n = gs_attr_encode(&a, buf, sizeof(buf));
	assert_true(n > 0);
	/* every truncation */
	for (long i = 1; i < n; i++) {
		assert_int_equal(gs_attr_decode(buf, (size_t)i, &b), -EBADMSG);
		assert_default(&b);
	}
	/* trailing bytes */
	buf[n] = 0;
	assert_int_equal(gs_attr_decode(buf, (size_t)n + 1, &b), -EBADMSG);
	/* versions nobody wrote (3 is 2 with a file block, issue 20) */
	for (int v = 0; v < 256; v++) {
		if (v == 1 || v == 2 || v == 3 || (v >= 'A' && v <= 'Z') ||
		    (v >= 'a' && v <= 'z'))
			continue;
		buf[0] = (uint8_t)v;
		assert_int_equal(gs_attr_decode(buf, (size_t)n, &b),
				 -EPROTONOSUPPORT);
		assert_default(&b);
	}
	/* more bytes than gs_meta.attr can hold */
	buf[0] = GS_ATTR_VERSION;
	assert_int_equal(gs_attr_decode(buf, GS_ATTR_MAX + 1, &b), -EMSGSIZE);
	/* a length over its maximum, though the bytes are there */
	gs_attr_init(&a);
	a.etag_len = 10;
	memset(a.etag, 'e', 10);
	n = gs_attr_encode(&a, buf, sizeof(buf));
	assert_int_equal(n, GS_ATTR_FIXED + 10);
	buf[28] = GS_ATTR_ETAG_MAX + 1; /* the ETag's length, at 28 */
	buf[29] = 0;
	assert_int_equal(gs_attr_decode(buf, (size_t)n, &b), -EBADMSG);
	memset(buf + n, 'e', sizeof(buf) - (size_t)n); /* now they are */
	assert_int_equal(gs_attr_decode(buf, GS_ATTR_MAX, &b), -EMSGSIZE);
	assert_default(&b);
	/* a length pointing past the end: not read */
	buf[28] = 0xff;
	buf[29] = 0xff;
	assert_int_equal(gs_attr_decode(buf, (size_t)n, &b), -EBADMSG);
	/* encoding refuses oversized fields, records and small buffers */
	gs_attr_init(&a);
	a.etag_len = GS_ATTR_ETAG_MAX + 1;
	assert_int_equal(gs_attr_encode(&a, buf, sizeof(buf)), -EMSGSIZE);
	full(&a);
	a.headers_len++; /* one byte over GS_ATTR_MAX in all */
	assert_int_equal(gs_attr_encode(&a, buf, sizeof(buf)), -EMSGSIZE);
	gs_attr_init(&a);
	assert_int_equal(gs_attr_encode(&a, buf, 10), -ENOSPC);
}

/* A version 1 record, laid out byte by byte as goblind wrote it. */
static size_t v1_record(uint8_t *out, const char *etag, const char *ctype,
			const char *extra, size_t extra_len)
{
	size_t n = 0;
	const char *s[3] = { etag, ctype, extra };
	size_t l[3] = { strlen(etag), strlen(ctype), extra_len };
	uint64_t f[3] = { 784111777, 1700000000, 1700000060 };

	out[n++] = 1;		   /* version */
	out[n++] = GS_ATTR_ORIGIN; /* flags */
	out[n++] = 200;		   /* status, little-endian */
	out[n++] = 0;
	for (int k = 0; k < 3; k++) /* last_modified, age_base, fresh */
		for (int i = 0; i < 8; i++)
			out[n++] = (uint8_t)(f[k] >> (8 * i));
	for (int k = 0; k < 3; k++) {
		out[n++] = (uint8_t)l[k];
		out[n++] = (uint8_t)(l[k] >> 8);
		memcpy(out + n, s[k], l[k]);
		n += l[k];
	}
	return n;
}

static void test_issue17_version1_decodes(void **state)
{
	const char *extra = "Cache-Control: max-age=60\r\n";
	uint8_t buf[GS_ATTR_MAX + 64];
	struct gs_attr a;
	char big[600];
	size_t n;

	(void)state;
	n = v1_record(buf, "\"v1\"", "text/plain", extra, strlen(extra));
	assert_int_equal(gs_attr_decode(buf, n, &a), 0);
	assert_int_equal(a.flags, GS_ATTR_ORIGIN);
	assert_int_equal(a.status, 200);
	assert_int_equal(a.last_modified, 784111777);
	assert_int_equal(a.age_base, 1700000000);
	assert_int_equal(a.fresh_until, 1700000060);
	assert_int_equal(a.etag_len, 4);
	assert_memory_equal(a.etag, "\"v1\"", 4);
	assert_int_equal(a.ctype_len, 10);
	assert_memory_equal(a.ctype, "text/plain", 10);
	assert_int_equal(a.headers_len, strlen(extra));
	assert_memory_equal(a.headers, extra, strlen(extra));
	/* version 1 never held more than 512 header bytes */
	memset(big, 'x', sizeof(big));
	n = v1_record(buf, "", "", big, 513);
	assert_int_equal(gs_attr_decode(buf, n, &a), -EMSGSIZE);
	n = v1_record(buf, "", "", big, 512);
	assert_int_equal(gs_attr_decode(buf, n, &a), 0);
	/* truncated version 1 records */
	n = v1_record(buf, "\"v1\"", "text/plain", extra, strlen(extra));
	for (size_t i = 1; i < n; i++)
		assert_int_equal(gs_attr_decode(buf, i, &a), -EBADMSG);
}

static void test_issue17_goblinfs_text_decodes(void **state)
{
	const char *lm = "Last-Modified: Sun, 06 Nov 1994 08:49:37 GMT\r\n";
	const char *more = "Last-Modified: Sun, 06 Nov 1994 08:49:37 GMT\r\n"
			   "content-type: text/html\r\n"
			   "ETag: \"t\"\r\n"
			   "X-Other: kept\r\n";
	struct gs_attr a;

	(void)state;
	assert_int_equal(gs_attr_decode(lm, strlen(lm), &a), 0);
	assert_int_equal(a.last_modified, 784111777);
	/* served as it was: always fresh, not marked as an origin's */
	assert_int_equal(a.flags, 0);
	assert_int_equal(a.fresh_until, 0);
	assert_int_equal(a.status, 200);
	assert_int_equal(a.etag_len, 0);
	assert_int_equal(gs_attr_decode(more, strlen(more), &a), 0);
	assert_int_equal(a.last_modified, 784111777);
	assert_int_equal(a.ctype_len, 9);
	assert_memory_equal(a.ctype, "text/html", 9);
	assert_int_equal(a.etag_len, 3);
	assert_int_equal(a.headers_len, strlen("X-Other: kept\r\n"));
	assert_memory_equal(a.headers, "X-Other: kept\r\n", a.headers_len);
}

static void test_issue17_bad_text_refused(void **state)
{
	static const char *const bad[] = {
		"Last-Modified: Sun, 06 Nov 1994 08:49:37 GMT", /* no CRLF */
		"Last-Modified: Sun, 06 Nov 1994 08:49:37 GMT\n",
		"Last-Modified: Sun, 06 Nov 1994 08:49:37 GMT\r",
		"Last-Modified: yesterday\r\n",			   /* no date */
		"Last-Modified Sun, 06 Nov 1994 08:49:37 GMT\r\n", /* no : */
		"Bad Name: x\r\n",
		"X: y\r\nno colon here\r\n",
		"X: y\r\n\r\n",
	};
	struct gs_attr a;
	char big[GS_ATTR_MAX];
	size_t n;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(gs_attr_decode(bad[i], strlen(bad[i]), &a),
				 -EBADMSG);
		assert_default(&a);
	}
	/* a Content-Type longer than the record keeps */
	n = (size_t)snprintf(big, sizeof(big), "Content-Type: %0200d\r\n", 0);
	assert_int_equal(gs_attr_decode(big, n, &a), -EMSGSIZE);
}

/*
 * A header block of 32 KiB (goblind's --mirror-max-header at most) fits
 * beside the longest ETag and type, and a version 2 record written under
 * the old 1,024-byte bound (laid out by hand) still decodes.
 */
static void test_issue18_header_block_32k(void **state)
{
	static struct gs_attr a, b;
	static uint8_t buf[GS_ATTR_MAX];
	long n;
	size_t m;

	(void)state;
	full(&a);
	a.headers_len = 0;
	while (a.headers_len + 40 <= 32 * 1024)
		a.headers_len += (size_t)snprintf(a.headers + a.headers_len, 41,
						  "X-Filler-%06zu: %021d\r\n",
						  a.headers_len, 7);
	memset(a.headers + a.headers_len, 'y', 32 * 1024 - a.headers_len);
	a.headers_len = 32 * 1024;
	n = gs_attr_encode(&a, buf, sizeof(buf));
	assert_true(n > 0 && n <= GS_ATTR_MAX);
	assert_int_equal(gs_attr_decode(buf, (size_t)n, &b), 0);
	assert_int_equal(b.headers_len, 32 * 1024);
	assert_memory_equal(b.headers, a.headers, a.headers_len);
	assert_int_equal(b.etag_len, GS_ATTR_ETAG_MAX);
	assert_int_equal(b.ctype_len, GS_ATTR_CTYPE_MAX);
	/* the old bound's largest record: version 1's layout, version 2 */
	m = v1_record(buf, "\"e\"", "text/plain", (const char *)a.headers,
		      1024 - GS_ATTR_FIXED - 3 - 10);
	buf[0] = 2;
	assert_int_equal(m, 1024);
	assert_int_equal(gs_attr_decode(buf, m, &b), 0);
	assert_int_equal(b.headers_len, 1024 - GS_ATTR_FIXED - 13);
	assert_memory_equal(b.headers, a.headers, b.headers_len);
}

/* issue 20: goblinfs's file block survives, with HTTP fields beside it */
static void test_issue20_file_block(void **state)
{
	static struct gs_attr a, b;
	static uint8_t buf[GS_ATTR_MAX];
	struct gs_attr_file f;
	long n;

	(void)state;
	gs_attr_init(&a);
	a.flags = GS_ATTR_FILE;
	a.status = 200;
	a.ctype_len = 10;
	memcpy(a.ctype, "text/plain", 10);
	a.file.kind = GS_KIND_SYMLINK;
	a.file.mode = 04755;
	a.file.uid = 65534;
	a.file.gid = 4000000000u;
	a.file.rdev = 0;
	a.file.atime_ns = 1;
	a.file.mtime_ns = 981173106123456789ll;
	a.file.ctime_ns = -1;
	a.file.target_len = GS_ATTR_TARGET_MAX;
	memset(a.file.target, 't', GS_ATTR_TARGET_MAX);
	n = gs_attr_encode(&a, buf, sizeof(buf));
	assert_true(n > 0);
	assert_int_equal(buf[0], 3); /* the version with the block */
	assert_int_equal(gs_attr_kind(buf, (size_t)n), GS_KIND_SYMLINK);
	assert_int_equal(gs_attr_decode(buf, (size_t)n, &b), 0);
	assert_int_equal(b.file.kind, GS_KIND_SYMLINK);
	assert_int_equal(b.file.mode, 04755);
	assert_int_equal(b.file.uid, 65534);
	assert_int_equal(b.file.gid, 4000000000u);
	assert_int_equal(b.file.mtime_ns, a.file.mtime_ns);
	assert_int_equal(b.file.ctime_ns, -1);
	assert_int_equal(b.file.target_len, GS_ATTR_TARGET_MAX);
	assert_memory_equal(b.file.target, a.file.target, GS_ATTR_TARGET_MAX);
	assert_int_equal(b.ctype_len, 10);
	assert_int_equal(gs_attr_file_get(buf, (size_t)n, &f), 1);
	assert_int_equal(f.mode, 04755);
	assert_string_equal(f.target, b.file.target);
	/* truncated anywhere in the block: refused, defaults */
	for (long cut = 29; cut < 80; cut += 7) {
		assert_int_equal(gs_attr_file_get(buf, (size_t)cut, &f),
				 -EBADMSG);
		assert_int_equal(f.mode, 0644);
		assert_int_equal(gs_attr_decode(buf, (size_t)cut, &b),
				 -EBADMSG);
	}
	/* the short way to a record of the block alone: the same bytes */
	{
		static uint8_t buf2[GS_ATTR_MAX];
		long n2;

		a.ctype_len = 0;
		n = gs_attr_encode(&a, buf, sizeof(buf));
		n2 = gs_attr_file_encode(&a.file, buf2, sizeof(buf2));
		assert_int_equal(n2, n);
		assert_memory_equal(buf2, buf, (size_t)n);
		assert_int_equal(gs_attr_file_encode(&a.file, buf2, 40),
				 -ENOSPC);
	}
	/* a kind that does not exist, a symlink without its target */
	a.file.kind = GS_KIND_MAX + 1;
	assert_int_equal(gs_attr_encode(&a, buf, sizeof(buf)), -EINVAL);
	a.file.kind = GS_KIND_SYMLINK;
	a.file.target_len = 0;
	n = gs_attr_encode(&a, buf, sizeof(buf));
	assert_int_equal(gs_attr_decode(buf, (size_t)n, &b), -EBADMSG);
	/* too long a target */
	a.file.target_len = GS_ATTR_TARGET_MAX + 1;
	assert_int_equal(gs_attr_encode(&a, buf, sizeof(buf)), -EMSGSIZE);
	/* no block: a regular file, and version 2 as before */
	gs_attr_init(&a);
	n = gs_attr_encode(&a, buf, sizeof(buf));
	assert_int_equal(buf[0], GS_ATTR_VERSION);
	assert_int_equal(gs_attr_kind(buf, (size_t)n), GS_KIND_FILE);
	assert_int_equal(gs_attr_file_get(buf, (size_t)n, &f), 0);
	assert_int_equal(gs_attr_kind(NULL, 0), GS_KIND_FILE);
	/* the whole record still fits GS_ATTR_MAX with a block */
	full(&a);
	a.flags |= GS_ATTR_FILE;
	a.file.kind = GS_KIND_FIFO;
	assert_int_equal(gs_attr_encode(&a, buf, sizeof(buf)), -EMSGSIZE);
	a.headers_len -= 47;
	assert_int_equal(gs_attr_encode(&a, buf, sizeof(buf)), GS_ATTR_MAX);
	assert_int_equal(gs_attr_kind(buf, GS_ATTR_MAX), GS_KIND_FIFO);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_empty_is_default),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_issue17_version1_decodes),
		cmocka_unit_test(test_issue17_goblinfs_text_decodes),
		cmocka_unit_test(test_issue17_bad_text_refused),
		cmocka_unit_test(test_issue18_header_block_32k),
		cmocka_unit_test(test_issue20_file_block),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
