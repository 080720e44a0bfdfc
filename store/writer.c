/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Streaming puts.  A small object is copied straight into its arena
 * allocation.  A large object's head is copied into its RAM slot, and all
 * of its bytes (the head too: the SSD copy is the durable home) go through
 * two write_io_chunk buffers written with O_DIRECT, one filling while the
 * other is on the device, so memory does not grow with the object.
 * With an HDD tier, a large object goes whole to the HDD, and its first
 * split bytes (head + SSD prefix) to the SSD as well: the SSD copy can then
 * be dropped for room at no cost, and nothing acknowledged is lost while
 * the HDD has room.
 * Nothing is visible until commit journals the object and indexes it (a
 * small one: from when its record has its place in the journal, while it
 * is written) unless it is a fill.
 */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "internal.h"

static bool args_valid(const void *key, size_t klen,
		       const struct gs_put_args *a)
{
	return key && klen > 0 && klen <= GS_KEY_MAX &&
	       a->attr_len <= GS_ATTR_MAX && (a->attr || !a->attr_len) &&
	       a->mode <= GS_CAS;
}

/* Called with s->lock held: choose the tier and reserve the space. */
static int writer_place(struct gs_writer *w)
{
	struct gs_store *s = w->s;
	struct gs_obj *o = w->o;
	uint64_t first;
	int ret;

	if (o->size < s->o.ram_head) {
		o->small = 1;
		if (small_alloc(s, o, o->size) == 0)
			return 0;
		/* no arena room: it becomes a one-piece large object */
		o->small = 0;
	}
	/* unknown size: start with one write buffer's worth, grow later */
	first = w->unknown ? s->o.write_io_chunk : o->size;
	o->hdd = s->hdd_fd >= 0;
	if (o->hdd) {
		ret = tier_alloc(s, o, TIER_HDD, first);
		if (ret < 0)
			return ret;
		o->ssd_len = o->size < s->split ? o->size : s->split;
		if (first > s->split)
			first = s->split;
	} else {
		o->ssd_len = o->size;
	}
	if (first || !o->hdd) {
		ret = tier_alloc(s, o, TIER_SSD, first);
		if (ret < 0)
			return ret;
	}
	o->csum = calloc(
		csum_blocks(w->unknown ? s->o.write_io_chunk : o->size) + 1,
		sizeof(uint32_t));
	w->buf[0] = bufpool_get(&s->wbufs);
	w->buf[1] = bufpool_get(&s->wbufs);
	/* a buffer's extent runs, on each tier */
	w->maxpieces =
		2 * ((uint32_t)(s->o.write_io_chunk / GS_ALLOC_UNIT) + 2);
	w->io[0] = calloc(w->maxpieces, sizeof(struct gs_io));
	w->io[1] = calloc(w->maxpieces, sizeof(struct gs_io));
	if (!o->csum || !w->buf[0] || !w->buf[1] || !w->io[0] || !w->io[1])
		return -ENOMEM;
	if (s->o.ram_head)
		o->head = head_slot_get(s, o);
	return 0;
}

/* Called with s->lock held; nothing may be in flight. */
static void writer_free_locked(struct gs_writer *w)
{
	if (w->ring)
		ring_put_locked(w->s, w->ring);
	w->ring = NULL;
	for (int i = 0; i < 2; i++) {
		if (w->buf[i])
			bufpool_put(&w->s->wbufs, w->buf[i]);
		free(w->io[i]);
	}
}

static void writer_free(struct gs_writer *w)
{
	if (w->xs)
		XXH3_freeState(w->xs);
	free(w);
}

int gs_put_begin(struct gs_store *s, const void *key, size_t klen,
		 const struct gs_put_args *a, struct gs_writer **out)
{
	struct gs_writer *w;
	struct gs_obj *o;
	int ret;

	FAULT_STEP(FS_PUT);
	if (!args_valid(key, klen, a))
		return -EINVAL;
	w = calloc(1, sizeof(*w));
	o = obj_new(key, klen);
	if (!w || !o || !(w->xs = XXH3_createState()) ||
	    !(w->ring = ring_get(s)) ||
	    (a->attr_len && !(o->attr = malloc(a->attr_len)))) {
		ret = -ENOMEM;
		if (o)
			free(o->attr);
		free(o);
		if (w)
			writer_free(w);
		return ret;
	}
	XXH3_64bits_reset(w->xs);
	w->s = s;
	w->o = o;
	w->mode = a->mode;
	w->cas_match = a->cas_match;
	w->fill = a->fill;
	w->unknown = a->size == GS_SIZE_UNKNOWN;
	w->keep_xs = a->appendable;
	o->grows = w->fill && w->unknown;
	o->state = OBJ_FILLING;
	o->size = a->size;
	o->flags = a->flags;
	o->exptime = a->exptime;
	o->attr_len = (uint16_t)a->attr_len;
	if (a->attr_len)
		memcpy(o->attr, a->attr, a->attr_len);

	pthread_mutex_lock(&s->lock);
	if (a->fill && index_find(&s->fills, o->node.hash, key, klen)) {
		ret = -EEXIST;
		goto fail;
	}
	ret = writer_place(w);
	if (ret < 0)
		goto fail;
	if (a->fill) {
		index_insert(&s->fills, &o->node);
		o->refs++; /* the fill table's reference */
	}
	pthread_mutex_unlock(&s->lock);
	*out = w;
	return 0;
fail:
	writer_free_locked(w);
	o->state = OBJ_GONE;
	obj_unref(s, o);
	pthread_mutex_unlock(&s->lock);
	writer_free(w);
	return ret;
}

/* A put of unknown size: extents and checksums for @end bytes. */
static int writer_grow(struct gs_writer *w, uint64_t end)
{
	struct gs_store *s = w->s;
	struct gs_obj *o = w->o;
	uint64_t nb = csum_blocks(end) + 1;
	uint32_t *c;
	int ret;

	pthread_mutex_lock(&s->lock);
	if (o->hdd) {
		ret = tier_alloc(s, o, TIER_HDD, end);
		if (ret == 0 && s->split)
			ret = tier_alloc(s, o, TIER_SSD,
					 end < s->split ? end : s->split);
	} else {
		ret = tier_alloc(s, o, TIER_SSD, end);
	}
	/* under the lock: the readers of a fill check blocks under it */
	if (ret == 0 && !(c = realloc(o->csum, nb * sizeof(uint32_t))))
		ret = -ENOMEM;
	if (ret == 0)
		o->csum = c;
	pthread_mutex_unlock(&s->lock);
	return ret;
}

/* Block checksums, 4 KiB padding and the O_DIRECT writes of buffer @b. */
int writer_flush(struct gs_writer *w, int b)
{
	struct gs_store *s = w->s;
	struct gs_obj *o = w->o;
	uint64_t len = w->blen[b], plen = ALIGN4K(len), done = 0;
	/* the HDD copy is written to the end of its last unit, so that the
	 * next object's write continues it instead of paying a seek */
	uint64_t hplen = o->hdd ? (len + GS_ALLOC_UNIT - 1) / GS_ALLOC_UNIT *
					  GS_ALLOC_UNIT :
				  plen;

	if (w->unknown) {
		int ret = writer_grow(w, w->boff[b] + plen);

		if (ret < 0)
			return w->err = ret;
	}
	for (uint64_t off = 0; off < len; off += GS_CSUM_BLOCK) {
		uint64_t bl = len - off < GS_CSUM_BLOCK ? len - off :
							  GS_CSUM_BLOCK;

		o->csum[(w->boff[b] + off) / GS_CSUM_BLOCK] =
			csum_block(w->buf[b] + off, bl);
	}
	memset(w->buf[b] + len, 0, hplen - len);
	w->npieces[b] = 0;
	for (int t = TIER_SSD; t < NTIERS; t++) {
		/* the SSD takes the object, or with an HDD copy the split */
		uint64_t end = t == TIER_HDD	      ? (o->hdd ? hplen : 0) :
			       !o->hdd		      ? plen :
			       s->split <= w->boff[b] ? 0 :
			       s->split - w->boff[b] < plen ?
							s->split - w->boff[b] :
							plen;

		w->bytes[b][t] = end < len ? end : len;
		for (done = 0; done < end;) {
			uint64_t run, dev = obj_dev_off(o, t, w->boff[b] + done,
							&run);
			uint64_t n = end - done < run ? end - done : run;
			struct gs_io *io = &w->io[b][w->npieces[b]++];
			struct io_uring_sqe *sqe = io_get_sqe(w->ring);

			assert(dev != UINT64_MAX &&
			       w->npieces[b] <= w->maxpieces);
			io_uring_prep_write(sqe, tier_fd(s, t),
					    w->buf[b] + done, (unsigned)n, dev);
			io_prep(sqe, io);
			f_sqe(s, sqe, io);
			io->owner = (void *)(uintptr_t)n; /* expected length */
			done += n;
		}
	}
	io_uring_submit(w->ring);
	w->busy[b] = true;
	return 0;
}

/* Wait for buffer @b's writes; its bytes become durable (and fill-visible). */
int writer_wait(struct gs_writer *w, int b)
{
	struct gs_store *s = w->s;
	int ret = 0;

	if (!w->busy[b])
		return 0;
	for (uint32_t i = 0; i < w->npieces[b]; i++) {
		struct gs_io *io = &w->io[b][i];
		int r = io_wait(w->ring, io);

		if (r == 0 && io->res != (int)(uintptr_t)io->owner)
			r = io->res < 0 ? io->res : -EIO;
		if (r < 0 && ret == 0)
			ret = r;
	}
	w->busy[b] = false;
	if (ret < 0) {
		stat_add(s, write_errors, 1);
		return w->err = ret;
	}
	stat_add(s, bytes_written_ssd, w->bytes[b][TIER_SSD]);
	stat_add(s, bytes_written_hdd, w->bytes[b][TIER_HDD]);
	pthread_mutex_lock(&s->lock);
	w->o->durable = w->boff[b] + w->blen[b];
	if (w->fill)
		obj_wake(s, w->o);
	pthread_mutex_unlock(&s->lock);
	return 0;
}

/* Take @len bytes into the value; @hash: into its checksum too. */
int writer_take(struct gs_writer *w, const void *buf, size_t len, bool hash)
{
	struct gs_store *s = w->s;
	struct gs_obj *o = w->o;
	const uint8_t *p = buf;
	uint64_t wchunk = s->o.write_io_chunk;

	if (w->err)
		return w->err;
	if (len > o->size - w->pos)
		return -EOVERFLOW;
	if (len == 0)
		return 0;
	if (hash)
		XXH3_64bits_update(w->xs, buf, len);
	if (o->small) {
		memcpy(o->item.ptr + w->pos, buf, len);
		w->pos += len;
		goto progress;
	}
	if (o->head && w->pos < s->o.ram_head) {
		uint64_t n = s->o.ram_head - w->pos;

		memcpy(o->head + w->pos, buf, n < len ? n : len);
	}
	while (len) {
		int b = w->cur;
		uint64_t n = wchunk - w->blen[b];

		if (n > len)
			n = len;
		memcpy(w->buf[b] + w->blen[b], p, n);
		w->blen[b] += n;
		w->pos += n;
		p += n;
		len -= n;
		if (w->blen[b] == wchunk) {
			if (writer_flush(w, b) < 0)
				return w->err;
			w->cur = !b;
			if (writer_wait(w, w->cur) < 0)
				return w->err;
			w->boff[w->cur] = w->boff[b] + wchunk;
			w->blen[w->cur] = 0;
		}
	}
progress:
	if (w->fill) {
		pthread_mutex_lock(&s->lock);
		o->written = w->pos;
		obj_wake(s, o);
		pthread_mutex_unlock(&s->lock);
	}
	return 0;
}

int gs_put_write(struct gs_writer *w, const void *buf, size_t len)
{
	FAULT_STEP(FS_PUT);
	return writer_take(w, buf, len, true);
}

/* Finish the device writes of a large object: the last partial buffer. */
static int writer_drain(struct gs_writer *w)
{
	int b = w->cur, ret;

	if (w->o->small)
		return w->err;
	if (w->blen[b] && !w->err)
		writer_flush(w, b); /* an error lands in w->err */
	ret = writer_wait(w, !b);   /* the older buffer first */
	if (writer_wait(w, b) < 0 && ret == 0)
		ret = w->err;
	return ret ? ret : w->err;
}

/* Called with s->lock held: end a put that will not be published. */
static void writer_discard_locked(struct gs_writer *w, bool aborted)
{
	struct gs_store *s = w->s;
	struct gs_obj *o = w->o;

	if (w->fill) {
		index_remove(&s->fills, &o->node);
		o->aborted = aborted;
		o->state = OBJ_GONE;
		obj_wake(s, o);
		obj_unref(s, o); /* the fill table's reference */
	}
	o->state = OBJ_GONE;
	writer_free_locked(w);
	obj_unref(s, o);
}

void gs_put_abort(struct gs_writer *w)
{
	struct gs_store *s = w->s;

	FAULT_STEP(FS_PUT);
	writer_drain(w); /* no write may land after the space is freed */
	pthread_mutex_lock(&s->lock);
	writer_discard_locked(w, true);
	pthread_mutex_unlock(&s->lock);
	stat_add(s, put_aborts, 1);
	writer_free(w);
}

/*
 * The writer's object is its own until commit (no fill: no reader sees
 * it), so its mode and expiry may still change.
 */
int gs_put_amend(struct gs_writer *w, enum gs_put_mode mode, uint64_t cas_match,
		 int64_t exptime)
{
	if (mode > GS_CAS)
		return -EINVAL;
	if (w->fill)
		return -EBUSY;
	w->mode = mode;
	w->cas_match = cas_match;
	w->o->exptime = exptime;
	return 0;
}

/* Called with s->lock held: does the put's mode allow it now? */
static int mode_check(struct gs_writer *w)
{
	struct gs_obj *o = w->o;
	struct gs_obj *cur = obj_lookup(w->s, o->node.key, o->node.klen);

	switch (w->mode) {
	case GS_ADD:
		return cur ? -EEXIST : 0;
	case GS_REPLACE:
		return cur ? 0 : -ENOENT;
	case GS_CAS:
		if (!cur)
			return -ENOENT;
		return cur->cas == w->cas_match ? 0 : -ESTALE;
	default:
		return 0;
	}
}

/*
 * A put of unknown size learns its size at commit.  One that stayed below
 * a head becomes a small object: its bytes are all still in the first
 * write buffer (at most one write of it may be in flight).  A fill stays
 * as it is, since its readers read its head slot and extents.
 */
static void finish_unknown(struct gs_writer *w)
{
	struct gs_store *s = w->s;
	struct gs_obj *o = w->o;

	pthread_mutex_lock(&s->lock);
	o->size = w->pos; /* a fill's readers learn where it ends */
	pthread_mutex_unlock(&s->lock);
	if (w->fill || w->pos >= s->o.ram_head || w->pos > s->o.write_io_chunk)
		return;
	if (writer_wait(w, 0) < 0 || writer_wait(w, 1) < 0)
		return;
	pthread_mutex_lock(&s->lock);
	o->small = 1;
	if (small_alloc(s, o, o->size) == 0) {
		memcpy(o->item.ptr, w->buf[0], o->size);
		obj_release_large(s, o);
		w->blen[0] = w->blen[1] = 0;
	} else {
		o->small = 0; /* no arena room: stays on the SSD tier */
	}
	pthread_mutex_unlock(&s->lock);
}

/* A large put of unknown size, committed: give back what it did not use.
 * Lock held. */
static void trim_unknown(struct gs_store *s, struct gs_obj *o)
{
	if (o->hdd) {
		tier_trim(s, o, TIER_HDD, o->size ? o->size : 1);
		tier_trim(s, o, TIER_SSD,
			  o->size < s->split ? o->size : s->split);
		o->ssd_len = o->size < s->split ? o->size : s->split;
	} else {
		/* every large object keeps an extent */
		tier_trim(s, o, TIER_SSD, o->size ? o->size : 1);
		o->ssd_len = o->size;
	}
}

/*
 * Journal @w's record @r (@len bytes).  A small object's is reserved in
 * @js and written by the caller once the lock is dropped, unless journal
 * maintenance waits for the reserved records to end (jm_drain, jmaint.c):
 * then it is written here, as a large object's always is.  0, with *@late
 * -EIO when the record was written but not synced; or -errno (not
 * written).  Lock held.
 */
static int commit_record(struct gs_writer *w, const struct jrec *r, size_t len,
			 uint8_t *stack, size_t stack_len, struct jslot *js,
			 int *late)
{
	struct gs_store *s = w->s;
	struct gs_obj *o = w->o;
	/* where a small value will sit in the journal */
	uint64_t voff = J_HDR + J_PUT_BODY + r->klen + r->attr_len;
	uint8_t *rec = stack;
	int ret;

	if (o->small && !s->jm_drain) {
		ret = journal_reserve(s, len, stack, stack_len, js);
		if (ret < 0)
			return ret;
		jrec_encode(r, NULL, NULL, js->buf);
		o->jpos = js->off + voff;
		return 0;
	}
	if (len > stack_len && !(rec = malloc(len)))
		return -ENOMEM;
	jrec_encode(r, o->ext, o->csum, rec);
	if (o->small)
		o->jpos = s->jbytes + voff; /* journal_write's place */
	ret = journal_write(s, rec, len);
	if (rec != stack)
		free(rec);
	if (ret < 0)
		return ret;
	/* in the journal, not known durable: published, and -EIO */
	*late = ret == JOURNAL_UNSYNCED ? -EIO : 0;
	return 0;
}

/* About 100 lines: the commit's one lock hold, in the order its steps
 * must happen (check, record, publish, write the reserved record, undo). */
int gs_put_commit(struct gs_writer *w, uint64_t *cas_out)
{
	struct gs_store *s = w->s;
	struct gs_obj *o = w->o;
	uint8_t stackbuf[512];
	struct jslot js = { .buf = NULL };
	struct gs_obj *old = NULL;
	struct io_uring *ring;
	struct jrec r;
	size_t len;
	int ret, late = 0;
	/* the change hook's report, made after the lock is released */
	struct gs_change ch = { .kind = GS_CHANGE_PUBLISH };
	struct change_ref h;
	uint8_t kstack[256], *kheap = NULL;
	bool tell = false;

	FAULT_STEP(FS_COMMIT);
	if (w->unknown)
		finish_unknown(w);
	ret = writer_drain(w);
	if (ret == 0 && w->pos != o->size)
		ret = -EPROTO;
	if (ret == 0 && !o->small && s->o.sync &&
	    (F_CALL(s) < 0 || fdatasync(s->data_fd) < 0))
		ret = -errno;
	o->xxh3 = XXH3_64bits_digest(w->xs);
	if (w->keep_xs && !o->small) {
		o->xs = w->xs; /* for the next append (gs_put_begin_append) */
		w->xs = NULL;
	}

	pthread_mutex_lock(&s->lock);
	if (ret == 0)
		ret = mode_check(w);
	if (ret < 0)
		goto fail;
	if (w->unknown && !o->small)
		trim_unknown(s, o);
	o->cas = ++s->cas;
	o->mtime_ns = gs_real_ns();
	obj_jrec(o, ++s->seq, &r);
	len = jrec_size(&r);
	if (len == 0) {
		ret = -EFBIG;
		goto fail;
	}
	ret = commit_record(w, &r, len, stackbuf, sizeof(stackbuf), &js, &late);
	if (ret < 0)
		goto fail;
	o->jlen = len;
	o->written = o->durable = o->size;
	if (w->fill) {
		index_remove(&s->fills, &o->node);
		obj_unref(s, o); /* the fill table's; the writer's remains */
	}
	ring = w->ring; /* kept for the record's write */
	w->ring = NULL;
	writer_free_locked(w);
	if (js.buf && (old = obj_lookup(s, o->node.key, o->node.klen)))
		old->refs++; /* put back if the record is not written */
	obj_publish(s, o);   /* the index takes the writer's reference */
	obj_wake(s, o);
	if (change_take(s, &h)) {
		/* the key, for the hook: @o may be gone once we unlock */
		ch.klen = o->node.klen;
		ch.cas = o->cas;
		if (ch.klen > sizeof(kstack) && !(kheap = malloc(ch.klen)))
			ch.klen = 0; /* the hook learns nothing: see below */
		ch.key = kheap ? kheap : kstack;
		memcpy(kheap ? kheap : kstack, o->node.key, ch.klen);
		tell = true;
	}
	if (cas_out)
		*cas_out = o->cas;
	if (js.buf) {
		/*
		 * Published before its record is written, so that the index
		 * and the journal see puts in one order; acknowledged only
		 * after.  Readers get it from RAM meanwhile.
		 */
		o->refs++;
		pthread_mutex_unlock(&s->lock);
		ret = journal_write_slot(s, &js, ring);
		pthread_mutex_lock(&s->lock);
		journal_unreserve(s, &js, ret);
		if (ret < 0 && o->state == OBJ_LIVE) {
			/*
			 * Not written: replay will not see it, and the
			 * version it replaced, acknowledged, is still the
			 * journal's.  Unless a later put or delete has
			 * superseded this one, that version comes back.
			 */
			obj_unlink(s, o);
			if (old && old->state == OBJ_GONE && !old->corrupt &&
			    !obj_lookup(s, old->node.key, old->node.klen)) {
				obj_publish(s, old); /* takes our ref */
				old = NULL;
			}
		}
		if (ret > 0) {
			late = ret & JOURNAL_UNSYNCED ? -EIO : 0;
			ret = 0;
		}
		if (old)
			obj_unref(s, old);
		obj_unref(s, o);
	}
	ring_put_locked(s, ring);
	journal_maybe_rewrite(s);
	pthread_mutex_unlock(&s->lock);
	writer_free(w);
	if (tell) {
		/* a key we could not copy (no memory) goes unreported;
		 * its call is counted out all the same */
		if (ch.klen)
			change_give(s, &h, &ch);
		else
			atomic_fetch_sub(&s->change_calls, 1);
		free(kheap);
	}
	if (ret < 0)
		return ret;
	stat_add(s, puts, 1);
	return late;
fail:
	writer_discard_locked(w, true);
	pthread_mutex_unlock(&s->lock);
	writer_free(w);
	return ret;
}

int gs_put(struct gs_store *s, const void *key, size_t klen, const void *val,
	   size_t len, const struct gs_put_args *a)
{
	struct gs_put_args args = *a;
	struct gs_writer *w;
	int ret;

	args.size = len;
	ret = gs_put_begin(s, key, klen, &args, &w);
	if (ret < 0)
		return ret;
	ret = gs_put_write(w, val, len);
	if (ret < 0) {
		gs_put_abort(w);
		return ret;
	}
	return gs_put_commit(w, NULL);
}
