/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The store through its public API: placement, streaming, persistence,
 * verification, eviction, read-while-fill, concurrency, a randomized model
 * test and a kill -9 crash test.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <liburing.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>
#include "goblin.h"
#include "internal.h" /* stat_add(): test_stats_threads */
#include <limits.h>

#include "testdir.h"

#define KiB 1024ull
#define MiB (1024ull * KiB)
#define GiB (1024ull * MiB)
#define H   (256 * KiB)

static char dir[64]; /* test_mkdtemp: $TMPDIR up to ~45 bytes */

/* ---- deterministic payloads: byte i of (seed) ---- */

static uint64_t splitmix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t gen_word(uint64_t seed, uint64_t w)
{
	uint64_t x = seed ^ w * 0x2545f4914f6cdd1dull;

	return splitmix(&x);
}

/* Fill buf with bytes [off, off+len) of the stream for @seed. */
static void gen(uint64_t seed, uint64_t off, uint8_t *buf, size_t len)
{
	size_t i = 0;

	while (i < len) {
		uint64_t v = gen_word(seed, (off + i) / 8);
		size_t skip = (off + i) % 8, n = 8 - skip;

		if (n > len - i)
			n = len - i;
		memcpy(buf + i, (uint8_t *)&v + skip, n);
		i += n;
	}
}

static uint64_t seed_of(const char *key, uint64_t version)
{
	return XXH3_64bits_withSeed(key, strlen(key), version);
}

static int setup(void **state)
{
	(void)state;
	assert_non_null(test_mkdtemp(dir, sizeof(dir), "gs-unit"));
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return test_rmtree(dir);
}

static void opts(struct gs_options *o)
{
	gs_options_init(o);
	o->create = true;
	o->no_mlock = true;
	o->memory = 8 * MiB;
	o->small_memory = 4 * MiB;
	o->ssd_size = 256 * MiB;
}

static struct gs_store *open_store(const struct gs_options *o)
{
	struct gs_store *s = NULL;
	char err[256];
	int ret = gs_open(dir, o, &s, err, sizeof(err));

	if (ret)
		fail_msg("gs_open: %d %s", ret, err);
	return s;
}

/* Stream @size bytes of seed into @key, in pieces of @piece. */
static int put_gen(struct gs_store *s, const char *key, uint64_t seed,
		   uint64_t size, size_t piece)
{
	struct gs_put_args a = { .size = size };
	struct gs_writer *w;
	uint8_t *buf = malloc(piece);
	int ret = gs_put_begin(s, key, strlen(key), &a, &w);

	if (ret < 0) {
		free(buf);
		return ret;
	}
	for (uint64_t off = 0; off < size; off += piece) {
		size_t n = size - off < piece ? size - off : piece;

		gen(seed, off, buf, n);
		ret = gs_put_write(w, buf, n);
		if (ret < 0) {
			gs_put_abort(w);
			free(buf);
			return ret;
		}
	}
	free(buf);
	return gs_put_commit(w, NULL);
}

/* Stream @key back with gs_reader_next and compare to the generator. */
static int check_gen(struct gs_store *s, const char *key, uint64_t seed,
		     uint64_t size)
{
	struct gs_reader *r;
	struct gs_chunk c;
	uint64_t off = 0;
	uint8_t *ref = NULL;
	size_t cap = 0;
	int ret = gs_get_open(s, key, strlen(key), 0, &r);

	if (ret < 0)
		return ret;
	if (gs_reader_meta(r)->size != size) {
		gs_reader_close(r);
		return -EINVAL;
	}
	while ((ret = gs_reader_next(r, &c)) == 1) {
		if (c.off != off) {
			ret = -EILSEQ;
			break;
		}
		if (c.len + 16 > cap) {
			cap = c.len + 16;
			ref = realloc(ref, cap);
		}
		gen(seed, off, ref, c.len);
		if (memcmp(ref, c.data, c.len)) {
			ret = -EBADE;
			break;
		}
		off += c.len;
	}
	gs_reader_close(r);
	free(ref);
	if (ret < 0)
		return ret;
	return off == size ? 0 : -ENODATA;
}

static int tier_bytes(struct gs_store *s, const char *key, enum gs_tier t,
		      uint64_t *bytes)
{
	struct gs_range rg[64];
	int n = gs_inspect(s, key, strlen(key), rg, 64);

	*bytes = 0;
	for (int i = 0; i < n && i < 64; i++)
		if (rg[i].tier == t)
			*bytes += rg[i].len;
	return n;
}

/* ---- placement ---- */

static void test_placement_sizes(void **state)
{
	struct gs_options o;
	struct gs_store *s;
	const uint64_t sizes[] = { 0,
				   1,
				   H - 1,
				   H,
				   H + 1,
				   H + 256 * KiB,
				   H + 256 * KiB + 1,
				   3 * MiB + 17 };
	(void)state;

	opts(&o);
	s = open_store(&o);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		char key[32];
		uint64_t ram, small, ssd;

		snprintf(key, sizeof(key), "p%zu", i);
		assert_int_equal(put_gen(s, key, i, sizes[i], 100000), 0);
		assert_int_equal(check_gen(s, key, i, sizes[i]), 0);
		tier_bytes(s, key, GS_TIER_RAM, &ram);
		tier_bytes(s, key, GS_TIER_SMALL, &small);
		tier_bytes(s, key, GS_TIER_SSD, &ssd);
		if (sizes[i] < H) {
			/* below a head: packed in the small arena only */
			assert_int_equal(small, sizes[i]);
			assert_int_equal(ram, 0);
			assert_int_equal(ssd, 0);
		} else {
			/* head in RAM, whole durable copy on SSD */
			assert_int_equal(small, 0);
			assert_int_equal(ram, H);
			assert_int_equal(ssd, sizes[i]);
		}
	}
	gs_close(s);
	/* and all of it after a restart */
	s = open_store(&o);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		char key[32];

		snprintf(key, sizeof(key), "p%zu", i);
		assert_int_equal(check_gen(s, key, i, sizes[i]), 0);
	}
	gs_close(s);
}

static void test_range_reads(void **state)
{
	struct gs_options o;
	struct gs_store *s;
	struct gs_reader *r;
	uint64_t size = 2 * MiB + 12345;
	uint8_t *ref = malloc(size + 8), *buf = malloc(size);
	const uint64_t offs[] = { 0,	 1,	H - 1,	     H,	       H + 1,
				  65535, 65536, 1 * MiB + 3, size - 1, size };
	(void)state;

	opts(&o);
	s = open_store(&o);
	assert_int_equal(put_gen(s, "r", 7, size, 1 * MiB), 0);
	gen(7, 0, ref, size);
	assert_int_equal(gs_get_open(s, "r", 1, 0, &r), 0);
	for (size_t i = 0; i < sizeof(offs) / sizeof(offs[0]); i++) {
		for (uint64_t len = 1; len <= 600 * KiB; len *= 7) {
			uint64_t want = offs[i] + len > size ? size - offs[i] :
							       len;
			ssize_t n = gs_read(r, buf, len, offs[i]);

			assert_int_equal(n, want);
			assert_memory_equal(buf, ref + offs[i], want);
		}
	}
	/* streaming a sub-range returns exactly that range, in order */
	assert_int_equal(gs_reader_range(r, H - 10, 100000), 0);
	{
		struct gs_chunk c;
		uint64_t off = H - 10;

		while (gs_reader_next(r, &c) == 1) {
			assert_int_equal(c.off, off);
			assert_memory_equal(c.data, ref + off, c.len);
			off += c.len;
		}
		assert_int_equal(off, H - 10 + 100000);
	}
	gs_reader_close(r);
	gs_close(s);
	free(ref);
	free(buf);
}

/*
 * A long stream reads bigger: the tail comes in io_chunk pieces until
 * GS_RAMP_BYTES (8 MiB) past where the range began, in 1 MiB pieces after;
 * a range shorter than that keeps the small reads.  Every byte is right
 * across the change.
 */
static void test_long_stream_reads_bigger(void **state)
{
	struct gs_options o;
	struct gs_store *s;
	struct gs_reader *r;
	struct gs_chunk c;
	uint64_t size = 16 * MiB + 12345, off, big = 0, small_max = 0;
	uint8_t *ref = malloc(size);
	(void)state;

	opts(&o);
	s = open_store(&o);
	assert_int_equal(put_gen(s, "long", 11, size, 1 * MiB), 0);
	gen(11, 0, ref, size);
	assert_int_equal(gs_get_open(s, "long", 4, 0, &r), 0);
	for (off = 0; gs_reader_next(r, &c) == 1; off += c.len) {
		assert_int_equal(c.off, off);
		assert_memory_equal(c.data, ref + off, c.len);
		if (off >= H && off + c.len <= H + 8 * MiB && c.len > small_max)
			small_max = c.len;
		if (off >= H + 8 * MiB && c.len == 1 * MiB)
			big++;
	}
	assert_int_equal(off, size);
	assert_int_equal(small_max, o.io_chunk);
	assert_true(o.io_chunk < 1 * MiB);
	assert_true(big >= 6); /* of the 7.7 MiB past the ramp */
	/* a 6 MiB range from the middle: io_chunk pieces only */
	assert_int_equal(gs_reader_range(r, 9 * MiB + 4096, 6 * MiB), 0);
	for (off = 9 * MiB + 4096; gs_reader_next(r, &c) == 1; off += c.len) {
		assert_int_equal(c.off, off);
		assert_true(c.len <= o.io_chunk);
		assert_memory_equal(c.data, ref + off, c.len);
	}
	assert_int_equal(off, 15 * MiB + 4096);
	gs_reader_close(r);
	gs_close(s);
	free(ref);
}

/* A multi-GiB object, streamed in and out, never held in RAM. */
static void test_multi_gib(void **state)
{
	struct gs_options o;
	struct gs_store *s;
	uint64_t size = 2 * GiB + 4097, ssd;
	struct gs_stats st;
	(void)state;

	opts(&o);
	o.ssd_size = 3 * GiB;
	s = open_store(&o);
	assert_int_equal(put_gen(s, "big", 99, size, 1 * MiB), 0);
	tier_bytes(s, "big", GS_TIER_SSD, &ssd);
	assert_int_equal(ssd, size);
	assert_int_equal(check_gen(s, "big", 99, size), 0);
	gs_stats_get(s, &st);
	assert_true(st.bytes_read_ssd >= size - H);
	/* its buffers stayed a few 2 MiB slabs: a lone long stream's
	 * GS_LONG_DEEP read buffers, a writer's two, the journal's */
	assert_true(st.io_buffer_bytes > 0);
	assert_int_equal(st.io_buffer_bytes % (2 * MiB), 0);
	assert_true(st.io_buffer_bytes <=
		    GS_LONG_DEEP * GS_LONG_READ + 8 * MiB);
	gs_close(s);
}

/* ---- checksums ---- */

static void corrupt_byte(const char *path, uint64_t off)
{
	int fd = open(path, O_RDWR);
	uint8_t b;

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &b, 1, off), 1);
	b ^= 0x40;
	assert_int_equal(pwrite(fd, &b, 1, off), 1);
	fsync(fd);
	close(fd);
}

static void test_corrupt_tail_is_miss(void **state)
{
	struct gs_options o;
	struct gs_store *s;
	struct gs_range rg[8];
	struct gs_stats st;
	char path[128];
	void *val = NULL;
	size_t len;
	(void)state;

	opts(&o);
	s = open_store(&o);
	assert_int_equal(put_gen(s, "c", 3, 1 * MiB, 1 * MiB), 0);
	assert_true(gs_inspect(s, "c", 1, rg, 8) >= 2);
	assert_int_equal(rg[1].tier, GS_TIER_SSD);
	snprintf(path, sizeof(path), "%s/ssd/data", dir);
	corrupt_byte(path, rg[1].dev_off + 700 * KiB);
	/* a reader gets an error before any byte of the bad block */
	assert_int_equal(gs_get(s, "c", 1, &val, &len, NULL), -EBADMSG);
	assert_null(val);
	gs_stats_get(s, &st);
	assert_int_equal(st.csum_failures, 1);
	/* and the object is gone: a miss from now on, after restart too */
	assert_int_equal(gs_get(s, "c", 1, &val, &len, NULL), -ENOENT);
	gs_close(s);
	s = open_store(&o);
	assert_int_equal(gs_stat(s, "c", 1, &(struct gs_meta){ 0 }), -ENOENT);
	gs_close(s);
}

static void test_corrupt_head_dropped_at_open(void **state)
{
	struct gs_options o;
	struct gs_store *s;
	struct gs_range rg[8];
	struct gs_stats st;
	char path[128];
	(void)state;

	opts(&o);
	s = open_store(&o);
	assert_int_equal(put_gen(s, "h1", 1, 600 * KiB, 4096), 0);
	assert_int_equal(put_gen(s, "h2", 2, 600 * KiB, 4096), 0);
	assert_true(gs_inspect(s, "h1", 2, rg, 8) >= 2);
	gs_close(s);
	snprintf(path, sizeof(path), "%s/ssd/data", dir);
	corrupt_byte(path, rg[1].dev_off + 10);
	o.preload_heads = true;
	s = open_store(&o);
	gs_stats_get(s, &st);
	assert_int_equal(st.csum_failures, 1);
	assert_int_equal(gs_stat(s, "h1", 2, &(struct gs_meta){ 0 }), -ENOENT);
	assert_int_equal(check_gen(s, "h2", 2, 600 * KiB), 0);
	gs_stats_get(s, &st);
	assert_int_equal(st.head_hits, 1); /* preloaded */
	gs_close(s);
}

static void test_corrupt_journal_record(void **state)
{
	struct gs_options o;
	struct gs_store *s;
	struct gs_stats st;
	char path[128];
	struct stat sb;
	(void)state;

	opts(&o);
	s = open_store(&o);
	assert_int_equal(put_gen(s, "a", 1, 1000, 1000), 0);
	assert_int_equal(put_gen(s, "b", 2, 1000, 1000), 0);
	assert_int_equal(put_gen(s, "c", 3, 1000, 1000), 0);
	gs_close(s);
	snprintf(path, sizeof(path), "%s/journal", dir);
	assert_int_equal(stat(path, &sb), 0);
	/* flip a byte inside the middle record's value */
	corrupt_byte(path, sb.st_size / 2);
	s = open_store(&o);
	gs_stats_get(s, &st);
	assert_int_equal(st.recovery_dropped, 1);
	assert_int_equal(check_gen(s, "a", 1, 1000), 0);
	assert_int_equal(gs_stat(s, "b", 1, &(struct gs_meta){ 0 }), -ENOENT);
	assert_int_equal(check_gen(s, "c", 3, 1000), 0);
	gs_close(s);
}

/* ---- versions, modes, metadata ---- */

static void test_reader_keeps_old_version(void **state)
{
	struct gs_options o;
	struct gs_store *s;
	struct gs_reader *r1, *r2;
	uint8_t *buf = malloc(1 * MiB), *ref = malloc(1 * MiB);
	(void)state;

	opts(&o);
	s = open_store(&o);
	assert_int_equal(put_gen(s, "v", 1, 1 * MiB, 65536), 0);
	assert_int_equal(put_gen(s, "s", 1, 100, 100), 0);
	assert_int_equal(gs_get_open(s, "v", 1, 0, &r1), 0);
	assert_int_equal(gs_get_open(s, "s", 1, 0, &r2), 0);
	assert_int_equal(put_gen(s, "v", 2, 1 * MiB, 65536), 0);
	assert_int_equal(gs_delete(s, "s", 1), 0);
	/* the space of the old version must not be reused while pinned */
	assert_int_equal(put_gen(s, "w", 3, 8 * MiB, 1 * MiB), 0);
	assert_int_equal(gs_read(r1, buf, 1 * MiB, 0), 1 * MiB);
	gen(1, 0, ref, 1 * MiB);
	assert_memory_equal(buf, ref, 1 * MiB);
	assert_int_equal(gs_read(r2, buf, 100, 0), 100);
	gen(1, 0, ref, 100);
	assert_memory_equal(buf, ref, 100);
	gs_reader_close(r1);
	gs_reader_close(r2);
	assert_int_equal(check_gen(s, "v", 2, 1 * MiB), 0);
	assert_int_equal(gs_delete(s, "s", 1), -ENOENT);
	gs_close(s);
	free(buf);
	free(ref);
}

/*
 * The whole-value checksum of a large put streamed in odd pieces is the
 * reference XXH3 of its bytes (this file calls libxxhash's default entry
 * points; the store may call its vector-dispatching ones).
 */
static void test_value_checksum_reference(void **state)
{
	const uint64_t size = MiB + 12345;
	uint8_t *val = malloc(size);
	struct gs_options o;
	struct gs_store *s;
	struct gs_meta m;
	(void)state;

	assert_non_null(val);
	gen(7, 0, val, size);
	opts(&o);
	s = open_store(&o);
	assert_int_equal(put_gen(s, "sum", 7, size, 4093), 0);
	assert_int_equal(gs_stat(s, "sum", 3, &m), 0);
	assert_int_equal(m.xxh3, XXH3_64bits(val, size));
	assert_int_equal(check_gen(s, "sum", 7, size), 0);
	gs_close(s);
	free(val);
}

static void test_modes_and_meta(void **state)
{
	struct gs_options o;
	struct gs_store *s;
	struct gs_put_args a = { .flags = 42,
				 .attr = "text/plain",
				 .attr_len = 10 };
	struct gs_meta m;
	uint64_t cas;
	struct gs_writer *w;
	(void)state;

	opts(&o);
	s = open_store(&o);
	a.mode = GS_REPLACE;
	assert_int_equal(gs_put(s, "m", 1, "x", 1, &a), -ENOENT);
	a.mode = GS_ADD;
	assert_int_equal(gs_put(s, "m", 1, "x", 1, &a), 0);
	assert_int_equal(gs_put(s, "m", 1, "y", 1, &a), -EEXIST);
	assert_int_equal(gs_stat(s, "m", 1, &m), 0);
	assert_int_equal(m.flags, 42);
	assert_int_equal(m.attr_len, 10);
	assert_memory_equal(m.attr, "text/plain", 10);
	assert_int_equal(m.xxh3, XXH3_64bits("x", 1));
	a.mode = GS_CAS;
	a.cas_match = m.cas + 1000;
	assert_int_equal(gs_put(s, "m", 1, "z", 1, &a), -ESTALE);
	a.cas_match = m.cas;
	a.size = 1;
	assert_int_equal(gs_put_begin(s, "m", 1, &a, &w), 0);
	assert_int_equal(gs_put_write(w, "z", 1), 0);
	assert_int_equal(gs_put_write(w, "!", 1), -EOVERFLOW);
	assert_int_equal(gs_put_commit(w, &cas), 0);
	assert_true(cas > m.cas);
	/* short writes do not commit */
	a.mode = GS_SET;
	a.size = 10;
	assert_int_equal(gs_put_begin(s, "m", 1, &a, &w), 0);
	assert_int_equal(gs_put_write(w, "abc", 3), 0);
	assert_int_equal(gs_put_commit(w, NULL), -EPROTO);
	assert_int_equal(gs_stat(s, "m", 1, &m), 0);
	assert_int_equal(m.size, 1);
	assert_int_equal(m.cas, cas);
	/* bad keys and args */
	assert_int_equal(gs_put(s, "", 0, "x", 1, &a), -EINVAL);
	a.attr_len = GS_ATTR_MAX + 1;
	assert_int_equal(gs_put(s, "k", 1, "x", 1, &a), -EINVAL);
	/* expiry: in the past is a miss; touch persists */
	a.attr_len = 0;
	a.exptime = time(NULL) - 1;
	assert_int_equal(gs_put(s, "e", 1, "x", 1, &a), 0);
	assert_int_equal(gs_stat(s, "e", 1, &m), -ENOENT);
	a.exptime = 0;
	assert_int_equal(gs_put(s, "t", 1, "x", 1, &a), 0);
	assert_int_equal(gs_touch(s, "t", 1, time(NULL) + 1000), 0);
	gs_close(s);
	s = open_store(&o);
	assert_int_equal(gs_stat(s, "t", 1, &m), 0);
	assert_true(m.exptime > time(NULL));
	assert_int_equal(gs_stat(s, "m", 1, &m), 0);
	assert_int_equal(m.cas, cas);
	/* cas stays unique across restarts */
	assert_int_equal(gs_put(s, "n", 1, "x", 1, &a), 0);
	assert_int_equal(gs_stat(s, "n", 1, &m), 0);
	assert_true(m.cas > cas);
	gs_close(s);
}

static void test_lock_names_holder(void **state)
{
	struct gs_options o;
	struct gs_store *s, *s2 = NULL;
	char err[256], pid[32], other[PATH_MAX];
	(void)state;

	opts(&o);
	s = open_store(&o);
	assert_int_equal(gs_open(dir, &o, &s2, err, sizeof(err)), -EBUSY);
	assert_null(s2);
	snprintf(pid, sizeof(pid), "pid %d", (int)getpid());
	assert_non_null(strstr(err, pid));
	gs_close(s);
	s = open_store(&o);
	gs_close(s);
	/* not a store, and no create: a clear error */
	o.create = false;
	assert_non_null(test_mkdtemp(other, sizeof(other), "gs-not-a-store"));
	assert_int_equal(gs_open(other, &o, &s2, err, sizeof(err)), -ENOENT);
	rmdir(other);
	assert_non_null(strstr(err, "not a goblin store"));
}

static void test_ssd_dir_recorded(void **state)
{
	struct gs_options o;
	struct gs_store *s = NULL;
	char ssd[96], other[96], err[256];
	(void)state;

	snprintf(ssd, sizeof(ssd), "%s/elsewhere", dir);
	snprintf(other, sizeof(other), "%s/other", dir);
	opts(&o);
	o.ssd_dir = ssd;
	s = open_store(&o);
	assert_int_equal(put_gen(s, "k", 1, 1 * MiB, 1 * MiB), 0);
	gs_close(s);
	/* not named again: the recorded directory is used */
	o.ssd_dir = NULL;
	s = open_store(&o);
	assert_int_equal(check_gen(s, "k", 1, 1 * MiB), 0);
	gs_close(s);
	/* another one: refused, with both named */
	o.ssd_dir = other;
	s = NULL;
	assert_int_equal(gs_open(dir, &o, &s, err, sizeof(err)), -EINVAL);
	assert_null(s);
	assert_non_null(strstr(err, "elsewhere"));
	assert_non_null(strstr(err, "other"));
}

static void test_capacity_shrink_evicts_by_policy(void **state)
{
	struct gs_options o;
	struct gs_store *s;
	struct gs_stats st;
	char key[16];
	(void)state;

	opts(&o);
	s = open_store(&o);
	for (int i = 0; i < 6; i++) {
		snprintf(key, sizeof(key), "k%d", i);
		assert_int_equal(put_gen(s, key, i, 1 * MiB, 1 * MiB), 0);
	}
	gs_close(s);
	/* two objects, and a unit for the journal's records (the journal
	 * shares the tier's file system, and counts in its capacity) */
	o.ssd_size = 2 * MiB + 64 * KiB;
	s = open_store(&o);
	gs_stats_get(s, &st);
	assert_int_equal(st.evictions_ssd, 4);
	assert_int_equal(st.recovery_dropped, 0);
	assert_true(st.ssd_used <= 2 * MiB);
	assert_true(st.journal_bytes <= 64 * KiB);
	assert_int_equal(st.ssd_capacity, 2 * MiB);
	/* the oldest went, the newest stayed */
	assert_int_equal(gs_stat(s, "k0", 2, &(struct gs_meta){ 0 }), -ENOENT);
	assert_int_equal(check_gen(s, "k5", 5, 1 * MiB), 0);
	assert_int_equal(check_gen(s, "k4", 4, 1 * MiB), 0);
	/* new puts stay within the new capacity */
	assert_int_equal(put_gen(s, "n", 9, 1 * MiB, 1 * MiB), 0);
	gs_stats_get(s, &st);
	assert_true(st.ssd_used <= 2 * MiB);
	gs_close(s);
}

/*
 * Regression, issue 16: the journal shares the SSD tier's file system, and
 * holds the small objects' values: its records count in the tier's
 * capacity, so that the tier and the journal together stay within it
 * (they filled the file system past --ssd-size before).
 */
static void test_issue16_journal_counts_in_capacity(void **state)
{
	struct gs_options o;
	struct gs_store *s;
	struct gs_stats st;
	char key[16];
	(void)state;

	opts(&o);
	o.ssd_size = 8 * MiB;
	s = open_store(&o);
	for (int i = 0; i < 20; i++) { /* 4 MB of small values */
		snprintf(key, sizeof(key), "s%d", i);
		assert_int_equal(put_gen(s, key, i, 200000, 200000), 0);
	}
	for (int i = 0; i < 8; i++) { /* 8 MiB of large ones */
		snprintf(key, sizeof(key), "l%d", i);
		assert_int_equal(put_gen(s, key, 100 + i, 1 * MiB, 1 * MiB), 0);
	}
	gs_stats_get(s, &st);
	assert_true(st.journal_bytes > 4000000);
	assert_true(st.ssd_capacity + st.journal_bytes <= 8 * MiB + 64 * KiB);
	assert_true(st.ssd_used + st.journal_bytes <= 8 * MiB + 64 * KiB);
	assert_true(st.evictions_ssd > 0);
	/* the newest large ones and every small one are there */
	assert_int_equal(check_gen(s, "l7", 107, 1 * MiB), 0);
	assert_int_equal(check_gen(s, "l6", 106, 1 * MiB), 0);
	for (int i = 0; i < 20; i++) {
		snprintf(key, sizeof(key), "s%d", i);
		assert_int_equal(check_gen(s, key, i, 200000), 0);
	}
	gs_close(s);
}

/* ---- puts of unknown size, rename ---- */

static int put_unknown(struct gs_store *s, const char *key, uint64_t seed,
		       uint64_t size, size_t piece)
{
	struct gs_put_args a = { .size = GS_SIZE_UNKNOWN };
	struct gs_writer *w;
	uint8_t *buf = malloc(piece);
	int ret = gs_put_begin(s, key, strlen(key), &a, &w);

	for (uint64_t off = 0; ret == 0 && off < size; off += piece) {
		size_t n = size - off < piece ? size - off : piece;

		gen(seed, off, buf, n);
		ret = gs_put_write(w, buf, n);
		if (ret < 0)
			gs_put_abort(w);
	}
	free(buf);
	return ret < 0 ? ret : gs_put_commit(w, NULL);
}

static void test_put_unknown_size(void **state)
{
	struct gs_options o;
	struct gs_store *s;
	struct gs_stats st;
	const uint64_t sizes[] = { 0,	  1,	   H - 1,	H,
				   H + 1, 1 * MiB, 1 * MiB + 1, 5 * MiB + 3 };
	uint64_t units = 0;
	(void)state;

	opts(&o);
	s = open_store(&o);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		char key[16];
		uint64_t ram, small, ssd;

		snprintf(key, sizeof(key), "u%zu", i);
		assert_int_equal(put_unknown(s, key, i, sizes[i], 70000), 0);
		assert_int_equal(check_gen(s, key, i, sizes[i]), 0);
		tier_bytes(s, key, GS_TIER_RAM, &ram);
		tier_bytes(s, key, GS_TIER_SMALL, &small);
		tier_bytes(s, key, GS_TIER_SSD, &ssd);
		if (sizes[i] < H) { /* learnt small at commit */
			assert_int_equal(small, sizes[i]);
			assert_int_equal(ssd + ram, 0);
		} else {
			assert_int_equal(ram, H);
			assert_int_equal(ssd, sizes[i]);
			units += (sizes[i] + 65535) / 65536;
		}
	}
	/* the over-allocation of the growing puts was given back */
	gs_stats_get(s, &st);
	assert_int_equal(st.ssd_used, units * 65536);
	gs_close(s);
	s = open_store(&o);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		char key[16];

		snprintf(key, sizeof(key), "u%zu", i);
		assert_int_equal(check_gen(s, key, i, sizes[i]), 0);
	}
	gs_close(s);
}

static void test_rename(void **state)
{
	struct gs_options o;
	struct gs_store *s;
	struct gs_reader *r_old, *r_src;
	uint8_t *buf = malloc(1 * MiB), *ref = malloc(1 * MiB);
	(void)state;

	opts(&o);
	s = open_store(&o);
	assert_int_equal(put_gen(s, "dst", 1, 1 * MiB, 1 * MiB), 0);
	assert_int_equal(put_gen(s, "tmp.1", 2, 1 * MiB, 1 * MiB), 0);
	assert_int_equal(put_gen(s, "small.tmp", 3, 100, 100), 0);
	assert_int_equal(gs_get_open(s, "dst", 3, 0, &r_old), 0);
	assert_int_equal(gs_get_open(s, "tmp.1", 5, 0, &r_src), 0);
	/* publish by rename, over an existing key */
	assert_int_equal(gs_rename(s, "tmp.1", 5, "dst", 3), 0);
	assert_int_equal(gs_stat(s, "tmp.1", 5, &(struct gs_meta){ 0 }),
			 -ENOENT);
	assert_int_equal(check_gen(s, "dst", 2, 1 * MiB), 0);
	/* readers of either version keep theirs */
	assert_int_equal(gs_read(r_old, buf, 1 * MiB, 0), 1 * MiB);
	gen(1, 0, ref, 1 * MiB);
	assert_memory_equal(buf, ref, 1 * MiB);
	assert_int_equal(gs_read(r_src, buf, 1 * MiB, 0), 1 * MiB);
	gen(2, 0, ref, 1 * MiB);
	assert_memory_equal(buf, ref, 1 * MiB);
	gs_reader_close(r_old);
	gs_reader_close(r_src);
	assert_int_equal(gs_rename(s, "small.tmp", 9, "small", 5), 0);
	assert_int_equal(gs_rename(s, "nothing", 7, "x", 1), -ENOENT);
	assert_int_equal(gs_rename(s, "small", 5, "small", 5), 0);
	assert_int_equal(gs_rename(s, "", 0, "x", 1), -EINVAL);
	/* renamed twice: the last name wins */
	assert_int_equal(gs_rename(s, "dst", 3, "dst2", 4), 0);
	gs_close(s);
	/* after a restart (replay), and after the journal is rewritten */
	for (int i = 0; i < 2; i++) {
		struct gs_stats st;

		s = open_store(&o);
		assert_int_equal(check_gen(s, "dst2", 2, 1 * MiB), 0);
		assert_int_equal(check_gen(s, "small", 3, 100), 0);
		assert_int_equal(gs_stat(s, "dst", 3, &(struct gs_meta){ 0 }),
				 -ENOENT);
		assert_int_equal(gs_stat(s, "tmp.1", 5, &(struct gs_meta){ 0 }),
				 -ENOENT);
		gs_stats_get(s, &st);
		assert_int_equal(st.objects, 2);
		/* the old dst's space was freed: 1 MiB object, 16 units */
		assert_int_equal(st.ssd_used, 1 * MiB);
		gs_close(s);
	}
	free(buf);
	free(ref);
}

struct drops {
	struct gs_store *s; /* set: unlocked calls stat the key */
	int n;		    /* GS_CHANGE_DROP calls */
	char keys[64][32];
	int kinds[4];	  /* calls, by kind */
	int stat_ok;	  /* unlocked calls whose gs_stat agreed */
	char last[2][32]; /* the last unlocked call's key (and to) */
	uint64_t last_cas;
};

static void on_drop(void *arg, const struct gs_change *c)
{
	struct drops *d = arg;
	struct gs_meta m;

	d->kinds[c->kind]++;
	if (c->kind != GS_CHANGE_DROP) {
		/* outside the lock: the store may be asked what it holds */
		const void *k = c->kind == GS_CHANGE_RENAME ? c->to : c->key;
		size_t kl = c->kind == GS_CHANGE_RENAME ? c->tlen : c->klen;
		int ret = gs_stat(d->s, k, kl, &m);

		assert_false(c->locked);
		if (c->kind == GS_CHANGE_DELETE ? ret == -ENOENT :
						  ret == 0 && m.cas == c->cas)
			d->stat_ok++;
		snprintf(d->last[0], 32, "%.*s", (int)c->klen,
			 (const char *)c->key);
		snprintf(d->last[1], 32, "%.*s", (int)c->tlen,
			 c->to ? (const char *)c->to : "");
		d->last_cas = c->cas;
		return;
	}
	assert_true(c->locked);
	if (d->n < 64 && c->klen < 32) {
		memcpy(d->keys[d->n], c->key, c->klen);
		d->keys[d->n][c->klen] = '\0';
	}
	d->n++;
}

static bool dropped(const struct drops *d, const char *key)
{
	for (int i = 0; i < d->n && i < 64; i++)
		if (!strcmp(d->keys[i], key))
			return true;
	return false;
}

static void test_change_hook(void **state)
{
	struct gs_options o;
	struct gs_store *s;
	struct drops d = { 0 };
	struct gs_put_args a = { .exptime = 0 };
	struct gs_range rg[4];
	char path[128], key[16];
	void *val = NULL;
	size_t len;
	(void)state;

	opts(&o);
	o.ssd_size = 4 * MiB + 64 * KiB; /* a unit for the journal */
	s = open_store(&o);
	d.s = s;
	gs_set_change_hook(s, on_drop, &d);
	/* what a caller does is reported, once, after the store unlocked */
	assert_int_equal(put_gen(s, "x", 1, 1 * MiB, 1 * MiB), 0);
	assert_int_equal(put_gen(s, "x", 2, 1 * MiB, 1 * MiB), 0);
	assert_int_equal(d.kinds[GS_CHANGE_PUBLISH], 2);
	assert_int_equal(gs_rename(s, "x", 1, "y", 1), 0);
	assert_int_equal(d.kinds[GS_CHANGE_RENAME], 1);
	assert_string_equal(d.last[0], "x");
	assert_string_equal(d.last[1], "y");
	assert_int_equal(gs_delete(s, "y", 1), 0);
	assert_int_equal(d.kinds[GS_CHANGE_DELETE], 1);
	assert_string_equal(d.last[0], "y");
	assert_int_equal(d.stat_ok, 4);
	/* what did not happen is not */
	assert_int_equal(gs_delete(s, "y", 1), -ENOENT);
	assert_int_equal(gs_rename(s, "y", 1, "z", 1), -ENOENT);
	a.mode = GS_REPLACE;
	assert_int_equal(gs_put(s, "y", 1, "v", 1, &a), -ENOENT);
	a.mode = GS_SET;
	assert_int_equal(d.kinds[GS_CHANGE_PUBLISH] +
				 d.kinds[GS_CHANGE_RENAME] +
				 d.kinds[GS_CHANGE_DELETE],
			 4);
	assert_int_equal(d.n, 0);
	/* eviction from a full SSD tier is */
	for (int i = 0; i < 6; i++) {
		snprintf(key, sizeof(key), "e%d", i);
		assert_int_equal(put_gen(s, key, i, 1 * MiB, 1 * MiB), 0);
	}
	assert_int_equal(d.n, 2);
	assert_true(dropped(&d, "e0") && dropped(&d, "e1"));
	/* expiry is */
	a.exptime = time(NULL) - 1;
	assert_int_equal(gs_put(s, "old", 3, "v", 1, &a), 0);
	assert_int_equal(gs_stat(s, "old", 3, &(struct gs_meta){ 0 }), -ENOENT);
	assert_true(dropped(&d, "old"));
	/* and a failed verification is */
	assert_true(gs_inspect(s, "e5", 2, rg, 4) >= 2);
	snprintf(path, sizeof(path), "%s/ssd/data", dir);
	corrupt_byte(path, rg[1].dev_off + 500 * KiB);
	assert_int_equal(gs_get(s, "e5", 2, &val, &len, NULL), -EBADMSG);
	assert_true(dropped(&d, "e5"));
	assert_int_equal(d.n, 4);
	assert_int_equal(d.kinds[GS_CHANGE_DROP], 4);
	gs_set_change_hook(s, NULL, NULL);
	/* removed: nothing more is reported */
	assert_int_equal(gs_delete(s, "e4", 2), 0);
	assert_int_equal(d.kinds[GS_CHANGE_DELETE], 1);
	gs_close(s);
}

/* Regression: an open naming no sizes (a goblinctl stats) must not shrink
 * a store that runs bigger, evicting what it holds. */
static void test_sizes_remembered(void **state)
{
	struct gs_options o;
	struct gs_store *s;
	struct gs_stats st;
	char key[16];
	(void)state;

	opts(&o);
	o.small_memory = 40 * MiB; /* bigger than the default 16 MiB */
	o.memory = 4 * MiB;
	s = open_store(&o);
	for (int i = 0; i < 120; i++) { /* 24 MB of small objects */
		snprintf(key, sizeof(key), "s%d", i);
		assert_int_equal(put_gen(s, key, i, 200000, 200000), 0);
	}
	gs_close(s);
	gs_options_init(&o); /* no sizes at all */
	o.no_mlock = true;
	s = open_store(&o);
	gs_stats_get(s, &st);
	assert_int_equal(st.small_capacity, 40 * MiB);
	assert_int_equal(st.ram_capacity, 4 * MiB);
	/* the journal, holding the small values, counts in the capacity */
	assert_int_equal(st.ssd_capacity + (st.journal_bytes + 64 * KiB - 1) /
						   (64 * KiB) * (64 * KiB),
			 256 * MiB);
	assert_int_equal(st.evictions_small + st.recovery_dropped, 0);
	assert_int_equal(st.small_objects, 120);
	gs_close(s);
	/* a size that is given is used, and remembered */
	o.memory = 8 * MiB;
	s = open_store(&o);
	gs_stats_get(s, &st);
	assert_int_equal(st.ram_capacity, 8 * MiB);
	gs_close(s);
	o.memory = GS_UNSET;
	s = open_store(&o);
	gs_stats_get(s, &st);
	assert_int_equal(st.ram_capacity, 8 * MiB);
	assert_int_equal(st.small_objects, 120);
	for (int i = 0; i < 120; i++) {
		snprintf(key, sizeof(key), "s%d", i);
		assert_int_equal(check_gen(s, key, i, 200000), 0);
	}
	gs_close(s);
}

/* The store options by name, as the command lines and goblin.conf use. */
static void test_option_set(void **state)
{
	struct gs_options o;
	const char *why;
	int n = 0;
	(void)state;

	gs_options_init(&o);
	assert_int_equal(gs_option_set(&o, "memory", "64M", &why), 0);
	assert_int_equal(o.memory, 64 * MiB);
	assert_int_equal(gs_option_set(&o, "ssd-size", "2G", &why), 0);
	assert_int_equal(o.ssd_size, 2 * GiB);
	assert_int_equal(gs_option_set(&o, "io-depth", "8", &why), 0);
	assert_int_equal(o.io_depth, 8);
	assert_int_equal(gs_option_set(&o, "ssd-dir", "/x", &why), 0);
	assert_string_equal(o.ssd_dir, "/x");
	assert_int_equal(gs_option_set(&o, "no-mlock", NULL, &why), 0);
	assert_true(o.no_mlock);
	assert_int_equal(gs_option_set(&o, "preload-heads", NULL, &why), 0);
	assert_true(o.preload_heads);
	assert_int_equal(gs_option_set(&o, "no-preload-heads", NULL, &why), 0);
	assert_false(o.preload_heads);
	assert_int_equal(o.numa_node, -1); /* unbound unless asked */
	assert_int_equal(gs_option_set(&o, "numa", "1", &why), 0);
	assert_int_equal(o.numa_node, 1);
	assert_int_equal(gs_option_set(&o, "no-numa-promotion", NULL, &why), 0);
	assert_true(o.no_numa_promotion);
	assert_int_equal(gs_option_set(&o, "perverse", NULL, &why), 0);
	assert_true(o.perverse);
	/* bad values say why and change nothing */
	assert_int_equal(gs_option_set(&o, "memory", "lots", &why), -EINVAL);
	assert_non_null(why);
	assert_int_equal(o.memory, 64 * MiB);
	assert_int_equal(gs_option_set(&o, "memory", "99999999999T", &why),
			 -ERANGE);
	assert_int_equal(gs_option_set(&o, "io-depth", "0", &why), -EINVAL);
	assert_int_equal(gs_option_set(&o, "io-depth", "33", &why), -EINVAL);
	assert_int_equal(gs_option_set(&o, "io-depth", "4x", &why), -EINVAL);
	assert_int_equal(o.io_depth, 8);
	assert_int_equal(gs_option_set(&o, "ssd-dir", "", &why), -EINVAL);
	assert_int_equal(gs_option_set(&o, "numa", "64", &why), -EINVAL);
	assert_int_equal(gs_option_set(&o, "numa", "-1", &why), -EINVAL);
	assert_int_equal(gs_option_set(&o, "numa", "", &why), -EINVAL);
	assert_int_equal(o.numa_node, 1);
	assert_int_equal(gs_option_set(&o, "colour", "red", &why), -ENOENT);
	/* every listed option is known to the setter */
	for (const struct gs_option_desc *d = gs_option_list; d->name; d++) {
		assert_int_not_equal(gs_option_set(&o, d->name,
						   d->arg ? "4096" : NULL,
						   &why),
				     -ENOENT);
		n++;
	}
	assert_int_equal(n, GS_NOPTIONS);
}

/* ---- eviction ---- */

static void test_ssd_eviction_scan_resistant(void **state)
{
	struct gs_options o;
	struct gs_store *s;
	struct gs_stats st;
	char key[32];
	(void)state;

	opts(&o);
	o.ssd_size = 32 * MiB;
	s = open_store(&o);
	/* 8 hot objects, each read twice (protected) */
	for (int i = 0; i < 8; i++) {
		snprintf(key, sizeof(key), "hot%d", i);
		assert_int_equal(put_gen(s, key, i, 1 * MiB, 1 * MiB), 0);
		assert_int_equal(check_gen(s, key, i, 1 * MiB), 0);
		assert_int_equal(check_gen(s, key, i, 1 * MiB), 0);
	}
	/* a one-pass scan of 60 MiB through a 32 MiB tier */
	for (int i = 0; i < 60; i++) {
		snprintf(key, sizeof(key), "scan%d", i);
		assert_int_equal(put_gen(s, key, 100 + i, 1 * MiB, 1 * MiB), 0);
	}
	gs_stats_get(s, &st);
	assert_true(st.evictions_ssd >= 36);
	assert_true(st.ssd_used <= 32 * MiB);
	for (int i = 0; i < 8; i++) {
		snprintf(key, sizeof(key), "hot%d", i);
		assert_int_equal(check_gen(s, key, i, 1 * MiB), 0);
	}
	/* the oldest scan objects went first, the newest are there */
	assert_int_equal(gs_stat(s, "scan0", 5, &(struct gs_meta){ 0 }),
			 -ENOENT);
	assert_int_equal(check_gen(s, "scan59", 159, 1 * MiB), 0);
	/* too big for the tier */
	assert_int_equal(put_gen(s, "huge", 1, 33 * MiB, 1 * MiB), -EFBIG);
	gs_close(s);
	/* evictions are durable: evicted objects do not come back */
	s = open_store(&o);
	assert_int_equal(gs_stat(s, "scan0", 5, &(struct gs_meta){ 0 }),
			 -ENOENT);
	assert_int_equal(check_gen(s, "hot3", 3, 1 * MiB), 0);
	gs_close(s);
}

static void test_head_eviction_and_promotion(void **state)
{
	struct gs_options o;
	struct gs_store *s;
	struct gs_stats st;
	uint64_t ram;
	char key[32];
	(void)state;

	opts(&o);
	o.memory = 2 * MiB; /* 8 head slots */
	s = open_store(&o);
	for (int i = 0; i < 20; i++) {
		snprintf(key, sizeof(key), "o%d", i);
		assert_int_equal(put_gen(s, key, i, 512 * KiB, 65536), 0);
	}
	gs_stats_get(s, &st);
	assert_int_equal(st.ram_slots, 8);
	assert_int_equal(st.ram_slots_used, 8);
	assert_int_equal(st.evictions_head, 12);
	/* the first object lost its head but not its data */
	tier_bytes(s, "o0", GS_TIER_RAM, &ram);
	assert_int_equal(ram, 0);
	assert_int_equal(check_gen(s, "o0", 0, 512 * KiB), 0);
	gs_stats_get(s, &st);
	assert_int_equal(st.head_misses, 1);
	assert_int_equal(st.head_promotions, 1);
	tier_bytes(s, "o0", GS_TIER_RAM, &ram);
	assert_int_equal(ram, H);
	assert_int_equal(check_gen(s, "o0", 0, 512 * KiB), 0);
	gs_stats_get(s, &st);
	assert_int_equal(st.head_hits, 1);
	gs_close(s);
}

static void test_small_arena_compaction(void **state)
{
	struct gs_options o;
	struct gs_store *s;
	struct gs_stats st;
	char key[32];
	(void)state;

	opts(&o);
	o.block = 256 * KiB;
	o.small_memory = 1 * MiB; /* 4 blocks */
	s = open_store(&o);
	/* ~900 KiB of 3000-byte objects, then delete 3 of every 4 */
	for (int i = 0; i < 300; i++) {
		snprintf(key, sizeof(key), "s%d", i);
		assert_int_equal(put_gen(s, key, i, 3000, 3000), 0);
	}
	for (int i = 0; i < 300; i++) {
		if (i % 4 == 0)
			continue;
		snprintf(key, sizeof(key), "s%d", i);
		assert_int_equal(gs_delete(s, key, strlen(key)), 0);
	}
	/* more objects: room must come from compaction, not eviction */
	for (int i = 300; i < 400; i++) {
		snprintf(key, sizeof(key), "s%d", i);
		assert_int_equal(put_gen(s, key, i, 3000, 3000), 0);
	}
	gs_stats_get(s, &st);
	assert_true(st.compactions >= 1);
	assert_int_equal(st.evictions_small, 0);
	assert_int_equal(st.small_objects, 75 + 100);
	for (int i = 0; i < 400; i++) {
		snprintf(key, sizeof(key), "s%d", i);
		if (i < 300 && i % 4)
			continue;
		assert_int_equal(check_gen(s, key, i, 3000), 0);
	}
	/* and when it is really full, the coldest leave RAM, not the store */
	for (int i = 400; i < 800; i++) {
		snprintf(key, sizeof(key), "s%d", i);
		assert_int_equal(put_gen(s, key, i, 3000, 3000), 0);
	}
	gs_stats_get(s, &st);
	assert_true(st.small_chills > 0);
	assert_true(st.small_cold > 0);
	assert_int_equal(st.evictions_small, 0);
	assert_true(st.small_live <= 1 * MiB);
	assert_int_equal(check_gen(s, "s799", 799, 3000), 0);
	assert_int_equal(check_gen(s, "s400", 400, 3000), 0); /* cold */
	gs_stats_get(s, &st);
	assert_true(st.small_warms >= 1);
	gs_close(s);
}

/* Small objects pushed out of RAM stay readable from the journal: across a
 * restart, a journal rewrite, verified on the way back, bounded on disk. */
static void test_cold_small_objects(void **state)
{
	struct gs_options o;
	struct gs_store *s;
	struct gs_stats st;
	struct gs_range rg[2];
	char key[16], path[128];
	(void)state;

	opts(&o);
	o.block = 256 * KiB;
	o.small_memory = 512 * KiB; /* 2 blocks for 2 MB of values */
	s = open_store(&o);
	for (int i = 0; i < 200; i++) {
		snprintf(key, sizeof(key), "c%d", i);
		assert_int_equal(put_gen(s, key, i, 10000, 10000), 0);
	}
	gs_stats_get(s, &st);
	assert_int_equal(st.small_objects, 200);
	assert_true(st.small_cold > 100);
	/* c0 is cold: its bytes are in the journal */
	assert_int_equal(gs_inspect(s, "c0", 2, rg, 2), 1);
	assert_int_equal(rg[0].tier, GS_TIER_SSD);
	for (int i = 0; i < 200; i++) {
		snprintf(key, sizeof(key), "c%d", i);
		assert_int_equal(check_gen(s, key, i, 10000), 0);
	}
	gs_close(s);
	/* restart: replay keeps what does not fit cold, and nothing drops */
	s = open_store(&o);
	gs_stats_get(s, &st);
	assert_int_equal(st.small_objects, 200);
	assert_int_equal(st.evictions_small + st.recovery_dropped, 0);
	/* rename and rewrite the journal (many replaced versions of one key)
	 * while most values are cold: they move with their records */
	assert_int_equal(gs_rename(s, "c5", 2, "moved", 5), 0);
	gs_close(s);
	s = open_store(&o);
	for (int i = 0; i < 1200; i++) /* 6 MB of garbage over 2 MB */
		assert_int_equal(put_gen(s, "churn", i, 5000, 5000), 0);
	gs_close(s);
	s = open_store(&o); /* the garbage makes this open rewrite */
	gs_stats_get(s, &st);
	assert_int_equal(st.journal_rewrites, 1);
	for (int i = 0; i < 200; i++) {
		snprintf(key, sizeof(key), "c%d", i);
		if (i == 5)
			continue;
		assert_int_equal(check_gen(s, key, i, 10000), 0);
	}
	assert_int_equal(check_gen(s, "moved", 5, 10000), 0);
	assert_int_equal(gs_inspect(s, "c1", 2, rg, 2), 1);
	gs_close(s);
	/* a cold value that fails its checksum is a miss, never bad bytes */
	s = open_store(&o);
	key[0] = '\0';
	for (int i = 0; i < 200 && !key[0]; i++) {
		snprintf(key, sizeof(key), "c%d", i);
		if (gs_inspect(s, key, strlen(key), rg, 2) != 1 ||
		    rg[0].tier != GS_TIER_SSD)
			key[0] = '\0';
	}
	assert_true(key[0] != '\0');
	snprintf(path, sizeof(path), "%s/journal", dir);
	corrupt_byte(path, rg[0].dev_off + 5000);
	{
		void *val = NULL;
		size_t len;

		assert_int_equal(gs_get(s, key, strlen(key), &val, &len, NULL),
				 -ENOENT);
		assert_null(val);
	}
	gs_stats_get(s, &st);
	assert_int_equal(st.csum_failures, 1);
	assert_int_equal(gs_stat(s, key, strlen(key), &(struct gs_meta){ 0 }),
			 -ENOENT);
	gs_close(s);
	s = open_store(&o); /* and it stays gone */
	assert_int_equal(gs_stat(s, key, strlen(key), &(struct gs_meta){ 0 }),
			 -ENOENT);
	gs_close(s);
}

/* Cold small objects are bounded on disk: a quarter of the SSD tier. */
static void test_cold_small_bounded(void **state)
{
	struct gs_options o;
	struct gs_store *s;
	struct gs_stats st;
	char key[16];
	(void)state;

	opts(&o);
	o.block = 256 * KiB;
	o.small_memory = 512 * KiB;
	o.ssd_size = 4 * MiB; /* cold values: at most 1 MiB */
	s = open_store(&o);
	for (int i = 0; i < 300; i++) {
		snprintf(key, sizeof(key), "b%d", i);
		assert_int_equal(put_gen(s, key, i, 10000, 10000), 0);
	}
	gs_stats_get(s, &st);
	assert_true(st.small_cold_bytes <= 1 * MiB);
	assert_true(st.evictions_small > 0);
	assert_int_equal(st.small_objects, 300 - st.evictions_small);
	assert_int_equal(gs_stat(s, "b0", 2, &(struct gs_meta){ 0 }), -ENOENT);
	assert_int_equal(check_gen(s, "b299", 299, 10000), 0);
	gs_close(s);
}

static void test_journal_rewritten_at_open(void **state)
{
	struct gs_options o;
	struct gs_store *s;
	struct gs_stats st, st2;
	(void)state;

	opts(&o);
	s = open_store(&o);
	for (int i = 0; i < 400; i++) /* 400 versions of one key */
		assert_int_equal(put_gen(s, "k", i, 10000, 10000), 0);
	gs_stats_get(s, &st);
	assert_true(st.journal_bytes > 400 * 10000);
	gs_close(s);
	s = open_store(&o);
	gs_stats_get(s, &st2);
	assert_true(st2.journal_bytes < 20000);
	assert_int_equal(st2.journal_rewrites, 1);
	assert_int_equal(check_gen(s, "k", 399, 10000), 0);
	gs_close(s);
}

/*
 * Small values of 32 KiB and more are journalled with O_DIRECT, each record
 * at a 4 KiB boundary: the zeros before it are padding, not damage, at
 * open; cold ones read back from where the record landed.
 */
static void test_journal_direct_records(void **state)
{
	struct gs_options o;
	struct gs_store *s;
	struct gs_stats st;
	char key[16];
	(void)state;

	opts(&o);
	o.block = 256 * KiB;
	o.small_memory = 512 * KiB; /* most of 1.2 MB of values go cold */
	s = open_store(&o);
	assert_int_equal(put_gen(s, "tiny", 1, 100, 100), 0);
	gs_stats_get(s, &st);
	assert_int_not_equal(st.journal_bytes % 4096, 0);
	for (int i = 0; i < 20; i++) {
		snprintf(key, sizeof(key), "d%d", i);
		assert_int_equal(put_gen(s, key, i, 60000 + i, 7000), 0);
		gs_stats_get(s, &st);
		assert_int_equal(st.journal_bytes % 4096, 0);
	}
	assert_true(st.small_cold > 10);
	assert_int_equal(put_gen(s, "tiny2", 2, 200, 200), 0);
	for (int i = 0; i < 20; i++) {
		snprintf(key, sizeof(key), "d%d", i);
		assert_int_equal(check_gen(s, key, i, 60000 + i), 0);
	}
	gs_close(s);
	s = open_store(&o);
	gs_stats_get(s, &st);
	assert_int_equal(st.recovery_dropped, 0);
	assert_int_equal(st.journal_rewrites, 0);
	assert_int_equal(check_gen(s, "tiny", 1, 100), 0);
	assert_int_equal(check_gen(s, "tiny2", 2, 200), 0);
	for (int i = 0; i < 20; i++) {
		snprintf(key, sizeof(key), "d%d", i);
		assert_int_equal(check_gen(s, key, i, 60000 + i), 0);
	}
	gs_close(s);
}

/* Small values of record @i: buffered and direct journal records in turn. */
static uint64_t record_size(int i)
{
	return i % 2 ? 40000 + (uint64_t)i : 300 + (uint64_t)i;
}

/*
 * Read back records 0 .. @n-1 put as PREFIXi with seed @seed0 + i and
 * size record_size(i): 0, or 1 + the first one that is not right.
 */
static int check_records(struct gs_store *s, const char *prefix, uint64_t seed0,
			 int n)
{
	char key[32];

	for (int i = 0; i < n; i++) {
		snprintf(key, sizeof(key), "%s%d", prefix, i);
		if (check_gen(s, key, seed0 + (uint64_t)i, record_size(i)))
			return 1 + i;
	}
	return 0;
}

/* Size of the journal file. */
static uint64_t journal_file_size(void)
{
	char path[128];
	struct stat sb;

	snprintf(path, sizeof(path), "%s/journal", dir);
	assert_int_equal(stat(path, &sb), 0);
	return (uint64_t)sb.st_size;
}

/*
 * The journal file is allocated ahead of its records; a store that ends
 * without closing leaves that room as zeros, which replay takes for the
 * end of the journal (nothing dropped, no rewrite), and the next records
 * go into it.  A clean close cuts the file at its last record.
 */
static void test_journal_preallocated(void **state)
{
	struct gs_options o;
	struct gs_store *s;
	struct gs_stats st;
	uint64_t jbytes;
	char key[16];
	pid_t pid;
	int ws;
	(void)state;

	opts(&o);
	o.block = 256 * KiB;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		s = open_store(&o);
		for (int i = 0; i < 30; i++) {
			snprintf(key, sizeof(key), "p%d", i);
			if (put_gen(s, key, i, record_size(i), 7000))
				_exit(1);
		}
		gs_stats_get(s, &st);
		if (journal_file_size() <= st.journal_bytes)
			_exit(2); /* nothing allocated ahead */
		_exit(0);	  /* no gs_close: as if killed */
	}
	assert_int_equal(waitpid(pid, &ws, 0), pid);
	assert_true(WIFEXITED(ws));
	assert_int_equal(WEXITSTATUS(ws), 0);

	s = open_store(&o);
	gs_stats_get(s, &st);
	assert_int_equal(st.recovery_dropped, 0);
	assert_int_equal(st.journal_rewrites, 0);
	assert_int_equal(st.objects, 30);
	assert_true(journal_file_size() > st.journal_bytes);
	jbytes = st.journal_bytes;
	assert_int_equal(put_gen(s, "after", 99, 50000, 7000), 0);
	gs_stats_get(s, &st);
	assert_true(st.journal_bytes > jbytes);
	gs_close(s);
	assert_int_equal(journal_file_size(), st.journal_bytes);

	s = open_store(&o);
	gs_stats_get(s, &st);
	assert_int_equal(st.recovery_dropped, 0);
	assert_int_equal(st.objects, 31);
	assert_int_equal(check_records(s, "p", 0, 30), 0);
	assert_int_equal(check_gen(s, "after", 99, 50000), 0);
	gs_close(s);
}

/*
 * A journal write that fails (here past RLIMIT_FSIZE, with the journal
 * unable to be allocated ahead) fails its put, and the object is not
 * there, then or after a reopen; every put acknowledged before it is.
 */
static void test_journal_write_fails(void **state)
{
	struct rlimit rl = { .rlim_cur = 1 * MiB, .rlim_max = RLIM_INFINITY };
	struct gs_options o;
	struct gs_store *s;
	struct gs_stats st;
	char key[16];
	pid_t pid;
	int ws, ok;
	(void)state;

	opts(&o);
	o.block = 256 * KiB;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int ret = 0;

		signal(SIGXFSZ, SIG_IGN);
		if (setrlimit(RLIMIT_FSIZE, &rl))
			_exit(10);
		s = open_store(&o);
		/* until one fails */
		for (ok = 0; ok < 100 && ret == 0; ok++) {
			snprintf(key, sizeof(key), "f%d", ok);
			ret = put_gen(s, key, ok, record_size(ok), 7000);
		}
		ok--; /* the one that failed */
		if (ret != -EFBIG)
			_exit(11);
		if (gs_stat(s, key, strlen(key), &(struct gs_meta){ 0 }) !=
		    -ENOENT)
			_exit(12); /* the failed put is not there */
		if (check_records(s, "f", 0, ok))
			_exit(13);
		_exit(ok > 5 && ok < 100 ? 100 + ok : 14); /* no close */
	}
	assert_int_equal(waitpid(pid, &ws, 0), pid);
	assert_true(WIFEXITED(ws));
	assert_true(WEXITSTATUS(ws) > 100);
	ok = WEXITSTATUS(ws) - 100;

	s = open_store(&o);
	gs_stats_get(s, &st);
	assert_int_equal(st.objects, ok);
	assert_int_equal(check_records(s, "f", 0, ok), 0);
	snprintf(key, sizeof(key), "f%d", ok);
	assert_int_equal(gs_stat(s, key, strlen(key), &(struct gs_meta){ 0 }),
			 -ENOENT);
	gs_close(s);
}

/* Small puts from several threads at once, then every one read back. */
struct small_putter {
	struct gs_store *s;
	int id, ret;
};

static void *small_put_thread(void *p)
{
	struct small_putter *sp = p;
	char key[16];

	for (int i = 0; i < 200 && sp->ret == 0; i++) {
		snprintf(key, sizeof(key), "t%d-%d", sp->id, i);
		sp->ret = put_gen(sp->s, key, sp->id * 1000 + i, record_size(i),
				  7000);
	}
	return NULL;
}

static void test_small_puts_concurrent(void **state)
{
	struct small_putter sp[4];
	pthread_t tid[4];
	struct gs_options o;
	struct gs_store *s;
	struct gs_stats st;
	char key[16];
	(void)state;

	opts(&o);
	o.block = 256 * KiB;
	o.small_memory = 64 * MiB;
	s = open_store(&o);
	for (int t = 0; t < 4; t++) {
		sp[t] = (struct small_putter){ .s = s, .id = t };
		assert_int_equal(pthread_create(&tid[t], NULL, small_put_thread,
						&sp[t]),
				 0);
	}
	for (int t = 0; t < 4; t++) {
		pthread_join(tid[t], NULL);
		assert_int_equal(sp[t].ret, 0);
	}
	for (int pass = 0; pass < 2; pass++) {
		gs_stats_get(s, &st);
		assert_int_equal(st.objects, 800);
		assert_int_equal(st.recovery_dropped, 0);
		for (int t = 0; t < 4; t++) {
			snprintf(key, sizeof(key), "t%d-", t);
			assert_int_equal(check_records(s, key, t * 1000, 200),
					 0);
		}
		gs_close(s);
		if (pass == 0)
			s = open_store(&o);
	}
}

/*
 * Counters from more threads than there are shards (stats.c: a thread
 * owns one alone, the rest share the last), started twice so that the
 * second round takes over the shards the first gave back: no add lost.
 * The adds are stat_add() itself, back to back, so that two threads on
 * two CPUs race on a shared shard all the time.
 */
#define STAT_THREADS 100
#define STAT_ADDS    1000000

static pthread_barrier_t stat_start; /* every thread adds at once */

static void *count_gets(void *arg)
{
	pthread_barrier_wait(&stat_start);
	for (int i = 0; i < STAT_ADDS; i++)
		stat_add((struct gs_store *)arg, gets, 1);
	return NULL;
}

static void test_stats_threads(void **state)
{
	pthread_t tid[STAT_THREADS];
	struct gs_options o;
	struct gs_store *s;
	struct gs_stats st0, st;
	(void)state;

	opts(&o);
	s = open_store(&o);
	gs_stats_get(s, &st0);
	for (int round = 0; round < 2; round++) {
		pthread_barrier_init(&stat_start, NULL, STAT_THREADS);
		for (int t = 0; t < STAT_THREADS; t++)
			assert_int_equal(pthread_create(&tid[t], NULL,
							count_gets, s),
					 0);
		for (int t = 0; t < STAT_THREADS; t++)
			pthread_join(tid[t], NULL);
		pthread_barrier_destroy(&stat_start);
	}
	gs_stats_get(s, &st);
	assert_int_equal(st.gets - st0.gets, 2 * STAT_THREADS * STAT_ADDS);
	gs_close(s);
}

/* ---- read-while-fill ---- */

struct fill_arg {
	struct gs_store *s;
	const char *key;
	uint64_t size;
	int ret;
	int abort_at; /* abort after this many MiB, -1: never */
	bool unknown; /* a fill of GS_SIZE_UNKNOWN */
	/* hold_at: once this many bytes are written, wait (10 s at most)
	 * until the reader has read read_at of them; held: it did */
	uint64_t hold_at, read_at;
	_Atomic uint64_t reader_pos;
	bool held;
};

static void *fill_writer(void *p)
{
	struct fill_arg *fa = p;
	struct gs_put_args a = { .size = fa->unknown ? GS_SIZE_UNKNOWN :
						       fa->size,
				 .fill = true };
	struct gs_writer *w;
	uint8_t *buf = malloc(64 * KiB);

	fa->ret = gs_put_begin(fa->s, fa->key, 1, &a, &w);
	if (fa->ret)
		return NULL;
	for (uint64_t off = 0; off < fa->size; off += 64 * KiB) {
		size_t n = fa->size - off < 64 * KiB ? fa->size - off :
						       64 * KiB;

		if (fa->abort_at >= 0 && off == (uint64_t)fa->abort_at * MiB) {
			gs_put_abort(w);
			free(buf);
			return NULL;
		}
		gen(5, off, buf, n);
		gs_put_write(w, buf, n);
		usleep(500);
		if (fa->hold_at && off + n == fa->hold_at) {
			for (int i = 0; i < 10000 && !fa->held; i++) {
				fa->held = atomic_load(&fa->reader_pos) >=
					   fa->read_at;
				usleep(1000);
			}
		}
	}
	fa->ret = gs_put_commit(w, NULL);
	free(buf);
	return NULL;
}

static void test_read_while_fill(void **state)
{
	struct gs_options o;
	struct gs_store *s;
	struct fill_arg fa = { .key = "f",
			       .size = 5 * MiB + 77,
			       .abort_at = -1 };
	struct gs_reader *r;
	struct gs_chunk c;
	pthread_t t;
	uint8_t *ref = malloc(6 * MiB);
	uint64_t off = 0;
	int ret;
	(void)state;

	opts(&o);
	s = open_store(&o);
	fa.s = s;
	gen(5, 0, ref, fa.size);
	/* not visible to plain readers before commit */
	pthread_create(&t, NULL, fill_writer, &fa);
	while (gs_get_open(s, "f", 1, GS_GET_FILL, &r) == -ENOENT)
		usleep(100);
	assert_int_equal(gs_stat(s, "f", 1, &(struct gs_meta){ 0 }), -ENOENT);
	assert_int_equal(gs_reader_meta(r)->size, fa.size);
	while ((ret = gs_reader_next(r, &c)) == 1) {
		assert_int_equal(c.off, off);
		assert_memory_equal(c.data, ref + off, c.len);
		off += c.len;
	}
	assert_int_equal(ret, 0);
	assert_int_equal(off, fa.size);
	gs_reader_close(r);
	pthread_join(t, NULL);
	assert_int_equal(fa.ret, 0);
	assert_int_equal(check_gen(s, "f", 5, fa.size), 0);

	/* an aborted fill: readers get an error, never a short object */
	fa.abort_at = 2;
	fa.ret = 0;
	fa.key = "g";
	pthread_create(&t, NULL, fill_writer, &fa);
	for (int i = 0; gs_get_open(s, "g", 1, GS_GET_FILL, &r) == -ENOENT;
	     i++) {
		assert_true(i < 100000);
		usleep(10);
	}
	off = 0;
	while ((ret = gs_reader_next(r, &c)) == 1)
		off += c.len;
	assert_int_equal(ret, -ECANCELED);
	assert_true(off < fa.size);
	gs_reader_close(r);
	pthread_join(t, NULL);
	assert_int_equal(gs_stat(s, "g", 1, &(struct gs_meta){ 0 }), -ENOENT);
	/* the committed one is untouched */
	assert_int_equal(check_gen(s, "f", 5, fa.size), 0);
	gs_close(s);
	free(ref);
}

/* ---- async API ---- */

/*
 * A fill of unknown size (a chunked origin response): readers stream it as
 * it is written and end exactly where its commit says, whether it grew
 * past write buffers or stayed under a head.
 */
static void test_read_while_fill_unknown_size(void **state)
{
	static const uint64_t sizes[] = { 5 * MiB + 77, 1000, 3 * 64 * KiB };
	struct gs_options o;
	struct gs_store *s;
	uint8_t *ref = malloc(6 * MiB);
	(void)state;

	opts(&o);
	s = open_store(&o);
	gen(5, 0, ref, 6 * MiB);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		char key[2] = { (char)('a' + i), 0 };
		/* the biggest is held at 3 MiB until 2 MiB are read: its
		 * tail streams before its size is known */
		struct fill_arg fa = { .s = s,
				       .key = key,
				       .size = sizes[i],
				       .abort_at = -1,
				       .unknown = true,
				       .hold_at = i ? 0 : 3 * MiB,
				       .read_at = 2 * MiB };
		struct gs_meta m;
		struct gs_reader *r;
		struct gs_chunk c;
		uint64_t off = 0;
		pthread_t t;
		int ret;

		pthread_create(&t, NULL, fill_writer, &fa);
		while (gs_get_open(s, key, 1, GS_GET_FILL, &r) == -ENOENT)
			usleep(100);
		assert_true(gs_reader_meta(r)->size == GS_SIZE_UNKNOWN ||
			    gs_reader_meta(r)->size == sizes[i]);
		while ((ret = gs_reader_next(r, &c)) == 1) {
			assert_int_equal(c.off, off);
			assert_memory_equal(c.data, ref + off, c.len);
			off += c.len;
			atomic_store(&fa.reader_pos, off);
		}
		assert_int_equal(ret, 0);
		assert_int_equal(off, sizes[i]);
		gs_reader_close(r);
		pthread_join(t, NULL);
		assert_int_equal(fa.ret, 0);
		assert_true(fa.held || !fa.hold_at);
		assert_int_equal(gs_stat(s, key, 1, &m), 0);
		assert_int_equal(m.size, sizes[i]);
		assert_int_equal(check_gen(s, key, 5, sizes[i]), 0);
	}
	/* aborted: its readers get an error, never a short object */
	struct fill_arg fa = { .s = s,
			       .key = "z",
			       .size = 5 * MiB,
			       .abort_at = 2,
			       .unknown = true };
	struct gs_reader *r;
	struct gs_chunk c;
	pthread_t t;
	int ret;

	pthread_create(&t, NULL, fill_writer, &fa);
	while (gs_get_open(s, "z", 1, GS_GET_FILL, &r) == -ENOENT)
		usleep(10);
	while ((ret = gs_reader_next(r, &c)) == 1)
		;
	assert_int_equal(ret, -ECANCELED);
	gs_reader_close(r);
	pthread_join(t, NULL);
	assert_int_equal(gs_stat(s, "z", 1, &(struct gs_meta){ 0 }), -ENOENT);
	gs_close(s);
	free(ref);
}

/*
 * A store holding "a", @size generated bytes (copied to @ref), and a
 * reader of it attached to @ring.
 */
static struct gs_store *async_open(struct io_uring *ring, struct gs_reader **r,
				   uint8_t *ref, uint64_t size)
{
	struct gs_options o;
	struct gs_store *s;

	opts(&o);
	s = open_store(&o);
	assert_int_equal(put_gen(s, "a", 11, size, 1 * MiB), 0);
	gen(11, 0, ref, size);
	assert_int_equal(io_uring_queue_init(64, ring, 0), 0);
	assert_int_equal(gs_get_open(s, "a", 1, 0, r), 0);
	assert_int_equal(gs_reader_attach(*r, ring, NULL, NULL), 0);
	return s;
}

static void test_async_reader(void **state)
{
	struct gs_store *s;
	struct gs_reader *r;
	struct io_uring ring;
	struct gs_chunk c;
	uint64_t size = 3 * MiB + 5, off = 0;
	uint8_t *ref = malloc(size + 8);
	int ret, eagain = 0;
	(void)state;

	s = async_open(&ring, &r, ref, size);
	/* the head comes at once, before any completion is reaped */
	assert_int_equal(gs_reader_poll(r, &c), 1);
	assert_int_equal(c.off, 0);
	assert_int_equal(c.len, H);
	assert_memory_equal(c.data, ref, H);
	off = H;
	for (;;) {
		struct io_uring_cqe *cqe;

		ret = gs_reader_poll(r, &c);
		if (ret == 1) {
			assert_int_equal(c.off, off);
			assert_memory_equal(c.data, ref + off, c.len);
			off += c.len;
			continue;
		}
		if (ret == 0)
			break;
		assert_int_equal(ret, -EAGAIN);
		eagain++;
		io_uring_submit_and_wait(&ring, 1);
		while (io_uring_peek_cqe(&ring, &cqe) == 0) {
			assert_true(gs_handle_cqe(cqe));
			io_uring_cqe_seen(&ring, cqe);
		}
	}
	assert_int_equal(off, size);
	assert_true(eagain > 0);
	gs_reader_close(r);
	/* close with reads in flight: the last completion finishes it */
	assert_int_equal(gs_get_open(s, "a", 1, 0, &r), 0);
	assert_int_equal(gs_reader_attach(r, &ring, NULL, NULL), 0);
	assert_int_equal(gs_reader_poll(r, &c), 1);
	io_uring_submit(&ring);
	gs_reader_close(r);
	for (int i = 0; i < 64; i++) {
		struct io_uring_cqe *cqe;

		if (io_uring_peek_cqe(&ring, &cqe) != 0) {
			struct __kernel_timespec ts = { 0, 50000000 };

			if (io_uring_wait_cqe_timeout(&ring, &cqe, &ts) != 0)
				break;
		}
		gs_handle_cqe(cqe);
		io_uring_cqe_seen(&ring, cqe);
	}
	io_uring_queue_exit(&ring);
	gs_close(s); /* asserts (debug) that no reference leaked */
	free(ref);
}

/* Reap every completion until none comes for 50 ms. */
static void reap_quiet(struct io_uring *ring)
{
	struct io_uring_cqe *cqe;
	struct __kernel_timespec ts = { 0, 50000000 };

	io_uring_submit(ring);
	while (io_uring_wait_cqe_timeout(ring, &cqe, &ts) == 0) {
		assert_true(gs_handle_cqe(cqe));
		io_uring_cqe_seen(ring, cqe);
	}
}

/*
 * gs_reader_pollv: the head alone at first, then every chunk whose read
 * is done, in order and all valid at once (their bytes are checked after
 * the call that returned the last of them), the last one flagged.
 */
static void test_async_reader_pollv(void **state)
{
	struct gs_store *s;
	struct gs_reader *r;
	struct io_uring ring;
	struct gs_chunk c[8];
	uint64_t size = 3 * MiB + 5, off = 0;
	uint8_t *ref = malloc(size + 8);
	int ret, most = 0;
	(void)state;

	s = async_open(&ring, &r, ref, size);
	assert_int_equal(gs_reader_pollv(r, c, 8), 1);
	assert_int_equal(c[0].off, 0);
	assert_int_equal(c[0].len, H);
	assert_false(c[0].last);
	off = H;
	while ((ret = gs_reader_pollv(r, c, 8)) != 0) {
		if (ret == -EAGAIN) {
			reap_quiet(&ring);
			continue;
		}
		assert_true(ret > 0 && ret <= 8);
		for (int i = 0; i < ret; i++) {
			assert_int_equal(c[i].off, off);
			assert_memory_equal(c[i].data, ref + off, c[i].len);
			off += c[i].len;
			assert_true(c[i].last == (off == size));
		}
		most = ret > most ? ret : most;
	}
	assert_int_equal(off, size);
	assert_true(most > 1); /* reads done together come together */
	gs_reader_close(r);
	io_uring_queue_exit(&ring);
	gs_close(s);
	free(ref);
}

/* Long buffers in use: the long reads the store has in flight or held. */
static uint32_t long_in_use(const struct gs_store *s)
{
	return s->rbufs_long.n - s->rbufs_long.nfree;
}

/* Stream @r (attached to @ring) until it has handed out its first long
 * read's bytes: the reads it keeps past that are long ones. */
static void stream_to_long(struct io_uring *ring, struct gs_reader *r)
{
	struct gs_chunk c;
	int ret;

	for (;;) {
		ret = gs_reader_poll(r, &c);
		if (ret == -EAGAIN) {
			io_uring_submit_and_wait(ring, 1);
			reap_quiet(ring);
			continue;
		}
		assert_int_equal(ret, 1);
		if (c.len == GS_LONG_READ)
			break;
	}
	/* the next step queues what the depth allows, and submits it */
	ret = gs_reader_poll(r, &c);
	assert_true(ret == 1 || ret == -EAGAIN);
	io_uring_submit(ring);
}

/*
 * A long stream alone on the device keeps up to GS_LONG_DEEP long reads
 * in flight, not io_depth's worth; while another reader has a read in
 * flight it keeps io_depth, and goes deeper once that read is done; once
 * the store's long reads reach GS_LONG_SHARED, a new stream keeps
 * io_depth even alone, and goes deeper when another one's buffers come
 * back.  Each reader is on a ring of its own, so that the test says when
 * another one's reads complete.  Every byte stays right.
 */
static void test_long_stream_reads_deeper(void **state)
{
	struct gs_options o;
	struct gs_store *s;
	struct gs_reader *r[3];
	struct io_uring ring[3];
	struct gs_chunk c;
	uint64_t size = H + GS_RAMP_BYTES + 48 * MiB, off = 0;
	uint32_t before;
	uint8_t *ref = malloc(size);
	const char *keys[3] = { "d0", "d1", "d2" };
	int ret;
	(void)state;

	opts(&o);
	o.ssd_size = 3 * size + 64 * MiB;
	s = open_store(&o);
	for (int i = 0; i < 3; i++)
		assert_int_equal(put_gen(s, keys[i], 21, size, 1 * MiB), 0);
	gen(21, 0, ref, size);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(io_uring_queue_init(64, &ring[i], 0), 0);
		assert_int_equal(gs_get_open(s, keys[i], 2, 0, &r[i]), 0);
		assert_int_equal(gs_reader_attach(r[i], &ring[i], NULL, NULL),
				 0);
	}
	/* alone: deeper than io_depth, at most GS_LONG_DEEP */
	stream_to_long(&ring[0], r[0]);
	assert_true(long_in_use(s) > 2 * o.io_depth);
	assert_true(long_in_use(s) <= GS_LONG_DEEP);
	/* with r[0]'s reads in flight (its ring not reaped): io_depth */
	before = long_in_use(s);
	stream_to_long(&ring[1], r[1]);
	assert_true(long_in_use(s) - before <= o.io_depth);
	/* r[0]'s reads done: r[1] has the device and goes deeper */
	reap_quiet(&ring[0]);
	reap_quiet(&ring[1]);
	ret = gs_reader_poll(r[1], &c);
	assert_true(ret == 1 || ret == -EAGAIN);
	io_uring_submit(&ring[1]);
	assert_true(long_in_use(s) > before + 2 * o.io_depth);
	/* the share is taken: alone, r[2] keeps its own depth */
	reap_quiet(&ring[1]);
	assert_true(long_in_use(s) * GS_LONG_READ >= GS_LONG_SHARED);
	assert_true(long_in_use(s) * GS_LONG_READ <=
		    GS_LONG_SHARED + GS_LONG_READ);
	before = long_in_use(s);
	stream_to_long(&ring[2], r[2]);
	assert_true(long_in_use(s) - before <= o.io_depth);
	/* r[0] gives its buffers back: r[2] goes deeper */
	gs_reader_close(r[0]);
	reap_quiet(&ring[0]);
	reap_quiet(&ring[2]);
	before = long_in_use(s);
	ret = gs_reader_poll(r[2], &c);
	assert_true(ret == 1 || ret == -EAGAIN);
	io_uring_submit(&ring[2]);
	assert_true(long_in_use(s) > before + o.io_depth);
	gs_reader_close(r[1]);
	gs_reader_close(r[2]);
	for (int i = 0; i < 3; i++)
		reap_quiet(&ring[i]);
	/* and a deep stream's bytes are all right, from the start */
	assert_int_equal(gs_get_open(s, keys[2], 2, 0, &r[2]), 0);
	assert_int_equal(gs_reader_attach(r[2], &ring[2], NULL, NULL), 0);
	while ((ret = gs_reader_poll(r[2], &c)) != 0) {
		if (ret == -EAGAIN) {
			io_uring_submit_and_wait(&ring[2], 1);
			reap_quiet(&ring[2]);
			continue;
		}
		assert_int_equal(ret, 1);
		assert_int_equal(c.off, off);
		assert_memory_equal(c.data, ref + off, c.len);
		off += c.len;
	}
	assert_int_equal(off, size);
	gs_reader_close(r[2]);
	reap_quiet(&ring[2]);
	assert_int_equal(long_in_use(s), 0);
	for (int i = 0; i < 3; i++)
		io_uring_queue_exit(&ring[i]);
	gs_close(s);
	free(ref);
}

/* ---- concurrency ---- */

struct conc_arg {
	struct gs_store *s;
	int id;
	int errors;
};

/* Values are (key, version) streams; the version is in the flags. */
static void *conc_worker(void *p)
{
	struct conc_arg *ca = p;
	uint64_t x = ca->id;

	for (int i = 0; i < 300; i++) {
		char key[16];
		uint64_t r = splitmix(&x);
		uint64_t size = r % 3 == 0 ? 600 * KiB + r % 1000 : r % 5000;

		snprintf(key, sizeof(key), "c%d", (int)(r >> 32) % 16);
		if (r % 4 == 0) {
			struct gs_put_args a = { .size = size,
						 .flags = (uint32_t)r };
			struct gs_writer *w;
			uint8_t *buf = malloc(size + 8);

			gen(seed_of(key, (uint32_t)r), 0, buf, size);
			if (gs_put_begin(ca->s, key, strlen(key), &a, &w) ==
			    0) {
				gs_put_write(w, buf, size);
				if (gs_put_commit(w, NULL))
					ca->errors++;
			} else {
				ca->errors++;
			}
			free(buf);
		} else if (r % 9 == 1) {
			gs_delete(ca->s, key, strlen(key));
		} else {
			struct gs_reader *rd;

			if (gs_get_open(ca->s, key, strlen(key), 0, &rd) == 0) {
				const struct gs_meta *m = gs_reader_meta(rd);
				uint64_t sz = m->size;
				uint8_t *buf = malloc(sz + 8),
					*ref = malloc(sz + 8);

				gen(seed_of(key, m->flags), 0, ref, sz);
				if (gs_read(rd, buf, sz, 0) != (ssize_t)sz ||
				    memcmp(buf, ref, sz))
					ca->errors++;
				gs_reader_close(rd);
				free(buf);
				free(ref);
			}
		}
	}
	return NULL;
}

static void test_concurrent_readers_writers(void **state)
{
	struct gs_options o;
	struct gs_store *s;
	struct conc_arg ca[4];
	pthread_t t[4];
	struct gs_stats st;
	(void)state;

	opts(&o);
	o.memory = 2 * MiB; /* heads get evicted and promoted under load */
	s = open_store(&o);
	for (int i = 0; i < 4; i++) {
		ca[i] = (struct conc_arg){ .s = s, .id = i + 1 };
		pthread_create(&t[i], NULL, conc_worker, &ca[i]);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		assert_int_equal(ca[i].errors, 0);
	}
	gs_stats_get(s, &st);
	assert_true(st.puts > 100);
	assert_true(st.get_hits > 100);
	assert_int_equal(st.csum_failures, 0);
	gs_close(s);
}

/* ---- streams used from many threads (a FUSE worker pool does that) ---- */

struct hop {
	struct gs_writer *w;
	struct gs_reader *r;
	uint64_t off, len;
	uint8_t *buf;
	int ret;
};

static void *hop_write(void *p)
{
	struct hop *h = p;

	gen(21, h->off, h->buf, h->len);
	h->ret = gs_put_write(h->w, h->buf, h->len);
	return NULL;
}

static void *hop_read(void *p)
{
	struct hop *h = p;
	ssize_t n = gs_read(h->r, h->buf, h->len, h->off);

	h->ret = n == (ssize_t)h->len ? 0 : -EIO;
	return NULL;
}

static void test_streams_hop_threads(void **state)
{
	struct gs_options o;
	struct gs_store *s;
	struct gs_put_args a = { .size = GS_SIZE_UNKNOWN };
	uint64_t size = 9 * MiB + 333, piece = 700 * KiB;
	struct hop h = { .buf = malloc(700 * KiB) };
	uint8_t *ref = malloc(700 * KiB);
	(void)state;

	opts(&o);
	s = open_store(&o);
	assert_int_equal(gs_put_begin(s, "t", 1, &a, &h.w), 0);
	/* every piece from a new thread, while earlier writes may be in flight */
	for (h.off = 0; h.off < size; h.off += piece) {
		pthread_t t;

		h.len = size - h.off < piece ? size - h.off : piece;
		pthread_create(&t, NULL, hop_write, &h);
		pthread_join(t, NULL);
		assert_int_equal(h.ret, 0);
	}
	assert_int_equal(gs_put_commit(h.w, NULL), 0);
	assert_int_equal(gs_get_open(s, "t", 1, 0, &h.r), 0);
	for (h.off = 0; h.off < size; h.off += piece) {
		pthread_t t;

		h.len = size - h.off < piece ? size - h.off : piece;
		pthread_create(&t, NULL, hop_read, &h);
		pthread_join(t, NULL);
		assert_int_equal(h.ret, 0);
		gen(21, h.off, ref, h.len);
		assert_memory_equal(h.buf, ref, h.len);
	}
	gs_reader_close(h.r);
	gs_close(s);
	free(h.buf);
	free(ref);
}

/* ---- randomized model test ---- */

struct model_ent {
	bool present;
	uint64_t seed, size;
};

static void test_model_random(void **state)
{
	enum { NKEYS = 64, STEPS = 3000 };
	struct model_ent *m = calloc(NKEYS, sizeof(*m));
	struct gs_options o;
	struct gs_store *s;
	uint64_t x = 20261129;
	(void)state;

	opts(&o);
	o.memory = 4 * MiB;
	o.small_memory = 64 * MiB; /* no evictions: the model has none */
	o.ssd_size = 1 * GiB;
	s = open_store(&o);
	for (int step = 0; step < STEPS; step++) {
		uint64_t r = splitmix(&x);
		int k = (int)(r % NKEYS);
		char key[16];
		int op = (int)((r >> 8) % 100);

		snprintf(key, sizeof(key), "m%d", k);
		if (op < 35) { /* put / replace */
			uint64_t size;
			switch ((r >> 16) % 4) {
			case 0:
				size = (r >> 20) % 300;
				break;
			case 1:
				size = (r >> 20) % (2 * H);
				break;
			case 2:
				size = H - 2 + (r >> 20) % 4;
				break;
			default:
				size = (r >> 20) % (3 * MiB);
				break;
			}
			if ((r >> 50) & 1)
				assert_int_equal(
					put_gen(s, key, r, size,
						1 + (r >> 40) % 300000),
					0);
			else
				assert_int_equal(
					put_unknown(s, key, r, size,
						    1 + (r >> 40) % 300000),
					0);
			m[k] = (struct model_ent){ true, r, size };
		} else if (op < 45) { /* delete */
			assert_int_equal(gs_delete(s, key, strlen(key)),
					 m[k].present ? 0 : -ENOENT);
			m[k].present = false;
		} else if (op < 47) { /* reopen */
			gs_close(s);
			o.preload_heads = r & 1;
			s = open_store(&o);
		} else if (op < 53) { /* rename, maybe over another */
			int k2 = (int)((r >> 24) % NKEYS);
			char key2[16];

			snprintf(key2, sizeof(key2), "m%d", k2);
			assert_int_equal(gs_rename(s, key, strlen(key), key2,
						   strlen(key2)),
					 m[k].present ? 0 : -ENOENT);
			if (m[k].present && k != k2) {
				m[k2] = m[k];
				m[k].present = false;
			}
		} else if (op < 58) { /* aborted put changes nothing */
			struct gs_put_args a = { .size = 5000 };
			struct gs_writer *w;

			assert_int_equal(
				gs_put_begin(s, key, strlen(key), &a, &w), 0);
			assert_int_equal(gs_put_write(w, "junk", 4), 0);
			gs_put_abort(w);
		} else { /* get */
			int ret = check_gen(s, key, m[k].seed, m[k].size);

			if (m[k].present && ret)
				print_message("step %d key %s size %" PRIu64
					      " ret %d\n",
					      step, key, m[k].size, ret);
			if (m[k].present)
				assert_int_equal(ret, 0);
			else
				assert_int_equal(ret, -ENOENT);
		}
	}
	for (int k = 0; k < NKEYS; k++) {
		char key[16];

		snprintf(key, sizeof(key), "m%d", k);
		assert_int_equal(check_gen(s, key, m[k].seed, m[k].size),
				 m[k].present ? 0 : -ENOENT);
	}
	{
		struct gs_stats st;

		gs_stats_get(s, &st);
		assert_int_equal(st.evictions_small + st.evictions_ssd, 0);
	}
	gs_close(s);
	free(m);
}

/* ---- crash test: kill -9 during population ---- */

/* large; small journalled with O_DIRECT; small buffered */
static uint64_t crash_size(uint64_t i)
{
	switch ((i * 7919u) % 4) {
	case 0:
		return 700 * KiB + i;
	case 1:
		return 32 * KiB + (i * 131) % 150000;
	default:
		return (i * 131) % 5000;
	}
}

static void crash_opts(struct gs_options *o)
{
	opts(o);
	/* room for everything: a cache may evict, and this test is not
	 * about eviction (the child reports its evictions: must be 0) */
	o->small_memory = 64 * MiB;
	o->ssd_size = 4 * GiB;
}

/* shared[0]: objects committed; shared[1]: evictions seen by the child */
static void crash_child(volatile uint64_t *shared, int round)
{
	struct gs_options o;
	struct gs_store *s;
	struct gs_stats st;
	char key[32];

	crash_opts(&o);
	s = open_store(&o);
	for (uint64_t i = 0; i < 100000; i++) {
		snprintf(key, sizeof(key), "r%d-%" PRIu64, round, i);
		if (put_gen(s, key, seed_of(key, 0), crash_size(i), 100000))
			_exit(3);
		shared[0] = i + 1;
		gs_stats_get(s, &st);
		shared[1] = st.evictions_small + st.evictions_ssd;
	}
	_exit(0);
}

static void test_crash_kill9(void **state)
{
	enum { ROUNDS = 6 };
	volatile uint64_t *shared = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
					 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	uint64_t x = 77, done[ROUNDS], checked = 0;
	struct gs_options o;
	(void)state;

	assert_true(shared != MAP_FAILED);
	crash_opts(&o);
	for (int round = 0; round < ROUNDS; round++) {
		struct gs_store *s;
		pid_t pid;
		int st;

		shared[0] = shared[1] = 0;
		pid = fork();
		assert_true(pid >= 0);
		if (pid == 0)
			crash_child(shared, round);
		usleep(20000 + splitmix(&x) % 300000);
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		assert_true(WIFSIGNALED(st));
		done[round] = shared[0];
		assert_int_equal(shared[1], 0);
		s = open_store(&o);
		/*
		 * Every round so far: each commit that returned is there and
		 * exact; the one in flight at the kill may be there (whole);
		 * nothing after it is.
		 */
		for (int r = 0; r <= round; r++) {
			for (uint64_t i = 0; i <= done[r] + 1; i++) {
				char key[32];
				int ret;

				snprintf(key, sizeof(key), "r%d-%" PRIu64, r,
					 i);
				ret = check_gen(s, key, seed_of(key, 0),
						crash_size(i));
				if (i < done[r])
					assert_int_equal(ret, 0);
				else if (i == done[r] && ret == 0)
					done[r]++; /* committed, not yet told */
				else
					assert_int_equal(ret, -ENOENT);
				checked++;
			}
		}
		gs_close(s);
	}
	assert_true(checked > ROUNDS * 10);
	munmap((void *)shared, 4096);
}

/* ---- the HDD tier ---- */

#define P (256 * KiB) /* --ssd-prefix in these tests: split at H + P */

static void hdd_opts(struct gs_options *o, char *hdir, size_t len)
{
	opts(o);
	snprintf(hdir, len, "%s/hdd", dir);
	o->hdd_dir = hdir;
	o->ssd_prefix = P;
}

/* Bytes of @key per tier, checked against the expected layout. */
static void assert_layout(struct gs_store *s, const char *key, uint64_t ram,
			  uint64_t ssd, uint64_t hdd)
{
	uint64_t b;

	tier_bytes(s, key, GS_TIER_RAM, &b);
	assert_int_equal(b, ram);
	tier_bytes(s, key, GS_TIER_SSD, &b);
	assert_int_equal(b, ssd);
	tier_bytes(s, key, GS_TIER_HDD, &b);
	assert_int_equal(b, hdd);
}

static void test_hdd_placement(void **state)
{
	struct gs_options o;
	struct gs_store *s;
	struct gs_stats st;
	char hdir[96];
	(void)state;

	hdd_opts(&o, hdir, sizeof(hdir));
	s = open_store(&o);
	/* whole on the HDD; up to the split on the SSD too */
	assert_int_equal(put_gen(s, "fits", 1, H + P, 100000), 0);
	assert_int_equal(put_gen(s, "big", 2, 3 * MiB + 5, 100000), 0);
	assert_int_equal(put_unknown(s, "ubig", 3, 2 * MiB + 7, 70000), 0);
	assert_int_equal(put_unknown(s, "ufits", 4, H + 1, 70000), 0);
	assert_layout(s, "fits", H, H + P, H + P);
	assert_layout(s, "big", H, H + P, 3 * MiB + 5);
	assert_layout(s, "ubig", H, H + P, 2 * MiB + 7);
	assert_layout(s, "ufits", H, H + 1, H + 1);
	gs_stats_get(s, &st);
	/* the unknown-size puts gave back what they did not use */
	assert_int_equal(st.hdd_used, (H + P) + (3 * MiB + 64 * KiB) +
					      (2 * MiB + 64 * KiB) +
					      (H + 64 * KiB));
	assert_int_equal(st.ssd_used, 3 * (H + P) + H + 64 * KiB);
	assert_int_equal(check_gen(s, "big", 2, 3 * MiB + 5), 0);
	assert_int_equal(check_gen(s, "ubig", 3, 2 * MiB + 7), 0);
	assert_int_equal(check_gen(s, "ufits", 4, H + 1), 0);
	gs_stats_get(s, &st);
	/* head from RAM, prefix from SSD, bulk from HDD */
	assert_int_equal(st.bytes_read_hdd,
			 (3 * MiB + 5 - H - P) + (2 * MiB + 7 - H - P));
	assert_true(st.hdd_reads > 0);
	assert_true(st.hdd_capacity > 0);
	gs_close(s);

	/* the store remembers its HDD tier: reopen without naming it */
	opts(&o);
	o.preload_heads = true;
	s = open_store(&o);
	assert_layout(s, "big", H, H + P, 3 * MiB + 5);
	assert_int_equal(check_gen(s, "big", 2, 3 * MiB + 5), 0);
	assert_int_equal(check_gen(s, "ubig", 3, 2 * MiB + 7), 0);
	assert_int_equal(check_gen(s, "fits", 1, H + P), 0);
	gs_close(s);
}

static void test_hdd_range_reads(void **state)
{
	struct gs_options o;
	struct gs_store *s;
	struct gs_reader *r;
	char hdir[96];
	const uint64_t size = 5 * MiB + 333;
	const uint64_t offs[] = { 0,	 H - 7,	      H + P - 3,
				  H + P, 4 * MiB + 1, size - 10 };
	uint8_t *buf = malloc(MiB), *ref = malloc(MiB);
	(void)state;

	hdd_opts(&o, hdir, sizeof(hdir));
	o.io_chunk = 128 * KiB;
	s = open_store(&o);
	assert_int_equal(put_gen(s, "k", 9, size, 1 << 20), 0);
	assert_int_equal(gs_get_open(s, "k", 1, 0, &r), 0);
	for (size_t i = 0; i < sizeof(offs) / sizeof(offs[0]); i++) {
		uint64_t want = size - offs[i] < 700 * KiB ? size - offs[i] :
							     700 * KiB;

		/* positional reads that start or cross the tier boundary */
		assert_int_equal(gs_read(r, buf, 700 * KiB, offs[i]), want);
		gen(9, offs[i], ref, want);
		assert_memory_equal(buf, ref, want);
	}
	gs_reader_close(r);
	gs_close(s);
	free(buf);
	free(ref);
}

static void test_hdd_prefix_dropped_for_room(void **state)
{
	struct gs_options o;
	struct gs_store *s;
	struct gs_stats st;
	char hdir[96], key[16];
	uint64_t ssd;
	int dropped = 0;
	(void)state;

	hdd_opts(&o, hdir, sizeof(hdir));
	o.ssd_size = 2 * MiB; /* room for 4 prefixes of H + P */
	s = open_store(&o);
	for (int i = 0; i < 10; i++) {
		snprintf(key, sizeof(key), "o%d", i);
		assert_int_equal(put_gen(s, key, i, MiB + i, 100000), 0);
	}
	gs_stats_get(s, &st);
	assert_true(st.ssd_prefix_drops >= 6);
	assert_int_equal(st.evictions_ssd, 0);
	assert_int_equal(st.objects, 10);
	for (int i = 0; i < 10; i++) {
		snprintf(key, sizeof(key), "o%d", i);
		tier_bytes(s, key, GS_TIER_SSD, &ssd);
		dropped += ssd == 0;
		/* every one still reads whole, from RAM and the HDD */
		assert_int_equal(check_gen(s, key, i, MiB + i), 0);
	}
	assert_int_equal(dropped, (int)st.ssd_prefix_drops);
	gs_close(s);
	/* the drops were journalled: replay claims no freed SSD extent */
	o.memory = 0; /* no RAM heads: the first bytes come from disk */
	s = open_store(&o);
	gs_stats_get(s, &st);
	assert_int_equal(st.objects, 10);
	assert_int_equal(st.recovery_dropped, 0);
	for (int i = 0; i < 10; i++) {
		snprintf(key, sizeof(key), "o%d", i);
		assert_int_equal(check_gen(s, key, i, MiB + i), 0);
	}
	gs_close(s);
}

static void test_hdd_full_evicts_objects(void **state)
{
	struct gs_options o;
	struct gs_store *s;
	struct gs_stats st;
	char hdir[96], key[16];
	int live = 0;
	(void)state;

	hdd_opts(&o, hdir, sizeof(hdir));
	o.hdd_size = 8 * MiB;
	s = open_store(&o);
	for (int i = 0; i < 8; i++) {
		snprintf(key, sizeof(key), "o%d", i);
		assert_int_equal(put_gen(s, key, i, 2 * MiB, 1 << 20), 0);
	}
	/* larger than the whole HDD tier */
	assert_int_equal(put_gen(s, "huge", 99, 9 * MiB, 1 << 20), -EFBIG);
	gs_stats_get(s, &st);
	assert_true(st.evictions_hdd >= 4);
	assert_true(st.hdd_used <= 8 * MiB);
	for (int i = 0; i < 8; i++) {
		int ret;

		snprintf(key, sizeof(key), "o%d", i);
		ret = check_gen(s, key, i, 2 * MiB);
		assert_true(ret == 0 || ret == -ENOENT);
		live += ret == 0;
	}
	assert_int_equal(live, 8 - (int)st.evictions_hdd);
	assert_int_equal(check_gen(s, "o7", 7, 2 * MiB), 0); /* newest */
	gs_close(s);
}

static void test_hdd_dir_recorded(void **state)
{
	struct gs_options o;
	struct gs_store *s = NULL;
	char hdir[96], other[96], err[256];
	(void)state;

	opts(&o);
	s = open_store(&o); /* created without an HDD tier */
	assert_int_equal(put_gen(s, "before", 1, 2 * MiB, 1 << 20), 0);
	gs_close(s);
	hdd_opts(&o, hdir, sizeof(hdir)); /* one is added */
	o.preload_heads = true;
	s = open_store(&o);
	assert_int_equal(put_gen(s, "after", 2, 2 * MiB, 1 << 20), 0);
	assert_layout(s, "before", H, 2 * MiB, 0);
	assert_layout(s, "after", H, H + P, 2 * MiB);
	gs_close(s);
	snprintf(other, sizeof(other), "%s/hdd2", dir);
	o.hdd_dir = other;
	assert_int_equal(gs_open(dir, &o, &s, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "keeps its HDD tier"));
	o.hdd_dir = NULL;
	o.ssd_prefix = 100 * KiB; /* not a multiple of the unit */
	assert_int_equal(gs_open(dir, &o, &s, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "--ssd-prefix"));
}

/* ---- admission: no acknowledged put is ever lost ---- */

#define OVER_THREADS 4

struct over_arg {
	struct gs_store *s;
	int id;
	uint64_t budget; /* bytes this thread puts */
	uint64_t *sizes; /* of each key it put (acknowledged or not) */
	int n;
	int acked, refused;
};

/* ART sizes: generalized Pareto (256 KiB, 583208, 0.3), redrawn <= 8 MiB */
static uint64_t art_size(uint64_t *x)
{
	for (;;) {
		double u = (double)(splitmix(x) >> 11) / 9007199254740992.0;
		double v =
			262144.0 + 583208.0 * (pow(1.0 - u, -0.3) - 1.0) / 0.3;

		if (v <= 8.0 * MiB)
			return (uint64_t)v;
	}
}

static void *over_worker(void *p)
{
	struct over_arg *a = p;
	uint64_t x = (uint64_t)a->id, done = 0;

	while (done < a->budget) {
		char key[32];
		uint64_t size = art_size(&x);
		int ret;

		snprintf(key, sizeof(key), "art:%d:%08d", a->id, a->n);
		/* as fast as the store takes them: no pause between puts */
		ret = put_gen(a->s, key, seed_of(key, 0), size, 1 << 20);
		a->sizes[a->n++] = size;
		if (ret == 0)
			a->acked++;
		else
			a->refused++;
		done += size;
	}
	return NULL;
}

/*
 * The overload case of ART, scaled: writers put as fast as they can into
 * a store that can hold it all.  A put may wait (the writer blocks on its
 * O_DIRECT buffers) but every acknowledged one must read back whole.
 */
static void overload(struct gs_options *o, uint64_t total)
{
	struct gs_store *s = open_store(o);
	struct over_arg a[OVER_THREADS];
	pthread_t t[OVER_THREADS];
	struct gs_stats st;
	int acked = 0, missing = 0, wrong = 0;

	for (int i = 0; i < OVER_THREADS; i++) {
		a[i] = (struct over_arg){ .s = s,
					  .id = i,
					  .budget = total / OVER_THREADS };
		a[i].sizes = calloc(total / OVER_THREADS / (256 * KiB) + 2,
				    sizeof(uint64_t));
		pthread_create(&t[i], NULL, over_worker, &a[i]);
	}
	for (int i = 0; i < OVER_THREADS; i++) {
		pthread_join(t[i], NULL);
		assert_int_equal(a[i].refused, 0);
		acked += a[i].acked;
	}
	/* read every key, after a restart too */
	for (int pass = 0; pass < 2; pass++) {
		for (int i = 0; i < OVER_THREADS; i++)
			for (int k = 0; k < a[i].n; k++) {
				char key[32];
				int ret;

				snprintf(key, sizeof(key), "art:%d:%08d", i, k);
				ret = check_gen(s, key, seed_of(key, 0),
						a[i].sizes[k]);
				missing += ret == -ENOENT;
				wrong += ret != 0 && ret != -ENOENT;
			}
		assert_int_equal(missing, 0);
		assert_int_equal(wrong, 0);
		gs_stats_get(s, &st);
		assert_int_equal(st.objects, (uint64_t)acked);
		assert_int_equal(st.evictions_ssd + st.evictions_hdd, 0);
		gs_close(s);
		if (pass == 0)
			s = open_store(o);
	}
	for (int i = 0; i < OVER_THREADS; i++)
		free(a[i].sizes);
}

static void test_admission_overload(void **state)
{
	struct gs_options o;
	(void)state;

	opts(&o);
	o.memory = 8 * MiB; /* far less RAM than data */
	o.ssd_size = 1 * GiB;
	overload(&o, 768 * MiB);
}

/* The same with an HDD tier whose SSD holds only part of the prefixes. */
static void test_admission_overload_hdd(void **state)
{
	struct gs_options o;
	char hdir[96];
	(void)state;

	hdd_opts(&o, hdir, sizeof(hdir));
	o.memory = 8 * MiB;
	o.ssd_size = 64 * MiB;
	o.hdd_size = 1 * GiB;
	overload(&o, 512 * MiB);
}

/*
 * issue 18: records up to GS_ATTR_MAX (33 KiB: a mirror's whole header
 * block) through put, readers of both sizes (a small record keeps a
 * small reader), gs_get, gs_set_attr and the journal's replay.
 */
static void test_issue18_large_attr(void **state)
{
	static uint8_t big[GS_ATTR_MAX], big2[GS_ATTR_MAX];
	struct gs_put_args a = { .attr = big, .attr_len = GS_ATTR_MAX };
	struct gs_put_args sa = { .attr = "tiny", .attr_len = 4 };
	struct gs_options o;
	struct gs_store *s;
	struct gs_meta *m = malloc(sizeof(*m));
	struct gs_reader *r[8];
	uint64_t cas;
	void *val;
	size_t len;
	(void)state;

	assert_non_null(m);
	for (size_t i = 0; i < sizeof(big); i++) {
		big[i] = (uint8_t)(i * 7 + 1);
		big2[i] = (uint8_t)(i * 13 + 5);
	}
	opts(&o);
	s = open_store(&o);
	assert_int_equal(gs_put(s, "big", 3, "value", 5, &a), 0);
	assert_int_equal(gs_put(s, "tiny", 4, "v", 1, &sa), 0);
	a.attr_len = 2049; /* just over a small reader's room */
	assert_int_equal(gs_put(s, "edge", 4, "e", 1, &a), 0);
	/* readers of each class at once, closed and reopened: recycled */
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < 8; i++) {
			const char *k = i % 3 == 0 ? "big" :
					i % 3 == 1 ? "tiny" :
						     "edge";
			const struct gs_meta *rm;

			assert_int_equal(gs_get_open(s, k, strlen(k), 0, &r[i]),
					 0);
			rm = gs_reader_meta(r[i]);
			if (i % 3 == 0) {
				assert_int_equal(rm->attr_len, GS_ATTR_MAX);
				assert_memory_equal(rm->attr, big, GS_ATTR_MAX);
			} else if (i % 3 == 1) {
				assert_int_equal(rm->attr_len, 4);
				assert_memory_equal(rm->attr, "tiny", 4);
			} else {
				assert_int_equal(rm->attr_len, 2049);
				assert_memory_equal(rm->attr, big, 2049);
			}
		}
		for (int i = 0; i < 8; i++)
			gs_reader_close(r[i]);
	}
	assert_int_equal(gs_get(s, "big", 3, &val, &len, m), 0);
	assert_int_equal(len, 5);
	assert_int_equal(m->attr_len, GS_ATTR_MAX);
	assert_memory_equal(m->attr, big, GS_ATTR_MAX);
	free(val);
	assert_int_equal(gs_get(s, "tiny", 4, &val, &len, m), 0);
	assert_int_equal(m->attr_len, 4);
	free(val);
	/* a small record replaced by a large one, and back */
	assert_int_equal(gs_stat(s, "tiny", 4, m), 0);
	cas = m->cas;
	assert_int_equal(gs_set_attr(s, "tiny", 4, cas, big2, GS_ATTR_MAX, 0),
			 0);
	assert_int_equal(gs_get_open(s, "tiny", 4, 0, &r[0]), 0);
	assert_int_equal(gs_reader_meta(r[0])->attr_len, GS_ATTR_MAX);
	assert_memory_equal(gs_reader_meta(r[0])->attr, big2, GS_ATTR_MAX);
	gs_reader_close(r[0]);
	gs_close(s);

	/* the journal carries them whole */
	s = open_store(&o);
	assert_int_equal(gs_stat(s, "big", 3, m), 0);
	assert_int_equal(m->attr_len, GS_ATTR_MAX);
	assert_memory_equal(m->attr, big, GS_ATTR_MAX);
	assert_int_equal(gs_stat(s, "tiny", 4, m), 0);
	assert_int_equal(m->attr_len, GS_ATTR_MAX);
	assert_memory_equal(m->attr, big2, GS_ATTR_MAX);
	assert_int_equal(gs_get(s, "edge", 4, &val, &len, m), 0);
	assert_int_equal(m->attr_len, 2049);
	free(val);
	gs_close(s);
	free(m);
}

/* gs_set_attr (issue 6: a 304 refreshes an HTTP response's metadata). */
static void test_set_attr(void **state)
{
	static const char pkey[] = "\0pass/1"; /* keys may hold NUL bytes */
	struct gs_put_args a = { .attr = "old", .attr_len = 3 };
	struct gs_options o;
	struct gs_store *s;
	struct gs_meta m;
	struct gs_reader *r;
	uint64_t cas, lcas, exp = (uint64_t)time(NULL) + 1000;
	(void)state;

	opts(&o);
	s = open_store(&o);
	assert_int_equal(gs_put(s, "small", 5, "value", 5, &a), 0);
	assert_int_equal(gs_stat(s, "small", 5, &m), 0);
	cas = m.cas;
	assert_int_equal(put_gen(s, "large", seed_of("large", 0), H + 70 * KiB,
				 4096),
			 0);
	assert_int_equal(gs_stat(s, "large", 5, &m), 0);
	lcas = m.cas;
	assert_int_equal(gs_put(s, pkey, sizeof(pkey) - 1, "p", 1, &a), 0);
	assert_int_equal(gs_stat(s, pkey, sizeof(pkey) - 1, &m), 0);
	assert_int_equal(gs_stat(s, "\0pass/2", 7, &m), -ENOENT);

	/* a reader open before keeps what it saw */
	assert_int_equal(gs_get_open(s, "small", 5, 0, &r), 0);
	assert_int_equal(
		gs_set_attr(s, "small", 5, cas, "fresh", 5, (int64_t)exp), 0);
	assert_memory_equal(gs_reader_meta(r)->attr, "old", 3);
	gs_reader_close(r);
	assert_int_equal(gs_set_attr(s, "small", 5, cas + 1000, "x", 1, 0),
			 -ESTALE);
	assert_int_equal(gs_set_attr(s, "nope", 4, cas, "x", 1, 0), -ENOENT);
	assert_int_equal(gs_set_attr(s, "small", 5, cas, "x", GS_ATTR_MAX + 1,
				     0),
			 -EINVAL);
	assert_int_equal(gs_set_attr(s, "large", 5, lcas, NULL, 0, 0), 0);
	assert_int_equal(gs_stat(s, "small", 5, &m), 0);
	assert_int_equal(m.cas, cas);
	assert_int_equal(m.attr_len, 5);
	assert_memory_equal(m.attr, "fresh", 5);
	assert_int_equal(m.exptime, (int64_t)exp);
	gs_close(s);

	/* the journal replays it; the value is untouched */
	s = open_store(&o);
	assert_int_equal(gs_stat(s, "small", 5, &m), 0);
	assert_int_equal(m.cas, cas);
	assert_int_equal(m.attr_len, 5);
	assert_memory_equal(m.attr, "fresh", 5);
	assert_int_equal(m.exptime, (int64_t)exp);
	assert_int_equal(gs_stat(s, "large", 5, &m), 0);
	assert_int_equal(m.attr_len, 0);
	assert_int_equal(m.size, H + 70 * KiB);
	{
		void *val;
		size_t len;
		uint8_t *want = malloc(H + 70 * KiB);

		assert_int_equal(gs_get(s, "small", 5, &val, &len, NULL), 0);
		assert_int_equal(len, 5);
		assert_memory_equal(val, "value", 5);
		free(val);
		assert_int_equal(gs_get(s, "large", 5, &val, &len, NULL), 0);
		gen(seed_of("large", 0), 0, want, H + 70 * KiB);
		assert_int_equal(len, H + 70 * KiB);
		assert_memory_equal(val, want, len);
		free(val);
		free(want);
	}
	/* a stale record (older cas) changes nothing at replay: replace it,
	 * then reopen */
	assert_int_equal(gs_put(s, "small", 5, "newer", 5, &a), 0);
	assert_int_equal(gs_set_attr(s, "small", 5, cas, "y", 1, 0), -ESTALE);
	gs_close(s);
	s = open_store(&o);
	assert_int_equal(gs_stat(s, "small", 5, &m), 0);
	assert_int_equal(m.attr_len, 3);
	assert_memory_equal(m.attr, "old", 3);
	assert_int_equal(m.exptime, 0);
	gs_close(s);
}

/* ---- appends that share the extents of their base (issue 20) ---- */

/* Put @size bytes of @seed under @key, appendable or not; its cas. */
static uint64_t put_appendable(struct gs_store *s, const char *key,
			       uint64_t seed, uint64_t size, bool appendable)
{
	struct gs_put_args a = { .size = GS_SIZE_UNKNOWN,
				 .appendable = appendable };
	struct gs_writer *w;
	uint8_t *buf = malloc(MiB);
	uint64_t cas = 0;

	assert_int_equal(gs_put_begin(s, key, strlen(key), &a, &w), 0);
	for (uint64_t off = 0; off < size; off += MiB) {
		size_t n = size - off < MiB ? size - off : MiB;

		gen(seed, off, buf, n);
		assert_int_equal(gs_put_write(w, buf, n), 0);
	}
	assert_int_equal(gs_put_commit(w, &cas), 0);
	free(buf);
	return cas;
}

/* Append bytes [from, to) of @seed to version @cas of @key; new cas. */
static uint64_t append_gen(struct gs_store *s, const char *key, uint64_t cas,
			   uint64_t seed, uint64_t from, uint64_t to,
			   const char *commit_as)
{
	struct gs_put_args a = { .appendable = true };
	struct gs_writer *w;
	uint8_t *buf = malloc(to - from + 1), *back = malloc(64 * KiB);
	uint8_t *ref = malloc(64 * KiB);
	uint64_t ncas = 0;

	assert_int_equal(gs_put_begin_append(s, key, strlen(key), cas, &a, &w),
			 0);
	assert_int_equal(gs_put_size(w), from);
	gen(seed, from, buf, to - from);
	assert_int_equal(gs_put_write(w, buf, to - from), 0);
	/* read back: the base's first bytes, its end, what was appended */
	for (uint64_t off = 0; off < to; off += to / 7 + 1) {
		ssize_t n = gs_put_read(w, back, 64 * KiB, off);
		size_t want = to - off < 64 * KiB ? to - off : 64 * KiB;

		assert_int_equal(n, want);
		gen(seed, off, ref, want);
		assert_memory_equal(back, ref, want);
	}
	assert_int_equal(gs_put_read(w, back, 10, to), 0);
	if (commit_as) /* the base goes on living under another key */
		assert_int_equal(gs_rename(s, key, strlen(key), commit_as,
					   strlen(commit_as)),
				 0);
	assert_int_equal(gs_put_commit(w, &ncas), 0);
	free(buf);
	free(back);
	free(ref);
	return ncas;
}

static uint64_t stat_of(struct gs_store *s, size_t off)
{
	struct gs_stats st;

	gs_stats_get(s, &st);
	return *(uint64_t *)((char *)&st + off);
}
#define STAT(s, f) stat_of(s, offsetof(struct gs_stats, f))

static void check_hash(struct gs_store *s, const char *key, uint64_t seed,
		       uint64_t size)
{
	struct gs_meta m;
	uint8_t *all = malloc(size);

	assert_int_equal(gs_stat(s, key, strlen(key), &m), 0);
	gen(seed, 0, all, size);
	assert_int_equal(m.xxh3, XXH3_64bits(all, size));
	free(all);
}

static void test_issue20_append_shares_extents(void **state)
{
	const uint64_t S = 8 * MiB + 12345, T = S + 100, U2 = T + 300 * KiB;
	struct gs_options o;
	struct gs_store *s;
	struct gs_reader *r;
	uint64_t cas, w0, used0, used1, x;
	uint8_t *buf = malloc(S), *ref = malloc(S);
	(void)state;

	opts(&o);
	s = open_store(&o);
	cas = put_appendable(s, "f", 7, S, true);
	used0 = STAT(s, ssd_used);
	assert_int_equal(gs_get_open(s, "f", 1, 0, &r), 0); /* the old one */

	/* a wrong base: nothing begins */
	{
		struct gs_put_args a = { 0 };
		struct gs_writer *w;

		assert_int_equal(gs_put_begin_append(s, "f", 1, cas + 99, &a,
						     &w),
				 -ESTALE);
		assert_int_equal(gs_put_begin_append(s, "nope", 4, cas, &a, &w),
				 -ENOENT);
	}
	w0 = STAT(s, bytes_written_ssd);
	x = STAT(s, put_appends_shared);
	cas = append_gen(s, "f", cas, 7, S, T, "f.old");
	/* only the last partial block and the new bytes were written */
	assert_int_equal(STAT(s, put_appends_shared), x + 1);
	assert_true(STAT(s, bytes_written_ssd) - w0 <=
		    ((S % (64 * KiB)) + 100 + 4095) / 4096 * 4096);
	/* and the space: one new unit, the rest shared */
	used1 = STAT(s, ssd_used);
	assert_true(used1 - used0 <= 2 * 64 * KiB);
	assert_int_equal(check_gen(s, "f", 7, T), 0);
	check_hash(s, "f", 7, T);
	assert_int_equal(check_gen(s, "f.old", 7, S), 0);
	/* the reader pinned before keeps the old version, whole */
	assert_int_equal(gs_reader_meta(r)->size, S);
	assert_int_equal(gs_read(r, buf, S, 0), S);
	gen(7, 0, ref, S);
	assert_memory_equal(buf, ref, S);
	gs_reader_close(r);

	/* both survive a restart, sharing (replay shares the units) */
	gs_close(s);
	s = open_store(&o);
	assert_int_equal(check_gen(s, "f", 7, T), 0);
	assert_int_equal(check_gen(s, "f.old", 7, S), 0);
	assert_int_equal(STAT(s, ssd_used), used1);
	/* the old one goes: its shared units stay the new one's */
	assert_int_equal(gs_delete(s, "f.old", 5), 0);
	assert_int_equal(check_gen(s, "f", 7, T), 0);
	assert_true(STAT(s, ssd_used) >= used0);
	/* after a restart no hash state is kept: the base is hashed again */
	{
		struct gs_meta m;

		assert_int_equal(gs_stat(s, "f", 1, &m), 0);
		cas = append_gen(s, "f", m.cas, 7, T, U2, NULL);
	}
	assert_int_equal(check_gen(s, "f", 7, U2), 0);
	check_hash(s, "f", 7, U2);
	gs_close(s);
	s = open_store(&o);
	assert_int_equal(check_gen(s, "f", 7, U2), 0);
	assert_int_equal(gs_delete(s, "f", 1), 0);
	assert_int_equal(STAT(s, ssd_used), 0); /* nothing left behind */

	/* a small base is copied; so is one never made appendable */
	cas = put_appendable(s, "small", 9, 1000, true);
	cas = append_gen(s, "small", cas, 9, 1000, 5000, NULL);
	assert_int_equal(check_gen(s, "small", 9, 5000), 0);
	cas = put_appendable(s, "plain", 11, 3 * MiB + 1, false);
	cas = append_gen(s, "plain", cas, 11, 3 * MiB + 1, 3 * MiB + 7, NULL);
	assert_int_equal(check_gen(s, "plain", 11, 3 * MiB + 7), 0);
	check_hash(s, "plain", 11, 3 * MiB + 7);
	gs_close(s);
	free(buf);
	free(ref);
}

/* An aborted append gives back its own units and none of its base's. */
static void test_issue20_append_abort(void **state)
{
	const uint64_t S = 4 * MiB;
	struct gs_put_args a = { .appendable = true };
	struct gs_options o;
	struct gs_store *s;
	struct gs_writer *w;
	uint64_t cas, used;
	uint8_t b[4096];
	(void)state;

	opts(&o);
	s = open_store(&o);
	cas = put_appendable(s, "g", 5, S, true);
	used = STAT(s, ssd_used);
	assert_int_equal(gs_put_begin_append(s, "g", 1, cas, &a, &w), 0);
	memset(b, 'x', sizeof(b));
	for (int i = 0; i < 600; i++) /* past two write buffers */
		assert_int_equal(gs_put_write(w, b, sizeof(b)), 0);
	gs_put_abort(w);
	assert_int_equal(STAT(s, ssd_used), used);
	assert_int_equal(check_gen(s, "g", 5, S), 0);
	gs_close(s);
	s = open_store(&o);
	assert_int_equal(check_gen(s, "g", 5, S), 0);
	assert_int_equal(STAT(s, ssd_used), used);
	gs_close(s);
}

/* Append @n bytes of @seed at @from to version @cas of @key, no checks. */
static int append_raw(struct gs_store *s, const char *key, uint64_t cas,
		      uint64_t seed, uint64_t from, uint64_t n,
		      const char *keep_as, uint64_t *ncas)
{
	struct gs_put_args a = { .appendable = true };
	struct gs_writer *w;
	uint8_t *buf = malloc(n);
	int ret = gs_put_begin_append(s, key, strlen(key), cas, &a, &w);

	if (ret < 0) {
		free(buf);
		return ret;
	}
	gen(seed, from, buf, n);
	ret = gs_put_write(w, buf, n);
	free(buf);
	if (ret == 0 && keep_as)
		ret = gs_rename(s, key, strlen(key), keep_as, strlen(keep_as));
	if (ret < 0) {
		gs_put_abort(w);
		return ret;
	}
	return gs_put_commit(w, ncas);
}

#define A_BASE (1 * MiB + 777)
#define A_STEP 5000ull

/* shared[0]: appends committed */
static void append_child(volatile uint64_t *shared)
{
	struct gs_options o;
	struct gs_store *s;
	uint64_t cas;
	char keep[32];

	crash_opts(&o);
	s = open_store(&o);
	cas = put_appendable(s, "c", 3, A_BASE, true);
	shared[0] = 0;
	for (uint64_t i = 0; i < 100000; i++) {
		/* every 4th version stays, under a name of its own */
		snprintf(keep, sizeof(keep), "c.k%" PRIu64, i);
		if (append_raw(s, "c", cas, 3, A_BASE + i * A_STEP, A_STEP,
			       i % 4 == 0 ? keep : NULL, &cas))
			_exit(3);
		shared[0] = i + 1;
	}
	_exit(0);
}

/*
 * Issue 20: kill -9 in the middle of a chain of appends, some of whose
 * bases stay alive (sharing units with what grew from them): after replay
 * every version is whole, and deleting them all gives every unit back.
 */
static void test_issue20_append_kill9(void **state)
{
	volatile uint64_t *shared = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
					 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct gs_options o;
	struct gs_store *s;
	struct gs_meta m;
	uint64_t done, n;
	bool gone;
	pid_t pid;
	int st;
	(void)state;

	assert_true(shared != MAP_FAILED);
	crash_opts(&o);
	shared[0] = 0;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		append_child(shared);
	for (int i = 0; i < 400 && shared[0] < 60; i++)
		usleep(10000);
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	assert_true(WIFSIGNALED(st));
	done = shared[0];
	assert_true(done > 4);
	s = open_store(&o);
	gone = gs_stat(s, "c", 1, &m) == -ENOENT;
	if (gone) {
		/* killed between the rename of append done's base (every
		 * 4th is kept) and its commit: that base is c.k<done> */
		assert_int_equal(done % 4, 0);
		n = done;
	} else {
		/* done appends, or one more not yet told */
		n = (m.size - A_BASE) / A_STEP;
		assert_int_equal(m.size, A_BASE + n * A_STEP);
		assert_true(n == done || n == done + 1);
		assert_int_equal(check_gen(s, "c", 3, m.size), 0);
		check_hash(s, "c", 3, m.size);
	}
	for (uint64_t i = 0; i <= n; i += 4) {
		char keep[32];
		int ret;

		snprintf(keep, sizeof(keep), "c.k%" PRIu64, i);
		ret = check_gen(s, keep, 3, A_BASE + i * A_STEP);
		assert_int_equal(ret, i < n || gone ? 0 : -ENOENT);
		if (ret == 0)
			assert_int_equal(gs_delete(s, keep, strlen(keep)), 0);
	}
	if (!gone) {
		assert_int_equal(check_gen(s, "c", 3, m.size), 0);
		assert_int_equal(gs_delete(s, "c", 1), 0);
	}
	assert_int_equal(STAT(s, ssd_used), 0);
	gs_close(s);
	munmap((void *)shared, 4096);
}

/*
 * Issue 20: eviction of versions that share units, on a tier too small to
 * hold them all: whatever is left reads whole, and the units all come
 * back once it is deleted (before and after a restart).
 */
static void test_issue20_append_evict(void **state)
{
	struct gs_options o;
	struct gs_store *s;
	uint64_t cas, size = 3 * MiB + 5;
	char key[32];
	(void)state;

	opts(&o);
	o.ssd_size = 24 * MiB;
	s = open_store(&o);
	cas = put_appendable(s, "e", 4, size, true);
	for (int i = 0; i < 40; i++) {
		char keep[32];
		int ret;

		snprintf(keep, sizeof(keep), "e.k%d", i);
		ret = append_raw(s, "e", cas, 4, size, 200 * KiB + 3,
				 i % 2 ? keep : NULL, &cas);
		if (ret == -ENOENT || ret == -ESTALE) /* "e" was evicted */
			break;
		assert_int_equal(ret, 0);
		size += 200 * KiB + 3;
		snprintf(key, sizeof(key), "other%d", i);
		assert_int_equal(put_gen(s, key, 100 + i, 2 * MiB, 100000), 0);
	}
	assert_true(STAT(s, evictions_ssd) > 0);
	for (int round = 0; round < 2; round++) {
		uint64_t sz = 3 * MiB + 5, kept = 0;

		for (int i = 0; i < 40; i++) {
			char keep[32];
			int ret;

			/* the base of append i, kept for odd i */
			snprintf(keep, sizeof(keep), "e.k%d", i);
			ret = check_gen(s, keep, 4, sz);
			sz += 200 * KiB + 3;
			assert_true(ret == 0 || ret == -ENOENT);
			kept += ret == 0;
		}
		assert_true(kept > 0); /* some were evicted, not all */
		gs_close(s);
		s = open_store(&o);
	}
	for (int i = 0; i < 40; i++) {
		snprintf(key, sizeof(key), "e.k%d", i);
		gs_delete(s, key, strlen(key));
		snprintf(key, sizeof(key), "other%d", i);
		gs_delete(s, key, strlen(key));
	}
	gs_delete(s, "e", 1);
	assert_int_equal(STAT(s, ssd_used), 0);
	gs_close(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_placement_sizes, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_range_reads, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_long_stream_reads_bigger,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_multi_gib, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_corrupt_tail_is_miss,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_corrupt_head_dropped_at_open, setup, teardown),
		cmocka_unit_test_setup_teardown(test_corrupt_journal_record,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_reader_keeps_old_version,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_modes_and_meta, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_value_checksum_reference,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_lock_names_holder, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_put_unknown_size, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_rename, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ssd_dir_recorded, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			test_capacity_shrink_evicts_by_policy, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_issue16_journal_counts_in_capacity, setup,
			teardown),
		cmocka_unit_test(test_option_set),
		cmocka_unit_test_setup_teardown(test_change_hook, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_sizes_remembered, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			test_ssd_eviction_scan_resistant, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_head_eviction_and_promotion, setup, teardown),
		cmocka_unit_test_setup_teardown(test_small_arena_compaction,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_cold_small_objects, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_cold_small_bounded, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			test_read_while_fill_unknown_size, setup, teardown),
		cmocka_unit_test_setup_teardown(test_journal_direct_records,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_journal_preallocated,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_small_puts_concurrent,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_stats_threads, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_journal_write_fails, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_journal_rewritten_at_open,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_while_fill, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_async_reader, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_long_stream_reads_deeper,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_async_reader_pollv, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_concurrent_readers_writers,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_streams_hop_threads, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_model_random, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_crash_kill9, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_hdd_placement, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_hdd_range_reads, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			test_hdd_prefix_dropped_for_room, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hdd_full_evicts_objects,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_hdd_dir_recorded, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_admission_overload, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_admission_overload_hdd,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_set_attr, setup, teardown),
		cmocka_unit_test_setup_teardown(test_issue18_large_attr, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			test_issue20_append_shares_extents, setup, teardown),
		cmocka_unit_test_setup_teardown(test_issue20_append_abort,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_issue20_append_kill9,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_issue20_append_evict,
						setup, teardown),
	};

	if (getenv("TEST_FILTER"))
		cmocka_set_test_filter(getenv("TEST_FILTER"));
	return cmocka_run_group_tests_name("store", tests, NULL, NULL);
}
