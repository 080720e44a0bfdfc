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
	sp->units = units;
	return 0;
}

void space_release(struct space *sp)
{
	free(sp->bits);
	sp->bits = NULL;
}

/* First free unit at or after @i below the limit, or sp->limit. */
static uint64_t next_free(const struct space *sp, uint64_t i)
{
	while (i < sp->limit) {
		if (i % 64 == 0 && sp->bits[i / 64] == ~0ull) {
			i += 64;
			continue;
		}
		if (!bit_get(sp, i))
			return i;
		i++;
	}
	return sp->limit;
}

static uint64_t run_len(const struct space *sp, uint64_t i, uint64_t want)
{
	uint64_t n = 0;

	while (i + n < sp->limit && n < want && !bit_get(sp, i + n)) {
		if ((i + n) % 64 == 0 && sp->bits[(i + n) / 64] == 0 &&
		    want - n >= 64 && i + n + 64 <= sp->limit) {
			n += 64;
			continue;
		}
		n++;
	}
	return n;
}

int space_alloc(struct space *sp, uint64_t bytes, struct extent *ext, int max)
{
	uint64_t need = bytes / sp->unit + (bytes % sp->unit != 0);
	uint64_t pos = sp->cursor >= sp->limit ? 0 : sp->cursor, scanned = 0;
	int n = 0;

	if (need > space_free_units(sp))
		return -ENOSPC;
	while (need > 0) {
		uint64_t f = next_free(sp, pos), len;

		if (f >= sp->limit) {	/* wrap around */
			scanned += sp->limit - pos;
			pos = 0;
			if (scanned > sp->limit)
				break;
			continue;
		}
		scanned += f - pos;
		len = run_len(sp, f, need);
		if (n == max) {
			n = -E2BIG;
			break;
		}
		ext[n].off = f * sp->unit;
		ext[n].len = len * sp->unit;
		bits_set(sp, f, len, true);
		sp->used += len;
		n++;
		need -= len;
		pos = f + len;
		scanned += len;
	}
	if (need > 0 || n < 0) {	/* undo: should not happen but for E2BIG */
		int k = n < 0 ? max : n;

		for (int i = 0; i < k; i++)
			space_free(sp, &ext[i]);
		return n < 0 ? n : -ENOSPC;
	}
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
	return 0;
}

void space_free(struct space *sp, const struct extent *e)
{
	uint64_t from = e->off / sp->unit, n = e->len / sp->unit;

	for (uint64_t i = from; i < from + n; i++)
		assert(bit_get(sp, i));
	bits_set(sp, from, n, false);
	assert(sp->used >= n);
	sp->used -= n;
}
