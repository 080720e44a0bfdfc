/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * io_uring plumbing: a ring per thread for the blocking API, completion
 * dispatch shared with callers' rings, and the store's io buffer free list.
 */
#include <assert.h>
#include <errno.h>
#include <string.h>
#include <stdlib.h>
#include <sys/mman.h>
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
	struct io_uring ring; /* first: the pool hands out &ring */
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

bool gs_handle_cqe(struct io_uring_cqe *cqe)
{
	struct gs_io *io;

	if (!(cqe->user_data & 1))
		return false;
	io = (struct gs_io *)(uintptr_t)(cqe->user_data & ~1ull);
	io->res = io->fault ? io->fault : cqe->res;
	io->done = true;
	if (io->complete)
		io->complete(io);
	return true;
}

struct io_uring_sqe *io_get_sqe(struct io_uring *ring)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	if (!sqe) { /* full: push what is queued, then retry */
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
	io->fault = 0;
	io->complete = NULL;
	io->owner = NULL;
	io->t0 = (uint64_t)gs_mono_ns();
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

		if (ret < 0 && ret != -EINTR && ret != -EAGAIN && ret != -EBUSY)
			return ret;
		while (io_uring_peek_cqe(ring, &cqe) == 0) {
			gs_handle_cqe(cqe);
			io_uring_cqe_seen(ring, cqe);
		}
	}
	return 0;
}

/*
 * Buffer pools.  Buffers are carved from slabs of whole 2 MiB pages, each
 * slab asked for as transparent huge pages.  An O_DIRECT read into a
 * buffer spread over scattered 4 KiB pages is one block-layer segment per
 * page, and a virtio disk without indirect descriptors takes a ring slot
 * per segment: 256 KiB reads then fit one or two at a time in its ring,
 * whatever depth the store asks for (measured: 1-2 reads in flight and
 * half the throughput, depending only on where the process's pages
 * landed).  On huge pages a buffer is one segment.  Where the kernel gives
 * no huge page, the slab is ordinary pages and works the same.
 *
 * A slab is mapped the first time no buffer is idle, faulted in then, and
 * kept: steady state costs no allocation and no page fault, and a pool
 * grows to the most buffers in use at once (readers times their depth,
 * two per writer) rounded up to a slab, never beyond.
 */
#define SLAB_ALIGN (2ull << 20)

void bufpool_init(struct bufpool *p, uint64_t size)
{
	memset(p, 0, sizeof(*p));
	p->size = size = (size + 4095) & ~4095ull; /* O_DIRECT alignment */
	p->slab = (size + SLAB_ALIGN - 1) / SLAB_ALIGN * SLAB_ALIGN;
	p->per_slab = (uint32_t)(p->slab / size);
}

/* @bytes (a multiple of 2 MiB) at a 2 MiB boundary, faulted in. */
static uint8_t *slab_map(uint64_t bytes)
{
	uint64_t len = bytes + SLAB_ALIGN;
	uint8_t *m, *a;

	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		 -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	a = (uint8_t *)(((uintptr_t)m + SLAB_ALIGN - 1) & ~(SLAB_ALIGN - 1));
	if (a > m)
		munmap(m, (size_t)(a - m));
	if (a + bytes < m + len)
		munmap(a + bytes, (size_t)(m + len - (a + bytes)));
	/* fails only where THP is not built in: ordinary pages then */
	(void)madvise(a, bytes, MADV_HUGEPAGE);
#ifdef MADV_POPULATE_WRITE
	if (madvise(a, bytes, MADV_POPULATE_WRITE) == 0)
		return a;
#endif
	for (uint64_t i = 0; i < bytes; i += 4096)
		a[i] = 0;
	return a;
}

/* Map one more slab and make its buffers idle.  0 or -ENOMEM. */
static int bufpool_grow(struct bufpool *p)
{
	uint32_t need = p->n + p->per_slab;
	uint8_t *slab;

	if (need > p->cap) { /* room to take every buffer back */
		uint32_t cap = p->cap ? p->cap : 64;
		void **f;

		while (cap < need)
			cap *= 2;
		f = realloc(p->free, cap * sizeof(*f));
		if (!f)
			return -ENOMEM;
		p->free = f;
		p->cap = cap;
	}
	if (p->nslabs == p->slabs_cap) {
		uint32_t cap = p->slabs_cap ? p->slabs_cap * 2 : 4;
		void **sl = realloc(p->slabs, cap * sizeof(*sl));

		if (!sl)
			return -ENOMEM;
		p->slabs = sl;
		p->slabs_cap = cap;
	}
	slab = slab_map(p->slab);
	if (!slab)
		return -ENOMEM;
	p->slabs[p->nslabs++] = slab;
	/* the slab's first buffer is handed out first */
	for (uint32_t i = p->per_slab; i-- > 0;)
		p->free[p->nfree++] = slab + (uint64_t)i * p->size;
	p->n = need;
	return 0;
}

void *bufpool_get(struct bufpool *p)
{
	if (!p->nfree && bufpool_grow(p) < 0)
		return NULL;
	return p->free[--p->nfree];
}

void bufpool_put(struct bufpool *p, void *b)
{
	assert(p->nfree < p->n);
	p->free[p->nfree++] = b;
}

uint64_t bufpool_bytes(const struct bufpool *p)
{
	return (uint64_t)p->nslabs * p->slab;
}

void bufpool_release(struct bufpool *p)
{
	assert(p->nfree == p->n); /* every buffer given back */
	for (uint32_t i = 0; i < p->nslabs; i++)
		munmap(p->slabs[i], p->slab);
	free(p->slabs);
	free(p->free);
	memset(p, 0, sizeof(*p));
}

/* pread all of @len at @off, or fail. */
int pread_full(struct gs_store *s, int fd, void *buf, size_t len, uint64_t off)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n = f_pread(s, fd, p, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			stat_add(s, read_errors, 1);
			return n < 0 ? -errno : -EIO;
		}
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

/* Write all of @len bytes at @off: 0 or -errno. */
int pwrite_full(struct gs_store *s, int fd, const void *buf, size_t len,
		uint64_t off)
{
	const uint8_t *p = buf;
	size_t done = 0;

	while (done < len) {
		ssize_t n = f_pwrite(s, fd, p + done, len - done,
				     (off_t)(off + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			stat_add(s, write_errors, 1);
			return n < 0 ? -errno : -EIO;
		}
		done += (size_t)n;
	}
	return 0;
}
