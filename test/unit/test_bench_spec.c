/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of goblinctl bench's --size specs (cli/bench_spec.c):
 * sizes, pareto:LOC,SCALE,SHAPE[,MAX] well-formed, malformed and hostile,
 * determinism of the drawn sizes, and the percentile summary.
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

#include "bench_spec.h"

static struct bspec b;
static const char *why;

static int S(const char *s)
{
	return bspec_parse(s, &b, &why);
}

static void test_fixed(void **state)
{
	(void)state;
	assert_int_equal(S("4096"), 0);
	assert_int_equal(b.kind, BSPEC_FIXED);
	assert_int_equal(bspec_size(&b, 1, 7), 4096);
	assert_int_equal(S("64K"), 0);
	assert_int_equal(b.fixed, 65536);
	assert_int_equal(S("1MiB"), 0);
	assert_int_equal(b.fixed, 1 << 20);
	assert_int_equal(S("2T"), -EINVAL); /* above 1 TiB */
	assert_int_equal(S(""), -EINVAL);
	assert_int_equal(S("-1"), -EINVAL);
	assert_int_equal(S("12x"), -EINVAL);
	assert_int_equal(S("fb_value"), 0);
	assert_int_equal(b.kind, BSPEC_FB_VALUE);
	assert_int_equal(S("art"), 0);
	assert_int_equal(S("manifest:/tmp/m"), 0);
	assert_string_equal(b.file, "/tmp/m");
	assert_int_equal(S("manifest:"), -EINVAL);
}

static void test_pareto(void **state)
{
	uint64_t v;

	(void)state;
	assert_int_equal(S("pareto:262144,583208,0.3,8388608"), 0);
	assert_int_equal(b.kind, BSPEC_PARETO);
	for (uint64_t i = 0; i < 1000; i++) {
		v = bspec_size(&b, 42, i);
		assert_true(v >= 262144 && v <= 8388608);
		assert_int_equal(v, bspec_size(&b, 42, i)); /* determinism */
	}
	assert_int_equal(S("pareto:15,214.476,0.348238"), 0);
	assert_true(b.max > 1e12);
	assert_int_equal(S("pareto:1e3,2e3,-0.5"), 0); /* bounded tail */
	/* MAX deep in the tail: redrawn, then clamped, never loops */
	assert_int_equal(S("pareto:0,1e9,5,1"), 0);
	assert_true(bspec_size(&b, 1, 1) <= 1);
}

static void test_pareto_hostile(void **state)
{
	static const char *const bad[] = {
		"pareto:",
		"pareto:1",
		"pareto:1,2",
		"pareto:1,2,",
		"pareto:1,2,0.3,",
		"pareto:1,2,0.3,4,5",
		"pareto:1,0,0.3",
		"pareto:1,-2,0.3",
		"pareto:1,2,0",
		"pareto:1,2,11",
		"pareto:-1,2,0.3",
		"pareto:10,2,0.3,5",
		"pareto:1,2,0.3,2e12",
		"pareto:nan,2,0.3",
		"pareto:1,inf,0.3",
		"pareto:1,2,0.3x",
		"pareto: 1,2,0.3",
		"pareto:1,,0.3",
		"pareto:,1,2,0.3",
		"pareto:1e999,2,0.3",
		"pareto:0x,2,0.3",
		"pareto:1;2;0.3",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (S(bad[i]) != -EINVAL)
			fail_msg("accepted '%s'", bad[i]);
		assert_true(why && *why);
	}
}

static void test_distributions(void **state)
{
	uint64_t v[2000], sum = 0;
	struct bspec_pct p;

	(void)state;
	assert_int_equal(S("art"), 0);
	for (size_t i = 0; i < 2000; i++) {
		v[i] = bspec_size(&b, 1, i);
		sum += v[i];
	}
	p = bspec_percentiles(v, 2000);
	/* WORKLOADS.md ART: mean ~1.00 MiB, p50 ~693 KiB, max 8 MiB */
	assert_true(p.p50 > 600 * 1024 && p.p50 < 800 * 1024);
	assert_true(sum / 2000 > 900 * 1024 && sum / 2000 < 1150 * 1024);
	assert_true(p.max <= 8 << 20);
	assert_true(p.p50 <= p.p90 && p.p90 <= p.p99 && p.p99 <= p.p999);
	p = bspec_percentiles(v, 0);
	assert_int_equal(p.max, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixed),
		cmocka_unit_test(test_pareto),
		cmocka_unit_test(test_pareto_hostile),
		cmocka_unit_test(test_distributions),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
