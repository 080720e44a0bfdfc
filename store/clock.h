/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * clock.h: the clocks every program and the store read, as inline
 * nanosecond counts (public, like goblin.h: any folder may include it).
 * CLOCK_MONOTONIC for intervals and timeouts, CLOCK_REALTIME for dates
 * (expiry, mtimes) and for pthread_cond_timedwait's default clock.
 */
#ifndef GOBLIN_CLOCK_H
#define GOBLIN_CLOCK_H

#include <stdint.h>
#include <time.h>

#define GS_NS_PER_SEC 1000000000ll

/* Clock @id now, in nanoseconds (int64_t: 292 years either way). */
static inline int64_t gs_clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * GS_NS_PER_SEC + ts.tv_nsec;
}

/* Monotonic nanoseconds: for intervals, never for dates. */
static inline int64_t gs_mono_ns(void)
{
	return gs_clock_ns(CLOCK_MONOTONIC);
}

/* Monotonic milliseconds: origin timeouts, retry backoffs. */
static inline int64_t gs_mono_ms(void)
{
	return gs_mono_ns() / 1000000;
}

/* Monotonic whole seconds: activity and idle timeouts. */
static inline int64_t gs_mono_sec(void)
{
	return gs_mono_ns() / GS_NS_PER_SEC;
}

/* Nanoseconds since the epoch. */
static inline int64_t gs_real_ns(void)
{
	return gs_clock_ns(CLOCK_REALTIME);
}

/*
 * The time @ns nanoseconds from now on clock @id, as a timespec: the
 * deadline of a pthread_cond_timedwait() (CLOCK_REALTIME unless the
 * condition variable was told otherwise) or a clock_nanosleep().
 */
static inline struct timespec gs_clock_after(clockid_t id, int64_t ns)
{
	int64_t t = gs_clock_ns(id) + ns;
	struct timespec ts;

	ts.tv_sec = (time_t)(t / GS_NS_PER_SEC);
	ts.tv_nsec = (long)(t % GS_NS_PER_SEC);
	return ts;
}

#endif
