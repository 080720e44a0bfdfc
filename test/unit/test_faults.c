/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fault injection (issue 16): for every step of the store's operations
 * (put, commit, delete, rename, journal rewrite, recovery, read) and every
 * fault class (EIO, short transfer, ENOSPC, torn write), a seeded workload
 * runs against a model of what was acknowledged while the store's I/O
 * fails; then the store is checked live, closed, reopened and checked
 * again.  Every acknowledged object must come back byte for byte; an
 * operation that failed may have happened or not, never partly; no other
 * key may appear.  Seeds loop for a bounded time per step and class.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "internal.h"
#include "fault.h"
#include "testdir.h"

#define KiB	  1024ull
#define MiB	  (1024ull * 1024)
#define NKEYS	  24
#define NALT	  24			 /* acceptable states kept per key */
#define BUDGET_NS (250ull * 1000 * 1000) /* per step and class */

static char dir[64]; /* test_mkdtemp: $TMPDIR up to ~45 bytes */

/* One state a key may be in: absent, or a generated value. */
struct ver {
	bool present;
	uint64_t seed, size;
};

/* What each key may hold: every state an acknowledged or failed op left. */
struct model {
	struct ver alt[NKEYS][NALT];
	int n[NKEYS];
};

struct run {
	int step, cls;
	bool evict; /* a small SSD tier: puts evict */
	int drops;  /* evictions the change hook reported (DROP) */
	uint64_t seed, rng;
	struct model m;
	int ops_failed;	   /* operations that reported an error */
	const char *phase; /* for the failure messages */
	uint8_t *buf;	   /* a value, generated or read back */
};

static uint64_t splitmix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t rnd(struct run *r, uint64_t n)
{
	return splitmix(&r->rng) % n;
}

static void gen(uint64_t seed, uint8_t *buf, uint64_t len)
{
	uint64_t x = seed;

	for (uint64_t i = 0; i < len; i += 8) {
		uint64_t v = splitmix(&x);

		memcpy(buf + i, &v, len - i < 8 ? len - i : 8);
	}
}

static void key_of(int k, char *key)
{
	snprintf(key, 16, "k%02d", k);
}

/* ---- the model ---- */

static void m_set(struct model *m, int k, struct ver v)
{
	m->alt[k][0] = v;
	m->n[k] = 1;
}

static void m_add(struct model *m, int k, struct ver v)
{
	for (int i = 0; i < m->n[k]; i++)
		if (m->alt[k][i].present == v.present &&
		    (!v.present || (m->alt[k][i].seed == v.seed &&
				    m->alt[k][i].size == v.size)))
			return;
	assert_true(m->n[k] < NALT);
	m->alt[k][m->n[k]++] = v;
}

static const struct ver absent = { .present = false };

/* ---- the store ---- */

static struct run *cur; /* the change hook's */

static bool evicting;

static void opts(struct gs_options *o, bool sync)
{
	gs_options_init(o);
	o->create = true;
	o->no_mlock = true;
	o->no_hugetlb = true;
	o->memory = 8 * MiB;
	o->small_memory = 4 * MiB;
	o->block = 256 * KiB;
	o->ssd_size = evicting ? 8 * MiB : 128 * MiB;
	o->preload_heads = true;
	o->sync = sync;
}

/*
 * The store evicted @key: an acknowledged removal, as a delete is.  It
 * must not come back at a restart.
 */
static void on_drop(void *arg, const struct gs_change *c)
{
	struct run *r = arg;
	const void *key = c->key;
	size_t klen = c->klen;
	int k;

	if (c->kind != GS_CHANGE_DROP || klen != 3 ||
	    ((const char *)key)[0] != 'k')
		return;
	k = (((const char *)key)[1] - '0') * 10 + ((const char *)key)[2] - '0';
	if (k >= 0 && k < NKEYS)
		m_set(&r->m, k, absent);
	r->drops++;
}

static int open_store(bool sync, struct gs_store **s)
{
	struct gs_options o;
	char err[256];
	int ret;

	opts(&o, sync);
	ret = gs_open(dir, &o, s, err, sizeof(err));
	if (ret == 0 && cur)
		gs_set_change_hook(*s, on_drop, cur);
	return ret;
}

static struct gs_store *must_open(bool sync)
{
	struct gs_store *s = NULL;
	int ret = open_store(sync, &s);

	if (ret)
		fail_msg("open without faults: %s", strerror(-ret));
	return s;
}

/* Sizes across the small arena, a head and the SSD tail. */
static uint64_t pick_size(struct run *r)
{
	switch (rnd(r, 4)) {
	case 0:
		return rnd(r, 4 * KiB);
	case 1:
		return 4 * KiB + rnd(r, 200 * KiB);
	case 2:
		return 256 * KiB + rnd(r, 512 * KiB);
	default:
		return 1 * MiB + rnd(r, 2 * MiB);
	}
}

static void op_put(struct run *r, struct gs_store *s, int k, uint64_t size)
{
	struct gs_put_args a = { .size = size };
	struct ver v = { true, splitmix(&r->rng), size };
	char key[16];
	int ret;

	key_of(k, key);
	gen(v.seed, r->buf, size);
	ret = gs_put(s, key, strlen(key), r->buf, size, &a);
	if (ret == 0) {
		m_set(&r->m, k, v);
	} else {
		/* a failed put may or may not have landed, whole */
		m_add(&r->m, k, v);
		r->ops_failed++;
	}
}

static void op_delete(struct run *r, struct gs_store *s, int k)
{
	char key[16];
	int ret;

	key_of(k, key);
	ret = gs_delete(s, key, strlen(key));
	if (ret == 0 || ret == -ENOENT) {
		if (ret == 0 || r->m.n[k] == 1)
			m_set(&r->m, k, absent);
	} else {
		m_add(&r->m, k, absent);
		r->ops_failed++;
	}
}

static void op_rename(struct run *r, struct gs_store *s, int from, int to)
{
	char fk[16], tk[16];
	int ret;

	key_of(from, fk);
	key_of(to, tk);
	ret = gs_rename(s, fk, strlen(fk), tk, strlen(tk));
	if (ret == -ENOENT || from == to)
		return;
	if (ret == 0) {
		/* it held one of its states: to takes whichever it was */
		memcpy(r->m.alt[to], r->m.alt[from], sizeof(r->m.alt[to]));
		r->m.n[to] = r->m.n[from];
		for (int i = 0; i < r->m.n[to];)
			if (!r->m.alt[to][i].present)
				r->m.alt[to][i] = r->m.alt[to][--r->m.n[to]];
			else
				i++;
		m_set(&r->m, from, absent);
		return;
	}
	for (int i = 0; i < r->m.n[from]; i++)
		if (r->m.alt[from][i].present)
			m_add(&r->m, to, r->m.alt[from][i]);
	m_add(&r->m, from, absent);
	r->ops_failed++;
}

/*
 * Read @k: its bytes must be one of its acceptable states, whole.  With
 * faults on (@faulty) a read may fail with -EIO, and that must be all.
 * Returns the state found (-1 for a read that failed).
 */
static int check_key(struct run *r, struct gs_store *s, int k, bool faulty)
{
	char key[16];
	void *val = NULL;
	size_t len = 0;
	int ret;

	key_of(k, key);
	ret = gs_get(s, key, strlen(key), &val, &len, NULL);
	if (ret == -EIO && faulty)
		return -1;
	if (ret == -ENOENT) {
		for (int i = 0; i < r->m.n[k]; i++)
			if (!r->m.alt[k][i].present)
				return i;
		fail_msg("step %s class %s seed %#llx, %s: %s is missing (it "
			 "was acknowledged)",
			 fault_step_name(r->step), fault_class_name(r->cls),
			 (unsigned long long)r->seed, r->phase, key);
	}
	if (ret != 0)
		fail_msg("step %s class %s seed %#llx, %s: get %s: %s",
			 fault_step_name(r->step), fault_class_name(r->cls),
			 (unsigned long long)r->seed, r->phase, key,
			 strerror(-ret));
	for (int i = 0; i < r->m.n[k]; i++) {
		struct ver *v = &r->m.alt[k][i];

		if (!v->present || v->size != len)
			continue;
		gen(v->seed, r->buf, len);
		if (memcmp(r->buf, val, len) == 0) {
			free(val);
			return i;
		}
	}
	free(val);
	fail_msg("step %s class %s seed %#llx, %s: %s holds %zu bytes that "
		 "no put wrote whole",
		 fault_step_name(r->step), fault_class_name(r->cls),
		 (unsigned long long)r->seed, r->phase, key, len);
	return -1;
}

static int count_key(void *arg, const void *key, size_t klen,
		     const struct gs_meta *m)
{
	int *n = arg;

	(void)m;
	/* only the model's keys: k00..k23 */
	assert_int_equal(klen, 3);
	assert_true(((const char *)key)[0] == 'k');
	(*n)++;
	return 0;
}

/* Every key as the model allows; with @collapse the state found is the
 * only one from now on (after a reopen it is what survived). */
static void check_all(struct run *r, struct gs_store *s, bool collapse)
{
	int present = 0, listed = 0;

	for (int k = 0; k < NKEYS; k++) {
		int i = check_key(r, s, k, false);
		struct ver v = r->m.alt[k][i];

		present += v.present;
		if (collapse)
			m_set(&r->m, k, v);
	}
	assert_int_equal(gs_iterate(s, "", 0, count_key, &listed), 0);
	assert_int_equal(listed, present);
}

/* A random operation, weighted towards the step under test. */
static void random_op(struct run *r, struct gs_store *s)
{
	int k = (int)rnd(r, NKEYS), w = (int)rnd(r, 10);

	if ((r->step == FS_DELETE && w < 5) || w == 0)
		op_delete(r, s, k);
	else if ((r->step == FS_RENAME && w < 6) || w == 1)
		op_rename(r, s, k, (int)rnd(r, NKEYS));
	else if (r->step == FS_READ && w < 7)
		check_key(r, s, k, true);
	else
		op_put(r, s, k, pick_size(r));
}

/*
 * One seed: a workload without faults, then with the rule armed, then the
 * checks live and after a reopen.  Returns the faults injected.
 */
static uint64_t run_case(struct run *r)
{
	bool sync = r->seed & 1;
	struct gs_store *s;
	struct gs_stats st;
	uint64_t fired, by_class;
	char cmd[128];
	int ret;

	memset(&r->m, 0, sizeof(r->m));
	for (int k = 0; k < NKEYS; k++)
		m_set(&r->m, k, absent);
	r->rng = r->seed;
	r->phase = "before the faults";
	s = must_open(sync);
	for (int i = 0; i < 40; i++)
		random_op(r, s);
	if (r->step == FS_REWRITE) /* garbage for a rewrite at open */
		for (int i = 0; i < 60; i++)
			op_put(r, s, (int)rnd(r, 6),
			       100 * KiB + rnd(r, 100 * KiB));
	check_all(r, s, false);

	r->phase = "with the faults";
	/* at recovery the journal is read first, and evictions are few:
	 * often their very first I/O */
	fault_arm(r->seed, r->step, r->cls, 1 + (uint32_t)rnd(r, 4),
		  (uint32_t)rnd(
			  r, r->step == FS_RECOVERY || r->step == FS_EVICT ? 2 :
									     8),
		  1 + (uint32_t)rnd(r, 3));
	if (r->step == FS_RECOVERY || r->step == FS_REWRITE) {
		gs_close(s);
		ret = open_store(sync, &s); /* may fail: cleanly */
		fired = fault_count();
		fault_disarm();
		r->phase = "after the faults, live";
		if (ret == 0) {
			check_all(r, s, false);
			gs_close(s);
		} else {
			r->ops_failed++;
		}
	} else {
		for (int i = 0; i < 30; i++)
			random_op(r, s);
		fired = fault_count();
		fault_disarm();
		gs_stats_get(s, &st);
		by_class = (&st.faults_eio)[r->cls];
		/* every fault counted, in its class */
		assert_int_equal(by_class, fired);
		assert_int_equal(st.faults_eio + st.faults_short +
					 st.faults_enospc + st.faults_torn,
				 fired);
		r->phase = "after the faults, live";
		check_all(r, s, false);
		gs_close(s);
	}
	/* reopen: clean, and everything acknowledged is there */
	r->phase = "reopened";
	s = must_open(sync);
	gs_stats_get(s, &st);
	check_all(r, s, true);
	/* and it goes on working */
	for (int i = 0; i < 10; i++)
		random_op(r, s);
	check_all(r, s, false);
	gs_close(s);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'/*", dir);
	assert_int_equal(system(cmd), 0);
	return fired;
}

static void run_step(int step, bool evict)
{
	struct run r = { .step = step, .evict = evict };

	cur = &r;
	evicting = evict;
	r.buf = malloc(4 * MiB);
	assert_non_null(r.buf);
	for (int cls = 0; cls < FC_NCLASSES; cls++) {
		uint64_t t0 = (uint64_t)gs_mono_ns(), fired = 0, seen = 0;
		int seeds = 0;

		r.cls = cls;
		r.ops_failed = 0;
		while (seeds < 3 || ((uint64_t)gs_mono_ns() - t0 < BUDGET_NS &&
				     seeds < 64)) {
			r.seed = 0x5eed0000ull + (uint64_t)step * 1000 +
				 (uint64_t)cls * 100 + (uint64_t)seeds;
			fired += run_case(&r);
			seen += fault_seen();
			seeds++;
		}
		printf("# %-8s%s %-6s seeds %2d  faults %3llu  ops failed %3d\n",
		       fault_step_name(step), evict ? "+evict" : "",
		       fault_class_name(cls), seeds, (unsigned long long)fired,
		       r.ops_failed);
		/* the rule reached this step's I/O: else this tested nothing */
		assert_true(seen > 0);
		assert_true(fired > 0);
		/* and faults that fail an I/O outright reach the caller
		 * (a short write is finished by a retry where one is made;
		 * the read step reports its failures through check_key;
		 * recovery fails an open only when the journal cannot be
		 * read, a head that cannot be preloaded is read later) */
		if (cls != FC_SHORT && step != FS_READ && step != FS_RECOVERY)
			assert_true(r.ops_failed > 0);
	}
	if (evict)
		assert_true(r.drops > 0);
	cur = NULL;
	evicting = false;
	free(r.buf);
}

static void test_issue16_faults_put(void **state)
{
	(void)state;
	run_step(FS_PUT, false);
}

static void test_issue16_faults_commit(void **state)
{
	(void)state;
	run_step(FS_COMMIT, false);
}

/* On a small tier, where puts evict: an eviction is never undone. */
static void test_issue16_faults_put_evicting(void **state)
{
	(void)state;
	run_step(FS_PUT, true);
}

/* The DEL records of evictions themselves. */
static void test_issue16_faults_eviction(void **state)
{
	(void)state;
	run_step(FS_EVICT, true);
}

static void test_issue16_faults_delete(void **state)
{
	(void)state;
	run_step(FS_DELETE, false);
}

static void test_issue16_faults_rename(void **state)
{
	(void)state;
	run_step(FS_RENAME, false);
}

static void test_issue16_faults_journal_rewrite(void **state)
{
	(void)state;
	run_step(FS_REWRITE, false);
}

static void test_issue16_faults_recovery(void **state)
{
	(void)state;
	run_step(FS_RECOVERY, false);
}

static void test_issue16_faults_read(void **state)
{
	(void)state;
	run_step(FS_READ, false);
}

/* Off, nothing is injected and nothing counted. */
static void test_faults_off_cost_nothing(void **state)
{
	struct gs_store *s;
	struct gs_stats st;
	struct gs_put_args a = { .size = 3 * MiB };
	uint8_t *buf = calloc(1, 3 * MiB);
	(void)state;

	assert_non_null(buf);
	fault_disarm();
	s = must_open(false);
	assert_int_equal(gs_put(s, "x", 1, buf, 3 * MiB, &a), 0);
	assert_int_equal(gs_delete(s, "x", 1), 0);
	gs_stats_get(s, &st);
	assert_int_equal(st.faults_eio + st.faults_short + st.faults_enospc +
				 st.faults_torn + st.write_errors +
				 st.read_errors,
			 0);
	gs_close(s);
	free(buf);
}

/* GOBLIN_FAULTS: a malformed value is an error that names it. */
static void test_faults_env_malformed(void **state)
{
	(void)state;
	setenv("GOBLIN_FAULTS", "12:nosuchstep:eio:3", 1);
	assert_int_equal(fault_env(), -EINVAL);
	unsetenv("GOBLIN_FAULTS");
	fault_disarm();
}

static int setup(void **state)
{
	(void)state;
	return test_mkdtemp(dir, sizeof(dir), "gs-faults") ? 0 : -1;
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
		T(test_faults_off_cost_nothing),
		T(test_faults_env_malformed),
		T(test_issue16_faults_put),
		T(test_issue16_faults_commit),
		T(test_issue16_faults_put_evicting),
		T(test_issue16_faults_eviction),
		T(test_issue16_faults_delete),
		T(test_issue16_faults_rename),
		T(test_issue16_faults_journal_rewrite),
		T(test_issue16_faults_recovery),
		T(test_issue16_faults_read),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
