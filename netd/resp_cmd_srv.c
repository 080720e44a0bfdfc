/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RESP's connection and server commands: PING ECHO SELECT QUIT RESET
 * HELLO AUTH CLIENT COMMAND CONFIG INFO, with Redis 7's replies and
 * error texts, enough for redis-cli, redis-py, redis-benchmark and
 * twemproxy to connect and look around.
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "resp.h"

/* The Redis version whose protocol goblind speaks (HELLO, INFO). */
#define RESP_REDIS_VERSION "7.0.0"

enum conn_run resp_cmd_ping(struct conn *c, struct resp_req *q)
{
	if (q->argc > 2)
		resp_arity_err(c, "ping");
	else if (q->argc == 2)
		resp_bulk(c, q->argv[1].p, q->argv[1].len);
	else
		ROUT(c, "+PONG\r\n");
	return RUN_INPUT;
}

enum conn_run resp_cmd_echo(struct conn *c, struct resp_req *q)
{
	resp_bulk(c, q->argv[1].p, q->argv[1].len);
	return RUN_INPUT;
}

/* One database: SELECT 0, as a Redis started with --databases 1. */
enum conn_run resp_cmd_select(struct conn *c, struct resp_req *q)
{
	long long db;

	if (!resp_ll(q->argv[1].p, q->argv[1].len, &db))
		resp_not_int(c);
	else if (db != 0)
		resp_err(c, "ERR DB index is out of range");
	else
		resp_ok(c);
	return RUN_INPUT;
}

enum conn_run resp_cmd_quit(struct conn *c, struct resp_req *q)
{
	(void)q;
	resp_ok(c);
	return RUN_CLOSE;
}

enum conn_run resp_cmd_reset(struct conn *c, struct resp_req *q)
{
	struct resp_state *s = resp_of(c);

	(void)q;
	s->proto = 2;
	s->name_len = 0;
	s->authed = !c->w->gd->set.resp_password;
	ROUT(c, "+RESET\r\n");
	return RUN_INPUT;
}

/* Redis's default user: any name but "default" fails. */
static bool password_ok(struct conn *c, const struct resp_arg *user,
			const struct resp_arg *pass)
{
	const char *pw = c->w->gd->set.resp_password;

	if (!resp_is(user, "default"))
		return false;
	if (!pw)
		return true; /* nopass: any password */
	return pass->len == strlen(pw) && !memcmp(pass->p, pw, pass->len);
}

static const struct resp_arg default_user = { "default", 7 };

enum conn_run resp_cmd_auth(struct conn *c, struct resp_req *q)
{
	const struct resp_arg *user = &default_user, *pass = &q->argv[1];

	if (q->argc > 3) {
		resp_syntax_err(c);
		return RUN_INPUT;
	}
	if (q->argc == 2 && !c->w->gd->set.resp_password) {
		resp_err(c, "ERR AUTH <password> called without any password "
			    "configured for the default user. Are you sure "
			    "your configuration is correct?");
		return RUN_INPUT;
	}
	if (q->argc == 3) {
		user = &q->argv[1];
		pass = &q->argv[2];
	}
	if (!password_ok(c, user, pass)) {
		resp_err(c, "WRONGPASS invalid username-password pair or user "
			    "is disabled.");
		return RUN_INPUT;
	}
	resp_of(c)->authed = true;
	resp_ok(c);
	return RUN_INPUT;
}

/* Redis's clientSetName(): printable, no spaces.  False: replied. */
static bool set_name(struct conn *c, const struct resp_arg *n)
{
	struct resp_state *s = resp_of(c);

	for (size_t i = 0; i < n->len; i++)
		if (n->p[i] < '!' || n->p[i] > '~') {
			resp_err(c, "ERR Client names cannot contain spaces, "
				    "newlines or special characters.");
			return false;
		}
	if (n->len > sizeof(s->name)) {
		resp_errf(c, "ERR goblind: a client name of at most %zu bytes",
			  sizeof(s->name));
		return false;
	}
	memcpy(s->name, n->p, n->len);
	s->name_len = n->len;
	return true;
}

enum conn_run resp_cmd_hello(struct conn *c, struct resp_req *q)
{
	struct resp_state *s = resp_of(c);
	const struct resp_arg *user = NULL, *pass = NULL, *name = NULL;
	long long ver = 0;

	if (q->argc >= 2) {
		if (!resp_ll(q->argv[1].p, q->argv[1].len, &ver)) {
			resp_err(c, "ERR Protocol version is not an integer or "
				    "out of range");
			return RUN_INPUT;
		}
		if (ver < 2 || ver > 3) {
			resp_err(c, "NOPROTO unsupported protocol version");
			return RUN_INPUT;
		}
	}
	for (unsigned j = 2; j < q->argc; j++) {
		unsigned more = q->argc - 1 - j;

		if (resp_is(&q->argv[j], "auth") && more >= 2) {
			user = &q->argv[j + 1];
			pass = &q->argv[j + 2];
			j += 2;
		} else if (resp_is(&q->argv[j], "setname") && more) {
			name = &q->argv[++j];
		} else {
			resp_errf(c, "ERR Syntax error in HELLO option '%.*s'",
				  (int)q->argv[j].len, q->argv[j].p);
			return RUN_INPUT;
		}
	}
	if (user) {
		if (!password_ok(c, user, pass)) {
			resp_err(c, "WRONGPASS invalid username-password pair "
				    "or user is disabled.");
			return RUN_INPUT;
		}
		s->authed = true;
	}
	if (!s->authed) {
		resp_err(c, "NOAUTH HELLO must be called with the client "
			    "already authenticated, otherwise the HELLO AUTH "
			    "<user> <pass> option can be used to "
			    "authenticate the client and select the RESP "
			    "protocol version at the same time");
		return RUN_INPUT;
	}
	if (name && !set_name(c, name))
		return RUN_INPUT;
	if (ver)
		s->proto = (unsigned)ver;
	resp_map(c, 7);
	resp_bulk_str(c, "server");
	resp_bulk_str(c, "redis");
	resp_bulk_str(c, "version");
	resp_bulk_str(c, RESP_REDIS_VERSION);
	resp_bulk_str(c, "proto");
	resp_int(c, s->proto);
	resp_bulk_str(c, "id");
	resp_int(c, (long long)s->id);
	resp_bulk_str(c, "mode");
	resp_bulk_str(c, "standalone");
	resp_bulk_str(c, "role");
	resp_bulk_str(c, "master");
	resp_bulk_str(c, "modules");
	resp_array(c, 0);
	return RUN_INPUT;
}

/* ---- CLIENT ---- */

static void peer_name(const struct conn *c, char *buf, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char ip[INET6_ADDRSTRLEN] = "?";

	if (getpeername(c->fd, (struct sockaddr *)&ss, &sl) < 0) {
		snprintf(buf, len, "?:0");
		return;
	}
	if (ss.ss_family == AF_INET) {
		struct sockaddr_in *a = (struct sockaddr_in *)&ss;

		inet_ntop(AF_INET, &a->sin_addr, ip, sizeof(ip));
		snprintf(buf, len, "%s:%u", ip, ntohs(a->sin_port));
	} else if (ss.ss_family == AF_INET6) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;

		inet_ntop(AF_INET6, &a->sin6_addr, ip, sizeof(ip));
		snprintf(buf, len, "%s:%u", ip, ntohs(a->sin6_port));
	} else {
		snprintf(buf, len, "%s:0", "/unixsocket");
	}
}


enum conn_run resp_cmd_client(struct conn *c, struct resp_req *q)
{
	struct resp_state *s = resp_of(c);
	const struct resp_arg *sub = &q->argv[1];
	char addr[128], line[512];
	int n;

	if (resp_is(sub, "id")) {
		if (q->argc != 2)
			resp_arity_err(c, "client|id");
		else
			resp_int(c, (long long)s->id);
	} else if (resp_is(sub, "getname")) {
		if (q->argc != 2)
			resp_arity_err(c, "client|getname");
		else if (!s->name_len)
			resp_null(c);
		else
			resp_bulk(c, s->name, s->name_len);
	} else if (resp_is(sub, "setname")) {
		if (q->argc != 3)
			resp_arity_err(c, "client|setname");
		else if (set_name(c, &q->argv[2]))
			resp_ok(c);
	} else if (resp_is(sub, "info")) {
		if (q->argc != 2) {
			resp_arity_err(c, "client|info");
			return RUN_INPUT;
		}
		peer_name(c, addr, sizeof(addr));
		n = snprintf(line, sizeof(line),
			     "id=%" PRIu64 " addr=%s fd=%d name=%.*s db=0 "
			     "multi=-1 cmd=client|info user=default resp=%u\n",
			     s->id, addr, c->fd, (int)s->name_len, s->name,
			     s->proto);
		if (s->proto == 3) /* Redis's verbatim string */
			conn_printf(c, "=%d\r\ntxt:%s\r\n", n + 4, line);
		else
			resp_bulk(c, line, (size_t)n);
	} else {
		resp_subcmd_unknown(c, sub, "CLIENT");
	}
	return RUN_INPUT;
}

/* ---- CONFIG GET ---- */

/* What clients ask at connect, answered from goblind's settings. */
static void config_get(struct conn *c, const struct resp_req *q)
{
	struct gd_settings *st = &c->w->gd->set;
	char v[64][32];
	const char *names[] = {
		"appendonly",
		"save",
		"databases",
		"maxmemory",
		"maxmemory-policy",
		"timeout",
		"port",
		"proto-max-bulk-len",
		"maxclients",
		"bind",
		"unixsocket",
		"cluster-enabled",
		"replica-read-only",
		"slave-read-only",
	};
	const char *vals[sizeof(names) / sizeof(names[0])];
	unsigned n = sizeof(names) / sizeof(names[0]), hits = 0;
	bool hit[sizeof(names) / sizeof(names[0])] = { 0 };

	snprintf(v[0], sizeof(v[0]), "%" PRIu64, st->so.memory);
	snprintf(v[1], sizeof(v[1]), "%u", st->idle_timeout);
	snprintf(v[2], sizeof(v[2]), "%u", st->resp_port);
	snprintf(v[3], sizeof(v[3]), "%" PRIu64, st->max_item);
	snprintf(v[4], sizeof(v[4]), "%u", st->resp_max_conns);
	vals[0] = "no";
	vals[1] = "";
	vals[2] = "1";
	vals[3] = v[0];
	vals[4] = "allkeys-lru";
	vals[5] = v[1];
	vals[6] = v[2];
	vals[7] = v[3];
	vals[8] = v[4];
	vals[9] = st->listen;
	vals[10] = st->resp_unixsocket ? st->resp_unixsocket : "";
	vals[11] = "no";
	vals[12] = "yes";
	vals[13] = "yes";
	for (unsigned j = 2; j < q->argc; j++)
		for (unsigned i = 0; i < n; i++)
			if (!hit[i] && resp_glob(q->argv[j].p, q->argv[j].len,
						 names[i], strlen(names[i]))) {
				hit[i] = true;
				hits++;
			}
	resp_map(c, hits);
	for (unsigned i = 0; i < n; i++)
		if (hit[i]) {
			resp_bulk_str(c, names[i]);
			resp_bulk_str(c, vals[i]);
		}
}

enum conn_run resp_cmd_config(struct conn *c, struct resp_req *q)
{
	if (resp_is(&q->argv[1], "get")) {
		if (q->argc < 3)
			resp_arity_err(c, "config|get");
		else
			config_get(c, q);
	} else if (resp_is(&q->argv[1], "set")) {
		resp_err(c, "ERR goblind: CONFIG SET is not supported: "
			    "options are set at start (goblind(8))");
	} else {
		resp_subcmd_unknown(c, &q->argv[1], "CONFIG");
	}
	return RUN_INPUT;
}

/* ---- INFO ---- */

static bool want(const struct resp_req *q, const char *sec, bool dflt)
{
	if (q->argc == 1)
		return dflt;
	for (unsigned i = 1; i < q->argc; i++)
		if (resp_is(&q->argv[i], sec) || resp_is(&q->argv[i], "all") ||
		    resp_is(&q->argv[i], "everything") ||
		    (dflt && resp_is(&q->argv[i], "default")))
			return true;
	return false;
}

static uint64_t rss_bytes(void)
{
	unsigned long size = 0, res = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (!f)
		return 0;
	if (fscanf(f, "%lu %lu", &size, &res) != 2)
		res = 0;
	fclose(f);
	return (uint64_t)res * (uint64_t)sysconf(_SC_PAGESIZE);
}

struct ks_ctx {
	uint64_t keys, expires;
};

static int ks_one(void *arg, const void *key, size_t klen,
		  const struct gs_meta *m)
{
	struct ks_ctx *k = arg;

	(void)key;
	(void)klen;
	k->keys++;
	k->expires += m->exptime != 0;
	return 0;
}

static void info_build(struct conn *c, const struct resp_req *q,
		       struct gd_buf *b, struct gd_counters *cn,
		       struct gs_stats *st)
{
	struct gd *gd = c->w->gd;
	int64_t up = time(NULL) - gd->start_time;

	if (want(q, "server", true))
		gd_buf_printf(b,
			      "# Server\r\nredis_version:%s\r\n"
			      "goblind_version:%s\r\nredis_mode:standalone\r\n"
			      "arch_bits:%zu\r\nprocess_id:%ld\r\n"
			      "tcp_port:%u\r\nuptime_in_seconds:%" PRId64
			      "\r\nuptime_in_days:%" PRId64 "\r\n\r\n",
			      RESP_REDIS_VERSION, GD_VERSION,
			      sizeof(void *) * 8, (long)getpid(),
			      gd->set.resp_port, up, up / 86400);
	if (want(q, "clients", true))
		gd_buf_printf(b,
			      "# Clients\r\nconnected_clients:%u\r\n"
			      "maxclients:%u\r\n\r\n",
			      atomic_load(&gd->proto_conns[c->proto->id]),
			      gd->set.resp_max_conns);
	if (want(q, "memory", true))
		gd_buf_printf(b,
			      "# Memory\r\nused_memory_rss:%" PRIu64 "\r\n"
			      "maxmemory:%" PRIu64 "\r\n"
			      "maxmemory_policy:allkeys-lru\r\n\r\n",
			      rss_bytes(), gd->set.so.memory);
	if (want(q, "stats", true))
		gd_buf_printf(b,
			      "# Stats\r\ntotal_connections_received:%" PRIu64
			      "\r\nkeyspace_hits:%" PRIu64
			      "\r\nkeyspace_misses:%" PRIu64
			      "\r\ntotal_net_input_bytes:%" PRIu64
			      "\r\ntotal_net_output_bytes:%" PRIu64 "\r\n\r\n",
			      cn->total_connections, cn->get_hits,
			      cn->get_misses, cn->bytes_read,
			      cn->bytes_written);
	if (want(q, "goblin", false)) {
		gd_buf_printf(b, "# Goblin\r\n");
		for (unsigned i = 0; i < GS_NSTATS; i++) {
			const struct gs_stat_field *f = &gs_stat_fields[i];

			if (f->kind == GS_STAT_HIST)
				continue;
			gd_buf_printf(b, "%s:%" PRIu64 "\r\n", f->name,
				      gs_stat_value(st, f, 0));
		}
		gd_buf_printf(b, "\r\n");
	}
	if (want(q, "keyspace", true)) {
		struct ks_ctx k = { 0 };

		gs_iterate(gd->s, "", 0, ks_one, &k);
		gd_buf_printf(b, "# Keyspace\r\n");
		if (k.keys)
			gd_buf_printf(b,
				      "db0:keys=%" PRIu64 ",expires=%" PRIu64
				      ",avg_ttl=0\r\n",
				      k.keys, k.expires);
	}
}

enum conn_run resp_cmd_info(struct conn *c, struct resp_req *q)
{
	struct gd_buf b = { 0 };
	struct gd_counters cn;
	struct gs_stats *st = malloc(sizeof(*st));

	if (!st) {
		resp_err(c, "OOM goblind: out of memory");
		return RUN_INPUT;
	}
	gd_counters_sum(c->w->gd, &cn);
	gs_stats_get(resp_store(c), st);
	info_build(c, q, &b, &cn, st);
	free(st);
	/* Redis ends the text with the last section's "\r\n" only */
	while (b.len >= 2 && !memcmp(b.p + b.len - 2, "\r\n", 2) &&
	       b.len >= 4 && !memcmp(b.p + b.len - 4, "\r\n\r\n", 4))
		b.len -= 2;
	if (b.oom)
		resp_err(c, "OOM goblind: out of memory");
	else if (resp_of(c)->proto == 3) {
		conn_printf(c, "=%zu\r\ntxt:", b.len + 4);
		conn_out(c, b.p, b.len);
		ROUT(c, "\r\n");
	} else
		resp_bulk(c, b.p ? b.p : "", b.len);
	free(b.p);
	return RUN_INPUT;
}
