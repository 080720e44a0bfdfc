/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * engine: the embedded-API benchmark of libgoblin.  Populates the ART
 * workload (WORKLOADS.md) into a fresh store, then measures time to first
 * byte of RAM-head objects and the sequential tail read bandwidth.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../cli/workload.h"
#include "../store/clock.h"
#include "../store/goblin.h"
#include "../store/prog.h"

#define PUT_PIECE (1 * MiB) /* gs_put_write() unit */
#define KEY_LEN	  32


static void usage(void)
{
	fprintf(stderr,
		"usage: %s [options]\n"
		"  --store DIR       store directory, created fresh "
		"(default /var/tmp/goblin-engine)\n"
		"  --memory SIZE     RAM head pool\n"
		"  --small-memory SIZE  small-object arena\n"
		"  --ram-head SIZE   head slot size\n"
		"  --io-chunk SIZE   tail read unit\n"
		"  --io-depth N      tail reads in flight per reader\n"
		"  --ssd-size SIZE   SSD tier capacity\n"
		"  --no-mlock        do not mlock the RAM pools\n"
		"  --no-hugetlb      do not try HugeTLB pages\n"
		"  --count N         ART objects (default 2048)\n"
		"  --total SIZE      ART objects until this many bytes\n"
		"  --seed N          workload seed (default 1)\n"
		"  --passes N        TTFB passes in random order (default 3)\n"
		"  --big-size SIZE   also put and read one object this large\n"
		"  --no-verify       skip byte verification\n"
		"  --keep            leave the store directory behind\n"
		"  --csv FILE        per-request ns timestamps\n",
		prog_name);
	exit(129);
}

/* ---- small helpers ---- */

static double mibps(uint64_t bytes, int64_t ns)
{
	return ns > 0 ? (double)bytes / MiB / ((double)ns / 1e9) : 0.0;
}

static void art_key(char *buf, size_t len, uint64_t i)
{
	snprintf(buf, len, "art:%08" PRIu64, i);
}

/* ---- the store directory: fresh each run ---- */

static int rm_one(const char *path, const struct stat *st, int type,
		  struct FTW *ftw)
{
	(void)st;
	(void)type;
	if (ftw->level == 0)
		return 0; /* keep the directory itself */
	if (remove(path))
		return -1;
	return 0;
}

static void mkdir_p(const char *dir)
{
	char path[4096];
	size_t n = strlen(dir);

	if (n == 0 || n >= sizeof(path))
		die("bad directory '%s'", dir);
	memcpy(path, dir, n + 1);
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0755) && errno != EEXIST)
			die("cannot create '%s': %s", path, strerror(errno));
		*p = '/';
	}
	if (mkdir(path, 0755) && errno != EEXIST)
		die("cannot create '%s': %s", path, strerror(errno));
}

/* -1: missing, 0: empty, 1: has entries. */
static int dir_state(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int state = 0;

	if (!d) {
		if (errno == ENOENT)
			return -1;
		die("cannot open '%s': %s", dir, strerror(errno));
	}
	while ((e = readdir(d))) {
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
			state = 1;
			break;
		}
	}
	closedir(d);
	return state;
}

/*
 * Leave @dir empty.  Only a directory that is empty or that the library
 * itself recognises as a store (gs_open without create succeeds) is
 * cleared; anything else is refused, so a typo cannot wipe a home.
 */
static void store_prepare(const char *dir)
{
	struct gs_options o;
	struct gs_store *s;
	char err[256] = "";
	int rc, state = dir_state(dir);

	if (state < 0) {
		mkdir_p(dir);
		return;
	}
	if (state == 0)
		return;
	gs_options_init(&o);
	o.create = false;
	o.no_mlock = true;
	o.preload_heads = false;
	rc = gs_open(dir, &o, &s, err, sizeof(err));
	if (rc)
		die("refusing to clear '%s': not empty and not a goblin store "
		    "(%s%s%s)",
		    dir, gs_strerror(rc), *err ? ": " : "", err);
	gs_close(s);
	if (nftw(dir, rm_one, 64, FTW_DEPTH | FTW_PHYS))
		die("cannot clear '%s': %s", dir, strerror(errno));
}

/* ---- the benchmark ---- */

struct obj {
	uint64_t size;
	uint64_t seed;	   /* payload seed */
	uint64_t head_ram; /* bytes of [0, size) in RAM before reads */
	int where;	   /* 0: head not in RAM, 1: RAM slot, 2: small */
};

enum phase { PH_TTFB = 0, PH_TAIL, PH_BIG };
static const char *const phase_name[] = { "ttfb", "tail", "big" };

struct rec {
	int64_t t_open;	  /* before gs_get_open */
	int64_t t_opened; /* gs_get_open returned */
	int64_t t_first;  /* first gs_reader_next() returned */
	int64_t t_last;	  /* last byte returned */
	uint64_t idx;
	uint16_t pass;
	uint8_t phase;
	uint8_t where;
	uint8_t verified;
	uint8_t ok;
};

struct bench {
	struct gs_store *s;
	unsigned char *buf;	/* put piece, PUT_PIECE bytes */
	unsigned char *scratch; /* verification, PUT_PIECE bytes */
	struct rec *recs;
	size_t nrecs, caprecs;
	uint64_t errors;     /* misses, read errors, short reads */
	uint64_t mismatches; /* bytes that did not match the generator */
	int64_t epoch;
};

#define berror(b, ...) count_error(&(b)->errors, __VA_ARGS__)

static struct rec *rec_new(struct bench *b)
{
	if (b->nrecs == b->caprecs) {
		b->caprecs = b->caprecs ? 2 * b->caprecs : 4096;
		b->recs = realloc(b->recs, b->caprecs * sizeof(*b->recs));
		if (!b->recs)
			die("out of memory");
	}
	memset(&b->recs[b->nrecs], 0, sizeof(*b->recs));
	return &b->recs[b->nrecs++];
}

/* Put one object from the generator; returns ns spent generating. */
static int64_t put_object(struct bench *b, const char *key, uint64_t size,
			  uint64_t seed)
{
	return workload_gs_put(b->s, key, size, seed, b->buf, PUT_PIECE);
}

/* Where the head lives now: fills o->where and o->head_ram. */
static void locate_head(struct bench *b, const char *key, struct obj *o)
{
	struct gs_range r[64];
	int n = gs_inspect(b->s, key, strlen(key), r, 64);

	o->where = 0;
	o->head_ram = 0;
	if (n < 0) {
		berror(b, "gs_inspect '%s': %s", key, gs_strerror(n));
		return;
	}
	if (n > 64)
		n = 64;
	for (int i = 0; i < n; i++) {
		if (r[i].tier != GS_TIER_RAM && r[i].tier != GS_TIER_SMALL)
			continue;
		if (r[i].off == 0)
			o->where = r[i].tier == GS_TIER_RAM ? 1 : 2;
		o->head_ram += r[i].len;
	}
}

/*
 * Open, stream and close one object, filling @rec's timestamps.  With
 * @verify every chunk is compared with the generator after it arrives
 * (the first one after t_first is taken, so TTFB is never skewed).
 */
static void read_object(struct bench *b, const char *key, const struct obj *o,
			bool verify, struct rec *rec)
{
	struct gs_reader *r;
	struct gs_chunk c;
	uint64_t got = 0;
	int rc;

	rec->verified = verify;
	rec->t_open = gs_mono_ns();
	rc = gs_get_open(b->s, key, strlen(key), 0, &r);
	rec->t_opened = gs_mono_ns();
	if (rc) {
		rec->t_first = rec->t_last = gs_mono_ns();
		berror(b, "gs_get_open '%s': %s", key, gs_strerror(rc));
		return;
	}
	rc = gs_reader_next(r, &c);
	rec->t_first = gs_mono_ns();
	if (gs_reader_meta(r)->size != o->size) {
		berror(b, "'%s': size %" PRIu64 ", expected %" PRIu64, key,
		       gs_reader_meta(r)->size, o->size);
		goto out;
	}
	while (rc == 1) {
		if (c.off != got) {
			berror(b,
			       "'%s': chunk at %" PRIu64 ", expected %" PRIu64,
			       key, c.off, got);
			goto out;
		}
		if (verify && payload_check(o->seed, c.off, c.data, c.len,
					    b->scratch, PUT_PIECE)) {
			b->mismatches++;
			berror(b, "'%s': wrong bytes in [%" PRIu64 ", +%zu)",
			       key, c.off, c.len);
			goto out;
		}
		got += c.len;
		rc = gs_reader_next(r, &c);
	}
	rec->t_last = gs_mono_ns();
	if (rc < 0) {
		berror(b, "gs_reader_next '%s' at %" PRIu64 ": %s", key, got,
		       gs_strerror(rc));
		goto out;
	}
	if (got != o->size) {
		berror(b, "'%s': %" PRIu64 " bytes, expected %" PRIu64, key,
		       got, o->size);
		goto out;
	}
	rec->ok = 1;
out:
	if (!rec->ok)
		rec->t_last = gs_mono_ns();
	gs_reader_close(r);
}

static void print_sizes(const struct obj *objs, size_t n)
{
	uint64_t *v = malloc((n ? n : 1) * sizeof(*v));
	uint64_t total = 0;

	if (!v)
		die("out of memory");
	for (size_t i = 0; i < n; i++) {
		v[i] = objs[i].size;
		total += v[i];
	}
	qsort(v, n, sizeof(*v), cmp_u64);
	printf("workload: ART count=%zu total=%" PRIu64 " (%.2f GiB) "
	       "mean=%.0f (%.1f KiB) p50=%" PRIu64 " (%.1f KiB) p90=%" PRIu64
	       " (%.1f KiB) p99=%" PRIu64 " (%.1f KiB) max=%" PRIu64
	       " (%.1f KiB)\n",
	       n, total, (double)total / GiB, n ? (double)total / n : 0.0,
	       n ? (double)total / n / KiB : 0.0, pct(v, n, 50),
	       pct(v, n, 50) / 1024.0, pct(v, n, 90), pct(v, n, 90) / 1024.0,
	       pct(v, n, 99), pct(v, n, 99) / 1024.0, n ? v[n - 1] : 0,
	       n ? v[n - 1] / 1024.0 : 0.0);
	free(v);
}

static void write_csv(const struct bench *b, const char *path,
		      const struct obj *objs, uint64_t big_size)
{
	FILE *f = fopen(path, "w");

	if (!f)
		die("cannot open '%s': %s", path, strerror(errno));
	fprintf(f, "phase,pass,key,size,head_where,verified,ok,"
		   "open_ns,opened_ns,first_chunk_ns,last_byte_ns\n");
	for (size_t i = 0; i < b->nrecs; i++) {
		const struct rec *r = &b->recs[i];
		char key[KEY_LEN];
		uint64_t size;

		if (r->phase == PH_BIG) {
			snprintf(key, sizeof(key), "big:%08" PRIu64, r->idx);
			size = big_size;
		} else {
			art_key(key, sizeof(key), r->idx);
			size = objs[r->idx].size;
		}
		fprintf(f,
			"%s,%u,%s,%" PRIu64 ",%s,%u,%u,%" PRId64 ",%" PRId64
			",%" PRId64 ",%" PRId64 "\n",
			phase_name[r->phase], r->pass, key, size,
			r->where == 1 ? "ram" :
			r->where == 2 ? "small" :
					"disk",
			r->verified, r->ok, r->t_open - b->epoch,
			r->t_opened - b->epoch, r->t_first - b->epoch,
			r->t_last - b->epoch);
	}
	if (fclose(f))
		die("cannot write '%s': %s", path, strerror(errno));
}

static void print_stats(struct gs_store *s, const char *when)
{
	struct gs_stats st;

	gs_stats_get(s, &st);
	printf("stats %s: objects=%" PRIu64 " bytes=%" PRIu64 " gets=%" PRIu64
	       " head_hits=%" PRIu64 " head_misses=%" PRIu64
	       " small_hits=%" PRIu64 " bytes_read_ram=%" PRIu64
	       " bytes_read_ssd=%" PRIu64 " bytes_written_ssd=%" PRIu64
	       " ssd_reads=%" PRIu64 " ssd_read_mean_us=%.1f"
	       " evictions_ssd=%" PRIu64 " evictions_head=%" PRIu64
	       " head_promotions=%" PRIu64 " csum_failures=%" PRIu64
	       " ram_slots_used=%" PRIu64 "/%" PRIu64 " ssd_used=%" PRIu64
	       "/%" PRIu64 "\n",
	       when, st.objects, st.bytes, st.gets, st.head_hits,
	       st.head_misses, st.small_hits, st.bytes_read_ram,
	       st.bytes_read_ssd, st.bytes_written_ssd, st.ssd_reads,
	       st.ssd_reads ? (double)st.ssd_read_ns / st.ssd_reads / 1e3 : 0.0,
	       st.evictions_ssd, st.evictions_head, st.head_promotions,
	       st.csum_failures, st.ram_slots_used, st.ram_slots, st.ssd_used,
	       st.ssd_capacity);
}

static void print_hist(struct gs_store *s)
{
	struct gs_stats st;

	gs_stats_get(s, &st);
	printf("ssd read latency histogram (bucket: count):");
	for (int i = 0; i < 16; i++)
		if (st.ssd_read_hist[i])
			printf(" <%uus:%" PRIu64, 16u << i,
			       st.ssd_read_hist[i]);
	printf("\n");
}

enum {
	OPT_STORE = 256,
	OPT_MEMORY,
	OPT_SMALL_MEMORY,
	OPT_RAM_HEAD,
	OPT_IO_CHUNK,
	OPT_IO_DEPTH,
	OPT_SSD_SIZE,
	OPT_NO_MLOCK,
	OPT_NO_HUGETLB,
	OPT_COUNT,
	OPT_TOTAL,
	OPT_SEED,
	OPT_PASSES,
	OPT_BIG_SIZE,
	OPT_CSV,
	OPT_NO_VERIFY,
	OPT_KEEP,
	OPT_HELP,
};

static const struct option longopts[] = {
	{ "store", required_argument, NULL, OPT_STORE },
	{ "memory", required_argument, NULL, OPT_MEMORY },
	{ "small-memory", required_argument, NULL, OPT_SMALL_MEMORY },
	{ "ram-head", required_argument, NULL, OPT_RAM_HEAD },
	{ "io-chunk", required_argument, NULL, OPT_IO_CHUNK },
	{ "io-depth", required_argument, NULL, OPT_IO_DEPTH },
	{ "ssd-size", required_argument, NULL, OPT_SSD_SIZE },
	{ "no-mlock", no_argument, NULL, OPT_NO_MLOCK },
	{ "no-hugetlb", no_argument, NULL, OPT_NO_HUGETLB },
	{ "count", required_argument, NULL, OPT_COUNT },
	{ "total", required_argument, NULL, OPT_TOTAL },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "passes", required_argument, NULL, OPT_PASSES },
	{ "big-size", required_argument, NULL, OPT_BIG_SIZE },
	{ "csv", required_argument, NULL, OPT_CSV },
	{ "no-verify", no_argument, NULL, OPT_NO_VERIFY },
	{ "keep", no_argument, NULL, OPT_KEEP },
	{ "help", no_argument, NULL, OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

int main(int argc, char **argv)
{
	const char *dir = "/var/tmp/goblin-engine", *csv = NULL;
	uint64_t count = 2048, total = 0, seed = 1, passes = 3, big_size = 0;
	bool verify = true, keep = false;
	struct gs_options o;
	struct bench b;
	struct obj *objs, big = { 0 };
	struct rng rng;
	char key[KEY_LEN], err[256] = "";
	size_t n = 0;
	int opt, rc;

	prog_name = "engine";
	gs_options_init(&o);
	o.create = true;
	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (opt) {
		case OPT_STORE:
			dir = optarg;
			break;
		case OPT_MEMORY:
			o.memory = parse_size_opt("memory", optarg);
			break;
		case OPT_SMALL_MEMORY:
			o.small_memory = parse_size_opt("small-memory", optarg);
			break;
		case OPT_RAM_HEAD:
			o.ram_head = parse_size_opt("ram-head", optarg);
			break;
		case OPT_IO_CHUNK:
			o.io_chunk = parse_size_opt("io-chunk", optarg);
			break;
		case OPT_IO_DEPTH:
			o.io_depth = parse_num_opt("io-depth", optarg);
			break;
		case OPT_SSD_SIZE:
			o.ssd_size = parse_size_opt("ssd-size", optarg);
			break;
		case OPT_NO_MLOCK:
			o.no_mlock = true;
			break;
		case OPT_NO_HUGETLB:
			o.no_hugetlb = true;
			break;
		case OPT_COUNT:
			count = parse_num_opt("count", optarg);
			total = 0;
			break;
		case OPT_TOTAL:
			total = parse_size_opt("total", optarg);
			break;
		case OPT_SEED:
			seed = parse_num_opt("seed", optarg);
			break;
		case OPT_PASSES:
			passes = parse_num_opt("passes", optarg);
			break;
		case OPT_BIG_SIZE:
			big_size = parse_size_opt("big-size", optarg);
			break;
		case OPT_CSV:
			csv = optarg;
			break;
		case OPT_NO_VERIFY:
			verify = false;
			break;
		case OPT_KEEP:
			keep = true;
			break;
		default:
			usage();
		}
	}
	if (optind != argc)
		usage();
	if (passes > 65535)
		die("--passes too large");

	/* The workload: sizes only, never the bytes. */
	rng_init(&rng, seed);
	{
		size_t cap = total ? total / (256 * KiB) + 1 : count;
		uint64_t sum = 0;

		objs = calloc(cap ? cap : 1, sizeof(*objs));
		if (!objs)
			die("out of memory");
		while (total ? sum < total : n < count) {
			uint64_t sz = workload_art_size(&rng);

			if (n == cap)
				break; /* cannot happen: sizes >= 256 KiB */
			art_key(key, sizeof(key), n);
			objs[n].size = sz;
			objs[n].seed = workload_payload_seed(key, sz);
			sum += sz;
			n++;
		}
	}
	print_sizes(objs, n);

	memset(&b, 0, sizeof(b));
	if (posix_memalign((void **)&b.buf, 4096, PUT_PIECE) ||
	    posix_memalign((void **)&b.scratch, 4096, PUT_PIECE))
		die("out of memory");
	b.epoch = gs_mono_ns();

	store_prepare(dir);
	rc = gs_open(dir, &o, &b.s, err, sizeof(err));
	if (rc)
		die("cannot open store '%s': %s%s%s", dir, gs_strerror(rc),
		    *err ? ": " : "", err);
	{
		struct gs_stats st;

		gs_stats_get(b.s, &st);
		/* sizes as the store resolved them (unset ones have defaults) */
		printf("store: dir=%s memory=%" PRIu64 " ram_head=%" PRIu64
		       " io_chunk=%" PRIu64 " io_depth=%u small_memory=%" PRIu64
		       " ram_slots=%" PRIu64 " ssd_capacity=%" PRIu64
		       " hugetlb=%d mlocked=%d\n",
		       dir, st.ram_capacity,
		       st.ram_slots ? st.ram_capacity / st.ram_slots : 0,
		       o.io_chunk, o.io_depth, st.small_capacity, st.ram_slots,
		       st.ssd_capacity, st.hugetlb, st.mlocked);
		if (st.ram_slots && st.ram_slots < n + (big_size ? 1 : 0))
			printf("warning: %" PRIu64 " head slots for %zu "
			       "objects: not every head can be in RAM\n",
			       st.ram_slots, n + (big_size ? 1 : 0));
	}

	/* Phase 1: populate. */
	uint64_t art_total = 0;
	int64_t gen_ns = 0, t0 = gs_mono_ns(), pop_ns;

	for (size_t i = 0; i < n; i++) {
		art_key(key, sizeof(key), i);
		gen_ns += put_object(&b, key, objs[i].size, objs[i].seed);
		art_total += objs[i].size;
	}
	pop_ns = gs_mono_ns() - t0;
	double pop_mibps = mibps(art_total, pop_ns);
	printf("populate: %zu objects, %" PRIu64 " bytes in %.3f s: "
	       "%.1f MiB/s (%.1f MiB/s excluding %.3f s of payload "
	       "generation), %.1f puts/s\n",
	       n, art_total, pop_ns / 1e9, pop_mibps,
	       mibps(art_total, pop_ns - gen_ns), gen_ns / 1e9,
	       n / (pop_ns / 1e9));
	print_stats(b.s, "after populate");

	/* Phase 2: TTFB of RAM-head objects, random order, several passes. */
	uint64_t *ttfb = malloc((n * passes + 1) * sizeof(*ttfb));
	uint64_t *order = malloc((n + 1) * sizeof(*order));
	uint64_t *topen = malloc((n * passes + 1) * sizeof(*topen));
	uint64_t *tnext = malloc((n * passes + 1) * sizeof(*tnext));
	size_t nttfb = 0, not_ram = 0;
	struct gs_stats s0, s1;
	uint64_t pass_bytes = 0;
	int64_t pass_ns = 0;

	if (!ttfb || !order || !topen || !tnext)
		die("out of memory");
	gs_stats_get(b.s, &s0);
	for (uint64_t p = 0; p < passes; p++) {
		struct rng orng;

		rng_init(&orng, workload_pass_seed(seed, p));
		for (size_t i = 0; i < n; i++)
			order[i] = i;
		rng_shuffle(&orng, order, n);
		for (size_t k = 0; k < n; k++) {
			uint64_t i = order[k];
			struct obj *ob = &objs[i];
			struct rec *r;

			art_key(key, sizeof(key), i);
			locate_head(&b, key, ob);
			r = rec_new(&b);
			r->phase = PH_TTFB;
			r->pass = p;
			r->idx = i;
			r->where = ob->where;
			read_object(&b, key, ob, verify && p == 0, r);
			if (!r->ok)
				continue;
			pass_bytes += ob->size;
			pass_ns += r->t_last - r->t_open;
			if (ob->where) {
				topen[nttfb] = r->t_opened - r->t_open;
				tnext[nttfb] = r->t_first - r->t_opened;
				ttfb[nttfb++] = r->t_first - r->t_open;
			} else
				not_ram++;
		}
	}
	gs_stats_get(b.s, &s1);
	struct lat tl = latency(ttfb, nttfb);
	printf("ttfb: %zu timed opens of RAM-head objects over %" PRIu64
	       " passes (%zu opens skipped: head not in RAM); "
	       "head_hits +%" PRIu64 " head_misses +%" PRIu64
	       "; first pass verified: %s\n",
	       nttfb, passes, not_ram, s1.head_hits - s0.head_hits,
	       s1.head_misses - s0.head_misses, verify ? "yes" : "no");
	printf("ttfb_us: p50=%.2f p90=%.2f p99=%.2f p99.9=%.2f mean=%.2f "
	       "min=%.2f max=%.2f\n",
	       tl.p50, tl.p90, tl.p99, tl.p999, tl.mean, tl.min, tl.max);
	{
		struct lat lo = latency(topen, nttfb);
		struct lat ln = latency(tnext, nttfb);

		printf("ttfb split: gs_get_open p50=%.2f p90=%.2f p99=%.2f "
		       "mean=%.2f us; first gs_reader_next p50=%.2f p90=%.2f "
		       "p99=%.2f mean=%.2f us\n",
		       lo.p50, lo.p90, lo.p99, lo.mean, ln.p50, ln.p90, ln.p99,
		       ln.mean);
	}
	printf("ttfb phase: whole-object reads %.1f MiB/s (sum of per-object "
	       "open-to-last-byte times, verification included in pass 1)\n",
	       mibps(pass_bytes, pass_ns));

	/* Phase 3: sequential tail reads of every object, key order. */
	uint64_t tail_bytes = 0, all_bytes = 0;
	int64_t tail_ns;

	for (size_t i = 0; i < n; i++) {
		art_key(key, sizeof(key), i);
		locate_head(&b, key, &objs[i]);
	}
	gs_stats_get(b.s, &s0);
	t0 = gs_mono_ns();
	for (size_t i = 0; i < n; i++) {
		struct rec *r = rec_new(&b);

		art_key(key, sizeof(key), i);
		r->phase = PH_TAIL;
		r->idx = i;
		r->where = objs[i].where;
		read_object(&b, key, &objs[i], false, r);
		if (r->ok) {
			all_bytes += objs[i].size;
			tail_bytes += objs[i].size - objs[i].head_ram;
		}
	}
	tail_ns = gs_mono_ns() - t0;
	gs_stats_get(b.s, &s1);
	double art_tail_mibps = mibps(tail_bytes, tail_ns);
	printf("tail: %zu objects in key order in %.3f s: beyond-head bytes "
	       "%" PRIu64 " -> %.1f MiB/s; all bytes %" PRIu64
	       " -> %.1f MiB/s; stats: bytes_read_ssd +%" PRIu64
	       " bytes_read_ram +%" PRIu64 " ssd_reads +%" PRIu64 "\n",
	       n, tail_ns / 1e9, tail_bytes, art_tail_mibps, all_bytes,
	       mibps(all_bytes, tail_ns), s1.bytes_read_ssd - s0.bytes_read_ssd,
	       s1.bytes_read_ram - s0.bytes_read_ram,
	       s1.ssd_reads - s0.ssd_reads);
	if (s1.bytes_read_ssd - s0.bytes_read_ssd != tail_bytes)
		printf("note: stats bytes_read_ssd differs from the bytes "
		       "beyond the RAM head (%" PRIu64 ")\n",
		       tail_bytes);
	print_stats(b.s, "after reads");

	/* Phase 4: one big object, written fresh then read at once. */
	double big_put_mibps = 0, big_tail_mibps = 0, big_all_mibps = 0;
	double big_ttfb_us = 0;

	if (big_size) {
		struct rec *r;
		int64_t g;

		snprintf(key, sizeof(key), "big:%08d", 0);
		big.size = big_size;
		big.seed = workload_payload_seed(key, big_size);
		t0 = gs_mono_ns();
		g = put_object(&b, key, big.size, big.seed);
		pop_ns = gs_mono_ns() - t0;
		big_put_mibps = mibps(big_size, pop_ns);
		printf("big put: %" PRIu64 " bytes in %.3f s: %.1f MiB/s "
		       "(%.1f MiB/s excluding generation)\n",
		       big_size, pop_ns / 1e9, big_put_mibps,
		       mibps(big_size, pop_ns - g));
		locate_head(&b, key, &big);
		gs_stats_get(b.s, &s0);
		r = rec_new(&b);
		r->phase = PH_BIG;
		r->where = big.where;
		read_object(&b, key, &big, false, r);
		gs_stats_get(b.s, &s1);
		if (r->ok) {
			uint64_t tb = big.size - big.head_ram;

			big_ttfb_us = (r->t_first - r->t_open) / 1e3;
			big_tail_mibps = mibps(tb, r->t_last - r->t_open);
			big_all_mibps = mibps(big.size, r->t_last - r->t_open);
			printf("big read: ttfb %.2f us (head %s), %" PRIu64
			       " beyond-head bytes in %.3f s: %.1f MiB/s; "
			       "all bytes %.1f MiB/s; stats: bytes_read_ssd +%" PRIu64
			       " ssd_reads +%" PRIu64 "\n",
			       big_ttfb_us, big.where ? "in RAM" : "not in RAM",
			       tb, (r->t_last - r->t_open) / 1e9,
			       big_tail_mibps, big_all_mibps,
			       s1.bytes_read_ssd - s0.bytes_read_ssd,
			       s1.ssd_reads - s0.ssd_reads);
		}
		if (verify) {
			struct rec v = { 0 };

			read_object(&b, key, &big, true, &v);
			printf("big verify: %s\n", v.ok ? "ok" : "FAILED");
		}
	}

	print_hist(b.s);
	print_stats(b.s, "final");
	if (csv)
		write_csv(&b, csv, objs, big_size);
	gs_close(b.s);
	if (!keep && nftw(dir, rm_one, 64, FTW_DEPTH | FTW_PHYS))
		fprintf(stderr, "%s: cannot clear '%s': %s\n", prog_name, dir,
			strerror(errno));

	printf("errors: %" PRIu64 " (of which byte mismatches: %" PRIu64 ")\n",
	       b.errors, b.mismatches);
	printf("DETAIL ttfb_p90_us=%.2f ttfb_p99_us=%.2f ttfb_p999_us=%.2f "
	       "ttfb_mean_us=%.2f ttfb_n=%zu art_tail_mibps=%.1f "
	       "art_all_mibps=%.1f big_put_mibps=%.1f big_tail_mibps=%.1f "
	       "big_all_mibps=%.1f big_ttfb_us=%.2f errors=%" PRIu64 "\n",
	       tl.p90, tl.p99, tl.p999, tl.mean, nttfb, art_tail_mibps,
	       mibps(all_bytes, tail_ns), big_put_mibps, big_tail_mibps,
	       big_all_mibps, big_ttfb_us, b.errors);
	printf("RESULT ttfb_p50_us=%.2f tail_mibps=%.1f populate_mibps=%.1f\n",
	       tl.p50, big_size ? big_tail_mibps : art_tail_mibps, pop_mibps);
	free(ttfb);
	free(order);
	free(topen);
	free(tnext);
	free(objs);
	free(b.recs);
	free(b.buf);
	free(b.scratch);
	return b.errors ? 1 : 0;
}
