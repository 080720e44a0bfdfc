/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * stat_fields.c: struct gs_stats's fields as a table (goblin.h's GS_STATS
 * list), for the programs that print them.
 */
#include <stddef.h>
#include <string.h>

#include "goblin.h"

#define GS_STAT_ROW_U(f, k, h) \
	[GS_STAT_##f] = { #f, GS_STAT_##k, offsetof(struct gs_stats, f), 1, h },
#define GS_STAT_ROW_H(f, nb, h)                                               \
	[GS_STAT_##f] = { #f, GS_STAT_HIST, offsetof(struct gs_stats, f), nb, \
			  h },
#define GS_STAT_ROW_B(f, h) \
	[GS_STAT_##         \
		f] = { #f, GS_STAT_BOOL, offsetof(struct gs_stats, f), 1, h },

const struct gs_stat_field gs_stat_fields[GS_NSTATS] = { GS_STATS(
	GS_STAT_ROW_U, GS_STAT_ROW_H, GS_STAT_ROW_B) };

uint64_t gs_stat_value(const struct gs_stats *st, const struct gs_stat_field *f,
		       unsigned i)
{
	const char *p = (const char *)st + f->off;
	uint64_t v;
	bool b;

	if (f->kind == GS_STAT_BOOL) {
		memcpy(&b, p, sizeof(b));
		return b;
	}
	memcpy(&v, p + (size_t)i * sizeof(v), sizeof(v));
	return v;
}
