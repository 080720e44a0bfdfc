/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * goblinfs: the FUSE low-level operations over a Goblin Store.  Reads
 * stream head-first from pinned store readers; writes are store puts of
 * unknown size committed at close; names live in ns.c.
 */
#define FUSE_USE_VERSION 312

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include <fuse_lowlevel.h>

#include "internal.h"
#include "mirror.h"

#define XATTR_TIERS "user.goblin.tiers"
#define XATTR_ORIGIN "user.goblin.origin"	/* the root, with --mirror */
#define RING_ENTRIES 64		/* >= twice the store's deepest read-ahead */
#define SKIP_WINDOW (8u << 20)	/* a forward seek shorter than this reads on */

/*
 * A reader's io_uring.  Every reader is attached (gs_reader_attach) to a
 * ring of ours and only driven under its handle's lock, from whichever
 * FUSE thread is free: so we decide when its read-ahead is submitted (after
 * the reply that carries the head) and reap its completions ourselves.
 */
struct gfs_ring {
	struct io_uring ring;
	struct gfs_ring *next;		/* in fs->ring_free */
};

/* The calls on a store writer (any thread may make them). */
enum writer_op { WRITER_BEGIN, WRITER_WRITE, WRITER_COMMIT, WRITER_ABORT };

/*
 * An open file: a pinned reader, or a writer.  Fields under fh->lock,
 * except the list links (fs->lock).
 */
struct gfs_fh {
	pthread_mutex_t lock;
	struct gfs_fh *next, *prev;	/* in fs->open_fhs */
	struct gfs_node *node;		/* holds a node->refs reference */
	bool writing;
	/* reading */
	struct gs_reader *r;
	bool fill;			/* opened on a mirror's fill: gs_read
					 * (waits for the bytes), no ring */
	bool cached;			/* counted in node->cached_readers */
	struct gfs_ring *ring;
	uint64_t size;			/* of the pinned version */
	uint64_t pos;			/* next byte the reader hands out... */
	const uint8_t *lo;		/* ...from here first: the rest of */
	size_t lolen;			/* the last chunk, [pos, pos+lolen) */
	/* writing */
	struct gs_writer *w;		/* NULL: committed, nothing written since */
	uint64_t written;
	int werr;			/* first write error, reported again */
	bool flushed;			/* closed with nothing written: counted
					 * in node->closing (see gfs_flush) */
	uint64_t cas;			/* from the last commit, 0: none yet */
	char *key;			/* the key the put began with */
	size_t klen;
};

/* ---- small helpers ---- */

static struct gfs *req_fs(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

/* Called with fs->lock held (the root is never freed). */
static struct gfs_node *node_of(struct gfs *fs, fuse_ino_t ino)
{
	return ino == FUSE_ROOT_ID ? fs->root : (struct gfs_node *)ino;
}

static fuse_ino_t ino_of(struct gfs *fs, struct gfs_node *n)
{
	return n == fs->root ? FUSE_ROOT_ID : (fuse_ino_t)(uintptr_t)n;
}

static int64_t now_real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static void ns_to_ts(int64_t ns, struct timespec *ts)
{
	ts->tv_sec = ns / 1000000000ll;
	ts->tv_nsec = ns % 1000000000ll;
}

/* A committed version is visible; a file only being created is not. */
static bool node_visible(const struct gfs_node *n)
{
	return n->dir || n->committed;
}

/* Called with fs->lock held. */
static void node_attr(struct gfs *fs, const struct gfs_node *n,
		      struct stat *st)
{
	int64_t t;

	memset(st, 0, sizeof(*st));
	st->st_ino = n->id;
	st->st_uid = fs->uid;
	st->st_gid = fs->gid;
	st->st_blksize = GFS_MAX_IO;
	if (n->dir) {
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2 + n->nsubdirs;
		st->st_size = (off_t)n->nkids;
		t = fs->start_ns;
	} else {
		st->st_mode = S_IFREG | 0644;
		st->st_nlink = 1;
		st->st_size = (off_t)(n->committed ? n->size : n->wsize);
		st->st_blocks = (st->st_size + 511) / 512;
		t = n->committed ? n->mtime_ns : now_real_ns();
	}
	ns_to_ts(t, &st->st_mtim);
	st->st_ctim = st->st_mtim;
	st->st_atim = st->st_mtim;
}

/* Called with fs->lock held; counts the lookup the reply gives. */
static void node_entry(struct gfs *fs, struct gfs_node *n,
		       struct fuse_entry_param *e)
{
	memset(e, 0, sizeof(*e));
	e->ino = ino_of(fs, n);
	e->generation = n->id;
	node_attr(fs, n, &e->attr);
	e->attr_timeout = fs->o.attr_timeout;
	e->entry_timeout = fs->o.entry_timeout;
	n->nlookup++;
}

/*
 * A file closed with nothing written is committed at release, which
 * close() does not wait for (see gfs_flush).  So that "touch, then open or
 * stat" sees it, an operation on a file whose writers are all closed so
 * waits for the commit, at most o.commit_wait seconds (a dup()ed
 * descriptor may still write).  Called with fs->lock held.
 */
static void wait_commit(struct gfs *fs, struct gfs_node *n)
{
	struct timespec dl;
	double w = fs->o.commit_wait;

	if (!n || n->dir || !n->writers || n->closing < n->writers)
		return;
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += (time_t)w;
	dl.tv_nsec += (long)((w - (double)(time_t)w) * 1e9);
	if (dl.tv_nsec >= 1000000000l) {
		dl.tv_sec++;
		dl.tv_nsec -= 1000000000l;
	}
	while (n->writers && n->closing >= n->writers)
		if (pthread_cond_timedwait(&fs->commit_cond, &fs->lock, &dl) ==
		    ETIMEDOUT)
			break;
}

/*
 * File @t is about to lose its name to file @n (a rename over it, or
 * node_fork).  A path walk may have found @t just before and be about to
 * open it: that open gets @n, the file now under the name, rather than
 * ENOENT (rename(2) promises the old file or the new one; the old
 * version is gone from the store).  Called with fs->lock held.
 */
static void node_succeed(struct gfs_node *t, struct gfs_node *n)
{
	assert(!t->successor && !t->dir && !n->dir);
	t->successor = n;
	n->refs++;
}

/*
 * A writer is about to open file @n while readers hold it open through the
 * kernel's page cache.  Written through, @n's inode would change under
 * them: the kernel sets its size to 0 at an O_TRUNC open and grows it with
 * every write, and drops its pages, so that those readers would see a
 * short file, zeros past their version's end, or pages of the next
 * version.  So the name goes to a new node that shows the same committed
 * version, and the writer opens that one; the readers' inode keeps
 * describing their version to the end.  Readers of the new node go past
 * the page cache until the writer has opened it.  Returns the new node or
 * NULL (ENOMEM).  Called with fs->lock held.
 */
static struct gfs_node *node_fork(struct gfs *fs, struct gfs_node *n)
{
	struct gfs_node *n2 = ns_replace(fs, n);

	if (!n2)
		return NULL;
	n2->committed = n->committed;
	n2->size = n->size;
	n2->mtime_ns = n->mtime_ns;
	n2->cas = n->cas;
	n2->rewrite_pending = true;
	node_succeed(n, n2);
	return n2;
}

/* The file a path walk that found @n opens: see node_succeed. */
static struct gfs_node *node_current(struct gfs_node *n)
{
	while (!n->attached && n->successor)
		n = n->successor;
	return n;
}

/*
 * A directory left empty by an unlink, rmdir or rename keeps existing (as
 * on any filesystem): it gets its "path/" marker object.  Called with
 * fs->lock held; a failure only means the directory is gone after a
 * remount.
 */
static void keep_dir(struct gfs *fs, struct gfs_node *d)
{
	struct gs_put_args a = {0};
	char key[GFS_KEYBUF];
	int len;

	if (d == fs->root || d->marker || d->nkids || !d->attached)
		return;
	len = ns_key(d, true, key);
	if (len > 0 && gs_put(fs->s, key, (size_t)len, "", 0, &a) == 0)
		d->marker = true;
}

/*
 * The child @name of @dir, looked up in the store when the tree does not
 * have it (an object added by another front-end of the same store).
 * Called with fs->lock held.
 */
static struct gfs_node *find_child(struct gfs *fs, struct gfs_node *dir,
				   const char *name, size_t len)
{
	struct gfs_node *n = ns_child(fs, dir, name, len);
	char key[GFS_KEYBUF];
	struct gs_meta *m;
	int klen;

	if (n || ns_name_check(name, len) < 0)
		return n;
	m = malloc(sizeof(*m));
	if (!m)
		return NULL;
	klen = ns_child_key(dir, name, len, false, key);
	if (klen > 0 && gs_stat(fs->s, key, (size_t)klen, m) == 0) {
		n = ns_add(fs, dir, name, len, false);
		if (n) {
			n->committed = true;
			n->size = m->size;
			n->mtime_ns = gfs_meta_mtime(fs, m);
			n->cas = m->cas;
		}
	} else if (klen > 0 && (size_t)klen < GS_KEY_MAX) {
		key[klen] = '/';
		if (gs_stat(fs->s, key, (size_t)klen + 1, m) == 0) {
			n = ns_add(fs, dir, name, len, true);
			if (n)
				n->marker = true;
		}
	}
	free(m);
	return n;
}

int64_t gfs_meta_mtime(const struct gfs *fs, const struct gs_meta *m)
{
	return fs->mirror ? mirror_meta_mtime(m) : m->mtime_ns;
}

/*
 * With --mirror: every change is refused.  Replies EROFS and returns true
 * on a mirror mount (the kernel refuses most changes itself: goblinfs
 * mounts it with "ro").
 */
static bool refuse_ro(fuse_req_t req)
{
	if (!req_fs(req)->mirror)
		return false;
	fuse_reply_err(req, EROFS);
	return true;
}

static int64_t now_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

/* The slot of (@dir, @name) in fs->absent; its hash in *h. */
static struct gfs_absent *absent_slot(struct gfs *fs,
				      const struct gfs_node *dir,
				      const char *name, size_t len,
				      uint64_t *h)
{
	uint64_t x = 0xcbf29ce484222325ull ^ dir->id;

	for (size_t i = 0; i < len; i++) {
		x ^= (unsigned char)name[i];
		x *= 0x100000001b3ull;
	}
	x ^= x >> 31;
	*h = x | 1;	/* 0: an empty slot */
	return &fs->absent[x & (GFS_ABSENT_SLOTS - 1)];
}

/* Whether the origin said (@dir, @name) is missing not long ago. */
static bool absent_known(struct gfs *fs, const struct gfs_node *dir,
			 const char *name, size_t len)
{
	uint64_t h;
	struct gfs_absent *a = absent_slot(fs, dir, name, len, &h);

	return a->hash == h && now_mono_ns() < a->until_ns;
}

static void absent_add(struct gfs *fs, const struct gfs_node *dir,
		       const char *name, size_t len)
{
	uint64_t h;
	struct gfs_absent *a = absent_slot(fs, dir, name, len, &h);

	a->hash = h;
	a->until_ns = now_mono_ns() +
		      (int64_t)(fs->o.negative_timeout * 1e9);
}

/*
 * A name that neither the tree nor the store has, asked of the origin
 * (HEAD).  A file becomes a node with the origin's size and mtime, not yet
 * cached; a directory a directory node.  Returns the node, or NULL with
 * *err: -ENOENT (a negative entry for the caller), -EIO, -ENOMEM.  Called
 * with fs->lock held, which it drops during the request: @dir is the
 * parent of a lookup in progress, so the kernel keeps it.
 */
static struct gfs_node *origin_child(struct gfs *fs, struct gfs_node *dir,
				     const char *name, size_t len, int *err)
{
	char *key = malloc(GFS_KEYBUF);
	struct gfs_node *n = NULL;
	uint64_t size = 0;
	int64_t mtime = 0;
	int ret;

	if (!key) {
		*err = -ENOMEM;
		return NULL;
	}
	ret = ns_name_check(name, len);
	if (ret == 0)
		ret = ns_child_key(dir, name, len, false, key);
	if (ret < 0) {
		*err = ret == -ENAMETOOLONG ? ret : -ENOENT;
		goto out;
	}
	if (absent_known(fs, dir, name, len)) {
		*err = -ENOENT;
		goto out;
	}
	pthread_mutex_unlock(&fs->lock);
	ret = mirror_head(fs->mirror, key, &size, &mtime);
	pthread_mutex_lock(&fs->lock);
	if (ret == -ENOENT)
		absent_add(fs, dir, name, len);
	if (ret < 0) {
		*err = ret;
		goto out;
	}
	/* another lookup of the name may have won meanwhile */
	n = ns_child(fs, dir, name, len);
	if (!n && dir->attached) {
		n = ns_add(fs, dir, name, len, ret == MIRROR_DIR);
		if (n && !n->dir) {
			n->committed = true;	/* visible: it is there */
			n->size = size;
			n->mtime_ns = mtime > 0 ? mtime * 1000000000ll
						: now_real_ns();
			n->cas = 0;	/* no store version yet */
		}
	}
	*err = n ? 0 : dir->attached ? -ENOMEM : -ENOENT;
out:
	free(key);
	return n;
}

/* ---- the per-thread reply buffer ---- */

static pthread_key_t buf_key;
static pthread_once_t buf_once = PTHREAD_ONCE_INIT;
static __thread void *tl_buf;

static void buf_key_make(void)
{
	pthread_key_create(&buf_key, free);
}

/* GFS_MAX_IO bytes, allocated once per thread, freed at thread exit. */
static void *thread_buf(void)
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
			size_t n = fh->lolen < len - done ? fh->lolen
							  : len - done;

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
	fh->pos = UINT64_MAX;	/* restart the stream on the next read */
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
			return ret;	/* 0 at the end: fh_read says so */
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

/* ---- writers ---- */

/* Run @op on @fh's store writer.  Called with fh->lock held (or alone). */
static int writer_call(struct gfs *fs, struct gfs_fh *fh, enum writer_op op,
		       const void *buf, size_t len)
{
	struct gs_put_args a = {0};
	int ret = 0;

	switch (op) {
	case WRITER_BEGIN:
		a.size = GS_SIZE_UNKNOWN;
		a.mode = GS_SET;
		ret = gs_put_begin(fs->s, fh->key, fh->klen, &a, &fh->w);
		break;
	case WRITER_WRITE:
		ret = gs_put_write(fh->w, buf, len);
		break;
	case WRITER_COMMIT:
		ret = gs_put_commit(fh->w, &fh->cas);
		fh->w = NULL;
		break;
	case WRITER_ABORT:
		gs_put_abort(fh->w);
		fh->w = NULL;
		break;
	}
	/* more than the SSD tier holds: to a filesystem user, a full disk */
	return ret == -EFBIG ? -ENOSPC : ret;
}

/* ---- file handles ---- */

/* Called with fs->lock held. */
static void fh_link(struct gfs *fs, struct gfs_fh *fh)
{
	fh->prev = NULL;
	fh->next = fs->open_fhs;
	if (fh->next)
		fh->next->prev = fh;
	fs->open_fhs = fh;
}

/* Called with fs->lock held. */
static void fh_unlink(struct gfs *fs, struct gfs_fh *fh)
{
	if (fh->prev)
		fh->prev->next = fh->next;
	else
		fs->open_fhs = fh->next;
	if (fh->next)
		fh->next->prev = fh->prev;
	fh->next = fh->prev = NULL;
}

static void fh_free(struct gfs_fh *fh)
{
	pthread_mutex_destroy(&fh->lock);
	free(fh->key);
	free(fh);
}

/*
 * Begin a put of @key for @n (whose writers count already includes this
 * handle).  Returns the handle or NULL with *err set.
 */
static struct gfs_fh *fh_writer(struct gfs *fs, struct gfs_node *n,
				const char *key, size_t klen, int *err)
{
	struct gfs_fh *fh = calloc(1, sizeof(*fh));

	if (!fh || !(fh->key = malloc(klen + 1))) {
		free(fh);
		*err = -ENOMEM;
		return NULL;
	}
	pthread_mutex_init(&fh->lock, NULL);
	memcpy(fh->key, key, klen + 1);
	fh->klen = klen;
	fh->node = n;
	fh->writing = true;
	*err = writer_call(fs, fh, WRITER_BEGIN, NULL, 0);
	if (*err < 0) {
		fh_free(fh);
		return NULL;
	}
	return fh;
}

/*
 * Undo what create/open did for a writer that could not begin.  Called
 * with fs->lock held.
 */
static void writer_undo(struct gfs *fs, struct gfs_node *n, bool lookup)
{
	assert(n->writers > 0 && n->refs > 0);
	n->writers--;
	n->refs--;
	if (lookup) {
		assert(n->nlookup > 0);
		n->nlookup--;
	}
	if (!n->committed && !n->writers && n->attached) {
		struct gfs_node *d = n->parent;

		ns_detach(fs, n);
		keep_dir(fs, d);
	} else {
		ns_put(fs, n);
	}
	pthread_cond_broadcast(&fs->commit_cond);
}

/* ---- operations ---- */

static void gfs_init(void *data, struct fuse_conn_info *conn)
{
	(void)data;
	conn->max_write = GFS_MAX_IO;
	conn->max_readahead = GFS_MAX_IO;
	if (conn->capable & FUSE_CAP_ATOMIC_O_TRUNC)
		conn->want |= FUSE_CAP_ATOMIC_O_TRUNC;
	if (conn->capable & FUSE_CAP_AUTO_INVAL_DATA)
		conn->want |= FUSE_CAP_AUTO_INVAL_DATA;
	if (conn->capable & FUSE_CAP_PARALLEL_DIROPS)
		conn->want |= FUSE_CAP_PARALLEL_DIROPS;
	conn->want &= ~(unsigned)FUSE_CAP_WRITEBACK_CACHE;
	/*
	 * Read-ahead requests in order, one at a time per file: sent
	 * together they reach our threads out of order, and every step
	 * back restarts the store's read-ahead.  Our own read-ahead (the
	 * store's io_depth) keeps the device busy meanwhile.
	 */
	conn->want &= ~(unsigned)FUSE_CAP_ASYNC_READ;
}

static void gfs_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct gfs *fs = req_fs(req);
	struct fuse_entry_param e;
	struct gfs_node *d, *n;
	size_t len = strlen(name);

	if (len > GFS_NAME_MAX) {
		fuse_reply_err(req, ENAMETOOLONG);
		return;
	}
	pthread_mutex_lock(&fs->lock);
	d = node_of(fs, parent);
	if (!d->dir) {
		pthread_mutex_unlock(&fs->lock);
		fuse_reply_err(req, ENOTDIR);
		return;
	}
	n = find_child(fs, d, name, len);
	if (!n && fs->mirror) {
		int err;

		n = origin_child(fs, d, name, len, &err);
		if (!n && err != -ENOENT) {
			pthread_mutex_unlock(&fs->lock);
			fuse_reply_err(req, -err);
			return;
		}
	}
	wait_commit(fs, n);
	if (!n || !n->attached) {
		pthread_mutex_unlock(&fs->lock);
		memset(&e, 0, sizeof(e));	/* a cached negative entry */
		e.entry_timeout = fs->o.negative_timeout;
		fuse_reply_entry(req, &e);
		return;
	}
	node_entry(fs, n, &e);
	pthread_mutex_unlock(&fs->lock);
	fuse_reply_entry(req, &e);
}

static void forget_one(struct gfs *fs, fuse_ino_t ino, uint64_t nlookup)
{
	struct gfs_node *n = node_of(fs, ino);

	assert(n->nlookup >= nlookup);
	n->nlookup -= nlookup;
	ns_put(fs, n);
}

static void gfs_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	struct gfs *fs = req_fs(req);

	pthread_mutex_lock(&fs->lock);
	forget_one(fs, ino, nlookup);
	pthread_mutex_unlock(&fs->lock);
	fuse_reply_none(req);
}

static void gfs_forget_multi(fuse_req_t req, size_t count,
			     struct fuse_forget_data *forgets)
{
	struct gfs *fs = req_fs(req);

	pthread_mutex_lock(&fs->lock);
	for (size_t i = 0; i < count; i++)
		forget_one(fs, forgets[i].ino, forgets[i].nlookup);
	pthread_mutex_unlock(&fs->lock);
	fuse_reply_none(req);
}

static void gfs_getattr(fuse_req_t req, fuse_ino_t ino,
			struct fuse_file_info *fi)
{
	struct gfs *fs = req_fs(req);
	struct gfs_node *n;
	struct stat st;

	(void)fi;
	pthread_mutex_lock(&fs->lock);
	n = node_of(fs, ino);
	wait_commit(fs, n);
	node_attr(fs, n, &st);
	pthread_mutex_unlock(&fs->lock);
	fuse_reply_attr(req, &st, fs->o.attr_timeout);
}

/*
 * Only a size change is meaningful, and only the no-op kind: objects are
 * immutable.  Mode, owner and times are accepted and ignored (cp -p and
 * tar keep working).
 */
static void gfs_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr,
			int to_set, struct fuse_file_info *fi)
{
	struct gfs *fs = req_fs(req);
	struct gfs_node *n;
	struct stat st;
	int err = 0;

	if (refuse_ro(req))
		return;
	pthread_mutex_lock(&fs->lock);
	n = node_of(fs, ino);
	if (to_set & FUSE_SET_ATTR_SIZE) {
		uint64_t want = (uint64_t)attr->st_size, have = 0;

		if (n->dir)
			err = EISDIR;
		else if (fi && fi->fh &&
			 ((struct gfs_fh *)fi->fh)->writing)
			have = ((struct gfs_fh *)fi->fh)->written;
		else
			have = n->writers ? n->wsize : n->size;
		if (!err && want != have)
			err = EPERM;
	}
	node_attr(fs, n, &st);
	pthread_mutex_unlock(&fs->lock);
	if (err)
		fuse_reply_err(req, err);
	else
		fuse_reply_attr(req, &st, fs->o.attr_timeout);
}

static void gfs_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name,
		      mode_t mode)
{
	struct gfs *fs = req_fs(req);
	struct gs_put_args a = {0};
	struct fuse_entry_param e;
	char key[GFS_KEYBUF];
	struct gfs_node *d, *n;
	size_t len = strlen(name);
	int ret;

	(void)mode;
	if (refuse_ro(req))
		return;
	pthread_mutex_lock(&fs->lock);
	d = node_of(fs, parent);
	if ((ret = ns_name_check(name, len)) < 0)
		goto out;
	if (find_child(fs, d, name, len)) {
		ret = -EEXIST;
		goto out;
	}
	ret = ns_child_key(d, name, len, true, key);
	if (ret < 0)
		goto out;
	ret = gs_put(fs->s, key, (size_t)ret, "", 0, &a);
	if (ret < 0)
		goto out;
	n = ns_add(fs, d, name, len, true);
	if (!n) {
		ret = -ENOMEM;
		goto out;
	}
	n->marker = true;
	node_entry(fs, n, &e);
out:
	pthread_mutex_unlock(&fs->lock);
	if (ret < 0)
		fuse_reply_err(req, -ret);
	else
		fuse_reply_entry(req, &e);
}

/*
 * Delete the object behind @n when @has_obj (a file's, or with @marker a
 * directory's marker), then take @n out of the tree, keeping its parent @d
 * as a directory.  0 or -errno.  Called with fs->lock held.
 */
static int remove_node(struct gfs *fs, struct gfs_node *d, struct gfs_node *n,
		       bool has_obj, bool marker)
{
	char key[GFS_KEYBUF];
	int ret = 0;

	if (has_obj && (ret = ns_key(n, marker, key)) > 0) {
		ret = gs_delete(fs->s, key, (size_t)ret);
		if (ret == -ENOENT)
			ret = 0;
	}
	if (ret >= 0) {
		ns_detach(fs, n);
		keep_dir(fs, d);
	}
	return ret;
}

static void gfs_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct gfs *fs = req_fs(req);
	struct gfs_node *d, *n;
	int ret = 0;

	if (refuse_ro(req))
		return;
	pthread_mutex_lock(&fs->lock);
	d = node_of(fs, parent);
	n = find_child(fs, d, name, strlen(name));
	if (!n)
		ret = -ENOENT;
	else if (!n->dir)
		ret = -ENOTDIR;
	else if (n->nkids)
		ret = -ENOTEMPTY;
	else
		ret = remove_node(fs, d, n, n->marker, true);
	pthread_mutex_unlock(&fs->lock);
	fuse_reply_err(req, ret < 0 ? -ret : 0);
}

static void gfs_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct gfs *fs = req_fs(req);
	struct gfs_node *d, *n;
	int ret = 0;

	if (refuse_ro(req))
		return;
	pthread_mutex_lock(&fs->lock);
	d = node_of(fs, parent);
	n = find_child(fs, d, name, strlen(name));
	wait_commit(fs, n);
	if (!n)
		ret = -ENOENT;
	else if (n->dir)
		ret = -EISDIR;
	else	/* a writer still open aborts at release: n is detached */
		ret = remove_node(fs, d, n, n->committed, false);
	pthread_mutex_unlock(&fs->lock);
	fuse_reply_err(req, ret < 0 ? -ret : 0);
}

/* Whether @a is @d or one of its ancestors.  fs->lock held. */
static bool is_ancestor(const struct gfs_node *a, const struct gfs_node *d)
{
	for (; d; d = d->parent)
		if (d == a)
			return true;
	return false;
}

/*
 * rename.  A file: gs_rename, atomic, also over an existing file.  An
 * empty directory: its marker moves.  A non-empty directory: EXDEV (its
 * keys cannot all move at once; mv(1) then copies and deletes).
 */
static void gfs_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
		       fuse_ino_t newparent, const char *newname,
		       unsigned int flags)
{
	struct gfs *fs = req_fs(req);
	char from[GFS_KEYBUF], to[GFS_KEYBUF];
	struct gfs_node *d, *nd, *n, *t;
	size_t nlen = strlen(newname);
	int ret = 0, flen = 0, tlen;

	if (refuse_ro(req))
		return;
	if (flags & ~(unsigned)RENAME_NOREPLACE) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	pthread_mutex_lock(&fs->lock);
	d = node_of(fs, parent);
	nd = node_of(fs, newparent);
	n = find_child(fs, d, name, strlen(name));
	t = find_child(fs, nd, newname, nlen);
	wait_commit(fs, n);
	wait_commit(fs, t);
	if (!n) {
		ret = -ENOENT;
		goto out;
	}
	if (n == t)
		goto out;
	if ((ret = ns_name_check(newname, nlen)) < 0)
		goto out;
	if (t && (flags & RENAME_NOREPLACE)) {
		ret = -EEXIST;
		goto out;
	}
	if (n->dir && t && !t->dir)
		ret = -ENOTDIR;
	else if (!n->dir && t && t->dir)
		ret = -EISDIR;
	else if (t && t->dir && t->nkids)
		ret = -ENOTEMPTY;
	else if (n->dir && is_ancestor(n, nd))
		ret = -EINVAL;
	else if (n->dir && n->nkids)
		ret = -EXDEV;
	if (ret < 0)
		goto out;
	if ((tlen = ns_child_key(nd, newname, nlen, n->dir, to)) < 0 ||
	    (flen = ns_key(n, n->dir, from)) < 0) {
		ret = tlen < 0 ? tlen : flen;
		goto out;
	}
	if (n->dir) {
		struct gs_put_args a = {0};

		ret = gs_put(fs->s, to, (size_t)tlen, "", 0, &a);
		if (ret == 0 && n->marker)
			gs_delete(fs->s, from, (size_t)flen);
		if (ret == 0 && t && t->marker) {
			/* the target's marker is the key we just wrote */
			t->marker = false;
		}
		n->marker = ret == 0;
	} else if (n->committed) {
		ret = gs_rename(fs->s, from, (size_t)flen, to, (size_t)tlen);
	} else if (t && !t->dir && t->committed) {
		/* only being written: its commit renames it; the old target
		 * goes now, as rename(2) says */
		ret = gs_delete(fs->s, to, (size_t)tlen);
		if (ret == -ENOENT)
			ret = 0;
	}
	if (ret < 0)
		goto out;
	if (t && !t->dir && !n->dir)
		node_succeed(t, n);
	if (t)
		ns_detach(fs, t);
	ret = ns_move(fs, n, nd, newname, nlen);
	if (d != nd)
		keep_dir(fs, d);
out:
	pthread_mutex_unlock(&fs->lock);
	fuse_reply_err(req, ret < 0 ? -ret : 0);
}

static void gfs_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent,
		     const char *newname)
{
	(void)ino;
	(void)newparent;
	(void)newname;
	if (refuse_ro(req))
		return;
	fuse_reply_err(req, EPERM);
}

static void gfs_symlink(fuse_req_t req, const char *link, fuse_ino_t parent,
			const char *name)
{
	(void)link;
	(void)parent;
	(void)name;
	if (refuse_ro(req))
		return;
	fuse_reply_err(req, EPERM);
}

static void gfs_mknod(fuse_req_t req, fuse_ino_t parent, const char *name,
		      mode_t mode, dev_t rdev)
{
	(void)parent;
	(void)name;
	(void)mode;
	(void)rdev;
	if (refuse_ro(req))
		return;
	fuse_reply_err(req, EPERM);
}

/*
 * With --mirror, @key is not in the store: open the fill that brings it
 * from the origin, starting one unless another open did (one GET per
 * object: the second open of a key being filled shares the fill).  A fill
 * that failed left nothing behind, so the next open fetches again.
 */
static int open_fill(struct gfs *fs, struct gfs_node *n, const char *key,
		     size_t klen, struct gs_reader **r)
{
	uint64_t size;
	int64_t mtime;
	int ret;

	pthread_mutex_lock(&fs->lock);
	size = n->size;
	mtime = n->mtime_ns / 1000000000ll;
	pthread_mutex_unlock(&fs->lock);
	pthread_mutex_lock(&fs->fetch_lock);
	ret = gs_get_open(fs->s, key, klen, GS_GET_FILL, r);
	if (ret == -ENOENT) {
		ret = mirror_fetch(fs->mirror, fs->s, key, key, size, mtime);
		if (ret == 0 || ret == -EEXIST)
			ret = gs_get_open(fs->s, key, klen, GS_GET_FILL, r);
		if (ret == -ENOENT)
			ret = -EIO;	/* the fill failed already */
	}
	pthread_mutex_unlock(&fs->fetch_lock);
	return ret;
}

/*
 * Open @n for reading; fills @fi.  0 or -errno.
 *
 * The kernel keeps one size and one page cache per inode, and reads
 * through the page cache stop at that size and fill pages from whichever
 * open file asks first.  So a reader uses the page cache only when its
 * inode can describe nothing but the version it pins for as long as it is
 * open: the version is the node's, no writer is on the node (node_fork
 * keeps writers off it later), and the inode is the node's own (not one
 * left behind by a rename).  Any other reader reads past the page cache
 * (direct I/O), where a read returns the bytes of its version and stops at
 * its end, whatever size the kernel believes.
 */
static int open_reader(struct gfs *fs, struct gfs_node *n,
		       struct fuse_file_info *fi)
{
	char key[GFS_KEYBUF];
	const struct gs_meta *m;
	struct gfs_fh *fh;
	bool moved;
	int ret, klen;

	pthread_mutex_lock(&fs->lock);
	wait_commit(fs, n);
	moved = !n->attached && n->successor;
	n = node_current(n);
	if (!n->committed)
		ret = -ENOENT;	/* only being created: not there yet */
	else
		ret = ns_key(n, false, key);
	if (ret >= 0)
		n->refs++;
	pthread_mutex_unlock(&fs->lock);
	if (ret < 0)
		return ret;

	fh = calloc(1, sizeof(*fh));
	if (!fh) {
		ret = -ENOMEM;
		goto fail;
	}
	pthread_mutex_init(&fh->lock, NULL);
	fh->node = n;
	klen = ret;
	ret = gs_get_open(fs->s, key, (size_t)klen, 0, &fh->r);
	if (ret == -ENOENT && fs->mirror) {
		ret = open_fill(fs, n, key, (size_t)klen, &fh->r);
		fh->fill = true;
	}
	if (ret < 0)
		goto fail;
	m = gs_reader_meta(fh->r);
	fh->size = m->size;
	if (!fh->fill) {
		fh->ring = ring_get(fs);
		if (!fh->ring) {
			ret = -ENOMEM;
			goto fail;
		}
		ret = gs_reader_attach(fh->r, &fh->ring->ring, NULL, NULL);
		if (ret < 0)
			goto fail;
	}

	pthread_mutex_lock(&fs->lock);
	if (fh->fill) {
		/* no version yet: the page cache starts afresh next time */
		fi->keep_cache = 0;
		n->cached_cas = 0;
	} else {
		bool mine = m->cas == n->cas && m->size == n->size;

		/*
		 * A rename may have taken the name from @n since the key was
		 * read: then @m is the new file's, which is fine to read, but
		 * not through @n's page cache, and not to describe @n.
		 */
		moved = moved || !n->attached;
		if (!mine && !n->writers && !moved) {
			/*
			 * Replaced behind our back (another front-end).  If
			 * readers hold the old version through @n's page
			 * cache, @n must keep describing it: the new one
			 * gets a node of its own, as for a rewrite.
			 */
			struct gfs_node *n2 = n->cached_readers
					      ? node_fork(fs, n) : n;

			if (n2 && n2 != n) {
				n2->rewrite_pending = false;
				n2->refs++;	/* fh's reference moves */
				n->refs--;
				fh->node = n2;
				n = n2;
				moved = true;	/* the open's inode is the old one */
			}
			if (n2) {
				n->size = m->size;
				n->mtime_ns = gfs_meta_mtime(fs, m);
				n->cas = m->cas;
			}
		}
		fh->cached = mine && !moved && !n->writers &&
			     !n->rewrite_pending;
		/*
		 * Big files go past the page cache too: filling it 4 KiB
		 * folio by folio halves a stream's speed here, and the
		 * store caches these bytes already.
		 */
		if (fs->o.direct_read && m->size >= fs->o.direct_read)
			fh->cached = false;
		if (fh->cached) {
			fi->keep_cache = n->cached_cas == m->cas;
			n->cached_cas = m->cas;
			n->cached_readers++;
		} else {
			fi->direct_io = 1;
		}
		if (fs->o.direct_read && m->size >= fs->o.direct_read) {
			/* reads come GFS_MAX_IO at a time, one after the
			 * other: keep several in flight while one is
			 * answered (1G read through the mount here, 3
			 * rounds: 2436-2510 MiB/s with 4 MiB, 2683-2771
			 * with 8, 2668-2689 with 16) */
			gs_reader_set_window(fh->r, 8 * GFS_MAX_IO);
		}
	}
	fh_link(fs, fh);
	pthread_mutex_unlock(&fs->lock);
	fi->noflush = 1;
	fi->fh = (uint64_t)(uintptr_t)fh;
	return 0;
fail:
	if (fh) {
		if (fh->r)
			gs_reader_close(fh->r);
		if (fh->ring)
			ring_put(fs, fh->ring);
		fh_free(fh);
	}
	pthread_mutex_lock(&fs->lock);
	n->refs--;
	ns_put(fs, n);
	pthread_mutex_unlock(&fs->lock);
	return ret;
}

/*
 * Start a writer on @n (counted by the caller in n->writers and n->refs)
 * under @key.  Fills @fi.  0 or -errno (the caller undoes the counts).
 */
static int open_writer(struct gfs *fs, struct gfs_node *n, const char *key,
		       size_t klen, struct fuse_file_info *fi)
{
	struct gfs_fh *fh;
	int err;

	fh = fh_writer(fs, n, key, klen, &err);
	if (!fh)
		return err;
	pthread_mutex_lock(&fs->lock);
	fh_link(fs, fh);
	pthread_mutex_unlock(&fs->lock);
	/* writes bypass the page cache: readers keep the old version's */
	fi->direct_io = 1;
	fi->fh = (uint64_t)(uintptr_t)fh;
	return 0;
}

static void gfs_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct gfs *fs = req_fs(req);
	char key[GFS_KEYBUF];
	struct gfs_node *n;
	int ret;

	pthread_mutex_lock(&fs->lock);
	n = node_of(fs, ino);
	if (n->dir) {
		pthread_mutex_unlock(&fs->lock);
		fuse_reply_err(req, EISDIR);
		return;
	}
	if ((fi->flags & O_ACCMODE) == O_RDONLY) {
		pthread_mutex_unlock(&fs->lock);
		ret = open_reader(fs, n, fi);
		if (ret < 0)
			fuse_reply_err(req, -ret);
		else
			fuse_reply_open(req, fi);
		return;
	}
	/*
	 * Writing: only a whole new version.  ESTALE makes the kernel look
	 * the name up again and retry the open once (do_filp_open), so the
	 * writer lands on the node that has the name now: after node_fork,
	 * or when a rename gave the name to another file meanwhile.
	 */
	if (fs->mirror)
		ret = -EROFS;
	else if (!(fi->flags & O_TRUNC))
		ret = -EPERM;
	else if (!n->attached && n->successor)
		ret = -ESTALE;
	else if (n->attached && n->cached_readers)
		ret = node_fork(fs, n) ? -ESTALE : -ENOMEM;
	else
		ret = ns_key(n, false, key);
	if (ret >= 0) {
		n->writers++;
		n->refs++;
		n->wsize = 0;
		n->rewrite_pending = false;
	}
	pthread_mutex_unlock(&fs->lock);
	if (ret >= 0 && (ret = open_writer(fs, n, key, (size_t)ret, fi)) < 0) {
		pthread_mutex_lock(&fs->lock);
		writer_undo(fs, n, false);
		pthread_mutex_unlock(&fs->lock);
	}
	if (ret < 0)
		fuse_reply_err(req, -ret);
	else
		fuse_reply_open(req, fi);
}

static void gfs_create(fuse_req_t req, fuse_ino_t parent, const char *name,
		       mode_t mode, struct fuse_file_info *fi)
{
	struct gfs *fs = req_fs(req);
	struct fuse_entry_param e;
	char key[GFS_KEYBUF];
	struct gfs_node *d, *n;
	size_t len = strlen(name);
	int ret;

	(void)mode;
	if (refuse_ro(req))
		return;
	pthread_mutex_lock(&fs->lock);
	d = node_of(fs, parent);
	if ((ret = ns_name_check(name, len)) < 0)
		goto fail;
	n = find_child(fs, d, name, len);
	if (n && n->dir)
		ret = -EISDIR;
	else if (n && (fi->flags & O_EXCL))
		ret = -EEXIST;
	else if (n && node_visible(n) && !(fi->flags & O_TRUNC))
		ret = -EPERM;
	else if (n && !n->committed && n->writers)
		ret = -EBUSY;	/* being created by someone else */
	if (ret < 0)
		goto fail;
	ret = ns_child_key(d, name, len, false, key);
	if (ret < 0)
		goto fail;
	if (n && n->cached_readers && !(n = node_fork(fs, n))) {
		ret = -ENOMEM;	/* the reply names the new node: no ESTALE */
		goto fail;
	}
	if (!n && !(n = ns_add(fs, d, name, len, false))) {
		ret = -ENOMEM;
		goto fail;
	}
	n->writers++;
	n->refs++;
	n->wsize = 0;
	n->rewrite_pending = false;
	node_entry(fs, n, &e);
	pthread_mutex_unlock(&fs->lock);

	ret = open_writer(fs, n, key, (size_t)ret, fi);
	if (ret < 0) {
		pthread_mutex_lock(&fs->lock);
		writer_undo(fs, n, true);
		pthread_mutex_unlock(&fs->lock);
		fuse_reply_err(req, -ret);
		return;
	}
	fuse_reply_create(req, &e, fi);
	return;
fail:
	pthread_mutex_unlock(&fs->lock);
	fuse_reply_err(req, -ret);
}

static void gfs_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		     struct fuse_file_info *fi)
{
	struct gfs_fh *fh = (struct gfs_fh *)(uintptr_t)fi->fh;
	uint8_t *buf = thread_buf();
	const uint8_t *view = NULL, *out = buf;
	ssize_t n;

	(void)ino;
	if (fh->writing) {
		fuse_reply_err(req, EBADF);
		return;
	}
	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	if (size > GFS_MAX_IO)
		size = GFS_MAX_IO;
	pthread_mutex_lock(&fh->lock);
	if (fh->fill)	/* waits for the origin's bytes */
		n = gs_read(fh->r, buf, size, (uint64_t)off);
	else if ((n = fh_view(fh, size, (uint64_t)off, &view)) > 0)
		out = view;
	else if (n == 0)
		n = fh_read(fh, buf, size, (uint64_t)off);
	if (n == -ECANCELED)
		n = -EIO;	/* the origin transfer failed */
	if (n < 0)
		fuse_reply_err(req, (int)-n);
	else
		fuse_reply_buf(req, (const char *)out, (size_t)n);
	/* the reply is out: now let the queued read-ahead go */
	if (fh->ring)
		io_uring_submit(&fh->ring->ring);
	pthread_mutex_unlock(&fh->lock);
}

/*
 * Publish what @fh has written: commit its put as the version of the file
 * under the name the file has now, and show that version in the tree.
 * Returns 0, 1 when the file has no name any more (unlinked, or replaced
 * by a rename, while being written: it is never committed, and the put is
 * left for release to abort), or -errno when the commit failed (the put is
 * gone).  Called with fh->lock held.
 */
static int fh_commit(struct gfs *fs, struct gfs_fh *fh)
{
	struct gfs_node *n = fh->node;
	char key[GFS_KEYBUF];
	struct gs_meta *m;
	int klen, ret;

	pthread_mutex_lock(&fs->lock);
	klen = ns_key(n, false, key);	/* where the file is now */
	pthread_mutex_unlock(&fs->lock);
	if (klen < 0)
		return 1;
	m = malloc(sizeof(*m));
	if (!m) {
		writer_call(fs, fh, WRITER_ABORT, NULL, 0);
		return -ENOMEM;
	}
	ret = writer_call(fs, fh, WRITER_COMMIT, NULL, 0);
	if (ret == 0 && ((size_t)klen != fh->klen ||
			 memcmp(key, fh->key, fh->klen))) {
		/* renamed while being written */
		char *nk = malloc((size_t)klen + 1);

		ret = nk ? gs_rename(fs->s, fh->key, fh->klen, key,
				     (size_t)klen)
			 : -ENOMEM;
		if (ret < 0) {
			gs_delete(fs->s, fh->key, fh->klen);
			free(nk);
		} else {
			/* writes after this commit go on under the new key */
			memcpy(nk, key, (size_t)klen + 1);
			free(fh->key);
			fh->key = nk;
			fh->klen = (size_t)klen;
		}
	}
	if (ret == 0)
		ret = gs_stat(fs->s, key, (size_t)klen, m);
	if (ret < 0) {
		fprintf(stderr, "goblinfs: cannot commit '%s': %s\n", key,
			gs_strerror(ret));
	} else {
		pthread_mutex_lock(&fs->lock);
		if (n->attached) {
			n->committed = true;
			n->size = m->size;
			n->mtime_ns = m->mtime_ns;
			n->cas = m->cas;
		}
		pthread_mutex_unlock(&fs->lock);
	}
	free(m);
	return ret;
}

/*
 * A write after a close committed this handle's bytes (a dup()ed
 * descriptor or a shell's redirection writes on): a new put that starts
 * with the version that close committed, so that the next close commits
 * all of it.  That version must still be the one under the key: if it was
 * replaced or deleted meanwhile, the write fails with EIO rather than
 * bring it back.  Called with fh->lock held.
 */
static int writer_reopen(struct gfs *fs, struct gfs_fh *fh)
{
	struct gs_reader *r = NULL;
	uint8_t *buf = thread_buf();
	uint64_t off = 0;
	int ret;

	if (!buf)
		return -ENOMEM;
	ret = writer_call(fs, fh, WRITER_BEGIN, NULL, 0);
	if (ret < 0 || fh->written == 0)
		return ret;
	ret = gs_get_open(fs->s, fh->key, fh->klen, 0, &r);
	if (ret == 0 && (gs_reader_meta(r)->cas != fh->cas ||
			 gs_reader_meta(r)->size != fh->written))
		ret = -EIO;
	while (ret == 0 && off < fh->written) {
		uint64_t left = fh->written - off;
		ssize_t got = gs_read(r, buf, left < GFS_MAX_IO ? left
							 : GFS_MAX_IO, off);

		if (got <= 0)
			ret = got < 0 ? (int)got : -EIO;
		else if ((ret = writer_call(fs, fh, WRITER_WRITE, buf,
					    (size_t)got)) == 0)
			off += (uint64_t)got;
	}
	if (r)
		gs_reader_close(r);
	if (ret < 0) {
		writer_call(fs, fh, WRITER_ABORT, NULL, 0);
		return ret == -ENOENT ? -EIO : ret;
	}
	return 0;
}

static void gfs_write(fuse_req_t req, fuse_ino_t ino, const char *buf,
		      size_t size, off_t off, struct fuse_file_info *fi)
{
	struct gfs *fs = req_fs(req);
	struct gfs_fh *fh = (struct gfs_fh *)(uintptr_t)fi->fh;
	int ret = 0;

	(void)ino;
	if (!fh->writing) {
		fuse_reply_err(req, EBADF);
		return;
	}
	pthread_mutex_lock(&fh->lock);
	if (fh->werr)
		ret = fh->werr;
	else if ((uint64_t)off != fh->written)
		ret = -ESPIPE;	/* objects are written front to back */
	else if (!fh->w)
		ret = writer_reopen(fs, fh);
	if (ret == 0)
		ret = writer_call(fs, fh, WRITER_WRITE, buf, size);
	if (ret == 0)
		fh->written += size;
	else if (ret != -ESPIPE)
		fh->werr = ret;
	pthread_mutex_lock(&fs->lock);
	fh->node->wsize = fh->written;
	if (fh->flushed) {	/* a dup()ed descriptor writes on */
		fh->flushed = false;
		fh->node->closing--;
		pthread_cond_broadcast(&fs->commit_cond);
	}
	pthread_mutex_unlock(&fs->lock);
	pthread_mutex_unlock(&fh->lock);
	if (ret < 0)
		fuse_reply_err(req, -ret);
	else
		fuse_reply_write(req, size);
}

/*
 * flush: every close(2) of a descriptor of the file, dup()ed ones too.
 * The commit happens here, before close returns to the writer, and not at
 * release, which the kernel sends later and without waiting: so a file
 * whose close returned is committed (visible to every open, stat and
 * rename, and journalled: it survives a kill -9 of goblinfs), and close
 * reports a failed commit.
 *
 * There can be more than one flush per handle: each close of a dup()ed
 * descriptor, of a descriptor a child inherited, or a shell that opens the
 * file, dup2()s it to 1 and closes the original before the program
 * writes.  A flush cannot tell the last close from the others, so each
 * one commits what was written so far, and a flush with nothing new since
 * the last commit does nothing.  Writes after a flush go on: writer_reopen
 * begins a new put with the committed bytes, and the next flush commits
 * the longer version.
 *
 * Except a flush of a handle that has written nothing at all: that is the
 * shell's redirection far more often than an empty file, and committing
 * it would replace the file with an empty one (or show a new one, empty)
 * while the program runs.  It is left to release, as writes that come
 * after the last flush (through a reference that is no descriptor, e.g.
 * an io_uring with the file registered) are; meanwhile opens, stats and
 * renames of the file wait for it (wait_commit).  So an empty file is the
 * one whose close does not make it durable at once.
 */
static void gfs_flush(fuse_req_t req, fuse_ino_t ino,
		      struct fuse_file_info *fi)
{
	struct gfs *fs = req_fs(req);
	struct gfs_fh *fh = (struct gfs_fh *)(uintptr_t)fi->fh;
	int ret = 0;

	(void)ino;
	if (fh->writing) {
		pthread_mutex_lock(&fh->lock);
		ret = fh->werr;
		if (!ret && fh->w && fh->written == 0 && !fh->cas) {
			pthread_mutex_lock(&fs->lock);
			if (!fh->flushed) {
				fh->flushed = true;
				fh->node->closing++;
			}
			pthread_mutex_unlock(&fs->lock);
		} else if (!ret && fh->w) {
			ret = fh_commit(fs, fh);
			if (ret < 0)
				fh->werr = ret;
			else
				ret = 0;
		}
		pthread_mutex_unlock(&fh->lock);
	}
	fuse_reply_err(req, -ret);
}

/*
 * The last close of a writer: commit what no flush committed (or abort),
 * then let go of the node.
 */
static void release_writer(struct gfs *fs, struct gfs_fh *fh)
{
	struct gfs_node *n = fh->node;
	char gone[GFS_NAME_MAX + 1];
	fuse_ino_t gone_parent = 0, ino;
	size_t gone_len = 0;

	if (fh->w) {
		int ret = fh->werr ? fh->werr : fh_commit(fs, fh);

		if (ret != 0 && fh->w)
			writer_call(fs, fh, WRITER_ABORT, NULL, 0);
	}

	/*
	 * The kernel may hold a size for the file that no version has: the
	 * O_TRUNC open and the writes set it, and a getattr answered before
	 * the commit may land after it.  Invalidating its attributes bumps
	 * their version, so that no answer to an earlier request is taken
	 * any more, and makes the next read ask again.  Before the writer
	 * count drops: until it does, readers stay off the page cache.
	 */
	pthread_mutex_lock(&fs->lock);
	ino = n->attached && n->committed ? ino_of(fs, n) : 0;
	pthread_mutex_unlock(&fs->lock);
	if (ino)
		fuse_lowlevel_notify_inval_inode(fs->se, ino, -1, 0);

	pthread_mutex_lock(&fs->lock);
	if (fh->flushed)
		n->closing--;
	n->writers--;
	n->refs--;
	if (!n->committed && !n->writers && n->attached) {
		struct gfs_node *d = n->parent;

		/* a new file that failed: the kernel forgets the name too */
		gone_parent = ino_of(fs, d);
		gone_len = n->namelen;
		memcpy(gone, n->name, gone_len);
		ns_detach(fs, n);
		keep_dir(fs, d);
	} else {
		ns_put(fs, n);
	}
	pthread_cond_broadcast(&fs->commit_cond);
	pthread_mutex_unlock(&fs->lock);
	if (gone_len)
		fuse_lowlevel_notify_inval_entry(fs->se, gone_parent, gone,
						 gone_len);
}

static void release_reader(struct gfs *fs, struct gfs_fh *fh)
{
	struct gfs_node *n = fh->node;

	/* nothing may be in flight on the ring when it goes back */
	if (fh->ring)
		fh_seek(fh, fh->size);
	gs_reader_close(fh->r);
	if (fh->ring)
		ring_put(fs, fh->ring);
	pthread_mutex_lock(&fs->lock);
	if (fh->cached) {
		assert(n->cached_readers > 0);
		n->cached_readers--;
	}
	n->refs--;
	ns_put(fs, n);
	pthread_mutex_unlock(&fs->lock);
}

static void gfs_release(fuse_req_t req, fuse_ino_t ino,
			struct fuse_file_info *fi)
{
	struct gfs *fs = req_fs(req);
	struct gfs_fh *fh = (struct gfs_fh *)(uintptr_t)fi->fh;

	(void)ino;
	pthread_mutex_lock(&fs->lock);
	fh_unlink(fs, fh);
	pthread_mutex_unlock(&fs->lock);
	/*
	 * A read replies before it lets go of fh (it submits the read-ahead
	 * after the reply): the kernel may send release in between.
	 */
	pthread_mutex_lock(&fh->lock);
	if (fh->writing)
		release_writer(fs, fh);
	else
		release_reader(fs, fh);
	pthread_mutex_unlock(&fh->lock);
	fh_free(fh);
	fuse_reply_err(req, 0);
}

/* Durability comes with the commit at close (flush), and --sync. */
static void gfs_fsync(fuse_req_t req, fuse_ino_t ino, int datasync,
		      struct fuse_file_info *fi)
{
	struct gfs_fh *fh = (struct gfs_fh *)(uintptr_t)fi->fh;

	(void)ino;
	(void)datasync;
	fuse_reply_err(req, fh->writing && fh->werr ? -fh->werr : 0);
}

static void gfs_opendir(fuse_req_t req, fuse_ino_t ino,
			struct fuse_file_info *fi)
{
	struct gfs *fs = req_fs(req);
	bool dir;

	pthread_mutex_lock(&fs->lock);
	dir = node_of(fs, ino)->dir;
	pthread_mutex_unlock(&fs->lock);
	if (!dir)
		fuse_reply_err(req, ENOTDIR);
	else
		fuse_reply_open(req, fi);
}

static void do_readdir(fuse_req_t req, fuse_ino_t ino, size_t size,
		       off_t off, bool plus)
{
	struct gfs *fs = req_fs(req);
	char *buf = thread_buf();
	struct gfs_node *d, *k;
	size_t used = 0;

	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	if (size > GFS_MAX_IO)
		size = GFS_MAX_IO;
	pthread_mutex_lock(&fs->lock);
	d = node_of(fs, ino);
	for (int i = 1; i <= 2; i++) {	/* "." and ".." */
		struct fuse_entry_param e;
		const char *nm = i == 1 ? "." : "..";
		size_t sz;

		if (off >= i)
			continue;
		memset(&e, 0, sizeof(e));
		e.attr.st_ino = i == 1 || !d->parent ? d->id : d->parent->id;
		e.attr.st_mode = S_IFDIR;
		sz = plus ? fuse_add_direntry_plus(req, buf + used,
						   size - used, nm, &e, i)
			  : fuse_add_direntry(req, buf + used, size - used,
					      nm, &e.attr, i);
		if (sz > size - used)
			goto done;
		used += sz;
	}
	for (k = d->kids; k; k = k->next) {
		struct fuse_entry_param e;
		size_t sz;

		if ((uint64_t)off >= k->cookie || !node_visible(k))
			continue;
		if (plus) {
			node_entry(fs, k, &e);
			sz = fuse_add_direntry_plus(req, buf + used,
						    size - used, k->name, &e,
						    (off_t)k->cookie);
			if (sz > size - used) {
				k->nlookup--;	/* not sent */
				break;
			}
		} else {
			memset(&e, 0, sizeof(e));
			e.attr.st_ino = k->id;
			e.attr.st_mode = k->dir ? S_IFDIR : S_IFREG;
			sz = fuse_add_direntry(req, buf + used, size - used,
					       k->name, &e.attr,
					       (off_t)k->cookie);
			if (sz > size - used)
				break;
		}
		used += sz;
	}
done:
	pthread_mutex_unlock(&fs->lock);
	fuse_reply_buf(req, buf, used);
}

static void gfs_readdir(fuse_req_t req, fuse_ino_t ino, size_t size,
			off_t off, struct fuse_file_info *fi)
{
	(void)fi;
	do_readdir(req, ino, size, off, false);
}

static void gfs_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size,
			    off_t off, struct fuse_file_info *fi)
{
	(void)fi;
	do_readdir(req, ino, size, off, true);
}

static void gfs_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct gfs *fs = req_fs(req);
	struct gs_stats st;
	struct statvfs sv;
	uint64_t freeb;

	(void)ino;
	gs_stats_get(fs->s, &st);
	memset(&sv, 0, sizeof(sv));
	sv.f_bsize = 4096;
	sv.f_frsize = 4096;
	/* both disk tiers: big files live on the HDD, the rest on the SSD */
	freeb = (st.ssd_capacity > st.ssd_used ? st.ssd_capacity - st.ssd_used
					       : 0) +
		(st.hdd_capacity > st.hdd_used ? st.hdd_capacity - st.hdd_used
					       : 0);
	sv.f_blocks = (st.ssd_capacity + st.hdd_capacity) / 4096;
	sv.f_bfree = freeb / 4096;
	sv.f_bavail = sv.f_bfree;
	pthread_mutex_lock(&fs->lock);
	sv.f_files = fs->hcount + 1;
	pthread_mutex_unlock(&fs->lock);
	sv.f_ffree = UINT32_MAX;
	sv.f_favail = sv.f_ffree;
	sv.f_namemax = GFS_NAME_MAX;
	fuse_reply_statfs(req, &sv);
}

/* "ram=N ssd=N hdd=N small=N": bytes of the file on each tier. */
static int tiers_string(struct gfs *fs, fuse_ino_t ino, char *out,
			size_t outlen)
{
	char key[GFS_KEYBUF];
	struct gs_range rg[64];
	uint64_t by[4] = {0};
	struct gfs_node *n;
	int klen, nr;

	pthread_mutex_lock(&fs->lock);
	n = node_of(fs, ino);
	klen = n->dir ? -ENODATA : !n->committed ? -ENODATA
						  : ns_key(n, false, key);
	pthread_mutex_unlock(&fs->lock);
	if (klen < 0)
		return klen == -ENOENT ? -ENODATA : klen;
	nr = gs_inspect(fs->s, key, (size_t)klen, rg, 64);
	if (nr > 64) {	/* many extents: ask again with room for all */
		struct gs_range *all = malloc((size_t)nr * sizeof(*all));

		if (!all)
			return -ENOMEM;
		nr = gs_inspect(fs->s, key, (size_t)klen, all, nr);
		for (int i = 0; i < nr; i++)
			if ((unsigned)all[i].tier < 4)
				by[all[i].tier] += all[i].len;
		free(all);
		nr = nr < 0 ? nr : 0;
	}
	if (nr < 0)
		return nr == -ENOENT ? -ENODATA : nr;
	for (int i = 0; i < nr; i++)
		if ((unsigned)rg[i].tier < 4)
			by[rg[i].tier] += rg[i].len;
	return snprintf(out, outlen,
			"ram=%" PRIu64 " ssd=%" PRIu64 " hdd=%" PRIu64
			" small=%" PRIu64,
			by[GS_TIER_RAM], by[GS_TIER_SSD], by[GS_TIER_HDD],
			by[GS_TIER_SMALL]);
}

/* "heads=N gets=N bytes=N failures=N": the origin requests so far. */
static int origin_string(struct gfs *fs, fuse_ino_t ino, char *out,
			 size_t outlen)
{
	struct mirror_stats st;

	if (!fs->mirror || ino != FUSE_ROOT_ID)
		return -ENODATA;
	mirror_stats_get(fs->mirror, &st);
	return snprintf(out, outlen,
			"heads=%" PRIu64 " gets=%" PRIu64 " bytes=%" PRIu64
			" failures=%" PRIu64,
			st.heads, st.gets, st.bytes, st.failures);
}

static void gfs_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
			 size_t size)
{
	struct gfs *fs = req_fs(req);
	char val[160];
	int len;

	if (!strcmp(name, XATTR_TIERS))
		len = tiers_string(fs, ino, val, sizeof(val));
	else if (!strcmp(name, XATTR_ORIGIN))
		len = origin_string(fs, ino, val, sizeof(val));
	else
		len = -ENODATA;
	if (len < 0)
		fuse_reply_err(req, -len);
	else if (size == 0)
		fuse_reply_xattr(req, (size_t)len);
	else if (size < (size_t)len)
		fuse_reply_err(req, ERANGE);
	else
		fuse_reply_buf(req, val, (size_t)len);
}

static void gfs_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	struct gfs *fs = req_fs(req);
	const char *names = XATTR_TIERS;
	size_t len = sizeof(XATTR_TIERS);	/* with its NUL */
	bool file;

	pthread_mutex_lock(&fs->lock);
	file = !node_of(fs, ino)->dir;
	pthread_mutex_unlock(&fs->lock);
	if (!file && fs->mirror && ino == FUSE_ROOT_ID) {
		names = XATTR_ORIGIN;
		len = sizeof(XATTR_ORIGIN);
	} else if (!file) {
		len = 0;
	}
	if (size == 0)
		fuse_reply_xattr(req, len);
	else if (size < len)
		fuse_reply_err(req, ERANGE);
	else
		fuse_reply_buf(req, names, len);
}

static void gfs_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
			 const char *value, size_t size, int flags)
{
	(void)ino;
	(void)name;
	(void)value;
	(void)size;
	(void)flags;
	if (refuse_ro(req))
		return;
	fuse_reply_err(req, ENOTSUP);
}

static void gfs_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	(void)ino;
	(void)name;
	if (refuse_ro(req))
		return;
	fuse_reply_err(req, ENOTSUP);
}

static const struct fuse_lowlevel_ops gfs_ops = {
	.init = gfs_init,
	.lookup = gfs_lookup,
	.forget = gfs_forget,
	.forget_multi = gfs_forget_multi,
	.getattr = gfs_getattr,
	.setattr = gfs_setattr,
	.mkdir = gfs_mkdir,
	.rmdir = gfs_rmdir,
	.unlink = gfs_unlink,
	.rename = gfs_rename,
	.link = gfs_link,
	.symlink = gfs_symlink,
	.mknod = gfs_mknod,
	.open = gfs_open,
	.create = gfs_create,
	.read = gfs_read,
	.write = gfs_write,
	.flush = gfs_flush,
	.release = gfs_release,
	.fsync = gfs_fsync,
	.opendir = gfs_opendir,
	.readdir = gfs_readdir,
	.readdirplus = gfs_readdirplus,
	.statfs = gfs_statfs,
	.getxattr = gfs_getxattr,
	.listxattr = gfs_listxattr,
	.setxattr = gfs_setxattr,
	.removexattr = gfs_removexattr,
};

/* ---- lifecycle ---- */

/* ---- objects the store drops: out of the tree, and out of the kernel ---- */

struct gfs_drop {
	struct gfs_drop *next;
	size_t klen;
	char key[];
};

/* The store's drop hook: the store is locked, so only queue the key. */
static void on_store_drop(void *arg, const void *key, size_t klen)
{
	struct gfs *fs = arg;
	struct gfs_drop *d = malloc(sizeof(*d) + klen + 1);

	if (!d)
		return;	/* the name stays until a lookup finds it gone */
	memcpy(d->key, key, klen);
	d->key[klen] = '\0';
	d->klen = klen;
	pthread_mutex_lock(&fs->drop_lock);
	d->next = fs->drops;
	fs->drops = d;
	pthread_cond_signal(&fs->drop_cond);
	pthread_mutex_unlock(&fs->drop_lock);
}

/* The file node of @key, if the tree has one.  Called with fs->lock held. */
static struct gfs_node *node_of_key(struct gfs *fs, const char *key,
				    size_t klen)
{
	struct gfs_node *n = fs->root;
	const char *p = key, *end = key + klen;

	while (n && p < end) {
		const char *slash = memchr(p, '/', (size_t)(end - p));
		size_t len = slash ? (size_t)(slash - p) : (size_t)(end - p);

		n = ns_child(fs, n, p, len);
		p += len + 1;
		if (slash && slash + 1 == end)
			return NULL;	/* a directory marker */
	}
	return n && n != fs->root && !n->dir ? n : NULL;
}

/* Take a dropped key's file out of the tree and the kernel's name cache. */
static void drop_one(struct gfs *fs, const struct gfs_drop *d)
{
	struct gs_meta *m = malloc(sizeof(*m));
	struct gfs_node *n;
	fuse_ino_t parent = 0;
	char name[GFS_NAME_MAX + 1];
	size_t len = 0;

	if (!m)
		return;
	pthread_mutex_lock(&fs->lock);	/* commits take it too: no race */
	n = node_of_key(fs, d->key, d->klen);
	/* a new version may have come since: then the name stays */
	if (n && n->committed && !n->writers && n->attached &&
	    n->namelen <= GFS_NAME_MAX &&
	    gs_stat(fs->s, d->key, d->klen, m) == -ENOENT) {
		parent = ino_of(fs, n->parent);
		len = n->namelen;
		memcpy(name, n->name, len);
		ns_detach(fs, n);
	}
	pthread_mutex_unlock(&fs->lock);
	free(m);
	if (len && fs->se)
		fuse_lowlevel_notify_inval_entry(fs->se, parent, name, len);
}

static void *drop_main(void *arg)
{
	struct gfs *fs = arg;

	pthread_mutex_lock(&fs->drop_lock);
	for (;;) {
		struct gfs_drop *d = fs->drops;

		if (!d) {
			if (fs->drop_stop)
				break;
			pthread_cond_wait(&fs->drop_cond, &fs->drop_lock);
			continue;
		}
		fs->drops = d->next;
		pthread_mutex_unlock(&fs->drop_lock);
		drop_one(fs, d);
		free(d);
		pthread_mutex_lock(&fs->drop_lock);
	}
	pthread_mutex_unlock(&fs->drop_lock);
	return NULL;
}

/* Stop listening to the store and finish the queue (before unmount). */
static void drops_stop(struct gfs *fs)
{
	if (!fs->drop_running)
		return;
	gs_set_drop_hook(fs->s, NULL, NULL);
	pthread_mutex_lock(&fs->drop_lock);
	fs->drop_stop = true;
	pthread_cond_signal(&fs->drop_cond);
	pthread_mutex_unlock(&fs->drop_lock);
	pthread_join(fs->drop_thread, NULL);
	fs->drop_running = false;
}

void gfs_options_init(struct gfs_options *o)
{
	memset(o, 0, sizeof(*o));
	o->max_threads = 16;
	o->entry_timeout = 1.0;
	o->attr_timeout = 1.0;
	o->commit_wait = 2.0;
	o->negative_timeout = -1.0;
	o->direct_read = 64ull << 20;
}

struct gfs *gfs_new(struct gs_store *s, const struct gfs_options *o,
		    char *err, size_t errlen)
{
	struct gfs *fs = calloc(1, sizeof(*fs));
	const char *why = NULL;
	char mwhy[256];
	int ret;

	if (!fs) {
		why = "out of memory";
		goto fail;
	}
	fs->s = s;
	if (o)
		fs->o = *o;
	else
		gfs_options_init(&fs->o);
	if (!fs->o.max_threads)
		fs->o.max_threads = 1;
	fs->uid = getuid();
	fs->gid = getgid();
	fs->start_ns = now_real_ns();
	if (fs->o.negative_timeout < 0)
		fs->o.negative_timeout = fs->o.mirror ? 5.0
						      : fs->o.entry_timeout;
	pthread_mutex_init(&fs->lock, NULL);
	pthread_mutex_init(&fs->ring_lock, NULL);
	pthread_mutex_init(&fs->fetch_lock, NULL);
	pthread_mutex_init(&fs->drop_lock, NULL);
	pthread_cond_init(&fs->commit_cond, NULL);
	pthread_cond_init(&fs->drop_cond, NULL);
	if (fs->o.mirror &&
	    !(fs->mirror = mirror_new(fs->o.mirror, mwhy, sizeof(mwhy)))) {
		why = mwhy;
		goto fail;
	}
	if (fs->mirror && !(fs->absent = calloc(GFS_ABSENT_SLOTS,
						sizeof(*fs->absent)))) {
		why = "out of memory";
		goto fail;
	}
	if (ns_init(fs) < 0) {
		why = "out of memory";
		goto fail;
	}
	ret = ns_load(fs);
	if (ret < 0) {
		why = gs_strerror(ret);
		goto fail;
	}
	if (pthread_create(&fs->drop_thread, NULL, drop_main, fs) == 0) {
		fs->drop_running = true;
		gs_set_drop_hook(s, on_store_drop, fs);
	}
	if (fs->skipped || fs->shadowed)
		fprintf(stderr,
			"goblinfs: %" PRIu64 " keys are no path and %" PRIu64
			" files are hidden by a directory of the same name\n",
			fs->skipped, fs->shadowed);
	return fs;
fail:
	if (err && errlen)
		snprintf(err, errlen, "%s", why);
	if (fs)
		gfs_free(fs);
	return NULL;
}

int gfs_mount(struct gfs *fs, const char *mountpoint, struct fuse_args *args)
{
	fs->se = fuse_session_new(args, &gfs_ops, sizeof(gfs_ops), fs);
	if (!fs->se)
		return -1;
	if (fuse_set_signal_handlers(fs->se) < 0)
		goto fail;
	if (fuse_session_mount(fs->se, mountpoint) < 0) {
		fuse_remove_signal_handlers(fs->se);
		goto fail;
	}
	fs->mounted = true;
	return 0;
fail:
	fuse_session_destroy(fs->se);
	fs->se = NULL;
	return -1;
}

int gfs_loop(struct gfs *fs)
{
	struct fuse_loop_config *cfg = fuse_loop_cfg_create();
	int ret;

	if (!cfg)
		return -ENOMEM;
	fuse_loop_cfg_set_max_threads(cfg, fs->o.max_threads);
	/* idle threads stay: a thread per request costs more than the read */
	fuse_loop_cfg_set_idle_threads(cfg, fs->o.max_threads);
	fuse_loop_cfg_set_clone_fd(cfg, 0);
	ret = fuse_session_loop_mt(fs->se, cfg);
	fuse_loop_cfg_destroy(cfg);
	return ret > 0 ? 0 : ret;	/* > 0: ended by a signal */
}

void gfs_exit(struct gfs *fs)
{
	if (fs->se)
		fuse_session_exit(fs->se);
}

void gfs_unmount(struct gfs *fs)
{
	drops_stop(fs);	/* it uses the session */
	if (!fs->se)
		return;
	fuse_remove_signal_handlers(fs->se);
	if (fs->mounted)
		fuse_session_unmount(fs->se);
	fs->mounted = false;
	fuse_session_destroy(fs->se);
	fs->se = NULL;
}

void gfs_free(struct gfs *fs)
{
	struct gfs_ring *rg;

	if (!fs)
		return;
	drops_stop(fs);
	/* files the kernel never released (a lazy unmount, a signal) */
	while (fs->open_fhs) {
		struct gfs_fh *fh = fs->open_fhs;

		fh_unlink(fs, fh);
		if (fh->writing) {
			if (fh->w)	/* what no close committed */
				writer_call(fs, fh, WRITER_ABORT, NULL, 0);
		} else {
			if (fh->ring)
				fh_seek(fh, fh->size);
			gs_reader_close(fh->r);
			if (fh->ring)
				ring_put(fs, fh->ring);
		}
		fh_free(fh);
	}
	/* after the readers: a fill nobody reads is aborted, not waited for */
	mirror_free(fs->mirror);
	free(fs->absent);
	while ((rg = fs->ring_free)) {
		fs->ring_free = rg->next;
		io_uring_queue_exit(&rg->ring);
		free(rg);
	}
	ns_release(fs);
	pthread_mutex_destroy(&fs->lock);
	pthread_mutex_destroy(&fs->ring_lock);
	pthread_mutex_destroy(&fs->fetch_lock);
	pthread_mutex_destroy(&fs->drop_lock);
	pthread_cond_destroy(&fs->commit_cond);
	pthread_cond_destroy(&fs->drop_cond);
	while (fs->drops) {
		struct gfs_drop *d = fs->drops;

		fs->drops = d->next;
		free(d);
	}
	free(fs);
}
