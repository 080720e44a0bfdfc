/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * goblinctl bench: the memcache and HTTP/1.1 load generator of the
 * benchmarks.  One epoll loop per thread, non-blocking connections with one request in
 * flight each, CLOCK_MONOTONIC nanosecond timestamps of every request held
 * in preallocated records until the end, then percentiles, a RESULT line
 * and optionally one CSV row per request.
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

#include "bench_spec.h"
#include "workload.h"
#include "ctl.h"
#include "http_client.h"
#include "mc_client.h"

#define BENCH_RBUF (256u << 10)		/* per connection, reads */
#define BENCH_WBUF (64u << 10)		/* per connection, generated sends */
#define BENCH_RECORDS_DEFAULT 4000000	/* x 48 bytes: ~190 MB at most */
#define BENCH_DRAIN_NS 10000000000ll	/* in-flight requests at the end */
#define BENCH_STATUS_MAX 1000		/* HTTP statuses are 100..999 */

enum { OP_GET = 0, OP_SET = 1 };
enum { ST_HIT = 0, ST_MISS, ST_STORED, ST_ERROR };
static const char *const op_names[] = {"get", "set"};
static const char *const st_names[] = {"hit", "miss", "stored", "error"};

/* One request: what it was and its four timestamps (ns, monotonic). */
struct rec {
	int64_t sent, first, payload, last;	/* payload 0: no value */
	uint64_t key;
	uint64_t bytes;		/* value bytes sent or received */
	uint8_t op, st;
};

struct bench_opts {
	const char *host, *port, *csv, *key_prefix;
	const char *path_prefix;	/* http: the URL path before the key */
	bool http;			/* --proto http, else memcache */
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
	char **name;		/* manifest only */
	const char *prefix;
};

struct bconn {
	int fd;
	bool busy, dead;
	bool want_out;		/* EPOLLOUT asked for: a send hit EAGAIN */
	struct rec cur;
	char key[MCC_KEY_MAX + 1];
	uint64_t seed;		/* payload seed of cur */
	/* sending: wbuf[woff..wlen) then payload bytes [poff, psize) */
	char *wbuf;
	size_t woff, wlen;
	uint64_t poff, psize;
	bool crlf_sent;
	/* receiving */
	char *rbuf;
	size_t rstart, rend;
	uint64_t vleft;		/* value bytes + CRLF still to come */
	uint64_t voff;		/* value offset (verify) */
	bool in_value, got_value, bad;
	uint64_t rng;
	/* http: the response being read */
	struct httpc_body body;	/* its body's framing, once in_value */
	int status;
	bool close_after;	/* reconnect before the next request */
	bool retried;		/* cur was sent again on a new connection */
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
	uint64_t wrong;		/* --verify: values of the wrong size or bytes */
	uint64_t status[BENCH_STATUS_MAX];	/* http: responses by status */
	bool populate;
	char scratch[BENCH_WBUF];
};

static atomic_uint_fast64_t next_key;	/* populate: the next key to store */
static atomic_int stop_flag;		/* measured phase: time is up */

static const char *key_name(const struct keyset *ks, uint64_t i, char *buf)
{
	if (ks->name)
		return ks->name[i];
	snprintf(buf, MCC_KEY_MAX + 1, "%s%08" PRIu64, ks->prefix, i);
	return buf;
}

/* ---- one request ---- */

/*
 * The head of an HTTP request for c->key: a GET, or a PUT of c->psize
 * bytes that follow as the body.  Returns its length in c->wbuf.
 */
static int http_request_head(const struct bench_opts *o, struct bconn *c,
			     int op)
{
	char target[3 * MCC_KEY_MAX + 512];

	/* the prefix is at most 256 bytes, a key MCC_KEY_MAX: it fits */
	if (httpc_target(target, sizeof(target), o->path_prefix, c->key) < 0)
		die("URL of '%s' too long", c->key);
	if (op == OP_SET)
		return snprintf(c->wbuf, BENCH_WBUF,
				"PUT %s HTTP/1.1\r\nHost: %s:%s\r\n"
				"Content-Length: %" PRIu64 "\r\n\r\n",
				target, o->host, o->port, c->psize);
	return snprintf(c->wbuf, BENCH_WBUF,
			"GET %s HTTP/1.1\r\nHost: %s:%s\r\n\r\n", target,
			o->host, o->port);
}

static void bconn_begin(struct bthread *t, struct bconn *c, uint64_t key,
			int op)
{
	const struct keyset *ks = t->ks;
	const char *name = key_name(ks, key, c->key);
	int n;

	if (name != c->key)
		snprintf(c->key, sizeof(c->key), "%s", name);
	memset(&c->cur, 0, sizeof(c->cur));
	c->cur.key = key;
	c->cur.op = (uint8_t)op;
	c->poff = c->psize = 0;
	c->crlf_sent = true;
	c->status = 0;
	if (t->o->http) {
		/* the body is the payload alone: no CRLF after it */
		c->psize = op == OP_SET ? ks->size[key] : 0;
		c->seed = workload_payload_seed(c->key, ks->size[key]);
		n = http_request_head(t->o, c, op);
	} else if (op == OP_SET) {
		c->psize = ks->size[key];
		c->seed = workload_payload_seed(c->key, c->psize);
		c->crlf_sent = false;
		n = snprintf(c->wbuf, BENCH_WBUF, "set %s 0 0 %" PRIu64 "\r\n",
			     c->key, c->psize);
	} else {
		c->seed = workload_payload_seed(c->key, ks->size[key]);
		n = snprintf(c->wbuf, BENCH_WBUF, "get %s\r\n", c->key);
	}
	c->woff = 0;
	c->wlen = (size_t)n;
	c->in_value = c->got_value = c->bad = false;
	c->busy = true;
	c->cur.sent = gs_mono_ns();
}

/* Pick and start the next request; false when there is none. */
static bool bconn_next(struct bthread *t, struct bconn *c)
{
	const struct bench_opts *o = t->o;
	uint64_t k, lo, n;

	if (t->populate) {
		k = atomic_fetch_add(&next_key, 1);
		if (k >= t->ks->n)
			return false;
		bconn_begin(t, c, k, OP_SET);
		return true;
	}
	if (atomic_load(&stop_flag))
		return false;
	lo = o->hot_start;
	n = o->hot_keys;
	if (o->sweep) {		/* every key of the window once, in order */
		k = atomic_fetch_add(&next_key, 1);
		if (k >= n)
			return false;
		bconn_begin(t, c, lo + k, OP_GET);
		return true;
	}
	k = lo + bspec_below(&c->rng, n);
	if (o->get_ratio >= 1.0 ||
	    (double)bspec_below(&c->rng, 1u << 30) < o->get_ratio * (1u << 30))
		bconn_begin(t, c, k, OP_GET);
	else
		bconn_begin(t, c, k, OP_SET);
	return true;
}

static void bconn_done(struct bthread *t, struct bconn *c, int st)
{
	c->cur.st = (uint8_t)st;
	c->cur.last = gs_mono_ns();
	if (!c->cur.first)
		c->cur.first = c->cur.last;
	if (st == ST_ERROR)
		t->errors++;
	/* a wrong value, not a failed request: the soak's "wrong bytes" */
	if (c->bad)
		t->wrong++;
	c->retried = false;
	t->reqs++;
	t->bytes += c->cur.bytes;
	if (t->nrec < t->cap)
		t->recs[t->nrec++] = c->cur;
	else
		t->unrecorded++;
	c->busy = false;
}

static void bconn_kill(struct bthread *t, struct bconn *c, const char *why)
{
	if (c->busy)
		bconn_done(t, c, ST_ERROR);
	if (t->errors <= 5)
		error("bench: connection closed: %s", why);
	epoll_ctl(t->ep, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	c->fd = -1;
	c->dead = true;
}

/*
 * Poll for output only while a send is blocked: a level-triggered
 * EPOLLIN alone costs one wakeup and one recv per reply.
 */
static void want_out(struct bthread *t, struct bconn *c, bool on)
{
	struct epoll_event ev;

	if (c->want_out == on)
		return;
	ev.events = EPOLLIN | (on ? EPOLLOUT : 0);
	ev.data.ptr = c;
	epoll_ctl(t->ep, EPOLL_CTL_MOD, c->fd, &ev);
	c->want_out = on;
}

/* Close and open again after a "Connection: close"; -1 when it failed. */
static int bconn_reconnect(struct bthread *t, struct bconn *c)
{
	struct epoll_event ev;
	struct mcc_conn m;
	char why[256];

	epoll_ctl(t->ep, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	c->fd = -1;
	c->close_after = c->want_out = false;
	c->rstart = c->rend = 0;
	if (mcc_connect(&m, t->o->host, t->o->port, why, sizeof(why)) < 0) {
		c->dead = true;
		t->errors++;
		error("bench: cannot reconnect: %s", why);
		return -1;
	}
	c->fd = m.fd;
	free(m.buf);
	fcntl(c->fd, F_SETFL, fcntl(c->fd, F_GETFL) | O_NONBLOCK);
	ev.events = EPOLLIN;
	ev.data.ptr = c;
	epoll_ctl(t->ep, EPOLL_CTL_ADD, c->fd, &ev);
	return 0;
}

static int bconn_send(struct bthread *t, struct bconn *c);

/*
 * The server closed a kept-alive connection as the request went (an idle
 * timeout): send it again once on a new connection, as HTTP clients do
 * with requests that got no response byte.  Its clock keeps running.
 */
static int bconn_retry(struct bthread *t, struct bconn *c)
{
	int64_t sent = c->cur.sent;
	uint64_t key = c->cur.key;
	int op = c->cur.op;

	if (bconn_reconnect(t, c) < 0)
		return -1;
	bconn_begin(t, c, key, op);
	c->cur.sent = sent;
	c->retried = true;
	return bconn_send(t, c);
}

static bool may_retry(const struct bthread *t, const struct bconn *c)
{
	return t->o->http && c->busy && !c->cur.first && !c->retried &&
	       !c->in_value;
}

/* Send what can be sent; -1 on a dead connection. */
static int bconn_send(struct bthread *t, struct bconn *c)
{
	for (;;) {
		ssize_t n;

		if (c->woff == c->wlen) {
			size_t k;

			if (c->poff < c->psize) {
				k = c->psize - c->poff < BENCH_WBUF
					    ? (size_t)(c->psize - c->poff)
					    : BENCH_WBUF;
				workload_payload_fill(c->seed, c->poff, c->wbuf,
						   k);
				c->poff += k;
				c->cur.bytes += k;
			} else if (!c->crlf_sent) {
				memcpy(c->wbuf, "\r\n", 2);
				k = 2;
				c->crlf_sent = true;
			} else {
				want_out(t, c, false);
				return 0;
			}
			c->woff = 0;
			c->wlen = k;
		}
		n = send(c->fd, c->wbuf + c->woff, c->wlen - c->woff,
			 MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			want_out(t, c, true);
			return 0;
		}
		if (n < 0 && (errno == EPIPE || errno == ECONNRESET) &&
		    may_retry(t, c))
			return bconn_retry(t, c);
		if (n < 0) {
			bconn_kill(t, c, strerror(errno));
			return -1;
		}
		c->woff += (size_t)n;
	}
}

/* Value bytes of a get: counted, and checked with --verify. */
static void value_bytes(struct bthread *t, struct bconn *c, const char *p,
			size_t n)
{
	if (!c->cur.payload)
		c->cur.payload = gs_mono_ns();
	c->cur.bytes += n;
	if (t->o->verify && !c->bad) {
		for (size_t off = 0; off < n;) {
			size_t k = n - off < sizeof(t->scratch)
					   ? n - off
					   : sizeof(t->scratch);

			workload_payload_fill(c->seed, c->voff + off, t->scratch,
					   k);
			if (memcmp(t->scratch, p + off, k)) {
				c->bad = true;
				break;
			}
			off += k;
		}
	}
	c->voff += n;
}

/* Consume a value's bytes and CRLF from the read buffer. */
static void take_value(struct bthread *t, struct bconn *c)
{
	size_t have = c->rend - c->rstart;
	size_t k = have < c->vleft ? have : (size_t)c->vleft;
	uint64_t dleft = c->vleft > 2 ? c->vleft - 2 : 0;
	size_t data = k < dleft ? k : (size_t)dleft;

	if (data)
		value_bytes(t, c, c->rbuf + c->rstart, data);
	c->rstart += k;
	c->vleft -= k;
	if (!c->vleft)
		c->in_value = false;
}

/*
 * Parse what the read buffer holds.  Returns 1 when the response is
 * complete, 0 for more, -1 on a protocol error (connection killed).
 */
static int bconn_parse(struct bthread *t, struct bconn *c)
{
	struct mcc_reply r;
	size_t used;
	int rc;

	for (;;) {
		if (c->in_value) {
			take_value(t, c);
			if (c->in_value)
				return 0;
		}
		rc = mcc_reply_parse(c->rbuf + c->rstart, c->rend - c->rstart,
				     &r, &used);
		if (rc == 1)
			return 0;
		if (rc < 0 || r.kind == MCC_OTHER || r.kind == MCC_STAT) {
			bconn_kill(t, c, "unexpected reply");
			return -1;
		}
		c->rstart += used;
		switch (r.kind) {
		case MCC_VALUE:
			if (c->cur.op != OP_GET || c->got_value) {
				bconn_kill(t, c, "unexpected VALUE");
				return -1;
			}
			c->got_value = c->in_value = true;
			c->vleft = r.bytes + 2;
			c->voff = 0;
			if (t->o->verify && r.bytes != t->ks->size[c->cur.key])
				c->bad = true;
			if (!r.bytes)
				c->cur.payload = gs_mono_ns();
			continue;
		case MCC_END:
			if (c->cur.op != OP_GET)
				break;
			bconn_done(t, c, c->bad ? ST_ERROR
					: c->got_value ? ST_HIT : ST_MISS);
			return 1;
		case MCC_STORED:
			if (c->cur.op != OP_SET)
				break;
			bconn_done(t, c, ST_STORED);
			return 1;
		case MCC_ERROR:
			if (t->errors < 5)
				error("bench: '%s': %.*s", c->key, (int)r.len,
				      r.text);
			bconn_done(t, c, ST_ERROR);
			return 1;
		default:
			break;
		}
		bconn_kill(t, c, "unexpected reply");
		return -1;
	}
}

/* The status of an HTTP response that ends request c->cur. */
static int http_outcome(struct bthread *t, struct bconn *c)
{
	if (c->cur.op == OP_SET)
		return c->status >= 200 && c->status < 300 ? ST_STORED
							   : ST_ERROR;
	if (c->status == 404)
		return ST_MISS;
	if (c->status != 200 || c->bad)
		return ST_ERROR;
	if (t->o->verify && c->voff != t->ks->size[c->cur.key]) {
		c->bad = true;	/* a chunked body of the wrong size */
		return ST_ERROR;
	}
	return ST_HIT;
}

/* A response head was parsed: start its body. */
static int http_head(struct bthread *t, struct bconn *c,
		     const struct httpc_resp *r)
{
	c->status = r->status;
	c->close_after |= r->close;
	httpc_body_init(&c->body, r);
	c->in_value = true;
	c->voff = 0;
	if (c->cur.op != OP_GET || r->status != 200)
		return 0;
	c->got_value = true;
	if (t->o->verify && r->framing == HTTPC_BODY_LENGTH &&
	    r->length != t->ks->size[c->cur.key])
		c->bad = true;
	if (c->body.done)
		c->cur.payload = gs_mono_ns();
	return 0;
}

/*
 * Parse what the read buffer holds of an HTTP response (1xx interim ones
 * skipped).  Returns 1 when the response is complete, 0 for more, -1 on a
 * protocol error (connection killed).
 */
static int bconn_parse_http(struct bthread *t, struct bconn *c)
{
	struct httpc_resp r;
	size_t used, off, len;
	int rc;

	for (;;) {
		if (!c->in_value) {
			rc = httpc_parse_head(c->rbuf + c->rstart,
					      c->rend - c->rstart, false, &r,
					      &used);
			if (rc == 1)
				return 0;
			if (rc < 0 || r.status == 101) {
				bconn_kill(t, c, rc == -EMSGSIZE
						 ? "response head too long"
						 : "malformed response head");
				return -1;
			}
			c->rstart += used;
			if (r.status < 200)
				continue;	/* 100 Continue and the like */
			http_head(t, c, &r);
		}
		while (!c->body.done && c->rstart < c->rend) {
			if (httpc_body_take(&c->body, c->rbuf + c->rstart,
					    c->rend - c->rstart, &used, &off,
					    &len) < 0) {
				bconn_kill(t, c, "malformed chunked body");
				return -1;
			}
			if (len && c->got_value)
				value_bytes(t, c, c->rbuf + c->rstart + off,
					    len);
			c->rstart += used;
		}
		if (!c->body.done)
			return 0;
		c->in_value = false;
		if (c->status < BENCH_STATUS_MAX)
			t->status[c->status]++;
		/* a reply before the whole PUT went: the stream is lost */
		if (c->woff < c->wlen || c->poff < c->psize)
			c->close_after = true;
		bconn_done(t, c, http_outcome(t, c));
		return 1;
	}
}

/* A response is complete: on to the next request, if any. */
static int bconn_after(struct bthread *t, struct bconn *c)
{
	if (c->close_after) {
		if (bconn_reconnect(t, c) < 0)
			return -1;
	} else if (c->rstart != c->rend) {
		bconn_kill(t, c, "reply without a request");
		return -1;
	}
	if (!bconn_next(t, c))
		return 0;
	return bconn_send(t, c);
}

/*
 * The server closed (@clean: a FIN, else a reset).  HTTP: an idle
 * connection is opened again, a body read until the close ends, a request
 * without a response byte is retried once.  0 when handled, -1 when the
 * connection is to be killed.
 */
static int bconn_eof(struct bthread *t, struct bconn *c, bool clean)
{
	if (!t->o->http)
		return -1;
	if (!c->busy)
		return bconn_reconnect(t, c);
	if (may_retry(t, c))
		return bconn_retry(t, c);
	if (!clean || !c->in_value || c->body.framing != HTTPC_BODY_CLOSE ||
	    c->rstart != c->rend)
		return -1;
	httpc_body_eof(&c->body);
	c->in_value = false;
	if (c->status < BENCH_STATUS_MAX)
		t->status[c->status]++;
	c->close_after = true;
	bconn_done(t, c, http_outcome(t, c));
	return bconn_after(t, c);
}

static int bconn_recv(struct bthread *t, struct bconn *c)
{
	for (;;) {
		ssize_t n;
		int rc;

		if (c->rstart == c->rend)
			c->rstart = c->rend = 0;
		if (c->rend == BENCH_RBUF) {
			memmove(c->rbuf, c->rbuf + c->rstart,
				c->rend - c->rstart);
			c->rend -= c->rstart;
			c->rstart = 0;
		}
		n = recv(c->fd, c->rbuf + c->rend, BENCH_RBUF - c->rend, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return 0;
		if ((n == 0 || (n < 0 && errno == ECONNRESET)) &&
		    bconn_eof(t, c, n == 0) == 0)
			return 0;
		if (n <= 0 || c->dead) {
			if (!c->dead)
				bconn_kill(t, c, n ? strerror(errno)
						   : "closed by the server");
			return -1;
		}
		if (c->busy && !c->cur.first)
			c->cur.first = gs_mono_ns();
		c->rend += (size_t)n;
		if (!c->busy) {
			bconn_kill(t, c, "reply without a request");
			return -1;
		}
		rc = t->o->http ? bconn_parse_http(t, c) : bconn_parse(t, c);
		if (rc < 0)
			return -1;
		if (rc == 1)
			return bconn_after(t, c);
		if ((size_t)n < BENCH_RBUF / 2)
			return 0;	/* level-triggered: epoll says when */
	}
}

/* ---- threads ---- */

static unsigned live_or_busy(struct bthread *t, bool *any_busy)
{
	unsigned live = 0;

	*any_busy = false;
	for (unsigned i = 0; i < t->nc; i++) {
		if (t->c[i].dead)
			continue;
		live++;
		*any_busy |= t->c[i].busy;
	}
	return live;
}

static void *bench_thread(void *arg)
{
	struct bthread *t = arg;
	struct epoll_event ev[64];
	int64_t drain_until = 0;
	bool busy;
	unsigned i;

	for (i = 0; i < t->nc; i++) {
		struct bconn *c = &t->c[i];

		if (!c->dead && bconn_next(t, c))
			bconn_send(t, c);
	}
	while (live_or_busy(t, &busy) && busy) {
		int n = epoll_wait(t->ep, ev, 64, 100);

		for (int j = 0; j < n; j++) {
			struct bconn *c = ev[j].data.ptr;

			if (c->dead)
				continue;
			if ((ev[j].events & EPOLLOUT) && c->busy &&
			    bconn_send(t, c) < 0)
				continue;
			if (ev[j].events & (EPOLLIN | EPOLLHUP | EPOLLERR))
				bconn_recv(t, c);
		}
		if (!atomic_load(&stop_flag))
			continue;
		if (!drain_until)
			drain_until = gs_mono_ns() + BENCH_DRAIN_NS;
		else if (gs_mono_ns() > drain_until)
			for (i = 0; i < t->nc; i++)
				if (!t->c[i].dead && t->c[i].busy)
					bconn_kill(t, &t->c[i],
						   "no reply 10 s after the end");
	}
	return NULL;
}

static int bench_connect(const struct bench_opts *o, struct bconn *c)
{
	struct mcc_conn m;
	char why[256];
	int fl;

	if (mcc_connect(&m, o->host, o->port, why, sizeof(why)) < 0)
		die("cannot connect to '%s:%s': %s", o->host, o->port, why);
	c->fd = m.fd;
	free(m.buf);	/* bench reads through its own buffers */
	fl = fcntl(c->fd, F_GETFL);
	fcntl(c->fd, F_SETFL, fl | O_NONBLOCK);
	return 0;
}

/* Run one phase (populate or measured) on every thread. */
static void run_phase(struct bthread *th, unsigned nt, bool populate)
{
	unsigned i;

	for (i = 0; i < nt; i++) {
		th[i].populate = populate;
		if (pthread_create(&th[i].tid, NULL, bench_thread, &th[i]))
			die("cannot start a thread: %s", strerror(errno));
	}
}

static void join_all(struct bthread *th, unsigned nt)
{
	for (unsigned i = 0; i < nt; i++)
		pthread_join(th[i].tid, NULL);
}

/* ---- CPU of the client and of the server ---- */

static double self_cpu(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

/* utime + stime of @pid from /proc, seconds; -1 if unreadable. */
static double proc_cpu(long pid, uint64_t *rss_kib)
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
	p = strrchr(buf, ')');	/* the name may hold spaces */
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u "
			 "%llu %llu %*d %*d %*d %*d %*d %*d %*u %*u %ld",
			 &ut, &st, &rss) != 3)
		return -1;
	if (rss_kib)
		*rss_kib = (uint64_t)rss * (uint64_t)(sysconf(_SC_PAGESIZE) /
						      1024);
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

/* The server's pid from its stats, when it runs on this machine. */
static long discover_pid(const struct bench_opts *o)
{
	struct mcc_conn m;
	struct mcc_reply r;
	char why[256];
	long pid = -1;

	if (o->http)
		return -1;	/* HTTP has no stats command: --server-pid */
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

	fprintf(f, "%-14s n=%zu p50=%.1f p90=%.1f p99=%.1f p99.9=%.1f "
		"max=%.1f mean=%.1f (us)\n",
		what, n, p.p50 / 1e3, p.p90 / 1e3, p.p99 / 1e3, p.p999 / 1e3,
		p.max / 1e3, p.mean / 1e3);
}

static void size_stats(const struct keyset *ks)
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

static void write_csv(const char *path, struct bthread *th, unsigned nt,
		      int64_t t0)
{
	FILE *f = fopen(path, "w");

	if (!f)
		die("cannot open '%s': %s", path, strerror(errno));
	fputs("op,key,status,bytes,sent_ns,first_byte_ns,first_payload_ns,"
	      "last_byte_ns\n", f);
	for (unsigned i = 0; i < nt; i++)
		for (size_t j = 0; j < th[i].nrec; j++) {
			const struct rec *r = &th[i].recs[j];

			fprintf(f, "%s,%" PRIu64 ",%s,%" PRIu64 ",%" PRId64
				",%" PRId64 ",%" PRId64 ",%" PRId64 "\n",
				op_names[r->op], r->key, st_names[r->st],
				r->bytes, r->sent - t0, r->first - t0,
				r->payload ? r->payload - t0 : 0,
				r->last - t0);
		}
	if (fclose(f))
		die("cannot write '%s': %s", path, strerror(errno));
}

struct totals {
	uint64_t reqs, gets, hits, misses, sets, errors, wrong, bytes;
	uint64_t unrecorded;
	uint64_t status[BENCH_STATUS_MAX];	/* http responses by status */
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
			len += (size_t)snprintf(buf + len, n - len, "%s%u:%" PRIu64,
					len ? "," : "", k, s->status[k]);
	if (!buf[0])
		snprintf(buf, n, "-");
	return buf;
}

static void report(const struct bench_opts *o, struct bthread *th,
		   unsigned nt, double secs, double ccpu, double scpu,
		   uint64_t rss_kib)
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
		       "bytes\n", s.wrong);
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
		printf(", server %.2f s (%.0f%%), server rss %" PRIu64
		       " KiB\n", scpu, 100 * scpu / secs, rss_kib);
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
	       o->http ? "http" : "memcache", o->conns, nt, secs, s.reqs, s.reqs / secs,
	       s.bytes / secs / 1048576.0, s.gets, s.hits, s.misses, s.sets,
	       s.errors, wrongs, pt.p50 / 1e3, pt.p90 / 1e3, pt.p99 / 1e3,
	       pt.p999 / 1e3, pp.p50 / 1e3, pp.p90 / 1e3, pp.p99 / 1e3,
	       pp.p999 / 1e3, pd.p50 / 1e3, pd.p90 / 1e3, pd.p99 / 1e3,
	       pd.p999 / 1e3, ccpu, scpu, o->http ? " statuses=" : "",
	       o->http ? statuses : "");
	free(s.ttfb);
	free(s.pttfb);
	free(s.done);
}

/* ---- the key set ---- */

/* "key size" lines, at most @limit of them (0: all). */
static void load_manifest(struct keyset *ks, const char *path,
			  uint64_t limit)
{
	FILE *f = fopen(path, "r");
	char line[MCC_KEY_MAX + 64], key[MCC_KEY_MAX + 2];
	uint64_t alloc = 0, size, lineno = 0;

	if (!f)
		die("cannot open '%s': %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f) && (!limit || ks->n < limit)) {
		char extra;

		lineno++;
		if (sscanf(line, "%251s %" SCNu64 " %c", key, &size,
			   &extra) != 2 ||
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
	B_HOST = 256, B_PORT, B_PROTO, B_CONNS, B_THREADS, B_DURATION, B_KEYS,
	B_SIZE, B_HOT_START, B_HOT_KEYS, B_POPULATE_ONLY, B_NO_STORE,
	B_GET_RATIO, B_CSV, B_VERIFY, B_SERVER_PID, B_SEED, B_MAX_RECORDS,
	B_KEY_PREFIX, B_SWEEP, B_PATH_PREFIX,
};

static const struct option bench_longopts[] = {
	{"help", no_argument, NULL, 'h'},
	{"host", required_argument, NULL, B_HOST},
	{"port", required_argument, NULL, B_PORT},
	{"proto", required_argument, NULL, B_PROTO},
	{"conns", required_argument, NULL, B_CONNS},
	{"threads", required_argument, NULL, B_THREADS},
	{"duration", required_argument, NULL, B_DURATION},
	{"keys", required_argument, NULL, B_KEYS},
	{"size", required_argument, NULL, B_SIZE},
	{"hot-start", required_argument, NULL, B_HOT_START},
	{"hot-keys", required_argument, NULL, B_HOT_KEYS},
	{"populate-only", no_argument, NULL, B_POPULATE_ONLY},
	{"no-store", no_argument, NULL, B_NO_STORE},
	{"get-ratio", required_argument, NULL, B_GET_RATIO},
	{"csv", required_argument, NULL, B_CSV},
	{"verify", no_argument, NULL, B_VERIFY},
	{"server-pid", required_argument, NULL, B_SERVER_PID},
	{"seed", required_argument, NULL, B_SEED},
	{"max-records", required_argument, NULL, B_MAX_RECORDS},
	{"key-prefix", required_argument, NULL, B_KEY_PREFIX},
	{"sweep", no_argument, NULL, B_SWEEP},
	{"path-prefix", required_argument, NULL, B_PATH_PREFIX},
	{NULL, 0, NULL, 0},
};

static uint64_t num_opt(const struct ctl_cmd *cmd, const char *name,
			uint64_t min, uint64_t max)
{
	uint64_t v;

	if (parse_u64(optarg, max, &v) < 0 || v < min)
		usage_error(cmd, "invalid value '%s' for --%s", optarg, name);
	return v;
}

static double real_opt(const struct ctl_cmd *cmd, const char *name,
		       double min, double max)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(optarg, &end);
	if (end == optarg || *end || errno || !(v >= min && v <= max))
		usage_error(cmd, "invalid value '%s' for --%s", optarg, name);
	return v;
}

static void bench_opt(const struct ctl_cmd *cmd, int ch,
		      struct bench_opts *o, bool *hot_keys_set)
{
	const char *why;

	switch (ch) {
	case B_HOST: o->host = optarg; break;
	case B_PORT: o->port = optarg; break;
	case B_PROTO:
		if (!strcmp(optarg, "http"))
			o->http = true;
		else if (!strcmp(optarg, "memcache"))
			o->http = false;
		else
			usage_error(cmd, "unsupported --proto '%s' (memcache "
				    "or http)", optarg);
		break;
	case B_PATH_PREFIX:
		if (optarg[0] != '/' || strlen(optarg) > 256)
			usage_error(cmd, "invalid --path-prefix '%s' (a path "
				    "of at most 256 bytes from '/')", optarg);
		o->path_prefix = optarg;
		break;
	case B_CONNS: o->conns = (unsigned)num_opt(cmd, "conns", 1, 65536);
		break;
	case B_THREADS:
		o->threads = (unsigned)num_opt(cmd, "threads", 1, 1024);
		break;
	case B_DURATION:
		o->duration = real_opt(cmd, "duration", 0.001, 86400 * 7);
		break;
	case B_KEYS: o->keys = num_opt(cmd, "keys", 1, 1ull << 32); break;
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
	case B_POPULATE_ONLY: o->populate_only = true; break;
	case B_NO_STORE: o->no_store = true; break;
	case B_SWEEP: o->sweep = true; break;
	case B_GET_RATIO:
		o->get_ratio = real_opt(cmd, "get-ratio", 0, 1);
		break;
	case B_CSV: o->csv = optarg; break;
	case B_VERIFY: o->verify = true; break;
	case B_SERVER_PID:
		o->server_pid = (long)num_opt(cmd, "server-pid", 1, INT32_MAX);
		break;
	case B_SEED: o->seed = num_opt(cmd, "seed", 0, UINT64_MAX); break;
	case B_MAX_RECORDS:
		o->max_records = num_opt(cmd, "max-records", 1, 1ull << 32);
		break;
	case B_KEY_PREFIX:
		if (strlen(optarg) > 200 || !mcc_key_valid(optarg,
							   strlen(optarg)))
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
		o->hot_keys = 0;	/* to the end of the set, below */
}

int cmd_bench(struct ctl *c, const struct ctl_cmd *cmd, int argc,
	      char **argv)
{
	struct bench_opts o;
	struct keyset ks;
	struct bthread *th;
	unsigned i, nt;
	int64_t t0 = 0, t1 = 0;
	double c0 = 0, s0 = -1, s1;
	uint64_t rss = 0, per;
	long spid;

	bench_parse(cmd, c, argc, argv, &o);
	keyset_init(&ks, &o);
	if (o.hot_start >= ks.n)
		usage_error(cmd, "--hot-start %" PRIu64 " is past the %" PRIu64
			    " keys", o.hot_start, ks.n);
	if (!o.hot_keys || o.hot_keys > ks.n - o.hot_start)
		o.hot_keys = ks.n - o.hot_start;
	size_stats(&ks);

	nt = o.threads;
	th = calloc(nt, sizeof(*th));
	if (!th)
		die("out of memory");
	per = o.max_records / nt + 1;
	for (i = 0; i < nt; i++) {
		struct bthread *t = &th[i];

		t->o = &o;
		t->ks = &ks;
		t->nc = o.conns / nt + (i < o.conns % nt);
		t->c = calloc(t->nc, sizeof(*t->c));
		t->cap = per;
		t->recs = malloc(per * sizeof(*t->recs));
		t->ep = epoll_create1(EPOLL_CLOEXEC);
		if (!t->c || !t->recs || t->ep < 0)
			die("out of memory");
		for (unsigned j = 0; j < t->nc; j++) {
			struct bconn *bc = &t->c[j];
			struct epoll_event ev;

			bench_connect(&o, bc);
			bc->rbuf = malloc(BENCH_RBUF);
			bc->wbuf = malloc(BENCH_WBUF);
			if (!bc->rbuf || !bc->wbuf)
				die("out of memory");
			bc->rng = o.seed ^ ((uint64_t)i << 32 | j) ^
				  0x243f6a8885a308d3ull;
			ev.events = EPOLLIN;
			ev.data.ptr = bc;
			if (epoll_ctl(t->ep, EPOLL_CTL_ADD, bc->fd, &ev) < 0)
				die("epoll_ctl: %s", strerror(errno));
		}
	}
	spid = o.server_pid ? o.server_pid : discover_pid(&o);

	if (!o.no_store) {
		t0 = gs_mono_ns();
		c0 = self_cpu();
		s0 = proc_cpu(spid, NULL);
		atomic_store(&next_key, 0);
		run_phase(th, nt, true);
		join_all(th, nt);
		t1 = gs_mono_ns();
		printf("populate       %" PRIu64 " keys in %.3f s\n", ks.n,
		       (t1 - t0) / 1e9);
	}
	if (!o.populate_only) {
		for (i = 0; i < nt; i++) {	/* populate is not measured */
			th[i].nrec = th[i].reqs = th[i].bytes =
				th[i].errors = th[i].unrecorded = 0;
			memset(th[i].status, 0, sizeof(th[i].status));
		}
		atomic_store(&stop_flag, 0);
		atomic_store(&next_key, 0);	/* --sweep's cursor */
		s0 = proc_cpu(spid, NULL);
		c0 = self_cpu();
		t0 = gs_mono_ns();
		run_phase(th, nt, false);
		while (!o.sweep && gs_mono_ns() - t0 < (int64_t)(o.duration * 1e9))
			usleep(10000);
		if (!o.sweep)	/* a sweep ends when every key is read */
			atomic_store(&stop_flag, 1);
		join_all(th, nt);
		t1 = gs_mono_ns();
	}
	s1 = proc_cpu(spid, &rss);
	report(&o, th, nt, (t1 - t0) / 1e9, self_cpu() - c0,
	       s0 >= 0 && s1 >= 0 ? s1 - s0 : -1, rss);
	if (o.csv)
		write_csv(o.csv, th, nt, t0);
	for (i = 0; i < nt; i++) {
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
	keyset_release(&ks);
	return 0;
}
