/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vsrocks: the WEB workload on Goblin's embedded API and on RocksDB (its C
 * API), one engine per run: populate the population manifest, drop the
 * page cache, replay the measured manifest one request at a time, timing
 * each request's first byte and completion and recording every chunk's
 * ready time for bench/netsim.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rocksdb/c.h>

#include "../cli/workload.h"
#include "../store/clock.h"
#include "../store/goblin.h"
#include "../store/prog.h"

#define PUT_PIECE	(1 * MiB)   /* gs_put_write() unit, verification unit */
#define KEY_LEN		16	    /* "web:%08u" */
#define HEAD		(256 * KiB) /* Goblin's default head slot */
#define MAX_PUT_THREADS 64


enum engine {
	E_GOBLIN,
	E_ROCKSDB,	 /* values in the LSM tree */
	E_BLOBDB,	 /* values >= --min-blob-size in blob files */
	E_ROCKSDB_CACHE, /* E_ROCKSDB with a block cache of the budget */
	E_BLOBDB_CACHE,	 /* E_BLOBDB with a block and blob cache */
	E_COUNT,
};

static const char *const engine_name[E_COUNT] = {
	"goblin", "rocksdb", "blobdb", "rocksdb-cache", "blobdb-cache",
};

/* The WEB manifests: object id i is key web:%08u of population line i. */
struct web {
	size_t n;
	uint64_t *size;
	uint64_t *seed; /* payload seed of each object */
	size_t nreq;
	uint32_t *req; /* object id of each measured request */
	uint64_t total, max_size;
	uint64_t head;	 /* Goblin's head size: smaller objects are small */
	uint64_t nlarge; /* objects of head bytes or more */
	uint64_t small_bytes; /* bytes of the others */
};

/* A chunk of a replayed request: when it was ready, and its bytes. */
struct chunk {
	uint64_t t_ns; /* since the start of the replay */
	uint64_t len;
};

struct run {
	enum engine kind;
	const char *dir;
	struct gs_options o; /* Goblin's, with its memory sizes */
	uint64_t budget;     /* memory + small_memory: RocksDB's */
	uint64_t min_blob_size;

	struct gs_store *gs;
	rocksdb_t *db;
	rocksdb_options_t *opts;
	rocksdb_block_based_table_options_t *bbo;
	rocksdb_cache_t *cache;
	rocksdb_writeoptions_t *wo;
	rocksdb_readoptions_t *ro;

	unsigned put_threads; /* populate with this many threads */
	size_t buf_size;      /* PUT_PIECE, or for RocksDB the largest value */
	unsigned char *buf;   /* a value being put, by the main thread */
	unsigned char *scratch; /* expected bytes, PUT_PIECE */

	bool record; /* append chunks below (the replay only) */
	struct chunk *chunks;
	size_t nchunks, capchunks;
	int64_t epoch;	 /* start of the replay */
	uint64_t errors; /* misses, read errors, wrong sizes or bytes */
};

static void usage(void)
{
	fprintf(stderr,
		"usage: %s --engine NAME --dir DIR --population FILE "
		"--measured FILE [options]\n"
		"  --engine NAME       goblin, rocksdb, blobdb, rocksdb-cache "
		"or blobdb-cache\n"
		"  --dir DIR           the store or database, created "
		"(must not exist or be empty)\n"
		"  --population FILE   WEB.population of bench/gen\n"
		"  --measured FILE     WEB.measured of bench/gen\n"
		"  --min-blob-size N   BlobDB: smallest value in a blob file "
		"(default 4096)\n"
		"  --put-threads N     populate with N threads (default 1), "
		"each putting the\n"
		"                      next object in id order\n"
		"  --chunks FILE       write \"ready_ns bytes\" per replayed "
		"chunk (bench/netsim)\n"
		"  --no-drop-caches    do not drop the page cache before the "
		"replay\n"
		"  --populate-only     stop after the populate (no replay, no "
		"byte check)\n"
		"  --no-verify         skip the byte check after the replay\n"
		"Goblin's store options (--memory default: room for every large "
		"object's head,\n--small-memory: for every small object):\n",
		prog_name);
	gs_option_help(stderr);
	exit(129);
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		die("out of memory (%zu bytes)", n);
	return p;
}

static void web_key(char *buf, uint32_t id)
{
	snprintf(buf, KEY_LEN, "web:%08" PRIu32, id);
}

/* ---- the manifests ---- */

/* Parse one "web:%08u size" line into *id and *size. */
static void parse_line(const char *path, size_t lineno, const char *line,
		       uint32_t *id, uint64_t *size)
{
	unsigned long long i, s;
	char extra;

	if (sscanf(line, "web:%llu %llu %c", &i, &s, &extra) != 2 ||
	    i > UINT32_MAX)
		die("%s:%zu: expected \"web:ID SIZE\"", path, lineno);
	*id = (uint32_t)i;
	*size = s;
}

static FILE *open_manifest(const char *path)
{
	FILE *f = fopen(path, "r");

	if (!f)
		die("cannot open '%s': %s", path, strerror(errno));
	return f;
}

static void load_population(struct web *w, const char *path)
{
	FILE *f = open_manifest(path);
	size_t cap = 0, lineno = 0;
	char line[128], key[KEY_LEN];

	while (fgets(line, sizeof(line), f)) {
		uint32_t id;
		uint64_t size;

		parse_line(path, ++lineno, line, &id, &size);
		if (id != w->n)
			die("%s:%zu: id %" PRIu32 ", expected %zu", path,
			    lineno, id, w->n);
		if (w->n == cap) {
			cap = cap ? 2 * cap : 4096;
			w->size = realloc(w->size, cap * sizeof(*w->size));
			w->seed = realloc(w->seed, cap * sizeof(*w->seed));
			if (!w->size || !w->seed)
				die("out of memory");
		}
		web_key(key, id);
		w->size[w->n] = size;
		w->seed[w->n] = workload_payload_seed(key, size);
		w->n++;
		w->total += size;
		if (size > w->max_size)
			w->max_size = size;
		if (size >= w->head)
			w->nlarge++;
		else
			w->small_bytes += size;
	}
	fclose(f);
	if (!w->n)
		die("%s: no objects", path);
}

static void load_measured(struct web *w, const char *path)
{
	FILE *f = open_manifest(path);
	size_t cap = 0, lineno = 0;
	char line[128];

	while (fgets(line, sizeof(line), f)) {
		uint32_t id;
		uint64_t size;

		parse_line(path, ++lineno, line, &id, &size);
		if (id >= w->n || w->size[id] != size)
			die("%s:%zu: not an object of the population", path,
			    lineno);
		if (w->nreq == cap) {
			cap = cap ? 2 * cap : 65536;
			w->req = realloc(w->req, cap * sizeof(*w->req));
			if (!w->req)
				die("out of memory");
		}
		w->req[w->nreq++] = id;
	}
	fclose(f);
}

/* ---- process counters, for the report ---- */

struct counters {
	int64_t t_ns;
	double cpu_s;	     /* user + system, all threads */
	uint64_t dev_read;   /* /proc/self/io read_bytes */
	uint64_t dev_write;  /* /proc/self/io write_bytes */
	uint64_t cached_kib; /* /proc/meminfo Cached */
};

/* The number after @field in file @path, or 0. */
static uint64_t proc_field(const char *path, const char *field)
{
	FILE *f = fopen(path, "r");
	size_t flen = strlen(field);
	char line[256];
	uint64_t v = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, field, flen)) {
			v = strtoull(line + flen, NULL, 10);
			break;
		}
	}
	fclose(f);
	return v;
}

static struct counters counters_now(void)
{
	struct counters c;
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	c.t_ns = gs_mono_ns();
	c.cpu_s = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
		  ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
	c.dev_read = proc_field("/proc/self/io", "read_bytes:");
	c.dev_write = proc_field("/proc/self/io", "write_bytes:");
	c.cached_kib = proc_field("/proc/meminfo", "Cached:");
	return c;
}

static void print_counters(const char *phase, const struct counters *a,
			   const struct counters *b)
{
	printf("%s counters: cpu_s=%.2f dev_read_mib=%.1f dev_write_mib=%.1f "
	       "pagecache_delta_mib=%.1f\n",
	       phase, b->cpu_s - a->cpu_s,
	       (double)(b->dev_read - a->dev_read) / MiB,
	       (double)(b->dev_write - a->dev_write) / MiB,
	       ((double)b->cached_kib - (double)a->cached_kib) / 1024);
}

/* sync, then drop the page cache (root only): lib.sh's drop_caches. */
static bool drop_caches(void)
{
	int fd;
	bool ok;

	sync();
	fd = open("/proc/sys/vm/drop_caches", O_WRONLY);
	if (fd < 0)
		return false;
	ok = write(fd, "3", 1) == 1;
	close(fd);
	return ok;
}

/* ---- replay records ---- */

#define run_error(r, ...) count_error(&(r)->errors, __VA_ARGS__)

/* Room for @n chunks, touched now so the replay takes no page faults. */
static void chunks_reserve(struct run *r, size_t n)
{
	r->chunks = realloc(r->chunks, n * sizeof(*r->chunks));
	if (!r->chunks)
		die("out of memory (%zu chunks)", n);
	memset(r->chunks, 0, n * sizeof(*r->chunks));
	r->capchunks = n;
}

/* Record a chunk; grows only when the reservation was short. */
static void chunk_add(struct run *r, int64_t t, uint64_t len)
{
	if (!r->record)
		return;
	if (r->nchunks == r->capchunks) {
		r->capchunks = r->capchunks ? 2 * r->capchunks : 65536;
		r->chunks =
			realloc(r->chunks, r->capchunks * sizeof(*r->chunks));
		if (!r->chunks)
			die("out of memory");
	}
	r->chunks[r->nchunks].t_ns = (uint64_t)(t - r->epoch);
	r->chunks[r->nchunks++].len = len;
}

/* ---- Goblin ---- */

static void goblin_open(struct run *r)
{
	char err[256] = "";
	int rc;

	r->o.create = true;
	rc = gs_open(r->dir, &r->o, &r->gs, err, sizeof(err));
	if (rc)
		die("cannot open store '%s': %s%s%s", r->dir, gs_strerror(rc),
		    *err ? ": " : "", err);
}

/* Put one object; returns the ns spent generating its bytes. */
static int64_t goblin_put(struct run *r, const char *key, uint64_t size,
			  uint64_t seed, unsigned char *buf)
{
	return workload_gs_put(r->gs, key, size, seed, buf, PUT_PIECE);
}

/* Commits are not fsynced (no --sync): make the data durable, as a flush. */
static void goblin_persist(struct run *r)
{
	int fd = open(r->dir, O_RDONLY | O_DIRECTORY);

	if (fd < 0 || syncfs(fd))
		die("cannot sync '%s': %s", r->dir, strerror(errno));
	close(fd);
}

/*
 * Stream one object.  *ttfb: the first chunk (the RAM head, or a small
 * object whole) returned; *done: its last byte returned.  With @seed
 * nonzero every chunk is checked against the generator.
 */
static void goblin_get(struct run *r, const char *key, uint64_t size,
		       uint64_t seed, uint64_t *ttfb, uint64_t *done)
{
	struct gs_reader *rd;
	struct gs_chunk c;
	uint64_t got = 0;
	int64_t t0 = gs_mono_ns(), t = t0, last = t0;
	int rc;

	*ttfb = *done = 0;
	rc = gs_get_open(r->gs, key, strlen(key), 0, &rd);
	if (rc) {
		run_error(r, "gs_get_open '%s': %s", key, gs_strerror(rc));
		return;
	}
	for (;;) {
		rc = gs_reader_next(rd, &c);
		t = gs_mono_ns();
		if (rc != 1)
			break;
		if (!got)
			*ttfb = t - t0;
		last = t;
		chunk_add(r, t, c.len);
		if (c.off != got) {
			run_error(r,
				  "'%s': chunk at %" PRIu64
				  ", expected %" PRIu64,
				  key, c.off, got);
			break;
		}
		if (seed && payload_check(seed, c.off, c.data, c.len,
					  r->scratch, PUT_PIECE)) {
			run_error(r, "'%s': wrong bytes in [%" PRIu64 ", +%zu)",
				  key, c.off, c.len);
			break;
		}
		got += c.len;
	}
	*done = last - t0;
	if (rc < 0)
		run_error(r, "gs_reader_next '%s' at %" PRIu64 ": %s", key, got,
			  gs_strerror(rc));
	else if (got != size)
		run_error(r, "'%s': %" PRIu64 " bytes, expected %" PRIu64, key,
			  got, size);
	gs_reader_close(rd);
}

static void goblin_report(struct run *r, const char *when)
{
	struct gs_stats st;

	gs_stats_get(r->gs, &st);
	printf("goblin %s: objects=%" PRIu64 " small_objects=%" PRIu64
	       " small_cold=%" PRIu64 " small_warms=%" PRIu64
	       " ram_slots_used=%" PRIu64 "/%" PRIu64 " head_hits=%" PRIu64
	       " head_misses=%" PRIu64 " small_hits=%" PRIu64
	       " bytes_read_ram=%" PRIu64 " bytes_read_ssd=%" PRIu64
	       " bytes_written_ssd=%" PRIu64 " evictions_head=%" PRIu64
	       " journal_bytes=%" PRIu64 " mlocked=%d\n",
	       when, st.objects, st.small_objects, st.small_cold,
	       st.small_warms, st.ram_slots_used, st.ram_slots, st.head_hits,
	       st.head_misses, st.small_hits, st.bytes_read_ram,
	       st.bytes_read_ssd, st.bytes_written_ssd, st.evictions_head,
	       st.journal_bytes, st.mlocked);
}

/* ---- RocksDB ---- */

static void rocks_check(char *err, const char *what, const char *key)
{
	if (!err)
		return;
	die("rocksdb %s%s%s: %s", what, key ? " " : "", key ? key : "", err);
}

static bool is_blob(enum engine k)
{
	return k == E_BLOBDB || k == E_BLOBDB_CACHE;
}

static bool is_cached(enum engine k)
{
	return k == E_ROCKSDB_CACHE || k == E_BLOBDB_CACHE;
}

/*
 * Sane settings for large values on an SSD, and the issue's: no
 * compression, direct reads and direct flush/compaction I/O, WAL off (per
 * write), no block cache (the -cache variants: one LRU cache of the budget
 * for blocks and blobs), memtables capped at the budget through the write
 * buffer manager (db_write_buffer_size), a full bloom filter, all files
 * open, two background jobs for two cores.
 */
static void rocks_open(struct run *r)
{
	uint64_t wbs = r->budget / 4 < 64 * MiB ? r->budget / 4 : 64 * MiB;
	char *err = NULL;

	if (wbs < 4 * MiB)
		wbs = 4 * MiB;
	r->opts = rocksdb_options_create();
	rocksdb_options_set_create_if_missing(r->opts, 1);
	rocksdb_options_increase_parallelism(r->opts, 2);
	rocksdb_options_set_compression(r->opts, rocksdb_no_compression);
	rocksdb_options_set_use_direct_reads(r->opts, 1);
	rocksdb_options_set_use_direct_io_for_flush_and_compaction(r->opts, 1);
	rocksdb_options_compaction_readahead_size(r->opts, 2 * MiB);
	rocksdb_options_set_db_write_buffer_size(r->opts, r->budget);
	rocksdb_options_set_write_buffer_size(r->opts, wbs);
	rocksdb_options_set_max_write_buffer_number(r->opts,
						    (int)(r->budget / wbs));
	rocksdb_options_set_level_compaction_dynamic_level_bytes(r->opts, 1);
	rocksdb_options_set_max_open_files(r->opts, -1);

	r->bbo = rocksdb_block_based_options_create();
	rocksdb_block_based_options_set_filter_policy(
		r->bbo, rocksdb_filterpolicy_create_bloom_full(10));
	if (is_cached(r->kind)) {
		r->cache = rocksdb_cache_create_lru(r->budget);
		rocksdb_block_based_options_set_block_cache(r->bbo, r->cache);
		if (is_blob(r->kind))
			rocksdb_options_set_blob_cache(r->opts, r->cache);
	} else {
		rocksdb_block_based_options_set_no_block_cache(r->bbo, 1);
	}
	rocksdb_options_set_block_based_table_factory(r->opts, r->bbo);
	if (is_blob(r->kind)) {
		rocksdb_options_set_enable_blob_files(r->opts, 1);
		rocksdb_options_set_min_blob_size(r->opts, r->min_blob_size);
		rocksdb_options_set_blob_compression_type(
			r->opts, rocksdb_no_compression);
		rocksdb_options_set_enable_blob_gc(r->opts, 0);
	}
	r->wo = rocksdb_writeoptions_create();
	rocksdb_writeoptions_disable_WAL(r->wo, 1);
	r->ro = rocksdb_readoptions_create();
	r->db = rocksdb_open(r->opts, r->dir, &err);
	rocks_check(err, "open", r->dir);
	printf("rocksdb options: compression=none use_direct_reads=1 "
	       "use_direct_io_for_flush_and_compaction=1 wal=off "
	       "block_cache=%s db_write_buffer_size=%" PRIu64
	       " write_buffer_size=%" PRIu64 " max_write_buffer_number=%d "
	       "bloom_bits=10 dynamic_level_bytes=1 max_background_jobs=2 "
	       "blob_files=%d min_blob_size=%" PRIu64 "\n",
	       is_cached(r->kind) ? "lru-of-budget" : "none", r->budget, wbs,
	       (int)(r->budget / wbs), is_blob(r->kind),
	       is_blob(r->kind) ? r->min_blob_size : 0);
}

/* The whole value is generated first: rocksdb_put takes one buffer. */
static int64_t rocks_put(struct run *r, const char *key, uint64_t size,
			 uint64_t seed, unsigned char *buf)
{
	int64_t t = gs_mono_ns(), gen;
	char *err = NULL;

	workload_payload_fill(seed, 0, buf, size);
	gen = gs_mono_ns() - t;
	rocksdb_put(r->db, r->wo, key, strlen(key), (const char *)buf, size,
		    &err);
	rocks_check(err, "put", key);
	return gen;
}

/* With the WAL off, the data is durable once the memtables are flushed. */
static void rocks_persist(struct run *r)
{
	rocksdb_flushoptions_t *fo = rocksdb_flushoptions_create();
	char *err = NULL;

	rocksdb_flushoptions_set_wait(fo, 1);
	rocksdb_flush(r->db, fo, &err);
	rocksdb_flushoptions_destroy(fo);
	rocks_check(err, "flush", NULL);
}

static uint64_t rocks_prop(struct run *r, const char *name)
{
	uint64_t v = 0;

	if (rocksdb_property_int(r->db, name, &v))
		return 0;
	return v;
}

/* Wait until no flush or compaction is running or pending. */
static void rocks_settle(struct run *r)
{
	static const char *const busy[] = {
		"rocksdb.num-running-compactions",
		"rocksdb.compaction-pending",
		"rocksdb.num-running-flushes",
		"rocksdb.mem-table-flush-pending",
	};

	for (;;) {
		uint64_t sum = 0;

		for (size_t i = 0; i < sizeof(busy) / sizeof(busy[0]); i++)
			sum += rocks_prop(r, busy[i]);
		if (!sum)
			return;
		usleep(20000);
	}
}

static void rocks_get(struct run *r, const char *key, uint64_t size,
		      uint64_t seed, uint64_t *ttfb, uint64_t *done)
{
	rocksdb_pinnableslice_t *ps;
	const char *v;
	size_t len = 0;
	char *err = NULL;
	int64_t t0 = gs_mono_ns(), t;

	ps = rocksdb_get_pinned(r->db, r->ro, key, strlen(key), &err);
	t = gs_mono_ns();
	*ttfb = *done = t - t0;
	if (err || !ps) {
		run_error(r, "rocksdb get '%s': %s", key,
			  err ? err : "missing");
		free(err);
		return;
	}
	v = rocksdb_pinnableslice_value(ps, &len);
	chunk_add(r, t, len);
	if (len != size)
		run_error(r, "'%s': %zu bytes, expected %" PRIu64, key, len,
			  size);
	else if (seed && payload_check(seed, 0, v, len, r->scratch, PUT_PIECE))
		run_error(r, "'%s': wrong bytes", key);
	rocksdb_pinnableslice_destroy(ps);
}

static void rocks_report(struct run *r, const char *when)
{
	char *ls = rocksdb_property_value(r->db, "rocksdb.levelstats");

	printf("rocksdb %s: keys=%" PRIu64 " sst_bytes=%" PRIu64
	       " blob_bytes=%" PRIu64 " memtable_bytes=%" PRIu64
	       " table_readers_mem=%" PRIu64 " block_cache_usage=%" PRIu64 "\n",
	       when, rocks_prop(r, "rocksdb.estimate-num-keys"),
	       rocks_prop(r, "rocksdb.total-sst-files-size"),
	       rocks_prop(r, "rocksdb.total-blob-file-size"),
	       rocks_prop(r, "rocksdb.cur-size-all-mem-tables"),
	       rocks_prop(r, "rocksdb.estimate-table-readers-mem"),
	       rocks_prop(r, "rocksdb.block-cache-usage"));
	if (ls) {
		for (char *line = strtok(ls, "\n"); line;
		     line = strtok(NULL, "\n"))
			printf("rocksdb levels: %s\n", line);
		rocksdb_free(ls);
	}
}

static void rocks_close(struct run *r)
{
	rocksdb_close(r->db);
	rocksdb_writeoptions_destroy(r->wo);
	rocksdb_readoptions_destroy(r->ro);
	rocksdb_options_destroy(r->opts);
	rocksdb_block_based_options_destroy(r->bbo);
	if (r->cache)
		rocksdb_cache_destroy(r->cache);
}

/* ---- either engine ---- */

static int64_t engine_put(struct run *r, const char *key, uint64_t size,
			  uint64_t seed, unsigned char *buf)
{
	return r->kind == E_GOBLIN ? goblin_put(r, key, size, seed, buf) :
				     rocks_put(r, key, size, seed, buf);
}

static void engine_get(struct run *r, const char *key, uint64_t size,
		       uint64_t seed, uint64_t *ttfb, uint64_t *done)
{
	if (r->kind == E_GOBLIN)
		goblin_get(r, key, size, seed, ttfb, done);
	else
		rocks_get(r, key, size, seed, ttfb, done);
}

static void engine_report(struct run *r, const char *when)
{
	if (r->kind == E_GOBLIN)
		goblin_report(r, when);
	else
		rocks_report(r, when);
}

/* VmHWM and VmRSS of this process, MiB. */
static void print_memory(const char *when)
{
	printf("memory %s: vm_hwm_mib=%.1f vm_rss_mib=%.1f\n", when,
	       proc_field("/proc/self/status", "VmHWM:") / 1024.0,
	       proc_field("/proc/self/status", "VmRSS:") / 1024.0);
}

static struct lat print_lat(const char *what, uint64_t *ns, size_t n)
{
	struct lat l = latency(ns, n);

	printf("%s: n=%zu p50=%.2f p90=%.2f p99=%.2f p99.9=%.2f mean=%.2f "
	       "max=%.2f\n",
	       what, l.n, l.p50, l.p90, l.p99, l.p999, l.mean, l.max);
	return l;
}

static void write_chunks(const struct run *r, const char *path)
{
	FILE *f = fopen(path, "w");

	if (!f)
		die("cannot open '%s': %s", path, strerror(errno));
	fprintf(f, "# %s replay: ready_ns (since the replay began) bytes\n",
		engine_name[r->kind]);
	for (size_t i = 0; i < r->nchunks; i++)
		fprintf(f, "%" PRIu64 " %" PRIu64 "\n", r->chunks[i].t_ns,
			r->chunks[i].len);
	if (fclose(f))
		die("cannot write '%s': %s", path, strerror(errno));
}

static uint64_t round_up(uint64_t v, uint64_t unit)
{
	return (v + unit - 1) / unit * unit;
}

/*
 * The memory budget: by default what lets Goblin hold every head and
 * every small object (the design point of WEB, where 97.9% of requests
 * fit in a head); RocksDB gets the same total.
 */
static void set_budget(struct run *r, const struct web *w)
{
	if (r->o.memory == GS_UNSET)
		r->o.memory = round_up(w->nlarge * w->head + 8 * MiB, 2 * MiB);
	if (r->o.small_memory == GS_UNSET)
		r->o.small_memory =
			round_up(w->small_bytes / 4 * 5 + 16 * MiB, 2 * MiB);
	r->budget = r->o.memory + r->o.small_memory;
	printf("engine: %s dir=%s budget=%" PRIu64 " memory=%" PRIu64
	       " small_memory=%" PRIu64 " budget_mib=%.0f\n",
	       engine_name[r->kind], r->dir, r->budget, r->o.memory,
	       r->o.small_memory, (double)r->budget / MiB);
}

/* The figures of one run, for the SUMMARY line. */
struct figures {
	double populate_s; /* puts, persist, settle; payloads generated */
	double gen_s;	   /* of which generating payloads */
	double settle_s;   /* of which RocksDB's compactions after the flush */
	double replay_s;
	uint64_t replay_bytes;
	struct lat ttfb, done;
	bool dropped; /* page cache dropped before the replay */
};

/* What the put threads share: the next object id, the time generating. */
struct putter {
	struct run *r;
	const struct web *w;
	size_t next;
	int64_t gen_ns;
};

/* Put objects in id order, each thread taking the next one not taken. */
static void *put_thread(void *arg)
{
	struct putter *p = arg;
	struct run *r = p->r;
	unsigned char *buf = r->buf;
	char key[KEY_LEN];
	int64_t gen_ns = 0;
	size_t i;

	if (r->put_threads > 1 &&
	    posix_memalign((void **)&buf, 4096, r->buf_size))
		die("out of memory");
	while ((i = __atomic_fetch_add(&p->next, 1, __ATOMIC_RELAXED)) <
	       p->w->n) {
		web_key(key, (uint32_t)i);
		gen_ns += engine_put(r, key, p->w->size[i], p->w->seed[i], buf);
	}
	__atomic_fetch_add(&p->gen_ns, gen_ns, __ATOMIC_RELAXED);
	if (buf != r->buf)
		free(buf);
	return NULL;
}

/*
 * Every object once, in id order (with several threads, each takes the
 * next id), then made durable, then (RocksDB) its flushes and compactions
 * waited for: the replay starts from that state, so reaching it is part
 * of the populate.  gen_s is summed over the threads.
 */
static void populate(struct run *r, const struct web *w, struct figures *f)
{
	struct putter p = { .r = r, .w = w };
	pthread_t tid[MAX_PUT_THREADS];
	struct counters c0, c1;
	int64_t put_ns, persist_ns, settle_ns;

	c0 = counters_now();
	if (r->put_threads == 1) {
		put_thread(&p);
	} else {
		for (unsigned i = 0; i < r->put_threads; i++)
			if (pthread_create(&tid[i], NULL, put_thread, &p))
				die("cannot start a put thread");
		for (unsigned i = 0; i < r->put_threads; i++)
			pthread_join(tid[i], NULL);
	}
	put_ns = gs_mono_ns() - c0.t_ns;
	if (r->kind == E_GOBLIN)
		goblin_persist(r);
	else
		rocks_persist(r);
	persist_ns = gs_mono_ns() - c0.t_ns - put_ns;
	if (r->kind != E_GOBLIN)
		rocks_settle(r);
	c1 = counters_now();
	settle_ns = c1.t_ns - c0.t_ns - put_ns - persist_ns;
	f->populate_s = (c1.t_ns - c0.t_ns) / 1e9;
	f->gen_s = p.gen_ns / 1e9;
	f->settle_s = settle_ns / 1e9;
	printf("populate: objects=%zu threads=%u bytes=%" PRIu64 " s=%.3f "
	       "put_s=%.3f persist_s=%.3f settle_s=%.3f gen_s=%.3f "
	       "mibps=%.1f\n",
	       w->n, r->put_threads, w->total, f->populate_s, put_ns / 1e9,
	       persist_ns / 1e9, f->settle_s, f->gen_s,
	       (double)w->total / MiB / f->populate_s);
	print_counters("populate", &c0, &c1);
	engine_report(r, "after populate");
	print_memory("after populate");
}

/* The measured manifest, one request at a time, every chunk recorded. */
static void replay(struct run *r, const struct web *w, struct figures *f)
{
	uint64_t *ttfb = xmalloc(w->nreq * sizeof(*ttfb));
	uint64_t *done = xmalloc(w->nreq * sizeof(*done));
	uint64_t *lttfb = xmalloc(w->nreq * sizeof(*lttfb));
	uint64_t *ldone = xmalloc(w->nreq * sizeof(*ldone));
	struct counters c0, c1;
	char key[KEY_LEN];
	size_t nl = 0, bound = 0;

	/* Goblin: the head, then io_chunk pieces of the tail (the first
	 * maybe partial); RocksDB: one chunk a request. */
	for (size_t i = 0; i < w->nreq; i++)
		bound += r->kind == E_GOBLIN ?
				 2 + w->size[w->req[i]] / r->o.io_chunk :
				 1;
	chunks_reserve(r, bound);
	r->record = true;
	c0 = counters_now();
	r->epoch = c0.t_ns;
	for (size_t i = 0; i < w->nreq; i++) {
		uint32_t id = w->req[i];

		web_key(key, id);
		engine_get(r, key, w->size[id], 0, &ttfb[i], &done[i]);
		f->replay_bytes += w->size[id];
		if (w->size[id] >= w->head) {
			lttfb[nl] = ttfb[i];
			ldone[nl++] = done[i];
		}
	}
	c1 = counters_now();
	r->record = false;
	f->replay_s = (c1.t_ns - c0.t_ns) / 1e9;
	printf("replay: requests=%zu bytes=%" PRIu64 " s=%.3f mibps=%.1f "
	       "requests_per_s=%.0f chunks=%zu\n",
	       w->nreq, f->replay_bytes, f->replay_s,
	       (double)f->replay_bytes / MiB / f->replay_s,
	       w->nreq / f->replay_s, r->nchunks);
	print_counters("replay", &c0, &c1);
	f->ttfb = print_lat("ttfb_us", ttfb, w->nreq);
	f->done = print_lat("done_us", done, w->nreq);
	print_lat("ttfb_large_us", lttfb, nl);
	print_lat("done_large_us", ldone, nl);
	engine_report(r, "after replay");
	print_memory("after replay");
	free(ttfb);
	free(done);
	free(lttfb);
	free(ldone);
}

/* Every object once more, untimed, byte for byte. */
static void verify_all(struct run *r, const struct web *w)
{
	uint64_t before = r->errors, t, d;
	char key[KEY_LEN];

	for (size_t i = 0; i < w->n; i++) {
		web_key(key, (uint32_t)i);
		engine_get(r, key, w->size[i], w->seed[i], &t, &d);
	}
	printf("verify: objects=%zu errors=%" PRIu64 "\n", w->n,
	       r->errors - before);
}

enum {
	OPT_ENGINE = 256,
	OPT_DIR,
	OPT_POPULATION,
	OPT_MEASURED,
	OPT_MIN_BLOB,
	OPT_CHUNKS,
	OPT_PUT_THREADS,
	OPT_NO_DROP,
	OPT_NO_VERIFY,
	OPT_POPULATE_ONLY,
	OPT_STORE_OPTION, /* + index in gs_option_list */
};

/* Our own options, then the store's (filled in by main). */
#define NOWN 11
static struct option longopts[NOWN + GS_NOPTIONS + 1] = {
	{ "engine", required_argument, NULL, OPT_ENGINE },
	{ "dir", required_argument, NULL, OPT_DIR },
	{ "population", required_argument, NULL, OPT_POPULATION },
	{ "measured", required_argument, NULL, OPT_MEASURED },
	{ "min-blob-size", required_argument, NULL, OPT_MIN_BLOB },
	{ "chunks", required_argument, NULL, OPT_CHUNKS },
	{ "put-threads", required_argument, NULL, OPT_PUT_THREADS },
	{ "no-drop-caches", no_argument, NULL, OPT_NO_DROP },
	{ "no-verify", no_argument, NULL, OPT_NO_VERIFY },
	{ "populate-only", no_argument, NULL, OPT_POPULATE_ONLY },
	{ "help", no_argument, NULL, 'h' },
};

static void store_option(struct gs_options *o, int i, const char *val)
{
	const char *why;

	if (gs_option_set(o, gs_option_list[i].name, val, &why) < 0)
		die("bad value '%s' for --%s: %s", val ? val : "",
		    gs_option_list[i].name, why);
}

int main(int argc, char **argv)
{
	const char *pop_path = NULL, *meas_path = NULL, *chunks_path = NULL;
	bool drop = true, verify = true, populate_only = false;
	struct figures f;
	struct run r;
	struct web w;
	int opt, kind = -1;

	prog_name = "vsrocks";
	memset(&r, 0, sizeof(r));
	memset(&w, 0, sizeof(w));
	memset(&f, 0, sizeof(f));
	r.min_blob_size = 4096;
	r.put_threads = 1;
	gs_options_init(&r.o);
	gs_option_getopt(&longopts[NOWN], OPT_STORE_OPTION);
	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (opt) {
		case OPT_ENGINE:
			for (int i = 0; i < E_COUNT; i++)
				if (!strcmp(optarg, engine_name[i]))
					kind = i;
			if (kind < 0)
				die("unknown engine '%s'", optarg);
			break;
		case OPT_DIR:
			r.dir = optarg;
			break;
		case OPT_POPULATION:
			pop_path = optarg;
			break;
		case OPT_MEASURED:
			meas_path = optarg;
			break;
		case OPT_MIN_BLOB:
			r.min_blob_size =
				parse_size_opt("min-blob-size", optarg);
			break;
		case OPT_CHUNKS:
			chunks_path = optarg;
			break;
		case OPT_PUT_THREADS: {
			char *end;
			unsigned long n = strtoul(optarg, &end, 10);

			if (*end || n < 1 || n > MAX_PUT_THREADS)
				die("--put-threads: a number from 1 to %d, "
				    "not '%s'",
				    MAX_PUT_THREADS, optarg);
			r.put_threads = (unsigned)n;
			break;
		}
		case OPT_NO_DROP:
			drop = false;
			break;
		case OPT_NO_VERIFY:
			verify = false;
			break;
		case OPT_POPULATE_ONLY:
			populate_only = true;
			break;
		default:
			if (opt < OPT_STORE_OPTION ||
			    opt >= OPT_STORE_OPTION + GS_NOPTIONS)
				usage();
			store_option(&r.o, opt - OPT_STORE_OPTION, optarg);
		}
	}
	if (optind != argc || kind < 0 || !r.dir || !pop_path || !meas_path)
		usage();
	r.kind = kind;

	w.head = r.o.ram_head == GS_UNSET ? HEAD : r.o.ram_head;
	load_population(&w, pop_path);
	load_measured(&w, meas_path);
	printf("workload: WEB objects=%zu total=%" PRIu64 " (%.1f MiB) "
	       "large=%" PRIu64 " small_bytes=%" PRIu64 " max=%" PRIu64
	       " requests=%zu\n",
	       w.n, w.total, (double)w.total / MiB, w.nlarge, w.small_bytes,
	       w.max_size, w.nreq);
	set_budget(&r, &w);

	if (mkdir(r.dir, 0755) && errno != EEXIST)
		die("cannot create '%s': %s", r.dir, strerror(errno));
	if (rmdir(r.dir) || mkdir(r.dir, 0755)) /* only an empty one */
		die("'%s' must be empty or absent: %s", r.dir, strerror(errno));
	r.buf_size = kind == E_GOBLIN ? PUT_PIECE : w.max_size;
	if (posix_memalign((void **)&r.buf, 4096, r.buf_size) ||
	    posix_memalign((void **)&r.scratch, 4096, PUT_PIECE))
		die("out of memory");
	if (kind == E_GOBLIN)
		goblin_open(&r);
	else
		rocks_open(&r);

	populate(&r, &w, &f);
	if (populate_only)
		goto out;
	if (drop && !(f.dropped = drop_caches()))
		fprintf(stderr,
			"%s: warning: cannot drop the page cache "
			"(not root?)\n",
			prog_name);
	printf("caches: %s\n",
	       f.dropped ? "dropped before the replay" : "NOT dropped");
	replay(&r, &w, &f);
	if (verify)
		verify_all(&r, &w);
	if (chunks_path)
		write_chunks(&r, chunks_path);
	printf("SUMMARY engine=%s budget_mib=%.0f populate_s=%.3f "
	       "populate_nogen_s=%.3f settle_s=%.3f replay_s=%.3f "
	       "replay_mibps=%.1f ttfb_mean_us=%.2f done_mean_us=%.2f "
	       "caches_dropped=%d errors=%" PRIu64 "\n",
	       engine_name[kind], (double)r.budget / MiB, f.populate_s,
	       f.populate_s - f.gen_s, f.settle_s, f.replay_s,
	       (double)f.replay_bytes / MiB / f.replay_s, f.ttfb.mean,
	       f.done.mean, f.dropped, r.errors);

out:
	if (kind == E_GOBLIN)
		gs_close(r.gs);
	else
		rocks_close(&r);
	free(r.chunks);
	free(r.buf);
	free(r.scratch);
	free(w.size);
	free(w.seed);
	free(w.req);
	return r.errors ? 1 : 0;
}
