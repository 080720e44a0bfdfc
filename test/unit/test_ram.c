/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RAM: mapped regions, head slots, and the packed small-object arena with
 * its block recycling and in-place compaction.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "ram.h"

/* ---- regions ---- */

static void test_region_small(void **state)
{
	struct ram_region r;

	(void)state;
	assert_int_equal(ram_region_map(&r, 10000, 4096, false, false), 0);
	assert_non_null(r.base);
	assert_int_equal(r.size, 12288); /* rounded up to the block */
	assert_int_equal(r.page, 4096);
	assert_false(r.hugetlb);
	assert_false(r.mlocked);
	/* zero filled and writable end to end */
	for (uint64_t i = 0; i < r.size; i++)
		assert_int_equal(r.base[i], 0);
	for (uint64_t i = 0; i < r.size; i++)
		r.base[i] = (uint8_t)(i * 7 + 1);
	for (uint64_t i = 0; i < r.size; i++)
		assert_int_equal(r.base[i], (uint8_t)(i * 7 + 1));
	ram_region_unmap(&r);
	assert_null(r.base);
	assert_int_equal(r.size, 0);
	ram_region_unmap(&r); /* twice is harmless */
}

static void test_region_edge_sizes(void **state)
{
	struct ram_region r;

	(void)state;
	assert_int_equal(ram_region_map(&r, 0, 4096, false, false), 0);
	assert_null(r.base);
	assert_int_equal(r.size, 0);
	ram_region_unmap(&r);

	/* block 0 means pages */
	assert_int_equal(ram_region_map(&r, 1, 0, false, false), 0);
	assert_non_null(r.base);
	assert_int_equal(r.size, 4096);
	r.base[4095] = 0xaa;
	ram_region_unmap(&r);

	/* HugeTLB is only tried for 2 MiB multiples */
	assert_int_equal(ram_region_map(&r, 8192, 8192, true, false), 0);
	assert_non_null(r.base);
	assert_int_equal(r.size, 8192);
	assert_false(r.hugetlb);
	memset(r.base, 0x5a, r.size);
	ram_region_unmap(&r);
}

/* ---- head slots ---- */

static void test_slots_exhaustion_and_reuse(void **state)
{
	enum { N = 10, SZ = 64 };
	uint8_t *mem = malloc(N * SZ + 5), *got[N + 1];
	struct slots sl;

	(void)state;
	assert_non_null(mem);
	assert_int_equal(slots_init(&sl, mem, N * SZ + 5, SZ), 0);
	assert_int_equal(sl.nslots, N);
	assert_int_equal(sl.nfree, N);
	for (int i = 0; i < N; i++) {
		got[i] = slots_get(&sl);
		/* low slots first, in order */
		assert_ptr_equal(got[i], mem + (size_t)i * SZ);
		memset(got[i], i, SZ);
		assert_int_equal(sl.nfree, N - 1 - i);
	}
	assert_null(slots_get(&sl));
	assert_null(slots_get(&sl));
	assert_int_equal(sl.nfree, 0);
	/* slots do not overlap: each still holds its own fill */
	for (int i = 0; i < N; i++)
		for (int k = 0; k < SZ; k++)
			assert_int_equal(got[i][k], i);

	slots_put(&sl, got[3]);
	slots_put(&sl, got[7]);
	assert_int_equal(sl.nfree, 2);
	assert_ptr_equal(slots_get(&sl), got[7]); /* last in, first out */
	assert_ptr_equal(slots_get(&sl), got[3]);
	assert_null(slots_get(&sl));

	for (int i = 0; i < N; i++)
		slots_put(&sl, got[i]);
	assert_int_equal(sl.nfree, N);
	for (int i = 0; i < N; i++)
		got[i] = slots_get(&sl);
	for (int i = 0; i < N; i++)
		for (int j = 0; j < i; j++)
			assert_ptr_not_equal(got[i], got[j]);
	assert_null(slots_get(&sl));
	slots_release(&sl);
	assert_null(sl.free);
	free(mem);
}

static void test_slots_degenerate(void **state)
{
	uint8_t mem[64];
	struct slots sl;

	(void)state;
	assert_int_equal(slots_init(&sl, mem, sizeof(mem), 0), 0);
	assert_int_equal(sl.nslots, 0);
	assert_null(slots_get(&sl));
	slots_release(&sl);
	assert_int_equal(slots_init(&sl, mem, 63, 64), 0);
	assert_int_equal(sl.nslots, 0);
	assert_null(slots_get(&sl));
	slots_release(&sl);
}

/* ---- arena ---- */

#define BLK  256u
#define NBLK 4u

struct fixture {
	uint8_t *mem;
	struct arena a;
};

static int arena_setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	f->mem = malloc(BLK * NBLK);
	if (!f->mem || arena_init(&f->a, f->mem, BLK * NBLK, BLK) < 0) {
		free(f->mem);
		free(f);
		return -1;
	}
	*state = f;
	return 0;
}

static int arena_teardown(void **state)
{
	struct fixture *f = *state;

	arena_release(&f->a);
	free(f->mem);
	free(f);
	return 0;
}

/* Sum of the blocks' live bytes equals a->live; used never below live. */
static void check_accounting(const struct arena *a)
{
	uint64_t live = 0;

	for (uint32_t b = 0; b < a->nblk; b++) {
		const struct arena_blk *k = &a->blks[b];
		const uint8_t *start = a->mem + (uint64_t)b * a->blk_size;
		uint64_t items = 0;

		for (struct list_head *p = k->items.next; p != &k->items;
		     p = p->next) {
			struct arena_item *it =
				list_entry(p, struct arena_item, l);

			assert_int_equal(it->blk, b);
			assert_true(it->ptr >= start);
			assert_true(it->ptr + it->len <= start + k->used);
			items += it->len;
		}
		assert_int_equal(items, k->live);
		/* read from its back, the list is in address order */
		const uint8_t *end = start;

		for (struct list_head *p = k->items.prev; p != &k->items;
		     p = p->prev) {
			struct arena_item *it =
				list_entry(p, struct arena_item, l);

			assert_true(it->ptr >= end);
			end = it->ptr + it->len;
		}
		assert_true(k->live <= k->used);
		assert_true(k->used <= a->blk_size);
		live += k->live;
	}
	assert_int_equal(live, a->live);
	assert_true(a->live <= arena_used(a));
}

static void fill(struct arena_item *it, uint8_t seed)
{
	for (uint32_t i = 0; i < it->len; i++)
		it->ptr[i] = (uint8_t)(seed * 31 + i);
}

static void check_fill(const struct arena_item *it, uint8_t seed)
{
	for (uint32_t i = 0; i < it->len; i++)
		assert_int_equal(it->ptr[i], (uint8_t)(seed * 31 + i));
}

static void test_arena_init(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(f->a.nblk, NBLK);
	assert_int_equal(f->a.nfree, NBLK);
	assert_int_equal(f->a.cur, UINT32_MAX);
	assert_int_equal(f->a.live, 0);
	assert_int_equal(arena_used(&f->a), 0);
}

static void test_arena_packing(void **state)
{
	struct fixture *f = *state;
	struct arena *a = &f->a;
	static const uint64_t req[] = { 1, 7, 9, 100, 0, 8 };
	static const uint32_t want[] = { 8, 8, 16, 104, 8, 8 };
	struct arena_item it[6];
	uint64_t off = 0;

	for (int i = 0; i < 6; i++) {
		assert_int_equal(arena_alloc(a, &it[i], req[i]), 0);
		assert_int_equal(it[i].len, want[i]);
		assert_int_equal(it[i].blk, 0);
		assert_ptr_equal(it[i].ptr, f->mem + off); /* consecutive */
		assert_int_equal((uintptr_t)it[i].ptr % ARENA_ALIGN, 0);
		off += want[i];
	}
	assert_int_equal(a->cur, 0);
	assert_int_equal(a->blks[0].used, off);
	assert_int_equal(a->blks[0].live, off);
	assert_int_equal(a->live, off);
	assert_int_equal(arena_used(a), BLK);
	assert_int_equal(a->nfree, NBLK - 1);
	for (int i = 0; i < 6; i++)
		fill(&it[i], (uint8_t)i);
	for (int i = 0; i < 6; i++)
		check_fill(&it[i], (uint8_t)i); /* no overlap */
	check_accounting(a);

	/* freeing the middle only counts: nothing moves, bump goes on */
	arena_free(a, &it[2]);
	assert_null(it[2].ptr);
	assert_int_equal(a->live, off - 16);
	assert_int_equal(a->blks[0].used, off);
	assert_int_equal(arena_alloc(a, &it[2], 16), 0);
	assert_ptr_equal(it[2].ptr, f->mem + off);
	check_accounting(a);
}

static void test_arena_new_block_when_full(void **state)
{
	struct fixture *f = *state;
	struct arena *a = &f->a;
	struct arena_item x, y, z;

	assert_int_equal(arena_alloc(a, &x, 200), 0);
	assert_int_equal(arena_alloc(a, &y, 56), 0); /* exactly fills */
	assert_int_equal(y.blk, 0);
	assert_int_equal(a->blks[0].used, BLK);
	assert_int_equal(arena_alloc(a, &z, 1), 0); /* opens block 1 */
	assert_int_equal(z.blk, 1);
	assert_ptr_equal(z.ptr, f->mem + BLK);
	assert_int_equal(a->cur, 1);
	assert_int_equal(arena_used(a), 2 * BLK);
	check_accounting(a);
}

static void test_arena_e2big(void **state)
{
	struct fixture *f = *state;
	struct arena *a = &f->a;
	struct arena_item it;

	assert_int_equal(arena_alloc(a, &it, BLK + 1), -E2BIG);
	assert_int_equal(arena_alloc(a, &it, (uint64_t)BLK * 100), -E2BIG);
	assert_int_equal(arena_alloc(a, &it, (uint64_t)UINT32_MAX + 1), -E2BIG);
	assert_int_equal(a->live, 0);
	assert_int_equal(arena_used(a), 0);
	assert_int_equal(a->cur, UINT32_MAX);
	/* a whole block is the largest item */
	assert_int_equal(arena_alloc(a, &it, BLK), 0);
	assert_int_equal(it.len, BLK);
	assert_int_equal(a->live, BLK);
	check_accounting(a);
}

/* Lengths whose 8-byte rounding overflows must not become tiny items. */
static void test_arena_e2big_overflow(void **state)
{
	struct fixture *f = *state;
	struct arena *a = &f->a;
	struct arena_item it;

	assert_int_equal(arena_alloc(a, &it, UINT64_MAX), -E2BIG);
	assert_int_equal(arena_alloc(a, &it, UINT64_MAX - 6), -E2BIG);
	assert_int_equal(a->live, 0);
	assert_int_equal(arena_used(a), 0);
}

static void test_arena_enospc(void **state)
{
	struct fixture *f = *state;
	struct arena *a = &f->a;
	struct arena_item it[NBLK * 2], extra;
	uint64_t live;
	uint32_t cur;

	for (unsigned i = 0; i < NBLK * 2; i++) {
		assert_int_equal(arena_alloc(a, &it[i], BLK / 2), 0);
		assert_int_equal(it[i].blk, i / 2);
	}
	assert_int_equal(a->nfree, 0);
	assert_int_equal(arena_used(a), BLK * NBLK);
	live = a->live;
	cur = a->cur;
	assert_int_equal(arena_alloc(a, &extra, 1), -ENOSPC);
	assert_int_equal(a->live, live);
	assert_int_equal(a->cur, cur);
	assert_int_equal(a->nfree, 0);
	check_accounting(a);

	/* freed bytes in a non-empty block are not reusable ... */
	arena_free(a, &it[0]);
	assert_int_equal(arena_alloc(a, &extra, 8), -ENOSPC);
	/* ... an emptied block is */
	arena_free(a, &it[1]);
	assert_int_equal(a->nfree, 1);
	assert_int_equal(arena_alloc(a, &extra, BLK), 0);
	assert_int_equal(extra.blk, 0);
	assert_ptr_equal(extra.ptr, f->mem);
	check_accounting(a);
}

static void test_arena_recycle(void **state)
{
	struct fixture *f = *state;
	struct arena *a = &f->a;
	struct arena_item x[3], y;

	assert_int_equal(arena_alloc(a, &x[0], 100), 0);
	assert_int_equal(arena_alloc(a, &x[1], 100), 0);
	assert_int_equal(arena_alloc(a, &x[2], 100), 0); /* block 1 */
	assert_int_equal(x[2].blk, 1);
	assert_int_equal(arena_used(a), 2 * BLK);

	/* a closed block is recycled when its last item goes */
	arena_free(a, &x[0]);
	assert_int_equal(arena_used(a), 2 * BLK);
	arena_free(a, &x[1]);
	assert_int_equal(arena_used(a), BLK);
	assert_int_equal(a->blks[0].used, 0);
	assert_int_equal(a->nfree, NBLK - 1);
	assert_int_equal(a->cur, 1);

	/* so is the open one; the next item starts a block from 0 */
	arena_free(a, &x[2]);
	assert_int_equal(a->cur, UINT32_MAX);
	assert_int_equal(arena_used(a), 0);
	assert_int_equal(a->live, 0);
	assert_int_equal(a->nfree, NBLK);
	assert_int_equal(arena_alloc(a, &y, 8), 0);
	assert_int_equal(a->blks[y.blk].used, 8);
	assert_ptr_equal(y.ptr, f->mem + (uint64_t)y.blk * BLK);
	check_accounting(a);
}

/* ---- compaction ---- */

struct pin {
	const struct arena_item *pinned; /* refuses to move */
	int calls;
};

static bool movable(struct arena_item *it, void *arg)
{
	struct pin *p = arg;

	p->calls++;
	return it != p->pinned;
}

static uint8_t *blk_base(const struct arena *a, uint32_t b)
{
	return a->mem + (uint64_t)b * a->blk_size;
}

/* All four blocks full of 8 items of 32 bytes each; block 3 is open. */
#define NALL (NBLK * 8)
static void fill_all(struct fixture *f, struct arena_item it[NALL])
{
	for (unsigned i = 0; i < NALL; i++) {
		assert_int_equal(arena_alloc(&f->a, &it[i], 32), 0);
		assert_int_equal(it[i].blk, i / 8);
		assert_ptr_equal(it[i].ptr, f->mem + (uint64_t)i * 32);
		fill(&it[i], (uint8_t)i);
	}
	assert_int_equal(f->a.cur, NBLK - 1);
	assert_int_equal(f->a.nfree, 0);
	assert_int_equal(arena_used(&f->a), NBLK * BLK);
}

/*
 * Block @b after a compaction: its items, read from the list's back, lie
 * end to end from the block's start, and used == live.
 */
static void check_packed(const struct arena *a, uint32_t b)
{
	const struct arena_blk *k = &a->blks[b];
	uint64_t off = 0;

	for (struct list_head *p = k->items.prev; p != &k->items; p = p->prev) {
		struct arena_item *it = list_entry(p, struct arena_item, l);

		assert_int_equal(it->blk, b);
		assert_ptr_equal(it->ptr, blk_base(a, b) + off);
		off += it->len;
	}
	assert_int_equal(off, k->live);
	assert_int_equal(k->used, k->live);
}

/* The surviving items of @it (ptr != NULL) hold their patterns. */
static void check_all(struct arena_item *it, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (it[i].ptr)
			check_fill(&it[i], (uint8_t)i);
}

/*
 * The sparsest block's survivors slide to its start, in address order;
 * the block becomes the open one and takes what did not fit before.  No
 * room in the open block is needed and no block is freed.
 */
static void test_compact_in_place(void **state)
{
	struct fixture *f = *state;
	struct arena *a = &f->a;
	struct arena_item it[NALL], big;
	struct pin pin = { NULL, 0 };
	uint8_t *old[NALL];
	uint64_t live;

	fill_all(f, it);
	for (int i = 0; i < 3; i++)
		arena_free(a, &it[i]); /* block 0: 160 of 256 live: dense */
	for (int i = 8; i < 16; i++)   /* block 1: 9, 12, 14 stay: 96 live */
		if (i != 9 && i != 12 && i != 14)
			arena_free(a, &it[i]);
	arena_free(a, &it[16]); /* block 2: 224 live */
	check_accounting(a);
	live = a->live;
	assert_int_equal(live, 160 + 96 + 224 + 256);

	/* no block has 160 contiguous bytes free */
	assert_int_equal(arena_alloc(a, &big, 160), -ENOSPC);
	assert_int_equal(a->cur, 3);
	assert_int_equal(a->live, live);
	for (unsigned i = 0; i < NALL; i++)
		old[i] = it[i].ptr;

	assert_int_equal(arena_compact(a, movable, &pin), 1);
	assert_int_equal(pin.calls, 3); /* every item of the chosen block */
	assert_ptr_equal(it[9].ptr, blk_base(a, 1));
	assert_ptr_equal(it[12].ptr, blk_base(a, 1) + 32);
	assert_ptr_equal(it[14].ptr, blk_base(a, 1) + 64);
	assert_int_equal(it[9].blk, 1);
	assert_int_equal(it[12].blk, 1);
	assert_int_equal(it[14].blk, 1);
	assert_int_equal(a->blks[1].used, 96);
	assert_int_equal(a->blks[1].live, 96);
	assert_int_equal(a->cur, 1); /* now the open block */
	check_packed(a, 1);
	/* in place: nothing freed, nothing taken, nothing lost */
	assert_int_equal(a->nfree, 0);
	assert_int_equal(arena_used(a), NBLK * BLK);
	assert_int_equal(a->live, live);
	/* the other blocks are untouched */
	for (unsigned i = 0; i < NALL; i++)
		if (i / 8 != 1)
			assert_ptr_equal(it[i].ptr, old[i]);
	assert_int_equal(a->blks[0].used, BLK);
	assert_int_equal(a->blks[2].used, BLK);
	assert_int_equal(a->blks[3].used, BLK);
	check_all(it, NALL);
	check_accounting(a);

	/* what did not fit now goes to the compacted block's free tail */
	assert_int_equal(arena_alloc(a, &big, 160), 0);
	assert_int_equal(big.blk, 1);
	assert_ptr_equal(big.ptr, blk_base(a, 1) + 96);
	assert_int_equal(a->blks[1].used, BLK);
	memset(big.ptr, 0xee, big.len);
	check_all(it, NALL);
	check_accounting(a);

	/* nothing sparse left */
	pin.calls = 0;
	assert_int_equal(arena_compact(a, movable, &pin), 0);
	assert_int_equal(pin.calls, 0);
	assert_int_equal(a->cur, 1);
	for (uint32_t i = 0; i < big.len; i++)
		assert_int_equal(big.ptr[i], 0xee);
}

/* Items that slide by less than their length (overlapping moves). */
static void test_compact_overlapping_slide(void **state)
{
	struct fixture *f = *state;
	struct arena *a = &f->a;
	static const uint64_t len[] = { 8, 40, 40, 40, 128 };
	struct arena_item it[5];
	struct pin pin = { NULL, 0 };

	for (int i = 0; i < 5; i++) {
		assert_int_equal(arena_alloc(a, &it[i], len[i]), 0);
		assert_int_equal(it[i].blk, 0);
		fill(&it[i], (uint8_t)i);
	}
	assert_int_equal(a->blks[0].used, BLK);
	arena_free(a, &it[0]);
	arena_free(a, &it[4]); /* 120 live of 256 */
	assert_int_equal(arena_compact(a, movable, &pin), 1);
	assert_int_equal(a->cur, 0);
	for (int i = 1; i < 4; i++) {
		assert_ptr_equal(it[i].ptr, f->mem + (uint64_t)(i - 1) * 40);
		check_fill(&it[i], (uint8_t)i);
	}
	check_packed(a, 0);
	assert_int_equal(a->blks[0].used, 120);
	check_accounting(a);
}

/*
 * A non-movable item anywhere in the only sparse block prevents its
 * compaction: 0, nothing moved.  Another sparse block is taken instead.
 */
static void test_compact_pinned(void **state)
{
	struct fixture *f = *state;
	struct arena *a = &f->a;
	struct arena_item it[NALL];
	struct pin pin = { NULL, 0 };
	uint8_t *old[NALL];

	fill_all(f, it);
	for (int i = 8; i < 16; i++) /* block 1: 9, 11, 13 stay */
		if (i != 9 && i != 11 && i != 13)
			arena_free(a, &it[i]);
	for (unsigned i = 0; i < NALL; i++)
		old[i] = it[i].ptr;

	/* the lowest item, the last on its block's list */
	pin.pinned = &it[9];
	assert_int_equal(arena_compact(a, movable, &pin), 0);
	assert_int_equal(pin.calls, 3);
	for (unsigned i = 0; i < NALL; i++)
		assert_ptr_equal(it[i].ptr, old[i]);
	assert_int_equal(a->blks[1].used, BLK);
	assert_int_equal(a->blks[1].live, 96);
	assert_int_equal(a->cur, 3);
	check_all(it, NALL);
	check_accounting(a);

	/* pinned in the middle: the same */
	pin.pinned = &it[11];
	assert_int_equal(arena_compact(a, movable, &pin), 0);
	for (unsigned i = 0; i < NALL; i++)
		assert_ptr_equal(it[i].ptr, old[i]);
	assert_int_equal(a->cur, 3);

	/* a second sparse block, with less garbage, is taken instead */
	for (int i = 20; i < 24; i++)
		arena_free(a, &it[i]); /* block 2: 128 live, 128 garbage */
	assert_int_equal(arena_compact(a, movable, &pin), 1);
	assert_int_equal(a->cur, 2);
	check_packed(a, 2);
	for (unsigned i = 0; i < NALL; i++)
		if (i / 8 != 2)
			assert_ptr_equal(it[i].ptr, old[i]);
	/* block 2 was already packed at its start: nothing had to move */
	for (int i = 16; i < 20; i++)
		assert_ptr_equal(it[i].ptr, old[i]);
	assert_int_equal(a->blks[2].used, 128);
	check_all(it, NALL);

	/* unpinned, block 1 goes */
	pin.pinned = NULL;
	assert_int_equal(arena_compact(a, movable, &pin), 1);
	assert_int_equal(a->cur, 1);
	assert_ptr_equal(it[9].ptr, blk_base(a, 1));
	assert_ptr_equal(it[11].ptr, blk_base(a, 1) + 32);
	assert_ptr_equal(it[13].ptr, blk_base(a, 1) + 64);
	check_packed(a, 1);
	check_all(it, NALL);
	check_accounting(a);
}

/*
 * A block with less than half garbage is not chosen, however much garbage
 * it has; exactly half is enough.
 */
static void test_compact_dense_not_chosen(void **state)
{
	struct fixture *f = *state;
	struct arena *a = &f->a;
	struct arena_item it[8], x, y;
	struct pin pin = { NULL, 0 };
	uint8_t *old[8];

	for (int i = 0; i < 8; i++) {
		assert_int_equal(arena_alloc(a, &it[i], 32), 0);
		fill(&it[i], (uint8_t)i);
	}
	for (int i = 0; i < 3; i++)
		arena_free(a, &it[i]); /* 160 live, 96 garbage */
	assert_int_equal(arena_compact(a, movable, &pin), 0);
	assert_int_equal(pin.calls, 0);
	assert_int_equal(a->blks[0].used, BLK);
	assert_ptr_equal(it[3].ptr, f->mem + 3 * 32);

	/* open block 1: y (56) then x (8); y goes: 8 live, 56 garbage */
	assert_int_equal(arena_alloc(a, &y, 56), 0);
	assert_int_equal(arena_alloc(a, &x, 8), 0);
	assert_int_equal(x.blk, 1);
	assert_int_equal(a->cur, 1);
	memset(x.ptr, 0x77, 8);
	arena_free(a, &y);
	for (int i = 0; i < 8; i++)
		old[i] = it[i].ptr;

	/* block 1 has less garbage than block 0, but only it is sparse */
	assert_int_equal(arena_compact(a, movable, &pin), 1);
	assert_int_equal(pin.calls, 1);
	assert_ptr_equal(x.ptr, blk_base(a, 1));
	for (int i = 0; i < 8; i++)
		assert_int_equal(x.ptr[i], 0x77);
	assert_int_equal(a->blks[1].used, 8);
	assert_int_equal(a->cur, 1);
	for (int i = 3; i < 8; i++) {
		assert_ptr_equal(it[i].ptr, old[i]);
		check_fill(&it[i], (uint8_t)i);
	}
	assert_int_equal(a->blks[0].used, BLK);
	assert_int_equal(arena_compact(a, movable, &pin), 0);
	assert_int_equal(pin.calls, 1);

	/* block 0 at exactly half live qualifies */
	arena_free(a, &it[3]); /* 128 live of 256 */
	assert_int_equal(arena_compact(a, movable, &pin), 1);
	assert_int_equal(a->cur, 0);
	for (int i = 4; i < 8; i++) {
		assert_ptr_equal(it[i].ptr, f->mem + (uint64_t)(i - 4) * 32);
		check_fill(&it[i], (uint8_t)i);
	}
	check_packed(a, 0);
	assert_ptr_equal(x.ptr, blk_base(a, 1));
	check_accounting(a);
}

/* With several sparse blocks, the one with the most garbage goes first. */
static void test_compact_most_garbage(void **state)
{
	struct fixture *f = *state;
	struct arena *a = &f->a;
	struct arena_item it[NALL];
	struct pin pin = { NULL, 0 };

	fill_all(f, it);
	/* the survivors at the top of each block, so they have to move */
	for (int i = 0; i < 8; i++) {
		if (i < 5)
			arena_free(a, &it[i]); /* block 0: 160 garbage */
		if (i < 7)
			arena_free(a, &it[8 + i]); /* block 1: 224 */
		if (i < 4)
			arena_free(a, &it[16 + i]); /* block 2: 128 */
	}
	arena_free(a, &it[24]); /* block 3: 32, dense */
	assert_int_equal(arena_compact(a, movable, &pin), 1);
	assert_int_equal(a->cur, 1);
	check_packed(a, 1);
	assert_ptr_equal(it[15].ptr, blk_base(a, 1));
	assert_int_equal(a->blks[0].used, BLK);
	assert_int_equal(a->blks[2].used, BLK);
	assert_ptr_equal(it[5].ptr, blk_base(a, 0) + 5 * 32);
	assert_ptr_equal(it[20].ptr, blk_base(a, 2) + 4 * 32);
	assert_int_equal(arena_compact(a, movable, &pin), 1);
	assert_int_equal(a->cur, 0);
	check_packed(a, 0);
	assert_ptr_equal(it[5].ptr, blk_base(a, 0));
	assert_int_equal(a->blks[2].used, BLK);
	assert_ptr_equal(it[20].ptr, blk_base(a, 2) + 4 * 32);
	assert_int_equal(arena_compact(a, movable, &pin), 1);
	assert_int_equal(a->cur, 2);
	check_packed(a, 2);
	assert_ptr_equal(it[20].ptr, blk_base(a, 2));
	assert_int_equal(arena_compact(a, movable, &pin), 0);
	assert_int_equal(a->cur, 2);
	assert_int_equal(a->blks[3].used, BLK);
	check_all(it, NALL);
	check_accounting(a);
}

/*
 * Most garbage, not least live: block 0 (128 live, 128 garbage) goes
 * before the open block 1 (8 live, 88 garbage), which would free more.
 */
static void test_compact_garbage_not_live(void **state)
{
	struct fixture *f = *state;
	struct arena *a = &f->a;
	struct arena_item it[8], x, y;
	struct pin pin = { NULL, 0 };

	for (int i = 0; i < 8; i++) {
		assert_int_equal(arena_alloc(a, &it[i], 32), 0);
		fill(&it[i], (uint8_t)i);
	}
	assert_int_equal(arena_alloc(a, &y, 88), 0);
	assert_int_equal(arena_alloc(a, &x, 8), 0);
	assert_int_equal(x.blk, 1);
	fill(&x, 99);
	arena_free(a, &y);
	for (int i = 0; i < 8; i += 2)
		arena_free(a, &it[i]);
	assert_int_equal(a->cur, 1);

	assert_int_equal(arena_compact(a, movable, &pin), 1);
	assert_int_equal(a->cur, 0);
	check_packed(a, 0);
	assert_ptr_equal(x.ptr, blk_base(a, 1) + 88); /* not yet */
	assert_int_equal(arena_compact(a, movable, &pin), 1);
	assert_int_equal(a->cur, 1);
	assert_ptr_equal(x.ptr, blk_base(a, 1));
	check_packed(a, 1);
	assert_int_equal(arena_compact(a, movable, &pin), 0);
	check_fill(&x, 99);
	for (int i = 1; i < 8; i += 2)
		check_fill(&it[i], (uint8_t)i);
	check_accounting(a);
}

/*
 * A compacted block keeps its list in address order (read from the back),
 * with new items after, so compacting it again later is still right.
 */
static void test_compact_twice(void **state)
{
	struct fixture *f = *state;
	struct arena *a = &f->a;
	struct arena_item it[NALL + 2];
	struct pin pin = { NULL, 0 };
	uint8_t *b2 = blk_base(a, 2);

	memset(it, 0, sizeof(it));
	fill_all(f, it);
	for (int i = 16; i < 24; i++) /* block 2: 17, 20, 22 stay */
		if (i != 17 && i != 20 && i != 22)
			arena_free(a, &it[i]);
	assert_int_equal(arena_compact(a, movable, &pin), 1);
	assert_int_equal(a->cur, 2);
	check_packed(a, 2);
	assert_ptr_equal(it[17].ptr, b2);
	assert_ptr_equal(it[20].ptr, b2 + 32);
	assert_ptr_equal(it[22].ptr, b2 + 64);

	/* new items go after them, in the free tail */
	assert_int_equal(arena_alloc(a, &it[NALL], 40), 0);
	assert_int_equal(arena_alloc(a, &it[NALL + 1], 24), 0);
	assert_ptr_equal(it[NALL].ptr, b2 + 96);
	assert_ptr_equal(it[NALL + 1].ptr, b2 + 136);
	fill(&it[NALL], NALL);
	fill(&it[NALL + 1], NALL + 1);
	check_packed(a, 2); /* list order = address order */
	check_accounting(a);

	/* free more: 17 and the 24-byte item remain, 56 of 160 */
	arena_free(a, &it[20]);
	arena_free(a, &it[22]);
	arena_free(a, &it[NALL]);
	assert_int_equal(arena_compact(a, movable, &pin), 1);
	assert_int_equal(a->cur, 2);
	assert_ptr_equal(it[17].ptr, b2);
	assert_ptr_equal(it[NALL + 1].ptr, b2 + 32);
	assert_int_equal(a->blks[2].used, 56);
	check_packed(a, 2);
	check_all(it, NALL + 2);
	check_accounting(a);

	/* and once more, with the first item gone */
	assert_int_equal(arena_alloc(a, &it[NALL], 100), 0);
	assert_ptr_equal(it[NALL].ptr, b2 + 56);
	fill(&it[NALL], NALL);
	arena_free(a, &it[17]);
	arena_free(a, &it[NALL + 1]); /* 104 live of 160 */
	assert_int_equal(arena_compact(a, movable, &pin), 0);
	arena_free(a, &it[NALL]); /* block 2 empty: recycled */
	assert_int_equal(a->cur, UINT32_MAX);
	assert_int_equal(a->nfree, 1);
	assert_int_equal(arena_compact(a, movable, &pin), 0);
	assert_int_equal(a->cur, UINT32_MAX);
	check_all(it, NALL + 2);
	check_accounting(a);
}

/* Nothing to compact: an empty arena, only dense or recycled blocks. */
static void test_compact_nothing(void **state)
{
	struct fixture *f = *state;
	struct arena *a = &f->a;
	struct arena_item it[NALL];
	struct pin pin = { NULL, 0 };

	assert_int_equal(arena_compact(a, movable, &pin), 0);
	assert_int_equal(a->cur, UINT32_MAX);
	assert_int_equal(pin.calls, 0);

	fill_all(f, it);
	assert_int_equal(arena_compact(a, movable, &pin), 0);
	for (int i = 0; i < 8; i++)
		arena_free(a, &it[8 + i]); /* block 1 recycled */
	for (int i = 0; i < 3; i++)
		arena_free(a, &it[i]); /* block 0 dense still */
	assert_int_equal(a->nfree, 1);
	assert_int_equal(arena_compact(a, movable, &pin), 0);
	assert_int_equal(a->cur, 3);
	assert_int_equal(pin.calls, 0);
	assert_int_equal(a->nfree, 1);
}

/*
 * Random allocations, frees and compactions (some items pinned), checked
 * against what compaction must do: the chosen block has the most garbage
 * of the eligible ones, is packed and open; nothing else moves; every
 * byte of every live item survives.
 */
#define RN 48
static bool same_fill(const struct arena_item *it, uint8_t seed)
{
	for (uint32_t i = 0; i < it->len; i++)
		if (it->ptr[i] != (uint8_t)(seed * 31 + i))
			return false;
	return true;
}

struct rpin {
	struct arena_item *base;
	bool pinned[RN];
};

static bool rpin_movable(struct arena_item *it, void *arg)
{
	struct rpin *r = arg;

	return !r->pinned[it - r->base];
}

static void test_compact_random(void **state)
{
	struct fixture *f = *state;
	struct arena *a = &f->a;
	struct arena_item it[RN];
	uint8_t seed[RN];
	uint8_t *old[RN];
	struct rpin rp;
	uint64_t x = 99;
	int compactions = 0, refusals = 0, refits = 0;

	memset(it, 0, sizeof(it));
	rp.base = it;
	for (int step = 0; step < 20000; step++) {
		int i;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		i = (int)(x % RN);
		if (it[i].ptr) {
			arena_free(a, &it[i]);
			continue;
		}
		uint64_t len = (x >> 20) % 96 + 1;
		int ret = arena_alloc(a, &it[i], len);

		if (ret == 0) {
			seed[i] = (uint8_t)(x >> 40);
			fill(&it[i], seed[i]);
			continue;
		}
		assert_int_equal(ret, -ENOSPC);

		/* pin about one item in eight */
		for (int k = 0; k < RN; k++) {
			rp.pinned[k] = ((x >> (k % 50)) & 7) == 0;
			old[k] = it[k].ptr;
		}
		uint64_t best = 0;
		bool any = false;

		for (uint32_t b = 0; b < a->nblk; b++) {
			const struct arena_blk *k = &a->blks[b];
			bool ok = k->live && k->live * 2 <= k->used;

			for (int j = 0; j < RN && ok; j++)
				if (old[j] && it[j].blk == b && rp.pinned[j])
					ok = false;
			if (ok && (!any || k->used - k->live > best)) {
				best = k->used - k->live;
				any = true;
			}
		}
		uint32_t cur = a->cur;
		uint64_t garbage[NBLK];

		for (uint32_t b = 0; b < NBLK; b++)
			garbage[b] = a->blks[b].used - a->blks[b].live;
		ret = arena_compact(a, rpin_movable, &rp);
		check_accounting(a);
		if (!any) {
			assert_int_equal(ret, 0);
			assert_int_equal(a->cur, cur);
			for (int k = 0; k < RN; k++)
				assert_ptr_equal(it[k].ptr, old[k]);
			refusals++;
		} else {
			uint32_t b = a->cur;

			assert_int_equal(ret, 1);
			assert_true(b < NBLK);
			assert_int_equal(garbage[b], best);
			check_packed(a, b);
			for (int k = 0; k < RN; k++) {
				if (!old[k])
					continue;
				if (it[k].blk != b)
					assert_ptr_equal(it[k].ptr, old[k]);
				else
					assert_true(it[k].ptr <= old[k]);
				assert_false(rp.pinned[k] && it[k].blk == b);
			}
			compactions++;
			if (arena_alloc(a, &it[i], len) == 0) {
				seed[i] = (uint8_t)(x >> 40);
				fill(&it[i], seed[i]);
				refits++;
			}
		}
		for (int k = 0; k < RN; k++)
			if (it[k].ptr)
				assert_true(same_fill(&it[k], seed[k]));
		check_accounting(a);
	}
	/* the run must have exercised both outcomes */
	assert_true(compactions > 0);
	assert_true(refusals > 0);
	assert_true(refits > 0);
	for (int k = 0; k < RN; k++)
		if (it[k].ptr) {
			assert_true(same_fill(&it[k], seed[k]));
			arena_free(a, &it[k]);
		}
	assert_int_equal(a->live, 0);
	assert_int_equal(a->nfree, NBLK);
}

/* The arena works over a mapped region as well as over malloc'ed memory. */
static void test_arena_on_region(void **state)
{
	struct ram_region r;
	struct arena a;
	struct arena_item it[64];

	(void)state;
	assert_int_equal(ram_region_map(&r, 64 * 1024, 4096, false, false), 0);
	assert_int_equal(arena_init(&a, r.base, r.size, 4096), 0);
	assert_int_equal(a.nblk, 16);
	for (int i = 0; i < 64; i++) {
		assert_int_equal(arena_alloc(&a, &it[i], 1000), 0);
		assert_true(it[i].ptr >= r.base &&
			    it[i].ptr + it[i].len <= r.base + r.size);
		fill(&it[i], (uint8_t)i);
	}
	for (int i = 0; i < 64; i++)
		check_fill(&it[i], (uint8_t)i);
	assert_int_equal(a.live, 64 * 1000);
	assert_int_equal(arena_used(&a), 16 * 4096);
	check_accounting(&a);
	for (int i = 0; i < 64; i++)
		arena_free(&a, &it[i]);
	assert_int_equal(arena_used(&a), 0);
	assert_int_equal(a.nfree, 16);
	arena_release(&a);
	ram_region_unmap(&r);
}

#define A(t) cmocka_unit_test_setup_teardown(t, arena_setup, arena_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_region_small),
		cmocka_unit_test(test_region_edge_sizes),
		cmocka_unit_test(test_slots_exhaustion_and_reuse),
		cmocka_unit_test(test_slots_degenerate),
		A(test_arena_init),
		A(test_arena_packing),
		A(test_arena_new_block_when_full),
		A(test_arena_e2big),
		A(test_arena_e2big_overflow),
		A(test_arena_enospc),
		A(test_arena_recycle),
		A(test_compact_in_place),
		A(test_compact_overlapping_slide),
		A(test_compact_pinned),
		A(test_compact_dense_not_chosen),
		A(test_compact_most_garbage),
		A(test_compact_garbage_not_live),
		A(test_compact_twice),
		A(test_compact_nothing),
		A(test_compact_random),
		cmocka_unit_test(test_arena_on_region),
	};

	return cmocka_run_group_tests_name("ram", tests, NULL, NULL);
}
