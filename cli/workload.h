/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * workload.h: the benchmark workloads of ../shared/WORKLOADS.md (ART, FB,
 * WEB, BIG), shared by goblinctl bench (bench_spec.c) and the drivers in
 * bench/: a seeded PRNG, the size distributions, deterministic object
 * payloads and the drivers' latency summaries.  It lives in cli/ because
 * goblinctl may include only store/ and cli/, while bench/ may use the
 * binaries and their code: both include it downward.  The code is in
 * workload.c; the PRNG steps stay inline here (they run once per draw).
 *
 * Compatibility: bench/engine.c and bench/gen.c draw ART sizes, the pass
 * order and the payload bytes through these functions, so an engine run and
 * a generated manifest of the same seed describe the same objects.  Changing
 * any constant or formula here changes every corpus: don't, or say so.
 */
#ifndef GOBLIN_CLI_WORKLOAD_H
#define GOBLIN_CLI_WORKLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "../store/goblin.h"

#define KiB (1024ULL)
#define MiB (1024ULL * KiB)
#define GiB (1024ULL * MiB)

#define WORKLOAD_GOLDEN	    0x9e3779b97f4a7c15ULL
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
void rng_shuffle(struct rng *r, uint64_t *v, size_t n);

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
double gpd_quantile(double loc, double scale, double shape, double u);

/*
 * Inverse CDF of the generalized extreme value distribution (shape != 0)
 * for F = u in (0, 1): loc + scale * ((-ln u)^-shape - 1) / shape.
 */
double gev_quantile(double loc, double scale, double shape, double u);

/* ART: generalized Pareto, redrawn until <= 8 MiB. */
#define ART_LOC	  262144.0
#define ART_SCALE 583208.0
#define ART_SHAPE 0.3
#define ART_MAX	  (8 * MiB)
#define ART_COUNT 2048 /* the memory-sized case, ~2 GiB */

uint64_t workload_art_size(struct rng *r);

/* FB: mutilate's fb_value (GPD) and fb_key (GEV). */
#define FB_COUNT       400000
#define FB_VALUE_LOC   15.0
#define FB_VALUE_SCALE 214.476
#define FB_VALUE_SHAPE 0.348238
#define FB_KEY_LOC     30.7984
#define FB_KEY_SCALE   8.20449
#define FB_KEY_SHAPE   0.078688
#define FB_KEY_MAX     250 /* memcached's key limit */

uint64_t workload_fb_value_size(struct rng *r);

/*
 * A key length in [min_len, FB_KEY_MAX], redrawn outside it: the GEV has
 * a lower bound of about -73 and a long upper tail, and a key must hold
 * its prefix and id.
 */
unsigned workload_fb_key_len(struct rng *r, unsigned min_len);

/* WEB: log-linear interpolation through published quantiles. */
#define WEB_OBJECTS	373165
#define WEB_REQUESTS	6141630
#define WEB_LARGE	(256 * KiB) /* "objects larger than 256 KiB" */
#define WEB_LARGE_SHARE 0.0207	    /* of requests, to those objects */
#define WEB_ZIPF	1.0

/* The WEB size at quantile @u in [0, 1]. */
uint64_t workload_web_size(double u);

/* BIG: seeded uniform 1-4 GiB, total >= 1.5x RAM. */
#define BIG_MIN	       (1 * GiB)
#define BIG_MAX	       (4 * GiB)
#define BIG_RAM	       (24 * GiB) /* this machine; gen --ram overrides */
#define BIG_RAM_FACTOR 1.5

uint64_t workload_big_size(struct rng *r);

/* ---- payloads: counter-based, so any offset can be regenerated ---- */

/* The payload stream of object (@key, @size): FNV-1a of the key, mixed. */
uint64_t workload_payload_seed(const char *key, uint64_t size);

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
void workload_payload_fill(uint64_t seed, uint64_t off, void *buf, size_t len);

/*
 * 0 when @data holds the bytes at @off of the object whose payload seed is
 * @seed, else -1; @scratch (@slen bytes) holds the expected bytes.
 */
int payload_check(uint64_t seed, uint64_t off, const void *data, size_t len,
		  unsigned char *scratch, size_t slen);

/*
 * Write bytes [off, off+len) of object (@key, @size) into @buf.  The same
 * (key, size, off) always gives the same bytes, on any run and machine of
 * the same byte order; the caller keeps off + len <= size (bytes past the
 * end are not an error, just the stream continued).
 */
void workload_fill(const char *key, uint64_t size, uint64_t off, void *buf,
		   size_t len);

/*
 * Put object @key (@size bytes, payload seed @seed) into @s through one
 * writer, generating it @piece bytes at a time in @buf; dies on an error.
 * Returns the nanoseconds spent generating the bytes.
 */
int64_t workload_gs_put(struct gs_store *s, const char *key, uint64_t size,
			uint64_t seed, unsigned char *buf, size_t piece);

/* ---- the drivers' errors and options (die() is store/prog.h's) ---- */

/*
 * Count an error of the measured system in *@count and report it: "PROG:
 * error: message", the first 20 only (a broken run stays readable).
 */
__attribute__((format(printf, 2, 3))) void count_error(uint64_t *count,
						       const char *fmt, ...);

/* Option values: a size ("64M"), or a whole number (decimal or 0x). */
uint64_t parse_size_opt(const char *opt, const char *s);
uint64_t parse_num_opt(const char *opt, const char *s);

/* ---- statistics shared by the drivers ---- */

/* qsort() order of uint64_t */
int cmp_u64(const void *a, const void *b);

/* Nearest-rank percentile (@p in 0..100) of a sorted array. */
uint64_t pct(const uint64_t *v, size_t n, double p);

/* Latency summary of a set of nanosecond samples, in microseconds. */
struct lat {
	double p50, p90, p99, p999, mean, min, max;
	size_t n;
};

/* Summarise @ns[0..n) (sorted in place). */
struct lat latency(uint64_t *ns, size_t n);

#endif /* GOBLIN_CLI_WORKLOAD_H */
