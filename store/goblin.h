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

#define GS_KEY_MAX    4096  /* longest key, bytes */
#define GS_ATTR_MAX   33792 /* longest attribute blob, bytes (33 KiB) */
#define GS_CSUM_BLOCK 65536 /* bytes covered by one block checksum */
#define GS_ALLOC_UNIT 65536 /* SSD allocation unit */

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
	uint64_t memory;       /* RAM head pool (--memory) */
	uint64_t small_memory; /* packed small-object arena (--small-memory) */
	uint64_t block;	       /* pool allocation unit (--block) */
	uint64_t ram_head;     /* head slot size H (--ram-head) */
	uint64_t io_chunk;     /* tail read unit (--io-chunk) */
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
	const char *name; /* "memory", "no-mlock" ... (no "--") */
	const char *arg;  /* the value's placeholder ("SIZE"), NULL: a flag */
	const char *help; /* one line */
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
	uint64_t size;		   /* value bytes */
	uint64_t cas;		   /* unique per committed version */
	int64_t exptime;	   /* absolute unix seconds, 0: never expires */
	int64_t mtime_ns;	   /* commit time, CLOCK_REALTIME nanoseconds */
	uint64_t xxh3;		   /* XXH3-64 of the whole value */
	uint32_t flags;		   /* client flags (memcache) */
	uint16_t attr_len;	   /* bytes used in attr */
	uint8_t attr[GS_ATTR_MAX]; /* opaque attributes (HTTP headers) */
};

/* ---- put: begin, write..., commit or abort ---- */

enum gs_put_mode {
	GS_SET = 0, /* store unconditionally */
	GS_ADD,	    /* fail with -EEXIST when the key exists at commit */
	GS_REPLACE, /* fail with -ENOENT when the key is missing at commit */
	GS_CAS,	    /* fail with -ESTALE unless the live cas is cas_match */
};

/* A put whose size is not known until commit (a file being written). */
#define GS_SIZE_UNKNOWN UINT64_MAX

struct gs_put_args {
	uint64_t size; /* declared size: exactly this many bytes follow,
			* or GS_SIZE_UNKNOWN: commit fixes the size */
	uint32_t flags;
	int64_t exptime;  /* absolute unix seconds, 0: never */
	const void *attr; /* may be NULL */
	size_t attr_len;  /* <= GS_ATTR_MAX */
	enum gs_put_mode mode;
	uint64_t cas_match; /* with GS_CAS */
	bool fill;	    /* readable before commit (read-while-fill); of
			     * unknown size too: its readers stream what
			     * is written and end where commit says */
	bool appendable;    /* an append to it is likely (a file of
			     * goblinfs): the version keeps its hash
			     * state (about 600 bytes of RAM) so that
			     * gs_put_begin_append need not read it */
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

/*
 * Change the mode, cas_match and expiry of a put before its commit (a
 * protocol whose options follow the value: RESP's SET key value NX EX 10).
 * 0, -EINVAL (bad mode), -EBUSY for a fill (its readers saw the args).
 */
int gs_put_amend(struct gs_writer *w, enum gs_put_mode mode, uint64_t cas_match,
		 int64_t exptime);

/* Drop the object being written; fill readers get -ECANCELED.  Frees @w. */
void gs_put_abort(struct gs_writer *w);

/* ---- appends and in-place rewrites (issue 20) ---- */

/*
 * Begin a put of @key whose value starts with the whole value of the
 * version @base_cas that @key holds now; gs_put_write() then appends to it
 * (a->size and a->fill are ignored: the size is learnt at commit).  The
 * new version shares the base's extents on the SSD tier instead of copying
 * them: only the base's last, partial GS_CSUM_BLOCK is written again, with
 * what is appended.  Readers of the base keep it; the base stays whole
 * whatever becomes of the new version, and each is freed, evicted and
 * recovered on its own (the shared units go when their last holder does).
 * Without the base's hash state (not made appendable, or reopened since)
 * the base is read once to hash it.  A small base, or a store with an HDD
 * tier, is copied instead (read and written again).  Returns 0 and a
 * writer, -ESTALE when @key holds another version (or none: -ENOENT), or
 * gs_put_begin()'s errors, -EIO/-EBADMSG when the base cannot be read.
 */
int gs_put_begin_append(struct gs_store *s, const void *key, size_t klen,
			uint64_t base_cas, const struct gs_put_args *a,
			struct gs_writer **out);

/*
 * Read back what @w holds so far (the base of an append included): up to
 * @len bytes at @off.  The count (0 at its end), or -errno.  For its owner
 * (no other call on @w at the same time).
 */
ssize_t gs_put_read(struct gs_writer *w, void *buf, size_t len, uint64_t off);

/*
 * Make what @w holds so far durable on the device (fsync of a file being
 * written): its partial write buffer is written now, and again with what
 * follows it.  Nothing becomes visible.  0 or -errno.
 */
int gs_put_sync(struct gs_writer *w);

/* Bytes accepted by @w so far (an append's base included). */
uint64_t gs_put_size(const struct gs_writer *w);

/* One-shot put of a buffer. */
int gs_put(struct gs_store *s, const void *key, size_t klen, const void *val,
	   size_t len, const struct gs_put_args *a);

/* ---- get: open a pinned reader ---- */

#define GS_GET_FILL 0x1 /* also return an object still being filled */

/*
 * Look up @key and pin its current version: replacing or deleting it later
 * does not affect this reader.  Returns 0, or -ENOENT on a miss (absent,
 * expired, or dropped because it failed verification).
 */
int gs_get_open(struct gs_store *s, const void *key, size_t klen, int getflags,
		struct gs_reader **out);

/* The pinned version's metadata (size is the declared size for fills, and
 * GS_SIZE_UNKNOWN for a fill of unknown size opened before its commit).
 * Its attr holds attr_len bytes and no more: read it, do not copy the
 * whole struct (the reader keeps only the room the record needs). */
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
	uint64_t off; /* object offset of data[0] */
	bool last;    /* it ends the range: the next call returns 0 */
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
/*
 * gs_reader_poll() for up to @n chunks at once: those ready now, in
 * order, all valid until the next call on @r (one writev can send them).
 * Returns how many (at least 1), or what gs_reader_poll() would.
 */
int gs_reader_pollv(struct gs_reader *r, struct gs_chunk *c, unsigned n);

/* Unpin; frees @r.  In-flight reads are waited for. */
void gs_reader_close(struct gs_reader *r);

/*
 * The region of the store's own memory that holds the byte at @p, for a
 * transport that registers memory with a device (RDMA's ibv_reg_mr) and
 * sends chunks straight from where the store keeps them: the RAM head
 * pool, the small-object arena, or a slab of the tail read buffers.  The
 * chunks gs_reader_next() and gs_reader_poll() return point into these
 * (a whole chunk lies in one region).  A region stays mapped, at the
 * same address, until gs_close(); read buffer slabs are added as the
 * pool grows, so a region unknown yet may be found later.  0 with
 * *@base and *@len, or -ENOENT when @p is in none.
 */
int gs_mem_region(struct gs_store *s, const void *p, void **base, size_t *len);

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
int gs_rename(struct gs_store *s, const void *from, size_t flen, const void *to,
	      size_t tlen);

/* ---- the change hook: what every front-end and the store do to keys ---- */

enum gs_change_kind {
	GS_CHANGE_PUBLISH, /* a commit made version cas live under key */
	GS_CHANGE_DELETE,  /* gs_delete removed version cas of key */
	GS_CHANGE_RENAME,  /* gs_rename moved version cas from key to to */
	GS_CHANGE_DROP,	   /* the store dropped version cas of key by
			    * itself: evicted, expired, failed verification */
};

struct gs_change {
	enum gs_change_kind kind;
	const void *key; /* valid for the call only: copy what you keep */
	size_t klen;
	const void *to; /* GS_CHANGE_RENAME: the new key, else NULL */
	size_t tlen;
	uint64_t cas; /* the version the change is about */
	bool locked;  /* called with the store locked (GS_CHANGE_DROP) */
};

/*
 * Have @fn told of every change to the store's keys, whoever made it: a
 * commit (also one that replaced a version), a delete, a rename, and the
 * store's own drops (gs_touch and gs_set_attr, which make no new version,
 * are not reported).  One call per change, nothing per byte; without a
 * hook the store pays nothing.  A change that failed (the mode's error, a
 * missing key) is not reported; one that was undone (a commit whose
 * record could not be written) is, so ask the store (gs_stat) what the
 * key holds now rather than trust the kind: calls for one key may come
 * out of order from two threads.
 *
 * PUBLISH, DELETE and RENAME are reported after the store's lock is
 * released, from the thread that made the change, before its gs_put_commit,
 * gs_delete or gs_rename returns: @fn may call the store (gs_stat, not
 * gs_set_change_hook) and may block briefly, and a front-end's
 * acknowledgement of the change comes after @fn returned.  DROP is
 * reported with the store locked (c->locked), from whichever thread caused
 * the drop: copy the key and return; calling into the store from there
 * deadlocks.
 *
 * @fn NULL removes the hook.  gs_set_change_hook() returns once no call of
 * the previous hook is running, so that its @arg may be freed then.
 */
void gs_set_change_hook(struct gs_store *s,
			void (*fn)(void *arg, const struct gs_change *c),
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
	uint64_t off; /* object offset */
	uint64_t len;
	uint64_t dev_off; /* offset in the tier's file (SSD), else 0 */
};
/* Fill up to @max ranges; returns the number of ranges or -ENOENT. */
int gs_inspect(struct gs_store *s, const void *key, size_t klen,
	       struct gs_range *ranges, int max);
/* "RAM", "SMALL", "SSD", "HDD": the name goblinctl and goblind print. */
const char *gs_tier_name(enum gs_tier t);

/*
 * Call @fn for every live key starting with @prefix, in no order, with the
 * store unlocked between calls.  @fn returns non-zero to stop.
 */
int gs_iterate(struct gs_store *s, const void *prefix, size_t plen,
	       int (*fn)(void *arg, const void *key, size_t klen,
			 const struct gs_meta *m),
	       void *arg);

/* ---- statistics ---- */

/*
 * The store's statistics, listed once.  struct gs_stats is made from this
 * list, and every reader prints from it through gs_stat_fields[]:
 * goblinctl stats (the field names, in this order), goblind's "stats
 * tiers", /_goblin/stats and /metrics (netd/stats.c, which gives some
 * fields a tier's name, "ram:capacity").  A field added here shows up in
 * each of them.  The help text is the HELP line of /metrics.
 *   U(name, kind, help): a uint64_t, GS_STAT_COUNTER (only grows) or
 *                        GS_STAT_GAUGE (goes up and down)
 *   H(name, n, help):    uint64_t name[n], the buckets of a histogram
 *   B(name, help):       a bool, a 0/1 gauge
 */
#define GS_STATS(U, H, B)                                                     \
	U(objects, GAUGE, "live committed objects")                           \
	/* of which small (in the arena, or cold) */                          \
	U(small_objects, GAUGE, "objects in the small-object arena")          \
	U(bytes, GAUGE, "value bytes of the live objects")                    \
	U(gets, COUNTER, "gs_get_open calls")                                 \
	U(get_hits, COUNTER, "gs_get_open calls that found an object")        \
	U(get_misses, COUNTER, "gs_get_open calls that found nothing")        \
	/* large-object opens whose head was in RAM, or was not */            \
	U(head_hits, COUNTER, "reads that found the head in RAM")             \
	U(head_misses, COUNTER, "reads that read the head from disk")         \
	/* opens of small-arena objects */                                    \
	U(small_hits, COUNTER, "reads of small objects")                      \
	U(puts, COUNTER, "commits")                                           \
	U(put_aborts, COUNTER, "aborted puts")                                \
	U(put_appends_shared, COUNTER,                                        \
	  "appends begun on the extents of the version they grow from")       \
	U(deletes, COUNTER, "gs_delete calls that removed a key")             \
	U(expired, COUNTER, "objects found expired")                          \
	/* value bytes served from RAM */                                     \
	U(bytes_read_ram, COUNTER, "bytes served from RAM heads")             \
	/* value bytes served from the SSD tier */                            \
	U(bytes_read_ssd, COUNTER, "bytes read from the SSD tier")            \
	U(bytes_written_ssd, COUNTER, "bytes written to the SSD tier")        \
	/* value bytes served from the HDD tier */                            \
	U(bytes_read_hdd, COUNTER, "bytes read from the HDD tier")            \
	U(bytes_written_hdd, COUNTER, "bytes written to the HDD tier")        \
	U(evictions_ssd, COUNTER, "objects evicted from the SSD tier")        \
	U(evictions_hdd, COUNTER, "objects evicted from the HDD tier")        \
	/* SSD prefixes dropped for room: the object stays on the HDD */      \
	U(ssd_prefix_drops, COUNTER,                                          \
	  "SSD prefixes dropped, the HDD copy kept")                          \
	/* small objects removed for room */                                  \
	U(evictions_small, COUNTER, "small objects evicted")                  \
	U(small_chills, COUNTER,                                              \
	  "small objects moved out of RAM: they stay readable from the "      \
	  "journal")                                                          \
	U(small_warms, COUNTER, "cold small objects read back")               \
	U(evictions_head, COUNTER, "heads dropped from RAM, disk copy kept")  \
	/* heads read back into RAM */                                        \
	U(head_promotions, COUNTER, "heads brought back to RAM")              \
	U(csum_failures, COUNTER,                                             \
	  "blocks, heads or small values failing their XXH3 check")           \
	U(recovered, COUNTER, "objects restored at open")                     \
	U(recovery_dropped, COUNTER, "journal entries dropped at open")       \
	U(compactions, COUNTER, "small-arena block compactions")              \
	U(journal_rewrites, COUNTER, "journal compactions")                   \
	/* the old journal stayed in use; retried with a backoff */           \
	U(journal_rewrite_errors, COUNTER, "journal rewrites that failed")    \
	U(ssd_reads, COUNTER, "O_DIRECT reads of the SSD tier completed")     \
	U(ssd_read_ns, COUNTER, "summed latency of the SSD tier's reads")     \
	/* latency: bucket i < 2^i * 16 us, the last one the rest */          \
	H(ssd_read_hist, 16, "SSD tier read latency")                         \
	U(hdd_reads, COUNTER, "O_DIRECT reads of the HDD tier completed")     \
	U(hdd_read_ns, COUNTER, "time the HDD tier's reads took")             \
	U(ram_capacity, GAUGE, "bytes of the RAM head pool")                  \
	U(ram_slots, GAUGE, "head slots in the RAM pool")                     \
	U(ram_slots_used, GAUGE, "head slots holding a head")                 \
	U(small_capacity, GAUGE, "bytes of the small-object arena")           \
	/* small arena bytes in live blocks */                                \
	U(small_used, GAUGE, "arena bytes in use, dead ones included")        \
	U(small_live, GAUGE, "arena bytes of live objects")                   \
	U(small_cold, GAUGE, "small objects whose bytes are only on disk")    \
	U(small_cold_bytes, GAUGE, "bytes of small objects only on disk")     \
	/* usable now: the capacity less the journal's records when they \
	 * share its fs, at most what the fs holds above the floor */    \
	U(ssd_capacity, GAUGE, "bytes of the SSD tier")                       \
	/* SSD bytes allocated */                                             \
	U(ssd_used, GAUGE, "SSD tier bytes in use")                           \
	/* 0: no HDD tier */                                                  \
	U(hdd_capacity, GAUGE, "bytes of the HDD tier")                       \
	U(hdd_used, GAUGE, "HDD tier bytes in use")                           \
	/* journal records (the file may have up to 64 MiB of room after \
	 * them) */    \
	U(journal_bytes, GAUGE, "bytes of the journal file")                  \
	/* read and write buffers mapped, in 2 MiB slabs asked for as	\
	 * huge pages */       \
	U(io_buffer_bytes, GAUGE, "bytes of the O_DIRECT I/O buffers mapped") \
	U(numa_nodes, GAUGE, "NUMA nodes with memory (1: none)")              \
	U(numa_promotions, COUNTER,                                           \
	  "head blocks moved to the node that reads them")                    \
	U(numa_bytes_moved, COUNTER, "bytes of the head blocks moved")        \
	U(numa_swap_ns_total, COUNTER,                                        \
	  "time the head block moves took, summed")                           \
	U(numa_swap_ns_max, GAUGE, "the longest head block move")             \
	U(numa_move_failures, COUNTER, "moves the kernel did not make")       \
	U(write_errors, COUNTER, "data or journal writes that failed")        \
	U(read_errors, COUNTER, "data or journal reads that failed")          \
	/* I/O faults injected (GOBLIN_FAULTS, tests), per class: failed \
	 * with EIO, done short, failed with ENOSPC, torn (half written, \
	 * then EIO); 0 in normal operation */    \
	U(faults_eio, COUNTER, "injected faults: EIO")                        \
	U(faults_short, COUNTER, "injected faults: short I/O")                \
	U(faults_enospc, COUNTER, "injected faults: ENOSPC")                  \
	U(faults_torn, COUNTER, "injected faults: torn writes")               \
	B(hugetlb, "head pool on HugeTLB pages")                              \
	B(mlocked, "RAM pools locked")

#define GS_STAT_MEMBER_U(name, kind, help) uint64_t name;
#define GS_STAT_MEMBER_H(name, n, help)	   uint64_t name[n];
#define GS_STAT_MEMBER_B(name, help)	   bool name;
struct gs_stats {
	GS_STATS(GS_STAT_MEMBER_U, GS_STAT_MEMBER_H, GS_STAT_MEMBER_B)
};

/* GS_STAT_<field>: the index of the field in gs_stat_fields[] */
#define GS_STAT_ID_U(name, kind, help) GS_STAT_##name,
#define GS_STAT_ID_H(name, n, help)    GS_STAT_##name,
#define GS_STAT_ID_B(name, help)       GS_STAT_##name,
enum gs_stat_id {
	GS_STATS(GS_STAT_ID_U, GS_STAT_ID_H, GS_STAT_ID_B)
	/* the number of fields */
	GS_NSTATS
};

enum gs_stat_kind {
	GS_STAT_COUNTER, /* uint64_t that only grows */
	GS_STAT_GAUGE,	 /* uint64_t that goes up and down */
	GS_STAT_HIST,	 /* uint64_t[n]: histogram buckets */
	GS_STAT_BOOL,	 /* bool: a 0/1 gauge */
};

/* One field of struct gs_stats, as GS_STATS lists it. */
struct gs_stat_field {
	const char *name; /* the member's name */
	enum gs_stat_kind kind;
	size_t off; /* offsetof(struct gs_stats, name) */
	unsigned n; /* GS_STAT_HIST: buckets; else 1 */
	const char *help;
};

/* Every field of struct gs_stats, in order, indexed by enum gs_stat_id. */
extern const struct gs_stat_field gs_stat_fields[GS_NSTATS];

/* Field @f of @st: a counter or gauge, bucket @i of a histogram, a bool. */
uint64_t gs_stat_value(const struct gs_stats *st, const struct gs_stat_field *f,
		       unsigned i);

void gs_stats_get(struct gs_store *s, struct gs_stats *st);

/* ---- the attribute record (attr.c) ---- */

/*
 * What every front-end keeps in gs_meta.attr: one record, one codec.
 * Content type, validators (ETag, Last-Modified), freshness and the
 * stored response header block of an object fetched from (or put over)
 * HTTP.  A memcache object has none (attr_len 0 decodes to defaults).
 *
 * On disk: a version byte (GS_ATTR_VERSION), the fixed fields
 * little-endian, then three strings each behind a 16-bit length: ETag,
 * Content-Type, header lines.  The whole record fits in GS_ATTR_MAX, so
 * the header block gets what the rest leaves: GS_ATTR_HEADERS_MAX with
 * no ETag and no type, less with them (gs_attr_encode() says -EMSGSIZE).
 * The lengths are 16-bit so a larger GS_ATTR_MAX needs no new format:
 * 1,024 bytes until the mirror stored every end-to-end header, 33 KiB
 * since, so that a header block of 32 KiB (goblind's
 * --mirror-max-header at most) fits beside the longest ETag and type.
 * A gs_meta embeds that much; an object keeps only its record's length
 * (objects.c mallocs it).
 *
 * Older records still decode: version 1 (goblind's, the same layout with
 * a header block of at most 512 bytes) and the text of goblinfs --mirror
 * before it ("Last-Modified: <HTTP-date>\r\n" lines).
 */
#define GS_ATTR_VERSION	    2
#define GS_ATTR_ETAG_MAX    128 /* ETag as sent, quotes (and W/) included */
#define GS_ATTR_CTYPE_MAX   128 /* Content-Type value */
#define GS_ATTR_FIXED	    34	/* version, flags, status, 3 times, 3 lengths */
#define GS_ATTR_HEADERS_MAX (GS_ATTR_MAX - GS_ATTR_FIXED)

/* gs_attr.flags */
#define GS_ATTR_ORIGIN 0x01 /* fetched by a mirror from its origin */
#define GS_ATTR_REVALIDATE \
	0x02		      /* must-revalidate/no-cache: never
			       * served stale / always revalidated */
#define GS_ATTR_NO_CACHE 0x04 /* stored, but revalidate on every use */
#define GS_ATTR_VARY \
	0x08 /* a mirror's Vary stub, never served: its
			       * headers name the fields that select the
			       * URL's variants (store/origin/origin.h) */
/* the record has a file block (gs_attr.file, issue 20) */
#define GS_ATTR_FILE	  0x10
/* goblind's RESP collections (netd/resp_cmd_coll.c): the value is a
 * hash's or a sorted set's encoding, not a string */
#define GS_ATTR_RESP_HASH 0x20
#define GS_ATTR_RESP_ZSET 0x40

/*
 * The file block (issue 20): what goblinfs keeps of a node besides its
 * bytes, so that it survives a remount and every front-end sees it.
 * Written as version 3 of the record (a record without it stays version
 * 2, byte for byte), right after the three times and before the strings,
 * so that gs_attr_kind() finds the kind at a fixed offset.  Times are
 * CLOCK_REALTIME nanoseconds; 0 means "the commit's time" (gs_meta's
 * mtime_ns), which is what a write leaves: the store stamps the commit,
 * so a rewrite's mtime and ctime need no second record.  A symlink's
 * target is kept here and its value is empty; a FIFO's, a socket's and a
 * device's value is empty too.  An object without the block (put over
 * memcache, HTTP or RESP) is a regular file, mode 0644 (a "path/" marker:
 * a directory, 0755), owned by the mount's user.
 */
enum gs_kind {
	GS_KIND_FILE = 0, /* regular file: the value is its bytes */
	GS_KIND_DIR,	  /* a directory's "path/" marker */
	GS_KIND_SYMLINK,  /* target in the block, value empty */
	GS_KIND_FIFO,
	GS_KIND_SOCK,
	GS_KIND_CHR, /* rdev in the block */
	GS_KIND_BLK,
	GS_KIND_MAX = GS_KIND_BLK
};
#define GS_ATTR_TARGET_MAX 4095 /* longest symlink target (PATH_MAX - 1) */

struct gs_attr_file {
	uint8_t kind;	   /* enum gs_kind */
	uint32_t mode;	   /* permission bits and S_ISUID/S_ISGID/S_ISVTX */
	uint32_t uid;	   /* owner */
	uint32_t gid;	   /* group */
	uint64_t rdev;	   /* GS_KIND_CHR/BLK: the device number */
	int64_t atime_ns;  /* 0: the commit's time */
	int64_t mtime_ns;  /* 0: the commit's time */
	int64_t ctime_ns;  /* 0: the commit's time */
	size_t target_len; /* GS_KIND_SYMLINK: bytes of target, else 0 */
	char target[GS_ATTR_TARGET_MAX + 1]; /* NUL-terminated after decode */
};

struct gs_attr {
	uint8_t flags;	       /* GS_ATTR_* */
	uint16_t status;       /* the stored response's status (200) */
	int64_t last_modified; /* unix seconds, 0: none (use the commit) */
	int64_t age_base;      /* unix seconds: when the response's age was
				* 0 (response time - corrected initial age);
				* 0: not from an origin */
	int64_t fresh_until;   /* unix seconds; 0: always fresh (stored by
				* PUT, or no freshness limit) */
	size_t etag_len;       /* 0: none; the server derives one */
	char etag[GS_ATTR_ETAG_MAX];
	size_t ctype_len;
	char ctype[GS_ATTR_CTYPE_MAX];
	size_t headers_len; /* "Name: value\r\n" lines, end-to-end
			     * response headers passed on with it */
	char headers[GS_ATTR_HEADERS_MAX];
	struct gs_attr_file file; /* with GS_ATTR_FILE in flags */
};

/** Defaults: no validators, no type, status 200, always fresh. */
void gs_attr_init(struct gs_attr *a);

/**
 * Encode @a into @buf (@cap bytes; GS_ATTR_MAX holds every record).
 * Returns the length, -EMSGSIZE when a field is over its maximum or the
 * record over GS_ATTR_MAX, -ENOSPC when @cap is too small.
 */
long gs_attr_encode(const struct gs_attr *a, uint8_t *buf, size_t cap);

/**
 * Decode @len bytes (gs_meta.attr) into @a, in any format ever written.
 * 0 (@len 0: the defaults), or with @a reset to the defaults:
 * -EBADMSG for bytes that are not a record (truncated, trailing bytes,
 * a text line without its colon or CRLF), -EMSGSIZE for a field longer
 * than it may be, -EPROTONOSUPPORT for an unknown version byte.
 */
int gs_attr_decode(const void *buf, size_t len, struct gs_attr *a);

/**
 * A record of file block @f and nothing else (what goblinfs gives a new
 * version): as gs_attr_encode() of a record with only GS_ATTR_FILE set,
 * without building one.  The length, -EINVAL for an unknown kind,
 * -EMSGSIZE for a target over GS_ATTR_TARGET_MAX, -ENOSPC for @cap.
 */
long gs_attr_file_encode(const struct gs_attr_file *f, uint8_t *buf,
			 size_t cap);

/**
 * The file block alone, without decoding the rest (goblinfs reads it at
 * every lookup): 1 and *@f filled, 0 when the record has none (*@f then
 * holds the defaults of a regular file: kind GS_KIND_FILE, mode 0644,
 * uid and gid 0, times 0), or a negative error as gs_attr_decode().
 */
int gs_attr_file_get(const void *buf, size_t len, struct gs_attr_file *f);

/**
 * The kind of object the record says it is, cheaply (a front-end asks it
 * at every get): GS_KIND_FILE when there is no file block or the record
 * is unreadable.  Network front-ends serve only GS_KIND_FILE values.
 */
enum gs_kind gs_attr_kind(const void *buf, size_t len);

/* HTTP-date (RFC 9110 sec. 5.6.7), which the record's text form holds. */
#define GS_HTTP_DATE_LEN 29 /* "Sun, 06 Nov 1994 08:49:37 GMT" */

/**
 * Parse an HTTP-date in any of the three formats (IMF-fixdate, obsolete
 * RFC 850, asctime).  Returns 0 and unix seconds in *@t, or -1.
 */
int gs_http_date_parse(const char *s, size_t len, int64_t *t);

/** Format @t as IMF-fixdate into @out (GS_HTTP_DATE_LEN + 1 bytes, NUL). */
void gs_http_date_format(int64_t t, char *out);

#endif
