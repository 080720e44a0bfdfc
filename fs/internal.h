/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * goblinfs internals shared by the files of fs/: the in-memory namespace
 * (ns.c) and the filesystem handle.  Not for other folders: they include
 * goblinfs.h.
 */
#ifndef GOBLINFS_INTERNAL_H
#define GOBLINFS_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "../store/goblin.h"
#include "goblinfs.h"

#define GFS_NAME_MAX 255	/* longest path component, bytes */
#define GFS_MAX_IO (1u << 20)	/* max_write, max_readahead, read buffer */

/*
 * One name in the tree.  A file node stands for the key of its path; a
 * directory node for a key prefix (and, when @marker, for the zero-byte
 * object "path/" that keeps an empty directory).  The FUSE node id is the
 * node's address (FUSE_ROOT_ID for the root); st_ino is @id.
 * All fields are protected by fs->lock.
 */
struct gfs_node {
	struct gfs_node *parent;	/* NULL for the root and when detached */
	struct gfs_node *hnext;		/* chain in fs->hash */
	struct gfs_node *next, *prev;	/* siblings, in cookie order */
	struct gfs_node *kids, *kids_tail;	/* directories: children */
	uint64_t nkids;			/* directories: children */
	uint64_t nsubdirs;		/* directories: children that are dirs */
	uint64_t cookie;		/* readdir offset of this entry */
	uint64_t next_cookie;		/* directories: for the next child */
	uint64_t id;			/* st_ino: a counter, never reused */
	uint64_t nlookup;		/* references held by the kernel */
	uint64_t refs;			/* open file handles */
	bool dir;
	bool marker;			/* directories: "path/" object exists */
	bool attached;			/* reachable from the root */
	/* files */
	bool committed;			/* a committed version exists */
	uint64_t size;			/* of the committed version */
	int64_t mtime_ns;		/* of the committed version */
	uint64_t cas;			/* of the committed version */
	uint64_t cached_cas;		/* version the page cache may hold */
	unsigned writers;		/* write handles not released */
	unsigned closing;		/* of which closed with nothing
					 * written, commit at release */
	unsigned cached_readers;	/* read handles on the page cache */
	bool rewrite_pending;		/* made for a writer's retried open:
					 * readers go past the page cache */
	uint64_t wsize;			/* bytes written by the last writer */
	/*
	 * Detached files: the file that took this one's name (renamed over
	 * it, or given it for a rewrite), which holds a refs reference from
	 * here.  An open of this node (a path walk that found it before
	 * the name moved) opens the end of the chain instead.
	 */
	struct gfs_node *successor;
	size_t namelen;
	char *name;			/* NUL-terminated, owned by the node */
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
	uid_t uid;
	gid_t gid;
	int64_t start_ns;		/* mtime of directories */

	pthread_mutex_t lock;		/* the tree: every gfs_node field */
	pthread_cond_t commit_cond;	/* a writer released or wrote */
	struct gfs_node *root;
	struct gfs_node **hash;		/* (parent, name) -> node */
	size_t hsize, hcount;
	uint64_t next_id;
	uint64_t skipped;		/* keys that are no valid path */
	uint64_t shadowed;		/* file keys hidden by a directory */

	pthread_mutex_t ring_lock;
	struct gfs_ring *ring_free;	/* idle reader rings, ring_lock */

	struct gfs_fh *open_fhs;	/* every open file, fs->lock */

	/*
	 * Keys the store dropped by itself (evicted, expired, corrupt),
	 * queued by its drop hook (which runs with the store locked, so it
	 * only queues) and taken out of the tree by the drop thread.
	 * drop_lock guards the queue and is never held with another lock.
	 */
	pthread_mutex_t drop_lock;
	pthread_cond_t drop_cond;
	struct gfs_drop *drops;		/* drop_lock */
	bool drop_stop;			/* drop_lock */
	bool drop_running;
	pthread_t drop_thread;

	/*
	 * --mirror: the origin, or NULL.  fetch_lock makes "not in the
	 * store, so fetch it" one step, so that concurrent opens of one
	 * object start one origin request.
	 */
	struct mirror *mirror;
	pthread_mutex_t fetch_lock;
	/*
	 * Names the origin said are missing (404), remembered for
	 * o.negative_timeout seconds: direct-mapped by a 64-bit hash of
	 * (parent, name), a collision forgets the older name.  The kernel's
	 * negative entries do the same but go with its dentry cache.
	 * Protected by fs->lock.
	 */
	struct gfs_absent {
		uint64_t hash;
		int64_t until_ns;	/* CLOCK_MONOTONIC */
	} *absent;
};

#define GFS_ABSENT_SLOTS 4096	/* a power of two */

/* The mtime of the object described by @m (a mirror's: Last-Modified). */
int64_t gfs_meta_mtime(const struct gfs *fs, const struct gs_meta *m);

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
struct gfs_node *ns_add(struct gfs *fs, struct gfs_node *dir,
			const char *name, size_t len, bool isdir);
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

/* Whether @name is a valid component: not empty, ".", "..", no '/'. */
int ns_name_check(const char *name, size_t len);

#define GFS_KEYBUF (GS_KEY_MAX + 2)

#endif
