/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * goblinctl bench, the results: CPU of the client and of the server, the
 * sizes of the key set, the totals and percentiles of the recorded
 * requests, the RESULT line and the optional CSV trace.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "bench.h"
#include "ctl.h"

static const char *const op_names[] = { "get", "set" };
static const char *const st_names[] = { "hit", "miss", "stored", "error" };

/* ---- CPU of the client and of the server ---- */

double bench_self_cpu(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

double bench_proc_cpu(long pid, uint64_t *rss_kib)
{
	char path[64], buf[1024], *p;
	unsigned long long ut, st;
	long rss;
	FILE *f;
	size_t n;

	if (pid <= 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	p = strrchr(buf, ')'); /* the name may hold spaces */
	if (!p || sscanf(p + 2,
			 "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u "
			 "%llu %llu %*d %*d %*d %*d %*d %*d %*u %*u %ld",
			 &ut, &st, &rss) != 3)
		return -1;
	if (rss_kib)
		*rss_kib = (uint64_t)rss *
			   (uint64_t)(sysconf(_SC_PAGESIZE) / 1024);
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

long bench_discover_pid(const struct bench_opts *o)
{
	struct mcc_conn m;
	struct mcc_reply r;
	char why[256];
	long pid = -1;

	if (o->http)
		return -1; /* HTTP has no stats command: --server-pid */
	if (strcmp(o->host, "127.0.0.1") && strcmp(o->host, "localhost") &&
	    strcmp(o->host, "::1"))
		return -1;
	if (mcc_connect(&m, o->host, o->port, why, sizeof(why)) < 0)
		return -1;
	if (mcc_send(&m, "stats\r\n", 7) == 0)
		while (mcc_read_reply(&m, &r) == 0 && r.kind == MCC_STAT)
			if (r.len > 9 && !memcmp(r.text, "STAT pid ", 9))
				pid = strtol(r.text + 9, NULL, 10);
	mcc_close(&m);
	return pid;
}

/* ---- results ---- */

static void print_pct(const char *what, uint64_t *v, size_t n, FILE *f)
{
	struct bspec_pct p = bspec_percentiles(v, n);

	fprintf(f,
		"%-14s n=%zu p50=%.1f p90=%.1f p99=%.1f p99.9=%.1f "
		"max=%.1f mean=%.1f (us)\n",
		what, n, p.p50 / 1e3, p.p90 / 1e3, p.p99 / 1e3, p.p999 / 1e3,
		p.max / 1e3, p.mean / 1e3);
}

void bench_size_stats(const struct keyset *ks)
{
	uint64_t *v = malloc(ks->n * sizeof(*v)), total = 0;
	struct bspec_pct p;

	if (!v)
		die("out of memory");
	memcpy(v, ks->size, ks->n * sizeof(*v));
	for (uint64_t i = 0; i < ks->n; i++)
		total += v[i];
	p = bspec_percentiles(v, ks->n);
	printf("sizes          count=%" PRIu64 " total=%" PRIu64
	       " mean=%.0f p50=%" PRIu64 " p90=%" PRIu64 " p99=%" PRIu64
	       " max=%" PRIu64 "\n",
	       ks->n, total, p.mean, p.p50, p.p90, p.p99, p.max);
	free(v);
}

void bench_write_csv(const char *path, struct bthread *th, unsigned nt,
		     int64_t t0)
{
	FILE *f = fopen(path, "w");

	if (!f)
		die("cannot open '%s': %s", path, strerror(errno));
	fputs("op,key,status,bytes,sent_ns,first_byte_ns,first_payload_ns,"
	      "last_byte_ns\n",
	      f);
	for (unsigned i = 0; i < nt; i++)
		for (size_t j = 0; j < th[i].nrec; j++) {
			const struct rec *r = &th[i].recs[j];

			fprintf(f,
				"%s,%" PRIu64 ",%s,%" PRIu64 ",%" PRId64
				",%" PRId64 ",%" PRId64 ",%" PRId64 "\n",
				op_names[r->op], r->key, st_names[r->st],
				r->bytes, r->sent - t0, r->first - t0,
				r->payload ? r->payload - t0 : 0, r->last - t0);
		}
	if (fclose(f))
		die("cannot write '%s': %s", path, strerror(errno));
}

struct totals {
	uint64_t reqs, gets, hits, misses, sets, errors, wrong, bytes;
	uint64_t unrecorded;
	uint64_t status[BENCH_STATUS_MAX]; /* http responses by status */
	uint64_t *ttfb, *pttfb, *done;
	size_t nttfb, npttfb, ndone;
};

static void collect(struct bthread *th, unsigned nt, struct totals *s)
{
	size_t all = 0;

	memset(s, 0, sizeof(*s));
	for (unsigned i = 0; i < nt; i++)
		all += th[i].nrec;
	s->ttfb = malloc((all + 1) * sizeof(uint64_t));
	s->pttfb = malloc((all + 1) * sizeof(uint64_t));
	s->done = malloc((all + 1) * sizeof(uint64_t));
	if (!s->ttfb || !s->pttfb || !s->done)
		die("out of memory");
	for (unsigned i = 0; i < nt; i++) {
		s->reqs += th[i].reqs;
		s->errors += th[i].errors;
		s->wrong += th[i].wrong;
		s->bytes += th[i].bytes;
		s->unrecorded += th[i].unrecorded;
		for (unsigned k = 0; k < BENCH_STATUS_MAX; k++)
			s->status[k] += th[i].status[k];
		for (size_t j = 0; j < th[i].nrec; j++) {
			const struct rec *r = &th[i].recs[j];

			s->gets += r->op == OP_GET;
			s->sets += r->op == OP_SET;
			s->hits += r->st == ST_HIT;
			s->misses += r->st == ST_MISS;
			if (r->st == ST_ERROR)
				continue;
			s->ttfb[s->nttfb++] = (uint64_t)(r->first - r->sent);
			s->done[s->ndone++] = (uint64_t)(r->last - r->sent);
			if (r->payload)
				s->pttfb[s->npttfb++] =
					(uint64_t)(r->payload - r->sent);
		}
	}
}

/* "200:17,404:3" into @buf: the HTTP responses by status; "-": none */
static const char *status_list(const struct totals *s, char *buf, size_t n)
{
	size_t len = 0;

	buf[0] = 0;
	for (unsigned k = 0; k < BENCH_STATUS_MAX && len < n; k++)
		if (s->status[k])
			len += (size_t)snprintf(buf + len, n - len,
						"%s%u:%" PRIu64, len ? "," : "",
						k, s->status[k]);
	if (!buf[0])
		snprintf(buf, n, "-");
	return buf;
}

void bench_report(const struct bench_opts *o, struct bthread *th, unsigned nt,
		  double secs, double ccpu, double scpu, uint64_t rss_kib)
{
	struct totals s;
	struct bspec_pct pt, pp, pd;
	char statuses[1024], wrongs[32] = "";

	collect(th, nt, &s);
	if (o->verify)
		snprintf(wrongs, sizeof(wrongs), " wrong=%" PRIu64, s.wrong);
	if (o->http)
		status_list(&s, statuses, sizeof(statuses));
	printf("requests       %" PRIu64 " in %.3f s: %.0f/s, %.2f MiB/s "
	       "payload\n",
	       s.reqs, secs, s.reqs / secs, s.bytes / secs / 1048576.0);
	printf("gets %" PRIu64 " hits %" PRIu64 " misses %" PRIu64
	       " sets %" PRIu64 " errors %" PRIu64 "%s\n",
	       s.gets, s.hits, s.misses, s.sets, s.errors,
	       o->verify ? "" : " (values not checked: --verify)");
	if (o->verify)
		printf("verify         %" PRIu64 " values of the wrong size or "
		       "bytes\n",
		       s.wrong);
	if (o->http)
		printf("statuses       %s\n", statuses);
	if (s.unrecorded)
		printf("records        %" PRIu64 " requests past --max-records "
		       "%" PRIu64 " not recorded: percentiles and counts "
		       "above cover the recorded ones\n",
		       s.unrecorded, o->max_records);
	print_pct("ttfb", s.ttfb, s.nttfb, stdout);
	print_pct("payload ttfb", s.pttfb, s.npttfb, stdout);
	print_pct("completion", s.done, s.ndone, stdout);
	printf("cpu            client %.2f s (%.0f%%)", ccpu,
	       100 * ccpu / secs);
	if (scpu >= 0)
		printf(", server %.2f s (%.0f%%), server rss %" PRIu64 " KiB\n",
		       scpu, 100 * scpu / secs, rss_kib);
	else
		printf(", server unknown (give --server-pid)\n");
	/* sorted by print_pct */
	pt = bspec_percentiles(s.ttfb, s.nttfb);
	pp = bspec_percentiles(s.pttfb, s.npttfb);
	pd = bspec_percentiles(s.done, s.ndone);
	printf("RESULT proto=%s conns=%u threads=%u secs=%.3f "
	       "requests=%" PRIu64 " ops_per_s=%.0f mib_per_s=%.2f "
	       "gets=%" PRIu64 " hits=%" PRIu64 " misses=%" PRIu64
	       " sets=%" PRIu64 " errors=%" PRIu64 "%s"
	       " ttfb_us=%.1f/%.1f/%.1f/%.1f"
	       " payload_ttfb_us=%.1f/%.1f/%.1f/%.1f"
	       " completion_us=%.1f/%.1f/%.1f/%.1f"
	       " client_cpu_s=%.2f server_cpu_s=%.2f%s%s\n",
	       o->http ? "http" : "memcache", o->conns, nt, secs, s.reqs,
	       s.reqs / secs, s.bytes / secs / 1048576.0, s.gets, s.hits,
	       s.misses, s.sets, s.errors, wrongs, pt.p50 / 1e3, pt.p90 / 1e3,
	       pt.p99 / 1e3, pt.p999 / 1e3, pp.p50 / 1e3, pp.p90 / 1e3,
	       pp.p99 / 1e3, pp.p999 / 1e3, pd.p50 / 1e3, pd.p90 / 1e3,
	       pd.p99 / 1e3, pd.p999 / 1e3, ccpu, scpu,
	       o->http ? " statuses=" : "", o->http ? statuses : "");
	free(s.ttfb);
	free(s.pttfb);
	free(s.done);
}
