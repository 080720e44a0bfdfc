/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Segmented LRU: new entries enter a probation segment and move to the
 * protected segment on their second hit, so a one-pass scan only churns
 * probation.  One instance per tier (RAM heads, small arena, SSD).
 */
#ifndef GS_SLRU_H
#define GS_SLRU_H

#include <stdbool.h>
#include <stdint.h>
#include "list.h"

enum { SLRU_NONE = 0, SLRU_PROBATION, SLRU_PROTECTED };

struct slru_node {
	struct list_head l;
	uint8_t seg; /* SLRU_* */
	uint32_t w;  /* weight: what the entry costs its tier */
};

struct slru {
	struct list_head prob, prot; /* front = most recent */
	uint64_t nprob, nprot;	     /* entries */
	uint64_t wprot;		     /* weight in protected */
	uint64_t prot_max;	     /* weight protected may hold */
};

/*
 * @prot_max is the weight the protected segment may hold, a share of the
 * tier's capacity (not of what it holds now: a tier that is filling must
 * still be able to protect its hot entries from the scan that fills it).
 */
void slru_init(struct slru *q, uint64_t prot_max);
void slru_node_init(struct slru_node *n);
/* A new entry of weight @w: probation, most recent. */
void slru_insert(struct slru *q, struct slru_node *n, uint32_t w);
/* A hit: promote to (or refresh in) protected, demoting its overflow. */
void slru_hit(struct slru *q, struct slru_node *n);
void slru_remove(struct slru *q, struct slru_node *n);
static inline bool slru_linked(const struct slru_node *n)
{
	return n->seg != SLRU_NONE;
}

/*
 * Eviction candidates, coldest first: probation from its LRU end, then
 * protected.  Start with cur = NULL; returns NULL after the last.  The
 * caller may remove the returned node before asking for the next one only
 * if it saved the next one first (slru_next_victim(q, cur) before removal).
 */
struct slru_node *slru_next_victim(struct slru *q, struct slru_node *cur);

#endif
