/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * --mirror: what goblinfs asks of the origin.  Names neither the tree nor
 * the store has (HEAD, and the names it said are missing), the fill an
 * open starts, and the origin's counters for the root's xattr.  Every
 * call into mirror.c but its new/free and the mtime rule is here.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"
#include "mirror.h"

/* The slot of (@dir, @name) in fs->absent; its hash in *h. */
static struct gfs_absent *absent_slot(struct gfs *fs,
				      const struct gfs_node *dir,
				      const char *name, size_t len, uint64_t *h)
{
	uint64_t x = 0xcbf29ce484222325ull ^ dir->id;

	for (size_t i = 0; i < len; i++) {
		x ^= (unsigned char)name[i];
		x *= 0x100000001b3ull;
	}
	x ^= x >> 31;
	*h = x | 1; /* 0: an empty slot */
	return &fs->absent[x & (GFS_ABSENT_SLOTS - 1)];
}

/* Whether the origin said (@dir, @name) is missing not long ago. */
static bool absent_known(struct gfs *fs, const struct gfs_node *dir,
			 const char *name, size_t len)
{
	uint64_t h;
	struct gfs_absent *a = absent_slot(fs, dir, name, len, &h);

	return a->hash == h && gs_mono_ns() < a->until_ns;
}

static void absent_add(struct gfs *fs, const struct gfs_node *dir,
		       const char *name, size_t len)
{
	uint64_t h;
	struct gfs_absent *a = absent_slot(fs, dir, name, len, &h);

	a->hash = h;
	a->until_ns = gs_mono_ns() + (int64_t)(fs->o.negative_timeout * 1e9);
}

/*
 * A name that neither the tree nor the store has, asked of the origin
 * (HEAD).  A file becomes a node with the origin's size and mtime, not yet
 * cached; a directory a directory node.  Returns the node, or NULL with
 * *err: -ENOENT (a negative entry for the caller), -EIO, -ENOMEM.  Called
 * with fs->lock held, which it drops during the request: @dir is the
 * parent of a lookup in progress, so the kernel keeps it.
 */
struct gfs_node *origin_child(struct gfs *fs, struct gfs_node *dir,
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
			n->committed = true; /* visible: it is there */
			n->size = size;
			n->mtime_ns = mtime > 0 ? mtime * 1000000000ll :
						  gs_real_ns();
			n->cas = 0; /* no store version yet */
		}
	}
	*err = n ? 0 : dir->attached ? -ENOMEM : -ENOENT;
out:
	free(key);
	return n;
}

/*
 * With --mirror, @key is not in the store: open the fill that brings it
 * from the origin, starting one unless another open did (one GET per
 * object: the second open of a key being filled shares the fill).  A fill
 * that failed left nothing behind, so the next open fetches again.
 */
int open_fill(struct gfs *fs, const char *key, size_t klen,
	      struct gs_reader **r)
{
	return mirror_open(fs->mirror, key, klen, r);
}

/*
 * With --mirror, *@r is a reader on the stored version of @key.  If the
 * caching rules it was stored with say it is stale, ask the origin
 * whether it changed (a request conditional on its validators, joined
 * with any fetch of @key running): a 304 refreshes its record and the
 * open reads the same bytes; a 200 replaces it and the open reads the new
 * version's fill; readers of the old version keep theirs (the store pins
 * versions).  Within the response's stale-while-revalidate the open reads
 * the stale version at once while the origin is asked in the background.  Returns 0 with *@r on the version it was on, 1 with *@r on
 * a new version (a fill), or -errno (EIO: the origin failed) with *@r
 * closed and NULL.
 */
int open_revalidate(struct gfs *fs, const char *key, size_t klen,
		    struct gs_reader **r)
{
	struct gs_reader *old = *r, *nr = NULL;
	int ret;

	if (mirror_fresh(gs_reader_meta(old)))
		return 0;
	ret = mirror_revalidate(fs->mirror, key, klen, gs_reader_meta(old),
				&nr);
	if (ret == 0 && !nr)
		return 0; /* stale-while-revalidate: read it as it is */
	if (ret == 0 && gs_reader_meta(nr)->cas != gs_reader_meta(old)->cas)
		ret = 1;
	gs_reader_close(old);
	*r = ret < 0 ? NULL : nr;
	return ret;
}

/* "heads=N gets=N bytes=N failures=N": the origin requests so far. */
int origin_string(struct gfs *fs, fuse_ino_t ino, char *out, size_t outlen)
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
