/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for the connection state machines of goblind: the real
 * memcache and HTTP protocols (memcache.c, http.c and their rooms, behind
 * their proto_ops), driven by the real worker loop of worker.c
 * (poll_events, run_ready, conn_drive), on a real store in a temp dir.
 * The sockets are fake: each client is one end of a socketpair whose other
 * end is handed to conn_new() as if accepted; the loop never learns.
 *
 * worker.c is compiled into this file (#include) rather than linked:
 * its loop functions are static and a worker is set up here without its
 * thread (worker_setup()), so goblind's code needs no seam for it.
 *
 * The input is a program of operations, decoded from the bytes:
 *   - up to MAX_CLIENTS connections, each memcache, HTTP or RESP, from a loopback
 *     peer or not, with a small or normal socket buffer;
 *   - requests queued on a connection: raw bytes, or built from a small
 *     grammar of memcache and HTTP requests with fuzzed keys, lengths,
 *     flags and bodies (pipelined: queued back to back);
 *   - deliveries of a fuzzed number of a connection's queued bytes (the
 *     split points), pumps of the loop, reading or not reading replies
 *     (slow clients), half-closes; several connections interleave.
 *   - oracles: a set (or HTTP PUT, plain or chunked) of a value then a get
 *     of it on one fresh connection, delivered in pieces like the rest.
 *     Its replies must be byte-exact: STORED, then VALUE with the value
 *     (HTTP: 201/204, then 200 whose body is the value), unless a
 *     flush_all ran meanwhile.
 * At the end every client closes; every connection must then close
 * (leaks are caught by ASan's leak check at exit).
 */
#include <dirent.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>

#include "../../netd/worker.c"
#include "../../netd/http.h"
#include "../../netd/memcache.h"
#include "../../netd/resp.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_CLIENTS	 8
#define MAX_ORACLES	 3
#define RX_MAX		 (2u << 20) /* reply bytes kept per client */
#define ORACLE_MAX_VALUE (96u << 10)

#define CHECK(c)                                                            \
	do {                                                                \
		if (!(c)) {                                                 \
			fprintf(stderr,                                     \
				"fuzz_conn: check failed at line %d: %s\n", \
				__LINE__, #c);                              \
			abort();                                            \
		}                                                           \
	} while (0)

static struct gd gd;
static struct worker wk;
static struct gd_proto *proto_mc, *proto_http; /* no listeners */
static struct gd_proto *proto_resp;
static char store_dir[64];
static unsigned nonce;

/* ---- the input, read as a stream of numbers ---- */

struct in {
	const uint8_t *p, *end;
};

static unsigned in_byte(struct in *in)
{
	return in->p < in->end ? *in->p++ : 0;
}

static unsigned in_u16(struct in *in)
{
	return in_byte(in) | in_byte(in) << 8;
}

static uint32_t in_u32(struct in *in)
{
	return in_u16(in) | (uint32_t)in_u16(in) << 16;
}

/* ---- a growing byte buffer ---- */

struct bytes {
	uint8_t *p;
	size_t len, cap;
};

static void b_put(struct bytes *b, const void *s, size_t n)
{
	if (!n)
		return;
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 256;

		while (cap < b->len + n)
			cap *= 2;
		b->p = realloc(b->p, cap);
		CHECK(b->p);
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
}

__attribute__((format(printf, 2, 3))) static void b_printf(struct bytes *b,
							   const char *fmt, ...)
{
	char tmp[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n > 0)
		b_put(b, tmp,
		      (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

/* ---- the clients ---- */

struct client {
	int fd; /* our end; -1: closed */
	bool http;
	bool resp;	 /* a RESP client (issue 23): gen_resp's requests */
	bool oracle;	 /* an oracle's connection: see check_oracle */
	bool reading;	 /* false: a slow client, replies pile up */
	bool shut;	 /* we half-closed: nothing more to send */
	struct bytes tx; /* queued, not yet delivered */
	size_t tx_off;
	struct bytes rx; /* replies received (the first RX_MAX) */
	bool eof;	 /* the server closed */
	/* oracle */
	uint8_t *value;
	size_t vlen;
	uint32_t flags;
	char key[64];
};

static struct client cl[MAX_CLIENTS];
static unsigned ncl;

static void client_new(bool http, bool loopback, bool small_buf, bool oracle,
		       bool resp)
{
	struct client *k = &cl[ncl];
	int sv[2];

	CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0,
			 sv) == 0);
	if (small_buf) { /* replies back up: the EPOLLOUT paths */
		int sz = 4096;

		setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
		setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	}
	atomic_fetch_add(&gd.curr_conns, 1); /* as accept_all() does */
	conn_new(&wk, sv[0], http ? proto_http : resp ? proto_resp : proto_mc);
	/* conn_new() puts the new connection first; an AF_UNIX peer counts
	 * as loopback, so here the fuzzer says which it is */
	CHECK(wk.conns && wk.conns->fd == sv[0]);
	if (http || resp)
		wk.conns->loopback = loopback;
	memset(k, 0, sizeof(*k));
	k->fd = sv[1];
	k->http = http;
	k->resp = resp;
	k->oracle = oracle;
	k->reading = true;
	ncl++;
}

/* Read what the server sent; false when nothing came. */
static bool client_read(struct client *k)
{
	uint8_t buf[65536];
	bool got = false;

	if (k->fd < 0 || k->eof)
		return false;
	for (;;) {
		ssize_t n = read(k->fd, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return got;
		if (n <= 0) { /* EOF, or a reset */
			k->eof = true;
			return true;
		}
		got = true;
		if (k->rx.len < RX_MAX)
			b_put(&k->rx, buf,
			      k->rx.len + n > RX_MAX ? RX_MAX - k->rx.len :
						       (size_t)n);
	}
}

/* Deliver up to @n of @k's queued bytes; the count delivered. */
static size_t client_send(struct client *k, size_t n)
{
	size_t left = k->tx.len - k->tx_off, done = 0;

	if (k->fd < 0 || k->shut)
		return 0;
	if (n > left)
		n = left;
	while (done < n) {
		ssize_t w = write(k->fd, k->tx.p + k->tx_off, n - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) /* the socket is full, or the server closed */
			break;
		k->tx_off += (size_t)w;
		done += (size_t)w;
	}
	return done;
}

/*
 * Run the worker's loop: a look at the sockets and a turn for each
 * connection with more to do, readers reading, until @rounds rounds
 * passed or nothing moved for three.  Disk reads are waited for.
 */
static void pump(unsigned rounds)
{
	unsigned still = 0;

	for (unsigned r = 0; r < rounds && still < 3; r++) {
		bool moved = false;

		CHECK(poll_events(&wk, wk.disk_wait ? 2 : 0) >= 0);
		CHECK(run_ready(&wk) == 0);
		for (unsigned i = 0; i < ncl; i++)
			if (cl[i].reading && client_read(&cl[i]))
				moved = true;
		if (wk.ready || wk.disk_wait)
			moved = true;
		still = moved ? 0 : still + 1;
	}
}

/* ---- the grammar ---- */

static const char key_chars[] = "abcxyz019_:/.-";

/* A key from a small alphabet (collisions are the point), or odd ones. */
static void gen_key(struct in *in, struct bytes *b, bool http)
{
	unsigned sel = in_byte(in);
	unsigned len = 1 + sel % 6;

	switch (sel >> 5) {
	case 0: /* a long key: at and over memcached's 250 */
		len = 240 + in_byte(in) % 20;
		for (unsigned i = 0; i < len; i++)
			b_put(b, "k", 1);
		return;
	case 1: /* HTTP: percent escapes */
		if (http) {
			b_printf(b, "%%%02X", in_byte(in));
			break;
		}
		/* fall through */
	default:
		break;
	}
	for (unsigned i = 0; i < len; i++)
		b_put(b, &key_chars[in_byte(in) % (sizeof(key_chars) - 1)], 1);
}

/* A length near the bytes that follow it, or off by a little or a lot. */
static uint64_t gen_len(struct in *in, unsigned actual)
{
	unsigned sel = in_byte(in);

	switch (sel & 7) {
	case 0:
		return actual + 1 + (sel >> 3);
	case 1:
		return actual > (sel >> 3) ? actual - (sel >> 3) : 0;
	case 2:
		return (uint64_t)1 << (20 + (sel >> 3) % 44); /* huge */
	default:
		return actual;
	}
}

/* Bytes for a value: from the input, '~' kept out (it marks oracles). */
static void gen_data(struct in *in, struct bytes *b, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		uint8_t c = (uint8_t)in_byte(in);

		if (c == '~')
			c = '-';
		b_put(b, &c, 1);
	}
}

static const char *const mc_store_cmds[] = {
	"set", "add", "replace", "append", "prepend", "cas", "ms",
};
static const char *const mc_other_cmds[] = {
	"get",
	"gets",
	"gat",
	"gats",
	"delete",
	"touch",
	"incr",
	"decr",
	"mg",
	"md",
	"ma",
	"mn",
	"me",
	"version",
	"stats",
	"verbosity",
	"flush_all",
	"quit",
	"lru_crawler metadump",
	"goblin inspect",
	"goblin stat",
	"stats settings",
	"stats items",
	"stats tiers",
	"stats slabs",
	"stats conns",
};
static const char *const mc_meta_flags[] = {
	"v",  "k",   "c",   "f",  "s",	"t",  "T30", "N30", "q",       "O123",
	"b",  "I",   "M+",  "MA", "MP", "ME", "MS",  "Fx",  "C1",      "D5",
	"J9", "R30", "E99", "h",  "l",	"u",  "x",   "S5",  "noreply",
};

static void gen_mc(struct in *in, struct bytes *b)
{
	unsigned sel = in_byte(in), n, nkeys, nflags;
	struct bytes data = { 0 };

	if (sel & 1) { /* a storage command with a data block */
		const char *cmd =
			mc_store_cmds[(sel >> 1) % (sizeof(mc_store_cmds) /
						    sizeof(*mc_store_cmds))];

		n = in_byte(in) % 64;
		if (in_byte(in) & 1)
			n += in_u16(in) % 20000;
		gen_data(in, &data, n % 300 == 299 ? 0 : n);
		b_printf(b, "%s ", cmd);
		gen_key(in, b, false);
		if (!strcmp(cmd, "ms")) {
			b_printf(b, " %" PRIu64, gen_len(in, data.len));
			nflags = in_byte(in) % 4;
			for (unsigned i = 0; i < nflags; i++)
				b_printf(
					b, " %s",
					mc_meta_flags[in_byte(in) %
						      (sizeof(mc_meta_flags) /
						       sizeof(*mc_meta_flags))]);
		} else {
			b_printf(b, " %u %d %" PRIu64, in_u32(in),
				 (int)(int8_t)in_byte(in),
				 gen_len(in, data.len));
			if (!strcmp(cmd, "cas"))
				b_printf(b, " %u", in_byte(in));
			if (in_byte(in) % 8 == 0)
				b_printf(b, " noreply");
		}
		b_printf(b, "\r\n");
		b_put(b, data.p, data.len);
		switch (in_byte(in) % 8) { /* the block's end */
		case 0:
			b_printf(b, "XX");
			break;
		case 1:
			b_printf(b, "\n");
			break;
		default:
			b_printf(b, "\r\n");
			break;
		}
		free(data.p);
		return;
	}
	b_printf(b, "%s",
		 mc_other_cmds[(sel >> 1) % (sizeof(mc_other_cmds) /
					     sizeof(*mc_other_cmds))]);
	nkeys = in_byte(in) % 4;
	if (nkeys == 3 && in_byte(in) % 8 == 0) /* a streamed multi-get */
		nkeys += in_u16(in) % 4000;
	for (unsigned i = 0; i < nkeys; i++) {
		b_printf(b, " ");
		if (in_byte(in) % 4 == 0)
			b_printf(b, "%d", (int)(int16_t)in_u16(in));
		else
			gen_key(in, b, false);
	}
	nflags = in_byte(in) % 3;
	for (unsigned i = 0; i < nflags; i++)
		b_printf(b, " %s",
			 mc_meta_flags[in_byte(in) % (sizeof(mc_meta_flags) /
						      sizeof(*mc_meta_flags))]);
	b_printf(b, in_byte(in) % 16 ? "\r\n" : "\n");
}

static const char *const http_methods[] = {
	"GET", "HEAD", "PUT", "DELETE", "POST", "OPTIONS", "get",
};
static const char *const http_headers[] = {
	"Host: x",
	"Connection: close",
	"Connection: keep-alive",
	"Range: bytes=0-3",
	"Range: bytes=2-",
	"Range: bytes=-5",
	"Range: bytes=0-1,4-6",
	"Range: bytes=9-2",
	"If-None-Match: *",
	"If-None-Match: \"abc\"",
	"If-Match: *",
	"If-Modified-Since: Tue, 01 Dec 2026 10:00:00 GMT",
	"If-Unmodified-Since: Sun, 06 Nov 1994 08:49:37 GMT",
	"Content-Type: text/plain",
	"Cache-Control: max-age=60",
	"Expect: 100-continue",
	"Expect: other",
	"Authorization: Bearer t",
	"Transfer-Encoding: gzip, chunked",
	"Content-Length: 3",
	"Content-Length: 3, 4",
	"X-Forwarded-For: 10.0.0.1",
};

static void gen_http(struct in *in, struct bytes *b)
{
	unsigned sel = in_byte(in), nh, n;
	const char *m = http_methods[sel % (sizeof(http_methods) /
					    sizeof(*http_methods))];
	bool body = !strcmp(m, "PUT") || !strcmp(m, "POST");
	bool chunked = body && (in_byte(in) & 1);
	struct bytes data = { 0 };

	switch (in_byte(in) % 16) {
	case 0:
		b_printf(b, "%s /_goblin/stats", m);
		break;
	case 1:
		b_printf(b, "%s /metrics", m);
		break;
	case 2:
		b_printf(b, "%s /", m);
		break;
	case 3:
		b_printf(b, "%s http://x/", m);
		gen_key(in, b, true);
		break;
	default:
		b_printf(b, "%s /", m);
		gen_key(in, b, true);
		break;
	}
	if (in_byte(in) % 8 == 0)
		b_printf(b, "?q=%u", in_byte(in));
	b_printf(b, " %s\r\n", in_byte(in) % 16 ? "HTTP/1.1" : "HTTP/1.0");
	if (in_byte(in) % 16) /* HTTP/1.1 wants one, mostly */
		b_printf(b, "Host: h\r\n");
	nh = in_byte(in) % 4;
	for (unsigned i = 0; i < nh; i++)
		b_printf(b, "%s\r\n",
			 http_headers[in_byte(in) % (sizeof(http_headers) /
						     sizeof(*http_headers))]);
	if (!body) {
		b_printf(b, "\r\n");
		return;
	}
	n = in_byte(in) % 64;
	if (in_byte(in) % 4 == 0)
		n += in_u16(in) % 20000;
	gen_data(in, &data, n);
	if (!chunked) {
		b_printf(b, "Content-Length: %" PRIu64 "\r\n\r\n",
			 gen_len(in, data.len));
		b_put(b, data.p, data.len);
	} else {
		size_t off = 0;

		b_printf(b, "Transfer-Encoding: chunked\r\n\r\n");
		while (off < data.len) {
			size_t c = 1 + in_byte(in) % 200;

			if (c > data.len - off)
				c = data.len - off;
			b_printf(b,
				 in_byte(in) % 16 ? "%zx\r\n" : "%zx;e=1\r\n",
				 c);
			b_put(b, data.p + off, c);
			b_printf(b, in_byte(in) % 32 ? "\r\n" : "XX");
			off += c;
		}
		b_printf(b, "0\r\n%s\r\n", in_byte(in) % 8 ? "" : "T: 1\r\n");
	}
	free(data.p);
}

/* Raw bytes: anything, '~' kept out. */
/*
 * A RESP request (issue 23): a multibulk of a command of resp.c's table
 * (or not) with keys, numbers, options and values, lengths right or off;
 * now and then inline, or with a value long enough to stream (SET's) or
 * to be refused (anything else's).
 */
static const char *const resp_cmds_fz[] = {
	"GET",	   "SET",      "MGET",	   "MSET",    "DEL",	 "EXISTS",
	"STRLEN",  "GETRANGE", "SETRANGE", "EXPIRE",  "PEXPIRE", "TTL",
	"PTTL",	   "PERSIST",  "TYPE",	   "SCAN",    "DBSIZE",	 "FLUSHALL",
	"HSET",	   "HGET",     "HDEL",	   "HGETALL", "HLEN",	 "ZADD",
	"ZSCORE",  "ZREM",     "ZRANGE",   "ZCARD",   "PING",	 "ECHO",
	"SELECT",  "QUIT",     "RESET",	   "HELLO",   "AUTH",	 "CLIENT",
	"COMMAND", "CONFIG",   "INFO",	   "UNLINK",  "BOGUS",
};
static const char *const resp_words_fz[] = {
	"EX",	"PX",	 "NX",	  "XX",	  "GET", "KEEPTTL", "WITHSCORES",
	"REV",	"MATCH", "COUNT", "TYPE", "3",	 "2",	    "SETNAME",
	"ID",	"DOCS",	 "-1",	  "0",	  "1.5", "inf",	    "CH",
	"INCR", "GT",	 "LT",	  "*",	  "a*",
};

static void resp_bulk_fz(struct in *in, struct bytes *b, const void *p,
			 unsigned n)
{
	b_printf(b, "$%llu\r\n", (unsigned long long)gen_len(in, n));
	b_put(b, p, n);
	b_printf(b, "\r\n");
}

static void gen_resp(struct in *in, struct bytes *b)
{
	unsigned sel = in_byte(in), nargs = in_byte(in) % 6;
	const char *cmd = resp_cmds_fz[sel % (sizeof(resp_cmds_fz) /
					      sizeof(*resp_cmds_fz))];
	bool inl = (in_byte(in) & 15) == 0;
	struct bytes a = { 0 };

	if (inl) {
		b_printf(b, "%s", cmd);
		for (unsigned i = 0; i < nargs; i++) {
			b_printf(b, " ");
			gen_key(in, b, false);
		}
		b_printf(b, "\r\n");
		return;
	}
	b_printf(b, "*%u\r\n", 1 + nargs + ((sel >> 6) == 3));
	resp_bulk_fz(in, b, cmd, (unsigned)strlen(cmd));
	for (unsigned i = 0; i < nargs; i++) {
		unsigned k = in_byte(in);

		a.len = 0;
		if (k % 3 == 0) {
			gen_key(in, &a, false);
		} else if (k % 3 == 1) {
			const char *w = resp_words_fz[in_byte(in) %
						      (sizeof(resp_words_fz) /
						       sizeof(*resp_words_fz))];

			b_put(&a, w, strlen(w));
		} else {
			gen_data(in, &a, in_byte(in) % 40);
		}
		resp_bulk_fz(in, b, a.p, (unsigned)a.len);
	}
	if ((sel >> 6) == 3) { /* a long last argument: SET's value streams */
		unsigned n = 8193 + in_u16(in) % 20000;

		b_printf(b, "$%u\r\n", n);
		for (unsigned i = 0; i < n; i++)
			b_put(b, "v", 1);
		b_printf(b, "\r\n");
	}
	free(a.p);
}

static void gen_raw(struct in *in, struct bytes *b)
{
	gen_data(in, b, in_byte(in) % 128 + 1);
}

/* ---- oracles ---- */

static void oracle_new(struct in *in, unsigned id)
{
	bool http = in_byte(in) & 1;
	bool chunked = http && (in_byte(in) & 1);
	unsigned seed = in_byte(in);
	struct client *k;
	size_t n;

	n = in_u16(in) % 2048;
	if (in_byte(in) % 4 == 0)
		n = (n << 6) % ORACLE_MAX_VALUE;
	client_new(http, true, in_byte(in) % 4 == 0, true, false);
	k = &cl[ncl - 1];
	snprintf(k->key, sizeof(k->key), "~o%u.%08x", id, nonce);
	k->vlen = n;
	k->value = malloc(n + 1);
	CHECK(k->value);
	for (size_t i = 0; i < n; i++) /* CR, LF and NUL included */
		k->value[i] = (uint8_t)(seed + i * 7 + (i >> 8));
	k->flags = in_u32(in);
	if (!http) {
		b_printf(&k->tx, "set %s %u 0 %zu\r\n", k->key, k->flags, n);
		b_put(&k->tx, k->value, n);
		b_printf(&k->tx, "\r\nget %s\r\n", k->key);
		return;
	}
	b_printf(&k->tx, "PUT /%s HTTP/1.1\r\nHost: o\r\n", k->key);
	if (!chunked) {
		b_printf(&k->tx, "Content-Length: %zu\r\n\r\n", n);
		b_put(&k->tx, k->value, n);
	} else {
		size_t off = 0, step = 1 + in_u16(in) % 5000;

		b_printf(&k->tx, "Transfer-Encoding: chunked\r\n\r\n");
		for (; off < n; off += step) {
			size_t c = n - off < step ? n - off : step;

			b_printf(&k->tx, "%zx\r\n", c);
			b_put(&k->tx, k->value + off, c);
			b_printf(&k->tx, "\r\n");
		}
		b_printf(&k->tx, "0\r\n\r\n");
	}
	b_printf(&k->tx, "GET /%s HTTP/1.1\r\nHost: o\r\n\r\n", k->key);
}

/* The end of an HTTP response head at @p, or NULL. */
static const uint8_t *http_head_end(const uint8_t *p, size_t len)
{
	const uint8_t *e = memmem(p, len, "\r\n\r\n", 4);

	return e ? e + 4 : NULL;
}

/* A response's Content-Length (-1: none) within [@p, @end). */
static long http_clen(const uint8_t *p, const uint8_t *end)
{
	static const char h[] = "\r\nContent-Length: ";
	const uint8_t *q = memmem(p, end - p, h, sizeof(h) - 1);

	return q ? strtol((const char *)q + sizeof(h) - 1, NULL, 10) : -1;
}

static void check_oracle(const struct client *k, bool flushed)
{
	const uint8_t *p = k->rx.p, *end, *he;
	char line[128];
	long cl1;
	int n;

	CHECK(k->rx.len); /* an oracle always gets a reply */
	end = p + k->rx.len;

	if (!k->http) {
		n = snprintf(line, sizeof(line),
			     "STORED\r\nVALUE %s %u %zu\r\n", k->key, k->flags,
			     k->vlen);
		if (flushed) { /* the value may be gone: STORED holds */
			CHECK(k->rx.len >= 8 && !memcmp(p, "STORED\r\n", 8));
			return;
		}
		CHECK(k->rx.len == (size_t)n + k->vlen + 7);
		CHECK(!memcmp(p, line, n));
		CHECK(!memcmp(p + n, k->value, k->vlen));
		CHECK(!memcmp(p + n + k->vlen, "\r\nEND\r\n", 7));
		return;
	}
	/* the PUT's reply: 201 or 204, and its body if it has one */
	CHECK(k->rx.len > 12);
	CHECK(!memcmp(p, "HTTP/1.1 201 ", 13) ||
	      !memcmp(p, "HTTP/1.1 204 ", 13));
	he = http_head_end(p, k->rx.len);
	CHECK(he);
	cl1 = http_clen(p, he);
	if (cl1 > 0)
		he += cl1;
	CHECK(he <= end);
	if (flushed)
		return;
	/* the GET's: 200 and the value */
	p = he;
	CHECK(end - p > 13 && !memcmp(p, "HTTP/1.1 200 ", 13));
	he = http_head_end(p, end - p);
	CHECK(he);
	CHECK(http_clen(p, he) == (long)k->vlen);
	CHECK((size_t)(end - he) == k->vlen);
	CHECK(!memcmp(he, k->value, k->vlen));
}

/* FUZZ_CONN_TRACE=1: what each client sent and got, to read seeds by */
static bool trace;

static void trace_client(unsigned i)
{
	const struct client *k = &cl[i];

	fprintf(stderr, "client %u: %s%s, sent %zu of %zu, got %zu%s:\n  ", i,
		k->http ? "http" : "memcache", k->oracle ? " oracle" : "",
		k->tx_off, k->tx.len, k->rx.len, k->eof ? " and EOF" : "");
	for (size_t j = 0; j < k->rx.len && j < 8192; j++) {
		uint8_t c = k->rx.p[j];

		if (c == '\n')
			fputs("\\n\n  ", stderr);
		else if (c >= 32 && c < 127)
			fputc(c, stderr);
		else
			fprintf(stderr, "\\x%02x", c);
	}
	fputc('\n', stderr);
}

/* ---- setup ---- */

static int rm_one(const char *path, const struct stat *st, int flag,
		  struct FTW *f)
{
	(void)st, (void)flag, (void)f;
	return remove(path);
}

static void cleanup(void)
{
	if (gd.s)
		gs_close(gd.s);
	gd.s = NULL;
	if (*store_dir)
		nftw(store_dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *tmp = getenv("TMPDIR");
	char why[256];
	int ret;

	(void)argc, (void)argv;
	signal(SIGPIPE, SIG_IGN); /* as goblind: EPIPE, not a signal */
	/* errors only (stats settings prints the level's name) */
	gd_log_level = getenv("FUZZ_CONN_LOG") ? GD_LOG_DEBUG : GD_LOG_ERROR;
	snprintf(store_dir, sizeof(store_dir), "%s/fuzz_conn.XXXXXX",
		 tmp && strlen(tmp) < 40 ? tmp : "/tmp");
	CHECK(mkdtemp(store_dir));
	atexit(cleanup);
	gs_options_init(&gd.set.so);
	gd.set.so.memory = 8u << 20;
	gd.set.so.small_memory = 4u << 20;
	gd.set.so.ssd_size = 256u << 20;
	gd.set.so.no_mlock = true;
	gd.set.so.no_hugetlb = true;
	gd.set.so.create = true;
	ret = gs_open(store_dir, &gd.set.so, &gd.s, why, sizeof(why));
	if (ret < 0) {
		fprintf(stderr, "fuzz_conn: cannot open a store in %s: %s\n",
			store_dir, why);
		abort();
	}
	gd.set.store_dir = store_dir;
	gd.set.listen = "127.0.0.1";
	gd.set.memcache = gd.set.http = true;
	gd.set.cores = 1;
	gd.set.max_item = 1u << 20;
	gd.set.max_conns = 1024;
	gd.set.http_timeout = 30;
	gd.meta = metatab_new();
	CHECK(gd.meta);
	gd.start_time = time(NULL);
	gd.nworkers = 1;
	gd.workers = &wk;
	gd.set.mc_max_conns = gd.set.http_max_conns = 1024;
	/* the protocols as main() registers them, without listeners */
	proto_mc = gd_proto_add(&gd, &mc_ops, gd.set.mc_max_conns);
	proto_http = gd_proto_add(&gd, &http_ops, gd.set.http_max_conns);
	proto_resp = gd_proto_add(&gd, &resp_ops, gd.set.http_max_conns);
	CHECK(proto_mc && proto_http && proto_resp);
	/* worker_start() without its thread: this one runs the loop */
	ret = worker_setup(&gd, &wk, 0, why, sizeof(why));
	if (ret < 0) {
		fprintf(stderr, "fuzz_conn: %s\n", why);
		abort();
	}
	nonce = (unsigned)getpid() * 2654435761u;
	trace = getenv("FUZZ_CONN_TRACE");
	return 0;
}

/* ---- one input ---- */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct in in = { data, data + size };
	struct gd_counters before, after;
	unsigned nplain, noracles = 0, ops = 0;
	bool flushed;

	ncl = 0;
	/* each input starts on an empty store, no flush pending */
	atomic_store(&gd.flush_at, 0);
	mc_flush(&gd, INT64_MAX);
	gd_counters_sum(&gd, &before);

	nplain = 1 + in_byte(&in) % 4;
	for (unsigned i = 0; i < nplain; i++) {
		unsigned f = in_byte(&in);

		client_new(f & 1, !(f & 2), (f & 12) == 12, false,
			   !(f & 1) && (f & 16));
	}
	while (in.p < in.end && ops++ < 256) {
		unsigned op = in_byte(&in), who = in_byte(&in);
		struct client *k = &cl[who % ncl];
		struct client *plain = &cl[who % nplain];

		switch (op % 12) {
		case 0:
			gen_raw(&in, &plain->tx);
			break;
		case 1:
		case 2:
			if (plain->resp)
				gen_resp(&in, &plain->tx);
			else
				gen_mc(&in, &plain->tx);
			break;
		case 3:
		case 4:
			gen_http(&in, &plain->tx);
			break;
		case 5:
		case 6:
		case 7: /* a split point: deliver some */
			client_send(k, 1 + in_u16(&in) % 4096);
			pump(8);
			break;
		case 8: /* deliver all of one, then run */
			client_send(k, SIZE_MAX);
			pump(64);
			break;
		case 9: /* a slow client stops reading, or starts again */
			if (!k->oracle)
				k->reading = !k->reading;
			pump(4);
			break;
		case 10: /* half-close: the server sees EOF */
			if (!k->oracle && (in_byte(&in) & 7) == 0) {
				client_send(k, SIZE_MAX);
				shutdown(k->fd, SHUT_WR);
				k->shut = true;
				pump(8);
			}
			break;
		case 11:
			if (noracles < MAX_ORACLES && ncl < MAX_CLIENTS)
				oracle_new(&in, noracles++);
			break;
		}
	}

	/*
	 * Everything delivered, every reply read.  An oracle is done when
	 * its connection is quiet with its reply in: go on while bytes move
	 * or an oracle's reply is short (a store read in flight, a server
	 * that took a while to get through a body of 1-byte chunks).
	 */
	for (unsigned i = 0; i < ncl; i++)
		cl[i].reading = true;
	for (unsigned r = 0, quiet = 0; r < 4000 && quiet < 3; r++) {
		size_t sent = 0, got = 0;
		bool short_reply = false;

		for (unsigned i = 0; i < ncl; i++) {
			sent += client_send(&cl[i], SIZE_MAX);
			got += cl[i].rx.len;
		}
		pump(64);
		for (unsigned i = 0; i < ncl; i++) {
			got -= cl[i].rx.len;
			if (cl[i].oracle && !cl[i].eof &&
			    cl[i].rx.len < cl[i].vlen + 8)
				short_reply = true;
		}
		if (sent || got || wk.ready || wk.disk_wait || short_reply)
			quiet = 0;
		else
			quiet++;
	}
	gd_counters_sum(&gd, &after);
	flushed = after.cmd_flush != before.cmd_flush ||
		  atomic_load(&gd.flush_at) != 0;
	for (unsigned i = 0; i < ncl; i++) {
		if (trace)
			trace_client(i);
		if (cl[i].oracle)
			check_oracle(&cl[i], flushed);
	}

	/* every client goes: every connection must close */
	for (unsigned i = 0; i < ncl; i++) {
		close(cl[i].fd);
		free(cl[i].tx.p);
		free(cl[i].rx.p);
		free(cl[i].value);
	}
	for (unsigned r = 0; r < 2000 && wk.conns; r++) {
		CHECK(poll_events(&wk, wk.disk_wait ? 2 : 1) >= 0);
		CHECK(run_ready(&wk) == 0);
	}
	if (wk.conns) {
		fprintf(stderr,
			"fuzz_conn: %u connections still open after "
			"their clients closed\n",
			wk.nconns);
		abort();
	}
	CHECK(atomic_load(&gd.curr_conns) == 0);
	return 0;
}
