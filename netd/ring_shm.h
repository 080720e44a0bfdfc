/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The shared-memory ring of goblind --ring (issue 22): the layout of the
 * mapping one client and the server share, and the byte rings in it.
 * Pure (inline, system headers only): goblind's netd/ring.c and the
 * client library cli/goblin_client.c both include it.  Frames in the
 * rings are gproto.h's; netd/PROTOCOL.md, "The shared-memory ring".
 */
#ifndef RING_SHM_H
#define RING_SHM_H

#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#define GR_MAGIC    0x31524e49424f47ull /* "GOBINR1" */
#define GR_VERSION  1
#define GR_LINE	    64		 /* a cache line: the ring's slot */
#define GR_CTL_SIZE 4096	 /* the control page before the rings */
#define GR_REQ_SIZE (1u << 20)	 /* client -> server bytes */
#define GR_REP_SIZE (1u << 20)	 /* server -> client bytes */
#define GR_WINDOW   (128u << 10) /* a data frame's most bytes */
#define GR_MAP_SIZE (GR_CTL_SIZE + GR_REQ_SIZE + GR_REP_SIZE)
/* A frame never wraps: where the next one would not fit before the end,
 * the writer puts this (a u32 0: no frame's header starts so) and goes
 * on at the ring's start. */
#define GR_WRAP	    0u

/* One index or flag alone on its cache line: no false sharing. */
struct gr_line {
	_Atomic uint64_t v;
	uint8_t pad[GR_LINE - sizeof(uint64_t)];
};

/* The control page, at offset 0 of the mapping. */
struct gr_ctl {
	/* line 0: written by the server before it hands the memfd over */
	uint64_t magic;
	uint32_t version;
	uint32_t req_off, req_size; /* the request ring: offset, bytes */
	uint32_t rep_off, rep_size; /* the reply ring */
	uint32_t window;	    /* a data frame's most bytes */
	uint32_t spin_us;	    /* the server busy-polls this long */
	uint8_t pad0[GR_LINE - 36];
	struct gr_line req_tail;   /* client: bytes written, ever */
	struct gr_line req_head;   /* server: bytes consumed, ever */
	struct gr_line rep_tail;   /* server */
	struct gr_line rep_head;   /* client */
	struct gr_line srv_parked; /* server: 1 = parked, kick its eventfd */
	struct gr_line cli_parked; /* client: 1 = parked, kick its eventfd */
};

/* Bytes a frame of @len takes in a ring: whole cache-line slots. */
static inline uint64_t gr_slots(uint64_t len)
{
	return (len + GR_LINE - 1) & ~(uint64_t)(GR_LINE - 1);
}

/*
 * Where a writer at @tail (reader at @head) of a ring of @size bytes
 * puts a frame of @len: 0 and *@pos (the offset in the ring; the bytes
 * before the end it skips, marked GR_WRAP, are *@skip), or -1 while the
 * room is not there yet.  The caller writes the frame, then publishes
 * tail + *skip + gr_slots(len).
 */
static inline int gr_reserve(uint8_t *base, uint64_t size, uint64_t head,
			     uint64_t tail, uint64_t len, uint64_t *pos,
			     uint64_t *skip)
{
	uint64_t off = tail % size, need = gr_slots(len);
	uint64_t before_end = size - off;

	*skip = need > before_end ? before_end : 0;
	if (size - (tail - head) < *skip + need)
		return -1;
	if (*skip) {
		uint32_t wrap = GR_WRAP;

		memcpy(base + off, &wrap, sizeof(wrap));
		off = 0;
	}
	*pos = off;
	return 0;
}

#endif /* RING_SHM_H */
