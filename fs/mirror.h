/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Read-through from an HTTP origin (libcurl): HEAD for lookups, and a GET
 * streamed into a store fill, so that readers get bytes as they arrive and
 * concurrent opens of one object share one origin request.
 */
#ifndef GOBLINFS_MIRROR_H
#define GOBLINFS_MIRROR_H

#include <stddef.h>
#include <stdint.h>

struct gs_store;
struct gs_meta;
struct mirror;

struct mirror_stats {
	uint64_t heads;		/* HEAD requests sent to the origin */
	uint64_t gets;		/* GET requests sent to the origin */
	uint64_t bytes;		/* body bytes received by GETs */
	uint64_t failures;	/* GETs that failed: nothing was cached */
};

/*
 * A mirror of the origin at @url (http:// or https://, no query).  Returns
 * NULL and a one-line reason in @err on failure.
 */
struct mirror *mirror_new(const char *url, char *err, size_t errlen);

/*
 * Stops the fetches still running (their fills are aborted: nothing
 * half-fetched is cached), waits for their threads, then frees @m.
 */
void mirror_free(struct mirror *m);

/* mirror_head(): the name is a directory on the origin. */
#define MIRROR_DIR 1

/*
 * HEAD <url>/<path>.  0 with the size (Content-Length) and modification
 * time (Last-Modified in unix seconds, 0 when absent) of a file;
 * MIRROR_DIR when the origin redirected to <path>/ (how web servers answer
 * for a directory) and that answered 200 or 403; -ENOENT on 404 or 410;
 * -EIO on any other answer, a 200 without a Content-Length, or a transport
 * error.  A path is a key: '/'-separated, each segment percent-encoded on
 * the wire.
 */
int mirror_head(struct mirror *m, const char *path, uint64_t *size,
		int64_t *mtime);

/*
 * Fetch <url>/<path> into @s under @key as a fill of @size bytes and
 * return once the fill has begun: readers open it with GS_GET_FILL and get
 * bytes as they arrive.  The transfer runs on its own thread.  A transfer
 * that fails, or whose body is not exactly @size bytes, aborts the fill
 * (its readers get -ECANCELED) and caches nothing.  @mtime (unix seconds,
 * 0: unknown) is kept in the object's attributes as a Last-Modified
 * header line (see mirror_meta_mtime()).  Returns 0, -EEXIST
 * when a fill of @key is running already (open that one), or the error of
 * gs_put_begin().
 */
int mirror_fetch(struct mirror *m, struct gs_store *s, const char *path,
		 const char *key, uint64_t size, int64_t mtime);

void mirror_stats_get(struct mirror *m, struct mirror_stats *st);

/*
 * The modification time of an object a mirror cached, in nanoseconds: the
 * origin's Last-Modified kept in @meta's attributes, or the commit time
 * when there is none.
 */
int64_t mirror_meta_mtime(const struct gs_meta *meta);

#endif
