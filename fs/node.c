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
		/* while written: the writer's size, as the kernel's own
		 * i_size is between getattrs (lseek SEEK_END, fstat) */
		st->st_size = (off_t)(n->committed && !n->writers ? n->size :
								    n->wsize);
		st->st_blocks = (st->st_size + 511) / 512;
		t = n->committed ? n->mtime_ns : gs_real_ns();
		n->ksize = (uint64_t)st->st_size;
		n->kmtime_ns = t;
	}
	ns_to_ts(t, &st->st_mtim);
	st->st_ctim = st->st_mtim;
	st->st_atim = st->st_mtim;
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
	n2->rewrite_pending = true;
	node_succeed(n, n2);
	return n2;
}

/* The file a path walk that found @n opens: see node_succeed. */
struct gfs_node *node_current(struct gfs_node *n)
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
void keep_dir(struct gfs *fs, struct gfs_node *d)
{
	struct gs_put_args a = { 0 };
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
