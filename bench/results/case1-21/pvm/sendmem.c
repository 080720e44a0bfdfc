/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sendmem MODE ALIGN SECS MIB (bench/results/case1-21.md, 2026-12-05): 16
 * loopback TCP connections, random 1 MiB send()s from a MIB-MiB region on
 * CPU 1, a reader thread on CPU 0; MODE pop (MAP_POPULATE + mlock), huge
 * (MAP_HUGETLB), lazy, malloc; the region filled by memset, unless
 * PIPEFILL=1 (read() from a pipe: the kernel writes it), SMALLSET=1
 * (64 KiB memsets), TOUCH=1 (a byte a page first); KREAD=1: one write()
 * of it all to a pipe before the measure (the kernel reads it), UREAD=1:
 * one pass of user loads.  Prints MiB/s and the sender CPU s.
 * Throwaway: gcc -O2 -o sendmem sendmem.c -lpthread.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <unistd.h>
#include <sched.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <time.h>
#define NC 16
static size_t total;
static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}
static int port;
static void pin(int c)
{
	cpu_set_t s;
	CPU_ZERO(&s);
	CPU_SET(c, &s);
	sched_setaffinity(0, sizeof s, &s);
}
static void *drain(void *a)
{
	pin(0);
	int fds[NC];
	char *buf = malloc(1 << 20);
	for (int i = 0; i < NC; i++) {
		fds[i] = socket(AF_INET, SOCK_STREAM, 0);
		struct sockaddr_in sa = { .sin_family = AF_INET,
					  .sin_port = htons(port),
					  .sin_addr.s_addr =
						  htonl(0x7f000001) };
		connect(fds[i], (void *)&sa, sizeof sa);
	}
// round robin blocking reads via poll
#include <poll.h>
	struct pollfd p[NC];
	for (int i = 0; i < NC; i++) {
		p[i].fd = fds[i];
		p[i].events = POLLIN;
	}
	for (;;) {
		poll(p, NC, -1);
		for (int i = 0; i < NC; i++)
			if (p[i].revents) {
				ssize_t n = recv(fds[i], buf, 1 << 20,
						 MSG_DONTWAIT);
				if (n == 0)
					return NULL;
			}
	}
}
int main(int argc, char **argv)
{
	const char *mode = argv[1];
	total = (size_t)atol(argv[4]) << 20;
	int align = atoi(argv[2]);
	double dur = atof(argv[3]);
	uint8_t *m;
	size_t piece = 1 << 20;
	uint8_t **pieces = NULL;
	size_t np = total / piece - 2;
	if (!strcmp(mode, "pop")) {
		m = mmap(0, total, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
		mlock(m, total);
	} else if (!strcmp(mode, "huge")) {
		m = mmap(0, total, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE |
				 MAP_HUGETLB,
			 -1, 0);
		if (m == MAP_FAILED) {
			perror("huge");
			return 1;
		}
	} else if (!strcmp(mode, "lazy")) {
		m = mmap(0, total, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	} else if (!strcmp(mode, "malloc")) {
		pieces = malloc(np * sizeof *pieces);
		for (size_t i = 0; i < np; i++) {
			pieces[i] = malloc(piece + 4096);
		}
		m = NULL;
	} else
		return 2;
	if (m && getenv("TOUCH"))
		for (size_t o = 0; o < total; o += 4096)
			((volatile uint8_t *)m)[o] = 1;
	if (m && getenv("PIPEFILL")) {
		int pp[2];
		pipe(pp);
		char zb[65536];
		memset(zb, 0x5a, sizeof zb);
		for (size_t o = 0; o < total; o += 65536) {
			write(pp[1], zb, 65536);
			read(pp[0], m + o, 65536);
		}
	} else if (m && getenv("SMALLSET")) {
		for (size_t o = 0; o < total; o += 65536)
			memset(m + o, 0x5a, 65536);
	} else if (m && getenv("NTSET")) {
		for (size_t o = 0; o < total; o += 64)
			__builtin_ia32_movnti64((long long *)(m + o), 1);
	} else if (m)
		memset(m, 0x5a, total);
	else
		for (size_t i = 0; i < np; i++)
			memset(pieces[i], 0x5a, piece + 4096);
	if (m && getenv("KREAD")) {
		int pp[2];
		pipe(pp);
		char zb[65536];
		for (size_t o = 0; o < total; o += 65536) {
			write(pp[1], m + o, 65536);
			read(pp[0], zb, 65536);
		}
	}
	if (m && getenv("UREAD")) {
		volatile uint64_t acc = 0;
		for (size_t o = 0; o < total; o += 8)
			acc += *(uint64_t *)(m + o);
	}
	pin(1);
	int ls = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(0x7f000001) };
	bind(ls, (void *)&sa, sizeof sa);
	listen(ls, 64);
	socklen_t sl = sizeof sa;
	getsockname(ls, (void *)&sa, &sl);
	port = ntohs(sa.sin_port);
	pthread_t t;
	pthread_create(&t, 0, drain, 0);
	int fds[NC];
	for (int i = 0; i < NC; i++) {
		fds[i] = accept(ls, 0, 0);
		int one = 1;
		setsockopt(fds[i], IPPROTO_TCP, TCP_NODELAY, &one, 4);
	}
	uint64_t x = 88172645463325252ull;
	double t0 = now();
	size_t bytes = 0;
	struct timespec c0, c1;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
	while (now() - t0 < dur) {
		for (int i = 0; i < NC; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			size_t pi = x % np;
			uint8_t *src =
				m ? m + pi * piece +
						(align ? 0 : (x >> 40) % 4096) :
				    pieces[pi] + (align ? 0 : (x >> 40) % 4096);
			ssize_t n = send(fds[i], src, piece, 0);
			if (n > 0)
				bytes += n;
		}
	}
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
	double el = now() - t0;
	printf("%s align=%d %.0f MiB/s cpu=%.2f\n", mode, align,
	       bytes / el / 1048576,
	       (c1.tv_sec - c0.tv_sec) + (c1.tv_nsec - c0.tv_nsec) / 1e9);
	return 0;
}
