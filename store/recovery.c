/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Recovery at open: the journal replayed into the index (records that do
 * not verify skipped, a torn tail cut off, units claimed twice given to
 * the later record), then hot heads read back into RAM.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include "internal.h"

static int attr_copy(struct gs_obj *o, const void *attr, size_t len)
{
	o->attr_len = (uint16_t)len;
	if (!len)
		return 0;
	o->attr = malloc(len);
	if (!o->attr)
		return -ENOMEM;
	memcpy(o->attr, attr, len);
	return 0;
}

/* Give @o a copy of @attr in place of its own.  Lock held. */
static int attr_replace(struct gs_obj *o, const void *attr, size_t len)
{
	uint8_t *copy = NULL;

	if (len && !(copy = malloc(len)))
		return -ENOMEM;
	if (len)
		memcpy(copy, attr, len);
	free(o->attr);
	o->attr = copy;
	o->attr_len = (uint16_t)len;
	return 0;
}

/*
 * Claim @e for a put being replayed.  Units another live object holds are
 * its only if that object's DEL record was lost (a journal write that
 * failed while the store evicted or dropped it): the put is the later
 * record, so the earlier owner goes.  Lock held (single-threaded at open).
 */
static int replay_claim(struct gs_store *s, const struct extent *e, bool *dirty)
{
	struct space *sp = tier_space(s, e->tier);
	int ret = e->shared ? space_claim_shared(sp, e) : space_claim(sp, e);
	struct idx_node *n = NULL;
	uint64_t pos = 0;

	/*
	 * A shared extent's units are held by the version it grew from
	 * too (or the one that grew from it, after a journal rewrite): both
	 * records say so, and replay gives them to both.
	 */
	if (ret != -EEXIST)
		return ret;
	while ((n = index_next(&s->idx, &pos, n))) {
		struct gs_obj *o = list_entry(n, struct gs_obj, node);
		bool overlap = false;

		for (uint32_t i = 0; i < o->next && !overlap; i++)
			overlap = o->ext[i].tier == e->tier &&
				  o->ext[i].off < e->off + e->len &&
				  e->off < o->ext[i].off + o->ext[i].len;
		if (!overlap)
			continue;
		n = NULL; /* the scan starts over: unlink changes it */
		pos = 0;
		obj_unlink(s, o);
		stat_add(s, recovery_dropped, 1);
		*dirty = true;
	}
	return space_claim(sp, e);
}

/* Apply one put record during replay.  Returns 0, or <0 to drop it. */
static int replay_put(struct gs_store *s, const struct jrec *r, long len,
		      int64_t now, uint64_t vpos, bool *dirty)
{
	struct gs_obj *o = obj_new(r->key, r->klen), *old;
	uint32_t i;

	if (!o)
		return -ENOMEM;
	o->size = r->size;
	o->cas = r->cas;
	o->exptime = r->exptime;
	o->mtime_ns = r->mtime_ns;
	o->xxh3 = r->xxh3;
	o->flags = r->flags;
	o->jlen = (uint64_t)len;
	o->written = o->durable = r->size;
	if (attr_copy(o, r->attr, r->attr_len) < 0)
		goto fail;
	if (r->cas > s->cas)
		s->cas = r->cas;
	/* Older version out first: its extents may be reused below. */
	old = obj_lookup(s, r->key, r->klen);
	if (old)
		obj_unlink(s, old);
	if (r->exptime && r->exptime <= now)
		goto fail;
	if (r->type == J_PUT_SMALL) {
		if (XXH3_64bits(r->value, r->size) != r->xxh3) {
			stat_add(s, csum_failures, 1);
			goto fail;
		}
		o->small = 1;
		o->jpos = vpos;
		/* no room in the arena: it stays cold, in the journal */
		if (small_alloc(s, o, r->size) == 0)
			memcpy(o->item.ptr, r->value, r->size);
	} else {
		o->ext = malloc(r->next * sizeof(*o->ext));
		o->csum = malloc(r->ncsum * sizeof(uint32_t));
		if (!o->ext || !o->csum)
			goto fail;
		for (i = 0; i < r->next; i++) {
			struct extent *e = &o->ext[i];

			jrec_get_ext(r, i, e);
			/* no HDD tier (any more): -ERANGE */
			if (replay_claim(s, e, dirty) < 0)
				break;
			o->hdd |= e->tier == TIER_HDD;
		}
		o->next = i; /* obj_free releases what was claimed */
		if (i < r->next)
			goto fail;
		o->ssd_len = (uint64_t)obj_units(o, TIER_SSD) * GS_ALLOC_UNIT;
		if (!o->hdd || o->ssd_len > o->size)
			o->ssd_len = o->size;
		for (i = 0; i < r->ncsum; i++)
			o->csum[i] = jrec_get_csum(r, i);
	}
	obj_publish(s, o);
	return 0;
fail:
	obj_free(s, o);
	return -EINVAL;
}

static bool all_zero(const uint8_t *p, uint64_t n)
{
	return n == 0 || (p[0] == 0 && memcmp(p, p + 1, n - 1) == 0);
}

/*
 * Where the padding at @pos ends: the next 4 KiB boundary (or @size) if
 * everything up to it is zeros, else @pos (no padding).
 */
static uint64_t pad_end(const uint8_t *map, uint64_t size, uint64_t pos)
{
	uint64_t end = ALIGN4K(pos) < size ? ALIGN4K(pos) : size;

	if (pos % 4096 == 0)
		return pos; /* a whole zero block is a lost record */
	return all_zero(map + pos, end - pos) ? end : pos;
}

/*
 * Rebuild the index from the journal.  A record that does not verify is
 * skipped (the scan resynchronises on the next valid record); a torn tail
 * is cut off.  Anything dropped makes the journal be rewritten.
 */
int journal_replay(struct gs_store *s, bool *dirty)
{
	struct stat st;
	uint8_t *map;
	uint64_t pos = 0, good = 0, pad;
	int64_t now = time(NULL);

	if (F_CALL(s) < 0 || fstat(s->jfd, &st) < 0)
		return -errno;
	s->jbytes = s->jalloc = (uint64_t)st.st_size;
	if (st.st_size == 0)
		return 0;
	map = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, s->jfd, 0);
	if (map == MAP_FAILED)
		return -errno;
	madvise(map, st.st_size, MADV_SEQUENTIAL);
	while (pos < (uint64_t)st.st_size) {
		struct jrec r;
		long len = jrec_decode(map + pos, st.st_size - pos, &r);
		struct gs_obj *o;

		if (len <= 0 && all_zero(map + pos, st.st_size - pos)) {
			s->jbytes = pos; /* the allocated room after it */
			break;
		}
		if (len <= 0 && (pad = pad_end(map, st.st_size, pos)) > pos) {
			pos = good = pad;
			continue;
		}
		if (len <= 0) {
			/* skip to the next plausible record */
			const uint32_t magic = J_MAGIC;
			uint8_t *m = memmem(map + pos + 1, st.st_size - pos - 1,
					    &magic, 4);

			stat_add(s, recovery_dropped, 1);
			*dirty = true;
			if (!m)
				break;
			pos = (uint64_t)(m - map);
			continue;
		}
		if (r.seq > s->seq)
			s->seq = r.seq;
		switch (r.type) {
		case J_PUT_SMALL:
		case J_PUT_LARGE:
			if (replay_put(s, &r, len, now,
				       r.value ? (uint64_t)(r.value - map) : 0,
				       dirty) < 0) {
				stat_add(s, recovery_dropped, 1);
				*dirty = true;
			}
			break;
		case J_DEL:
			o = obj_lookup(s, r.key, r.klen);
			if (o)
				obj_unlink(s, o);
			break;
		case J_TOUCH:
			o = obj_lookup(s, r.key, r.klen);
			if (o)
				o->exptime = r.exptime;
			break;
		case J_ATTR:
			o = obj_lookup(s, r.key, r.klen);
			if (o && o->cas == r.cas &&
			    attr_replace(o, r.attr, r.attr_len) == 0)
				o->exptime = r.exptime;
			break;
		case J_RENAME:
			rename_apply(s, r.key, r.klen, r.key2, r.klen2,
				     (uint64_t)len);
			break;
		}
		pos += (uint64_t)len;
		good = pos;
	}
	munmap(map, st.st_size);
	if (good < s->jbytes)
		*dirty = true;
	return 0;
}

#define PRELOAD_DEPTH 32

struct preload {
	struct gs_io io;
	struct gs_obj *o;
	uint8_t *slot;
	uint64_t hlen;
};

/* A head read has completed: keep it if it verifies. */
static void preload_done(struct gs_store *s, struct preload *pl)
{
	struct gs_obj *o = pl->o;

	if (pl->io.res < (int)pl->hlen ||
	    !blocks_verify(o, pl->slot, 0, pl->hlen)) {
		slots_put(&s->slots, pl->slot);
		if (pl->io.res >= (int)pl->hlen)
			obj_drop_corrupt(s, o);
		return;
	}
	o->head = pl->slot;
	slru_insert(&s->lru_head, &o->hlru, 1);
}

/*
 * Read the heads of recovered objects back into RAM while slots are free,
 * most recently written first, PRELOAD_DEPTH reads in flight, straight into
 * their slots.  Runs at open, before any other thread sees the store.
 */
void preload_heads(struct gs_store *s)
{
	struct preload pl[PRELOAD_DEPTH] = { 0 };
	struct io_uring *ring = ring_get(s);
	struct list_head *p = s->lru_ssd.prob.next;
	unsigned head = 0, n = 0;

	if (!ring)
		return;
	while (n || (p != &s->lru_ssd.prob && s->slots.nfree)) {
		/* queue reads for the next candidates */
		while (n < PRELOAD_DEPTH && p != &s->lru_ssd.prob &&
		       s->slots.nfree) {
			struct gs_obj *o = list_entry(p, struct gs_obj, lru.l);
			struct preload *q = &pl[(head + n) % PRELOAD_DEPTH];
			int tier = obj_tier_of(o, 0);
			uint64_t run, dev = obj_dev_off(o, tier, 0, &run);
			struct io_uring_sqe *sqe;

			p = p->next;
			q->hlen = o->size < s->o.ram_head ? o->size :
							    s->o.ram_head;
			if (o->head || q->hlen == 0 || run < q->hlen)
				continue;
			q->o = o;
			q->slot = slots_get(&s->slots);
			sqe = io_get_sqe(ring);
			io_uring_prep_read(sqe, tier_fd(s, tier), q->slot,
					   ALIGN4K(q->hlen), dev);
			io_prep(sqe, &q->io);
			f_sqe(s, sqe, &q->io);
			n++;
		}
		if (!n)
			break;
		/* then finish the oldest */
		io_wait(ring, &pl[head].io);
		preload_done(s, &pl[head]);
		head = (head + 1) % PRELOAD_DEPTH;
		n--;
	}
	ring_put_locked(s, ring); /* single-threaded at open */
}
