/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RDMA: posting on a connection's queue pair (SENDs from its own send
 * buffers, WRITEs straight from the store's memory, READs into its
 * staging buffer), the store's regions registered once, and closing.
 */
#include <assert.h>
#include <errno.h>
#include <string.h>

#include "rdma_int.h"

int rd_post_recv(struct rd_conn *rc, unsigned i)
{
	struct ibv_sge sge = { .addr = (uintptr_t)rd_recv_buf(rc, i),
			       .length = RD_MSG,
			       .lkey = rc->mr_msg->lkey };
	struct ibv_recv_wr wr = { .wr_id = RD_WRID(RD_WR_RECV, i),
				  .sg_list = &sge,
				  .num_sge = 1 },
			   *bad;

	return -ibv_post_recv(rc->id->qp, &wr, &bad);
}

int rd_send_get(struct rd_conn *rc)
{
	if (!rc->send_free)
		return -1;
	return __builtin_ctz(rc->send_free);
}

static int post_send(struct rd_conn *rc, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;

	return -ibv_post_send(rc->id->qp, wr, &bad);
}

int rd_send_post(struct rd_conn *rc, unsigned i, size_t len)
{
	struct ibv_sge sge = { .addr = (uintptr_t)rd_send_buf(rc, i),
			       .length = (uint32_t)len,
			       .lkey = rc->mr_msg->lkey };
	struct ibv_send_wr wr = { .wr_id = RD_WRID(RD_WR_SEND, i),
				  .sg_list = &sge,
				  .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED };
	int ret;

	if ((ret = post_send(rc, &wr)) < 0)
		return ret;
	rc->send_free &= ~(1u << i);
	rc->sends++;
	return 0;
}

void rd_send_done(struct rd_conn *rc, unsigned i)
{
	assert(rc->sends > 0 && !(rc->send_free & (1u << i)));
	rc->send_free |= 1u << i;
	rc->sends--;
}

/*
 * The lkey of a registered store region holding [p, p + len), 0 when
 * there is none and none can be registered (the copy path then).  A
 * region is registered the first time a chunk in it is sent, and kept
 * until rdma_close(): the store keeps it mapped until gs_close().
 */
static uint32_t store_lkey(struct rd_srv *srv, const uint8_t *p, size_t len)
{
	uint32_t lkey = 0;
	void *base;
	size_t rlen;

	pthread_mutex_lock(&srv->mr_lock);
	for (unsigned i = 0; i < srv->nmrs; i++) {
		const struct rd_mr *m = &srv->mrs[i];

		if (p >= m->base && p + len <= m->base + m->len) {
			lkey = m->mr->lkey;
			goto out;
		}
	}
	if (srv->nmrs == RD_STORE_MRS ||
	    gs_mem_region(srv->gd->s, p, &base, &rlen) < 0 ||
	    p + len > (uint8_t *)base + rlen)
		goto out;
	/* the source of WRITEs only: no remote access, no local write */
	struct ibv_mr *mr = ibv_reg_mr(srv->pd, base, rlen, 0);

	if (!mr) {
		gd_log(GD_LOG_WARN,
		       "rdma: cannot register %zu bytes of the "
		       "store's memory: %s (copying instead)",
		       rlen, strerror(errno));
		goto out;
	}
	srv->mrs[srv->nmrs++] = (struct rd_mr){ base, rlen, mr };
	atomic_fetch_add(&srv->gd->rdma_mr, 1);
	atomic_fetch_add(&srv->gd->rdma_mr_bytes, rlen);
	lkey = mr->lkey;
out:
	pthread_mutex_unlock(&srv->mr_lock);
	return lkey;
}

void rd_mrs_release(struct rd_srv *srv)
{
	for (unsigned i = 0; i < srv->nmrs; i++) {
		atomic_fetch_sub(&srv->gd->rdma_mr, 1);
		atomic_fetch_sub(&srv->gd->rdma_mr_bytes, srv->mrs[i].len);
		ibv_dereg_mr(srv->mrs[i].mr);
	}
	srv->nmrs = 0;
}

int rd_write(struct rd_conn *rc, const void *p, size_t len, uint64_t raddr,
	     uint32_t rkey, bool *copied)
{
	uint32_t lkey = store_lkey(rc->rw->srv, p, len);
	struct ibv_sge sge = { .addr = (uintptr_t)p,
			       .length = (uint32_t)len,
			       .lkey = lkey };
	struct ibv_send_wr wr = { .wr_id = RD_WRID(RD_WR_WRITE, !lkey),
				  .sg_list = &sge,
				  .num_sge = 1,
				  .opcode = IBV_WR_RDMA_WRITE,
				  .send_flags = IBV_SEND_SIGNALED,
				  .wr.rdma = { raddr, rkey } };
	int ret;

	*copied = !lkey;
	if (!lkey) {
		if (rc->q.staged)
			return -EAGAIN;
		assert(len <= RD_STAGE);
		memcpy(rc->stage, p, len);
		sge.addr = (uintptr_t)rc->stage;
		sge.lkey = rc->mr_stage->lkey;
	}
	if ((ret = post_send(rc, &wr)) < 0)
		return ret;
	rc->q.writes++;
	rc->q.staged |= !lkey;
	return 0;
}

int rd_read(struct rd_conn *rc, uint64_t raddr, uint32_t rkey, size_t len)
{
	struct ibv_sge sge = { .addr = (uintptr_t)rc->stage,
			       .length = (uint32_t)len,
			       .lkey = rc->mr_stage->lkey };
	struct ibv_send_wr wr = { .wr_id = RD_WRID(RD_WR_READ, 0),
				  .sg_list = &sge,
				  .num_sge = 1,
				  .opcode = IBV_WR_RDMA_READ,
				  .send_flags = IBV_SEND_SIGNALED,
				  .wr.rdma = { raddr, rkey } };
	int ret;

	assert(len <= RD_STAGE && !rc->q.reading);
	if ((ret = post_send(rc, &wr)) < 0)
		return ret;
	rc->q.reading = true;
	rc->q.pull_len = len;
	return 0;
}

void rd_flush_close(struct rd_conn *rc)
{
	if (!rc->flush_close || rc->disconnected)
		return;
	/* the error reply goes out first (a failed QP flushes it) */
	if (rc->sends)
		return;
	rc->disconnected = true;
	rdma_disconnect(rc->id);
}

void rd_fail(struct rd_conn *rc, bool count, const char *why)
{
	if (!rc->failed) {
		gd_log(GD_LOG_INFO, "rdma: closing a connection: %s", why);
		if (count)
			CNT(rc->rw->w, rdma_errors);
	}
	rc->failed = true;
	rc->flush_close = true;
	rd_flush_close(rc);
}
