/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * goblinctl bench, one thread: its epoll loop and, for each of its
 * non-blocking connections, the request state machine (build a memcache
 * or HTTP request, send it with its generated payload, parse and verify
 * the reply, record the four timestamps), with reconnects and one retry.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bench.h"
#include "ctl.h"
#include "workload.h"

atomic_uint_fast64_t next_key;
atomic_int stop_flag;

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
	if (o->sweep) { /* every key of the window once, in order */
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
				k = c->psize - c->poff < BENCH_WBUF ?
					    (size_t)(c->psize - c->poff) :
					    BENCH_WBUF;
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
			size_t k = n - off < sizeof(t->scratch) ?
					   n - off :
					   sizeof(t->scratch);

			workload_payload_fill(c->seed, c->voff + off,
					      t->scratch, k);
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
			bconn_done(t, c,
				   c->bad	? ST_ERROR :
				   c->got_value ? ST_HIT :
						  ST_MISS);
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
		return c->status >= 200 && c->status < 300 ? ST_STORED :
							     ST_ERROR;
	if (c->status == 404)
		return ST_MISS;
	if (c->status != 200 || c->bad)
		return ST_ERROR;
	if (t->o->verify && c->voff != t->ks->size[c->cur.key]) {
		c->bad = true; /* a chunked body of the wrong size */
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
				bconn_kill(t, c,
					   rc == -EMSGSIZE ?
						   "response head too long" :
						   "malformed response head");
				return -1;
			}
			c->rstart += used;
			if (r.status < 200)
				continue; /* 100 Continue and the like */
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
				bconn_kill(t, c,
					   n ? strerror(errno) :
					       "closed by the server");
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
			return 0; /* level-triggered: epoll says when */
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
					bconn_kill(
						t, &t->c[i],
						"no reply 10 s after the end");
	}
	return NULL;
}

int bench_connect(const struct bench_opts *o, struct bconn *c)
{
	struct mcc_conn m;
	char why[256];
	int fl;

	if (mcc_connect(&m, o->host, o->port, why, sizeof(why)) < 0)
		die("cannot connect to '%s:%s': %s", o->host, o->port, why);
	c->fd = m.fd;
	free(m.buf); /* bench reads through its own buffers */
	fl = fcntl(c->fd, F_GETFL);
	fcntl(c->fd, F_SETFL, fl | O_NONBLOCK);
	return 0;
}

void bench_run_phase(struct bthread *th, unsigned nt, bool populate)
{
	unsigned i;

	for (i = 0; i < nt; i++) {
		th[i].populate = populate;
		if (pthread_create(&th[i].tid, NULL, bench_thread, &th[i]))
			die("cannot start a thread: %s", strerror(errno));
	}
}

void bench_join(struct bthread *th, unsigned nt)
{
	for (unsigned i = 0; i < nt; i++)
		pthread_join(th[i].tid, NULL);
}
