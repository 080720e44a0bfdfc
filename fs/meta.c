/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Metadata of nodes (issue 20): modes, owners, times, the kind of a node
 * (file, directory, symlink, FIFO, socket, device) and a symlink's
 * target, to and from the file block of the object's attribute record
 * (store/attr.c).  Pure translation: storing it is node.c's.
 * Every function: called with fs->lock held, unless it says otherwise.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"

static const struct {
	enum gs_kind kind;
	mode_t fmt;
} kinds[] = {
	{ GS_KIND_FILE, S_IFREG },    { GS_KIND_DIR, S_IFDIR },
	{ GS_KIND_SYMLINK, S_IFLNK }, { GS_KIND_FIFO, S_IFIFO },
	{ GS_KIND_SOCK, S_IFSOCK },   { GS_KIND_CHR, S_IFCHR },
	{ GS_KIND_BLK, S_IFBLK },
};

static mode_t kind_fmt(enum gs_kind k)
{
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (kinds[i].kind == k)
			return kinds[i].fmt;
	return S_IFREG;
}

static enum gs_kind fmt_kind(mode_t fmt)
{
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (kinds[i].fmt == (fmt & S_IFMT))
			return kinds[i].kind;
	return GS_KIND_FILE;
}

mode_t node_mode(const struct gfs *fs, const struct gfs_node *n)
{
	(void)fs;
	if (n->dir) /* whatever a shadowed file's record said */
		return S_IFDIR | (n->mode ? (n->mode & 07777) : 0755);
	if (!n->mode)
		return S_IFREG | 0644;
	return n->mode;
}

void node_meta_free(struct gfs_node *n)
{
	free(n->target);
	n->target = NULL;
}

/*
 * The record's file block, or the defaults when it has none: then the
 * node shows the defaults again (another front-end's put replaced a
 * version that had one).  A target that cannot be copied leaves the node
 * without one: readlink says EIO rather than a wrong name.
 */
void node_meta(struct gfs *fs, struct gfs_node *n, const struct gs_meta *m)
{
	struct gs_attr_file f;

	if (gs_attr_file_get(m->attr, m->attr_len, &f) <= 0) {
		n->mode = 0;
		n->uid = fs->uid;
		n->gid = fs->gid;
		n->rdev = 0;
		n->atime_ns = n->ctime_ns = 0;
		node_meta_free(n);
		if (n->dir)
			n->mtime_ns = m->mtime_ns;
		return;
	}
	n->mode = (uint32_t)(kind_fmt((enum gs_kind)f.kind) | (f.mode & 07777));
	n->uid = f.uid;
	n->gid = f.gid;
	n->rdev = f.rdev;
	n->atime_ns = f.atime_ns ? f.atime_ns : m->mtime_ns;
	n->ctime_ns = f.ctime_ns ? f.ctime_ns : m->mtime_ns;
	if (n->dir)
		n->mtime_ns = f.mtime_ns ? f.mtime_ns : m->mtime_ns;
	node_meta_free(n);
	if (f.kind == GS_KIND_SYMLINK) {
		n->target = strdup(f.target);
		n->size = f.target_len;
	}
}

/* @n's metadata as a file block, with its times when @times. */
static void node_block(struct gfs *fs, const struct gfs_node *n,
		       struct gs_attr_file *f, bool times)
{
	mode_t mode = node_mode(fs, n);

	memset(f, 0, offsetof(struct gs_attr_file, target));
	f->kind = (uint8_t)fmt_kind(mode);
	f->mode = mode & 07777;
	f->uid = n->mode ? n->uid : fs->uid;
	f->gid = n->mode ? n->gid : fs->gid;
	f->rdev = n->rdev;
	if (times) {
		f->mtime_ns = n->mtime_ns;
		f->atime_ns = n->atime_ns;
		f->ctime_ns = n->ctime_ns;
	}
	if (n->target) {
		f->target_len = strlen(n->target);
		memcpy(f->target, n->target, f->target_len + 1);
	}
}

long meta_record(struct gfs *fs, struct gfs_node *n, uint8_t *buf, size_t cap)
{
	struct gs_attr_file f;

	node_block(fs, n, &f, n->dir);
	return gs_attr_file_encode(&f, buf, cap);
}

long meta_record_unlocked(struct gfs *fs, struct gfs_node *n, uint8_t *buf,
			  size_t cap)
{
	long ret;

	pthread_mutex_lock(&fs->lock);
	ret = meta_record(fs, n, buf, cap);
	pthread_mutex_unlock(&fs->lock);
	return ret;
}

/*
 * @a (decoded from the version's record, whatever else it keeps: an
 * HTTP object's headers stay) with @n's metadata and times in its file
 * block, encoded into @buf.  The length or -errno.
 */
long meta_merge(struct gfs *fs, struct gfs_node *n, struct gs_attr *a,
		uint8_t *buf, size_t cap)
{
	a->flags |= GS_ATTR_FILE;
	node_block(fs, n, &a->file, true);
	return gs_attr_encode(a, buf, cap);
}
