/* SPDX-License-Identifier: BSD-3-Clause */
/* Key index: find/insert/remove with look-alike keys, growth, iteration. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "index.h"

struct item {
	struct idx_node n;
	uint8_t key[32];
	int seen;
	int in;
};

#define item_of(node) ((struct item *)((char *)(node)-offsetof(struct item, n)))

static void item_set(struct item *it, const void *key, uint32_t klen,
		     uint64_t hash)
{
	memset(it, 0, sizeof(*it));
	memcpy(it->key, key, klen);
	it->n.key = it->key;
	it->n.klen = klen;
	it->n.hash = hash;
}

static struct idx_node *find(struct index *ix, const void *key, size_t klen)
{
	return index_find(ix, index_hash(key, klen), key, klen);
}

static uint64_t iter_count(struct index *ix)
{
	uint64_t pos = 0, n = 0;

	for (struct idx_node *c = index_next(ix, &pos, NULL); c;
	     c = index_next(ix, &pos, c))
		n++;
	return n;
}

static void test_hash_stable(void **state)
{
	(void)state;
	assert_int_equal(index_hash("abc", 3), index_hash("abc", 3));
	assert_int_not_equal(index_hash("abc", 3), index_hash("abd", 3));
	assert_int_not_equal(index_hash("ab", 2), index_hash("abc", 3));
	assert_int_not_equal(index_hash("a\0", 2), index_hash("a", 1));
}

static void test_init_rounding(void **state)
{
	struct index ix;

	(void)state;
	assert_int_equal(index_init(&ix, 0), 0);
	assert_int_equal(ix.mask, 15);
	assert_int_equal(ix.count, 0);
	index_release(&ix);
	assert_int_equal(index_init(&ix, 17), 0);
	assert_int_equal(ix.mask, 31);
	index_release(&ix);
	assert_int_equal(index_init(&ix, 64), 0);
	assert_int_equal(ix.mask, 63);
	assert_null(index_next(&ix, &(uint64_t){ 0 }, NULL));
	index_release(&ix);
	assert_null(ix.b);
}

/* Keys that are prefixes of one another, or differ only in length. */
static void test_prefix_and_length(void **state)
{
	static const struct {
		const char *k;
		uint32_t len;
	} keys[] = {
		{ "a", 1 },	 { "aa", 2 },	   { "aaa", 3 },
		{ "ab", 2 },	 { "a\0", 2 },	   { "a\0b", 3 },
		{ "\0", 1 },	 { "\0\0", 2 },	   { "key:1", 5 },
		{ "key:10", 6 }, { "key:100", 7 }, { "key:1\0", 6 },
	};
	enum { N = sizeof(keys) / sizeof(keys[0]) };
	struct item it[N];
	struct index ix;

	(void)state;
	assert_int_equal(index_init(&ix, 16), 0);
	for (int i = 0; i < N; i++) {
		assert_null(find(&ix, keys[i].k, keys[i].len));
		item_set(&it[i], keys[i].k, keys[i].len,
			 index_hash(keys[i].k, keys[i].len));
		index_insert(&ix, &it[i].n);
	}
	assert_int_equal(ix.count, N);
	for (int i = 0; i < N; i++)
		assert_ptr_equal(find(&ix, keys[i].k, keys[i].len), &it[i].n);
	assert_null(find(&ix, "aaaa", 4));
	assert_null(find(&ix, "key:", 4));
	assert_null(find(&ix, "", 0));

	/* removing one leaves its prefixes and extensions */
	index_remove(&ix, &it[1].n); /* "aa" */
	index_remove(&ix, &it[9].n); /* "key:10" */
	assert_null(find(&ix, "aa", 2));
	assert_null(find(&ix, "key:10", 6));
	assert_ptr_equal(find(&ix, "a", 1), &it[0].n);
	assert_ptr_equal(find(&ix, "aaa", 3), &it[2].n);
	assert_ptr_equal(find(&ix, "key:1", 5), &it[8].n);
	assert_ptr_equal(find(&ix, "key:100", 7), &it[10].n);
	assert_int_equal(ix.count, N - 2);
	assert_int_equal(iter_count(&ix), N - 2);
	index_release(&ix);
}

/*
 * Forced full-hash collisions: one chain, told apart only by length and
 * bytes.  Also removal from the head, middle and tail of a chain.
 */
static void test_hash_collisions(void **state)
{
	static const char *keys[] = {
		"x", "xy", "xyz", "xz", "y", "yx", "xyz\0"
	};
	static const uint32_t lens[] = { 1, 2, 3, 2, 1, 2, 4 };
	enum { N = 7, H = 0x1234 };
	struct item it[N];
	struct index ix;

	(void)state;
	assert_int_equal(index_init(&ix, 16), 0);
	for (int i = 0; i < N; i++) {
		item_set(&it[i], keys[i], lens[i], H);
		index_insert(&ix, &it[i].n);
	}
	for (int i = 0; i < N; i++)
		assert_ptr_equal(index_find(&ix, H, keys[i], lens[i]),
				 &it[i].n);
	/* right bytes, wrong hash: not found */
	assert_null(index_find(&ix, H + 1, "x", 1));
	assert_null(index_find(&ix, H + 16, "x", 1)); /* same bucket */
	assert_null(index_find(&ix, H, "xx", 2));
	assert_null(index_find(&ix, H, "xy", 1 + 2)); /* "xy\0" */

	/* chain order is newest first: remove tail, middle, head */
	index_remove(&ix, &it[0].n);
	index_remove(&ix, &it[3].n);
	index_remove(&ix, &it[6].n);
	assert_int_equal(ix.count, N - 3);
	for (int i = 0; i < N; i++) {
		struct idx_node *f = index_find(&ix, H, keys[i], lens[i]);

		if (i == 0 || i == 3 || i == 6)
			assert_null(f);
		else
			assert_ptr_equal(f, &it[i].n);
	}
	/* removing an absent node changes nothing */
	index_remove(&ix, &it[0].n);
	assert_int_equal(ix.count, N - 3);
	assert_int_equal(iter_count(&ix), N - 3);
	index_release(&ix);
}

enum { MANY = 5000 };

static struct item many[MANY];

static void make_many(void)
{
	for (int i = 0; i < MANY; i++) {
		char k[32];
		int len = snprintf(k, sizeof(k), "k%d", i);

		/* every 7th a prefix-extended twin: "k12" and "k12/" */
		if (i % 7 == 0)
			k[len++] = '/';
		item_set(&many[i], k, (uint32_t)len, index_hash(k, len));
	}
}

static void check_iteration(struct index *ix)
{
	uint64_t pos = 0, n = 0;

	for (int i = 0; i < MANY; i++)
		many[i].seen = 0;
	for (struct idx_node *c = index_next(ix, &pos, NULL); c;
	     c = index_next(ix, &pos, c)) {
		struct item *it = item_of(c);

		assert_true(it >= many && it < many + MANY);
		assert_true(it->in);
		it->seen++;
		n++;
	}
	assert_int_equal(n, ix->count);
	for (int i = 0; i < MANY; i++)
		assert_int_equal(many[i].seen, many[i].in); /* once each */
}

static void test_many_grow_iterate(void **state)
{
	struct index ix;
	uint64_t mask0;

	(void)state;
	make_many();
	assert_int_equal(index_init(&ix, 1), 0);
	mask0 = ix.mask;
	for (int i = 0; i < MANY; i++) {
		index_insert(&ix, &many[i].n);
		many[i].in = 1;
		/* the load stays at most about one per bucket */
		assert_true(ix.count <= (ix.mask + 1) + 1);
		if ((i & (i + 1)) == 0 || i % 997 == 0)
			for (int j = 0; j <= i; j++)
				assert_ptr_equal(find(&ix, many[j].key,
						      many[j].n.klen),
						 &many[j].n);
	}
	assert_true(ix.mask > mask0); /* it grew */
	assert_int_equal(ix.count, MANY);
	for (int i = 0; i < MANY; i++)
		assert_ptr_equal(find(&ix, many[i].key, many[i].n.klen),
				 &many[i].n);
	check_iteration(&ix);

	/* remove every third, check finds, iteration, count */
	for (int i = 0; i < MANY; i += 3) {
		index_remove(&ix, &many[i].n);
		many[i].in = 0;
	}
	for (int i = 0; i < MANY; i++) {
		struct idx_node *f = find(&ix, many[i].key, many[i].n.klen);

		if (many[i].in)
			assert_ptr_equal(f, &many[i].n);
		else
			assert_null(f);
	}
	assert_int_equal(ix.count, MANY - (MANY + 2) / 3);
	check_iteration(&ix);

	/* re-insert: growth again from the current size is fine */
	for (int i = 0; i < MANY; i += 3) {
		index_insert(&ix, &many[i].n);
		many[i].in = 1;
	}
	assert_int_equal(ix.count, MANY);
	check_iteration(&ix);
	index_release(&ix);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hash_stable),
		cmocka_unit_test(test_init_rounding),
		cmocka_unit_test(test_prefix_and_length),
		cmocka_unit_test(test_hash_collisions),
		cmocka_unit_test(test_many_grow_iterate),
	};

	return cmocka_run_group_tests_name("index", tests, NULL, NULL);
}
