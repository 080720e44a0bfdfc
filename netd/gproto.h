/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * goblin's binary protocol (issue 22): the frames the shared-memory ring
 * and RDMA carry, their encoder and their decoder.  Pure: no transport,
 * no store, no allocation.  The schema is netd/PROTOCOL.md.
 */
#ifndef GPROTO_H
#define GPROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GP_SCHEMA_ID 0x4742 /* "BG" on the wire: goblin's schema */
#define GP_VERSION   1

#define GP_HDR_LEN    16	 /* every frame: the message header */
#define GP_REQ_BLOCK  56	 /* a request's fixed block */
#define GP_RESP_BLOCK 48	 /* a response's fixed block */
#define GP_DATA_BLOCK 16	 /* a data window's fixed block */
#define GP_KEY_MAX    4096	 /* the store's GS_KEY_MAX */
#define GP_FRAME_MIN  GP_HDR_LEN /* no frame is shorter */
#define GP_FRAME_MAX  (1u << 30) /* nor longer, whatever the transport */
#define GP_REQ_FIXED  (GP_HDR_LEN + GP_REQ_BLOCK)
#define GP_RESP_FIXED (GP_HDR_LEN + GP_RESP_BLOCK)
#define GP_DATA_FIXED (GP_HDR_LEN + GP_DATA_BLOCK)

/* The template id of the header: what the frame is. */
enum gp_template {
	GP_T_GET = 1,	   /* the value, from its first byte */
	GP_T_GETRANGE = 2, /* bytes [offset, offset + length) of the value */
	GP_T_SET = 3,	   /* store length bytes: inline, then DATA frames */
	GP_T_DELETE = 4,
	GP_T_TOUCH = 5, /* a new ttl */
	GP_T_STATS = 6, /* the server's counters, "name value\n" lines */
	GP_T_NOOP = 7,	/* answered by an empty OK: a ping, a fence */
	GP_T_RESP = 64, /* the answer to one request (same opaque) */
	GP_T_DATA = 65, /* one window of a value, either direction */
};

/* Request flags (gp_req.flags). */
#define GP_RQ_QUIET   0x0001 /* set/delete/touch: no reply when it worked */
#define GP_RQ_NOVALUE 0x0002 /* get/getrange: metadata only, no bytes */
#define GP_RQ_ADD     0x0004 /* set: only if the key is absent */
#define GP_RQ_REPLACE 0x0008 /* set: only if the key is present */
#define GP_RQ_WINDOW \
	0x0010 /* get: win_* name the client's window (RDMA);
			      * set: the value is there, pulled by RDMA READ */
#define GP_RQ_ALL 0x001f

/* Response flags (gp_resp.flags). */
#define GP_RS_VALUE 0x0001 /* length bytes of value follow */
#define GP_RS_ALL   0x0001

/* Data window flags (gp_data.flags). */
#define GP_DF_LAST 0x0001 /* the value's last window */
#define GP_DF_PLACED \
	0x0002 /* the bytes are in the client's window (RDMA
			     * WRITE), not inline: a BULK_READY */
#define GP_DF_ALL 0x0003

/* Response status: what a request came to. */
enum gp_status {
	GP_S_OK = 0,
	GP_S_NOT_FOUND = 1, /* no such key (get, delete, touch, replace) */
	GP_S_EXISTS = 2,    /* CAS mismatch, or add over a present key */
	GP_S_NOT_STORED = 3,
	GP_S_TOO_LARGE = 4,    /* over the server's item limit */
	GP_S_BAD_REQUEST = 5,  /* a frame that decoded but makes no sense */
	GP_S_BUSY = 6,	       /* out of a resource for now: retry */
	GP_S_ERROR = 7,	       /* the server failed (an I/O error) */
	GP_S_RANGE = 8,	       /* getrange outside the value */
	GP_S_WINDOW = 9,       /* the client's window is too small or bad */
	GP_S_UNSUPPORTED = 10, /* a transport without that request */
	GP_S_MAX = 10,
};

/* What gp_decode() found. */
enum gp_result {
	GP_OK = 0,	 /* a frame in *m, *used bytes long */
	GP_MORE,	 /* not a whole frame yet: @need bytes in all */
	GP_BAD_SCHEMA,	 /* not this schema: not our protocol */
	GP_BAD_VERSION,	 /* a version this decoder does not speak */
	GP_BAD_TEMPLATE, /* an unknown template id */
	GP_BAD_BLOCK,	 /* block length not the template's */
	GP_BAD_LENGTH,	 /* lengths that do not add up */
	GP_TOO_BIG,	 /* a frame over the caller's limit */
	GP_BAD_KEY,	 /* empty where one is needed, or too long */
	GP_BAD_FLAGS,	 /* flags this template does not have */
	GP_BAD_FIELD,	 /* a field outside its range */
};

/* The message header of every frame (16 bytes). */
struct gp_hdr {
	uint16_t block_len; /* the fixed block's length, per template */
	uint16_t template_id;
	uint16_t schema_id;
	uint16_t version;
	uint32_t frame_len; /* header + block + variable part */
	uint32_t opaque;    /* the client's request id; echoed */
};

/* A request's fields (block, then key, then inline value bytes). */
struct gp_req {
	uint16_t flags; /* GP_RQ_* */
	uint16_t key_len;
	uint32_t ttl;	       /* set, touch: seconds, 0 = none */
	uint32_t client_flags; /* set: kept with the value, returned by get */
	uint32_t win_key;      /* GP_RQ_WINDOW: the window's rkey */
	uint64_t cas;	       /* set, delete: only if the CAS is this; 0 any */
	uint64_t offset;       /* getrange: first byte */
	uint64_t length;       /* getrange: bytes (0 = to the end); set: the
				* value's size */
	uint64_t win_addr;     /* GP_RQ_WINDOW: the window's address */
	uint32_t win_len;      /* GP_RQ_WINDOW: its length */
};

/* A response's fields (block, then inline value bytes). */
struct gp_resp {
	uint16_t status; /* enum gp_status */
	uint16_t flags;	 /* GP_RS_* */
	uint32_t client_flags;
	uint32_t ttl;	  /* seconds left, 0 = none */
	uint16_t credits; /* requests the client may have in flight (RDMA) */
	uint64_t cas;
	uint64_t value_size; /* the whole value's size */
	uint64_t offset;     /* the first byte this response carries */
	uint64_t length;     /* bytes that follow: inline then DATA frames */
};

/* A data window's fields (block, then its bytes unless placed). */
struct gp_data {
	uint64_t offset; /* from the first byte of the request's transfer */
	uint32_t len;
	uint16_t flags; /* GP_DF_* */
};

/* A decoded frame.  key and payload point into the caller's buffer. */
struct gp_msg {
	struct gp_hdr h;
	union {
		struct gp_req req;
		struct gp_resp resp;
		struct gp_data data;
	};
	const uint8_t *key;
	const uint8_t *payload; /* inline value bytes (set, resp, data) */
	uint32_t payload_len;
};

/**
 * Decode the frame at the start of @buf (@len bytes).  Never reads past
 * @len and trusts no length in it: frame_len is checked against @len and
 * @max_frame (a transport's limit, at most GP_FRAME_MAX), every
 * variable part against frame_len.  GP_OK: *m holds the frame, *used its
 * length.  GP_MORE: the header is fine so far; *used is the frame's
 * length when the header is whole (the transport may wait for that many
 * bytes), else GP_HDR_LEN.  Any other result: the stream is broken and
 * the connection should close; *m is undefined.
 */
enum gp_result gp_decode(const void *buf, size_t len, size_t max_frame,
			 struct gp_msg *m, size_t *used);

/** A message for each enum gp_result. */
const char *gp_strerror(enum gp_result r);

/** A short name for each status ("not found"), "?" outside them. */
const char *gp_status_name(unsigned status);

/** A name for each request template ("get"), NULL for the others. */
const char *gp_template_name(unsigned template_id);

/**
 * Encode a request of template @t into @buf (@cap bytes): header, block,
 * @key (r->key_len bytes) and @inline_len value bytes (a set's first
 * bytes, at most r->length).  Returns the frame's length, or -ENOSPC
 * when @cap is too small, -EINVAL when the request would not decode
 * (a bad template, key length, flags or range).
 */
int gp_encode_req(void *buf, size_t cap, enum gp_template t, uint32_t opaque,
		  const struct gp_req *r, const void *key, const void *inl,
		  uint32_t inline_len);

/**
 * Encode a response: header, block and @inline_len bytes (at most
 * r->length) of the value from @inl.  Returns the frame's length,
 * -ENOSPC or -EINVAL as gp_encode_req().
 */
int gp_encode_resp(void *buf, size_t cap, uint32_t opaque,
		   const struct gp_resp *r, const void *inl,
		   uint32_t inline_len);

/**
 * Encode a data window: header, block and, unless GP_DF_PLACED, d->len
 * bytes from @bytes.  Returns the frame's length, -ENOSPC or -EINVAL.
 */
int gp_encode_data(void *buf, size_t cap, uint32_t opaque,
		   const struct gp_data *d, const void *bytes);

/**
 * The header alone, so a transport can write a data window's header in
 * front of bytes it placed itself (without copying them through here).
 * Returns GP_DATA_FIXED, or -ENOSPC.
 */
int gp_encode_data_head(void *buf, size_t cap, uint32_t opaque,
			const struct gp_data *d);

#endif /* GPROTO_H */
