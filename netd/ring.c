/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * goblind --ring PATH: goblin's binary protocol over shared memory.  A
 * client connects to the Unix socket PATH and says hello; the server
 * makes the mapping (a sealed memfd: the client cannot shrink it under
 * us), two eventfds, and passes the three by SCM_RIGHTS.  The socket then
 * carries nothing: its EOF is the client's death.  The worker drives the
 * connection from its epoll (the client's kicks on an eventfd it watches,
 * conn_watch()), and the loop busy-polls the request ring for a bounded
 * time after the last progress, then parks, so an idle ring costs no CPU.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ring.h"

#define RING_HELLO	 "GBRING1\n" /* the client's first 8 bytes */
#define RING_READY	 "GBREADY\n" /* ours, with the three fds */
#define RING_SPIN_US	 50	     /* busy-poll this long, then park */
#define RING_YIELD_NS	 2000	     /* ... yielding the CPU past this */
#define RING_SOCK_NS	 1000000     /* a look at the socket: EOF, garbage */
#define RING_STEP_BUDGET 64	     /* steps before the others' turn */

static void ring_release(struct conn *c)
{
	struct ring_state *rs = ring_of(c);

	ring_req_release(c);
	if (!rs->ctl)
		return;
	/* out of the epoll first: the client holds the same eventfd, which
	 * closing ours would not take out of it */
	conn_unwatch(c, rs->kick_fd);
	close(rs->kick_fd);
	close(rs->wake_fd);
	munmap(rs->ctl, GR_MAP_SIZE);
	atomic_fetch_sub(&c->w->gd->ring_mapped, GR_MAP_SIZE);
	free(rs->rx);
	rs->ctl = NULL;
	rs->rx = NULL;
}

static bool ring_idle(const struct conn *c)
{
	return ((const struct ring_conn *)c)->s.job == RJ_NONE;
}

/* The memfd, sealed at its size, mapped and its control page filled. */
static int map_make(struct ring_state *rs)
{
	int fd = memfd_create("goblin-ring", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	void *p;

	if (fd < 0)
		return -1;
	if (ftruncate(fd, GR_MAP_SIZE) < 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) <
		    0)
		goto fail;
	p = mmap(NULL, GR_MAP_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		goto fail;
	rs->ctl = p;
	rs->req = (uint8_t *)p + GR_CTL_SIZE;
	rs->rep = rs->req + GR_REQ_SIZE;
	rs->ctl->magic = GR_MAGIC;
	rs->ctl->version = GR_VERSION;
	rs->ctl->req_off = GR_CTL_SIZE;
	rs->ctl->req_size = GR_REQ_SIZE;
	rs->ctl->rep_off = GR_CTL_SIZE + GR_REQ_SIZE;
	rs->ctl->rep_size = GR_REP_SIZE;
	rs->ctl->window = GR_WINDOW;
	rs->ctl->spin_us = RING_SPIN_US;
	return fd;
fail:
	close(fd);
	return -1;
}

/* Send READY and the memfd and both eventfds over the setup socket. */
static int send_fds(int sock, const int fds[3])
{
	char data[] = RING_READY;
	struct iovec iov = { .iov_base = data, .iov_len = 8 };
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(3 * sizeof(int))];
	} u;
	struct msghdr mh = { .msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = u.b,
			     .msg_controllen = sizeof(u.b) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);

	memset(&u, 0, sizeof(u));
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(3 * sizeof(int));
	memcpy(CMSG_DATA(cm), fds, 3 * sizeof(int));
	return sendmsg(sock, &mh, MSG_NOSIGNAL) == 8 ? 0 : -1;
}

/* The client's hello: set the ring up.  RUN_INPUT until it is whole. */
static enum conn_run ring_hello(struct conn *c)
{
	struct ring_state *rs = ring_of(c);
	int fds[3] = { -1, -1, -1 };

	if (c->rend - c->rstart < 8)
		return RUN_INPUT;
	if (c->rend - c->rstart > 8 ||
	    memcmp(c->rbuf + c->rstart, RING_HELLO, 8))
		return RUN_CLOSE; /* not our client: nothing to answer */
	c->rstart = c->rend = 0;
	rs->rx = malloc(RING_RX_MAX);
	rs->kick_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	rs->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (!rs->rx || rs->kick_fd < 0 || rs->wake_fd < 0 ||
	    (fds[0] = map_make(rs)) < 0)
		goto fail;
	atomic_fetch_add(&c->w->gd->ring_mapped, GR_MAP_SIZE);
	fds[1] = rs->kick_fd;
	fds[2] = rs->wake_fd;
	if (conn_watch(c, rs->kick_fd) < 0 || send_fds(c->fd, fds) < 0) {
		gd_log(GD_LOG_WARN, "ring: cannot set a client up: %s",
		       strerror(errno));
		close(fds[0]);
		return RUN_CLOSE; /* release() undoes the rest */
	}
	close(fds[0]); /* the mapping holds it */
	rs->active_ns = rs->sock_ns = gs_mono_ns();
	return RUN_OUTPUT;
fail:
	gd_log(GD_LOG_WARN, "ring: cannot set a client up: %s",
	       strerror(errno));
	if (rs->ctl) {
		munmap(rs->ctl, GR_MAP_SIZE);
		rs->ctl = NULL;
	}
	if (fds[0] >= 0)
		close(fds[0]);
	if (rs->kick_fd >= 0)
		close(rs->kick_fd);
	if (rs->wake_fd >= 0)
		close(rs->wake_fd);
	free(rs->rx);
	rs->rx = NULL;
	return RUN_CLOSE;
}

/* After the hello the socket says nothing: EOF is the client gone, and
 * bytes are garbage.  True: drop the connection. */
static bool socket_gone(struct conn *c)
{
	char b;
	ssize_t n = recv(c->fd, &b, 1, MSG_DONTWAIT | MSG_PEEK);

	ring_of(c)->sock_ns = gs_mono_ns();
	return n >= 0 ||
	       (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

/*
 * Park: srv_parked set, then one more look at both rings (the client
 * sets its tail or head, then looks at srv_parked: one of us sees the
 * other's write).  True when parked; false when work came meanwhile.
 */
static bool park(struct conn *c)
{
	struct ring_state *rs = ring_of(c);
	uint64_t v;

	/* old kicks out first, so that the next one wakes us */
	while (read(rs->kick_fd, &v, sizeof(v)) > 0)
		;
	atomic_store(&rs->ctl->srv_parked.v, 1);
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load(&rs->ctl->req_tail.v) != rs->req_head ||
	    (rs->want_room &&
	     atomic_load(&rs->ctl->rep_head.v) != rs->room_head)) {
		atomic_store(&rs->ctl->srv_parked.v, 0);
		return false;
	}
	rs->parked = true;
	return true;
}

/*
 * The loop of a ring connection: steps while there is progress; with
 * none, busy-poll (alone on the worker) until RING_SPIN_US after the last
 * progress, yield to other connections when they wait, then park until a
 * kick, the socket or the disk wakes us.  The spin is what makes a round
 * trip take well under a microsecond; its bound is what keeps an idle
 * ring from using a core.
 */
static enum conn_run ring_run(struct conn *c)
{
	struct ring_state *rs = ring_of(c);
	bool fresh = false;
	int64_t now;

	if (!rs->ctl)
		return ring_hello(c);
	if (rs->parked) {
		rs->parked = false;
		atomic_store(&rs->ctl->srv_parked.v, 0);
		if (socket_gone(c))
			return RUN_CLOSE;
	}
	for (unsigned n = 0, idle = 0; n < RING_STEP_BUDGET;) {
		enum ring_step st = ring_step(c);

		if (st == RS_DONE) {
			n++;
			fresh = true;
			continue;
		}
		if (st == RS_CLOSE) {
			gd_log(GD_LOG_INFO, "ring: dropping a client: %s",
			       rs->err ? rs->err : "closed");
			return RUN_CLOSE;
		}
		/* alone on the worker, the clock every 32 looks (a look is a
		 * few ns); with others waiting, at each turn, so that the
		 * spin ends and the socket is looked at there too */
		if (st == RS_IDLE && !fresh && ++idle % 32 && !c->w->nready)
			continue;
		now = gs_mono_ns();
		if (fresh) /* the spin counts from the last progress */
			rs->active_ns = now;
		fresh = false;
		if (now - rs->sock_ns > RING_SOCK_NS && socket_gone(c))
			return RUN_CLOSE;
		if (st == RS_DISK)
			return RUN_DISK;
		if (now - rs->active_ns < RING_SPIN_US * 1000ll) {
			if (c->w->nready)
				return RUN_OUTPUT; /* the others' turn */
			/* a client on our CPU runs now, not after the spin
			 * (goblin_client.c's wait_for(), GC_YIELD_NS) */
			if (now - rs->active_ns > RING_YIELD_NS)
				sched_yield();
			continue;
		}
		if (park(c))
			return RUN_WAIT;
	}
	rs->active_ns = gs_mono_ns();
	return RUN_OUTPUT;
}

const struct proto_ops ring_ops = {
	.name = "ring",
	.conn_size = sizeof(struct ring_conn),
	.run = ring_run,
	.release = ring_release,
	.idle = ring_idle,
	.busy_reply = "",
};

/* ---- the setup socket ---- */

static struct gd_unix ring_sock = { .fd = -1 };

const char *gd_ring_listen(struct gd *gd)
{
	static char why[512];
	struct gd_proto *p;

	p = gd_proto_add(gd, &ring_ops, gd->set.max_conns);
	if (!p)
		return "too many protocols";
	if (gd_unix_listen(&ring_sock, gd->set.ring, gd->set.unixsocket_mask,
			   gd->nworkers, why, sizeof(why)) < 0)
		return why;
	if (gd_listener_add_shared(gd, p, ring_sock.fds) < 0)
		return "too many listeners";
	gd->ring_proto = p;
	gd_log(GD_LOG_INFO, "ring on unix socket %s (mode %04o)", gd->set.ring,
	       gd->set.unixsocket_mask);
	return NULL;
}

void gd_ring_close(void)
{
	gd_unix_close(&ring_sock);
}
