/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Journal maintenance (issue 17): the journal is rewritten on the store's
 * maintenance thread, off the store lock.  Operations go on while a
 * rewrite runs; a failure at any step of it loses nothing acknowledged,
 * is counted and is retried; and puts, gets and deletes from several
 * threads while rewrites run leave a store that reopens whole.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "internal.h"
#include "fault.h"
#include "testdir.h"

#define KiB   1024ull
#define MiB   (1024ull * 1024)
#define NKEYS 40
#define MAXV  (600 * KiB)

static char dir[256];

static uint64_t splitmix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void gen(uint64_t seed, uint8_t *buf, uint64_t len)
{
	uint64_t x = seed;

	for (uint64_t i = 0; i < len; i += 8) {
		uint64_t v = splitmix(&x);

		memcpy(buf + i, &v, len - i < 8 ? len - i : 8);
	}
}

static uint64_t now_ms(void)
{
	return (uint64_t)gs_mono_ns() / 1000000;
}

/*
 * A small SSD tier (the journal shares its file system: a rewrite is due
 * once its garbage passes an eighth of it: 4 MiB of 32) and a small arena, so
 * that most small values are cold: read back from the journal, where a
 * rewrite moves them.
 */
/*
 * The store may evict: cold small values are held to a quarter of the SSD
 * tier, whose room shrinks while the journal's garbage grows (a rewrite
 * failing or falling behind under load).  An evicted key is not a lost
 * one, so the store's change hook tells the tests which versions it
 * dropped: a key may be missing only if its acknowledged version (the cas
 * its commit reported) was dropped since, and nothing failed its checksum.
 */
#define WATCH_MODELS 8
static struct {
	pthread_mutex_t lock;
	struct {
		char prefix[16];
		uint64_t cur[NKEYS]; /* the acknowledged version's cas */
		bool evicted[NKEYS]; /* ... dropped by the store */
	} m[WATCH_MODELS];
	unsigned n, accepted;
} watch = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* The watch's slot of a key "<prefix>NN" (lock held), or NULL. */
static bool watch_slot(const void *key, size_t klen, unsigned *mi, int *k)
{
	const char *c = key;

	if (klen < 3 || klen - 2 >= sizeof(watch.m[0].prefix) ||
	    c[klen - 2] < '0' || c[klen - 2] > '9' || c[klen - 1] < '0' ||
	    c[klen - 1] > '9')
		return false;
	*k = (c[klen - 2] - '0') * 10 + (c[klen - 1] - '0');
	for (unsigned i = 0; i < watch.n; i++)
		if (strlen(watch.m[i].prefix) == klen - 2 &&
		    !memcmp(watch.m[i].prefix, c, klen - 2) && *k < NKEYS) {
			*mi = i;
			return true;
		}
	return false;
}

/* The change hook: a leaf lock only, as a hook called locked must. */
static void watch_hook(void *arg, const struct gs_change *c)
{
	unsigned mi;
	int k;
	(void)arg;

	pthread_mutex_lock(&watch.lock);
	if (watch_slot(c->key, c->klen, &mi, &k)) {
		if (c->kind == GS_CHANGE_PUBLISH) {
			watch.m[mi].cur[k] = c->cas;
			watch.m[mi].evicted[k] = false;
		} else if (c->kind == GS_CHANGE_DROP &&
			   c->cas == watch.m[mi].cur[k]) {
			watch.m[mi].evicted[k] = true;
		} else if (c->kind == GS_CHANGE_DELETE) {
			watch.m[mi].cur[k] = 0;
		}
	}
	pthread_mutex_unlock(&watch.lock);
}

/* Follow the keys of @prefix. */
static void watch_model(const char *prefix)
{
	pthread_mutex_lock(&watch.lock);
	assert_true(watch.n < WATCH_MODELS);
	memset(&watch.m[watch.n], 0, sizeof(watch.m[0]));
	snprintf(watch.m[watch.n].prefix, sizeof(watch.m[0].prefix), "%s",
		 prefix);
	watch.n++;
	pthread_mutex_unlock(&watch.lock);
}

/* Was the acknowledged version of @key dropped by the store itself? */
static bool watch_evicted(struct gs_store *s, const char *key)
{
	struct gs_stats st;
	unsigned mi;
	int k;
	bool ev = false;

	gs_stats_get(s, &st);
	pthread_mutex_lock(&watch.lock);
	if (watch_slot(key, strlen(key), &mi, &k) && watch.m[mi].evicted[k] &&
	    st.csum_failures == 0) {
		ev = true;
		watch.accepted++;
	}
	pthread_mutex_unlock(&watch.lock);
	return ev;
}

static struct gs_store *open_store(uint64_t ssd_size)
{
	struct gs_options o;
	struct gs_store *s = NULL;
	char err[256];
	int ret;

	gs_options_init(&o);
	o.create = true;
	o.no_mlock = true;
	o.memory = 8 * MiB;
	o.block = 256 * KiB;
	o.small_memory = 512 * KiB;
	o.ssd_size = ssd_size;
	ret = gs_open(dir, &o, &s, err, sizeof(err));
	if (ret)
		fail_msg("gs_open: %s", err);
	gs_set_change_hook(s, watch_hook, NULL);
	return s;
}

/* What each key holds, as acknowledged: size 0 and seed 0 is absent. */
struct model {
	uint64_t seed[NKEYS], size[NKEYS];
	bool present[NKEYS];
	char prefix[16];
};

static void key_of(const struct model *m, int k, char *key)
{
	snprintf(key, 32, "%s%02d", m->prefix, k);
}

static int put_key(struct gs_store *s, struct model *m, int k, uint64_t seed,
		   uint64_t size, uint8_t *buf)
{
	struct gs_put_args a = { 0 };
	char key[32];
	int ret;

	key_of(m, k, key);
	gen(seed, buf, size);
	ret = gs_put(s, key, strlen(key), buf, size, &a);
	if (ret == 0) {
		m->seed[k] = seed;
		m->size[k] = size;
		m->present[k] = true;
	}
	return ret;
}

static int del_key(struct gs_store *s, struct model *m, int k)
{
	char key[32];
	int ret;

	key_of(m, k, key);
	ret = gs_delete(s, key, strlen(key));
	if (ret == 0 || ret == -ENOENT)
		m->present[k] = false;
	return ret == -ENOENT ? 0 : ret;
}

/* Key @k holds what the model says, byte for byte: 0, or a message. */
static const char *check_key(struct gs_store *s, const struct model *m, int k,
			     uint8_t *want)
{
	char key[32];
	void *val = NULL;
	size_t len = 0;
	int ret;

	key_of(m, k, key);
	ret = gs_get(s, key, strlen(key), &val, &len, NULL);
	if (!m->present[k]) {
		free(val);
		return ret == -ENOENT ? NULL : "a deleted key is there";
	}
	if (ret == -ENOENT && watch_evicted(s, key))
		return NULL; /* evicted, not lost */
	if (ret < 0)
		return "an acknowledged key is missing";
	gen(m->seed[k], want, m->size[k]);
	ret = len != m->size[k] || memcmp(val, want, len);
	free(val);
	return ret ? "an acknowledged key has other bytes" : NULL;
}

static void check_all(struct gs_store *s, const struct model *m, uint8_t *want)
{
	for (int k = 0; k < NKEYS; k++) {
		const char *why = check_key(s, m, k, want);

		if (why)
			fail_msg("%s%02d: %s", m->prefix, k, why);
	}
}

static void stats(struct gs_store *s, struct gs_stats *st)
{
	gs_stats_get(s, st);
}

/* Close @s and open it again (@ssd_size): recovery must drop nothing. */
static struct gs_store *reopen(struct gs_store *s, uint64_t ssd_size)
{
	struct gs_stats st;

	gs_close(s);
	s = open_store(ssd_size);
	stats(s, &st);
	assert_int_equal(st.recovery_dropped, 0);
	return s;
}

/* Small values (most of them cold), a few large ones. */
static uint64_t pick_size(uint64_t *rng)
{
	uint64_t r = splitmix(rng);

	return r % 8 == 0 ? 256 * KiB + r % (300 * KiB) : 1 + r % (90 * KiB);
}

/*
 * Regression, issue 17: the journal rewrite ran inline under the store
 * lock (from the put or delete that made it due): every operation waited
 * for it.  Held at its reads of small values (a delay of 25 ms each), the
 * rewrite of a journal of some MiB takes seconds; a get, a put and a
 * delete must complete meanwhile, the rewrite still in progress.
 */
static void test_issue17_ops_go_on_during_a_rewrite(void **state)
{
	struct gs_store *s = open_store(32 * MiB);
	struct model m = { .prefix = "a" };
	uint8_t *buf = malloc(MAXV), *want = malloc(MAXV);
	struct gs_stats st0, st;
	uint64_t seed = 1, t0, t_get, t_put, t_del;
	const char *why;
	(void)state;

	watch_model(m.prefix);

	assert_non_null(buf);
	assert_non_null(want);
	for (int k = 0; k < NKEYS; k++)
		assert_int_equal(put_key(s, &m, k, seed++, 60 * KiB, buf), 0);
	stats(s, &st0);
	assert_int_equal(st0.journal_rewrites, 0);
	fault_delay_arm(FS_REWRITE, "pread", 25000);
	/* garbage until a rewrite is due and under way */
	t0 = now_ms();
	while (fault_seen() == 0 && now_ms() - t0 < 20000)
		assert_int_equal(put_key(s, &m, 0, seed++, 80 * KiB, buf), 0);
	assert_true(fault_seen() > 0);

	t0 = now_ms();
	why = check_key(s, &m, 1, want);
	t_get = now_ms() - t0;
	assert_null(why);
	stats(s, &st);
	/* the get is done and the rewrite is not: it held no lock of ours */
	assert_int_equal(st.journal_rewrites, st0.journal_rewrites);
	assert_true(fault_seen() < NKEYS);
	t0 = now_ms();
	assert_int_equal(put_key(s, &m, 2, seed++, 70 * KiB, buf), 0);
	t_put = now_ms() - t0;
	t0 = now_ms();
	assert_int_equal(del_key(s, &m, 3), 0);
	t_del = now_ms() - t0;
	stats(s, &st);
	assert_int_equal(st.journal_rewrites, st0.journal_rewrites);
	assert_true(fault_seen() < NKEYS);
	printf("# get %llu ms, put %llu ms, delete %llu ms during a rewrite "
	       "held %llu times 25 ms so far\n",
	       (unsigned long long)t_get, (unsigned long long)t_put,
	       (unsigned long long)t_del, (unsigned long long)fault_seen());

	/* it finishes, with what was journaled meanwhile */
	t0 = now_ms();
	do {
		usleep(20000);
		stats(s, &st);
	} while (st.journal_rewrites == st0.journal_rewrites &&
		 now_ms() - t0 < 30000);
	fault_disarm();
	assert_true(st.journal_rewrites > st0.journal_rewrites);
	assert_int_equal(st.journal_rewrite_errors, 0);
	check_all(s, &m, want);
	s = reopen(s, 32 * MiB);
	check_all(s, &m, want);
	gs_close(s);
	free(buf);
	free(want);
}

/* Every I/O site of a rewrite (fault.h's FAULT_SITE in jmaint.c). */
static const char *const sites[] = {
	"pad",	      "open",  "pread",	 "write",  "tail read",
	"tail write", "fsync", "reopen", "rename", "dir fsync",
};

static unsigned refused; /* puts churn_until() saw refused for room */

/*
 * Puts and deletes (acknowledged ones in the model) until @done says so
 * or @ms pass; true if it did.
 */
static bool
churn_until(struct gs_store *s, struct model *m, uint64_t *rng, uint8_t *buf,
	    bool (*done)(struct gs_store *s, const struct gs_stats *st0),
	    const struct gs_stats *st0, uint64_t ms)
{
	uint64_t t0 = now_ms();

	while (now_ms() - t0 < ms) {
		uint64_t r = splitmix(rng);
		int k = (int)(r % NKEYS);

		if (r % 5 == 0) {
			assert_int_equal(del_key(s, m, k), 0);
		} else {
			int ret = put_key(s, m, k, splitmix(rng),
					  pick_size(rng), buf);

			/* the tier full of journal garbage while the rewrite
			 * is failing: refused, and the old version stays */
			if (ret == -ENOSPC)
				refused++;
			else
				assert_int_equal(ret, 0);
		}
		if (done(s, st0))
			return true;
	}
	return false;
}

static bool error_counted(struct gs_store *s, const struct gs_stats *st0)
{
	struct gs_stats st;

	gs_stats_get(s, &st);
	return st.journal_rewrite_errors > st0->journal_rewrite_errors;
}

static bool rewrite_done(struct gs_store *s, const struct gs_stats *st0)
{
	struct gs_stats st;

	gs_stats_get(s, &st);
	return st.journal_rewrites > st0->journal_rewrites;
}

/*
 * Regression, issue 17: the rewrite's result was discarded.  A failure
 * injected at each site of a rewrite in turn, while puts and deletes go
 * on: the failure is counted, a later retry succeeds, and every
 * acknowledged object is there with its bytes, live and after a reopen
 * (one per site), and every deleted one is gone.
 */
static void test_issue17_rewrite_fails_at_each_step(void **state)
{
	struct gs_store *s = open_store(32 * MiB);
	struct model m = { .prefix = "b" };
	uint8_t *buf = malloc(MAXV), *want = malloc(MAXV);
	uint64_t rng = 17;
	struct gs_stats st0, st;
	(void)state;

	watch_model(m.prefix);

	assert_non_null(buf);
	assert_non_null(want);
	for (int k = 0; k < NKEYS; k++)
		assert_int_equal(put_key(s, &m, k, splitmix(&rng),
					 pick_size(&rng), buf),
				 0);
	for (size_t i = 0; i < sizeof(sites) / sizeof(sites[0]); i++) {
		const char *site = sites[i];

		stats(s, &st0);
		fault_arm(0x17 + i, FS_REWRITE, FC_EIO, 1, 0, 1);
		fault_arm_site(site);
		if (!churn_until(s, &m, &rng, buf, error_counted, &st0, 20000))
			fail_msg("no rewrite failed at '%s'", site);
		assert_non_null(fault_last_site());
		assert_string_equal(fault_last_site(), site);
		assert_int_equal(fault_count(), 1);
		check_all(s, &m, want);
		/* the retry (the rule fires once) succeeds */
		stats(s, &st0);
		if (!churn_until(s, &m, &rng, buf, rewrite_done, &st0, 20000))
			fail_msg("no retry succeeded after '%s'", site);
		fault_disarm();
		stats(s, &st);
		/* one fault, one failed rewrite (the counters are this
		 * open's) */
		assert_int_equal(st.faults_eio, 1);
		assert_int_equal(st.journal_rewrite_errors, 1);
		printf("# %-10s failed once, retried: rewrites %llu, errors "
		       "%llu\n",
		       site, (unsigned long long)st.journal_rewrites,
		       (unsigned long long)st.journal_rewrite_errors);
		check_all(s, &m, want);
		/* and a reopen finds exactly what was acknowledged */
		s = reopen(s, 32 * MiB);
		check_all(s, &m, want);
	}
	printf("# %u puts refused for room, %u missing keys were evicted\n",
	       refused, watch.accepted);
	gs_close(s);
	free(buf);
	free(want);
}

struct worker {
	pthread_t t;
	struct gs_store *s;
	struct model m;
	uint64_t rng, ops, until;
	const char *why; /* the first failure, NULL if none */
	char where[64];
};

static void *work(void *arg)
{
	struct worker *w = arg;
	uint8_t *buf = malloc(MAXV), *want = malloc(MAXV);

	if (!buf || !want) {
		w->why = "no memory";
		goto out;
	}
	for (int k = 0; k < NKEYS; k++)
		put_key(w->s, &w->m, k, splitmix(&w->rng), pick_size(&w->rng),
			buf);
	while (!w->why && now_ms() < w->until) {
		uint64_t r = splitmix(&w->rng);
		int k = (int)(r % NKEYS);
		int ret = 0;

		switch (r % 10) {
		case 0:
		case 1:
			ret = del_key(w->s, &w->m, k);
			break;
		case 2:
		case 3:
		case 4:
			ret = put_key(w->s, &w->m, k, splitmix(&w->rng),
				      pick_size(&w->rng), buf);
			break;
		default:
			w->why = check_key(w->s, &w->m, k, want);
		}
		if (ret < 0)
			w->why = "an operation failed";
		if (w->why)
			snprintf(w->where, sizeof(w->where), "%s%02d",
				 w->m.prefix, k);
		w->ops++;
	}
out:
	free(buf);
	free(want);
	return NULL;
}

/*
 * Issue 17: four threads put, get and delete their keys for 3 s while the
 * journal is rewritten again and again under them (its garbage is their
 * replaces and deletes); every get sees what its thread last wrote, and
 * the reopened store holds exactly that.
 */
static void test_issue17_ops_and_rewrites_stress(void **state)
{
	struct gs_store *s = open_store(64 * MiB);
	struct worker w[4];
	uint8_t *want = malloc(MAXV);
	struct gs_stats st;
	uint64_t ops = 0;
	(void)state;

	assert_non_null(want);
	for (int i = 0; i < 4; i++) {
		memset(&w[i], 0, sizeof(w[i]));
		w[i].s = s;
		w[i].rng = 1000 + (uint64_t)i;
		w[i].until = now_ms() + 3000;
		snprintf(w[i].m.prefix, sizeof(w[i].m.prefix), "t%d-", i);
		watch_model(w[i].m.prefix);
		assert_int_equal(pthread_create(&w[i].t, NULL, work, &w[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(w[i].t, NULL);
		if (w[i].why)
			fail_msg("%s: %s", w[i].where, w[i].why);
		ops += w[i].ops;
	}
	stats(s, &st);
	printf("# %llu operations, %llu journal rewrites, %llu errors, "
	       "%llu evictions\n",
	       (unsigned long long)ops, (unsigned long long)st.journal_rewrites,
	       (unsigned long long)st.journal_rewrite_errors,
	       (unsigned long long)(st.evictions_ssd + st.evictions_small));
	assert_true(st.journal_rewrites >= 2);
	assert_int_equal(st.journal_rewrite_errors, 0);
	assert_int_equal(st.evictions_ssd + st.evictions_small, 0);
	for (int i = 0; i < 4; i++)
		check_all(s, &w[i].m, want);
	s = reopen(s, 64 * MiB);
	for (int i = 0; i < 4; i++)
		check_all(s, &w[i].m, want);
	gs_close(s);
	free(want);
}

static int setup(void **state)
{
	(void)state;
	return test_mkdtemp(dir, sizeof(dir), "gs-jmaint") ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	fault_disarm();
	return test_rmtree(dir);
}

#define T(t) cmocka_unit_test_setup_teardown(t, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_issue17_ops_go_on_during_a_rewrite),
		T(test_issue17_rewrite_fails_at_each_step),
		T(test_issue17_ops_and_rewrites_stress),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
