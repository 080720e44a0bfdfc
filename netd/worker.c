/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * goblind workers: one thread each, one epoll loop for its sockets and one
 * io_uring for the store's reads (its completions wake the loop through
 * an eventfd).  Connections are state machines driven by conn_drive();
 * what their bytes mean is their protocol's, behind struct proto_ops
 * (goblind.h): the worker calls it and knows no protocol.  Listeners
 * carry their protocol.  This room is the loop: driving connections in
 * turn, the ready queue, store completions and the mailbox of posts from
 * other threads, idle and stop sweeps, the lingering close, starting and
 * stopping.  Accepting is accept.c's, connection I/O conn.c's.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "goblind.h"
#include "worker.h"

#define RING_ENTRIES 256 /* store reads in flight on one worker */
#define MAX_EVENTS   64
#define DRIVE_ROUNDS 32 /* steps per connection before others */
/*
 * Head-first under load: between the chunks a tail is written in (a store
 * read, 256 KiB by default: ~65 us here) the loop looks at the sockets at
 * least every HEAD_POLL_NS, so a new request's header and head go out
 * within about a chunk's time, not after the tails in flight.  A tail
 * writes the chunks it has in its turn until the sockets are due, then
 * takes its place in the ready queue by its request's age (ready_insert):
 * the oldest answer whose bytes are read goes on.  (The one that last
 * streamed going first, up to 4 MiB a turn, gave WEB at 1024 connections
 * 2-5x the completion p99: issue 21, item 6.)
 */
#define HEAD_POLL_NS 50000
#define STOP_GRACE   30 /* seconds in-flight requests get at exit */
#define LINGER_SECS  2	/* a lingering close drains input this long */

/* epoll data of the loop's own fds: no conn is at these addresses (nor
 * at a listener's, w->lis[]) */
static char tag_wake, tag_ring;

/* ---- the connection list and epoll mask ---- */

static void conn_events(struct conn *c, uint32_t ev)
{
	struct epoll_event e = { .events = ev, .data.ptr = c };

	if (c->events == ev)
		return;
	if (epoll_ctl(c->w->epfd, EPOLL_CTL_MOD, c->fd, &e) < 0)
		return;
	if ((c->events ^ ev) & EPOLLOUT) {
		if (ev & EPOLLOUT)
			c->w->nout++;
		else
			c->w->nout--;
	}
	c->events = ev;
}

static void conn_close(struct conn *c)
{
	struct worker *w = c->w;
	struct conn **p;

	c->ops->release(c);
	if (c->in_disk_wait) {
		for (p = &w->disk_wait; *p != c; p = &(*p)->dnext)
			;
		*p = c->dnext;
	}
	if (c->in_ready) {
		struct conn *prev = NULL;

		for (p = &w->ready; *p != c; p = &(*p)->rnext)
			prev = *p;
		*p = c->rnext;
		if (w->ready_tail == c)
			w->ready_tail = prev;
		w->nready--;
	}
	if (c->prev)
		c->prev->next = c->next;
	else
		w->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	for (int i = w->ibatch + 1; i < w->nbatch; i++)
		if (w->batch[i].data.ptr == c)
			w->batch[i].data.ptr = NULL;
	epoll_ctl(w->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	if (c->events & EPOLLOUT)
		w->nout--;
	if (w->busy_conn == c)
		w->busy_conn = NULL;
	close(c->fd);
	w->nconns--;
	atomic_fetch_sub(&w->gd->curr_conns, 1);
	atomic_fetch_sub(&w->gd->proto_conns[c->proto->id], 1);
	free(c->rbuf);
	free(c->wbuf);
	free(c);
}

/* ---- driving a connection ---- */

static bool conn_idle(const struct conn *c)
{
	return c->ops->idle(c);
}

static void disk_wait_add(struct conn *c)
{
	if (c->in_disk_wait)
		return;
	c->in_disk_wait = true;
	c->dnext = c->w->disk_wait;
	c->w->disk_wait = c;
}

/*
 * The worker's queue of connections with more to do is in the order their
 * requests came (conn.aseq), so the oldest answer goes on first and
 * answers finish one after the other: written a chunk each in turn, all
 * of them finished together at the end of a round, their clients asked
 * again together, and the device idled while the worker wrote (issue 21).
 * Insert @c at or after *@p, where its age puts it (most are the newest:
 * the back is tried first); returns the link after it.  A queued
 * connection driven straight from epoll keeps its place, even if it was
 * stamped anew meanwhile: the order is the requests' as queued.
 */
static struct conn **ready_insert(struct conn *c, struct conn **p)
{
	struct worker *w = c->w;

	c->in_ready = true;
	w->nready++;
	if (w->ready_tail && w->ready_tail->aseq <= c->aseq)
		p = &w->ready_tail->rnext;
	else
		while (*p && (*p)->aseq <= c->aseq)
			p = &(*p)->rnext;
	c->rnext = *p;
	*p = c;
	if (!c->rnext)
		w->ready_tail = c;
	return &c->rnext;
}

static void ready_add(struct conn *c)
{
	if (!c->in_ready)
		ready_insert(c, &c->w->ready);
}

/* A list of connections linked by dnext, oldest request first. */
static struct conn *by_age(struct conn *l)
{
	struct conn *a = NULL, *b = NULL, *n, **t;
	bool odd = false;

	if (!l || !l->dnext)
		return l;
	for (; l; l = n, odd = !odd) {
		n = l->dnext;
		l->dnext = odd ? b : a;
		*(odd ? &b : &a) = l;
	}
	a = by_age(a);
	b = by_age(b);
	for (t = &l; a && b; t = &(*t)->dnext) {
		struct conn **min = a->aseq <= b->aseq ? &a : &b;

		*t = *min;
		*min = (*min)->dnext;
	}
	*t = a ? a : b;
	return l;
}

static struct conn *ready_pop(struct worker *w)
{
	struct conn *c = w->ready;

	if (!c)
		return NULL;
	w->ready = c->rnext;
	if (!w->ready)
		w->ready_tail = NULL;
	w->nready--;
	c->in_ready = false;
	return c;
}

/*
 * A connection we close after an error reply may still have request
 * bytes coming (a body we will not read: proto_ops.linger); closing with
 * unread input makes the kernel send a reset, which can destroy the reply
 * before the client reads it.  So, like
 * nginx's lingering close: shut our side, read and drop the client's
 * bytes until it closes, for at most LINGER_SECS.  True: lingering now.
 */
static bool conn_linger(struct conn *c)
{
	if (!c->ops->linger || c->lingering)
		return false;
	c->ops->release(c);
	shutdown(c->fd, SHUT_WR);
	c->lingering = true;
	c->linger_until = gs_mono_sec() + LINGER_SECS;
	c->rstart = c->rend = 0;
	conn_events(c, EPOLLIN | EPOLLRDHUP);
	return true;
}

/* Drop what a lingering connection sends: -1 at its EOF, 0 on EAGAIN. */
static int linger_drain(struct conn *c)
{
	for (;;) {
		ssize_t n = read(c->fd, c->w->scratch, GD_SCRATCH);

		if (n > 0)
			continue;
		if (n < 0 && errno == EINTR)
			continue;
		return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) ? 0 :
									    -1;
	}
}

/*
 * @c waits for input after a long answer: its client, which reads that
 * answer at its own speed, will likely ask again soon; the worker polls
 * until then or --busy-poll ends rather than sleep (GD_BUSY_POLL_MIN).
 */
static void busy_poll_arm(struct conn *c)
{
	struct worker *w = c->w;
	unsigned us = w->gd->set.busy_poll_us;

	if (c->sent_since_input < GD_BUSY_POLL_MIN || !us)
		return;
	c->sent_since_input = 0;
	c->busy_polled = true;
	w->busy_armed = gs_mono_ns();
	w->busy_until = w->busy_armed + (int64_t)us * 1000;
	w->busy_switches = -1;
	w->busy_window = 0;
	w->busy_conn = c;
	CNT(w, busy_polls);
}

/*
 * The poll ran out: while the answer that armed it is still in its
 * socket's send queue, its client is still reading it, and the poll
 * starts again (GD_BUSY_POLL_OUTQ_NS).
 */
static bool busy_poll_extend(struct worker *w, int64_t now)
{
	struct conn *c = w->busy_conn;
	int outq = 0;

	if (!c || !c->busy_polled ||
	    now - w->busy_armed > GD_BUSY_POLL_OUTQ_NS ||
	    ioctl(c->fd, SIOCOUTQ, &outq) < 0 || outq <= 0)
		return false;
	w->busy_until = now + (int64_t)w->gd->set.busy_poll_us * 1000;
	CNT(w, busy_poll_extended);
	return true;
}

/*
 * conn_flush() for @c, whose chunk holds the start of a long answer's
 * last GD_WARM_TAIL bytes (conn.warm_hold): if the worker has nothing
 * else to do, the bytes before them go out, then the protocol's warm
 * pass runs while the client reads, then the rest.  0 or -1.
 */
static int flush_warm(struct conn *c)
{
	struct worker *w = c->w;
	const uint8_t *end = c->chunk + c->chunk_len;
	size_t hold = c->warm_hold;
	unsigned nout = w->nout - !!(c->events & EPOLLOUT);

	c->warm_hold = 0;
	if (!w->gd->set.busy_poll_us || hold > c->chunk_len || w->ready ||
	    nout || w->disk_wait)
		return conn_flush(c);
	c->chunk_len -= hold;
	if (conn_flush(c) < 0)
		return -1;
	if (conn_pending(c)) { /* the client is slow: no pass */
		c->chunk_len = (size_t)(end - c->chunk);
		return 0;
	}
	c->chunk = end - hold;
	c->chunk_len = hold;
	c->ops->warm(c);
	CNT(w, warm_passes);
	return conn_flush(c);
}

/* The calling thread's context switches, voluntary or not. */
static long thread_switches(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru) < 0)
		return 0;
	return ru.ru_nvcsw + ru.ru_nivcsw;
}

/*
 * Polling, nothing came: whatever else may run on this CPU (the client
 * of the answer, perhaps) goes first.  If something did, the CPU is
 * wanted: polling on would leave the request waiting behind it for a
 * time slice, while a sleeping worker that the request wakes preempts.
 * What takes a yield briefly and is done does not want it: on a VM, a
 * vCPU that the host ran late (a long yield and no switch: 1 yield in
 * 3,500 here, so one in most polls of a few ms), or the kernel's RCU
 * thread, which took one yield of every poll on an idle machine here.
 * So the poll stops when other tasks took more than
 * GD_BUSY_CEDE_TAKEN of the yields that switched to them within
 * GD_BUSY_CEDE_WINDOW.
 */
static void busy_poll_yield(struct worker *w)
{
	int64_t t, now;
	long sw;

	if (w->busy_switches < 0)
		w->busy_switches = thread_switches();
	t = gs_mono_ns();
	sched_yield();
	now = gs_mono_ns();
	sw = thread_switches();
	if (now - t > GD_BUSY_POLL_CEDE_NS && sw != w->busy_switches) {
		if (!w->busy_window ||
		    t - w->busy_window > GD_BUSY_CEDE_WINDOW) {
			w->busy_window = t;
			w->busy_taken = 0;
		}
		w->busy_taken += now - t;
		if (w->busy_taken > GD_BUSY_CEDE_TAKEN) {
			w->busy_until = 0;
			CNT(w, busy_poll_ceded);
		}
	}
	w->busy_switches = sw;
}

/*
 * Run @c until it waits on the socket or the disk.  Closes it on EOF,
 * errors and the protocol's word.
 */
static void conn_drive(struct conn *c)
{
	struct worker *w = c->w;

	if (c->lingering) {
		if (linger_drain(c) < 0)
			goto close;
		return;
	}
	c->last_active = gs_mono_sec();
	for (int round = 0; round < DRIVE_ROUNDS; round++) {
		enum conn_run st;
		int ret;

		if (conn_pending(c)) {
			bool chunk = c->chunk_len;

			if ((c->warm_hold && c->ops->warm ? flush_warm(c) :
							    conn_flush(c)) < 0)
				goto close;
			if (conn_pending(c)) { /* the client is slow */
				conn_events(c, EPOLLOUT | EPOLLRDHUP);
				return;
			}
			if (chunk &&
			    gs_mono_ns() - w->polled_ns >= HEAD_POLL_NS) {
				/* new requests' heads, then the answers in
				 * their requests' order: this one again,
				 * unless an older one has its bytes */
				conn_events(c, EPOLLRDHUP);
				CNT(w, tail_turns_ended);
				goto queue;
			}
		}
		if (c->closing) {
			if (conn_linger(c) && linger_drain(c) == 0)
				return;
			goto close;
		}
		if (w->stopping && conn_idle(c) && c->rstart == c->rend)
			goto close;  /* finished what it had asked */
		st = c->ops->run(c); /* the seam: one call per step */
		switch (st) {
		case RUN_OUTPUT:
			continue;
		case RUN_CLOSE:
			c->closing = true;
			continue;
		case RUN_DISK:
			disk_wait_add(c);
			/* the head goes out now, then the tail reads */
			if (conn_flush(c) < 0)
				goto close;
			if (io_uring_sq_ready(&w->ring))
				io_uring_submit(&w->ring);
			conn_events(c, conn_pending(c) ? EPOLLOUT | EPOLLRDHUP :
							 EPOLLRDHUP);
			return;
		case RUN_WAIT:
			conn_events(c, EPOLLIN | EPOLLRDHUP);
			return;
		case RUN_INPUT:
			if (conn_pending(c))
				continue;
			if (conn_idle(c) && c->rstart == c->rend)
				c->aseq = gs_mono_ns(); /* a new request */
			ret = conn_read(c);
			if (ret < 0)
				goto close;
			if (ret == 0) {
				busy_poll_arm(c);
				conn_events(c, EPOLLIN | EPOLLRDHUP);
				return;
			}
			continue;
		}
	}
	c->aseq = gs_mono_ns(); /* DRIVE_ROUNDS steps: after the others */
queue:
	ready_add(c);
	return;
close:
	conn_close(c);
}

/* ---- second event sources of a connection (conn_watch) ---- */

int conn_watch(struct conn *c, int fd)
{
	struct epoll_event e = { .events = EPOLLIN | EPOLLET, .data.ptr = c };

	return epoll_ctl(c->w->epfd, EPOLL_CTL_ADD, fd, &e) < 0 ? -errno : 0;
}

void conn_unwatch(struct conn *c, int fd)
{
	epoll_ctl(c->w->epfd, EPOLL_CTL_DEL, fd, NULL);
}

/* ---- posts from other threads: the mailbox ---- */

void conn_post(struct conn *c)
{
	struct worker *w = c->w;

	pthread_mutex_lock(&w->mail_lock);
	c->mnext = w->mail;
	w->mail = c;
	pthread_mutex_unlock(&w->mail_lock);
	gd_worker_wake_disk(w);
}

bool conn_unpost(struct conn *c)
{
	struct worker *w = c->w;
	struct conn **p;
	bool found = false;

	pthread_mutex_lock(&w->mail_lock);
	for (p = &w->mail; *p; p = &(*p)->mnext) {
		if (*p == c) {
			*p = c->mnext;
			found = true;
			break;
		}
	}
	pthread_mutex_unlock(&w->mail_lock);
	return found;
}

/* The mailbox: connections handed over by other workers join this one;
 * each posted connection's protocol hears of it, and the connection is
 * driven with those waiting on the disk. */
static void mail_run(struct worker *w)
{
	struct conn *list, *c;

	handoff_run(w);
	pthread_mutex_lock(&w->mail_lock);
	list = w->mail;
	w->mail = NULL;
	pthread_mutex_unlock(&w->mail_lock);
	while ((c = list)) {
		list = c->mnext;
		if (c->ops->posted)
			c->ops->posted(c);
		disk_wait_add(c); /* there already: it waits on this */
	}
}

/* A store read completed: every connection waiting on one gets a turn. */
static void disk_wake(struct worker *w)
{
	struct io_uring_cqe *cqe;
	struct conn *list, *c;
	uint64_t v;

	if (read(w->ring_evfd, &v, sizeof(v)) < 0) {
		/* nothing to clear */
	}
	while (io_uring_peek_cqe(&w->ring, &cqe) == 0) {
		if (!gs_handle_cqe(cqe))
			gd_log(GD_LOG_ERROR,
			       "a foreign completion on the ring");
		io_uring_cqe_seen(&w->ring, cqe);
	}
	mail_run(w);
	for (unsigned i = 0; i < w->nsrc; i++)
		if (w->src[i].disk)
			w->src[i].disk(w, w->src[i].arg);
	list = by_age(w->disk_wait);
	w->disk_wait = NULL;
	for (struct conn **p = &w->ready; (c = list);) {
		list = c->dnext;
		c->in_disk_wait = false;
		if (!c->in_ready)
			p = ready_insert(c, p);
	}
}

/*
 * A protocol holding more than half of its connection limit is busy:
 * its connections idle longer than --busy-idle-timeout are closed until
 * it holds half again, so that idle pools cannot keep new clients out
 * (--idle-timeout, 0 by default, applies always).
 */
static unsigned idle_limit(const struct worker *w, const struct gd_proto *p)
{
	const struct gd_settings *s = &w->gd->set;
	unsigned cap = p->max_conns;
	unsigned busy = s->busy_idle_timeout;

	if (busy && atomic_load(&w->gd->proto_conns[p->id]) * 2ull > cap &&
	    (!s->idle_timeout || busy < s->idle_timeout))
		return busy;
	return s->idle_timeout;
}

static void idle_sweep(struct worker *w, int64_t now)
{
	struct gd *gd = w->gd;
	struct conn *c, *next;

	for (unsigned i = 0; i < gd->nprotos; i++)
		if (gd->protos[i].ops->tick)
			gd->protos[i].ops->tick(w);
	for (c = w->conns; c; c = next) {
		unsigned limit = idle_limit(w, c->proto);

		next = c->next;
		if (c->lingering) {
			if (now >= c->linger_until)
				conn_close(c);
		} else if (w->stopping && now - c->last_active > STOP_GRACE) {
			gd_log(GD_LOG_WARN,
			       "closing a connection still busy "
			       "%d s after the stop",
			       STOP_GRACE);
			conn_close(c);
		} else if (limit && now - c->last_active > (int64_t)limit &&
			   conn_idle(c) && !c->in_disk_wait &&
			   !conn_pending(c)) {
			CNT(w, idle_kicks);
			conn_close(c);
		} else if (c->ops->expired && c->ops->expired(c, now)) {
			conn_drive(c); /* the reply goes out, then it closes */
		}
	}
}

static void begin_stop(struct worker *w)
{
	struct conn *c, *next;

	w->stopping = true;
	for (unsigned i = 0; i < w->nlis; i++)
		epoll_ctl(w->epfd, EPOLL_CTL_DEL, w->lis[i].fd, NULL);
	for (c = w->conns; c; c = next) { /* idle ones go now */
		next = c->next;
		c->last_active = gs_mono_sec();
		if (conn_idle(c) && !conn_pending(c) && c->rstart == c->rend)
			conn_close(c);
		else
			ready_add(c);
	}
}

/*
 * Wait up to @timeout ms for the sockets and the ring, and act on what
 * came: the number of events, or -1 when epoll fails.  Connections
 * first: each appears once in a batch, and only its own conn_drive()
 * closes it.  What may close others (the stop) runs after the batch.
 * Connections with more to do go to the ready queue, which conn_close()
 * keeps whole.
 */
static int poll_events(struct worker *w, int timeout)
{
	struct epoll_event ev[MAX_EVENTS];
	bool wake = false, ring = false;
	int n;

	if (io_uring_sq_ready(&w->ring))
		io_uring_submit(&w->ring);
	n = epoll_wait(w->epfd, ev, MAX_EVENTS, timeout);
	w->polled_ns = gs_mono_ns();
	if (n < 0) {
		if (errno == EINTR)
			return 0;
		gd_log(GD_LOG_ERROR, "epoll_wait: %s", strerror(errno));
		return -1;
	}
	w->batch = ev;
	w->nbatch = n;
	for (int i = 0; i < n; i++) {
		void *p = ev[i].data.ptr;
		uintptr_t li = (uintptr_t)p - (uintptr_t)w->lis;
		uintptr_t si = (uintptr_t)p - (uintptr_t)w->src;

		w->ibatch = i;
		if (!p) { /* a connection closed earlier in the batch */
			continue;
		} else if (li < sizeof(w->lis)) { /* &w->lis[i]: a listener */
			if (!w->stopping)
				accept_all(w, p);
		} else if (si < sizeof(w->src)) { /* a transport's source */
			struct gd_source *src = p;

			src->ready(w, src->arg);
		} else if (p == &tag_wake) {
			wake = true;
		} else if (p == &tag_ring) {
			ring = true;
		} else {
			conn_drive(p);
		}
	}
	w->nbatch = 0;
	if (ring)
		disk_wake(w);
	if (wake) {
		uint64_t v;

		if (read(w->evfd, &v, sizeof(v)) < 0) {
			/* nothing to clear */
		}
		if (atomic_load(&w->gd->stopping) && !w->stopping)
			begin_stop(w);
	}
	return n;
}

/*
 * One turn for each connection queued when it starts (those queued
 * during it wait for the next).  Between turns, a look at the sockets
 * every HEAD_POLL_NS: new requests are served before more tail chunks.
 */
static int run_ready(struct worker *w)
{
	for (unsigned n = w->nready; n; n--) {
		struct conn *c;

		if (gs_mono_ns() - w->polled_ns >= HEAD_POLL_NS &&
		    poll_events(w, 0) < 0)
			return -1;
		if (!(c = ready_pop(w)))
			break;
		conn_drive(c);
	}
	return 0;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	int64_t last_sweep = gs_mono_sec();

	while (!w->stopping || w->conns) {
		int paused = listeners_resume(w);
		bool busy = false;
		int timeout = w->ready			   ? 0 :
			      paused >= 0 && paused < 1000 ? paused :
							     1000;
		int n;

		if (!w->ready && w->busy_until) {
			/* streams in flight: not idle (GD_BUSY_POLL_MIN) */
			int64_t now = gs_mono_ns();

			busy = !w->nout && !w->disk_wait &&
			       (now < w->busy_until ||
				busy_poll_extend(w, now));
			if (!busy)
				w->busy_until = 0;
			else
				timeout = 0;
		}
		n = poll_events(w, timeout);

		if (n < 0 || run_ready(w) < 0)
			break;
		if (busy && !n && !w->ready)
			busy_poll_yield(w);
		if (gs_mono_sec() != last_sweep) {
			last_sweep = gs_mono_sec();
			idle_sweep(w, last_sweep);
		}
	}
	return NULL;
}

/*
 * Pin worker @id to the id-th CPU this process may run on (so --numa and
 * taskset are respected), round robin when there are more workers than
 * CPUs, and name it for ps/top.  A failure only costs locality: logged.
 */
static void worker_pin(struct worker *w)
{
	cpu_set_t allowed, one;
	unsigned n = 0, want;
	char name[16];

	snprintf(name, sizeof(name), "goblind-w%u", w->id);
	pthread_setname_np(w->thread, name);
	if (sched_getaffinity(0, sizeof(allowed), &allowed) < 0 ||
	    !CPU_COUNT(&allowed))
		return;
	want = w->id % (unsigned)CPU_COUNT(&allowed);
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &allowed) || n++ != want)
			continue;
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		if (pthread_setaffinity_np(w->thread, sizeof(one), &one))
			gd_log(GD_LOG_WARN, "cannot pin worker %u to CPU %d",
			       w->id, cpu);
		else
			gd_log(GD_LOG_DEBUG, "worker %u on CPU %d", w->id, cpu);
		return;
	}
}

/* ---- starting and stopping ---- */

int worker_setup(struct gd *gd, struct worker *w, unsigned id, char *err,
		 size_t errlen)
{
	struct epoll_event e = { .events = EPOLLIN };
	int ret;

	memset(w, 0, sizeof(*w));
	pthread_mutex_init(&w->mail_lock, NULL);
	w->gd = gd;
	w->id = id;
	w->epfd = epoll_create1(EPOLL_CLOEXEC);
	w->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	w->ring_evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	w->scratch = malloc(GD_SCRATCH);
	if (w->epfd < 0 || w->evfd < 0 || w->ring_evfd < 0 || !w->scratch) {
		snprintf(err, errlen, "cannot set up worker %u: %s", id,
			 strerror(errno));
		return -1;
	}
	ret = io_uring_queue_init(RING_ENTRIES, &w->ring, 0);
	if (ret < 0 ||
	    (ret = io_uring_register_eventfd(&w->ring, w->ring_evfd)) < 0) {
		snprintf(err, errlen, "cannot set up an io_uring: %s",
			 strerror(-ret));
		return -1;
	}
	for (unsigned i = 0; i < gd->nprotos; i++) {
		const struct proto_ops *ops = gd->protos[i].ops;

		if (ops->worker_init && !(w->pstate[i] = ops->worker_init(w))) {
			snprintf(err, errlen,
				 "cannot set up worker %u for "
				 "%s: out of memory",
				 id, ops->name);
			return -1;
		}
	}
	for (unsigned i = 0; i < gd->nlisteners; i++) {
		const struct gd_listener *l = &gd->listeners[i];
		struct wlistener *wl = &w->lis[w->nlis];

		if (l->fds[id] < 0)
			continue;
		wl->l = l;
		wl->fd = l->fds[id];
		w->nlis++;
		if (listener_arm(w, wl) < 0)
			goto fail;
	}
	for (unsigned i = 0; i < gd->ntransports; i++)
		if (gd->transports[i]->worker_init(w, err, errlen) < 0)
			return -1;
	e.events = EPOLLIN;
	e.data.ptr = &tag_wake;
	if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->evfd, &e) < 0)
		goto fail;
	e.data.ptr = &tag_ring;
	if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->ring_evfd, &e) < 0)
		goto fail;
	return 0;
fail:
	snprintf(err, errlen, "epoll_ctl: %s", strerror(errno));
	return -1;
}

int worker_start(struct gd *gd, struct worker *w, unsigned id, char *err,
		 size_t errlen)
{
	int ret = worker_setup(gd, w, id, err, errlen);

	if (ret < 0)
		return ret;
	ret = pthread_create(&w->thread, NULL, worker_main, w);
	if (ret) {
		snprintf(err, errlen, "cannot start worker %u: %s", id,
			 strerror(ret));
		return -1;
	}
	worker_pin(w);
	return 0;
}

int gd_transport_add(struct gd *gd, const struct gd_transport *t)
{
	if (gd->ntransports == GD_TRANSPORTS_MAX)
		return -ENOSPC;
	gd->transports[gd->ntransports++] = t;
	return 0;
}

int gd_source_add(struct worker *w, int fd, gd_source_fn *ready,
		  gd_source_fn *disk, void *arg)
{
	struct gd_source *src;
	struct epoll_event e = { .events = EPOLLIN };

	if (w->nsrc == GD_SOURCES_MAX)
		return -ENOSPC;
	src = &w->src[w->nsrc];
	*src = (struct gd_source){ ready, disk, arg, fd };
	e.data.ptr = src;
	if (ready && epoll_ctl(w->epfd, EPOLL_CTL_ADD, fd, &e) < 0)
		return -errno;
	w->nsrc++;
	return 0;
}

void worker_stop(struct worker *w)
{
	uint64_t one = 1;

	if (write(w->evfd, &one, sizeof(one)) < 0)
		gd_log(GD_LOG_ERROR, "cannot wake worker %u: %s", w->id,
		       strerror(errno));
}

void worker_join(struct worker *w)
{
	struct gd *gd = w->gd;

	pthread_join(w->thread, NULL);
	handoff_drop(w);
	for (unsigned i = 0; i < gd->ntransports; i++)
		gd->transports[i]->worker_fini(w);
	for (unsigned i = 0; i < gd->nprotos; i++)
		if (gd->protos[i].ops->worker_fini && w->pstate[i])
			gd->protos[i].ops->worker_fini(w, w->pstate[i]);
	io_uring_queue_exit(&w->ring);
	close(w->epfd);
	close(w->evfd);
	close(w->ring_evfd);
	free(w->scratch);
	pthread_mutex_destroy(&w->mail_lock);
}

void gd_counters_sum(struct gd *gd, struct gd_counters *out)
{
	const size_t n = sizeof(*out) / sizeof(uint64_t);
	uint64_t *o = (uint64_t *)out;

	memset(out, 0, sizeof(*out));
	for (unsigned i = 0; i < gd->nworkers; i++) {
		uint64_t *c = (uint64_t *)&gd->workers[i].c;

		for (size_t k = 0; k < n; k++)
			o[k] += __atomic_load_n(&c[k], __ATOMIC_RELAXED);
	}
}
