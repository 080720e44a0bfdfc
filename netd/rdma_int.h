/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the RDMA rooms share: the daemon's verbs state, a worker's, a
 * connection (one RC queue pair) and its request in progress.
 *   rdma.c      options, the listener, cm events, completion dispatch
 *   rdma_req.c  the requests: get/getrange/set/delete/touch/stats/noop
 *   rdma_qp.c   posting sends, WRITEs and READs; the store's memory
 *               regions; closing on errors
 * Calls go rdma.c -> rdma_req.c -> rdma_qp.c, never back.
 */
#ifndef GD_RDMA_INT_H
#define GD_RDMA_INT_H

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "goblind.h"
#include "gproto.h"

#define RD_MSG	      16384    /* a SEND's most bytes, either way */
#define RD_RECVS      16       /* receives posted on each QP */
#define RD_SENDS      16       /* SENDs in flight on each QP */
#define RD_WRITES     8	       /* RDMA WRITEs in flight on each QP */
#define RD_CREDITS    RD_RECVS /* requests a client may have queued */
/* a QP's staging buffer: set pulls, chunks outside the store's regions */
#define RD_STAGE      (256u << 10)
#define RD_STORE_MRS  64 /* store regions registered at most */
/* a get's window smaller than this is refused (GP_S_WINDOW, closed)
 * unless the value fits: a request per few bytes of a large value */
#define RD_WINDOW_MIN (64u << 10)

/* work request ids: the kind in the top byte, a buffer index below */
enum rd_wr { RD_WR_RECV = 1, RD_WR_SEND, RD_WR_WRITE, RD_WR_READ };
#define RD_WRID(k, i) (((uint64_t)(k) << 56) | (uint64_t)(i))
#define RD_WRKIND(id) ((unsigned)((id) >> 56))
#define RD_WRIDX(id)  ((unsigned)((id)&0xffffffffu))

/* A store region registered with the device (rdma_qp.c). */
struct rd_mr {
	const uint8_t *base;
	size_t len;
	struct ibv_mr *mr;
};

/* The daemon's: one device (the one --rdma-address is on). */
struct rd_srv {
	struct gd *gd;
	struct rdma_event_channel *lch; /* the listener's (worker 0) */
	struct rdma_cm_id *listen;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct rd_worker *ws; /* one per worker */
	atomic_uint next;     /* round robin of new connections */
	pthread_mutex_t mr_lock;
	struct rd_mr mrs[RD_STORE_MRS]; /* protected by mr_lock */
	unsigned nmrs;			/* protected by mr_lock */
	char name[128];			/* "10.0.2.15:7000" */
};

/* A worker's: its cm channel (connections migrate there) and the
 * completion channel of its connections' CQs. */
struct rd_worker {
	struct rd_srv *srv;
	struct worker *w;
	struct rdma_event_channel *cch;
	struct ibv_comp_channel *comp;
	struct rd_conn *conns; /* established, on this worker */
};

/* The request a connection is serving (one at a time, in order). */
struct rd_req {
	bool active;
	unsigned recv;	 /* its receive buffer: key points there */
	struct gp_msg m; /* decoded */
	struct gp_resp resp;
	struct gs_reader *rd;
	struct gs_writer *wr;
	const uint8_t *mem; /* stats: the bytes, instead of a reader */
	struct gd_buf text;
	uint64_t off, total; /* the value's bytes [off, off + total) */
	uint64_t done;	     /* bytes of them sent or pulled */
	struct gs_chunk ch;  /* the chunk being sent */
	size_t ch_done;	     /* its bytes posted */
	bool have_ch, at_end;
	bool resp_sent;
	bool window;	   /* placed in the client's window */
	unsigned writes;   /* RDMA WRITEs in flight (of ch, or staged) */
	bool staged;	   /* a WRITE from the staging buffer in flight */
	bool reading;	   /* an RDMA READ in flight (a set's pull) */
	bool disk_wait;	   /* the reader said -EAGAIN */
	uint64_t pull_len; /* the READ's bytes */
};

struct rd_conn {
	struct rd_worker *rw;
	struct rdma_cm_id *id;
	struct ibv_cq *cq;
	struct ibv_mr *mr_msg, *mr_stage;
	uint8_t *msg;	/* RD_RECVS receive, then RD_SENDS send buffers */
	uint8_t *stage; /* RD_STAGE */
	struct rd_conn *next, **pprev; /* in rw->conns */
	unsigned pending[RD_RECVS];    /* received requests, in order */
	uint32_t rlen[RD_RECVS];       /* the frame's bytes in each */
	unsigned npending, phead;
	uint32_t send_free; /* bitmap of idle send buffers */
	unsigned sends;	    /* SENDs in flight */
	bool linked;	    /* in rw->conns */
	bool failed;	    /* closing: nothing more is served */
	bool flush_close;   /* disconnect once the sends are out */
	bool disconnected;  /* rdma_disconnect called */
	struct rd_req q;
};

static inline uint8_t *rd_recv_buf(struct rd_conn *rc, unsigned i)
{
	return rc->msg + (size_t)i * RD_MSG;
}

static inline uint8_t *rd_send_buf(struct rd_conn *rc, unsigned i)
{
	return rc->msg + (size_t)(RD_RECVS + i) * RD_MSG;
}

/* ---- rdma_qp.c ---- */

/* Post receive buffer @i again.  0 or -errno. */
int rd_post_recv(struct rd_conn *rc, unsigned i);
/* An idle send buffer's index, or -1 when all are in flight. */
int rd_send_get(struct rd_conn *rc);
/* SEND @len bytes of send buffer @i.  0 or -errno. */
int rd_send_post(struct rd_conn *rc, unsigned i, size_t len);
/* A send of @i completed. */
void rd_send_done(struct rd_conn *rc, unsigned i);
/*
 * RDMA WRITE @len bytes at @p to the client's @raddr/@rkey.  @p in the
 * store's memory goes from there (zero copy), else through the staging
 * buffer: *@copied says which.  0, -EAGAIN (the staging buffer is busy:
 * call again after its WRITE completed) or -errno.
 */
int rd_write(struct rd_conn *rc, const void *p, size_t len, uint64_t raddr,
	     uint32_t rkey, bool *copied);
/* RDMA READ @len bytes at @raddr/@rkey into the staging buffer. */
int rd_read(struct rd_conn *rc, uint64_t raddr, uint32_t rkey, size_t len);
/*
 * The connection is done for (@why is logged): nothing more is served,
 * the QP is disconnected once the sends queued are out.  @count: an
 * error of the client's or the fabric's, counted in rdma_errors.
 */
void rd_fail(struct rd_conn *rc, bool count, const char *why);
/* Disconnect now when rd_fail() asked for it and no SEND is left. */
void rd_flush_close(struct rd_conn *rc);
/* Deregister the store's regions (rdma_close). */
void rd_mrs_release(struct rd_srv *srv);

/* ---- rdma_req.c ---- */

/* Receive buffer @i holds a frame of @len bytes: queue it, serve. */
void rd_on_recv(struct rd_conn *rc, unsigned i, size_t len);
/* Serve what can be: the request in progress, then queued ones. */
void rd_pump(struct rd_conn *rc);
/* A WRITE (@staged: from the staging buffer) or READ completed. */
void rd_on_write(struct rd_conn *rc, bool staged);
void rd_on_read(struct rd_conn *rc);
/* Drop the request in progress (readers closed, writers aborted). */
void rd_req_release(struct rd_conn *rc);

#endif
