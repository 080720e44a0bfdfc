/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Segmented LRU: order, promotion, weighted demotion, scan resistance,
 * removal.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "slru.h"

struct ent {
	struct slru_node n;
	int id;
	int hot;
};

#define ID(node) (list_entry((node), struct ent, n)->id)

static void ents_init(struct ent *e, int count)
{
	for (int i = 0; i < count; i++) {
		slru_node_init(&e[i].n);
		e[i].id = i;
		e[i].hot = 0;
		assert_false(slru_linked(&e[i].n));
	}
}

/*
 * The victim order as ids; also checks it agrees with the counters and
 * that wprot is the weight of what is in protected.
 */
static int victims(struct slru *q, int *ids, int max)
{
	int n = 0;
	uint64_t prob = 0, prot = 0, wprot = 0;
	int seen_prot = 0;

	for (struct slru_node *v = slru_next_victim(q, NULL); v;
	     v = slru_next_victim(q, v)) {
		assert_true(n < max);
		ids[n++] = ID(v);
		if (v->seg == SLRU_PROBATION) {
			assert_false(seen_prot); /* probation first */
			prob++;
		} else {
			assert_int_equal(v->seg, SLRU_PROTECTED);
			seen_prot = 1;
			prot++;
			wprot += v->w;
		}
	}
	assert_int_equal(prob, q->nprob);
	assert_int_equal(prot, q->nprot);
	assert_int_equal(wprot, q->wprot);
	return n;
}

static void expect_order(struct slru *q, const int *want, int n)
{
	int got[64];

	assert_int_equal(victims(q, got, 64), n);
	for (int i = 0; i < n; i++)
		assert_int_equal(got[i], want[i]);
}

static void test_empty(void **state)
{
	struct slru q;

	(void)state;
	slru_init(&q, 80);
	assert_null(slru_next_victim(&q, NULL));
	assert_int_equal(q.nprob, 0);
	assert_int_equal(q.nprot, 0);
	assert_int_equal(q.wprot, 0);
	assert_int_equal(q.prot_max, 80);
}

static void test_insertion_order(void **state)
{
	struct slru q;
	struct ent e[5];
	static const int want[] = { 0, 1, 2, 3, 4 };

	(void)state;
	slru_init(&q, 80);
	ents_init(e, 5);
	for (int i = 0; i < 5; i++) {
		slru_insert(&q, &e[i].n, (uint32_t)(i + 1));
		assert_true(slru_linked(&e[i].n));
		assert_int_equal(e[i].n.seg, SLRU_PROBATION);
		assert_int_equal(e[i].n.w, i + 1);
	}
	assert_int_equal(q.nprob, 5);
	assert_int_equal(q.nprot, 0);
	assert_int_equal(q.wprot, 0); /* probation weight is not counted */
	expect_order(&q, want, 5);    /* oldest first */
}

static void test_hit_promotes(void **state)
{
	struct slru q;
	struct ent e[5];
	static const int want1[] = { 0, 1, 3, 4, 2 };
	static const int want2[] = { 0, 3, 4, 2, 1 };
	static const int want3[] = { 0, 3, 4, 1, 2 };

	(void)state;
	slru_init(&q, 80);
	ents_init(e, 5);
	for (int i = 0; i < 5; i++)
		slru_insert(&q, &e[i].n, 1);

	slru_hit(&q, &e[2].n);
	assert_int_equal(e[2].n.seg, SLRU_PROTECTED);
	assert_int_equal(q.nprob, 4);
	assert_int_equal(q.nprot, 1);
	assert_int_equal(q.wprot, 1);
	expect_order(&q, want1, 5);

	slru_hit(&q, &e[1].n);
	assert_int_equal(q.nprot, 2);
	assert_int_equal(q.wprot, 2);
	expect_order(&q, want2, 5);

	/* a hit in protected refreshes it there, weight counted once */
	slru_hit(&q, &e[2].n);
	assert_int_equal(e[2].n.seg, SLRU_PROTECTED);
	assert_int_equal(q.nprot, 2);
	assert_int_equal(q.wprot, 2);
	assert_int_equal(q.nprob, 3);
	expect_order(&q, want3, 5);
}

/* Unit weights: protected holds at most prot_max entries. */
static void test_demotion(void **state)
{
	struct slru q;
	struct ent e[10];
	static const int want[] = { 6, 7, 8, 9, 0, 1, 2, 3, 4, 5 };
	static const int want2[] = { 7, 8, 9, 0, 1, 3, 4, 5, 2, 6 };

	(void)state;
	slru_init(&q, 5);
	ents_init(e, 10);
	for (int i = 0; i < 10; i++)
		slru_insert(&q, &e[i].n, 1);
	for (int i = 0; i < 5; i++)
		slru_hit(&q, &e[i].n);
	assert_int_equal(q.nprot, 5);
	assert_int_equal(q.wprot, 5); /* exactly prot_max: allowed */
	assert_int_equal(e[0].n.seg, SLRU_PROTECTED);
	/* the sixth would make 6 > 5: the coldest protected, e0, goes back */
	slru_hit(&q, &e[5].n);
	assert_int_equal(q.nprot, 5);
	assert_int_equal(q.wprot, 5);
	assert_int_equal(q.nprob, 5);
	assert_int_equal(e[0].n.seg, SLRU_PROBATION);
	assert_int_equal(e[5].n.seg, SLRU_PROTECTED);
	/* demoted to the recent end of probation: a second chance */
	expect_order(&q, want, 10);

	slru_hit(&q, &e[2].n); /* refresh: no demotion */
	assert_int_equal(e[1].n.seg, SLRU_PROTECTED);
	assert_int_equal(q.nprot, 5);
	slru_hit(&q, &e[6].n); /* e1 demoted */
	assert_int_equal(e[1].n.seg, SLRU_PROBATION);
	assert_int_equal(q.nprot, 5);
	assert_int_equal(q.wprot, 5);
	expect_order(&q, want2, 10);
}

/*
 * Weights that differ: prot_max 10 and entries of weight 4 leave room for
 * two in protected; a hit on a third demotes the coldest protected one.
 */
static void test_weighted_demotion(void **state)
{
	struct slru q;
	struct ent e[6];
	static const int want1[] = { 3, 4, 5, 0, 1, 2 };

	(void)state;
	slru_init(&q, 10);
	ents_init(e, 6);
	for (int i = 0; i < 6; i++)
		slru_insert(&q, &e[i].n, 4);

	slru_hit(&q, &e[0].n);
	slru_hit(&q, &e[1].n);
	assert_int_equal(q.nprot, 2);
	assert_int_equal(q.wprot, 8);
	assert_int_equal(e[0].n.seg, SLRU_PROTECTED);
	assert_int_equal(e[1].n.seg, SLRU_PROTECTED);

	/* 12 > 10: e0, the coldest protected, goes to probation's front */
	slru_hit(&q, &e[2].n);
	assert_int_equal(q.nprot, 2);
	assert_int_equal(q.wprot, 8);
	assert_int_equal(q.nprob, 4);
	assert_int_equal(e[0].n.seg, SLRU_PROBATION);
	assert_int_equal(e[1].n.seg, SLRU_PROTECTED);
	assert_int_equal(e[2].n.seg, SLRU_PROTECTED);
	/* probation: 3 4 5 then e0 (most recent); protected: 1 (cold), 2 */
	expect_order(&q, want1, 6);

	/* a refresh in protected adds no weight and demotes nothing */
	slru_hit(&q, &e[1].n);
	assert_int_equal(q.nprot, 2);
	assert_int_equal(q.wprot, 8);
	assert_int_equal(e[2].n.seg, SLRU_PROTECTED);
	{
		static const int want[] = { 3, 4, 5, 0, 2, 1 };

		expect_order(&q, want, 6);
	}
	/* removal from protected gives its weight back: room for e0 */
	slru_remove(&q, &e[2].n);
	assert_int_equal(q.wprot, 4);
	slru_hit(&q, &e[0].n);
	assert_int_equal(q.nprot, 2);
	assert_int_equal(q.wprot, 8);
	assert_int_equal(e[1].n.seg, SLRU_PROTECTED);
	slru_insert(&q, &e[2].n, 4);
	{
		static const int want[] = { 3, 4, 5, 2, 1, 0 };

		expect_order(&q, want, 6);
	}
}

/* One heavy hit may demote several light ones, coldest first. */
static void test_weighted_heavy_hit(void **state)
{
	struct slru q;
	struct ent e[5];
	/* e0 then e1 demoted, each to probation's front: e1 is newer */
	static const int want[] = { 4, 0, 1, 2, 3 };

	(void)state;
	slru_init(&q, 10);
	ents_init(e, 5);
	for (int i = 0; i < 3; i++)
		slru_insert(&q, &e[i].n, 1);
	slru_insert(&q, &e[3].n, 9);
	slru_insert(&q, &e[4].n, 20);
	for (int i = 0; i < 3; i++)
		slru_hit(&q, &e[i].n);
	assert_int_equal(q.wprot, 3);

	/* 12 > 10: e0 goes (11 > 10), then e1 (10): e2 and e3 stay */
	slru_hit(&q, &e[3].n);
	assert_int_equal(q.nprot, 2);
	assert_int_equal(q.wprot, 10);
	assert_int_equal(e[0].n.seg, SLRU_PROBATION);
	assert_int_equal(e[1].n.seg, SLRU_PROBATION);
	assert_int_equal(e[2].n.seg, SLRU_PROTECTED);
	assert_int_equal(e[3].n.seg, SLRU_PROTECTED);
	expect_order(&q, want, 5);

	/*
	 * An entry heavier than prot_max on its own: everything else is
	 * demoted but it stays, alone, in protected.
	 */
	slru_hit(&q, &e[4].n);
	assert_int_equal(q.nprot, 1);
	assert_int_equal(q.wprot, 20);
	assert_int_equal(e[4].n.seg, SLRU_PROTECTED);
	assert_int_equal(e[2].n.seg, SLRU_PROBATION);
	assert_int_equal(e[3].n.seg, SLRU_PROBATION);
	{
		static const int w[] = { 0, 1, 2, 3, 4 };

		expect_order(&q, w, 5);
	}
	/* and the next hit sends it back, being the coldest */
	slru_hit(&q, &e[0].n);
	assert_int_equal(q.nprot, 1);
	assert_int_equal(q.wprot, 1);
	assert_int_equal(e[4].n.seg, SLRU_PROBATION);
	{
		static const int w[] = { 1, 2, 3, 4, 0 };

		expect_order(&q, w, 5);
	}
}

/*
 * A tier that is still filling: fewer entries than prot_max allows.  All
 * its hot entries stay protected (a share of what it holds now would
 * demote some), so the scan that fills the tier cannot push them out.
 */
static void test_small_population(void **state)
{
	enum { CAP = 100, PROT = 80, HOT = 10, SCAN = 1000 };
	static struct ent e[HOT + SCAN];
	struct slru q;
	uint64_t size = 0;

	(void)state;
	slru_init(&q, PROT);
	ents_init(e, HOT + SCAN);
	for (int i = 0; i < HOT; i++) {
		slru_insert(&q, &e[i].n, 1);
		size++;
	}
	for (int i = 0; i < HOT; i++) {
		e[i].hot = 1;
		slru_hit(&q, &e[i].n);
		/* all of the population hot: none demoted */
		assert_int_equal(q.nprot, i + 1);
		assert_int_equal(q.nprob, HOT - i - 1);
	}
	for (int i = 0; i < HOT; i++)
		assert_int_equal(e[i].n.seg, SLRU_PROTECTED);
	assert_int_equal(q.wprot, HOT);
	/* hit again, in any order: still nothing demoted */
	for (int i = HOT - 1; i >= 0; i--)
		slru_hit(&q, &e[i].n);
	assert_int_equal(q.nprot, HOT);
	assert_int_equal(q.nprob, 0);

	/* the scan fills the tier, then evicts the coldest to stay in it */
	for (int i = HOT; i < HOT + SCAN; i++) {
		slru_insert(&q, &e[i].n, 1);
		size++;
		if (size <= CAP)
			continue;
		struct slru_node *v = slru_next_victim(&q, NULL);

		assert_non_null(v);
		assert_false(list_entry(v, struct ent, n)->hot);
		assert_int_equal(v->seg, SLRU_PROBATION);
		slru_remove(&q, v);
		size--;
	}
	assert_int_equal(q.nprot + q.nprob, CAP);
	assert_int_equal(q.nprot, HOT);
	for (int i = 0; i < HOT; i++)
		assert_int_equal(e[i].n.seg, SLRU_PROTECTED);
}

/* A one-entry population: its hit keeps it, whatever prot_max. */
static void test_single_entry(void **state)
{
	static const uint64_t maxes[] = { 0, 1, 100 };

	(void)state;
	for (size_t m = 0; m < sizeof(maxes) / sizeof(maxes[0]); m++) {
		struct slru q;
		struct ent e[1];

		slru_init(&q, maxes[m]);
		ents_init(e, 1);
		slru_insert(&q, &e[0].n, 5);
		slru_hit(&q, &e[0].n);
		assert_int_equal(e[0].n.seg, SLRU_PROTECTED);
		assert_int_equal(q.nprot, 1);
		assert_int_equal(q.wprot, 5);
		assert_int_equal(q.nprob, 0);
	}
}

/*
 * Random operations with random weights, checked step by step against a
 * plain model of the two segments (arrays, front = most recent).
 */
struct model {
	int prob[256], prot[256];
	int nprob, nprot;
	uint64_t wprot;
};

static int mdel(int *a, int *n, int id)
{
	for (int i = 0; i < *n; i++)
		if (a[i] == id) {
			memmove(a + i, a + i + 1,
				(size_t)(*n - i - 1) * sizeof(int));
			(*n)--;
			return 1;
		}
	return 0;
}

static void mpush(int *a, int *n, int id)
{
	memmove(a + 1, a, (size_t)*n * sizeof(int));
	a[0] = id;
	(*n)++;
}

static void test_demotion_bound_random(void **state)
{
	enum { N = 200 };
	static struct ent e[N];
	static uint32_t w[N];
	static const uint64_t maxes[] = { 0, 1, 7, 20, 100, 400, 1000, 5000 };
	uint64_t x = 12345;

	(void)state;
	for (size_t p = 0; p < sizeof(maxes) / sizeof(maxes[0]); p++) {
		struct slru q;
		struct model m = { .nprob = 0 };
		int got[N];
		int demotions = 0;

		slru_init(&q, maxes[p]);
		ents_init(e, N);
		for (int step = 0; step < 20000; step++) {
			struct ent *t;
			int id;

			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			id = (int)(x % N);
			t = &e[id];
			switch (x >> 32 & 3) {
			case 0:
				slru_remove(&q, &t->n);
				if (!mdel(m.prob, &m.nprob, id) &&
				    mdel(m.prot, &m.nprot, id))
					m.wprot -= w[id];
				break;
			case 1:
				if (slru_linked(&t->n))
					break;
				w[id] = (uint32_t)(x >> 40) % 16 + 1;
				slru_insert(&q, &t->n, w[id]);
				mpush(m.prob, &m.nprob, id);
				break;
			default:
				slru_hit(&q, &t->n);
				if (mdel(m.prob, &m.nprob, id)) {
				} else if (mdel(m.prot, &m.nprot, id)) {
					m.wprot -= w[id];
				} else {
					break; /* unlinked: ignored */
				}
				mpush(m.prot, &m.nprot, id);
				m.wprot += w[id];
				while (m.nprot > 1 && m.wprot > maxes[p]) {
					int d = m.prot[--m.nprot];

					m.wprot -= w[d];
					mpush(m.prob, &m.nprob, d);
					demotions++;
				}
				break;
			}
			/* the bound holds after every operation */
			assert_true(q.nprot <= 1 || q.wprot <= maxes[p]);
			assert_int_equal(q.nprob, m.nprob);
			assert_int_equal(q.nprot, m.nprot);
			assert_int_equal(q.wprot, m.wprot);
			if (step % 16 && step != 19999)
				continue;
			assert_int_equal(victims(&q, got, N),
					 m.nprob + m.nprot);
			for (int i = 0; i < m.nprob; i++)
				assert_int_equal(got[i],
						 m.prob[m.nprob - 1 - i]);
			for (int i = 0; i < m.nprot; i++)
				assert_int_equal(got[m.nprob + i],
						 m.prot[m.nprot - 1 - i]);
		}
		/* the small bounds must have made the test demote */
		if (maxes[p] <= 100)
			assert_true(demotions > 0);
	}
}

/*
 * A cache of 100 with 20 hot (hit) entries, then a one-pass scan of 1000
 * new keys, evicting the coldest victim at each insert: no hot entry may
 * go while probation still has anything.
 */
static void test_scan_resistance(void **state)
{
	enum { CAP = 100, HOT = 20, SCAN = 1000 };
	static struct ent e[CAP + SCAN];
	struct slru q;
	uint64_t size = 0;

	(void)state;
	slru_init(&q, CAP * 4 / 5);
	ents_init(e, CAP + SCAN);
	for (int i = 0; i < CAP; i++) {
		slru_insert(&q, &e[i].n, 1);
		size++;
	}
	for (int i = 0; i < HOT; i++) {
		e[i * 5].hot = 1;
		slru_hit(&q, &e[i * 5].n);
	}
	assert_int_equal(q.nprot, HOT);
	assert_int_equal(q.wprot, HOT);
	for (int i = CAP; i < CAP + SCAN; i++) {
		struct slru_node *v;

		slru_insert(&q, &e[i].n, 1);
		size++;
		v = slru_next_victim(&q, NULL);
		assert_non_null(v);
		assert_false(list_entry(v, struct ent, n)->hot);
		assert_int_equal(v->seg, SLRU_PROBATION);
		slru_remove(&q, v);
		size--;
	}
	assert_int_equal(size, CAP);
	assert_int_equal(q.nprot + q.nprob, CAP);
	for (int i = 0; i < HOT; i++) {
		assert_true(slru_linked(&e[i * 5].n));
		assert_int_equal(e[i * 5].n.seg, SLRU_PROTECTED);
	}
	/* the survivors in probation are the newest scan entries */
	for (int i = CAP + SCAN - (CAP - HOT); i < CAP + SCAN; i++)
		assert_int_equal(e[i].n.seg, SLRU_PROBATION);

	/* only once probation is gone do the hot ones become victims */
	for (uint64_t k = 0; k < CAP - HOT; k++) {
		struct slru_node *v = slru_next_victim(&q, NULL);

		assert_false(list_entry(v, struct ent, n)->hot);
		slru_remove(&q, v);
	}
	assert_int_equal(q.nprob, 0);
	assert_true(list_entry(slru_next_victim(&q, NULL), struct ent, n)->hot);
}

/*
 * The same with weights: a tier of 1000 weight units, protected 800,
 * entries of 1..16 units; hot entries weighing 600 in all survive a scan
 * of 5000 entries that evicts by weight.
 */
static void test_scan_resistance_weighted(void **state)
{
	enum { CAP = 1000, SCAN = 5000, NE = 2000 + SCAN };
	static struct ent e[NE];
	static uint32_t w[NE];
	struct slru q;
	uint64_t total = 0, hotw = 0;
	int n = 0, nhot = 0;
	uint64_t x = 777;

	(void)state;
	slru_init(&q, CAP * 4 / 5);
	ents_init(e, NE);
	while (total < CAP - 16) {
		w[n] = (uint32_t)(n % 16) + 1;
		slru_insert(&q, &e[n].n, w[n]);
		total += w[n++];
	}
	for (int i = 0; i < n && hotw + w[i] <= 600; i += 2) {
		e[i].hot = 1;
		slru_hit(&q, &e[i].n);
		hotw += w[i];
		nhot++;
	}
	assert_int_equal(q.wprot, hotw);
	assert_int_equal(q.nprot, nhot);
	for (int s = 0; s < SCAN; s++, n++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		w[n] = (uint32_t)(x % 16) + 1;
		slru_insert(&q, &e[n].n, w[n]);
		total += w[n];
		while (total > CAP) {
			struct slru_node *v = slru_next_victim(&q, NULL);
			struct ent *d = list_entry(v, struct ent, n);

			assert_non_null(v);
			assert_false(d->hot);
			assert_int_equal(v->seg, SLRU_PROBATION);
			slru_remove(&q, v);
			total -= w[d->id];
		}
	}
	assert_int_equal(q.wprot, hotw);
	for (int i = 0; i < n; i++)
		if (e[i].hot)
			assert_int_equal(e[i].n.seg, SLRU_PROTECTED);
}

/* Remove victims while iterating, saving the next one first. */
static void test_remove_during_iteration(void **state)
{
	struct slru q;
	struct ent e[10];
	struct slru_node *v, *next;
	int order[10], n = 0;
	/* probation: 0 1 2 4 6 8 9 (old..new), protected: 3 5 7 (cold..hot) */
	static const int want[] = { 0, 1, 2, 4, 6, 8, 9, 3, 5, 7 };
	static const int left[] = { 1, 4, 8, 3, 7 };

	(void)state;
	slru_init(&q, 100);
	ents_init(e, 10);
	for (int i = 0; i < 10; i++)
		slru_insert(&q, &e[i].n, 1);
	slru_hit(&q, &e[3].n);
	slru_hit(&q, &e[5].n);
	slru_hit(&q, &e[7].n);

	for (v = slru_next_victim(&q, NULL); v; v = next) {
		next = slru_next_victim(&q, v);
		order[n] = ID(v);
		if (n % 2 == 0) {
			slru_remove(&q, v);
			assert_false(slru_linked(v));
		}
		n++;
	}
	assert_int_equal(n, 10);
	for (int i = 0; i < 10; i++)
		assert_int_equal(order[i], want[i]);
	assert_int_equal(q.nprob, 3);
	assert_int_equal(q.nprot, 2);
	assert_int_equal(q.wprot, 2);
	expect_order(&q, left, 5);

	/* removing the whole queue that way, across the segment boundary */
	for (v = slru_next_victim(&q, NULL); v; v = next) {
		next = slru_next_victim(&q, v);
		slru_remove(&q, v);
	}
	assert_int_equal(q.nprob + q.nprot, 0);
	assert_int_equal(q.wprot, 0);
	assert_null(slru_next_victim(&q, NULL));
	for (int i = 0; i < 10; i++)
		assert_false(slru_linked(&e[i].n));
}

static void test_remove_and_unlinked(void **state)
{
	struct slru q;
	struct ent e[4];
	static const int want[] = { 0, 3 };

	(void)state;
	slru_init(&q, 80);
	ents_init(e, 4);
	for (int i = 0; i < 4; i++)
		slru_insert(&q, &e[i].n, (uint32_t)(3 * i + 1));
	slru_hit(&q, &e[1].n);
	slru_hit(&q, &e[3].n);
	assert_int_equal(q.wprot, 4 + 10);
	slru_remove(&q, &e[1].n); /* from protected: its weight goes */
	assert_int_equal(q.wprot, 10);
	slru_hit(&q, &e[0].n);
	slru_remove(&q, &e[3].n);
	assert_int_equal(q.wprot, 1);
	slru_remove(&q, &e[2].n); /* from probation: no weight change */
	assert_int_equal(q.wprot, 1);
	slru_remove(&q, &e[0].n);
	assert_int_equal(q.nprot, 0);
	assert_int_equal(q.wprot, 0);
	assert_int_equal(q.nprob, 0);
	slru_insert(&q, &e[0].n, 1);
	slru_insert(&q, &e[3].n, 10);
	slru_remove(&q, &e[2].n); /* twice: no effect */
	slru_hit(&q, &e[2].n);	  /* unlinked: ignored */
	assert_false(slru_linked(&e[2].n));
	assert_int_equal(q.nprob, 2);
	assert_int_equal(q.nprot, 0);
	assert_int_equal(q.wprot, 0);
	expect_order(&q, want, 2);
	/* a removed node can come back as new, with a new weight */
	slru_insert(&q, &e[1].n, 2);
	assert_int_equal(e[1].n.seg, SLRU_PROBATION);
	assert_int_equal(e[1].n.w, 2);
	assert_int_equal(q.nprob, 3);
	slru_hit(&q, &e[1].n);
	assert_int_equal(q.wprot, 2);
}

/* Only protected entries: victims still come coldest first. */
static void test_protected_only(void **state)
{
	struct slru q;
	struct ent e[3];
	static const int want[] = { 2, 0, 1 };

	(void)state;
	slru_init(&q, 100);
	ents_init(e, 3);
	for (int i = 0; i < 3; i++)
		slru_insert(&q, &e[i].n, 1);
	slru_hit(&q, &e[2].n);
	slru_hit(&q, &e[0].n);
	slru_hit(&q, &e[1].n);
	assert_int_equal(q.nprob, 0);
	assert_int_equal(q.nprot, 3);
	assert_int_equal(q.wprot, 3);
	expect_order(&q, want, 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_insertion_order),
		cmocka_unit_test(test_hit_promotes),
		cmocka_unit_test(test_demotion),
		cmocka_unit_test(test_weighted_demotion),
		cmocka_unit_test(test_weighted_heavy_hit),
		cmocka_unit_test(test_small_population),
		cmocka_unit_test(test_single_entry),
		cmocka_unit_test(test_demotion_bound_random),
		cmocka_unit_test(test_scan_resistance),
		cmocka_unit_test(test_scan_resistance_weighted),
		cmocka_unit_test(test_remove_during_iteration),
		cmocka_unit_test(test_remove_and_unlinked),
		cmocka_unit_test(test_protected_only),
	};

	return cmocka_run_group_tests_name("slru", tests, NULL, NULL);
}
