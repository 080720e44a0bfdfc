/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * goblinfs internals shared by the rooms of fs/ (see fs/README.md): the
 * filesystem, its nodes and open files, and what each room offers the
 * others.  Not for other folders: they include goblinfs.h.
 */
#ifndef GOBLINFS_INTERNAL_H
#define GOBLINFS_INTERNAL_H

#ifndef FUSE_USE_VERSION
#define FUSE_USE_VERSION 312
#endif

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

#include <fuse_lowlevel.h>

#include "../store/clock.h"
#include "../store/goblin.h"
#include "goblinfs.h"

#define GFS_NAME_MAX 255	/* longest path component, bytes */
#define GFS_MAX_IO   (1u << 20) /* max_write, max_readahead, read buffer */

/*
 * One name in the tree.  A file node stands for the key of its path; a
 * directory node for a key prefix (and, when @marker, for the zero-byte
 * object "path/" that keeps an empty directory).  The FUSE node id is the
 * node's address (FUSE_ROOT_ID for the root); st_ino is @id.
 * All fields are protected by fs->lock.
 */
struct gfs_node {
	struct gfs_node *parent;      /* NULL for the root and when detached */
	struct gfs_node *hnext;	      /* chain in fs->hash */
	struct gfs_node *next, *prev; /* siblings, in cookie order */
	struct gfs_node *kids, *kids_tail; /* directories: children */
	uint64_t nkids;			   /* directories: children */
	uint64_t nsubdirs;    /* directories: children that are dirs */
	uint64_t cookie;      /* readdir offset of this entry */
	uint64_t next_cookie; /* directories: for the next child */
	uint64_t id;	      /* st_ino: a counter, never reused */
	uint64_t nlookup;     /* references held by the kernel */
	uint64_t refs;	      /* open file handles */
	bool dir;
	bool marker;   /* directories: "path/" object exists */
	bool attached; /* reachable from the root */
	/* files */
	bool committed;		 /* a committed version exists */
	uint64_t size;		 /* of the committed version */
	int64_t mtime_ns;	 /* of the committed version */
	uint64_t cas;		 /* of the committed version */
	uint64_t cached_cas;	 /* version the page cache may hold */
	unsigned writers;	 /* write handles not released */
	unsigned closing;	 /* of which closed with nothing
				  * written, commit at release */
	unsigned cached_readers; /* read handles on the page cache */
	bool rewrite_pending;	 /* made for a writer's retried open:
				  * readers go past the page cache */
	uint64_t ksize;		 /* the size and mtime the kernel was */
	int64_t kmtime_ns;	 /* last given (node_attr): see open_reader */
	uint64_t wsize;		 /* bytes written by the last writer */
	/*
	 * Detached files: the file that took this one's name (renamed over
	 * it, or given it for a rewrite), which holds a refs reference from
	 * here.  An open of this node (a path walk that found it before
	 * the name moved) opens the end of the chain instead.
	 */
	struct gfs_node *successor;
	size_t namelen;
	char *name; /* NUL-terminated, owned by the node */
	/*
	 * Metadata (issue 20, meta.c): kept in the object's record (a
	 * directory's in its marker), mode 0 meaning the defaults of an
	 * object that came without one (0644 files, 0755 directories, the
	 * mount's uid and gid).  Times: mtime_ns above (directories too: 0
	 * is the mount's start), atime_ns and ctime_ns 0: as mtime_ns.
	 */
	uint32_t mode;	   /* S_IFMT and permission bits; 0: defaults */
	uint32_t uid, gid; /* with mode set */
	uint64_t rdev;	   /* device nodes */
	int64_t atime_ns, ctime_ns;
	char *target;	 /* symlinks: NUL-terminated, owned by the node */
	bool removed;	 /* unlinked or renamed over: st_nlink 0 */
	bool meta_dirty; /* set while being written: the commit keeps it */
	bool mtime_set;	 /* mtime_ns set so meanwhile (utimensat) */
};

struct gfs_ring;
struct gfs_fh;
struct gfs_drop;
struct mirror;

struct gfs {
	struct gs_store *s;
	struct gfs_options o;
	struct fuse_session *se;
	bool mounted;
	char *mount_path; /* the mountpoint resolved, or NULL */
	int guard_fd;	  /* the guard's pipe (guard.c), or -1 */
	pid_t guard_pid;
	uid_t uid;
	gid_t gid;
	int64_t start_ns; /* mtime of directories */

	pthread_mutex_t lock;	    /* the tree: every gfs_node field */
	pthread_cond_t commit_cond; /* a writer released or wrote */
	struct gfs_node *root;
	struct gfs_node *limbo; /* detached, still held (ns.c) */
	struct gfs_node **hash; /* (parent, name) -> node */
	size_t hsize, hcount;
	uint64_t next_id;
	uint64_t skipped;  /* keys that are no valid path */
	uint64_t shadowed; /* file keys hidden by a directory */

	pthread_mutex_t ring_lock;
	struct gfs_ring *ring_free; /* idle reader rings, ring_lock */

	struct gfs_fh *open_fhs; /* every open file, fs->lock */

	/*
	 * Keys the store dropped by itself (evicted, expired, corrupt),
	 * queued by the change hook (which the store calls locked for
	 * them, so it only queues) and applied to the tree by the drop
	 * thread (changes.c).  drop_lock guards the queue and is never held
	 * with another lock.
	 */
	pthread_mutex_t drop_lock;
	pthread_cond_t drop_cond;
	struct gfs_drop *drops; /* drop_lock */
	bool drop_stop;		/* drop_lock */
	bool drop_running;
	pthread_t drop_thread;

	/* ns_load runs; a change was applied meanwhile (fs->lock) */
	bool loading, load_raced;

	struct mirror *mirror; /* --mirror: the origin, or NULL */
	/*
	 * Names the origin said are missing (404), remembered for
	 * o.negative_timeout seconds: direct-mapped by a 64-bit hash of
	 * (parent, name), a collision forgets the older name.  The kernel's
	 * negative entries do the same but go with its dentry cache.
	 * Protected by fs->lock.
	 */
	struct gfs_absent {
		uint64_t hash;
		int64_t until_ns; /* CLOCK_MONOTONIC */
	} * absent;
};

#define GFS_ABSENT_SLOTS 4096 /* a power of two */

/*
 * An open file: a pinned reader, or a writer.  Fields under fh->lock,
 * except the list links (fs->lock).
 */
struct gfs_fh {
	pthread_mutex_t lock;
	struct gfs_fh *next, *prev; /* in fs->open_fhs */
	struct gfs_node *node;	    /* holds a node->refs reference */
	bool writing;
	/* reading */
	struct gs_reader *r;
	bool fill;   /* opened on a mirror's fill: gs_read
		      * (waits for the bytes), no ring */
	bool cached; /* counted in node->cached_readers */
	struct gfs_ring *ring;
	uint64_t size;	   /* of the pinned version */
	uint64_t pos;	   /* next byte the reader hands out... */
	const uint8_t *lo; /* ...from here first: the rest of */
	size_t lolen;	   /* the last chunk, [pos, pos+lolen) */
	/* writing */
	struct gs_writer *w; /* NULL: committed, nothing written since */
	uint64_t written;
	int werr;     /* first write error, reported again */
	bool flushed; /* closed with nothing written: counted
		       * in node->closing (see gfs_flush) */
	uint64_t cas; /* from the last commit, 0: none yet */
	char *key;    /* the key the put began with */
	size_t klen;
	/*
	 * Issue 20.  A write at the end (or O_APPEND) appends to the
	 * committed version (gs_put_begin_append).  A write anywhere else,
	 * or a truncate, copies the file into a staging file (@stage, up to
	 * o.rewrite_max bytes), written in place, and committed from there
	 * at flush; the file stays staged until release.
	 */
	bool append; /* O_APPEND: every write goes to the end */
	int stage;   /* the staging file's descriptor, or -1 */
	bool sdirty; /* staged changes that no commit published */
};

/* ---- clocks (read through store/clock.h) ---- */

static inline void ns_to_ts(int64_t ns, struct timespec *ts)
{
	ts->tv_sec = ns / 1000000000ll;
	ts->tv_nsec = ns % 1000000000ll;
}

/* ---- small helpers of every room ---- */

/*
 * The filesystem whose FUSE requests this thread serves (each request sets
 * it, through req_fs).  What such a thread changes in the store the
 * request applies to the tree itself, in the same step: the change hook
 * (changes.c) leaves it be.
 */
extern __thread struct gfs *gfs_self;

static inline struct gfs *req_fs(fuse_req_t req)
{
	gfs_self = fuse_req_userdata(req);
	return gfs_self;
}

/* Called with fs->lock held (the root is never freed). */
static inline struct gfs_node *node_of(struct gfs *fs, fuse_ino_t ino)
{
	return ino == FUSE_ROOT_ID ? fs->root : (struct gfs_node *)ino;
}

static inline fuse_ino_t ino_of(struct gfs *fs, struct gfs_node *n)
{
	return n == fs->root ? FUSE_ROOT_ID : (fuse_ino_t)(uintptr_t)n;
}

/* A committed version is visible; a file only being created is not. */
static inline bool node_visible(const struct gfs_node *n)
{
	return n->dir || n->committed;
}

/*
 * With --mirror: every change is refused.  Replies EROFS and returns true
 * on a mirror mount (the kernel refuses most changes itself: goblinfs
 * mounts it with "ro").
 */
static inline bool refuse_ro(fuse_req_t req)
{
	if (!req_fs(req)->mirror)
		return false;
	fuse_reply_err(req, EROFS);
	return true;
}

/* ---- the namespace (ns.c); every function: called with fs->lock held ---- */

/* Create the root; 0 or -ENOMEM. */
int ns_init(struct gfs *fs);
/* Free every node (at gfs_free, no lock needed). */
void ns_release(struct gfs *fs);
/* Add every key of the store: 0 or -errno.  Takes fs->lock itself. */
int ns_load(struct gfs *fs);

/* The child @name of @dir, or NULL. */
struct gfs_node *ns_child(struct gfs *fs, struct gfs_node *dir,
			  const char *name, size_t len);
/* A new attached child of @dir (which has none named so); NULL: ENOMEM. */
struct gfs_node *ns_add(struct gfs *fs, struct gfs_node *dir, const char *name,
			size_t len, bool isdir);
/* Take @n out of the tree; freed once unreferenced (ns_put). */
void ns_detach(struct gfs *fs, struct gfs_node *n);
/*
 * Give the name of attached file @n to a new file node (the caller fills
 * in its version) and detach @n, which stays referenced by the caller.
 * Returns the new node, or NULL (ENOMEM) with @n untouched.
 */
struct gfs_node *ns_replace(struct gfs *fs, struct gfs_node *n);
/* Move attached @n to (@dir, @name); the name must be free in @dir. */
int ns_move(struct gfs *fs, struct gfs_node *n, struct gfs_node *dir,
	    const char *name, size_t len);
/* Free @n if it is detached and unreferenced (and so on down its
 * successors, whose references it held). */
void ns_put(struct gfs *fs, struct gfs_node *n);

/*
 * The key of @n (its path from the root, no leading '/'), plus '/' for
 * @marker, NUL-terminated, into @buf of GS_KEY_MAX + 2 bytes.  Returns
 * the length, or -ENAMETOOLONG, or -ENOENT when @n is detached.
 */
int ns_key(const struct gfs_node *n, bool marker, char *buf);
/* The key of the child @name of @dir, as ns_key(). */
int ns_child_key(const struct gfs_node *dir, const char *name, size_t len,
		 bool marker, char *buf);

/* Whether @key names a path (see goblinfs(1)): no empty, ".", ".." part. */
bool ns_key_valid(const char *key, size_t klen);

/* Whether @name is a valid component: not empty, ".", "..", no '/'. */
int ns_name_check(const char *name, size_t len);

#define GFS_KEYBUF (GS_KEY_MAX + 2)

/* The mtime of the object described by @m (a mirror's: Last-Modified). */
int64_t gfs_meta_mtime(const struct gfs *fs, const struct gs_meta *m);

/* ---- nodes as the kernel sees them (node.c): with fs->lock held ---- */

void node_attr(struct gfs *fs, struct gfs_node *n, struct stat *st);
/* Fills @e for a reply and counts the lookup it gives. */
void node_entry(struct gfs *fs, struct gfs_node *n, struct fuse_entry_param *e);
/* Wait (at most o.commit_wait) for a commit left to release. */
void wait_commit(struct gfs *fs, struct gfs_node *n);
/* File @t loses its name to file @n: opens of @t get @n. */
void node_succeed(struct gfs_node *t, struct gfs_node *n);
/* The name of @n to a new node with its version; NULL: ENOMEM. */
struct gfs_node *node_fork(struct gfs *fs, struct gfs_node *n);
int node_estale(struct gfs *fs, struct gfs_node *c);
/* The file a path walk that found @n opens. */
struct gfs_node *node_current(struct gfs_node *n);
/* Give directory @d, left empty, its marker object. */
void keep_dir(struct gfs *fs, struct gfs_node *d);
/* The child @name of @dir, from the tree or else the store; or NULL. */
struct gfs_node *find_child(struct gfs *fs, struct gfs_node *dir,
			    const char *name, size_t len);

/* ---- metadata: modes, owners, times, kinds (meta.c), fs->lock held ---- */

/* The room a record of meta_record() needs, a symlink's target included. */
#define GFS_META_REC (96 + GS_ATTR_TARGET_MAX)

/* Show on @n the metadata of version @m (its record's file block). */
void node_meta(struct gfs *fs, struct gfs_node *n, const struct gs_meta *m);
/*
 * The record a new version of @n carries: its file block alone, with
 * times 0 (the commit's), for a put's attr.  The length or -errno.
 */
long meta_record(struct gfs *fs, struct gfs_node *n, uint8_t *buf, size_t cap);
/* The same, taking fs->lock (for a writer's begin, which has it not). */
long meta_record_unlocked(struct gfs *fs, struct gfs_node *n, uint8_t *buf,
			  size_t cap);
/*
 * Store @n's metadata in its object's record (a directory's marker,
 * made when missing) without a new version.  0 or -errno.
 */
int meta_store(struct gfs *fs, struct gfs_node *n);
/*
 * After a commit of @n as version @m: what a setattr changed while it
 * was being written goes into the record too.  Takes fs->lock.
 */
void meta_committed(struct gfs *fs, struct gfs_node *n, const char *key,
		    size_t klen, struct gs_meta *m);
/* @a with @n's metadata and times in its file block, encoded. */
long meta_merge(struct gfs *fs, struct gfs_node *n, struct gs_attr *a,
		uint8_t *buf, size_t cap);
/* The mode the kernel sees (S_IFMT included). */
mode_t node_mode(const struct gfs *fs, const struct gfs_node *n);
/* A new node's owner and mode for request @req in directory @d. */
void meta_new(struct gfs *fs, fuse_req_t req, struct gfs_node *d,
	      struct gfs_node *n, mode_t mode);
/*
 * A write, O_TRUNC open or truncate of file @n by @req's caller: take off
 * the set-user-ID and set-group-ID bits it must lose (node.c).  Called
 * with fs->lock held; 0 or -errno.
 */
int node_drop_privs(struct gfs *fs, struct gfs_node *n, fuse_req_t req);
/* Write directory @d's marker with its metadata (node.c): 0 or -errno. */
int put_marker(struct gfs *fs, struct gfs_node *d);
/* Entries of directory @d changed now: its mtime and ctime (node.c). */
void dir_touched(struct gfs_node *d);
/* Free what a node owns besides its name (ns.c, when it frees one). */
void node_meta_free(struct gfs_node *n);

/* ---- --mirror: the origin (origin.c) ---- */

/* A name the store lacks, asked of the origin; drops fs->lock meanwhile. */
struct gfs_node *origin_child(struct gfs *fs, struct gfs_node *dir,
			      const char *name, size_t len, int *err);
/* Open the fill of @key (not in the store), starting it if need be. */
int open_fill(struct gfs *fs, const char *key, size_t klen,
	      struct gs_reader **r);
/* Revalidate the stale version *@r is on: 1 when *@r is on a new one. */
int open_revalidate(struct gfs *fs, const char *key, size_t klen,
		    struct gs_reader **r);
/* The value of user.goblin.origin of @ino into @out; or -ENODATA. */
int origin_string(struct gfs *fs, fuse_ino_t ino, char *out, size_t outlen);

/* ---- reading (read.c) ---- */

/* The thread's GFS_MAX_IO-byte reply buffer, or NULL (ENOMEM). */
void *thread_buf(void);
/* Give reader @fh a ring and attach it; 0 or -errno (no ring then). */
int fh_ring_attach(struct gfs *fs, struct gfs_fh *fh);
/* Close reader @fh's store reader and give its ring back. */
void fh_reader_close(struct gfs *fs, struct gfs_fh *fh);
/* Free the idle rings (gfs_free). */
void rings_free(struct gfs *fs);

/* ---- writes in place (rewrite.c, issue 20), fh->lock held ---- */

/* pwrite(2) of @size bytes at @off, through the staging file (entered
 * first when need be); -EFBIG past o.rewrite_max, the handle unharmed. */
int stage_write(struct gfs *fs, struct gfs_fh *fh, const char *buf, size_t size,
		uint64_t off);
/* Truncate the handle to @size through the staging file (copying only
 * what is kept).  0 or -errno. */
int fh_resize(struct gfs *fs, struct gfs_fh *fh, uint64_t size);
/* Begin fh->w, a put of the staging file's bytes, for file.c to commit. */
int stage_put(struct gfs *fs, struct gfs_fh *fh, const uint8_t *attr,
	      size_t attr_len);
/* read(2) of a file open for writing (O_RDWR): what it holds now.  Takes
 * fh->lock itself. */
void fh_write_read(fuse_req_t req, struct gfs_fh *fh, size_t size, off_t off);

/* ---- files (file.c) ---- */

/* Close every file the kernel never released (gfs_free). */
void fh_close_all(struct gfs *fs);
/* truncate(2) and ftruncate(2) of file @n to @size (@fi: the open file,
 * or NULL).  0 or -errno. */
int fh_truncate(struct gfs *fs, struct gfs_node *n, struct fuse_file_info *fi,
		uint64_t size);

/* ---- the guard of a dead server's mount (guard.c) ---- */

/*
 * The FUSE connection (its fusectl name) of the mount on @real, a
 * resolved path, from @f in /proc/PID/mountinfo's form: the kernel names
 * it after the superblock's device number.  The last such mount wins (the
 * one on top); -1 when there is none.
 */
long guard_conn_of(FILE *f, const char *real);

/* The mount is going away cleanly: end the guard (before unmount). */
void guard_stop(struct gfs *fs);

/* ---- what other front-ends and the store change (changes.c) ---- */

/* Listen to the store's changes: before ns_load. */
void changes_start(struct gfs *fs);
/* Stop listening to the store and finish the queue (before unmount). */
void changes_stop(struct gfs *fs);
void changes_free(struct gfs *fs);
/*
 * Show what the store holds under @key now: after the last writer of its
 * file let go, since changes that came meanwhile were left to the writer.
 * Takes fs->lock.
 */
void changes_settle(struct gfs *fs, const char *key, size_t klen);

/* ---- the FUSE operations, by room (see session.c's table) ---- */

/* dir.c */
void gfs_lookup(fuse_req_t req, fuse_ino_t parent, const char *name);
void gfs_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup);
void gfs_forget_multi(fuse_req_t req, size_t count,
		      struct fuse_forget_data *forgets);
void gfs_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void gfs_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
		 struct fuse_file_info *fi);
void gfs_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name,
	       mode_t mode);
void gfs_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name);
void gfs_unlink(fuse_req_t req, fuse_ino_t parent, const char *name);
void gfs_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
		fuse_ino_t newparent, const char *newname, unsigned int flags);
void gfs_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent,
	      const char *newname);
void gfs_symlink(fuse_req_t req, const char *link, fuse_ino_t parent,
		 const char *name);
void gfs_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
	       dev_t rdev);
void gfs_readlink(fuse_req_t req, fuse_ino_t ino);
void gfs_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void gfs_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		 struct fuse_file_info *fi);
void gfs_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		     struct fuse_file_info *fi);
/* file.c */
void gfs_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void gfs_create(fuse_req_t req, fuse_ino_t parent, const char *name,
		mode_t mode, struct fuse_file_info *fi);
void gfs_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size,
	       off_t off, struct fuse_file_info *fi);
void gfs_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void gfs_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void gfs_fsync(fuse_req_t req, fuse_ino_t ino, int datasync,
	       struct fuse_file_info *fi);
/* read.c */
void gfs_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
	      struct fuse_file_info *fi);
/* xattr.c */
void gfs_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
		  size_t size);
void gfs_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size);
void gfs_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
		  const char *value, size_t size, int flags);
void gfs_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name);

#endif
