/* SPDX-License-Identifier: BSD-3-Clause */
/* The key index: a chained hash table over intrusive nodes, XXH3 keyed. */
#ifndef GS_INDEX_H
#define GS_INDEX_H

#include <stddef.h>
#include <stdint.h>

struct idx_node {
	struct idx_node *next;
	uint64_t hash;
	const uint8_t *key;
	uint32_t klen;
};

struct index {
	struct idx_node **b;
	uint64_t mask; /* buckets - 1 */
	uint64_t count;
};

uint64_t index_hash(const void *key, size_t klen);
int index_init(struct index *ix, uint64_t buckets);
void index_release(struct index *ix);
struct idx_node *index_find(struct index *ix, uint64_t hash, const void *key,
			    size_t klen);
/* Insert @n (n->hash, key, klen set); the key must not be present. */
void index_insert(struct index *ix, struct idx_node *n);
void index_remove(struct index *ix, struct idx_node *n);
/* Iterate: start with *pos = 0 and cur NULL; returns NULL at the end. */
struct idx_node *index_next(struct index *ix, uint64_t *pos,
			    struct idx_node *cur);

#endif
