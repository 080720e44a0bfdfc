/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * goblind's RDMA transport, the client side: librdmacm to connect, one
 * RC QP, a completion channel and the cm channel polled together so
 * that a server going away ends a wait (a blocking completion wait would
 * not see its disconnect).
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "../netd/gproto.h"
#include "rdma_client.h"

#define SEND_BUFS 2 /* a request, and room for one more posted */

struct grc {
	struct rdma_event_channel *ec;
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;
	uint8_t *msg; /* GRC_RECVS receive, then SEND_BUFS send buffers */
	struct ibv_mr *mr_msg;
	uint8_t *win;
	size_t win_len;
	struct ibv_mr *mr_win;
	unsigned sends; /* in flight */
	uint32_t opaque;
	int timeout_ms;
	bool dead;
	char err[256];
};

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

__attribute__((format(printf, 2, 3))) static int fail(struct grc *c,
						      const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->err, sizeof(c->err), fmt, ap);
	va_end(ap);
	return -1;
}

const char *grc_error(const struct grc *c)
{
	return c->err;
}

static uint8_t *recv_buf(struct grc *c, unsigned i)
{
	return c->msg + (size_t)i * GRC_MSG;
}

static int post_recv(struct grc *c, unsigned i)
{
	struct ibv_sge sge = { (uintptr_t)recv_buf(c, i), GRC_MSG,
			       c->mr_msg->lkey };
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 },
			   *bad;

	return ibv_post_recv(c->id->qp, &wr, &bad) ? -1 : 0;
}

/* The next cm event of @type, within the timeout.  0 or -1. */
static int cm_wait(struct grc *c, enum rdma_cm_event_type type)
{
	struct pollfd p = { c->ec->fd, POLLIN, 0 };
	struct rdma_cm_event *ev;
	int got;

	if (poll(&p, 1, c->timeout_ms) <= 0)
		return fail(c, "timed out waiting for %s",
			    rdma_event_str(type));
	if (rdma_get_cm_event(c->ec, &ev))
		return fail(c, "rdma_get_cm_event: %s", strerror(errno));
	got = ev->event;
	rdma_ack_cm_event(ev);
	if (got != (int)type)
		return fail(c, "%s instead of %s",
			    rdma_event_str((enum rdma_cm_event_type)got),
			    rdma_event_str(type));
	return 0;
}

static int setup_qp(struct grc *c, size_t window)
{
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = SEND_BUFS,
			 .max_recv_wr = GRC_RECVS,
			 .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	size_t msg = (size_t)(GRC_RECVS + SEND_BUFS) * GRC_MSG;

	if (!(c->pd = ibv_alloc_pd(c->id->verbs)) ||
	    !(c->ch = ibv_create_comp_channel(c->id->verbs)) ||
	    !(c->cq = ibv_create_cq(c->id->verbs, GRC_RECVS + SEND_BUFS + 1,
				    NULL, c->ch, 0)) ||
	    ibv_req_notify_cq(c->cq, 0))
		return fail(c, "cannot set up the device: %s", strerror(errno));
	qa.send_cq = qa.recv_cq = c->cq;
	if (rdma_create_qp(c->id, c->pd, &qa))
		return fail(c, "cannot create a QP: %s", strerror(errno));
	c->msg = aligned_alloc(4096, msg);
	if (!c->msg || !(c->mr_msg = ibv_reg_mr(c->pd, c->msg, msg,
						IBV_ACCESS_LOCAL_WRITE)))
		return fail(c, "cannot register buffers: %s", strerror(errno));
	if (window) {
		c->win_len = window;
		c->win = aligned_alloc(4096, (window + 4095) & ~(size_t)4095);
		if (!c->win ||
		    !(c->mr_win = ibv_reg_mr(c->pd, c->win, window,
					     IBV_ACCESS_LOCAL_WRITE |
						     IBV_ACCESS_REMOTE_WRITE)))
			return fail(c, "cannot register a %zu-byte window: %s",
				    window, strerror(errno));
	}
	for (unsigned i = 0; i < GRC_RECVS; i++)
		if (post_recv(c, i) < 0)
			return fail(c, "cannot post receives");
	return 0;
}

struct grc *grc_connect(const char *host, const char *port, size_t window,
			int timeout_ms, char *err, size_t errlen)
{
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP }, *ai;
	struct rdma_conn_param p = { .responder_resources = 1,
				     .initiator_depth = 0,
				     .retry_count = 7,
				     .rnr_retry_count = 7 };
	struct grc *c = calloc(1, sizeof(*c));
	int ret;

	if (!c) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	c->timeout_ms = timeout_ms;
	if (rdma_getaddrinfo(host, port, &hints, &ai)) {
		fail(c, "cannot resolve '%s' port '%s': %s", host, port,
		     strerror(errno));
		goto fail;
	}
	if (!(c->ec = rdma_create_event_channel()) ||
	    rdma_create_id(c->ec, &c->id, c, RDMA_PS_TCP)) {
		fail(c, "cannot use RDMA: %s", strerror(errno));
		rdma_freeaddrinfo(ai);
		goto fail;
	}
	ret = rdma_resolve_addr(c->id, NULL, ai->ai_dst_addr, timeout_ms);
	rdma_freeaddrinfo(ai);
	if (ret || cm_wait(c, RDMA_CM_EVENT_ADDR_RESOLVED) < 0 ||
	    rdma_resolve_route(c->id, timeout_ms) ||
	    cm_wait(c, RDMA_CM_EVENT_ROUTE_RESOLVED) < 0) {
		if (!c->err[0])
			fail(c, "cannot reach %s: %s", host, strerror(errno));
		goto fail;
	}
	if (setup_qp(c, window) < 0)
		goto fail;
	if (rdma_connect(c->id, &p) ||
	    cm_wait(c, RDMA_CM_EVENT_ESTABLISHED) < 0) {
		if (!c->err[0])
			fail(c, "cannot connect: %s", strerror(errno));
		goto fail;
	}
	return c;
fail:
	snprintf(err, errlen, "rdma %s:%s: %s", host, port, c->err);
	grc_close(c);
	return NULL;
}

void grc_close(struct grc *c)
{
	if (!c)
		return;
	if (c->id && c->id->qp && !c->dead)
		rdma_disconnect(c->id);
	if (c->id && c->id->qp)
		rdma_destroy_qp(c->id);
	if (c->mr_win)
		ibv_dereg_mr(c->mr_win);
	if (c->mr_msg)
		ibv_dereg_mr(c->mr_msg);
	if (c->cq)
		ibv_destroy_cq(c->cq);
	if (c->ch)
		ibv_destroy_comp_channel(c->ch);
	if (c->pd)
		ibv_dealloc_pd(c->pd);
	if (c->id)
		rdma_destroy_id(c->id);
	if (c->ec)
		rdma_destroy_event_channel(c->ec);
	free(c->win);
	free(c->msg);
	free(c);
}

/* The server went away (a cm event), or its frames stopped. */
static int dead(struct grc *c, const char *why)
{
	c->dead = true;
	return fail(c, "%s", why);
}

/*
 * The next frame the server sent, decoded into *@m from receive buffer
 * *@idx (repost it with post_recv after use).  0 or -1.
 */
static int next_frame(struct grc *c, struct gp_msg *m, unsigned *idx)
{
	bool gone = false; /* the server disconnected: what it sent before
			    * may still be in the CQ */

	for (;;) {
		struct ibv_wc wc;
		int n = ibv_poll_cq(c->cq, 1, &wc);

		if (n < 0)
			return dead(c, "cannot poll the completion queue");
		if (n == 1) {
			size_t used;
			enum gp_result r;

			if (wc.status != IBV_WC_SUCCESS) {
				char why[128];

				snprintf(why, sizeof(why),
					 "the connection failed: %s",
					 ibv_wc_status_str(wc.status));
				return dead(c, why);
			}
			if (wc.opcode == IBV_WC_SEND) {
				c->sends--;
				continue;
			}
			*idx = (unsigned)wc.wr_id;
			r = gp_decode(recv_buf(c, *idx), wc.byte_len, GRC_MSG,
				      m, &used);
			if (r != GP_OK || used != wc.byte_len)
				return dead(c, "the server sent a bad frame");
			return 0;
		}
		if (gone)
			return dead(c, "the server closed the connection");
		struct pollfd p[2] = { { c->ch->fd, POLLIN, 0 },
				       { c->ec->fd, POLLIN, 0 } };
		if (poll(p, 2, c->timeout_ms) <= 0)
			return dead(c, "timed out waiting for the server");
		if (p[1].revents) {
			struct rdma_cm_event *ev;

			if (rdma_get_cm_event(c->ec, &ev) == 0) {
				int e = ev->event;

				rdma_ack_cm_event(ev);
				gone = e == RDMA_CM_EVENT_DISCONNECTED;
			}
		}
		if (p[0].revents) {
			struct ibv_cq *cq;
			void *ctx;

			if (ibv_get_cq_event(c->ch, &cq, &ctx) == 0) {
				ibv_ack_cq_events(cq, 1);
				ibv_req_notify_cq(cq, 0);
			}
		}
	}
}

/* Send request frame @t; its opaque is the next one. */
static int send_req(struct grc *c, enum gp_template t, const struct gp_req *r,
		    const void *key, const void *inl, uint32_t inl_len)
{
	uint8_t *b = recv_buf(c, GRC_RECVS + (c->opaque & 1));
	struct ibv_sge sge = { (uintptr_t)b, 0, c->mr_msg->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge,
				  .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED },
			   *bad;
	int len;

	if (c->dead)
		return fail(c, "the connection is closed");
	len = gp_encode_req(b, GRC_MSG, t, ++c->opaque, r, key, inl, inl_len);
	if (len < 0)
		return fail(c, "cannot encode the request: %s", strerror(-len));
	sge.length = (uint32_t)len;
	if (c->sends == SEND_BUFS || ibv_post_send(c->id->qp, &wr, &bad))
		return dead(c, "cannot post a send");
	c->sends++;
	return 0;
}

/* The response to the request just sent. */
static int wait_resp(struct grc *c, struct gp_msg *m, unsigned *idx)
{
	if (next_frame(c, m, idx) < 0)
		return -1;
	if (m->h.template_id != GP_T_RESP || m->h.opaque != c->opaque)
		return dead(c, "the server answered out of turn");
	return 0;
}

static int status_error(struct grc *c, const struct gp_resp *r)
{
	if (r->status == GP_S_WINDOW) {
		c->dead = true; /* the server closes the connection */
		return fail(c,
			    "the server refused the %zu-byte window as too "
			    "small, and closed the connection",
			    c->win_len);
	}
	return fail(c, "%s", gp_status_name(r->status));
}

/*
 * The bytes of one transfer (a response's): inline, then data frames,
 * placed in the window or carried.  @base is the transfer's offset in
 * the value.  0 or -1.
 */
static int transfer(struct grc *c, const struct gp_msg *resp,
		    const struct grc_window *w, grc_sink *sink, void *arg,
		    struct grc_times *t)
{
	uint64_t base = resp->resp.offset, got = resp->payload_len;
	const uint64_t len = resp->resp.length;

	if (got && sink(arg, resp->payload, got, base) < 0)
		return fail(c, "stopped by the caller");
	while (got < len) {
		struct gp_msg m;
		unsigned idx;
		const void *p;
		int ret;

		if (next_frame(c, &m, &idx) < 0)
			return -1;
		if (m.h.template_id != GP_T_DATA || m.h.opaque != c->opaque ||
		    m.data.offset != got || m.data.len > len - got)
			return dead(c, "the server sent a data frame out of "
				       "order");
		if (m.data.flags & GP_DF_PLACED) {
			if (!w || m.data.offset + m.data.len > w->len)
				return dead(c, "the server placed bytes "
					       "outside the window");
			p = (const uint8_t *)(uintptr_t)w->addr + m.data.offset;
		} else {
			p = m.payload;
		}
		if (t && !t->first)
			t->first = mono_ns();
		ret = sink(arg, p, m.data.len, base + got);
		got += m.data.len;
		if (post_recv(c, idx) < 0)
			return dead(c, "cannot post a receive");
		if (ret < 0)
			return fail(c, "stopped by the caller");
		if ((got == len) != !!(m.data.flags & GP_DF_LAST))
			return dead(c, "the last data frame is not LAST");
	}
	return 0;
}

bool grc_window_of(const struct grc *c, struct grc_window *w)
{
	if (!c->win)
		return false;
	*w = (struct grc_window){ (uintptr_t)c->win, c->mr_win->rkey,
				  (uint32_t)c->win_len };
	return true;
}

int grc_get(struct grc *c, const void *key, size_t klen, grc_sink *sink,
	    void *arg, struct grc_meta *meta, struct grc_times *t)
{
	struct grc_window w;

	return grc_get_in(c, grc_window_of(c, &w) ? &w : NULL, key, klen, sink,
			  arg, meta, t);
}

int grc_get_in(struct grc *c, const struct grc_window *w, const void *key,
	       size_t klen, grc_sink *sink, void *arg, struct grc_meta *meta,
	       struct grc_times *t)
{
	uint64_t off = 0, cas = 0, size = 0;
	bool first = true;

	if (t)
		*t = (struct grc_times){ .sent = mono_ns() };
	do {
		struct gp_req r = { .key_len = (uint16_t)klen, .offset = off };
		struct gp_msg m;
		unsigned idx;

		if (w) {
			r.flags = GP_RQ_WINDOW;
			r.win_addr = w->addr;
			r.win_key = w->rkey;
			r.win_len = w->len;
		}
		if (send_req(c, first ? GP_T_GET : GP_T_GETRANGE, &r, key, NULL,
			     0) < 0 ||
		    wait_resp(c, &m, &idx) < 0)
			return -1;
		if (t && !t->header)
			t->header = mono_ns();
		if (m.resp.status == GP_S_NOT_FOUND) {
			post_recv(c, idx);
			return first ? 1 :
				       fail(c, "the key went while it "
					       "was read");
		}
		if (m.resp.status != GP_S_OK) {
			post_recv(c, idx);
			return status_error(c, &m.resp);
		}
		if (first) {
			cas = m.resp.cas;
			size = m.resp.value_size;
			if (meta)
				*meta = (struct grc_meta){ size, cas,
							   m.resp.client_flags,
							   m.resp.ttl };
		} else if (m.resp.cas != cas) {
			post_recv(c, idx);
			return fail(c, "the value changed while it was read");
		}
		if (m.resp.offset != off || m.resp.length > size - off ||
		    (!m.resp.length && off < size))
			return dead(c, "the server sent a range not asked for");
		first = false;
		int ret = transfer(c, &m, w, sink, arg, t);

		if (post_recv(c, idx) < 0 || ret < 0)
			return -1;
		off += m.resp.length;
	} while (off < size);
	if (t)
		t->last = mono_ns();
	return 0;
}

int grc_set(struct grc *c, const void *key, size_t klen, const void *val,
	    size_t len, uint32_t flags, uint32_t ttl)
{
	struct gp_req r = { .key_len = (uint16_t)klen,
			    .ttl = ttl,
			    .client_flags = flags,
			    .length = len };
	struct ibv_mr *mr = NULL;
	struct gp_msg m;
	unsigned idx;
	int ret;

	if (len + klen + GP_REQ_FIXED <= GRC_MSG) {
		ret = send_req(c, GP_T_SET, &r, key, val, (uint32_t)len);
	} else {
		if (len > UINT32_MAX)
			return fail(c, "a value over 4 GiB");
		/* the server pulls it from here by RDMA READ */
		mr = ibv_reg_mr(c->pd, (void *)val, len,
				IBV_ACCESS_REMOTE_READ);
		if (!mr)
			return fail(c, "cannot register the value: %s",
				    strerror(errno));
		r.flags = GP_RQ_WINDOW;
		r.win_addr = (uintptr_t)val;
		r.win_key = mr->rkey;
		r.win_len = (uint32_t)len;
		ret = send_req(c, GP_T_SET, &r, key, NULL, 0);
	}
	if (ret == 0)
		ret = wait_resp(c, &m, &idx);
	if (mr)
		ibv_dereg_mr(mr);
	if (ret < 0)
		return -1;
	post_recv(c, idx);
	return m.resp.status == GP_S_OK ? 0 : status_error(c, &m.resp);
}

int grc_del(struct grc *c, const void *key, size_t klen)
{
	struct gp_req r = { .key_len = (uint16_t)klen };
	struct gp_msg m;
	unsigned idx;

	if (send_req(c, GP_T_DELETE, &r, key, NULL, 0) < 0 ||
	    wait_resp(c, &m, &idx) < 0)
		return -1;
	post_recv(c, idx);
	if (m.resp.status == GP_S_NOT_FOUND)
		return 1;
	return m.resp.status == GP_S_OK ? 0 : status_error(c, &m.resp);
}

int grc_stats(struct grc *c, grc_sink *sink, void *arg)
{
	struct gp_req r = { 0 };
	struct gp_msg m;
	unsigned idx;
	int ret;

	if (send_req(c, GP_T_STATS, &r, NULL, NULL, 0) < 0 ||
	    wait_resp(c, &m, &idx) < 0)
		return -1;
	if (m.resp.status != GP_S_OK) {
		post_recv(c, idx);
		return status_error(c, &m.resp);
	}
	ret = transfer(c, &m, NULL, sink, arg, NULL);
	if (post_recv(c, idx) < 0)
		return -1;
	return ret;
}
