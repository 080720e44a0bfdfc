/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the HTTP semantics module (netd/http_sem.c): the three
 * HTTP-date formats and broken dates, every Range shape and the hostile
 * ones, entity-tag lists, the §13.2.2 precedence of preconditions,
 * If-Range, Cache-Control, and the shared-cache store and freshness rules.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "http_sem.h"

/* ---- dates ---- */

static int64_t date_ok(const char *s)
{
	int64_t t = 12345;

	if (http_date_parse(s, strlen(s), &t) != 0)
		fail_msg("'%s' refused", s);
	return t;
}

static void date_bad(const char *s)
{
	int64_t t = 12345;

	if (http_date_parse(s, strlen(s), &t) == 0)
		fail_msg("'%s' accepted as %lld", s, (long long)t);
	assert_int_equal(t, 12345);
}

static void test_date_formats(void **state)
{
	(void)state;
	/* the RFC 9110 §5.6.7 example in its three forms */
	assert_int_equal(date_ok("Sun, 06 Nov 1994 08:49:37 GMT"), 784111777);
	assert_int_equal(date_ok("Sunday, 06-Nov-94 08:49:37 GMT"), 784111777);
	assert_int_equal(date_ok("Sun Nov  6 08:49:37 1994"), 784111777);
	assert_int_equal(date_ok("Sun Nov 06 08:49:37 1994"), 784111777);
	/* OWS around the value, names in another case */
	assert_int_equal(date_ok(" \tSun, 06 Nov 1994 08:49:37 GMT "),
			 784111777);
	assert_int_equal(date_ok("sun, 06 nov 1994 08:49:37 gmt"), 784111777);
	/* RFC 850 two-digit years: 70-99 are 19xx, 00-69 20xx */
	assert_int_equal(date_ok("Thursday, 01-Jan-70 00:00:00 GMT"), 0);
	assert_int_equal(date_ok("Tuesday, 31-Dec-69 00:00:00 GMT"),
			 3155673600);
	/* the epoch, before it, 2038 and beyond 32 bits */
	assert_int_equal(date_ok("Thu, 01 Jan 1970 00:00:00 GMT"), 0);
	assert_int_equal(date_ok("Wed, 31 Dec 1969 23:59:59 GMT"), -1);
	assert_int_equal(date_ok("Tue, 19 Jan 2038 03:14:08 GMT"), 2147483648);
	assert_int_equal(date_ok("Sun, 07 Feb 2106 06:28:16 GMT"), 4294967296);
	assert_int_equal(date_ok("Fri, 31 Dec 9999 23:59:59 GMT"),
			 253402300799);
	assert_int_equal(date_ok("Mon, 01 Jan 1601 00:00:00 GMT"),
			 -11644473600);
	/* leap years */
	assert_int_equal(date_ok("Thu, 29 Feb 2024 00:00:00 GMT"), 1709164800);
	assert_int_equal(date_ok("Tue, 29 Feb 2000 00:00:00 GMT"), 951782400);
	date_bad("Wed, 29 Feb 2023 00:00:00 GMT");
	date_bad("Thu, 29 Feb 1900 00:00:00 GMT");
	date_bad("Thu Feb 29 00:00:00 2100");
	/* a leap second counts as the next minute's first */
	assert_int_equal(date_ok("Sat, 31 Dec 2016 23:59:60 GMT"),
			 date_ok("Sun, 01 Jan 2017 00:00:00 GMT"));
}

static void test_date_malformed(void **state)
{
	static const char *const bad[] = {
		"",
		" ",
		"garbage",
		"0",
		"784111777",
		/* truncated, a byte at a time from the end */
		"Sun, 06 Nov 1994 08:49:37 GM",
		"Sun, 06 Nov 1994 08:49:37",
		"Sun, 06 Nov 1994 08:49",
		"Sun, 06 Nov 1994",
		"Sun, 06 Nov",
		"Sun,",
		"Sun",
		"Sunday, 06-Nov-94 08:49:37",
		"Sun Nov  6 08:49:37 199",
		"Sun Nov  6 08:49:37",
		/* out of range fields */
		"Sun, 00 Nov 1994 08:49:37 GMT",
		"Sun, 31 Nov 1994 08:49:37 GMT",
		"Sun, 32 Jan 1994 08:49:37 GMT",
		"Sun, 06 Nov 1994 24:00:00 GMT",
		"Sun, 06 Nov 1994 08:60:00 GMT",
		"Sun, 06 Nov 1994 08:49:61 GMT",
		"Sun, 06 Foo 1994 08:49:37 GMT",
		"Sun Nov 36 08:49:37 1994",
		/* wrong widths and separators */
		"Sun, 6 Nov 1994 08:49:37 GMT",
		"Sun, 06 Nov 94 08:49:37 GMT",
		"Sun, 06 Nov 19945 08:49:37 GMT",
		"Sun, 06 Nov 1994 8:49:37 GMT",
		"Sun, 06-Nov-1994 08:49:37 GMT",
		"Sun 06 Nov 1994 08:49:37 GMT",
		"Sun,  06 Nov 1994 08:49:37 GMT",
		"Sunday, 06 Nov 1994 08:49:37 GMT",
		"Sunday, 06-Nov-1994 08:49:37 GMT",
		"Sun Nov   6 08:49:37 1994",
		"Sun Nov 6 08:49:37 1994",
		"Sun, 06 Nov 1994 08:49:37 UTC",
		"Sun, 06 Nov 1994 08:49:37 GMT+1",
		"Sun, 06 Nov 1994 08:49:37 GMTx",
		"Sun, 06 Nov 1994 08:49:37 GMT, x",
		"Son, 06 Nov 1994 08:49:37 GMT",
		"Sun, +6 Nov 1994 08:49:37 GMT",
		"Sun, 06 Nov -994 08:49:37 GMT",
		"Sun, 06 Nov 1994 08:49:3a GMT",
	};
	int64_t t;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		date_bad(bad[i]);
	/* the length is the end: a NUL-free buffer is never read past it */
	assert_int_equal(
		http_date_parse("Sun, 06 Nov 1994 08:49:37 GMTZZ", 29, &t), 0);
	assert_int_equal(t, 784111777);
	assert_int_not_equal(
		http_date_parse("Sun, 06 Nov 1994 08:49:37 GMT", 28, &t), 0);
	/* an embedded NUL is garbage */
	assert_int_not_equal(
		http_date_parse("Sun, 06 Nov\0 1994 08:49:37 GMT", 30, &t), 0);
}

static void test_date_format(void **state)
{
	char out[HTTP_DATE_LEN + 1];
	int64_t t;

	(void)state;
	memset(out, 'x', sizeof(out));
	http_date_format(784111777, out);
	assert_string_equal(out, "Sun, 06 Nov 1994 08:49:37 GMT");
	http_date_format(0, out);
	assert_string_equal(out, "Thu, 01 Jan 1970 00:00:00 GMT");
	http_date_format(-1, out);
	assert_string_equal(out, "Wed, 31 Dec 1969 23:59:59 GMT");
	http_date_format(2147483648, out);
	assert_string_equal(out, "Tue, 19 Jan 2038 03:14:08 GMT");
	http_date_format(1709164800, out);
	assert_string_equal(out, "Thu, 29 Feb 2024 00:00:00 GMT");
	/* what four digits of year cannot hold is clamped */
	http_date_format(INT64_MAX, out);
	assert_string_equal(out, "Fri, 31 Dec 9999 23:59:59 GMT");
	http_date_format(INT64_MIN, out);
	assert_string_equal(out, "Sat, 01 Jan 0000 00:00:00 GMT");
	assert_int_equal(strlen(out), HTTP_DATE_LEN);

	/* against libc's gmtime_r and back, over 1900-2200 */
	for (t = -2208988800; t < 7258118400; t += 86400 * 13 + 3607) {
		struct tm tm;
		char want[64];
		time_t tt = (time_t)t;
		int64_t back;

		gmtime_r(&tt, &tm);
		strftime(want, sizeof(want), "%a, %d %b %Y %H:%M:%S GMT", &tm);
		http_date_format(t, out);
		assert_string_equal(out, want);
		assert_int_equal(http_date_parse(out, strlen(out), &back), 0);
		assert_int_equal(back, t);
	}
}

/* ---- ranges ---- */

static struct http_range rg[HTTP_RANGES_MAX];
static unsigned nrg;

static enum http_range_result R(const char *s, uint64_t size)
{
	nrg = 999;
	return http_range_parse(s, strlen(s), size, rg, HTTP_RANGES_MAX, &nrg);
}

/* @s against @size gives the ranges in @want ("a-b a-b ...") */
static void range_ok(const char *s, uint64_t size, const char *want)
{
	char got[1024] = "";
	size_t off = 0;
	enum http_range_result r = R(s, size);

	if (r != HTTP_RANGE_OK)
		fail_msg("'%s' size %llu: result %d", s,
			 (unsigned long long)size, r);
	for (unsigned i = 0; i < nrg; i++)
		off += (size_t)snprintf(got + off, sizeof(got) - off,
					"%s%llu-%llu", i ? " " : "",
					(unsigned long long)rg[i].first,
					(unsigned long long)rg[i].last);
	if (strcmp(got, want))
		fail_msg("'%s' size %llu: got '%s', want '%s'", s,
			 (unsigned long long)size, got, want);
}

static void range_is(const char *s, uint64_t size, enum http_range_result want)
{
	enum http_range_result r = R(s, size);

	if (r != want)
		fail_msg("'%s' size %llu: result %d, want %d", s,
			 (unsigned long long)size, r, want);
	assert_int_equal(nrg, 0);
}

static void test_range_shapes(void **state)
{
	(void)state;
	range_ok("bytes=0-499", 10000, "0-499");
	range_ok("bytes=500-999", 10000, "500-999");
	range_ok("bytes=-500", 10000, "9500-9999");
	range_ok("bytes=9500-", 10000, "9500-9999");
	range_ok("bytes=0-0,-1", 10000, "0-0 9999-9999");
	range_ok("bytes=0-", 1, "0-0");
	range_ok("bytes=-1", 1, "0-0");
	/* last-pos past the end, suffix longer than the object: clipped */
	range_ok("bytes=0-99999", 100, "0-99");
	range_ok("bytes=-200", 100, "0-99");
	/* request order kept, overlaps kept when few */
	range_ok("bytes=500-600,0-10,550-700", 1000, "500-600 0-10 550-700");
	/* the unit is case-insensitive; OWS around commas and the value */
	range_ok("BYTES=1-2", 10, "1-2");
	range_ok("  bytes=1-2 , 4-5\t,\t7-  ", 10, "1-2 4-5 7-9");
	range_ok("bytes= 1-2", 10, "1-2");
	/* empty list elements are allowed */
	range_ok("bytes=,1-2,,3-4,", 10, "1-2 3-4");
	/* unsatisfiable ones are dropped */
	range_ok("bytes=5-9,10-20,-0,3-4", 10, "5-9 3-4");
}

static void test_range_unsatisfiable(void **state)
{
	(void)state;
	range_is("bytes=10-", 10, HTTP_RANGE_UNSATISFIABLE);
	range_is("bytes=10-20", 10, HTTP_RANGE_UNSATISFIABLE);
	range_is("bytes=-0", 10, HTTP_RANGE_UNSATISFIABLE);
	range_is("bytes=-0,100-", 10, HTTP_RANGE_UNSATISFIABLE);
	range_is("bytes=99999999999999999999-", 10, HTTP_RANGE_UNSATISFIABLE);
	range_is("bytes=18446744073709551615-", UINT64_MAX,
		 HTTP_RANGE_UNSATISFIABLE);
	/* an empty object: int-ranges cannot be satisfied ... */
	range_is("bytes=0-", 0, HTTP_RANGE_UNSATISFIABLE);
	range_is("bytes=0-0", 0, HTTP_RANGE_UNSATISFIABLE);
	/* ... and a suffix one gets the whole empty object */
	range_is("bytes=-5", 0, HTTP_RANGE_NONE);
	range_is("bytes=-0", 0, HTTP_RANGE_UNSATISFIABLE);
}

static void test_range_hostile(void **state)
{
	static const char *const ignored[] = {
		"",
		"bytes",
		"bytes=",
		"bytes=,",
		"bytes= , ,",
		"bytes=5-2",
		"bytes=-",
		"bytes=--5",
		"bytes=1-2-3",
		"bytes=a-b",
		"bytes=1",
		"bytes=1-2,x",
		"bytes=0x10-20",
		"bytes=+1-2",
		"bytes=1 -2",
		"bytes=1- 2",
		"bytes =1-2",
		"bytes=-1-2",
		"bytes=1-2;3-4",
		"items=0-5",
		"bites=0-5",
		"byte=0-5",
		"=0-5",
		"none",
		/* two Range lines joined by a proxy */
		"bytes=0-1, bytes=2-3",
		/* last-pos saturates but first-pos is bigger still */
		"bytes=99999999999999999999999-99999999999999999999",
		"bytes=1-2\r\n3-4",
	};
	char big[16384];
	size_t off;

	(void)state;
	for (size_t i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++)
		range_is(ignored[i], 100, HTTP_RANGE_NONE);
	/* huge numbers saturate and are resolved, not wrapped */
	range_ok("bytes=0-99999999999999999999", 100, "0-99");
	range_ok("bytes=-99999999999999999999", 100, "0-99");
	range_ok("bytes=0-18446744073709551615", UINT64_MAX,
		 "0-18446744073709551614");
	range_ok("bytes=-18446744073709551615", UINT64_MAX,
		 "0-18446744073709551614");
	range_ok("bytes=18446744073709551614-", UINT64_MAX,
		 "18446744073709551614-18446744073709551614");
	range_ok("bytes=5-5", 6, "5-5");

	/* exactly HTTP_RANGES_MAX disjoint ranges: served as asked */
	off = (size_t)snprintf(big, sizeof(big), "bytes=");
	for (int i = 0; i < HTTP_RANGES_MAX; i++)
		off += (size_t)snprintf(big + off, sizeof(big) - off, "%s%d-%d",
					i ? "," : "", 30 - 2 * i, 30 - 2 * i);
	assert_int_equal(R(big, 100), HTTP_RANGE_OK);
	assert_int_equal(nrg, HTTP_RANGES_MAX);
	assert_int_equal(rg[0].first, 30);
	/* one more, disjoint: the whole object */
	snprintf(big + off, sizeof(big) - off, ",90-90");
	range_is(big, 100, HTTP_RANGE_NONE);
	/* ... unless the extra ranges are dropped as unsatisfiable */
	snprintf(big + off, sizeof(big) - off, ",100-,200-300");
	assert_int_equal(R(big, 100), HTTP_RANGE_OK);
	assert_int_equal(nrg, HTTP_RANGES_MAX);

	/* 1000 disjoint ranges */
	off = (size_t)snprintf(big, sizeof(big), "bytes=");
	for (int i = 0; i < 1000; i++)
		off += (size_t)snprintf(big + off, sizeof(big) - off, "%s%d-%d",
					i ? "," : "", 2 * i, 2 * i);
	range_is(big, 100000, HTTP_RANGE_NONE);
	/* 1000 overlapping ones merge into their union, ascending */
	off = (size_t)snprintf(big, sizeof(big), "bytes=");
	for (int i = 0; i < 1000; i++)
		off += (size_t)snprintf(big + off, sizeof(big) - off, "%s%d-%d",
					i ? "," : "", 999 - i, 1000 - i);
	range_ok(big, 100000, "0-1000");
	/* more than max that touch: merged into a few, in ascending order */
	range_ok("bytes=50-59,0-0,1-1,2-2,3-3,4-4,5-5,6-6,7-7,8-8,9-9,10-10,"
		 "11-11,12-12,13-13,14-14,15-15,16-16,-10,20-",
		 100, "0-16 20-99");
	/* max 0: nothing fits */
	assert_int_equal(http_range_parse("bytes=0-1", 9, 10, rg, 0, &nrg),
			 HTTP_RANGE_NONE);
	assert_int_equal(nrg, 0);
	/* max 1, two ranges that are one after merging */
	assert_int_equal(http_range_parse("bytes=0-1,2-3", 13, 10, rg, 1, &nrg),
			 HTTP_RANGE_OK);
	assert_int_equal(nrg, 1);
	assert_int_equal(rg[0].first, 0);
	assert_int_equal(rg[0].last, 3);
	/* the length bounds the parse */
	assert_int_equal(http_range_parse("bytes=0-1,x", 9, 10, rg, 4, &nrg),
			 HTTP_RANGE_OK);
	assert_int_equal(nrg, 1);
}

/* ---- entity tags ---- */

static bool M(const char *list, const char *etag, bool weak)
{
	return http_etag_match(list, strlen(list), etag, strlen(etag), weak,
			       etag[0] != '\0');
}

static void test_etag(void **state)
{
	(void)state;
	/* RFC 9110 §8.8.3.2's table */
	assert_false(M("W/\"1\"", "W/\"1\"", false));
	assert_true(M("W/\"1\"", "W/\"1\"", true));
	assert_false(M("W/\"1\"", "W/\"2\"", false));
	assert_false(M("W/\"1\"", "W/\"2\"", true));
	assert_false(M("W/\"1\"", "\"1\"", false));
	assert_true(M("W/\"1\"", "\"1\"", true));
	assert_true(M("\"1\"", "\"1\"", false));
	assert_true(M("\"1\"", "\"1\"", true));
	assert_false(M("\"1\"", "W/\"1\"", false));
	/* lists, OWS, empty elements, commas inside tags */
	assert_true(M("\"a\", \"b\" ,\"c\"", "\"b\"", false));
	assert_true(M(" ,\"a\",,\t\"b\", ", "\"b\"", false));
	assert_false(M("\"a\", \"b\"", "\"c\"", true));
	assert_true(M("\"a,b\", \"c\"", "\"a,b\"", false));
	assert_false(M("\"a,b\", \"c\"", "\"a\"", true));
	/* opaque-tags compare byte for byte, case included */
	assert_false(M("\"ABC\"", "\"abc\"", true));
	assert_false(M("\"abc\"", "\"abc \"", true));
	assert_true(M("\"\"", "\"\"", false));
	/* "*" matches anything that exists */
	assert_true(M("*", "\"x\"", false));
	assert_true(M(" * ", "W/\"x\"", true));
	assert_false(http_etag_match("*", 1, "", 0, false, false));
	assert_true(http_etag_match("*", 1, "", 0, false, true));
	/* malformed lists match nothing, even before the damage */
	assert_false(M("\"a\", b", "\"a\"", true));
	assert_false(M("\"a\", *", "\"a\"", true));
	assert_false(M("*, \"a\"", "\"a\"", true));
	assert_false(M("a", "a", true));
	assert_false(M("\"a", "\"a", true));
	assert_false(M("w/\"a\"", "\"a\"", true));
	assert_false(M("W/ \"a\"", "\"a\"", true));
	assert_false(M("\"a\"\"b\"", "\"a\"", true));
	assert_false(M("\"a b\"", "\"a b\"", true));
	assert_false(M("\"a\" \"b\"", "\"a\"", true));
	assert_false(M("", "\"a\"", true));
	assert_false(M(",", "\"a\"", true));
	/* no current tag: only "*" can match */
	assert_false(http_etag_match("\"a\"", 3, "", 0, true, true));
	/* obs-text is allowed in a tag */
	assert_true(M("\"\xc3\xa9\"", "\"\xc3\xa9\"", false));
}

/* ---- preconditions ---- */

#define LM	 784111777 /* Sun, 06 Nov 1994 08:49:37 GMT */
#define D_LM	 "Sun, 06 Nov 1994 08:49:37 GMT"
#define D_BEFORE "Sun, 06 Nov 1994 08:49:36 GMT"
#define D_AFTER	 "Sunday, 06-Nov-94 08:49:38 GMT"
#define TAG	 "\"v1\""

static struct http_cond C(const char *im, const char *inm, const char *ims,
			  const char *ius) {
	struct http_cond c;

	memset(&c, 0, sizeof(c));
	c.if_match = im;
	c.if_match_len = im ? strlen(im) : 0;
	c.if_none_match = inm;
	c.if_none_match_len = inm ? strlen(inm) : 0;
	c.if_modified_since = ims;
	c.if_modified_since_len = ims ? strlen(ims) : 0;
	c.if_unmodified_since = ius;
	c.if_unmodified_since_len = ius ? strlen(ius) : 0;
	return c;
}

static enum http_cond_result
E(struct http_cond c, bool get)
{
	return http_cond_eval(&c, get, true, TAG, strlen(TAG), LM);
}

static void test_cond(void **state)
{
	struct http_cond c;

	(void)state;
	/* none */
	assert_int_equal(E(C(NULL, NULL, NULL, NULL), true), HTTP_COND_PASS);
	/* step 1: If-Match */
	assert_int_equal(E(C(TAG, NULL, NULL, NULL), false), HTTP_COND_PASS);
	assert_int_equal(E(C("*", NULL, NULL, NULL), false), HTTP_COND_PASS);
	assert_int_equal(E(C("\"v0\"", NULL, NULL, NULL), false),
			 HTTP_COND_FAILED);
	assert_int_equal(E(C("W/\"v1\"", NULL, NULL, NULL), true),
			 HTTP_COND_FAILED);
	assert_int_equal(E(C("\"v0\", \"v1\"", NULL, NULL, NULL), true),
			 HTTP_COND_PASS);
	/* step 2: If-Unmodified-Since, only without If-Match */
	assert_int_equal(E(C(NULL, NULL, NULL, D_LM), false), HTTP_COND_PASS);
	assert_int_equal(E(C(NULL, NULL, NULL, D_AFTER), false),
			 HTTP_COND_PASS);
	assert_int_equal(E(C(NULL, NULL, NULL, D_BEFORE), false),
			 HTTP_COND_FAILED);
	assert_int_equal(E(C(TAG, NULL, NULL, D_BEFORE), false),
			 HTTP_COND_PASS);
	assert_int_equal(E(C(NULL, NULL, NULL, "yesterday"), false),
			 HTTP_COND_PASS);
	/* step 3: If-None-Match, weak comparison */
	assert_int_equal(E(C(NULL, TAG, NULL, NULL), true),
			 HTTP_COND_NOT_MODIFIED);
	assert_int_equal(E(C(NULL, "W/\"v1\"", NULL, NULL), true),
			 HTTP_COND_NOT_MODIFIED);
	assert_int_equal(E(C(NULL, "*", NULL, NULL), true),
			 HTTP_COND_NOT_MODIFIED);
	assert_int_equal(E(C(NULL, TAG, NULL, NULL), false), HTTP_COND_FAILED);
	assert_int_equal(E(C(NULL, "*", NULL, NULL), false), HTTP_COND_FAILED);
	assert_int_equal(E(C(NULL, "\"v0\"", NULL, NULL), true),
			 HTTP_COND_PASS);
	/* step 4: If-Modified-Since, only GET/HEAD without If-None-Match */
	assert_int_equal(E(C(NULL, NULL, D_LM, NULL), true),
			 HTTP_COND_NOT_MODIFIED);
	assert_int_equal(E(C(NULL, NULL, D_AFTER, NULL), true),
			 HTTP_COND_NOT_MODIFIED);
	assert_int_equal(E(C(NULL, NULL, D_BEFORE, NULL), true),
			 HTTP_COND_PASS);
	assert_int_equal(E(C(NULL, NULL, D_LM, NULL), false), HTTP_COND_PASS);
	assert_int_equal(E(C(NULL, "\"v0\"", D_LM, NULL), true),
			 HTTP_COND_PASS);
	assert_int_equal(E(C(NULL, NULL, "Sun, 06 Nov 1994", NULL), true),
			 HTTP_COND_PASS);
	/* precedence: If-Match failing wins over a matching If-None-Match */
	assert_int_equal(E(C("\"v0\"", TAG, NULL, NULL), true),
			 HTTP_COND_FAILED);
	/* If-Unmodified-Since failing wins over If-Modified-Since */
	assert_int_equal(E(C(NULL, NULL, D_LM, D_BEFORE), true),
			 HTTP_COND_FAILED);
	/* If-Match passing, then If-None-Match decides */
	assert_int_equal(E(C(TAG, TAG, NULL, NULL), true),
			 HTTP_COND_NOT_MODIFIED);
	/* unknown modification time: the dates are ignored */
	c = C(NULL, NULL, D_AFTER, D_BEFORE);
	assert_int_equal(http_cond_eval(&c, true, true, TAG, 4, 0),
			 HTTP_COND_PASS);
	/* nothing there: PUT with If-None-Match: * creates ... */
	c = C(NULL, "*", NULL, NULL);
	assert_int_equal(http_cond_eval(&c, false, false, "", 0, 0),
			 HTTP_COND_PASS);
	/* ... If-Match: * fails ... */
	c = C("*", NULL, NULL, NULL);
	assert_int_equal(http_cond_eval(&c, false, false, "", 0, 0),
			 HTTP_COND_FAILED);
	/* ... and a GET is a 404 whatever it asks (§13.2.1) */
	assert_int_equal(http_cond_eval(&c, true, false, "", 0, 0),
			 HTTP_COND_PASS);
	/* exists without a tag: If-Match: * passes, a tag does not */
	assert_int_equal(http_cond_eval(&c, false, true, "", 0, LM),
			 HTTP_COND_PASS);
	c = C(TAG, NULL, NULL, NULL);
	assert_int_equal(http_cond_eval(&c, false, true, "", 0, LM),
			 HTTP_COND_FAILED);
}

static bool IR(const char *s, const char *etag, int64_t lm)
{
	return http_if_range(s, strlen(s), etag, strlen(etag), lm);
}

static void test_if_range(void **state)
{
	(void)state;
	assert_true(IR(TAG, TAG, LM));
	assert_true(IR(" " TAG " ", TAG, LM));
	assert_false(IR("\"v0\"", TAG, LM));
	assert_false(IR("W/\"v1\"", TAG, LM));
	assert_false(IR(TAG, "W/\"v1\"", LM));
	assert_false(IR(TAG, "", LM));
	assert_false(IR("\"v1\", \"v2\"", TAG, LM));
	assert_false(IR("*", TAG, LM));
	assert_true(IR(D_LM, TAG, LM));
	assert_true(IR("Sun Nov  6 08:49:37 1994", TAG, LM));
	assert_true(IR("Wed, 31 Dec 1969 23:59:59 GMT", TAG, -1));
	assert_false(IR(D_BEFORE, TAG, LM));
	assert_false(IR(D_AFTER, TAG, LM));
	assert_false(IR(D_LM, TAG, 0));
	assert_false(IR("garbage", TAG, LM));
	assert_false(IR("", TAG, LM));
	assert_false(IR("W/", TAG, LM));
}

/* ---- Cache-Control ---- */

static struct http_cc CC(const char *s) {
	struct http_cc cc;

	http_cc_init(&cc);
	http_cc_parse(&cc, s, strlen(s));
	return cc;
}

static void
test_cc(void **state)
{
	struct http_cc cc;

	(void)state;
	cc = CC("");
	assert_false(cc.no_store || cc.no_cache || cc.private_ || cc.public_ ||
		     cc.must_revalidate || cc.proxy_revalidate ||
		     cc.immutable || cc.only_if_cached || cc.bad);
	assert_int_equal(cc.max_age, -1);
	assert_int_equal(cc.s_maxage, -1);
	assert_int_equal(cc.max_stale, -1);
	assert_int_equal(cc.min_fresh, -1);

	cc = CC("no-store, no-cache, private, public, must-revalidate, "
		"proxy-revalidate, immutable, only-if-cached");
	assert_true(cc.no_store && cc.no_cache && cc.private_ && cc.public_ &&
		    cc.must_revalidate && cc.proxy_revalidate && cc.immutable &&
		    cc.only_if_cached);
	assert_false(cc.bad);

	cc = CC("max-age=60, s-maxage=120, max-stale=5, min-fresh=7");
	assert_int_equal(cc.max_age, 60);
	assert_int_equal(cc.s_maxage, 120);
	assert_int_equal(cc.max_stale, 5);
	assert_int_equal(cc.min_fresh, 7);

	/* case-insensitive names, OWS, empty elements, unknown ignored */
	cc = CC(" ,MAX-AGE=60 ,, No-Cache\t, x-foo=\"a, max-age=1\", bar ");
	assert_int_equal(cc.max_age, 60);
	assert_true(cc.no_cache);
	assert_false(cc.bad);
	assert_false(cc.no_store);

	/* quoted arguments: accepted for delta-seconds; no-cache's field
	 * names (issue 18) only for those fields, private's for the whole */
	cc = CC("max-age=\"30\", no-cache=\"Set-Cookie, X-Foo\", "
		"private=\"Authorization\"");
	assert_int_equal(cc.max_age, 30);
	assert_false(cc.no_cache);
	assert_true(cc.no_cache_fields);
	assert_true(cc.private_);
	assert_false(cc.bad);
	cc = CC("no-cache, no-cache=a");
	assert_true(cc.no_cache);
	assert_true(cc.no_cache_fields);
	cc = CC("max-age=\"3\\0\"");
	assert_int_equal(cc.max_age, 30);

	/* max-stale without a value: any staleness */
	cc = CC("max-stale");
	assert_int_equal(cc.max_stale, 2147483648);

	/* huge values clamp to 2^31 */
	cc = CC("max-age=99999999999999999999999999");
	assert_int_equal(cc.max_age, 2147483648);
	assert_false(cc.bad);
	cc = CC("s-maxage=2147483647");
	assert_int_equal(cc.s_maxage, 2147483647);
	cc = CC("s-maxage=2147483649");
	assert_int_equal(cc.s_maxage, 2147483648);
}

static void test_cc_bad(void **state)
{
	static const char *const bad[] = {
		"max-age=",    "max-age",      "max-age=-1",	  "max-age=1.5",
		"max-age=abc", "max-age=0x10", "max-age=\"\"",	  "max-age=\"6",
		"max-age=+5",  "max-age=5 6",  "max-age=\"5\" x",
	};
	struct http_cc cc;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cc = CC(bad[i]);
		if (!cc.bad || cc.max_age != 0)
			fail_msg("'%s': bad %d max-age %lld", bad[i], cc.bad,
				 (long long)cc.max_age);
	}
	cc = CC("s-maxage=x, min-fresh=, max-stale=-3");
	assert_true(cc.bad);
	assert_int_equal(cc.s_maxage, 0);
	assert_int_equal(cc.min_fresh, 0);
	assert_int_equal(cc.max_stale, 0);
	/* issue 18: no OWS around '=' (RFC 9111 §5.2): an invalid value */
	cc = CC("max-age = 5");
	assert_true(cc.bad);
	assert_int_equal(cc.max_age, 0);
	cc = CC("max-age =5");
	assert_true(cc.bad);
	assert_int_equal(cc.max_age, 0);
	cc = CC("max-age= 5, s-maxage\t=9");
	assert_int_equal(cc.max_age, 0);
	assert_int_equal(cc.s_maxage, 0);
	cc = CC("max-age=5 , s-maxage=9"); /* OWS before the comma is fine */
	assert_false(cc.bad);
	assert_int_equal(cc.max_age, 5);
	assert_int_equal(cc.s_maxage, 9);
	/* a name that is not a token, or no '=': not a directive */
	cc = CC("max-age 5, \"no-store\", (x)=1, =5");
	assert_false(cc.bad);
	assert_false(cc.no_store);
	assert_int_equal(cc.max_age, -1);
}

static void test_cc_duplicates(void **state)
{
	struct http_cc cc;

	(void)state;
	/* the same value twice: that value */
	cc = CC("max-age=60, max-age=60");
	assert_int_equal(cc.max_age, 60);
	/* conflicting max-age / s-maxage: the first (RFC 9111 §4.2.1) */
	cc = CC("max-age=60, max-age=120");
	assert_int_equal(cc.max_age, 60);
	cc = CC("s-maxage=60");
	http_cc_parse(&cc, "s-maxage=5", 10); /* a second header line */
	assert_int_equal(cc.s_maxage, 60);
	/* ... an invalid first one is stale, whatever follows */
	cc = CC("max-age=1.5, max-age=120");
	assert_int_equal(cc.max_age, 0);
	assert_true(cc.bad);
	/* the stricter of request max-stale and min-fresh */
	cc = CC("max-stale=60, max-stale=10, min-fresh=5, min-fresh=50");
	assert_int_equal(cc.max_stale, 10);
	assert_int_equal(cc.min_fresh, 50);
	/* lines add up */
	cc = CC("no-store");
	http_cc_parse(&cc, "max-age=9", 9);
	assert_true(cc.no_store);
	assert_int_equal(cc.max_age, 9);
	/* the length bounds the parse */
	http_cc_init(&cc);
	http_cc_parse(&cc, "max-age=12345", 10);
	assert_int_equal(cc.max_age, 12);
}

/* ---- store decision and freshness ---- */

#define T0 1700000000 /* request time */

static struct http_req_info q;
static struct http_resp_info r;
static struct http_store_decision d;

static int setup_store(void **state)
{
	(void)state;
	memset(&q, 0, sizeof(q));
	http_cc_init(&q.cc);
	http_resp_info_init(&r);
	r.status = 200;
	r.date = T0;
	r.has_validator = true;
	r.last_modified = T0 - 10000;
	memset(&d, 0xa5, sizeof(d));
	return 0;
}

static void decide(void)
{
	http_store_decide(&q, &r, T0, T0, &d);
}

static void why(enum http_store_why w)
{
	decide();
	if (d.why != w)
		fail_msg("why '%s', want '%s'", http_store_strwhy(d.why),
			 http_store_strwhy(w));
}

static void test_resp_init(void **state)
{
	(void)state;
	memset(&r, 0xa5, sizeof(r));
	http_resp_info_init(&r);
	assert_int_equal(r.expires, -1);
	assert_int_equal(r.age, -1);
	assert_int_equal(r.date, 0);
	assert_int_equal(r.last_modified, 0);
	assert_int_equal(r.cc.max_age, -1);
	assert_false(r.has_vary || r.vary_star || r.has_validator ||
		     r.age_invalid || r.cc.bad);
}

static void test_store_why(void **state)
{
	(void)state;
	why(HTTP_STORE_OK);
	assert_true(d.heuristic);
	assert_int_equal(d.fresh_until, T0 + 1000);

	r.status = 206;
	why(HTTP_STORE_STATUS);
	r.status = 302;
	why(HTTP_STORE_STATUS);
	r.status = 304;
	why(HTTP_STORE_STATUS);
	r.status = 200;

	r.cc.no_store = true;
	why(HTTP_STORE_NO_STORE);
	r.cc.no_store = false;
	q.cc.no_store = true;
	why(HTTP_STORE_NO_STORE);
	q.cc.no_store = false;

	r.cc.private_ = true;
	why(HTTP_STORE_PRIVATE);
	r.cc.public_ = true; /* private wins */
	why(HTTP_STORE_PRIVATE);
	r.cc.private_ = r.cc.public_ = false;

	/* §3.5 */
	q.authorization = true;
	why(HTTP_STORE_AUTH);
	r.cc.max_age = 60;
	why(HTTP_STORE_AUTH);
	r.cc.public_ = true;
	why(HTTP_STORE_OK);
	r.cc.public_ = false;
	r.cc.s_maxage = 60;
	why(HTTP_STORE_OK);
	assert_true(d.must_revalidate);
	r.cc.s_maxage = -1;
	r.cc.must_revalidate = true;
	why(HTTP_STORE_OK);
	assert_true(d.must_revalidate);
	r.cc.must_revalidate = false;
	r.cc.proxy_revalidate = true; /* not one of §3.5's three */
	why(HTTP_STORE_AUTH);
	r.cc.proxy_revalidate = false;
	q.authorization = false;

	r.has_vary = true;
	why(HTTP_STORE_VARY);
	r.has_vary = false;
	r.vary_star = true;
	why(HTTP_STORE_VARY);
	r.vary_star = false;

	/* no lifetime possible and nothing to revalidate with */
	r.cc.max_age = -1;
	r.last_modified = 0;
	r.has_validator = false;
	why(HTTP_STORE_NO_FRESHNESS);
	/* an ETag alone: stored, revalidated on every use */
	r.has_validator = true;
	why(HTTP_STORE_OK);
	assert_true(d.revalidate_always);
	assert_false(d.heuristic);
	assert_int_equal(d.fresh_until, T0);
	/* an explicit lifetime needs no validator */
	r.has_validator = false;
	r.cc.max_age = 0;
	why(HTTP_STORE_OK);
	assert_false(d.revalidate_always);

	/* strings */
	for (int w = HTTP_STORE_OK; w <= HTTP_STORE_NO_FRESHNESS; w++) {
		const char *s = http_store_strwhy((enum http_store_why)w);

		assert_non_null(s);
		assert_true(strlen(s) > 0);
		for (const char *p = s; *p; p++)
			assert_false(*p >= 'A' && *p <= 'Z');
	}
	assert_string_equal(http_store_strwhy((enum http_store_why)99),
			    "unknown");
}

static void test_store_lifetime(void **state)
{
	(void)state;
	/* s-maxage > max-age > Expires - Date > heuristic */
	r.expires = T0 + 500;
	why(HTTP_STORE_OK);
	assert_int_equal(d.fresh_until, T0 + 500);
	assert_false(d.heuristic);
	r.cc.max_age = 300;
	why(HTTP_STORE_OK);
	assert_int_equal(d.fresh_until, T0 + 300);
	r.cc.s_maxage = 100;
	why(HTTP_STORE_OK);
	assert_int_equal(d.fresh_until, T0 + 100);
	assert_true(d.must_revalidate);
	r.cc.s_maxage = r.cc.max_age = -1;

	/* Expires in the past or invalid: stale at once */
	r.expires = T0 - 500;
	why(HTTP_STORE_OK);
	assert_int_equal(d.fresh_until, T0);
	r.expires = 0;
	why(HTTP_STORE_OK);
	assert_int_equal(d.fresh_until, T0);
	assert_false(d.heuristic);
	/* Expires without Date: against the response time */
	r.expires = T0 + 70;
	r.date = 0;
	http_store_decide(&q, &r, T0 - 5, T0 + 10, &d);
	assert_int_equal(d.fresh_until, d.age_base + 60);
	r.expires = -1;
	r.date = T0;

	/* an invalid max-age is stale, not absent */
	http_cc_parse(&r.cc, "max-age=soon", 12);
	why(HTTP_STORE_OK);
	assert_int_equal(d.fresh_until, T0);
	assert_false(d.heuristic);
	http_cc_init(&r.cc);

	/* heuristic: 10% of Date - Last-Modified, at most a day */
	r.last_modified = T0 - 1000;
	why(HTTP_STORE_OK);
	assert_true(d.heuristic);
	assert_int_equal(d.fresh_until, T0 + 100);
	r.last_modified = T0 - 10 * 86400 * 10;
	why(HTTP_STORE_OK);
	assert_int_equal(d.fresh_until, T0 + 86400);
	/* Last-Modified in the future: no heuristic lifetime */
	r.last_modified = T0 + 1000;
	why(HTTP_STORE_OK);
	assert_int_equal(d.fresh_until, T0);
	r.last_modified = T0 - 1000;

	/* never with no-cache (Pragma has no say: test_issue18_pragma) */
	r.cc.no_cache = true;
	why(HTTP_STORE_OK);
	assert_false(d.heuristic);
	assert_true(d.revalidate_always);
	r.cc.no_cache = false;
	r.cc.public_ = true;
	why(HTTP_STORE_OK);
	assert_true(d.heuristic);
	assert_false(d.revalidate_always);
	r.cc.public_ = false;

	/* no-cache with a lifetime: stored, revalidated on each use */
	r.cc.no_cache = true;
	r.cc.max_age = 600;
	why(HTTP_STORE_OK);
	assert_true(d.revalidate_always);
	/* ... and without a validator or lifetime: nothing to keep */
	r.cc.max_age = -1;
	r.has_validator = false;
	why(HTTP_STORE_NO_FRESHNESS);

	/* huge lifetimes saturate, never wrap */
	http_cc_init(&r.cc);
	r.has_validator = true;
	r.expires = INT64_MAX;
	r.date = INT64_MIN;
	http_store_decide(&q, &r, INT64_MAX, INT64_MAX, &d);
	assert_int_equal(d.why, HTTP_STORE_OK);
	assert_true(d.fresh_until >= d.age_base);
}

/* RFC 9111 sec. 3 and 4.2.2, RFC 9110 sec. 15.1 */
static void test_issue18_statuses(void **state)
{
	static const int heuristic[] = { 200, 203, 204, 300, 301, 308,
					 404, 405, 410, 414, 501 };
	static const int other[] = { 201, 202, 205, 302, 303, 307, 400, 401,
				     403, 409, 500, 502, 503, 504, 599, 999 };
	struct http_policy pol = { .heuristic_pct = 25, .heuristic_max = 200 };

	(void)state;
	/* heuristically cacheable: stored with Last-Modified alone */
	for (size_t i = 0; i < sizeof(heuristic) / sizeof(heuristic[0]); i++) {
		r.status = heuristic[i];
		why(HTTP_STORE_OK);
		assert_true(d.heuristic);
		assert_int_equal(d.fresh_until, T0 + 1000);
		assert_true(http_status_heuristic(heuristic[i]));
	}
	for (size_t i = 0; i < sizeof(other) / sizeof(other[0]); i++) {
		r.status = other[i];
		assert_false(http_status_heuristic(other[i]));
		/* not without explicit freshness, though it has a validator */
		why(HTTP_STORE_STATUS);
		/* with max-age, s-maxage or Expires: stored, no heuristic */
		r.cc.max_age = 60;
		why(HTTP_STORE_OK);
		assert_false(d.heuristic);
		assert_int_equal(d.fresh_until, T0 + 60);
		r.cc.max_age = -1;
		r.cc.s_maxage = 30;
		why(HTTP_STORE_OK);
		assert_int_equal(d.fresh_until, T0 + 30);
		r.cc.s_maxage = -1;
		r.expires = T0 + 90;
		why(HTTP_STORE_OK);
		assert_int_equal(d.fresh_until, T0 + 90);
		r.expires = 0; /* invalid: present, and stale */
		why(HTTP_STORE_OK);
		assert_int_equal(d.fresh_until, T0);
		r.expires = -1;
		/* public: stored, and a heuristic is allowed (sec. 4.2.2) */
		r.cc.public_ = true;
		why(HTTP_STORE_OK);
		assert_true(d.heuristic);
		r.cc.public_ = false;
	}
	/* 206 and 304 are never stored, whatever they say; nor 1xx */
	r.cc.max_age = 60;
	r.cc.public_ = true;
	r.status = 206;
	why(HTTP_STORE_STATUS);
	r.status = 304;
	why(HTTP_STORE_STATUS);
	r.status = 100;
	why(HTTP_STORE_STATUS);
	http_cc_init(&r.cc);

	/* the policy: a percent, capped; 0 percent: no heuristic */
	r.status = 404;
	r.last_modified = T0 - 400;
	http_store_decide_policy(&q, &r, &pol, T0, T0, &d);
	assert_int_equal(d.why, HTTP_STORE_OK);
	assert_true(d.heuristic);
	assert_int_equal(d.fresh_until, T0 + 100);
	r.last_modified = T0 - 4000;
	http_store_decide_policy(&q, &r, &pol, T0, T0, &d);
	assert_int_equal(d.fresh_until, T0 + 200);
	pol.heuristic_pct = 100;
	pol.heuristic_max = INT64_MAX;
	r.last_modified = INT64_MIN;
	http_store_decide_policy(&q, &r, &pol, T0, T0, &d);
	assert_true(d.fresh_until > T0); /* saturated, not wrapped */
	r.last_modified = T0 - 4000;
	pol.heuristic_pct = 0;
	http_store_decide_policy(&q, &r, &pol, T0, T0, &d);
	assert_int_equal(d.why, HTTP_STORE_OK); /* it has a validator */
	assert_false(d.heuristic);
	assert_true(d.revalidate_always);
	r.has_validator = false;
	http_store_decide_policy(&q, &r, &pol, T0, T0, &d);
	assert_int_equal(d.why, HTTP_STORE_NO_FRESHNESS);
}

/* issue 18: Age (RFC 9111 §5.1) and Expires (§5.3) as header lines */
static void test_issue18_age_expires_parse(void **state)
{
	static const struct {
		const char *v;
		int64_t age; /* -1: invalid */
	} ages[] = {
		{ "0", 0 },
		{ "7200", 7200 },
		{ " 30 ", 30 },
		{ "0,7200", 0 },
		{ "7200, 0", 7200 },
		{ ", 5", 5 },
		{ "abc", -1 },
		{ "-7200", -1 },
		{ "7200.0", -1 },
		{ "7200;foo=1", -1 },
		{ "", -1 },
		{ "+5", -1 },
		{ "1e3", -1 },
		{ "\"5\"", -1 },
		{ "99999999999999999999", 2147483648 },
	};
	static const char *const bad_dates[] = {
		"0",
		"-1",
		"Thu, 18 Aug 2050 02:01:18 UTC",
		"Thu, 18 Aug 2050 02:01:18 AEST",
		"Thu 18 Aug 2050 02:01:18 GMT",
		"Thu, 18-Aug-2050 02:01:18 GMT",
		"Thu, 18 Aug 2050 02.01.18 GMT",
		"Thu, 18 Aug 2050 2:01:18 GMT",
		"Tue 19 Jan 2038 14:14:08 GMT",
		"",
		"tomorrow",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(ages) / sizeof(ages[0]); i++) {
		http_resp_info_init(&r);
		http_resp_age(&r, ages[i].v, strlen(ages[i].v));
		if (ages[i].age < 0 ? !r.age_invalid || r.age != -1 :
				      r.age_invalid || r.age != ages[i].age)
			fail_msg("Age '%s': %lld invalid %d", ages[i].v,
				 (long long)r.age, r.age_invalid);
	}
	/* the first line counts, later ones are discarded */
	http_resp_info_init(&r);
	http_resp_age(&r, "7200", 4);
	http_resp_age(&r, "0", 1);
	assert_int_equal(r.age, 7200);
	http_resp_info_init(&r);
	http_resp_age(&r, "x", 1);
	http_resp_age(&r, "0", 1);
	assert_true(r.age_invalid);
	/* an invalid Age makes a fresh response stale; a valid one ages it */
	setup_store(NULL);
	r.cc.max_age = 3600;
	http_resp_age(&r, "abc", 3);
	decide();
	assert_int_equal(d.why, HTTP_STORE_OK);
	assert_true(d.fresh_until <= T0);
	setup_store(NULL);
	r.cc.max_age = 3600;
	http_resp_age(&r, "0, 0", 4);
	decide();
	assert_int_equal(d.fresh_until, T0 + 3600);

	/* every invalid Expires is already expired (0) */
	for (size_t i = 0; i < sizeof(bad_dates) / sizeof(bad_dates[0]); i++) {
		http_resp_info_init(&r);
		http_resp_expires(&r, bad_dates[i], strlen(bad_dates[i]));
		if (r.expires != 0)
			fail_msg("Expires '%s': %lld", bad_dates[i],
				 (long long)r.expires);
	}
	/* the three formats are dates; the first line counts */
	http_resp_info_init(&r);
	http_resp_expires(&r, "Thu, 18 Aug 2050 02:01:18 GMT", 29);
	assert_int_equal(r.expires, 2544400878);
	http_resp_expires(&r, "Fri, 19 Aug 2050 02:01:18 GMT", 29);
	assert_int_equal(r.expires, 2544400878);
	http_resp_info_init(&r);
	http_resp_expires(&r, "Thursday, 18-Aug-50 02:01:18 GMT", 32);
	assert_int_equal(r.expires, 2544400878);
	http_resp_info_init(&r);
	http_resp_expires(&r, "Thu Aug 18 02:01:18 2050", 24);
	assert_int_equal(r.expires, 2544400878);
	/* an invalid first line is not rescued by a valid second */
	http_resp_info_init(&r);
	http_resp_expires(&r, "soon", 4);
	http_resp_expires(&r, "Thu, 18 Aug 2050 02:01:18 GMT", 29);
	assert_int_equal(r.expires, 0);
	/* ... and makes the response stale without max-age */
	setup_store(NULL);
	http_resp_expires(&r, "soon", 4);
	decide();
	assert_int_equal(d.why, HTTP_STORE_OK);
	assert_false(d.heuristic);
	assert_int_equal(d.fresh_until, T0);
}

/* issue 18: the fields no-cache="..." lists (RFC 9111 §5.2.2.4) */
static void test_issue18_no_cache_fields(void **state)
{
	static const char cc[] = "max-age=60, no-cache=\"Set-Cookie, x-a\", "
				 "private, no-cache=B";
	(void)state;
	assert_true(http_cc_names_field(cc, strlen(cc), "set-cookie", 10));
	assert_true(http_cc_names_field(cc, strlen(cc), "X-A", 3));
	assert_true(http_cc_names_field(cc, strlen(cc), "b", 1));
	assert_false(http_cc_names_field(cc, strlen(cc), "x", 1));
	assert_false(http_cc_names_field(cc, strlen(cc), "private", 7));
	assert_false(http_cc_names_field(cc, strlen(cc), "max-age", 7));
	/* private's list, an unqualified no-cache, OWS before '=': none */
	assert_false(http_cc_names_field("private=\"a\"", 11, "a", 1));
	assert_false(http_cc_names_field("no-cache", 8, "no-cache", 8));
	assert_false(http_cc_names_field("no-cache =\"a\"", 13, "a", 1));
	/* the length bounds it */
	assert_false(http_cc_names_field(cc, 12, "set-cookie", 10));
}

/* issue 18: must-understand (RFC 9111 §5.2.2.3) */
static void test_issue18_must_understand(void **state)
{
	(void)state;
	r.cc = CC("max-age=3600, must-understand");
	assert_true(r.cc.must_understand);
	r.status = 599; /* not one this cache knows: not stored */
	why(HTTP_STORE_STATUS);
	r.status = 299;
	why(HTTP_STORE_STATUS);
	r.status = 200;
	why(HTTP_STORE_OK);
	/* understood: no-store beside it is ignored */
	r.cc = CC("max-age=3600, must-understand, no-store");
	why(HTTP_STORE_OK);
	r.status = 404;
	why(HTTP_STORE_OK);
	r.status = 599;
	why(HTTP_STORE_STATUS);
	/* without must-understand, 599 with max-age is stored */
	r.cc = CC("max-age=3600");
	why(HTTP_STORE_OK);
	r.cc = CC("max-age=3600, no-store");
	why(HTTP_STORE_NO_STORE);
	/* a request's no-store always counts */
	r.status = 200;
	r.cc = CC("max-age=3600, must-understand, no-store");
	q.cc.no_store = true;
	why(HTTP_STORE_NO_STORE);
}

static void test_store_age(void **state)
{
	(void)state;
	r.cc.max_age = 100;
	/* request at T0, response at T0 + 4, Date T0 + 2, no Age */
	r.date = T0 + 2;
	http_store_decide(&q, &r, T0, T0 + 4, &d);
	/* apparent 2, corrected 0 + 4: initial 4 */
	assert_int_equal(d.age_base, T0);
	assert_int_equal(d.fresh_until, T0 + 100);
	/* Age: 30 from upstream caches */
	r.age = 30;
	http_store_decide(&q, &r, T0, T0 + 4, &d);
	assert_int_equal(d.age_base, T0 + 4 - 34);
	assert_int_equal(d.fresh_until, T0 + 4 - 34 + 100);
	/* the origin clock is 50 s behind: apparent age wins */
	r.age = 10;
	r.date = T0 - 50;
	http_store_decide(&q, &r, T0, T0 + 1, &d);
	assert_int_equal(d.age_base, T0 - 50);
	/* the origin clock is ahead: apparent age is 0, not negative */
	r.age = -1;
	r.date = T0 + 3600;
	http_store_decide(&q, &r, T0, T0 + 1, &d);
	assert_int_equal(d.age_base, T0);
	/* a heuristic lifetime uses the Date too */
	r.cc.max_age = -1;
	r.last_modified = r.date - 1000;
	http_store_decide(&q, &r, T0, T0 + 1, &d);
	assert_true(d.heuristic);
	assert_int_equal(d.fresh_until, T0 + 100);
	/* a huge Age clamps to 2^31 */
	r.age = INT64_MAX;
	r.date = T0;
	http_store_decide(&q, &r, T0, T0, &d);
	assert_int_equal(d.age_base, T0 - 2147483648);
	/* a time-travelling response (before its request) has no delay */
	r.age = 0;
	http_store_decide(&q, &r, T0 + 100, T0, &d);
	assert_int_equal(d.age_base, T0);
	/* fresh_until is never 0, which means "always fresh" */
	r.last_modified = 0;
	r.cc.max_age = 0;
	r.date = 0;
	r.age = -1;
	http_store_decide(&q, &r, 0, 0, &d);
	assert_int_equal(d.why, HTTP_STORE_OK);
	assert_int_not_equal(d.fresh_until, 0);
}

static bool F(const char *qcc, int64_t now, bool rv, bool mr)
{
	struct http_cc cc;

	http_cc_init(&cc);
	http_cc_parse(&cc, qcc, strlen(qcc));
	/* age 0 at T0, fresh for 100 s */
	return http_fresh_for(&cc, T0 + 100, T0, rv, mr, now);
}

static void test_fresh_for(void **state)
{
	struct http_cc cc;

	(void)state;
	assert_true(F("", T0, false, false));
	assert_true(F("", T0 + 99, false, false));
	assert_false(F("", T0 + 100, false, false));
	/* a clock before the age base: age 0 */
	assert_true(F("", T0 - 1000, false, false));
	/* revalidate_always and request no-cache */
	assert_false(F("", T0, true, false));
	assert_false(F("no-cache", T0, false, false));
	/* max-age */
	assert_true(F("max-age=10", T0 + 10, false, false));
	assert_false(F("max-age=10", T0 + 11, false, false));
	assert_false(F("max-age=0", T0 + 1, false, false));
	assert_true(F("max-age=0", T0, false, false));
	/* min-fresh */
	assert_true(F("min-fresh=50", T0 + 50, false, false));
	assert_false(F("min-fresh=50", T0 + 51, false, false));
	assert_false(F("min-fresh=2147483648", T0, false, false));
	/* max-stale */
	assert_true(F("max-stale=20", T0 + 120, false, false));
	assert_false(F("max-stale=20", T0 + 121, false, false));
	assert_true(F("max-stale", T0 + 100000000, false, false));
	assert_false(F("max-stale", T0 + 101, false, true));
	assert_true(F("max-stale", T0 + 99, false, true));
	assert_false(F("max-stale=20, max-age=50", T0 + 110, false, false));
	assert_false(F("max-stale=20", T0 + 110, true, false));
	/* max-stale with min-fresh: min-fresh still wins */
	assert_false(F("max-stale=20, min-fresh=1", T0 + 110, false, false));
	/* always fresh: nothing to revalidate against */
	http_cc_init(&cc);
	cc.no_cache = true;
	cc.max_age = 0;
	assert_true(http_fresh_for(&cc, 0, 0, false, false, T0));
	/* extremes do not wrap */
	http_cc_init(&cc);
	assert_false(http_fresh_for(&cc, INT64_MIN, INT64_MAX, false, false,
				    INT64_MAX));
	assert_true(http_fresh_for(&cc, INT64_MAX, INT64_MIN, false, false,
				   INT64_MIN));
	cc.max_stale = 2147483648;
	assert_false(http_fresh_for(&cc, INT64_MIN + 1, INT64_MIN, false, false,
				    INT64_MAX));
}

/* the whole path: origin headers parsed, decided, then served */
static void test_end_to_end(void **state)
{
	const char *date = "Tue, 14 Nov 2023 22:13:20 GMT"; /* T0 */
	struct http_cc rq;
	int64_t t;

	(void)state;
	assert_int_equal(http_date_parse(date, strlen(date), &t), 0);
	assert_int_equal(t, T0);
	http_resp_info_init(&r);
	r.status = 200;
	r.date = t;
	r.age = 5;
	r.has_validator = true;
	http_cc_parse(&r.cc, "public, max-age=60", 18);
	http_store_decide(&q, &r, T0, T0 + 1, &d);
	assert_int_equal(d.why, HTTP_STORE_OK);
	assert_int_equal(d.age_base, T0 - 5);
	assert_int_equal(d.fresh_until, T0 + 55);
	http_cc_init(&rq);
	assert_true(http_fresh_for(&rq, d.fresh_until, d.age_base,
				   d.revalidate_always, d.must_revalidate,
				   T0 + 54));
	assert_false(http_fresh_for(&rq, d.fresh_until, d.age_base,
				    d.revalidate_always, d.must_revalidate,
				    T0 + 55));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_date_formats),
		cmocka_unit_test(test_date_malformed),
		cmocka_unit_test(test_date_format),
		cmocka_unit_test(test_range_shapes),
		cmocka_unit_test(test_range_unsatisfiable),
		cmocka_unit_test(test_range_hostile),
		cmocka_unit_test(test_etag),
		cmocka_unit_test(test_cond),
		cmocka_unit_test(test_if_range),
		cmocka_unit_test(test_cc),
		cmocka_unit_test(test_cc_bad),
		cmocka_unit_test(test_cc_duplicates),
		cmocka_unit_test(test_resp_init),
		cmocka_unit_test_setup(test_store_why, setup_store),
		cmocka_unit_test_setup(test_store_lifetime, setup_store),
		cmocka_unit_test_setup(test_store_age, setup_store),
		cmocka_unit_test_setup(test_issue18_statuses, setup_store),
		cmocka_unit_test_setup(test_issue18_age_expires_parse,
				       setup_store),
		cmocka_unit_test_setup(test_issue18_must_understand,
				       setup_store),
		cmocka_unit_test(test_issue18_no_cache_fields),
		cmocka_unit_test_setup(test_fresh_for, setup_store),
		cmocka_unit_test_setup(test_end_to_end, setup_store),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
