/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * workload.h: the benchmark workloads of ../shared/WORKLOADS.md (ART, FB,
 * WEB, BIG) as header-only code shared by the drivers in bench/: a seeded
 * PRNG, the size distributions, and deterministic object payloads.
 *
 * Header-only (static inline) because the Makefile builds each bench driver
 * as one translation unit; a driver uses what it needs and the compiler
 * drops the rest without unused-function warnings.
 *
 * Compatibility: bench/engine.c and bench/gen.c draw ART sizes, the pass
 * order and the payload bytes through these functions, so an engine run and
 * a generated manifest of the same seed describe the same objects.  Changing
 * any constant or formula here changes every corpus: don't, or say so.
 */
#ifndef GOBLIN_BENCH_WORKLOAD_H
#define GOBLIN_BENCH_WORKLOAD_H

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include "goblin.h"
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#define KiB (1024ULL)
#define MiB (1024ULL * KiB)
#define GiB (1024ULL * MiB)

#define WORKLOAD_GOLDEN 0x9e3779b97f4a7c15ULL
/* Pass shuffles (WORKLOADS.md, BIG: "seed 0x243f6a8885a308d3"). */
#define WORKLOAD_ORDER_SALT 0x243f6a8885a308d3ULL

/* ---- randomness: splitmix64 and xoshiro256**, both self-contained ---- */

static inline uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static inline uint64_t splitmix64(uint64_t *state)
{
	*state += WORKLOAD_GOLDEN;
	return mix64(*state);
}

struct rng {
	uint64_t s[4];
};

static inline void rng_init(struct rng *r, uint64_t seed)
{
	uint64_t sm = seed;

	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&sm);
}

static inline uint64_t rng_rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static inline uint64_t rng_next(struct rng *r)
{
	uint64_t *s = r->s;
	uint64_t result = rng_rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rng_rotl(s[3], 45);
	return result;
}

/* Uniform in (0, 1]: never 0, so pow(u, -shape) stays finite. */
static inline double rng_unit(struct rng *r)
{
	return (double)((rng_next(r) >> 11) + 1) * 0x1.0p-53;
}

/* Uniform in (0, 1): neither end, so log(u) and log(1 - u) are finite. */
static inline double rng_open(struct rng *r)
{
	return ((double)(rng_next(r) >> 11) + 0.5) * 0x1.0p-53;
}

/* Uniform in [0, n) (Lemire's multiply; the bias is below 2^-64 * n). */
static inline uint64_t rng_below(struct rng *r, uint64_t n)
{
	return (uint64_t)(((unsigned __int128)rng_next(r) * n) >> 64);
}

/* Fisher-Yates, the order bench/engine.c has always used. */
static inline void rng_shuffle(struct rng *r, uint64_t *v, size_t n)
{
	for (size_t i = n; i > 1; i--) {
		size_t j = rng_below(r, i);
		uint64_t t = v[i - 1];

		v[i - 1] = v[j];
		v[j] = t;
	}
}

/*
 * The seed of measured pass @pass (0-based) of a workload seeded @seed:
 * each pass is shuffled independently.
 */
static inline uint64_t workload_pass_seed(uint64_t seed, uint64_t pass)
{
	return seed ^ WORKLOAD_ORDER_SALT ^ mix64(pass + 1);
}

/* ---- size distributions ---- */

/*
 * Inverse CDF of the generalized Pareto distribution for u = 1 - F in
 * (0, 1]: loc + scale * (u^-shape - 1) / shape.
 */
static inline double gpd_quantile(double loc, double scale, double shape,
				  double u)
{
	return loc + scale * (pow(u, -shape) - 1.0) / shape;
}

/*
 * Inverse CDF of the generalized extreme value distribution (shape != 0)
 * for F = u in (0, 1): loc + scale * ((-ln u)^-shape - 1) / shape.
 */
static inline double gev_quantile(double loc, double scale, double shape,
				  double u)
{
	return loc + scale * (pow(-log(u), -shape) - 1.0) / shape;
}

/* ART: generalized Pareto, redrawn until <= 8 MiB. */
/* ---- errors: "PROG: message", exit 128 (the driver defines prog) ---- */

static const char *prog;

/* "PROG: " @what, then the message and a newline, on stderr. */
__attribute__((format(printf, 2, 0), unused))
static void report(const char *what, const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: %s", prog, what);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

__attribute__((noreturn, format(printf, 1, 2), unused))
static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	report("", fmt, ap);
	va_end(ap);
	exit(128);
}

/*
 * Count an error of the measured system in *@count and report it: "PROG:
 * error: message", the first 20 only (a broken run stays readable).
 */
__attribute__((format(printf, 2, 3), unused))
static void count_error(uint64_t *count, const char *fmt, ...)
{
	va_list ap;

	if (++*count > 20)
		return;
	va_start(ap, fmt);
	report("error: ", fmt, ap);
	va_end(ap);
}

/* Option values: a size ("64M"), or a whole number (decimal or 0x). */
__attribute__((unused))
static uint64_t parse_size_opt(const char *opt, const char *s)
{
	uint64_t v;

	if (gs_parse_size(s, &v))
		die("bad size for --%s: '%s'", opt, s);
	return v;
}

__attribute__((unused))
static uint64_t parse_num_opt(const char *opt, const char *s)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *end || *s == '-')
		die("bad number for --%s: '%s'", opt, s);
	return v;
}

/* ---- statistics shared by the drivers ---- */

static inline int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Nearest-rank percentile (@p in 0..100) of a sorted array. */
static inline uint64_t pct(const uint64_t *v, size_t n, double p)
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

/* CLOCK_MONOTONIC in nanoseconds: every driver's timestamps. */
static inline int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Latency summary of a set of nanosecond samples, in microseconds. */
struct lat {
	double p50, p90, p99, p999, mean, min, max;
	size_t n;
};

/* Summarise @ns[0..n) (sorted in place). */
static inline struct lat latency(uint64_t *ns, size_t n)
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

#define ART_LOC 262144.0
#define ART_SCALE 583208.0
#define ART_SHAPE 0.3
#define ART_MAX (8 * MiB)
#define ART_COUNT 2048		/* the memory-sized case, ~2 GiB */

static inline uint64_t workload_art_size(struct rng *r)
{
	for (;;) {
		double x = gpd_quantile(ART_LOC, ART_SCALE, ART_SHAPE,
					rng_unit(r));

		if (x <= (double)ART_MAX)
			return (uint64_t)llround(x);
	}
}

/* FB: mutilate's fb_value (GPD) and fb_key (GEV). */
#define FB_COUNT 400000
#define FB_VALUE_LOC 15.0
#define FB_VALUE_SCALE 214.476
#define FB_VALUE_SHAPE 0.348238
#define FB_KEY_LOC 30.7984
#define FB_KEY_SCALE 8.20449
#define FB_KEY_SHAPE 0.078688
#define FB_KEY_MAX 250		/* memcached's key limit */

static inline uint64_t workload_fb_value_size(struct rng *r)
{
	return (uint64_t)llround(gpd_quantile(FB_VALUE_LOC, FB_VALUE_SCALE,
					      FB_VALUE_SHAPE, rng_unit(r)));
}

/*
 * A key length in [min_len, FB_KEY_MAX], redrawn outside it: the GEV has
 * a lower bound of about -73 and a long upper tail, and a key must hold
 * its prefix and id.
 */
static inline unsigned workload_fb_key_len(struct rng *r, unsigned min_len)
{
	for (;;) {
		double x = gev_quantile(FB_KEY_LOC, FB_KEY_SCALE, FB_KEY_SHAPE,
					rng_open(r));
		long long n = llround(x);

		if (n >= (long long)min_len && n <= FB_KEY_MAX)
			return (unsigned)n;
	}
}

/* WEB: log-linear interpolation through published quantiles. */
#define WEB_OBJECTS 373165
#define WEB_REQUESTS 6141630
#define WEB_LARGE (256 * KiB)	/* "objects larger than 256 KiB" */
#define WEB_LARGE_SHARE 0.0207	/* of requests, to those objects */
#define WEB_ZIPF 1.0

struct web_quantile {
	double p;		/* cumulative probability */
	double bytes;
};

/* The WEB size at quantile @u in [0, 1]. */
static inline uint64_t workload_web_size(double u)
{
	static const struct web_quantile web_quantiles[] = {
		{ 0.0, 128.0 },
		{ 0.5, 26.3 * KiB },
		{ 0.9, 193.0 * KiB },
		{ 0.99, 2.495 * MiB },
		{ 0.999, 6.0 * MiB },
		{ 0.99995, 32.0 * MiB },
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
		return (uint64_t)llround(exp(log(a->bytes) +
					     t * (log(b->bytes) -
						  log(a->bytes))));
	}
}

/* BIG: seeded uniform 1-4 GiB, total >= 1.5x RAM. */
#define BIG_MIN (1 * GiB)
#define BIG_MAX (4 * GiB)
#define BIG_RAM (24 * GiB)	/* this machine; gen --ram overrides */
#define BIG_RAM_FACTOR 1.5

static inline uint64_t workload_big_size(struct rng *r)
{
	return BIG_MIN + rng_below(r, BIG_MAX - BIG_MIN + 1);
}

/* ---- payloads: counter-based, so any offset can be regenerated ---- */

/* The payload stream of object (@key, @size): FNV-1a of the key, mixed. */
static inline uint64_t workload_payload_seed(const char *key, uint64_t size)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (const char *p = key; *p; p++)
		h = (h ^ (unsigned char)*p) * 0x100000001b3ULL;
	return mix64(h ^ mix64(size + WORKLOAD_GOLDEN));
}

static inline uint64_t workload_payload_word(uint64_t seed, uint64_t i)
{
	return mix64(seed + (i + 1) * WORKLOAD_GOLDEN);
}

/*
 * Write bytes [off, off+len) of the object whose payload seed is @seed
 * into @buf.  Word i of an object is mix64 of a counter, stored in host
 * (little-endian) order: incompressible, and any range can be regenerated
 * without the bytes before it.
 */
static inline void workload_payload_fill(uint64_t seed, uint64_t off,
					 void *buf, size_t len)
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
static inline int payload_check(uint64_t seed, uint64_t off, const void *data,
				size_t len, unsigned char *scratch, size_t slen)
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
static inline void workload_fill(const char *key, uint64_t size, uint64_t off,
				 void *buf, size_t len)
{
	workload_payload_fill(workload_payload_seed(key, size), off, buf, len);
}

/*
 * Put object @key (@size bytes, payload seed @seed) into @s through one
 * writer, generating it @piece bytes at a time in @buf; dies on an error.
 * Returns the nanoseconds spent generating the bytes.
 */
__attribute__((unused))
static int64_t workload_gs_put(struct gs_store *s, const char *key,
			       uint64_t size, uint64_t seed, unsigned char *buf,
			       size_t piece)
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

		t = now_ns();
		workload_payload_fill(seed, off, buf, n);
		gen += now_ns() - t;
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

#endif /* GOBLIN_BENCH_WORKLOAD_H */
