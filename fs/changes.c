/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the mount did not do itself: every key another front-end publishes,
 * deletes or renames, and every one the store drops (evicted, expired,
 * corrupt), reported by the store's change hook.  The tree is made to show
 * what the store holds for the key now, and the kernel's caches are told.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

__thread struct gfs *gfs_self;

struct gfs_drop {
	struct gfs_drop *next;
	size_t klen;
	char key[];
};

/*
 * What the kernel must be told once fs->lock is released: names it may
 * hold (a dentry, or a negative one) and inodes whose attributes changed.
 * A change asks for at most one of each kind per level it touches: the
 * leaf's name and inode, its directory's inode, and the topmost directory
 * made or taken away (the kernel drops the dentries below with it).
 */
#define NOTE_MAX 8
struct notes {
	int n;
	struct note {
		fuse_ino_t parent; /* an entry: (parent, name) */
		fuse_ino_t ino;	   /* an inode's attributes, or 0 */
		size_t len;
		char name[GFS_NAME_MAX + 1];
	} v[NOTE_MAX];
};

/* Called with fs->lock held. */
static void note_entry(struct gfs *fs, struct notes *nt, struct gfs_node *dir,
		       const char *name, size_t len)
{
	struct note *e;

	/* a directory the kernel never looked up holds no names */
	if (nt->n == NOTE_MAX || (dir != fs->root && !dir->nlookup))
		return;
	e = &nt->v[nt->n++];
	e->parent = ino_of(fs, dir);
	e->ino = 0;
	e->len = len;
	memcpy(e->name, name, len);
	e->name[len] = '\0';
}

/* Called with fs->lock held. */
static void note_inode(struct gfs *fs, struct notes *nt, struct gfs_node *n)
{
	if (nt->n == NOTE_MAX || (n != fs->root && !n->nlookup))
		return;
	nt->v[nt->n].parent = 0;
	nt->v[nt->n].len = 0;
	nt->v[nt->n++].ino = ino_of(fs, n);
}

/*
 * Tell the kernel, without fs->lock (the kernel may wait for a request of
 * ours that needs it).  Attributes only: a reader's pages are dropped by
 * its next open, which sees another version (reader_cache), and pages
 * being read are not waited for here.
 */
static void notes_send(struct gfs *fs, const struct notes *nt)
{
	struct fuse_session *se = fs->se;

	for (int i = 0; se && i < nt->n; i++) {
		const struct note *e = &nt->v[i];

		if (e->ino)
			fuse_lowlevel_notify_inval_inode(se, e->ino, -1, 0);
		else
			fuse_lowlevel_notify_inval_entry(se, e->parent, e->name,
							 e->len);
	}
}

/* Show version @m in file node @n.  Called with fs->lock held. */
static void show_version(struct gfs *fs, struct gfs_node *n,
			 const struct gs_meta *m)
{
	n->committed = true;
	n->size = m->size;
	n->mtime_ns = gfs_meta_mtime(fs, m);
	n->cas = m->cas;
	node_meta(fs, n, m); /* issue 20: its mode, owner, kind */
}

static void show_key(struct gfs *fs, const char *key, size_t klen,
		     struct gs_meta *m, struct notes *nt);

/*
 * Take directories that hold nothing and have no marker out of the tree,
 * from @d up: a directory is a key prefix, and no key has it any more.  A
 * file key that one of them hid comes to light.  Called with fs->lock held.
 */
static void prune(struct gfs *fs, struct gfs_node *d, struct gs_meta *m,
		  struct notes *nt)
{
	char key[GFS_KEYBUF];

	while (d != fs->root && d->attached && d->dir && !d->marker &&
	       !d->nkids && !d->refs) {
		struct gfs_node *p = d->parent;
		int klen = ns_key(d, false, key);

		note_entry(fs, nt, p, d->name, d->namelen);
		ns_detach(fs, d);
		if (klen > 0)
			show_key(fs, key, (size_t)klen, m, nt);
		d = p;
	}
}

/*
 * The directory for the key prefix [key, key+end), made as needed; NULL
 * when there is none and @make is false, or no memory.  A file in the way
 * gives its name to the directory, as at mount (ns_load): the file's
 * object stays in the store, hidden.  Called with fs->lock held.
 */
static struct gfs_node *dir_of(struct gfs *fs, const char *key, size_t end,
			       bool make, struct notes *nt)
{
	struct gfs_node *d = fs->root, *c;
	size_t i = 0;

	while (i < end) {
		const char *sl = memchr(key + i, '/', end - i);
		size_t j = sl ? (size_t)(sl - key) : end;

		c = ns_child(fs, d, key + i, j - i);
		if (c && !c->dir && make) {
			note_entry(fs, nt, d, c->name, c->namelen);
			ns_detach(fs, c);
			fs->shadowed++;
			c = NULL;
		}
		if (!c && make) {
			c = ns_add(fs, d, key + i, j - i, true);
			if (c) {
				note_entry(fs, nt, d, c->name, c->namelen);
				note_inode(fs, nt, d);
			}
		}
		if (!c || !c->dir)
			return NULL;
		d = c;
		i = j + 1;
	}
	return d;
}

/*
 * Make the tree show what the store holds under @key now: a file (new, or
 * another version), a directory (a key below it, or its marker), or
 * nothing.  Files being written through the mount are left to their
 * writer: its commit decides.  @m is scratch space.  Called with fs->lock
 * held.
 */
static void show_key(struct gfs *fs, const char *key, size_t klen,
		     struct gs_meta *m, struct notes *nt)
{
	bool marker = key[klen - 1] == '/';
	size_t end = marker ? klen - 1 : klen, base;
	bool present = gs_stat(fs->s, key, klen, m) == 0;
	const char *leaf;
	struct gfs_node *d, *n;

	if (marker) {
		d = dir_of(fs, key, end, present, nt);
		if (d && d != fs->root && d->marker != present) {
			d->marker = present;
			prune(fs, d, m, nt);
		}
		return;
	}
	leaf = memrchr(key, '/', end);
	base = leaf ? (size_t)(leaf - key) : 0;
	leaf = leaf ? leaf + 1 : key;
	d = dir_of(fs, key, base, present, nt);
	if (!d)
		return;
	n = ns_child(fs, d, leaf, end - (size_t)(leaf - key));
	if (!present) {
		if (n && !n->dir && n->committed && !n->writers) {
			note_entry(fs, nt, d, n->name, n->namelen);
			ns_detach(fs, n);
			note_inode(fs, nt, d);
			prune(fs, d, m, nt);
		}
		return;
	}
	if (n && n->dir) {
		fs->shadowed++; /* a directory of that name wins */
		return;
	}
	if (!n) {
		n = ns_add(fs, d, leaf, end - (size_t)(leaf - key), false);
		if (n) {
			show_version(fs, n, m);
			note_entry(fs, nt, d, n->name, n->namelen);
			note_inode(fs, nt, d);
		}
		return;
	}
	if ((n->committed && n->cas == m->cas) || (!n->committed && n->writers))
		return; /* shown already, or being created here */
	if (n->cached_readers) {
		/*
		 * Readers hold the old version through the page cache of
		 * @n: @n keeps describing it to them, and the name goes to
		 * a node of the new version (as for a rewrite, node_fork).
		 */
		struct gfs_node *n2 = node_fork(fs, n);

		if (!n2)
			return;
		n2->rewrite_pending = false;
		show_version(fs, n2, m);
		note_entry(fs, nt, d, n2->name, n2->namelen);
		return;
	}
	/* an open before the note is sent tells the kernel (open_reader) */
	show_version(fs, n, m);
	note_inode(fs, nt, n);
}

/* Apply a change of @key (and @to, for a rename); takes fs->lock. */
static void apply(struct gfs *fs, const void *key, size_t klen, const void *to,
		  size_t tlen)
{
	struct gs_meta *m = malloc(sizeof(*m));
	struct notes nt = { .n = 0 };

	if (!m)
		return; /* the name is right again at the next change */
	pthread_mutex_lock(&fs->lock);
	if (ns_key_valid(key, klen))
		show_key(fs, key, klen, m, &nt);
	if (to && ns_key_valid(to, tlen))
		show_key(fs, to, tlen, m, &nt);
	if (fs->loading)
		fs->load_raced = true;
	pthread_mutex_unlock(&fs->lock);
	free(m);
	notes_send(fs, &nt);
}

void changes_settle(struct gfs *fs, const char *key, size_t klen)
{
	apply(fs, key, klen, NULL, 0);
}

/*
 * Apply the drops queued so far.  Called by the drop thread, and by a
 * front-end's thread after its own change, without any lock: the drops
 * its put caused (evictions for room) show before its client is answered.
 */
static void drain(struct gfs *fs)
{
	for (;;) {
		struct gfs_drop *d;

		pthread_mutex_lock(&fs->drop_lock);
		d = fs->drops;
		if (d)
			fs->drops = d->next;
		pthread_mutex_unlock(&fs->drop_lock);
		if (!d)
			return;
		apply(fs, d->key, d->klen, NULL, 0);
		free(d);
	}
}

/*
 * The store's change hook.  The mount's own changes are applied by the
 * operation that makes them, in the same step as the store call (under
 * fs->lock), so the hook leaves them be; drops are the store's own, so
 * they are applied whoever caused them.  A publish, delete or rename comes
 * with the store unlocked, on the thread that made it: applied there, so
 * that the mount shows it before that front-end answers its client.  A
 * drop comes with the store locked: only queued, for the drop thread.
 */
static void on_change(void *arg, const struct gs_change *c)
{
	struct gfs *fs = arg;
	struct gfs_drop *d;

	if (!c->locked) {
		/*
		 * With --mirror the store's only other writer is the
		 * mount's own fetcher, whose versions the opens that asked
		 * for them show (open_revalidate, reader_cache).  A refetch
		 * deletes the stale version before its fill commits:
		 * applied, that delete would take a name the origin still
		 * has out of the tree, and opens meanwhile fail ENOENT.
		 */
		if (gfs_self != fs && !fs->mirror) {
			drain(fs);
			apply(fs, c->key, c->klen, c->to, c->tlen);
		}
		return;
	}
	d = malloc(sizeof(*d) + c->klen + 1);
	if (!d)
		return; /* the name stays until a lookup finds it gone */
	memcpy(d->key, c->key, c->klen);
	d->key[c->klen] = '\0';
	d->klen = c->klen;
	pthread_mutex_lock(&fs->drop_lock);
	d->next = fs->drops;
	fs->drops = d;
	pthread_cond_signal(&fs->drop_cond);
	pthread_mutex_unlock(&fs->drop_lock);
}

static void *drop_main(void *arg)
{
	struct gfs *fs = arg;

	pthread_mutex_lock(&fs->drop_lock);
	while (fs->drops || !fs->drop_stop) {
		if (!fs->drops) {
			pthread_cond_wait(&fs->drop_cond, &fs->drop_lock);
			continue;
		}
		pthread_mutex_unlock(&fs->drop_lock);
		drain(fs);
		pthread_mutex_lock(&fs->drop_lock);
	}
	pthread_mutex_unlock(&fs->drop_lock);
	return NULL;
}

/*
 * Start the drop thread and listen to the store: before the tree is
 * loaded, so that no change made meanwhile is missed.  Without the thread
 * nothing is listened to: names change only as lookups find them.
 */
void changes_start(struct gfs *fs)
{
	if (pthread_create(&fs->drop_thread, NULL, drop_main, fs) == 0) {
		fs->drop_running = true;
		gs_set_change_hook(fs->s, on_change, fs);
	}
}

/* Stop listening to the store and finish the queue (before unmount). */
void changes_stop(struct gfs *fs)
{
	if (!fs->drop_running)
		return;
	gs_set_change_hook(fs->s, NULL, NULL); /* waits for calls running */
	pthread_mutex_lock(&fs->drop_lock);
	fs->drop_stop = true;
	pthread_cond_signal(&fs->drop_cond);
	pthread_mutex_unlock(&fs->drop_lock);
	pthread_join(fs->drop_thread, NULL);
	fs->drop_running = false;
}

/* Free what is left in the queue (at gfs_free, after changes_stop). */
void changes_free(struct gfs *fs)
{
	while (fs->drops) {
		struct gfs_drop *d = fs->drops;

		fs->drops = d->next;
		free(d);
	}
}
