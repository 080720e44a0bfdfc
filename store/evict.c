/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tier allocation and eviction: tier limits, extents on the SSD and HDD
 * tiers, RAM head slots, the small-object arena, and cold small objects
 * read back into it.  Called with s->lock held.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include "internal.h"

/*
 * Read a cold small object back, into the arena when it has room (it is
 * then warm again), else into a private copy in *@own that the caller
 * frees.  Its checksum is checked: a value that fails is a miss, dropped.
 * The read is a pread of the journal under the lock: at most a head's
 * worth of bytes, usually from the page cache.  0 or -errno.
 */
int obj_warm(struct gs_store *s, struct gs_obj *o, uint8_t **own)
{
	uint8_t *p;
	int ret;

	cold_del(s, o);
	if (small_alloc(s, o, o->size) == 0) {
		p = o->item.ptr;
	} else if (!(p = *own = malloc(o->size ? o->size : 1))) {
		cold_add(s, o);
		return -ENOMEM;
	}
	ret = pread_full(s, s->jfd, p, o->size, o->jpos);
	if (ret == 0 && XXH3_64bits(p, o->size) != o->xxh3)
		ret = -EBADMSG;
	if (ret < 0) {
		if (p == o->item.ptr)
			arena_free(&s->arena, &o->item);
		free(*own);
		*own = NULL;
		cold_add(s, o);
		if (ret == -EBADMSG)
			obj_drop_corrupt(s, o);
		return ret;
	}
	if (p == o->item.ptr)
		slru_insert(&s->lru_small, &o->lru, o->item.len);
	else
		cold_add(s, o);
	stat_add(s, small_warms, 1);
	return 0;
}

/*
 * Drop the SSD prefix of @o, which stays readable from its HDD copy: the
 * record without the SSD extents goes to the journal before they can be
 * reused.  Returns false (nothing changed) if it cannot be journalled.
 */
static bool drop_prefix(struct gs_store *s, struct gs_obj *o)
{
	struct extent *keep = malloc(o->next * sizeof(*keep));
	uint8_t *rec;
	struct jrec r;
	uint32_t n = 0;
	size_t len;

	if (!keep)
		return false;
	for (uint32_t i = 0; i < o->next; i++)
		if (o->ext[i].tier == TIER_HDD)
			keep[n++] = o->ext[i];
	obj_jrec(o, ++s->seq, &r);
	r.next = n;
	len = jrec_size(&r);
	rec = len ? malloc(len) : NULL;
	if (!rec) {
		free(keep);
		return false;
	}
	jrec_encode(&r, keep, o->csum, rec);
	if (journal_write(s, rec, len) < 0) {
		free(rec);
		free(keep);
		return false;
	}
	free(rec);
	s->jlive += len - o->jlen;
	o->jlen = len;
	for (uint32_t i = 0; i < o->next; i++)
		if (o->ext[i].tier == TIER_SSD)
			space_free(&s->space, &o->ext[i]);
	free(o->ext);
	o->ext = keep;
	o->next = n;
	o->ssd_len = 0;
	slru_remove(&s->lru_ssd, &o->lru);
	return true;
}

/*
 * Make room for @units on @tier, coldest first.  On the SSD an object with
 * an HDD copy loses only its SSD prefix; any other victim is evicted
 * whole.  Pinned objects stay.
 */
bool tier_evict(struct gs_store *s, int tier, uint64_t units)
{
	struct slru *q = tier == TIER_HDD ? &s->lru_hdd : &s->lru_ssd;
	struct space *sp = tier_space(s, tier);
	size_t off = tier == TIER_HDD ? offsetof(struct gs_obj, dlru) :
					offsetof(struct gs_obj, lru);
	struct slru_node *n = slru_next_victim(q, NULL);

	while ((space_free_units(sp) < units || sp->used > sp->limit) && n) {
		struct slru_node *next = slru_next_victim(q, n);
		struct gs_obj *o = (struct gs_obj *)((char *)n - off);

		if (o->refs == 1 && tier == TIER_SSD && o->hdd) {
			if (drop_prefix(s, o))
				stat_add(s, ssd_prefix_drops, 1);
		} else if (o->refs == 1) {
			if (!obj_evict(s, o))
				break;
			if (tier == TIER_HDD)
				stat_add(s, evictions_hdd, 1);
			else
				stat_add(s, evictions_ssd, 1);
		}
		n = next;
	}
	return space_free_units(sp) >= units;
}

/* A free head slot, taking one from the coldest unpinned head if need be. */
uint8_t *head_slot_get(struct gs_store *s, struct gs_obj *o)
{
	uint8_t *slot = slots_get(&s->slots);
	struct slru_node *n;

	if (slot)
		return slot;
	for (n = slru_next_victim(&s->lru_head, NULL); n;
	     n = slru_next_victim(&s->lru_head, n)) {
		struct gs_obj *v = list_entry(n, struct gs_obj, hlru);

		if (v == o || v->refs != 1)
			continue;
		slru_remove(&s->lru_head, &v->hlru);
		slot = v->head;
		v->head = NULL;
		stat_add(s, evictions_head, 1);
		return slot;
	}
	return NULL;
}

static bool item_movable(struct arena_item *it, void *arg)
{
	struct gs_obj *o = list_entry(it, struct gs_obj, item);

	(void)arg;
	return o->refs == 1 && o->state == OBJ_LIVE;
}

/* Arena space for small object @o: compact, then evict cold small ones. */
int small_alloc(struct gs_store *s, struct gs_obj *o, uint64_t len)
{
	for (;;) {
		int ret = arena_alloc(&s->arena, &o->item, len);
		struct slru_node *n;
		struct gs_obj *v = NULL;

		if (ret != -ENOSPC)
			return ret;
		if (arena_compact(&s->arena, item_movable, NULL)) {
			stat_add(s, compactions, 1);
			continue;
		}
		for (n = slru_next_victim(&s->lru_small, NULL); n;
		     n = slru_next_victim(&s->lru_small, n)) {
			v = list_entry(n, struct gs_obj, lru);
			if (v->refs == 1)
				break;
			v = NULL;
		}
		if (!v)
			return -ENOSPC;
		obj_chill(s, v); /* still readable, from the journal */
	}
}

/*
 * Set @tier's limit to the room it has now: its capacity less the
 * journal's records when the journal shares its file system, and never more
 * than that file system can still hold: the units the data file has
 * blocks for, plus the free space above the tier's floor.  Without this
 * the tier filled the file system before it reached its capacity: writes
 * failed with ENOSPC while nothing was evicted.  Units allocated but not
 * yet written are in use and not yet in the file's blocks: the free space
 * still holds them.  Lock held; two system calls, once per allocation.
 */
void tier_limit_refresh(struct gs_store *s, int tier)
{
	struct space *sp = tier_space(s, tier);
	uint64_t lim = s->cap[tier] / GS_ALLOC_UNIT;
	int fd = tier_fd(s, tier);
	struct statvfs vfs;
	struct stat st;

	if (fd < 0 || !lim)
		return;
	if (s->jshare[tier]) {
		/* its records; the room allocated after them is free space
		 * that the file system check below sees taken */
		uint64_t j = (s->jbytes + GS_ALLOC_UNIT - 1) / GS_ALLOC_UNIT;

		lim = lim > j ? lim - j : 0;
	}
	if (fstatvfs(fd, &vfs) == 0 && fstat(fd, &st) == 0) {
		uint64_t avail = (uint64_t)vfs.f_bavail * vfs.f_frsize;
		uint64_t room = (uint64_t)st.st_blocks * 512 / GS_ALLOC_UNIT;

		if (avail > s->floor[tier])
			room += (avail - s->floor[tier]) / GS_ALLOC_UNIT;
		if (room < lim)
			lim = room;
	}
	sp->limit = lim;
}

/*
 * Make @o's extents on @tier cover at least @size bytes, appending to what
 * it has (a put of unknown size grows as it is written).  Evicts cold
 * objects for room.  0, -EFBIG (more than the tier) or -ENOSPC.
 */
int tier_alloc(struct gs_store *s, struct gs_obj *o, int tier, uint64_t size)
{
	struct space *sp = tier_space(s, tier);
	uint64_t have = (uint64_t)obj_units(o, tier) * GS_ALLOC_UNIT, units;
	struct extent *ext, *all;
	int n;

	/* checked first: the rounding below can wrap */
	if (size > s->cap[tier] / GS_ALLOC_UNIT * GS_ALLOC_UNIT)
		return -EFBIG;
	if (size == 0)
		size = 1; /* every large object has an extent */
	if (have >= size)
		return 0;
	units = (size - have + GS_ALLOC_UNIT - 1) / GS_ALLOC_UNIT;
	tier_limit_refresh(s, tier);
	if (units > sp->limit)
		return -ENOSPC; /* more than the room: evict nothing for it */
	if (space_free_units(sp) < units && !tier_evict(s, tier, units))
		return -ENOSPC;
	ext = malloc(units * sizeof(*ext));
	if (!ext)
		return -ENOMEM;
	n = space_alloc(sp, units * GS_ALLOC_UNIT, ext, (int)units);
	if (n < 0) {
		free(ext);
		return n;
	}
	all = realloc(o->ext, (o->next + n) * sizeof(*all));
	if (!all) {
		for (int i = 0; i < n; i++)
			space_free(sp, &ext[i]);
		free(ext);
		return -ENOMEM;
	}
	for (int i = 0; i < n; i++) {
		ext[i].tier = (uint8_t)tier;
		ext[i].shared = 0;
	}
	memcpy(all + o->next, ext, n * sizeof(*ext));
	free(ext);
	o->ext = all;
	o->next += (uint32_t)n;
	return 0;
}

void tier_trim(struct gs_store *s, struct gs_obj *o, int tier, uint64_t size)
{
	struct space *sp = tier_space(s, tier);
	uint64_t keep =
		(size + GS_ALLOC_UNIT - 1) / GS_ALLOC_UNIT * GS_ALLOC_UNIT;
	uint64_t off = 0;
	uint32_t n = 0;

	for (uint32_t i = 0; i < o->next; i++) {
		struct extent *e = &o->ext[i];

		if (e->tier != tier) {
			o->ext[n++] = *e;
			continue;
		}
		if (off >= keep) {
			space_free(sp, e);
			continue;
		}
		if (off + e->len > keep) {
			struct extent tail = { e->off + (keep - off),
					       off + e->len - keep, e->tier,
					       e->shared };

			space_free(sp, &tail);
			e->len = keep - off;
		}
		off += e->len;
		o->ext[n++] = *e;
	}
	o->next = n;
}
