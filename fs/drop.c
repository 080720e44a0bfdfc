/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Objects the store drops by itself (evicted, expired, corrupt): its drop
 * hook queues their keys, a thread of ours takes their files out of the
 * tree and out of the kernel's name cache.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct gfs_drop {
	struct gfs_drop *next;
	size_t klen;
	char key[];
};

/* The store's drop hook: the store is locked, so only queue the key. */
static void on_store_drop(void *arg, const struct gs_change *c)
{
	struct gfs *fs = arg;
	const void *key = c->key;
	size_t klen = c->klen;
	struct gfs_drop *d;

	if (c->kind != GS_CHANGE_DROP)
		return;
	d = malloc(sizeof(*d) + klen + 1);

	if (!d)
		return; /* the name stays until a lookup finds it gone */
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
			return NULL; /* a directory marker */
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
	pthread_mutex_lock(&fs->lock); /* commits take it too: no race */
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

/*
 * Start the drop thread and listen to the store.  Without the thread the
 * store's drops are not seen: names stay until a lookup finds them gone.
 */
void drops_start(struct gfs *fs)
{
	if (pthread_create(&fs->drop_thread, NULL, drop_main, fs) == 0) {
		fs->drop_running = true;
		gs_set_change_hook(fs->s, on_store_drop, fs);
	}
}

/* Stop listening to the store and finish the queue (before unmount). */
void drops_stop(struct gfs *fs)
{
	if (!fs->drop_running)
		return;
	gs_set_change_hook(fs->s, NULL, NULL);
	pthread_mutex_lock(&fs->drop_lock);
	fs->drop_stop = true;
	pthread_cond_signal(&fs->drop_cond);
	pthread_mutex_unlock(&fs->drop_lock);
	pthread_join(fs->drop_thread, NULL);
	fs->drop_running = false;
}

/* Free what is left in the queue (at gfs_free, after drops_stop). */
void drops_free(struct gfs *fs)
{
	while (fs->drops) {
		struct gfs_drop *d = fs->drops;

		fs->drops = d->next;
		free(d);
	}
}
