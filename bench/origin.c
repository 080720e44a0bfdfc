/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * origin: the HTTP origin of the cache benchmarks (bench/vs-vinyl.sh).  It
 * stores nothing: GET /KEY answers the bytes of object (KEY, SIZE) made by
 * bench/workload.h's payload function, the one goblinctl bench --verify
 * checks, so a multi-GiB corpus needs no disk.  A thread per connection
 * (a cache in front opens few), keep-alive, HEAD, one Range, and a count of
 * the object requests at GET /_origin/stats.
 *
 * --fail-pct P makes P% of the object requests fail (bench/soak.sh), in
 * turn each of the three ways an origin fails a cache: a 503, a reset
 * before any answer, and a reset half way through the body (the cache
 * must drop that partial object, not store it).
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "../cli/workload.h"
#include "../store/clock.h"
#include "../store/goblin.h"
#include "../store/prog.h"

#define HEAD_MAX      (16 * KiB)  /* a longer request head: 431, close */
#define PIECE	      (256 * KiB) /* generated and sent at a time */
#define KEY_MAX	      1024
/* every object's Last-Modified: they never change */
#define LAST_MODIFIED "Thu, 01 Jan 2026 00:00:00 GMT"


/* The manifest's objects, sorted by key for bsearch. */
struct object {
	char *key;
	uint64_t size;
};

static struct object *objects;
static size_t nobjects;
static double rate_bps;			/* --rate in bytes/s, 0: unlimited */
static atomic_uint_fast64_t requests;	/* object requests: GET/HEAD of a key */
static atomic_uint_fast64_t bytes_sent; /* body bytes of those */
static double fail_pct;			/* --fail-pct: share failed, 0..100 */
static atomic_uint_fast64_t failed[3];	/* 503, reset, reset mid-body */

struct request {
	char method[8];
	char key[KEY_MAX];
	bool head, close, has_range;
	bool range_ok; /* Range parsed as one satisfiable-looking range */
	uint64_t r_first, r_last; /* r_last UINT64_MAX: to the end */
	uint64_t r_suffix;	  /* bytes=-N, when != 0 */
	char inm[128];		  /* If-None-Match */
};

static int cmp_object(const void *a, const void *b)
{
	return strcmp(((const struct object *)a)->key,
		      ((const struct object *)b)->key);
}

/* "key size" lines, as bench/gen writes them. */
static void load_manifest(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[KEY_MAX + 64], key[KEY_MAX];
	unsigned long long size;
	size_t alloc = 0, lineno = 0;

	if (!f)
		die("cannot open '%s': %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		if (sscanf(line, "%1023s %llu", key, &size) != 2)
			die("%s:%zu: expected 'key size'", path, lineno);
		if (nobjects == alloc) {
			alloc = alloc ? 2 * alloc : 1024;
			objects = realloc(objects, alloc * sizeof(*objects));
			if (!objects)
				die("out of memory");
		}
		objects[nobjects].key = strdup(key);
		objects[nobjects++].size = size;
	}
	fclose(f);
	qsort(objects, nobjects, sizeof(*objects), cmp_object);
}

/*
 * The size of @key: its manifest line, else a name ending in "@SIZE"
 * (store suffixes: "x@4096", "blob@1G").  -1: no such object.
 */
static int object_size(const char *key, uint64_t *size)
{
	struct object k = { .key = (char *)key }, *o;
	const char *at;

	o = nobjects ? bsearch(&k, objects, nobjects, sizeof(*objects),
			       cmp_object) :
		       NULL;
	if (o) {
		*size = o->size;
		return 0;
	}
	at = strrchr(key, '@');
	if (at && at[1] && !gs_parse_size(at + 1, size))
		return 0;
	return -1;
}

static int hexdigit(char c)
{
	if (!isxdigit((unsigned char)c))
		return -1;
	return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
}

/* Percent-decode the path @s (@n bytes) after its '/' into r->key. */
static int decode_key(const char *s, size_t n, struct request *r)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		int c = (unsigned char)s[i];

		if (c == '?')
			break;
		if (c == '%') {
			int hi = i + 2 < n ? hexdigit(s[i + 1]) : -1;
			int lo = i + 2 < n ? hexdigit(s[i + 2]) : -1;

			if (hi < 0 || lo < 0)
				return -1;
			c = hi << 4 | lo;
			i += 2;
		}
		if (!c || k + 1 >= sizeof(r->key))
			return -1;
		r->key[k++] = (char)c;
	}
	r->key[k] = 0;
	return 0;
}

/* Range: bytes=A-B | bytes=A- | bytes=-N; anything else is ignored. */
static void parse_range(const char *v, struct request *r)
{
	unsigned long long a, b;
	char extra;

	r->has_range = true;
	if (strchr(v, ','))
		return; /* several ranges: the whole object (RFC) */
	if (sscanf(v, "bytes=-%llu%c", &a, &extra) == 1 && a) {
		r->r_suffix = a;
		r->range_ok = true;
	} else if (sscanf(v, "bytes=%llu-%llu%c", &a, &b, &extra) == 2 &&
		   a <= b) {
		r->r_first = a;
		r->r_last = b;
		r->range_ok = true;
	} else if (sscanf(v, "bytes=%llu-%c", &a, &extra) == 1) {
		r->r_first = a;
		r->r_last = UINT64_MAX;
		r->range_ok = true;
	}
}

/* Parse the request head buf[0..n) (NUL-terminated at n).  -1: malformed. */
static int parse_request(char *buf, struct request *r)
{
	char *line = buf, *eol, *sp, *target, *ver;

	memset(r, 0, sizeof(*r));
	eol = strpbrk(line, "\r\n");
	if (!eol)
		return -1;
	*eol = 0;
	sp = strchr(line, ' ');
	if (!sp || (size_t)(sp - line) >= sizeof(r->method))
		return -1;
	memcpy(r->method, line, (size_t)(sp - line));
	target = sp + 1;
	ver = strchr(target, ' ');
	if (!ver || target[0] != '/' || strncmp(ver + 1, "HTTP/1.", 7))
		return -1;
	r->close = ver[8] == '0';
	if (decode_key(target + 1, (size_t)(ver - target - 1), r) < 0)
		return -1;
	for (line = eol + 1; *line;) {
		char *colon, *v;

		if (*line == '\n') {
			line++;
			continue;
		}
		eol = strpbrk(line, "\r\n");
		if (!eol)
			break;
		*eol = 0;
		colon = strchr(line, ':');
		if (colon) {
			*colon = 0;
			for (v = colon + 1; *v == ' ' || *v == '\t'; v++)
				;
			if (!strcasecmp(line, "range"))
				parse_range(v, r);
			else if (!strcasecmp(line, "connection"))
				r->close = strcasestr(v, "close") ? true :
					   strcasestr(v, "keep-alive") ?
								    false :
								    r->close;
			else if (!strcasecmp(line, "if-none-match"))
				snprintf(r->inm, sizeof(r->inm), "%s", v);
			else if (!strcasecmp(line, "content-length") ||
				 !strcasecmp(line, "transfer-encoding"))
				r->close = true; /* a body we do not read */
		}
		line = eol + 1;
	}
	return 0;
}

static int send_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t k = send(fd, p, len, MSG_NOSIGNAL);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		p += k;
		len -= (size_t)k;
	}
	return 0;
}

static void http_date(char *buf, size_t n)
{
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, n, "%a, %d %b %Y %H:%M:%S GMT", &tm);
}

static int send_simple(int fd, int status, const char *reason, const char *body,
		       bool close_it)
{
	char head[512];
	int n = snprintf(head, sizeof(head),
			 "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\n"
			 "Content-Length: %zu\r\n%s\r\n%s",
			 status, reason, strlen(body),
			 close_it ? "Connection: close\r\n" : "", body);

	return send_all(fd, head, (size_t)n);
}

/* Bytes [first, last] of the object of payload seed @seed, paced. */
static int send_body(int fd, uint64_t seed, uint64_t first, uint64_t last,
		     unsigned char *buf)
{
	size_t piece = rate_bps > 0 ? 64 * KiB : PIECE;
	int64_t t0 = gs_mono_ns();
	uint64_t sent = 0;

	for (uint64_t off = first; off <= last;) {
		size_t n = last - off + 1 < piece ? (size_t)(last - off + 1) :
						    piece;

		workload_payload_fill(seed, off, buf, n);
		if (send_all(fd, buf, n) < 0)
			return -1;
		off += n;
		sent += n;
		atomic_fetch_add(&bytes_sent, n);
		if (rate_bps > 0) {
			int64_t due =
				t0 + (int64_t)((double)sent / rate_bps * 1e9);
			int64_t now = gs_mono_ns();

			if (due > now) {
				struct timespec ts = {
					.tv_sec = (due - now) / 1000000000,
					.tv_nsec = (due - now) % 1000000000,
				};

				nanosleep(&ts, NULL);
			}
		}
	}
	return 0;
}

/* Make the close of @fd (conn_thread's) a TCP reset, not a FIN. */
static void reset_conn(int fd)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };

	setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
}

/* Which failure this request gets under --fail-pct: -1 none, else 0..2. */
static int pick_failure(unsigned *rnd)
{
	static atomic_uint next_kind;

	if (fail_pct <= 0 || rand_r(rnd) % 10000 >= fail_pct * 100)
		return -1;
	return (int)(atomic_fetch_add(&next_kind, 1) % 3);
}

/* Answer one object request; -1 when the connection is to be closed. */
static int serve_object(int fd, struct request *r, unsigned char *buf,
			unsigned *rnd)
{
	char head[1024], etag[40], date[64];
	uint64_t size, seed, first = 0, last;
	int n, fail;

	atomic_fetch_add(&requests, 1);
	if (object_size(r->key, &size) < 0)
		return send_simple(fd, 404, "Not Found", "not found\n",
				   r->close);
	fail = pick_failure(rnd);
	if (fail >= 0)
		atomic_fetch_add(&failed[fail], 1);
	if (fail == 0)
		return send_simple(fd, 503, "Service Unavailable",
				   "injected failure\n", r->close);
	if (fail == 1) {
		reset_conn(fd);
		return -1;
	}
	seed = workload_payload_seed(r->key, size);
	snprintf(etag, sizeof(etag), "\"%016" PRIx64 "\"", seed);
	http_date(date, sizeof(date));
	if (r->inm[0] && (strstr(r->inm, etag) || !strcmp(r->inm, "*"))) {
		n = snprintf(head, sizeof(head),
			     "HTTP/1.1 304 Not Modified\r\nDate: %s\r\n"
			     "ETag: %s\r\nCache-Control: max-age=86400\r\n"
			     "%s\r\n",
			     date, etag,
			     r->close ? "Connection: close\r\n" : "");
		return send_all(fd, head, (size_t)n);
	}
	last = size ? size - 1 : 0;
	if (r->range_ok) {
		if (r->r_suffix) {
			first = r->r_suffix >= size ? 0 : size - r->r_suffix;
		} else {
			first = r->r_first;
			if (r->r_last < last)
				last = r->r_last;
		}
		if (first >= size) {
			n = snprintf(head, sizeof(head),
				     "HTTP/1.1 416 Range Not Satisfiable\r\n"
				     "Content-Range: bytes */%" PRIu64 "\r\n"
				     "Content-Length: 0\r\n%s\r\n",
				     size,
				     r->close ? "Connection: close\r\n" : "");
			return send_all(fd, head, (size_t)n);
		}
	}
	n = snprintf(head, sizeof(head),
		     "HTTP/1.1 %s\r\nDate: %s\r\nLast-Modified: " LAST_MODIFIED
		     "\r\nETag: %s\r\n"
		     "Cache-Control: max-age=86400\r\nAccept-Ranges: bytes\r\n"
		     "Content-Type: application/octet-stream\r\n",
		     r->range_ok ? "206 Partial Content" : "200 OK", date,
		     etag);
	if (r->range_ok)
		n += snprintf(head + n, sizeof(head) - (size_t)n,
			      "Content-Range: bytes %" PRIu64 "-%" PRIu64
			      "/%" PRIu64 "\r\n",
			      first, last, size);
	n += snprintf(head + n, sizeof(head) - (size_t)n,
		      "Content-Length: %" PRIu64 "\r\n%s\r\n",
		      size ? last - first + 1 : 0,
		      r->close ? "Connection: close\r\n" : "");
	if (send_all(fd, head, (size_t)n) < 0)
		return -1;
	if (r->head || !size)
		return 0;
	if (fail == 2 && last > first) {
		/* half the body, then the reset */
		send_body(fd, seed, first, first + (last - first) / 2, buf);
		reset_conn(fd);
		return -1;
	}
	return send_body(fd, seed, first, last, buf);
}

static int serve_stats(int fd, struct request *r)
{
	char body[128];

	snprintf(body, sizeof(body),
		 "requests %" PRIu64 "\nbytes %" PRIu64 "\nfailed_503 %" PRIu64
		 "\nfailed_reset %" PRIu64 "\nfailed_mid_body %" PRIu64 "\n",
		 (uint64_t)atomic_load(&requests),
		 (uint64_t)atomic_load(&bytes_sent),
		 (uint64_t)atomic_load(&failed[0]),
		 (uint64_t)atomic_load(&failed[1]),
		 (uint64_t)atomic_load(&failed[2]));
	return send_simple(fd, 200, "OK", body, r->close);
}

/* One connection: requests one after another until the close. */
static void *conn_thread(void *arg)
{
	int fd = (int)(intptr_t)arg;
	char *buf = malloc(HEAD_MAX + 1);
	unsigned char *piece = malloc(PIECE);
	size_t have = 0;
	unsigned rnd = (unsigned)fd * 2654435761u ^ (unsigned)gs_mono_ns();

	if (!buf || !piece)
		goto out;
	for (;;) {
		struct request r;
		char *end;
		size_t hlen;
		ssize_t k;
		int rc;

		buf[have] = 0;
		end = strstr(buf, "\r\n\r\n");
		if (!end && have >= HEAD_MAX) {
			send_simple(fd, 431, "Request Header Fields Too Large",
				    "head too long\n", true);
			break;
		}
		if (!end) {
			k = recv(fd, buf + have, HEAD_MAX - have, 0);
			if (k < 0 && errno == EINTR)
				continue;
			if (k <= 0)
				break;
			have += (size_t)k;
			continue;
		}
		hlen = (size_t)(end - buf) + 4;
		end[2] = 0;
		if (parse_request(buf, &r) < 0) {
			send_simple(fd, 400, "Bad Request", "bad request\n",
				    true);
			break;
		}
		r.head = !strcmp(r.method, "HEAD");
		if (strcmp(r.method, "GET") && !r.head) {
			send_simple(fd, 405, "Method Not Allowed",
				    "GET or HEAD\n", true);
			break;
		}
		if (!strcmp(r.key, "_origin/stats"))
			rc = serve_stats(fd, &r);
		else
			rc = serve_object(fd, &r, piece, &rnd);
		if (rc < 0 || r.close)
			break;
		memmove(buf, buf + hlen, have - hlen);
		have -= hlen;
	}
out:
	free(buf);
	free(piece);
	close(fd);
	return NULL;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: %s [--host ADDR] [--port N] [--port-file FILE]\n"
		"          [--manifest FILE] [--rate MBPS] [--fail-pct P]\n"
		"  --host ADDR       listen address (127.0.0.1)\n"
		"  --port N          port (default 0: any free one)\n"
		"  --port-file FILE  write the port there once listening\n"
		"  --manifest FILE   'key size' lines: GET /key serves size bytes\n"
		"                    (other keys: a name ending in @SIZE, e.g.\n"
		"                    /x@1G; anything else is a 404)\n"
		"  --rate MBPS       send each body at most MBPS x 10^6 bytes/s\n"
		"  --fail-pct P      fail P%% of object requests (default 0): in\n"
		"                    turn a 503, a reset before the answer, and\n"
		"                    a reset half way through the body\n",
		prog_name);
	exit(129);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "host", required_argument, NULL, 'H' },
		{ "port", required_argument, NULL, 'p' },
		{ "port-file", required_argument, NULL, 'P' },
		{ "manifest", required_argument, NULL, 'm' },
		{ "rate", required_argument, NULL, 'r' },
		{ "fail-pct", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *host = "127.0.0.1", *port_file = NULL;
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t sl = sizeof(sa);
	uint64_t port = 0;
	int ch, lfd, one = 1;

	prog_name = "origin";
	while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'H':
			host = optarg;
			break;
		case 'p':
			port = parse_num_opt("port", optarg);
			break;
		case 'P':
			port_file = optarg;
			break;
		case 'm':
			load_manifest(optarg);
			break;
		case 'r':
			rate_bps = strtod(optarg, NULL) * 1e6;
			if (!(rate_bps > 0))
				die("bad --rate '%s'", optarg);
			break;
		case 'f':
			fail_pct = strtod(optarg, NULL);
			if (!(fail_pct >= 0 && fail_pct <= 100))
				die("bad --fail-pct '%s' (0 to 100)", optarg);
			break;
		default:
			usage();
		}
	}
	if (optind != argc || port > 65535)
		usage();
	signal(SIGPIPE, SIG_IGN);
	if (inet_pton(AF_INET, host, &sa.sin_addr) != 1)
		die("bad --host '%s' (an IPv4 address)", host);
	sa.sin_port = htons((uint16_t)port);
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0)
		die("socket: %s", strerror(errno));
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(lfd, 128) < 0 ||
	    getsockname(lfd, (struct sockaddr *)&sa, &sl) < 0)
		die("cannot listen on %s:%" PRIu64 ": %s", host, port,
		    strerror(errno));
	fprintf(stderr, "origin: listening on %s:%u, %zu manifest objects\n",
		host, ntohs(sa.sin_port), nobjects);
	if (port_file) {
		char tmp[4096];
		FILE *f;

		snprintf(tmp, sizeof(tmp), "%s.tmp", port_file);
		f = fopen(tmp, "w");
		if (!f || fprintf(f, "%u\n", ntohs(sa.sin_port)) < 0 ||
		    fclose(f) || rename(tmp, port_file))
			die("cannot write '%s': %s", port_file,
			    strerror(errno));
	}
	for (;;) {
		int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		pthread_t tid;

		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED ||
			    errno == EMFILE || errno == ENFILE)
				continue;
			die("accept: %s", strerror(errno));
		}
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		if (pthread_create(&tid, NULL, conn_thread,
				   (void *)(intptr_t)fd)) {
			close(fd);
			continue;
		}
		pthread_detach(tid);
	}
}
