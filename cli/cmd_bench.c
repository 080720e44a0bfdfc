/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * goblinctl bench: the memcache and HTTP/1.1 load generator of the
 * benchmarks.  One epoll loop per thread, non-blocking connections with
 * one request in flight each, CLOCK_MONOTONIC nanosecond timestamps of every request held
 * in preallocated records until the end, then percentiles, a RESULT line
 * and optionally one CSV row per request.  This room: the options, the
 * key set, setting up the threads and running the phases (bench.h names
 * the other rooms).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "ctl.h"

/* ---- the key set ---- */

/* "key size" lines, at most @limit of them (0: all). */
static void load_manifest(struct keyset *ks, const char *path, uint64_t limit)
{
	FILE *f = fopen(path, "r");
	char line[MCC_KEY_MAX + 64], key[MCC_KEY_MAX + 2];
	uint64_t alloc = 0, size, lineno = 0;

	if (!f)
		die("cannot open '%s': %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f) && (!limit || ks->n < limit)) {
		char extra;

		lineno++;
		if (sscanf(line, "%251s %" SCNu64 " %c", key, &size, &extra) !=
			    2 ||
		    !mcc_key_valid(key, strlen(key)) || size > BSPEC_SIZE_MAX)
			die("%s:%" PRIu64 ": expected 'key size'", path,
			    lineno);
		if (ks->n == alloc) {
			alloc = alloc ? 2 * alloc : 1024;
			ks->size = realloc(ks->size, alloc * sizeof(*ks->size));
			ks->name = realloc(ks->name, alloc * sizeof(*ks->name));
			if (!ks->size || !ks->name)
				die("out of memory");
		}
		ks->size[ks->n] = size;
		ks->name[ks->n] = strdup(key);
		if (!ks->name[ks->n++])
			die("out of memory");
	}
	if (ferror(f))
		die("cannot read '%s': %s", path, strerror(errno));
	fclose(f);
	if (!ks->n)
		die("'%s' holds no keys", path);
}

static void keyset_init(struct keyset *ks, const struct bench_opts *o)
{
	memset(ks, 0, sizeof(*ks));
	ks->prefix = o->key_prefix;
	if (o->spec.kind == BSPEC_MANIFEST) {
		load_manifest(ks, o->spec.file, o->keys);
		return;
	}
	ks->n = o->keys;
	ks->size = malloc(ks->n * sizeof(*ks->size));
	if (!ks->size)
		die("out of memory");
	for (uint64_t i = 0; i < ks->n; i++)
		ks->size[i] = bspec_size(&o->spec, o->seed, i);
}

static void keyset_release(struct keyset *ks)
{
	if (ks->name)
		for (uint64_t i = 0; i < ks->n; i++)
			free(ks->name[i]);
	free(ks->name);
	free(ks->size);
}

/* ---- options ---- */

enum {
	B_HOST = 256,
	B_PORT,
	B_PROTO,
	B_CONNS,
	B_THREADS,
	B_DURATION,
	B_KEYS,
	B_SIZE,
	B_HOT_START,
	B_HOT_KEYS,
	B_POPULATE_ONLY,
	B_NO_STORE,
	B_GET_RATIO,
	B_CSV,
	B_VERIFY,
	B_SERVER_PID,
	B_SEED,
	B_MAX_RECORDS,
	B_KEY_PREFIX,
	B_SWEEP,
	B_PATH_PREFIX,
};

static const struct option bench_longopts[] = {
	{ "help", no_argument, NULL, 'h' },
	{ "host", required_argument, NULL, B_HOST },
	{ "port", required_argument, NULL, B_PORT },
	{ "proto", required_argument, NULL, B_PROTO },
	{ "conns", required_argument, NULL, B_CONNS },
	{ "threads", required_argument, NULL, B_THREADS },
	{ "duration", required_argument, NULL, B_DURATION },
	{ "keys", required_argument, NULL, B_KEYS },
	{ "size", required_argument, NULL, B_SIZE },
	{ "hot-start", required_argument, NULL, B_HOT_START },
	{ "hot-keys", required_argument, NULL, B_HOT_KEYS },
	{ "populate-only", no_argument, NULL, B_POPULATE_ONLY },
	{ "no-store", no_argument, NULL, B_NO_STORE },
	{ "get-ratio", required_argument, NULL, B_GET_RATIO },
	{ "csv", required_argument, NULL, B_CSV },
	{ "verify", no_argument, NULL, B_VERIFY },
	{ "server-pid", required_argument, NULL, B_SERVER_PID },
	{ "seed", required_argument, NULL, B_SEED },
	{ "max-records", required_argument, NULL, B_MAX_RECORDS },
	{ "key-prefix", required_argument, NULL, B_KEY_PREFIX },
	{ "sweep", no_argument, NULL, B_SWEEP },
	{ "path-prefix", required_argument, NULL, B_PATH_PREFIX },
	{ NULL, 0, NULL, 0 },
};

static uint64_t num_opt(const struct ctl_cmd *cmd, const char *name,
			uint64_t min, uint64_t max)
{
	uint64_t v;

	if (parse_u64(optarg, max, &v) < 0 || v < min)
		usage_error(cmd, "invalid value '%s' for --%s", optarg, name);
	return v;
}

static double real_opt(const struct ctl_cmd *cmd, const char *name, double min,
		       double max)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(optarg, &end);
	if (end == optarg || *end || errno || !(v >= min && v <= max))
		usage_error(cmd, "invalid value '%s' for --%s", optarg, name);
	return v;
}

static void bench_opt(const struct ctl_cmd *cmd, int ch, struct bench_opts *o,
		      bool *hot_keys_set)
{
	const char *why;

	switch (ch) {
	case B_HOST:
		o->host = optarg;
		break;
	case B_PORT:
		o->port = optarg;
		break;
	case B_PROTO:
		if (!strcmp(optarg, "http"))
			o->http = true;
		else if (!strcmp(optarg, "memcache"))
			o->http = false;
		else
			usage_error(cmd,
				    "unsupported --proto '%s' (memcache "
				    "or http)",
				    optarg);
		break;
	case B_PATH_PREFIX:
		if (optarg[0] != '/' || strlen(optarg) > 256)
			usage_error(cmd,
				    "invalid --path-prefix '%s' (a path "
				    "of at most 256 bytes from '/')",
				    optarg);
		o->path_prefix = optarg;
		break;
	case B_CONNS:
		o->conns = (unsigned)num_opt(cmd, "conns", 1, 65536);
		break;
	case B_THREADS:
		o->threads = (unsigned)num_opt(cmd, "threads", 1, 1024);
		break;
	case B_DURATION:
		o->duration = real_opt(cmd, "duration", 0.001, 86400 * 7);
		break;
	case B_KEYS:
		o->keys = num_opt(cmd, "keys", 1, 1ull << 32);
		break;
	case B_SIZE:
		if (bspec_parse(optarg, &o->spec, &why) < 0)
			usage_error(cmd, "invalid --size '%s': %s", optarg,
				    why);
		break;
	case B_HOT_START:
		o->hot_start = num_opt(cmd, "hot-start", 0, 1ull << 32);
		break;
	case B_HOT_KEYS:
		o->hot_keys = num_opt(cmd, "hot-keys", 1, 1ull << 32);
		*hot_keys_set = true;
		break;
	case B_POPULATE_ONLY:
		o->populate_only = true;
		break;
	case B_NO_STORE:
		o->no_store = true;
		break;
	case B_SWEEP:
		o->sweep = true;
		break;
	case B_GET_RATIO:
		o->get_ratio = real_opt(cmd, "get-ratio", 0, 1);
		break;
	case B_CSV:
		o->csv = optarg;
		break;
	case B_VERIFY:
		o->verify = true;
		break;
	case B_SERVER_PID:
		o->server_pid = (long)num_opt(cmd, "server-pid", 1, INT32_MAX);
		break;
	case B_SEED:
		o->seed = num_opt(cmd, "seed", 0, UINT64_MAX);
		break;
	case B_MAX_RECORDS:
		o->max_records = num_opt(cmd, "max-records", 1, 1ull << 32);
		break;
	case B_KEY_PREFIX:
		if (strlen(optarg) > 200 ||
		    !mcc_key_valid(optarg, strlen(optarg)))
			usage_error(cmd, "invalid --key-prefix '%s'", optarg);
		o->key_prefix = optarg;
		break;
	}
}

static void bench_parse(const struct ctl_cmd *cmd, struct ctl *c, int argc,
			char **argv, struct bench_opts *o)
{
	bool hot_keys_set = false;
	int ch;

	memset(o, 0, sizeof(*o));
	o->host = c->host ? c->host : "127.0.0.1";
	o->port = c->port;
	o->conns = 16;
	o->duration = 10;
	o->keys = 1000;
	o->get_ratio = 1.0;
	o->seed = 1;
	o->max_records = BENCH_RECORDS_DEFAULT;
	o->key_prefix = "bench:";
	o->path_prefix = "/";
	o->spec.kind = BSPEC_FIXED;
	o->spec.fixed = 4096;
	while ((ch = ctl_getopt(cmd, argc, argv, "", bench_longopts)) != -1)
		bench_opt(cmd, ch, o, &hot_keys_set);
	ctl_want_args(cmd, argc, 0, 0);
	if (o->populate_only && o->no_store)
		usage_error(cmd, "--populate-only and --no-store exclude each "
				 "other");
	if (o->sweep && (o->populate_only || o->get_ratio < 1.0))
		usage_error(cmd, "--sweep reads: not with --populate-only or "
				 "--get-ratio below 1");
	if (!o->threads) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);

		o->threads = n > 0 ? (unsigned)n : 1;
	}
	if (o->threads > o->conns)
		o->threads = o->conns;
	if (!hot_keys_set)
		o->hot_keys = 0; /* to the end of the set, below */
}

/*
 * @nt threads sharing @o->conns connections to the server, each with its
 * epoll set and its share of @o->max_records; dies on a failure.
 */
static struct bthread *threads_new(const struct bench_opts *o,
				   const struct keyset *ks, unsigned nt)
{
	struct bthread *th;
	uint64_t per;
	unsigned i;

	th = calloc(nt, sizeof(*th));
	if (!th)
		die("out of memory");
	per = o->max_records / nt + 1;
	for (i = 0; i < nt; i++) {
		struct bthread *t = &th[i];

		t->o = o;
		t->ks = ks;
		t->nc = o->conns / nt + (i < o->conns % nt);
		t->c = calloc(t->nc, sizeof(*t->c));
		t->cap = per;
		t->recs = malloc(per * sizeof(*t->recs));
		t->ep = epoll_create1(EPOLL_CLOEXEC);
		if (!t->c || !t->recs || t->ep < 0)
			die("out of memory");
		for (unsigned j = 0; j < t->nc; j++) {
			struct bconn *bc = &t->c[j];
			struct epoll_event ev;

			bench_connect(o, bc);
			bc->rbuf = malloc(BENCH_RBUF);
			bc->wbuf = malloc(BENCH_WBUF);
			if (!bc->rbuf || !bc->wbuf)
				die("out of memory");
			bc->rng = o->seed ^ ((uint64_t)i << 32 | j) ^
				  0x243f6a8885a308d3ull;
			ev.events = EPOLLIN;
			ev.data.ptr = bc;
			if (epoll_ctl(t->ep, EPOLL_CTL_ADD, bc->fd, &ev) < 0)
				die("epoll_ctl: %s", strerror(errno));
		}
	}
	return th;
}

static void threads_free(struct bthread *th, unsigned nt)
{
	for (unsigned i = 0; i < nt; i++) {
		for (unsigned j = 0; j < th[i].nc; j++) {
			if (th[i].c[j].fd >= 0)
				close(th[i].c[j].fd);
			free(th[i].c[j].rbuf);
			free(th[i].c[j].wbuf);
		}
		close(th[i].ep);
		free(th[i].c);
		free(th[i].recs);
	}
	free(th);
}

int cmd_bench(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv)
{
	struct bench_opts o;
	struct keyset ks;
	struct bthread *th;
	unsigned i, nt;
	int64_t t0 = 0, t1 = 0;
	double c0 = 0, s0 = -1, s1;
	uint64_t rss = 0;
	long spid;

	if (c->transport != CTL_TCP)
		return ctl_ring_bench(c, cmd, argc, argv);
	bench_parse(cmd, c, argc, argv, &o);
	keyset_init(&ks, &o);
	if (o.hot_start >= ks.n)
		usage_error(cmd,
			    "--hot-start %" PRIu64 " is past the %" PRIu64
			    " keys",
			    o.hot_start, ks.n);
	if (!o.hot_keys || o.hot_keys > ks.n - o.hot_start)
		o.hot_keys = ks.n - o.hot_start;
	bench_size_stats(&ks);

	nt = o.threads;
	th = threads_new(&o, &ks, nt);
	spid = o.server_pid ? o.server_pid : bench_discover_pid(&o);

	if (!o.no_store) {
		t0 = gs_mono_ns();
		c0 = bench_self_cpu();
		s0 = bench_proc_cpu(spid, NULL);
		atomic_store(&next_key, 0);
		bench_run_phase(th, nt, true);
		bench_join(th, nt);
		t1 = gs_mono_ns();
		printf("populate       %" PRIu64 " keys in %.3f s\n", ks.n,
		       (t1 - t0) / 1e9);
	}
	if (!o.populate_only) {
		for (i = 0; i < nt; i++) { /* populate is not measured */
			th[i].nrec = th[i].reqs = th[i].bytes = th[i].errors =
				th[i].unrecorded = 0;
			memset(th[i].status, 0, sizeof(th[i].status));
		}
		atomic_store(&stop_flag, 0);
		atomic_store(&next_key, 0); /* --sweep's cursor */
		s0 = bench_proc_cpu(spid, NULL);
		c0 = bench_self_cpu();
		t0 = gs_mono_ns();
		bench_run_phase(th, nt, false);
		while (!o.sweep &&
		       gs_mono_ns() - t0 < (int64_t)(o.duration * 1e9))
			usleep(10000);
		if (!o.sweep) /* a sweep ends when every key is read */
			atomic_store(&stop_flag, 1);
		bench_join(th, nt);
		t1 = gs_mono_ns();
	}
	s1 = bench_proc_cpu(spid, &rss);
	bench_report(&o, th, nt, (t1 - t0) / 1e9, bench_self_cpu() - c0,
		     s0 >= 0 && s1 >= 0 ? s1 - s0 : -1, rss);
	if (o.csv)
		bench_write_csv(o.csv, th, nt, t0);
	threads_free(th, nt);
	keyset_release(&ks);
	return 0;
}
