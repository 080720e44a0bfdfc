/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * io_uring plumbing: a ring per thread for the blocking API, completion
 * dispatch shared with callers' rings, and the store's io buffer free list.
 */
#include <assert.h>
#include <errno.h>
#include <string.h>
#include <stdlib.h>
#include <time.h>
#include "internal.h"

#define RING_ENTRIES 128

/*
 * Rings for the blocking API come from a pool in the store, one per open
 * reader or writer for as long as it lives: a reader or writer may be
 * called from any thread (a FUSE worker pool does that), and a ring may
 * only be used by one thread at a time.  After warm-up an open costs no
 * io_uring setup.
 */
struct pooled_ring {
	struct io_uring ring;	/* first: the pool hands out &ring */
	struct pooled_ring *next;
};

struct io_uring *ring_get(struct gs_store *s)
{
	struct pooled_ring *p;

	pthread_mutex_lock(&s->lock);
	p = s->ring_free;
	if (p)
		s->ring_free = p->next;
	pthread_mutex_unlock(&s->lock);
	if (p)
		return &p->ring;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	if (io_uring_queue_init(RING_ENTRIES, &p->ring, 0) < 0) {
		free(p);
		return NULL;
	}
	return &p->ring;
}

/* Called with s->lock held.  The ring must have nothing in flight. */
void ring_put_locked(struct gs_store *s, struct io_uring *ring)
{
	struct pooled_ring *p = (struct pooled_ring *)ring;

	p->next = s->ring_free;
	s->ring_free = p;
}

void ring_pool_free(struct gs_store *s)
{
	while (s->ring_free) {
		struct pooled_ring *p = s->ring_free;

		s->ring_free = p->next;
		io_uring_queue_exit(&p->ring);
		free(p);
	}
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

/* A fresh @io for @sqe: set its complete and owner after, if any. */
void io_prep(struct io_uring_sqe *sqe, struct gs_io *io)
{
	io->done = false;
	io->res = 0;
	io->complete = NULL;
	io->owner = NULL;
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

/*
 * Buffer pools.  A buffer is allocated the first time none is idle and is
 * kept from then on, so steady state costs no allocation and no page
 * fault; a pool grows to the most buffers in use at once (readers times
 * their depth, two per writer), never beyond.
 */
void bufpool_init(struct bufpool *p, uint64_t size)
{
	memset(p, 0, sizeof(*p));
	p->size = size;
}

void *bufpool_get(struct bufpool *p)
{
	void *b;

	if (p->nfree)
		return p->free[--p->nfree];
	if (p->n == p->cap) {	/* room to take every buffer back */
		uint32_t cap = p->cap ? p->cap * 2 : 64;
		void **f = realloc(p->free, cap * sizeof(*f));

		if (!f)
			return NULL;
		p->free = f;
		p->cap = cap;
	}
	if (posix_memalign(&b, 4096, p->size))
		return NULL;
	p->n++;
	return b;
}

void bufpool_put(struct bufpool *p, void *b)
{
	assert(p->nfree < p->n);
	p->free[p->nfree++] = b;
}

void bufpool_release(struct bufpool *p)
{
	assert(p->nfree == p->n);	/* every buffer given back */
	while (p->nfree)
		free(p->free[--p->nfree]);
	free(p->free);
	memset(p, 0, sizeof(*p));
}
