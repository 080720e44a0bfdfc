/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The goblinfs namespace: a tree of names built from the store's keys at
 * mount and kept in step by the filesystem's own operations.  Directories
 * are key prefixes; an empty directory is kept by a zero-byte "path/" key.
 */
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "mirror.h"

static uint64_t name_hash(const struct gfs_node *dir, const char *name,
			  size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull ^ (uint64_t)(uintptr_t)dir;

	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)name[i];
		h *= 0x100000001b3ull;
	}
	return h ^ (h >> 29);
}

static int hash_grow(struct gfs *fs)
{
	size_t nsize = fs->hsize ? fs->hsize * 2 : 1024;
	struct gfs_node **nh = calloc(nsize, sizeof(*nh));

	if (!nh)
		return -ENOMEM;
	for (size_t i = 0; i < fs->hsize; i++) {
		struct gfs_node *n = fs->hash[i], *next;

		for (; n; n = next) {
			uint64_t b = name_hash(n->parent, n->name, n->namelen) &
				     (nsize - 1);

			next = n->hnext;
			n->hnext = nh[b];
			nh[b] = n;
		}
	}
	free(fs->hash);
	fs->hash = nh;
	fs->hsize = nsize;
	return 0;
}

static void hash_insert(struct gfs *fs, struct gfs_node *n)
{
	uint64_t b = name_hash(n->parent, n->name, n->namelen) &
		     (fs->hsize - 1);

	n->hnext = fs->hash[b];
	fs->hash[b] = n;
	fs->hcount++;
}

static void hash_remove(struct gfs *fs, struct gfs_node *n)
{
	uint64_t b = name_hash(n->parent, n->name, n->namelen) &
		     (fs->hsize - 1);
	struct gfs_node **p = &fs->hash[b];

	while (*p && *p != n)
		p = &(*p)->hnext;
	assert(*p == n);
	*p = n->hnext;
	n->hnext = NULL;
	fs->hcount--;
}

int ns_name_check(const char *name, size_t len)
{
	if (len == 0 || memchr(name, '/', len) || memchr(name, '\0', len))
		return -EINVAL;
	if ((len == 1 && name[0] == '.') ||
	    (len == 2 && name[0] == '.' && name[1] == '.'))
		return -EINVAL;
	if (len > GFS_NAME_MAX)
		return -ENAMETOOLONG;
	return 0;
}

static struct gfs_node *node_new(struct gfs *fs, const char *name, size_t len,
				 bool isdir)
{
	struct gfs_node *n = calloc(1, sizeof(*n));

	if (!n || !(n->name = malloc(len + 1))) {
		free(n);
		return NULL;
	}
	memcpy(n->name, name, len);
	n->name[len] = '\0';
	n->namelen = len;
	n->dir = isdir;
	n->id = ++fs->next_id;
	n->next_cookie = 3; /* 1 and 2 are "." and ".." */
	return n;
}

int ns_init(struct gfs *fs)
{
	fs->next_id = 0;
	fs->root = node_new(fs, "", 0, true);
	if (!fs->root || hash_grow(fs) < 0)
		return -ENOMEM;
	fs->root->attached = true;
	fs->root->marker = true; /* the root needs no key to exist */
	return 0;
}

static void free_tree(struct gfs_node *n)
{
	struct gfs_node *k, *next;

	for (k = n->kids; k; k = next) {
		next = k->next;
		free_tree(k);
	}
	node_meta_free(n);
	free(n->name);
	free(n);
}

void ns_release(struct gfs *fs)
{
	if (fs->root)
		free_tree(fs->root);
	fs->root = NULL;
	/* detached nodes the kernel never forgot (it is gone) */
	while (fs->limbo) {
		struct gfs_node *n = fs->limbo;

		fs->limbo = n->next;
		node_meta_free(n);
		free(n->name);
		free(n);
	}
	free(fs->hash);
	fs->hash = NULL;
	fs->hsize = fs->hcount = 0;
}

struct gfs_node *ns_child(struct gfs *fs, struct gfs_node *dir,
			  const char *name, size_t len)
{
	uint64_t b = name_hash(dir, name, len) & (fs->hsize - 1);
	struct gfs_node *n;

	for (n = fs->hash[b]; n; n = n->hnext)
		if (n->parent == dir && n->namelen == len &&
		    !memcmp(n->name, name, len))
			return n;
	return NULL;
}

static void link_child(struct gfs *fs, struct gfs_node *dir, struct gfs_node *n)
{
	n->parent = dir;
	n->attached = true;
	n->cookie = dir->next_cookie++;
	n->next = NULL;
	n->prev = dir->kids_tail;
	if (dir->kids_tail)
		dir->kids_tail->next = n;
	else
		dir->kids = n;
	dir->kids_tail = n;
	dir->nkids++;
	if (n->dir)
		dir->nsubdirs++;
	hash_insert(fs, n);
}

static void unlink_child(struct gfs *fs, struct gfs_node *n)
{
	struct gfs_node *dir = n->parent;

	hash_remove(fs, n);
	if (n->prev)
		n->prev->next = n->next;
	else
		dir->kids = n->next;
	if (n->next)
		n->next->prev = n->prev;
	else
		dir->kids_tail = n->prev;
	assert(dir->nkids > 0);
	dir->nkids--;
	if (n->dir)
		dir->nsubdirs--;
	n->next = n->prev = NULL;
	n->parent = NULL;
}

struct gfs_node *ns_add(struct gfs *fs, struct gfs_node *dir, const char *name,
			size_t len, bool isdir)
{
	struct gfs_node *n;

	if (fs->hcount >= fs->hsize && hash_grow(fs) < 0)
		return NULL;
	n = node_new(fs, name, len, isdir);
	if (!n)
		return NULL;
	link_child(fs, dir, n);
	return n;
}

/*
 * Detached nodes the kernel or an open file still holds are kept on
 * fs->limbo (by their sibling links, which a detached node does not use
 * otherwise), so that ns_release frees those no forget came for.
 */
static void limbo_add(struct gfs *fs, struct gfs_node *n)
{
	n->prev = NULL;
	n->next = fs->limbo;
	if (n->next)
		n->next->prev = n;
	fs->limbo = n;
}

static void limbo_del(struct gfs *fs, struct gfs_node *n)
{
	if (n->prev)
		n->prev->next = n->next;
	else
		fs->limbo = n->next;
	if (n->next)
		n->next->prev = n->prev;
}

void ns_detach(struct gfs *fs, struct gfs_node *n)
{
	if (!n->attached)
		return;
	unlink_child(fs, n);
	n->attached = false;
	limbo_add(fs, n);
	/* children of a detached directory (only empty ones are removed) */
	assert(n->nkids == 0);
	ns_put(fs, n);
}

int ns_move(struct gfs *fs, struct gfs_node *n, struct gfs_node *dir,
	    const char *name, size_t len)
{
	char *nn = malloc(len + 1);

	assert(n->attached);
	if (!nn)
		return -ENOMEM;
	memcpy(nn, name, len);
	nn[len] = '\0';
	unlink_child(fs, n);
	free(n->name);
	n->name = nn;
	n->namelen = len;
	link_child(fs, dir, n);
	return 0;
}

struct gfs_node *ns_replace(struct gfs *fs, struct gfs_node *n)
{
	struct gfs_node *dir = n->parent, *n2;

	assert(n->attached && !n->dir);
	n2 = node_new(fs, n->name, n->namelen, false);
	if (!n2)
		return NULL;
	unlink_child(fs, n); /* the hash keeps its count: no growth */
	n->attached = false;
	limbo_add(fs, n);
	link_child(fs, dir, n2);
	return n2;
}

void ns_put(struct gfs *fs, struct gfs_node *n)
{
	/* a loop, not recursion: a chain of replaced files can be long */
	while (n && !n->attached && n != fs->root && n->nlookup == 0 &&
	       n->refs == 0) {
		struct gfs_node *next = n->successor;

		limbo_del(fs, n);
		node_meta_free(n);
		free(n->name);
		free(n);
		if (next) {
			assert(next->refs > 0);
			next->refs--;
		}
		n = next;
	}
}

static int key_of(const struct gfs_node *n, const char *extra, size_t elen,
		  bool marker, char *buf)
{
	const struct gfs_node *p;
	size_t len = elen, nparts = elen ? 1 : 0, pos;

	for (p = n; p->parent; p = p->parent) {
		len += p->namelen;
		nparts++;
	}
	if (p != n && !n->attached)
		return -ENOENT;
	if (!p->attached || nparts == 0)
		return -ENOENT; /* detached, or the root itself */
	len += nparts - 1 + (marker ? 1 : 0);
	if (len > GS_KEY_MAX)
		return -ENAMETOOLONG;
	pos = len;
	buf[pos] = '\0';
	if (marker)
		buf[--pos] = '/';
	if (elen) {
		pos -= elen;
		memcpy(buf + pos, extra, elen);
		if (pos)
			buf[--pos] = '/';
	}
	for (p = n; p->parent; p = p->parent) {
		pos -= p->namelen;
		memcpy(buf + pos, p->name, p->namelen);
		if (pos)
			buf[--pos] = '/';
	}
	assert(pos == 0);
	return (int)len;
}

int ns_key(const struct gfs_node *n, bool marker, char *buf)
{
	return key_of(n, NULL, 0, marker, buf);
}

int ns_child_key(const struct gfs_node *dir, const char *name, size_t len,
		 bool marker, char *buf)
{
	return key_of(dir, name, len, marker, buf);
}

/* ---- building the tree from the store ---- */

bool ns_key_valid(const char *key, size_t klen)
{
	size_t i = 0, end = klen;

	if (klen == 0 || klen > GS_KEY_MAX)
		return false;
	if (key[klen - 1] == '/')
		end--;
	if (end == 0 || memchr(key, '\0', klen))
		return false;
	while (i < end) {
		const char *sl = memchr(key + i, '/', end - i);
		size_t j = sl ? (size_t)(sl - key) : end;

		if (ns_name_check(key + i, j - i) < 0)
			return false;
		i = j + 1;
		if (sl && i == end) /* "a//" */
			return false;
	}
	return true;
}

static int add_key(void *arg, const void *kv, size_t klen,
		   const struct gs_meta *m)
{
	struct gfs *fs = arg;
	const char *key = kv;
	bool marker;
	size_t end, i = 0;
	struct gfs_node *d = fs->root, *c;

	if (!ns_key_valid(key, klen)) {
		fs->skipped++;
		return 0;
	}
	marker = key[klen - 1] == '/';
	end = marker ? klen - 1 : klen;
	for (;;) {
		const char *sl = memchr(key + i, '/', end - i);
		size_t j = sl ? (size_t)(sl - key) : end;
		bool last = j == end;

		c = ns_child(fs, d, key + i, j - i);
		if (!last || marker) {
			if (c && !c->dir) { /* "a" and "a/b": the dir wins */
				fs->shadowed++;
				c->dir = true;
				c->committed = false;
				c->size = 0;
				d->nsubdirs++;
			}
			if (!c) {
				c = ns_add(fs, d, key + i, j - i, true);
				if (!c)
					return -ENOMEM;
			}
			if (last) {
				c->marker = true;
				node_meta(fs, c, m);
			}
		} else {
			if (c && !c->dir) /* a change put it there first */
				return 0;
			if (c) { /* a directory of that name exists */
				fs->shadowed++;
				return 0;
			}
			c = ns_add(fs, d, key + i, j - i, false);
			if (!c)
				return -ENOMEM;
			c->committed = true;
			c->size = m->size;
			c->mtime_ns = gfs_meta_mtime(fs, m);
			c->cas = m->cas;
			node_meta(fs, c, m);
		}
		if (last)
			return 0;
		d = c;
		i = j + 1;
	}
}

/*
 * The store is not locked between two keys of gs_iterate: @m may be a
 * version another front-end has replaced or deleted since, and the change
 * hook (changes.c), which runs from before the load, may have been and
 * gone.  Once it has applied a change, each key is asked again.
 */
static int add_key_locked(void *arg, const void *kv, size_t klen,
			  const struct gs_meta *m)
{
	struct gfs *fs = arg;
	struct gs_meta *now = NULL;
	int ret = 0;

	pthread_mutex_lock(&fs->lock);
	if (fs->load_raced && (now = malloc(sizeof(*now))) &&
	    gs_stat(fs->s, kv, klen, now) < 0)
		goto out; /* gone since */
	ret = add_key(fs, kv, klen, now ? now : m);
out:
	pthread_mutex_unlock(&fs->lock);
	free(now);
	return ret;
}

int ns_load(struct gfs *fs)
{
	int ret;

	pthread_mutex_lock(&fs->lock);
	fs->loading = true;
	pthread_mutex_unlock(&fs->lock);
	ret = gs_iterate(fs->s, "", 0, add_key_locked, fs);
	pthread_mutex_lock(&fs->lock);
	fs->loading = false;
	pthread_mutex_unlock(&fs->lock);
	return ret;
}

int64_t gfs_meta_mtime(const struct gfs *fs, const struct gs_meta *m)
{
	struct gs_attr_file f;

	/* a time set by utimensat (issue 20), else the commit's */
	if (gs_attr_file_get(m->attr, m->attr_len, &f) > 0 && f.mtime_ns)
		return f.mtime_ns;
	return fs->mirror ? mirror_meta_mtime(m) : m->mtime_ns;
}
