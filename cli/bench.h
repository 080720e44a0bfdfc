/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * goblinctl bench: what its rooms share.  cmd_bench.c parses the options,
 * builds the key set and the threads and runs the phases; bench_conn.c is
 * one thread's epoll loop and the request state machine of each of its
 * connections (memcache and HTTP); bench_report.c measures CPU and prints
 * the percentiles, the RESULT line and the CSV.
 */
#ifndef GOBLINCTL_BENCH_H
#define GOBLINCTL_BENCH_H

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "bench_spec.h"
#include "http_client.h"
#include "mc_client.h"

#define BENCH_RBUF	      (256u << 10) /* per connection, reads */
#define BENCH_WBUF	      (64u << 10)  /* per connection, generated sends */
#define BENCH_RECORDS_DEFAULT 4000000	   /* x 48 bytes: ~190 MB at most */
#define BENCH_DRAIN_NS	      10000000000ll /* in-flight requests at the end */
#define BENCH_STATUS_MAX      1000	    /* HTTP statuses are 100..999 */

enum { OP_GET = 0, OP_SET = 1 };
enum { ST_HIT = 0, ST_MISS, ST_STORED, ST_ERROR };

/* One request: what it was and its four timestamps (ns, monotonic). */
struct rec {
	int64_t sent, first, payload, last; /* payload 0: no value */
	uint64_t key;
	uint64_t bytes; /* value bytes sent or received */
	uint8_t op, st;
};

struct bench_opts {
	const char *host, *port, *csv, *key_prefix;
	const char *path_prefix; /* http: the URL path before the key */
	bool http;		 /* --proto http, else memcache */
	unsigned conns, threads;
	double duration, get_ratio;
	uint64_t keys, hot_start, hot_keys, seed, max_records;
	bool populate_only, no_store, verify, sweep;
	long server_pid;
	struct bspec spec;
};

/* The key set: names are key_prefix + index, or the manifest's. */
struct keyset {
	uint64_t n;
	uint64_t *size;
	char **name; /* manifest only */
	const char *prefix;
};

struct bconn {
	int fd;
	bool busy, dead;
	bool want_out; /* EPOLLOUT asked for: a send hit EAGAIN */
	struct rec cur;
	char key[MCC_KEY_MAX + 1];
	uint64_t seed; /* payload seed of cur */
	/* sending: wbuf[woff..wlen) then payload bytes [poff, psize) */
	char *wbuf;
	size_t woff, wlen;
	uint64_t poff, psize;
	bool crlf_sent;
	/* receiving */
	char *rbuf;
	size_t rstart, rend;
	uint64_t vleft; /* value bytes + CRLF still to come */
	uint64_t voff;	/* value offset (verify) */
	bool in_value, got_value, bad;
	uint64_t rng;
	/* http: the response being read */
	struct httpc_body body; /* its body's framing, once in_value */
	int status;
	bool close_after; /* reconnect before the next request */
	bool retried;	  /* cur was sent again on a new connection */
};

struct bthread {
	pthread_t tid;
	const struct bench_opts *o;
	const struct keyset *ks;
	struct bconn *c;
	unsigned nc;
	int ep;
	struct rec *recs;
	size_t nrec, cap;
	uint64_t unrecorded, errors, reqs, bytes;
	uint64_t wrong; /* --verify: values of the wrong size or bytes */
	uint64_t status[BENCH_STATUS_MAX]; /* http: responses by status */
	bool populate;
	char scratch[BENCH_WBUF];
};

/* Shared by the threads of a phase (bench_conn.c). */
extern atomic_uint_fast64_t next_key; /* populate: the next key to store */
extern atomic_int stop_flag;	      /* measured phase: time is up */

/* Key @i's name: the manifest's, or prefix + index formatted in @buf. */
static inline const char *key_name(const struct keyset *ks, uint64_t i,
				   char *buf)
{
	if (ks->name)
		return ks->name[i];
	snprintf(buf, MCC_KEY_MAX + 1, "%s%08" PRIu64, ks->prefix, i);
	return buf;
}

/* ---- bench_conn.c ---- */

/* Connect @c to the server (non-blocking); dies on failure. */
int bench_connect(const struct bench_opts *o, struct bconn *c);
/* Run one phase (populate or measured) on every thread. */
void bench_run_phase(struct bthread *th, unsigned nt, bool populate);
/* Wait for every thread of the phase. */
void bench_join(struct bthread *th, unsigned nt);

/* ---- bench_report.c ---- */

/* CPU seconds of this process, user and system. */
double bench_self_cpu(void);
/* utime + stime of @pid from /proc, seconds; -1 if unreadable. */
double bench_proc_cpu(long pid, uint64_t *rss_kib);
/* The server's pid from its stats, when it runs on this machine; or -1. */
long bench_discover_pid(const struct bench_opts *o);
/* The "sizes" line of the key set. */
void bench_size_stats(const struct keyset *ks);
/* One CSV row per recorded request of @th[0..nt), times from @t0. */
void bench_write_csv(const char *path, struct bthread *th, unsigned nt,
		     int64_t t0);
/* The totals, percentiles, CPU and RESULT lines on stdout. */
void bench_report(const struct bench_opts *o, struct bthread *th, unsigned nt,
		  double secs, double ccpu, double scpu, uint64_t rss_kib);

#endif
