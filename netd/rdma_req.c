/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RDMA: the requests of goblin's binary protocol, one at a time per
 * connection, in order.  A get's response goes first (SEND), then its
 * bytes: into the client's window by RDMA WRITE, straight from the RAM
 * head's slot or the read buffer of each tail chunk as its disk read
 * completes, each WRITE followed by a data frame (SEND, PLACED: the
 * BULK_READY); without a window, in data frames by SEND.  A set with a
 * window is pulled by RDMA READ into the staging buffer, piece by
 * piece, into a store writer.
 */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rdma_int.h"

/* Room for a value inline in a response, or in a data frame. */
#define RESP_ROOM (RD_MSG - GP_RESP_FIXED)
#define DATA_ROOM (RD_MSG - GP_DATA_FIXED)

static void resp_set(struct gp_resp *r, unsigned status)
{
	memset(r, 0, sizeof(*r));
	r->status = (uint16_t)status;
	r->credits = RD_CREDITS;
}

/* The response of the request in progress, with @n bytes inline. */
static int send_resp(struct rd_conn *rc, const struct gp_resp *r,
		     const void *inl, uint32_t n)
{
	int i = rd_send_get(rc), len;

	if (i < 0)
		return -EAGAIN;
	len = gp_encode_resp(rd_send_buf(rc, i), RD_MSG, rc->q.m.h.opaque, r,
			     inl, n);
	if (len < 0)
		return len;
	return rd_send_post(rc, (unsigned)i, (size_t)len);
}

static unsigned put_status(int ret)
{
	switch (ret) {
	case -EEXIST: /* add over a present key */
	case -ESTALE: /* cas mismatch */
		return GP_S_EXISTS;
	case -ENOENT: /* replace of a missing key */
		return GP_S_NOT_STORED;
	case -EFBIG:
		return GP_S_TOO_LARGE;
	case -ENOSPC:
	case -EBUSY:
	case -EAGAIN:
		return GP_S_BUSY;
	case -EINVAL:
		return GP_S_BAD_REQUEST;
	}
	return GP_S_ERROR;
}

void rd_req_release(struct rd_conn *rc)
{
	struct rd_req *q = &rc->q;

	if (q->rd)
		gd_reader_close(rc->rw->w, q->rd);
	if (q->wr)
		gs_put_abort(q->wr);
	free(q->text.p);
	memset(q, 0, sizeof(*q));
}

/* ---- starting a request: its response, and what streams after it ---- */

static void start_get(struct rd_conn *rc, struct gp_resp *resp)
{
	struct rd_req *q = &rc->q;
	const struct gp_req *r = &q->m.req;
	const struct gs_meta *mt;
	uint64_t size;
	int ret;

	ret = gd_reader_open(rc->rw->w, (const char *)q->m.key, r->key_len, 0,
			     &q->rd);
	CNT(rc->rw->w, cmd_get);
	if (ret < 0) {
		CNT(rc->rw->w, get_misses);
		resp_set(resp, ret == -ENOENT ? GP_S_NOT_FOUND : GP_S_ERROR);
		return;
	}
	CNT(rc->rw->w, get_hits);
	mt = gs_reader_meta(q->rd);
	size = mt->size;
	resp_set(resp, GP_S_OK);
	resp->client_flags = mt->flags;
	resp->cas = mt->cas;
	resp->value_size = size;
	if (mt->exptime) {
		int64_t left = mt->exptime - (int64_t)time(NULL);

		resp->ttl = left > 0 ? (uint32_t)left : 1;
	}
	if (q->m.h.template_id == GP_T_GETRANGE) {
		if (r->offset > size) {
			resp_set(resp, GP_S_RANGE);
			return;
		}
		q->off = r->offset;
		q->total = size - r->offset;
		if (r->length && r->length < q->total)
			q->total = r->length;
	} else {
		q->total = size;
	}
	if (r->flags & GP_RQ_NOVALUE)
		q->total = 0;
	q->window = r->flags & GP_RQ_WINDOW;
	if (q->window && q->total > r->win_len) {
		/* the client asks for the rest by getrange, window by
		 * window; a window this small would be a request per
		 * few bytes */
		if (r->win_len < RD_WINDOW_MIN) {
			CNT(rc->rw->w, rdma_bad_window);
			resp_set(resp, GP_S_WINDOW);
			return;
		}
		q->total = r->win_len;
	}
	resp->offset = q->off;
	resp->length = q->total;
	if (q->total) {
		resp->flags = GP_RS_VALUE;
		ret = gs_reader_range(q->rd, q->off, q->total);
		if (ret < 0)
			resp_set(resp, GP_S_ERROR);
	}
}

static void start_set(struct rd_conn *rc, struct gp_resp *resp)
{
	struct rd_req *q = &rc->q;
	const struct gp_req *r = &q->m.req;
	struct gs_put_args a = { .size = r->length,
				 .flags = r->client_flags,
				 .mode = GS_SET };
	int ret;

	CNT(rc->rw->w, cmd_set);
	resp_set(resp, GP_S_OK);
	if (r->length > rc->rw->srv->gd->set.max_item) {
		CNT(rc->rw->w, store_too_large);
		resp_set(resp, GP_S_TOO_LARGE);
		return;
	}
	/* the value is inline or in the client's window: no data frames
	 * from the client over RDMA */
	if (!(r->flags & GP_RQ_WINDOW) && q->m.payload_len != r->length) {
		resp_set(resp, GP_S_UNSUPPORTED);
		return;
	}
	if (r->ttl)
		a.exptime = (int64_t)time(NULL) + r->ttl;
	if (r->flags & GP_RQ_ADD)
		a.mode = GS_ADD;
	else if (r->flags & GP_RQ_REPLACE)
		a.mode = GS_REPLACE;
	else if (r->cas)
		a.mode = GS_CAS;
	a.cas_match = r->cas;
	ret = gs_put_begin(rc->rw->srv->gd->s, q->m.key, r->key_len, &a,
			   &q->wr);
	if (ret == 0 && !(r->flags & GP_RQ_WINDOW) && r->length)
		ret = gs_put_write(q->wr, q->m.payload, q->m.payload_len);
	if (ret < 0) {
		if (ret == -ENOSPC)
			CNT(rc->rw->w, store_no_memory);
		resp_set(resp, put_status(ret));
		return;
	}
	q->total = r->length;
	if (!(r->flags & GP_RQ_WINDOW))
		q->done = q->total; /* all there: commit in step_set() */
}

static void start_other(struct rd_conn *rc, struct gp_resp *resp)
{
	struct rd_req *q = &rc->q;
	const struct gp_req *r = &q->m.req;
	struct gd *gd = rc->rw->srv->gd;
	int ret;

	resp_set(resp, GP_S_OK);
	switch (q->m.h.template_id) {
	case GP_T_DELETE:
		if (r->cas) { /* the store deletes whatever version */
			resp_set(resp, GP_S_UNSUPPORTED);
			break;
		}
		ret = gs_delete(gd->s, q->m.key, r->key_len);
		if (ret == 0)
			CNT(rc->rw->w, delete_hits);
		else
			CNT(rc->rw->w, delete_misses);
		if (ret < 0)
			resp_set(resp,
				 ret == -ENOENT ? GP_S_NOT_FOUND : GP_S_ERROR);
		break;
	case GP_T_TOUCH:
		CNT(rc->rw->w, cmd_touch);
		ret = gs_touch(gd->s, q->m.key, r->key_len,
			       r->ttl ? (int64_t)time(NULL) + r->ttl : 0);
		if (ret < 0)
			resp_set(resp,
				 ret == -ENOENT ? GP_S_NOT_FOUND : GP_S_ERROR);
		break;
	case GP_T_STATS:
		if (gd_stats_text(gd, (const char *)q->m.key, r->key_len,
				  &q->text) < 0) {
			resp_set(resp, GP_S_BAD_REQUEST);
			break;
		}
		if (q->text.oom) {
			resp_set(resp, GP_S_BUSY);
			break;
		}
		q->mem = (const uint8_t *)q->text.p;
		q->total = q->text.len;
		resp->flags = q->total ? GP_RS_VALUE : 0;
		resp->value_size = resp->length = q->total;
		break;
	}
}

/* Decode the next queued frame and begin it.  False: the connection
 * failed (a frame that does not decode closes it). */
static bool start_next(struct rd_conn *rc)
{
	struct rd_req *q = &rc->q;
	unsigned i = rc->pending[rc->phead];
	const uint8_t *b = rd_recv_buf(rc, i);
	uint32_t len = rc->rlen[i];
	size_t used;
	enum gp_result res;

	rc->phead = (rc->phead + 1) % RD_RECVS;
	rc->npending--;
	memset(q, 0, sizeof(*q));
	q->recv = i;
	res = gp_decode(b, len, RD_MSG, &q->m, &used);
	if (res != GP_OK || used != len || q->m.h.template_id >= GP_T_RESP) {
		rd_fail(rc, true,
			res != GP_OK ? gp_strerror(res) :
				       "not one request per SEND");
		return false;
	}
	CNT(rc->rw->w, rdma_requests);
	q->active = true;
	switch (q->m.h.template_id) {
	case GP_T_GET:
	case GP_T_GETRANGE:
		start_get(rc, &q->resp);
		break;
	case GP_T_SET:
		start_set(rc, &q->resp);
		break;
	default:
		start_other(rc, &q->resp);
	}
	return true;
}

/* ---- serving it: each step true when the request is done ---- */

/* Send the response unless it went (or QUIET needs none).  False: not
 * yet (no send buffer) or the connection failed. */
static bool resp_out(struct rd_conn *rc, const void *inl, uint32_t n)
{
	struct rd_req *q = &rc->q;
	int ret;

	if (q->resp_sent)
		return true;
	if (!(q->m.req.flags & GP_RQ_QUIET) || q->resp.status != GP_S_OK) {
		ret = send_resp(rc, &q->resp, inl, n);
		if (ret == -EAGAIN)
			return false;
		if (ret < 0) {
			rd_fail(rc, true, "cannot post a send");
			return false;
		}
	}
	q->resp_sent = true;
	if (q->resp.status == GP_S_WINDOW) {
		rd_fail(rc, true, "a window too small");
		return false;
	}
	return true;
}

static bool step_set(struct rd_conn *rc)
{
	struct rd_req *q = &rc->q;
	const struct gp_req *r = &q->m.req;
	uint64_t cas = 0;
	int ret;

	if (q->reading)
		return false;
	if (q->wr && q->done < q->total) {
		uint64_t n = q->total - q->done;

		if (n > RD_STAGE)
			n = RD_STAGE;
		if (rd_read(rc, r->win_addr + q->done, r->win_key, n) < 0)
			rd_fail(rc, true, "cannot post an RDMA READ");
		return false;
	}
	if (q->wr) {
		ret = gs_put_commit(q->wr, &cas);
		q->wr = NULL;
		if (ret < 0)
			resp_set(&q->resp, put_status(ret));
		q->resp.cas = cas;
	}
	return resp_out(rc, NULL, 0);
}

void rd_on_read(struct rd_conn *rc)
{
	struct rd_req *q = &rc->q;
	int ret;

	q->reading = false;
	if (!q->wr)
		return;
	/* may block on the older of the writer's buffers: the store's
	 * backpressure, as for memcache's streamed sets (netd/README) */
	ret = gs_put_write(q->wr, rc->stage, q->pull_len);
	if (ret < 0) {
		gs_put_abort(q->wr);
		q->wr = NULL;
		resp_set(&q->resp, put_status(ret));
		return;
	}
	q->done += q->pull_len;
	CNT_ADD(rc->rw->w, rdma_pulled, q->pull_len);
}

void rd_on_write(struct rd_conn *rc, bool staged)
{
	assert(rc->q.writes > 0);
	rc->q.writes--;
	if (staged)
		rc->q.staged = false;
}

/* The next chunk of the value in q->ch: 1, 0 to wait, -1 failed. */
static int next_chunk(struct rd_conn *rc)
{
	struct rd_req *q = &rc->q;
	int ret;

	if (q->have_ch)
		return 1;
	if (q->writes) /* the reader reuses the chunk's buffer */
		return 0;
	if (q->mem) {
		q->ch = (struct gs_chunk){ q->mem, q->total, 0, true };
	} else {
		ret = gs_reader_poll(q->rd, &q->ch);
		if (ret == -EAGAIN) {
			q->disk_wait = true;
			return 0;
		}
		if (ret <= 0) {
			rd_fail(rc, false,
				ret ? gs_strerror(ret) :
				      "the value ended early");
			return -1;
		}
	}
	q->have_ch = true;
	q->ch_done = 0;
	return 1;
}

/* A small value without a window: whole, inline in the response. */
static bool get_inline(struct rd_conn *rc)
{
	struct rd_req *q = &rc->q;

	while (q->done < q->total) {
		size_t n;

		if (next_chunk(rc) <= 0)
			return false;
		n = q->ch.len;
		if (n > q->total - q->done)
			n = q->total - q->done;
		memcpy(rc->stage + q->done, q->ch.data, n);
		q->done += n;
		q->have_ch = false;
	}
	return resp_out(rc, rc->stage, (uint32_t)q->total);
}

/* Post the next piece of q->ch: into the window by WRITE, then its
 * BULK_READY; or in a data frame.  False: wait, or failed. */
static bool put_piece(struct rd_conn *rc)
{
	struct rd_req *q = &rc->q;
	const struct gp_req *r = &q->m.req;
	struct gp_data d = { .offset = q->done };
	size_t n = q->ch.len - q->ch_done;
	const uint8_t *p = (const uint8_t *)q->ch.data + q->ch_done;
	int i = rd_send_get(rc), len;
	bool copied;

	if (i < 0 || q->writes == RD_WRITES)
		return false;
	if (n > q->total - q->done)
		n = q->total - q->done;
	if (n > (q->window ? RD_STAGE : DATA_ROOM))
		n = q->window ? RD_STAGE : DATA_ROOM;
	d.len = (uint32_t)n;
	if (q->done + n == q->total)
		d.flags = GP_DF_LAST;
	if (q->window) {
		int ret = rd_write(rc, p, n, r->win_addr + q->done, r->win_key,
				   &copied);

		if (ret == -EAGAIN)
			return false;
		if (ret < 0) {
			rd_fail(rc, true, "cannot post an RDMA WRITE");
			return false;
		}
		d.flags |= GP_DF_PLACED;
		CNT_ADD(rc->rw->w, rdma_written, n);
		if (!copied)
			CNT_ADD(rc->rw->w, rdma_zero_copy, n);
		CNT(rc->rw->w, rdma_bulk_ready);
	}
	len = gp_encode_data(rd_send_buf(rc, (unsigned)i), RD_MSG,
			     q->m.h.opaque, &d, p);
	if (len < 0 || rd_send_post(rc, (unsigned)i, (size_t)len) < 0) {
		rd_fail(rc, true, "cannot post a data frame");
		return false;
	}
	q->done += n;
	q->ch_done += n;
	if (q->ch_done == q->ch.len || q->done == q->total)
		q->have_ch = false;
	return true;
}

static bool step_get(struct rd_conn *rc)
{
	struct rd_req *q = &rc->q;

	if (!q->resp_sent) {
		if (q->resp.status != GP_S_OK || !q->total)
			return resp_out(rc, NULL, 0);
		if (!q->window && q->total <= RESP_ROOM)
			return get_inline(rc);
		if (!resp_out(rc, NULL, 0)) /* head first: the response */
			return false;
	}
	while (q->done < q->total) {
		if (next_chunk(rc) <= 0 || !put_piece(rc))
			return false;
	}
	/* the reader's buffers are WRITE sources until they complete */
	return !q->writes;
}

static bool step(struct rd_conn *rc)
{
	switch (rc->q.m.h.template_id) {
	case GP_T_GET:
	case GP_T_GETRANGE:
	case GP_T_STATS:
		return step_get(rc);
	case GP_T_SET:
		return step_set(rc);
	}
	return resp_out(rc, NULL, 0);
}

void rd_pump(struct rd_conn *rc)
{
	struct rd_req *q = &rc->q;

	while (!rc->failed) {
		if (!q->active && (!rc->npending || !start_next(rc)))
			return;
		q->disk_wait = false;
		if (!step(rc))
			return;
		if (rd_post_recv(rc, q->recv) < 0) {
			rd_fail(rc, true, "cannot post a receive");
			return;
		}
		rd_req_release(rc);
	}
}

void rd_on_recv(struct rd_conn *rc, unsigned i, size_t len)
{
	if (rc->npending == RD_RECVS) { /* cannot be: one per receive */
		rd_fail(rc, true, "more requests than receives");
		return;
	}
	rc->rlen[i] = (uint32_t)len;
	rc->pending[(rc->phead + rc->npending) % RD_RECVS] = i;
	rc->npending++;
	rd_pump(rc);
}
