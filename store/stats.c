/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Counters: per-thread shards of struct gs_stats, relaxed adds, summed by
 * gs_stats_get (store.c).  The lowest room: every other one counts here.
 */
#include <limits.h>
#include <stdint.h>
#include "internal.h"

/*
 * A thread owns a shard alone while it lives, so that its adds are a
 * plain load and store, not a locked instruction (a small get counts
 * four times: a tenth of its time on the ring, issue 22).  When all but
 * the last are owned, a thread adds atomically to the last one, which
 * such threads share.  A shard outlives its owner (its counts stay in
 * the sums, gs_stats_get) and goes to the next thread that asks.
 */
#define SHARED_SHARD (NSTAT_SHARDS - 1)

static _Atomic uint64_t shards_taken; /* bit i: shard i has an owner */
static pthread_key_t shard_key;	      /* its value: the shard + 1 */
static bool shard_key_ok;
static pthread_once_t shard_once = PTHREAD_ONCE_INIT;
static __thread unsigned mine = UINT_MAX;

/* at the thread's exit: the shard goes back (its counts stay) */
static void shard_release(void *arg)
{
	unsigned i = (unsigned)(uintptr_t)arg - 1;

	mine = UINT_MAX; /* a later add claims again */
	atomic_fetch_and_explicit(&shards_taken, ~(1ull << i),
				  memory_order_release);
}

static void shard_key_make(void)
{
	shard_key_ok = pthread_key_create(&shard_key, shard_release) == 0;
}

static unsigned shard_claim(void)
{
	uint64_t taken, free;
	unsigned i;

	pthread_once(&shard_once, shard_key_make);
	if (!shard_key_ok) /* it could not be given back */
		return SHARED_SHARD;
	taken = atomic_load_explicit(&shards_taken, memory_order_relaxed);
	do {
		free = ~taken & ((1ull << SHARED_SHARD) - 1);
		if (!free)
			return SHARED_SHARD;
		i = (unsigned)__builtin_ctzll(free);
	} while (!atomic_compare_exchange_weak_explicit(
		&shards_taken, &taken, taken | 1ull << i, memory_order_acquire,
		memory_order_relaxed));
	if (pthread_setspecific(shard_key, (void *)(uintptr_t)(i + 1))) {
		shard_release((void *)(uintptr_t)(i + 1));
		return SHARED_SHARD;
	}
	return i;
}

void stat_add_idx(struct gs_store *s, size_t idx, uint64_t n)
{
	_Atomic uint64_t *v;

	if (mine == UINT_MAX)
		mine = shard_claim();
	v = &s->stats[mine].v[idx];
	if (mine == SHARED_SHARD)
		atomic_fetch_add_explicit(v, n, memory_order_relaxed);
	else /* ours alone: readers see the old sum or the new one */
		atomic_store_explicit(
			v, atomic_load_explicit(v, memory_order_relaxed) + n,
			memory_order_relaxed);
}
