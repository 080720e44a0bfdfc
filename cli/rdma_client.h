/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A client of goblind's RDMA transport (issue 22): goblin's binary
 * protocol (netd/gproto.h, netd/PROTOCOL.md) on one RC queue pair.
 * Blocking, one request at a time; a client wanting several QPs opens
 * several.  Gets land in a registered window the server RDMA WRITEs
 * into, window by window (getrange for the rest of a value larger than
 * the window); sets larger than a SEND are pulled by the server by RDMA
 * READ from the caller's buffer, registered for the request.
 */
#ifndef GOBLIN_RDMA_CLIENT_H
#define GOBLIN_RDMA_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GRC_MSG	  16384 /* a SEND's most bytes: goblind's RD_MSG */
#define GRC_RECVS 16	/* receives posted: goblind's RD_SENDS */

struct grc;

/* What a get found (gp_resp's fields). */
struct grc_meta {
	uint64_t size, cas;
	uint32_t flags, ttl;
};

/*
 * Receives @n bytes of the value at offset @off, in order: straight from
 * the window the server wrote them into.  Return 0, or -1 to stop.
 */
typedef int grc_sink(void *arg, const void *p, size_t n, uint64_t off);

/* Per request, for bench: monotonic ns (0: not reached). */
struct grc_times {
	int64_t sent, header, first, last;
};

/*
 * Connect to goblind's --rdma-port @port on @host (an address of an
 * RDMA device), with a registered window of @window bytes for gets
 * (0: none, values then come in SENDs).  @timeout_ms bounds each wait.
 * NULL on failure, with the reason in @err.
 */
struct grc *grc_connect(const char *host, const char *port, size_t window,
			int timeout_ms, char *err, size_t errlen);
void grc_close(struct grc *c);
/* The last error's text. */
const char *grc_error(const struct grc *c);

/*
 * Get @key: its bytes to @sink, in order.  0, 1 when there is no such
 * key, -1 on an error (grc_error(); a failed connection is not usable
 * after it).  *@m and *@t are filled when not NULL.
 */
int grc_get(struct grc *c, const void *key, size_t klen, grc_sink *sink,
	    void *arg, struct grc_meta *m, struct grc_times *t);
/* A registered window: the client's own (grc_window_of), or one the
 * caller registered itself with the QP's protection domain. */
struct grc_window {
	uint64_t addr;
	uint32_t rkey, len;
};

/* The client's own window: false when it has none. */
bool grc_window_of(const struct grc *c, struct grc_window *w);
/*
 * grc_get() into the window @w of the caller's memory (NULL: none,
 * the value then comes in SENDs).  The server checks only the length:
 * a wrong rkey fails the transfer, the connection with it.
 */
int grc_get_in(struct grc *c, const struct grc_window *w, const void *key,
	       size_t klen, grc_sink *sink, void *arg, struct grc_meta *m,
	       struct grc_times *t);
/* Set @key to @len bytes of @val.  0 or -1. */
int grc_set(struct grc *c, const void *key, size_t klen, const void *val,
	    size_t len, uint32_t flags, uint32_t ttl);
/* Delete @key: 0, 1 when there is none, -1. */
int grc_del(struct grc *c, const void *key, size_t klen);
/* The server's counters, "name value\n" lines, to @sink.  0 or -1. */
int grc_stats(struct grc *c, grc_sink *sink, void *arg);

#endif
