/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fsread: read files the way an application does (open, read, close) and
 * time it, for comparing a goblinfs mount with a plain file system.
 *   fsread seq FILE                 one sequential read, 1 MiB reads
 *   fsread first4k FILE...          open + 4 KiB read at 0 + close, each
 *   fsread par FILE...              one thread per file, all at once
 *   fsread replay ROOT MANIFEST     read each manifest key's file whole,
 *                                   in order ("key size" lines; ':' -> '/')
 * Prints one RESULT line of key=value pairs; times are CLOCK_MONOTONIC.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../store/clock.h"
#include "../store/prog.h"

#define RBUF (1u << 20)

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static double pct(uint64_t *v, size_t n, double p)
{
	size_t i = (size_t)(p * (double)(n - 1) + 0.5);

	return n ? (double)v[i < n ? i : n - 1] / 1000.0 : 0;
}

/* Read @path whole; first-byte and end times relative to the open. */
static uint64_t read_file(const char *path, void *buf, uint64_t *t_first,
			  uint64_t *t_end)
{
	uint64_t t0 = gs_mono_ns(), total = 0;
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		die("cannot open '%s': %s", path, strerror(errno));
	while ((n = read(fd, buf, RBUF)) > 0) {
		if (total == 0 && t_first)
			*t_first = gs_mono_ns() - t0;
		total += (uint64_t)n;
	}
	if (n < 0)
		die("cannot read '%s': %s", path, strerror(errno));
	close(fd);
	if (t_end)
		*t_end = gs_mono_ns() - t0;
	return total;
}

static void *xalloc(size_t n)
{
	void *p = NULL;

	if (posix_memalign(&p, 4096, n))
		die("out of memory '%s': %s", "buffer", strerror(errno));
	return p;
}

static int cmd_seq(const char *path)
{
	void *buf = xalloc(RBUF);
	uint64_t t, end, bytes = read_file(path, buf, &t, &end);

	printf("RESULT bytes=%" PRIu64
	       " seconds=%.3f mibps=%.1f ttfb_us=%.1f\n",
	       bytes, end / 1e9, bytes / 1048576.0 / (end / 1e9), t / 1e3);
	return 0;
}

static int cmd_first4k(int n, char **paths)
{
	uint64_t *t = malloc(sizeof(uint64_t) * (size_t)n);
	char *buf = xalloc(4096);

	for (int i = 0; i < n; i++) {
		uint64_t t0 = gs_mono_ns();
		int fd = open(paths[i], O_RDONLY);

		if (fd < 0)
			die("cannot open '%s': %s", paths[i], strerror(errno));
		if (pread(fd, buf, 4096, 0) < 0)
			die("cannot read '%s': %s", paths[i], strerror(errno));
		close(fd);
		t[i] = gs_mono_ns() - t0;
	}
	qsort(t, (size_t)n, sizeof(*t), cmp_u64);
	printf("RESULT n=%d p50_us=%.1f p90_us=%.1f p99_us=%.1f max_us=%.1f\n",
	       n, pct(t, n, 0.5), pct(t, n, 0.9), pct(t, n, 0.99),
	       t[n - 1] / 1e3);
	return 0;
}

struct par_arg {
	const char *path;
	uint64_t bytes;
};

static void *par_main(void *p)
{
	struct par_arg *a = p;
	void *buf = xalloc(RBUF);

	a->bytes = read_file(a->path, buf, NULL, NULL);
	free(buf);
	return NULL;
}

static int cmd_par(int n, char **paths)
{
	pthread_t *t = malloc(sizeof(*t) * (size_t)n);
	struct par_arg *a = calloc((size_t)n, sizeof(*a));
	uint64_t t0 = gs_mono_ns(), bytes = 0, el;

	for (int i = 0; i < n; i++) {
		a[i].path = paths[i];
		pthread_create(&t[i], NULL, par_main, &a[i]);
	}
	for (int i = 0; i < n; i++) {
		pthread_join(t[i], NULL);
		bytes += a[i].bytes;
	}
	el = gs_mono_ns() - t0;
	printf("RESULT readers=%d bytes=%" PRIu64 " seconds=%.3f mibps=%.1f\n",
	       n, bytes, el / 1e9, bytes / 1048576.0 / (el / 1e9));
	return 0;
}

static int cmd_replay(const char *root, const char *manifest)
{
	FILE *f = fopen(manifest, "r");
	char key[4096], path[8192];
	unsigned long long size;
	size_t n = 0, cap = 1024;
	uint64_t *ttfb = malloc(cap * 8), *done = malloc(cap * 8);
	uint64_t bytes = 0, t0 = gs_mono_ns(), el;
	void *buf = xalloc(RBUF);

	if (!f)
		die("cannot open '%s': %s", manifest, strerror(errno));
	while (fscanf(f, "%4095s %llu", key, &size) == 2) {
		uint64_t got;

		for (char *c = key; *c; c++)
			if (*c == ':')
				*c = '/';
		snprintf(path, sizeof(path), "%s/%s", root, key);
		if (n == cap) {
			cap *= 2;
			ttfb = realloc(ttfb, cap * 8);
			done = realloc(done, cap * 8);
		}
		ttfb[n] = 0;
		got = read_file(path, buf, &ttfb[n], &done[n]);
		if (got != size) {
			fprintf(stderr,
				"fsread: '%s' has %" PRIu64
				" bytes, manifest says %llu\n",
				path, got, size);
			return 1;
		}
		bytes += got;
		n++;
	}
	fclose(f);
	el = gs_mono_ns() - t0;
	qsort(ttfb, n, 8, cmp_u64);
	qsort(done, n, 8, cmp_u64);
	printf("RESULT requests=%zu bytes=%" PRIu64 " seconds=%.3f mibps=%.1f "
	       "ttfb_p50_us=%.1f ttfb_p99_us=%.1f done_p50_us=%.1f "
	       "done_p99_us=%.1f\n",
	       n, bytes, el / 1e9, bytes / 1048576.0 / (el / 1e9),
	       pct(ttfb, n, 0.5), pct(ttfb, n, 0.99), pct(done, n, 0.5),
	       pct(done, n, 0.99));
	return 0;
}

int main(int argc, char **argv)
{
	prog_name = "fsread";
	if (argc == 3 && !strcmp(argv[1], "seq"))
		return cmd_seq(argv[2]);
	if (argc >= 3 && !strcmp(argv[1], "first4k"))
		return cmd_first4k(argc - 2, argv + 2);
	if (argc >= 3 && !strcmp(argv[1], "par"))
		return cmd_par(argc - 2, argv + 2);
	if (argc == 4 && !strcmp(argv[1], "replay"))
		return cmd_replay(argv[2], argv[3]);
	fprintf(stderr,
		"usage: fsread seq FILE | first4k FILE... | par FILE... "
		"| replay ROOT MANIFEST\n");
	return 129;
}
