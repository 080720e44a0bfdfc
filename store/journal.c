/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The journal file: appending records (under the store lock, or reserved
 * under it and written outside it), preallocation, and the records that
 * carry only a key.  The record format is journal_codec.c's; rewriting the
 * journal is jmaint.c's; replaying it is recovery.c's.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "internal.h"

/*
 * Keep the journal file allocated past @end.  Without room it grows with
 * its records, and tries again at the next one.
 */
static void journal_prealloc(struct gs_store *s, uint64_t end)
{
	uint64_t to = ALIGN4K(end) + JOURNAL_PREALLOC;

	if (end <= s->jalloc || s->jno_prealloc)
		return;
	/* blocks written since are left as they are */
	if (F_CALL(s) == 0 && fallocate(s->jfd, 0, (off_t)s->jalloc,
					(off_t)(to - s->jalloc)) == 0)
		s->jalloc = to;
	else if (errno == EOPNOTSUPP || errno == ENOSYS)
		s->jno_prealloc = true;
}

/*
 * Append a record.  At an explicit offset, not O_APPEND: the end of the
 * file may still be short of records reserved by puts.  0; -errno when it
 * was not written (nothing of it is left in front of later records); or
 * JOURNAL_UNSYNCED when it was written but --sync's fdatasync failed: the
 * record is in the journal and replay will apply it, so the caller applies
 * the change too and reports -EIO (a failure that may have happened, as
 * after a crash, never one that happens only after a restart).
 */
int journal_write(struct gs_store *s, const void *buf, size_t len)
{
	int ret;

	journal_prealloc(s, s->jbytes + len);
	ret = pwrite_full(s, s->jfd, buf, len, s->jbytes);
	if (ret < 0) {
		/* never leave a torn record in front of later ones */
		if (s->jinflight == 0) {
			if (F_CALL(s) < 0 ||
			    ftruncate(s->jfd, (off_t)s->jbytes))
				ret = -EIO;
			else
				s->jalloc = s->jbytes;
		}
		return ret;
	}
	s->jbytes += len;
	if (s->o.sync && (F_CALL(s) < 0 || fdatasync(s->jfd) < 0)) {
		stat_add(s, write_errors, 1);
		return JOURNAL_UNSYNCED;
	}
	return 0;
}

int journal_reserve(struct gs_store *s, size_t len, uint8_t *stack,
		    size_t stack_len, struct jslot *js)
{
	js->len = len;
	js->own = false;
	js->direct = s->jdfd >= 0 && !s->jno_direct &&
		     len >= JOURNAL_DIRECT_MIN && len <= s->jbufs.size &&
		     (js->buf = bufpool_get(&s->jbufs));
	if (js->direct) {
		/* zeros up to the 4 KiB boundary are padding to replay */
		js->off = ALIGN4K(s->jbytes);
		s->jbytes = js->off + ALIGN4K(len);
	} else {
		js->own = len > stack_len;
		js->buf = js->own ? malloc(len) : stack;
		if (!js->buf)
			return -ENOMEM;
		js->off = s->jbytes;
		s->jbytes += len;
	}
	journal_prealloc(s, s->jbytes);
	s->jinflight++;
	return 0;
}

/*
 * A direct write through @ring: the inode lock is held only while it is
 * submitted, not until it completes as with pwrite.  0 or -errno.
 */
static int write_direct(struct gs_store *s, struct io_uring *ring, int fd,
			const uint8_t *buf, size_t len, uint64_t off)
{
	size_t done = 0;

	while (done < len) {
		struct io_uring_sqe *sqe = io_get_sqe(ring);
		struct gs_io io;
		int ret;

		io_uring_prep_write(sqe, fd, buf + done, (unsigned)(len - done),
				    off + done);
		io_prep(sqe, &io);
		f_sqe(s, sqe, &io);
		ret = io_wait(ring, &io);
		if (ret == 0 && io.res <= 0)
			ret = io.res < 0 ? io.res : -EIO;
		if (ret < 0) {
			stat_add(s, write_errors, 1);
			return ret;
		}
		done += (size_t)io.res;
	}
	return 0;
}

/*
 * 0 or JOURNAL_BUFFERED and JOURNAL_UNSYNCED bits (see journal_write),
 * or -errno.  A failed record is left for replay to skip: later ones may
 * be written.
 */
int journal_write_slot(struct gs_store *s, struct jslot *js,
		       struct io_uring *ring)
{
	size_t plen = ALIGN4K(js->len);
	int ret, fd = s->jfd;

	if (!js->direct) {
		ret = pwrite_full(s, s->jfd, js->buf, js->len, js->off);
	} else {
		memset(js->buf + js->len, 0, plen - js->len);
		ret = write_direct(s, ring, fd = s->jdfd, js->buf, plen,
				   js->off);
		if (ret == -EINVAL) /* a file system wanting more alignment */
			ret = pwrite_full(s, fd = s->jfd, js->buf, plen,
					  js->off);
	}
	if (ret < 0)
		return ret;
	ret = js->direct && fd != s->jdfd ? JOURNAL_BUFFERED : 0;
	if (s->o.sync && (F_CALL(s) < 0 || fdatasync(fd) < 0)) {
		stat_add(s, write_errors, 1);
		ret |= JOURNAL_UNSYNCED;
	}
	return ret;
}

void journal_unreserve(struct gs_store *s, const struct jslot *js, int how)
{
	if (js->direct)
		bufpool_put(&s->jbufs, js->buf);
	else if (js->own)
		free(js->buf);
	s->jinflight--;
	if (s->jinflight == 0 && s->jm_drain)
		pthread_cond_broadcast(&s->jm_quiet); /* jmaint.c waits */
	if (how > 0 && (how & JOURNAL_BUFFERED))
		s->jno_direct = true; /* every record buffered from now on */
}

/* Journal a record that carries only a key (and an exptime for touch). */
int journal_key_record(struct gs_store *s, uint8_t type, const struct gs_obj *o,
		       int64_t exptime)
{
	struct jrec r = {
		.type = type,
		.seq = ++s->seq,
		.key = o->node.key,
		.klen = o->node.klen,
		.exptime = exptime,
	};
	uint8_t stackbuf[256];
	size_t len = jrec_size(&r);
	uint8_t *buf = len <= sizeof(stackbuf) ? stackbuf : malloc(len);
	int ret;

	if (!buf)
		return -ENOMEM;
	jrec_encode(&r, NULL, NULL, buf);
	ret = journal_write(s, buf, len);
	if (buf != stackbuf)
		free(buf);
	return ret;
}
