/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Extended attributes: user.goblin.tiers (where a file's bytes live) and,
 * with --mirror, user.goblin.origin on the root.  Nothing can be set.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define XATTR_TIERS  "user.goblin.tiers"
#define XATTR_ORIGIN "user.goblin.origin" /* the root, with --mirror */

/* "ram=N ssd=N hdd=N small=N": bytes of the file on each tier. */
static int tiers_string(struct gfs *fs, fuse_ino_t ino, char *out,
			size_t outlen)
{
	char key[GFS_KEYBUF];
	struct gs_range rg[64];
	uint64_t by[4] = { 0 };
	struct gfs_node *n;
	int klen, nr;

	pthread_mutex_lock(&fs->lock);
	n = node_of(fs, ino);
	klen = n->dir	     ? -ENODATA :
	       !n->committed ? -ENODATA :
			       ns_key(n, false, key);
	pthread_mutex_unlock(&fs->lock);
	if (klen < 0)
		return klen == -ENOENT ? -ENODATA : klen;
	nr = gs_inspect(fs->s, key, (size_t)klen, rg, 64);
	if (nr > 64) { /* many extents: ask again with room for all */
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


void gfs_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
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

void gfs_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	struct gfs *fs = req_fs(req);
	const char *names = XATTR_TIERS;
	size_t len = sizeof(XATTR_TIERS); /* with its NUL */
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

void gfs_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
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

void gfs_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	(void)ino;
	(void)name;
	if (refuse_ro(req))
		return;
	fuse_reply_err(req, ENOTSUP);
}
