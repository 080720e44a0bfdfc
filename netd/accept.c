/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * goblind accepting: the protocols and their listeners (registered by
 * main.c), accepting on each worker's listening sockets with the limits
 * per protocol and in all, refusing over them (the reserve fd when out of
 * fds, pauses when nothing helps), new connections and their peers'
 * addresses (loopback, --trusted-proxy).
 */
/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * goblind workers: one thread each, one epoll loop for its sockets and one
 * io_uring for the store's reads (its completions wake the loop through
 * an eventfd).  Connections are state machines driven by conn_drive();
 * what their bytes mean is their protocol's, behind struct proto_ops
 * (goblind.h): the worker calls it and knows no protocol.  Listeners
 * carry their protocol; accepting, limits, timeouts, the lingering close
 * and the mailbox of posts from other threads are the worker's.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
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
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "goblind.h"
#include "worker.h"

/*
 * Out of fds (accept4: EMFILE, ENFILE): the listener stays readable, so
 * retrying at once spins.  The process keeps one reserve fd
 * (gd->spare_fd): it is closed to take one pending connection, answer it
 * "Too many open connections" and close it (libev's and nginx's trick),
 * so clients over the limit are told instead of waiting in the backlog.
 * When that cannot help either, the listener is switched off for
 * PAUSE_MIN_MS, doubling up to PAUSE_MAX_MS (as other daemons pause
 * accepting).  Failures are logged once per ACCEPT_LOG_SECS with a count.
 */
#define ACCEPT_BATCH	256 /* accepts per readable event */
#define PAUSE_MIN_MS	10
#define PAUSE_MAX_MS	1000
#define ACCEPT_LOG_SECS 10

/* ---- protocols and listeners ---- */

struct gd_proto *gd_proto_add(struct gd *gd, const struct proto_ops *ops,
			      unsigned max_conns)
{
	struct gd_proto *p;

	if (gd->nprotos == GD_PROTOS_MAX)
		return NULL;
	p = &gd->protos[gd->nprotos];
	p->ops = ops;
	p->id = gd->nprotos++;
	p->max_conns = max_conns;
	return p;
}

int gd_listener_add(struct gd *gd, struct gd_proto *p, int *fds)
{
	if (gd->nlisteners == GD_LISTENERS_MAX)
		return -ENOSPC;
	gd->listeners[gd->nlisteners++] = (struct gd_listener){ p, fds, false };
	return 0;
}

int gd_listener_add_shared(struct gd *gd, struct gd_proto *p, int *fds)
{
	int ret = gd_listener_add(gd, p, fds);

	if (ret == 0)
		gd->listeners[gd->nlisteners - 1].shared = true;
	return ret;
}

/*
 * Put @wl's socket in the worker's epoll.  A shared socket is polled with
 * EPOLLEXCLUSIVE: a new connection wakes one of the workers waiting on
 * it (or a few), not every one of them, and the one woken accepts what
 * is pending (accept_all), where plain EPOLLIN woke all and all but one
 * found EAGAIN.  Such an fd cannot be EPOLL_CTL_MODded: pauses take it
 * out of the epoll and put it back.
 */
int listener_arm(struct worker *w, struct wlistener *wl)
{
	struct epoll_event e = { .events = EPOLLIN, .data.ptr = wl };

	if (wl->l->shared) {
		e.events |= EPOLLEXCLUSIVE;
		return epoll_ctl(w->epfd, EPOLL_CTL_ADD, wl->fd, &e);
	}
	return epoll_ctl(w->epfd,
			 wl->paused_until ? EPOLL_CTL_MOD : EPOLL_CTL_ADD,
			 wl->fd, &e);
}

/* ---- TCP listening sockets (main.c opens one per worker) ---- */

/*
 * --tcp-congestion: set on the listening socket, which its connections
 * inherit.  Why the kernel refused, with what it offers: 0 or -1.
 */
static int listen_cc(int fd, const char *cc, char *why, size_t wlen)
{
	static const char avail[] =
		"/proc/sys/net/ipv4/tcp_available_congestion_control";
	char list[256] = "";
	FILE *f;
	int err;

	if (!cc || !setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, cc,
			       (socklen_t)strlen(cc)))
		return 0;
	err = errno;
	if ((f = fopen(avail, "r"))) {
		if (!fgets(list, sizeof(list), f))
			*list = 0;
		fclose(f);
		list[strcspn(list, "\n")] = 0;
	}
	snprintf(why, wlen, "--tcp-congestion %s: %s%s%s%s", cc, strerror(err),
		 *list ? " (this kernel has: " : "", list, *list ? ")" : "");
	if (err == EPERM)
		snprintf(why + strlen(why), wlen - strlen(why),
			 "; without CAP_NET_ADMIN only those in "
			 "net.ipv4.tcp_allowed_congestion_control");
	return -1;
}

int gd_listen_tcp(const char *addr, unsigned port, const char *opt,
		  const char *cc, char *name, size_t namelen, unsigned *bound,
		  char *why, size_t wlen)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE | AI_NUMERICSERV };
	struct addrinfo *res, *ai;
	char portstr[16], host[NI_MAXHOST], serv[NI_MAXSERV];
	int fd = -1, one = 1, ret;

	snprintf(portstr, sizeof(portstr), "%u", port);
	ret = getaddrinfo(addr, portstr, &hints, &res);
	if (ret) {
		snprintf(why, wlen, "cannot resolve '%s': %s", addr,
			 gai_strerror(ret));
		return -1;
	}
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family,
			    ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
			    ai->ai_protocol);
		if (fd < 0)
			continue;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		/* one socket per worker: the kernel spreads connections */
		setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
		if (listen_cc(fd, cc, why, wlen) < 0) {
			close(fd);
			freeaddrinfo(res);
			return -1;
		}
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 &&
		    listen(fd, 1024) == 0)
			break;
		ret = errno;
		close(fd);
		fd = -1;
		errno = ret;
	}
	ret = errno; /* the last failure's, when none bound */
	freeaddrinfo(res);
	if (fd < 0) {
		snprintf(why, wlen, "cannot listen on %s port %u: %s%s%s%s",
			 addr, port, strerror(ret),
			 ret == EADDRINUSE ? " (another program holds it: "
					     "choose a free port with --" :
					     "",
			 ret == EADDRINUSE ? opt : "",
			 ret == EADDRINUSE ? ")" : "");
		return -1;
	}
	{
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);

		if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0 &&
		    getnameinfo((struct sockaddr *)&ss, sl, host, sizeof(host),
				serv, sizeof(serv),
				NI_NUMERICHOST | NI_NUMERICSERV) == 0)
			snprintf(name, namelen,
				 strchr(host, ':') ? "[%s]:%s" : "%s:%s", host,
				 serv);
		*bound = (unsigned)atoi(serv);
	}
	return fd;
}

/* ---- Unix sockets (--unixsocket) ---- */

/*
 * A file at @path before we bind: a socket nobody answers on (a previous
 * run's, left by a crash or a kill -9) is removed; a socket a server
 * answers on, or anything that is not a socket, stops the start.  A
 * regular file there is never unlinked: it may be someone's data and the
 * path a typo.
 */
static int unix_stale_remove(const char *path, const struct sockaddr_un *sa,
			     char *why, size_t wlen)
{
	struct stat st;
	int fd, ret, err;

	if (lstat(path, &st) < 0) {
		if (errno == ENOENT)
			return 0;
		err = errno;
		goto fail;
	}
	if (!S_ISSOCK(st.st_mode)) {
		snprintf(why, wlen,
			 "cannot use --unixsocket '%s': it exists and is not "
			 "a socket (not removed: delete it or choose another "
			 "path)",
			 path);
		return -1;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		err = errno;
		goto fail;
	}
	ret = connect(fd, (const struct sockaddr *)sa, sizeof(*sa));
	err = errno;
	close(fd);
	if (ret == 0) {
		snprintf(why, wlen,
			 "cannot use --unixsocket '%s': a server is listening "
			 "on it (another goblind or memcached?)",
			 path);
		return -1;
	}
	if (err != ECONNREFUSED)
		goto fail;
	if (unlink(path) < 0 && errno != ENOENT) {
		err = errno;
		goto fail;
	}
	gd_log(GD_LOG_INFO, "removed the stale socket %s", path);
	return 0;
fail:
	snprintf(why, wlen, "cannot use --unixsocket '%s': %s", path,
		 strerror(err));
	return -1;
}

/*
 * One listening socket for every worker: AF_UNIX has no SO_REUSEPORT
 * (Linux spreads only TCP and UDP over a port's sockets), and a path
 * binds one socket; the workers poll it with EPOLLEXCLUSIVE
 * (listener_arm) and deal its connections round robin (handoff_post).
 * The mode is set between bind() and listen(): a client connecting then
 * is refused, so none gets in under another mode, and the process umask,
 * which other threads' files share, is left alone.
 */
int gd_unix_listen(struct gd_unix *u, const char *path, unsigned mode,
		   unsigned nworkers, char *why, size_t wlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;
	int err;

	u->fd = -1;
	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(why, wlen, "--unixsocket '%s': longer than %zu bytes",
			 path, sizeof(sa.sun_path) - 1);
		return -1;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	if (unix_stale_remove(path, &sa, why, wlen) < 0)
		return -1;
	u->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (u->fd < 0 ||
	    bind(u->fd, (const struct sockaddr *)&sa, sizeof(sa)) < 0) {
		err = errno;
		goto fail;
	}
	if (chmod(path, mode) < 0 || stat(path, &st) < 0 ||
	    listen(u->fd, 1024) < 0) {
		err = errno;
		unlink(path);
		goto fail;
	}
	u->path = path;
	u->dev = st.st_dev;
	u->ino = st.st_ino;
	u->fds = malloc(nworkers * sizeof(int));
	if (!u->fds) {
		err = ENOMEM;
		unlink(path);
		goto fail;
	}
	for (unsigned i = 0; i < nworkers; i++)
		u->fds[i] = u->fd;
	return 0;
fail:
	if (u->fd >= 0)
		close(u->fd);
	u->fd = -1;
	snprintf(why, wlen, "cannot listen on Unix socket '%s': %s", path,
		 strerror(err));
	return -1;
}

void gd_unix_close(struct gd_unix *u)
{
	struct stat st;

	if (u->fd < 0)
		return;
	if (stat(u->path, &st) == 0 && st.st_dev == u->dev &&
	    st.st_ino == u->ino && unlink(u->path) < 0)
		gd_log(GD_LOG_WARN, "cannot remove %s: %s", u->path,
		       strerror(errno));
	close(u->fd);
	u->fd = -1;
	free(u->fds);
	u->fds = NULL;
}

/* ---- addresses ---- */

static void addr_of_sockaddr(const struct sockaddr_storage *ss,
			     struct gd_addr *a)
{
	memset(a, 0, sizeof(*a));
	if (ss->ss_family == AF_INET) {
		a->family = AF_INET;
		memcpy(a->b,
		       &((const struct sockaddr_in *)(const void *)ss)->sin_addr,
		       4);
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

	if (len && s[0] == '[') { /* "[v6]" or "[v6]:port" */
		e = memchr(s, ']', len);
		if (!e)
			return -EINVAL;
		s++;
		len = (size_t)(e - s);
	} else if ((e = memchr(s, ':', len)) &&
		   !memchr(e + 1, ':', len - (size_t)(e - s) - 1)) {
		len = (size_t)(e - s); /* "v4:port" */
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
		return; /* neither: the strict answer */
	if (ss.ss_family == AF_UNIX) {
		c->loopback = true;
		return;
	}
	addr_of_sockaddr(&ss, &a);
	c->loopback = gd_addr_loopback(&a);
	c->from_proxy = gd->has_proxy && gd_addr_equal(&a, &gd->proxy);
}

void conn_new(struct worker *w, int fd, const struct gd_proto *p)
{
	struct conn *c = calloc(1, p->ops->conn_size);
	struct epoll_event e = { .events = EPOLLIN | EPOLLRDHUP };
	int one = 1;

	if (!c || !(c->rbuf = malloc(GD_RBUF))) {
		free(c);
		close(fd);
		atomic_fetch_sub(&w->gd->curr_conns, 1);
		atomic_fetch_sub(&w->gd->proto_conns[p->id], 1);
		gd_log(GD_LOG_ERROR, "out of memory for a connection");
		return;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	c->w = w;
	c->fd = fd;
	c->ops = p->ops;
	c->proto = p;
	peer_classify(c);
	c->rcap = GD_RBUF;
	c->events = e.events;
	c->last_active = gs_mono_sec();
	e.data.ptr = c;
	if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, fd, &e) < 0) {
		gd_log(GD_LOG_ERROR, "epoll_ctl: %s", strerror(errno));
		free(c->rbuf);
		free(c);
		close(fd);
		atomic_fetch_sub(&w->gd->curr_conns, 1);
		atomic_fetch_sub(&w->gd->proto_conns[p->id], 1);
		return;
	}
	c->next = w->conns;
	if (w->conns)
		w->conns->prev = c;
	w->conns = c;
	w->nconns++;
	CNT(w, total_connections);
}

/*
 * Tell a client we will not serve it (the protocol's busy_reply, e.g.
 * "ERROR Too many open connections" or a 503 with Retry-After), and
 * close.  What it sent already is read first: a close
 * with unread input makes the kernel reset the connection, and the reset
 * can destroy the reply before the client reads it.
 */
static void conn_refuse(struct worker *w, int fd, const struct proto_ops *ops)
{
	if (read(fd, w->scratch, GD_SCRATCH) < 0) {
		/* nothing sent yet, or an error: we close anyway */
	}
	if (write(fd, ops->busy_reply, strlen(ops->busy_reply)) < 0) {
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
	int64_t now = gs_mono_sec();

	w->accept_quiet++;
	if (w->accept_logged && now - w->accept_log_at < ACCEPT_LOG_SECS)
		return;
	gd_log(GD_LOG_WARN,
	       "worker %u: accept: %s (%llu times in the last "
	       "%d s): clients over the limit are refused; see --max-conns "
	       "and the open files limit (ulimit -n)",
	       w->id, strerror(err), (unsigned long long)w->accept_quiet,
	       ACCEPT_LOG_SECS);
	w->accept_logged = true;
	w->accept_log_at = now;
	w->accept_quiet = 0;
}

/* Switch a listener off for a while: accepting fails for a reason that
 * retrying at once will not change. */
static void listener_pause(struct worker *w, struct wlistener *wl)
{
	struct epoll_event e = { .events = 0, .data.ptr = wl };
	unsigned ms = wl->backoff_ms ? wl->backoff_ms : PAUSE_MIN_MS;

	if (wl->l->shared) /* EPOLLEXCLUSIVE: no EPOLL_CTL_MOD */
		epoll_ctl(w->epfd, EPOLL_CTL_DEL, wl->fd, NULL);
	else
		epoll_ctl(w->epfd, EPOLL_CTL_MOD, wl->fd, &e);
	wl->paused_until = gs_mono_ns() + (int64_t)ms * 1000000;
	wl->backoff_ms = ms * 2 > PAUSE_MAX_MS ? PAUSE_MAX_MS : ms * 2;
	CNT(w, listen_disabled_num);
}

/* Paused listeners whose time is up go back on.  Returns the ms until the
 * next one is due, or -1 when none is paused. */
int listeners_resume(struct worker *w)
{
	int64_t now = gs_mono_ns(), next = -1;

	for (unsigned i = 0; i < w->nlis; i++) {
		struct wlistener *wl = &w->lis[i];
		int64_t left;

		if (!wl->paused_until)
			continue;
		left = wl->paused_until - now;
		if (left > 0 && !w->stopping) {
			left = (left + 999999) / 1000000;
			if (next < 0 || left < next)
				next = left;
			continue;
		}
		if (!w->stopping)
			listener_arm(w, wl); /* paused_until set: MOD */
		wl->paused_until = 0;
	}
	return (int)next;
}

/*
 * Out of fds: give up the reserve fd to take one pending connection and
 * refuse it.  1: refused one, 0: the backlog is empty, -1: no help (the
 * reserve is lost: something else took its slot; tried again next time).
 */
static int accept_on_reserve(struct worker *w, struct wlistener *wl)
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
	fd = accept4(wl->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	err = errno;
	if (fd >= 0) {
		conn_refuse(w, fd, wl->l->proto->ops);
		CNT(w, rejected_no_fd);
	}
	gd->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	ret = fd >= 0 ? 1 : err == EAGAIN || err == EWOULDBLOCK ? 0 : -1;
out:
	pthread_rwlock_unlock(&gd->accept_lock);
	return ret;
}

/* ---- shared listeners: the round robin ---- */

/*
 * A shared listener wakes one worker per connection (EPOLLEXCLUSIVE),
 * but which one is the kernel's: the first of its waiters that is idle,
 * so an idle daemon would give every connection to the same worker (a
 * client's pool of 16 connections opened at once: 16 on one core).  Its
 * connections are dealt round robin instead, as memcached's listener
 * thread deals them: the worker that accepted one hands it to the next
 * worker in turn through that worker's mailbox (one wakeup per
 * connection, none per request).  A full mailbox keeps it here.
 */
static void handoff_post(struct worker *w, int fd, const struct gd_proto *p)
{
	struct gd *gd = w->gd;
	struct worker *to;
	bool posted = false;

	to = &gd->workers[atomic_fetch_add(&gd->handoff_next, 1) % gd->nworkers];
	if (to != w) {
		pthread_mutex_lock(&to->mail_lock);
		if (to->nhandoff < GD_HANDOFF_MAX) {
			to->handoff_fd[to->nhandoff] = fd;
			to->handoff_proto[to->nhandoff++] = p;
			posted = true;
		}
		pthread_mutex_unlock(&to->mail_lock);
	}
	if (posted)
		gd_worker_wake_disk(to);
	else
		conn_new(w, fd, p);
}

/* A handed-over connection that no worker will serve: uncounted, closed. */
static void handoff_close(struct worker *w, int fd, const struct gd_proto *p)
{
	close(fd);
	atomic_fetch_sub(&w->gd->curr_conns, 1);
	atomic_fetch_sub(&w->gd->proto_conns[p->id], 1);
}

void handoff_run(struct worker *w)
{
	int fd[GD_HANDOFF_MAX];
	const struct gd_proto *p[GD_HANDOFF_MAX];
	unsigned n;

	pthread_mutex_lock(&w->mail_lock);
	n = w->nhandoff;
	memcpy(fd, w->handoff_fd, n * sizeof(*fd));
	memcpy(p, w->handoff_proto, n * sizeof(*p));
	w->nhandoff = 0;
	pthread_mutex_unlock(&w->mail_lock);
	for (unsigned i = 0; i < n; i++) {
		if (w->stopping) /* it would never be read */
			handoff_close(w, fd[i], p[i]);
		else
			conn_new(w, fd[i], p[i]);
	}
}

void handoff_drop(struct worker *w)
{
	for (unsigned i = 0; i < w->nhandoff; i++)
		handoff_close(w, w->handoff_fd[i], w->handoff_proto[i]);
	w->nhandoff = 0;
}

void accept_all(struct worker *w, struct wlistener *wl)
{
	struct gd *gd = w->gd;
	const struct gd_proto *p = wl->l->proto;
	unsigned limit = p->max_conns;

	for (int n = 0; n < ACCEPT_BATCH; n++) {
		unsigned total, mine;
		int fd, err, ret;

		pthread_rwlock_rdlock(&gd->accept_lock);
		fd = accept4(wl->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		err = errno;
		pthread_rwlock_unlock(&gd->accept_lock);
		if (fd < 0) {
			if (err == EINTR || err == ECONNABORTED)
				continue;
			if (err == EAGAIN || err == EWOULDBLOCK)
				return;
			accept_log(w, err);
			if (err == EMFILE || err == ENFILE) {
				ret = accept_on_reserve(w, wl);
				if (ret > 0)
					continue;
				if (ret == 0)
					return;
			}
			/* ENOBUFS, ENOMEM, a lost reserve: only time helps */
			listener_pause(w, wl);
			return;
		}
		wl->backoff_ms = 0;
		total = atomic_fetch_add(&gd->curr_conns, 1);
		mine = atomic_fetch_add(&gd->proto_conns[p->id], 1);
		if (total >= gd->set.max_conns || mine >= limit) {
			atomic_fetch_sub(&gd->curr_conns, 1);
			atomic_fetch_sub(&gd->proto_conns[p->id], 1);
			conn_refuse(w, fd, p->ops);
			continue;
		}
		if (wl->l->shared)
			handoff_post(w, fd, p);
		else
			conn_new(w, fd, p);
	}
}
