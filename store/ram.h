/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RAM: pre-faulted regions (HugeTLB when reservable, mlocked unless told
 * not to), the fixed head slots carved from one, and the packed
 * small-object arena carved from another.
 */
#ifndef GS_RAM_H
#define GS_RAM_H

#include <stdbool.h>
#include <stdint.h>
#include "list.h"

struct ram_region {
	uint8_t *base;
	uint64_t size;
	uint64_t page; /* page size: 4 KiB, or 2 MiB on HugeTLB */
	bool hugetlb;
	bool mlocked;
};

/* Map @size bytes (rounded up to @block).  0 or -errno. */
int ram_region_map(struct ram_region *r, uint64_t size, uint64_t block,
		   bool try_huge, bool lock);
void ram_region_unmap(struct ram_region *r);

/* Fixed-size head slots: a stack of free slot numbers. */
struct slots {
	uint8_t *base;
	uint64_t slot_size;
	uint32_t nslots;
	uint32_t nfree;
	uint32_t *free; /* stack of free slot numbers */
};

int slots_init(struct slots *sl, uint8_t *base, uint64_t size,
	       uint64_t slot_size);
void slots_release(struct slots *sl);
uint8_t *slots_get(struct slots *sl); /* NULL when none free */
void slots_put(struct slots *sl, uint8_t *slot);

/*
 * The small-object arena: blocks filled by bump allocation, byte-granular
 * up to 8-byte rounding.  Freed bytes are only counted; a block whose live
 * bytes reach zero is recycled, and arena_compact() slides the live items
 * of a sparse block together to give it a contiguous free tail.
 */
struct arena_item {
	struct list_head l; /* in its block's item list */
	uint8_t *ptr;
	uint32_t len; /* allocated bytes (rounded) */
	uint32_t blk;
};

struct arena_blk {
	uint64_t used; /* bump offset */
	uint64_t live; /* bytes of live items */
	struct list_head items;
};

struct arena {
	uint8_t *mem;
	uint64_t blk_size;
	uint32_t nblk;
	uint32_t cur; /* open block, UINT32_MAX when none */
	struct arena_blk *blks;
	uint32_t *free; /* stack of empty blocks */
	uint32_t nfree;
	uint64_t live; /* bytes of live items, all blocks */
};

#define ARENA_ALIGN 8

int arena_init(struct arena *a, uint8_t *mem, uint64_t size, uint64_t blk);
void arena_release(struct arena *a);
/* 0, -ENOSPC (full: compact or evict, then retry) or -E2BIG (never fits). */
int arena_alloc(struct arena *a, struct arena_item *it, uint64_t len);
void arena_free(struct arena *a, struct arena_item *it);
/*
 * Compact the block with the most garbage (at least half of its used
 * bytes) by sliding its items down in place, when every item passes
 * @movable; it becomes the open block.  Returns 1 when a block was
 * compacted, else 0.  Moved items' ptr fields are updated.
 */
int arena_compact(struct arena *a,
		  bool (*movable)(struct arena_item *it, void *arg), void *arg);
/* Bytes in blocks that are not empty (open or holding items). */
uint64_t arena_used(const struct arena *a);

#endif
