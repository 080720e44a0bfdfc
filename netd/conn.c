/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * goblind connection I/O, what protocols call and the worker loop drives:
 * the output buffer and its writev (with a zero-copy chunk behind it),
 * reading into the input buffer, bodies taken straight off the socket,
 * and store readers on the worker's io_uring.  Also the clocks of the
 * loop.
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
#include "worker.h"

/* ---- output ---- */

static bool out_grow(struct conn *c, size_t len)
{
	size_t need, cap;
	char *nb;

	if (c->wstart && c->wstart == c->wend)
		c->wstart = c->wend = 0;
	if (c->wend + len <= c->wcap)
		return true;
	if (c->wstart) { /* slide the unsent bytes down first */
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

enum conn_run conn_send_value(struct conn *c, struct gs_reader **r,
			      const char *trail, const char *proto)
{
	for (;;) {
		struct gs_chunk ch[GD_ZQ];
		int ret;

		if (c->chunk_len || c->wend - c->wstart > GD_WBUF_HIGH)
			return RUN_OUTPUT;
		/* ch[0] goes to chunk: zq has a slot left for the trail */
		ret = gs_reader_pollv(*r, ch, GD_ZQ);
		if (ret == 1 && ch[0].len <= GD_COPY_MAX) {
			/* a small value and its trail join what else is in
			 * wbuf: the replies of a multi-get, a pipeline */
			conn_out(c, ch[0].data, ch[0].len);
			continue;
		}
		if (ret > 0) {
			c->chunk = ch[0].data;
			c->chunk_len = ch[0].len;
			for (int i = 1; i < ret; i++)
				c->zq[c->nzq++] =
					(struct iovec){ (void *)ch[i].data,
							ch[i].len };
			if (ch[ret - 1].last) {
				c->zq[c->nzq++] =
					(struct iovec){ (void *)trail,
							strlen(trail) };
				c->trailed = true;
			}
			return RUN_OUTPUT;
		}
		if (ret == -EAGAIN)
			return RUN_DISK;
		gd_reader_close(c->w, *r);
		*r = NULL;
		if (ret < 0) {
			gd_log(GD_LOG_WARN,
			       "%s: read of a value failed: %s; closing the "
			       "connection",
			       proto, gs_strerror(ret));
			return RUN_CLOSE;
		}
		if (!c->trailed)
			conn_out(c, trail, strlen(trail));
		c->trailed = false;
		return RUN_INPUT;
	}
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
	conn_out(c, line,
		 (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
}

void conn_chunks_drop(struct conn *c)
{
	c->chunk = NULL;
	c->chunk_len = 0;
	c->nzq = 0;
	c->trailed = false;
}

/* @c's chunk went out: the next zero-copy piece takes its place. */
static void chunk_next(struct conn *c)
{
	if (!c->nzq) {
		c->chunk = NULL;
		c->chunk_len = 0;
		return;
	}
	c->chunk = c->zq[0].iov_base;
	c->chunk_len = c->zq[0].iov_len;
	memmove(c->zq, c->zq + 1, --c->nzq * sizeof(c->zq[0]));
}

/* Write what is queued: wbuf, then the zero-copy pieces.  0 or -1. */
int conn_flush(struct conn *c)
{
	while (conn_pending(c)) {
		struct iovec iov[2 + GD_ZQ];
		int n = 0;
		ssize_t got;
		size_t wl = c->wend - c->wstart;

		if (wl)
			iov[n++] = (struct iovec){ c->wbuf + c->wstart, wl };
		if (c->chunk_len) {
			iov[n++] = (struct iovec){ (void *)c->chunk,
						   c->chunk_len };
			memcpy(iov + n, c->zq, c->nzq * sizeof(c->zq[0]));
			n += (int)c->nzq;
		}
		got = writev(c->fd, iov, n);
		if (got < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			return -1;
		}
		CNT_ADD(c->w, bytes_written, (uint64_t)got);
		c->sent_since_input += (uint64_t)got;
		if ((size_t)got < wl) {
			c->wstart += (size_t)got;
			continue;
		}
		c->wstart = c->wend = 0;
		got -= (ssize_t)wl;
		while (got && (size_t)got >= c->chunk_len) {
			got -= (ssize_t)c->chunk_len;
			chunk_next(c);
		}
		if (got) { /* no pointer arithmetic on a NULL chunk */
			c->chunk += got;
			c->chunk_len -= (size_t)got;
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
	const struct gs_meta *m;

	if (ret < 0)
		return ret;
	/*
	 * A symlink, FIFO, socket or device a mount made (issue 20): no
	 * value to serve, a miss (goblind(8)).  A directory's marker stays
	 * the empty value it always was.
	 */
	m = gs_reader_meta(*out);
	if (gs_attr_kind(m->attr, m->attr_len) > GS_KIND_DIR) {
		gs_reader_close(*out);
		*out = NULL;
		return -ENOENT;
	}
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

/* ---- reading ---- */

/* Read into rbuf.  1: got bytes, 0: EAGAIN, -1: EOF or error. */
int conn_read(struct conn *c)
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
		/* a long line (a multi-get): the protocol's parser bounds it */
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
	if (c->busy_polled) {
		if (gs_mono_ns() < c->w->busy_until)
			CNT(c->w, busy_poll_hits);
		c->busy_polled = false;
		c->w->busy_until = 0; /* it came: sleep when idle again */
	}
	c->sent_since_input = 0;
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
