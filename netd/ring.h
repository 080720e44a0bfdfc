/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * goblind --ring: goblin's binary protocol (gproto.h) over a shared-memory
 * ring per client (ring_shm.h), set up over a Unix socket.  Its rooms:
 *   ring.c      the setup (memfd and eventfds by SCM_RIGHTS), the loop
 *               (busy-poll for a bounded time, then park), ring_ops
 *   ring_req.c  the requests: get and getrange streamed head first from
 *               a store reader, set streamed into a store writer,
 *               delete, touch, stats, noop
 *   ring_io.c   frames in and out of the two rings, kicks, checks of
 *               what the client wrote
 */
#ifndef GOBLIND_RING_H
#define GOBLIND_RING_H

#include "goblind.h"
#include "gproto.h"
#include "ring_shm.h"

/* The longest frame a client may send: a set's first window, its key. */
#define RING_RX_MAX (GP_REQ_FIXED + GP_KEY_MAX + GR_WINDOW)

enum ring_job {
	RJ_NONE = 0, /* between requests */
	RJ_SEND,     /* a value going out: a reader's, or rs->mem's */
	RJ_SET,	     /* a set's data frames coming in, into rs->wr */
	RJ_SKIP,     /* ... a refused set's: dropped, then the reply */
	RJ_REPLY,    /* a reply waiting for room in the reply ring */
};

struct ring_state {
	struct gr_ctl *ctl; /* the mapping, NULL until set up */
	uint8_t *req, *rep; /* its two rings */
	int kick_fd;	    /* the client writes it: in the worker's epoll */
	int wake_fd;	    /* we write it when the client is parked */
	bool parked;	    /* srv_parked is set: woken, check the socket */
	int64_t active_ns;  /* the last progress: the spin counts from it */
	int64_t sock_ns;    /* the last look at the setup socket */
	uint64_t req_head;  /* our copies of the indexes we own */
	uint64_t rep_tail;
	uint64_t rep_head_seen; /* the client's rep_head, as last read */
	bool want_room;		/* the last reply frame did not fit */
	uint64_t room_head;	/* the reply ring's head then: parked, a move
			     * of it (the client's kick) wakes us */
	uint8_t *rx;	 /* RING_RX_MAX: a request copied out of the ring */
	const char *err; /* why the connection is dropped (the log) */

	/* the request in progress */
	enum ring_job job;
	uint32_t opaque;
	uint16_t rflags;     /* its GP_RQ_* */
	struct gp_resp resp; /* the reply (RJ_SEND: its header) */
	bool resp_sent;	     /* RJ_SEND: the header is out */
	struct gs_reader *r; /* RJ_SEND from the store */
	uint8_t *mem;	     /* RJ_SEND from memory (stats), malloc'ed */
	struct gs_chunk ch;  /* the chunk being sent */
	size_t ch_off;	     /* ... its bytes sent */
	bool have_ch;
	uint64_t sent, total; /* the transfer's bytes sent, in all */
	struct gs_writer *wr; /* RJ_SET */
	uint64_t set_got, set_len;
	int set_mode; /* enum gs_put_mode */
};

struct ring_conn {
	struct conn c;
	struct ring_state s;
};

static inline struct ring_state *ring_of(struct conn *c)
{
	return &((struct ring_conn *)c)->s;
}

extern const struct proto_ops ring_ops;

/* What a step of a request came to. */
enum ring_step {
	RS_DONE = 0, /* progress: go on */
	RS_IDLE,     /* nothing to do until the client writes or reads */
	RS_DISK,     /* a store read is in flight */
	RS_CLOSE,    /* drop the connection (rs->err says why) */
};

/* ---- ring_io.c ---- */

/*
 * The next frame of the request ring, copied out of the shared mapping
 * into rs->rx (the client may rewrite the ring meanwhile) and decoded:
 * RS_DONE with *m, RS_IDLE when the ring is empty, RS_CLOSE when what the
 * client wrote is not a frame (rs->err).
 */
enum ring_step ring_take(struct conn *c, struct gp_msg *m);
/*
 * Room for a frame of @len bytes in the reply ring: its address, or NULL
 * while the client has not read enough yet.  ring_put() publishes it.
 */
uint8_t *ring_room(struct conn *c, uint64_t len);
void ring_put(struct conn *c, uint64_t len);
/* The client parked waiting for a reply: kick it. */
void ring_kick_client(struct conn *c);
/* Encode @r (and @inline_len bytes of @inl) into the reply ring:
 * RS_DONE, or RS_IDLE when there is no room yet. */
enum ring_step ring_reply(struct conn *c, uint32_t opaque,
			  const struct gp_resp *r, const void *inl,
			  uint32_t inline_len);

/* ---- ring_req.c ---- */

/* One step: the request in progress, or the next one. */
enum ring_step ring_step(struct conn *c);
/* Free what the request in progress holds. */
void ring_req_release(struct conn *c);

#endif
