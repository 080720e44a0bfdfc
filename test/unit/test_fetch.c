/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The mirror's origin fetcher against a real store and a small origin
 * server running in a thread of the test: read-while-fill, collapsing,
 * uncacheable responses, errors, revalidation, forwarding, cancel.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "origin.h"
#include "goblin.h"
#include "testdir.h"

#define KiB	1024ull
#define MiB	(1024ull * KiB)
#define WAIT_MS 10000

static char dir[64]; /* test_mkdtemp: $TMPDIR up to ~45 bytes */

/* ---- the origin: one thread per connection, Connection: close ---- */

struct origin {
	int lfd, port;
	pthread_t thread;
	atomic_bool stop;
	pthread_mutex_t lock;
	pthread_t conns[64];
	int nconns;
	/* the response, protected by lock */
	int status;
	char headers[1024];	/* extra "Name: value\r\n" lines */
	uint64_t body;		/* body bytes */
	size_t chunk;		/* sent per write */
	unsigned delay_ms;	/* before each chunk */
	unsigned head_delay_ms; /* before the head */
	bool chunked;		/* Transfer-Encoding: chunked */
	bool hang;		/* never answer */
	uint64_t cut_at;	/* close after this many body bytes */
	char etag_304[64];	/* If-None-Match with this: 304 */
	char headers_304[256];
	/* what happened, protected by lock */
	unsigned requests;
	char last_req[4096];
	size_t last_req_body;
	uint64_t last_sent; /* body bytes of the last response */
	bool finished;	    /* the last response is all sent */
};

static struct origin org;

static uint8_t pat(uint64_t i)
{
	return (uint8_t)(i * 131 + (i >> 9) * 7 + 3);
}

static bool send_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t w = send(fd, c, n, MSG_NOSIGNAL);

		if (w <= 0)
			return false;
		c += w;
		n -= (size_t)w;
	}
	return true;
}

static void nap(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

static void *conn_main(void *arg)
{
	int fd = (int)(intptr_t)arg;
	char req[4096], head[2048], *end = NULL;
	size_t got = 0, clen = 0;
	struct origin cfg;
	bool not_modified;
	uint8_t *buf;

	while (!end && got < sizeof(req) - 1) {
		ssize_t n = recv(fd, req + got, sizeof(req) - 1 - got, 0);

		if (n <= 0)
			goto out;
		got += (size_t)n;
		req[got] = '\0';
		end = strstr(req, "\r\n\r\n");
	}
	if (!end)
		goto out;
	{
		const char *cl = strcasestr(req, "\r\nContent-Length:");
		size_t have = got - (size_t)(end + 4 - req);
		char sink[4096];

		if (cl)
			clen = strtoul(cl + 17, NULL, 10);
		while (have < clen) {
			ssize_t n = recv(fd, sink, sizeof(sink), 0);

			if (n <= 0)
				break;
			have += (size_t)n;
		}
		end[2] = '\0';
	}
	pthread_mutex_lock(&org.lock);
	org.requests++;
	snprintf(org.last_req, sizeof(org.last_req), "%s", req);
	org.last_req_body = clen;
	org.last_sent = 0;
	org.finished = false;
	cfg = org;
	pthread_mutex_unlock(&org.lock);
	if (cfg.hang) {
		while (!atomic_load(&org.stop))
			nap(10);
		goto out;
	}
	if (cfg.head_delay_ms)
		nap(cfg.head_delay_ms);
	not_modified = cfg.etag_304[0] && strstr(req, "If-None-Match: ") &&
		       strstr(strstr(req, "If-None-Match: "), cfg.etag_304);
	if (not_modified) {
		snprintf(
			head, sizeof(head),
			"HTTP/1.1 304 Not Modified\r\n%sConnection: close\r\n\r\n",
			cfg.headers_304);
		send_all(fd, head, strlen(head));
		pthread_mutex_lock(&org.lock);
		org.finished = true;
		pthread_mutex_unlock(&org.lock);
		goto out;
	}
	if (cfg.chunked)
		snprintf(head, sizeof(head),
			 "HTTP/1.1 %d X\r\n%sTransfer-Encoding: chunked\r\n"
			 "Connection: close\r\n\r\n",
			 cfg.status, cfg.headers);
	else
		snprintf(head, sizeof(head),
			 "HTTP/1.1 %d X\r\n%sContent-Length: %llu\r\n"
			 "Connection: close\r\n\r\n",
			 cfg.status, cfg.headers, (unsigned long long)cfg.body);
	if (!send_all(fd, head, strlen(head)))
		goto out;
	buf = malloc(cfg.chunk + 32);
	for (uint64_t off = 0; off < cfg.body && !atomic_load(&org.stop);) {
		size_t n = cfg.body - off < cfg.chunk ? cfg.body - off :
							cfg.chunk;
		size_t h = 0;

		if (cfg.delay_ms)
			nap(cfg.delay_ms);
		if (off + n > cfg.cut_at)
			n = cfg.cut_at - off;
		if (n == 0)
			break;
		if (cfg.chunked)
			h = (size_t)sprintf((char *)buf, "%zx\r\n", n);
		for (size_t i = 0; i < n; i++)
			buf[h + i] = pat(off + i);
		if (cfg.chunked) {
			memcpy(buf + h + n, "\r\n", 2);
			n += 2;
		}
		if (!send_all(fd, buf, h + n))
			break;
		off += cfg.chunked ? n - 2 : n;
		pthread_mutex_lock(&org.lock);
		org.last_sent = off;
		pthread_mutex_unlock(&org.lock);
		if (off >= cfg.cut_at)
			break;
	}
	free(buf);
	pthread_mutex_lock(&org.lock);
	if (org.last_sent == cfg.body) {
		if (cfg.chunked)
			send_all(fd, "0\r\n\r\n", 5);
		org.finished = true;
	}
	pthread_mutex_unlock(&org.lock);
out:
	close(fd);
	return NULL;
}

static void *origin_main(void *arg)
{
	(void)arg;
	while (!atomic_load(&org.stop)) {
		struct pollfd p = { .fd = org.lfd, .events = POLLIN };
		int fd;

		if (poll(&p, 1, 20) <= 0)
			continue;
		fd = accept(org.lfd, NULL, NULL);
		if (fd < 0)
			continue;
		pthread_mutex_lock(&org.lock);
		if (org.nconns < 64)
			pthread_create(&org.conns[org.nconns++], NULL,
				       conn_main, (void *)(intptr_t)fd);
		else
			close(fd);
		pthread_mutex_unlock(&org.lock);
	}
	return NULL;
}

/* A listening socket on an ephemeral loopback port. */
static int listen_any(int *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	assert_true(fd >= 0);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(fd, 64), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	*port = ntohs(a.sin_port);
	return fd;
}

static void origin_start(void)
{
	memset(&org, 0, sizeof(org));
	pthread_mutex_init(&org.lock, NULL);
	org.status = 200;
	org.chunk = 16 * KiB;
	org.cut_at = UINT64_MAX;
	org.lfd = listen_any(&org.port);
	assert_int_equal(pthread_create(&org.thread, NULL, origin_main, NULL),
			 0);
}

static void origin_stop(void)
{
	atomic_store(&org.stop, true);
	pthread_join(org.thread, NULL);
	for (int i = 0; i < org.nconns; i++)
		pthread_join(org.conns[i], NULL);
	close(org.lfd);
	pthread_mutex_destroy(&org.lock);
}

static void origin_set(int status, const char *headers, uint64_t body)
{
	pthread_mutex_lock(&org.lock);
	org.status = status;
	snprintf(org.headers, sizeof(org.headers), "%s", headers);
	org.body = body;
	pthread_mutex_unlock(&org.lock);
}

static unsigned origin_requests(void)
{
	unsigned n;

	pthread_mutex_lock(&org.lock);
	n = org.requests;
	pthread_mutex_unlock(&org.lock);
	return n;
}

/* ---- fixtures ---- */

struct fx {
	struct gs_store *s;
	struct fetcher *f;
	struct fetch_opts o;
	char url[64];
};

static struct gs_store *open_store(void)
{
	struct gs_options o;
	struct gs_store *s = NULL;
	char err[256];

	gs_options_init(&o);
	o.create = true;
	o.no_mlock = true;
	o.memory = 8 * MiB;
	o.small_memory = 4 * MiB;
	o.ssd_size = 256 * MiB;
	if (gs_open(dir, &o, &s, err, sizeof(err)))
		fail_msg("gs_open: %s", err);
	return s;
}

static void fx_fetcher(struct fx *x)
{
	char err[256];

	x->f = fetcher_new(x->s, &x->o, err, sizeof(err));
	if (!x->f)
		fail_msg("fetcher_new: %s", err);
}

static int setup(void **state)
{
	struct fx *x = calloc(1, sizeof(*x));

	unsetenv("http_proxy");
	unsetenv("HTTP_PROXY");
	unsetenv("all_proxy");
	unsetenv("ALL_PROXY");
	if (!test_mkdtemp(dir, sizeof(dir), "gs-fetch"))
		return -1;
	origin_start();
	x->s = open_store();
	snprintf(x->url, sizeof(x->url), "http://127.0.0.1:%d/", org.port);
	x->o.origin = x->url;
	x->o.timeout_ms = 5000;
	x->o.max_object = 64 * MiB;
	x->o.max_transfers = 16;
	x->o.threads = 3; /* shards: each key's jobs stay in one */
	fx_fetcher(x);
	*state = x;
	return 0;
}

static int teardown(void **state)
{
	struct fx *x = *state;

	fetcher_free(x->f);
	origin_stop();
	gs_close(x->s);
	free(x);
	return test_rmtree(dir);
}

/* A fetcher with other options. */
static void refetcher(struct fx *x, unsigned timeout_ms, uint64_t max_object)
{
	fetcher_free(x->f);
	x->o.timeout_ms = timeout_ms;
	x->o.max_object = max_object;
	fx_fetcher(x);
}

/* ---- waiters ---- */

struct tw {
	struct fetch_waiter fw; /* first */
	pthread_mutex_t m;
	pthread_cond_t c;
	int done; /* times done() ran */
};

static void tw_done(struct fetch_waiter *fw)
{
	struct tw *t = (struct tw *)fw;

	pthread_mutex_lock(&t->m);
	t->done++;
	pthread_cond_broadcast(&t->c);
	pthread_mutex_unlock(&t->m);
}

static void tw_init(struct tw *t)
{
	memset(t, 0, sizeof(*t));
	pthread_mutex_init(&t->m, NULL);
	pthread_cond_init(&t->c, NULL);
	t->fw.done = tw_done;
}

static bool tw_wait_ms(struct tw *t, unsigned ms)
{
	struct timespec ts;
	bool done;

	ts = gs_clock_after(CLOCK_REALTIME, (int64_t)ms * 1000000);
	pthread_mutex_lock(&t->m);
	while (!t->done &&
	       pthread_cond_timedwait(&t->c, &t->m, &ts) != ETIMEDOUT)
		;
	done = t->done;
	pthread_mutex_unlock(&t->m);
	return done;
}

static void tw_wait(struct tw *t)
{
	if (!tw_wait_ms(t, WAIT_MS))
		fail_msg("done() was not called");
	assert_int_equal(t->done, 1);
}

static void tw_get(struct fx *x, struct tw *t, const char *key,
		   const struct gs_meta *stale)
{
	tw_init(t);
	assert_int_equal(
		fetcher_get(x->f, key, strlen(key), stale, NULL, &t->fw), 0);
	tw_wait(t);
}

/* Forward @fwd for @key: the origin's answer is relayed with @status. */
static void tw_forward(struct fx *x, struct tw *t, const char *key,
		       const struct fetch_forward *fwd, int status)
{
	struct gs_attr a;

	tw_init(t);
	assert_int_equal(fetcher_forward(x->f, key, strlen(key), fwd, &t->fw),
			 0);
	tw_wait(t);
	assert_int_equal(t->fw.kind, FETCH_PASS);
	assert_int_equal(gs_attr_decode(gs_reader_meta(t->fw.r)->attr,
					gs_reader_meta(t->fw.r)->attr_len, &a),
			 0);
	assert_int_equal(a.status, status);
}

/* Read all of @r and check it is the origin's body of @size bytes. */
static void check_body(struct gs_reader *r, uint64_t size)
{
	uint64_t off = 0;
	struct gs_chunk c;
	int ret;

	while ((ret = gs_reader_next(r, &c)) == 1) {
		assert_int_equal(c.off, off);
		for (size_t i = 0; i < c.len; i++)
			if (((const uint8_t *)c.data)[i] != pat(off + i))
				fail_msg("byte %llu differs",
					 (unsigned long long)(off + i));
		off += c.len;
	}
	assert_int_equal(ret, 0);
	assert_int_equal(off, size);
}

static void reader_attr(struct gs_reader *r, struct gs_attr *a)
{
	const struct gs_meta *m = gs_reader_meta(r);

	assert_int_equal(gs_attr_decode(m->attr, m->attr_len, a), 0);
}

static int count_one(void *arg, const void *key, size_t klen,
		     const struct gs_meta *m)
{
	(void)key;
	(void)klen;
	(void)m;
	(*(int *)arg)++;
	return 0;
}

/* Private keys left in the store. */
static int pass_keys(struct fx *x)
{
	int n = 0;

	gs_iterate(x->s, "\0pass/", 6, count_one, &n);
	return n;
}

static struct fetch_stats stats(struct fx *x)
{
	struct fetch_stats st;

	fetcher_stats(x->f, &st);
	return st;
}

/*
 * A fill's readers can reach its end before the fetcher commits it (and
 * counts it): what follows the end is checked once it has happened.
 */
#define EVENTUALLY(expr)                                    \
	do {                                                \
		for (int i_ = 0; i_ < 500 && !(expr); i_++) \
			nap(10);                            \
		assert_true(expr);                          \
	} while (0)

/* ---- tests ---- */

static void test_miss_stored_read_while_fill(void **state)
{
	struct fx *x = *state;
	uint64_t size = 1 * MiB;
	struct gs_attr a;
	struct gs_meta m;
	struct tw t;
	uint8_t buf[1000];
	bool finished;

	origin_set(200,
		   "Cache-Control: max-age=60\r\n"
		   "Content-Type: application/x-test\r\n"
		   "ETag: \"v1\"\r\n"
		   "Content-Encoding: identity\r\n",
		   size);
	org.delay_ms = 20; /* 64 chunks: over a second */
	tw_get(x, &t, "dir/a b.bin", NULL);
	assert_int_equal(t.fw.kind, FETCH_OBJECT);
	assert_non_null(t.fw.r);
	assert_int_equal(gs_read(t.fw.r, buf, sizeof(buf), 0), sizeof(buf));
	pthread_mutex_lock(&org.lock);
	finished = org.finished;
	pthread_mutex_unlock(&org.lock);
	assert_false(finished); /* read while the origin still sends */
	for (size_t i = 0; i < sizeof(buf); i++)
		assert_int_equal(buf[i], pat(i));
	assert_int_equal(gs_reader_meta(t.fw.r)->size, size);
	reader_attr(t.fw.r, &a);
	assert_true(a.flags & GS_ATTR_ORIGIN);
	assert_int_equal(a.status, 200);
	assert_int_equal(a.etag_len, 4);
	assert_memory_equal(a.etag, "\"v1\"", 4);
	assert_int_equal(a.ctype_len, strlen("application/x-test"));
	assert_true(a.fresh_until >= time(NULL) + 50);
	assert_non_null(strstr(a.headers, "Cache-Control: max-age=60\r\n"));
	assert_non_null(strstr(a.headers, "Content-Encoding: identity\r\n"));
	assert_int_equal(gs_reader_range(t.fw.r, 0, UINT64_MAX), 0);
	check_body(t.fw.r, size);
	gs_reader_close(t.fw.r);
	/* the request named the key, each segment encoded */
	assert_non_null(strstr(org.last_req, "GET /dir/a%20b.bin HTTP/1.1"));
	/* stored under its key: a second get is a hit without the fetcher */
	EVENTUALLY(gs_stat(x->s, "dir/a b.bin", 11, &m) == 0);
	assert_int_equal(m.size, size);
	assert_int_equal(stats(x).origin_requests, 1);
	EVENTUALLY(stats(x).stored == 1);
	assert_int_equal(stats(x).passed, 0);
	assert_int_equal(stats(x).origin_bytes, size);
}

static void test_collapse(void **state)
{
	struct fx *x = *state;
	enum { N = 8 };
	uint64_t size = 300 * KiB;
	struct tw t[N];

	origin_set(200, "Cache-Control: max-age=60\r\n", size);
	org.head_delay_ms = 200;
	/* four keys, spread over the shards, each asked for twice */
	for (int i = 0; i < N; i++) {
		tw_init(&t[i]);
		assert_int_equal(fetcher_get(x->f, "cdef" + i % 4, 1, NULL,
					     NULL, &t[i].fw),
				 0);
	}
	for (int i = 0; i < N; i++) {
		tw_wait(&t[i]);
		assert_int_equal(t[i].fw.kind, FETCH_OBJECT);
	}
	for (int i = 0; i < N; i++) {
		check_body(t[i].fw.r, size);
		gs_reader_close(t[i].fw.r);
	}
	assert_int_equal(origin_requests(), 4);
	assert_int_equal(stats(x).origin_requests, 4);
	assert_int_equal(stats(x).collapsed, N - 4);
	EVENTUALLY(stats(x).stored == 4);
}

/* A waiter that joins while the body flows gets the fill too. */
static void test_join_during_body(void **state)
{
	struct fx *x = *state;
	uint64_t size = 512 * KiB;
	struct tw a, b;

	origin_set(200, "Cache-Control: max-age=60\r\n", size);
	org.delay_ms = 20;
	tw_get(x, &a, "j", NULL);
	assert_int_equal(a.fw.kind, FETCH_OBJECT);
	tw_get(x, &b, "j", NULL);
	assert_int_equal(b.fw.kind, FETCH_OBJECT);
	check_body(b.fw.r, size);
	check_body(a.fw.r, size);
	gs_reader_close(a.fw.r);
	gs_reader_close(b.fw.r);
	assert_int_equal(origin_requests(), 1);
}

/*
 * ... but one that comes while a response that is not stored flows (a
 * 202, a no-store) asks the origin itself: it must not be handed another
 * client's answer that no cache keeps (RFC 9111 sec. 3).
 */
static void test_no_join_of_a_pass(void **state)
{
	struct fx *x = *state;
	uint64_t size = 512 * KiB;
	const char *hdrs[] = {
		"Last-Modified: Mon, 01 Jan 2024 00:00:00 GMT\r\n",
		"Cache-Control: no-store\r\n"
	};
	int status[] = { 202, 200 };

	for (int i = 0; i < 2; i++) {
		struct tw a, b;
		const char *key = i ? "ns" : "acc";
		unsigned n0 = origin_requests();

		origin_set(status[i], hdrs[i], size);
		org.delay_ms = 20;
		tw_get(x, &a, key, NULL);
		assert_int_equal(a.fw.kind, FETCH_PASS);
		tw_get(x, &b, key, NULL);
		assert_int_equal(b.fw.kind, FETCH_PASS);
		check_body(b.fw.r, size);
		check_body(a.fw.r, size);
		gs_reader_close(a.fw.r);
		gs_reader_close(b.fw.r);
		assert_int_equal(origin_requests(), n0 + 2);
	}
}

static void check_pass(struct fx *x, const char *key, int status,
		       const char *headers, uint64_t size)
{
	struct gs_attr a;
	struct gs_meta m;
	struct tw t;

	origin_set(status, headers, size);
	tw_get(x, &t, key, NULL);
	assert_int_equal(t.fw.kind, FETCH_PASS);
	reader_attr(t.fw.r, &a);
	assert_int_equal(a.status, status);
	check_body(t.fw.r, size);
	gs_reader_close(t.fw.r);
	assert_int_equal(gs_stat(x->s, key, strlen(key), &m), -ENOENT);
}

static void test_uncacheable_passed(void **state)
{
	struct fx *x = *state;
	uint64_t size = 300 * KiB;

	check_pass(x, "ns", 200, "Cache-Control: no-store\r\n", size);
	check_pass(x, "pr", 200, "Cache-Control: private, max-age=60\r\n",
		   size);
	assert_int_equal(stats(x).passed, 2);
	assert_int_equal(stats(x).stored, 0);
	EVENTUALLY(pass_keys(x) == 0); /* deleted after commit */
}

static void test_error_status_relayed(void **state)
{
	struct fx *x = *state;
	struct gs_attr a;
	struct tw t;

	/* no freshness and no validator: nothing to keep */
	check_pass(x, "missing", 404, "", 100);
	check_pass(x, "broken", 500, "", 10);
	check_pass(x, "found", 302, "Location: http://elsewhere/y\r\n", 0);
	/* a redirect is relayed, Location and all */
	origin_set(301, "Location: http://elsewhere/x\r\n", 0);
	tw_get(x, &t, "moved", NULL);
	assert_int_equal(t.fw.kind, FETCH_PASS);
	reader_attr(t.fw.r, &a);
	assert_int_equal(a.status, 301);
	assert_non_null(strstr(a.headers, "Location: http://elsewhere/x\r\n"));
	check_body(t.fw.r, 0);
	gs_reader_close(t.fw.r);
	EVENTUALLY(pass_keys(x) == 0);
}

/*
 * issue 18: a 404 or 500 with explicit freshness is stored, status kept;
 * so is a 200 with Set-Cookie (RFC 9111 sec. 7.3: it does not inhibit
 * caching), the cookie with it.
 */
static void test_issue18_error_status_stored(void **state)
{
	struct fx *x = *state;
	static const int st[] = { 404, 500, 200 };
	struct gs_attr a;
	struct gs_meta m;
	struct tw t;

	for (int i = 0; i < 3; i++) {
		char key[8];

		snprintf(key, sizeof(key), "e%d", st[i]);
		origin_set(st[i],
			   i == 2 ? "Cache-Control: max-age=60\r\n"
				    "Set-Cookie: a=b\r\n" :
				    "Cache-Control: max-age=60\r\n",
			   100);
		tw_get(x, &t, key, NULL);
		assert_int_equal(t.fw.kind, FETCH_OBJECT);
		reader_attr(t.fw.r, &a);
		assert_int_equal(a.status, st[i]);
		if (i == 2)
			assert_non_null(memmem(a.headers, a.headers_len,
					       "Set-Cookie: a=b\r\n", 17));
		check_body(t.fw.r, 100);
		gs_reader_close(t.fw.r);
		EVENTUALLY(gs_stat(x->s, key, strlen(key), &m) == 0 &&
			   m.cas != 0);
	}
}

static void test_origin_down(void **state)
{
	struct fx *x = *state;
	int port, fd = listen_any(&port);
	struct tw t;

	close(fd); /* nobody listens there now */
	fetcher_free(x->f);
	snprintf(x->url, sizeof(x->url), "http://127.0.0.1:%d", port);
	fx_fetcher(x);
	tw_get(x, &t, "k", NULL);
	assert_int_equal(t.fw.kind, FETCH_REPLY);
	assert_int_equal(t.fw.status, 502);
	assert_null(t.fw.r);
	assert_non_null(strstr(t.fw.msg, "origin unreachable"));
	assert_int_equal(stats(x).origin_errors, 1);
	assert_int_equal(gs_stat(x->s, "k", 1, &(struct gs_meta){ 0 }),
			 -ENOENT);
}

static void test_timeout(void **state)
{
	struct fx *x = *state;
	struct tw t;
	time_t t0 = time(NULL);

	refetcher(x, 300, 64 * MiB);
	org.hang = true;
	tw_get(x, &t, "slow", NULL);
	assert_int_equal(t.fw.kind, FETCH_REPLY);
	assert_int_equal(t.fw.status, 504);
	assert_true(time(NULL) - t0 < 5);
	assert_int_equal(stats(x).origin_timeouts, 1);
	assert_int_equal(pass_keys(x), 0);
}

/* A body that stops coming: readers see the fill aborted. */
static void test_stall_mid_body(void **state)
{
	struct fx *x = *state;
	uint64_t size = 600 * KiB;
	struct gs_chunk c;
	struct tw t;
	int ret;

	refetcher(x, 500, 64 * MiB);
	origin_set(200, "Cache-Control: max-age=60\r\n", size);
	org.cut_at = 100 * KiB;
	tw_get(x, &t, "cut", NULL);
	assert_int_equal(t.fw.kind, FETCH_OBJECT);
	while ((ret = gs_reader_next(t.fw.r, &c)) == 1)
		;
	assert_int_equal(ret, -ECANCELED);
	gs_reader_close(t.fw.r);
	assert_int_equal(stats(x).aborted_fills, 1);
	assert_int_equal(stats(x).stored, 0);
	assert_int_equal(gs_stat(x->s, "cut", 3, &(struct gs_meta){ 0 }),
			 -ENOENT);
}

static void test_revalidate_304(void **state)
{
	struct fx *x = *state;
	uint64_t size = 400 * KiB;
	struct gs_meta m, m2;
	struct gs_attr a;
	struct tw t;

	origin_set(200,
		   "Cache-Control: max-age=0\r\nETag: \"v1\"\r\n"
		   "Content-Type: text/plain\r\n",
		   size);
	tw_get(x, &t, "r", NULL);
	assert_int_equal(t.fw.kind, FETCH_OBJECT);
	check_body(t.fw.r, size);
	gs_reader_close(t.fw.r);
	EVENTUALLY(gs_stat(x->s, "r", 1, &m) == 0);
	assert_int_equal(gs_attr_decode(m.attr, m.attr_len, &a), 0);
	assert_true(a.fresh_until <= time(NULL)); /* stale at once */

	pthread_mutex_lock(&org.lock);
	snprintf(org.etag_304, sizeof(org.etag_304), "\"v1\"");
	snprintf(org.headers_304, sizeof(org.headers_304),
		 "Cache-Control: max-age=100\r\nETag: \"v1\"\r\n");
	pthread_mutex_unlock(&org.lock);
	tw_get(x, &t, "r", &m);
	assert_int_equal(t.fw.kind, FETCH_OBJECT);
	assert_non_null(strstr(org.last_req, "If-None-Match: \"v1\""));
	assert_int_equal(org.last_sent, 0); /* no body this time */
	assert_int_equal(gs_reader_meta(t.fw.r)->cas, m.cas);
	reader_attr(t.fw.r, &a);
	assert_true(a.fresh_until >= time(NULL) + 90);
	assert_int_equal(a.ctype_len, 10);
	assert_non_null(strstr(a.headers, "Cache-Control: max-age=100\r\n"));
	assert_null(strstr(a.headers, "max-age=0"));
	check_body(t.fw.r, size);
	gs_reader_close(t.fw.r);
	assert_int_equal(gs_stat(x->s, "r", 1, &m2), 0);
	assert_int_equal(m2.cas, m.cas); /* the same body */
	assert_int_equal(stats(x).origin_requests, 2);
	assert_int_equal(stats(x).revalidations, 1);
	assert_int_equal(stats(x).not_modified, 1);
	assert_int_equal(stats(x).stored, 1);
	assert_int_equal(stats(x).origin_bytes, size);

	/* a 200 to a conditional request replaces the stored version */
	pthread_mutex_lock(&org.lock);
	org.etag_304[0] = '\0';
	pthread_mutex_unlock(&org.lock);
	origin_set(200, "Cache-Control: max-age=60\r\nETag: \"v2\"\r\n",
		   size / 2);
	tw_get(x, &t, "r", &m);
	assert_int_equal(t.fw.kind, FETCH_OBJECT);
	check_body(t.fw.r, size / 2);
	gs_reader_close(t.fw.r);
	EVENTUALLY(gs_stat(x->s, "r", 1, &m2) == 0 && m2.size == size / 2);
	assert_int_equal(stats(x).revalidations, 2);
	assert_int_equal(stats(x).not_modified, 1);
}

static void test_forward_invalidates(void **state)
{
	struct fx *x = *state;
	struct fetch_forward fwd = { .method = "DELETE" };
	struct tw t;

	origin_set(200, "Cache-Control: max-age=60\r\n", 1000);
	tw_get(x, &t, "fw", NULL);
	gs_reader_close(t.fw.r);
	EVENTUALLY(gs_stat(x->s, "fw", 2, &(struct gs_meta){ 0 }) == 0);

	origin_set(204, "", 0);
	tw_forward(x, &t, "fw", &fwd, 204);
	gs_reader_close(t.fw.r);
	assert_non_null(strstr(org.last_req, "DELETE /fw HTTP/1.1"));
	assert_int_equal(gs_stat(x->s, "fw", 2, &(struct gs_meta){ 0 }),
			 -ENOENT);

	/* a PUT carries its body; a 403 invalidates nothing */
	origin_set(200, "Cache-Control: max-age=60\r\n", 1000);
	tw_get(x, &t, "fw", NULL);
	gs_reader_close(t.fw.r);
	EVENTUALLY(gs_stat(x->s, "fw", 2, &(struct gs_meta){ 0 }) == 0);
	origin_set(403, "", 5);
	fwd.method = "PUT";
	fwd.body = "hello world";
	fwd.body_len = 11;
	fwd.ctype = "text/plain";
	fwd.ctype_len = 10;
	tw_forward(x, &t, "fw", &fwd, 403);
	check_body(t.fw.r, 5);
	gs_reader_close(t.fw.r);
	assert_non_null(strstr(org.last_req, "PUT /fw HTTP/1.1"));
	assert_non_null(strstr(org.last_req, "Content-Type: text/plain"));
	assert_int_equal(org.last_req_body, 11);
	assert_int_equal(gs_stat(x->s, "fw", 2, &(struct gs_meta){ 0 }), 0);
	EVENTUALLY(stats(x).forwarded == 2);
	EVENTUALLY(pass_keys(x) == 0);
}

/* issue 18: the key of a target is normalised as RFC 9110 allows only */
static void test_issue18_key_of(void **state)
{
	static const struct {
		const char *in, *out;
	} ok[] = {
		{ "/q?x=1", "q?x=1" },
		{ "/q?x=2", "q?x=2" },
		{ "/q?b=2&a=1", "q?b=2&a=1" },	 /* not sorted */
		{ "/q?a=1&&a=1", "q?a=1&&a=1" }, /* nothing dropped */
		{ "/q?", "q?" },		 /* not "/q" */
		{ "/q", "q" },
		{ "/%7Euser/%61%2d%5F%2E", "~user/a-_." }, /* unreserved */
		{ "/a%2fb?c%3dd", "a%2Fb?c%3Dd" },	   /* upper-cased */
		{ "/a%2Fb", "a%2Fb" },			   /* not '/' */
		{ "/s p+?q=a+b%20c", "s p+?q=a+b%20c" },
		{ "/p?100%", "p?100%" }, /* a lone '%' in a query */
		{ "/p?%zz%4", "p?%zz%4" },
		{ "/p?%00", "p?%00" },
	};
	char out[64];
	long n;

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		n = fetch_key_of(ok[i].in, strlen(ok[i].in), out,
				 sizeof(out) - 1);
		assert_int_equal(n, strlen(ok[i].out));
		assert_string_equal(out, ok[i].out);
	}
	/* "/": a key of its own, not "" (none) and not any other's */
	assert_int_equal(fetch_key_of("/", 1, out, 10), 2);
	assert_memory_equal(out, "\0/", 2);
	assert_int_equal(fetch_key_of("//", 2, out, 10), 1);
	assert_memory_equal(out, "/", 1);
	assert_int_equal(fetch_key_of("q", 1, out, 10), -EINVAL);
	assert_int_equal(fetch_key_of("", 0, out, 10), -EINVAL);
	assert_int_equal(fetch_key_of("/a%zz", 5, out, 10), -EINVAL);
	assert_int_equal(fetch_key_of("/a%4", 4, out, 10), -EINVAL);
	assert_int_equal(fetch_key_of("/a%00", 5, out, 10), -EINVAL);
	assert_int_equal(fetch_key_of("/abcdef", 7, out, 6), 6);
	assert_int_equal(fetch_key_of("/abcdefg", 8, out, 6), -ENAMETOOLONG);
	assert_int_equal(fetch_key_of("/abcd%2F", 8, out, 6), -ENAMETOOLONG);
}

/* issue 18: which request fields a gateway forwards (RFC 9110 sec. 7.6) */
static void test_issue18_forwards_field(void **state)
{
	static const char *const e2e[] = {
		"User-Agent",
		"Cookie",
		"Accept",
		"Accept-Encoding",
		"accept-language",
		"X-Custom",
		"Authorization",
		"Cache-Control",
		"Pragma",
		"Content-Type",
		"Via",
		"X-Forwarded-For",
	};
	static const char *const hop[] = {
		"Connection",
		"Keep-Alive",
		"Proxy-Connection",
		"TE",
		"Trailer",
		"Transfer-Encoding",
		"Upgrade",
		"proxy-authorization",
		"Host",
		"Content-Length",
	};
	static const char *const cond[] = {
		"If-None-Match",       "If-Modified-Since", "If-Match",
		"If-Unmodified-Since", "If-Range",	    "Range",
	};
	const char *conn = "close, X-Hop ,x-other";

	(void)state;
	for (size_t i = 0; i < sizeof(e2e) / sizeof(e2e[0]); i++) {
		assert_true(fetch_forwards_field(e2e[i], strlen(e2e[i]), NULL,
						 0, false));
		assert_true(fetch_forwards_field(e2e[i], strlen(e2e[i]), conn,
						 strlen(conn), true));
	}
	for (size_t i = 0; i < sizeof(hop) / sizeof(hop[0]); i++)
		assert_false(fetch_forwards_field(hop[i], strlen(hop[i]), NULL,
						  0, true));
	for (size_t i = 0; i < sizeof(cond) / sizeof(cond[0]); i++) {
		assert_false(fetch_forwards_field(cond[i], strlen(cond[i]),
						  NULL, 0, false));
		assert_true(fetch_forwards_field(cond[i], strlen(cond[i]), NULL,
						 0, true));
	}
	/* named in Connection: hop-by-hop too */
	assert_false(
		fetch_forwards_field("X-Hop", 5, conn, strlen(conn), true));
	assert_false(
		fetch_forwards_field("X-OTHER", 7, conn, strlen(conn), false));
	assert_true(fetch_forwards_field("X-Ho", 4, conn, strlen(conn), true));
}

/* issue 18: the origin gets the target and the end-to-end fields */
static void test_issue18_request_forwarded(void **state)
{
	struct fx *x = *state;
	static const char fields[] = "Host: mirror.example\r\n"
				     "User-Agent: probe/1\r\n"
				     "Connection: keep-alive, X-Hop\r\n"
				     "X-Hop: secret\r\n"
				     "Cookie: a=b\r\n"
				     "If-None-Match: \"zz\"\r\n"
				     "Via: 1.0 edge\r\n"
				     "X-Forwarded-For: 192.0.2.1\r\n"
				     "X-Empty:\r\n"
				     "Accept-Encoding: gzip\r\n";
	struct fetch_req req = {
		.target = "/a%2fb?x=1&y=%41",
		.target_len = 16,
		.fields = fields,
		.fields_len = sizeof(fields) - 1,
		.client = "127.0.0.9",
	};
	struct fetch_forward fwd = {
		.method = "BREW",
		.body = "tea",
		.body_len = 3,
	};
	char k[64];
	long kl = fetch_key_of(req.target, req.target_len, k, sizeof(k) - 1);
	struct tw t;

	origin_set(200, "Cache-Control: max-age=60\r\n", 100);
	tw_init(&t);
	assert_int_equal(fetcher_get(x->f, k, (size_t)kl, NULL, &req, &t.fw),
			 0);
	tw_wait(&t);
	assert_int_equal(t.fw.kind, FETCH_OBJECT);
	gs_reader_close(t.fw.r);
	assert_non_null(strstr(org.last_req, "GET /a%2fb?x=1&y=%41 HTTP/1.1"));
	assert_non_null(strstr(org.last_req, "\r\nUser-Agent: probe/1\r\n"));
	assert_non_null(strstr(org.last_req, "\r\nCookie: a=b\r\n"));
	assert_non_null(strstr(org.last_req, "\r\nAccept-Encoding: gzip\r\n"));
	assert_non_null(strstr(org.last_req, "\r\nX-Empty: \r\n") ?
				strstr(org.last_req, "\r\nX-Empty: \r\n") :
				strstr(org.last_req, "\r\nX-Empty:\r\n"));
	assert_non_null(strstr(org.last_req, "\r\nVia: 1.0 edge, 1.1 goblind"));
	assert_non_null(strstr(
		org.last_req, "\r\nX-Forwarded-For: 192.0.2.1, 127.0.0.9\r\n"));
	assert_null(strstr(org.last_req, "X-Hop: secret"));
	assert_null(strstr(org.last_req, "mirror.example"));
	assert_null(strcasestr(org.last_req, "\r\nConnection: keep-alive"));
	assert_null(strstr(org.last_req, "If-None-Match")); /* cacheable */
	assert_null(strstr(org.last_req, "Accept: */*"));

	/* a forward: its conditionals go too, and its method as it is */
	fwd.req = req;
	origin_set(201, "Location: /a%2Fb?x=1&y=A\r\n", 0);
	tw_forward(x, &t, k, &fwd, 201);
	gs_reader_close(t.fw.r);
	assert_non_null(strstr(org.last_req, "BREW /a%2fb?x=1&y=%41 HTTP/1.1"));
	assert_non_null(strstr(org.last_req, "\r\nIf-None-Match: \"zz\"\r\n"));
	assert_int_equal(org.last_req_body, 3);
	assert_int_equal(gs_stat(x->s, k, (size_t)kl, &(struct gs_meta){ 0 }),
			 -ENOENT); /* invalidated */
}

/* issue 18: an unsafe method's Location names another stored URL */
static void test_issue18_location_invalidated(void **state)
{
	struct fx *x = *state;
	struct fetch_forward fwd = { .method = "POST" };
	struct tw t;
	char abs[128];

	origin_set(200, "Cache-Control: max-age=60\r\n", 10);
	tw_get(x, &t, "other?v=1", NULL);
	gs_reader_close(t.fw.r);
	tw_get(x, &t, "third", NULL);
	gs_reader_close(t.fw.r);
	tw_get(x, &t, "kept", NULL);
	gs_reader_close(t.fw.r);
	EVENTUALLY(gs_stat(x->s, "kept", 4, &(struct gs_meta){ 0 }) == 0);
	snprintf(abs, sizeof(abs),
		 "Location: /other?v=%%31\r\n"
		 "Content-Location: http://127.0.0.1:%d/third\r\n",
		 org.port);
	origin_set(303, abs, 0);
	tw_forward(x, &t, "post", &fwd, 303);
	gs_reader_close(t.fw.r);
	assert_int_equal(gs_stat(x->s, "other?v=1", 9, &(struct gs_meta){ 0 }),
			 -ENOENT);
	assert_int_equal(gs_stat(x->s, "third", 5, &(struct gs_meta){ 0 }),
			 -ENOENT);
	/* another origin's URL, or a safe method: nothing invalidated */
	origin_set(200, "Location: http://elsewhere.example/kept\r\n", 0);
	tw_forward(x, &t, "post", &fwd, 200);
	gs_reader_close(t.fw.r);
	fwd.method = "OPTIONS";
	fwd.safe = true;
	origin_set(200, "Location: /kept\r\n", 0);
	tw_forward(x, &t, "kept", &fwd, 200);
	gs_reader_close(t.fw.r);
	assert_int_equal(gs_stat(x->s, "kept", 4, &(struct gs_meta){ 0 }), 0);
}

/* issue 18: which variant a request selects (RFC 9111 sec. 4.1) */
static void test_issue18_variant_key(void **state)
{
	struct gs_attr stub;
	char a[64], b[64];
	long la, lb;

	(void)state;
	gs_attr_init(&stub);
	stub.flags = GS_ATTR_ORIGIN | GS_ATTR_VARY;
	stub.headers_len =
		(size_t)sprintf(stub.headers, "Vary: accept-encoding,x-b\r\n");
#define VK(out, f) fetch_variant_key("k?q", 3, &stub, f, strlen(f), out, 63)
	la = VK(a, "Accept-Encoding: gzip\r\nX-B: 1\r\n");
	assert_int_equal(la, 3 + 2 + 16);
	assert_memory_equal(a, "k?q\0v", 5);
	/* names are case-blind, whitespace is combined, other fields
	 * and their order do not count, lines of one field combine */
	lb = VK(b, "x-other: z\r\nx-b:1\r\naccept-encoding:   gzip  \r\n");
	assert_int_equal(lb, la);
	assert_memory_equal(a, b, (size_t)la);
	la = VK(a, "Accept-Encoding: gzip,  br\r\nX-B: 1\r\n");
	lb = VK(b,
		"Accept-Encoding: gzip\r\nX-B: 1\r\nAccept-Encoding: br\r\n");
	assert_memory_equal(a, b, (size_t)la);
	lb = VK(b, "Accept-Encoding: gzip , br\r\nX-B: 1\r\n");
	assert_memory_equal(a, b, (size_t)la);
	/* different values, and absent unlike empty */
	la = VK(a, "Accept-Encoding: gzip\r\nX-B: 1\r\n");
	lb = VK(b, "Accept-Encoding: br\r\nX-B: 1\r\n");
	assert_memory_not_equal(a, b, (size_t)la);
	la = VK(a, "X-B: 1\r\n");
	lb = VK(b, "Accept-Encoding:\r\nX-B: 1\r\n");
	assert_memory_not_equal(a, b, (size_t)la);
	lb = VK(b, "X-B: 1\r\nAccept-Encoding: \r\n");
	la = VK(a, "Accept-Encoding:\r\nX-B: 1\r\n");
	assert_memory_equal(a, b, (size_t)la);
	/* a variant's key selects from its URL's */
	la = fetch_variant_key(a, (size_t)la, &stub, "", 0, b, 63);
	assert_int_equal(la, 3 + 2 + 16);
	assert_memory_equal(b, "k?q\0v", 5);
	/* no stub, or too long */
	assert_int_equal(fetch_variant_key("k", 1, &stub, "", 0, a, 10),
			 -ENAMETOOLONG);
	stub.flags = GS_ATTR_ORIGIN;
	assert_int_equal(VK(a, ""), -EINVAL);
#undef VK
}

static bool stored(struct fx *x, const void *key, size_t klen)
{
	struct gs_meta *m = malloc(sizeof(*m));
	bool ok = gs_stat(x->s, key, klen, m) == 0;

	free(m);
	return ok;
}

/* Fetch "v" with fields @f: the variant's key in @vk, its length back. */
static size_t vary_get(struct fx *x, const char *f, char *vk)
{
	struct fetch_req req = { .target = "/v",
				 .target_len = 2,
				 .fields = f,
				 .fields_len = strlen(f) };
	struct gs_meta *m = malloc(sizeof(*m));
	struct gs_attr *a = malloc(sizeof(*a));
	struct tw t;
	long n;

	tw_init(&t);
	t.fw.fields = f;
	t.fw.fields_len = strlen(f);
	assert_int_equal(fetcher_get(x->f, "v", 1, NULL, &req, &t.fw), 0);
	tw_wait(&t);
	assert_int_equal(t.fw.kind, FETCH_OBJECT);
	check_body(t.fw.r, 10);
	gs_reader_close(t.fw.r);
	assert_int_equal(gs_stat(x->s, "v", 1, m), 0);
	assert_int_equal(gs_attr_decode(m->attr, m->attr_len, a), 0);
	assert_true(a->flags & GS_ATTR_VARY);
	assert_int_equal(m->size, 0);
	n = fetch_variant_key("v", 1, a, f, strlen(f), vk, GS_KEY_MAX);
	assert_true(n > 0);
	EVENTUALLY(stored(x, vk, (size_t)n));
	free(m);
	free(a);
	return (size_t)n;
}

/* issue 18: variants side by side under a stub, at most 16 a URL */
static void test_issue18_variants_stored(void **state)
{
	struct fx *x = *state;
	char k1[64], k2[64], k[20][64], f[64];
	size_t l1, l2, l[20];
	struct tw t;

	origin_set(200, "Cache-Control: max-age=60\r\nVary: X-V\r\n", 10);
	l1 = vary_get(x, "X-V: 1\r\n", k1);
	l2 = vary_get(x, "X-V: 2\r\n", k2);
	assert_memory_not_equal(k1, k2, l1);
	assert_true(stored(x, k1, l1));
	assert_int_equal(org.requests, 2);
	/* the 17th variant replaces the oldest */
	for (int i = 0; i < 17; i++) {
		snprintf(f, sizeof(f), "X-V: n%d\r\n", i);
		l[i] = vary_get(x, f, k[i]);
	}
	assert_false(stored(x, k1, l1)); /* the oldest two went */
	assert_false(stored(x, k2, l2));
	assert_true(stored(x, k[1], l[1]));
	assert_true(stored(x, k[16], l[16]));
	/* another Vary list replaces the set */
	origin_set(200, "Cache-Control: max-age=60\r\nVary: X-W\r\n", 10);
	l1 = vary_get(x, "X-V: n3\r\nX-W: a\r\n", k1);
	for (int i = 1; i < 17; i++)
		assert_false(stored(x, k[i], l[i]));
	assert_true(stored(x, k1, l1));
	/* no Vary any more: the URL's own object, variants gone */
	origin_set(200, "Cache-Control: max-age=60\r\n", 10);
	{
		struct fetch_req req = { .target = "/v",
					 .target_len = 2,
					 .fields = "",
					 .fields_len = 0 };

		tw_init(&t);
		t.fw.fields = "";
		assert_int_equal(fetcher_get(x->f, k1, l1, NULL, &req, &t.fw),
				 0);
		tw_wait(&t);
		assert_int_equal(t.fw.kind, FETCH_OBJECT);
		gs_reader_close(t.fw.r);
	}
	EVENTUALLY(!stored(x, k1, l1));
	{
		struct gs_meta *m = malloc(sizeof(*m));

		EVENTUALLY(gs_stat(x->s, "v", 1, m) == 0 && m->size == 10);
		free(m);
	}
	/* Vary: * is passed, never stored */
	origin_set(200, "Cache-Control: max-age=60\r\nVary: *\r\n", 10);
	{
		struct fetch_req req = { .target = "/s",
					 .target_len = 2,
					 .fields = "",
					 .fields_len = 0 };

		tw_init(&t);
		assert_int_equal(fetcher_get(x->f, "s", 1, NULL, &req, &t.fw),
				 0);
		tw_wait(&t);
		assert_int_equal(t.fw.kind, FETCH_PASS);
		gs_reader_close(t.fw.r);
		assert_false(stored(x, "s", 1));
	}
}

static void test_max_object(void **state)
{
	struct fx *x = *state;
	struct tw t;

	refetcher(x, 5000, 64 * KiB);
	check_pass(x, "big", 200, "Cache-Control: max-age=60\r\n", 100 * KiB);
	/* unknown length: read while it fills; stored when it stays
	 * within max_object ... */
	org.chunked = true;
	origin_set(200, "Cache-Control: max-age=60\r\n", 50 * KiB);
	tw_get(x, &t, "chunked", NULL);
	assert_int_equal(t.fw.kind, FETCH_OBJECT);
	assert_true(gs_reader_meta(t.fw.r)->size == GS_SIZE_UNKNOWN);
	check_body(t.fw.r, 50 * KiB);
	gs_reader_close(t.fw.r);
	EVENTUALLY(gs_stat(x->s, "chunked", 7, &(struct gs_meta){ 0 }) == 0);
	/* ... and passed whole when it grows past it */
	origin_set(200, "Cache-Control: max-age=60\r\n", 300 * KiB);
	tw_get(x, &t, "chunkbig", NULL);
	check_body(t.fw.r, 300 * KiB);
	gs_reader_close(t.fw.r);
	EVENTUALLY(stats(x).passed == 2);
	assert_int_equal(gs_stat(x->s, "chunkbig", 8, &(struct gs_meta){ 0 }),
			 -ENOENT);
	assert_int_equal(stats(x).stored, 1);
	assert_int_equal(stats(x).passed, 2);
	EVENTUALLY(pass_keys(x) == 0);
}

static void test_cancel(void **state)
{
	struct fx *x = *state;
	uint64_t size = 200 * KiB;
	struct gs_meta m;
	struct tw a, b;

	origin_set(200, "Cache-Control: max-age=60\r\n", size);
	org.head_delay_ms = 300;
	tw_init(&a);
	tw_init(&b);
	assert_int_equal(fetcher_get(x->f, "cn", 2, NULL, NULL, &a.fw), 0);
	assert_int_equal(fetcher_get(x->f, "cn", 2, NULL, NULL, &b.fw), 0);
	assert_true(fetcher_cancel(x->f, &a.fw));
	tw_wait(&b);
	assert_false(fetcher_cancel(x->f, &b.fw)); /* done() ran */
	check_body(b.fw.r, size);
	gs_reader_close(b.fw.r);
	assert_false(tw_wait_ms(&a, 100)); /* never called */

	/* the last waiter of a storable fetch goes: it is stored anyway */
	tw_init(&a);
	assert_int_equal(fetcher_get(x->f, "cn2", 3, NULL, NULL, &a.fw), 0);
	assert_true(fetcher_cancel(x->f, &a.fw));
	for (int i = 0; i < 500 && gs_stat(x->s, "cn2", 3, &m) < 0; i++)
		nap(10);
	assert_int_equal(gs_stat(x->s, "cn2", 3, &m), 0);
	assert_int_equal(m.size, size);
	assert_false(tw_wait_ms(&a, 10));
}

static void test_free_running(void **state)
{
	struct fx *x = *state;
	struct tw t;

	org.hang = true;
	tw_init(&t);
	assert_int_equal(fetcher_get(x->f, "h", 1, NULL, NULL, &t.fw), 0);
	nap(100);
	fetcher_free(x->f);
	x->f = NULL;
	tw_wait(&t);
	assert_int_equal(t.fw.kind, FETCH_REPLY);
	assert_int_equal(t.fw.status, 502);
	fx_fetcher(x); /* for teardown */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			test_miss_stored_read_while_fill, setup, teardown),
		cmocka_unit_test_setup_teardown(test_collapse, setup, teardown),
		cmocka_unit_test_setup_teardown(test_join_during_body, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_no_join_of_a_pass, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_uncacheable_passed, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_error_status_relayed,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_issue18_error_status_stored, setup, teardown),
		cmocka_unit_test_setup_teardown(test_origin_down, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_timeout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stall_mid_body, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_revalidate_304, setup,
						teardown),
		cmocka_unit_test(test_issue18_key_of),
		cmocka_unit_test(test_issue18_forwards_field),
		cmocka_unit_test(test_issue18_variant_key),
		cmocka_unit_test_setup_teardown(test_issue18_variants_stored,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_issue18_request_forwarded,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_issue18_location_invalidated, setup, teardown),
		cmocka_unit_test_setup_teardown(test_forward_invalidates, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_max_object, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_cancel, setup, teardown),
		cmocka_unit_test_setup_teardown(test_free_running, setup,
						teardown),
	};

	if (getenv("TEST_FILTER"))
		cmocka_set_test_filter(getenv("TEST_FILTER"));
	return cmocka_run_group_tests_name("fetch", tests, NULL, NULL);
}
