/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Marks of the meta protocol that the store has no field for: "stale"
 * (md I) and "a client won the recache" (mg N/R).  Kept in memory beside
 * the store, each for one version (cas) of a key; advisory: a full table
 * or a restart forgets them (see goblind(8)).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "memcache.h"

#define METATAB_BUCKETS 4096
#define METATAB_MAX	65536 /* marks kept at once */

struct mark {
	struct mark *next;
	uint64_t cas;
	unsigned bits;
	size_t klen;
	char key[];
};

struct metatab {
	pthread_mutex_t lock;
	size_t n;			 /* protected by lock */
	struct mark *b[METATAB_BUCKETS]; /* protected by lock */
};

static size_t bucket(const void *key, size_t klen)
{
	const unsigned char *p = key;
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < klen; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return (size_t)(h % METATAB_BUCKETS);
}

struct metatab *metatab_new(void)
{
	struct metatab *t = calloc(1, sizeof(*t));

	if (t)
		pthread_mutex_init(&t->lock, NULL);
	return t;
}

/* Called with t->lock held. */
static void clear_all(struct metatab *t)
{
	for (size_t i = 0; i < METATAB_BUCKETS; i++) {
		while (t->b[i]) {
			struct mark *m = t->b[i];

			t->b[i] = m->next;
			free(m);
		}
	}
	t->n = 0;
}

void metatab_free(struct metatab *t)
{
	if (!t)
		return;
	clear_all(t);
	pthread_mutex_destroy(&t->lock);
	free(t);
}

/* Called with t->lock held. */
static struct mark **find(struct metatab *t, const void *key, size_t klen)
{
	struct mark **p = &t->b[bucket(key, klen)];

	while (*p && ((*p)->klen != klen || memcmp((*p)->key, key, klen)))
		p = &(*p)->next;
	return p;
}

unsigned metatab_get(struct metatab *t, const void *key, size_t klen,
		     uint64_t cas)
{
	struct mark **p;
	unsigned bits = 0;

	pthread_mutex_lock(&t->lock);
	p = find(t, key, klen);
	if (*p && (*p)->cas == cas)
		bits = (*p)->bits;
	pthread_mutex_unlock(&t->lock);
	return bits;
}

unsigned metatab_set(struct metatab *t, const void *key, size_t klen,
		     uint64_t cas, unsigned bits)
{
	struct mark **p, *m;
	unsigned old = 0;

	pthread_mutex_lock(&t->lock);
	p = find(t, key, klen);
	m = *p;
	if (m && m->cas != cas)
		m->bits = 0; /* a mark of an older version */
	if (!m) {
		if (t->n >= METATAB_MAX) {
			clear_all(t);
			p = find(t, key, klen);
		}
		m = malloc(sizeof(*m) + klen);
		if (!m)
			goto out;
		m->next = NULL;
		m->bits = 0;
		m->klen = klen;
		memcpy(m->key, key, klen);
		*p = m;
		t->n++;
	}
	old = m->bits;
	m->cas = cas;
	m->bits |= bits;
out:
	pthread_mutex_unlock(&t->lock);
	return old;
}

void metatab_clear(struct metatab *t, const void *key, size_t klen)
{
	struct mark **p, *m;

	pthread_mutex_lock(&t->lock);
	p = find(t, key, klen);
	m = *p;
	if (m) {
		*p = m->next;
		free(m);
		t->n--;
	}
	pthread_mutex_unlock(&t->lock);
}
