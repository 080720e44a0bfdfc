/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the staleness rules (store/origin/rfc9111.c): RFC 5861's
 * stale-while-revalidate and stale-if-error as parsed, a stored header
 * block's Cache-Control, and when a stale stored response may be served
 * (on an origin error, or while it is revalidated in the background);
 * Surrogate-Control as parsed and as it decides storage and freshness.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "origin.h"

static struct http_cc cc_of(const char *s)
{
	struct http_cc cc;

	http_cc_init(&cc);
	http_cc_parse(&cc, s, strlen(s));
	return cc;
}

static void test_parse(void **state)
{
	struct http_cc cc;

	(void)state;
	cc = cc_of("max-age=1, stale-while-revalidate=30, stale-if-error=60");
	assert_int_equal(cc.max_age, 1);
	assert_int_equal(cc.stale_while_revalidate, 30);
	assert_int_equal(cc.stale_if_error, 60);
	assert_false(cc.bad);
	cc = cc_of("max-age=1");
	assert_int_equal(cc.stale_while_revalidate, -1);
	assert_int_equal(cc.stale_if_error, -1);
	/* quoted, case, repeated (the smaller), malformed (ignored) */
	cc = cc_of("Stale-If-Error=\"20\", stale-if-error=10, "
		   "stale-while-revalidate=x, stale-while-revalidate");
	assert_int_equal(cc.stale_if_error, 10);
	assert_int_equal(cc.stale_while_revalidate, -1);
	assert_false(cc.bad); /* a window only widens: no staleness */
	cc = cc_of("stale-if-error=-5, stale-while-revalidate=1.5");
	assert_int_equal(cc.stale_if_error, -1);
	assert_int_equal(cc.stale_while_revalidate, -1);
	/* over 2^31: 2^31 */
	cc = cc_of("stale-if-error=99999999999999");
	assert_int_equal(cc.stale_if_error, INT64_C(2147483648));
}

static void test_parse_block(void **state)
{
	const char *b = "Content-Language: en\r\n"
			"cache-control: max-age=5\r\n"
			"X-Cache-Control: no-store\r\n"
			"Cache-Control:stale-if-error=9 \r\n"
			"Cache-Control";
	struct http_cc cc;

	(void)state;
	http_cc_init(&cc);
	http_cc_parse_block(&cc, "Cache-Control", b, strlen(b));
	assert_int_equal(cc.max_age, 5);
	assert_int_equal(cc.stale_if_error, 9);
	assert_false(cc.no_store); /* another header's */
	http_cc_init(&cc);
	http_cc_parse_block(&cc, "Cache-Control", "", 0);
	assert_int_equal(cc.max_age, -1);
}

#define NOW INT64_C(1000000)

/* a response fresh until NOW - @stale, age 0 at NOW - 100 */
static bool ok(enum http_stale_use use, const char *resp, const char *req,
	       int64_t stale, bool no_cache, bool must_reval, int64_t window)
{
	struct http_cc r = cc_of(resp), q = cc_of(req);

	return http_stale_ok(use, &r, &q, NOW - stale, NOW - 100, no_cache,
			     must_reval, window, NOW);
}

static void test_on_error(void **state)
{
	enum http_stale_use e = HTTP_STALE_ERROR;

	(void)state;
	/* the cache's own window */
	assert_true(ok(e, "", "", 30, false, false, 60));
	assert_true(ok(e, "", "", 60, false, false, 60));
	assert_false(ok(e, "", "", 61, false, false, 60));
	assert_false(ok(e, "", "", 1, false, false, 0)); /* off */
	/* the response's stale-if-error, the request's, the largest wins */
	assert_true(ok(e, "stale-if-error=100", "", 90, false, false, 0));
	assert_false(ok(e, "stale-if-error=100", "", 101, false, false, 0));
	assert_true(ok(e, "stale-if-error=10", "", 50, false, false, 60));
	assert_true(ok(e, "", "stale-if-error=100", 90, false, false, 0));
	assert_false(ok(e, "", "stale-if-error=10", 11, false, false, 0));
	/* stale-while-revalidate is not stale-if-error */
	assert_false(
		ok(e, "stale-while-revalidate=100", "", 5, false, false, 0));
	/* §4.2.4: no-cache, must-revalidate (and the like) forbid it */
	assert_false(ok(e, "stale-if-error=100", "", 5, true, false, 100));
	assert_false(ok(e, "stale-if-error=100", "", 5, false, true, 100));
	/* stale by 0 s (just expired) is within any window */
	assert_true(ok(e, "", "", 0, false, false, 1));
}

static void test_while_revalidate(void **state)
{
	enum http_stale_use w = HTTP_STALE_REVALIDATE;
	const char *swr = "max-age=1, stale-while-revalidate=60";

	(void)state;
	assert_true(ok(w, swr, "", 30, false, false, 0));
	assert_true(ok(w, swr, "", 60, false, false, 0));
	assert_false(ok(w, swr, "", 61, false, false, 0));
	assert_false(ok(w, "max-age=1", "", 1, false, false, 0));
	/* the cache's stale-on-error window does not widen it */
	assert_false(ok(w, "max-age=1", "", 1, false, false, 600));
	assert_false(ok(w, "stale-if-error=60", "", 1, false, false, 0));
	/* a request that asks for something fresher */
	assert_false(ok(w, swr, "no-cache", 10, false, false, 0));
	assert_false(ok(w, swr, "max-age=50", 10, false, false, 0));
	assert_true(ok(w, swr, "max-age=500", 10, false, false, 0));
	assert_false(ok(w, swr, "min-fresh=1", 10, false, false, 0));
	/* forbidden by the stored response */
	assert_false(ok(w, swr, "", 10, true, false, 0));
	assert_false(ok(w, swr, "", 10, false, true, 0));
}

static struct http_sc sc_of(const char *s)
{
	struct http_sc sc;

	http_sc_init(&sc);
	http_sc_parse(&sc, s, strlen(s), HTTP_SC_TOKEN);
	return sc;
}

static void test_sc_parse(void **state)
{
	(void)state;
	assert_int_equal(sc_of("max-age=3600").max_age, 3600);
	assert_int_equal(sc_of("MaX-aGe=60").max_age, 60);
	assert_int_equal(sc_of("foobar, max-age=5").max_age, 5);
	assert_int_equal(sc_of("max-age=99999999999").max_age,
			 INT64_C(2147483648));
	assert_int_equal(sc_of("max-age=30+600").max_age, 30);
	assert_int_equal(sc_of("max-age=0").max_age, 0);
	/* ours, someone else's, untargeted */
	assert_int_equal(sc_of("max-age=7;goblin").max_age, 7);
	assert_int_equal(sc_of("max-age=7;not-for-you").max_age, -1);
	assert_int_equal(sc_of("max-age=7;other, max-age=9").max_age, 9);
	/* malformed: ignored */
	assert_int_equal(sc_of("max-age =100").max_age, -1);
	assert_int_equal(sc_of("max-age= 100").max_age, -1);
	assert_int_equal(sc_of("max-age=x").max_age, -1);
	assert_int_equal(sc_of("max-age").max_age, -1);
	assert_int_equal(sc_of("foo").max_age, -1);
	assert_false(sc_of("foo").no_store);
	assert_true(sc_of("no-store").no_store);
	assert_true(sc_of("max-age=5, no-store;goblin").no_store);
	assert_false(sc_of("no-store;other").no_store);
	/* repeated: the smaller */
	assert_int_equal(sc_of("max-age=50, max-age=10").max_age, 10);
}

static void decide(const char *cc, const char *sc, int64_t expires,
		   struct http_store_decision *d)
{
	struct http_req_info q;
	struct http_resp_info r;

	memset(&q, 0, sizeof(q));
	http_cc_init(&q.cc);
	http_resp_info_init(&r);
	r.status = 200;
	r.date = NOW;
	r.expires = expires;
	http_cc_parse(&r.cc, cc, strlen(cc));
	http_sc_parse(&r.sc, sc, strlen(sc), HTTP_SC_TOKEN);
	http_store_decide(&q, &r, NOW, NOW, d);
}

static void test_sc_decide(void **state)
{
	struct http_store_decision d;

	(void)state;
	/* Surrogate-Control's max-age over Cache-Control's, either way */
	decide("max-age=1", "max-age=3600", -1, &d);
	assert_int_equal(d.why, HTTP_STORE_OK);
	assert_int_equal(d.fresh_until, NOW + 3600);
	decide("max-age=3600", "max-age=1", -1, &d);
	assert_int_equal(d.fresh_until, NOW + 1);
	decide("s-maxage=3600", "max-age=2", -1, &d);
	assert_int_equal(d.fresh_until, NOW + 2);
	/* ... and over Expires, past, invalid or future */
	decide("", "max-age=3600", NOW - 10000, &d);
	assert_int_equal(d.fresh_until, NOW + 3600);
	decide("", "max-age=3600", 0, &d);
	assert_int_equal(d.fresh_until, NOW + 3600);
	decide("", "max-age=0", NOW + 10000, &d);
	assert_int_equal(d.fresh_until, NOW);
	/* someone else's max-age: Cache-Control's stands */
	decide("max-age=5", "max-age=3600;other", -1, &d);
	assert_int_equal(d.fresh_until, NOW + 5);
	/* no-store keeps it out, whatever Cache-Control and Expires say */
	decide("max-age=10000", "no-store", NOW + 10000, &d);
	assert_int_equal(d.why, HTTP_STORE_NO_STORE);
	decide("max-age=10000", "no-store;other", -1, &d);
	assert_int_equal(d.why, HTTP_STORE_OK);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_parse_block),
		cmocka_unit_test(test_on_error),
		cmocka_unit_test(test_while_revalidate),
		cmocka_unit_test(test_sc_parse),
		cmocka_unit_test(test_sc_decide),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
