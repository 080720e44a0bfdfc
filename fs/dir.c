/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Directories and names: lookup (the tree, then the store, then with
 * --mirror the origin), forget, getattr and setattr, mkdir, rmdir, unlink,
 * rename, readdir; and the link, symlink and mknod goblinfs refuses.
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

/*
 * Only a size change is meaningful, and only the no-op kind: objects are
 * immutable.  Mode, owner and times are accepted and ignored (cp -p and
 * tar keep working).
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
	if ((to_set & FUSE_SET_ATTR_SIZE) && n->dir)
		err = EISDIR;
	pthread_mutex_unlock(&fs->lock);
	/* issue 20: a new version of that size, in place (file.c) */
	if (!err && (to_set & FUSE_SET_ATTR_SIZE))
		err = -fh_truncate(fs, n, fi, (uint64_t)attr->st_size);
	pthread_mutex_lock(&fs->lock);
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

void gfs_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	struct gfs *fs = req_fs(req);
	struct gs_put_args a = { 0 };
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

void gfs_symlink(fuse_req_t req, const char *link, fuse_ino_t parent,
		 const char *name)
{
	(void)link;
	(void)parent;
	(void)name;
	if (refuse_ro(req))
		return;
	fuse_reply_err(req, EPERM);
}

void gfs_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
	       dev_t rdev)
{
	(void)parent;
	(void)name;
	(void)mode;
	(void)rdev;
	if (refuse_ro(req))
		return;
	fuse_reply_err(req, EPERM);
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
