/* SPDX-License-Identifier: BSD-3-Clause */
/* RAM regions, head slots and the small-object arena (see ram.h). */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "ram.h"

#define HUGE_2M (2ull << 20)

int ram_region_map(struct ram_region *r, uint64_t size, uint64_t block,
		   bool try_huge, bool lock)
{
	void *p = MAP_FAILED;

	memset(r, 0, sizeof(*r));
	if (size == 0)
		return 0;
	if (block == 0)
		block = 4096;
	size = (size + block - 1) / block * block;
	/*
	 * Everything is populated now: the hot path must never take a page
	 * fault (fresh anonymous pages fault in at a few hundred MB/s).
	 */
	if (try_huge && size % HUGE_2M == 0)
		p = mmap(NULL, size, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB |
				 MAP_POPULATE,
			 -1, 0);
	if (p != MAP_FAILED) {
		r->hugetlb = true;
		r->page = HUGE_2M;
	} else {
		p = mmap(NULL, size, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
		if (p == MAP_FAILED)
			return -errno;
		r->page = 4096;
	}
	r->base = p;
	r->size = size;
	if (lock && mlock(p, size) == 0)
		r->mlocked = true;
	return 0;
}

void ram_region_unmap(struct ram_region *r)
{
	if (r->base)
		munmap(r->base, r->size);
	memset(r, 0, sizeof(*r));
}

int slots_init(struct slots *sl, uint8_t *base, uint64_t size,
	       uint64_t slot_size)
{
	memset(sl, 0, sizeof(*sl));
	sl->base = base;
	sl->slot_size = slot_size;
	sl->nslots = slot_size ? size / slot_size : 0;
	sl->free = malloc((sl->nslots + 1) * sizeof(uint32_t));
	if (!sl->free)
		return -ENOMEM;
	/* Hand out low slots first: keeps the used part of the pool dense. */
	for (uint32_t i = 0; i < sl->nslots; i++)
		sl->free[i] = sl->nslots - 1 - i;
	sl->nfree = sl->nslots;
	return 0;
}

void slots_release(struct slots *sl)
{
	free(sl->free);
	sl->free = NULL;
}

uint8_t *slots_get(struct slots *sl)
{
	if (sl->nfree == 0)
		return NULL;
	return sl->base + (uint64_t)sl->free[--sl->nfree] * sl->slot_size;
}

void slots_put(struct slots *sl, uint8_t *slot)
{
	uint64_t i = (uint64_t)(slot - sl->base) / sl->slot_size;

	assert(slot >= sl->base && i < sl->nslots);
	assert(sl->nfree < sl->nslots);
	sl->free[sl->nfree++] = (uint32_t)i;
}

int arena_init(struct arena *a, uint8_t *mem, uint64_t size, uint64_t blk)
{
	memset(a, 0, sizeof(*a));
	a->mem = mem;
	a->blk_size = blk;
	a->nblk = blk ? size / blk : 0;
	a->cur = UINT32_MAX;
	a->blks = calloc(a->nblk + 1, sizeof(*a->blks));
	a->free = malloc((a->nblk + 1) * sizeof(uint32_t));
	if (!a->blks || !a->free) {
		arena_release(a);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < a->nblk; i++) {
		list_init(&a->blks[i].items);
		a->free[i] = a->nblk - 1 - i;
	}
	a->nfree = a->nblk;
	return 0;
}

void arena_release(struct arena *a)
{
	free(a->blks);
	free(a->free);
	a->blks = NULL;
	a->free = NULL;
}

static uint64_t round_len(uint64_t len)
{
	return (len + ARENA_ALIGN - 1) & ~(uint64_t)(ARENA_ALIGN - 1);
}

static void place(struct arena *a, struct arena_item *it, uint32_t b,
		  uint64_t len)
{
	struct arena_blk *k = &a->blks[b];

	it->ptr = a->mem + (uint64_t)b * a->blk_size + k->used;
	it->len = (uint32_t)len;
	it->blk = b;
	k->used += len;
	k->live += len;
	a->live += len;
	list_push(&k->items, &it->l);
}

int arena_alloc(struct arena *a, struct arena_item *it, uint64_t len)
{
	/* an empty value still takes a little room: live 0 means "empty" */
	if (len > a->blk_size || len > UINT32_MAX)
		return -E2BIG; /* checked first: the rounding below can wrap */
	len = round_len(len ? len : 1);
	if (len > a->blk_size)
		return -E2BIG;
	if (a->cur != UINT32_MAX && a->blks[a->cur].used + len <= a->blk_size) {
		place(a, it, a->cur, len);
		return 0;
	}
	if (a->nfree == 0)
		return -ENOSPC;
	/* The old open block, if empty, was recycled by arena_free. */
	a->cur = a->free[--a->nfree];
	a->blks[a->cur].used = 0;
	place(a, it, a->cur, len);
	return 0;
}

void arena_free(struct arena *a, struct arena_item *it)
{
	struct arena_blk *k = &a->blks[it->blk];

	assert(k->live >= it->len && a->live >= it->len);
	k->live -= it->len;
	a->live -= it->len;
	list_del(&it->l);
	it->ptr = NULL;
	if (k->live == 0) {
		/* An empty block is recycled, the open one included. */
		if (it->blk == a->cur)
			a->cur = UINT32_MAX;
		k->used = 0;
		a->free[a->nfree++] = it->blk;
	}
}

int arena_compact(struct arena *a,
		  bool (*movable)(struct arena_item *it, void *arg), void *arg)
{
	uint32_t best = UINT32_MAX;
	struct arena_blk *k;
	struct list_head *p;
	uint64_t used = 0;

	/* the block with the most garbage, at least half of what it used */
	for (uint32_t b = 0; b < a->nblk; b++) {
		bool ok = true;

		k = &a->blks[b];
		if (k->live == 0 || k->live * 2 > k->used)
			continue;
		if (best != UINT32_MAX &&
		    a->blks[best].used - a->blks[best].live >=
			    k->used - k->live)
			continue;
		for (p = k->items.next; p != &k->items; p = p->next)
			if (!movable(list_entry(p, struct arena_item, l),
				     arg)) {
				ok = false;
				break;
			}
		if (ok)
			best = b;
	}
	if (best == UINT32_MAX)
		return 0;
	/*
	 * Slide the survivors down in place, lowest address first: items are
	 * pushed at the list's front as they are placed, so the list read
	 * from its back is in address order, and sliding keeps it so.
	 */
	k = &a->blks[best];
	for (p = k->items.prev; p != &k->items; p = p->prev) {
		struct arena_item *it = list_entry(p, struct arena_item, l);
		uint8_t *to = a->mem + (uint64_t)best * a->blk_size + used;

		assert(to <= it->ptr);
		if (to != it->ptr)
			memmove(to, it->ptr, it->len);
		it->ptr = to;
		used += it->len;
	}
	assert(used == k->live);
	k->used = used;
	/* it is the open block now: its free tail is contiguous */
	a->cur = best;
	return 1;
}

uint64_t arena_used(const struct arena *a)
{
	return (uint64_t)(a->nblk - a->nfree) * a->blk_size;
}
