/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Writes in place (issue 20): a writer's handle copied into a staging file
 * (up to --rewrite-max), written and truncated there, read back through
 * O_RDWR, and turned into one put when file.c commits it.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

/*
 * This room's GFS_MAX_IO-byte buffer per thread (read.c's is the read
 * reply's; taking it would make read.c and this room call each other),
 * allocated at its first use, freed at thread exit.
 */
static pthread_key_t rbuf_key;
static pthread_once_t rbuf_once = PTHREAD_ONCE_INIT;
static __thread uint8_t *rbuf;

static void rbuf_key_make(void)
{
	pthread_key_create(&rbuf_key, free);
}

static uint8_t *rewrite_buf(void)
{
	if (!rbuf) {
		pthread_once(&rbuf_once, rbuf_key_make);
		rbuf = malloc(GFS_MAX_IO);
		if (rbuf)
			pthread_setspecific(rbuf_key, rbuf);
	}
	return rbuf;
}

static int stage_file(struct gfs *fs)
{
	const char *dir = fs->o.stage_dir;
	char path[PATH_MAX];
	int fd;

	if (!dir)
		dir = getenv("TMPDIR");
	if (!dir || !*dir)
		dir = "/var/tmp";
	fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0 && errno != ENOENT && errno != EACCES &&
	    (size_t)snprintf(path, sizeof(path), "%s/.goblinfs-stage-XXXXXX",
			     dir) < sizeof(path)) {
		/* no O_TMPFILE here: a name, gone at once */
		fd = mkostemp(path, O_CLOEXEC);
		if (fd >= 0)
			unlink(path);
	}
	if (fd < 0) {
		fd = -errno;
		fprintf(stderr,
			"goblinfs: cannot make a staging file in '%s': %s\n",
			dir, strerror(-fd));
	}
	return fd;
}

static int pwrite_all(int fd, const void *buf, size_t len, uint64_t off)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t n = pwrite(fd, p, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

/* Up to @len bytes at @off of the staging file; the count or -errno. */
static ssize_t pread_some(int fd, void *buf, size_t len, uint64_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = pread(fd, (uint8_t *)buf + done, len - done,
				  (off_t)(off + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		done += (size_t)n;
	}
	return (ssize_t)done;
}

/*
 * A file of @size bytes is more than --rewrite-max: say so, once per
 * refusal, naming the option (goblinfs(1), WRITING).
 */
static int rewrite_refused(struct gfs *fs, struct gfs_fh *fh, uint64_t size)
{
	fprintf(stderr,
		"goblinfs: cannot write '%s' in place: %" PRIu64
		" bytes is more than --rewrite-max (%" PRIu64 " bytes)\n",
		fh->key, size, fs->o.rewrite_max);
	return -EFBIG;
}

/*
 * Copy the first @keep bytes of what @fh holds now into a staging file
 * (from its put when it has one, which is then dropped: its bytes are
 * the staging file's; else from the version it last committed or
 * opened), which the handle is written through from then on.  Called
 * with fh->lock held.  0 or -errno (nothing changes then).
 */
static int stage_enter(struct gfs *fs, struct gfs_fh *fh, uint64_t keep)
{
	uint8_t *buf = rewrite_buf();
	struct gs_reader *r = NULL;
	uint64_t off = 0;
	int fd, ret = 0;

	if (keep > fh->written)
		keep = fh->written;
	if (keep > fs->o.rewrite_max)
		return rewrite_refused(fs, fh, keep);
	if (!buf)
		return -ENOMEM;
	if ((fd = stage_file(fs)) < 0)
		return fd;
	if (!fh->w && keep) {
		ret = gs_get_open(fs->s, fh->key, fh->klen, 0, &r);
		if (ret == 0 && gs_reader_meta(r)->cas != fh->cas)
			ret = -EIO; /* replaced meanwhile: not brought back */
		if (ret == -ENOENT)
			ret = -EIO;
	}
	while (ret == 0 && off < keep) {
		uint64_t left = keep - off;
		size_t n = left < GFS_MAX_IO ? (size_t)left : GFS_MAX_IO;
		ssize_t got = fh->w ? gs_put_read(fh->w, buf, n, off) :
				      gs_read(r, buf, n, off);

		if (got <= 0)
			ret = got < 0 ? (int)got : -EIO;
		else if ((ret = pwrite_all(fd, buf, (size_t)got, off)) == 0)
			off += (uint64_t)got;
	}
	if (r)
		gs_reader_close(r);
	if (ret < 0) {
		close(fd);
		return ret;
	}
	/* a put's bytes no close committed: now the staging file's */
	fh->sdirty = fh->w != NULL;
	if (fh->w) {
		gs_put_abort(fh->w);
		fh->w = NULL;
	}
	fh->stage = fd;
	fh->written = keep;
	return 0;
}

int stage_write(struct gfs *fs, struct gfs_fh *fh, const char *buf, size_t size,
		uint64_t off)
{
	uint64_t end = off + size;
	int ret;

	if (end < off || end > fs->o.rewrite_max)
		return rewrite_refused(fs, fh, end < off ? UINT64_MAX : end);
	if (fh->stage < 0 && (ret = stage_enter(fs, fh, UINT64_MAX)) < 0)
		return ret;
	if ((ret = pwrite_all(fh->stage, buf, size, off)) < 0)
		return ret;
	if (end > fh->written)
		fh->written = end;
	fh->sdirty = true;
	return 0;
}

int stage_put(struct gfs *fs, struct gfs_fh *fh, const uint8_t *attr,
	      size_t attr_len)
{
	struct gs_put_args a = { .size = fh->written,
				 .mode = GS_SET,
				 .appendable = true,
				 .attr = attr,
				 .attr_len = attr_len };
	uint8_t *buf = rewrite_buf();
	uint64_t off = 0;
	int ret;

	if (!buf)
		return -ENOMEM;
	ret = gs_put_begin(fs->s, fh->key, fh->klen, &a, &fh->w);
	while (ret == 0 && off < fh->written) {
		uint64_t left = fh->written - off;
		ssize_t got = pread_some(
			fh->stage, buf,
			left < GFS_MAX_IO ? (size_t)left : GFS_MAX_IO, off);

		if (got <= 0) /* shorter than we made it: cannot be */
			ret = got < 0 ? (int)got : -EIO;
		else if ((ret = gs_put_write(fh->w, buf, (size_t)got)) == 0)
			off += (uint64_t)got;
	}
	if (ret < 0 && fh->w) {
		gs_put_abort(fh->w);
		fh->w = NULL;
	}
	/* more than the SSD tier holds: to a filesystem user, a full disk */
	return ret == -EFBIG ? -ENOSPC : ret;
}

void fh_write_read(fuse_req_t req, struct gfs_fh *fh, size_t size, off_t off)
{
	struct gfs *fs = req_fs(req);
	uint8_t *buf = rewrite_buf();
	struct gs_reader *r = NULL;
	ssize_t n = 0;

	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	if (size > GFS_MAX_IO)
		size = GFS_MAX_IO;
	pthread_mutex_lock(&fh->lock);
	if (fh->stage >= 0) {
		n = pread_some(fh->stage, buf, size, (uint64_t)off);
	} else if (fh->w) {
		n = gs_put_read(fh->w, buf, size, (uint64_t)off);
	} else if ((uint64_t)off < fh->written) {
		/* the version this handle last committed or opened */
		n = gs_get_open(fs->s, fh->key, fh->klen, 0, &r);
		if (n == 0 && gs_reader_meta(r)->cas != fh->cas)
			n = -EIO;
		if (n == 0)
			n = gs_read(r, buf, size, (uint64_t)off);
		if (r)
			gs_reader_close(r);
		if (n == -ENOENT)
			n = -EIO;
	}
	pthread_mutex_unlock(&fh->lock);
	if (n < 0)
		fuse_reply_err(req, (int)-n);
	else
		fuse_reply_buf(req, (const char *)buf, (size_t)n);
}

int fh_resize(struct gfs *fs, struct gfs_fh *fh, uint64_t size)
{
	int ret;

	if (fh->werr)
		return fh->werr;
	if (size == fh->written)
		return 0;
	if (size > fs->o.rewrite_max)
		return rewrite_refused(fs, fh, size);
	if (fh->stage < 0 && (ret = stage_enter(fs, fh, size)) < 0)
		return ret;
	if (ftruncate(fh->stage, (off_t)size) < 0)
		return -errno;
	fh->written = size;
	fh->sdirty = true;
	return 0;
}
