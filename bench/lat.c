/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lat: the round trip of one small GET, one request in flight, over a
 * stream socket (TCP or Unix), for bench/rdma.sh (issue 22): Redis's RESP
 * or memcache's text protocol.  The same timer as goblinctl bench
 * --transport ring: clock_gettime(CLOCK_MONOTONIC) before the request's
 * write() and after the whole reply is read.
 *   lat resp|mc unix:PATH|tcp:HOST:PORT SIZE COUNT
 * stores key "latkey" with SIZE bytes, runs COUNT/10 warm-up GETs, then
 * COUNT measured ones, and prints
 *   RESULT proto=P n=COUNT p50_us=... p99_us=... mean_us=...
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static void fail(const char *what)
{
	fprintf(stderr, "lat: %s: %s\n", what, strerror(errno));
	exit(1);
}

static int dial(const char *where)
{
	int fd, one = 1;

	if (!strncmp(where, "unix:", 5)) {
		struct sockaddr_un a = { .sun_family = AF_UNIX };

		if (strlen(where + 5) >= sizeof(a.sun_path))
			fail("socket path too long");
		strcpy(a.sun_path, where + 5);
		fd = socket(AF_UNIX, SOCK_STREAM, 0);
		if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)))
			fail(where);
		return fd;
	}
	if (!strncmp(where, "tcp:", 4)) {
		char host[256], *port;
		struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai;

		snprintf(host, sizeof(host), "%s", where + 4);
		port = strrchr(host, ':');
		if (!port)
			fail("tcp:HOST:PORT");
		*port++ = '\0';
		if (getaddrinfo(host, port, &hints, &ai))
			fail(where);
		fd = socket(ai->ai_family, SOCK_STREAM, 0);
		if (fd < 0 || connect(fd, ai->ai_addr, ai->ai_addrlen))
			fail(where);
		freeaddrinfo(ai);
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		return fd;
	}
	errno = EINVAL;
	fail(where);
	return -1;
}

static void send_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			fail("write");
		p += n;
		len -= (size_t)n;
	}
}

/* Read until the reply of @want bytes is whole (the caller knows its
 * length: the value's size is fixed). */
static void read_reply(int fd, char *buf, size_t want)
{
	size_t got = 0;

	while (got < want) {
		ssize_t n = read(fd, buf + got, want - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			fail("read");
		got += (size_t)n;
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	char get[128], *set, *buf, head[64];
	size_t size, count, getlen, want, setlen, setwant;
	uint64_t *v;
	double sum = 0;
	bool resp;
	int fd;

	if (argc != 5 || (strcmp(argv[1], "resp") && strcmp(argv[1], "mc"))) {
		fprintf(stderr, "usage: lat resp|mc unix:PATH|tcp:HOST:PORT "
				"SIZE COUNT\n");
		return 129;
	}
	resp = !strcmp(argv[1], "resp");
	size = strtoul(argv[3], NULL, 10);
	count = strtoul(argv[4], NULL, 10);
	if (!count || size > (1u << 20))
		return 129;
	fd = dial(argv[2]);
	set = malloc(size + 128);
	buf = malloc(size + 128);
	v = malloc(count * sizeof(*v));
	if (!set || !buf || !v)
		fail("malloc");
	/* the value and the exact reply each protocol gives it */
	if (resp) {
		setlen = (size_t)sprintf(set,
					 "*3\r\n$3\r\nSET\r\n$6\r\nlatkey\r\n"
					 "$%zu\r\n",
					 size);
		setwant = 5; /* +OK\r\n */
		getlen = (size_t)sprintf(get, "*2\r\n$3\r\nGET\r\n$6\r\n"
					      "latkey\r\n");
		want = (size_t)sprintf(head, "$%zu\r\n", size) + size + 2;
	} else {
		setlen = (size_t)sprintf(set, "set latkey 0 0 %zu\r\n", size);
		setwant = 8; /* STORED\r\n */
		getlen = (size_t)sprintf(get, "get latkey\r\n");
		want = (size_t)sprintf(head, "VALUE latkey 0 %zu\r\n", size) +
		       size + 7;
	}
	memset(set + setlen, 'x', size);
	memcpy(set + setlen + size, "\r\n", 2);
	send_all(fd, set, setlen + size + 2);
	read_reply(fd, buf, setwant);
	for (size_t i = 0; i < count / 10 + count; i++) {
		int64_t t0 = now_ns();

		send_all(fd, get, getlen);
		read_reply(fd, buf, want);
		if (i >= count / 10)
			v[i - count / 10] = (uint64_t)(now_ns() - t0);
	}
	if (memcmp(buf, head, strlen(head)) || buf[strlen(head)] != 'x') {
		fprintf(stderr, "lat: unexpected reply: %.40s\n", buf);
		return 1;
	}
	qsort(v, count, sizeof(*v), cmp_u64);
	for (size_t i = 0; i < count; i++)
		sum += (double)v[i];
	printf("RESULT proto=%s n=%zu p50_us=%.3f p99_us=%.3f mean_us=%.3f\n",
	       argv[1], count, v[count / 2] / 1e3, v[count * 99 / 100] / 1e3,
	       sum / count / 1e3);
	close(fd);
	free(set);
	free(buf);
	free(v);
	return 0;
}
