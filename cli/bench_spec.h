/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * goblinctl bench: the value-size specs (--size) over the workloads it
 * shares with bench/ (workload.h: the ART/FB size distributions,
 * deterministic payloads), and its percentiles.  Pure: unit-tested alone.
 */
#ifndef GOBLINCTL_BENCH_SPEC_H
#define GOBLINCTL_BENCH_SPEC_H

#include <stddef.h>
#include <stdint.h>

#define BSPEC_SIZE_MAX (1ull << 40) /* a drawn size is capped at 1 TiB */

enum bspec_kind {
	BSPEC_FIXED,	/* SIZE: every value that size */
	BSPEC_PARETO,	/* pareto:LOC,SCALE,SHAPE[,MAX] */
	BSPEC_FB_VALUE, /* fb_value: WORKLOADS.md FB */
	BSPEC_ART,	/* art: WORKLOADS.md ART */
	BSPEC_MANIFEST, /* manifest:FILE: keys and sizes from FILE */
};

struct bspec {
	enum bspec_kind kind;
	uint64_t fixed;
	double loc, scale, shape, max;
	const char *file; /* BSPEC_MANIFEST: points into the spec */
};

/*
 * Parse @s into *@b.  Returns 0, or -EINVAL with a reason in *@why (a
 * static string).  SIZE takes the store's suffixes (4096, 64K, 1MiB);
 * pareto's numbers are finite decimals, SCALE > 0, SHAPE != 0,
 * 0 <= LOC <= MAX <= BSPEC_SIZE_MAX (MAX defaults to BSPEC_SIZE_MAX).
 */
int bspec_parse(const char *s, struct bspec *b, const char **why);

/*
 * The size of value @i of a run seeded @seed (not for BSPEC_MANIFEST):
 * the same (spec, seed, i) always gives the same size, so a populate run
 * and a later get run agree.
 */
uint64_t bspec_size(const struct bspec *b, uint64_t seed, uint64_t i);

/* Percentiles of @v[0..n) (sorted in place), in the unit of @v. */
struct bspec_pct {
	uint64_t p50, p90, p99, p999, max;
	double mean;
};
struct bspec_pct bspec_percentiles(uint64_t *v, size_t n);

/* A uniform random number below @n from the state *@s (splitmix64). */
uint64_t bspec_below(uint64_t *s, uint64_t n);

#endif
