/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libgoblin: the Goblin Store engine.  RAM heads, SSD tails, a packed
 * small-object arena and a journal that makes every committed object durable.
 * This is the only header front-ends include.
 */
#ifndef GOBLIN_H
#define GOBLIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define GS_KEY_MAX 4096		/* longest key, bytes */
#define GS_ATTR_MAX 1024	/* longest attribute blob, bytes */
#define GS_CSUM_BLOCK 65536	/* bytes covered by one block checksum */
#define GS_ALLOC_UNIT 65536	/* SSD allocation unit */

/*
 * Thread safety: a store serves many threads at once.  A reader or a writer
 * may be called from any thread, one call at a time (a FUSE worker pool
 * hands one open file from thread to thread).
 */
struct gs_store;
struct gs_writer;
struct gs_reader;
struct io_uring;
struct io_uring_cqe;

/*
 * Store options.  Fill with gs_options_init() and change what you need;
 * sizes are bytes.  All sizes must be multiples of 4096; io_chunk and
 * write_io_chunk must be multiples of GS_CSUM_BLOCK, ssd_prefix of
 * GS_ALLOC_UNIT.  The store remembers memory, small_memory, block,
 * ram_head, ssd_size, ssd_floor, hdd_size and ssd_prefix in its
 * superblock: gs_options_init() leaves them GS_UNSET, which means "as the
 * store was last opened" (built-in defaults for a new store: 64 MiB,
 * 16 MiB, 2 MiB, 256 KiB, 0, 0, 0, 4 MiB), so a command that names no sizes does not
 * shrink a store that runs bigger; a size that is set is used and
 * remembered.
 */
/* A size left for the store to choose: its remembered one, or a default. */
#define GS_UNSET UINT64_MAX

struct gs_options {
	uint64_t memory;	 /* RAM head pool (--memory) */
	uint64_t small_memory;	 /* packed small-object arena (--small-memory) */
	uint64_t block;		 /* pool allocation unit (--block) */
	uint64_t ram_head;	 /* head slot size H (--ram-head) */
	uint64_t io_chunk;	 /* tail read unit (--io-chunk) */
	uint64_t write_io_chunk; /* tail write unit (--write-io-chunk) */
	const char *ssd_dir;	 /* SSD tier directory, NULL: <store>/ssd */
	uint64_t ssd_size;	 /* SSD capacity, 0: free space minus floor;
				  * the journal's records count in it when
				  * they share its file system */
	uint64_t ssd_floor;	 /* bytes the tier leaves free on its fs, 0:
				  * 5% (at least 1 GiB) with ssd_size 0, else
				  * 1/32 (4 MiB to 1 GiB): the tier evicts
				  * before the fs fills, whatever ssd_size */
	const char *hdd_dir;	 /* HDD tier directory, NULL: none (or as
				  * the store was created with one) */
	uint64_t hdd_size;	 /* HDD capacity, 0: free space minus floor */
	uint64_t ssd_prefix;	 /* with an HDD tier: bytes [H, H+P) on SSD */
	unsigned io_depth;	 /* tail reads in flight per reader */
	bool no_mlock;		 /* do not mlock the RAM pools */
	bool no_hugetlb;	 /* do not try HugeTLB pages */
	int numa_node;		 /* --numa: bind pools and threads to this
				  * node; -1 (the default): do not bind */
	bool no_numa_promotion;	 /* freeze the head blocks where they are */
	bool perverse;		 /* head region zero on a remote node (A/B) */
	bool preload_heads;	 /* at open, read hot heads back into RAM */
	bool sync;		 /* fdatasync data and journal at each commit */
	bool create;		 /* create the store when missing */
};

void gs_options_init(struct gs_options *o);

/* The store's options by long name, for command lines and goblin.conf. */
struct gs_option_desc {
	const char *name;	/* "memory", "no-mlock" ... (no "--") */
	const char *arg;	/* the value's placeholder ("SIZE"), NULL: a flag */
	const char *help;	/* one line */
};
/* Every store option; GS_NOPTIONS of them, then a NULL name. */
#define GS_NOPTIONS 21
extern const struct gs_option_desc gs_option_list[];

struct option;
/*
 * Fill @opts (room for GS_NOPTIONS) with getopt_long() entries for the
 * store options, each returning @base plus its index in gs_option_list.
 */
void gs_option_getopt(struct option *opts, int base);

/* Print one "  --name ARG  help" line per store option on @f. */
void gs_option_help(FILE *f);

/*
 * Set the store option @name from @value (NULL for a flag).  Returns 0,
 * -ENOENT when @name is no store option, or -EINVAL / -ERANGE for a bad
 * value; *@why then says what is wrong with it.  "ssd-dir" and "hdd-dir"
 * keep the @value pointer: it must outlive @o.
 */
int gs_option_set(struct gs_options *o, const char *name, const char *value,
		  const char **why);

/*
 * Parse a size such as "64M", "2MiB", "256K", "1G" or "4096" into *out.
 * Returns 0, or -EINVAL on malformed input and -ERANGE on overflow.
 */
int gs_parse_size(const char *s, uint64_t *out);

/*
 * Open the store in directory @dir (created when o->create is set).  The
 * directory is locked for the life of the handle: a second opener gets
 * -EBUSY and a message naming the holder's pid.  On failure returns -errno
 * and, when @err is not NULL, writes a one-line reason into it.
 */
int gs_open(const char *dir, const struct gs_options *o, struct gs_store **out,
	    char *err, size_t errlen);

/* Close the store; every reader and writer must be closed first. */
void gs_close(struct gs_store *s);

/* A message for a negative return value of this library. */
const char *gs_strerror(int err);

/* ---- metadata ---- */

struct gs_meta {
	uint64_t size;		/* value bytes */
	uint64_t cas;		/* unique per committed version */
	int64_t exptime;	/* absolute unix seconds, 0: never expires */
	int64_t mtime_ns;	/* commit time, CLOCK_REALTIME nanoseconds */
	uint64_t xxh3;		/* XXH3-64 of the whole value */
	uint32_t flags;		/* client flags (memcache) */
	uint16_t attr_len;	/* bytes used in attr */
	uint8_t attr[GS_ATTR_MAX]; /* opaque attributes (HTTP headers) */
};

/* ---- put: begin, write..., commit or abort ---- */

enum gs_put_mode {
	GS_SET = 0,	/* store unconditionally */
	GS_ADD,		/* fail with -EEXIST when the key exists at commit */
	GS_REPLACE,	/* fail with -ENOENT when the key is missing at commit */
	GS_CAS,		/* fail with -ESTALE unless the live cas is cas_match */
};

/* A put whose size is not known until commit (a file being written). */
#define GS_SIZE_UNKNOWN UINT64_MAX

struct gs_put_args {
	uint64_t size;		/* declared size: exactly this many bytes follow,
				 * or GS_SIZE_UNKNOWN: commit fixes the size */
	uint32_t flags;
	int64_t exptime;	/* absolute unix seconds, 0: never */
	const void *attr;	/* may be NULL */
	size_t attr_len;	/* <= GS_ATTR_MAX */
	enum gs_put_mode mode;
	uint64_t cas_match;	/* with GS_CAS */
	bool fill;		/* readable before commit (read-while-fill); of
				 * unknown size too: its readers stream what
				 * is written and end where commit says */
};

/*
 * Begin storing @key.  Space is reserved now (evicting cold objects);
 * memory held by the writer does not grow with the object size.  Returns
 * 0 and a writer, or -EINVAL (bad key or args), -EFBIG (larger than the
 * SSD tier), -ENOSPC (nothing evictable), -EEXIST (a fill of this key is
 * already running and args->fill is set).
 */
int gs_put_begin(struct gs_store *s, const void *key, size_t klen,
		 const struct gs_put_args *a, struct gs_writer **out);

/* Append @len bytes; -EOVERFLOW past the declared size, -EIO on disk error. */
int gs_put_write(struct gs_writer *w, const void *buf, size_t len);

/*
 * Make the object visible, whole, and durable (journalled).  Frees @w in
 * every case.  Returns 0 (and the new cas in *cas_out when not NULL),
 * -EPROTO when fewer bytes than declared were written, the mode's error,
 * -ENOSPC or -EIO when the device failed (the key keeps its previous
 * version).  With --sync, -EIO may also mean that the record was written
 * but fdatasync failed: the object is then visible, as it will be after a
 * restart (the outcome of a failed put is either whole or nothing).
 */
int gs_put_commit(struct gs_writer *w, uint64_t *cas_out);

/* Drop the object being written; fill readers get -ECANCELED.  Frees @w. */
void gs_put_abort(struct gs_writer *w);

/* One-shot put of a buffer. */
int gs_put(struct gs_store *s, const void *key, size_t klen, const void *val,
	   size_t len, const struct gs_put_args *a);

/* ---- get: open a pinned reader ---- */

#define GS_GET_FILL 0x1	/* also return an object still being filled */

/*
 * Look up @key and pin its current version: replacing or deleting it later
 * does not affect this reader.  Returns 0, or -ENOENT on a miss (absent,
 * expired, or dropped because it failed verification).
 */
int gs_get_open(struct gs_store *s, const void *key, size_t klen, int getflags,
		struct gs_reader **out);

/* The pinned version's metadata (size is the declared size for fills, and
 * GS_SIZE_UNKNOWN for a fill of unknown size opened before its commit). */
const struct gs_meta *gs_reader_meta(const struct gs_reader *r);

/*
 * Blocking positional read of up to @len bytes at @off into @buf.  Waits
 * for a fill to reach the bytes.  Returns the count (0 at end), -EBADMSG
 * when the data fails its checksum (the object is dropped), -ECANCELED when
 * a fill was aborted, -EIO on a disk error.
 */
ssize_t gs_read(struct gs_reader *r, void *buf, size_t len, uint64_t off);

/* One piece of an object, valid until the next call on its reader. */
struct gs_chunk {
	const void *data;
	size_t len;
	uint64_t off;		/* object offset of data[0] */
};

/*
 * Stream the range [off, off+len) (len UINT64_MAX: to the end) in order.
 * Call before the first gs_reader_next()/gs_reader_poll().
 */
int gs_reader_range(struct gs_reader *r, uint64_t off, uint64_t len);

/*
 * Keep at least @bytes of the tail in flight on @r (rounded up to whole
 * io_chunk reads, at most 32 of them, never fewer than io_depth): for a
 * consumer that takes @bytes at a time, like a FUSE read.
 */
void gs_reader_set_window(struct gs_reader *r, uint64_t bytes);

/*
 * Blocking streaming: the next chunk in order.  The RAM head comes first,
 * zero copy from its slot; tail chunks are read ahead io_depth deep with
 * O_DIRECT.  Returns 1 with *c filled, 0 at the end of the range, or a
 * negative error as gs_read().
 */
int gs_reader_next(struct gs_reader *r, struct gs_chunk *c);

/*
 * Async streaming, for event loops.  gs_reader_attach() makes @r submit its
 * reads on the caller's @ring (the caller calls io_uring_submit).  Every
 * CQE the caller reaps goes through gs_handle_cqe() first, which returns
 * true when it belonged to the store.  gs_reader_poll() returns 1 with the
 * next chunk, 0 at the end, -EAGAIN when the next chunk is not ready yet
 * (a read is in flight, or a fill has not reached it: @notify is then
 * called, from any thread, when the fill advances), or an error.
 * Store user_data values have the low bit set; the caller's must not.
 */
int gs_reader_attach(struct gs_reader *r, struct io_uring *ring,
		     void (*notify)(void *arg), void *arg);
bool gs_handle_cqe(struct io_uring_cqe *cqe);
int gs_reader_poll(struct gs_reader *r, struct gs_chunk *c);

/* Unpin; frees @r.  In-flight reads are waited for. */
void gs_reader_close(struct gs_reader *r);

/* Blocking get into a malloc'ed buffer the caller frees. */
int gs_get(struct gs_store *s, const void *key, size_t klen, void **val,
	   size_t *len, struct gs_meta *meta);

/* ---- other operations ---- */

/*
 * Give the live object @from the key @to, atomically, replacing what @to
 * held (publish-by-rename).  Readers of either keep their versions.
 * Returns 0, -ENOENT when @from is absent, -EINVAL on bad keys, -EIO or
 * -ENOSPC when the journal could not take it (nothing changed; with
 * --sync, -EIO may be a record written but not synced: then it is done).
 */
int gs_rename(struct gs_store *s, const void *from, size_t flen,
	      const void *to, size_t tlen);

/*
 * Have @fn called whenever the store itself drops a live object: evicted
 * from a full tier, expired, or failed verification (not for gs_delete,
 * gs_rename or a put that replaces it: the caller knows of those).  It is
 * called with the store locked, from whichever thread caused the drop:
 * copy the key and return; calling into the store from it deadlocks.
 * @fn NULL removes the hook.
 */
void gs_set_drop_hook(struct gs_store *s,
		      void (*fn)(void *arg, const void *key, size_t klen),
		      void *arg);

/*
 * Delete @key: -ENOENT when absent.  Pinned readers keep their version.
 * -EIO or -ENOSPC when its record could not be journalled: the object
 * stays (with --sync, -EIO may be a record written but not synced: then
 * it is gone, as it will be after a restart).
 */
int gs_delete(struct gs_store *s, const void *key, size_t klen);

/* Metadata of the live version: 0 or -ENOENT. */
int gs_stat(struct gs_store *s, const void *key, size_t klen,
	    struct gs_meta *meta);

/* Change the expiry time of a live object: 0 or -ENOENT. */
int gs_touch(struct gs_store *s, const void *key, size_t klen, int64_t exptime);

/*
 * Replace the attributes and the expiry time of the live version of @key,
 * if it is still the version @cas, without rewriting its value (an HTTP
 * cache refreshing a response a 304 revalidated).  Journalled: the change
 * survives a restart.  Readers already open keep the metadata they saw.
 * Returns 0, -ENOENT when @key is absent, -ESTALE when the live version's
 * cas is not @cas, -EINVAL on a bad key or attr_len > GS_ATTR_MAX.
 */
int gs_set_attr(struct gs_store *s, const void *key, size_t klen, uint64_t cas,
		const void *attr, size_t attr_len, int64_t exptime);

/* Where an object's bytes live.  ranges: [off, off+len) on a tier. */
enum gs_tier { GS_TIER_RAM = 0, GS_TIER_SMALL, GS_TIER_SSD, GS_TIER_HDD };
struct gs_range {
	enum gs_tier tier;
	uint64_t off;		/* object offset */
	uint64_t len;
	uint64_t dev_off;	/* offset in the tier's file (SSD), else 0 */
};
/* Fill up to @max ranges; returns the number of ranges or -ENOENT. */
int gs_inspect(struct gs_store *s, const void *key, size_t klen,
	       struct gs_range *ranges, int max);

/*
 * Call @fn for every live key starting with @prefix, in no order, with the
 * store unlocked between calls.  @fn returns non-zero to stop.
 */
int gs_iterate(struct gs_store *s, const void *prefix, size_t plen,
	       int (*fn)(void *arg, const void *key, size_t klen,
			 const struct gs_meta *m),
	       void *arg);

/* ---- statistics ---- */

struct gs_stats {
	uint64_t objects;	/* live committed objects */
	uint64_t small_objects;	/* of which small (in the arena, or cold) */
	uint64_t bytes;		/* their value bytes */
	uint64_t gets;		/* gs_get_open calls */
	uint64_t get_hits;	/* that found an object */
	uint64_t get_misses;	/* that found nothing */
	uint64_t head_hits;	/* large-object opens whose head was in RAM */
	uint64_t head_misses;	/* large-object opens whose head was not */
	uint64_t small_hits;	/* opens of small-arena objects */
	uint64_t puts;		/* commits */
	uint64_t put_aborts;	/* aborted puts */
	uint64_t deletes;	/* gs_delete calls that removed a key */
	uint64_t expired;	/* objects found expired */
	uint64_t bytes_read_ram;	/* value bytes served from RAM */
	uint64_t bytes_read_ssd;	/* value bytes served from the SSD tier */
	uint64_t bytes_written_ssd;	/* bytes written to the SSD tier */
	uint64_t bytes_read_hdd;	/* value bytes served from the HDD tier */
	uint64_t bytes_written_hdd;	/* bytes written to the HDD tier */
	uint64_t evictions_ssd;		/* objects evicted from the SSD tier */
	uint64_t evictions_hdd;		/* objects evicted from the HDD tier */
	uint64_t ssd_prefix_drops;	/* SSD prefixes dropped for room: the
					 * object stays on the HDD tier */
	uint64_t evictions_small;	/* small objects removed for room */
	uint64_t small_chills;		/* small objects moved out of RAM: they
					 * stay readable from the journal */
	uint64_t small_warms;		/* cold small objects read back */
	uint64_t evictions_head;	/* heads dropped from RAM */
	uint64_t head_promotions;	/* heads read back into RAM */
	uint64_t csum_failures;		/* blocks, heads or small values failing XXH3 */
	uint64_t recovered;		/* objects restored at open */
	uint64_t recovery_dropped;	/* journal entries dropped at open */
	uint64_t compactions;		/* small-arena block compactions */
	uint64_t journal_rewrites;	/* journal compactions */
	uint64_t ssd_reads;		/* O_DIRECT tail reads completed */
	uint64_t ssd_read_ns;		/* their summed latency */
	uint64_t ssd_read_hist[16];	/* latency: bucket i < 2^i * 16 us */
	uint64_t hdd_reads;		/* O_DIRECT reads of the HDD tier */
	uint64_t hdd_read_ns;		/* their summed latency */
	uint64_t ram_capacity;		/* head pool bytes */
	uint64_t ram_slots;		/* head slots */
	uint64_t ram_slots_used;	/* head slots holding a head */
	uint64_t small_capacity;	/* small arena bytes */
	uint64_t small_used;		/* small arena bytes in live blocks */
	uint64_t small_live;		/* small arena bytes of live objects */
	uint64_t small_cold;		/* small objects only on disk */
	uint64_t small_cold_bytes;	/* their value bytes */
	uint64_t ssd_capacity;		/* SSD tier bytes usable now: the
					 * capacity less the journal's records
					 * when they share its fs, at most
					 * what the fs holds above the floor */
	uint64_t ssd_used;		/* SSD bytes allocated */
	uint64_t hdd_capacity;		/* HDD tier bytes (0: no HDD tier) */
	uint64_t hdd_used;		/* HDD bytes allocated */
	uint64_t journal_bytes;		/* journal records (the file may have
					 * up to 64 MiB of room after them) */
	uint64_t io_buffer_bytes;	/* read and write buffers mapped, in
					 * 2 MiB slabs asked for as huge pages */
	uint64_t numa_nodes;		/* NUMA nodes with memory (1: none) */
	uint64_t numa_promotions;	/* head blocks moved to the node
					 * that reads them */
	uint64_t numa_bytes_moved;	/* their bytes */
	uint64_t numa_swap_ns_total;	/* time the moves took, summed */
	uint64_t numa_swap_ns_max;	/* the longest move */
	uint64_t numa_move_failures;	/* moves the kernel did not make */
	uint64_t write_errors;		/* data or journal writes that failed */
	uint64_t read_errors;		/* data or journal reads that failed */
	/* I/O faults injected (GOBLIN_FAULTS, tests), per class: failed
	 * with EIO, done short, failed with ENOSPC, torn (half written,
	 * then EIO) */
	uint64_t faults_eio;
	uint64_t faults_short;
	uint64_t faults_enospc;
	uint64_t faults_torn;
	bool hugetlb;			/* head pool on HugeTLB pages */
	bool mlocked;			/* RAM pools locked */
};

void gs_stats_get(struct gs_store *s, struct gs_stats *st);

#endif
