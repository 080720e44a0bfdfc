/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * goblind: what the daemon's files share.  Settings, the daemon, its
 * workers and connections, the protocol seam (struct proto_ops), counters
 * and logging.  Internal to netd/.  No protocol's header is included
 * here: a protocol's own state and functions are in its header
 * (memcache.h, http.h), which includes this one.
 */
#ifndef GOBLIND_H
#define GOBLIND_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <liburing.h>

#include "../store/clock.h"
#include "../store/goblin.h"

#define GD_NAME	      "goblind"
#define GD_VERSION    "0.5.0"
/*
 * what "version" answers: the memcached version whose protocol goblind
 * speaks, alone, as memcached prints it (clients parse it: node's
 * memcached takes the last x.y.z of the line); goblind's own version is
 * stats' goblind_version
 */
#define GD_MC_VERSION "1.6.18"

#define GD_RBUF		     (16u << 10) /* read buffer: lines and small values */
#define GD_GET_LINE_MAX	     (16u << 10) /* rbuf's growth past GD_RBUF (a head) */
#define GD_WBUF_HIGH	     (64u << 10) /* stop taking commands above this */
#define GD_COPY_MAX	     (16u << 10) /* chunks this small are copied to wbuf */
#define GD_CC_NAME_MAX	     16		 /* the kernel's TCP_CA_NAME_MAX */
/*
 * Zero-copy pieces queued behind conn.chunk: the chunks of a value whose
 * reads are done go out in one writev, with the value's "\r\n".  With a
 * write for each chunk goblind wrote a value 6 times where memcached
 * writes once, and a write into an idle socket sends from the worker's
 * CPU (bench/results/case1-21.md, case 1n).
 */
#define GD_ZQ		     8
/*
 * A connection that was sent at least this many bytes since its last
 * input and now waits for more makes its worker, when it has nothing
 * else to do, poll its sockets for --busy-poll microseconds before it
 * sleeps: the client of a long answer asks again as soon as it has read
 * it, and a worker woken from sleep answers that request late (issue
 * 21: on this VM a sleeping CPU took 25-45 us to wake).  Only while no
 * other connection of the worker waits on its socket or on the disk:
 * then the worker is not idle but waiting on streams in flight, and
 * polling only takes the CPU from the softirqs that move them (case 1n
 * of bench/vs-memcached.sh, bench/results/case1-21.md).
 */
#define GD_BUSY_POLL_MIN     (1u << 20)
/*
 * A yield that took longer than GD_BUSY_POLL_CEDE_NS, and in which the
 * thread was switched out, ran another task; when such yields took more
 * than GD_BUSY_CEDE_TAKEN within GD_BUSY_CEDE_WINDOW, that task wants the
 * CPU: the poll stops.  See busy_poll_yield().
 */
#define GD_BUSY_POLL_CEDE_NS 20000
#define GD_BUSY_CEDE_TAKEN   1000000
#define GD_BUSY_CEDE_WINDOW  5000000
/*
 * The poll's --busy-poll starts again while the answer's bytes are still
 * in its socket's send queue (SIOCOUTQ): its client reads them for a few
 * more milliseconds when the answer ended faster than the client reads,
 * and asks again only after.  At most this long in all.
 */
#define GD_BUSY_POLL_OUTQ_NS 20000000
/*
 * Such an answer's last GD_WARM_TAIL bytes go out after the rest: if the
 * worker has nothing else to do, its protocol's warm pass
 * (proto_ops.warm) runs between, while the client reads (conn.warm_hold,
 * flush_warm).  After 300 MiB through the CPU, a hit's request took 30-40
 * us from its read to its first write, 7-13 us with the pass.  Run as the
 * poll for the request began, the pass was still going when the request
 * came, which then waited for it (bench/results/ttfb-21.md, section 6).
 */
#define GD_WARM_TAIL	     (64u << 10)
#define GD_SCRATCH	     (256u << 10) /* worker buffer: streamed sets */

/* ---- logging (log.c) ---- */

enum gd_log_level { GD_LOG_ERROR = 0, GD_LOG_WARN, GD_LOG_INFO, GD_LOG_DEBUG };
extern int gd_log_level; /* messages above it are not printed */

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
	const char *listen;	    /* --listen-address */
	unsigned port;		    /* --memcache-port */
	bool memcache;		    /* false: --no-memcache */
	unsigned cores;		    /* --cores */
	uint64_t max_item;	    /* --max-item */
	unsigned max_conns;	    /* --max-conns: every protocol together */
	unsigned mc_max_conns;	    /* --memcache-max-conns, 0 until main()
				     * settles the default */
	unsigned http_max_conns;    /* --http-max-conns, likewise */
	unsigned idle_timeout;	    /* --idle-timeout seconds, 0: none */
	unsigned busy_idle_timeout; /* --busy-idle-timeout seconds: idle
				     * connections of a protocol over
				     * half its limit, 0: none */
	unsigned busy_poll_us;	    /* --busy-poll: see GD_BUSY_POLL_MIN */
	const char *tcp_congestion; /* --tcp-congestion NAME, NULL: the
				     * system's (gd_listen_tcp()) */
	const char *auth_file;	    /* --auth-file: memcache user:password */
	const char *trusted_proxy;  /* --trusted-proxy ADDR, NULL: none */
	const char *mount;	    /* --mount DIR, NULL: none */
	uint64_t rewrite_max;	    /* --rewrite-max: the mount's limit */
	bool rewrite_max_set;	    /* ... given (else goblinfs's default) */
	const char *config;	    /* --config FILE */
	unsigned http_port;	    /* --http-port */
	bool http;		    /* false: --no-http */
	const char *http_token;	 /* --http-write-token, NULL: loopback only */
	unsigned http_timeout;	 /* --http-timeout seconds: a request head
				  * must arrive within it */
	const char *mirror;	 /* --mirror URL, NULL: origin server */
	unsigned mirror_timeout; /* --mirror-timeout seconds */
	uint64_t mirror_max_object; /* --mirror-max-object */
	unsigned mirror_threads;    /* --mirror-threads, 0: --cores */
	uint64_t mirror_max_header; /* --mirror-max-header, 0: default */

	/* --mirror-stale-on-error seconds, 0: off */
	unsigned mirror_stale_on_error;
	bool mirror_no_via;	   /* --mirror-no-via */
	bool mirror_no_xff;	   /* --mirror-no-xff */
	unsigned mirror_heuristic; /* --mirror-heuristic percent */
	bool mirror_heur_set;	   /* ... given (0 is a value) */
	unsigned mirror_heur_max;  /* --mirror-heuristic-max, 0: 1 day */

	/* memcache on a Unix socket (memcached -s, -a) */
	const char *unixsocket;	  /* --unixsocket PATH, NULL: none */
	unsigned unixsocket_mask; /* --unixsocket-mask, mode bits: 0700 */
	bool port_given;	  /* --memcache-port was set: with
				   * --unixsocket, TCP is served too */

	/* RESP (Redis clients), issue 23: off unless a port or socket */
	bool resp;		       /* --resp-port given */
	unsigned resp_port;	       /* --resp-port (0: the kernel picks) */
	const char *resp_unixsocket;   /* --resp-unixsocket PATH */
	unsigned resp_unixsocket_mask; /* --resp-unixsocket-mask: 0700 */
	const char *resp_password;     /* --resp-password: requirepass */
	unsigned resp_max_conns;       /* --resp-max-conns, 0 until settled */

	const char *ring; /* --ring PATH: the shared-memory ring's setup
			   * socket (ring.c), NULL: none */

	/* RDMA verbs (rdma.c) */
	const char *rdma_address; /* --rdma-address, NULL: --listen-address */
	unsigned rdma_port;	  /* --rdma-port */
	bool rdma;		  /* --rdma-port given: served */
	unsigned rdma_max_conns;  /* --rdma-max-conns */
};

/* goblind --help on @f (help.c) */
void gd_help(FILE *f);

/* ---- counters: per worker, summed by stats ---- */

struct gd_counters {
	uint64_t cmd_get;    /* keys asked for by get/gets/gat/gats/mg */
	uint64_t cmd_set;    /* storage commands (set ... cas, ms) */
	uint64_t cmd_flush;  /* flush_all */
	uint64_t cmd_touch;  /* touch, gat, gats, mg T */
	uint64_t cmd_meta;   /* meta commands */
	uint64_t get_hits;   /* keys found */
	uint64_t get_misses; /* keys not found */
	uint64_t delete_hits, delete_misses;
	uint64_t incr_hits, incr_misses, decr_hits, decr_misses;
	uint64_t cas_hits, cas_misses, cas_badval;
	uint64_t touch_hits, touch_misses;
	uint64_t store_too_large;	/* values over --max-item, refused */
	uint64_t store_no_memory;	/* puts the store refused for room */
	uint64_t rmw_retries;		/* append/incr retried after a race */
	uint64_t bytes_read;		/* bytes read from sockets */
	uint64_t bytes_written;		/* bytes written to sockets */
	uint64_t total_connections;	/* accepted */
	uint64_t rejected_connections;	/* over --max-conns or a protocol's
					 * limit, or out of fds: all replied
					 * "Too many open connections" */
	uint64_t rejected_no_fd;	/* ... of which out of fds (EMFILE,
					 * ENFILE): taken on the reserve fd */
	uint64_t listen_disabled_num;	/* accepting paused: accept failed
					 * and no reserve fd could help */
	uint64_t auth_cmds;		/* memcache authentications tried */
	uint64_t auth_errors;		/* ... that failed */
	uint64_t mc_denied;		/* memcache writes refused by the write
					 * policy (not loopback, no --auth-file) */
	uint64_t idle_kicks;		/* closed by --idle-timeout */
	uint64_t busy_polls;		/* a worker polled, not slept, after a
					 * long answer (--busy-poll) */
	uint64_t busy_poll_hits;	/* ... and that client's next bytes
					 * came while it polled */
	uint64_t busy_poll_ceded;	/* polls stopped early: another task
					 * wanted the CPU */
	uint64_t busy_poll_extended;	/* polls started again: the answer
					 * was still in its send queue */
	uint64_t warm_passes;		/* requests run again dry before a
					 * long answer's end (proto_ops.warm) */
	uint64_t tail_turns_ended;	/* a tail gave way to new requests
					 * and the others (HEAD_POLL_NS) */
	uint64_t conn_closed_long_line; /* a line without newline too long */
	/* HTTP */
	uint64_t http_requests; /* request heads parsed */
	uint64_t http_gets;	/* GET and HEAD of objects */
	uint64_t http_hits;	/* ... found stored (fresh, or revalidated) */
	uint64_t http_misses;	/* ... not stored: 404, or fetched */
	uint64_t http_puts;	/* PUTs stored */
	uint64_t http_deletes;	/* DELETEs that removed an object */
	uint64_t http_not_modified;	/* 304 replies */
	uint64_t http_partial;		/* 206 replies */
	uint64_t http_client_errors;	/* other 4xx replies */
	uint64_t http_server_errors;	/* 5xx replies */
	uint64_t http_bad_requests;	/* unparsable heads or chunked bodies:
					 * replied, closed */
	uint64_t http_timeouts;		/* heads not in within --http-timeout */
	uint64_t http_denied;		/* writes refused by the write gate */
	uint64_t mirror_writes_refused; /* memcache writes to a mirror */
	/* RDMA (rdma.c) */
	uint64_t rdma_connections; /* RDMA connections accepted */
	uint64_t rdma_requests;	   /* binary protocol requests decoded */
	uint64_t rdma_written;	   /* value bytes RDMA WRITTEN to windows */
	uint64_t rdma_zero_copy;   /* ... of which straight from the
				      * store's memory (heads, read buffers) */
	uint64_t rdma_pulled;	   /* set bytes pulled by RDMA READ */
	uint64_t rdma_bulk_ready;  /* BULK_READY data frames sent */
	uint64_t rdma_bad_window;  /* gets refused: window too small */
	uint64_t rdma_errors;	   /* connections closed on an error: a
				      * bad frame, a failed completion */
};

struct gd;
struct conn;
struct worker;

/* ---- the protocol seam ---- */

/* What a protocol's run() needs next (conn_drive() in worker.c acts). */
enum conn_run {
	RUN_INPUT,  /* more bytes in rbuf */
	RUN_WAIT,   /* it read the socket itself and got EAGAIN */
	RUN_OUTPUT, /* send what is queued, then call again */
	RUN_DISK,   /* a store read (or a post, conn_post()) is due */
	RUN_CLOSE,  /* send what is queued, then close */
};

/*
 * A protocol, as the worker sees it (memcached's c->try_read_command):
 * chosen once per connection, by the listener that accepted it.  The
 * worker owns the socket, the buffers and the loop; the protocol owns
 * what its bytes mean.  One indirect call per event, none per byte.
 * See netd/README, "Adding a protocol".
 */
struct proto_ops {
	const char *name; /* "memcache": logs */
	/*
	 * Bytes of a connection: a struct conn first, the protocol's own
	 * state after it (struct mc_conn { struct conn c; ... }), zeroed.
	 */
	size_t conn_size;
	/*
	 * Take what rbuf holds: parse and execute requests until more
	 * input, output room, a store read or a post is needed.  It may
	 * queue output (conn_out), read a body itself (conn_take) and set
	 * c->chunk for a zero-copy write.  Called again after each.
	 */
	enum conn_run (*run)(struct conn *c);
	/*
	 * Free what the connection's request holds (readers, writers) and
	 * drop c->chunk.  Called at close, and before a lingering close:
	 * it must be idempotent.
	 */
	void (*release)(struct conn *c);
	/* Between requests with nothing pending: idle and stop may close. */
	bool (*idle)(const struct conn *c);
	/*
	 * Optional, once a second per connection: a request that timed out
	 * gets its reply queued and c->closing set; true then (the worker
	 * drives it out).
	 */
	bool (*expired)(struct conn *c, int64_t now);
	/*
	 * Optional: run the last request of @c's protocol on @c's worker
	 * again, dry, on a scratch connection of the protocol's own:
	 * parsed, looked up, its reply's head built and dropped, so that
	 * the code and data the next request needs are back in the CPU's
	 * caches, which a long answer's bytes flushed (GD_WARM_TAIL).
	 * @c itself is not touched; nothing is sent or counted.
	 */
	void (*warm)(struct conn *c);
	/* Optional: a conn_post() of @c reached its worker (its thread). */
	void (*posted)(struct conn *c);
	/* Optional, once a second on each worker: timed work (memcache's
	 * delayed flush_all). */
	void (*tick)(struct worker *w);
	/*
	 * Optional: the protocol's state of a worker (parse scratch and the
	 * like), made before its thread starts; NULL on failure.  The
	 * worker keeps it in pstate[] for the protocol's id.
	 */
	void *(*worker_init)(struct worker *w);
	void (*worker_fini)(struct worker *w, void *pstate);
	/* Written to a client refused over a connection limit, then closed. */
	const char *busy_reply;
	/*
	 * Close after an error reply as nginx does (lingering close): the
	 * client may still be sending a request body we will not read.
	 */
	bool linger;
};

#define GD_PROTOS_MAX	 4  /* protocols registered at once */
#define GD_LISTENERS_MAX 8  /* listeners, every protocol together */
#define GD_HANDOFF_MAX	 64 /* accepted fds waiting for their worker */

/* A protocol goblind serves: main.c registers it with gd_proto_add(). */
struct gd_proto {
	const struct proto_ops *ops;
	unsigned id;	    /* its index in gd->protos, w->pstate and
			     * gd->proto_conns */
	unsigned max_conns; /* its --NAME-max-conns */
};

/* Where connections of a protocol are accepted (gd_listener_add()). */
struct gd_listener {
	struct gd_proto *proto;
	int *fds; /* one per worker (SO_REUSEPORT), or -1 */
	/*
	 * fds[] holds one socket for every worker (a Unix socket: no
	 * SO_REUSEPORT for AF_UNIX), which each polls with EPOLLEXCLUSIVE
	 * so that a connection wakes one worker, not all of them.
	 */
	bool shared;
};

/* ---- event sources: a transport's own fds in the workers' loops ---- */

/*
 * What a worker calls on its own thread for an event source: @ready when
 * its fd is readable (level triggered), @disk after each pass over the
 * worker's ring (a store read completed or a fill advanced: a request
 * waiting on a reader tries it again).
 */
typedef void gd_source_fn(struct worker *w, void *arg);

struct gd_source {
	gd_source_fn *ready; /* NULL: no fd */
	gd_source_fn *disk;  /* may be NULL */
	void *arg;
	int fd;
};

#define GD_SOURCES_MAX	  8 /* event sources of one worker */
#define GD_TRANSPORTS_MAX 4 /* transports registered at once */

/*
 * A transport that is no stream socket (RDMA's completion channels, a
 * ring's eventfd) and so no protocol behind the accept seam: it brings
 * its own fds.  main.c registers it with gd_transport_add() before the
 * workers start; every worker calls worker_init() before its thread
 * starts (it adds the worker's sources with gd_source_add()) and
 * worker_fini() after its thread ended.
 */
struct gd_transport {
	const char *name;
	int (*worker_init)(struct worker *w, char *err, size_t errlen);
	void (*worker_fini)(struct worker *w);
};

/* ---- the worker and the daemon ---- */

/* A worker's view of a listener: its socket, and the pause under fd
 * exhaustion (see accept_all()). */
struct wlistener {
	const struct gd_listener *l;
	int fd;
	int64_t paused_until; /* monotonic ns: off until then, 0: on */
	unsigned backoff_ms;  /* the next pause */
};

struct worker {
	struct gd *gd;
	pthread_mutex_t mail_lock;
	struct conn *mail; /* connections posted from other threads
			    * (conn_post()); protected by mail_lock */
	unsigned id;
	pthread_t thread;
	int epfd;
	int evfd;      /* wakes the loop: shutdown */
	int ring_evfd; /* io_uring completions, and posts */
	struct io_uring ring;
	uint8_t *scratch;	/* GD_SCRATCH bytes: streamed values */
	struct conn *conns;	/* every connection of this worker */
	struct conn *disk_wait; /* connections waiting on a store read */
	unsigned nconns;
	bool stopping;
	struct conn *ready;	 /* connections with more to do, in turn */
	struct conn *ready_tail; /* (a queue: they go to the back) */
	unsigned nready;
	int64_t polled_ns;	/* the last look at the sockets (poll_events) */
	int64_t busy_until;	/* monotonic ns: poll, do not sleep, until then
				 * (--busy-poll); 0: sleep when idle */
	struct conn *busy_conn; /* whose answer armed it (GD_BUSY_POLL_OUTQ_NS) */
	int64_t busy_armed;	/* when */
	long busy_switches;	/* the thread's context switches after the
				 * poll's last yield; -1: before its first */
	int64_t busy_window;	/* when the window of busy_taken began;
				 * 0: none in this poll */
	int64_t busy_taken;	/* ns other tasks took of its yields */
	unsigned nout;		/* connections waiting for EPOLLOUT */
	void *pstate[GD_PROTOS_MAX];		/* each protocol's, by its id */
	struct wlistener lis[GD_LISTENERS_MAX]; /* epoll data: &lis[i] */
	unsigned nlis;
	bool accept_logged;    /* accept_log_at is set */
	int64_t accept_log_at; /* monotonic s of the last accept warning */
	uint64_t accept_quiet; /* failures since then, not logged */
	/* connections another worker accepted on a shared listener for
	 * this one (accept.c, handoff_post): protected by mail_lock */
	int handoff_fd[GD_HANDOFF_MAX];
	const struct gd_proto *handoff_proto[GD_HANDOFF_MAX];
	unsigned nhandoff;
	/* the epoll batch being handled (poll_events): a connection closed
	 * in it is taken out of its later events, as one with a second
	 * event source (conn_watch()) may appear twice */
	struct epoll_event *batch;
	int nbatch, ibatch;
	struct gd_source src[GD_SOURCES_MAX]; /* epoll data: &src[i] */
	unsigned nsrc;
	struct gd_counters c; /* this worker's: add with CNT() */
};

/* Count on the worker of @c (relaxed atomics: stats read them live). */
#define CNT_ADD(w, field, n) \
	__atomic_fetch_add(&(w)->c.field, (n), __ATOMIC_RELAXED)
#define CNT(w, field) CNT_ADD(w, field, 1)

/* A stale/win mark of meta commands, kept beside the store (metatab.c). */
struct metatab;

/* An IP address: IPv4 (v4-mapped IPv6 too) in b[0..3], or IPv6. */
struct gd_addr {
	sa_family_t family; /* AF_INET or AF_INET6 */
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
	struct fetcher *fetcher; /* --mirror */
	struct gd_proto protos[GD_PROTOS_MAX];
	unsigned nprotos;
	struct gd_listener listeners[GD_LISTENERS_MAX];
	unsigned nlisteners;
	const struct gd_transport *transports[GD_TRANSPORTS_MAX];
	unsigned ntransports;
	unsigned nworkers;
	struct worker *workers;
	struct metatab *meta;
	atomic_uint curr_conns;
	atomic_uint proto_conns[GD_PROTOS_MAX]; /* of curr_conns, by
						 * protocol id */
	atomic_uint handoff_next; /* shared listeners' round robin */
	/*
	 * The reserve fd (/dev/null): out of fds, it is closed to accept one
	 * connection, refuse it and close it (accept.c).  Every accept4()
	 * holds accept_lock for reading, the reserve's use for writing, so
	 * no other worker's accept takes the slot it frees.
	 */
	pthread_rwlock_t accept_lock;
	int spare_fd;		   /* protected by accept_lock, -1: lost */
	struct gd_auth_user *auth; /* --auth-file, NULL: none */
	unsigned nauth;
	bool has_proxy; /* --trusted-proxy given: proxy is set */
	struct gd_addr proxy;
	atomic_bool stopping;
	atomic_int verbosity;
	_Atomic int64_t flush_at;     /* a delayed flush_all: unix seconds */
	int64_t start_time;	      /* unix seconds */
	struct gd_proto *ring_proto;  /* --ring's, NULL: not served */
	_Atomic uint64_t ring_mapped; /* bytes of ring mappings held now */
	/* RDMA gauges, kept by rdma.c */
	atomic_uint rdma_conns;		/* RDMA connections open */
	_Atomic uint64_t rdma_mr;	/* memory regions registered */
	_Atomic uint64_t rdma_mr_bytes; /* ... their bytes */
	char listen_name[128];		/* "127.0.0.1:11211" */
	char http_name[128];
	char resp_name[128]; /* --resp-port's address */
};

/* ---- protocols and listeners (accept.c) ---- */

/*
 * Register a protocol (before the workers start): its struct, or NULL
 * when GD_PROTOS_MAX are.  Its connections count in proto_conns[id].
 */
struct gd_proto *gd_proto_add(struct gd *gd, const struct proto_ops *ops,
			      unsigned max_conns);
/* A listener of @p: @fds, one socket per worker; -ENOSPC when full. */
int gd_listener_add(struct gd *gd, struct gd_proto *p, int *fds);
/* A listener whose fds[] is one socket every worker polls (AF_UNIX). */
int gd_listener_add_shared(struct gd *gd, struct gd_proto *p, int *fds);

/*
 * Listen on @addr:@port (SO_REUSEPORT: one socket per worker); the bound
 * address goes to @name ("127.0.0.1:11211"), the port to *@bound (port
 * 0 settled).  @opt is the option that sets @port, named when the port is
 * taken.  @cc: the connections' TCP congestion control (--tcp-congestion),
 * NULL for the system's.  The fd, or -1 with the reason in @why.
 */
int gd_listen_tcp(const char *addr, unsigned port, const char *opt,
		  const char *cc, char *name, size_t namelen, unsigned *bound,
		  char *why, size_t wlen);

/* A listening Unix socket and the file it made (--unixsocket). */
struct gd_unix {
	const char *path;
	int fd;	   /* -1: none */
	int *fds;  /* fd for each worker: the listener's fds[] */
	dev_t dev; /* the socket file bound, removed at the close */
	ino_t ino; /* if it is still this one */
};
/*
 * Listen on the Unix socket @path with permission bits @mode, replacing
 * a stale socket file there (never any other file), for @nworkers
 * workers (u->fds).  0, or -1 with the
 * reason in @why.  @path must outlive @u.
 */
int gd_unix_listen(struct gd_unix *u, const char *path, unsigned mode,
		   unsigned nworkers, char *why, size_t wlen);
/* Close it and remove its file, unless another file took the path. */
void gd_unix_close(struct gd_unix *u);

/*
 * --ring (ring.c): register the ring protocol and listen on its setup
 * socket gd->set.ring (mode --unixsocket-mask).  NULL, or what failed.
 */
const char *gd_ring_listen(struct gd *gd);
void gd_ring_close(void);

/* ---- workers (worker.c) ---- */

int worker_start(struct gd *gd, struct worker *w, unsigned id, char *err,
		 size_t errlen);
/* worker_start() without the thread: the caller runs the loop. */
int worker_setup(struct gd *gd, struct worker *w, unsigned id, char *err,
		 size_t errlen);
/* Register a transport (before the workers start): 0 or -ENOSPC. */
int gd_transport_add(struct gd *gd, const struct gd_transport *t);
/*
 * From a transport's worker_init: call @ready(@w, @arg) on @w's thread
 * whenever @fd is readable (-1 with @ready NULL: none) and @disk, when
 * not NULL, after each pass over @w's ring.  0, -ENOSPC when
 * GD_SOURCES_MAX are, or -errno from epoll_ctl.
 */
int gd_source_add(struct worker *w, int fd, gd_source_fn *ready,
		  gd_source_fn *disk, void *arg);
/* Ask a worker to stop: no new connections, finish what is in flight. */
void worker_stop(struct worker *w);
void worker_join(struct worker *w);
/* Sum every worker's counters into @out. */
void gd_counters_sum(struct gd *gd, struct gd_counters *out);

/* ---- connections and their I/O (conn.c; posts: worker.c) ---- */

/*
 * A connection: what every protocol has.  The protocol's own state
 * follows it in the same allocation (proto_ops.conn_size).
 */
struct conn {
	struct worker *w;
	const struct proto_ops *ops; /* its protocol's: c->proto->ops */
	const struct gd_proto *proto;
	int fd;
	bool loopback;		  /* the peer is on a loopback address */
	bool from_proxy;	  /* the peer is --trusted-proxy */
	struct conn *next, *prev; /* in w->conns */
	struct conn *dnext;	  /* in w->disk_wait */
	struct conn *rnext;	  /* in w->ready, toward its tail */
	struct conn *mnext;	  /* in w->mail */
	bool in_disk_wait, in_ready;
	int64_t aseq; /* when its request came (ns): w->ready's order */
	char *rbuf;   /* GD_RBUF, or more for a long line */
	size_t rcap, rstart, rend; /* unparsed input: [rstart, rend) */
	char *wbuf;
	size_t wcap, wstart, wend; /* unsent output: [wstart, wend) */
	const uint8_t *chunk;	   /* zero-copy value bytes, after wbuf */
	size_t chunk_len;
	struct iovec zq[GD_ZQ]; /* more pieces, after chunk (none
				    * while chunk is empty) */
	unsigned nzq;
	bool trailed;		   /* zq holds the value's trail */
	uint32_t events;	   /* the epoll mask */
	bool closing;		   /* close once the output is out */
	bool lingering;		   /* output shut, input drained until
			       * EOF or linger_until (ops.linger) */
	int64_t linger_until;	   /* monotonic seconds */
	int64_t last_active;	   /* monotonic seconds */
	uint64_t sent_since_input; /* bytes written since input last came */
	bool busy_polled;	   /* its worker polls for its next input */
	uint32_t warm_hold; /* chunk holds a long answer's last GD_WARM_TAIL
			     * bytes' start: this many of it are after it */
};

/* The protocol's state of @c's worker (proto_ops.worker_init). */
static inline void *conn_pstate(const struct conn *c)
{
	return c->w->pstate[c->proto->id];
}

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
/*
 * Send the rest of the value reader *@r holds, then @trail, a string that
 * lives as long as the program: "\r\n" (memcache's and RESP's data blocks
 * end so), or that and what follows the value in the reply (memcache's
 * "END\r\n" after a get's last key), so that the value's last bytes and
 * the reply's end go out in one write.  Small chunks are copied into the
 * output buffer, big ones sent zero-copy from the store's (the head from
 * its RAM slot).  RUN_INPUT once all is queued (the reader closed, *@r
 * NULL), what the connection waits for meanwhile, or RUN_CLOSE when a read
 * fails: the header promised bytes that cannot be sent (@proto names it in
 * the log).
 */
enum conn_run conn_send_value(struct conn *c, struct gs_reader **r,
			      const char *trail, const char *proto);
/* Forget @c's zero-copy pieces: their reader is closed or closing. */
void conn_chunks_drop(struct conn *c);
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
/*
 * From any thread: hand @c to its worker, which calls ops->posted(@c)
 * on its own thread and drives it (it waits as for a store read: its
 * run() returned RUN_DISK).  At most one post of a connection at a time.
 */
void conn_post(struct conn *c);
/*
 * On @c's worker: take @c's post back out of the mailbox before the
 * connection goes.  True: it was there; false: not (yet).
 */
bool conn_unpost(struct conn *c);

/*
 * A second event source of @c: @fd (an eventfd a shared-memory client
 * kicks, an RDMA completion channel) joins @c's worker's epoll,
 * edge-triggered, and each of its events drives @c as its socket's do
 * (ops->run(), which finds out what came).  The protocol takes it out
 * with conn_unwatch() in its release(), before it closes @fd: another
 * process may hold the same file, which closing ours would leave in the
 * epoll.  0 or -errno.
 */
int conn_watch(struct conn *c, int fd);
void conn_unwatch(struct conn *c, int fd);

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
							 const char *fmt, ...);
/* The counters of "stats" (and tiers) as JSON, or in Prometheus text. */
void gd_stats_json(struct gd *gd, struct gd_buf *b);
void gd_stats_prom(struct gd *gd, struct gd_buf *b);
/*
 * ... as "name value\n" lines, memcache's names: the binary protocol's
 * stats reply, the same on the ring and over RDMA.  @group (@len bytes)
 * empty: the general counters and the tiers' (what /_goblin/stats has);
 * "settings" or "tiers": memcache's "stats GROUP".  0, or -1 for another
 * group; b->oom when memory ran out.
 */
int gd_stats_text(struct gd *gd, const char *group, size_t len,
		  struct gd_buf *b);

#endif
