/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Streaming gets.  A reader pins one version of an object.  A large
 * object's RAM head is handed out first, zero copy, after the first tail
 * reads have been queued, so the head is on its way while the device
 * works; tail chunks then come back in order from a ring of io_depth
 * O_DIRECT reads, each verified against its block checksums before any
 * byte of it is handed out; past GS_RAMP_BYTES of a range they are
 * GS_LONG_READ each.  An object with an HDD copy has a second ring
 * for the HDD: it starts with the request, so the seek is paid while the
 * RAM head and the SSD prefix are going out.
 */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"

struct rslot {
	struct gs_io io;
	uint8_t *buf;
	uint64_t off; /* object offset of buf[0], block aligned */
	uint64_t len; /* object bytes in buf */
	bool checked;
	bool lng; /* buf is from rbufs_long */
	uint8_t tier;
};

/* The reads of one tier, in object order. */
struct rqueue {
	struct rslot slot[GS_MAX_DEPTH];
	unsigned first, n;
	uint64_t sub; /* next object offset to read */
};

struct gs_reader {
	struct gs_store *s;
	struct gs_obj *o;
	uint64_t pos, end; /* next byte to hand out; end of the range */
	uint64_t hlen;	   /* bytes [0, hlen) come from the RAM head */
	uint64_t ramp_at;  /* reads from here on are long (GS_LONG_READ) */
	unsigned depth;
	unsigned inflight; /* reads not completed */
	int err;
	struct io_uring *ring;
	bool attached, waiting, closing;
	void (*notify)(void *arg);
	void *narg;
	struct gs_reader *wnext; /* in o->waiters, protected by s->lock */
	struct gs_reader *fnext; /* in s->reader_free(_big) */
	uint8_t *own;		 /* a cold small value read for this reader */
	bool big;		 /* allocated with the whole of meta.attr */
	/* after the fields reader_alloc() zeroes: see there */
	struct rqueue q[NTIERS]; /* [hlen, ssd_len) SSD, the rest HDD */
	/*
	 * Last: a reader is allocated with only READER_SMALL_ATTR bytes of
	 * meta.attr when the object's record fits in them (most do), with
	 * all GS_ATTR_MAX when not, so that the readers in flight do not
	 * each hold 33 KiB of header room.  meta is only ever written by
	 * obj_meta(), which copies attr_len bytes, and read through
	 * gs_reader_meta() up to attr_len.
	 */
	struct gs_meta meta;
};

#define READER_SMALL_ATTR 2048

static size_t reader_size(bool big)
{
	return big ? sizeof(struct gs_reader) :
		     offsetof(struct gs_reader, meta.attr) + READER_SMALL_ATTR;
}

/* s->lock held: a recycled reader of the class, or a new one */
static struct gs_reader *reader_alloc(struct gs_store *s, bool big)
{
	struct gs_reader **fl = big ? &s->reader_free_big : &s->reader_free;
	struct gs_reader *r = *fl;

	if (r)
		*fl = r->fnext;
	else if (!(r = malloc(reader_size(big))))
		return NULL;
	/* A queue's slots are written whole when a read is queued and read
	 * only between its first and first + n: zeroing them too (4.6 KiB)
	 * was most of the cost of opening a small value (perf, issue 22). */
	memset(r, 0, offsetof(struct gs_reader, q));
	for (int t = 0; t < NTIERS; t++) {
		r->q[t].first = r->q[t].n = 0;
		r->q[t].sub = 0;
	}
	r->big = big;
	return r;
}

/* s->lock held */
static void reader_recycle(struct gs_store *s, struct gs_reader *r)
{
	struct gs_reader **fl = r->big ? &s->reader_free_big : &s->reader_free;

	r->fnext = *fl;
	*fl = r;
}

static struct gs_reader *reader_waiter_next(struct gs_reader *r)
{
	return r->wnext;
}

static void reader_notify(struct gs_reader *r)
{
	r->waiting = false;
	r->wnext = NULL;
	if (r->notify)
		r->notify(r->narg);
}

static unsigned hist_bucket(uint64_t ns)
{
	uint64_t us16 = ns / 16000;
	unsigned b = 0;

	while (us16 && b < 15) {
		us16 >>= 1;
		b++;
	}
	return b;
}

static void reader_finish_close(struct gs_reader *r);

static void slot_done(struct gs_io *io)
{
	struct gs_reader *r = io->owner;
	uint64_t ns = (uint64_t)gs_mono_ns() - io->t0;

	if (list_entry(io, struct rslot, io)->tier == TIER_HDD) {
		stat_add(r->s, hdd_reads, 1);
		stat_add(r->s, hdd_read_ns, ns);
	} else {
		stat_add(r->s, ssd_reads, 1);
		stat_add(r->s, ssd_read_ns, ns);
		stat_add_idx(r->s, STAT_IDX(ssd_read_hist) + hist_bucket(ns),
			     1);
	}
	assert(r->inflight > 0);
	atomic_fetch_sub_explicit(&r->s->reads_inflight, 1,
				  memory_order_relaxed);
	if (--r->inflight == 0 && r->closing) {
		reader_finish_close(r);
		return;
	}
	if (r->attached && r->notify)
		r->notify(r->narg);
}

static struct io_uring *reader_ring(struct gs_reader *r)
{
	if (!r->ring)
		r->ring = ring_get(r->s); /* given back at close */
	return r->ring;
}

/* Point the queues at object offset @start (block aligned, or hlen). */
static void queues_start(struct gs_reader *r, uint64_t start)
{
	r->q[TIER_SSD].sub = start;
	r->ramp_at = start + GS_RAMP_BYTES;
	r->q[TIER_HDD].sub = start > r->o->ssd_len ? start : r->o->ssd_len;
}

int gs_get_open(struct gs_store *s, const void *key, size_t klen, int getflags,
		struct gs_reader **out)
{
	struct gs_reader *r;
	struct gs_obj *o;

	FAULT_STEP(FS_READ);
	if (!key || klen == 0 || klen > GS_KEY_MAX)
		return -EINVAL;
	pthread_mutex_lock(&s->lock);
	stat_add(s, gets, 1);
	o = obj_lookup(s, key, klen);
	if (!o && (getflags & GS_GET_FILL)) {
		struct idx_node *n =
			index_find(&s->fills, index_hash(key, klen), key, klen);
		if (n)
			o = list_entry(n, struct gs_obj, node);
	}
	if (!o) {
		pthread_mutex_unlock(&s->lock);
		stat_add(s, get_misses, 1);
		return -ENOENT;
	}
	if (!(r = reader_alloc(s, o->attr_len > READER_SMALL_ATTR))) {
		pthread_mutex_unlock(&s->lock);
		return -ENOMEM;
	}
	o->refs++;
	if (o->small && !o->item.ptr) { /* cold: read it back */
		uint8_t *own = NULL;
		int ret = obj_warm(s, o, &own);

		if (ret < 0) {
			obj_unref(s, o);
			reader_recycle(s, r);
			pthread_mutex_unlock(&s->lock);
			stat_add(s, get_misses, 1);
			return ret == -EBADMSG ? -ENOENT : ret;
		}
		r->own = own;
	}
	r->s = s;
	r->o = o;
	r->end = o->size;
	r->depth = s->o.io_depth;
	obj_meta(o, &r->meta);
	if (o->small) {
		stat_add(s, small_hits, 1);
		slru_hit(&s->lru_small, &o->lru);
	} else {
		if (o->ssd_len)
			slru_hit(&s->lru_ssd, &o->lru);
		if (o->hdd)
			slru_hit(&s->lru_hdd, &o->dlru);
		if (o->head) {
			r->hlen = o->size < s->o.ram_head ? o->size :
							    s->o.ram_head;
			slru_hit(&s->lru_head, &o->hlru);
			stat_add(s, head_hits, 1);
			numa_note_here(&s->numa, o->head);
		} else {
			stat_add(s, head_misses, 1);
		}
	}
	queues_start(r, r->hlen);
	pthread_mutex_unlock(&s->lock);
	stat_add(s, get_hits, 1);
	*out = r;
	return 0;
}

void gs_reader_set_window(struct gs_reader *r, uint64_t bytes)
{
	uint64_t chunk = r->s->o.io_chunk;
	uint64_t depth = (bytes + chunk - 1) / chunk;

	if (depth > GS_MAX_DEPTH)
		depth = GS_MAX_DEPTH;
	pthread_mutex_lock(&r->s->lock);
	r->depth = depth > r->s->o.io_depth ? (unsigned)depth :
					      r->s->o.io_depth;
	pthread_mutex_unlock(&r->s->lock);
}

const struct gs_meta *gs_reader_meta(const struct gs_reader *r)
{
	return &r->meta;
}

/* Release slots whose bytes have all been handed out.  Lock held. */
static void release_consumed(struct gs_reader *r, bool all)
{
	for (int t = TIER_SSD; t < NTIERS; t++) {
		struct rqueue *q = &r->q[t];

		while (q->n) {
			struct rslot *sl = &q->slot[q->first];

			if (!sl->io.done ||
			    (!all && sl->off + sl->len > r->pos))
				break;
			bufpool_put(sl->lng ? &r->s->rbufs_long : &r->s->rbufs,
				    sl->buf);
			sl->buf = NULL;
			q->first = (q->first + 1) % GS_MAX_DEPTH;
			q->n--;
		}
	}
}

/* May long stream @r, with @n reads queued, queue more than its own
 * depth (GS_LONG_DEEP, GS_LONG_SHARED)?  Lock held. */
static bool long_deeper(const struct gs_reader *r, unsigned n)
{
	const struct gs_store *s = r->s;
	const struct bufpool *p = &s->rbufs_long;

	return n < GS_LONG_DEEP &&
	       atomic_load_explicit(&s->reads_inflight, memory_order_relaxed) ==
		       r->inflight &&
	       (uint64_t)(p->n - p->nfree) * p->size < GS_LONG_SHARED;
}

/* Queue reads ahead of the reader, up to @depth in flight on each tier it
 * reads (long reads: @depth io_chunks' worth, at least io_depth, never
 * more than @depth: one during the head; more while long_deeper()).
 * Lock held. */
static void pump(struct gs_reader *r, unsigned depth)
{
	struct gs_store *s = r->s;
	uint64_t ldepth = (uint64_t)depth * s->o.io_chunk / GS_LONG_READ;
	struct gs_obj *o = r->o;
	uint64_t end_dev = r->end;
	uint64_t limit = o->state == OBJ_FILLING ? o->durable : o->size;
	uint64_t hl = o->size < s->o.ram_head ? o->size : s->o.ram_head;

	/* whole blocks, for their checksums; not past the end, which is
	 * GS_SIZE_UNKNOWN while a fill of unknown size runs */
	if (end_dev < o->size)
		end_dev = (end_dev + GS_CSUM_BLOCK - 1) &
			  ~(uint64_t)(GS_CSUM_BLOCK - 1);
	if (end_dev > o->size)
		end_dev = o->size;
	if (!r->ring)
		return; /* reader_step took one before the lock, or failed */
	if (ldepth < s->o.io_depth)
		ldepth = depth < s->o.io_depth ? depth : s->o.io_depth;
	for (int t = TIER_SSD; t < NTIERS; t++) {
		struct rqueue *q = &r->q[t];
		uint64_t have = t == TIER_SSD && o->ssd_len < limit ?
					o->ssd_len :
					limit;
		uint64_t stop = end_dev < have ? end_dev : have;

		if (t == TIER_HDD && !o->hdd)
			break;
		while (q->sub < stop) {
			bool lng = q->sub >= r->ramp_at && s->rbufs_long.size;
			struct bufpool *pool = lng ? &s->rbufs_long : &s->rbufs;
			uint64_t len = lng ? GS_LONG_READ : s->o.io_chunk;
			uint64_t run, dev;
			struct io_uring_sqe *sqe;
			struct rslot *sl;
			uint8_t *buf;

			if (q->n >= (lng ? ldepth : depth) &&
			    !(lng && depth >= s->o.io_depth &&
			      long_deeper(r, q->n)))
				break;
			/* a read of the whole head lets it be promoted to
			 * RAM, even when the range ends inside it */
			if (q->sub == 0 && !o->head && hl > len && hl <= have)
				len = hl;
			if (len > stop - q->sub && !(q->sub == 0 && len == hl))
				len = stop - q->sub;
			dev = obj_dev_off(o, t, q->sub, &run);
			if (len > run)
				len = run;
			buf = bufpool_get(pool);
			sqe = buf ? io_get_sqe(r->ring) : NULL;
			if (!sqe) {
				if (buf)
					bufpool_put(pool, buf);
				break;
			}
			sl = &q->slot[(q->first + q->n) % GS_MAX_DEPTH];
			sl->buf = buf;
			sl->off = q->sub;
			sl->len = len;
			sl->checked = false;
			sl->lng = lng;
			sl->tier = (uint8_t)t;
			io_uring_prep_read(sqe, tier_fd(s, t), buf,
					   (unsigned)ALIGN4K(len), dev);
			io_prep(sqe, &sl->io);
			f_sqe(s, sqe, &sl->io);
			sl->io.complete = slot_done;
			sl->io.owner = r;
			r->inflight++;
			atomic_fetch_add_explicit(&s->reads_inflight, 1,
						  memory_order_relaxed);
			q->n++;
			q->sub += len;
		}
	}
}

/* Wait for a fill to advance.  Lock held; returns with it released. */
static int wait_fill(struct gs_reader *r, bool block)
{
	struct gs_store *s = r->s;

	if (block) {
		pthread_cond_wait(&s->fill_cond, &s->lock);
		pthread_mutex_unlock(&s->lock);
		return 0;
	}
	if (!r->waiting) {
		r->waiting = true;
		r->wnext = r->o->waiters;
		r->o->waiters = r;
	}
	pthread_mutex_unlock(&s->lock);
	return -EAGAIN;
}

/* Copy a RAM head read from the device into a head slot.  Lock held. */
static void promote_head(struct gs_reader *r, const struct rslot *sl)
{
	struct gs_store *s = r->s;
	struct gs_obj *o = r->o;
	uint64_t hl = o->size < s->o.ram_head ? o->size : s->o.ram_head;
	uint8_t *slot;

	if (o->head || o->state != OBJ_LIVE || hl == 0 || sl->off != 0 ||
	    sl->len < hl || !(slot = head_slot_get(s, o)))
		return;
	memcpy(slot, sl->buf, hl);
	o->head = slot;
	slru_insert(&s->lru_head, &o->hlru, 1);
	stat_add(s, head_promotions, 1);
}

/* A growing fill's checksums move as it grows: check them under the lock. */
static bool verify_slot(struct gs_reader *r, const struct rslot *sl)
{
	bool ok;

	if (!r->o->grows)
		return blocks_verify(r->o, sl->buf, sl->off, sl->len);
	pthread_mutex_lock(&r->s->lock);
	ok = blocks_verify(r->o, sl->buf, sl->off, sl->len);
	pthread_mutex_unlock(&r->s->lock);
	return ok;
}

static void submit(struct gs_reader *r)
{
	if (!r->attached && r->ring)
		io_uring_submit(r->ring);
}

/*
 * The next chunk, at most @max bytes.  Blocking (@block) or not; @keep:
 * the chunks handed out before stay valid (gs_reader_pollv).
 * 1: chunk in *c; 0: end of range; <0: error or -EAGAIN.
 * Over 100 lines: the get's hot path, one loop over its states (a small
 * value, the RAM head, a fill's wait, the tiers' read rings) that share
 * the lock handling and the hand-out of a chunk.  Left whole in issue 17
 * (which split store.c): a split of the hot path waits for a change that
 * is benchmarked with it.
 */
static int reader_step(struct gs_reader *r, struct gs_chunk *c, uint64_t max,
		       bool block, bool keep)
{
	struct gs_store *s = r->s;
	struct gs_obj *o = r->o;

	for (;;) {
		struct rqueue *q;
		struct rslot *sl;
		uint64_t avail, n;
		unsigned i = 0;
		int t;

		submit(r); /* reads queued by the previous call */
		if (r->err)
			return r->err;
		if (!o->small && !reader_ring(r))
			return -ENOMEM;
		if (r->pos >= r->end)
			return 0;
		pthread_mutex_lock(&s->lock);
		if (!keep)
			release_consumed(r, false);
		if (r->end > o->size) { /* a fill of unknown size ended */
			r->end = o->size;
			if (r->pos >= r->end) {
				pthread_mutex_unlock(&s->lock);
				continue;
			}
		}
		if (o->aborted || o->corrupt) {
			r->err = o->aborted ? -ECANCELED : -EBADMSG;
			pthread_mutex_unlock(&s->lock);
			continue;
		}
		if (o->small || r->pos < r->hlen) {
			const uint8_t *base = !o->small ? o->head :
					      r->own	? r->own :
							  o->item.ptr;

			if (!o->small)
				/*
				 * The tail starts now, one read deep: many
				 * readers stop within the head (a file's
				 * first page), and each read queued costs a
				 * submit and, at close, a wait.  The rest of
				 * the depth follows once the tail is read.
				 */
				pump(r, 1);
			avail = o->small ? r->end : r->hlen;
			if (avail > r->end)
				avail = r->end;
			if (avail > o->written)
				avail = o->written;
			if (r->pos >= avail) {
				if (!r->attached && r->ring &&
				    io_uring_sq_ready(r->ring)) {
					/* start the tail before sleeping */
					pthread_mutex_unlock(&s->lock);
					continue;
				}
				if (wait_fill(r, block) < 0)
					return -EAGAIN;
				continue;
			}
			n = avail - r->pos < max ? avail - r->pos : max;
			c->data = base + r->pos;
			c->len = n;
			c->off = r->pos;
			r->pos += n;
			c->last = r->pos >= r->end;
			pthread_mutex_unlock(&s->lock);
			/*
			 * The tail reads are queued but go to the kernel on the
			 * next call: a submit can issue the reads inline (tens
			 * of us on some devices), and the head must not wait.
			 */
			stat_add(s, bytes_read_ram, n);
			return 1;
		}
		pump(r, r->depth);
		t = obj_tier_of(o, r->pos);
		q = &r->q[t];
		/* kept slots that were handed out whole come first */
		for (i = 0; keep && i < q->n; i++) {
			sl = &q->slot[(q->first + i) % GS_MAX_DEPTH];
			if (sl->off + sl->len > r->pos)
				break;
		}
		if (keep && i == q->n) { /* the next read is not queued */
			pthread_mutex_unlock(&s->lock);
			return -EAGAIN;
		}
		if (q->n == 0) {
			if (o->state != OBJ_FILLING) {
				r->err = -EIO; /* no buffer or sqe to be had */
				pthread_mutex_unlock(&s->lock);
				continue;
			}
			if (wait_fill(r, block) < 0)
				return -EAGAIN;
			continue;
		}
		pthread_mutex_unlock(&s->lock);
		submit(r);
		sl = &q->slot[(q->first + i) % GS_MAX_DEPTH];
		if (!sl->io.done) {
			int ret;

			if (!block)
				return -EAGAIN;
			ret = io_wait(r->ring, &sl->io);
			if (ret < 0)
				r->err = ret;
			continue;
		}
		if (!sl->checked) {
			if (sl->io.res < 0 || (uint64_t)sl->io.res < sl->len) {
				r->err = sl->io.res < 0 ? sl->io.res : -EIO;
				stat_add(s, read_errors, 1);
				continue;
			}
			if (!verify_slot(r, sl)) {
				pthread_mutex_lock(&s->lock);
				obj_drop_corrupt(s, o);
				pthread_mutex_unlock(&s->lock);
				r->err = -EBADMSG;
				continue;
			}
			sl->checked = true;
			if (sl->off == 0 && !o->head) {
				pthread_mutex_lock(&s->lock);
				promote_head(r, sl);
				pthread_mutex_unlock(&s->lock);
			}
		}
		avail = sl->off + sl->len < r->end ? sl->off + sl->len : r->end;
		n = avail - r->pos < max ? avail - r->pos : max;
		c->data = sl->buf + (r->pos - sl->off);
		c->len = n;
		c->off = r->pos;
		r->pos += n;
		c->last = r->pos >= r->end;
		if (t == TIER_HDD)
			stat_add(s, bytes_read_hdd, n);
		else
			stat_add(s, bytes_read_ssd, n);
		return 1;
	}
}

int gs_reader_next(struct gs_reader *r, struct gs_chunk *c)
{
	FAULT_STEP(FS_READ);
	if (r->attached)
		return -EINVAL;
	return reader_step(r, c, UINT64_MAX, true, false);
}

int gs_reader_poll(struct gs_reader *r, struct gs_chunk *c)
{
	FAULT_STEP(FS_READ);
	return reader_step(r, c, UINT64_MAX, false, false);
}

int gs_reader_pollv(struct gs_reader *r, struct gs_chunk *c, unsigned n)
{
	int ret;
	unsigned got = 1;

	FAULT_STEP(FS_READ);
	ret = reader_step(r, c, UINT64_MAX, false, false);
	if (ret != 1)
		return ret;
	/* the rest only while they are ready; an end or an error that
	 * stops them is the next call's answer */
	while (got < n && !c[got - 1].last &&
	       reader_step(r, &c[got], UINT64_MAX, false, true) == 1)
		got++;
	return (int)got;
}

int gs_reader_attach(struct gs_reader *r, struct io_uring *ring,
		     void (*notify)(void *arg), void *arg)
{
	if (r->inflight)
		return -EBUSY;
	r->ring = ring;
	r->attached = true;
	r->notify = notify;
	r->narg = arg;
	return 0;
}

/* Wait out every read in flight (blocking readers only). */
static int drain(struct gs_reader *r)
{
	if (r->inflight && r->attached)
		return -EBUSY;
	for (int t = TIER_SSD; t < NTIERS; t++) {
		struct rqueue *q = &r->q[t];

		for (unsigned i = 0; i < q->n; i++) {
			struct rslot *sl =
				&q->slot[(q->first + i) % GS_MAX_DEPTH];

			if (!sl->io.done)
				io_wait(r->ring, &sl->io);
		}
	}
	return 0;
}

int gs_reader_range(struct gs_reader *r, uint64_t off, uint64_t len)
{
	uint64_t size = r->o->size;
	int ret = drain(r);

	if (ret < 0)
		return ret;
	pthread_mutex_lock(&r->s->lock);
	release_consumed(r, true);
	pthread_mutex_unlock(&r->s->lock);
	if (off > size)
		off = size;
	r->pos = off;
	r->end = len > size - off ? size : off + len;
	queues_start(r, off < r->hlen ? r->hlen :
					off & ~(uint64_t)(GS_CSUM_BLOCK - 1));
	if (r->err != -EBADMSG && r->err != -ECANCELED)
		r->err = 0;
	return 0;
}

ssize_t gs_read(struct gs_reader *r, void *buf, size_t len, uint64_t off)
{
	size_t done = 0;

	FAULT_STEP(FS_READ);
	if (off >= r->o->size || len == 0)
		return 0;
	if (off != r->pos || r->end != r->o->size) {
		int ret = gs_reader_range(r, off, UINT64_MAX);

		if (ret < 0)
			return ret;
	}
	while (done < len) {
		struct gs_chunk c;
		int ret = reader_step(r, &c, len - done, true, false);

		if (ret < 0) /* what was copied is not handed back */
			return ret;
		if (ret == 0)
			break;
		memcpy((uint8_t *)buf + done, c.data, c.len);
		done += c.len;
	}
	return (ssize_t)done;
}

static void reader_finish_close(struct gs_reader *r)
{
	struct gs_store *s = r->s;

	pthread_mutex_lock(&s->lock);
	release_consumed(r, true);
	assert(r->q[TIER_SSD].n == 0 && r->q[TIER_HDD].n == 0);
	if (r->ring && !r->attached)
		ring_put_locked(s, r->ring);
	r->ring = NULL;
	free(r->own);
	r->own = NULL;
	obj_unref(s, r->o);
	reader_recycle(s, r);
	pthread_mutex_unlock(&s->lock);
}

void gs_reader_close(struct gs_reader *r)
{
	struct gs_store *s = r->s;

	pthread_mutex_lock(&s->lock);
	if (r->waiting) {
		struct gs_reader **p = &r->o->waiters;

		while (*p && *p != r)
			p = &(*p)->wnext;
		if (*p)
			*p = r->wnext;
		r->waiting = false;
	}
	pthread_mutex_unlock(&s->lock);
	if (r->inflight && r->attached) {
		r->closing = true; /* the last completion closes it */
		return;
	}
	drain(r);
	reader_finish_close(r);
}

int gs_get(struct gs_store *s, const void *key, size_t klen, void **val,
	   size_t *len, struct gs_meta *meta)
{
	struct gs_reader *r;
	uint8_t *buf;
	ssize_t n;
	int ret = gs_get_open(s, key, klen, 0, &r);

	if (ret < 0)
		return ret;
	buf = malloc(r->meta.size ? r->meta.size : 1);
	if (!buf) {
		gs_reader_close(r);
		return -ENOMEM;
	}
	n = gs_read(r, buf, r->meta.size, 0);
	if (n >= 0 && (uint64_t)n != r->meta.size)
		n = -EIO;
	if (n < 0) {
		free(buf);
		gs_reader_close(r);
		return (int)n;
	}
	if (meta) /* what the reader holds: meta.attr up to attr_len */
		memcpy(meta, &r->meta,
		       offsetof(struct gs_meta, attr) + r->meta.attr_len);
	*len = r->meta.size;
	*val = buf;
	gs_reader_close(r);
	return 0;
}

void obj_wake(struct gs_store *s, struct gs_obj *o)
{
	struct gs_reader *w = o->waiters;

	o->waiters = NULL;
	pthread_cond_broadcast(&s->fill_cond);
	while (w) {
		struct gs_reader *next = reader_waiter_next(w);

		reader_notify(w);
		w = next;
	}
}

/* Free the recycled readers (at close: every reader is closed). */
void reader_pool_free(struct gs_store *s)
{
	while (s->reader_free) {
		struct gs_reader *r = s->reader_free;

		s->reader_free = r->fnext;
		free(r);
	}
	while (s->reader_free_big) {
		struct gs_reader *r = s->reader_free_big;

		s->reader_free_big = r->fnext;
		free(r);
	}
}
