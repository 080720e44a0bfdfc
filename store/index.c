/* SPDX-License-Identifier: BSD-3-Clause */
/* Chained hash index (see index.h); doubles when the load passes 1. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "hash.h"
#include "index.h"

uint64_t index_hash(const void *key, size_t klen)
{
	return XXH3_64bits(key, klen);
}

int index_init(struct index *ix, uint64_t buckets)
{
	uint64_t n = 16;

	while (n < buckets)
		n <<= 1;
	ix->b = calloc(n, sizeof(*ix->b));
	if (!ix->b)
		return -ENOMEM;
	ix->mask = n - 1;
	ix->count = 0;
	return 0;
}

void index_release(struct index *ix)
{
	free(ix->b);
	ix->b = NULL;
}

struct idx_node *index_find(struct index *ix, uint64_t hash, const void *key,
			    size_t klen)
{
	struct idx_node *n = ix->b[hash & ix->mask];

	for (; n; n = n->next)
		if (n->hash == hash && n->klen == klen &&
		    memcmp(n->key, key, klen) == 0)
			return n;
	return NULL;
}

static void grow(struct index *ix)
{
	uint64_t nb = (ix->mask + 1) * 2;
	struct idx_node **b = calloc(nb, sizeof(*b));

	if (!b)
		return; /* stay at a higher load; lookups still work */
	for (uint64_t i = 0; i <= ix->mask; i++) {
		struct idx_node *n = ix->b[i], *next;

		for (; n; n = next) {
			next = n->next;
			n->next = b[n->hash & (nb - 1)];
			b[n->hash & (nb - 1)] = n;
		}
	}
	free(ix->b);
	ix->b = b;
	ix->mask = nb - 1;
}

void index_insert(struct index *ix, struct idx_node *n)
{
	struct idx_node **h;

	if (ix->count >= ix->mask + 1)
		grow(ix);
	h = &ix->b[n->hash & ix->mask];
	n->next = *h;
	*h = n;
	ix->count++;
}

void index_remove(struct index *ix, struct idx_node *n)
{
	struct idx_node **p = &ix->b[n->hash & ix->mask];

	for (; *p; p = &(*p)->next)
		if (*p == n) {
			*p = n->next;
			n->next = NULL;
			ix->count--;
			return;
		}
}

struct idx_node *index_next(struct index *ix, uint64_t *pos,
			    struct idx_node *cur)
{
	if (cur && cur->next)
		return cur->next;
	if (cur)
		(*pos)++;
	for (; *pos <= ix->mask; (*pos)++)
		if (ix->b[*pos])
			return ix->b[*pos];
	return NULL;
}
