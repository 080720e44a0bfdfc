/* SPDX-License-Identifier: BSD-3-Clause */
/* Intrusive doubly-linked lists (the kernel's shape, our names). */
#ifndef GS_LIST_H
#define GS_LIST_H

#include <stddef.h>

struct list_head {
	struct list_head *prev, *next;
};

#define LIST_HEAD_INIT(n)  \
	{                  \
		&(n), &(n) \
	}
#define list_entry(p, type, member) \
	((type *)((char *)(p)-offsetof(type, member)))

static inline void list_init(struct list_head *h)
{
	h->prev = h->next = h;
}

static inline int list_empty(const struct list_head *h)
{
	return h->next == h;
}

static inline void list_add_after(struct list_head *n, struct list_head *at)
{
	n->next = at->next;
	n->prev = at;
	at->next->prev = n;
	at->next = n;
}

/* Insert at the front (most recent end). */
static inline void list_push(struct list_head *h, struct list_head *n)
{
	list_add_after(n, h);
}

static inline void list_del(struct list_head *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	n->prev = n->next = n;
}

#endif
