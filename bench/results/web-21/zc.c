// SPDX-License-Identifier: BSD-3-Clause
/*
 * zc.c: does sendfile from a memfd save the sender's copy on loopback TCP,
 * and is a punched hole enough to make reusing the range safe while a
 * socket still holds its pages?  (web-21.md, "A pool that sends without
 * copying".)
 *
 *   cc -O2 -o zc zc.c -lpthread && ./zc [GiB [FILE]]
 *
 * FILE: a file of that path stands in for the memfd (a file system's page
 * cache, as nginx's sendfile reads it).
 *
 * 1. The sender's and the peer's CPU a GiB, writing a memfd's bytes with
 *    write() from its mapping, then with sendfile() from the memfd, 1 MiB a
 *    call, to a loopback TCP peer that reads and drops them on another
 *    thread.
 * 2. Hazard: sendfile 64 KiB of 'A' that the peer does not read yet, then
 *    overwrite the range with 'B' in place: what does the peer get?
 * 3. The same, but punch the range out (FALLOC_FL_PUNCH_HOLE) before
 *    writing 'B' into it.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define POOL (64u << 20)
#define CALL (1u << 20)

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static void tcp_pair(int *a, int *b)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	int l = socket(AF_INET, SOCK_STREAM, 0);

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (l < 0 || bind(l, (void *)&sa, sizeof(sa)) < 0 || listen(l, 1) < 0 ||
	    getsockname(l, (void *)&sa, &len) < 0)
		die("listen");
	*a = socket(AF_INET, SOCK_STREAM, 0);
	if (connect(*a, (void *)&sa, sizeof(sa)) < 0)
		die("connect");
	*b = accept(l, NULL, NULL);
	if (*b < 0)
		die("accept");
	close(l);
}

static double thread_cpu(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static double drain_cpu; /* the peer's CPU-s in its last drain() */

static void *drain(void *arg)
{
	int fd = *(int *)arg;
	static char buf[1 << 20];
	double c0 = thread_cpu();

	while (read(fd, buf, sizeof(buf)) > 0)
		;
	drain_cpu = thread_cpu() - c0;
	return NULL;
}

/* The sender's CPU-s a GiB; *@peer: the peer's. */
static double run(int mfd, const char *map, unsigned long long bytes,
		  int use_sendfile, double *peer)
{
	int s, r;
	pthread_t t;
	double c0;

	tcp_pair(&s, &r);
	pthread_create(&t, NULL, drain, &r);
	c0 = thread_cpu();
	for (unsigned long long done = 0; done < bytes;) {
		off_t off = (off_t)(done % POOL);
		ssize_t n = use_sendfile ? sendfile(s, mfd, &off, CALL) :
					   write(s, map + off, CALL);

		if (n <= 0)
			die("send");
		done += (unsigned long long)n;
	}
	c0 = thread_cpu() - c0;
	close(s);
	pthread_join(t, NULL);
	close(r);
	*peer = drain_cpu / ((double)bytes / (1u << 30));
	return c0 / ((double)bytes / (1u << 30));
}

/* Steps 2 and 3: what the peer reads of 64 KiB sent as 'A', after the
 * range is rewritten as 'B' (punched first if @punch). */
static void reuse(int mfd, char *map, int punch)
{
	char got[65536];
	size_t have = 0;
	off_t off = 0;
	int s, r, as = 0, bs = 0;

	tcp_pair(&s, &r);
	memset(map, 'A', sizeof(got));
	if (sendfile(s, mfd, &off, sizeof(got)) != (ssize_t)sizeof(got))
		die("sendfile");
	usleep(100000); /* delivered to the peer's queue, not read */
	if (punch && fallocate(mfd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			       0, sizeof(got)) < 0)
		die("fallocate");
	memset(map, 'B', sizeof(got));
	while (have < sizeof(got)) {
		ssize_t n = read(r, got + have, sizeof(got) - have);

		if (n <= 0)
			die("read");
		have += (size_t)n;
	}
	for (size_t i = 0; i < sizeof(got); i++) {
		as += got[i] == 'A';
		bs += got[i] == 'B';
	}
	printf("%s: the peer read %d bytes of 'A' (sent) and %d of 'B' "
	       "(written after)\n",
	       punch ? "punched, then rewritten" : "rewritten in place", as,
	       bs);
	close(s);
	close(r);
}

int main(int argc, char **argv)
{
	unsigned long long bytes = (argc > 1 ? strtoull(argv[1], NULL, 0) : 4)
				   << 30;
	/* argv[2]: a file (on ext4, say) instead of the memfd */
	int mfd = argc > 2 ? open(argv[2], O_RDWR | O_CREAT | O_TRUNC, 0600) :
			     memfd_create("pool", 0);
	char *map;

	if (mfd < 0 || ftruncate(mfd, POOL) < 0)
		die(argc > 2 ? argv[2] : "memfd");
	map = mmap(NULL, POOL, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
	if (map == MAP_FAILED)
		die("mmap");
	if (argc > 2) { /* by write(2), so the page cache may use large
			 * folios (through the mapping it took small ones) */
		static char b[1 << 20];

		for (size_t off = 0; off < POOL; off += sizeof(b)) {
			for (size_t i = 0; i < sizeof(b); i++)
				b[i] = (char)((off + i) * 131);
			if (pwrite(mfd, b, sizeof(b), (off_t)off) !=
			    (ssize_t)sizeof(b))
				die("pwrite");
		}
	} else {
		for (size_t i = 0; i < POOL; i++)
			map[i] = (char)(i * 131);
	}
	for (int round = 0; round < 5; round++) {
		double pw, ps, w = run(mfd, map, bytes, 0, &pw),
			       sf = run(mfd, map, bytes, 1, &ps);

		printf("round %d: CPU-s a GiB, sender + peer: write %.3f + "
		       "%.3f, sendfile %.3f + %.3f\n",
		       round, w, pw, sf, ps);
	}
	reuse(mfd, map, 0);
	reuse(mfd, map, 1);
	return 0;
}
