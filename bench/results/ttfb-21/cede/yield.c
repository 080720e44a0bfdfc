/* SPDX-License-Identifier: BSD-3-Clause */
/* 200,000 sched_yield() calls on this CPU: median, p99, p99.9, max ns and how many took over 20 us (bench/results/ttfb-21.md, section 8). */
#include <sched.h>
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
static long long ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}
int cmp(const void *a, const void *b)
{
	long long x = *(long long *)a, y = *(long long *)b;
	return x < y ? -1 : x > y;
}
int main(int argc, char **argv)
{
	int n = 200000;
	long long *d = malloc(n * 8);
	int over = 0;
	for (int i = 0; i < n; i++) {
		long long t = ns();
		sched_yield();
		d[i] = ns() - t;
		if (d[i] > 20000)
			over++;
	}
	qsort(d, n, 8, cmp);
	printf("p50 %lld p99 %lld p999 %lld max %lld over20us %d of %d\n",
	       d[n / 2], d[n * 99 / 100], d[n * 999 / 1000], d[n - 1], over, n);
}
