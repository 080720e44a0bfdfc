/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NUMA: the placement plan and the promotion policy against simulated
 * topologies of 2 and 4 nodes (this machine has one), then what one node
 * can show for real: --numa 0 binds, a bad node fails, move_pages keeps
 * the bytes and the addresses, and promotion stays idle.
 */
#include <errno.h>
#include <numaif.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include "internal.h"

#include "testdir.h"

#define MiB (1ull << 20)
#define B   NUMA_BLOCK

/* ---- a simulated machine ---- */

static uint8_t *pool; /* address space only: PROT_NONE */
#define POOL_BLOCKS 16

static int pool_setup(void **state)
{
	(void)state;
	pool = mmap(NULL, POOL_BLOCKS * B, PROT_NONE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	return pool == MAP_FAILED ? -1 : 0;
}

static int pool_teardown(void **state)
{
	(void)state;
	return munmap(pool, POOL_BLOCKS * B);
}

/* What the fake mover was asked to do. */
static struct {
	unsigned n;
	uint32_t blk[64];
	unsigned to[64];
	uint64_t len[64];
	int fail; /* returned when non-zero */
} moves;

#define FAKE_MOVE_NS 50000 /* each fake move takes this long */

static int fake_move(struct numa *n, void *addr, uint64_t len, unsigned node)
{
	struct timespec d = { 0, FAKE_MOVE_NS };

	assert_true(moves.n < 64);
	moves.blk[moves.n] = (uint32_t)(((uint8_t *)addr - n->base) / B);
	moves.to[moves.n] = node;
	moves.len[moves.n] = len;
	moves.n++;
	nanosleep(&d, NULL);
	return moves.fail;
}

/*
 * A simulated machine of @nnodes nodes (memory on the nodes in @mem, all
 * of them when 0) and a pool of @nblk blocks, moves recorded by
 * fake_move.
 */
static void sim(struct numa *n, unsigned nnodes, uint64_t mem, int home,
		bool promote, bool perverse, uint32_t nblk)
{
	struct numa_topo t = { .nnodes = nnodes, .ncpus = 0 };
	char err[160];

	t.mem_nodes = mem ? mem : (1ull << nnodes) - 1;
	assert_int_equal(
		numa_init(n, &t, home, promote, perverse, err, sizeof(err)), 0);
	assert_int_equal(numa_attach(n, pool, (uint64_t)nblk * B, 4096), 0);
	n->move = fake_move;
	memset(&moves, 0, sizeof(moves));
}

/* @count reads of block @blk from node @node. */
static void reads(struct numa *n, uint32_t blk, unsigned node, unsigned count)
{
	for (unsigned i = 0; i < count; i++)
		numa_note(n, pool + (uint64_t)blk * B + (i * 4096) % B, node);
}

/* ---- the plan ---- */

static void test_plan_home_and_stripes(void **state)
{
	struct numa_topo t2 = { .nnodes = 2, .mem_nodes = 3 };
	struct numa_topo t4 = { .nnodes = 4, .mem_nodes = 0xf };
	struct numa_topo holes = { .nnodes = 4, .mem_nodes = 0xb }; /* no 2 */
	static const uint8_t with_memory[] = { 0, 1, 3 };
	uint8_t loc[9];

	(void)state;
	numa_plan(&t2, 1, false, loc, 9);
	for (int i = 0; i < 9; i++)
		assert_int_equal(loc[i], 1);
	numa_plan(&t4, -1, false, loc, 9);
	for (int i = 0; i < 9; i++)
		assert_int_equal(loc[i], i % 4);
	/* a node without memory gets no stripe */
	numa_plan(&holes, -1, false, loc, 9);
	for (int i = 0; i < 9; i++)
		assert_int_equal(loc[i], with_memory[i % 3]);
}

static void test_perverse_region_zero_remote(void **state)
{
	struct numa_topo t2 = { .nnodes = 2, .mem_nodes = 3 };
	struct numa_topo t4 = { .nnodes = 4, .mem_nodes = 0xf };
	uint8_t loc[8];

	(void)state;
	numa_plan(&t2, 0, true, loc, 8);
	assert_int_equal(loc[0], 1);
	for (int i = 1; i < 8; i++)
		assert_int_equal(loc[i], 0);
	numa_plan(&t4, 2, true, loc, 8);
	assert_int_not_equal(loc[0], 2);
	assert_true(loc[0] < 4);
	for (int i = 1; i < 8; i++)
		assert_int_equal(loc[i], 2);
	/* striped: region zero leaves its stripe, the others keep theirs */
	numa_plan(&t4, -1, true, loc, 8);
	assert_int_not_equal(loc[0], 0);
	for (int i = 1; i < 8; i++)
		assert_int_equal(loc[i], i % 4);
}

/* The A/B experiment: promotion undoes --perverse; frozen, it stays. */
static void test_perverse_undone_by_promotion(void **state)
{
	struct numa n;

	(void)state;
	for (int frozen = 0; frozen < 2; frozen++) {
		sim(&n, 2, 0, 0, !frozen, true, 4);
		assert_int_equal(n.loc[0], 1);
		for (int r = 0; r < 3; r++) {
			reads(&n, 0, 0, 500); /* node 0 serves everything */
			numa_round(&n);
		}
		assert_int_equal(n.loc[0], frozen ? 1 : 0);
		assert_int_equal(moves.n, frozen ? 0 : 1);
		numa_close(&n);
	}
}

static void test_init_rejects(void **state)
{
	struct numa_topo t2 = { .nnodes = 2, .mem_nodes = 3 };
	struct numa_topo hole = { .nnodes = 3, .mem_nodes = 5 };
	struct numa_topo t1 = { .nnodes = 1, .mem_nodes = 1 };
	struct numa n;
	char err[160];

	(void)state;
	assert_int_equal(numa_init(&n, &t2, 2, true, false, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "--numa 2"));
	assert_non_null(strstr(err, "nodes 0,1"));
	numa_close(&n);
	assert_int_equal(numa_init(&n, &hole, 1, true, false, err, sizeof(err)),
			 -EINVAL);
	numa_close(&n);
	assert_int_equal(numa_init(&n, &t1, -1, true, true, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "--perverse"));
	numa_close(&n);
	assert_int_equal(numa_init(&n, &hole, 2, true, false, err, sizeof(err)),
			 0);
	numa_close(&n);
}

/* ---- the policy ---- */

static void test_hot_remote_block_promoted(void **state)
{
	struct numa n;
	struct numa_counts c;

	(void)state;
	sim(&n, 2, 0, 0, true, false, 8);
	reads(&n, 3, 1, 300);
	reads(&n, 3, 0, 10);
	assert_int_equal(numa_round(&n), 0); /* one round is a burst */
	assert_int_equal(moves.n, 0);
	reads(&n, 3, 1, 300);
	assert_int_equal(numa_round(&n), 1);
	assert_int_equal(moves.n, 1);
	assert_int_equal(moves.blk[0], 3);
	assert_int_equal(moves.to[0], 1);
	assert_int_equal(moves.len[0], B);
	assert_int_equal(n.loc[3], 1);
	numa_counts_get(&n, &c);
	assert_int_equal(c.promotions, 1);
	assert_int_equal(c.bytes_moved, B);
	assert_true(c.swap_ns_max >= FAKE_MOVE_NS);
	assert_true(c.swap_ns_total >= c.swap_ns_max);
	assert_int_equal(c.move_failures, 0);
	/* now local: it stays */
	for (int r = 0; r < 20; r++) {
		reads(&n, 3, 1, 300);
		numa_round(&n);
	}
	assert_int_equal(moves.n, 1);
	numa_close(&n);

	/* four nodes: to the one that reads it, not merely away */
	sim(&n, 4, 0, 0, true, false, 8);
	for (int r = 0; r < 2; r++) {
		reads(&n, 5, 3, 400);
		reads(&n, 5, 2, 40);
		numa_round(&n);
	}
	assert_int_equal(moves.n, 1);
	assert_int_equal(moves.blk[0], 5);
	assert_int_equal(moves.to[0], 3);
	numa_close(&n);
}

/* Reads of one round: @count reads of block @blk from node @node. */
struct traffic {
	uint32_t blk;
	unsigned node, count;
};

/* Blocks all on node 0 that must stay there under their traffic. */
static void test_local_and_balanced_stay(void **state)
{
	static const struct {
		const char *what;
		unsigned nnodes;
		uint64_t mem;	     /* 0: every node has memory */
		struct traffic t[4]; /* count 0 ends it */
	} cases[] = {
		{ "local", 2, 0, { { 0, 0, 1000 } } },
		{ "balanced", 2, 0, { { 0, 0, 500 }, { 0, 1, 500 } } },
		{ "remote but cold", 2, 0, { { 0, 1, 20 } } },
		{ "remote, no clear majority",
		  2,
		  0,
		  { { 0, 0, 300 }, { 0, 1, 400 } } },
		{ "a majority, not twice the local reads",
		  2,
		  0,
		  { { 0, 1, 620 }, { 0, 0, 380 } } },
		{ "read from a node without memory",
		  3,
		  0x3,
		  { { 0, 2, 1000 } } },
		{ "mostly remote, no remote node has most",
		  4,
		  0,
		  { { 0, 1, 350 }, { 0, 2, 350 }, { 0, 3, 300 } } },
	};
	struct numa n;

	(void)state;
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		sim(&n, cases[c].nnodes, cases[c].mem, 0, true, false, 1);
		for (int r = 0; r < 20; r++) {
			for (const struct traffic *t = cases[c].t;
			     t < cases[c].t + 4 && t->count; t++)
				reads(&n, t->blk, t->node, t->count);
			numa_round(&n);
		}
		if (moves.n)
			fail_msg("%s: moved", cases[c].what);
		assert_int_equal(n.loc[0], 0);
		numa_close(&n);
	}
}

static void test_hysteresis_no_ping_pong(void **state)
{
	struct numa n;
	int r;

	(void)state;
	sim(&n, 2, 0, 0, true, false, 2);
	/* the serving node flips every round: the block never moves */
	for (r = 0; r < 30; r++) {
		reads(&n, 0, r % 2 ? 0 : 1, 1000);
		numa_round(&n);
	}
	assert_int_equal(moves.n, 0);
	/* a real shift moves it, once, within a few rounds ... */
	for (r = 0; r < 5 && moves.n == 0; r++) {
		reads(&n, 0, 1, 1000);
		numa_round(&n);
	}
	assert_true(r >= n.pol.confirm);
	assert_int_equal(moves.n, 1);
	assert_int_equal(n.loc[0], 1);
	/* ... and a shift back waits out the cooldown, then confirms */
	for (r = 0; r < n.pol.cooldown + n.pol.confirm - 1; r++) {
		reads(&n, 0, 0, 1000);
		numa_round(&n);
	}
	assert_int_equal(moves.n, 1);
	reads(&n, 0, 0, 1000);
	numa_round(&n);
	assert_int_equal(moves.n, 2);
	assert_int_equal(n.loc[0], 0);
	numa_close(&n);
}

static void test_cap_per_round(void **state)
{
	struct numa n;
	uint32_t seen[12] = { 0 };

	(void)state;
	sim(&n, 2, 0, 0, true, false, 12);
	n.pol.cap = 4;
	for (int r = 0; r < 5; r++) {
		unsigned before = moves.n;

		/* block b is hotter the higher b; all remote */
		for (uint32_t b = 0; b < 12; b++)
			reads(&n, b, 1, 100 + 50 * b);
		numa_round(&n);
		assert_true(moves.n - before <= 4);
		if (r == 1) { /* first moves: the four hottest */
			assert_int_equal(moves.n, 4);
			for (unsigned i = 0; i < 4; i++)
				assert_int_equal(moves.blk[i], 11 - i);
		}
	}
	assert_int_equal(moves.n, 12);
	for (unsigned i = 0; i < 12; i++)
		seen[moves.blk[i]]++;
	for (unsigned b = 0; b < 12; b++) {
		assert_int_equal(seen[b], 1);
		assert_int_equal(n.loc[b], 1);
	}
	numa_close(&n);
}

static void test_no_promotion_freezes(void **state)
{
	struct numa n;
	struct numa_counts c;
	struct numa_move mv[NUMA_CAP_MAX];

	(void)state;
	sim(&n, 2, 0, 0, false, false, 4);
	assert_false(n.track);
	for (int r = 0; r < 10; r++) {
		reads(&n, 2, 1, 5000);
		assert_int_equal(numa_decide(&n, mv), 0);
		assert_int_equal(numa_round(&n), 0);
	}
	assert_int_equal(moves.n, 0);
	for (int b = 0; b < 4; b++)
		assert_int_equal(n.loc[b], 0);
	numa_counts_get(&n, &c);
	assert_int_equal(c.promotions, 0);
	numa_close(&n);
}

static void test_move_failure_counted(void **state)
{
	struct numa n;
	struct numa_counts c;

	(void)state;
	sim(&n, 2, 0, 0, true, false, 2);
	moves.fail = -EBUSY;
	for (int r = 0; r < 4; r++) {
		reads(&n, 1, 1, 1000);
		numa_round(&n);
	}
	assert_int_equal(moves.n, 1); /* tried once, then rests */
	assert_int_equal(n.loc[1], 0);
	numa_counts_get(&n, &c);
	assert_int_equal(c.move_failures, 1);
	assert_int_equal(c.promotions, 0);
	assert_int_equal(c.bytes_moved, 0);
	numa_close(&n);
}

/* Reads count for the node of the reading thread's cpu. */
static void test_note_here_uses_cpu_topology(void **state)
{
	uint8_t cpu_node[CPU_SETSIZE];
	struct numa_topo t = { .nnodes = 2,
			       .mem_nodes = 3,
			       .ncpus = CPU_SETSIZE,
			       .cpu_node = cpu_node };
	struct numa n;
	char err[160];

	(void)state;
	memset(cpu_node, 1, sizeof(cpu_node)); /* every cpu on node 1 */
	assert_int_equal(numa_init(&n, &t, 0, true, false, err, sizeof(err)),
			 0);
	assert_int_equal(numa_attach(&n, pool, 3 * B, 4096), 0);
	n.move = fake_move;
	memset(&moves, 0, sizeof(moves));
	for (int r = 0; r < 2; r++) {
		for (int i = 0; i < 500; i++) {
			numa_note_here(&n, pool + 2 * B + 100);
			numa_note_here(&n, pool + 3 * B); /* past the pool */
			numa_note_here(&n, (void *)((uintptr_t)pool - 1));
		}
		numa_round(&n);
	}
	assert_int_equal(moves.n, 1);
	assert_int_equal(moves.blk[0], 2);
	assert_int_equal(moves.to[0], 1);
	numa_close(&n);
}

/* ---- this machine ---- */

static char dir[64]; /* test_mkdtemp: $TMPDIR up to ~45 bytes */

static int store_setup(void **state)
{
	(void)state;
	return test_mkdtemp(dir, sizeof(dir), "gs-numa") ? 0 : -1;
}

static int store_teardown(void **state)
{
	(void)state;
	return test_rmtree(dir);
}

static void test_real_topology(void **state)
{
	struct numa_topo t;

	(void)state;
	assert_int_equal(numa_topo_probe(&t), 0);
	assert_true(t.nnodes >= 1);
	assert_true(numa_topo_mem_nodes(&t) >= 1);
	for (unsigned c = 0; c < t.ncpus; c++)
		assert_true(t.cpu_node[c] < t.nnodes);
	assert_true(numa_topo_node_of(&t, sched_getcpu()) < t.nnodes);
	numa_topo_release(&t);
}

static struct gs_store *open_with(int node, bool perverse, int *ret)
{
	struct gs_options o;
	struct gs_store *s = NULL;
	char err[256] = "";

	gs_options_init(&o);
	o.create = true;
	o.no_mlock = true;
	o.memory = 8 * MiB;
	o.small_memory = 4 * MiB;
	o.ssd_size = 64 * MiB;
	o.numa_node = node;
	o.perverse = perverse;
	*ret = gs_open(dir, &o, &s, err, sizeof(err));
	if (*ret < 0) {
		assert_null(s);
		/* the message names the option at fault */
		assert_non_null(
			strstr(err, perverse ? "--perverse" : "--numa"));
	}
	return s;
}

static int policy_at(void *addr, unsigned long *mask)
{
	int mode = -1;

	*mask = 0;
	assert_int_equal(get_mempolicy(&mode, mask, NUMA_MAX_NODES + 1, addr,
				       MPOL_F_ADDR),
			 0);
	return mode;
}

/* Without --numa nothing is bound: what makes the next test able to fail. */
static void test_store_unbound_by_default(void **state)
{
	unsigned long mask;
	struct gs_store *s;
	int ret;

	(void)state;
	s = open_with(-1, false, &ret);
	assert_int_equal(ret, 0);
	assert_int_equal(policy_at(s->head_mem.base, &mask), MPOL_DEFAULT);
	gs_close(s);
}

static void test_store_numa0_binds(void **state)
{
	unsigned long mask;
	cpu_set_t saved;
	struct gs_store *s;
	struct gs_stats st;
	void *val;
	size_t len;
	int mode, ret;

	(void)state;
	assert_int_equal(sched_getaffinity(0, sizeof(saved), &saved), 0);
	s = open_with(0, false, &ret);
	assert_int_equal(ret, 0);
	/* both pools bound to node 0, and the opening thread too */
	assert_int_equal(policy_at(s->head_mem.base, &mask), MPOL_BIND);
	assert_int_equal(mask, 1);
	assert_int_equal(policy_at(s->small_mem.base, &mask), MPOL_BIND);
	assert_int_equal(mask, 1);
	assert_int_equal(
		get_mempolicy(&mode, &mask, NUMA_MAX_NODES + 1, NULL, 0), 0);
	assert_int_equal(mode, MPOL_BIND);
	assert_int_equal(mask, 1);
	for (uint64_t off = 0; off < s->head_mem.size; off += B)
		assert_int_equal(numa_node_of_addr(s->head_mem.base + off), 0);
	/* and the store works */
	assert_int_equal(gs_put(s, "k", 1, "value", 5,
				&(struct gs_put_args){ .size = 5 }),
			 0);
	assert_int_equal(gs_get(s, "k", 1, &val, &len, NULL), 0);
	assert_int_equal(len, 5);
	assert_memory_equal(val, "value", 5);
	free(val);
	gs_stats_get(s, &st);
	assert_true(st.numa_nodes >= 1);
	gs_close(s);
	/* give the other tests their unbound thread back */
	assert_int_equal(set_mempolicy(MPOL_DEFAULT, NULL, 0), 0);
	assert_int_equal(sched_setaffinity(0, sizeof(saved), &saved), 0);
}

static void test_store_bad_node_fails(void **state)
{
	struct numa_topo t;
	int ret;

	(void)state;
	assert_int_equal(numa_topo_probe(&t), 0);
	assert_null(open_with((int)t.nnodes, false, &ret));
	assert_int_equal(ret, -EINVAL);
	assert_null(open_with(NUMA_MAX_NODES - 1, false, &ret));
	assert_int_equal(ret, -EINVAL);
	numa_topo_release(&t);
}

/* One node: --perverse has no remote node and says so; two: it obeys. */
static void test_store_perverse(void **state)
{
	struct numa_topo t;
	struct gs_store *s;
	int ret;

	(void)state;
	assert_int_equal(numa_topo_probe(&t), 0);
	s = open_with(-1, true, &ret);
	if (numa_topo_mem_nodes(&t) < 2) {
		assert_int_equal(ret, -EINVAL);
	} else {
		assert_int_equal(ret, 0);
		assert_int_not_equal(numa_node_of_addr(s->head_mem.base),
				     numa_node_of_addr(s->head_mem.base + B));
		gs_close(s);
	}
	numa_topo_release(&t);
}

/* One node: no promotion thread, reads are not even counted. */
static void test_store_one_node_promotion_idle(void **state)
{
	struct numa_topo t;
	struct gs_store *s;
	struct gs_stats st;
	size_t size = 512 << 10;
	uint8_t *big = malloc(size);
	void *val;
	size_t len;
	int ret;

	(void)state;
	assert_int_equal(numa_topo_probe(&t), 0);
	s = open_with(-1, false, &ret);
	assert_int_equal(ret, 0);
	assert_non_null(big);
	memset(big, 0x5a, size);
	assert_int_equal(gs_put(s, "big", 3, big, size,
				&(struct gs_put_args){ .size = size }),
			 0);
	free(big);
	for (int i = 0; i < 100; i++) {
		assert_int_equal(gs_get(s, "big", 3, &val, &len, NULL), 0);
		assert_int_equal(len, size);
		free(val);
	}
	gs_stats_get(s, &st);
	assert_int_equal(st.numa_nodes, numa_topo_mem_nodes(&t));
	assert_true(st.head_hits >= 100);
	if (numa_topo_mem_nodes(&t) < 2) {
		assert_false(s->numa.running);
		assert_false(s->numa.track);
		for (size_t i = 0; i < (size_t)s->numa.nblk * t.nnodes; i++)
			assert_int_equal(s->numa.hits[i], 0);
		assert_int_equal(numa_round(&s->numa), 0);
		assert_int_equal(st.numa_promotions, 0);
	} else {
		assert_true(s->numa.running);
	}
	gs_close(s);
	numa_topo_release(&t);
}

/*
 * The real mover in a real round: a simulated second node (where the
 * plan puts the block) and node 0 (this machine's) reading it.  The block
 * goes to node 0 through move_pages(2), bytes and addresses intact.  The
 * pages were on node 0 all along, so the kernel copies nothing: this
 * times the call, not a cross-node copy.
 */
static void test_real_move_pages_in_a_round(void **state)
{
	struct numa_topo t = { .nnodes = 2, .mem_nodes = 3 };
	struct numa_counts c;
	struct numa n;
	char err[160];
	uint8_t *mem = mmap(NULL, 2 * B, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

	(void)state;
	assert_true(mem != MAP_FAILED);
	for (uint64_t i = 0; i < 2 * B; i++)
		mem[i] = (uint8_t)(i * 31 + 7);
	assert_int_equal(numa_init(&n, &t, 1, true, false, err, sizeof(err)),
			 0);
	assert_int_equal(numa_attach(&n, mem, 2 * B, 4096), 0);
	assert_ptr_equal(n.move, numa_move_pages_fn);
	for (int r = 0; r < 2; r++) {
		for (int i = 0; i < 1000; i++)
			numa_note(&n, mem + B + i, 0);
		numa_round(&n);
	}
	numa_counts_get(&n, &c);
	assert_int_equal(c.move_failures, 0);
	assert_int_equal(c.promotions, 1);
	assert_int_equal(c.bytes_moved, B);
	assert_true(c.swap_ns_total > 0);
	assert_int_equal(n.loc[1], 0);
	assert_int_equal(numa_node_of_addr(mem + B), 0);
	for (uint64_t i = 0; i < 2 * B; i++)
		assert_int_equal(mem[i], (uint8_t)(i * 31 + 7));
	/* a node the machine does not have: an error, nothing moved */
	assert_true(numa_move_pages_fn(&n, mem, B, NUMA_MAX_NODES - 1) < 0);
	assert_int_equal(numa_node_of_addr(mem), 0);
	/* a page that cannot move (here: not mapped) fails the block */
	assert_int_equal(munmap(mem + B - 4096, 4096), 0);
	assert_true(numa_move_pages_fn(&n, mem, B, 0) < 0);
	numa_close(&n);
	munmap(mem, 2 * B);
}

#define P(t) cmocka_unit_test_setup_teardown(t, pool_setup, pool_teardown)
#define S(t) cmocka_unit_test_setup_teardown(t, store_setup, store_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plan_home_and_stripes),
		cmocka_unit_test(test_perverse_region_zero_remote),
		P(test_perverse_undone_by_promotion),
		cmocka_unit_test(test_init_rejects),
		P(test_hot_remote_block_promoted),
		P(test_local_and_balanced_stay),
		P(test_hysteresis_no_ping_pong),
		P(test_cap_per_round),
		P(test_no_promotion_freezes),
		P(test_move_failure_counted),
		P(test_note_here_uses_cpu_topology),
		cmocka_unit_test(test_real_topology),
		S(test_store_unbound_by_default),
		S(test_store_numa0_binds),
		S(test_store_bad_node_fails),
		S(test_store_perverse),
		S(test_store_one_node_promotion_idle),
		cmocka_unit_test(test_real_move_pages_in_a_round),
	};

	return cmocka_run_group_tests_name("numa", tests, NULL, NULL);
}
