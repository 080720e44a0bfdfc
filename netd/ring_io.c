/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * goblind --ring: frames in and out of a client's two rings.  Everything
 * the client wrote is checked before use: its tail against our head and
 * the ring's size, each frame's length against the ring and the limit,
 * its bytes decoded from a private copy (the client may rewrite them
 * while we look), and the reply ring's head it moves against our tail.
 */
#include <endian.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "ring.h"

static enum ring_step bad(struct ring_state *rs, const char *why)
{
	rs->err = why;
	return RS_CLOSE;
}

enum ring_step ring_take(struct conn *c, struct gp_msg *m)
{
	struct ring_state *rs = ring_of(c);
	const uint64_t size = GR_REQ_SIZE;
	uint64_t tail, avail, off;
	uint32_t word, flen;
	enum gp_result r;
	size_t used;

	for (;;) {
		/* the next frame's first two slots are fetched with the tail,
		 * not after it (see the client's touch()) */
		const volatile uint8_t *next = rs->req + rs->req_head % size;

		(void)next[0];
		if (rs->req_head % size + GR_LINE < size)
			(void)next[GR_LINE];
		tail = atomic_load_explicit(&rs->ctl->req_tail.v,
					    memory_order_acquire);
		avail = tail - rs->req_head;
		if (!avail)
			return RS_IDLE;
		if (avail > size || avail % GR_LINE)
			return bad(rs, "request ring tail out of range");
		off = rs->req_head % size;
		memcpy(&word, rs->req + off, sizeof(word));
		if (word != GR_WRAP)
			break;
		if (!off || size - off > avail)
			return bad(rs, "bad wrap in the request ring");
		rs->req_head += size - off;
	}
	memcpy(rs->rx, rs->req + off, GP_HDR_LEN);
	memcpy(&flen, rs->rx + 8, sizeof(flen));
	flen = le32toh(flen);
	if (flen < GP_HDR_LEN || flen > RING_RX_MAX || gr_slots(flen) > avail ||
	    off + flen > size)
		return bad(rs, "frame length out of range");
	memcpy(rs->rx, rs->req + off, flen);
	rs->req_head += gr_slots(flen);
	atomic_store_explicit(&rs->ctl->req_head.v, rs->req_head,
			      memory_order_release);
	r = gp_decode(rs->rx, flen, RING_RX_MAX, m, &used);
	if (r != GP_OK)
		return bad(rs, gp_strerror(r));
	return RS_DONE;
}

uint8_t *ring_room(struct conn *c, uint64_t len)
{
	struct ring_state *rs = ring_of(c);
	uint64_t head = rs->rep_head_seen, pos, skip;

	/* the client's head is read only when the one we saw has no room:
	 * its cache line then stays the client's */
	if (gr_reserve(rs->rep, GR_REP_SIZE, head, rs->rep_tail, len, &pos,
		       &skip) == 0) {
		rs->want_room = false;
		rs->rep_tail += skip;
		return rs->rep + pos;
	}
	head = atomic_load_explicit(&rs->ctl->rep_head.v, memory_order_acquire);
	rs->rep_head_seen = head;

	/* a head the client moved past our tail, or backwards past what
	 * fits, is caught here: the room would be negative or too much */
	if (head > rs->rep_tail || rs->rep_tail - head > GR_REP_SIZE) {
		rs->err = "reply ring head out of range";
		return NULL;
	}
	if (gr_reserve(rs->rep, GR_REP_SIZE, head, rs->rep_tail, len, &pos,
		       &skip) < 0) {
		rs->want_room = true;
		rs->room_head = head;
		return NULL;
	}
	rs->want_room = false;
	rs->rep_tail += skip;
	return rs->rep + pos;
}

void ring_put(struct conn *c, uint64_t len)
{
	struct ring_state *rs = ring_of(c);

	rs->rep_tail += gr_slots(len);
	atomic_store_explicit(&rs->ctl->rep_tail.v, rs->rep_tail,
			      memory_order_release);
	ring_kick_client(c);
}

void ring_kick_client(struct conn *c)
{
	struct ring_state *rs = ring_of(c);
	uint64_t one = 1;

	/* pairs with the client's store of cli_parked and its fence before
	 * it looks at rep_tail a last time (Dekker): one of us sees the
	 * other's write */
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&rs->ctl->cli_parked.v,
				 memory_order_relaxed) &&
	    write(rs->wake_fd, &one, sizeof(one)) < 0) {
		/* the counter is full: the client has kicks to read */
	}
}

enum ring_step ring_reply(struct conn *c, uint32_t opaque,
			  const struct gp_resp *r, const void *inl,
			  uint32_t inline_len)
{
	uint64_t len = GP_RESP_FIXED + (uint64_t)inline_len;
	uint8_t *p = ring_room(c, len);
	int n;

	if (!p)
		return ring_of(c)->err ? RS_CLOSE : RS_IDLE;
	n = gp_encode_resp(p, len, opaque, r, inl, inline_len);
	if (n < 0)
		return bad(ring_of(c), "cannot encode a reply");
	ring_put(c, (uint64_t)n);
	return RS_DONE;
}
