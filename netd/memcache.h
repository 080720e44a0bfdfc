/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The memcache protocol's rooms share this header (internal to netd/):
 * a memcache connection's state, and what one room calls in another.
 *
 *   memcache.c   the command loop and the seam (mc_ops): parse, the write
 *                policy, dispatch, jobs in progress, release
 *   mc_get.c     retrieval: get gets gat gats, values streamed head first,
 *                a line too long to parse whole streamed key by key
 *   mc_store.c   storage: set add replace append prepend cas (and ms's
 *                data block), small values whole, big ones streamed
 *   mc_simple.c  commands answered at once: incr decr delete touch
 *                flush_all
 *   mc_dump.c    lru_crawler metadump, streamed from a walker thread
 *   mc_meta.c    meta commands: mg md ma me (ms is storage, mn the loop's)
 *   mc_auth.c    --auth-file: its users, memcached's text protocol login
 *   mc_admin.c   goblind's own commands: goblin inspect, goblin stat
 *   mc_common.c  what the command rooms share: replies, meta return flags,
 *                a put of bytes held in memory
 *   mc_proto.c   the pure parser (mc_proto.h: unit tests, fuzz target)
 *   metatab.c    meta stale/win marks kept beside the store
 *
 * Calls go one way, down this list's dependencies: the loop calls every
 * room; mc_meta.c calls mc_simple.c's arithmetic; all of them call
 * mc_common.c, and conn.c for connection I/O.
 */
#ifndef GOBLIND_MEMCACHE_H
#define GOBLIND_MEMCACHE_H

#include <time.h>

#include "goblind.h"
#include "mc_proto.h"

#define RMW_TRIES 16 /* read-modify-write attempts on a race */

/* Append a string literal to the output. */
#define OUT(c, lit) conn_out(c, lit, sizeof(lit) - 1)

/* What a command in progress holds. */
enum mc_job {
	JOB_NONE = 0,
	JOB_SWALLOW,
	JOB_VALUE,
	JOB_GET,
	JOB_SKIPLINE,
	JOB_DUMP, /* lru_crawler metadump: pages from its walker thread */
};

struct mc_state {
	enum mc_job job;
	struct mc_req req; /* the command; its pointers are into line */
	char *line;	   /* a copy of the command line (malloc) */
	size_t line_cap;
	bool noreply;	    /* the current command's */
	bool authed;	    /* authenticated (--auth-file) */
	bool auth_block;    /* ... its "user pass" block is due */
	uint32_t auth_left; /* ... that many bytes, "\r\n" included */
	/* JOB_SWALLOW and JOB_VALUE: bytes of the data block still to come,
	 * its "\r\n" included */
	uint64_t left;
	bool bad_chunk; /* the block did not end with "\r\n" */
	uint8_t crlf[2];
	/* JOB_VALUE, streamed: the writer, and for append/prepend the old
	 * version copied before (append) or after (prepend) the new bytes */
	struct gs_writer *wr;
	struct gs_reader *old;
	int err; /* first store error of the put */
	/* JOB_GET: the keys not yet answered, and the value being sent */
	const char *kpos, *kend;
	struct gs_reader *r;
	const char *rkey; /* its key, for meta k */
	size_t rklen;
	bool mg; /* a meta get: one key, no END */
	/* JOB_GET of a line too long to parse whole: the keys are taken
	 * from rbuf as they arrive (mc_stream_key) */
	bool stream;
	bool started;	      /* the connection's first byte was looked at */
	struct mc_dump *dump; /* JOB_DUMP (mc_dump.c) */
};

/* A memcache connection: the worker's part, then ours. */
struct mc_conn {
	struct conn c;
	struct mc_state m;
};

/* A worker's memcache state (mc_ops.worker_init). */
struct mc_worker {
	struct mc_req req; /* the request being parsed (mc_conn_run) */
};

static inline struct mc_state *mc_of(const struct conn *c)
{
	return &((struct mc_conn *)(uintptr_t)c)->m;
}

static inline struct mc_worker *mc_worker_of(const struct conn *c)
{
	return conn_pstate(c);
}

static inline int64_t now_sec(void)
{
	return (int64_t)time(NULL);
}

/* The store's absolute exptime for @sent; expired ones become 1 (1970). */
static inline int64_t store_exptime(int64_t sent)
{
	int64_t t = mc_exptime(sent, now_sec());

	return t < 0 ? 1 : t;
}

static inline struct gs_store *store_of(const struct conn *c)
{
	return c->w->gd->s;
}

/* The seam (memcache.c). */
extern const struct proto_ops mc_ops;
/*
 * flush_all: delete every object last written at or before @before_ns
 * (CLOCK_REALTIME).  Returns the count deleted (mc_simple.c).
 */
uint64_t mc_flush(struct gd *gd, int64_t before_ns);

/* ---- mc_common.c ---- */

/* A one-line reply with "\r\n", unless the command said noreply. */
void mc_reply(struct conn *c, const char *line);
/* The request's key, base64 again if it came so (meta b). */
void mc_out_key(struct conn *c, const struct mc_req *q);
/* Seconds an object has left, -1: no expiry. */
int64_t mc_ttl_left(const struct gs_meta *mt);
/* The meta return flags @q asked for, in its order. */
void mc_meta_flags_out(struct conn *c, const struct mc_req *q,
		       const struct gs_meta *mt, uint64_t cas);
/* Store @len bytes held in memory with @a: 0 (cas in *cas) or -errno. */
int mc_put_buf(struct gs_store *s, const char *key, size_t klen,
	       const struct gs_put_args *a, const void *data, size_t len,
	       uint64_t *cas);

/* ---- mc_get.c ---- */

/* Stream the value of mc_of(c)->r, then @trail; RUN_INPUT once queued. */
enum conn_run mc_stream_value(struct conn *c, const char *trail);
/* JOB_GET of get/gets/gat/gats: the next keys. */
enum conn_run mc_get_run(struct conn *c);
/* JOB_SKIPLINE: drop input up to the end of the line. */
enum conn_run mc_skip_line_run(struct conn *c);

/* ---- mc_store.c ---- */

/* A storage command line was parsed: plan how its data block is taken. */
enum conn_run mc_storage_start(struct conn *c);
/* JOB_VALUE, the block all in rbuf: store it and reply. */
void mc_value_whole(struct conn *c);
/* JOB_VALUE, streamed: take the block into the writer. */
enum conn_run mc_value_run(struct conn *c);
/* JOB_SWALLOW: skip the block of a refused command. */
enum conn_run mc_swallow_run(struct conn *c);
/* Skip the data block of a refused storage command (keeps framing). */
void mc_swallow_block(struct conn *c, uint64_t bytes);
/* Drop the put in progress: nothing of it becomes visible. */
void mc_value_drop(struct mc_state *m);

/* ---- mc_simple.c ---- */

/*
 * incr/decr/ma: read-modify-write, again on a race.  *val gets the new
 * value.  0, -ENOENT, -EINVAL (not a number), -ESTALE or -errno.
 */
int mc_arith(struct conn *c, const struct mc_req *q, bool decr, uint64_t delta,
	     uint64_t *val, uint64_t *cas);
void mc_count_arith(struct worker *w, bool decr, bool hit);
void mc_cmd_arith(struct conn *c, const struct mc_req *q);
void mc_cmd_delete(struct conn *c, const struct mc_req *q);
void mc_cmd_touch(struct conn *c, const struct mc_req *q);
void mc_cmd_flush_all(struct conn *c, const struct mc_req *q);

/* ---- mc_dump.c ---- */

/* Start the listing (JOB_DUMP); RUN_INPUT. */
enum conn_run mc_cmd_metadump(struct conn *c, const struct mc_req *q);
/* JOB_DUMP: the next pages, then END; RUN_INPUT once it is done. */
enum conn_run mc_dump_run(struct conn *c);
/* Stop a listing in progress (the connection closes). */
void mc_dump_release(struct conn *c);

/* ---- mc_meta.c ---- */

enum conn_run mc_cmd_mg(struct conn *c);
void mc_cmd_md(struct conn *c, const struct mc_req *q);
void mc_cmd_ma(struct conn *c, const struct mc_req *q);
void mc_cmd_me(struct conn *c, const struct mc_req *q);

/* ---- mc_admin.c ---- */

/* goblin inspect|stat KEY [b]: where KEY's bytes are, its metadata. */
void mc_cmd_goblin(struct conn *c, const struct mc_req *q);

/* ---- mc_auth.c ---- */

/* One step of the login: 1 consumed input, 0 needs more, -1 close. */
int mc_auth_step(struct conn *c);
/* --auth-file FILE: its user:password lines into gd->auth; a file that
 * cannot be read or holds anything else stops the start (die()). */
void mc_auth_load(struct gd *gd, const char *file);
void mc_auth_free(struct gd *gd);

/* ---- meta marks (metatab.c) ---- */

struct metatab *metatab_new(void);
void metatab_free(struct metatab *t);
/*
 * The marks of @key at version @cas: bits GD_MARK_*.  A mark belongs to
 * one version: a new version has none.
 */
#define GD_MARK_STALE 1u /* md I: stale, serve with X */
#define GD_MARK_WON   2u /* a client was given W for it */
unsigned metatab_get(struct metatab *t, const void *key, size_t klen,
		     uint64_t cas);
/* Set @bits on @key at @cas; returns the bits before. */
unsigned metatab_set(struct metatab *t, const void *key, size_t klen,
		     uint64_t cas, unsigned bits);
void metatab_clear(struct metatab *t, const void *key, size_t klen);


#endif
