/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memcache storage commands: set, add, replace, append, prepend and cas,
 * and the data block of ms.  A small block is taken whole from the read
 * buffer; a big one flows into a store writer as it arrives, so memory
 * does not grow with the value.  append/prepend are read-modify-write on
 * the pinned old version (GS_CAS).  A refused command still reads its
 * block through, so the connection's framing holds.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "memcache.h"

/* ---- storage ---- */

static enum gs_put_mode put_mode(enum mc_cmd cmd)
{
	switch (cmd) {
	case MC_ADD:
		return GS_ADD;
	case MC_REPLACE:
		return GS_REPLACE;
	case MC_CAS:
		return GS_CAS;
	default:
		return GS_SET;
	}
}

/* The text reply for a put's result. */
static const char *text_put_reply(const struct mc_req *q, int ret)
{
	switch (ret) {
	case 0:
		return "STORED";
	case -EEXIST:
		return "NOT_STORED";
	case -ENOENT:
		return q->cmd == MC_CAS ? "NOT_FOUND" : "NOT_STORED";
	case -ESTALE:
		return "EXISTS";
	case -EFBIG:
		return "SERVER_ERROR object too large for cache";
	/* the tier or its file system is full: not RAM, as memcached's
	 * "out of memory" would say */
	case -ENOSPC:
		return "SERVER_ERROR out of space storing object";
	case -ENOMEM:
		return "SERVER_ERROR out of memory storing object";
	case -EIO:
		return "SERVER_ERROR I/O error storing object";
	}
	return "SERVER_ERROR cannot store the value";
}

/* The meta reply for a put's result (ms). */
static void meta_put_reply(struct conn *c, const struct mc_req *q, int ret,
			   uint64_t cas)
{
	const char *code;

	switch (ret) {
	case 0:
		code = "HD";
		break;
	case -EEXIST:
		code = "NS";
		break;
	case -ENOENT:
		code = mc_meta_has(&q->meta, 'C') ? "NF" : "NS";
		break;
	case -ESTALE:
		code = "EX";
		break;
	default: /* the same SERVER_ERROR text as the text protocol's */
		mc_reply(c, text_put_reply(q, ret));
		return;
	}
	if (ret == 0 && mc_meta_has(&q->meta, 'q'))
		return;
	conn_out(c, code, 2);
	mc_meta_flags_out(c, q, NULL, ret == 0 ? cas : 0);
	OUT(c, "\r\n");
}

static void count_put(struct worker *w, const struct mc_req *q, int ret)
{
	if (q->cmd == MC_CAS ||
	    (q->cmd == MC_MS && mc_meta_has(&q->meta, 'C'))) {
		if (ret == 0)
			CNT(w, cas_hits);
		else if (ret == -ESTALE)
			CNT(w, cas_badval);
		else if (ret == -ENOENT)
			CNT(w, cas_misses);
	}
	if (ret == -ENOSPC || ret == -EFBIG)
		CNT(w, store_no_memory);
}

static void put_reply(struct conn *c, int ret, uint64_t cas)
{
	const struct mc_req *q = &mc_of(c)->req;

	count_put(c->w, q, ret);
	if (q->cmd == MC_MS)
		meta_put_reply(c, q, ret, cas);
	else
		mc_reply(c, text_put_reply(q, ret));
}

static bool is_concat(const struct mc_req *q)
{
	return q->cmd == MC_APPEND || q->cmd == MC_PREPEND ||
	       (q->cmd == MC_MS && (q->meta.mode == MC_MS_APPEND ||
				    q->meta.mode == MC_MS_PREPEND));
}

static bool is_prepend(const struct mc_req *q)
{
	return q->cmd == MC_PREPEND ||
	       (q->cmd == MC_MS && q->meta.mode == MC_MS_PREPEND);
}

/* Copy the rest of blocking reader @r into @wr.  0 or -errno. */
static int copy_reader(struct gs_writer *wr, struct gs_reader *r)
{
	struct gs_chunk ch;
	int ret;

	while ((ret = gs_reader_next(r, &ch)) == 1)
		if ((ret = gs_put_write(wr, ch.data, ch.len)) < 0)
			return ret;
	return ret;
}

/* Put args of a storage request (not append/prepend). */
static void put_args(const struct mc_req *q, struct gs_put_args *a)
{
	memset(a, 0, sizeof(*a));
	a->size = q->bytes;
	if (q->cmd == MC_MS) {
		a->flags = q->meta.client_flags;
		a->exptime = mc_meta_has(&q->meta, 'T') ?
				     store_exptime(q->meta.ttl) :
				     0;
		switch (q->meta.mode) {
		case MC_MS_ADD:
			a->mode = GS_ADD;
			break;
		case MC_MS_REPLACE:
			a->mode = GS_REPLACE;
			break;
		default:
			a->mode = GS_SET;
			break;
		}
		if (mc_meta_has(&q->meta, 'C')) {
			a->mode = GS_CAS;
			a->cas_match = q->meta.cas;
		}
		return;
	}
	a->flags = q->flags;
	a->exptime = store_exptime(q->exptime);
	a->mode = put_mode(q->cmd);
	a->cas_match = q->cas;
}

/*
 * Begin a concatenation: the old version is pinned now and the new one
 * must replace exactly it (GS_CAS).  Returns 0 or -errno (-ENOENT: no
 * old version, -ESTALE: ms C did not match it).
 */
static int concat_begin(struct gs_store *s, const struct mc_req *q,
			uint64_t len, uint64_t max_item, struct gs_reader **old,
			struct gs_writer **wr)
{
	const struct gs_meta *mt;
	struct gs_put_args a;
	int ret = gs_get_open(s, q->key, q->klen, 0, old);

	if (ret < 0)
		return ret;
	mt = gs_reader_meta(*old);
	memset(&a, 0, sizeof(a));
	a.size = mt->size + len;
	a.flags = mt->flags;
	a.exptime = mt->exptime;
	a.mode = GS_CAS;
	a.cas_match = mt->cas;
	if (q->cmd == MC_MS && mc_meta_has(&q->meta, 'C') &&
	    q->meta.cas != mt->cas)
		ret = -ESTALE;
	else if (a.size > max_item || a.size < mt->size)
		ret = -EFBIG;
	else
		ret = gs_put_begin(s, q->key, q->klen, &a, wr);
	if (ret < 0) {
		gs_reader_close(*old);
		*old = NULL;
	}
	return ret;
}

/*
 * append/prepend of a value held in memory: read-modify-write, again
 * from the start when another client changed the key meanwhile.
 */
static int concat_put(struct conn *c, const struct mc_req *q, const void *data,
		      size_t len, uint64_t *cas)
{
	uint64_t max = c->w->gd->set.max_item;
	int ret = -ESTALE;

	for (int i = 0; i < RMW_TRIES && ret == -ESTALE; i++) {
		struct gs_reader *old;
		struct gs_writer *wr;

		if (i)
			CNT(c->w, rmw_retries);
		ret = concat_begin(store_of(c), q, len, max, &old, &wr);
		if (ret < 0)
			break;
		if (is_prepend(q))
			ret = gs_put_write(wr, data, len);
		if (ret == 0)
			ret = copy_reader(wr, old);
		if (ret == 0 && !is_prepend(q))
			ret = gs_put_write(wr, data, len);
		gs_reader_close(old);
		if (ret < 0) {
			gs_put_abort(wr);
			break;
		}
		ret = gs_put_commit(wr, cas);
		if (ret == -ESTALE && q->cmd == MC_MS &&
		    mc_meta_has(&q->meta, 'C'))
			break; /* the client's cas, not ours: no retry */
	}
	return ret;
}

/* A plain put of a value held in memory. */
static int whole_put(struct conn *c, const struct mc_req *q, const void *data,
		     size_t len, uint64_t *cas)
{
	struct gs_put_args a;

	put_args(q, &a);
	return mc_put_buf(store_of(c), q->key, q->klen, &a, data, len, cas);
}

/* A cas put that failed with -ESTALE: was the key there at all? */
static int cas_result(struct conn *c, const struct mc_req *q, int ret)
{
	struct gs_meta *mt;

	if (ret != -ESTALE)
		return ret;
	mt = malloc(sizeof(*mt));
	if (mt && gs_stat(store_of(c), q->key, q->klen, mt) == -ENOENT)
		ret = -ENOENT;
	free(mt);
	return ret;
}

/* The data block is all in rbuf (small values): store it and reply. */
void mc_value_whole(struct conn *c)
{
	struct mc_state *m = mc_of(c);
	const struct mc_req *q = &m->req;
	const char *data = c->rbuf + c->rstart;
	uint64_t cas = 0;
	int ret;

	c->rstart += q->bytes + 2;
	m->job = JOB_NONE;
	if (memcmp(data + q->bytes, "\r\n", 2)) {
		mc_reply(c, "CLIENT_ERROR bad data chunk");
		return;
	}
	CNT(c->w, cmd_set);
	if (is_concat(q))
		ret = concat_put(c, q, data, q->bytes, &cas);
	else
		ret = cas_result(c, q, whole_put(c, q, data, q->bytes, &cas));
	if (ret == 0)
		metatab_clear(c->w->gd->meta, q->key, q->klen);
	put_reply(c, ret, cas);
}

/* Feed @n bytes of the data block (value, then its "\r\n"). */
static void value_feed(struct conn *c, const uint8_t *p, size_t n)
{
	struct mc_state *m = mc_of(c);

	while (n) {
		if (m->left > 2) {
			size_t d = m->left - 2 < n ? (size_t)(m->left - 2) : n;

			if (m->wr && !m->err)
				m->err = gs_put_write(m->wr, p, d);
			m->left -= d;
			p += d;
			n -= d;
			continue;
		}
		if (*p != "\r\n"[2 - m->left])
			m->bad_chunk = true;
		m->left--;
		p++;
		n--;
	}
}

/* Drop the put in progress: nothing of it becomes visible. */
void mc_value_drop(struct mc_state *m)
{
	if (m->wr)
		gs_put_abort(m->wr);
	if (m->old)
		gs_reader_close(m->old);
	m->wr = NULL;
	m->old = NULL;
}

/* The whole data block went by: commit (or refuse) and reply. */
static void value_finish(struct conn *c)
{
	struct mc_state *m = mc_of(c);
	const struct mc_req *q = &m->req;
	uint64_t cas = 0;
	int ret = m->err;

	m->job = JOB_NONE;
	if (m->bad_chunk) {
		mc_value_drop(m);
		if (q->cmd == MC_MS)
			OUT(c, "CLIENT_ERROR bad data chunk\r\n");
		else
			mc_reply(c, "CLIENT_ERROR bad data chunk");
		return;
	}
	if (!m->wr) { /* refused at the start: ret says why */
		put_reply(c, ret, 0);
		return;
	}
	if (m->old) { /* prepend: the old bytes go last */
		if (!ret)
			ret = copy_reader(m->wr, m->old);
		gs_reader_close(m->old);
		m->old = NULL;
	}
	if (ret < 0) {
		gs_put_abort(m->wr);
		m->wr = NULL;
		gd_log(GD_LOG_WARN, "storing a value failed: %s",
		       gs_strerror(ret));
	} else {
		ret = gs_put_commit(m->wr, &cas);
		m->wr = NULL;
		if (q->cmd == MC_CAS || mc_meta_has(&q->meta, 'C'))
			ret = cas_result(c, q, ret);
		if (ret == 0)
			metatab_clear(c->w->gd->meta, q->key, q->klen);
	}
	put_reply(c, ret, cas);
}

/*
 * A big value: begin the store writer now so that bytes flow into it as
 * they arrive.  A refusal (no room, add of a present key...) still reads
 * the block through: the connection's framing is kept.
 */
static void value_stream_begin(struct conn *c)
{
	struct mc_state *m = mc_of(c);
	const struct mc_req *q = &m->req;
	struct gs_store *s = store_of(c);
	struct gs_put_args a;
	int ret;

	CNT(c->w, cmd_set);
	if (is_concat(q)) {
		ret = concat_begin(s, q, q->bytes, c->w->gd->set.max_item,
				   &m->old, &m->wr);
		if (ret == 0 && !is_prepend(q)) {
			ret = copy_reader(m->wr, m->old);
			gs_reader_close(m->old);
			m->old = NULL;
		}
	} else {
		put_args(q, &a);
		ret = gs_put_begin(s, q->key, q->klen, &a, &m->wr);
	}
	if (ret < 0) {
		mc_value_drop(m);
		m->err = ret;
	}
}

/*
 * Take the rest of the data block: what rbuf holds, then straight off the
 * socket into the worker's scratch buffer, never past the block (a
 * command may follow).  @feed NULL discards.  RUN_INPUT when it is all in.
 */
static enum conn_run block_run(struct conn *c,
			       void (*feed)(struct conn *c, const uint8_t *p,
					    size_t n))
{
	struct mc_state *m = mc_of(c);

	while (m->left) {
		const uint8_t *p;
		ssize_t got = conn_take(c, m->left, &p);

		if (got == 0)
			return RUN_WAIT;
		if (got < 0)
			return RUN_CLOSE; /* a put is aborted */
		if (feed)
			feed(c, p, (size_t)got);
		else
			m->left -= (uint64_t)got;
	}
	return RUN_INPUT;
}

enum conn_run mc_value_run(struct conn *c)
{
	enum conn_run st = block_run(c, value_feed);

	if (st == RUN_INPUT)
		value_finish(c);
	return st;
}

enum conn_run mc_swallow_run(struct conn *c)
{
	enum conn_run st = block_run(c, NULL);

	if (st == RUN_INPUT)
		mc_of(c)->job = JOB_NONE;
	return st;
}

/*
 * Skip the data block of a refused storage command, so the next command
 * is read where it starts.  A block longer than memcached ever takes is
 * not read at all: memcached refuses such a line as a bad command line
 * (below) and then reads what follows as commands, and so do we.
 */
void mc_swallow_block(struct conn *c, uint64_t bytes)
{
	struct mc_state *m = mc_of(c);

	if (bytes > MC_BLOCK_MAX)
		return;
	m->job = JOB_SWALLOW;
	m->left = bytes + 2;
}

/*
 * Over --max-item: refused before a byte of the block is read, the reply
 * sent at once, and then the block swallowed (memcached 1.6 sends the
 * same reply after the block).  Like memcached, a failed set leaves no
 * stale old value behind.
 */
static void storage_too_large(struct conn *c, const struct mc_req *q)
{
	if (q->bytes > MC_BLOCK_MAX) {
		mc_reply(c, "CLIENT_ERROR bad command line format");
		return;
	}
	CNT(c->w, store_too_large);
	if (q->cmd == MC_SET || (q->cmd == MC_MS && q->meta.mode == MC_MS_SET))
		gs_delete(store_of(c), q->key, q->klen);
	mc_reply(c, "SERVER_ERROR object too large for cache");
	mc_swallow_block(c, q->bytes);
}

/* A storage command line was parsed: plan how its data block is taken. */
enum conn_run mc_storage_start(struct conn *c)
{
	struct mc_state *m = mc_of(c);
	const struct mc_req *q = &m->req;

	m->left = q->bytes + 2;
	m->bad_chunk = false;
	m->err = 0;
	m->job = JOB_NONE;
	if (q->bytes > c->w->gd->set.max_item) {
		storage_too_large(c, q);
		return RUN_OUTPUT; /* the reply goes out before the swallow */
	}
	m->job = JOB_VALUE;
	if (q->bytes + 2 <= GD_RBUF / 2)
		return RUN_INPUT; /* mc_value_whole() once it is in */
	value_stream_begin(c);
	return RUN_INPUT;
}
