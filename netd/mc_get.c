/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memcache retrieval: get, gets, gat and gats.  The header and the RAM
 * head go out at once, the tail as its reads complete; small chunks are
 * copied behind the header, big ones sent zero-copy from the store's
 * buffers.  mg streams its value with mc_stream_value() too.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "memcache.h"

/* A big line buffer goes back after a long multi-get. */
static void shrink_line(struct mc_state *m)
{
	if (m->line_cap > 4096) {
		free(m->line);
		m->line = NULL;
		m->line_cap = 0;
	}
}

/* Send the value of m->r and @trail (conn_send_value). */
enum conn_run mc_stream_value(struct conn *c, const char *trail)
{
	return conn_send_value(c, &mc_of(c)->r, trail, "memcache");
}

/* No key follows the one being sent: its value ends the reply. */
static bool get_last_key(const struct mc_state *m)
{
	const char *p = m->kpos, *key;
	size_t klen;

	return !m->stream && !mc_next_key(&p, m->kend, &key, &klen);
}

/* ---- retrieval: get gets gat gats ---- */

static void header_value(struct conn *c, const char *key, size_t klen,
			 const struct gs_meta *mt, bool with_cas)
{
	OUT(c, "VALUE ");
	conn_out(c, key, klen);
	if (with_cas)
		conn_printf(c, " %" PRIu32 " %" PRIu64 " %" PRIu64 "\r\n",
			    mt->flags, mt->size, mt->cas);
	else
		conn_printf(c, " %" PRIu32 " %" PRIu64 "\r\n", mt->flags,
			    mt->size);
}

/*
 * The next key of a streamed line, from rbuf: 1 a key (consumed from
 * rbuf, its bytes still there until the next read), 0 more input needed,
 * 2 the line's end (consumed), -1 a key too long.
 */
static int stream_key(struct conn *c, const char **key, size_t *klen)
{
	size_t used;
	int ret = mc_stream_key(c->rbuf + c->rstart, c->rend - c->rstart, key,
				klen, &used);

	c->rstart += used;
	return ret;
}

/* JOB_SKIPLINE: the rest of a refused long line goes unread. */
enum conn_run mc_skip_line_run(struct conn *c)
{
	struct mc_state *m = mc_of(c);
	const char *nl = memchr(c->rbuf + c->rstart, '\n', c->rend - c->rstart);

	if (!nl) {
		c->rstart = c->rend;
		return RUN_INPUT;
	}
	c->rstart = (size_t)(nl + 1 - c->rbuf);
	m->job = JOB_NONE;
	return RUN_INPUT;
}

/* The next keys of a get, until the end, a value to stream or a full wbuf. */
enum conn_run mc_get_run(struct conn *c)
{
	struct mc_state *m = mc_of(c);
	struct worker *w = c->w;
	bool touch = m->req.cmd == MC_GAT || m->req.cmd == MC_GATS;
	bool cas = m->req.cmd == MC_GETS || m->req.cmd == MC_GATS;

	for (;;) {
		const char *key;
		size_t klen;
		int ret;

		if (m->r) {
			/* the last value takes END along: one write */
			bool last = get_last_key(m);
			enum conn_run st = mc_stream_value(
				c, last ? "\r\nEND\r\n" : "\r\n");

			if (st != RUN_INPUT)
				return st;
			if (last)
				break;
		}
		if (c->wend - c->wstart > GD_WBUF_HIGH)
			return RUN_OUTPUT;
		if (m->stream) {
			ret = stream_key(c, &key, &klen);
			if (ret == 0)
				return RUN_INPUT; /* rbuf holds a key's part */
			if (ret == 2) {
				OUT(c, "END\r\n");
				break;
			}
			if (ret < 0 || !mc_key_valid(key, klen)) {
				/* values already sent stay sent: the rest of
				 * the line is dropped (see goblind(8)) */
				OUT(c, "CLIENT_ERROR bad command line "
				       "format\r\n");
				m->job = JOB_SKIPLINE;
				m->stream = false;
				return RUN_INPUT;
			}
		} else if (!mc_next_key(&m->kpos, m->kend, &key, &klen)) {
			OUT(c, "END\r\n");
			break;
		}
		CNT(w, cmd_get);
		ret = gd_reader_open(c->w, key, klen, 0, &m->r);
		/*
		 * gat touches after the open: the version it pinned is
		 * served even when the new time has passed already, as
		 * memcached returns the value and then expires it
		 */
		if (touch) {
			CNT(w, cmd_touch);
			if (gs_touch(store_of(c), key, klen,
				     store_exptime(m->req.exptime)) == 0)
				CNT(w, touch_hits);
			else
				CNT(w, touch_misses);
		}
		if (ret < 0) {
			m->r = NULL;
			CNT(w, get_misses);
			continue;
		}
		CNT(w, get_hits);
		header_value(c, key, klen, gs_reader_meta(m->r), cas);
	}
	m->job = JOB_NONE;
	m->stream = false;
	shrink_line(m);
	return RUN_INPUT;
}
