/* SPDX-License-Identifier: BSD-3-Clause */
/* 200,000 sched_yield() calls: how many took over 20 us, and in how many of those the thread was switched out (getrusage); then getrusage's cost (bench/results/ttfb-21.md, section 8). */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <time.h>
#include <sys/resource.h>
static long long ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}
static long csw(void)
{
	struct rusage r;
	getrusage(RUSAGE_THREAD, &r);
	return r.ru_nvcsw + r.ru_nivcsw;
}
int main()
{
	int n = 200000, slow = 0, slowsw = 0;
	long c0 = csw();
	for (int i = 0; i < n; i++) {
		long b = csw();
		long long t = ns();
		sched_yield();
		long long d = ns() - t;
		if (d > 20000) {
			slow++;
			if (csw() != b)
				slowsw++;
		}
	}
	printf("slow %d, with a switch %d, switches in all %ld\n", slow, slowsw,
	       csw() - c0);
	long long t = ns();
	for (int i = 0; i < 100000; i++)
		csw();
	printf("getrusage %lld ns\n", (ns() - t) / 100000);
}
