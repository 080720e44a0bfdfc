/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * goblinctl --transport ring: put, get, del, stats and bench against
 * goblind --ring through the client library (goblin_client.h).  The
 * bench keeps one request in flight per client and records, per request,
 * when it was sent, when the response header, the first value bytes and
 * the last byte were visible (CLOCK_MONOTONIC), printed as the memcache
 * bench prints them, in microseconds to the nanosecond.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bench_spec.h"
#include "ctl.h"
#include "goblin_client.h"

enum ctl_transport ctl_transport_of(const char *name)
{
	if (!strcmp(name, "tcp"))
		return CTL_TCP;
	if (!strcmp(name, "ring"))
		return CTL_RING;
	if (!strcmp(name, "rdma"))
		return CTL_RDMA;
	return CTL_TRANSPORT_BAD;
}

static struct goblin_client *ring_open(struct ctl *c)
{
	struct goblin_client *g;
	char why[512];
	int ret = gc_connect(
		c->transport == CTL_RDMA ? GC_RDMA : GC_RING, c->host,
		c->transport == CTL_RDMA ? (unsigned)atoi(c->port) : 0, &g, why,
		sizeof(why));

	if (ret < 0)
		die("%s", why);
	return g;
}

static void check_key(const char *key)
{
	size_t n = strlen(key);

	if (!n || n > 4096)
		die("invalid key '%s': 1 to 4096 bytes", key);
}

int ctl_ring_put(struct ctl *c, const char *key, int fd, uint64_t size,
		 const struct put_opts *po, const char *what)
{
	struct goblin_client *g;
	struct gc_set_opts o = { .flags = po->flags };
	void *v = NULL;
	int ret;

	check_key(key);
	if (po->exptime) {
		int64_t left = po->exptime - (int64_t)time(NULL);

		o.ttl = left > 0 ? (uint32_t)left : 1;
	}
	/* the file is mapped, not read: the set streams it window by
	 * window out of the page cache */
	if (size &&
	    (v = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0)) == MAP_FAILED)
		die("cannot map '%s': %s", what, strerror(errno));
	g = ring_open(c);
	ret = gc_set(g, key, strlen(key), v ? v : "", size, &o);
	gc_close(g);
	if (v)
		munmap(v, size);
	if (ret < 0)
		return error("cannot store '%s': %s", key, gc_strerror(ret));
	return 0;
}

struct to_fd {
	int fd;
	int err;
};

static int write_window(void *arg, const void *data, size_t len, uint64_t off)
{
	struct to_fd *t = arg;

	(void)off;
	if (write_all(t->fd, data, len) < 0) {
		t->err = errno;
		return -errno;
	}
	return 0;
}

int ctl_ring_get(struct ctl *c, const char *key, const char *out)
{
	struct goblin_client *g;
	struct to_fd t = { .fd = STDOUT_FILENO };
	char *tmp = NULL;
	int ret;

	check_key(key);
	if (out && (t.fd = ctl_open_temp(out, &tmp)) < 0)
		die("cannot create '%s': %s", out, strerror(errno));
	g = ring_open(c);
	ret = gc_get_cb(g, key, strlen(key), write_window, &t, NULL);
	gc_close(g);
	if (ret == 0 && out && close(t.fd) < 0) {
		t.err = errno;
		ret = -errno;
	}
	if (ret == 0 && out && rename(tmp, out) < 0)
		ret = error("cannot rename '%s' to '%s': %s", tmp, out,
			    strerror(errno));
	if (out && ret < 0)
		unlink(tmp);
	if (ret == -ENOENT) {
		free(tmp);
		error("no such key '%s'", key);
		return CTL_EXIT_MISS;
	}
	if (ret < 0 && t.err)
		error("cannot write '%s': %s", out ? tmp : "standard output",
		      strerror(t.err));
	else if (ret < 0 && ret != -1)
		error("cannot read '%s': %s", key, gc_strerror(ret));
	free(tmp);
	return ret < 0 ? CTL_EXIT_DIE : 0;
}

int ctl_ring_del(struct ctl *c, const char *key)
{
	struct goblin_client *g;
	int ret;

	check_key(key);
	g = ring_open(c);
	ret = gc_delete(g, key, strlen(key));
	gc_close(g);
	if (ret == -ENOENT) {
		error("no such key '%s'", key);
		return CTL_EXIT_MISS;
	}
	if (ret < 0)
		die("cannot delete '%s': %s", key, gc_strerror(ret));
	return 0;
}

/* "STAT name value" lines as "name value", as net_stats() prints. */
int ctl_ring_stats(struct ctl *c)
{
	struct goblin_client *g = ring_open(c);
	char *text, *line, *save;
	size_t len;
	int ret = gc_stats(g, NULL, &text, &len);

	gc_close(g);
	if (ret < 0)
		die("cannot read the stats: %s", gc_strerror(ret));
	for (line = strtok_r(text, "\r\n", &save); line;
	     line = strtok_r(NULL, "\r\n", &save))
		if (!strncmp(line, "STAT ", 5))
			puts(line + 5);
	free(text);
	return 0;
}

/* ---- bench --transport ring ---- */

struct rrec {
	int64_t sent, header, first, last;
	uint32_t key;
	int status;
};

struct rthread {
	struct ctl *c;
	pthread_t th;
	unsigned id;
	struct rrec *recs;
	size_t nrec, cap;
	uint64_t wrong, errors, misses;
};

static struct {
	unsigned conns, keys;
	uint64_t size, max_records;
	double duration;
	bool verify;
	const char *csv;
	const char *prefix;
	atomic_bool stop;
} rb = { 1, 100, 32, 4000000, 5.0, false, NULL, "bench:", false };

static void value_of(unsigned key, uint8_t *buf, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		buf[i] = (uint8_t)(key * 131 + i * 7 + 1);
}

static size_t key_of(unsigned k, char *buf, size_t cap)
{
	return (size_t)snprintf(buf, cap, "%s%08u", rb.prefix, k);
}

static void *bench_thread(void *arg)
{
	struct rthread *t = arg;
	struct goblin_client *g = ring_open(t->c);
	uint8_t *buf = malloc(rb.size + 1), *want = malloc(rb.size + 1);
	uint64_t seed = t->id * 7919 + 1;
	char key[256];

	if (!buf || !want)
		die("out of memory");
	while (!atomic_load_explicit(&rb.stop, memory_order_relaxed)) {
		unsigned k = (unsigned)bspec_below(&seed, rb.keys);
		size_t kl = key_of(k, key, sizeof(key));
		struct gc_meta m;
		const struct gc_times *tm;
		int ret = gc_get(g, key, kl, buf, rb.size, &m);
		struct rrec *r;

		if (ret == -EPIPE || ret == -EPROTO)
			die("bench: %s", gc_strerror(ret));
		if (ret == -ENOENT)
			t->misses++;
		else if (ret < 0)
			t->errors++;
		else if (rb.verify) {
			value_of(k, want, rb.size);
			if (m.size != rb.size || memcmp(buf, want, rb.size))
				t->wrong++;
		}
		if (t->nrec == t->cap) {
			if (t->cap * (rb.conns ? rb.conns : 1) >=
			    rb.max_records)
				continue;
			t->cap = t->cap ? t->cap * 2 : 65536;
			t->recs = realloc(t->recs, t->cap * sizeof(*t->recs));
			if (!t->recs)
				die("out of memory");
		}
		tm = gc_last_times(g);
		r = &t->recs[t->nrec++];
		r->sent = tm->sent;
		r->header = tm->header;
		r->first = tm->first;
		r->last = tm->last;
		r->key = k;
		r->status = ret;
	}
	gc_close(g);
	free(buf);
	free(want);
	return NULL;
}

static void print_pct(const char *what, uint64_t *v, size_t n, double *p50,
		      double *p99)
{
	struct bspec_pct p = bspec_percentiles(v, n);

	printf("%-14s n=%zu p50=%.3f p90=%.3f p99=%.3f p99.9=%.3f "
	       "max=%.3f mean=%.3f (us)\n",
	       what, n, p.p50 / 1e3, p.p90 / 1e3, p.p99 / 1e3, p.p999 / 1e3,
	       p.max / 1e3, p.mean / 1e3);
	if (p50)
		*p50 = p.p50 / 1e3;
	if (p99)
		*p99 = p.p99 / 1e3;
}

static void bench_parse_ring(const struct ctl_cmd *cmd, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "conns", required_argument, NULL, 'c' },
		{ "duration", required_argument, NULL, 'd' },
		{ "keys", required_argument, NULL, 'k' },
		{ "size", required_argument, NULL, 's' },
		{ "verify", no_argument, NULL, 'v' },
		{ "csv", required_argument, NULL, 'o' },
		{ "key-prefix", required_argument, NULL, 'p' },
		{ "max-records", required_argument, NULL, 'm' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	int ch;

	while ((ch = ctl_getopt(cmd, argc, argv, "", opts)) != -1) {
		switch (ch) {
		case 'c':
			rb.conns = (unsigned)strtoul(optarg, &end, 10);
			if (*end || !rb.conns || rb.conns > 256)
				usage_error(cmd, "--conns: 1 to 256");
			break;
		case 'd':
			rb.duration = strtod(optarg, &end);
			if (*end || rb.duration <= 0)
				usage_error(cmd, "--duration: seconds > 0");
			break;
		case 'k':
			rb.keys = (unsigned)strtoul(optarg, &end, 10);
			if (*end || !rb.keys)
				usage_error(cmd, "--keys: a count > 0");
			break;
		case 's':
			if (gs_parse_size(optarg, &rb.size) < 0 ||
			    rb.size > (1ull << 30))
				usage_error(cmd, "--size: a size up to 1G "
						 "(the ring bench takes a "
						 "fixed size)");
			break;
		case 'v':
			rb.verify = true;
			break;
		case 'o':
			rb.csv = optarg;
			break;
		case 'p':
			rb.prefix = optarg;
			break;
		case 'm':
			rb.max_records = strtoull(optarg, &end, 10);
			if (*end || !rb.max_records)
				usage_error(cmd, "--max-records: a count > 0");
			break;
		}
	}
	ctl_want_args(cmd, argc, 0, 0);
}

static void bench_populate(struct ctl *c)
{
	struct goblin_client *g = ring_open(c);
	uint8_t *v = malloc(rb.size + 1);
	char key[256];
	int64_t t0 = gs_mono_ns();

	if (!v)
		die("out of memory");
	for (unsigned k = 0; k < rb.keys; k++) {
		int ret;

		value_of(k, v, rb.size);
		ret = gc_set(g, key, key_of(k, key, sizeof(key)), v, rb.size,
			     NULL);
		if (ret < 0)
			die("cannot store '%s': %s", key, gc_strerror(ret));
	}
	printf("populate       %u keys in %.3f s\n", rb.keys,
	       (gs_mono_ns() - t0) / 1e9);
	gc_close(g);
	free(v);
}

static void bench_csv(struct rthread *th, int64_t t0)
{
	FILE *f = fopen(rb.csv, "w");

	if (!f)
		die("cannot open '%s': %s", rb.csv, strerror(errno));
	fputs("op,key,status,bytes,sent_ns,first_byte_ns,first_payload_ns,"
	      "last_byte_ns\n",
	      f);
	for (unsigned i = 0; i < rb.conns; i++)
		for (size_t j = 0; j < th[i].nrec; j++) {
			const struct rrec *r = &th[i].recs[j];

			fprintf(f,
				"get,%u,%s,%" PRIu64 ",%" PRId64 ",%" PRId64
				",%" PRId64 ",%" PRId64 "\n",
				r->key, r->status ? "miss" : "hit",
				r->status ? 0 : rb.size, r->sent - t0,
				r->header - t0, r->first ? r->first - t0 : 0,
				r->last - t0);
		}
	if (fclose(f))
		die("cannot write '%s': %s", rb.csv, strerror(errno));
}

int ctl_ring_bench(struct ctl *c, const struct ctl_cmd *cmd, int argc,
		   char **argv)
{
	struct rthread *th;
	uint64_t *hd, *fw, *done, n = 0, nf = 0, wrong = 0, errors = 0;
	uint64_t misses = 0;
	double secs, p50, p99;
	int64_t t0, t1;

	bench_parse_ring(cmd, argc, argv);
	bench_populate(c);
	th = calloc(rb.conns, sizeof(*th));
	if (!th)
		die("out of memory");
	t0 = gs_mono_ns();
	for (unsigned i = 0; i < rb.conns; i++) {
		th[i].c = c;
		th[i].id = i;
		if (pthread_create(&th[i].th, NULL, bench_thread, &th[i]))
			die("cannot start a bench thread");
	}
	usleep((useconds_t)(rb.duration * 1e6));
	atomic_store(&rb.stop, true);
	for (unsigned i = 0; i < rb.conns; i++) {
		pthread_join(th[i].th, NULL);
		n += th[i].nrec;
		wrong += th[i].wrong;
		errors += th[i].errors;
		misses += th[i].misses;
	}
	t1 = gs_mono_ns();
	secs = (t1 - t0) / 1e9;
	hd = malloc((n + 1) * sizeof(*hd));
	fw = malloc((n + 1) * sizeof(*fw));
	done = malloc((n + 1) * sizeof(*done));
	if (!hd || !fw || !done)
		die("out of memory");
	n = 0;
	for (unsigned i = 0; i < rb.conns; i++)
		for (size_t j = 0; j < th[i].nrec; j++) {
			const struct rrec *r = &th[i].recs[j];

			hd[n] = (uint64_t)(r->header - r->sent);
			done[n++] = (uint64_t)(r->last - r->sent);
			if (r->first)
				fw[nf++] = (uint64_t)(r->first - r->sent);
		}
	printf("requests       %" PRIu64 " in %.3f s: %.0f/s, %.2f MiB/s "
	       "payload\n",
	       n, secs, n / secs, (n - misses) * rb.size / secs / 1048576.0);
	printf("gets %" PRIu64 " hits %" PRIu64 " misses %" PRIu64
	       " errors %" PRIu64 "%s\n",
	       n, n - misses - errors, misses, errors,
	       rb.verify ? "" : " (values not checked: --verify)");
	if (rb.verify)
		printf("verify         %" PRIu64 " values of the wrong size or "
		       "bytes\n",
		       wrong);
	print_pct("header", hd, n, NULL, NULL);
	print_pct("first window", fw, nf, NULL, NULL);
	print_pct("completion", done, n, &p50, &p99);
	printf("RESULT proto=%s conns=%u secs=%.3f requests=%" PRIu64
	       " size=%" PRIu64 " misses=%" PRIu64 " errors=%" PRIu64
	       " wrong=%" PRIu64 " p50_us=%.3f p99_us=%.3f\n",
	       c->transport == CTL_RDMA ? "rdma" : "ring", rb.conns, secs, n,
	       rb.size, misses, errors, wrong, p50, p99);
	if (rb.csv)
		bench_csv(th, t0);
	for (unsigned i = 0; i < rb.conns; i++)
		free(th[i].recs);
	free(th);
	free(hd);
	free(fw);
	free(done);
	return errors || wrong ? CTL_EXIT_DIE : 0;
}
