/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * goblind workers: one thread each, one epoll loop for its sockets and one
 * io_uring for the store's reads (its completions wake the loop through
 * an eventfd).  Connections are state machines driven by conn_drive();
 * the protocol lives in memcache.c.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
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
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "goblind.h"

#define RING_ENTRIES 256	/* store reads in flight on one worker */
#define MAX_EVENTS 64
#define DRIVE_ROUNDS 32		/* steps per connection before others */
/*
 * Head-first under load: a connection streaming a tail writes one chunk
 * (a store read, 256 KiB by default: ~65 us here) a turn, and between
 * turns the loop looks at the sockets at least this often, so a new
 * request's header and head go out within about a chunk's time, not
 * after every other connection's tail.
 */
#define TAIL_CHUNKS_PER_TURN 1
#define HEAD_POLL_NS 50000
#define STOP_GRACE 30		/* seconds in-flight requests get at exit */
#define LINGER_SECS 2		/* an HTTP close drains input this long */
/*
 * Out of fds (accept4: EMFILE, ENFILE): the listener stays readable, so
 * retrying at once spins.  The process keeps one reserve fd
 * (gd->spare_fd): it is closed to take one pending connection, answer it
 * "Too many open connections" and close it (libev's and nginx's trick),
 * so clients over the limit are told instead of waiting in the backlog.  When that cannot help either,
 * the listener is switched off for PAUSE_MIN_MS, doubling up to
 * PAUSE_MAX_MS (memcached pauses accepting the same way).  Failures are
 * logged once per ACCEPT_LOG_SECS with a count.
 */
#define ACCEPT_BATCH 256	/* accepts per readable event */
#define PAUSE_MIN_MS 10
#define PAUSE_MAX_MS 1000
#define ACCEPT_LOG_SECS 10

/* epoll data of the loop's own fds: no conn is at these addresses */
static char tag_listen, tag_http, tag_wake, tag_ring;

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

int64_t gd_mono_sec(void)
{
	return mono_ns() / 1000000000ll;
}

/* ---- output ---- */

static bool out_grow(struct conn *c, size_t len)
{
	size_t need, cap;
	char *nb;

	if (c->wstart && c->wstart == c->wend)
		c->wstart = c->wend = 0;
	if (c->wend + len <= c->wcap)
		return true;
	if (c->wstart) {	/* slide the unsent bytes down first */
		memmove(c->wbuf, c->wbuf + c->wstart, c->wend - c->wstart);
		c->wend -= c->wstart;
		c->wstart = 0;
		if (c->wend + len <= c->wcap)
			return true;
	}
	need = c->wend + len;
	for (cap = c->wcap ? c->wcap : 4096; cap < need; cap *= 2)
		;
	nb = realloc(c->wbuf, cap);
	if (!nb)
		return false;
	c->wbuf = nb;
	c->wcap = cap;
	return true;
}

void conn_out(struct conn *c, const void *buf, size_t len)
{
	if (!out_grow(c, len)) {
		gd_log(GD_LOG_ERROR, "out of memory for a reply: closing");
		c->closing = true;
		return;
	}
	memcpy(c->wbuf + c->wend, buf, len);
	c->wend += len;
}

void conn_printf(struct conn *c, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	conn_out(c, line, (size_t)n < sizeof(line) ? (size_t)n
						    : sizeof(line) - 1);
}

void conn_reply(struct conn *c, const char *line)
{
	if (c->noreply)
		return;
	conn_out(c, line, strlen(line));
	conn_out(c, "\r\n", 2);
}

static bool conn_pending(const struct conn *c)
{
	return c->wend > c->wstart || c->chunk_len;
}

/* Write what is queued: wbuf, then the zero-copy chunk.  0 or -1. */
static int conn_flush(struct conn *c)
{
	while (conn_pending(c)) {
		struct iovec iov[2];
		int n = 0;
		ssize_t got;
		size_t wl = c->wend - c->wstart;

		if (wl)
			iov[n++] = (struct iovec){ c->wbuf + c->wstart, wl };
		if (c->chunk_len)
			iov[n++] = (struct iovec){ (void *)c->chunk,
						   c->chunk_len };
		got = writev(c->fd, iov, n);
		if (got < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			return -1;
		}
		CNT_ADD(c->w, bytes_written, (uint64_t)got);
		if ((size_t)got >= wl) {
			c->wstart = c->wend = 0;
			got -= (ssize_t)wl;
			if (got) {	/* no pointer arithmetic on a NULL chunk */
				c->chunk += got;
				c->chunk_len -= (size_t)got;
				if (!c->chunk_len)
					c->chunk = NULL;
			}
		} else {
			c->wstart += (size_t)got;
		}
	}
	return 0;
}

/* ---- store readers on the worker's ring ---- */

void gd_worker_wake_disk(struct worker *w)
{
	uint64_t one = 1;

	if (write(w->ring_evfd, &one, sizeof(one)) < 0) {
		/* the counter is saturated: a wake-up is pending anyway */
	}
}

/* A fill advanced: the worker's loop tries its waiting connections. */
static void fill_notify(void *arg)
{
	gd_worker_wake_disk(arg);
}

int gd_reader_attach(struct worker *w, struct gs_reader *r)
{
	return gs_reader_attach(r, &w->ring, fill_notify, w);
}

int gd_reader_open(struct worker *w, const char *key, size_t klen, int flags,
		   struct gs_reader **out)
{
	int ret = gs_get_open(w->gd->s, key, klen, flags, out);

	if (ret < 0)
		return ret;
	ret = gd_reader_attach(w, *out);
	if (ret < 0) {
		gs_reader_close(*out);
		return ret;
	}
	return 0;
}

void gd_reader_close(struct worker *w, struct gs_reader *r)
{
	uint64_t size = gs_reader_meta(r)->size;

	while (gs_reader_range(r, size, 0) == -EBUSY) {
		struct io_uring_cqe *cqe;

		io_uring_submit_and_wait(&w->ring, 1);
		while (io_uring_peek_cqe(&w->ring, &cqe) == 0) {
			gs_handle_cqe(cqe);
			io_uring_cqe_seen(&w->ring, cqe);
		}
	}
	gs_reader_close(r);
}

/* ---- the connection list and epoll mask ---- */

static void conn_events(struct conn *c, uint32_t ev)
{
	struct epoll_event e = { .events = ev, .data.ptr = c };

	if (c->events == ev)
		return;
	if (epoll_ctl(c->w->epfd, EPOLL_CTL_MOD, c->fd, &e) == 0)
		c->events = ev;
}

static void conn_close(struct conn *c)
{
	struct worker *w = c->w;
	struct conn **p;

	if (c->http)
		http_conn_release(c);
	else
		mc_conn_release(c);
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
	epoll_ctl(w->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	w->nconns--;
	atomic_fetch_sub(&w->gd->curr_conns, 1);
	atomic_fetch_sub(&w->gd->proto_conns[c->http], 1);
	free(c->rbuf);
	free(c->wbuf);
	free(c);
}

/* ---- addresses ---- */

static void addr_of_sockaddr(const struct sockaddr_storage *ss,
			     struct gd_addr *a)
{
	memset(a, 0, sizeof(*a));
	if (ss->ss_family == AF_INET) {
		a->family = AF_INET;
		memcpy(a->b, &((const struct sockaddr_in *)(const void *)ss)
				      ->sin_addr, 4);
	} else if (ss->ss_family == AF_INET6) {
		const struct in6_addr *in6 =
			&((const struct sockaddr_in6 *)(const void *)ss)
				 ->sin6_addr;

		if (IN6_IS_ADDR_V4MAPPED(in6)) {
			a->family = AF_INET;
			memcpy(a->b, in6->s6_addr + 12, 4);
		} else {
			a->family = AF_INET6;
			memcpy(a->b, in6->s6_addr, 16);
		}
	}
}

int gd_addr_parse(const char *s, size_t len, struct gd_addr *out)
{
	char buf[INET6_ADDRSTRLEN + 1];
	const char *e;
	struct in6_addr in6;

	if (len && s[0] == '[') {	/* "[v6]" or "[v6]:port" */
		e = memchr(s, ']', len);
		if (!e)
			return -EINVAL;
		s++;
		len = (size_t)(e - s);
	} else if ((e = memchr(s, ':', len)) && !memchr(e + 1, ':',
							 len - (size_t)(e - s) - 1)) {
		len = (size_t)(e - s);	/* "v4:port" */
	}
	if (!len || len >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, len);
	buf[len] = 0;
	memset(out, 0, sizeof(*out));
	if (inet_pton(AF_INET, buf, out->b) == 1) {
		out->family = AF_INET;
		return 0;
	}
	if (inet_pton(AF_INET6, buf, &in6) != 1)
		return -EINVAL;
	if (IN6_IS_ADDR_V4MAPPED(&in6)) {
		out->family = AF_INET;
		memcpy(out->b, in6.s6_addr + 12, 4);
	} else {
		out->family = AF_INET6;
		memcpy(out->b, in6.s6_addr, 16);
	}
	return 0;
}

bool gd_addr_loopback(const struct gd_addr *a)
{
	static const uint8_t v6_lo[16] = { [15] = 1 };

	if (a->family == AF_INET)
		return a->b[0] == 127;
	return a->family == AF_INET6 && !memcmp(a->b, v6_lo, 16);
}

bool gd_addr_equal(const struct gd_addr *a, const struct gd_addr *b)
{
	return a->family == b->family &&
	       !memcmp(a->b, b->b, a->family == AF_INET ? 4 : 16);
}

/* Where @c's peer is: loopback, and whether it is the trusted proxy. */
static void peer_classify(struct conn *c)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	struct gd_addr a;
	struct gd *gd = c->w->gd;

	if (getpeername(c->fd, (struct sockaddr *)&ss, &sl) < 0)
		return;		/* neither: the strict answer */
	if (ss.ss_family == AF_UNIX) {
		c->loopback = true;
		return;
	}
	addr_of_sockaddr(&ss, &a);
	c->loopback = gd_addr_loopback(&a);
	c->from_proxy = gd->has_proxy && gd_addr_equal(&a, &gd->proxy);
}

static void conn_new(struct worker *w, int fd, bool http)
{
	struct conn *c = calloc(1, sizeof(*c));
	struct epoll_event e = { .events = EPOLLIN | EPOLLRDHUP };
	int one = 1;

	if (!c || !(c->rbuf = malloc(GD_RBUF))) {
		free(c);
		close(fd);
		atomic_fetch_sub(&w->gd->curr_conns, 1);
		atomic_fetch_sub(&w->gd->proto_conns[http], 1);
		gd_log(GD_LOG_ERROR, "out of memory for a connection");
		return;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	c->w = w;
	c->fd = fd;
	c->http = http;
	peer_classify(c);
	c->rcap = GD_RBUF;
	c->events = e.events;
	c->last_active = gd_mono_sec();
	e.data.ptr = c;
	if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, fd, &e) < 0) {
		gd_log(GD_LOG_ERROR, "epoll_ctl: %s", strerror(errno));
		free(c->rbuf);
		free(c);
		close(fd);
		atomic_fetch_sub(&w->gd->curr_conns, 1);
		atomic_fetch_sub(&w->gd->proto_conns[http], 1);
		return;
	}
	c->next = w->conns;
	if (w->conns)
		w->conns->prev = c;
	w->conns = c;
	w->nconns++;
	CNT(w, total_connections);
}

static int listener_fd(const struct worker *w, bool http)
{
	return http ? w->gd->http_fds[w->id] : w->gd->listen_fds[w->id];
}

/*
 * Tell a client we will not serve it, as memcached does
 * ("ERROR Too many open connections"; HTTP: 503 with Retry-After), and
 * close.  What it sent already is read first: a close with unread input
 * makes the kernel reset the connection, and the reset can destroy the
 * reply before the client reads it.
 */
static void conn_refuse(struct worker *w, int fd, bool http)
{
	static const char msg[] = "ERROR Too many open connections\r\n";
	static const char hmsg[] =
		"HTTP/1.1 503 Service Unavailable\r\n"
		"Content-Type: text/plain\r\n"
		"Content-Length: 26\r\n"
		"Retry-After: 1\r\n"
		"Connection: close\r\n"
		"\r\ntoo many open connections\n";

	if (read(fd, w->scratch, GD_SCRATCH) < 0) {
		/* nothing sent yet, or an error: we close anyway */
	}
	if (write(fd, http ? hmsg : msg, http ? sizeof(hmsg) - 1
					      : sizeof(msg) - 1) < 0) {
		/* closing anyway */
	}
	shutdown(fd, SHUT_WR);
	if (read(fd, w->scratch, GD_SCRATCH) < 0) {
		/* as above */
	}
	close(fd);
	CNT(w, rejected_connections);
}

/* One warning per ACCEPT_LOG_SECS, with the count of what it stands for. */
static void accept_log(struct worker *w, int err)
{
	int64_t now = gd_mono_sec();

	w->accept_quiet++;
	if (w->accept_logged && now - w->accept_log_at < ACCEPT_LOG_SECS)
		return;
	gd_log(GD_LOG_WARN, "worker %u: accept: %s (%llu times in the last "
	       "%d s): clients over the limit are refused; see --max-conns "
	       "and the open files limit (ulimit -n)", w->id, strerror(err),
	       (unsigned long long)w->accept_quiet, ACCEPT_LOG_SECS);
	w->accept_logged = true;
	w->accept_log_at = now;
	w->accept_quiet = 0;
}

/* Switch a listener off for a while: accepting fails for a reason that
 * retrying at once will not change. */
static void listener_pause(struct worker *w, bool http)
{
	struct epoll_event e = { .events = 0,
				 .data.ptr = http ? &tag_http : &tag_listen };
	unsigned ms = w->backoff_ms[http] ? w->backoff_ms[http] : PAUSE_MIN_MS;

	epoll_ctl(w->epfd, EPOLL_CTL_MOD, listener_fd(w, http), &e);
	w->paused_until[http] = mono_ns() + (int64_t)ms * 1000000;
	w->backoff_ms[http] = ms * 2 > PAUSE_MAX_MS ? PAUSE_MAX_MS : ms * 2;
	CNT(w, listen_disabled_num);
}

/* Paused listeners whose time is up go back on.  Returns the ms until the
 * next one is due, or -1 when none is paused. */
static int listeners_resume(struct worker *w)
{
	int64_t now = mono_ns(), next = -1;

	for (int http = 0; http < 2; http++) {
		struct epoll_event e = { .events = EPOLLIN,
					 .data.ptr = http ? &tag_http
							  : &tag_listen };
		int64_t left;

		if (!w->paused_until[http])
			continue;
		left = w->paused_until[http] - now;
		if (left > 0 && !w->stopping) {
			left = (left + 999999) / 1000000;
			if (next < 0 || left < next)
				next = left;
			continue;
		}
		w->paused_until[http] = 0;
		if (!w->stopping)
			epoll_ctl(w->epfd, EPOLL_CTL_MOD, listener_fd(w, http),
				  &e);
	}
	return (int)next;
}

/*
 * Out of fds: give up the reserve fd to take one pending connection and
 * refuse it.  1: refused one, 0: the backlog is empty, -1: no help (the
 * reserve is lost: something else took its slot; tried again next time).
 */
static int accept_on_reserve(struct worker *w, bool http)
{
	struct gd *gd = w->gd;
	int fd = -1, err = 0, ret;

	pthread_rwlock_wrlock(&gd->accept_lock);
	if (gd->spare_fd < 0)
		gd->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (gd->spare_fd < 0) {
		ret = -1;
		goto out;
	}
	close(gd->spare_fd);
	fd = accept4(listener_fd(w, http), NULL, NULL,
		     SOCK_NONBLOCK | SOCK_CLOEXEC);
	err = errno;
	if (fd >= 0) {
		conn_refuse(w, fd, http);
		CNT(w, rejected_no_fd);
	}
	gd->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	ret = fd >= 0 ? 1 : err == EAGAIN || err == EWOULDBLOCK ? 0 : -1;
out:
	pthread_rwlock_unlock(&gd->accept_lock);
	return ret;
}

static void accept_all(struct worker *w, bool http)
{
	struct gd *gd = w->gd;
	unsigned limit = http ? gd->set.http_max_conns : gd->set.mc_max_conns;

	for (int n = 0; n < ACCEPT_BATCH; n++) {
		unsigned total, mine;
		int fd, err, ret;

		pthread_rwlock_rdlock(&gd->accept_lock);
		fd = accept4(listener_fd(w, http), NULL, NULL,
			     SOCK_NONBLOCK | SOCK_CLOEXEC);
		err = errno;
		pthread_rwlock_unlock(&gd->accept_lock);
		if (fd < 0) {
			if (err == EINTR || err == ECONNABORTED)
				continue;
			if (err == EAGAIN || err == EWOULDBLOCK)
				return;
			accept_log(w, err);
			if (err == EMFILE || err == ENFILE) {
				ret = accept_on_reserve(w, http);
				if (ret > 0)
					continue;
				if (ret == 0)
					return;
			}
			/* ENOBUFS, ENOMEM, a lost reserve: only time helps */
			listener_pause(w, http);
			return;
		}
		w->backoff_ms[http] = 0;
		total = atomic_fetch_add(&gd->curr_conns, 1);
		mine = atomic_fetch_add(&gd->proto_conns[http], 1);
		if (total >= gd->set.max_conns || mine >= limit) {
			atomic_fetch_sub(&gd->curr_conns, 1);
			atomic_fetch_sub(&gd->proto_conns[http], 1);
			conn_refuse(w, fd, http);
			continue;
		}
		conn_new(w, fd, http);
	}
}

/* ---- reading ---- */

/* Read into rbuf.  1: got bytes, 0: EAGAIN, -1: EOF or error. */
static int conn_read(struct conn *c)
{
	ssize_t n;

	if (c->rstart == c->rend) {
		c->rstart = c->rend = 0;
	} else if (c->rend == c->rcap && c->rstart) {
		memmove(c->rbuf, c->rbuf + c->rstart, c->rend - c->rstart);
		c->rend -= c->rstart;
		c->rstart = 0;
	}
	if (c->rend == c->rcap) {
		/* a long multi-get line: the parser bounds it */
		size_t cap = c->rcap * 2;
		char *nb;

		if (cap > GD_GET_LINE_MAX + GD_RBUF ||
		    !(nb = realloc(c->rbuf, cap)))
			return -1;
		c->rbuf = nb;
		c->rcap = cap;
	}
	do {
		n = read(c->fd, c->rbuf + c->rend, c->rcap - c->rend);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
	if (n == 0)
		return -1;
	c->rend += (size_t)n;
	CNT_ADD(c->w, bytes_read, (uint64_t)n);
	return 1;
}

ssize_t conn_take(struct conn *c, uint64_t want, const uint8_t **p)
{
	size_t avail = c->rend - c->rstart;
	ssize_t got;

	if (avail) {
		got = (ssize_t)(avail < want ? avail : (size_t)want);
		*p = (uint8_t *)c->rbuf + c->rstart;
		c->rstart += (size_t)got;
		return got;
	}
	do {
		got = read(c->fd, c->w->scratch,
			   want < GD_SCRATCH ? (size_t)want : GD_SCRATCH);
	} while (got < 0 && errno == EINTR);
	if (got < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
	if (got == 0)
		return -1;
	CNT_ADD(c->w, bytes_read, (uint64_t)got);
	*p = c->w->scratch;
	return got;
}

/* ---- driving a connection ---- */

static enum mc_run conn_run(struct conn *c)
{
	return c->http ? http_conn_run(c) : mc_conn_run(c);
}

static bool conn_idle(const struct conn *c)
{
	return c->http ? http_conn_idle(c) : mc_conn_idle(c);
}

static void disk_wait_add(struct conn *c)
{
	if (c->in_disk_wait)
		return;
	c->in_disk_wait = true;
	c->dnext = c->w->disk_wait;
	c->w->disk_wait = c;
}

/* To the back of the worker's queue of connections with more to do. */
static void ready_add(struct conn *c)
{
	struct worker *w = c->w;

	if (c->in_ready)
		return;
	c->in_ready = true;
	c->rnext = NULL;
	if (w->ready_tail)
		w->ready_tail->rnext = c;
	else
		w->ready = c;
	w->ready_tail = c;
	w->nready++;
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
 * An HTTP connection we close after an error reply may still have request
 * bytes coming; closing with unread input makes the kernel send a reset,
 * which can destroy the reply before the client reads it.  So, like
 * nginx's lingering close: shut our side, read and drop the client's
 * bytes until it closes, for at most LINGER_SECS.  True: lingering now.
 */
static bool conn_linger(struct conn *c)
{
	if (!c->http || c->lingering)
		return false;
	http_conn_release(c);
	shutdown(c->fd, SHUT_WR);
	c->lingering = true;
	c->linger_until = gd_mono_sec() + LINGER_SECS;
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
		return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)
			       ? 0 : -1;
	}
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
	c->last_active = gd_mono_sec();
	for (int round = 0, chunks = 0; round < DRIVE_ROUNDS; round++) {
		enum mc_run st;
		int ret;

		if (conn_pending(c)) {
			bool chunk = c->chunk_len;

			if (conn_flush(c) < 0)
				goto close;
			if (conn_pending(c)) {	/* the client is slow */
				conn_events(c, EPOLLOUT | EPOLLRDHUP);
				return;
			}
			if (chunk && ++chunks >= TAIL_CHUNKS_PER_TURN) {
				/* the others' turn; the queue brings it back */
				conn_events(c, EPOLLRDHUP);
				break;
			}
		}
		if (c->closing) {
			if (conn_linger(c) && linger_drain(c) == 0)
				return;
			goto close;
		}
		if (w->stopping && conn_idle(c) && c->rstart == c->rend)
			goto close;	/* finished what it had asked */
		st = conn_run(c);
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
			conn_events(c, conn_pending(c) ? EPOLLOUT | EPOLLRDHUP
						       : EPOLLRDHUP);
			return;
		case RUN_WAIT:
			conn_events(c, EPOLLIN | EPOLLRDHUP);
			return;
		case RUN_INPUT:
			if (conn_pending(c))
				continue;
			ret = conn_read(c);
			if (ret < 0)
				goto close;
			if (ret == 0) {
				conn_events(c, EPOLLIN | EPOLLRDHUP);
				return;
			}
			continue;
		}
	}
	ready_add(c);	/* more to do: after the others had a turn */
	return;
close:
	conn_close(c);
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
			gd_log(GD_LOG_ERROR, "a foreign completion on the ring");
		io_uring_cqe_seen(&w->ring, cqe);
	}
	http_mail_run(w);
	list = w->disk_wait;
	w->disk_wait = NULL;
	while ((c = list)) {
		list = c->dnext;
		c->in_disk_wait = false;
		ready_add(c);
	}
}

/* A delayed flush_all that came due: the first worker to see it runs it. */
static void flush_due(struct gd *gd)
{
	int64_t at = atomic_load(&gd->flush_at);

	if (at && time(NULL) >= at &&
	    atomic_compare_exchange_strong(&gd->flush_at, &at, 0))
		mc_flush(gd, at * 1000000000ll);
}

/*
 * A protocol holding more than half of its connection limit is busy:
 * its connections idle longer than --busy-idle-timeout are closed until
 * it holds half again, so that idle pools cannot keep new clients out
 * (--idle-timeout, 0 by default as in memcached, applies always).
 */
static unsigned idle_limit(const struct worker *w, bool http)
{
	const struct gd_settings *s = &w->gd->set;
	unsigned cap = http ? s->http_max_conns : s->mc_max_conns;
	unsigned busy = s->busy_idle_timeout;

	if (busy && atomic_load(&w->gd->proto_conns[http]) * 2ull > cap &&
	    (!s->idle_timeout || busy < s->idle_timeout))
		return busy;
	return s->idle_timeout;
}

static void idle_sweep(struct worker *w, int64_t now)
{
	struct conn *c, *next;

	flush_due(w->gd);
	for (c = w->conns; c; c = next) {
		unsigned limit = idle_limit(w, c->http);

		next = c->next;
		if (c->lingering) {
			if (now >= c->linger_until)
				conn_close(c);
		} else if (w->stopping && now - c->last_active > STOP_GRACE) {
			gd_log(GD_LOG_WARN, "closing a connection still busy "
			       "%d s after the stop", STOP_GRACE);
			conn_close(c);
		} else if (limit && now - c->last_active > (int64_t)limit &&
			   conn_idle(c) && !c->in_disk_wait &&
			   !conn_pending(c)) {
			CNT(w, idle_kicks);
			conn_close(c);
		} else if (c->http && http_conn_expired(c, now)) {
			conn_drive(c);	/* the 408 goes out, then it closes */
		}
	}
}

static void begin_stop(struct worker *w)
{
	struct conn *c, *next;

	w->stopping = true;
	if (w->gd->listen_fds[w->id] >= 0)
		epoll_ctl(w->epfd, EPOLL_CTL_DEL, w->gd->listen_fds[w->id],
			  NULL);
	if (w->gd->http_fds[w->id] >= 0)
		epoll_ctl(w->epfd, EPOLL_CTL_DEL, w->gd->http_fds[w->id],
			  NULL);
	for (c = w->conns; c; c = next) {	/* idle ones go now */
		next = c->next;
		c->last_active = gd_mono_sec();
		if (conn_idle(c) && !conn_pending(c) &&
		    c->rstart == c->rend)
			conn_close(c);
		else
			ready_add(c);
	}
}

/*
 * Wait up to @timeout ms for the sockets and the ring, and act on what
 * came.  -1 when epoll fails.  Connections first: each appears once in a
 * batch, and only its own conn_drive() closes it.  What may close others
 * (the stop) runs after the batch.  Connections with more to do go to
 * the ready queue, which conn_close() keeps whole.
 */
static int poll_events(struct worker *w, int timeout)
{
	struct epoll_event ev[MAX_EVENTS];
	bool wake = false, ring = false;
	int n;

	if (io_uring_sq_ready(&w->ring))
		io_uring_submit(&w->ring);
	n = epoll_wait(w->epfd, ev, MAX_EVENTS, timeout);
	w->polled_ns = mono_ns();
	if (n < 0) {
		if (errno == EINTR)
			return 0;
		gd_log(GD_LOG_ERROR, "epoll_wait: %s", strerror(errno));
		return -1;
	}
	for (int i = 0; i < n; i++) {
		void *p = ev[i].data.ptr;

		if (p == &tag_listen || p == &tag_http) {
			if (!w->stopping)
				accept_all(w, p == &tag_http);
		} else if (p == &tag_wake) {
			wake = true;
		} else if (p == &tag_ring) {
			ring = true;
		} else {
			conn_drive(p);
		}
	}
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
	return 0;
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

		if (mono_ns() - w->polled_ns >= HEAD_POLL_NS &&
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
	int64_t last_sweep = gd_mono_sec();

	while (!w->stopping || w->conns) {
		int paused = listeners_resume(w);
		int timeout = w->ready ? 0 : paused >= 0 && paused < 1000
						     ? paused : 1000;

		if (poll_events(w, timeout) < 0 || run_ready(w) < 0)
			break;
		if (gd_mono_sec() != last_sweep) {
			last_sweep = gd_mono_sec();
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
			gd_log(GD_LOG_DEBUG, "worker %u on CPU %d", w->id,
			       cpu);
		return;
	}
}

int worker_start(struct gd *gd, struct worker *w, unsigned id, char *err,
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
	if (gd->listen_fds[id] >= 0) {
		e.data.ptr = &tag_listen;
		if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, gd->listen_fds[id],
			      &e) < 0)
			goto fail;
	}
	if (gd->http_fds[id] >= 0) {
		e.data.ptr = &tag_http;
		if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, gd->http_fds[id], &e) < 0)
			goto fail;
	}
	e.events = EPOLLIN;
	e.data.ptr = &tag_wake;
	if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->evfd, &e) < 0)
		goto fail;
	e.data.ptr = &tag_ring;
	if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->ring_evfd, &e) < 0)
		goto fail;
	ret = pthread_create(&w->thread, NULL, worker_main, w);
	if (ret) {
		snprintf(err, errlen, "cannot start worker %u: %s", id,
			 strerror(ret));
		return -1;
	}
	worker_pin(w);
	return 0;
fail:
	snprintf(err, errlen, "epoll_ctl: %s", strerror(errno));
	return -1;
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
	pthread_join(w->thread, NULL);
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
