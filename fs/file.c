/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Files: open and create, the page-cache rules of an open, writers (a
 * store put of unknown size per open, committed at flush under the name
 * the file has then), release, and the file handles of a filesystem.
 * Reads themselves are in read.c.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

/* The calls on a store writer (any thread may make them). */
enum writer_op {
	WRITER_BEGIN,
	WRITER_APPEND, /* begin on the committed version fh->cas */
	WRITER_WRITE,
	WRITER_COMMIT,
	WRITER_ABORT
};

/* ---- writers ---- */

/* Run @op on @fh's store writer.  Called with fh->lock held (or alone). */
static int writer_call(struct gfs *fs, struct gfs_fh *fh, enum writer_op op,
		       const void *buf, size_t len)
{
	/* appendable: the next append need not read the file to hash it */
	struct gs_put_args a = { .appendable = true };
	uint8_t rec[GFS_META_REC];
	long rl;
	int ret = 0;

	if (op == WRITER_BEGIN || op == WRITER_APPEND) {
		/* the file's mode, owner and kind go with every version */
		rl = meta_record_unlocked(fs, fh->node, rec, sizeof(rec));
		if (rl < 0)
			return (int)rl;
		a.attr = rec;
		a.attr_len = (size_t)rl;
	}
	switch (op) {
	case WRITER_BEGIN:
		a.size = GS_SIZE_UNKNOWN;
		a.mode = GS_SET;
		ret = gs_put_begin(fs->s, fh->key, fh->klen, &a, &fh->w);
		break;
	case WRITER_APPEND:
		a.mode = GS_SET;
		ret = gs_put_begin_append(fs->s, fh->key, fh->klen, fh->cas, &a,
					  &fh->w);
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
	if (fh->stage >= 0)
		close(fh->stage);
	pthread_mutex_destroy(&fh->lock);
	free(fh->key);
	free(fh);
}

/*
 * Begin a put of @key for @n (whose writers count already includes this
 * handle), or with @base (an open without O_TRUNC) a handle on that
 * committed version, which its first write appends to or copies (issue
 * 20).  Returns the handle or NULL with *err set.
 */
static struct gfs_fh *fh_writer(struct gfs *fs, struct gfs_node *n,
				const char *key, size_t klen,
				const struct gs_meta *base, int *err)
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
	fh->stage = -1;
	if (base) {
		/* as after a commit: the next write begins the put */
		fh->written = base->size;
		fh->cas = base->cas;
		*err = 0;
		return fh;
	}
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

/*
 * How reader @fh, which pins version @m of its node, uses the kernel's
 * page cache; fills @fi.  May give the node's name to a node of its own
 * (fh->node then is that one).  Called with fs->lock held.
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
static void reader_cache(struct gfs *fs, struct gfs_fh *fh,
			 const struct gs_meta *m, bool moved,
			 struct fuse_file_info *fi)
{
	struct gfs_node *n = fh->node;
	bool mine = m->cas == n->cas && m->size == n->size;

	/*
	 * A rename may have taken the name from @n since the key was
	 * read: then @m is the new file's, which is fine to read, but
	 * not through @n's page cache, and not to describe @n.
	 */
	moved = moved || !n->attached;
	if (!mine && !n->writers && !moved && m->cas > n->cas) {
		/*
		 * Replaced behind our back (another front-end), by a
		 * version newer than the node shows (an older one is
		 * what this open pinned before the change hook showed
		 * the next: it is read direct, and the node stays).  If
		 * readers hold the old version through @n's page
		 * cache, @n must keep describing it: the new one
		 * gets a node of its own, as for a rewrite.
		 */
		struct gfs_node *n2 = n->cached_readers ? node_fork(fs, n) : n;

		if (n2 && n2 != n) {
			n2->rewrite_pending = false;
			n2->refs++; /* fh's reference moves */
			n->refs--;
			fh->node = n2;
			n = n2;
			moved = true; /* the open's inode is the old one */
		}
		if (n2) {
			n->size = m->size;
			n->mtime_ns = gfs_meta_mtime(fs, m);
			n->cas = m->cas;
		}
	}
	fh->cached = mine && !moved && !n->writers && !n->rewrite_pending;
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

/*
 * --mirror: reader @fh is on the fill of a new version the origin sent
 * when the version @n showed was stale (open_revalidate), or gone from
 * the store (open_fill).  Its size may
 * differ from the one the kernel has for the inode, and readers of the
 * old version may be reading it through the inode's page cache: so this
 * reader reads direct (stopping at its version's end whatever size the
 * kernel believes), and when such readers are there the name goes to a
 * node of its own (as for a rewrite, node_fork) so that their inode keeps
 * describing their version.  The node takes the new size and mtime; its
 * cas is learnt at the next open, after the fill's commit.  Called with
 * fs->lock held.
 */
static void reader_refetched(struct gfs *fs, struct gfs_fh *fh,
			     const struct gs_meta *m, bool moved,
			     struct fuse_file_info *fi)
{
	struct gfs_node *n = fh->node;

	if (!moved && n->attached && n->cached_readers) {
		struct gfs_node *n2 = node_fork(fs, n);

		if (n2) {
			n2->rewrite_pending = false;
			n2->refs++; /* fh's reference moves */
			n->refs--;
			fh->node = n = n2;
		}
	}
	if (m->size != GS_SIZE_UNKNOWN)
		n->size = m->size;
	n->mtime_ns = gfs_meta_mtime(fs, m);
	n->cas = 0;
	n->cached_cas = 0; /* the old version's pages: not to be kept */
	fi->direct_io = 1;
}

/*
 * Open @n for reading; fills @fi.  0 or -errno.  The page-cache rules
 * are reader_cache's.
 */
static int open_reader(struct gfs *fs, struct gfs_node *n,
		       struct fuse_file_info *fi)
{
	char key[GFS_KEYBUF];
	const struct gs_meta *m;
	struct gfs_fh *fh;
	bool moved, refetched = false;
	fuse_ino_t ino = 0;
	int ret, klen;

	pthread_mutex_lock(&fs->lock);
	wait_commit(fs, n);
	moved = !n->attached && n->successor;
	n = node_current(n);
	if (!n->committed)
		ret = -ENOENT; /* only being created: not there yet */
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
	fh->stage = -1;
	klen = ret;
	ret = gs_get_open(fs->s, key, (size_t)klen, 0, &fh->r);
	if (ret == 0 && fs->mirror) {
		ret = open_revalidate(fs, key, (size_t)klen, &fh->r);
		refetched = fh->fill = ret == 1;
	} else if (ret == -ENOENT && fs->mirror) {
		ret = open_fill(fs, key, (size_t)klen, &fh->r);
		fh->fill = true;
	}
	if (ret < 0)
		goto fail;
	m = gs_reader_meta(fh->r);
	fh->size = m->size;
	if (!fh->fill && (ret = fh_ring_attach(fs, fh)) < 0)
		goto fail;

	pthread_mutex_lock(&fs->lock);
	/*
	 * A fill (the name's version was not in the store: evicted, or
	 * deleted by a refetch whose fill has not committed yet) is a new
	 * version as much as a refetch's: read through the page cache, it
	 * would stop at the size the kernel has of the one before.
	 */
	if (refetched || fh->fill)
		reader_refetched(fs, fh, m, moved, fi);
	else
		reader_cache(fs, fh, m, moved, fi);
	/*
	 * The kernel was last given the attributes of another version than
	 * the one the node shows now (revalidated by the origin, replaced
	 * by another front-end, shown by the change hook, which tells the
	 * kernel only once it has let fs->lock go, or given by a lookup
	 * built just before that change): the kernel drops them before the
	 * open is answered.  Else a read through the page cache would stop
	 * at the old size, and a stat right after would show it until the
	 * attribute timeout.  Replies built before are older requests, whose
	 * attributes the kernel then ignores.  Not for a node that gave its
	 * name away (node_fork): its inode still describes the old version,
	 * to its readers.
	 */
	if (fh->node == n && !moved && n->attached &&
	    (n->size != n->ksize || n->mtime_ns != n->kmtime_ns)) {
		ino = ino_of(fs, n);
		n->ksize = n->size;
		n->kmtime_ns = n->mtime_ns;
	}
	fh_link(fs, fh);
	pthread_mutex_unlock(&fs->lock);
	if (ino)
		fuse_lowlevel_notify_inval_inode(fs->se, ino, -1, 0);
	fi->noflush = 1;
	fi->fh = (uint64_t)(uintptr_t)fh;
	return 0;
fail:
	if (fh) {
		if (fh->r)
			gs_reader_close(fh->r);
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
 * under @key: a new version (@trunc), or one that starts as the version
 * the key holds now.  Fills @fi.  0 or -errno (the caller undoes the
 * counts).
 */
static int open_writer(struct gfs *fs, struct gfs_node *n, const char *key,
		       size_t klen, bool trunc, struct fuse_file_info *fi)
{
	struct gs_meta *m = NULL;
	struct gfs_fh *fh;
	int err;

	if (!trunc) {
		/* the store's version, not the node's: it may lag behind */
		if (!(m = malloc(sizeof(*m))))
			return -ENOMEM;
		err = gs_stat(fs->s, key, klen, m);
		if (err < 0) {
			free(m);
			return err;
		}
	}
	fh = fh_writer(fs, n, key, klen, m, &err);
	free(m);
	if (!fh)
		return err;
	fh->append = (fi->flags & O_APPEND) != 0;
	pthread_mutex_lock(&fs->lock);
	fh_link(fs, fh);
	n->wsize = fh->written;
	pthread_mutex_unlock(&fs->lock);
	/* writes bypass the page cache: readers keep the old version's */
	fi->direct_io = 1;
	fi->fh = (uint64_t)(uintptr_t)fh;
	return 0;
}

void gfs_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
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
	 * Writing: a whole new version (O_TRUNC), or one that starts as
	 * the committed one, appended to or written in place (issue 20).
	 * ESTALE makes the kernel look the name up again and retry the
	 * open once (do_filp_open), so the writer lands on the node that
	 * has the name now: after node_fork, or when a rename gave the name
	 * to another file meanwhile.
	 */
	if (!(fi->flags & O_TRUNC))
		wait_commit(fs, n); /* a shell's "> f" then ">> f" */
	if (fs->mirror)
		ret = -EROFS;
	else if (!(fi->flags & O_TRUNC) && n->attached && !n->committed)
		ret = n->writers ? -EBUSY : -ENOENT; /* only being created */
	else if (!n->attached && n->successor)
		ret = node_estale(fs, node_current(n));
	else if (n->attached && n->cached_readers)
		ret = node_fork(fs, n) ? -ESTALE : -ENOMEM;
	else
		ret = ns_key(n, false, key);
	if (ret >= 0) {
		n->writers++;
		n->refs++;
		n->wsize = fi->flags & O_TRUNC ? 0 : n->size;
		n->rewrite_pending = false;
		if (fi->flags & O_TRUNC) /* a truncate, as on ext4 */
			node_drop_privs(fs, n, req);
	}
	pthread_mutex_unlock(&fs->lock);
	if (ret >= 0 &&
	    (ret = open_writer(fs, n, key, (size_t)ret,
			       (fi->flags & O_TRUNC) != 0, fi)) < 0) {
		pthread_mutex_lock(&fs->lock);
		writer_undo(fs, n, false);
		pthread_mutex_unlock(&fs->lock);
	}
	if (ret < 0)
		fuse_reply_err(req, -ret);
	else
		fuse_reply_open(req, fi);
}

void gfs_create(fuse_req_t req, fuse_ino_t parent, const char *name,
		mode_t mode, struct fuse_file_info *fi)
{
	struct gfs *fs = req_fs(req);
	struct fuse_entry_param e;
	char key[GFS_KEYBUF];
	struct gfs_node *d, *n;
	size_t len = strlen(name);
	bool trunc = true;
	int ret;

	if (refuse_ro(req))
		return;
	pthread_mutex_lock(&fs->lock);
	d = node_of(fs, parent);
	if ((ret = ns_name_check(name, len)) < 0)
		goto fail;
	n = find_child(fs, d, name, len);
	if (n && !n->dir && n->mode && !S_ISREG(n->mode))
		ret = -EEXIST; /* a symlink, FIFO, ...: the kernel's to open */
	if (n && n->dir)
		ret = -EISDIR;
	else if (n && (fi->flags & O_EXCL))
		ret = -EEXIST;
	else if (n && node_visible(n) && !(fi->flags & O_TRUNC))
		trunc = false; /* O_CREAT of a file there: open it */
	else if (n && !n->committed && n->writers)
		ret = -EBUSY; /* being created by someone else */
	if (ret < 0)
		goto fail;
	ret = ns_child_key(d, name, len, false, key);
	if (ret < 0)
		goto fail;
	if (n && n->cached_readers && !(n = node_fork(fs, n))) {
		ret = -ENOMEM; /* the reply names the new node: no ESTALE */
		goto fail;
	}
	if (!n) {
		if (!(n = ns_add(fs, d, name, len, false))) {
			ret = -ENOMEM;
			goto fail;
		}
		meta_new(fs, req, d, n, S_IFREG | (mode & 07777));
		dir_touched(d);
	}
	n->writers++;
	n->refs++;
	n->wsize = trunc ? 0 : n->size;
	n->rewrite_pending = false;
	node_entry(fs, n, &e);
	pthread_mutex_unlock(&fs->lock);

	ret = open_writer(fs, n, key, (size_t)ret, trunc, fi);
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
	klen = ns_key(n, false, key); /* where the file is now */
	pthread_mutex_unlock(&fs->lock);
	if (klen < 0)
		return 1;
	m = malloc(sizeof(*m));
	if (!m) {
		writer_call(fs, fh, WRITER_ABORT, NULL, 0);
		return -ENOMEM;
	}
	ret = writer_call(fs, fh, WRITER_COMMIT, NULL, 0);
	if (ret == 0 &&
	    ((size_t)klen != fh->klen || memcmp(key, fh->key, fh->klen))) {
		/* renamed while being written */
		char *nk = malloc((size_t)klen + 1);

		ret = nk ? gs_rename(fs->s, fh->key, fh->klen, key,
				     (size_t)klen) :
			   -ENOMEM;
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
			if (!n->mtime_set) /* utimensat while writing */
				n->mtime_ns = m->mtime_ns;
			n->cas = m->cas;
		}
		pthread_mutex_unlock(&fs->lock);
		meta_committed(fs, n, key, (size_t)klen, m);
	}
	free(m);
	return ret;
}

/*
 * A write at the end of the committed version: after a close committed
 * this handle's bytes (a dup()ed descriptor or a shell's redirection
 * writes on), or the first write of an open without O_TRUNC (an append).
 * A new put that starts as that version, sharing its extents in the
 * store (gs_put_begin_append: what is appended is all that is written),
 * so that the next close commits all of it.  That version must still be
 * the one under the key: if it was replaced or deleted meanwhile, the
 * write fails with EIO rather than bring it back.  Called with fh->lock
 * held.
 */
static int writer_reopen(struct gfs *fs, struct gfs_fh *fh)
{
	int ret;

	if (fh->written == 0)
		return writer_call(fs, fh, WRITER_BEGIN, NULL, 0);
	ret = writer_call(fs, fh, WRITER_APPEND, NULL, 0);
	return ret == -ENOENT || ret == -ESTALE ? -EIO : ret;
}

/*
 * Publish the staging file as the file's new version: one put of its
 * bytes (stage_put), committed as any other (fh_commit).  The staging
 * file stays, for the writes that follow.  Called with fh->lock held.
 */
static int stage_commit(struct gfs *fs, struct gfs_fh *fh)
{
	uint8_t rec[GFS_META_REC];
	long rl;
	int ret;

	if (fh->w) /* a put left by a commit that found no name */
		writer_call(fs, fh, WRITER_ABORT, NULL, 0);
	/* the file's mode, owner and kind go with this version too */
	rl = meta_record_unlocked(fs, fh->node, rec, sizeof(rec));
	if (rl < 0)
		return (int)rl;
	ret = stage_put(fs, fh, rec, (size_t)rl);
	if (ret == 0 && (ret = fh_commit(fs, fh)) == 0)
		fh->sdirty = false;
	return ret;
}

void gfs_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size,
	       off_t off, struct fuse_file_info *fi)
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
	if (fh->append)
		off = (off_t)fh->written; /* the kernel's size may be old */
	if (fh->werr) {
		ret = fh->werr;
	} else if (fh->stage >= 0 || (uint64_t)off != fh->written) {
		/* in place: copy on write (a rewrite-max refusal changes
		 * nothing, and later writes may go on) */
		if ((ret = stage_write(fs, fh, buf, size, (uint64_t)off)) < 0 &&
		    ret != -EFBIG)
			fh->werr = ret;
	} else {
		if (!fh->w)
			ret = writer_reopen(fs, fh);
		if (ret == 0)
			ret = writer_call(fs, fh, WRITER_WRITE, buf, size);
		if (ret == 0)
			fh->written += size;
		else
			fh->werr = ret;
	}
	pthread_mutex_lock(&fs->lock);
	fh->node->wsize = fh->written;
	if (ret >= 0)
		node_drop_privs(fs, fh->node, req);
	if (fh->flushed) { /* a dup()ed descriptor writes on */
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
void gfs_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct gfs *fs = req_fs(req);
	struct gfs_fh *fh = (struct gfs_fh *)(uintptr_t)fi->fh;
	int ret = 0;

	(void)ino;
	if (fh->writing) {
		pthread_mutex_lock(&fh->lock);
		ret = fh->werr;
		if (!ret && fh->stage >= 0) {
			if (fh->sdirty && (ret = stage_commit(fs, fh)) < 0)
				fh->werr = ret;
			else
				ret = 0;
		} else if (!ret && fh->w && fh->written == 0 && !fh->cas) {
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
	char gone[GFS_NAME_MAX + 1], key[GFS_KEYBUF];
	fuse_ino_t gone_parent = 0, ino;
	size_t gone_len = 0;
	int klen = -1;

	if (fh->stage >= 0 && fh->sdirty && !fh->werr &&
	    stage_commit(fs, fh) < 0 && fh->w)
		writer_call(fs, fh, WRITER_ABORT, NULL, 0);
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
		/* what other front-ends did meanwhile was left to us */
		if (!n->writers && n->attached)
			klen = ns_key(n, false, key);
		ns_put(fs, n);
	}
	pthread_cond_broadcast(&fs->commit_cond);
	pthread_mutex_unlock(&fs->lock);
	if (gone_len)
		fuse_lowlevel_notify_inval_entry(fs->se, gone_parent, gone,
						 gone_len);
	if (klen > 0)
		changes_settle(fs, key, (size_t)klen);
}

static void release_reader(struct gfs *fs, struct gfs_fh *fh)
{
	struct gfs_node *n = fh->node;

	fh_reader_close(fs, fh);
	pthread_mutex_lock(&fs->lock);
	if (fh->cached) {
		assert(n->cached_readers > 0);
		n->cached_readers--;
	}
	n->refs--;
	ns_put(fs, n);
	pthread_mutex_unlock(&fs->lock);
}

static void fh_release(struct gfs *fs, struct gfs_fh *fh);

void gfs_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct gfs *fs = req_fs(req);

	(void)ino;
	fh_release(fs, (struct gfs_fh *)(uintptr_t)fi->fh);
	fuse_reply_err(req, 0);
}

static void fh_release(struct gfs *fs, struct gfs_fh *fh)
{
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
}

/*
 * The bytes written so far are durable when fsync returns: the put's on
 * the store's device (gs_put_sync), or the staging file's on its own.
 * Visibility stays at close: a version is published by its commit, which
 * is journalled (with --sync, synced) at flush.
 */
void gfs_fsync(fuse_req_t req, fuse_ino_t ino, int datasync,
	       struct fuse_file_info *fi)
{
	struct gfs_fh *fh = (struct gfs_fh *)(uintptr_t)fi->fh;
	int ret = 0;

	(void)ino;
	if (!fh->writing) {
		fuse_reply_err(req, 0);
		return;
	}
	pthread_mutex_lock(&fh->lock);
	ret = fh->werr;
	if (!ret && fh->stage >= 0)
		ret = (datasync ? fdatasync(fh->stage) : fsync(fh->stage)) < 0 ?
			      -errno :
			      0;
	else if (!ret && fh->w)
		ret = gs_put_sync(fh->w);
	pthread_mutex_unlock(&fh->lock);
	fuse_reply_err(req, -ret);
}

int fh_truncate(struct gfs *fs, struct gfs_node *n, struct fuse_file_info *fi,
		uint64_t size)
{
	struct gfs_fh *fh = fi ? (struct gfs_fh *)(uintptr_t)fi->fh : NULL;
	struct fuse_file_info tfi = { .flags = O_WRONLY };
	char key[GFS_KEYBUF];
	int ret;

	if (fh && fh->writing) {
		pthread_mutex_lock(&fh->lock);
		ret = fh_resize(fs, fh, size);
		pthread_mutex_lock(&fs->lock);
		fh->node->wsize = fh->written;
		pthread_mutex_unlock(&fs->lock);
		pthread_mutex_unlock(&fh->lock);
		return ret;
	}
	/*
	 * truncate(2) by name: an open, the resize, a close, on the node
	 * the kernel's inode is (the reply's size becomes the inode's).  If
	 * the name is another node's, or must be (node_fork), ESTALE: the
	 * kernel looks it up again and retries once (do_sys_truncate), as
	 * for gfs_open; truncating the new node left stat the old size.
	 */
	pthread_mutex_lock(&fs->lock);
	wait_commit(fs, n);
	if (fs->mirror)
		ret = -EROFS;
	else if (!n->attached && n->successor)
		ret = node_estale(fs, node_current(n));
	else if (!n->attached || !n->committed)
		ret = n->writers ? -EBUSY : -ENOENT;
	else if (n->size == size && !n->writers)
		ret = 0;
	else if (n->cached_readers)
		ret = node_fork(fs, n) ? -ESTALE : -ENOMEM;
	else
		ret = ns_key(n, false, key);
	if (ret > 0) {
		n->writers++;
		n->refs++;
		n->rewrite_pending = false;
	}
	pthread_mutex_unlock(&fs->lock);
	if (ret <= 0)
		return ret;
	ret = open_writer(fs, n, key, (size_t)ret, false, &tfi);
	if (ret < 0) {
		pthread_mutex_lock(&fs->lock);
		writer_undo(fs, n, false);
		pthread_mutex_unlock(&fs->lock);
		return ret;
	}
	fh = (struct gfs_fh *)(uintptr_t)tfi.fh;
	pthread_mutex_lock(&fh->lock);
	ret = fh_resize(fs, fh, size);
	if (ret == 0 && fh->sdirty)
		ret = stage_commit(fs, fh);
	if (ret < 0)
		fh->werr = ret; /* release commits nothing */
	pthread_mutex_unlock(&fh->lock);
	fh_release(fs, fh);
	return ret;
}

/*
 * At gfs_free: close the files the kernel never released (a lazy unmount,
 * a signal).  A writer's bytes that no close committed are aborted.
 */
void fh_close_all(struct gfs *fs)
{
	while (fs->open_fhs) {
		struct gfs_fh *fh = fs->open_fhs;

		fh_unlink(fs, fh);
		if (fh->writing) {
			if (fh->w) /* what no close committed */
				writer_call(fs, fh, WRITER_ABORT, NULL, 0);
		} else {
			fh_reader_close(fs, fh);
		}
		fh_free(fh);
	}
}
