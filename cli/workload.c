/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * workload.c: the workloads' size distributions and payloads, and the
 * bench drivers' error counting, option values and latency summaries
 * (workload.h says who shares them and why they live in cli/).
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../store/clock.h"
#include "../store/prog.h"
#include "workload.h"

/* ---- randomness ---- */

/* Fisher-Yates, the order bench/engine.c has always used. */
void rng_shuffle(struct rng *r, uint64_t *v, size_t n)
{
	for (size_t i = n; i > 1; i--) {
		size_t j = rng_below(r, i);
		uint64_t t = v[i - 1];

		v[i - 1] = v[j];
		v[j] = t;
	}
}

/* ---- size distributions ---- */

/*
 * Inverse CDF of the generalized Pareto distribution for u = 1 - F in
 * (0, 1]: loc + scale * (u^-shape - 1) / shape.
 */
double gpd_quantile(double loc, double scale, double shape, double u)
{
	return loc + scale * (pow(u, -shape) - 1.0) / shape;
}

/*
 * Inverse CDF of the generalized extreme value distribution (shape != 0)
 * for F = u in (0, 1): loc + scale * ((-ln u)^-shape - 1) / shape.
 */
double gev_quantile(double loc, double scale, double shape, double u)
{
	return loc + scale * (pow(-log(u), -shape) - 1.0) / shape;
}

uint64_t workload_art_size(struct rng *r)
{
	for (;;) {
		double x = gpd_quantile(ART_LOC, ART_SCALE, ART_SHAPE,
					rng_unit(r));

		if (x <= (double)ART_MAX)
			return (uint64_t)llround(x);
	}
}

uint64_t workload_fb_value_size(struct rng *r)
{
	return (uint64_t)llround(gpd_quantile(FB_VALUE_LOC, FB_VALUE_SCALE,
					      FB_VALUE_SHAPE, rng_unit(r)));
}

/*
 * A key length in [min_len, FB_KEY_MAX], redrawn outside it: the GEV has
 * a lower bound of about -73 and a long upper tail, and a key must hold
 * its prefix and id.
 */
unsigned workload_fb_key_len(struct rng *r, unsigned min_len)
{
	for (;;) {
		double x = gev_quantile(FB_KEY_LOC, FB_KEY_SCALE, FB_KEY_SHAPE,
					rng_open(r));
		long long n = llround(x);

		if (n >= (long long)min_len && n <= FB_KEY_MAX)
			return (unsigned)n;
	}
}

struct web_quantile {
	double p; /* cumulative probability */
	double bytes;
};

/* The WEB size at quantile @u in [0, 1]. */
uint64_t workload_web_size(double u)
{
	static const struct web_quantile web_quantiles[] = {
		{ 0.0, 128.0 },	      { 0.5, 26.3 * KiB },
		{ 0.9, 193.0 * KiB }, { 0.99, 2.495 * MiB },
		{ 0.999, 6.0 * MiB }, { 0.99995, 32.0 * MiB },
		{ 1.0, 150.1 * MiB },
	};
	const size_t nq = sizeof(web_quantiles) / sizeof(web_quantiles[0]);
	size_t i = 1;

	while (i < nq - 1 && u > web_quantiles[i].p)
		i++;
	{
		const struct web_quantile *a = &web_quantiles[i - 1];
		const struct web_quantile *b = &web_quantiles[i];
		double t = (u - a->p) / (b->p - a->p);

		if (t < 0)
			t = 0;
		if (t > 1)
			t = 1;
		return (uint64_t)llround(exp(
			log(a->bytes) + t * (log(b->bytes) - log(a->bytes))));
	}
}

uint64_t workload_big_size(struct rng *r)
{
	return BIG_MIN + rng_below(r, BIG_MAX - BIG_MIN + 1);
}

/* ---- payloads ---- */

/* The payload stream of object (@key, @size): FNV-1a of the key, mixed. */
uint64_t workload_payload_seed(const char *key, uint64_t size)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (const char *p = key; *p; p++)
		h = (h ^ (unsigned char)*p) * 0x100000001b3ULL;
	return mix64(h ^ mix64(size + WORKLOAD_GOLDEN));
}

/*
 * Write bytes [off, off+len) of the object whose payload seed is @seed
 * into @buf.  Word i of an object is mix64 of a counter, stored in host
 * (little-endian) order: incompressible, and any range can be regenerated
 * without the bytes before it.
 */
void workload_payload_fill(uint64_t seed, uint64_t off, void *buf, size_t len)
{
	unsigned char *p = buf;
	uint64_t i = off / 8;
	size_t skip = off % 8;
	uint64_t w;

	if (skip) {
		size_t n = 8 - skip < len ? 8 - skip : len;

		w = workload_payload_word(seed, i++);
		memcpy(p, (unsigned char *)&w + skip, n);
		p += n;
		len -= n;
	}
	for (; len >= 8; len -= 8, p += 8) {
		w = workload_payload_word(seed, i++);
		memcpy(p, &w, 8);
	}
	if (len) {
		w = workload_payload_word(seed, i);
		memcpy(p, &w, len);
	}
}

/*
 * 0 when @data holds the bytes at @off of the object whose payload seed is
 * @seed, else -1; @scratch (@slen bytes) holds the expected bytes.
 */
int payload_check(uint64_t seed, uint64_t off, const void *data, size_t len,
		  unsigned char *scratch, size_t slen)
{
	const unsigned char *p = data;

	while (len) {
		size_t n = len < slen ? len : slen;

		workload_payload_fill(seed, off, scratch, n);
		if (memcmp(scratch, p, n))
			return -1;
		p += n;
		off += n;
		len -= n;
	}
	return 0;
}

/*
 * Write bytes [off, off+len) of object (@key, @size) into @buf.  The same
 * (key, size, off) always gives the same bytes, on any run and machine of
 * the same byte order; the caller keeps off + len <= size (bytes past the
 * end are not an error, just the stream continued).
 */
void workload_fill(const char *key, uint64_t size, uint64_t off, void *buf,
		   size_t len)
{
	workload_payload_fill(workload_payload_seed(key, size), off, buf, len);
}

/*
 * Put object @key (@size bytes, payload seed @seed) into @s through one
 * writer, generating it @piece bytes at a time in @buf; dies on an error.
 * Returns the nanoseconds spent generating the bytes.
 */
int64_t workload_gs_put(struct gs_store *s, const char *key, uint64_t size,
			uint64_t seed, unsigned char *buf, size_t piece)
{
	struct gs_put_args a;
	struct gs_writer *w;
	int64_t gen = 0, t;
	int rc;

	memset(&a, 0, sizeof(a));
	a.size = size;
	a.mode = GS_SET;
	rc = gs_put_begin(s, key, strlen(key), &a, &w);
	if (rc)
		die("gs_put_begin '%s' (%llu bytes): %s", key,
		    (unsigned long long)size, gs_strerror(rc));
	for (uint64_t off = 0; off < size;) {
		size_t n = size - off < piece ? size - off : piece;

		t = gs_mono_ns();
		workload_payload_fill(seed, off, buf, n);
		gen += gs_mono_ns() - t;
		rc = gs_put_write(w, buf, n);
		if (rc) {
			gs_put_abort(w);
			die("gs_put_write '%s' at %llu: %s", key,
			    (unsigned long long)off, gs_strerror(rc));
		}
		off += n;
	}
	rc = gs_put_commit(w, NULL);
	if (rc)
		die("gs_put_commit '%s': %s", key, gs_strerror(rc));
	return gen;
}

/* ---- the drivers' errors and options ---- */

/*
 * Count an error of the measured system in *@count and report it: "PROG:
 * error: message", the first 20 only (a broken run stays readable).
 */
void count_error(uint64_t *count, const char *fmt, ...)
{
	va_list ap;

	if (++*count > 20)
		return;
	va_start(ap, fmt);
	prog_vreport("error: ", fmt, ap);
	va_end(ap);
}

uint64_t parse_size_opt(const char *opt, const char *s)
{
	uint64_t v;

	if (gs_parse_size(s, &v))
		die("bad size for --%s: '%s'", opt, s);
	return v;
}

uint64_t parse_num_opt(const char *opt, const char *s)
{
	uint64_t v;

	if (parse_u64(s, UINT64_MAX, &v))
		die("bad number for --%s: '%s'", opt, s);
	return v;
}

/* ---- statistics ---- */

int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Nearest-rank percentile (@p in 0..100) of a sorted array. */
uint64_t pct(const uint64_t *v, size_t n, double p)
{
	size_t k;

	if (!n)
		return 0;
	k = (size_t)ceil(p / 100.0 * (double)n);
	if (k < 1)
		k = 1;
	if (k > n)
		k = n;
	return v[k - 1];
}

/* Summarise @ns[0..n) (sorted in place). */
struct lat latency(uint64_t *ns, size_t n)
{
	struct lat l = { 0 };
	double sum = 0;

	l.n = n;
	if (!n)
		return l;
	qsort(ns, n, sizeof(*ns), cmp_u64);
	for (size_t i = 0; i < n; i++)
		sum += (double)ns[i];
	l.p50 = pct(ns, n, 50) / 1e3;
	l.p90 = pct(ns, n, 90) / 1e3;
	l.p99 = pct(ns, n, 99) / 1e3;
	l.p999 = pct(ns, n, 99.9) / 1e3;
	l.mean = sum / n / 1e3;
	l.min = ns[0] / 1e3;
	l.max = ns[n - 1] / 1e3;
	return l;
}
