/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for the HTTP semantics parsers: the input is split at
 * '\n' into fields (a date, a Range, two entity-tag lists, a current tag,
 * two Cache-Control values, an If-Range), each copied to a buffer of its
 * exact size so a read past it is caught.  The first field's bytes also
 * choose the object size and the times.  Checks the invariants: dates
 * round-trip through the formatter, ranges lie inside the object, a
 * strong etag match is also a weak one, delta-seconds stay in range, and
 * the store decision's times are ordered.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "http_sem.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c)                 \
	do {                     \
		if (!(c))        \
			abort(); \
	} while (0)
#define NFIELD 8

static void check_cc(const struct http_cc *cc)
{
	const int64_t v[] = { cc->max_age, cc->s_maxage, cc->max_stale,
			      cc->min_fresh };

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		CHECK(v[i] >= -1 && v[i] <= INT64_C(2147483648));
}

static void fuzz_date(const char *s, size_t len)
{
	char out[HTTP_DATE_LEN + 1];
	int64_t t, back;

	if (http_date_parse(s, len, &t))
		return;
	http_date_format(t, out);
	CHECK(strlen(out) == HTTP_DATE_LEN);
	CHECK(http_date_parse(out, HTTP_DATE_LEN, &back) == 0 && back == t);
}

static void fuzz_range(const char *s, size_t len, uint64_t obj, unsigned max)
{
	struct http_range r[HTTP_RANGES_MAX];
	unsigned n = 12345;
	enum http_range_result res;

	res = http_range_parse(s, len, obj, r, max, &n);
	CHECK(res == HTTP_RANGE_OK || n == 0);
	CHECK(res <= HTTP_RANGE_UNSATISFIABLE);
	if (res != HTTP_RANGE_OK)
		return;
	CHECK(n > 0 && n <= max);
	for (unsigned i = 0; i < n; i++)
		CHECK(r[i].first <= r[i].last && r[i].last < obj);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *f[NFIELD] = { NULL };
	size_t flen[NFIELD] = { 0 }, pos = 0;
	uint64_t obj = 0;
	int64_t t0 = 0;
	struct http_cc qcc, rcc, bcc;
	struct http_cond c;
	struct http_req_info q;
	struct http_resp_info r;
	struct http_store_decision d;
	struct http_policy pol;
	bool strong, weak;

	for (int i = 0; i < NFIELD; i++) {
		const uint8_t *nl =
			pos < size ? memchr(data + pos, '\n', size - pos) :
				     NULL;
		size_t end = nl ? (size_t)(nl - data) : size;

		flen[i] = end - pos;
		f[i] = malloc(flen[i] ? flen[i] : 1);
		if (!f[i])
			goto out;
		memcpy(f[i], data + pos, flen[i]);
		pos = end < size ? end + 1 : size;
	}
	for (size_t i = 0; i < flen[0] && i < 8; i++)
		obj = obj << 8 | (uint8_t)f[0][i];
	/* times within some 17000 years of 1970, as dates can be */
	t0 = (int64_t)(obj & ((UINT64_C(1) << 40) - 1)) - (INT64_C(1) << 39);
	obj %= 1u << 20;

	fuzz_date(f[0], flen[0]);
	fuzz_range(f[1], flen[1], obj, HTTP_RANGES_MAX);
	fuzz_range(f[1], flen[1], obj, 1 + (unsigned)(obj % HTTP_RANGES_MAX));
	fuzz_range(f[1], flen[1], UINT64_MAX, HTTP_RANGES_MAX);

	/* a strong match is a weak one too */
	for (int l = 2; l <= 3; l++) {
		strong = http_etag_match(f[l], flen[l], f[4], flen[4], false,
					 obj & 1);
		weak = http_etag_match(f[l], flen[l], f[4], flen[4], true,
				       obj & 1);
		CHECK(!strong || weak);
	}

	memset(&c, 0, sizeof(c));
	c.if_match = (obj & 2) ? f[2] : NULL;
	c.if_match_len = flen[2];
	c.if_none_match = (obj & 4) ? f[3] : NULL;
	c.if_none_match_len = flen[3];
	c.if_modified_since = f[0];
	c.if_modified_since_len = flen[0];
	c.if_unmodified_since = (obj & 8) ? f[7] : NULL;
	c.if_unmodified_since_len = flen[7];
	CHECK(http_cond_eval(&c, obj & 16, obj & 32, f[4], flen[4], t0) <=
	      HTTP_COND_FAILED);
	(void)http_if_range(f[7], flen[7], f[4], flen[4], t0);

	http_cc_init(&qcc);
	http_cc_parse(&qcc, f[5], flen[5]);
	check_cc(&qcc);
	http_cc_init(&rcc);
	http_cc_parse(&rcc, f[6], flen[6]);
	http_cc_parse(&rcc, f[5], flen[5]);
	check_cc(&rcc);

	memset(&q, 0, sizeof(q));
	q.cc = qcc;
	q.authorization = obj & 64;
	http_resp_info_init(&r);
	r.status = (obj & 128) ? 200 : 100 + (int)(obj % 900);
	r.cc = rcc;
	r.date = t0;
	r.last_modified = t0 - (int64_t)obj;
	r.has_validator = obj & 256;
	/* Expires and Age from the bytes (lines 0 and 7), or as numbers */
	if (obj & 512) {
		http_resp_expires(&r, f[0], flen[0]);
		http_resp_expires(&r, f[7], flen[7]);
		CHECK(r.expires >= 0);
		http_resp_age(&r, f[7], flen[7]);
		http_resp_age(&r, f[0], flen[0]);
		CHECK(r.age_invalid ? r.age == -1 :
				      r.age >= 0 && r.age <= 2147483648);
	} else {
		r.expires = t0 ^ (int64_t)obj;
		r.age = (int64_t)obj - 1000;
	}
	/* Surrogate-Control and RFC 5861's windows (reval, issue 18) */
	http_sc_parse(&r.sc, f[7], flen[7], HTTP_SC_TOKEN);
	CHECK(r.sc.max_age >= -1 && r.sc.max_age <= INT64_C(2147483648));
	CHECK(rcc.stale_if_error >= -1 &&
	      rcc.stale_if_error <= INT64_C(2147483648));
	CHECK(rcc.stale_while_revalidate >= -1 &&
	      rcc.stale_while_revalidate <= INT64_C(2147483648));
	http_cc_init(&bcc);
	http_cc_parse_block(&bcc, "Cache-Control", f[6], flen[6]);
	check_cc(&bcc);
	pol.heuristic_pct = (unsigned)(obj % 101);
	pol.heuristic_max = (obj & 4096) ? INT64_MAX : (int64_t)obj;
	http_store_decide_policy(&q, &r, &pol, t0 - 5, t0, &d);
	CHECK(d.why <= HTTP_STORE_NO_FRESHNESS);
	CHECK(http_store_strwhy(d.why)[0] != '\0');
	if (d.why == HTTP_STORE_OK) {
		CHECK(d.fresh_until != 0);
		CHECK(d.fresh_until >= d.age_base || d.fresh_until == -1);
		CHECK(d.age_base <= t0);
		(void)http_fresh_for(&qcc, d.fresh_until, d.age_base,
				     d.revalidate_always, d.must_revalidate,
				     t0 + (int64_t)(obj % 100000));
		for (int u = HTTP_STALE_ERROR; u <= HTTP_STALE_REVALIDATE; u++)
			CHECK(!http_stale_ok((enum http_stale_use)u, &rcc, &qcc,
					     d.fresh_until, d.age_base,
					     d.revalidate_always,
					     d.must_revalidate,
					     (int64_t)(obj % 1000),
					     t0 + (int64_t)(obj % 100000)) ||
			      !(d.revalidate_always || d.must_revalidate));
	}
out:
	for (int i = 0; i < NFIELD; i++)
		free(f[i]);
	return 0;
}
