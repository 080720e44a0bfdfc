/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * SSD space: a bitmap of fixed allocation units over one data file.  An
 * object gets a short list of extents (runs of free units), found next-fit
 * from a rotating cursor so that fresh writes stay mostly sequential.
 * Units below the mark (every unit ever handed out or claimed) are taken
 * before any unit above it: the file system already holds blocks for them,
 * so room freed by a delete is found at once, and the data file grows into
 * its holes only when the units it has are all in use.
 */
#ifndef GS_SPACE_H
#define GS_SPACE_H

#include <stdint.h>

struct extent {
	uint64_t off; /* device offset, bytes, unit aligned */
	uint64_t len; /* bytes, unit multiple */
	uint8_t tier; /* TIER_SSD or TIER_HDD: whose file */
	/* may be held by another version too (an append shares the
	 * extents of the version it grew from): journalled, so that replay
	 * shares it instead of taking it from its other holder */
	uint8_t shared;
};

enum { TIER_SSD = 0, TIER_HDD = 1, NTIERS = 2 };

struct space {
	uint64_t *bits;	 /* 1 = used */
	uint64_t units;	 /* units the bitmap covers */
	uint64_t limit;	 /* capacity: allocation stays below it */
	uint64_t used;	 /* units in use, beyond the limit too */
	uint64_t cursor; /* next-fit start */
	uint64_t mark;	 /* units [0, mark) have been in use */
	uint64_t unit;	 /* bytes per unit */
	/* holders of each unit beyond the first (space_share), allocated
	 * at the first share; NULL while no unit is shared */
	uint8_t *extra;
};

int space_init(struct space *sp, uint64_t capacity, uint64_t unit);
/*
 * Let the bitmap cover @units units, beyond the capacity, so that extents
 * written under a larger capacity can still be claimed (and then evicted).
 */
int space_grow_map(struct space *sp, uint64_t units);
void space_release(struct space *sp);

/* Units [0, @units) are backed by the file (a data file found at open). */
void space_set_mark(struct space *sp, uint64_t units);

/*
 * Allocate @bytes (rounded up to units) as at most @max extents into @ext.
 * Returns the number of extents, -ENOSPC when not enough free units (nothing
 * is allocated then), or -E2BIG when it would take more than @max extents.
 */
int space_alloc(struct space *sp, uint64_t bytes, struct extent *ext, int max);

/* Mark an extent used (recovery).  -EEXIST when any unit is taken, -ERANGE
 * when it lies beyond the capacity; nothing changes then. */
int space_claim(struct space *sp, const struct extent *e);

/*
 * Units of an extent may have several holders (versions that share them):
 * space_free() gives a unit back only when its last holder lets go.
 */
void space_free(struct space *sp, const struct extent *e);

/*
 * One more holder for each unit of @e, all in use.  0, -ENOMEM, or
 * -EMLINK when a unit has as many holders as it can count (nothing changes
 * then: the caller copies instead of sharing).
 */
int space_share(struct space *sp, const struct extent *e);

/* Replay of a shared extent: claim its free units, share its used ones.
 * -ERANGE, -ENOMEM or -EMLINK; nothing changes then. */
int space_claim_shared(struct space *sp, const struct extent *e);

static inline uint64_t space_free_units(const struct space *sp)
{
	return sp->used < sp->limit ? sp->limit - sp->used : 0;
}

#endif
