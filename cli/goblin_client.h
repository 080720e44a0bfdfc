/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * goblin's client library for the binary protocol (issue 22): connect,
 * get into a buffer or by a callback per window, set from a buffer,
 * delete, touch, stats.  Transports: the shared-memory ring of goblind
 * --ring (same host), and RDMA verbs (goblind --rdma-port, through
 * rdma_client.h: get, set without add/replace/cas, delete and the
 * general stats; touch and noop say -EOPNOTSUPP).  One request in flight per client; a client is
 * not thread-safe.  Every function returns 0 or -errno.
 */
#ifndef GOBLIN_CLIENT_H
#define GOBLIN_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum gc_transport {
	GC_RING, /* @where: goblind's --ring socket path */
	GC_RDMA, /* @where: host, @port: --rdma-port */
};

struct goblin_client;

/* A value's metadata, as the response header gives it. */
struct gc_meta {
	uint64_t size; /* the whole value's bytes */
	uint64_t cas;
	uint32_t flags; /* the client flags it was set with */
	uint32_t ttl;	/* seconds left, 0: none */
};

/*
 * Times of the last request, CLOCK_MONOTONIC nanoseconds: sent (the
 * request's frame published), header (the response header visible),
 * first (its first value bytes visible; 0 without any), last (the last
 * byte).  The bench prints their differences.
 */
struct gc_times {
	int64_t sent, header, first, last;
};

/*
 * A window of a value: @len bytes at value offset @off, valid during the
 * call.  Return 0 to go on, or -errno to stop (the rest is read and
 * dropped; gc_get_cb() returns that error).
 */
typedef int (*gc_window_fn)(void *arg, const void *data, size_t len,
			    uint64_t off);

/**
 * Connect over @t to @where (ring: the socket path; RDMA: host, @port).
 * 0 and *@out, or -errno: -EPROTONOSUPPORT for a transport not built,
 * -EPROTO when the server does not speak the ring.  @why (may be NULL)
 * gets a message.  The caller frees *@out with gc_close().
 */
int gc_connect(enum gc_transport t, const char *where, unsigned port,
	       struct goblin_client **out, char *why, size_t wlen);
void gc_close(struct goblin_client *c);

/**
 * Get @key into @buf (@cap bytes).  0 with *@m (may be NULL) filled,
 * -ENOENT on a miss, -EMSGSIZE when the value is larger than @cap (m->size
 * says how large; the value was read and dropped), -EIO when the server
 * failed, -EPIPE when the connection is gone.
 */
int gc_get(struct goblin_client *c, const void *key, size_t klen, void *buf,
	   size_t cap, struct gc_meta *m);
/* Get @key window by window into @fn; errors as gc_get(). */
int gc_get_cb(struct goblin_client *c, const void *key, size_t klen,
	      gc_window_fn fn, void *arg, struct gc_meta *m);

/* Set options: 0 is a plain set without expiry. */
struct gc_set_opts {
	uint32_t flags; /* client flags */
	uint32_t ttl;	/* seconds, 0: none */
	uint64_t cas;	/* only if the value's CAS is this, 0: any */
	bool add;	/* only if absent */
	bool replace;	/* only if present */
};

/**
 * Store @len bytes of @val under @key (windows of the ring's size: any
 * length).  0, -EEXIST (add over a key, a CAS mismatch), -ENOENT (replace
 * of a missing key, a CAS on one), -EFBIG (over the server's limit),
 * -ENOSPC (no room now), -EIO, -EPIPE.
 */
int gc_set(struct goblin_client *c, const void *key, size_t klen,
	   const void *val, size_t len, const struct gc_set_opts *o);
/* Delete @key: 0 or -ENOENT, -EIO, -EPIPE. */
int gc_delete(struct goblin_client *c, const void *key, size_t klen);
/* A new ttl for @key: 0 or -ENOENT. */
int gc_touch(struct goblin_client *c, const void *key, size_t klen,
	     uint32_t ttl);
/* A round trip with nothing in it. */
int gc_noop(struct goblin_client *c);
/**
 * The server's counters ("STAT name value" lines) of @group (NULL: the
 * general ones) in a malloc'ed NUL-terminated *@text the caller frees.
 */
int gc_stats(struct goblin_client *c, const char *group, char **text,
	     size_t *len);

/* The times of the last request. */
const struct gc_times *gc_last_times(const struct goblin_client *c);

/* A message for the errors above. */
const char *gc_strerror(int err);

#endif
