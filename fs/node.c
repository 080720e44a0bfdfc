/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Nodes as the kernel sees them: their attributes and entries, the wait
 * for a commit left to release, the successor a replaced file hands its
 * openers to, forks for rewrites under page-cache readers, directories
 * kept by their marker, and names looked up in the store.
 * Every function: called with fs->lock held.
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"

/*
 * The attributes of @n, for a reply that gives them to the kernel: it
 * notes what the kernel was given.  Called with fs->lock held.
 */
void node_attr(struct gfs *fs, struct gfs_node *n, struct stat *st)
{
	int64_t t;

	memset(st, 0, sizeof(*st));
	st->st_ino = n->id;
	st->st_mode = node_mode(fs, n);
	st->st_uid = n->mode ? n->uid : fs->uid;
	st->st_gid = n->mode ? n->gid : fs->gid;
	st->st_rdev = (dev_t)n->rdev;
	st->st_blksize = GFS_MAX_IO;
	if (n->dir) {
		st->st_nlink = 2 + n->nsubdirs;
		st->st_size = (off_t)n->nkids;
		t = n->mtime_ns ? n->mtime_ns : fs->start_ns;
	} else {
		/* unlinked or renamed over, still open: no name (issue 20) */
		st->st_nlink = n->removed ? 0 : 1;
		/* while written: the writer's size, as the kernel's own
		 * i_size is between getattrs (lseek SEEK_END, fstat) */
		st->st_size = (off_t)(n->committed && !n->writers ? n->size :
								    n->wsize);
		if (S_ISREG(st->st_mode))
			st->st_blocks = (st->st_size + 511) / 512;
		t = n->committed || n->mtime_set ? n->mtime_ns : gs_real_ns();
		n->ksize = (uint64_t)st->st_size;
		n->kmtime_ns = t;
	}
	ns_to_ts(t, &st->st_mtim);
	ns_to_ts(n->ctime_ns ? n->ctime_ns : t, &st->st_ctim);
	ns_to_ts(n->atime_ns ? n->atime_ns : t, &st->st_atim);
}

/* Called with fs->lock held; counts the lookup the reply gives. */
void node_entry(struct gfs *fs, struct gfs_node *n, struct fuse_entry_param *e)
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
void wait_commit(struct gfs *fs, struct gfs_node *n)
{
	struct timespec dl;

	if (!n || n->dir || !n->writers || n->closing < n->writers)
		return;
	dl = gs_clock_after(CLOCK_REALTIME, (int64_t)(fs->o.commit_wait * 1e9));
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
void node_succeed(struct gfs_node *t, struct gfs_node *n)
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
struct gfs_node *node_fork(struct gfs *fs, struct gfs_node *n)
{
	struct gfs_node *n2 = ns_replace(fs, n);

	if (!n2)
		return NULL;
	n2->committed = n->committed;
	n2->size = n->size;
	n2->mtime_ns = n->mtime_ns;
	n2->cas = n->cas;
	n2->mode = n->mode;
	n2->uid = n->uid;
	n2->gid = n->gid;
	n2->atime_ns = n->atime_ns;
	n2->ctime_ns = n->ctime_ns;
	n2->rewrite_pending = true;
	node_succeed(n, n2);
	return n2;
}

/*
 * A writer opened a node that lost its name to @c (a rename, or a fork
 * for another front-end's version): -ESTALE, and the kernel's one retry
 * opens @c.  If page-cache readers hold @c meanwhile, that retry would
 * have to fork it and get ESTALE again, which the kernel passes to the
 * program: so @c is forked now (or kept off the page cache) for it.
 * Called with fs->lock held.
 */
int node_estale(struct gfs *fs, struct gfs_node *c)
{
	if (c->attached && !c->dir && !c->writers) {
		if (c->cached_readers)
			node_fork(fs, c); /* NULL: the retry forks */
		else
			c->rewrite_pending = true;
	}
	return -ESTALE;
}

/* The file a path walk that found @n opens: see node_succeed. */
struct gfs_node *node_current(struct gfs_node *n)
{
	while (!n->attached && n->successor)
		n = n->successor;
	return n;
}

/*
 * Write the marker of directory @d with its metadata: 0 or -errno.
 * Called with fs->lock held.
 */
int put_marker(struct gfs *fs, struct gfs_node *d)
{
	struct gs_put_args a = { 0 };
	uint8_t rec[GFS_META_REC];
	char key[GFS_KEYBUF];
	long rl = meta_record(fs, d, rec, sizeof(rec));
	int len = ns_key(d, true, key), ret;

	if (len < 0 || rl < 0)
		return len < 0 ? len : (int)rl;
	a.attr = rec;
	a.attr_len = (size_t)rl;
	ret = gs_put(fs->s, key, (size_t)len, "", 0, &a);
	if (ret == 0)
		d->marker = true;
	return ret;
}

/*
 * A directory left empty by an unlink, rmdir or rename keeps existing (as
 * on any filesystem): it gets its "path/" marker object.  Called with
 * fs->lock held; a failure only means the directory is gone after a
 * remount.
 */
void keep_dir(struct gfs *fs, struct gfs_node *d)
{
	if (d == fs->root || d->marker || d->nkids || !d->attached)
		return;
	put_marker(fs, d);
}

/*
 * The child @name of @dir, looked up in the store when the tree does not
 * have it (an object added by another front-end of the same store).
 * Called with fs->lock held.
 */
struct gfs_node *find_child(struct gfs *fs, struct gfs_node *dir,
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
			node_meta(fs, n, m);
		}
	} else if (klen > 0 && (size_t)klen < GS_KEY_MAX) {
		key[klen] = '/';
		if (gs_stat(fs->s, key, (size_t)klen + 1, m) == 0) {
			n = ns_add(fs, dir, name, len, true);
			if (n) {
				n->marker = true;
				node_meta(fs, n, m);
			}
		}
	}
	free(m);
	return n;
}

/*
 * Store @n's metadata in the record of its object, the version it has
 * now (gs_set_attr: no new version, journalled), keeping what else the
 * record holds.  A directory without a marker gets one.  A file only
 * being written has no object yet: its commit stores it
 * (meta_committed).  Called with fs->lock held.
 */
int meta_store(struct gfs *fs, struct gfs_node *n)
{
	struct gs_meta *m = NULL;
	struct gs_attr *a = NULL;
	uint8_t *rec = NULL;
	char key[GFS_KEYBUF];
	int klen, ret;
	long rl;

	if (n == fs->root)
		return 0; /* no key: kept until unmount (goblinfs(1)) */
	if (n->dir && !n->marker)
		return put_marker(fs, n);
	if (!n->dir && !n->committed)
		return 0;
	klen = ns_key(n, n->dir, key);
	if (klen < 0)
		return klen == -ENOENT ? 0 : klen; /* unlinked: nothing */
	m = malloc(sizeof(*m));
	a = malloc(sizeof(*a));
	rec = malloc(GS_ATTR_MAX);
	ret = -ENOMEM;
	if (!m || !a || !rec)
		goto out;
	ret = gs_stat(fs->s, key, (size_t)klen, m);
	if (ret < 0)
		goto out;
	if (gs_attr_decode(m->attr, m->attr_len, a) < 0)
		gs_attr_init(a); /* unreadable: ours replaces it */
	if (!n->dir && !n->mtime_ns)
		n->mtime_ns = m->mtime_ns;
	rl = meta_merge(fs, n, a, rec, GS_ATTR_MAX);
	ret = rl < 0 ? (int)rl :
		       gs_set_attr(fs->s, key, (size_t)klen, m->cas, rec,
				   (size_t)rl, m->exptime);
out:
	free(rec);
	free(a);
	free(m);
	return ret;
}

void meta_committed(struct gfs *fs, struct gfs_node *n, const char *key,
		    size_t klen, struct gs_meta *m)
{
	pthread_mutex_lock(&fs->lock);
	if (n->attached && n->meta_dirty) {
		n->meta_dirty = false;
		if (!n->mtime_set)
			n->mtime_ns = m->mtime_ns;
		if (!n->ctime_ns || n->ctime_ns < m->mtime_ns)
			n->ctime_ns = m->mtime_ns;
		if (meta_store(fs, n) == 0)
			gs_stat(fs->s, key, klen, m);
	}
	if (n->attached && !n->writers)
		n->mtime_set = false;
	if (n->attached) {
		node_meta(fs, n, m);
		n->mtime_ns = gfs_meta_mtime(fs, m);
	}
	pthread_mutex_unlock(&fs->lock);
}

/*
 * The owner of a new node: the caller's uid, and its gid unless the
 * directory is set-group-ID (then the directory's group, and a new
 * directory inherits the bit), as on ext4.  Called with fs->lock held.
 */
void meta_new(struct gfs *fs, fuse_req_t req, struct gfs_node *d,
	      struct gfs_node *n, mode_t mode)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	mode_t dmode = node_mode(fs, d);

	n->uid = ctx->uid;
	n->gid = ctx->gid;
	if (dmode & S_ISGID) {
		n->gid = d->mode ? d->gid : fs->gid;
		if (S_ISDIR(mode))
			mode |= S_ISGID;
	}
	n->mode = (uint32_t)mode;
}

/* Entries of @d changed: its mtime and ctime, until a remount. */
void dir_touched(struct gfs_node *d)
{
	d->mtime_ns = d->ctime_ns = gs_real_ns();
}

/* Is @req's caller of group @gid (its fsgid or a supplementary group)? */
static bool caller_in_group(fuse_req_t req, gid_t gid)
{
	gid_t some[32], *list = some;
	bool in = false;
	int i, ng;

	if (fuse_req_ctx(req)->gid == gid)
		return true;
	ng = fuse_req_getgroups(req, 32, some);
	if (ng > 32 && (list = malloc((size_t)ng * sizeof(*list))))
		ng = fuse_req_getgroups(req, ng, list);
	else if (ng > 32)
		ng = -ENOMEM;
	/* unknown groups: not of it, so the bit goes (the safe side) */
	for (i = 0; i < ng; i++)
		in = in || list[i] == gid;
	if (list != some)
		free(list);
	return in;
}

/*
 * The kernel's setattr_should_drop_suidgid(), as ext4 gets it through
 * file_remove_privs(): S_ISUID goes, and S_ISGID when the group may
 * execute the file or the caller is not of its group, unless the caller
 * has CAP_FSETID.  goblinfs must do it itself: its writes are direct I/O,
 * where the kernel clears nothing, and libfuse 3.14 has no
 * FUSE_CAP_HANDLE_KILLPRIV_V2 and does not pass a write's
 * FUSE_WRITE_KILL_SUIDGID on (struct fuse_file_info has no field for
 * it).  A request carries uid, gid and pid, not capabilities: uid 0
 * stands for CAP_FSETID, as it does for root's other privileges under
 * default_permissions.  A truncate(2)'s setattr comes with the mode the
 * kernel worked out by the older rule (S_ISGID only with the group's
 * execute bit: session.c keeps FUSE_CAP_HANDLE_KILLPRIV off), and this
 * adds the rest.
 */
int node_drop_privs(struct gfs *fs, struct gfs_node *n, fuse_req_t req)
{
	mode_t mode = node_mode(fs, n), drop = 0;

	if (!S_ISREG(mode) || !(mode & (S_ISUID | S_ISGID)) ||
	    fuse_req_ctx(req)->uid == 0)
		return 0;
	if (mode & S_ISUID)
		drop |= S_ISUID;
	if ((mode & S_ISGID) &&
	    ((mode & S_IXGRP) || !caller_in_group(req, n->gid)))
		drop |= S_ISGID;
	if (!drop)
		return 0;
	n->mode &= ~(uint32_t)drop;
	n->ctime_ns = gs_real_ns();
	if (n->writers)
		n->meta_dirty = true; /* the commit stores it too */
	return meta_store(fs, n);
}
