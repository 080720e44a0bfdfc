/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The memcache front-end: requests from mc_proto.c carried out on the
 * store.  Values stream both ways: a get sends the header and the RAM
 * head at once and the tail as its reads complete; a set feeds a store
 * writer as bytes arrive.  A connection holds at most one reader or one
 * writer at a time.
 *
 * This room is the command loop and the seam (mc_ops): parse a line,
 * apply the write policy, dispatch to the rooms of memcache.h, continue
 * the job in progress, release.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "memcache.h"

/* ---- command line copies ---- */

/*
 * Keep the command line in m->line and parse it again there: the
 * request then outlives the read buffer (which moves and refills while
 * a value streams).
 */
static int keep_line(struct conn *c, const char *line, size_t len)
{
	struct mc_state *m = mc_of(c);
	size_t used;

	if (len > m->line_cap) {
		char *nl = realloc(m->line, len);

		if (!nl)
			return -1;
		m->line = nl;
		m->line_cap = len;
	}
	memcpy(m->line, line, len);
	if (mc_parse(m->line, len, MC_GET_WHOLE_MAX, &m->req, &used) !=
	    MC_PARSE_OK)
		return -1; /* it parsed in rbuf: cannot happen */
	return 0;
}

/* ---- the command loop ---- */

/* Commands that answer at once, from the request parsed in rbuf. */
static enum conn_run run_simple(struct conn *c, const struct mc_req *q)
{
	struct gd *gd = c->w->gd;

	switch (q->cmd) {
	case MC_INCR:
	case MC_DECR:
		mc_cmd_arith(c, q);
		break;
	case MC_DELETE:
		mc_cmd_delete(c, q);
		break;
	case MC_TOUCH:
		mc_cmd_touch(c, q);
		break;
	case MC_FLUSH_ALL:
		mc_cmd_flush_all(c, q);
		break;
	case MC_STATS:
		if (gd_stats(gd, c, q->arg, q->arg_len) < 0)
			OUT(c, "ERROR\r\n");
		break;
	case MC_VERSION: /* goblind's own: goblind_version in stats */
		conn_out(c, "VERSION " GD_MC_VERSION "\r\n",
			 sizeof("VERSION " GD_MC_VERSION "\r\n") - 1);
		break;
	case MC_CRAWL:
		if (q->err)
			conn_printf(c, "BADCLASS %s\r\n", q->err);
		else
			OUT(c, "OK\r\n");
		break;
	case MC_VERBOSITY:
		atomic_store(&gd->verbosity, (int)q->num);
		mc_reply(c, "OK");
		break;
	case MC_QUIT:
		return RUN_CLOSE;
	case MC_METADUMP:
		return mc_cmd_metadump(c, q);
	case MC_MN:
		OUT(c, "MN\r\n");
		break;
	case MC_MD:
		CNT(c->w, cmd_meta);
		mc_cmd_md(c, q);
		break;
	case MC_MA:
		CNT(c->w, cmd_meta);
		mc_cmd_ma(c, q);
		break;
	case MC_ME:
		CNT(c->w, cmd_meta);
		mc_cmd_me(c, q);
		break;
	case MC_GOBLIN:
		mc_cmd_goblin(c, q);
		break;
	default:
		break;
	}
	return RUN_INPUT;
}

/* Start a command that outlives this call: its line is kept. */
static enum conn_run run_long(struct conn *c, const char *line, size_t len)
{
	struct mc_state *m = mc_of(c);
	const struct mc_req *q = &m->req;

	if (keep_line(c, line, len) < 0) {
		OUT(c, "SERVER_ERROR out of memory\r\n");
		return RUN_CLOSE;
	}
	mc_of(c)->noreply = q->cmd == MC_MS ? false : q->noreply;
	switch (q->cmd) {
	case MC_GET:
	case MC_GETS:
	case MC_GAT:
	case MC_GATS:
		m->job = JOB_GET;
		m->mg = false;
		m->kpos = q->keys;
		m->kend = q->keys + q->keys_len;
		return RUN_INPUT;
	case MC_MG:
		CNT(c->w, cmd_meta);
		return mc_cmd_mg(c);
	case MC_MS:
		CNT(c->w, cmd_meta);
		/* fall through */
	default:
		return mc_storage_start(c);
	}
}

static bool is_long(enum mc_cmd cmd)
{
	switch (cmd) {
	case MC_GET:
	case MC_GETS:
	case MC_GAT:
	case MC_GATS:
	case MC_SET:
	case MC_ADD:
	case MC_REPLACE:
	case MC_APPEND:
	case MC_PREPEND:
	case MC_CAS:
	case MC_MG:
	case MC_MS:
		return true;
	default:
		return false;
	}
}

/* Does @q change the store (an expiry time included)? */
static bool is_write(const struct mc_req *q)
{
	switch (q->cmd) {
	case MC_GET:
	case MC_GETS:
	case MC_STATS:
	case MC_VERSION:
	case MC_VERBOSITY:
	case MC_QUIT:
	case MC_METADUMP:
	case MC_CRAWL:
	case MC_MN:
	case MC_ME:
	case MC_GOBLIN:
	case MC_NONE:
		return false;
	case MC_MG: /* vivify on miss, or a new TTL */
		return mc_meta_has(&q->meta, 'N') || mc_meta_has(&q->meta, 'T');
	default:
		return true;
	}
}

/*
 * A write refused (a mirror's, or by the write policy): the data block of
 * a storage command is swallowed, so the framing holds.
 */
static void write_refuse(struct conn *c, const struct mc_req *q,
			 const char *line)
{
	if (!q->noreply || q->cmd >= MC_MG)
		conn_out(c, line, strlen(line));
	if (q->cmd == MC_MS || (q->cmd >= MC_SET && q->cmd <= MC_CAS))
		mc_swallow_block(c, q->bytes);
}

/* A mirror stores what the origin serves and nothing else. */
static void mirror_refuse(struct conn *c, const struct mc_req *q)
{
	CNT(c->w, mirror_writes_refused);
	write_refuse(c, q,
		     "SERVER_ERROR read only: a mirror stores what its "
		     "origin serves\r\n");
}

/*
 * The write policy, one for every protocol: with --auth-file every
 * connection has logged in before it got here; without one, writes are
 * taken from loopback peers only (HTTP's default too).
 */
static bool may_write(const struct conn *c)
{
	return c->w->gd->auth || c->loopback;
}

/* Continue the command in progress; RUN_INPUT once it is done. */
static enum conn_run run_job(struct conn *c)
{
	struct mc_state *m = mc_of(c);

	switch (m->job) {
	case JOB_GET:
		if (m->mg) {
			enum conn_run st = mc_stream_value(c, "\r\n");

			if (st == RUN_INPUT)
				m->job = JOB_NONE;
			return st;
		}
		return mc_get_run(c);
	case JOB_SWALLOW:
		return mc_swallow_run(c);
	case JOB_SKIPLINE:
		return mc_skip_line_run(c);
	case JOB_DUMP:
		return mc_dump_run(c);
	case JOB_VALUE:
		if (!m->wr && !m->err && m->req.bytes + 2 <= GD_RBUF / 2) {
			if (c->rend - c->rstart < m->req.bytes + 2)
				return RUN_INPUT;
			mc_value_whole(c);
			return RUN_INPUT;
		}
		return mc_value_run(c);
	default:
		return RUN_INPUT;
	}
}

/*
 * A binary-protocol request (its magic byte first): goblind speaks the
 * text and meta protocols only, and an ASCII "ERROR" would leave a
 * binary client waiting for a header that never comes.  Closing at once
 * makes it fail fast.
 */
static bool binary_request(struct conn *c)
{
	struct mc_state *m = mc_of(c);

	if (m->started || c->rstart == c->rend)
		return false;
	m->started = true;
	if ((unsigned char)c->rbuf[c->rstart] != 0x80)
		return false;
	gd_log(GD_LOG_WARN,
	       "memcache: a binary protocol request (magic 0x80); goblind "
	       "speaks the text and meta protocols only: closing the "
	       "connection");
	return true;
}

/*
 * A retrieval line with no newline in its first MC_GET_WHOLE_MAX bytes
 * streams: its head is taken now, its keys as they arrive (mc_get_run),
 * so a get of any number of keys needs only rbuf.  RUN_INPUT when it was
 * started (or refused), RUN_CLOSE when the line is no retrieval command.
 */
static enum conn_run stream_get_start(struct conn *c)
{
	struct mc_state *m = mc_of(c);
	struct mc_req *q = &m->req;
	size_t used = 0;

	switch (mc_parse_get_head(c->rbuf + c->rstart, c->rend - c->rstart, q,
				  &used)) {
	case MC_PARSE_OK:
		break;
	case MC_PARSE_CLIENT_ERROR:
		conn_printf(c, "CLIENT_ERROR %s\r\n", q->err);
		c->rstart += used;
		m->job = JOB_SKIPLINE;
		return RUN_INPUT;
	default:
		CNT(c->w, conn_closed_long_line);
		return RUN_CLOSE;
	}
	c->rstart += used;
	/* gat and gats write (a new expiry): the write policy applies */
	if ((q->cmd == MC_GAT || q->cmd == MC_GATS) &&
	    (!may_write(c) || c->w->gd->set.mirror)) {
		if (!may_write(c)) {
			CNT(c->w, mc_denied);
			write_refuse(c, q,
				     "CLIENT_ERROR writes are accepted from "
				     "loopback only (see --auth-file)\r\n");
		} else {
			mirror_refuse(c, q);
		}
		m->job = JOB_SKIPLINE;
		return RUN_INPUT;
	}
	m->job = JOB_GET;
	m->mg = false;
	m->stream = true;
	m->kpos = m->kend = NULL;
	return RUN_INPUT;
}

/* No newline in the first MC_GET_WHOLE_MAX bytes of the input. */
static bool long_line(const struct conn *c)
{
	size_t avail = c->rend - c->rstart;

	return avail > MC_GET_WHOLE_MAX &&
	       !memchr(c->rbuf + c->rstart, '\n', MC_GET_WHOLE_MAX + 1);
}

static enum conn_run mc_conn_run(struct conn *c)
{
	struct mc_state *m = mc_of(c);

	for (;;) {
		struct mc_req *q = &mc_worker_of(c)->req;
		enum mc_parse_result pr;
		const char *line;
		size_t used = 0;
		enum conn_run st;

		if (m->job != JOB_NONE) {
			st = run_job(c);
			if (m->job != JOB_NONE || st != RUN_INPUT)
				return st;
		}
		m->noreply = false;
		if (c->closing)
			return RUN_CLOSE;
		if (c->wend - c->wstart > GD_WBUF_HIGH)
			return RUN_OUTPUT;
		if (binary_request(c))
			return RUN_CLOSE;
		if (c->w->gd->auth && !m->authed) {
			int ret = mc_auth_step(c);

			if (ret <= 0)
				return ret < 0 ? RUN_CLOSE : RUN_INPUT;
			continue;
		}
		if (long_line(c)) {
			st = stream_get_start(c);
			if (st != RUN_INPUT)
				return st;
			continue;
		}
		line = c->rbuf + c->rstart;
		pr = mc_parse(line, c->rend - c->rstart, MC_GET_WHOLE_MAX, q,
			      &used);
		switch (pr) {
		case MC_PARSE_MORE:
			return RUN_INPUT;
		case MC_PARSE_TOO_LONG:
			CNT(c->w, conn_closed_long_line);
			return RUN_CLOSE;
		case MC_PARSE_CLOSE:
			gd_log(GD_LOG_INFO,
			       "memcache: an HTTP request line on the "
			       "memcache port: closing the connection");
			return RUN_CLOSE;
		case MC_PARSE_ERROR:
			c->rstart += used;
			OUT(c, "ERROR\r\n");
			continue;
		case MC_PARSE_CLIENT_ERROR:
			c->rstart += used;
			if (!q->noreply || q->cmd >= MC_MG)
				conn_printf(c, "CLIENT_ERROR %s\r\n", q->err);
			if (q->swallow) /* keep the framing */
				mc_swallow_block(c, q->bytes);
			continue;
		case MC_PARSE_OK:
			break;
		}
		c->rstart += used;
		if (is_write(q) && !may_write(c)) {
			CNT(c->w, mc_denied);
			write_refuse(c, q,
				     "CLIENT_ERROR writes are accepted "
				     "from loopback only (see "
				     "--auth-file)\r\n");
			continue;
		}
		if (c->w->gd->set.mirror && is_write(q)) {
			mirror_refuse(c, q);
			continue;
		}
		if (is_long(q->cmd)) {
			st = run_long(c, line, used);
			if (st != RUN_INPUT)
				return st;
			continue;
		}
		m->noreply = q->cmd < MC_MG && q->noreply;
		st = run_simple(c, q);
		if (st != RUN_INPUT)
			return st;
	}
}

static void mc_conn_release(struct conn *c)
{
	struct mc_state *m = mc_of(c);

	if (m->r)
		gd_reader_close(c->w, m->r);
	m->r = NULL;
	mc_dump_release(c);
	mc_value_drop(m);
	m->job = JOB_NONE;
	conn_chunks_drop(c);
	free(m->line);
	m->line = NULL;
}

/*
 * Between commands, or inside a long line waiting for the client's next
 * bytes (a streamed get with no value in flight, a line being skipped):
 * the idle timeouts apply there as they do to a partial line.
 */
static bool mc_conn_idle(const struct conn *c)
{
	const struct mc_state *m = mc_of(c);

	return m->job == JOB_NONE || m->job == JOB_SKIPLINE ||
	       (m->job == JOB_GET && m->stream && !m->r);
}

/* A delayed flush_all that came due: the first worker to see it runs it. */
static void mc_tick(struct worker *w)
{
	struct gd *gd = w->gd;
	int64_t at = atomic_load(&gd->flush_at);

	if (at && time(NULL) >= at &&
	    atomic_compare_exchange_strong(&gd->flush_at, &at, 0))
		mc_flush(gd, at * 1000000000ll);
}

static void *mc_worker_init(struct worker *w)
{
	(void)w;
	return calloc(1, sizeof(struct mc_worker));
}

static void mc_worker_fini(struct worker *w, void *pstate)
{
	(void)w;
	free(pstate);
}

const struct proto_ops mc_ops = {
	.name = "memcache",
	.conn_size = sizeof(struct mc_conn),
	.run = mc_conn_run,
	.release = mc_conn_release,
	.idle = mc_conn_idle,
	.tick = mc_tick,
	.worker_init = mc_worker_init,
	.worker_fini = mc_worker_fini,
	.busy_reply = "ERROR Too many open connections\r\n",
};
