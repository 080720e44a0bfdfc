/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The RESP (Redis) front-end: requests from resp_proto.c carried out on
 * the store, the keyspace memcache, HTTP and the mount share.  Values
 * stream both ways as memcache's do: a GET sends "$N\r\n" and the RAM
 * head at once and the tail as its reads complete; a SET whose value is
 * a big bulk feeds a store writer as the bytes arrive.
 *
 * This room is the request loop and the seam (resp_ops): parse, look the
 * command up, check arity, AUTH and the write policy as Redis orders
 * them, dispatch, continue the job in progress, release.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "resp.h"

static _Atomic uint64_t next_client_id = 1;

/* ---- the command table ---- */

#define CMD(n, a, f, fn, g, s, v, fk, lk, st)    \
	{                                        \
		n, a, f, fn, g, s, v, fk, lk, st \
	}
const struct resp_cmd resp_cmds[] = {
	CMD("get", 2, 0, resp_cmd_get, "string",
	    "Returns the string value "
	    "of a key.",
	    "1.0.0", 1, 1, 1),
	CMD("set", -3, RC_WRITE, resp_cmd_set, "string",
	    "Sets the string "
	    "value of a key, ignoring its type.",
	    "1.0.0", 1, 1, 1),
	CMD("mget", -2, 0, resp_cmd_mget, "string",
	    "Atomically returns the "
	    "string values of one or more keys.",
	    "1.0.0", 1, -1, 1),
	CMD("mset", -3, RC_WRITE, resp_cmd_mset, "string",
	    "Atomically "
	    "creates or modifies the string values of one or more keys.",
	    "1.0.1", 1, -1, 2),
	CMD("del", -2, RC_WRITE, resp_cmd_del, "generic",
	    "Deletes one or "
	    "more keys.",
	    "1.0.0", 1, -1, 1),
	CMD("unlink", -2, RC_WRITE, resp_cmd_del, "generic",
	    "Asynchronously "
	    "deletes one or more keys.",
	    "4.0.0", 1, -1, 1),
	CMD("exists", -2, 0, resp_cmd_exists, "generic",
	    "Determines whether "
	    "one or more keys exist.",
	    "1.0.0", 1, -1, 1),
	CMD("strlen", 2, 0, resp_cmd_strlen, "string",
	    "Returns the length "
	    "of a string value.",
	    "2.2.0", 1, 1, 1),
	CMD("getrange", 4, 0, resp_cmd_getrange, "string",
	    "Returns a "
	    "substring of the string stored at a key.",
	    "2.4.0", 1, 1, 1),
	CMD("setrange", 4, RC_WRITE, resp_cmd_setrange, "string",
	    "Overwrites a part of a string value with another by an offset.",
	    "2.2.0", 1, 1, 1),
	CMD("hset", -4, RC_WRITE, resp_cmd_hset, "hash",
	    "Creates or "
	    "modifies the value of a field in a hash.",
	    "2.0.0", 1, 1, 1),
	CMD("hget", 3, 0, resp_cmd_hget, "hash",
	    "Returns the value of a "
	    "field in a hash.",
	    "2.0.0", 1, 1, 1),
	CMD("hdel", -3, RC_WRITE, resp_cmd_hdel, "hash",
	    "Deletes one or "
	    "more fields and their values from a hash.",
	    "2.0.0", 1, 1, 1),
	CMD("hgetall", 2, 0, resp_cmd_hgetall, "hash",
	    "Returns all fields "
	    "and values in a hash.",
	    "2.0.0", 1, 1, 1),
	CMD("hlen", 2, 0, resp_cmd_card, "hash",
	    "Returns the number of "
	    "fields in a hash.",
	    "2.0.0", 1, 1, 1),
	CMD("zadd", -4, RC_WRITE, resp_cmd_zadd, "sorted_set",
	    "Adds one or "
	    "more members to a sorted set, or updates their scores.",
	    "1.2.0", 1, 1, 1),
	CMD("zscore", 3, 0, resp_cmd_zscore, "sorted_set",
	    "Returns the "
	    "score of a member in a sorted set.",
	    "1.2.0", 1, 1, 1),
	CMD("zrem", -3, RC_WRITE, resp_cmd_zrem, "sorted_set",
	    "Removes one "
	    "or more members from a sorted set.",
	    "1.2.0", 1, 1, 1),
	CMD("zrange", -4, 0, resp_cmd_zrange, "sorted_set",
	    "Returns members "
	    "in a sorted set within a range of indexes.",
	    "1.2.0", 1, 1, 1),
	CMD("zcard", 2, 0, resp_cmd_card, "sorted_set",
	    "Returns the number "
	    "of members in a sorted set.",
	    "1.2.0", 1, 1, 1),
	CMD("expire", -3, RC_WRITE, resp_cmd_expire, "generic",
	    "Sets the "
	    "expiration time of a key in seconds.",
	    "1.0.0", 1, 1, 1),
	CMD("pexpire", -3, RC_WRITE, resp_cmd_expire, "generic",
	    "Sets the "
	    "expiration time of a key in milliseconds.",
	    "2.6.0", 1, 1, 1),
	CMD("ttl", 2, 0, resp_cmd_ttl, "generic",
	    "Returns the expiration "
	    "time in seconds of a key.",
	    "1.0.0", 1, 1, 1),
	CMD("pttl", 2, 0, resp_cmd_ttl, "generic",
	    "Returns the expiration "
	    "time in milliseconds of a key.",
	    "2.6.0", 1, 1, 1),
	CMD("persist", 2, RC_WRITE, resp_cmd_persist, "generic",
	    "Removes "
	    "the expiration time of a key.",
	    "2.2.0", 1, 1, 1),
	CMD("type", 2, 0, resp_cmd_type, "generic",
	    "Determines the type of "
	    "value stored at a key.",
	    "1.0.0", 1, 1, 1),
	CMD("scan", -2, 0, resp_cmd_scan, "generic",
	    "Iterates over the key "
	    "names in the database.",
	    "2.8.0", 0, 0, 0),
	CMD("dbsize", 1, 0, resp_cmd_dbsize, "server",
	    "Returns the number "
	    "of keys in the database.",
	    "1.0.0", 0, 0, 0),
	CMD("flushdb", -1, RC_WRITE | RC_ADMIN, resp_cmd_flush, "server",
	    "Remove all keys from the current database.", "1.0.0", 0, 0, 0),
	CMD("flushall", -1, RC_WRITE | RC_ADMIN, resp_cmd_flush, "server",
	    "Removes all keys from all databases.", "1.0.0", 0, 0, 0),
	CMD("ping", -1, 0, resp_cmd_ping, "connection",
	    "Returns the "
	    "server's liveliness response.",
	    "1.0.0", 0, 0, 0),
	CMD("echo", 2, 0, resp_cmd_echo, "connection",
	    "Returns the given "
	    "string.",
	    "1.0.0", 0, 0, 0),
	CMD("select", 2, 0, resp_cmd_select, "connection",
	    "Changes the "
	    "selected database.",
	    "1.0.0", 0, 0, 0),
	CMD("quit", -1, RC_NOAUTH, resp_cmd_quit, "connection",
	    "Closes the "
	    "connection.",
	    "1.0.0", 0, 0, 0),
	CMD("reset", 1, RC_NOAUTH, resp_cmd_reset, "connection",
	    "Resets the "
	    "connection.",
	    "6.2.0", 0, 0, 0),
	CMD("hello", -1, RC_NOAUTH, resp_cmd_hello, "connection",
	    "Handshakes "
	    "with the Redis server.",
	    "6.0.0", 0, 0, 0),
	CMD("auth", -2, RC_NOAUTH, resp_cmd_auth, "connection",
	    "Authenticates the connection.", "1.0.0", 0, 0, 0),
	CMD("client", -2, 0, resp_cmd_client, "connection",
	    "A container for "
	    "client connection commands.",
	    "2.4.0", 0, 0, 0),
	CMD("command", -1, 0, resp_cmd_command, "server",
	    "Returns detailed "
	    "information about all commands.",
	    "2.8.13", 0, 0, 0),
	CMD("config", -2, 0, resp_cmd_config, "server",
	    "A container for "
	    "server configuration commands.",
	    "2.0.0", 0, 0, 0),
	CMD("info", -1, 0, resp_cmd_info, "server",
	    "Returns information and "
	    "statistics about the server.",
	    "1.0.0", 0, 0, 0),
};
const unsigned resp_ncmds = sizeof(resp_cmds) / sizeof(resp_cmds[0]);

static const struct resp_cmd *cmd_lookup(const struct resp_arg *a)
{
	for (unsigned i = 0; i < resp_ncmds; i++)
		if (resp_is(a, resp_cmds[i].name))
			return &resp_cmds[i];
	return NULL;
}

/* ---- COMMAND: the table, as clients ask for it ---- */

static void command_info(struct conn *c, const struct resp_cmd *k)
{
	unsigned nflags = 1 + !!(k->flags & RC_NOAUTH);

	resp_array(c, 10);
	resp_bulk_str(c, k->name);
	resp_int(c, k->arity);
	resp_set(c, nflags);
	if (k->flags & RC_WRITE)
		ROUT(c, "+write\r\n");
	else
		ROUT(c, "+readonly\r\n");
	if (k->flags & RC_NOAUTH)
		ROUT(c, "+no_auth\r\n");
	resp_int(c, k->first_key);
	resp_int(c, k->last_key);
	resp_int(c, k->step);
	resp_set(c, 1);
	conn_printf(c, "+@%s\r\n", k->group);
	resp_set(c, 0);
	resp_array(c, 0);
	resp_array(c, 0);
}

static void command_docs(struct conn *c, const struct resp_cmd *k)
{
	resp_bulk_str(c, k->name);
	resp_map(c, 3);
	resp_bulk_str(c, "summary");
	resp_bulk_str(c, k->summary);
	resp_bulk_str(c, "since");
	resp_bulk_str(c, k->since);
	resp_bulk_str(c, "group");
	resp_bulk_str(c, k->group);
}


enum conn_run resp_cmd_command(struct conn *c, struct resp_req *q)
{
	if (q->argc == 1) {
		resp_array(c, resp_ncmds);
		for (unsigned i = 0; i < resp_ncmds; i++)
			command_info(c, &resp_cmds[i]);
	} else if (resp_is(&q->argv[1], "count")) {
		if (q->argc != 2)
			resp_arity_err(c, "command|count");
		else
			resp_int(c, resp_ncmds);
	} else if (resp_is(&q->argv[1], "info")) {
		resp_array(c, q->argc == 2 ? resp_ncmds : q->argc - 2);
		for (unsigned i = 0; q->argc == 2 && i < resp_ncmds; i++)
			command_info(c, &resp_cmds[i]);
		for (unsigned i = 2; i < q->argc; i++) {
			const struct resp_cmd *k = cmd_lookup(&q->argv[i]);

			if (k)
				command_info(c, k);
			else
				resp_null_array(c);
		}
	} else if (resp_is(&q->argv[1], "docs")) {
		unsigned n = 0;

		for (unsigned i = 2; i < q->argc; i++)
			n += !!cmd_lookup(&q->argv[i]);
		resp_map(c, q->argc == 2 ? resp_ncmds : n);
		for (unsigned i = 0; q->argc == 2 && i < resp_ncmds; i++)
			command_docs(c, &resp_cmds[i]);
		for (unsigned i = 2; i < q->argc; i++) {
			const struct resp_cmd *k = cmd_lookup(&q->argv[i]);

			if (k)
				command_docs(c, k);
		}
	} else {
		resp_subcmd_unknown(c, &q->argv[1], "COMMAND");
	}
	return RUN_INPUT;
}

/* ---- the write policy and AUTH ---- */

/*
 * memcache's policy: with --resp-password every connection that got this
 * far has authenticated; without one, writes come from loopback only.
 */
static bool may_write(const struct conn *c)
{
	return c->w->gd->set.resp_password || c->loopback;
}

static bool auth_needed(const struct conn *c)
{
	return c->w->gd->set.resp_password && !resp_of(c)->authed;
}

/*
 * Redis 7's text: each argument quoted with a space after it, until the
 * list reaches 128 bytes.
 */
static void unknown_command(struct conn *c, const struct resp_req *q)
{
	char args[300];
	size_t n = 0;

	args[0] = 0;
	for (unsigned i = 1; i < q->argc && n < 128; i++) {
		int w = snprintf(args + n, sizeof(args) - n, "'%.*s' ",
				 (int)(q->argv[i].len < 128 - n ?
					       q->argv[i].len :
					       128 - n),
				 q->argv[i].p);

		if (w < 0)
			break;
		n += (size_t)w;
		if (n >= sizeof(args))
			n = sizeof(args) - 1;
	}
	resp_errf(c,
		  "ERR unknown command '%.*s', with args beginning "
		  "with: %s",
		  (int)(q->argv[0].len > 128 ? 128 : q->argv[0].len),
		  q->argv[0].p, args);
}

/*
 * Check a command as Redis's processCommand() does, in its order:
 * unknown, arity, authentication, then the write policy.  NULL when
 * refused (the reply is queued).
 */
static const struct resp_cmd *cmd_check(struct conn *c,
					const struct resp_req *q)
{
	const struct resp_cmd *cmd = cmd_lookup(&q->argv[0]);
	struct gd *gd = c->w->gd;

	if (!cmd) {
		unknown_command(c, q);
		return NULL;
	}
	if ((cmd->arity > 0 && q->nargs != (uint64_t)cmd->arity) ||
	    (cmd->arity < 0 && q->nargs < (uint64_t)-cmd->arity)) {
		resp_arity_err(c, cmd->name);
		return NULL;
	}
	if (auth_needed(c) && !(cmd->flags & RC_NOAUTH)) {
		resp_err(c, "NOAUTH Authentication required.");
		return NULL;
	}
	if ((cmd->flags & RC_WRITE) && gd->set.mirror) {
		CNT(c->w, mirror_writes_refused);
		resp_err(c, "READONLY goblind is a mirror: it stores what its "
			    "origin serves");
		return NULL;
	}
	if ((cmd->flags & RC_WRITE) && !may_write(c)) {
		CNT(c->w, mc_denied);
		resp_err(c, "NOPERM goblind takes writes from loopback only "
			    "(see --resp-password)");
		return NULL;
	}
	return cmd;
}

/* ---- a big bulk (only SET's value may be one) ---- */

/*
 * A request with a bulk too long to parse whole, that is not SET's
 * value: its bytes and the arguments after it are read through (the
 * framing holds) and the request is refused.
 */
static void swallow_start(struct conn *c, const struct resp_req *q,
			  const char *why)
{
	struct resp_state *s = resp_of(c);

	s->job = RJ_SWALLOW;
	s->left = q->big_len + 2;
	s->tail = q->nargs - q->argc - 1;
	snprintf(s->cmd, sizeof(s->cmd), "%s", why);
	s->big_len = q->big_len;
}

static enum conn_run swallow_run(struct conn *c)
{
	struct resp_state *s = resp_of(c);

	for (;;) {
		while (s->left) {
			const uint8_t *p;
			ssize_t got = conn_take(c, s->left, &p);

			if (got == 0)
				return RUN_WAIT;
			if (got < 0)
				return RUN_CLOSE;
			s->left -= (uint64_t)got;
		}
		if (!s->tail)
			break;
		/* the next bulk's "$N\r\n": its bytes are skipped unparsed */
		{
			const char *b = c->rbuf + c->rstart;
			size_t avail = c->rend - c->rstart;
			const char *nl = memchr(b, '\n', avail);
			long long n;

			if (!nl)
				return avail > RESP_COUNT_LINE_MAX ? RUN_CLOSE :
								     RUN_INPUT;
			if (b[0] != '$' || nl - b < 3 ||
			    !resp_ll(b + 1, (size_t)(nl - b) - 2, &n) ||
			    n < 0 || (uint64_t)n > c->w->gd->set.max_item) {
				resp_err(c, "ERR Protocol error: invalid bulk "
					    "length");
				return RUN_CLOSE;
			}
			c->rstart += (size_t)(nl - b) + 1;
			s->left = (uint64_t)n + 2;
			s->tail--;
		}
	}
	s->job = RJ_NONE;
	if (s->cmd[0] == '-') /* refused at the start: its reply is out */
		return RUN_INPUT;
	if (!strcmp(s->cmd, "NOAUTH"))
		resp_err(c, "NOAUTH Authentication required.");
	else
		resp_errf(c,
			  "ERR goblind: an argument of %" PRIu64 " bytes to "
			  "'%s': only SET's value may be longer than %u bytes",
			  s->big_len, s->cmd, RESP_BIG_MIN);
	return RUN_INPUT;
}

static enum conn_run big_start(struct conn *c, struct resp_req *q)
{
	const struct resp_cmd *cmd;
	struct resp_state *s = resp_of(c);

	if (q->argc == 2 && resp_is(&q->argv[0], "set")) {
		if (auth_needed(c)) {
			swallow_start(c, q, "NOAUTH");
			return RUN_INPUT;
		}
		cmd = cmd_check(c, q);
		if (!cmd) { /* the reply is queued: read the value through */
			swallow_start(c, q, "set");
			s->cmd[0] = '-';
			return RUN_INPUT;
		}
		return resp_set_big_start(c, q);
	}
	if (auth_needed(c)) {
		swallow_start(c, q, "NOAUTH");
		return RUN_INPUT;
	}
	swallow_start(c, q, "");
	if (q->argc)
		snprintf(s->cmd, sizeof(s->cmd), "%.*s",
			 (int)(q->argv[0].len < 24 ? q->argv[0].len : 24),
			 q->argv[0].p);
	return RUN_INPUT;
}

/* ---- the loop ---- */

static enum conn_run run_job(struct conn *c)
{
	struct resp_state *s = resp_of(c);

	switch (s->job) {
	case RJ_VALUE:
		return resp_value_run(c);
	case RJ_MGET:
		return resp_mget_run(c);
	case RJ_SETBIG:
	case RJ_SETTAIL:
		return resp_set_big_run(c);
	case RJ_SWALLOW:
		return swallow_run(c);
	default:
		return RUN_INPUT;
	}
}

static void conn_start(struct conn *c)
{
	struct resp_state *s = resp_of(c);

	s->proto = 2;
	s->id = atomic_fetch_add(&next_client_id, 1);
	s->authed = !c->w->gd->set.resp_password;
}

static enum conn_run resp_conn_run(struct conn *c)
{
	struct resp_state *s = resp_of(c);
	struct resp_req *q = resp_req_of(c);

	if (!s->proto)
		conn_start(c);
	for (;;) {
		struct resp_limits lim = {
			.whole_max = RESP_WHOLE_MAX,
			.big_min = RESP_BIG_MIN,
			.bulk_max = c->w->gd->set.max_item,
			.mbulk_max = RESP_MBULK_MAX,
			.unauth = auth_needed(c),
		};
		const struct resp_cmd *cmd;
		enum resp_parse_result pr;
		size_t used = 0;
		enum conn_run st;

		if (s->job != RJ_NONE) {
			st = run_job(c);
			if (s->job != RJ_NONE || st != RUN_INPUT)
				return st;
		}
		if (c->closing)
			return RUN_CLOSE;
		if (c->wend - c->wstart > GD_WBUF_HIGH)
			return RUN_OUTPUT;
		pr = resp_parse(c->rbuf + c->rstart, c->rend - c->rstart, &lim,
				q, &used);
		switch (pr) {
		case RESP_PARSE_MORE:
			return RUN_INPUT;
		case RESP_PARSE_EMPTY:
			c->rstart += used;
			continue;
		case RESP_PARSE_TOO_LONG:
			resp_errf(c,
				  "ERR Protocol error: goblind: a request "
				  "longer than %u bytes (only SET's value may "
				  "be longer)",
				  RESP_WHOLE_MAX);
			return RUN_CLOSE;
		case RESP_PARSE_ERROR:
			resp_errf(c, "ERR Protocol error: %s", q->err);
			return RUN_CLOSE;
		case RESP_PARSE_BIG:
			c->rstart += used;
			st = big_start(c, q);
			if (st != RUN_INPUT)
				return st;
			continue;
		case RESP_PARSE_OK:
			break;
		}
		c->rstart += used;
		cmd = cmd_check(c, q);
		if (!cmd)
			continue;
		st = cmd->fn(c, q);
		if (st != RUN_INPUT)
			return st;
	}
}

static void resp_conn_release(struct conn *c)
{
	struct resp_state *s = resp_of(c);

	if (s->r)
		gd_reader_close(c->w, s->r);
	s->r = NULL;
	resp_str_release(s);
	s->job = RJ_NONE;
	conn_chunks_drop(c);
	free(s->buf);
	s->buf = NULL;
	s->buf_cap = s->buf_len = 0;
}

static bool resp_conn_idle(const struct conn *c)
{
	return resp_of(c)->job == RJ_NONE;
}

static void *resp_worker_init(struct worker *w)
{
	(void)w;
	return calloc(1, sizeof(struct resp_worker));
}

static void resp_worker_fini(struct worker *w, void *pstate)
{
	(void)w;
	free(pstate);
}

const struct proto_ops resp_ops = {
	.name = "resp",
	.conn_size = sizeof(struct resp_conn),
	.run = resp_conn_run,
	.release = resp_conn_release,
	.idle = resp_conn_idle,
	.worker_init = resp_worker_init,
	.worker_fini = resp_worker_fini,
	.busy_reply = "-ERR max number of clients reached\r\n",
};
