/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * goblind: what the daemon's files share.  Settings, the daemon, its
 * workers and connections, counters and logging.  Internal to netd/.
 */
#ifndef GOBLIND_H
#define GOBLIND_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <liburing.h>

#include "../store/goblin.h"
#include "fetch.h"
#include "http_attr.h"
#include "http_proto.h"
#include "http_sem.h"
#include "mc_proto.h"

#define GD_NAME "goblind"
#define GD_VERSION "0.5.0"
/* what "version" answers: clients parse a memcached version number */
#define GD_MC_VERSION "1.6.18-goblind-" GD_VERSION

#define GD_RBUF (16u << 10)	/* read buffer: lines and small values */
#define GD_GET_LINE_MAX (64u << 10)	/* longest multi-get line */
#define GD_WBUF_HIGH (64u << 10)	/* stop taking commands above this */
#define GD_COPY_MAX (16u << 10)	/* chunks this small are copied to wbuf */
#define GD_FIRST_SEND (16u << 10)	/* HTTP: the first write's body bytes */
#define GD_SCRATCH (256u << 10)	/* worker buffer: streamed sets */

/* ---- logging (log.c) ---- */

enum gd_log_level { GD_LOG_ERROR = 0, GD_LOG_WARN, GD_LOG_INFO, GD_LOG_DEBUG };
extern int gd_log_level;	/* messages above it are not printed */

/* "goblind: <level>: <msg>" on stderr, when @level <= gd_log_level. */
__attribute__((format(printf, 2, 3))) void gd_log(int level, const char *fmt,
						   ...);
/* The level named @s ("error", "warn", "info", "debug" or 0-3), or -1. */
int gd_log_parse(const char *s);
extern const char *const gd_log_names[];

/* ---- settings ---- */

struct gd_settings {
	const char *store_dir;
	struct gs_options so;
	const char *listen;	/* --listen-address */
	unsigned port;		/* --memcache-port */
	bool memcache;		/* false: --no-memcache */
	unsigned cores;		/* --cores */
	uint64_t max_item;	/* --max-item */
	unsigned max_conns;	/* --max-conns: every protocol together */
	unsigned mc_max_conns;	/* --memcache-max-conns, 0 until main()
				 * settles the default */
	unsigned http_max_conns;	/* --http-max-conns, likewise */
	unsigned idle_timeout;	/* --idle-timeout seconds, 0: none */
	unsigned busy_idle_timeout;	/* --busy-idle-timeout seconds: idle
					 * connections of a protocol over
					 * half its limit, 0: none */
	const char *auth_file;	/* --auth-file: memcache user:password */
	const char *trusted_proxy;	/* --trusted-proxy ADDR, NULL: none */
	const char *mount;	/* --mount DIR, NULL: none */
	const char *config;	/* --config FILE */
	unsigned http_port;	/* --http-port */
	bool http;		/* false: --no-http */
	const char *http_token;	/* --http-write-token, NULL: loopback only */
	unsigned http_timeout;	/* --http-timeout seconds: a request head
				 * must arrive within it */
	const char *mirror;	/* --mirror URL, NULL: origin server */
	unsigned mirror_timeout;	/* --mirror-timeout seconds */
	uint64_t mirror_max_object;	/* --mirror-max-object */
	unsigned mirror_threads;	/* --mirror-threads, 0: --cores */
};

/* ---- counters: per worker, summed by stats ---- */

struct gd_counters {
	uint64_t cmd_get;	/* keys asked for by get/gets/gat/gats/mg */
	uint64_t cmd_set;	/* storage commands (set ... cas, ms) */
	uint64_t cmd_flush;	/* flush_all */
	uint64_t cmd_touch;	/* touch, gat, gats, mg T */
	uint64_t cmd_meta;	/* meta commands */
	uint64_t get_hits;	/* keys found */
	uint64_t get_misses;	/* keys not found */
	uint64_t delete_hits, delete_misses;
	uint64_t incr_hits, incr_misses, decr_hits, decr_misses;
	uint64_t cas_hits, cas_misses, cas_badval;
	uint64_t touch_hits, touch_misses;
	uint64_t store_too_large;	/* values over --max-item, refused */
	uint64_t store_no_memory;	/* puts the store refused for room */
	uint64_t rmw_retries;	/* append/incr retried after a race */
	uint64_t bytes_read;	/* bytes read from sockets */
	uint64_t bytes_written;	/* bytes written to sockets */
	uint64_t total_connections;	/* accepted */
	uint64_t rejected_connections;	/* over --max-conns or a protocol's
					 * limit, or out of fds: all replied
					 * "Too many open connections" */
	uint64_t rejected_no_fd;	/* ... of which out of fds (EMFILE,
					 * ENFILE): taken on the reserve fd */
	uint64_t listen_disabled_num;	/* accepting paused: accept failed
					 * and no reserve fd could help */
	uint64_t auth_cmds;	/* memcache authentications tried */
	uint64_t auth_errors;	/* ... that failed */
	uint64_t mc_denied;	/* memcache writes refused by the write
				 * policy (not loopback, no --auth-file) */
	uint64_t idle_kicks;	/* closed by --idle-timeout */
	uint64_t conn_closed_long_line;	/* a line without newline too long */
	/* HTTP */
	uint64_t http_requests;	/* request heads parsed */
	uint64_t http_gets;	/* GET and HEAD of objects */
	uint64_t http_hits;	/* ... found stored (fresh, or revalidated) */
	uint64_t http_misses;	/* ... not stored: 404, or fetched */
	uint64_t http_puts;	/* PUTs stored */
	uint64_t http_deletes;	/* DELETEs that removed an object */
	uint64_t http_not_modified;	/* 304 replies */
	uint64_t http_partial;	/* 206 replies */
	uint64_t http_client_errors;	/* other 4xx replies */
	uint64_t http_server_errors;	/* 5xx replies */
	uint64_t http_bad_requests;	/* unparsable heads or chunked bodies:
					 * replied, closed */
	uint64_t http_timeouts;	/* heads not in within --http-timeout */
	uint64_t http_denied;	/* writes refused by the write gate */
	uint64_t mirror_writes_refused;	/* memcache writes to a mirror */
};

struct gd;
struct conn;

struct worker {
	struct gd *gd;
	pthread_mutex_t mail_lock;
	struct conn *mail;	/* connections whose fetch finished;
				 * protected by mail_lock */
	struct http_req hreq;	/* the HTTP head being parsed */
	int64_t date_sec;	/* the second date[] was formatted for */
	char date[HTTP_DATE_LEN + 1];
	unsigned id;
	pthread_t thread;
	int epfd;
	int evfd;		/* wakes the loop: shutdown */
	int ring_evfd;		/* io_uring completions */
	struct io_uring ring;
	uint8_t *scratch;	/* GD_SCRATCH bytes: streamed values */
	struct conn *conns;	/* every connection of this worker */
	struct conn *disk_wait;	/* connections waiting on a store read */
	unsigned nconns;
	bool stopping;
	struct conn *ready;	/* connections with more to do, in turn */
	struct conn *ready_tail;	/* (a queue: they go to the back) */
	unsigned nready;
	int64_t polled_ns;	/* the last look at the sockets (poll_events) */
	struct mc_req req;	/* the request being parsed (mc_conn_run) */
	/* accepting under fd exhaustion: see accept_all() */
	int64_t paused_until[2];	/* monotonic ns: a listener (0 memcache,
					 * 1 HTTP) is off until then, 0: on */
	unsigned backoff_ms[2];	/* the next pause of that listener */
	bool accept_logged;	/* accept_log_at is set */
	int64_t accept_log_at;	/* monotonic s of the last accept warning */
	uint64_t accept_quiet;	/* failures since then, not logged */
	struct gd_counters c;	/* this worker's: add with CNT() */
};

/* Count on the worker of @c (relaxed atomics: stats read them live). */
#define CNT_ADD(w, field, n) \
	__atomic_fetch_add(&(w)->c.field, (n), __ATOMIC_RELAXED)
#define CNT(w, field) CNT_ADD(w, field, 1)

/* A stale/win mark of meta commands, kept beside the store (metatab.c). */
struct metatab;

/* An IP address: IPv4 (v4-mapped IPv6 too) in b[0..3], or IPv6. */
struct gd_addr {
	sa_family_t family;	/* AF_INET or AF_INET6 */
	uint8_t b[16];
};

/* memcache users of --auth-file (main.c reads it). */
struct gd_auth_user {
	char *user, *pass;
	size_t ulen, plen;
};

struct gd {
	struct gd_settings set;
	struct gs_store *s;
	struct fetcher *fetcher;	/* --mirror */
	int *listen_fds;	/* memcache listeners, one per worker, or -1 */
	int *http_fds;		/* HTTP listeners, one per worker, or -1 */
	unsigned nworkers;
	struct worker *workers;
	struct metatab *meta;
	atomic_uint curr_conns;
	atomic_uint proto_conns[2];	/* of curr_conns: memcache, HTTP */
	/*
	 * The reserve fd (/dev/null): out of fds, it is closed to accept one
	 * connection, refuse it and close it (worker.c).  Every accept4()
	 * holds accept_lock for reading, the reserve's use for writing, so
	 * no other worker's accept takes the slot it frees.
	 */
	pthread_rwlock_t accept_lock;
	int spare_fd;		/* protected by accept_lock, -1: lost */
	struct gd_auth_user *auth;	/* --auth-file, NULL: none */
	unsigned nauth;
	bool has_proxy;		/* --trusted-proxy given: proxy is set */
	struct gd_addr proxy;
	atomic_bool stopping;
	atomic_int verbosity;
	_Atomic int64_t flush_at;	/* a delayed flush_all: unix seconds */
	int64_t start_time;	/* unix seconds */
	char listen_name[128];	/* "127.0.0.1:11211" */
	char http_name[128];
};

/* ---- workers (worker.c) ---- */

int worker_start(struct gd *gd, struct worker *w, unsigned id, char *err,
		 size_t errlen);
/* Ask a worker to stop: no new connections, finish what is in flight. */
void worker_stop(struct worker *w);
void worker_join(struct worker *w);
/* Sum every worker's counters into @out. */
void gd_counters_sum(struct gd *gd, struct gd_counters *out);

/* ---- connections and their output (worker.c) ---- */

/* What a command in progress holds (memcache.c). */
enum mc_job { JOB_NONE = 0, JOB_SWALLOW, JOB_VALUE, JOB_GET };

struct mc_state {
	enum mc_job job;
	struct mc_req req;	/* the command; its pointers are into line */
	char *line;		/* a copy of the command line (malloc) */
	size_t line_cap;
	/* JOB_SWALLOW and JOB_VALUE: bytes of the data block still to come,
	 * its "\r\n" included */
	uint64_t left;
	bool bad_chunk;		/* the block did not end with "\r\n" */
	uint8_t crlf[2];
	/* JOB_VALUE, streamed: the writer, and for append/prepend the old
	 * version copied before (append) or after (prepend) the new bytes */
	struct gs_writer *wr;
	struct gs_reader *old;
	int err;		/* first store error of the put */
	/* JOB_GET: the keys not yet answered, and the value being sent */
	const char *kpos, *kend;
	struct gs_reader *r;
	const char *rkey;	/* its key, for meta k */
	size_t rklen;
	bool mg;		/* a meta get: one key, no END */
};

/* An HTTP connection's request in progress (http.c). */
enum http_phase {
	HP_HEAD = 0,	/* between requests: parse the next head */
	HP_BODY,	/* a PUT body flowing into a store writer */
	HP_SEND,	/* a response body flowing out of a reader */
	HP_FETCH,	/* waiting for the mirror's fetcher */
	HP_FWD_BODY,	/* a body being buffered to forward to the origin */
};

struct http_saved;

struct http_state {
	enum http_phase phase;
	bool keep_alive;	/* this request's */
	bool http10;		/* an HTTP/1.0 request */
	bool head_only;		/* HEAD: no body goes out */
	const char *head;	/* while a request starts: its head in rbuf */
	size_t head_len;
	int64_t head_since;	/* monotonic s: a partial head began */
	/* HP_BODY */
	struct gs_writer *wr;
	uint64_t left;		/* Content-Length bytes still to come */
	uint64_t total;		/* body bytes taken so far */
	bool chunked;		/* the body is chunked: decoded by ch */
	struct http_chunked ch;
	int err;		/* first store error of the body */
	bool existed;		/* the key existed: 204, else 201 */
	/* HP_SEND */
	struct gs_reader *r;
	struct http_range ranges[HTTP_RANGES_MAX];
	unsigned nranges, cur;	/* 0 ranges: the whole object */
	bool multipart;
	bool range_started;	/* gs_reader_range() done for ranges[cur] */
	bool chunked_out;	/* size unknown (a fill): chunked encoding */
	bool crlf_due;		/* a chunk's CRLF follows the zero-copy one */
	bool sent_body;		/* a zero-copy chunk went out already */
	const uint8_t *rest;	/* a split first chunk's second part */
	size_t rest_len;
	uint64_t size;		/* the object's, for part headers */
	uint64_t boundary;
	char ctype[HTTP_ATTR_CTYPE_MAX + 1];
	/* HP_FETCH, HP_FWD_BODY */
	struct fetch_waiter fw;
	bool fw_pending;	/* given to the fetcher, result not taken */
	bool fw_ready;		/* the result is in fw */
	bool fw_revalidate;	/* the fetch revalidates a stale copy */
	struct http_saved *saved;	/* the request, kept across the fetch */
	struct conn *mnext;	/* in the worker's mailbox */
	char *fwd;		/* HP_FWD_BODY: the body (malloc) */
	size_t fwd_cap;
};

struct conn {
	struct worker *w;
	int fd;
	bool http;			/* an HTTP connection, else memcache */
	bool loopback;			/* the peer is on a loopback address */
	bool from_proxy;		/* the peer is --trusted-proxy */
	bool authed;			/* memcache: authenticated (--auth-file) */
	bool auth_block;		/* ... its "user pass" block is due */
	uint32_t auth_left;		/* ... that many bytes, "\r\n" included */
	struct conn *next, *prev;	/* in w->conns */
	struct conn *dnext;		/* in w->disk_wait */
	struct conn *rnext;		/* in w->ready, toward its tail */
	bool in_disk_wait, in_ready;
	char *rbuf;			/* GD_RBUF, or more for a long get */
	size_t rcap, rstart, rend;	/* unparsed input: [rstart, rend) */
	char *wbuf;
	size_t wcap, wstart, wend;	/* unsent output: [wstart, wend) */
	const uint8_t *chunk;		/* zero-copy value bytes, after wbuf */
	size_t chunk_len;
	uint32_t events;		/* the epoll mask */
	bool closing;			/* close once the output is out */
	bool lingering;			/* HTTP: output shut, input drained
					 * until EOF or linger_until */
	int64_t linger_until;		/* monotonic seconds */
	bool noreply;			/* the current command's */
	int64_t last_active;		/* monotonic seconds */
	struct mc_state mc;
	struct http_state h;
};

/* What mc_conn_run() needs next. */
enum mc_run {
	RUN_INPUT,	/* more bytes in rbuf */
	RUN_WAIT,	/* it read the socket itself and got EAGAIN */
	RUN_OUTPUT,	/* send what is queued, then call again */
	RUN_DISK,	/* a store read is in flight */
	RUN_CLOSE,	/* send what is queued, then close */
};

/*
 * Parse a bare IP address (@len bytes, not NUL terminated): IPv4, IPv6,
 * or "[IPv6]"; a ":port" after IPv4 or "]" is ignored (X-Forwarded-For
 * entries of some proxies carry one).  0 or -EINVAL.
 */
int gd_addr_parse(const char *s, size_t len, struct gd_addr *out);
/* 127.0.0.0/8 or ::1. */
bool gd_addr_loopback(const struct gd_addr *a);
bool gd_addr_equal(const struct gd_addr *a, const struct gd_addr *b);

/* Append @len bytes of reply to @c's output buffer. */
void conn_out(struct conn *c, const void *buf, size_t len);
/* printf-style reply. */
__attribute__((format(printf, 2, 3))) void conn_printf(struct conn *c,
							const char *fmt, ...);
/*
 * Take up to @want bytes of a request body: what rbuf holds, else one
 * read off the socket into the worker's scratch buffer (never past @want:
 * the next request may follow).  Returns the count with *@p on the bytes,
 * 0 when the socket has nothing now, -1 at EOF or on an error.
 */
ssize_t conn_take(struct conn *c, uint64_t want, const uint8_t **p);
/* A one-line reply with "\r\n", unless the request said noreply. */
void conn_reply(struct conn *c, const char *line);

/* Monotonic seconds: activity, timeouts. */
int64_t gd_mono_sec(void);
/*
 * Wake @w's loop as a completion on its ring does (any thread): it reaps
 * the ring, takes its mailbox and drives the connections waiting on either.
 */
void gd_worker_wake_disk(struct worker *w);
/* Open @key (GS_GET_* @flags) for streaming on @w's ring. */
int gd_reader_open(struct worker *w, const char *key, size_t klen, int flags,
		   struct gs_reader **out);
/* Attach an opened reader to @w's ring (fills wake the worker). */
int gd_reader_attach(struct worker *w, struct gs_reader *r);
/* Wait out a reader's reads in flight on @w's ring, then close it. */
void gd_reader_close(struct worker *w, struct gs_reader *r);

/* ---- memcache commands (memcache.c) ---- */

/*
 * Take what the connection's read buffer holds: parse and execute
 * commands until more input, output room or a store read is needed.
 */
enum mc_run mc_conn_run(struct conn *c);
/* Free what a connection's command holds (readers, writers). */
void mc_conn_release(struct conn *c);
/*
 * flush_all: delete every object last written at or before @before_ns
 * (CLOCK_REALTIME).  Returns the count deleted.
 */
uint64_t mc_flush(struct gd *gd, int64_t before_ns);
/* True when the connection is between commands with nothing pending. */
bool mc_conn_idle(const struct conn *c);

/* ---- HTTP (http.c) ---- */

/* As mc_conn_run(), for an HTTP connection. */
enum mc_run http_conn_run(struct conn *c);
void http_conn_release(struct conn *c);
bool http_conn_idle(const struct conn *c);
/* The fetcher's done(): hands @fw to its connection's worker. */
void http_fetch_done(struct fetch_waiter *fw);
/* A worker's mailbox: drive the connections whose fetch finished. */
void http_mail_run(struct worker *w);
/* A head not in within --http-timeout: 408 and close.  True: closed. */
bool http_conn_expired(struct conn *c, int64_t now);

/* ---- stats (stats.c) ---- */

/* "stats [ARG]": the reply lines and END, or -1 for an unknown ARG. */
int gd_stats(struct gd *gd, struct conn *c, const char *arg, size_t len);

/* A growing text buffer for HTTP bodies built whole (stats). */
struct gd_buf {
	char *p;
	size_t len, cap;
	bool oom;
};
__attribute__((format(printf, 2, 3))) void gd_buf_printf(struct gd_buf *b,
							  const char *fmt,
							  ...);
/* The counters of "stats" (and tiers) as JSON, or in Prometheus text. */
void gd_stats_json(struct gd *gd, struct gd_buf *b);
void gd_stats_prom(struct gd *gd, struct gd_buf *b);

/* ---- meta marks (metatab.c) ---- */

struct metatab *metatab_new(void);
void metatab_free(struct metatab *t);
/*
 * The marks of @key at version @cas: bits GD_MARK_*.  A mark belongs to
 * one version: a new version has none.
 */
#define GD_MARK_STALE 1u	/* md I: stale, serve with X */
#define GD_MARK_WON 2u		/* a client was given W for it */
unsigned metatab_get(struct metatab *t, const void *key, size_t klen,
		     uint64_t cas);
/* Set @bits on @key at @cas; returns the bits before. */
unsigned metatab_set(struct metatab *t, const void *key, size_t klen,
		     uint64_t cas, unsigned bits);
void metatab_clear(struct metatab *t, const void *key, size_t klen);

#endif
