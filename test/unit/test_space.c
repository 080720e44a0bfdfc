/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * SSD space allocator: next-fit extents over a bitmap, checked against the
 * bitmap itself and against a per-unit owner array.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "space.h"

#define UNIT 4096ull

static int unit_used(const struct space *sp, uint64_t i)
{
	return (int)(sp->bits[i / 64] >> (i % 64) & 1);
}

static uint64_t count_bits(const struct space *sp)
{
	uint64_t n = 0;

	for (uint64_t i = 0; i < sp->units; i++)
		n += (uint64_t)unit_used(sp, i);
	return n;
}

/* Units [from, from + n) all in state @v. */
static void assert_range(const struct space *sp, uint64_t from, uint64_t n,
			 int v)
{
	for (uint64_t i = from; i < from + n; i++)
		assert_int_equal(unit_used(sp, i), v);
}

/*
 * @n extents returned for @bytes: unit aligned, non-empty, in range,
 * pairwise disjoint, marked used, covering exactly the rounded size.
 */
static void check_extents(const struct space *sp, const struct extent *e, int n,
			  uint64_t bytes)
{
	uint64_t total = 0;

	for (int i = 0; i < n; i++) {
		assert_int_equal(e[i].off % sp->unit, 0);
		assert_int_equal(e[i].len % sp->unit, 0);
		assert_true(e[i].len > 0);
		assert_true(e[i].off + e[i].len <= sp->units * sp->unit);
		assert_range(sp, e[i].off / sp->unit, e[i].len / sp->unit, 1);
		for (int j = 0; j < i; j++)
			assert_true(e[i].off + e[i].len <= e[j].off ||
				    e[j].off + e[j].len <= e[i].off);
		total += e[i].len;
	}
	assert_int_equal(total, (bytes + sp->unit - 1) / sp->unit * sp->unit);
}

static struct extent ext1(uint64_t unit_off, uint64_t units)
{
	struct extent e = { unit_off * UNIT, units * UNIT, TIER_SSD, 0 };

	return e;
}

static void test_init_geometry(void **state)
{
	struct space *sp = *state;

	assert_int_equal(space_init(sp, 100 * UNIT + 17, UNIT), 0);
	assert_int_equal(sp->units, 100); /* partial unit dropped */
	assert_int_equal(sp->used, 0);
	assert_int_equal(space_free_units(sp), 100);
	assert_int_equal(count_bits(sp), 0);
	space_release(sp);
	assert_null(sp->bits);
}

static void test_alloc_free_basic(void **state)
{
	struct space *sp = *state;
	struct extent e[4];

	assert_int_equal(space_init(sp, 100 * UNIT, UNIT), 0);

	assert_int_equal(space_alloc(sp, 1, e, 4), 1);
	assert_int_equal(e[0].off, 0);
	assert_int_equal(e[0].len, UNIT);
	assert_int_equal(sp->used, 1);

	assert_int_equal(space_alloc(sp, UNIT, e + 1, 3), 1);
	assert_int_equal(e[1].off, UNIT);
	assert_int_equal(e[1].len, UNIT);

	assert_int_equal(space_alloc(sp, UNIT + 1, e + 2, 2), 1);
	assert_int_equal(e[2].off, 2 * UNIT);
	assert_int_equal(e[2].len, 2 * UNIT);
	assert_int_equal(sp->used, 4);
	assert_int_equal(count_bits(sp), 4);

	/* zero bytes take nothing */
	assert_int_equal(space_alloc(sp, 0, e + 3, 1), 0);
	assert_int_equal(sp->used, 4);

	space_free(sp, &e[1]);
	assert_int_equal(sp->used, 3);
	assert_range(sp, 0, 1, 1);
	assert_range(sp, 1, 1, 0);
	assert_range(sp, 2, 2, 1);
	space_free(sp, &e[0]);
	space_free(sp, &e[2]);
	assert_int_equal(sp->used, 0);
	assert_int_equal(count_bits(sp), 0);
	space_release(sp);
}

/* Fresh allocations come back as single extents, each after the last. */
static void test_next_fit_contiguous(void **state)
{
	static const uint64_t sizes[] = { 1,	     5 * UNIT,
					  70 * UNIT, 3 * UNIT - 1,
					  64 * UNIT, 129 * UNIT,
					  UNIT };
	struct space *sp = *state;
	struct extent e;
	uint64_t next = 0, used = 0;

	assert_int_equal(space_init(sp, 400 * UNIT, UNIT), 0);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint64_t units = (sizes[i] + UNIT - 1) / UNIT;

		assert_int_equal(space_alloc(sp, sizes[i], &e, 1), 1);
		assert_int_equal(e.off, next);
		assert_int_equal(e.len, units * UNIT);
		next += e.len;
		used += units;
		assert_int_equal(sp->used, used);
		assert_int_equal(sp->cursor, next / UNIT);
	}
	assert_int_equal(count_bits(sp), used);
	assert_range(sp, 0, used, 1);
	assert_range(sp, used, sp->units - used, 0);
	space_release(sp);
}

/* A freed hole behind the cursor is not reused until the cursor wraps. */
/*
 * Regression, issue 16: room freed behind the cursor is taken at once,
 * before units the data file never held.  Next-fit from the cursor had the
 * file grow into its holes on a full file system (ENOSPC) until the cursor
 * wrapped, 166 attempts later.
 */
static void test_issue16_freed_room_taken_first(void **state)
{
	struct space *sp = *state;
	struct extent a, b, c, d;

	assert_int_equal(space_init(sp, 10 * UNIT, UNIT), 0);
	assert_int_equal(space_alloc(sp, 2 * UNIT, &a, 1), 1); /* 0-1 */
	assert_int_equal(space_alloc(sp, 3 * UNIT, &b, 1), 1); /* 2-4 */
	assert_int_equal(sp->mark, 5);
	space_free(sp, &a);
	assert_int_equal(space_alloc(sp, 2 * UNIT, &c, 1), 1);
	assert_int_equal(c.off, 0); /* the freed units, not 5-6 */
	assert_int_equal(sp->mark, 5);
	/* none free below the mark: the file grows */
	assert_int_equal(space_alloc(sp, 3 * UNIT, &d, 1), 1);
	assert_int_equal(d.off, 5 * UNIT);
	assert_int_equal(sp->mark, 8);
	assert_int_equal(sp->cursor, 8);
	assert_int_equal(space_alloc(sp, 2 * UNIT, &a, 1), 1);
	assert_int_equal(a.off, 8 * UNIT);
	assert_int_equal(sp->cursor, 0); /* reached the end: back to 0 */
	assert_int_equal(sp->used, 10);
	assert_int_equal(space_free_units(sp), 0);
	space_release(sp);
}

/* Below the mark the search is next-fit from the cursor, skipping holes. */
static void test_next_fit_below_mark(void **state)
{
	struct space *sp = *state;
	struct extent all, e[3], one = ext1(2, 2), two = ext1(6, 2);

	assert_int_equal(space_init(sp, 10 * UNIT, UNIT), 0);
	assert_int_equal(space_alloc(sp, 10 * UNIT, &all, 1), 1);
	space_free(sp, &one);
	space_free(sp, &two);
	sp->cursor = 3;
	assert_int_equal(space_alloc(sp, 2 * UNIT, e, 3), 2);
	assert_int_equal(e[0].off, 3 * UNIT); /* from the cursor */
	assert_int_equal(e[0].len, 1 * UNIT);
	assert_int_equal(e[1].off, 6 * UNIT); /* skipping 4-5 */
	assert_int_equal(e[1].len, 1 * UNIT);
	assert_int_equal(sp->cursor, 7);
	assert_int_equal(space_alloc(sp, 2 * UNIT, e, 3), 2);
	assert_int_equal(e[0].off, 7 * UNIT); /* then wraps to 2 */
	assert_int_equal(e[1].off, 2 * UNIT);
	assert_int_equal(sp->cursor, 3);
	assert_int_equal(space_free_units(sp), 0);
	space_release(sp);
}

/* The cursor wraps in the middle of an allocation: two extents. */
static void test_wrap_splits_extent(void **state)
{
	struct space *sp = *state;
	struct extent a, e[3];

	assert_int_equal(space_init(sp, 10 * UNIT, UNIT), 0);
	assert_int_equal(space_alloc(sp, 10 * UNIT, &a, 1), 1);
	space_free(sp, &a);
	assert_int_equal(sp->used, 0);
	sp->cursor = 6;
	assert_int_equal(space_alloc(sp, 6 * UNIT, e, 3), 2);
	assert_int_equal(e[0].off, 6 * UNIT);
	assert_int_equal(e[0].len, 4 * UNIT);
	assert_int_equal(e[1].off, 0);
	assert_int_equal(e[1].len, 2 * UNIT);
	assert_int_equal(sp->cursor, 2);
	check_extents(sp, e, 2, 6 * UNIT);
	assert_int_equal(sp->used, 6);

	/* one extent allowed: it would take two, so nothing is taken */
	space_free(sp, &e[0]);
	space_free(sp, &e[1]);
	sp->cursor = 6;
	assert_int_equal(space_alloc(sp, 6 * UNIT, e, 1), -E2BIG);
	assert_int_equal(sp->used, 0);
	assert_int_equal(count_bits(sp), 0);
	assert_int_equal(sp->cursor, 6);
	space_release(sp);
}

/*
 * Free every other unit of a full space, then ask for more than one unit:
 * it must come as single-unit extents from the holes.
 */
static void test_fragmented(void **state)
{
	struct space *sp = *state;
	struct extent one[128], e[16];
	uint64_t saved[3];
	int n;

	assert_int_equal(space_init(sp, 128 * UNIT, UNIT), 0);
	for (int i = 0; i < 128; i++)
		assert_int_equal(space_alloc(sp, UNIT, &one[i], 1), 1);
	assert_int_equal(sp->used, 128);
	for (int i = 0; i < 128; i += 2)
		space_free(sp, &one[i]);
	assert_int_equal(sp->used, 64);

	/* too few extents allowed: -E2BIG and every unit handed back */
	memcpy(saved, sp->bits, sizeof(saved));
	uint64_t cursor = sp->cursor;
	assert_int_equal(space_alloc(sp, 10 * UNIT, e, 4), -E2BIG);
	assert_int_equal(sp->used, 64);
	assert_memory_equal(saved, sp->bits, sizeof(saved));
	assert_int_equal(sp->cursor, cursor);

	n = space_alloc(sp, 10 * UNIT - 100, e, 16);
	assert_int_equal(n, 10);
	check_extents(sp, e, n, 10 * UNIT - 100);
	for (int i = 0; i < n; i++) {
		assert_int_equal(e[i].len, UNIT);
		assert_int_equal(e[i].off / UNIT % 2, 0); /* a hole */
	}
	assert_int_equal(sp->used, 74);
	assert_int_equal(count_bits(sp), 74);

	/* exactly as many extents as allowed is fine */
	n = space_alloc(sp, 4 * UNIT, e, 4);
	assert_int_equal(n, 4);
	check_extents(sp, e, n, 4 * UNIT);
	assert_int_equal(sp->used, 78);
	space_release(sp);
}

static void test_enospc_unchanged(void **state)
{
	struct space *sp = *state;
	struct extent e[8], big;
	uint64_t saved[2];

	assert_int_equal(space_init(sp, 100 * UNIT, UNIT), 0);
	assert_int_equal(space_alloc(sp, 60 * UNIT, &big, 1), 1);
	memcpy(saved, sp->bits, sizeof(saved));
	assert_int_equal(space_alloc(sp, 40 * UNIT + 1, e, 8), -ENOSPC);
	assert_int_equal(sp->used, 60);
	assert_int_equal(sp->cursor, 60);
	assert_memory_equal(saved, sp->bits, sizeof(saved));
	/* the exact remainder still fits */
	assert_int_equal(space_alloc(sp, 40 * UNIT, e, 8), 1);
	assert_int_equal(space_free_units(sp), 0);
	assert_int_equal(space_alloc(sp, 1, e, 8), -ENOSPC);
	assert_int_equal(sp->used, 100);
	space_release(sp);
}

/*
 * A byte count so large that rounding it up to units overflows must not
 * turn into a tiny (or empty) allocation.
 */
static void test_huge_request_enospc(void **state)
{
	struct space *sp = *state;
	struct extent e[4];

	assert_int_equal(space_init(sp, 100 * UNIT, UNIT), 0);
	assert_int_equal(space_alloc(sp, 101 * UNIT, e, 4), -ENOSPC);
	assert_int_equal(space_alloc(sp, UINT64_MAX - UNIT, e, 4), -ENOSPC);
	assert_int_equal(space_alloc(sp, UINT64_MAX, e, 4), -ENOSPC);
	assert_int_equal(sp->used, 0);
	space_release(sp);
}

static void test_claim(void **state)
{
	struct space *sp = *state;
	struct extent e, bad, got[4];
	int n;

	assert_int_equal(space_init(sp, 100 * UNIT, UNIT), 0);
	e = ext1(10, 5);
	assert_int_equal(space_claim(sp, &e), 0);
	assert_int_equal(sp->used, 5);
	assert_range(sp, 10, 5, 1);
	assert_int_equal(sp->cursor, 0); /* claims leave the cursor */

	/* same, overlap at the tail, overlap at the head: all refused */
	assert_int_equal(space_claim(sp, &e), -EEXIST);
	bad = ext1(5, 6); /* 5..10: only the last unit taken */
	assert_int_equal(space_claim(sp, &bad), -EEXIST);
	assert_range(sp, 5, 5, 0); /* nothing half claimed */
	bad = ext1(14, 3);
	assert_int_equal(space_claim(sp, &bad), -EEXIST);
	assert_range(sp, 15, 2, 0);
	assert_int_equal(sp->used, 5);

	/* beyond the end, straddling it, misaligned, overflowing */
	bad = ext1(100, 1);
	assert_int_equal(space_claim(sp, &bad), -ERANGE);
	bad = ext1(98, 3);
	assert_int_equal(space_claim(sp, &bad), -ERANGE);
	assert_range(sp, 98, 2, 0);
	bad.off = 20 * UNIT + 1;
	bad.len = UNIT;
	assert_int_equal(space_claim(sp, &bad), -ERANGE);
	bad.off = 20 * UNIT;
	bad.len = UNIT + 512;
	assert_int_equal(space_claim(sp, &bad), -ERANGE);
	bad.off = UINT64_MAX / UNIT * UNIT;
	bad.len = 2 * UNIT;
	assert_int_equal(space_claim(sp, &bad), -ERANGE);
	assert_int_equal(sp->used, 5);
	assert_int_equal(count_bits(sp), 5);

	/* the last unit exactly */
	bad = ext1(99, 1);
	assert_int_equal(space_claim(sp, &bad), 0);
	assert_int_equal(sp->used, 6);

	/* allocation steps around claimed units */
	n = space_alloc(sp, 20 * UNIT, got, 4);
	assert_int_equal(n, 2);
	assert_int_equal(got[0].off, 0);
	assert_int_equal(got[0].len, 10 * UNIT);
	assert_int_equal(got[1].off, 15 * UNIT);
	assert_int_equal(got[1].len, 10 * UNIT);
	check_extents(sp, got, n, 20 * UNIT);
	assert_int_equal(sp->used, 26);

	space_free(sp, &e);
	assert_int_equal(sp->used, 21);
	assert_int_equal(space_claim(sp, &e), 0);
	space_release(sp);
}

/* Runs across 64-unit words with a capacity that is not a word multiple. */
static void test_word_boundaries(void **state)
{
	struct space *sp = *state;
	struct extent e[4], a, b;

	assert_int_equal(space_init(sp, 200 * UNIT, UNIT), 0);
	assert_int_equal(space_alloc(sp, 130 * UNIT, e, 1), 1);
	assert_int_equal(e[0].off, 0);
	assert_int_equal(e[0].len, 130 * UNIT);
	assert_range(sp, 0, 130, 1);
	assert_range(sp, 130, 70, 0);
	/* 70 units remain up to a partial last word */
	assert_int_equal(space_alloc(sp, 70 * UNIT, e + 1, 1), 1);
	assert_int_equal(e[1].off, 130 * UNIT);
	assert_int_equal(sp->used, 200);
	assert_int_equal(sp->cursor, 0);
	space_free(sp, &e[0]);
	space_free(sp, &e[1]);

	/* a used unit right after a full free word ends the run there */
	a = ext1(64, 64);
	b = ext1(129, 1);
	assert_int_equal(space_claim(sp, &a), 0);
	assert_int_equal(space_claim(sp, &b), 0);
	assert_int_equal(space_alloc(sp, 66 * UNIT, e, 4), 3);
	assert_int_equal(e[0].off, 0);
	assert_int_equal(e[0].len, 64 * UNIT);
	assert_int_equal(e[1].off, 128 * UNIT);
	assert_int_equal(e[1].len, 1 * UNIT);
	assert_int_equal(e[2].off, 130 * UNIT);
	assert_int_equal(e[2].len, 1 * UNIT);
	check_extents(sp, e, 3, 66 * UNIT);
	assert_int_equal(sp->cursor, 131);
	assert_int_equal(sp->used, 64 + 1 + 66);
	space_release(sp);
}

/* ---- randomized, against a per-unit owner array ---- */

static uint64_t rng_state;

static uint64_t rnd(void)
{
	uint64_t x = rng_state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return rng_state = x;
}

#define R_UNITS	 1000 /* not a multiple of 64 */
#define R_OBJS	 300
#define R_MAXEXT 8

struct robj {
	int n;
	struct extent e[R_MAXEXT];
};

/*
 * The allocator's contract, written naively: walk from the cursor, take
 * free runs in address order, wrap once.  Fills @e; returns the extent
 * count needed (possibly > @max, then @e holds only @max), and the cursor
 * the allocation would leave.
 */
static int ref_alloc(const int *owner, uint64_t units, uint64_t cursor,
		     uint64_t mark, uint64_t need, struct extent *e, int max,
		     uint64_t *cursor_after)
{
	uint64_t m = mark < units ? mark : units;
	uint64_t start = cursor < m ? cursor : 0, pos = start;
	/* units the file holds from the cursor, then from 0, then the rest */
	const uint64_t range[3][2] = { { start, m },
				       { 0, start },
				       { m, units } };
	int n = 0;

	for (int r = 0; r < 3 && need > 0; r++) {
		uint64_t at = range[r][0], end = range[r][1];

		while (need > 0) {
			uint64_t len = 0;

			while (at < end && owner[at])
				at++;
			if (at >= end)
				break;
			while (at + len < end && len < need && !owner[at + len])
				len++;
			if (n > 0 && n <= max &&
			    e[n - 1].off + e[n - 1].len == at * UNIT) {
				e[n - 1].len += len * UNIT;
			} else {
				if (n < max) {
					e[n].off = at * UNIT;
					e[n].len = len * UNIT;
				}
				n++;
			}
			need -= len;
			at += len;
			pos = at;
		}
	}
	assert_int_equal(need, 0);
	*cursor_after = pos >= units ? 0 : pos;
	return n;
}

static void check_against_ref(const struct space *sp, const int *owner)
{
	uint64_t used = 0;

	for (uint64_t i = 0; i < sp->units; i++) {
		assert_int_equal(unit_used(sp, i), owner[i] != 0);
		used += owner[i] != 0;
	}
	assert_int_equal(sp->used, used);
	/* no stray bits past the capacity */
	for (uint64_t i = sp->units; i < (sp->units / 64 + 1) * 64; i++)
		assert_int_equal(unit_used(sp, i), 0);
}

/* Mark (or clear, @id 0) the reference owner of @e's units. */
static void ref_mark(int *owner, const struct extent *e, int expect, int id)
{
	uint64_t u = e->off / UNIT;

	for (uint64_t k = 0; k < e->len / UNIT; k++) {
		/* no unit is ever handed out twice */
		assert_int_equal(owner[u + k], expect);
		owner[u + k] = id;
	}
}

struct rstate {
	struct space *sp;
	struct robj objs[R_OBJS];
	int owner[R_UNITS];
	uint64_t free_units;
	uint64_t mark; /* the reference's: past every unit used */
};

static void rand_free(struct rstate *st, int id)
{
	struct robj *o = &st->objs[id];

	for (int i = 0; i < o->n; i++) {
		ref_mark(st->owner, &o->e[i], id + 1, 0);
		st->free_units += o->e[i].len / UNIT;
		space_free(st->sp, &o->e[i]);
	}
	o->n = 0;
}

/* Claim a random extent, like recovery would. */
static void rand_claim(struct rstate *st, int id)
{
	uint64_t u = rnd() % (R_UNITS + 10), len = 1 + rnd() % 6;
	struct extent e = ext1(u, len);
	int want = 0;

	if (u + len > R_UNITS)
		want = -ERANGE;
	else
		for (uint64_t k = u; k < u + len; k++)
			if (st->owner[k])
				want = -EEXIST;
	assert_int_equal(space_claim(st->sp, &e), want);
	if (want == 0) {
		st->objs[id].n = 1;
		st->objs[id].e[0] = e;
		ref_mark(st->owner, &e, 0, id + 1);
		st->free_units -= len;
		if (u + len > st->mark)
			st->mark = u + len;
	}
}

static void rand_alloc(struct rstate *st, int id)
{
	struct space *sp = st->sp;
	struct robj *o = &st->objs[id];
	uint64_t units = 1 + rnd() % 40;
	uint64_t bytes = units * UNIT - rnd() % UNIT;
	int max = 1 + (int)(rnd() % R_MAXEXT);
	struct extent want[R_MAXEXT];
	uint64_t cur_after = sp->cursor, cur_before = sp->cursor;
	int nwant = 0, ret;

	if (units <= st->free_units)
		nwant = ref_alloc(st->owner, R_UNITS, sp->cursor, st->mark,
				  units, want, max, &cur_after);
	ret = space_alloc(sp, bytes, o->e, max);
	if (units > st->free_units || nwant > max) {
		assert_int_equal(ret,
				 units > st->free_units ? -ENOSPC : -E2BIG);
		assert_int_equal(sp->cursor, cur_before);
		return;
	}
	assert_int_equal(ret, nwant);
	check_extents(sp, o->e, ret, bytes);
	for (int i = 0; i < ret; i++) {
		assert_int_equal(o->e[i].off, want[i].off);
		assert_int_equal(o->e[i].len, want[i].len);
		ref_mark(st->owner, &o->e[i], 0, id + 1);
		if ((o->e[i].off + o->e[i].len) / UNIT > st->mark)
			st->mark = (o->e[i].off + o->e[i].len) / UNIT;
	}
	assert_int_equal(sp->cursor, cur_after);
	assert_int_equal(sp->mark, st->mark);
	o->n = ret;
	st->free_units -= units;
}

static void run_random(struct space *sp, uint64_t seed, int steps)
{
	static struct rstate st;

	memset(&st, 0, sizeof(st));
	st.sp = sp;
	st.free_units = R_UNITS;
	rng_state = seed;
	assert_int_equal(space_init(sp, R_UNITS * UNIT, UNIT), 0);

	for (int step = 0; step < steps; step++) {
		int id = (int)(rnd() % R_OBJS);

		if (st.objs[id].n > 0)
			rand_free(&st, id);
		else if (rnd() % 8 == 0)
			rand_claim(&st, id);
		else
			rand_alloc(&st, id);
		check_against_ref(sp, st.owner);
		assert_int_equal(space_free_units(sp), st.free_units);
	}
	for (int id = 0; id < R_OBJS; id++)
		rand_free(&st, id);
	assert_int_equal(sp->used, 0);
	assert_int_equal(count_bits(sp), 0);
	space_release(sp);
}

static void test_random_vs_reference(void **state)
{
	for (uint64_t seed = 1; seed <= 8; seed++)
		run_random(*state, seed * 0x9e3779b97f4a7c15ull, 4000);
}

/* The space lives in the fixture so that a failing test does not leak it. */
static int space_setup(void **state)
{
	*state = calloc(1, sizeof(struct space));
	return *state ? 0 : -1;
}

static int space_teardown(void **state)
{
	space_release(*state);
	free(*state);
	return 0;
}

#define S(t) cmocka_unit_test_setup_teardown(t, space_setup, space_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		S(test_init_geometry),
		S(test_alloc_free_basic),
		S(test_next_fit_contiguous),
		S(test_issue16_freed_room_taken_first),
		S(test_next_fit_below_mark),
		S(test_wrap_splits_extent),
		S(test_fragmented),
		S(test_enospc_unchanged),
		S(test_huge_request_enospc),
		S(test_claim),
		S(test_word_boundaries),
		S(test_random_vs_reference),
	};

	return cmocka_run_group_tests_name("space", tests, NULL, NULL);
}
