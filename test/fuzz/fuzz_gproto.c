/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for goblin's binary protocol decoder (netd/gproto.c,
 * issue 22): the input is a stream of frames, decoded one after another
 * with a limit taken from its first byte, as a ring or RDMA receive
 * buffer would be.  Every frame decoded must lie inside the input, its
 * key and payload inside the frame, and encode back to the same bytes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gproto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c)                 \
	do {                     \
		if (!(c))        \
			abort(); \
	} while (0)

static uint8_t out[GP_REQ_FIXED + GP_KEY_MAX + 65536];

static void roundtrip(const uint8_t *f, size_t len, const struct gp_msg *m)
{
	int n = -1;

	switch (m->h.template_id) {
	case GP_T_RESP:
		n = gp_encode_resp(out, sizeof(out), m->h.opaque, &m->resp,
				   m->payload, m->payload_len);
		break;
	case GP_T_DATA:
		n = gp_encode_data(out, sizeof(out), m->h.opaque, &m->data,
				   m->payload);
		break;
	default:
		n = gp_encode_req(out, sizeof(out), m->h.template_id,
				  m->h.opaque, &m->req, m->key, m->payload,
				  m->payload_len);
		break;
	}
	if (len > sizeof(out))
		return; /* the encoder refused for want of room only */
	CHECK(n == (int)len);
	CHECK(!memcmp(out, f, len));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t pos = 1, used, max;
	struct gp_msg m;
	enum gp_result r;

	if (!size)
		return 0;
	/* small limits as well as none */
	max = data[0] & 0x80 ? (size_t)(data[0] & 0x7f) << 6 : SIZE_MAX;
	while (pos < size) {
		r = gp_decode(data + pos, size - pos, max, &m, &used);
		CHECK(used >= GP_HDR_LEN);
		if (r == GP_MORE) {
			CHECK(used > size - pos);
			break;
		}
		if (r != GP_OK) {
			CHECK(gp_strerror(r) != NULL);
			break;
		}
		CHECK(used == m.h.frame_len && used <= size - pos);
		CHECK(used <= max && used <= GP_FRAME_MAX);
		CHECK(m.payload >= data + pos &&
		      m.payload + m.payload_len == data + pos + used);
		if (m.key)
			CHECK(m.key >= data + pos + GP_REQ_FIXED &&
			      m.key + m.req.key_len == m.payload &&
			      m.req.key_len <= GP_KEY_MAX);
		if (m.h.template_id == GP_T_RESP)
			CHECK(m.resp.offset + m.resp.length <=
			      m.resp.value_size);
		roundtrip(data + pos, used, &m);
		pos += used;
	}
	return 0;
}
