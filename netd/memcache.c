/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The memcache front-end: requests from mc_proto.c carried out on the
 * store.  Values stream both ways: a get sends the header and the RAM
 * head at once and the tail as its reads complete; a set feeds a store
 * writer as bytes arrive.  A connection holds at most one reader or one
 * writer at a time.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "goblind.h"

#define RMW_TRIES 16		/* read-modify-write attempts on a race */

/* Append a string literal to the output. */
#define OUT(c, lit) conn_out(c, lit, sizeof(lit) - 1)

static int64_t now_sec(void)
{
	return (int64_t)time(NULL);
}

/* The store's absolute exptime for @sent; expired ones become 1 (1970). */
static int64_t store_exptime(int64_t sent)
{
	int64_t t = mc_exptime(sent, now_sec());

	return t < 0 ? 1 : t;
}

static struct gs_store *store_of(const struct conn *c)
{
	return c->w->gd->s;
}

/* ---- command line copies ---- */

/*
 * Keep the command line in c->mc.line and parse it again there: the
 * request then outlives the read buffer (which moves and refills while
 * a value streams).
 */
static int keep_line(struct conn *c, const char *line, size_t len)
{
	struct mc_state *m = &c->mc;
	size_t used;

	if (len > m->line_cap) {
		char *nl = realloc(m->line, len);

		if (!nl)
			return -1;
		m->line = nl;
		m->line_cap = len;
	}
	memcpy(m->line, line, len);
	if (mc_parse(m->line, len, GD_GET_LINE_MAX, &m->req, &used) !=
	    MC_PARSE_OK)
		return -1;	/* it parsed in rbuf: cannot happen */
	return 0;
}

/* A big line buffer goes back after a long multi-get. */
static void shrink_line(struct mc_state *m)
{
	if (m->line_cap > 4096) {
		free(m->line);
		m->line = NULL;
		m->line_cap = 0;
	}
}

/*
 * Send the value of c->mc.r: small chunks are copied behind the header,
 * big ones go out zero-copy from the store's buffers (the head from its
 * RAM slot).  Returns RUN_INPUT when the value and its "\r\n" are queued
 * (the reader is closed), or what the connection must wait for.
 */
static enum mc_run stream_value(struct conn *c)
{
	struct mc_state *m = &c->mc;

	for (;;) {
		struct gs_chunk ch;
		int ret;

		if (c->chunk_len || c->wend - c->wstart > GD_WBUF_HIGH)
			return RUN_OUTPUT;
		ret = gs_reader_poll(m->r, &ch);
		if (ret == 1) {
			if (ch.len <= GD_COPY_MAX) {
				conn_out(c, ch.data, ch.len);
				continue;
			}
			c->chunk = ch.data;
			c->chunk_len = ch.len;
			return RUN_OUTPUT;
		}
		if (ret == -EAGAIN)
			return RUN_DISK;
		gd_reader_close(c->w, m->r);
		m->r = NULL;
		if (ret < 0) {
			/* the header promised bytes we cannot send */
			gd_log(GD_LOG_WARN, "read of a value failed: %s; "
			       "closing the connection", gs_strerror(ret));
			return RUN_CLOSE;
		}
		OUT(c, "\r\n");
		return RUN_INPUT;
	}
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

/* The next keys of a get, until the end, a value to stream or a full wbuf. */
static enum mc_run get_run(struct conn *c)
{
	struct mc_state *m = &c->mc;
	struct worker *w = c->w;
	bool touch = m->req.cmd == MC_GAT || m->req.cmd == MC_GATS;
	bool cas = m->req.cmd == MC_GETS || m->req.cmd == MC_GATS;

	for (;;) {
		const char *key;
		size_t klen;
		int ret;

		if (m->r) {
			enum mc_run st = stream_value(c);

			if (st != RUN_INPUT)
				return st;
		}
		if (c->wend - c->wstart > GD_WBUF_HIGH)
			return RUN_OUTPUT;
		if (!mc_next_key(&m->kpos, m->kend, &key, &klen)) {
			OUT(c, "END\r\n");
			break;
		}
		if (!mc_key_valid(key, klen)) {
			OUT(c, "CLIENT_ERROR bad command line format\r\n");
			break;
		}
		CNT(w, cmd_get);
		if (touch) {
			CNT(w, cmd_touch);
			if (gs_touch(store_of(c), key, klen,
				     store_exptime(m->req.exptime)) == 0)
				CNT(w, touch_hits);
			else
				CNT(w, touch_misses);
		}
		ret = gd_reader_open(c->w, key, klen, 0, &m->r);
		if (ret < 0) {
			m->r = NULL;
			CNT(w, get_misses);
			continue;
		}
		CNT(w, get_hits);
		header_value(c, key, klen, gs_reader_meta(m->r), cas);
	}
	m->job = JOB_NONE;
	shrink_line(m);
	return RUN_INPUT;
}

/* ---- storage ---- */

static enum gs_put_mode put_mode(enum mc_cmd cmd)
{
	switch (cmd) {
	case MC_ADD: return GS_ADD;
	case MC_REPLACE: return GS_REPLACE;
	case MC_CAS: return GS_CAS;
	default: return GS_SET;
	}
}

/* The text reply for a put's result. */
static const char *text_put_reply(const struct mc_req *q, int ret)
{
	switch (ret) {
	case 0: return "STORED";
	case -EEXIST: return "NOT_STORED";
	case -ENOENT: return q->cmd == MC_CAS ? "NOT_FOUND" : "NOT_STORED";
	case -ESTALE: return "EXISTS";
	case -EFBIG: return "SERVER_ERROR object too large for cache";
	/* the tier or its file system is full: not RAM, as memcached's
	 * "out of memory" would say */
	case -ENOSPC: return "SERVER_ERROR out of space storing object";
	case -ENOMEM: return "SERVER_ERROR out of memory storing object";
	case -EIO: return "SERVER_ERROR I/O error storing object";
	}
	return "SERVER_ERROR cannot store the value";
}

static void meta_flags_out(struct conn *c, const struct mc_req *q,
			   const struct gs_meta *mt, uint64_t cas);

/* The meta reply for a put's result (ms). */
static void meta_put_reply(struct conn *c, const struct mc_req *q, int ret,
			   uint64_t cas)
{
	const char *code;

	switch (ret) {
	case 0: code = "HD"; break;
	case -EEXIST: code = "NS"; break;
	case -ENOENT: code = mc_meta_has(&q->meta, 'C') ? "NF" : "NS"; break;
	case -ESTALE: code = "EX"; break;
	default:	/* the same SERVER_ERROR text as the text protocol's */
		conn_reply(c, text_put_reply(q, ret));
		return;
	}
	if (ret == 0 && mc_meta_has(&q->meta, 'q'))
		return;
	conn_out(c, code, 2);
	meta_flags_out(c, q, NULL, ret == 0 ? cas : 0);
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
	const struct mc_req *q = &c->mc.req;

	count_put(c->w, q, ret);
	if (q->cmd == MC_MS)
		meta_put_reply(c, q, ret, cas);
	else
		conn_reply(c, text_put_reply(q, ret));
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
		a->exptime = mc_meta_has(&q->meta, 'T')
				     ? store_exptime(q->meta.ttl) : 0;
		switch (q->meta.mode) {
		case MC_MS_ADD: a->mode = GS_ADD; break;
		case MC_MS_REPLACE: a->mode = GS_REPLACE; break;
		default: a->mode = GS_SET; break;
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
			uint64_t len, uint64_t max_item,
			struct gs_reader **old, struct gs_writer **wr)
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
static int concat_put(struct conn *c, const struct mc_req *q,
		      const void *data, size_t len, uint64_t *cas)
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
			break;	/* the client's cas, not ours: no retry */
	}
	return ret;
}

/* Store @len bytes held in memory with @a: 0 (cas in *cas) or -errno. */
static int put_buf(struct gs_store *s, const char *key, size_t klen,
		   const struct gs_put_args *a, const void *data, size_t len,
		   uint64_t *cas)
{
	struct gs_writer *wr;
	int ret = gs_put_begin(s, key, klen, a, &wr);

	if (ret < 0)
		return ret;
	ret = gs_put_write(wr, data, len);
	if (ret < 0) {
		gs_put_abort(wr);
		return ret;
	}
	return gs_put_commit(wr, cas);
}

/* A plain put of a value held in memory. */
static int whole_put(struct conn *c, const struct mc_req *q, const void *data,
		     size_t len, uint64_t *cas)
{
	struct gs_put_args a;

	put_args(q, &a);
	return put_buf(store_of(c), q->key, q->klen, &a, data, len, cas);
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
static void value_whole(struct conn *c)
{
	struct mc_state *m = &c->mc;
	const struct mc_req *q = &m->req;
	const char *data = c->rbuf + c->rstart;
	uint64_t cas = 0;
	int ret;

	c->rstart += q->bytes + 2;
	m->job = JOB_NONE;
	if (memcmp(data + q->bytes, "\r\n", 2)) {
		conn_reply(c, "CLIENT_ERROR bad data chunk");
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
	struct mc_state *m = &c->mc;

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
static void value_drop(struct mc_state *m)
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
	struct mc_state *m = &c->mc;
	const struct mc_req *q = &m->req;
	uint64_t cas = 0;
	int ret = m->err;

	m->job = JOB_NONE;
	if (m->bad_chunk) {
		value_drop(m);
		if (q->cmd == MC_MS)
			OUT(c, "CLIENT_ERROR bad data chunk\r\n");
		else
			conn_reply(c, "CLIENT_ERROR bad data chunk");
		return;
	}
	if (!m->wr) {		/* refused at the start: ret says why */
		put_reply(c, ret, 0);
		return;
	}
	if (m->old) {		/* prepend: the old bytes go last */
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
	struct mc_state *m = &c->mc;
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
		value_drop(m);
		m->err = ret;
	}
}

/*
 * Take the rest of the data block: what rbuf holds, then straight off the
 * socket into the worker's scratch buffer, never past the block (a
 * command may follow).  @feed NULL discards.  RUN_INPUT when it is all in.
 */
static enum mc_run block_run(struct conn *c,
			     void (*feed)(struct conn *c, const uint8_t *p,
					  size_t n))
{
	struct mc_state *m = &c->mc;

	while (m->left) {
		const uint8_t *p;
		ssize_t got = conn_take(c, m->left, &p);

		if (got == 0)
			return RUN_WAIT;
		if (got < 0)
			return RUN_CLOSE;	/* a put is aborted */
		if (feed)
			feed(c, p, (size_t)got);
		else
			m->left -= (uint64_t)got;
	}
	return RUN_INPUT;
}

static enum mc_run value_run(struct conn *c)
{
	enum mc_run st = block_run(c, value_feed);

	if (st == RUN_INPUT)
		value_finish(c);
	return st;
}

static enum mc_run swallow_run(struct conn *c)
{
	enum mc_run st = block_run(c, NULL);

	if (st == RUN_INPUT)
		c->mc.job = JOB_NONE;
	return st;
}

/*
 * Skip the data block of a refused storage command, so the next command
 * is read where it starts.  A block longer than memcached ever takes is
 * not read at all: memcached refuses such a line as a bad command line
 * (below) and then reads what follows as commands, and so do we.
 */
static void swallow_block(struct conn *c, uint64_t bytes)
{
	struct mc_state *m = &c->mc;

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
		conn_reply(c, "CLIENT_ERROR bad command line format");
		return;
	}
	CNT(c->w, store_too_large);
	if (q->cmd == MC_SET || (q->cmd == MC_MS && q->meta.mode == MC_MS_SET))
		gs_delete(store_of(c), q->key, q->klen);
	conn_reply(c, "SERVER_ERROR object too large for cache");
	swallow_block(c, q->bytes);
}

/* A storage command line was parsed: plan how its data block is taken. */
static enum mc_run storage_start(struct conn *c)
{
	struct mc_state *m = &c->mc;
	const struct mc_req *q = &m->req;

	m->left = q->bytes + 2;
	m->bad_chunk = false;
	m->err = 0;
	m->job = JOB_NONE;
	if (q->bytes > c->w->gd->set.max_item) {
		storage_too_large(c, q);
		return RUN_OUTPUT;	/* the reply goes out before the swallow */
	}
	m->job = JOB_VALUE;
	if (q->bytes + 2 <= GD_RBUF / 2)
		return RUN_INPUT;	/* value_whole() once it is in */
	value_stream_begin(c);
	return RUN_INPUT;
}

/* ---- arithmetic ---- */

/* The value as memcached reads a counter: digits, spaces around them. */
static bool parse_counter(const char *buf, size_t len, uint64_t *v)
{
	size_t a = 0, b = len;

	while (a < b && buf[a] == ' ')
		a++;
	while (b > a && buf[b - 1] == ' ')
		b--;
	return mc_parse_u64(buf + a, b - a, UINT64_MAX, v);
}

/*
 * incr/decr/ma: read-modify-write, again on a race.  *val gets the new
 * value.  Returns 0, -ENOENT, -EINVAL (not a number), -ESTALE (ma C did
 * not match) or another -errno.
 */
static int arith(struct conn *c, const struct mc_req *q, bool decr,
		 uint64_t delta, uint64_t *val, uint64_t *cas)
{
	struct gs_store *s = store_of(c);
	int ret = -ESTALE;

	for (int i = 0; i < RMW_TRIES && ret == -ESTALE; i++) {
		struct gs_reader *r;
		const struct gs_meta *mt;
		struct gs_put_args a;
		char buf[32];
		ssize_t n;
		uint64_t v;

		if (i)
			CNT(c->w, rmw_retries);
		ret = gs_get_open(s, q->key, q->klen, 0, &r);
		if (ret < 0)
			return ret;
		mt = gs_reader_meta(r);
		memset(&a, 0, sizeof(a));
		a.flags = mt->flags;
		a.exptime = mt->exptime;
		a.mode = GS_CAS;
		a.cas_match = mt->cas;
		n = mt->size > 20 ? -EINVAL : gs_read(r, buf, mt->size, 0);
		gs_reader_close(r);
		if (n < 0)
			return (int)n;
		if (!parse_counter(buf, (size_t)n, &v))
			return -EINVAL;
		if (q->cmd == MC_MA && mc_meta_has(&q->meta, 'C') &&
		    q->meta.cas != a.cas_match)
			return -ESTALE;
		v = decr ? (v < delta ? 0 : v - delta) : v + delta;
		n = snprintf(buf, sizeof(buf), "%" PRIu64, v);
		a.size = (uint64_t)n;
		if (q->cmd == MC_MA && mc_meta_has(&q->meta, 'T'))
			a.exptime = store_exptime(q->meta.ttl);
		ret = put_buf(s, q->key, q->klen, &a, buf, (size_t)n, cas);
		*val = v;
		if (ret == -ESTALE && q->cmd == MC_MA &&
		    mc_meta_has(&q->meta, 'C'))
			return ret;
	}
	if (ret == 0)
		metatab_clear(c->w->gd->meta, q->key, q->klen);
	return ret;
}

static void count_arith(struct worker *w, bool decr, bool hit)
{
	if (decr && hit)
		CNT(w, decr_hits);
	else if (decr)
		CNT(w, decr_misses);
	else if (hit)
		CNT(w, incr_hits);
	else
		CNT(w, incr_misses);
}

static void cmd_arith(struct conn *c, const struct mc_req *q)
{
	bool decr = q->cmd == MC_DECR;
	uint64_t v = 0, cas;
	int ret = arith(c, q, decr, q->delta, &v, &cas);
	char line[32];

	if (ret == -ENOENT) {
		count_arith(c->w, decr, false);
		conn_reply(c, "NOT_FOUND");
		return;
	}
	if (ret == -EINVAL) {
		conn_reply(c, "CLIENT_ERROR cannot increment or decrement "
			      "non-numeric value");
		return;
	}
	if (ret < 0) {
		conn_reply(c, "SERVER_ERROR cannot store the value");
		return;
	}
	count_arith(c->w, decr, true);
	snprintf(line, sizeof(line), "%" PRIu64, v);
	conn_reply(c, line);
}

/* ---- delete, touch, flush_all ---- */

static void cmd_delete(struct conn *c, const struct mc_req *q)
{
	int ret = gs_delete(store_of(c), q->key, q->klen);

	metatab_clear(c->w->gd->meta, q->key, q->klen);
	if (ret == 0) {
		CNT(c->w, delete_hits);
		conn_reply(c, "DELETED");
	} else {
		CNT(c->w, delete_misses);
		conn_reply(c, "NOT_FOUND");
	}
}

static void cmd_touch(struct conn *c, const struct mc_req *q)
{
	CNT(c->w, cmd_touch);
	if (gs_touch(store_of(c), q->key, q->klen,
		     store_exptime(q->exptime)) == 0) {
		CNT(c->w, touch_hits);
		conn_reply(c, "TOUCHED");
	} else {
		CNT(c->w, touch_misses);
		conn_reply(c, "NOT_FOUND");
	}
}

struct flush_ctx {
	struct gs_store *s;
	int64_t before_ns;
	uint64_t deleted;
};

static int flush_one(void *arg, const void *key, size_t klen,
		     const struct gs_meta *m)
{
	struct flush_ctx *f = arg;

	if (m->mtime_ns <= f->before_ns && gs_delete(f->s, key, klen) == 0)
		f->deleted++;
	return 0;
}

uint64_t mc_flush(struct gd *gd, int64_t before_ns)
{
	struct flush_ctx f = { gd->s, before_ns, 0 };
	uint64_t last;

	/*
	 * Deleting while gs_iterate walks a bucket can make it skip a key
	 * of that bucket: walk again until a walk deletes nothing.
	 */
	do {
		last = f.deleted;
		if (gs_iterate(gd->s, "", 0, flush_one, &f) < 0)
			break;
	} while (f.deleted != last);
	return f.deleted;
}

static void cmd_flush_all(struct conn *c, const struct mc_req *q)
{
	struct gd *gd = c->w->gd;
	struct timespec ts;

	CNT(c->w, cmd_flush);
	if (q->has_num && q->num > 0) {
		int64_t at = mc_exptime((int64_t)q->num, now_sec());

		atomic_store(&gd->flush_at, at > 0 ? at : now_sec());
	} else {
		clock_gettime(CLOCK_REALTIME, &ts);
		atomic_store(&gd->flush_at, 0);
		mc_flush(gd, (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec);
	}
	conn_reply(c, "OK");
}

/* ---- meta commands ---- */

static void out_key(struct conn *c, const struct mc_req *q)
{
	if (q->b64) {
		char enc[(MC_KEY_MAX + 2) / 3 * 4 + 1];
		size_t n = mc_b64_encode(q->key, q->klen, enc);

		conn_out(c, enc, n);
	} else {
		conn_out(c, q->key, q->klen);
	}
}

static int64_t ttl_left(const struct gs_meta *mt)
{
	int64_t left;

	if (!mt->exptime)
		return -1;
	left = mt->exptime - now_sec();
	return left > 0 ? left : 0;
}

/* The return flags the request asked for, in its order. */
static void meta_flags_out(struct conn *c, const struct mc_req *q,
			   const struct gs_meta *mt, uint64_t cas)
{
	const struct mc_meta *m = &q->meta;
	int64_t la;

	for (unsigned i = 0; i < m->n; i++) {
		const struct mc_flag *f = &m->fl[i];

		switch (f->f) {
		case 'k':	/* b follows a base64 key: memcached's order */
			OUT(c, " k");
			out_key(c, q);
			if (q->b64)
				OUT(c, " b");
			break;
		case 'O':
			OUT(c, " O");
			conn_out(c, f->tok, f->len);
			break;
		case 'c':
			if (cas || mt)
				conn_printf(c, " c%" PRIu64,
					    cas ? cas : mt->cas);
			break;
		}
		if (!mt)
			continue;
		switch (f->f) {
		case 'f':
			conn_printf(c, " f%" PRIu32, mt->flags);
			break;
		case 's':
			conn_printf(c, " s%" PRIu64, mt->size);
			break;
		case 't':
			conn_printf(c, " t%" PRId64, ttl_left(mt));
			break;
		case 'h':
			OUT(c, " h0");	/* not tracked */
			break;
		case 'l':
			la = now_sec() - mt->mtime_ns / 1000000000ll;
			conn_printf(c, " l%" PRId64, la > 0 ? la : 0);
			break;
		}
	}
}

/* mg N: create the empty placeholder; its creator wins the recache. */
static int vivify(struct conn *c, const struct mc_req *q)
{
	struct gs_put_args a;
	uint64_t cas;
	int ret;

	memset(&a, 0, sizeof(a));
	a.exptime = store_exptime(q->meta.vivify_ttl);
	a.mode = GS_ADD;
	ret = put_buf(store_of(c), q->key, q->klen, &a, "", 0, &cas);
	if (ret == 0)
		metatab_set(c->w->gd->meta, q->key, q->klen, cas,
			    GD_MARK_WON);
	return ret;
}

/* The W, Z and X flags of a hit, marking the win when one is given. */
static void mg_marks(struct conn *c, const struct mc_req *q,
		     const struct gs_meta *mt, bool vivified)
{
	struct metatab *t = c->w->gd->meta;
	unsigned marks = metatab_get(t, q->key, q->klen, mt->cas);
	bool stale = marks & GD_MARK_STALE;
	bool want = stale || (mc_meta_has(&q->meta, 'R') && mt->exptime &&
			      ttl_left(mt) < q->meta.recache);

	bool win = vivified;

	if (!vivified && want && !(marks & GD_MARK_WON))
		win = !(metatab_set(t, q->key, q->klen, mt->cas, GD_MARK_WON) &
			GD_MARK_WON);
	if (!win && (marks & GD_MARK_WON))
		OUT(c, " Z");
	if (stale)
		OUT(c, " X");
	if (win)
		OUT(c, " W");
}

static enum mc_run cmd_mg(struct conn *c)
{
	struct mc_state *m = &c->mc;
	const struct mc_req *q = &m->req;
	struct worker *w = c->w;
	const struct gs_meta *mt;
	bool vivified = false;
	uint64_t first = 0, len;
	int ret;

	CNT(w, cmd_get);
	ret = gd_reader_open(c->w, q->key, q->klen, 0, &m->r);
	if (ret == -ENOENT && mc_meta_has(&q->meta, 'N')) {
		ret = vivify(c, q);
		vivified = ret == 0;
		ret = gd_reader_open(c->w, q->key, q->klen, 0, &m->r);
	}
	if (ret < 0) {
		m->r = NULL;
		m->job = JOB_NONE;
		CNT(w, get_misses);
		if (!mc_meta_has(&q->meta, 'q')) {
			OUT(c, "EN");
			meta_flags_out(c, q, NULL, 0);
			OUT(c, "\r\n");
		}
		return RUN_INPUT;
	}
	CNT(w, get_hits);
	mt = gs_reader_meta(m->r);
	/* after the open: the pinned version is served even if T expires it */
	if (mc_meta_has(&q->meta, 'T')) {
		CNT(w, cmd_touch);
		if (gs_touch(store_of(c), q->key, q->klen,
			     store_exptime(q->meta.ttl)) == 0)
			CNT(w, touch_hits);
		else
			CNT(w, touch_misses);
	}
	len = mt->size;
	if (mc_meta_has(&q->meta, 'G') && mc_meta_has(&q->meta, 'v')) {
		first = q->meta.range_first < mt->size ? q->meta.range_first
						       : mt->size;
		len = mt->size - first;
		if (q->meta.range_last != UINT64_MAX &&
		    q->meta.range_last - first + 1 < len)
			len = q->meta.range_last - first + 1;
		gs_reader_range(m->r, first, len);
	}
	if (mc_meta_has(&q->meta, 'v'))
		conn_printf(c, "VA %" PRIu64, len);
	else
		OUT(c, "HD");
	meta_flags_out(c, q, mt, 0);
	mg_marks(c, q, mt, vivified);
	OUT(c, "\r\n");
	if (!mc_meta_has(&q->meta, 'v')) {
		gd_reader_close(w, m->r);
		m->r = NULL;
		m->job = JOB_NONE;
		return RUN_INPUT;
	}
	m->job = JOB_GET;	/* one value, then done: no key list */
	m->kpos = m->kend = NULL;
	m->mg = true;
	return RUN_OUTPUT;
}

static void cmd_md(struct conn *c, const struct mc_req *q)
{
	struct gs_meta *mt = malloc(sizeof(*mt));
	const char *code = "HD";
	int ret;

	if (!mt) {
		OUT(c, "SERVER_ERROR out of memory\r\n");
		return;
	}
	ret = gs_stat(store_of(c), q->key, q->klen, mt);
	if (ret < 0) {
		code = "NF";
	} else if (mc_meta_has(&q->meta, 'C') && q->meta.cas != mt->cas) {
		code = "EX";
	} else if (mc_meta_has(&q->meta, 'I')) {
		metatab_clear(c->w->gd->meta, q->key, q->klen);
		metatab_set(c->w->gd->meta, q->key, q->klen, mt->cas,
			    GD_MARK_STALE);
		if (mc_meta_has(&q->meta, 'T'))
			gs_touch(store_of(c), q->key, q->klen,
				 store_exptime(q->meta.ttl));
	} else if (gs_delete(store_of(c), q->key, q->klen) < 0) {
		code = "NF";
	} else {
		metatab_clear(c->w->gd->meta, q->key, q->klen);
	}
	if (code[0] == 'H')
		CNT(c->w, delete_hits);
	else if (code[0] == 'N')
		CNT(c->w, delete_misses);
	free(mt);
	if (code[0] == 'H' && mc_meta_has(&q->meta, 'q'))
		return;
	conn_out(c, code, 2);
	meta_flags_out(c, q, NULL, 0);
	OUT(c, "\r\n");
}

/* ma N on a miss: create the counter with J; -EEXIST when raced. */
static int ma_create(struct conn *c, const struct mc_req *q, uint64_t *cas)
{
	struct gs_put_args a;
	char buf[32];
	int n = snprintf(buf, sizeof(buf), "%" PRIu64, q->meta.initial);

	memset(&a, 0, sizeof(a));
	a.size = (uint64_t)n;
	a.exptime = store_exptime(q->meta.vivify_ttl);
	a.mode = GS_ADD;
	return put_buf(store_of(c), q->key, q->klen, &a, buf, (size_t)n, cas);
}

static void cmd_ma(struct conn *c, const struct mc_req *q)
{
	bool decr = q->meta.mode == 1;
	uint64_t v = q->meta.initial, cas = 0;
	struct gs_meta *mt;
	char num[32];
	int ret, n;

	ret = arith(c, q, decr, q->meta.delta, &v, &cas);
	if (ret == -ENOENT && mc_meta_has(&q->meta, 'N')) {
		v = q->meta.initial;
		ret = ma_create(c, q, &cas);
		if (ret == -EEXIST)
			ret = arith(c, q, decr, q->meta.delta, &v, &cas);
	}
	switch (ret) {
	case 0:
		break;
	case -ENOENT:
		count_arith(c->w, decr, false);
		OUT(c, "NF");
		meta_flags_out(c, q, NULL, 0);
		OUT(c, "\r\n");
		return;
	case -EINVAL:
		OUT(c, "CLIENT_ERROR cannot increment or decrement "
			    "non-numeric value\r\n");
		return;
	case -ESTALE:
		OUT(c, "EX");
		meta_flags_out(c, q, NULL, 0);
		OUT(c, "\r\n");
		return;
	default:
		OUT(c, "SERVER_ERROR cannot store the value\r\n");
		return;
	}
	count_arith(c->w, decr, true);
	n = snprintf(num, sizeof(num), "%" PRIu64, v);
	mt = malloc(sizeof(*mt));
	if (mt && gs_stat(store_of(c), q->key, q->klen, mt) < 0) {
		free(mt);
		mt = NULL;
	}
	if (mt)
		mt->cas = cas;	/* ours, even if replaced since */
	if (mc_meta_has(&q->meta, 'v'))
		conn_printf(c, "VA %d", n);
	else if (mc_meta_has(&q->meta, 'q'))
		goto out;
	else
		OUT(c, "HD");
	meta_flags_out(c, q, mt, cas);
	OUT(c, "\r\n");
	if (mc_meta_has(&q->meta, 'v')) {
		conn_out(c, num, (size_t)n);
		OUT(c, "\r\n");
	}
out:
	free(mt);
}

static void cmd_me(struct conn *c, const struct mc_req *q)
{
	struct gs_meta *mt = malloc(sizeof(*mt));
	int64_t la;

	if (!mt || gs_stat(store_of(c), q->key, q->klen, mt) < 0) {
		free(mt);
		OUT(c, "EN\r\n");
		return;
	}
	la = now_sec() - mt->mtime_ns / 1000000000ll;
	OUT(c, "ME ");
	out_key(c, q);
	conn_printf(c, " exp=%" PRId64 " la=%" PRId64 " cas=%" PRIu64
		    " fetch=no cls=1 size=%" PRIu64 "\r\n",
		    ttl_left(mt), la > 0 ? la : 0, mt->cas, mt->size);
	free(mt);
}

/* ---- listing: lru_crawler metadump ---- */

/*
 * One metadump line per key, memcached's format: the key URI-encoded
 * (unreserved bytes as they are, others %XX), exp and la in unix seconds
 * (exp -1: never; la: the write time, access times are not tracked).
 */
static int metadump_one(void *arg, const void *key, size_t klen,
			const struct gs_meta *m)
{
	static const char unreserved[] = "abcdefghijklmnopqrstuvwxyz"
					 "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
					 "0123456789-._~";
	static const char hex[] = "0123456789ABCDEF";
	struct conn *c = arg;
	const unsigned char *k = key;
	char enc[MC_KEY_MAX * 3 + 1];
	size_t n = 0;

	if (m->exptime && m->exptime <= now_sec())
		return 0;
	for (size_t i = 0; i < klen && n + 3 < sizeof(enc); i++) {
		if (k[i] && strchr(unreserved, k[i])) {
			enc[n++] = (char)k[i];
		} else {
			enc[n++] = '%';
			enc[n++] = hex[k[i] >> 4];
			enc[n++] = hex[k[i] & 15];
		}
	}
	OUT(c, "key=");
	conn_out(c, enc, n);
	conn_printf(c, " exp=%" PRId64 " la=%" PRId64 " cas=%" PRIu64
		    " fetch=no cls=1 size=%" PRIu64 "\n",
		    m->exptime ? m->exptime : -1,
		    (int64_t)(m->mtime_ns / 1000000000), m->cas, m->size);
	return c->closing;
}

/*
 * The whole listing goes into the reply buffer before the first byte is
 * sent: about 100 bytes per key (see goblind(8)).
 */
static void cmd_metadump(struct conn *c, const struct mc_req *q)
{
	/* gs_iterate compares the prefix with memcmp: never NULL */
	if (gs_iterate(store_of(c), q->arg ? q->arg : "",
		       q->arg ? q->arg_len : 0, metadump_one, c) < 0) {
		OUT(c, "SERVER_ERROR cannot list the store\r\n");
		return;
	}
	OUT(c, "END\r\n");
}

/* ---- the command loop ---- */

/* Commands that answer at once, from the request parsed in rbuf. */
static enum mc_run run_simple(struct conn *c, const struct mc_req *q)
{
	struct gd *gd = c->w->gd;

	switch (q->cmd) {
	case MC_INCR: case MC_DECR:
		cmd_arith(c, q);
		break;
	case MC_DELETE:
		cmd_delete(c, q);
		break;
	case MC_TOUCH:
		cmd_touch(c, q);
		break;
	case MC_FLUSH_ALL:
		cmd_flush_all(c, q);
		break;
	case MC_STATS:
		if (gd_stats(gd, c, q->arg, q->arg_len) < 0)
			OUT(c, "ERROR\r\n");
		break;
	case MC_VERSION:
		conn_out(c, "VERSION " GD_MC_VERSION "\r\n",
			 sizeof("VERSION " GD_MC_VERSION "\r\n") - 1);
		break;
	case MC_VERBOSITY:
		atomic_store(&gd->verbosity, (int)q->num);
		conn_reply(c, "OK");
		break;
	case MC_QUIT:
		return RUN_CLOSE;
	case MC_METADUMP:
		cmd_metadump(c, q);
		break;
	case MC_MN:
		OUT(c, "MN\r\n");
		break;
	case MC_MD:
		CNT(c->w, cmd_meta);
		cmd_md(c, q);
		break;
	case MC_MA:
		CNT(c->w, cmd_meta);
		cmd_ma(c, q);
		break;
	case MC_ME:
		CNT(c->w, cmd_meta);
		cmd_me(c, q);
		break;
	default:
		break;
	}
	return RUN_INPUT;
}

/* Start a command that outlives this call: its line is kept. */
static enum mc_run run_long(struct conn *c, const char *line, size_t len)
{
	struct mc_state *m = &c->mc;
	const struct mc_req *q = &m->req;

	if (keep_line(c, line, len) < 0) {
		OUT(c, "SERVER_ERROR out of memory\r\n");
		return RUN_CLOSE;
	}
	c->noreply = q->cmd == MC_MS ? false : q->noreply;
	switch (q->cmd) {
	case MC_GET: case MC_GETS: case MC_GAT: case MC_GATS:
		m->job = JOB_GET;
		m->mg = false;
		m->kpos = q->keys;
		m->kend = q->keys + q->keys_len;
		return RUN_INPUT;
	case MC_MG:
		CNT(c->w, cmd_meta);
		return cmd_mg(c);
	case MC_MS:
		CNT(c->w, cmd_meta);
		/* fall through */
	default:
		return storage_start(c);
	}
}

static bool is_long(enum mc_cmd cmd)
{
	switch (cmd) {
	case MC_GET: case MC_GETS: case MC_GAT: case MC_GATS:
	case MC_SET: case MC_ADD: case MC_REPLACE: case MC_APPEND:
	case MC_PREPEND: case MC_CAS: case MC_MG: case MC_MS:
		return true;
	default:
		return false;
	}
}

/* Does @q change the store (an expiry time included)? */
static bool is_write(const struct mc_req *q)
{
	switch (q->cmd) {
	case MC_GET: case MC_GETS: case MC_STATS: case MC_VERSION:
	case MC_VERBOSITY: case MC_QUIT: case MC_METADUMP: case MC_MN:
	case MC_ME: case MC_NONE:
		return false;
	case MC_MG:	/* vivify on miss, or a new TTL */
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
		swallow_block(c, q->bytes);
}

/* A mirror stores what the origin serves and nothing else. */
static void mirror_refuse(struct conn *c, const struct mc_req *q)
{
	CNT(c->w, mirror_writes_refused);
	write_refuse(c, q, "SERVER_ERROR read only: a mirror stores what its "
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

/* ---- --auth-file: memcached's text protocol authentication ---- */

/*
 * Before it has logged in, a connection of a daemon with --auth-file
 * gets what memcached -Y gives (proto_text.c, try_read_command_asciiauth):
 * a "set <key> <flags> <exptime> <bytes>" line whose data block is
 * "user password" answers STORED and logs in; any other line gets
 * "CLIENT_ERROR unauthenticated"; a block not ending "\r\n", one that
 * is not two tokens, and wrong credentials get their own errors.  The
 * line and the block are tokenized as memcached does (on spaces only).
 * Unlike memcached, every pipelined line is answered in turn, and a
 * block over AUTH_BLOCK_MAX bytes is refused and the connection closed
 * (memcached waits for it forever).
 */
#define AUTH_LINE_MAX 2048	/* memcached closes without a newline by then */
#define AUTH_BLOCK_MAX 1024	/* "user password": fields are <= 255 bytes */
#define AUTH_TOKENS 24		/* memcached's MAX_TOKENS */

/* Split @s (@len bytes) on ' ' into at most @max tokens. */
static unsigned auth_tokens(const char *s, size_t len, const char **tok,
			    size_t *tlen, unsigned max)
{
	unsigned n = 0;
	size_t i = 0;

	while (i < len && n < max) {
		size_t b;

		while (i < len && s[i] == ' ')
			i++;
		if (i == len)
			break;
		b = i;
		while (i < len && s[i] != ' ')
			i++;
		tok[n] = s + b;
		tlen[n++] = i - b;
	}
	return n;
}

/* memcached's safe_strtoul on a token that may end in '\r'. */
static bool auth_size(const char *t, size_t len, uint32_t *out)
{
	char buf[32], *end;
	unsigned long v;

	if (!len || len >= sizeof(buf))
		return false;
	memcpy(buf, t, len);
	buf[len] = 0;
	errno = 0;
	v = strtoul(buf, &end, 10);
	if (errno || end == buf || (*end && *end != '\r') ||
	    strchr(buf, '-') || v > UINT32_MAX)
		return false;
	*out = (uint32_t)v;
	return true;
}

/* Constant time in the bytes compared (lengths may leak). */
static bool auth_equal(const char *a, size_t alen, const char *b,
		       size_t blen)
{
	unsigned char d = alen != blen;

	for (size_t i = 0; i < alen && i < blen; i++)
		d |= (unsigned char)(a[i] ^ b[i]);
	return !d;
}

static bool auth_check(const struct gd *gd, const char *user, size_t ulen,
		       const char *pass, size_t plen)
{
	bool ok = false;

	for (unsigned i = 0; i < gd->nauth; i++) {	/* no early exit */
		const struct gd_auth_user *u = &gd->auth[i];
		bool m = auth_equal(user, ulen, u->user, u->ulen);

		m &= auth_equal(pass, plen, u->pass, u->plen);
		ok |= m;
	}
	return ok;
}

/* One step of the login: 1 consumed input, 0 needs more, -1 close. */
static int auth_step(struct conn *c)
{
	const char *p = c->rbuf + c->rstart, *el, *tok[AUTH_TOKENS];
	size_t avail = c->rend - c->rstart, tlen[AUTH_TOKENS];
	uint32_t size;
	unsigned n;

	if (!c->auth_block) {
		if (avail < 2)
			return 0;
		el = memchr(p, '\n', avail);
		if (!el)
			return avail > AUTH_LINE_MAX ? -1 : 0;
		n = auth_tokens(p, (size_t)(el - p), tok, tlen, AUTH_TOKENS);
		c->rstart += (size_t)(el - p) + 1;
		if (n < 5 || tlen[0] != 3 || memcmp(tok[0], "set", 3) ||
		    !auth_size(tok[4], tlen[4], &size)) {
			OUT(c, "CLIENT_ERROR unauthenticated\r\n");
			return 1;
		}
		if (size > AUTH_BLOCK_MAX) {
			CNT(c->w, auth_cmds);
			CNT(c->w, auth_errors);
			OUT(c, "CLIENT_ERROR bad authentication token format"
			       "\r\n");
			return -1;
		}
		c->auth_left = size + 2;
		c->auth_block = true;
		return 1;
	}
	if (avail < c->auth_left)
		return 0;
	c->rstart += c->auth_left;
	c->auth_block = false;
	if (memcmp(p + c->auth_left - 2, "\r\n", 2)) {
		OUT(c, "CLIENT_ERROR bad command line termination\r\n");
		return 1;
	}
	n = auth_tokens(p, c->auth_left - 2, tok, tlen, AUTH_TOKENS);
	if (n < 2) {
		OUT(c, "CLIENT_ERROR bad authentication token format\r\n");
		return 1;
	}
	CNT(c->w, auth_cmds);
	if (auth_check(c->w->gd, tok[0], tlen[0], tok[1], tlen[1])) {
		c->authed = true;
		OUT(c, "STORED\r\n");
	} else {
		CNT(c->w, auth_errors);
		OUT(c, "CLIENT_ERROR authentication failure\r\n");
	}
	return 1;
}

/* Continue the command in progress; RUN_INPUT once it is done. */
static enum mc_run run_job(struct conn *c)
{
	struct mc_state *m = &c->mc;

	switch (m->job) {
	case JOB_GET:
		if (m->mg) {
			enum mc_run st = stream_value(c);

			if (st == RUN_INPUT)
				m->job = JOB_NONE;
			return st;
		}
		return get_run(c);
	case JOB_SWALLOW:
		return swallow_run(c);
	case JOB_VALUE:
		if (!m->wr && !m->err &&
		    m->req.bytes + 2 <= GD_RBUF / 2) {
			if (c->rend - c->rstart < m->req.bytes + 2)
				return RUN_INPUT;
			value_whole(c);
			return RUN_INPUT;
		}
		return value_run(c);
	default:
		return RUN_INPUT;
	}
}

enum mc_run mc_conn_run(struct conn *c)
{
	struct mc_state *m = &c->mc;

	for (;;) {
		struct mc_req *q = &c->w->req;
		enum mc_parse_result pr;
		const char *line;
		size_t used = 0;
		enum mc_run st;

		if (m->job != JOB_NONE) {
			st = run_job(c);
			if (m->job != JOB_NONE || st != RUN_INPUT)
				return st;
		}
		c->noreply = false;
		if (c->closing)
			return RUN_CLOSE;
		if (c->wend - c->wstart > GD_WBUF_HIGH)
			return RUN_OUTPUT;
		if (c->w->gd->auth && !c->authed) {
			int ret = auth_step(c);

			if (ret <= 0)
				return ret < 0 ? RUN_CLOSE : RUN_INPUT;
			continue;
		}
		line = c->rbuf + c->rstart;
		pr = mc_parse(line, c->rend - c->rstart, GD_GET_LINE_MAX, q,
			      &used);
		switch (pr) {
		case MC_PARSE_MORE:
			return RUN_INPUT;
		case MC_PARSE_TOO_LONG:
			CNT(c->w, conn_closed_long_line);
			return RUN_CLOSE;
		case MC_PARSE_ERROR:
			c->rstart += used;
			OUT(c, "ERROR\r\n");
			continue;
		case MC_PARSE_CLIENT_ERROR:
			c->rstart += used;
			if (!q->noreply || q->cmd >= MC_MG)
				conn_printf(c, "CLIENT_ERROR %s\r\n", q->err);
			if (q->swallow)		/* keep the framing */
				swallow_block(c, q->bytes);
			continue;
		case MC_PARSE_OK:
			break;
		}
		c->rstart += used;
		if (is_write(q) && !may_write(c)) {
			CNT(c->w, mc_denied);
			write_refuse(c, q, "CLIENT_ERROR writes are accepted "
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
		c->noreply = q->cmd < MC_MG && q->noreply;
		st = run_simple(c, q);
		if (st != RUN_INPUT)
			return st;
	}
}

void mc_conn_release(struct conn *c)
{
	struct mc_state *m = &c->mc;

	if (m->r)
		gd_reader_close(c->w, m->r);
	m->r = NULL;
	value_drop(m);
	m->job = JOB_NONE;
	c->chunk = NULL;
	c->chunk_len = 0;
	free(m->line);
	m->line = NULL;
}

bool mc_conn_idle(const struct conn *c)
{
	return c->mc.job == JOB_NONE;
}
