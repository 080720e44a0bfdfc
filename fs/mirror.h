/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * goblinfs --mirror: read-through from an HTTP origin, as thin glue over
 * the origin client both mirrors share (store/origin/origin.h): a HEAD
 * for lookups, and the fetcher's GET for opens, whose response streams
 * into a store fill that readers read while it arrives; concurrent opens
 * of one object share one origin request, and the RFC 9111 shared-cache
 * rules decide what is kept, as for goblind --mirror.
 */
#ifndef GOBLINFS_MIRROR_H
#define GOBLINFS_MIRROR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct gs_store;
struct gs_meta;
struct gs_reader;
struct mirror;

struct mirror_stats {
	uint64_t heads;	   /* HEAD requests sent to the origin */
	uint64_t gets;	   /* GET requests sent to the origin */
	uint64_t bytes;	   /* body bytes received by GETs */
	uint64_t failures; /* GETs that failed: nothing was cached */
};

/*
 * A mirror of the origin at @url (http:// or https://, no query) into
 * @s.  With @stale_on_error_s, a stored object at most that many seconds
 * past its freshness is read when the origin fails or times out (the
 * fetcher's stale_on_error_s).  Returns NULL and a one-line reason in
 * @err on failure.
 */
struct mirror *mirror_new(struct gs_store *s, const char *url,
			  unsigned stale_on_error_s, char *err, size_t errlen);

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
 * Open @key (not in the store) for reading from the origin: a reader on
 * the fill that brings it (GS_GET_FILL; gs_read() waits for its bytes),
 * started unless one is running already (then shared).  What the origin
 * marks as not for a shared cache (no-store, private, Vary ...) is read
 * through the same way but not kept: the next open fetches it again.  A transfer that fails aborts the fill (its readers get
 * -ECANCELED) and caches nothing.  Blocks until the response head is in
 * (the fetcher's timeout at most).  0 with *@r (gs_reader_close() it),
 * -ENOENT when the origin answers 404 or 410, -EIO for any other answer
 * but 200 or when the origin cannot be reached, or -ENOMEM.
 */
int mirror_open(struct mirror *m, const char *key, size_t klen,
		struct gs_reader **r);

/*
 * Whether the stored object described by @meta may be read without asking
 * the origin: fresh by the RFC 9111 rules it was stored with (its
 * attribute record), or not from an origin at all (a goblind PUT).
 */
bool mirror_fresh(const struct gs_meta *meta);

/*
 * Revalidate the stale stored version @stale of @key (the caller keeps
 * its reader open during the call): a request conditional on its
 * validators (If-None-Match, If-Modified-Since), joined with any fetch of
 * @key running.  A 304 refreshes the stored record and *@r is a reader on
 * the same bytes (same cas); a 200 replaces the object and *@r is on the
 * new version's fill (readers of the old version keep theirs).  Within
 * the stored response's stale-while-revalidate (RFC 5861): 0 with *@r
 * NULL at once, @stale may be read as it is, and one revalidation runs
 * in the background.  Errors as mirror_open()'s.
 */
int mirror_revalidate(struct mirror *m, const char *key, size_t klen,
		      const struct gs_meta *stale, struct gs_reader **r);

void mirror_stats_get(struct mirror *m, struct mirror_stats *st);

/*
 * The modification time of an object a mirror cached, in nanoseconds: the
 * origin's Last-Modified kept in @meta's attribute record, or the commit
 * time when there is none.
 */
int64_t mirror_meta_mtime(const struct gs_meta *meta);

#endif
