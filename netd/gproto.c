/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * goblin's binary protocol: the frame codec (netd/PROTOCOL.md).  Fields
 * are little-endian at fixed offsets, read and written through memcpy so
 * a frame may sit at any alignment in a ring or a receive buffer.
 */
#include <endian.h>
#include <errno.h>
#include <string.h>

#include "gproto.h"

static uint16_t get16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return le16toh(v);
}

static uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return le32toh(v);
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return le64toh(v);
}

static void put16(uint8_t *p, uint16_t v)
{
	v = htole16(v);
	memcpy(p, &v, sizeof(v));
}

static void put32(uint8_t *p, uint32_t v)
{
	v = htole32(v);
	memcpy(p, &v, sizeof(v));
}

static void put64(uint8_t *p, uint64_t v)
{
	v = htole64(v);
	memcpy(p, &v, sizeof(v));
}

/* The block length of each template, 0 for an unknown one. */
static unsigned block_of(unsigned t)
{
	switch (t) {
	case GP_T_GET:
	case GP_T_GETRANGE:
	case GP_T_SET:
	case GP_T_DELETE:
	case GP_T_TOUCH:
	case GP_T_STATS:
	case GP_T_NOOP:
		return GP_REQ_BLOCK;
	case GP_T_RESP:
		return GP_RESP_BLOCK;
	case GP_T_DATA:
		return GP_DATA_BLOCK;
	}
	return 0;
}

/* The request flags each template may carry. */
static unsigned req_flags_of(unsigned t)
{
	switch (t) {
	case GP_T_GET:
	case GP_T_GETRANGE:
		return GP_RQ_NOVALUE | GP_RQ_WINDOW;
	case GP_T_SET: /* WINDOW: RDMA, the server pulls the value */
		return GP_RQ_QUIET | GP_RQ_ADD | GP_RQ_REPLACE | GP_RQ_WINDOW;
	case GP_T_DELETE:
	case GP_T_TOUCH:
		return GP_RQ_QUIET;
	}
	return 0;
}

/*
 * The rules a request obeys, shared by the decoder and the encoder so
 * that what one writes the other reads: @inl is the inline byte count.
 */
static enum gp_result check_req(unsigned t, const struct gp_req *r,
				uint64_t inl)
{
	if (r->flags & ~req_flags_of(t))
		return GP_BAD_FLAGS;
	if ((r->flags & (GP_RQ_ADD | GP_RQ_REPLACE)) ==
	    (GP_RQ_ADD | GP_RQ_REPLACE))
		return GP_BAD_FLAGS;
	if (r->key_len > GP_KEY_MAX)
		return GP_BAD_KEY;
	if (t == GP_T_NOOP ? r->key_len != 0 : t != GP_T_STATS && !r->key_len)
		return GP_BAD_KEY;
	if (t == GP_T_SET ? inl > r->length : inl != 0)
		return GP_BAD_LENGTH;
	if (t == GP_T_GETRANGE) {
		if (r->offset + r->length < r->offset)
			return GP_BAD_FIELD;
	} else if (r->offset || (t != GP_T_SET && r->length)) {
		return GP_BAD_FIELD;
	}
	if (t != GP_T_SET && t != GP_T_TOUCH && r->ttl)
		return GP_BAD_FIELD;
	if (t != GP_T_SET && r->client_flags)
		return GP_BAD_FIELD;
	if (t != GP_T_SET && t != GP_T_DELETE && r->cas)
		return GP_BAD_FIELD;
	if (r->flags & GP_RQ_WINDOW) {
		if (!r->win_len || r->win_addr + r->win_len < r->win_addr)
			return GP_BAD_FIELD;
		/* a set's window holds its whole value, none inline */
		if (t == GP_T_SET && (inl || r->length > r->win_len))
			return GP_BAD_LENGTH;
	} else if (r->win_addr || r->win_len || r->win_key) {
		return GP_BAD_FIELD;
	}
	return GP_OK;
}

static enum gp_result check_resp(const struct gp_resp *r, uint64_t inl)
{
	if (r->status > GP_S_MAX)
		return GP_BAD_FIELD;
	if (r->flags & ~GP_RS_ALL)
		return GP_BAD_FLAGS;
	if (inl > r->length)
		return GP_BAD_LENGTH;
	if (!(r->flags & GP_RS_VALUE) && r->length)
		return GP_BAD_LENGTH;
	if (r->offset + r->length < r->offset ||
	    r->offset + r->length > r->value_size)
		return GP_BAD_FIELD;
	return GP_OK;
}

static enum gp_result check_data(const struct gp_data *d, uint64_t inl)
{
	if (d->flags & ~GP_DF_ALL)
		return GP_BAD_FLAGS;
	if (inl != (d->flags & GP_DF_PLACED ? 0 : d->len))
		return GP_BAD_LENGTH;
	if (d->offset + d->len < d->offset)
		return GP_BAD_FIELD;
	return GP_OK;
}

static void read_req(const uint8_t *b, struct gp_req *r)
{
	r->flags = get16(b);
	r->key_len = get16(b + 2);
	r->ttl = get32(b + 4);
	r->client_flags = get32(b + 8);
	r->win_key = get32(b + 12);
	r->cas = get64(b + 16);
	r->offset = get64(b + 24);
	r->length = get64(b + 32);
	r->win_addr = get64(b + 40);
	r->win_len = get32(b + 48);
}

static void read_resp(const uint8_t *b, struct gp_resp *r)
{
	r->status = get16(b);
	r->flags = get16(b + 2);
	r->client_flags = get32(b + 4);
	r->ttl = get32(b + 8);
	r->credits = get16(b + 12);
	r->cas = get64(b + 16);
	r->value_size = get64(b + 24);
	r->offset = get64(b + 32);
	r->length = get64(b + 40);
}

static void read_data(const uint8_t *b, struct gp_data *d)
{
	d->offset = get64(b);
	d->len = get32(b + 8);
	d->flags = get16(b + 12);
}

enum gp_result gp_decode(const void *buf, size_t len, size_t max_frame,
			 struct gp_msg *m, size_t *used)
{
	const uint8_t *p = buf, *b;
	unsigned blk;
	uint64_t inl;
	enum gp_result ret;

	*used = GP_HDR_LEN;
	if (len < GP_HDR_LEN)
		return GP_MORE;
	m->h.block_len = get16(p);
	m->h.template_id = get16(p + 2);
	m->h.schema_id = get16(p + 4);
	m->h.version = get16(p + 6);
	m->h.frame_len = get32(p + 8);
	m->h.opaque = get32(p + 12);
	if (m->h.schema_id != GP_SCHEMA_ID)
		return GP_BAD_SCHEMA;
	if (m->h.version != GP_VERSION)
		return GP_BAD_VERSION;
	blk = block_of(m->h.template_id);
	if (!blk)
		return GP_BAD_TEMPLATE;
	if (m->h.block_len != blk)
		return GP_BAD_BLOCK;
	if (m->h.frame_len < GP_HDR_LEN + blk)
		return GP_BAD_LENGTH;
	if (max_frame > GP_FRAME_MAX)
		max_frame = GP_FRAME_MAX;
	if (m->h.frame_len > max_frame)
		return GP_TOO_BIG;
	*used = m->h.frame_len;
	if (len < m->h.frame_len)
		return GP_MORE;

	b = p + GP_HDR_LEN;
	inl = m->h.frame_len - GP_HDR_LEN - blk;
	m->key = NULL;
	m->payload = b + blk;
	/* reserved bytes are zero, so a later version may give them a use */
	if ((blk == GP_REQ_BLOCK && get32(b + 52)) ||
	    (blk != GP_REQ_BLOCK && get16(b + 14)))
		return GP_BAD_FIELD;
	switch (m->h.template_id) {
	case GP_T_RESP:
		read_resp(b, &m->resp);
		ret = check_resp(&m->resp, inl);
		break;
	case GP_T_DATA:
		read_data(b, &m->data);
		ret = check_data(&m->data, inl);
		break;
	default:
		read_req(b, &m->req);
		/* the key is inside the frame before anything uses it */
		if (m->req.key_len > inl)
			return GP_BAD_LENGTH;
		m->key = b + blk;
		m->payload = m->key + m->req.key_len;
		inl -= m->req.key_len;
		ret = check_req(m->h.template_id, &m->req, inl);
		break;
	}
	m->payload_len = (uint32_t)inl;
	return ret;
}

static void write_hdr(uint8_t *p, unsigned t, uint32_t frame_len,
		      uint32_t opaque)
{
	put16(p, (uint16_t)block_of(t));
	put16(p + 2, (uint16_t)t);
	put16(p + 4, GP_SCHEMA_ID);
	put16(p + 6, GP_VERSION);
	put32(p + 8, frame_len);
	put32(p + 12, opaque);
}

int gp_encode_req(void *buf, size_t cap, enum gp_template t, uint32_t opaque,
		  const struct gp_req *r, const void *key, const void *inl,
		  uint32_t inline_len)
{
	uint8_t *p = buf, *b = p + GP_HDR_LEN;
	uint64_t n = (uint64_t)GP_REQ_FIXED + r->key_len + inline_len;

	if (block_of(t) != GP_REQ_BLOCK || check_req(t, r, inline_len))
		return -EINVAL;
	if (n > GP_FRAME_MAX)
		return -EINVAL;
	if (n > cap)
		return -ENOSPC;
	write_hdr(p, t, (uint32_t)n, opaque);
	put16(b, r->flags);
	put16(b + 2, r->key_len);
	put32(b + 4, r->ttl);
	put32(b + 8, r->client_flags);
	put32(b + 12, r->win_key);
	put64(b + 16, r->cas);
	put64(b + 24, r->offset);
	put64(b + 32, r->length);
	put64(b + 40, r->win_addr);
	put32(b + 48, r->win_len);
	put32(b + 52, 0);
	if (r->key_len)
		memcpy(b + GP_REQ_BLOCK, key, r->key_len);
	if (inline_len)
		memcpy(b + GP_REQ_BLOCK + r->key_len, inl, inline_len);
	return (int)n;
}

int gp_encode_resp(void *buf, size_t cap, uint32_t opaque,
		   const struct gp_resp *r, const void *inl,
		   uint32_t inline_len)
{
	uint8_t *p = buf, *b = p + GP_HDR_LEN;
	uint64_t n = (uint64_t)GP_RESP_FIXED + inline_len;

	if (check_resp(r, inline_len) || n > GP_FRAME_MAX)
		return -EINVAL;
	if (n > cap)
		return -ENOSPC;
	write_hdr(p, GP_T_RESP, (uint32_t)n, opaque);
	put16(b, r->status);
	put16(b + 2, r->flags);
	put32(b + 4, r->client_flags);
	put32(b + 8, r->ttl);
	put16(b + 12, r->credits);
	put16(b + 14, 0);
	put64(b + 16, r->cas);
	put64(b + 24, r->value_size);
	put64(b + 32, r->offset);
	put64(b + 40, r->length);
	if (inline_len)
		memcpy(b + GP_RESP_BLOCK, inl, inline_len);
	return (int)n;
}

int gp_encode_data_head(void *buf, size_t cap, uint32_t opaque,
			const struct gp_data *d)
{
	uint8_t *p = buf, *b = p + GP_HDR_LEN;
	uint64_t n = GP_DATA_FIXED;

	if (!(d->flags & GP_DF_PLACED))
		n += d->len;
	if (check_data(d, n - GP_DATA_FIXED) || n > GP_FRAME_MAX)
		return -EINVAL;
	if (cap < GP_DATA_FIXED)
		return -ENOSPC;
	write_hdr(p, GP_T_DATA, (uint32_t)n, opaque);
	put64(b, d->offset);
	put32(b + 8, d->len);
	put16(b + 12, d->flags);
	put16(b + 14, 0);
	return GP_DATA_FIXED;
}

int gp_encode_data(void *buf, size_t cap, uint32_t opaque,
		   const struct gp_data *d, const void *bytes)
{
	uint64_t n = GP_DATA_FIXED;
	int ret;

	if (!(d->flags & GP_DF_PLACED))
		n += d->len;
	if (n > cap)
		return n > GP_FRAME_MAX ? -EINVAL : -ENOSPC;
	ret = gp_encode_data_head(buf, cap, opaque, d);
	if (ret < 0)
		return ret;
	if (n > GP_DATA_FIXED)
		memcpy((uint8_t *)buf + GP_DATA_FIXED, bytes, d->len);
	return (int)n;
}

const char *gp_strerror(enum gp_result r)
{
	switch (r) {
	case GP_OK:
		return "ok";
	case GP_MORE:
		return "incomplete frame";
	case GP_BAD_SCHEMA:
		return "not goblin's schema";
	case GP_BAD_VERSION:
		return "unknown protocol version";
	case GP_BAD_TEMPLATE:
		return "unknown message template";
	case GP_BAD_BLOCK:
		return "wrong block length for the template";
	case GP_BAD_LENGTH:
		return "lengths do not add up";
	case GP_TOO_BIG:
		return "frame too large";
	case GP_BAD_KEY:
		return "bad key length";
	case GP_BAD_FLAGS:
		return "unknown flags for the template";
	case GP_BAD_FIELD:
		return "field out of range";
	}
	return "unknown decode result";
}

const char *gp_status_name(unsigned status)
{
	static const char *const names[] = {
		[GP_S_OK] = "ok",
		[GP_S_NOT_FOUND] = "not found",
		[GP_S_EXISTS] = "exists",
		[GP_S_NOT_STORED] = "not stored",
		[GP_S_TOO_LARGE] = "too large",
		[GP_S_BAD_REQUEST] = "bad request",
		[GP_S_BUSY] = "busy",
		[GP_S_ERROR] = "server error",
		[GP_S_RANGE] = "range not satisfiable",
		[GP_S_WINDOW] = "bad window",
		[GP_S_UNSUPPORTED] = "unsupported",
	};

	return status <= GP_S_MAX ? names[status] : "?";
}

const char *gp_template_name(unsigned template_id)
{
	switch (template_id) {
	case GP_T_GET:
		return "get";
	case GP_T_GETRANGE:
		return "getrange";
	case GP_T_SET:
		return "set";
	case GP_T_DELETE:
		return "delete";
	case GP_T_TOUCH:
		return "touch";
	case GP_T_STATS:
		return "stats";
	case GP_T_NOOP:
		return "noop";
	}
	return NULL;
}
