/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RDMA verbs (issue 22): --rdma-port, the listener and the connection
 * manager's events, and each worker's completion channel.  librdmacm
 * connects RC queue pairs; a new connection migrates to a worker (round
 * robin), whose loop then drives its cm events and completions: event
 * sources of the worker (gd_source_add), no thread per QP.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rdma.h"
#include "rdma_int.h"

#define RD_CQE (RD_RECVS + RD_SENDS + RD_WRITES + 2)

static struct rd_srv srv;

const char gd_rdma_usage[] =
	"  --rdma-port N          goblin's binary protocol over RDMA verbs "
	"(default off)\n"
	"  --rdma-address ADDR    an address of the RDMA device to listen "
	"on\n"
	"                         (default --listen-address)\n"
	"  --rdma-max-conns N     RDMA connections at most (default 64)\n";

const char *gd_rdma_option(struct gd_settings *s, const char *name,
			   const char *val)
{
	char *end;
	unsigned long v;

	if (!strcmp(name, "rdma-address")) {
		s->rdma_address = val;
		return NULL;
	}
	errno = 0;
	v = strtoul(val, &end, 10);
	if (errno || end == val || *end || val[0] == '-')
		return "not a number";
	if (!strcmp(name, "rdma-port")) {
		if (v > 65535)
			return "not a port number";
		s->rdma_port = (unsigned)v;
		s->rdma = true;
	} else if (!strcmp(name, "rdma-max-conns")) {
		if (!v || v > 65536)
			return "not a count from 1 to 65536";
		s->rdma_max_conns = (unsigned)v;
	} else {
		return "no such option";
	}
	return NULL;
}

/* ---- a connection: made on a connect request, freed at its end ---- */

static void conn_free(struct rd_conn *rc)
{
	rd_req_release(rc);
	if (rc->linked) {
		*rc->pprev = rc->next;
		if (rc->next)
			rc->next->pprev = rc->pprev;
		atomic_fetch_sub(&srv.gd->rdma_conns, 1);
	}
	if (rc->id->qp)
		rdma_destroy_qp(rc->id);
	if (rc->cq)
		ibv_destroy_cq(rc->cq);
	if (rc->mr_msg) {
		atomic_fetch_sub(&srv.gd->rdma_mr, 1);
		atomic_fetch_sub(&srv.gd->rdma_mr_bytes, rc->mr_msg->length);
		ibv_dereg_mr(rc->mr_msg);
	}
	if (rc->mr_stage) {
		atomic_fetch_sub(&srv.gd->rdma_mr, 1);
		atomic_fetch_sub(&srv.gd->rdma_mr_bytes, rc->mr_stage->length);
		ibv_dereg_mr(rc->mr_stage);
	}
	free(rc->msg);
	free(rc->stage);
	rdma_destroy_id(rc->id);
	free(rc);
}

static struct ibv_mr *reg(void *p, size_t len, int access)
{
	struct ibv_mr *mr = ibv_reg_mr(srv.pd, p, len, access);

	if (mr) {
		atomic_fetch_add(&srv.gd->rdma_mr, 1);
		atomic_fetch_add(&srv.gd->rdma_mr_bytes, len);
	}
	return mr;
}

/* The QP, its CQ on @rw's channel, its buffers; receives posted. */
static int conn_setup(struct rd_conn *rc, struct rd_worker *rw)
{
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = RD_SENDS + RD_WRITES + 1,
			 .max_recv_wr = RD_RECVS,
			 .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	size_t msg = (size_t)(RD_RECVS + RD_SENDS) * RD_MSG;

	rc->rw = rw;
	rc->send_free = (1u << RD_SENDS) - 1;
	rc->msg = aligned_alloc(4096, msg);
	rc->stage = aligned_alloc(4096, RD_STAGE);
	if (!rc->msg || !rc->stage)
		return -ENOMEM;
	/* the client's READs are not served: local access only */
	rc->mr_msg = reg(rc->msg, msg, IBV_ACCESS_LOCAL_WRITE);
	rc->mr_stage = reg(rc->stage, RD_STAGE, IBV_ACCESS_LOCAL_WRITE);
	if (!rc->mr_msg || !rc->mr_stage)
		return -errno;
	rc->cq = ibv_create_cq(srv.ctx, RD_CQE, rc, rw->comp, 0);
	if (!rc->cq || ibv_req_notify_cq(rc->cq, 0))
		return -errno;
	qa.send_cq = qa.recv_cq = rc->cq;
	qa.qp_context = rc;
	if (rdma_create_qp(rc->id, srv.pd, &qa))
		return -errno;
	for (unsigned i = 0; i < RD_RECVS; i++) {
		int ret = rd_post_recv(rc, i);

		if (ret < 0)
			return ret;
	}
	return 0;
}

/* On worker 0 (the listener's): accept onto the next worker. */
static void conn_request(struct rdma_cm_id *id,
			 const struct rdma_conn_param *want)
{
	struct gd *gd = srv.gd;
	unsigned k = atomic_fetch_add(&srv.next, 1) % gd->nworkers;
	struct rd_worker *rw = &srv.ws[k];
	struct rdma_conn_param p = {
		/* our READs of a set's value, the client's none */
		/* the event gives the client's side as ours to use */
		.initiator_depth = want->initiator_depth ? 1 : 0,
		.responder_resources = 0,
		.rnr_retry_count = 7, /* a client slow to post receives */
	};
	struct rd_conn *rc;
	int ret;

	if (id->verbs != srv.ctx ||
	    atomic_load(&gd->rdma_conns) >= gd->set.rdma_max_conns) {
		CNT(&gd->workers[0], rejected_connections);
		rdma_reject(id, NULL, 0);
		rdma_destroy_id(id);
		return;
	}
	rc = calloc(1, sizeof(*rc));
	if (!rc) {
		rdma_reject(id, NULL, 0);
		rdma_destroy_id(id);
		return;
	}
	rc->id = id;
	id->context = rc;
	if (rdma_migrate_id(id, rw->cch) || (ret = conn_setup(rc, rw)) < 0 ||
	    rdma_accept(id, &p)) {
		gd_log(GD_LOG_WARN, "rdma: cannot accept a connection: %s",
		       strerror(errno));
		rdma_reject(id, NULL, 0);
		conn_free(rc);
		return;
	}
	CNT(&gd->workers[0], rdma_connections);
}

static void conn_link(struct rd_conn *rc)
{
	struct rd_worker *rw = rc->rw;

	if (rc->linked)
		return;
	rc->linked = true;
	rc->next = rw->conns;
	if (rw->conns)
		rw->conns->pprev = &rc->next;
	rc->pprev = &rw->conns;
	rw->conns = rc;
	atomic_fetch_add(&srv.gd->rdma_conns, 1);
}

/* ---- the workers' event sources ---- */

static void cm_event(struct rdma_cm_event *ev)
{
	struct rdma_cm_id *id = ev->id;
	struct rd_conn *rc = id->context;
	enum rdma_cm_event_type type = ev->event;
	struct rdma_conn_param want = ev->param.conn;

	rdma_ack_cm_event(ev); /* before the id may be migrated or freed */
	switch (type) {
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		conn_request(id, &want);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		if (!rc)
			break;
		conn_link(rc);
		rd_pump(rc); /* requests may have come before this event */
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_REJECTED:
		if (rc && id != srv.listen)
			conn_free(rc);
		break;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		gd_log(GD_LOG_ERROR, "rdma: the device went away");
		break;
	default:
		break;
	}
}

static void cm_ready_on(struct rdma_event_channel *ch)
{
	struct rdma_cm_event *ev;

	while (rdma_get_cm_event(ch, &ev) == 0)
		cm_event(ev);
}

static void cm_ready(struct worker *w, void *arg)
{
	(void)w;
	cm_ready_on(((struct rd_worker *)arg)->cch);
}

static void listen_ready(struct worker *w, void *arg)
{
	(void)w;
	(void)arg;
	cm_ready_on(srv.lch);
}

static const char *wr_name(unsigned kind)
{
	return kind == RD_WR_READ  ? "RDMA READ" :
	       kind == RD_WR_WRITE ? "RDMA WRITE" :
	       kind == RD_WR_SEND  ? "SEND" :
				     "receive";
}

static void on_wc(struct rd_conn *rc, const struct ibv_wc *wc)
{
	unsigned kind = RD_WRKIND(wc->wr_id), i = RD_WRIDX(wc->wr_id);

	if (kind == RD_WR_SEND)
		rd_send_done(rc, i);
	else if (kind == RD_WR_WRITE)
		rd_on_write(rc, i == 1);
	if (wc->status != IBV_WC_SUCCESS) {
		char why[96];

		if (kind == RD_WR_READ)
			rc->q.reading = false;
		/* a bad rkey or window of the client's, or the client went:
		 * the QP is in error, its other work requests flush */
		snprintf(why, sizeof(why), "a failed %s: %s", wr_name(kind),
			 ibv_wc_status_str(wc->status));
		rd_fail(rc, wc->status != IBV_WC_WR_FLUSH_ERR, why);
		return;
	}
	if (kind == RD_WR_RECV)
		rd_on_recv(rc, i, wc->byte_len);
	else if (kind == RD_WR_READ)
		rd_on_read(rc);
}

static void cq_drain(struct rd_conn *rc)
{
	struct ibv_wc wc[16];
	int n;

	conn_link(rc); /* a completion may come before ESTABLISHED */
	while ((n = ibv_poll_cq(rc->cq, 16, wc)) > 0)
		for (int k = 0; k < n; k++)
			on_wc(rc, &wc[k]);
	if (!rc->failed)
		rd_pump(rc);
	rd_flush_close(rc);
}

static void comp_ready(struct worker *w, void *arg)
{
	struct rd_worker *rw = arg;
	struct ibv_cq *cq;
	void *ctx;

	(void)w;
	while (ibv_get_cq_event(rw->comp, &cq, &ctx) == 0) {
		struct rd_conn *rc = ctx;

		ibv_ack_cq_events(cq, 1);
		ibv_req_notify_cq(cq, 0);
		cq_drain(rc); /* after re-arming: none is missed */
	}
}

/* A store read completed or a fill advanced: readers waiting try. */
static void disk_ready(struct worker *w, void *arg)
{
	struct rd_worker *rw = arg;

	(void)w;
	for (struct rd_conn *rc = rw->conns; rc; rc = rc->next)
		if (rc->q.disk_wait) {
			rd_pump(rc);
			rd_flush_close(rc);
		}
}

static int nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 ? -errno : 0;
}

static int rd_worker_init(struct worker *w, char *err, size_t errlen)
{
	struct rd_worker *rw = &srv.ws[w->id];
	int ret = -ENOMEM;

	rw->srv = &srv;
	rw->w = w;
	if (!(rw->cch = rdma_create_event_channel()) ||
	    !(rw->comp = ibv_create_comp_channel(srv.ctx)))
		goto fail;
	if ((ret = nonblock(rw->cch->fd)) < 0 ||
	    (ret = nonblock(rw->comp->fd)) < 0 ||
	    (ret = gd_source_add(w, rw->cch->fd, cm_ready, NULL, rw)) < 0 ||
	    (ret = gd_source_add(w, rw->comp->fd, comp_ready, disk_ready, rw)) <
		    0)
		goto fail;
	if (w->id == 0 &&
	    (ret = gd_source_add(w, srv.lch->fd, listen_ready, NULL, rw)) < 0)
		goto fail;
	return 0;
fail:
	snprintf(err, errlen, "cannot set up RDMA on worker %u: %s", w->id,
		 strerror(errno ? errno : -ret));
	return -1;
}

static void rd_worker_fini(struct worker *w)
{
	struct rd_worker *rw = &srv.ws[w->id];

	while (rw->conns)
		conn_free(rw->conns);
	if (rw->comp)
		ibv_destroy_comp_channel(rw->comp);
	if (rw->cch)
		rdma_destroy_event_channel(rw->cch);
}

static const struct gd_transport rdma_transport = {
	.name = "rdma",
	.worker_init = rd_worker_init,
	.worker_fini = rd_worker_fini,
};

/* ---- listening ---- */

static int bind_listen(const char *addr, unsigned port, char *why, size_t wlen)
{
	struct addrinfo hints = { .ai_flags = AI_NUMERICHOST | AI_PASSIVE,
				  .ai_socktype = SOCK_STREAM },
			*ai;
	char ps[8], host[INET6_ADDRSTRLEN];
	int ret;

	snprintf(ps, sizeof(ps), "%u", port);
	if ((ret = getaddrinfo(addr, ps, &hints, &ai))) {
		snprintf(why, wlen, "--rdma-address '%s': %s", addr,
			 gai_strerror(ret));
		return -1;
	}
	ret = rdma_bind_addr(srv.listen, ai->ai_addr);
	freeaddrinfo(ai);
	if (ret) {
		snprintf(why, wlen, "cannot bind RDMA to %s:%u: %s", addr, port,
			 strerror(errno));
		return -1;
	}
	if (!srv.listen->verbs) {
		snprintf(why, wlen,
			 "--rdma-address %s is no address of an RDMA device",
			 addr);
		return -1;
	}
	if (rdma_listen(srv.listen, 64)) {
		snprintf(why, wlen, "cannot listen on RDMA %s:%u: %s", addr,
			 port, strerror(errno));
		return -1;
	}
	getnameinfo(rdma_get_local_addr(srv.listen),
		    sizeof(struct sockaddr_in6), host, sizeof(host), NULL, 0,
		    NI_NUMERICHOST);
	snprintf(srv.name, sizeof(srv.name), "%s:%u", host,
		 ntohs(rdma_get_src_port(srv.listen)));
	return 0;
}

int gd_rdma_listen(struct gd *gd, char *why, size_t wlen)
{
	const char *addr = gd->set.rdma_address ? gd->set.rdma_address :
						  gd->set.listen;

	srv.gd = gd;
	if (!gd->set.rdma_max_conns)
		gd->set.rdma_max_conns = 64;
	pthread_mutex_init(&srv.mr_lock, NULL);
	srv.ws = calloc(gd->nworkers, sizeof(*srv.ws));
	if (!srv.ws || !(srv.lch = rdma_create_event_channel()) ||
	    rdma_create_id(srv.lch, &srv.listen, NULL, RDMA_PS_TCP)) {
		snprintf(why, wlen, "cannot set up RDMA: %s", strerror(errno));
		return -1;
	}
	if (bind_listen(addr, gd->set.rdma_port, why, wlen) < 0)
		return -1;
	srv.ctx = srv.listen->verbs;
	if (!(srv.pd = ibv_alloc_pd(srv.ctx)) || nonblock(srv.lch->fd) < 0) {
		snprintf(why, wlen, "cannot set up RDMA on %s: %s",
			 ibv_get_device_name(srv.ctx->device), strerror(errno));
		return -1;
	}
	if (gd_transport_add(gd, &rdma_transport) < 0) {
		snprintf(why, wlen, "too many transports");
		return -1;
	}
	gd_log(GD_LOG_INFO, "rdma on %s, device %s", srv.name,
	       ibv_get_device_name(srv.ctx->device));
	return 0;
}

void gd_rdma_close(struct gd *gd)
{
	(void)gd;
	if (!srv.gd)
		return;
	rd_mrs_release(&srv);
	if (srv.pd)
		ibv_dealloc_pd(srv.pd);
	if (srv.listen)
		rdma_destroy_id(srv.listen);
	if (srv.lch)
		rdma_destroy_event_channel(srv.lch);
	free(srv.ws);
	pthread_mutex_destroy(&srv.mr_lock);
	memset(&srv, 0, sizeof(srv));
}
