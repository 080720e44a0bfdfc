/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * goblind --ring: the requests.  get and getrange stream head first: the
 * response header carries the first window of the RAM head, the rest
 * goes out in data frames as the reply ring has room and the tail's
 * reads complete on the worker's io_uring.  A set streams its data
 * frames into a store writer (the writer's bounded block is the store's
 * backpressure, as for memcache).  A client that lies about a transfer
 * (a data frame out of order, of another request, too long) loses its
 * connection.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ring.h"

static enum ring_step bad(struct ring_state *rs, const char *why)
{
	rs->err = why;
	return RS_CLOSE;
}

void ring_req_release(struct conn *c)
{
	struct ring_state *rs = ring_of(c);

	if (rs->r) {
		gd_reader_close(c->w, rs->r);
		rs->r = NULL;
	}
	if (rs->wr) {
		gs_put_abort(rs->wr);
		rs->wr = NULL;
	}
	free(rs->mem);
	rs->mem = NULL;
	rs->have_ch = false;
	rs->job = RJ_NONE;
}

/* Answer the request in progress with @status alone. */
static enum ring_step reply_status(struct conn *c, unsigned status)
{
	struct ring_state *rs = ring_of(c);

	memset(&rs->resp, 0, sizeof(rs->resp));
	rs->resp.status = (uint16_t)status;
	rs->resp.credits = 1;
	rs->job = RJ_REPLY;
	return RS_DONE;
}

/* RJ_REPLY: the reply once the ring has room.  A quiet request that
 * worked gets none. */
static enum ring_step reply_run(struct conn *c)
{
	struct ring_state *rs = ring_of(c);
	enum ring_step st = RS_DONE;

	if (!(rs->rflags & GP_RQ_QUIET) || rs->resp.status != GP_S_OK)
		st = ring_reply(c, rs->opaque, &rs->resp, NULL, 0);
	if (st == RS_DONE)
		rs->job = RJ_NONE;
	return st;
}

static uint32_t ttl_left(int64_t exptime)
{
	int64_t now = (int64_t)time(NULL);

	if (!exptime)
		return 0;
	return exptime > now ? (uint32_t)(exptime - now) : 1;
}

static int64_t exptime_of(uint32_t ttl)
{
	return ttl ? (int64_t)time(NULL) + ttl : 0;
}

/* ---- sending a value: the header with the first window, then data ---- */

/* The next chunk to send: 1, or 0 with what to wait for in *st. */
static int next_chunk(struct conn *c, enum ring_step *st)
{
	struct ring_state *rs = ring_of(c);
	int ret;

	if (rs->have_ch)
		return 1;
	if (!rs->r) { /* from memory: one chunk, set at the start */
		*st = bad(rs, "a value ran out before its length");
		return 0;
	}
	ret = gs_reader_poll(rs->r, &rs->ch);
	if (ret == 1) {
		rs->have_ch = true;
		rs->ch_off = 0;
		return 1;
	}
	if (ret == -EAGAIN) {
		*st = RS_DISK;
		return 0;
	}
	/* the header may have promised bytes we cannot send */
	gd_log(GD_LOG_WARN, "ring: read of a value failed: %s",
	       ret ? gs_strerror(ret) : "short");
	if (!rs->resp_sent) {
		gd_reader_close(c->w, rs->r);
		rs->r = NULL;
		*st = reply_status(c, GP_S_ERROR);
		return 0;
	}
	*st = bad(rs, "a value's read failed after its header");
	return 0;
}

/* The header alone, before a tail read: head first, even with no head. */
static enum ring_step send_header(struct conn *c)
{
	struct ring_state *rs = ring_of(c);
	enum ring_step st = ring_reply(c, rs->opaque, &rs->resp, NULL, 0);

	if (st == RS_DONE)
		rs->resp_sent = true;
	return st;
}

static void send_done(struct conn *c)
{
	struct ring_state *rs = ring_of(c);

	if (rs->r) {
		gd_reader_close(c->w, rs->r);
		rs->r = NULL;
	}
	free(rs->mem);
	rs->mem = NULL;
	rs->have_ch = false;
	rs->job = RJ_NONE;
}

/* RJ_SEND: windows of the value while the reply ring has room. */
static enum ring_step send_run(struct conn *c)
{
	struct ring_state *rs = ring_of(c);
	enum ring_step st = RS_DONE;

	while (rs->sent < rs->total || !rs->resp_sent) {
		uint64_t n, len;
		uint8_t *p;

		if (rs->sent == rs->total) { /* an empty value */
			if ((st = send_header(c)) != RS_DONE)
				return st;
			continue;
		}
		if (!next_chunk(c, &st)) {
			if (st == RS_DISK && !rs->resp_sent &&
			    send_header(c) == RS_CLOSE)
				return RS_CLOSE;
			return st;
		}
		n = rs->ch.len - rs->ch_off;
		if (n > GR_WINDOW)
			n = GR_WINDOW;
		if (n > rs->total - rs->sent)
			n = rs->total - rs->sent;
		len = (rs->resp_sent ? GP_DATA_FIXED : GP_RESP_FIXED) + n;
		if (!(p = ring_room(c, len)))
			return rs->err ? RS_CLOSE : RS_IDLE;
		if (rs->resp_sent) {
			struct gp_data d = { .offset = rs->sent,
					     .len = (uint32_t)n };

			if (rs->sent + n == rs->total)
				d.flags = GP_DF_LAST;
			gp_encode_data_head(p, len, rs->opaque, &d);
			memcpy(p + GP_DATA_FIXED,
			       (const uint8_t *)rs->ch.data + rs->ch_off, n);
		} else if (gp_encode_resp(p, len, rs->opaque, &rs->resp,
					  (const uint8_t *)rs->ch.data +
						  rs->ch_off,
					  (uint32_t)n) < 0) {
			return bad(rs, "cannot encode a reply");
		}
		ring_put(c, len);
		rs->resp_sent = true;
		rs->sent += n;
		rs->ch_off += n;
		if (rs->ch_off == rs->ch.len)
			rs->have_ch = false;
	}
	send_done(c);
	return RS_DONE;
}

/* ---- the requests ---- */

static enum ring_step req_get(struct conn *c, const struct gp_msg *m)
{
	struct ring_state *rs = ring_of(c);
	const struct gs_meta *mt;
	uint64_t off = 0, len;
	int ret;

	CNT(c->w, cmd_get);
	ret = gd_reader_open(c->w, (const char *)m->key, m->req.key_len, 0,
			     &rs->r);
	if (ret < 0) {
		rs->r = NULL;
		CNT(c->w, get_misses);
		return reply_status(c, ret == -ENOENT ? GP_S_NOT_FOUND :
							GP_S_ERROR);
	}
	CNT(c->w, get_hits);
	mt = gs_reader_meta(rs->r);
	len = mt->size;
	if (m->h.template_id == GP_T_GETRANGE) {
		off = m->req.offset;
		if (off > mt->size || (off == mt->size && mt->size)) {
			send_done(c);
			return reply_status(c, GP_S_RANGE);
		}
		len = mt->size - off;
		if (m->req.length && m->req.length < len)
			len = m->req.length;
		if (gs_reader_range(rs->r, off, len) < 0) {
			send_done(c);
			return reply_status(c, GP_S_ERROR);
		}
	}
	memset(&rs->resp, 0, sizeof(rs->resp));
	rs->resp.client_flags = mt->flags;
	rs->resp.ttl = ttl_left(mt->exptime);
	rs->resp.credits = 1;
	rs->resp.cas = mt->cas;
	rs->resp.value_size = mt->size;
	rs->resp.offset = off;
	if (m->req.flags & GP_RQ_NOVALUE) {
		send_done(c);
		rs->job = RJ_REPLY;
		return RS_DONE;
	}
	rs->resp.flags = GP_RS_VALUE;
	rs->resp.length = len;
	rs->total = len;
	rs->sent = 0;
	rs->resp_sent = false;
	rs->job = RJ_SEND;
	return RS_DONE;
}

/* The end of a set: commit, and the reply says how it went. */
static enum ring_step set_commit(struct conn *c)
{
	struct ring_state *rs = ring_of(c);
	uint64_t cas = 0;
	int ret = gs_put_commit(rs->wr, &cas);
	unsigned st;

	rs->wr = NULL;
	switch (ret) {
	case 0:
		st = GP_S_OK;
		break;
	case -EEXIST:
	case -ESTALE:
		st = GP_S_EXISTS;
		break;
	case -ENOENT:
		st = rs->set_mode == GS_CAS ? GP_S_NOT_FOUND : GP_S_NOT_STORED;
		break;
	default:
		st = GP_S_ERROR;
	}
	if (ret == 0)
		CNT(c->w, cmd_set);
	reply_status(c, st);
	rs->resp.cas = cas;
	return RS_DONE;
}

/* The bytes of a set, from its frame or a data frame. */
static enum ring_step set_bytes(struct conn *c, const uint8_t *p, uint32_t n)
{
	struct ring_state *rs = ring_of(c);
	int ret;

	if (n > rs->set_len - rs->set_got)
		return bad(rs, "more set data than its length");
	rs->set_got += n;
	if (rs->job == RJ_SET && n && (ret = gs_put_write(rs->wr, p, n)) < 0) {
		gd_log(GD_LOG_WARN, "ring: a set's write failed: %s",
		       gs_strerror(ret));
		gs_put_abort(rs->wr);
		rs->wr = NULL;
		rs->job = RJ_SKIP;
		rs->resp.status = GP_S_ERROR;
	}
	if (rs->set_got < rs->set_len)
		return RS_DONE;
	if (rs->job == RJ_SKIP)
		return reply_status(c, rs->resp.status);
	return set_commit(c);
}

static enum ring_step req_set(struct conn *c, const struct gp_msg *m)
{
	struct ring_state *rs = ring_of(c);
	struct gs_put_args a = { 0 };
	const struct gp_req *q = &m->req;
	int ret;

	a.size = q->length;
	a.flags = q->client_flags;
	a.exptime = exptime_of(q->ttl);
	a.mode = q->flags & GP_RQ_ADD	  ? GS_ADD :
		 q->flags & GP_RQ_REPLACE ? GS_REPLACE :
		 q->cas			  ? GS_CAS :
					    GS_SET;
	a.cas_match = q->cas;
	rs->set_mode = (int)a.mode;
	rs->set_got = 0;
	rs->set_len = q->length;
	rs->job = RJ_SET;
	if (q->length > c->w->gd->set.max_item) {
		CNT(c->w, store_too_large);
		ret = -EFBIG;
	} else {
		ret = gs_put_begin(c->w->gd->s, m->key, q->key_len, &a,
				   &rs->wr);
	}
	if (ret < 0) {
		rs->wr = NULL;
		rs->job = RJ_SKIP;
		if (ret == -ENOSPC)
			CNT(c->w, store_no_memory);
		rs->resp.status = ret == -EFBIG	 ? GP_S_TOO_LARGE :
				  ret == -ENOSPC ? GP_S_BUSY :
						   GP_S_NOT_STORED;
	}
	return set_bytes(c, m->payload, m->payload_len);
}

/* RJ_SET, RJ_SKIP: the next data frame of the set. */
static enum ring_step set_run(struct conn *c)
{
	struct ring_state *rs = ring_of(c);
	struct gp_msg m;
	enum ring_step st = ring_take(c, &m);
	bool last;

	if (st != RS_DONE)
		return st;
	last = rs->set_got + m.data.len == rs->set_len;
	if (m.h.template_id != GP_T_DATA || m.h.opaque != rs->opaque ||
	    m.data.offset != rs->set_got || (m.data.flags & GP_DF_PLACED) ||
	    !(m.data.flags & GP_DF_LAST) != !last)
		return bad(rs, "a set's data frame out of order");
	return set_bytes(c, m.payload, m.payload_len);
}

static enum ring_step req_delete(struct conn *c, const struct gp_msg *m)
{
	struct gs_store *s = c->w->gd->s;
	struct gs_meta mt;
	int ret;

	if (m->req.cas) {
		ret = gs_stat(s, m->key, m->req.key_len, &mt);
		if (ret == 0 && mt.cas != m->req.cas)
			return reply_status(c, GP_S_EXISTS);
	}
	ret = gs_delete(s, m->key, m->req.key_len);
	if (ret == 0)
		CNT(c->w, delete_hits);
	else if (ret == -ENOENT)
		CNT(c->w, delete_misses);
	return reply_status(c, ret == 0	      ? GP_S_OK :
			       ret == -ENOENT ? GP_S_NOT_FOUND :
						GP_S_ERROR);
}

static enum ring_step req_touch(struct conn *c, const struct gp_msg *m)
{
	int ret = gs_touch(c->w->gd->s, m->key, m->req.key_len,
			   exptime_of(m->req.ttl));

	CNT(c->w, cmd_touch);
	if (ret == 0)
		CNT(c->w, touch_hits);
	else
		CNT(c->w, touch_misses);
	return reply_status(c, ret == 0 ? GP_S_OK : GP_S_NOT_FOUND);
}

/* stats: "name value" lines, as over RDMA (gd_stats_text()) */
static enum ring_step req_stats(struct conn *c, const struct gp_msg *m)
{
	struct ring_state *rs = ring_of(c);
	struct gd_buf b = { 0 };

	if (gd_stats_text(c->w->gd, (const char *)m->key, m->req.key_len, &b) <
	    0) {
		free(b.p);
		return reply_status(c, GP_S_BAD_REQUEST);
	}
	if (b.oom) {
		free(b.p);
		return reply_status(c, GP_S_BUSY);
	}
	rs->mem = (uint8_t *)b.p; /* send_done() frees it */
	memset(&rs->resp, 0, sizeof(rs->resp));
	rs->resp.flags = b.len ? GP_RS_VALUE : 0;
	rs->resp.credits = 1;
	rs->resp.value_size = rs->resp.length = b.len;
	rs->ch.data = rs->mem;
	rs->ch.len = b.len;
	rs->ch_off = 0;
	rs->have_ch = true;
	rs->total = b.len;
	rs->sent = 0;
	rs->resp_sent = false;
	rs->job = RJ_SEND;
	return RS_DONE;
}

static enum ring_step request(struct conn *c)
{
	struct ring_state *rs = ring_of(c);
	struct gp_msg m;
	enum ring_step st = ring_take(c, &m);

	if (st != RS_DONE)
		return st;
	rs->opaque = m.h.opaque;
	rs->rflags = m.h.template_id <= GP_T_NOOP ? m.req.flags : 0;
	/* a window is RDMA's (registered memory the server writes into or
	 * reads from): the ring has none, and such a set sends no data */
	if (rs->rflags & GP_RQ_WINDOW)
		return reply_status(c, GP_S_UNSUPPORTED);
	switch (m.h.template_id) {
	case GP_T_GET:
	case GP_T_GETRANGE:
		return req_get(c, &m);
	case GP_T_SET:
		return req_set(c, &m);
	case GP_T_DELETE:
		return req_delete(c, &m);
	case GP_T_TOUCH:
		return req_touch(c, &m);
	case GP_T_STATS:
		return req_stats(c, &m);
	case GP_T_NOOP:
		return reply_status(c, GP_S_OK);
	}
	return bad(rs, "not a request");
}

enum ring_step ring_step(struct conn *c)
{
	switch (ring_of(c)->job) {
	case RJ_SEND:
		return send_run(c);
	case RJ_SET:
	case RJ_SKIP:
		return set_run(c);
	case RJ_REPLY:
		return reply_run(c);
	case RJ_NONE:
		break;
	}
	return request(c);
}
