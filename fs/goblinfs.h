/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * goblinfs: a Goblin Store as a filesystem (libfuse3, low-level API).
 * The only header of fs/ that other folders include: goblinfs(1) and
 * goblind --mount host the same code through it.
 */
#ifndef GOBLINFS_H
#define GOBLINFS_H

#include <stddef.h>
#include <stdint.h>

struct gs_store;
struct fuse_args;
struct gfs;

/* Mount options.  Fill with gfs_options_init() and change what you need. */
struct gfs_options {
	unsigned max_threads;	 /* FUSE worker threads (--threads) */
	double entry_timeout;	 /* seconds the kernel caches names */
	double attr_timeout;	 /* seconds the kernel caches attributes */
	double commit_wait;	 /* seconds an open waits for an empty file's
				  * commit (see goblinfs(1), WRITING) */
	const char *fsname;	 /* shown in /proc/mounts, NULL: "goblinfs" */
	const char *mirror;	 /* origin URL: read-through, read-only */
	double negative_timeout; /* seconds the kernel caches a missing name */
	uint64_t direct_read; /* files this big bypass the page cache; 0 never */
	unsigned mirror_stale_on_error; /* seconds past its freshness a
					 * stored file is still read when the
					 * origin fails; 0: off */
	/* issue 20: in-place writes (see goblinfs(1), WRITING) */
	uint64_t rewrite_max;  /* largest file written in place, bytes */
	const char *stage_dir; /* where such a file's copy is kept while
				 * it is written; NULL: $TMPDIR or /var/tmp */
};

/*
 * Defaults: 16 threads, 1 s timeouts (5 s for missing names with a
 * mirror), 2 s commit wait, no mirror, direct reads from 64 MiB, files
 * up to 256 MiB written in place.  A negative_timeout below 0 means
 * entry_timeout (without a mirror) or 5 s (with one).
 */
void gfs_options_init(struct gfs_options *o);

/*
 * A filesystem over the open store @s, which the caller keeps open until
 * after gfs_free().  Builds the namespace from every key of the store (see
 * goblinfs(1) for the mapping).  Returns NULL and a one-line reason in
 * @err (when not NULL) on failure.
 */
struct gfs *gfs_new(struct gs_store *s, const struct gfs_options *o, char *err,
		    size_t errlen);

/*
 * Create the FUSE session and mount it on @mountpoint.  @args are libfuse
 * arguments (argv[0] first, then "-o" options); libfuse keeps no pointer
 * into them after the call.  Installs the SIGINT/SIGTERM/SIGHUP handlers
 * that end gfs_loop().  Returns 0, or -1 after libfuse printed why.
 */
int gfs_mount(struct gfs *fs, const char *mountpoint, struct fuse_args *args);

/*
 * Start the mount's guard, this program spawned again, which aborts the
 * FUSE connection if this process dies with a thread stuck in the kernel
 * (fs/guard.c).  Call
 * after gfs_mount() and any daemonizing (the guard keeps the standard
 * error it finds), from the thread that lives as long as the mount: the
 * guard takes that thread's end for the server's.
 */
void gfs_guard(struct gfs *fs);

/*
 * Serve requests on o->max_threads threads until the filesystem is
 * unmounted or a signal ends the session.  Returns 0, or a negative errno
 * when the session failed.
 */
int gfs_loop(struct gfs *fs);

/* Ask a running gfs_loop() to return (any thread, signal-safe). */
void gfs_exit(struct gfs *fs);

/* Unmount (if still mounted) and destroy the session. */
void gfs_unmount(struct gfs *fs);

/*
 * Free the filesystem: writers still open are aborted (their files are
 * not committed), readers are closed.  Call after gfs_unmount().
 */
void gfs_free(struct gfs *fs);

#endif
