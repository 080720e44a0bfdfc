/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * goblinctl bench's size specs, over workload.h's distributions: the one
 * definition of the workloads, so that goblinctl bench and the bench/
 * drivers draw the same sizes and bytes.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../store/goblin.h"
#include "bench_spec.h"
#include "workload.h"

/* A finite decimal ending at @end ("," or NUL); advances *@p. */
static int take_double(const char **p, double *out)
{
	char *end;
	double v;

	if (**p == ' ' || **p == '\t' || !**p)
		return -EINVAL;
	errno = 0;
	v = strtod(*p, &end);
	if (end == *p || errno || !isfinite(v) || (*end && *end != ','))
		return -EINVAL;
	*p = *end ? end + 1 : end;
	*out = v;
	return 0;
}

static int parse_pareto(const char *s, struct bspec *b, const char **why)
{
	double *f[] = { &b->loc, &b->scale, &b->shape, &b->max };
	size_t n;

	b->kind = BSPEC_PARETO;
	b->max = (double)BSPEC_SIZE_MAX;
	for (n = 0; n < 4 && *s; n++) {
		if (take_double(&s, f[n]) < 0) {
			*why = "pareto takes LOC,SCALE,SHAPE[,MAX] numbers";
			return -EINVAL;
		}
		if (!*s && s[-1] == ',') {
			*why = "pareto: trailing comma";
			return -EINVAL;
		}
	}
	if (n < 3 || *s) {
		*why = "pareto takes LOC,SCALE,SHAPE[,MAX]";
		return -EINVAL;
	}
	if (b->scale <= 0 || b->shape == 0 || fabs(b->shape) > 10) {
		*why = "pareto needs SCALE > 0 and SHAPE in [-10, 10], not 0";
		return -EINVAL;
	}
	if (b->loc < 0 || b->max < b->loc || b->max > (double)BSPEC_SIZE_MAX) {
		*why = "pareto needs 0 <= LOC <= MAX <= 1 TiB";
		return -EINVAL;
	}
	return 0;
}

int bspec_parse(const char *s, struct bspec *b, const char **why)
{
	memset(b, 0, sizeof(*b));
	*why = "";
	if (!strncmp(s, "pareto:", 7))
		return parse_pareto(s + 7, b, why);
	if (!strcmp(s, "fb_value")) {
		b->kind = BSPEC_FB_VALUE;
		return 0;
	}
	if (!strcmp(s, "art")) {
		b->kind = BSPEC_ART;
		return 0;
	}
	if (!strncmp(s, "manifest:", 9)) {
		b->kind = BSPEC_MANIFEST;
		b->file = s + 9;
		if (!*b->file) {
			*why = "manifest: needs a file name";
			return -EINVAL;
		}
		return 0;
	}
	b->kind = BSPEC_FIXED;
	if (gs_parse_size(s, &b->fixed) || b->fixed > BSPEC_SIZE_MAX) {
		*why = "not a size, pareto:LOC,SCALE,SHAPE[,MAX], fb_value, "
		       "art or manifest:FILE";
		return -EINVAL;
	}
	return 0;
}

/*
 * Redrawn above MAX like ART; after 64 draws (a MAX far in the tail) the
 * size is MAX, so a hostile spec cannot loop.
 */
static uint64_t pareto_size(const struct bspec *b, struct rng *r)
{
	for (int i = 0; i < 64; i++) {
		double x =
			gpd_quantile(b->loc, b->scale, b->shape, rng_unit(r));

		if (x >= 0 && x <= b->max)
			return (uint64_t)llround(x);
	}
	return (uint64_t)llround(b->max);
}

uint64_t bspec_size(const struct bspec *b, uint64_t seed, uint64_t i)
{
	struct rng r;

	rng_init(&r, seed ^ mix64(i + 1));
	switch (b->kind) {
	case BSPEC_FIXED:
		return b->fixed;
	case BSPEC_PARETO:
		return pareto_size(b, &r);
	case BSPEC_FB_VALUE:
		return workload_fb_value_size(&r);
	case BSPEC_ART:
		return workload_art_size(&r);
	case BSPEC_MANIFEST:
		break;
	}
	return 0;
}

struct bspec_pct bspec_percentiles(uint64_t *v, size_t n)
{
	struct bspec_pct p = { 0, 0, 0, 0, 0, 0 };
	double sum = 0;

	if (!n)
		return p;
	qsort(v, n, sizeof(*v), cmp_u64);
	for (size_t i = 0; i < n; i++)
		sum += (double)v[i];
	p.p50 = pct(v, n, 50);
	p.p90 = pct(v, n, 90);
	p.p99 = pct(v, n, 99);
	p.p999 = pct(v, n, 99.9);
	p.max = v[n - 1];
	p.mean = sum / (double)n;
	return p;
}

uint64_t bspec_below(uint64_t *s, uint64_t n)
{
	return (uint64_t)(((unsigned __int128)splitmix64(s) * n) >> 64);
}
