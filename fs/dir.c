/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Directories and names: lookup (the tree, then the store, then with
 * --mirror the origin), forget, getattr and setattr (modes, owners,
 * times: issue 20), mkdir, symlink, readlink, mknod, rmdir, unlink,
 * rename, readdir; and link, which goblinfs refuses.
 */
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"

void gfs_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
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
		memset(&e, 0, sizeof(e)); /* a cached negative entry */
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

void gfs_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	struct gfs *fs = req_fs(req);

	pthread_mutex_lock(&fs->lock);
	forget_one(fs, ino, nlookup);
	pthread_mutex_unlock(&fs->lock);
	fuse_reply_none(req);
}

void gfs_forget_multi(fuse_req_t req, size_t count,
		      struct fuse_forget_data *forgets)
{
	struct gfs *fs = req_fs(req);

	pthread_mutex_lock(&fs->lock);
	for (size_t i = 0; i < count; i++)
		forget_one(fs, forgets[i].ino, forgets[i].nlookup);
	pthread_mutex_unlock(&fs->lock);
	fuse_reply_none(req);
}

void gfs_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
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

static int64_t ts_ns(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * 1000000000ll + ts->tv_nsec;
}

/*
 * Mode, owner and times of @n as @attr and @to_set say, stored in its
 * object's record (meta_store).  The kernel has checked who may
 * (default_permissions: only root gives a file away, the owner changes
 * its mode, and it took away S_ISGID when the caller is not of the
 * group, and sends the mode without S_ISUID/S_ISGID after a chown or a
 * write by another).  Called with fs->lock held.
 */
static int set_meta(struct gfs *fs, struct gfs_node *n, const struct stat *attr,
		    int to_set)
{
	int64_t now = gs_real_ns();
	struct stat st;

	node_attr(fs, n, &st); /* what it shows now: defaults made real */
	n->mode = st.st_mode;
	n->uid = st.st_uid;
	n->gid = st.st_gid;
	n->mtime_ns = ts_ns(&st.st_mtim);
	n->atime_ns = ts_ns(&st.st_atim);
	if (to_set & FUSE_SET_ATTR_MODE)
		n->mode = (n->mode & S_IFMT) | (attr->st_mode & 07777);
	if (to_set & FUSE_SET_ATTR_UID)
		n->uid = attr->st_uid;
	if (to_set & FUSE_SET_ATTR_GID)
		n->gid = attr->st_gid;
	if (to_set & FUSE_SET_ATTR_ATIME_NOW)
		n->atime_ns = now;
	else if (to_set & FUSE_SET_ATTR_ATIME)
		n->atime_ns = ts_ns(&attr->st_atim);
	if (to_set & (FUSE_SET_ATTR_MTIME | FUSE_SET_ATTR_MTIME_NOW)) {
		n->mtime_ns = to_set & FUSE_SET_ATTR_MTIME_NOW ?
				      now :
				      ts_ns(&attr->st_mtim);
		if (!n->dir && n->writers)
			n->mtime_set = true;
	}
	n->ctime_ns = to_set & FUSE_SET_ATTR_CTIME ? ts_ns(&attr->st_ctim) :
						     now;
	if (!n->dir && n->writers)
		n->meta_dirty = true; /* the commit stores it too */
	return meta_store(fs, n);
}

#define META_SET                                                           \
	(FUSE_SET_ATTR_MODE | FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID |      \
	 FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME | FUSE_SET_ATTR_CTIME | \
	 FUSE_SET_ATTR_ATIME_NOW | FUSE_SET_ATTR_MTIME_NOW)

/*
 * A size change is meaningful only as the no-op kind: objects are
 * immutable.  Mode, owner and times are kept (set_meta).
 */
void gfs_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
		 struct fuse_file_info *fi)
{
	struct gfs *fs = req_fs(req);
	struct gfs_node *n;
	struct stat st;
	int err = 0;

	if (refuse_ro(req))
		return;
	pthread_mutex_lock(&fs->lock);
	n = node_of(fs, ino);
	wait_commit(fs, n);
	if ((to_set & FUSE_SET_ATTR_SIZE) && n->dir)
		err = EISDIR;
	pthread_mutex_unlock(&fs->lock);
	/* issue 20: a new version of that size, in place (file.c) */
	if (!err && (to_set & FUSE_SET_ATTR_SIZE))
		err = -fh_truncate(fs, n, fi, (uint64_t)attr->st_size);
	pthread_mutex_lock(&fs->lock);
	if (!err && (to_set & META_SET))
		err = -set_meta(fs, n, attr, to_set);
	if (!err && (to_set & FUSE_SET_ATTR_SIZE))
		err = -node_drop_privs(fs, n, req);
	if (!err)
		node_attr(fs, n, &st);
	if (!err && (to_set & FUSE_SET_ATTR_SIZE) && fi && fi->fh &&
	    ((struct gfs_fh *)fi->fh)->writing)
		st.st_size = attr->st_size; /* the open file's size */
	pthread_mutex_unlock(&fs->lock);
	if (err)
		fuse_reply_err(req, err);
	else
		fuse_reply_attr(req, &st, fs->o.attr_timeout);
}

/*
 * A new node @name in @d of @mode (with @target for a symlink, @rdev for
 * a device): its object (a directory's marker, else an empty value)
 * carries its metadata, then the node is added.  Called with fs->lock
 * held; 0 and *@out, or -errno.
 */
static int add_object(struct gfs *fs, fuse_req_t req, struct gfs_node *d,
		      const char *name, size_t len, mode_t mode,
		      const char *target, dev_t rdev, struct gfs_node **out)
{
	struct gfs_node tmp = { .dir = S_ISDIR(mode) };
	struct gs_put_args a = { 0 };
	uint8_t rec[GFS_META_REC];
	char key[GFS_KEYBUF];
	struct gs_meta *m = NULL;
	struct gfs_node *n;
	int ret, klen;
	long rl;

	if ((ret = ns_name_check(name, len)) < 0)
		return ret;
	if (!d->dir)
		return -ENOTDIR;
	if (find_child(fs, d, name, len))
		return -EEXIST;
	klen = ns_child_key(d, name, len, tmp.dir, key);
	if (klen < 0)
		return klen;
	meta_new(fs, req, d, &tmp, mode);
	tmp.rdev = (uint64_t)rdev;
	tmp.target = (char *)target;
	rl = meta_record(fs, &tmp, rec, sizeof(rec));
	if (rl < 0)
		return (int)rl;
	a.attr = rec;
	a.attr_len = (size_t)rl;
	m = malloc(sizeof(*m));
	if (!m)
		return -ENOMEM;
	ret = gs_put(fs->s, key, (size_t)klen, "", 0, &a);
	if (ret == 0)
		ret = gs_stat(fs->s, key, (size_t)klen, m);
	if (ret < 0)
		goto out;
	n = ns_add(fs, d, name, len, tmp.dir);
	if (!n) {
		gs_delete(fs->s, key, (size_t)klen);
		ret = -ENOMEM;
		goto out;
	}
	if (tmp.dir) {
		n->marker = true;
	} else {
		n->committed = true;
		n->size = m->size;
		n->mtime_ns = gfs_meta_mtime(fs, m);
		n->cas = m->cas;
	}
	node_meta(fs, n, m);
	if (target && !n->target) {
		ret = -ENOMEM; /* shown as a file without its target: no */
		ns_detach(fs, n);
		gs_delete(fs->s, key, (size_t)klen);
		goto out;
	}
	dir_touched(d);
	*out = n;
out:
	free(m);
	return ret;
}

/* Make a node with add_object in directory @parent; reply its entry. */
static void reply_added(fuse_req_t req, fuse_ino_t parent, const char *name,
			mode_t mode, const char *target, dev_t rdev)
{
	struct gfs *fs = req_fs(req);
	struct fuse_entry_param e;
	struct gfs_node *n = NULL;
	int ret;

	if (refuse_ro(req))
		return;
	pthread_mutex_lock(&fs->lock);
	ret = add_object(fs, req, node_of(fs, parent), name, strlen(name), mode,
			 target, rdev, &n);
	if (!ret)
		node_entry(fs, n, &e);
	pthread_mutex_unlock(&fs->lock);
	if (ret < 0)
		fuse_reply_err(req, -ret);
	else
		fuse_reply_entry(req, &e);
}

void gfs_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	reply_added(req, parent, name, S_IFDIR | (mode & 07777), NULL, 0);
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
		n->removed = true; /* open still: st_nlink 0 */
		ns_detach(fs, n);
		dir_touched(d);
		keep_dir(fs, d);
	}
	return ret;
}

void gfs_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
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

void gfs_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
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
	else /* a writer still open aborts at release: n is detached */
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
void gfs_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
		fuse_ino_t newparent, const char *newname, unsigned int flags)
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
		struct gs_put_args a = { 0 };
		uint8_t rec[GFS_META_REC];
		long rl = meta_record(fs, n, rec, sizeof(rec));

		a.attr = rec;
		a.attr_len = rl > 0 ? (size_t)rl : 0;
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
	if (t) {
		t->removed = true; /* open still: st_nlink 0 */
		ns_detach(fs, t);
	}
	ret = ns_move(fs, n, nd, newname, nlen);
	/* until a remount: a record per rename would cost every ccache */
	n->ctime_ns = gs_real_ns();
	dir_touched(d);
	dir_touched(nd);
	if (d != nd)
		keep_dir(fs, d);
out:
	pthread_mutex_unlock(&fs->lock);
	fuse_reply_err(req, ret < 0 ? -ret : 0);
}

/*
 * Hard links: EPERM (goblinfs(1)).  A key is a name and an object has
 * one: two names for one version would need a link count shared by two
 * keys of the store, which every delete, rename and eviction of either
 * would have to keep, and which memcache and HTTP know nothing of.
 */
void gfs_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent,
	      const char *newname)
{
	(void)ino;
	(void)newparent;
	(void)newname;
	if (refuse_ro(req))
		return;
	fuse_reply_err(req, EPERM);
}

/* A symlink: an empty object whose record has the target (issue 20). */
void gfs_symlink(fuse_req_t req, const char *link, fuse_ino_t parent,
		 const char *name)
{
	if (strlen(link) > GS_ATTR_TARGET_MAX) {
		fuse_reply_err(req, ENAMETOOLONG);
		return;
	}
	reply_added(req, parent, name, S_IFLNK | 0777, link, 0);
}

void gfs_readlink(fuse_req_t req, fuse_ino_t ino)
{
	struct gfs *fs = req_fs(req);
	char buf[GS_ATTR_TARGET_MAX + 1];
	struct gfs_node *n;
	int err = 0;

	pthread_mutex_lock(&fs->lock);
	n = node_of(fs, ino);
	if (n->dir || !S_ISLNK(n->mode))
		err = EINVAL;
	else if (!n->target)
		err = EIO;
	else
		memcpy(buf, n->target, strlen(n->target) + 1);
	pthread_mutex_unlock(&fs->lock);
	if (err)
		fuse_reply_err(req, err);
	else
		fuse_reply_readlink(req, buf);
}

/*
 * FIFOs, sockets, devices and empty regular files: an empty object of its
 * kind (metadata only: the kernel does the rest, a FIFO's pipe, a
 * device's driver).
 */
void gfs_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
	       dev_t rdev)
{
	switch (mode & S_IFMT) {
	case S_IFREG:
	case S_IFIFO:
	case S_IFSOCK:
		rdev = 0;
		break;
	case S_IFCHR:
	case S_IFBLK:
		break;
	default:
		fuse_reply_err(req, EINVAL);
		return;
	}
	reply_added(req, parent, name, mode, NULL, rdev);
}

void gfs_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
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

static void do_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       bool plus)
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
	for (int i = 1; i <= 2; i++) { /* "." and ".." */
		struct fuse_entry_param e;
		const char *nm = i == 1 ? "." : "..";
		size_t sz;

		if (off >= i)
			continue;
		memset(&e, 0, sizeof(e));
		e.attr.st_ino = i == 1 || !d->parent ? d->id : d->parent->id;
		e.attr.st_mode = S_IFDIR;
		sz = plus ? fuse_add_direntry_plus(req, buf + used, size - used,
						   nm, &e, i) :
			    fuse_add_direntry(req, buf + used, size - used, nm,
					      &e.attr, i);
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
			uint64_t ksize = k->ksize;
			int64_t kmtime = k->kmtime_ns;

			node_entry(fs, k, &e);
			sz = fuse_add_direntry_plus(req, buf + used,
						    size - used, k->name, &e,
						    (off_t)k->cookie);
			if (sz > size - used) { /* not sent */
				k->nlookup--;
				k->ksize = ksize;
				k->kmtime_ns = kmtime;
				break;
			}
		} else {
			memset(&e, 0, sizeof(e));
			e.attr.st_ino = k->id;
			e.attr.st_mode = node_mode(fs, k) & S_IFMT;
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

void gfs_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		 struct fuse_file_info *fi)
{
	(void)fi;
	do_readdir(req, ino, size, off, false);
}

void gfs_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		     struct fuse_file_info *fi)
{
	(void)fi;
	do_readdir(req, ino, size, off, true);
}
