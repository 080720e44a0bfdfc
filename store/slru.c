/* SPDX-License-Identifier: BSD-3-Clause */
/* Segmented LRU eviction order (see slru.h). */
#include <assert.h>
#include "slru.h"

void slru_init(struct slru *q, uint64_t prot_max)
{
	list_init(&q->prob);
	list_init(&q->prot);
	q->nprob = q->nprot = q->wprot = 0;
	q->prot_max = prot_max;
}

void slru_node_init(struct slru_node *n)
{
	list_init(&n->l);
	n->seg = SLRU_NONE;
}

void slru_insert(struct slru *q, struct slru_node *n, uint32_t w)
{
	assert(n->seg == SLRU_NONE);
	n->w = w;
	list_push(&q->prob, &n->l);
	n->seg = SLRU_PROBATION;
	q->nprob++;
}

void slru_remove(struct slru *q, struct slru_node *n)
{
	if (n->seg == SLRU_NONE)
		return;
	list_del(&n->l);
	if (n->seg == SLRU_PROBATION) {
		assert(q->nprob > 0);
		q->nprob--;
	} else {
		assert(q->nprot > 0 && q->wprot >= n->w);
		q->nprot--;
		q->wprot -= n->w;
	}
	n->seg = SLRU_NONE;
}

void slru_hit(struct slru *q, struct slru_node *n)
{
	if (n->seg == SLRU_NONE)
		return;
	slru_remove(q, n);
	list_push(&q->prot, &n->l);
	n->seg = SLRU_PROTECTED;
	q->nprot++;
	q->wprot += n->w;
	/* Keep protected within its share; its coldest go back to probation. */
	while (q->nprot > 1 && q->wprot > q->prot_max) {
		struct slru_node *d =
			list_entry(q->prot.prev, struct slru_node, l);
		slru_remove(q, d);
		list_push(&q->prob, &d->l);
		d->seg = SLRU_PROBATION;
		q->nprob++;
	}
}

struct slru_node *slru_next_victim(struct slru *q, struct slru_node *cur)
{
	struct list_head *p;

	if (!cur)
		p = q->prob.prev;
	else
		p = cur->l.prev;
	if (cur && cur->seg == SLRU_PROBATION && p == &q->prob)
		p = q->prot.prev;
	else if (!cur && p == &q->prob)
		p = q->prot.prev;
	if (p == &q->prob || p == &q->prot)
		return NULL;
	return list_entry(p, struct slru_node, l);
}
