/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pingpong: the floor under the ring's round trip (issue 22), on this
 * machine: two threads, one per CPU, hand cache lines back and forth with
 * nothing else between them, timed per round trip with the ring client's
 * timer, clock_gettime(CLOCK_MONOTONIC).
 *   pingpong [--mode line|two|ring] [--walk BYTES] [--secs S] [--cpus A,B]
 * line: one cache line, each side waits for the other's count in it;
 * two:  a request line and a reply line, each written by one side only
 *       (the least a pair of SPSC rings with their payload in the index
 *       line could touch);
 * ring: what a 32-byte GET on goblind's ring moves at least: a request
 *       slot and the request tail, the server's request head, a reply
 *       slot (header and value) and the reply tail, the client's reply
 *       head: six lines, each written by one side.  --walk BYTES: the
 *       two slots move on by a line each round trip through two areas
 *       of BYTES (the ring's are 1 MiB), as a ring's frames do, instead
 *       of staying on one line each.
 * Prints one line: RESULT mode=M n=N p50_ns=... p90_ns=... p99_ns=...
 * mean_ns=... clock_ns=... (the median of one clock_gettime pair alone, included in
 * every figure).
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define LINE 64

struct line {
	_Alignas(LINE) _Atomic uint64_t v;
	uint8_t data[LINE - sizeof(uint64_t)];
};

enum mode { M_LINE, M_TWO, M_RING };

/* the lines, each on its own; in ring mode, indexes then slots */
static struct line req_tail, req_head, rep_tail, rep_head;
static struct line *req_area, *rep_area; /* the slots: walk lines each */
static size_t walk = 1;
static _Atomic int stop;
static enum mode mode;
static int cpus[2] = { 0, 1 };

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set))
		fprintf(stderr, "pingpong: cannot pin to cpu %d\n", cpu);
}

static inline void relax(void)
{
	__builtin_ia32_pause();
}

/* wait until @l holds @want or stop; false on stop */
static bool wait_for(struct line *l, uint64_t want)
{
	while (atomic_load_explicit(&l->v, memory_order_acquire) != want) {
		if (atomic_load_explicit(&stop, memory_order_relaxed))
			return false;
		relax();
	}
	return true;
}

static void *pong(void *arg)
{
	(void)arg;
	pin(cpus[1]);
	for (uint64_t i = 1;; i++) {
		switch (mode) {
		case M_LINE:
			if (!wait_for(&req_tail, 2 * i - 1))
				return NULL;
			atomic_store_explicit(&req_tail.v, 2 * i,
					      memory_order_release);
			break;
		case M_TWO:
			if (!wait_for(&req_tail, i))
				return NULL;
			atomic_store_explicit(&rep_tail.v, i,
					      memory_order_release);
			break;
		case M_RING: {
			uint8_t key[32];

			if (!wait_for(&req_tail, i))
				return NULL;
			memcpy(key, req_area[i % walk].data, sizeof(key));
			atomic_store_explicit(&req_head.v, i,
					      memory_order_release);
			memcpy(rep_area[i % walk].data, key, sizeof(key));
			atomic_store_explicit(&rep_tail.v, i,
					      memory_order_release);
			break;
		}
		}
	}
}

static int cmp64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

static int64_t pct(const int64_t *v, size_t n, double p)
{
	size_t i = (size_t)(p * (double)(n - 1));

	return v[i];
}

int main(int argc, char **argv)
{
	double secs = 2;
	size_t cap = 1 << 24, n = 0;
	int64_t *rt, clk[1001], end, sum = 0;
	uint8_t key[32];
	pthread_t t;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--mode") && i + 1 < argc) {
			const char *m = argv[++i];

			if (!strcmp(m, "line"))
				mode = M_LINE;
			else if (!strcmp(m, "two"))
				mode = M_TWO;
			else if (!strcmp(m, "ring"))
				mode = M_RING;
			else
				goto usage;
		} else if (!strcmp(argv[i], "--walk") && i + 1 < argc) {
			walk = strtoul(argv[++i], NULL, 0) / LINE;
		} else if (!strcmp(argv[i], "--secs") && i + 1 < argc) {
			secs = atof(argv[++i]);
		} else if (!strcmp(argv[i], "--cpus") && i + 1 < argc &&
			   sscanf(argv[i + 1], "%d,%d", &cpus[0], &cpus[1]) ==
				   2) {
			i++;
		} else {
			goto usage;
		}
	}
	if (!(secs > 0) || !walk)
		goto usage;
	rt = malloc(cap * sizeof(*rt));
	req_area = aligned_alloc(LINE, walk * sizeof(struct line));
	rep_area = aligned_alloc(LINE, walk * sizeof(struct line));
	if (!rt || !req_area || !rep_area) {
		perror("pingpong: malloc");
		return 1;
	}
	pin(cpus[0]);
	for (int i = 0; i < 1001; i++) {
		int64_t a = now_ns();

		clk[i] = now_ns() - a;
	}
	qsort(clk, 1001, sizeof(*clk), cmp64);
	memset(key, 'k', sizeof(key));
	if (pthread_create(&t, NULL, pong, NULL)) {
		perror("pingpong: pthread_create");
		return 1;
	}
	end = now_ns() + (int64_t)(secs * 1e9);
	for (uint64_t i = 1; n < cap; i++) {
		int64_t t0 = now_ns(), t1;

		switch (mode) {
		case M_LINE:
			atomic_store_explicit(&req_tail.v, 2 * i - 1,
					      memory_order_release);
			wait_for(&req_tail, 2 * i);
			break;
		case M_TWO:
			atomic_store_explicit(&req_tail.v, i,
					      memory_order_release);
			wait_for(&rep_tail, i);
			break;
		case M_RING:
			memcpy(req_area[i % walk].data, key, sizeof(key));
			atomic_store_explicit(&req_tail.v, i,
					      memory_order_release);
			wait_for(&rep_tail, i);
			memcpy(key, rep_area[i % walk].data, sizeof(key));
			atomic_store_explicit(&rep_head.v, i,
					      memory_order_release);
			break;
		}
		t1 = now_ns();
		rt[n++] = t1 - t0;
		sum += t1 - t0;
		if (t1 > end)
			break;
	}
	atomic_store(&stop, 1);
	pthread_join(t, NULL);
	/* the first round trip includes the pong thread's start: one of
	 * millions, it moves no percentile */
	qsort(rt, n, sizeof(*rt), cmp64);
	printf("RESULT mode=%s walk=%zu n=%zu p50_ns=%lld p90_ns=%lld p99_ns=%lld "
	       "mean_ns=%lld clock_ns=%lld\n",
	       mode == M_LINE ? "line" :
	       mode == M_TWO  ? "two" :
				"ring",
	       walk * LINE, n, (long long)pct(rt, n, 0.5),
	       (long long)pct(rt, n, 0.9), (long long)pct(rt, n, 0.99),
	       (long long)(sum / (int64_t)n), (long long)clk[500]);
	free(rt);
	free(req_area);
	free(rep_area);
	return 0;
usage:
	fprintf(stderr, "usage: pingpong [--mode line|two|ring] [--walk BYTES] "
			"[--secs S] [--cpus A,B]\n");
	return 129;
}
