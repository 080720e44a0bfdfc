/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the store's own files share: the object version, the store, the
 * io_uring plumbing.  Not for other folders: they include goblin.h.
 */
#ifndef GS_INTERNAL_H
#define GS_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <liburing.h>
#include "clock.h"
#include "fault.h"
#include "hash.h"
#include "goblin.h"
#include "index.h"
#include "journal_codec.h"
#include "list.h"
#include "numa.h"
#include "ram.h"
#include "slru.h"
#include "space.h"

enum obj_state {
	OBJ_FILLING, /* being written; visible only to fill readers */
	OBJ_LIVE,    /* committed and in the index */
	OBJ_GONE,    /* replaced, deleted, evicted or aborted */
};

/*
 * One version of one object.  Every field is protected by s->lock unless
 * noted.  refs counts the index (or fill table), each reader and the writer;
 * the version's RAM and disk space are released when it drops to zero.
 */
struct gs_obj {
	struct idx_node node; /* key lives in key[] below */
	int refs;
	uint8_t state;	 /* enum obj_state */
	uint8_t small;	 /* value in the small arena */
	uint8_t corrupt; /* failed verification; never served again */
	uint8_t aborted; /* fill abandoned: readers get -ECANCELED */
	uint8_t grows;	 /* a fill of unknown size: csum and size
			  * change under readers; set before any */
	uint32_t jsnap;	 /* its entry + 1 in a journal rewrite's
			  * snapshot (jmaint.c), valid only with
			  * the entry's cas */
	uint64_t size, cas, xxh3;
	int64_t exptime, mtime_ns;
	uint32_t flags;
	uint16_t attr_len;
	uint8_t *attr; /* malloc'ed, NULL when attr_len is 0 */
	uint64_t jlen; /* bytes of its journal record */

	/* read-while-fill watermarks; equal to size once committed */
	uint64_t written;	   /* bytes in the head slot or arena */
	uint64_t durable;	   /* bytes on the SSD tier */
	struct gs_reader *waiters; /* async readers waiting on the fill */

	/* small objects: in RAM when item.ptr, else only in the journal
	 * ("cold", linked in s->cold through lru.l) */
	struct arena_item item;
	uint64_t jpos; /* offset of the value in the journal file */

	/* large objects */
	uint8_t *head;	    /* RAM head slot, NULL when not in RAM */
	struct extent *ext; /* SSD and HDD extents, each tier's in order */
	uint32_t next;
	uint8_t hdd;	  /* the HDD tier holds all of [0, size) */
	uint64_t ssd_len; /* the SSD tier holds [0, ssd_len): size, or
			   * with an HDD copy the prefix or nothing */
	uint32_t *csum;	  /* per GS_CSUM_BLOCK; set as blocks are written */
	/* the whole-value hash's state after its last byte, kept for
	 * puts made appendable (gs_put_args.appendable), so that an
	 * append does not read the value again to hash it; NULL else */
	XXH3_state_t *xs;

	struct slru_node lru;  /* SSD tier, or small arena when small */
	struct slru_node hlru; /* RAM head pool */
	struct slru_node dlru; /* HDD tier */
	/* the key as created; node.key points here, or after a rename to a
	 * malloc'ed copy of the new key: use node.key, not this */
	uint8_t key[];
};

/* Up to a whole 4 KiB: O_DIRECT lengths and offsets. */
#define ALIGN4K(x) (((x) + 4095) & ~(uint64_t)4095)

/* one per thread but the last, shared (stats.c): at most 64, a mask */
#define NSTAT_SHARDS 64

struct stat_shard {
	_Alignas(64) _Atomic uint64_t v[sizeof(struct gs_stats) / 8];
};

/* A disk I/O in flight; user_data is (uintptr_t)io | 1. */
struct gs_io {
	int res;
	int fault; /* an injected error its completion reports */
	bool done;
	void (*complete)(struct gs_io *io); /* may be NULL */
	void *owner;
	uint64_t t0;
};

struct pooled_ring;

struct bufpool {
	uint64_t size;	     /* bytes per buffer */
	uint64_t slab;	     /* bytes per slab: size rounded up to 2 MiB */
	uint32_t per_slab;   /* buffers in a slab */
	void **free;	     /* idle buffers */
	uint32_t nfree, cap; /* idle; room in free[] */
	uint32_t n;	     /* buffers carved from the slabs */
	void **slabs;	     /* mapped slabs, 2 MiB aligned */
	uint32_t nslabs, slabs_cap;
};

struct gs_store {
	char *dir;
	struct gs_options o;
	int lock_fd;
	int data_fd; /* SSD data file, O_DIRECT */
	int hdd_fd;  /* HDD data file, O_DIRECT; -1 without one */
	int jfd;     /* journal: reads, small records (buffered) */
	int jdfd;    /* journal, O_DIRECT: large records; -1 if not */

	pthread_mutex_t lock;	  /* everything below unless noted */
	pthread_cond_t fill_cond; /* a fill advanced or ended */
	struct index idx;	  /* committed objects */
	struct index fills;	  /* objects being filled (GS_PUT_FILL) */
	struct ram_region head_mem, small_mem;
	struct numa numa; /* head block placement; its own locking */
	struct slots slots;
	struct arena arena;
	struct space space;  /* the SSD tier */
	struct space hspace; /* the HDD tier (limit 0 without one) */
	uint64_t split;	     /* with an HDD tier: SSD bytes of an object */
	/* per tier: the capacity asked for (bytes), the bytes to leave free
	 * on its file system, whether the journal shares that file system
	 * (tier_limit_refresh()) */
	uint64_t cap[NTIERS], floor[NTIERS];
	bool jshare[NTIERS];
	struct slru lru_ssd, lru_small, lru_head, lru_hdd;
	uint64_t cas;	       /* last cas handed out */
	uint64_t seq;	       /* last journal sequence number */
	uint64_t jbytes;       /* journal size, its reserved records included */
	uint32_t jinflight;    /* reserved records not yet written */
	uint64_t jalloc;       /* journal file size: zeros past jbytes */
	bool jno_direct;       /* jdfd refused our alignment: all buffered */
	bool jno_prealloc;     /* no fallocate here: the file grows by writes */
	uint64_t jlive;	       /* journal bytes of live objects */
	uint64_t bytes;	       /* value bytes of live objects */
	uint64_t nsmall;       /* live small objects */
	struct list_head cold; /* cold small objects, oldest at the back */
	uint64_t cold_bytes;   /* their value bytes */
	uint64_t ncold;

	struct bufpool rbufs;	   /* tail reads: max(io_chunk, ram_head) */
	struct bufpool rbufs_long; /* long streams' reads: GS_LONG_READ,
				    * unused (size 0) when io_chunk is not
				    * smaller */
	struct bufpool wbufs;	   /* writes: write_io_chunk */
	/* the readers' tail reads queued and not completed, every worker's:
	 * a long stream reads deeper only while they are its own */
	_Atomic uint32_t reads_inflight;
	struct bufpool jbufs; /* direct journal records: a whole small put */
	struct gs_reader *reader_free;	   /* recycled readers */
	struct gs_reader *reader_free_big; /* ... with a whole meta.attr */
	struct pooled_ring *ring_free;	   /* rings for the blocking API */
	/* gs_set_change_hook's: set under s->lock; calls made outside it
	 * are counted in change_calls, which the next setter waits on */
	void (*change_hook)(void *arg, const struct gs_change *c);
	void *change_arg;
	atomic_uint change_calls; /* lock free */

	/*
	 * Journal maintenance (jmaint.c): one thread rewrites the journal
	 * off the lock.  Protected by s->lock.
	 */
	pthread_t jm_thread;
	bool jm_started;	 /* the thread runs */
	bool jm_stop;		 /* gs_close: finish now */
	bool jm_want;		 /* a rewrite is due (or a retry) */
	bool jm_force;		 /* the next one runs even without garbage */
	unsigned jm_drain;	 /* waiting for jinflight to reach 0: puts
				  * write their records under the lock */
	unsigned jm_failures;	 /* in a row, for the backoff */
	pthread_cond_t jm_cond;	 /* wakes the thread */
	pthread_cond_t jm_quiet; /* jinflight reached 0 under jm_drain */

	struct stat_shard stats[NSTAT_SHARDS]; /* lock free */
};

/* stats: shard by thread, relaxed adds, summed by gs_stats_get */
#define STAT_IDX(field) (offsetof(struct gs_stats, field) / 8)
void stat_add_idx(struct gs_store *s, size_t idx, uint64_t n);
#define stat_add(s, field, n) stat_add_idx(s, STAT_IDX(field), n)

/* io.c */
struct io_uring *ring_get(struct gs_store *s);
void ring_put_locked(struct gs_store *s, struct io_uring *ring);
void ring_pool_free(struct gs_store *s);
struct io_uring_sqe *io_get_sqe(struct io_uring *ring);
void io_prep(struct io_uring_sqe *sqe, struct gs_io *io);
/* Submit and reap on @ring until io->done. */
int io_wait(struct io_uring *ring, struct gs_io *io);

/* Buffer pools, 4 KiB aligned; get and put with s->lock held. */
void bufpool_init(struct bufpool *p, uint64_t size);
void *bufpool_get(struct bufpool *p);
void bufpool_put(struct bufpool *p, void *b);
uint64_t bufpool_bytes(const struct bufpool *p);
void bufpool_release(struct bufpool *p);

#define GS_MAX_DEPTH   32
/*
 * A long stream reads bigger: GS_RAMP_BYTES past where its range began, a
 * reader's tail reads are GS_LONG_READ each (when io_chunk is smaller),
 * as many in flight as its depth's worth of io_chunks, at least io_depth
 * but never more than the depth asked for (pump()).  The device here reads a 1 GiB tail at 3.0 GB/s in 256 KiB
 * reads four deep and at 3.5 GB/s in 1 MiB reads four deep.  Shorter
 * streams keep the small reads, which start sooner and keep a busy
 * server's turns short: with the ramp at 4 MiB, goblind served ART
 * (objects up to 8 MiB, 16 connections, the device saturated) 3-4% slower
 * in three pairs out of three.
 */
#define GS_RAMP_BYTES  (8ull << 20)
#define GS_LONG_READ   (1ull << 20)
/*
 * A long stream reads deeper while it has the device to itself: up to
 * GS_LONG_DEEP long reads, while no other reader has a read in flight and
 * the long reads of the whole store stay under GS_LONG_SHARED bytes;
 * otherwise it keeps the depth above.  The chunks that wait for a socket
 * hold their buffers, so at 4 deep one BIG stream here had 2 reads in
 * flight on average and left the device idle 28% of the time; 32 deep
 * it was served 1.2x as fast (16 deep: 5-8% less than 32).  With other
 * readers on the device, its reads would queue in front of theirs (WEB at
 * 256 and 1024 connections lost 3-26% of its throughput so):
 * bench/results/bw-21.md.  The long pool stays bounded: it grows to
 * GS_LONG_SHARED or to what the readers' own depth asks, whichever is more.
 */
#define GS_LONG_DEEP   GS_MAX_DEPTH
#define GS_LONG_SHARED (64ull << 20)

/*
 * The rooms, lowest first (store/README.md): a room calls only rooms
 * above it in this list, never one below.
 */

/* io.c: pread/pwrite all of @len at @off, or fail: 0 or -errno */
int pread_full(struct gs_store *s, int fd, void *buf, size_t len, uint64_t off);
int pwrite_full(struct gs_store *s, int fd, const void *buf, size_t len,
		uint64_t off);

/* options.c */
/* Format an error into @err (if any) and return @ret. */
int store_errf(char *err, size_t len, int ret, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
int options_check(const struct gs_options *o, char *err, size_t len);

/* super.c */
#define SUPER_NAME "goblin.super"
int super_check(const char *dir, struct gs_options *o, char *ssd_dir,
		char *hdd_dir, char *err, size_t len);

static inline struct space *tier_space(struct gs_store *s, int tier)
{
	return tier == TIER_HDD ? &s->hspace : &s->space;
}

static inline int tier_fd(const struct gs_store *s, int tier)
{
	return tier == TIER_HDD ? s->hdd_fd : s->data_fd;
}

/* journal.c, called with s->lock held unless noted */
/* journal_write(), journal_write_slot(): a record written, not synced */
#define JOURNAL_UNSYNCED 2
/* journal_write_slot(): a direct record went through the page cache */
#define JOURNAL_BUFFERED 1
int journal_write(struct gs_store *s, const void *buf, size_t len);
/*
 * A small put's record is placed in the journal under the store lock and
 * written outside it, so that puts do not queue on the lock behind each
 * other's writes.  journal_reserve (lock held) gives the record its place
 * and a buffer: records of JOURNAL_DIRECT_MIN bytes or more get a pooled
 * 4 KiB-aligned one and a 4 KiB-aligned place, and skip the page cache
 * (copying a value into it costs more CPU than the rest of a put); others
 * follow the last record, in @stack if it is large enough, else in a buffer
 * of their own (-ENOMEM if none).  journal_write_slot (lock not held)
 * writes it, direct ones through an idle @ring: -errno when not written,
 * else JOURNAL_BUFFERED and JOURNAL_UNSYNCED bits; journal_unreserve (lock
 * held) ends it, given what the write returned.
 */
#define JOURNAL_DIRECT_MIN (32u << 10)
/*
 * The journal file is allocated this far ahead of its records: a direct
 * write inside the file shares the inode lock with the others and is not
 * waited for under it, as one that extends the file is.  Replay takes
 * zeros up to the end of the file for the end of the journal.
 */
#define JOURNAL_PREALLOC   (64u << 20)
struct jslot {
	uint8_t *buf;
	uint64_t off; /* in the journal */
	size_t len;
	bool direct; /* buf is from s->jbufs, written with O_DIRECT */
	bool own;    /* buf was allocated for it */
};
int journal_reserve(struct gs_store *s, size_t len, uint8_t *stack,
		    size_t stack_len, struct jslot *js);
int journal_write_slot(struct gs_store *s, struct jslot *js,
		       struct io_uring *ring);
void journal_unreserve(struct gs_store *s, const struct jslot *js, int how);
/* Journal a record that carries only a key (and an exptime for touch). */
int journal_key_record(struct gs_store *s, uint8_t type, const struct gs_obj *o,
		       int64_t exptime);

/* objects.c, called with s->lock held */
struct gs_obj *obj_new(const void *key, size_t klen);
void obj_free(struct gs_store *s, struct gs_obj *o);
void obj_unref(struct gs_store *s, struct gs_obj *o);
struct gs_obj *obj_lookup(struct gs_store *s, const void *key, size_t klen);
void obj_publish(struct gs_store *s, struct gs_obj *o);
int obj_remove(struct gs_store *s, struct gs_obj *o);
/* Take @o out of the index; its space goes when the last reader leaves. */
void obj_unlink(struct gs_store *s, struct gs_obj *o);
/* Evict @o for room if its DEL record can be written; false if not. */
bool obj_evict(struct gs_store *s, struct gs_obj *o);
void obj_drop_corrupt(struct gs_store *s, struct gs_obj *o);
bool obj_expired(const struct gs_obj *o, int64_t now);
void obj_meta(const struct gs_obj *o, struct gs_meta *m);
void obj_jrec(const struct gs_obj *o, uint64_t seq, struct jrec *r);
void obj_release_large(struct gs_store *s, struct gs_obj *o);
/* The cold small objects' list (their values only in the journal). */
void cold_add(struct gs_store *s, struct gs_obj *o);
void cold_del(struct gs_store *s, struct gs_obj *o);
void obj_chill(struct gs_store *s, struct gs_obj *o);
/* Apply a rename to the index (live call or replay). */
int rename_apply(struct gs_store *s, const void *from, size_t flen,
		 const void *to, size_t tlen, uint64_t jlen);
/*
 * The change hook (gs_set_change_hook).  change_take(), with s->lock held,
 * says whether a hook is set and, if so, counts the call to come in @h;
 * change_give() makes that call once the lock is released.  Without a hook
 * a change costs the test of one pointer.
 */
struct change_ref {
	void (*fn)(void *arg, const struct gs_change *c);
	void *arg;
};
bool change_take(struct gs_store *s, struct change_ref *h);
void change_give(struct gs_store *s, const struct change_ref *h,
		 const struct gs_change *c);
/* Check the block checksums of object bytes [off, off+len) held in @buf
 * (off block aligned; len reaching a block end or the object's end). */
bool blocks_verify(const struct gs_obj *o, const uint8_t *buf, uint64_t off,
		   uint64_t len);

/* evict.c, called with s->lock held */
int small_alloc(struct gs_store *s, struct gs_obj *o, uint64_t len);
int obj_warm(struct gs_store *s, struct gs_obj *o, uint8_t **own);
uint8_t *head_slot_get(struct gs_store *s, struct gs_obj *o);
/* Make room for @units on @tier, coldest first; false if it cannot. */
bool tier_evict(struct gs_store *s, int tier, uint64_t units);
/* Make @o's extents on @tier cover @size bytes, evicting for room. */
int tier_alloc(struct gs_store *s, struct gs_obj *o, int tier, uint64_t size);
/* Give back @tier's units past the first @size bytes (0: all of them). */
void tier_trim(struct gs_store *s, struct gs_obj *o, int tier, uint64_t size);
/* Set @tier's limit from its capacity, the journal and its fs's free space. */
void tier_limit_refresh(struct gs_store *s, int tier);

/* jmaint.c */
/* Wake the maintenance thread if the journal is due a rewrite.  Lock held;
 * never rewrites on the caller's behalf. */
void journal_maybe_rewrite(struct gs_store *s);
/* Rewrite now, on this thread (at open, before the thread runs).  Lock
 * held: dropped while the new journal is written.  0 or -errno. */
int journal_rewrite(struct gs_store *s);
int jmaint_start(struct gs_store *s);
/* Stop the thread (lock not held); a rewrite in progress is abandoned. */
void jmaint_stop(struct gs_store *s);

/* recovery.c: at open, single-threaded */
int journal_replay(struct gs_store *s, bool *dirty);
void preload_heads(struct gs_store *s);

/* writer.c: a put in progress, which append.c begins and reads back too */
struct gs_writer {
	struct gs_store *s;
	struct gs_obj *o;
	uint64_t pos;	  /* bytes accepted */
	XXH3_state_t *xs; /* whole-value checksum */
	enum gs_put_mode mode;
	uint64_t cas_match;
	bool fill;
	bool unknown; /* GS_SIZE_UNKNOWN: extents grow as it is written */
	bool keep_xs; /* appendable: the version keeps xs at commit */
	int err;
	struct io_uring *ring;
	/* large objects: buffer i holds object bytes [boff[i], +blen[i]) */
	uint8_t *buf[2];
	uint64_t boff[2], blen[2];
	struct gs_io *io[2]; /* the buffer's writes, one per extent run */
	uint32_t npieces[2];
	uint32_t maxpieces;
	uint64_t bytes[2][NTIERS]; /* the buffer's bytes per tier */
	bool busy[2];
	int cur;
};
/* Block checksums, padding and the O_DIRECT writes of buffer @b. */
int writer_flush(struct gs_writer *w, int b);
/* Wait for buffer @b's writes; its bytes become durable. */
int writer_wait(struct gs_writer *w, int b);
/* Take @len bytes into the value; @hash: into its checksum too. */
int writer_take(struct gs_writer *w, const void *buf, size_t len, bool hash);

/* reader.c */
/* A fill advanced or ended: wake its waiters.  Lock held. */
void obj_wake(struct gs_store *s, struct gs_obj *o);
void reader_pool_free(struct gs_store *s);

/* Allocation units @o holds on @tier. */
uint32_t obj_units(const struct gs_obj *o, int tier);
/* Map object offset @off to an offset in @tier's file; *run = bytes left in
 * the extent (0 and UINT64_MAX when @tier does not hold @off). */
uint64_t obj_dev_off(const struct gs_obj *o, int tier, uint64_t off,
		     uint64_t *run);
/* The tier a read of object offset @off goes to. */
static inline int obj_tier_of(const struct gs_obj *o, uint64_t off)
{
	return off < o->ssd_len ? TIER_SSD : TIER_HDD;
}

#endif
