/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Counters: per-thread shards of struct gs_stats, relaxed adds, summed by
 * gs_stats_get (store.c).  The lowest room: every other one counts here.
 */
#include <limits.h>
#include "internal.h"

static unsigned stat_shard_of_thread(void)
{
	static _Atomic unsigned next;
	static __thread unsigned mine = UINT_MAX;

	if (mine == UINT_MAX)
		mine = atomic_fetch_add_explicit(&next, 1,
						 memory_order_relaxed) %
		       NSTAT_SHARDS;
	return mine;
}

void stat_add_idx(struct gs_store *s, size_t idx, uint64_t n)
{
	atomic_fetch_add_explicit(&s->stats[stat_shard_of_thread()].v[idx], n,
				  memory_order_relaxed);
}
