/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The RESP (Redis) protocol's rooms share this header (internal to
 * netd/): a RESP connection's state, the command table, and what one
 * room calls in another.
 *
 *   resp.c           the request loop and the seam (resp_ops): parse,
 *                    AUTH and the write policy, dispatch, the job in
 *                    progress (a value streamed out or in), release
 *   resp_cmd_str.c   strings: GET SET MGET MSET DEL UNLINK EXISTS
 *                    GETRANGE STRLEN SETRANGE, values streamed head first
 *                    and big SET values streamed into a store writer
 *   resp_cmd_keys.c  the keyspace: EXPIRE PEXPIRE TTL PTTL PERSIST TYPE
 *                    SCAN DBSIZE FLUSHDB FLUSHALL
 *   resp_cmd_coll.c  small collections as store objects: HSET HGET HDEL
 *                    HGETALL HLEN ZADD ZSCORE ZREM ZRANGE ZCARD
 *   resp_cmd_srv.c   the connection and the server: PING ECHO SELECT QUIT
 *                    RESET HELLO AUTH CLIENT COMMAND CONFIG INFO
 *   resp_serve.c     options, help, listeners (what main.c calls)
 *   resp_reply.c     replies in RESP2 or RESP3
 *   resp_proto.c     the pure parser (resp_proto.h: unit tests, fuzz)
 *
 * Calls go one way: the loop calls the command rooms, which call
 * resp_reply.c and conn.c.
 */
#ifndef GOBLIND_RESP_H
#define GOBLIND_RESP_H

#include <stdio.h>
#include <time.h>

#include "goblind.h"
#include "resp_proto.h"

/* Bulks longer than this stream (SET's value) instead of being parsed. */
#define RESP_BIG_MIN   (GD_RBUF / 2)
/* A request parsed whole (every argument but a big one) fits in this. */
#define RESP_WHOLE_MAX (GD_RBUF + GD_GET_LINE_MAX)

/* What a request in progress holds. */
enum resp_job {
	RJ_NONE = 0,
	RJ_VALUE,   /* a value being sent: s->r */
	RJ_MGET,    /* MGET: the keys in s->buf from s->kpos on */
	RJ_SETBIG,  /* SET's big value being taken into s->wr */
	RJ_SETTAIL, /* ... its arguments after it, then the commit */
	RJ_SWALLOW, /* a refused request's big bulk, then its tail */
};

struct resp_state {
	enum resp_job job;
	unsigned proto; /* 2, or 3 after HELLO 3 */
	bool authed;	/* AUTH passed (or no --resp-password) */
	uint64_t id;	/* CLIENT ID */
	char name[64];	/* CLIENT SETNAME */
	size_t name_len;
	struct gs_reader *r; /* RJ_VALUE, RJ_MGET: the value being sent */
	/* RJ_SETBIG, RJ_SETTAIL */
	struct gs_writer *wr;
	uint64_t left; /* bytes of the big bulk to come, "\r\n" included */
	uint64_t tail; /* arguments after it */
	bool bad_crlf; /* the bulk did not end with "\r\n" */
	int err;       /* the first store error of the put */
	uint64_t big_len;
	/* a copy of what outlives rbuf: SET's key, MGET's keys */
	char *buf;
	size_t buf_cap, buf_len;
	size_t kpos;	/* RJ_MGET: the next key's "$" in buf */
	uint64_t kleft; /* ... keys left */
	char cmd[32];	/* RJ_SWALLOW: the command refused, for its error */
};

struct resp_conn {
	struct conn c;
	struct resp_state s;
};

/* A worker's RESP state: the request being parsed (it is large). */
struct resp_worker {
	struct resp_req req;
	struct gs_meta meta; /* gs_stat's (it is large) */
	struct gs_attr attr; /* resp_kind()'s */
};

static inline struct resp_state *resp_of(const struct conn *c)
{
	return &((struct resp_conn *)(uintptr_t)c)->s;
}

static inline struct resp_req *resp_req_of(const struct conn *c)
{
	return &((struct resp_worker *)conn_pstate(c))->req;
}

static inline struct gs_store *resp_store(const struct conn *c)
{
	return c->w->gd->s;
}

/* A command: Redis's arity (n: exactly n words, -n: at least n). */
struct resp_cmd {
	const char *name; /* lower case, as errors and COMMAND name it */
	int arity;
	unsigned flags; /* RC_* */
	enum conn_run (*fn)(struct conn *c, struct resp_req *q);
	const char *group, *summary, *since; /* COMMAND DOCS */
	int first_key, last_key, step;	     /* COMMAND's key positions */
};
#define RC_WRITE  0x1 /* changes the store: the write policy applies */
#define RC_NOAUTH 0x2 /* allowed before AUTH */
#define RC_ADMIN  0x4 /* FLUSHDB FLUSHALL */

/* ---- resp_serve.c: what main.c calls ---- */

struct option;
/* Fill @o with RESP's long options (has_arg, @val); their count. */
int resp_getopt(struct option *o, int val);
/* Their lines of --help. */
void resp_usage(FILE *f);
/* Set RESP option @name (no dashes) to @val: false when it is none of
 * RESP's; *@why says what is wrong with @val, or NULL. */
bool resp_option(struct gd_settings *s, const char *name, const char *val,
		 const char **why);
/* Defaults and checks once every option is in (usage_die on a bad one). */
void resp_settle(struct gd_settings *s);
/* Register RESP and open its listeners, if served (die on failure). */
void resp_serve(struct gd *gd);
void resp_close(struct gd *gd);

extern const struct resp_cmd resp_cmds[];
extern const unsigned resp_ncmds;
extern const struct proto_ops resp_ops;

/* ---- resp_reply.c ---- */

/* What a store object is to RESP: its attribute record says. */
#define RESP_KIND_STRING 0
#define RESP_KIND_HASH	 1
#define RESP_KIND_ZSET	 2
int resp_kind(const struct conn *c, const struct gs_meta *mt);
/* The attribute record of a collection of @kind into @buf: its length. */
long resp_kind_attr(int kind, uint8_t *buf, size_t cap);
/* "string", "hash", "zset" (TYPE). */
const char *resp_kind_name(int kind);

#define ROUT(c, lit) conn_out(c, lit, sizeof(lit) - 1)
void resp_ok(struct conn *c);
/* "-" @msg "\r\n": @msg starts with its code ("ERR ...", "WRONGTYPE ..."). */
void resp_err(struct conn *c, const char *msg);
__attribute__((format(printf, 2, 3))) void resp_errf(struct conn *c,
						     const char *fmt, ...);
void resp_simple(struct conn *c, const char *s);
void resp_int(struct conn *c, long long v);
void resp_bulk(struct conn *c, const void *p, size_t len);
void resp_bulk_str(struct conn *c, const char *s);
void resp_null(struct conn *c);	      /* $-1, or RESP3's _ */
void resp_null_array(struct conn *c); /* *-1, or RESP3's _ */
void resp_array(struct conn *c, uint64_t n);
void resp_map(struct conn *c, uint64_t n);	/* RESP2: an array of 2n */
void resp_set(struct conn *c, uint64_t n);	/* RESP2: an array */
void resp_double_out(struct conn *c, double d); /* RESP3 ",", else bulk */
void resp_arity_err(struct conn *c, const char *name);
void resp_syntax_err(struct conn *c);
void resp_not_int(struct conn *c);
void resp_wrongtype(struct conn *c);
/* "ERR unknown subcommand 'x'. Try CMD HELP." */
void resp_subcmd_unknown(struct conn *c, const struct resp_arg *a,
			 const char *cmd);

/* ---- resp_cmd_str.c ---- */

enum conn_run resp_cmd_get(struct conn *c, struct resp_req *q);
enum conn_run resp_cmd_set(struct conn *c, struct resp_req *q);
enum conn_run resp_cmd_mget(struct conn *c, struct resp_req *q);
enum conn_run resp_cmd_mset(struct conn *c, struct resp_req *q);
enum conn_run resp_cmd_del(struct conn *c, struct resp_req *q);
enum conn_run resp_cmd_exists(struct conn *c, struct resp_req *q);
enum conn_run resp_cmd_strlen(struct conn *c, struct resp_req *q);
enum conn_run resp_cmd_getrange(struct conn *c, struct resp_req *q);
enum conn_run resp_cmd_setrange(struct conn *c, struct resp_req *q);
/* RJ_VALUE: send the rest of s->r; RUN_INPUT once it is queued. */
enum conn_run resp_value_run(struct conn *c);
enum conn_run resp_mget_run(struct conn *c);
/* A SET whose value is a big bulk: q->argc words before it parsed. */
enum conn_run resp_set_big_start(struct conn *c, struct resp_req *q);
enum conn_run resp_set_big_run(struct conn *c);
/* Drop what a request in progress holds (the connection closes). */
void resp_str_release(struct resp_state *s);

/* ---- resp_cmd_coll.c ---- */

/* A collection's bounds: entries, and bytes of its encoding. */
#define RESP_COLL_MAX_ITEMS 4096
#define RESP_COLL_MAX_BYTES (1u << 20)

enum conn_run resp_cmd_hset(struct conn *c, struct resp_req *q);
enum conn_run resp_cmd_hget(struct conn *c, struct resp_req *q);
enum conn_run resp_cmd_hdel(struct conn *c, struct resp_req *q);
enum conn_run resp_cmd_hgetall(struct conn *c, struct resp_req *q);
enum conn_run resp_cmd_card(struct conn *c, struct resp_req *q);
enum conn_run resp_cmd_zadd(struct conn *c, struct resp_req *q);
enum conn_run resp_cmd_zscore(struct conn *c, struct resp_req *q);
enum conn_run resp_cmd_zrem(struct conn *c, struct resp_req *q);
enum conn_run resp_cmd_zrange(struct conn *c, struct resp_req *q);

/* ---- resp_cmd_keys.c ---- */

enum conn_run resp_cmd_expire(struct conn *c, struct resp_req *q);
enum conn_run resp_cmd_ttl(struct conn *c, struct resp_req *q);
enum conn_run resp_cmd_persist(struct conn *c, struct resp_req *q);
enum conn_run resp_cmd_type(struct conn *c, struct resp_req *q);
enum conn_run resp_cmd_scan(struct conn *c, struct resp_req *q);
enum conn_run resp_cmd_dbsize(struct conn *c, struct resp_req *q);
enum conn_run resp_cmd_flush(struct conn *c, struct resp_req *q);

/* ---- resp_cmd_srv.c ---- */

enum conn_run resp_cmd_ping(struct conn *c, struct resp_req *q);
enum conn_run resp_cmd_echo(struct conn *c, struct resp_req *q);
enum conn_run resp_cmd_select(struct conn *c, struct resp_req *q);
enum conn_run resp_cmd_quit(struct conn *c, struct resp_req *q);
enum conn_run resp_cmd_reset(struct conn *c, struct resp_req *q);
enum conn_run resp_cmd_hello(struct conn *c, struct resp_req *q);
enum conn_run resp_cmd_auth(struct conn *c, struct resp_req *q);
enum conn_run resp_cmd_client(struct conn *c, struct resp_req *q);
enum conn_run resp_cmd_command(struct conn *c, struct resp_req *q);
enum conn_run resp_cmd_config(struct conn *c, struct resp_req *q);
enum conn_run resp_cmd_info(struct conn *c, struct resp_req *q);

#endif
