/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * io_uring plumbing: a ring per thread for the blocking API, completion
 * dispatch shared with callers' rings, and the store's io buffer free list.
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>
#include "internal.h"

#define RING_ENTRIES 128

static __thread struct io_uring tl_ring;
static __thread bool tl_ring_ok;
static pthread_key_t ring_key;
static pthread_once_t ring_once = PTHREAD_ONCE_INIT;

static void ring_exit(void *p)
{
	io_uring_queue_exit(p);
}

/*
 * A forked child must not share its parent's ring: completions would be
 * reaped by the wrong process.  The child drops its copy and makes its own.
 */
static void ring_atfork_child(void)
{
	if (tl_ring_ok) {
		io_uring_queue_exit(&tl_ring);
		tl_ring_ok = false;
	}
}

static void ring_key_make(void)
{
	pthread_key_create(&ring_key, ring_exit);
	pthread_atfork(NULL, NULL, ring_atfork_child);
}

struct io_uring *io_thread_ring(void)
{
	if (!tl_ring_ok) {
		if (io_uring_queue_init(RING_ENTRIES, &tl_ring, 0) < 0)
			return NULL;
		tl_ring_ok = true;
		pthread_once(&ring_once, ring_key_make);
		pthread_setspecific(ring_key, &tl_ring);
	}
	return &tl_ring;
}

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

int64_t now_real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

bool gs_handle_cqe(struct io_uring_cqe *cqe)
{
	struct gs_io *io;

	if (!(cqe->user_data & 1))
		return false;
	io = (struct gs_io *)(uintptr_t)(cqe->user_data & ~1ull);
	io->res = cqe->res;
	io->done = true;
	if (io->complete)
		io->complete(io);
	return true;
}

struct io_uring_sqe *io_get_sqe(struct io_uring *ring)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	if (!sqe) {		/* full: push what is queued, then retry */
		io_uring_submit(ring);
		sqe = io_uring_get_sqe(ring);
	}
	return sqe;
}

void io_prep(struct io_uring_sqe *sqe, struct gs_io *io)
{
	io->done = false;
	io->res = 0;
	io->t0 = now_ns();
	io_uring_sqe_set_data64(sqe, (uint64_t)(uintptr_t)io | 1);
}

/*
 * Reap completions until @io is done.  CQEs of other ios on this ring
 * (another reader or writer of this thread) are dispatched as they come.
 */
int io_wait(struct io_uring *ring, struct gs_io *io)
{
	while (!io->done) {
		struct io_uring_cqe *cqe;
		int ret = io_uring_submit_and_wait(ring, 1);

		if (ret < 0 && ret != -EINTR && ret != -EAGAIN &&
		    ret != -EBUSY)
			return ret;
		while (io_uring_peek_cqe(ring, &cqe) == 0) {
			gs_handle_cqe(cqe);
			io_uring_cqe_seen(ring, cqe);
		}
	}
	return 0;
}

void *iobuf_get(struct gs_store *s)
{
	void *b;

	if (s->iobuf_nfree)
		return s->iobuf_free[--s->iobuf_nfree];
	/* All preallocated buffers busy: grow rather than deadlock. */
	if (posix_memalign(&b, 4096, s->iobuf_size))
		return NULL;
	return b;
}

void iobuf_put(struct gs_store *s, void *b)
{
	uint8_t *p = b;

	if (p >= s->iobuf_mem &&
	    p < s->iobuf_mem + (uint64_t)s->iobuf_n * s->iobuf_size)
		s->iobuf_free[s->iobuf_nfree++] = b;
	else
		free(b);
}
