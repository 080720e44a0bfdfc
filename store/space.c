/* SPDX-License-Identifier: BSD-3-Clause */
/* SSD space bitmap allocator (see space.h). */
#include <assert.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "space.h"

static inline bool bit_get(const struct space *sp, uint64_t i)
{
	return sp->bits[i / 64] >> (i % 64) & 1;
}

static void bits_set(struct space *sp, uint64_t from, uint64_t n, bool v)
{
	for (uint64_t i = from; i < from + n; i++) {
		uint64_t m = 1ull << (i % 64);

		if (v)
			sp->bits[i / 64] |= m;
		else
			sp->bits[i / 64] &= ~m;
	}
}

int space_init(struct space *sp, uint64_t capacity, uint64_t unit)
{
	sp->unit = unit;
	sp->units = sp->limit = capacity / unit;
	sp->used = 0;
	sp->cursor = 0;
	sp->mark = 0;
	sp->extra = NULL;
	sp->bits = calloc(sp->units / 64 + 1, sizeof(uint64_t));
	return sp->bits ? 0 : -ENOMEM;
}

int space_grow_map(struct space *sp, uint64_t units)
{
	uint64_t *b;
	uint64_t old = sp->units / 64 + 1, nw = units / 64 + 1;

	if (units <= sp->units)
		return 0;
	b = realloc(sp->bits, nw * sizeof(uint64_t));
	if (!b)
		return -ENOMEM;
	memset(b + old, 0, (nw - old) * sizeof(uint64_t));
	sp->bits = b;
	if (sp->extra) {
		uint8_t *x = realloc(sp->extra, units);

		if (!x)
			return -ENOMEM;
		memset(x + sp->units, 0, units - sp->units);
		sp->extra = x;
	}
	sp->units = units;
	return 0;
}

void space_release(struct space *sp)
{
	free(sp->bits);
	sp->bits = NULL;
	free(sp->extra);
	sp->extra = NULL;
}

void space_set_mark(struct space *sp, uint64_t units)
{
	if (units > sp->mark)
		sp->mark = units;
}

/* First free unit at or after @i below @end, or @end. */
static uint64_t next_free(const struct space *sp, uint64_t i, uint64_t end)
{
	while (i < end) {
		if (i % 64 == 0 && sp->bits[i / 64] == ~0ull) {
			i += 64;
			continue;
		}
		if (!bit_get(sp, i))
			return i;
		i++;
	}
	return end;
}

static uint64_t run_len(const struct space *sp, uint64_t i, uint64_t want,
			uint64_t end)
{
	uint64_t n = 0;

	while (i + n < end && n < want && !bit_get(sp, i + n)) {
		if ((i + n) % 64 == 0 && sp->bits[(i + n) / 64] == 0 &&
		    want - n >= 64 && i + n + 64 <= end) {
			n += 64;
			continue;
		}
		n++;
	}
	return n;
}

/*
 * Take free runs from [*pos, end) into ext[*n...] until @need is met.
 * Leaves *pos after the last run taken.  0, or -E2BIG past @max extents.
 */
static int take(struct space *sp, uint64_t *need, uint64_t *pos, uint64_t end,
		struct extent *ext, int max, int *n)
{
	while (*need > 0) {
		uint64_t f = next_free(sp, *pos, end), len;

		if (f >= end)
			return 0;
		len = run_len(sp, f, *need, end);
		if (*n > 0 && ext[*n - 1].off + ext[*n - 1].len ==
				      f * sp->unit) { /* across the mark */
			ext[*n - 1].len += len * sp->unit;
		} else if (*n == max) {
			return -E2BIG;
		} else {
			ext[*n].off = f * sp->unit;
			ext[*n].len = len * sp->unit;
			(*n)++;
		}
		bits_set(sp, f, len, true);
		sp->used += len;
		*need -= len;
		*pos = f + len;
	}
	return 0;
}

int space_alloc(struct space *sp, uint64_t bytes, struct extent *ext, int max)
{
	uint64_t need = bytes / sp->unit + (bytes % sp->unit != 0);
	uint64_t mark = sp->mark < sp->limit ? sp->mark : sp->limit;
	uint64_t start = sp->cursor < mark ? sp->cursor : 0, pos = start;
	int n = 0, ret;

	if (need > space_free_units(sp))
		return -ENOSPC;
	/*
	 * Next-fit among the units the file holds: from the cursor, then
	 * from the start up to it; only then the units never used.  Every
	 * used unit lies below the mark: while the store fills, none below
	 * it is free and the scan is skipped.
	 */
	ret = 0;
	if (sp->mark > sp->limit || sp->used < sp->mark)
		ret = take(sp, &need, &pos, mark, ext, max, &n);
	if (ret == 0 && need > 0 && start > 0 &&
	    (sp->mark > sp->limit || sp->used < sp->mark)) {
		pos = 0;
		ret = take(sp, &need, &pos, start, ext, max, &n);
	}
	if (ret == 0 && need > 0) {
		pos = mark;
		ret = take(sp, &need, &pos, sp->limit, ext, max, &n);
	}
	if (ret < 0 || need > 0) { /* undo: should not happen but for E2BIG */
		for (int i = 0; i < n; i++)
			space_free(sp, &ext[i]);
		return ret < 0 ? ret : -ENOSPC;
	}
	for (int i = 0; i < n; i++)
		space_set_mark(sp, (ext[i].off + ext[i].len) / sp->unit);
	sp->cursor = pos >= sp->limit ? 0 : pos;
	return n;
}

int space_claim(struct space *sp, const struct extent *e)
{
	uint64_t from = e->off / sp->unit, n = e->len / sp->unit;

	if (e->off % sp->unit || e->len % sp->unit || from + n > sp->units ||
	    from + n < from)
		return -ERANGE;
	for (uint64_t i = from; i < from + n; i++)
		if (bit_get(sp, i))
			return -EEXIST;
	bits_set(sp, from, n, true);
	sp->used += n;
	space_set_mark(sp, from + n);
	return 0;
}

void space_free(struct space *sp, const struct extent *e)
{
	uint64_t from = e->off / sp->unit, n = e->len / sp->unit;

	for (uint64_t i = from; i < from + n; i++) {
		assert(bit_get(sp, i));
		if (sp->extra && sp->extra[i]) {
			sp->extra[i]--; /* another version still holds it */
			continue;
		}
		bits_set(sp, i, 1, false);
		assert(sp->used > 0);
		sp->used--;
	}
}

/* The per-unit holder counts, allocated at the first share. */
static int extra_map(struct space *sp)
{
	if (!sp->extra && !(sp->extra = calloc(sp->units + 1, 1)))
		return -ENOMEM;
	return 0;
}

int space_share(struct space *sp, const struct extent *e)
{
	uint64_t from = e->off / sp->unit, n = e->len / sp->unit;

	if (e->off % sp->unit || e->len % sp->unit || from + n > sp->units)
		return -ERANGE;
	if (extra_map(sp) < 0)
		return -ENOMEM;
	for (uint64_t i = from; i < from + n; i++) {
		assert(bit_get(sp, i));
		if (sp->extra[i] == UINT8_MAX)
			return -EMLINK;
	}
	for (uint64_t i = from; i < from + n; i++)
		sp->extra[i]++;
	return 0;
}

int space_claim_shared(struct space *sp, const struct extent *e)
{
	uint64_t from = e->off / sp->unit, n = e->len / sp->unit;

	if (e->off % sp->unit || e->len % sp->unit || from + n > sp->units ||
	    from + n < from)
		return -ERANGE;
	if (extra_map(sp) < 0)
		return -ENOMEM;
	for (uint64_t i = from; i < from + n; i++)
		if (bit_get(sp, i) && sp->extra[i] == UINT8_MAX)
			return -EMLINK;
	for (uint64_t i = from; i < from + n; i++) {
		if (bit_get(sp, i)) {
			sp->extra[i]++;
		} else {
			bits_set(sp, i, 1, true);
			sp->used++;
		}
	}
	space_set_mark(sp, from + n);
	return 0;
}
