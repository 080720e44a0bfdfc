/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reading: positional reads on a pinned store reader's stream, the RAM
 * head first and the tail read ahead on an io_uring of ours (one per open
 * reader, from a free list), answered without a copy when the bytes lie
 * in one chunk; and the per-thread reply buffer of every room.
 */
#include <assert.h>
#include <errno.h>
#include <liburing.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define RING_ENTRIES 64		/* >= twice the store's deepest read-ahead */
#define SKIP_WINDOW  (8u << 20) /* a forward seek shorter than this reads on */

/*
 * A reader's io_uring.  Every reader is attached (gs_reader_attach) to a
 * ring of ours and only driven under its handle's lock, from whichever
 * FUSE thread is free: so we decide when its read-ahead is submitted (after
 * the reply that carries the head) and reap its completions ourselves.
 */
struct gfs_ring {
	struct io_uring ring;
	struct gfs_ring *next; /* in fs->ring_free */
};

/* ---- the per-thread reply buffer ---- */

static pthread_key_t buf_key;
static pthread_once_t buf_once = PTHREAD_ONCE_INIT;
static __thread void *tl_buf;

static void buf_key_make(void)
{
	pthread_key_create(&buf_key, free);
}

/* GFS_MAX_IO bytes, allocated once per thread, freed at thread exit. */
void *thread_buf(void)
{
	if (!tl_buf) {
		pthread_once(&buf_once, buf_key_make);
		tl_buf = malloc(GFS_MAX_IO);
		if (tl_buf)
			pthread_setspecific(buf_key, tl_buf);
	}
	return tl_buf;
}

/* ---- reader rings ---- */

static struct gfs_ring *ring_get(struct gfs *fs)
{
	struct gfs_ring *rg;

	pthread_mutex_lock(&fs->ring_lock);
	rg = fs->ring_free;
	if (rg)
		fs->ring_free = rg->next;
	pthread_mutex_unlock(&fs->ring_lock);
	if (rg)
		return rg;
	rg = calloc(1, sizeof(*rg));
	if (rg && io_uring_queue_init(RING_ENTRIES, &rg->ring, 0) < 0) {
		free(rg);
		rg = NULL;
	}
	return rg;
}

/* @rg must have nothing in flight. */
static void ring_put(struct gfs *fs, struct gfs_ring *rg)
{
	pthread_mutex_lock(&fs->ring_lock);
	rg->next = fs->ring_free;
	fs->ring_free = rg;
	pthread_mutex_unlock(&fs->ring_lock);
}

/* Submit what the reader queued, wait for a completion, dispatch all. */
static int ring_wait(struct gfs_ring *rg)
{
	struct io_uring_cqe *cqe;
	int ret = io_uring_submit_and_wait(&rg->ring, 1);

	if (ret < 0 && ret != -EINTR && ret != -EAGAIN && ret != -EBUSY)
		return ret;
	while (io_uring_peek_cqe(&rg->ring, &cqe) == 0) {
		if (!gs_handle_cqe(cqe))
			assert(!"a foreign cqe on a reader ring");
		io_uring_cqe_seen(&rg->ring, cqe);
	}
	return 0;
}

/* ---- reading: positional reads on a streaming reader ---- */

/* Restart the stream at @off (waits out the reads in flight first). */
static int fh_seek(struct gfs_fh *fh, uint64_t off)
{
	int ret;

	fh->lolen = 0;
	while ((ret = gs_reader_range(fh->r, off, UINT64_MAX)) == -EBUSY)
		if ((ret = ring_wait(fh->ring)) < 0)
			break;
	fh->pos = ret < 0 ? UINT64_MAX : off;
	return ret;
}

/*
 * Give reader @fh a ring of ours and attach its store reader to it.  On
 * failure the ring is back on the free list (nothing was ever in flight
 * on it) and fh->ring is NULL.  0 or -errno.
 */
int fh_ring_attach(struct gfs *fs, struct gfs_fh *fh)
{
	int ret;

	fh->ring = ring_get(fs);
	if (!fh->ring)
		return -ENOMEM;
	ret = gs_reader_attach(fh->r, &fh->ring->ring, NULL, NULL);
	if (ret < 0) {
		ring_put(fs, fh->ring);
		fh->ring = NULL;
	}
	return ret;
}

/* Close reader @fh's store reader; its ring goes back to the free list. */
void fh_reader_close(struct gfs *fs, struct gfs_fh *fh)
{
	/* nothing may be in flight on the ring when it goes back */
	if (fh->ring)
		fh_seek(fh, fh->size);
	gs_reader_close(fh->r);
	if (fh->ring)
		ring_put(fs, fh->ring);
}

/* Free the idle rings (at gfs_free: every reader is closed). */
void rings_free(struct gfs *fs)
{
	struct gfs_ring *rg;

	while ((rg = fs->ring_free)) {
		fs->ring_free = rg->next;
		io_uring_queue_exit(&rg->ring);
		free(rg);
	}
}

/*
 * Take the next @len bytes of the stream into @dst (NULL: skip them).
 * Returns the count (short at the end) or a negative error.
 */
static ssize_t fh_pull(struct gfs_fh *fh, uint8_t *dst, size_t len)
{
	size_t done = 0;

	while (done < len) {
		struct gs_chunk c;
		int ret;

		if (fh->lolen) {
			size_t n = fh->lolen < len - done ? fh->lolen :
							    len - done;

			if (dst)
				memcpy(dst + done, fh->lo, n);
			fh->lo += n;
			fh->lolen -= n;
			fh->pos += n;
			done += n;
			continue;
		}
		ret = gs_reader_poll(fh->r, &c);
		if (ret == 1) {
			assert(c.off == fh->pos);
			fh->lo = c.data;
			fh->lolen = c.len;
		} else if (ret == 0) {
			break;
		} else if (ret == -EAGAIN) {
			if ((ret = ring_wait(fh->ring)) < 0)
				return ret;
		} else {
			return ret;
		}
	}
	return (ssize_t)done;
}

/* Read [off, off+len) into @buf.  Called with fh->lock held. */
static ssize_t fh_read(struct gfs_fh *fh, uint8_t *buf, size_t len,
		       uint64_t off)
{
	ssize_t ret;

	if (off >= fh->size)
		return 0;
	if (len > fh->size - off)
		len = (size_t)(fh->size - off);
	if (off != fh->pos) {
		if (off > fh->pos && fh->pos != UINT64_MAX &&
		    off - fh->pos <= SKIP_WINDOW) {
			/* a little ahead (the kernel's read-ahead came
			 * first): read on rather than restart the stream */
			ret = fh_pull(fh, NULL, (size_t)(off - fh->pos));
		} else {
			ret = fh_seek(fh, off);
		}
		if (ret < 0)
			goto fail;
	}
	ret = fh_pull(fh, buf, len);
	if (ret >= 0)
		return ret;
fail:
	fh->pos = UINT64_MAX; /* restart the stream on the next read */
	fh->lolen = 0;
	return ret;
}

/*
 * Point *@p at the next @len bytes of the stream when they lie in the
 * chunk at hand, without copying: a sequential read of the RAM head or of
 * a tail chunk is answered from the store's own memory, which stays valid
 * until the reader is called again (under fh->lock, after the reply).
 * Returns @len, 0 when the bytes are not in one chunk (copy them with
 * fh_read), or a negative error.  Called with fh->lock held.
 */
static ssize_t fh_view(struct gfs_fh *fh, size_t len, uint64_t off,
		       const uint8_t **p)
{
	if (off >= fh->size || off != fh->pos)
		return 0;
	if (len > fh->size - off)
		len = (size_t)(fh->size - off);
	while (!fh->lolen) {
		struct gs_chunk c;
		int ret = gs_reader_poll(fh->r, &c);

		if (ret == 1) {
			fh->lo = c.data;
			fh->lolen = c.len;
		} else if (ret == -EAGAIN) {
			if ((ret = ring_wait(fh->ring)) < 0)
				return ret;
		} else {
			return ret; /* 0 at the end: fh_read says so */
		}
	}
	if (fh->lolen < len)
		return 0;
	*p = fh->lo;
	fh->lo += len;
	fh->lolen -= len;
	fh->pos += len;
	return (ssize_t)len;
}

void gfs_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
	      struct fuse_file_info *fi)
{
	struct gfs_fh *fh = (struct gfs_fh *)(uintptr_t)fi->fh;
	uint8_t *buf = thread_buf();
	const uint8_t *view = NULL, *out = buf;
	ssize_t n;

	(void)ino;
	if (fh->writing) { /* O_RDWR */
		fh_write_read(req, fh, size, off);
		return;
	}
	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	if (size > GFS_MAX_IO)
		size = GFS_MAX_IO;
	pthread_mutex_lock(&fh->lock);
	if (fh->fill) /* waits for the origin's bytes */
		n = gs_read(fh->r, buf, size, (uint64_t)off);
	else if ((n = fh_view(fh, size, (uint64_t)off, &view)) > 0)
		out = view;
	else if (n == 0)
		n = fh_read(fh, buf, size, (uint64_t)off);
	if (n == -ECANCELED)
		n = -EIO; /* the origin transfer failed */
	if (n < 0)
		fuse_reply_err(req, (int)-n);
	else
		fuse_reply_buf(req, (const char *)out, (size_t)n);
	/* the reply is out: now let the queued read-ahead go */
	if (fh->ring)
		io_uring_submit(&fh->ring->ring);
	pthread_mutex_unlock(&fh->lock);
}
