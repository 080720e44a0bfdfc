/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NUMA placement of the head pool: which node each 2 MiB block lives on,
 * and a promotion policy that moves a hot block to the node whose threads
 * read it.  The topology is an input, so the policy runs as well against
 * a simulated machine of several nodes as against the real one.
 */
#ifndef GS_NUMA_H
#define GS_NUMA_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NUMA_BLOCK     (2ull << 20) /* unit of placement and of promotion */
#define NUMA_MAX_NODES 64	    /* nodes numbered past this are not used */
#define NUMA_CAP_MAX   64	    /* most moves one round may make */

struct numa_topo {
	unsigned nnodes;    /* node numbers are 0..nnodes-1 */
	uint64_t mem_nodes; /* bit n: node n has memory we may use */
	unsigned ncpus;
	uint8_t *cpu_node; /* node of each cpu: ncpus entries, or NULL
			    * (every cpu on node 0); owned, malloc'ed */
};

/*
 * When a block moves.  Scores are reads counted since the last round plus
 * half the score of the round before, per block and node.  A block moves
 * to node m when, for @confirm rounds in a row: its score is at least
 * @min_score, m has at least @share_pct percent of it, and m has at least
 * @lead times the score of the node the block is on.  A block that moved
 * (or failed to) stays put for @cooldown rounds.  The hottest @cap
 * candidates move in one round; the others keep their turn.
 */
struct numa_policy {
	uint32_t min_score;
	uint32_t share_pct;
	uint32_t lead;
	uint16_t confirm;
	uint16_t cooldown;
	uint32_t cap;	      /* <= NUMA_CAP_MAX */
	uint32_t interval_ms; /* between rounds of the promotion thread */
};

struct numa_move {
	uint32_t blk;
	uint8_t from, to;
	uint64_t gain; /* score of @to minus score of @from */
};

/* Move [addr, addr+len) to @node keeping its addresses: 0 or -errno. */
struct numa;
typedef int numa_move_fn(struct numa *n, void *addr, uint64_t len,
			 unsigned node);

struct numa_counts {
	uint64_t promotions;	/* blocks moved by the promotion thread */
	uint64_t bytes_moved;	/* their bytes */
	uint64_t swap_ns_total; /* time spent in those moves */
	uint64_t swap_ns_max;	/* the longest one */
	uint64_t move_failures; /* moves the kernel did not complete */
};

struct numa {
	struct numa_topo topo;
	struct numa_policy pol;
	int home;      /* --numa node, -1: none */
	bool promote;  /* not --no-numa-promotion */
	bool perverse; /* block 0 on a node that does not serve it */
	bool track;    /* reads are counted: promote, two memory
			* nodes, and a pool */
	uint8_t *base; /* the head pool */
	uint64_t size;
	uint64_t page; /* its page size: 4 KiB, or 2 MiB HugeTLB */
	uint32_t nblk; /* NUMA_BLOCK blocks, the last maybe short */
	uint8_t *loc;  /* node of each block */
	/*
	 * Reads since the last round, node-major ([node * nblk + blk]):
	 * threads of one node bump counters that no other node writes, so
	 * counting does not bounce cache lines between nodes.
	 */
	_Atomic uint32_t *hits;
	/* the promotion thread's own (the caller's, without the thread) */
	uint32_t *score;    /* [node * nblk + blk], decayed */
	uint16_t *streak;   /* rounds in a row a block qualified */
	uint16_t *rest;	    /* rounds before a block may move again */
	numa_move_fn *move; /* numa_move_pages_fn, or a test's */
	void *move_arg;	    /* for a test's mover */

	pthread_t thread;
	bool running;
	pthread_mutex_t mu; /* stop and cv */
	pthread_cond_t cv;
	bool stop; /* protected by mu */

	_Atomic uint64_t promotions, bytes_moved, swap_ns_total, swap_ns_max,
		move_failures;
};

/* ---- topology ---- */

/*
 * The machine's topology from libnuma; without NUMA support, one node.
 * 0 or -ENOMEM.  numa_topo_release() frees it.
 */
int numa_topo_probe(struct numa_topo *t);
void numa_topo_release(struct numa_topo *t);
/* Nodes with memory we may use. */
unsigned numa_topo_mem_nodes(const struct numa_topo *t);
/* The node serving @cpu (0 for a cpu the topology does not know). */
unsigned numa_topo_node_of(const struct numa_topo *t, int cpu);

/* ---- policy (no system calls; a simulated topology is fine) ---- */

/*
 * Set @n up for topology @t (copied; t->cpu_node too) with the default
 * policy and the real mover.  @home is the --numa node or -1.  Returns 0,
 * -EINVAL when @home is no memory node of @t or @perverse has no remote
 * node to use (@err then says so), or -ENOMEM.
 */
int numa_init(struct numa *n, const struct numa_topo *t, int home, bool promote,
	      bool perverse, char *err, size_t errlen);

/*
 * Cover the pool [base, base+size) of pages of @page bytes: blocks are
 * planned (numa_plan) into n->loc and reads can be counted.  No memory is
 * moved.  0 or -ENOMEM.
 */
int numa_attach(struct numa *n, uint8_t *base, uint64_t size, uint64_t page);

/*
 * The planned node of each of @nblk blocks: all on @home when it is a
 * node, else striped over the memory nodes (block i on the i-th, round
 * robin); with @perverse, block 0 ("region zero", where the first heads
 * go) on the next memory node instead: remote from the one serving it.
 */
void numa_plan(const struct numa_topo *t, int home, bool perverse, uint8_t *loc,
	       uint32_t nblk);

/* Count a read of the byte at @p from a thread of @node. */
void numa_note(struct numa *n, const void *p, unsigned node);
/* Count a read of @p from the calling thread's node.  Lock free. */
void numa_note_here(struct numa *n, const void *p);

/*
 * Fold the reads counted since the last call into the scores and pick
 * the blocks to move, hottest first: at most n->pol.cap of them go into
 * @mv.  Returns how many.  Promotion thread (or a test) only.
 */
uint32_t numa_decide(struct numa *n, struct numa_move *mv);

/*
 * One promotion round: numa_decide(), then each move through n->move,
 * timed and counted.  Returns the number of blocks moved.  Does nothing
 * when promotion is off.
 */
uint32_t numa_round(struct numa *n);

void numa_counts_get(struct numa *n, struct numa_counts *c);

/* ---- the real machine (libnuma) ---- */

/*
 * Probe the machine, numa_init() for it, and with @home >= 0 bind the
 * calling thread, and so the threads it starts afterwards, to @home: its
 * memory (set_mempolicy MPOL_BIND) and, when the node has cpus, its cpus.
 * Call before the pools are mapped, so they are faulted in on @home.
 */
int numa_open(struct numa *n, int home, bool promote, bool perverse, char *err,
	      size_t errlen);

/*
 * Place the pools: with a home node, mbind both to it (moving any page
 * that is elsewhere); else stripe the head pool's blocks over the nodes.
 * With perverse, then move block 0 remote.  Then n->loc says where each
 * head block really is, and when reads are tracked the promotion thread
 * starts.  0, or -errno with @err saying why.
 */
int numa_place(struct numa *n, uint8_t *head, uint64_t head_size,
	       uint64_t head_page, uint8_t *small, uint64_t small_size,
	       char *err, size_t errlen);

/* Stop the promotion thread and free everything; @n may be all zeros. */
void numa_close(struct numa *n);

/*
 * The real mover: move_pages(2) on every page of the range.  Virtual
 * addresses do not change, so pointers into the block stay valid; see
 * numa.c for why readers need no lock while it runs.
 */
numa_move_fn numa_move_pages_fn;

/* The node holding the page at @addr: >= 0, or -errno. */
int numa_node_of_addr(void *addr);

#endif
