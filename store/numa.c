/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NUMA placement and promotion of the head pool (see numa.h): the policy
 * first, pure; then the machine: libnuma, mbind(2) and move_pages(2).
 */
#include <assert.h>
#include <errno.h>
#include <numa.h>
#include <numaif.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "clock.h"
#include "numa.h"

static const struct numa_policy default_policy = {
	.min_score = 64, /* a few dozen reads: less is noise */
	.share_pct = 60, /* one remote node reads it most */
	.lead = 2,	 /* and twice as much as its own node */
	.confirm = 2,	 /* two rounds in a row: not a burst */
	.cooldown = 8,	 /* rounds: no ping-pong faster than this */
	.cap = 8,	 /* 16 MiB a round at most */
	.interval_ms = 1000,
};

/* ---- topology ---- */

void numa_topo_release(struct numa_topo *t)
{
	free(t->cpu_node);
	t->cpu_node = NULL;
}

unsigned numa_topo_mem_nodes(const struct numa_topo *t)
{
	uint64_t m = t->nnodes < 64 ? t->mem_nodes & ((1ull << t->nnodes) - 1) :
				      t->mem_nodes;

	return (unsigned)__builtin_popcountll(m);
}

unsigned numa_topo_node_of(const struct numa_topo *t, int cpu)
{
	if (!t->cpu_node || cpu < 0 || (unsigned)cpu >= t->ncpus)
		return 0;
	return t->cpu_node[cpu];
}

static bool is_mem_node(const struct numa_topo *t, unsigned node)
{
	return node < t->nnodes && (t->mem_nodes >> node & 1);
}

/* "0,1,3": the memory nodes of @t, for messages. */
static void mem_node_list(const struct numa_topo *t, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (unsigned i = 0; i < t->nnodes && used < len; i++)
		if (is_mem_node(t, i))
			used += (size_t)snprintf(buf + used, len - used, "%s%u",
						 used ? "," : "", i);
}

/* ---- policy ---- */

int numa_init(struct numa *n, const struct numa_topo *t, int home, bool promote,
	      bool perverse, char *err, size_t errlen)
{
	char nodes[128];
	unsigned k = numa_topo_mem_nodes(t);

	memset(n, 0, sizeof(*n));
	n->home = -1;
	mem_node_list(t, nodes, sizeof(nodes));
	if (home >= 0 && !is_mem_node(t, (unsigned)home)) {
		if (err && errlen)
			snprintf(err, errlen,
				 "--numa %d: no such NUMA node with memory "
				 "(this machine has node%s %s)",
				 home, k > 1 ? "s" : "", nodes);
		return -EINVAL;
	}
	if (perverse && k < 2) {
		if (err && errlen)
			snprintf(err, errlen,
				 "--perverse needs two NUMA nodes with memory "
				 "(this machine has node%s %s)",
				 k > 1 ? "s" : "", nodes);
		return -EINVAL;
	}
	n->topo = *t;
	if (t->cpu_node) {
		n->topo.cpu_node = malloc(t->ncpus ? t->ncpus : 1);
		if (!n->topo.cpu_node)
			return -ENOMEM;
		memcpy(n->topo.cpu_node, t->cpu_node, t->ncpus);
	}
	n->pol = default_policy;
	n->home = home;
	n->promote = promote;
	n->perverse = perverse;
	n->move = numa_move_pages_fn;
	return 0;
}

void numa_plan(const struct numa_topo *t, int home, bool perverse, uint8_t *loc,
	       uint32_t nblk)
{
	uint8_t nodes[NUMA_MAX_NODES];
	unsigned k = 0, j;

	for (unsigned i = 0; i < t->nnodes && i < NUMA_MAX_NODES; i++)
		if (is_mem_node(t, i))
			nodes[k++] = (uint8_t)i;
	if (k == 0)
		nodes[k++] = 0;
	for (uint32_t b = 0; b < nblk; b++)
		loc[b] = home >= 0 ? (uint8_t)home : nodes[b % k];
	if (!perverse || k < 2 || nblk == 0)
		return;
	for (j = 0; j < k && nodes[j] != loc[0]; j++)
		;
	loc[0] = nodes[(j + 1) % k];
}

int numa_attach(struct numa *n, uint8_t *base, uint64_t size, uint64_t page)
{
	size_t cells;

	n->base = base;
	n->size = size;
	n->page = page;
	n->nblk = (uint32_t)((size + NUMA_BLOCK - 1) / NUMA_BLOCK);
	if (n->nblk == 0)
		return 0;
	cells = (size_t)n->topo.nnodes * n->nblk;
	n->loc = malloc(n->nblk);
	n->hits = calloc(cells, sizeof(*n->hits));
	n->score = calloc(cells, sizeof(*n->score));
	n->streak = calloc(n->nblk, sizeof(*n->streak));
	n->rest = calloc(n->nblk, sizeof(*n->rest));
	if (!n->loc || !n->hits || !n->score || !n->streak || !n->rest)
		return -ENOMEM; /* numa_close() frees what was allocated */
	numa_plan(&n->topo, n->home, n->perverse, n->loc, n->nblk);
	n->track = n->promote && numa_topo_mem_nodes(&n->topo) >= 2;
	return 0;
}

void numa_note(struct numa *n, const void *p, unsigned node)
{
	uint64_t off = (uint64_t)((uintptr_t)p - (uintptr_t)n->base);

	if (!n->track || node >= n->topo.nnodes || off >= n->size)
		return;
	atomic_fetch_add_explicit(
		&n->hits[(size_t)node * n->nblk + off / NUMA_BLOCK], 1,
		memory_order_relaxed);
}

void numa_note_here(struct numa *n, const void *p)
{
	if (n->track) /* one branch on one-node machines */
		numa_note(n, p, numa_topo_node_of(&n->topo, sched_getcpu()));
}

/* Fold block @b's new reads into its scores; returns their sum. */
static uint64_t fold(struct numa *n, uint32_t b)
{
	uint64_t total = 0;

	for (unsigned v = 0; v < n->topo.nnodes; v++) {
		size_t i = (size_t)v * n->nblk + b;
		uint64_t s = n->score[i] / 2 +
			     atomic_exchange_explicit(&n->hits[i], 0,
						      memory_order_relaxed);

		n->score[i] = s > UINT32_MAX ? UINT32_MAX : (uint32_t)s;
		total += n->score[i];
	}
	return total;
}

/* The memory node with the highest score for @b; ties keep it where it is. */
static unsigned busiest(const struct numa *n, uint32_t b)
{
	unsigned best = n->loc[b];
	uint32_t top = n->score[(size_t)best * n->nblk + b];

	for (unsigned v = 0; v < n->topo.nnodes; v++) {
		uint32_t s = n->score[(size_t)v * n->nblk + b];

		if (s > top && is_mem_node(&n->topo, v)) {
			top = s;
			best = v;
		}
	}
	return best;
}

/* Insert @m into @mv (k entries, most gain first), keeping at most @cap. */
static uint32_t keep_hottest(struct numa_move *mv, uint32_t k, uint32_t cap,
			     const struct numa_move *m)
{
	uint32_t i;

	if (cap == 0 || (k == cap && mv[k - 1].gain >= m->gain))
		return k;
	if (k < cap)
		k++;
	for (i = k - 1; i > 0 && mv[i - 1].gain < m->gain; i--)
		mv[i] = mv[i - 1];
	mv[i] = *m;
	return k;
}

uint32_t numa_decide(struct numa *n, struct numa_move *mv)
{
	const struct numa_policy *p = &n->pol;
	uint32_t cap = p->cap < NUMA_CAP_MAX ? p->cap : NUMA_CAP_MAX, k = 0;

	if (!n->track)
		return 0;
	for (uint32_t b = 0; b < n->nblk; b++) {
		uint64_t total = fold(n, b);
		unsigned here = n->loc[b], to = busiest(n, b);
		uint64_t s_to = n->score[(size_t)to * n->nblk + b];
		uint64_t s_here = n->score[(size_t)here * n->nblk + b];
		struct numa_move m = { b, (uint8_t)here, (uint8_t)to,
				       s_to - s_here };

		if (n->rest[b]) {
			n->rest[b]--;
			n->streak[b] = 0;
			continue;
		}
		if (to == here || total < p->min_score ||
		    s_to * 100 < (uint64_t)p->share_pct * total ||
		    s_to < (uint64_t)p->lead * s_here) {
			n->streak[b] = 0;
			continue;
		}
		if (n->streak[b] < p->confirm)
			n->streak[b]++;
		if (n->streak[b] >= p->confirm)
			k = keep_hottest(mv, k, cap, &m);
	}
	return k;
}

static void count_move(struct numa *n, uint64_t len, uint64_t ns)
{
	atomic_fetch_add_explicit(&n->promotions, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&n->bytes_moved, len, memory_order_relaxed);
	atomic_fetch_add_explicit(&n->swap_ns_total, ns, memory_order_relaxed);
	/* one writer: the promotion thread */
	if (ns > atomic_load_explicit(&n->swap_ns_max, memory_order_relaxed))
		atomic_store_explicit(&n->swap_ns_max, ns,
				      memory_order_relaxed);
}

static uint64_t block_len(const struct numa *n, uint32_t b)
{
	uint64_t off = (uint64_t)b * NUMA_BLOCK;

	return n->size - off < NUMA_BLOCK ? n->size - off : NUMA_BLOCK;
}

uint32_t numa_round(struct numa *n)
{
	struct numa_move mv[NUMA_CAP_MAX];
	uint32_t k = numa_decide(n, mv), moved = 0;

	for (uint32_t i = 0; i < k; i++) {
		uint32_t b = mv[i].blk;
		uint64_t len = block_len(n, b), t0 = (uint64_t)gs_mono_ns();
		int ret = n->move(n, n->base + (uint64_t)b * NUMA_BLOCK, len,
				  mv[i].to);
		uint64_t ns = (uint64_t)gs_mono_ns() - t0;

		n->rest[b] = n->pol.cooldown; /* a failure too: no hammering */
		n->streak[b] = 0;
		if (ret < 0) {
			atomic_fetch_add_explicit(&n->move_failures, 1,
						  memory_order_relaxed);
			continue;
		}
		n->loc[b] = mv[i].to;
		count_move(n, len, ns);
		moved++;
	}
	return moved;
}

void numa_counts_get(struct numa *n, struct numa_counts *c)
{
	c->promotions = atomic_load(&n->promotions);
	c->bytes_moved = atomic_load(&n->bytes_moved);
	c->swap_ns_total = atomic_load(&n->swap_ns_total);
	c->swap_ns_max = atomic_load(&n->swap_ns_max);
	c->move_failures = atomic_load(&n->move_failures);
}

/* ---- the machine ---- */

int numa_topo_probe(struct numa_topo *t)
{
	int ncpus;

	memset(t, 0, sizeof(*t));
	t->nnodes = 1;
	t->mem_nodes = 1;
	if (numa_available() < 0)
		return 0; /* no NUMA support: one node, node 0 */
	t->nnodes = (unsigned)numa_max_node() + 1;
	if (t->nnodes > NUMA_MAX_NODES)
		t->nnodes = NUMA_MAX_NODES;
	t->mem_nodes = 0;
	for (unsigned i = 0; i < t->nnodes; i++)
		if (numa_bitmask_isbitset(numa_all_nodes_ptr, i))
			t->mem_nodes |= 1ull << i;
	ncpus = numa_num_configured_cpus();
	if (ncpus <= 0)
		return 0;
	t->cpu_node = malloc((size_t)ncpus);
	if (!t->cpu_node)
		return -ENOMEM;
	t->ncpus = (unsigned)ncpus;
	for (int c = 0; c < ncpus; c++) {
		int node = numa_node_of_cpu(c);

		t->cpu_node[c] = node > 0 && (unsigned)node < t->nnodes ?
					 (uint8_t)node :
					 0;
	}
	return 0;
}

/* mbind(2)'s node mask for one node; maxnode is its bit count + 1. */
#define MASK_LONGS   ((NUMA_MAX_NODES + 63) / 64)
#define MASK_MAXNODE (NUMA_MAX_NODES + 1)

static void one_node_mask(unsigned long *mask, unsigned node)
{
	memset(mask, 0, MASK_LONGS * sizeof(*mask));
	mask[node / (8 * sizeof(long))] = 1ul << (node % (8 * sizeof(long)));
}

/* The calling thread's memory on @node, and its cpus when it has any. */
static int bind_thread(unsigned node)
{
	unsigned long mask[MASK_LONGS];
	struct bitmask *cpus;
	int ret = 0;

	one_node_mask(mask, node);
	if (set_mempolicy(MPOL_BIND, mask, MASK_MAXNODE) < 0)
		return -errno;
	cpus = numa_allocate_cpumask();
	if (!cpus)
		return -ENOMEM;
	if (numa_node_to_cpus((int)node, cpus) == 0 &&
	    numa_bitmask_weight(cpus) > 0 &&
	    numa_sched_setaffinity(0, cpus) < 0)
		ret = -errno;
	numa_free_cpumask(cpus);
	return ret;
}

/* Bind [p, p+len) to @node, moving what is elsewhere; 0 or -errno. */
static int bind_range(void *p, uint64_t len, unsigned node)
{
	unsigned long mask[MASK_LONGS];

	if (!p || !len)
		return 0;
	one_node_mask(mask, node);
	if (mbind(p, len, MPOL_BIND, mask, MASK_MAXNODE,
		  MPOL_MF_MOVE | MPOL_MF_STRICT) < 0)
		return -errno;
	return 0;
}

int numa_open(struct numa *n, int home, bool promote, bool perverse, char *err,
	      size_t errlen)
{
	struct numa_topo t;
	int ret = numa_topo_probe(&t);

	if (ret == 0)
		ret = numa_init(n, &t, home, promote, perverse, err, errlen);
	numa_topo_release(&t);
	if (ret < 0 || home < 0)
		return ret;
	if (numa_available() < 0) {
		if (err && errlen)
			snprintf(err, errlen,
				 "--numa %d: this system has no NUMA support",
				 home);
		return -ENOSYS;
	}
	ret = bind_thread((unsigned)home);
	if (ret < 0 && err && errlen)
		snprintf(err, errlen, "--numa %d: cannot bind to the node: %s",
			 home, strerror(-ret));
	return ret;
}

/*
 * Why readers need no lock while a block moves: move_pages(2) keeps every
 * virtual address, so the head slots, the pointers readers hold into them
 * and the free-slot stack all stay valid.  The kernel swaps each page for
 * a migration entry while it copies it; a thread that touches the page
 * meanwhile faults and sleeps until the copy is mapped, then sees the same
 * bytes.  The price is that stall, at most one page's copy (4 KiB, or
 * 2 MiB on HugeTLB), which numa_swap_ns_max bounds from above.  mlocked
 * pages may be migrated: they stay locked.
 */
int numa_move_pages_fn(struct numa *n, void *addr, uint64_t len, unsigned node)
{
	enum { MAXP = NUMA_BLOCK / 4096 };
	void *pages[MAXP];
	int nodes[MAXP] = { 0 }, status[MAXP];
	uint64_t pg = n->page ? n->page : 4096;
	unsigned long cnt = (unsigned long)((len + pg - 1) / pg);
	long r;

	if (cnt == 0 || cnt > MAXP)
		return -EINVAL;
	for (unsigned long i = 0; i < cnt; i++) {
		pages[i] = (uint8_t *)addr + i * pg;
		nodes[i] = (int)node;
		status[i] = -EAGAIN;
	}
	r = numa_move_pages(0, cnt, pages, nodes, status, MPOL_MF_MOVE);
	if (r < 0)
		return -errno;
	for (unsigned long i = 0; i < cnt; i++)
		if (status[i] != (int)node)
			return status[i] < 0 ? status[i] : -EAGAIN;
	return r > 0 ? -EAGAIN : 0;
}

int numa_node_of_addr(void *addr)
{
	int status = -EAGAIN;

	if (numa_move_pages(0, 1, &addr, NULL, &status, 0) < 0)
		return -errno;
	return status;
}

static void *promoter(void *arg)
{
	struct numa *n = arg;
	struct timespec t;

	pthread_mutex_lock(&n->mu);
	while (!n->stop) {
		t = gs_clock_after(CLOCK_MONOTONIC,
				   (int64_t)n->pol.interval_ms * 1000000);
		while (!n->stop &&
		       pthread_cond_timedwait(&n->cv, &n->mu, &t) != ETIMEDOUT)
			;
		if (n->stop)
			break;
		pthread_mutex_unlock(&n->mu);
		numa_round(n);
		pthread_mutex_lock(&n->mu);
	}
	pthread_mutex_unlock(&n->mu);
	return NULL;
}

/* Start the promotion thread, with every signal blocked: they are the
 * front-end's. */
static int promoter_start(struct numa *n)
{
	pthread_condattr_t ca;
	sigset_t all, old;
	int ret;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_mutex_init(&n->mu, NULL);
	pthread_cond_init(&n->cv, &ca);
	pthread_condattr_destroy(&ca);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = -pthread_create(&n->thread, NULL, promoter, n);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret < 0) {
		pthread_mutex_destroy(&n->mu);
		pthread_cond_destroy(&n->cv);
		return ret;
	}
	pthread_setname_np(n->thread, "goblin-numa");
	n->running = true;
	return 0;
}

/*
 * Put the head blocks where numa_plan() said, when that is not where they
 * were faulted in, and record where each really is: a move the kernel
 * cannot make leaves a block where it was (only region zero's, under
 * --perverse, is an error: the experiment would be void).
 */
static int place_blocks(struct numa *n, char *err, size_t errlen)
{
	for (uint32_t b = 0; b < n->nblk; b++) {
		uint8_t *p = n->base + (uint64_t)b * NUMA_BLOCK;
		int now = numa_node_of_addr(p), ret = 0;

		if (now != n->loc[b])
			ret = n->move(n, p, block_len(n, b), n->loc[b]);
		if (ret < 0 && b == 0 && n->perverse) {
			if (err && errlen)
				snprintf(err, errlen,
					 "--perverse: cannot move region zero "
					 "to node %u: %s",
					 n->loc[0], strerror(-ret));
			return ret;
		}
		now = numa_node_of_addr(p);
		if (now >= 0 && is_mem_node(&n->topo, (unsigned)now))
			n->loc[b] = (uint8_t)now;
	}
	return 0;
}

int numa_place(struct numa *n, uint8_t *head, uint64_t head_size,
	       uint64_t head_page, uint8_t *small, uint64_t small_size,
	       char *err, size_t errlen)
{
	int ret = numa_attach(n, head, head_size, head_page);

	if (ret < 0)
		return ret;
	if (n->home >= 0) {
		ret = bind_range(head, head_size, (unsigned)n->home);
		if (ret == 0)
			ret = bind_range(small, small_size, (unsigned)n->home);
		if (ret < 0) {
			if (err && errlen)
				snprintf(err, errlen,
					 "--numa %d: cannot bind the RAM pools "
					 "to the node: %s",
					 n->home, strerror(-ret));
			return ret;
		}
	}
	if (numa_topo_mem_nodes(&n->topo) >= 2 &&
	    (ret = place_blocks(n, err, errlen)) < 0)
		return ret;
	return n->track ? promoter_start(n) : 0;
}

void numa_close(struct numa *n)
{
	if (n->running) {
		pthread_mutex_lock(&n->mu);
		n->stop = true;
		pthread_cond_signal(&n->cv);
		pthread_mutex_unlock(&n->mu);
		pthread_join(n->thread, NULL);
		pthread_mutex_destroy(&n->mu);
		pthread_cond_destroy(&n->cv);
		n->running = false;
	}
	free(n->loc);
	free(n->hits);
	free(n->score);
	free(n->streak);
	free(n->rest);
	n->loc = NULL;
	n->hits = NULL;
	n->score = NULL;
	n->streak = NULL;
	n->rest = NULL;
	n->track = false;
	numa_topo_release(&n->topo);
}
