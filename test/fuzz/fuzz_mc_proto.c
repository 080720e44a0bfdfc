/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for the memcache parser: the input is a stream of
 * command lines (and data blocks, skipped as the daemon would), parsed
 * until it runs out.  Checks that every result stays inside the buffer,
 * that keys handed out are valid, and that base64 keys round-trip.  The
 * same bytes then go through the streamed multi-get path (issue 19): a
 * retrieval head, then keys taken one by one, each inside the buffer and
 * never over MC_KEY_MAX + 1 bytes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mc_proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c)                 \
	do {                     \
		if (!(c))        \
			abort(); \
	} while (0)

static void check_req(const struct mc_req *r, const char *buf, size_t used)
{
	if (r->key && !r->b64)
		CHECK(r->key >= buf && r->key + r->klen <= buf + used);
	if (r->key)
		CHECK(r->b64 || mc_key_valid(r->key, r->klen));
	if (r->b64) {
		char enc[400], dec[MC_KEY_MAX + 1];
		size_t n = mc_b64_encode(r->key, r->klen, enc);

		CHECK(mc_b64_decode(enc, n, dec, MC_KEY_MAX) == (int)r->klen);
		CHECK(!memcmp(dec, r->key, r->klen));
	}
	if (r->keys) {
		const char *p = r->keys, *end = r->keys + r->keys_len, *k;
		size_t kl;

		CHECK(r->keys >= buf && end <= buf + used);
		while (mc_next_key(&p, end, &k, &kl))
			CHECK(kl > 0 && k >= r->keys && k + kl <= end);
	}
	CHECK(r->meta.n <= MC_META_MAX);
	for (unsigned i = 0; i < r->meta.n; i++)
		CHECK(r->meta.fl[i].tok >= buf &&
		      r->meta.fl[i].tok + r->meta.fl[i].len <= buf + used);
}

/* A long multi-get as memcache.c streams it: head, then key by key. */
static void stream(const char *buf, size_t size, struct mc_req *r)
{
	size_t pos = 0, used = 0;
	enum mc_parse_result ret = mc_parse_get_head(buf, size, r, &used);

	if (ret == MC_PARSE_TOO_LONG)
		return;
	CHECK(used <= size);
	if (ret == MC_PARSE_CLIENT_ERROR) {
		CHECK(r->err && *r->err);
		return;
	}
	CHECK(ret == MC_PARSE_OK);
	CHECK(r->cmd >= MC_GET && r->cmd <= MC_GATS);
	pos = used;
	for (;;) {
		const char *k = NULL;
		size_t kl = 0;
		int got = mc_stream_key(buf + pos, size - pos, &k, &kl, &used);

		CHECK(used <= size - pos);
		if (got == 1) {
			CHECK(k >= buf + pos && k + kl <= buf + size);
			CHECK(kl > 0 && kl <= used && used > 0);
		}
		pos += used;
		if (got != 1)
			break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* a copy of exactly @size bytes: reads past it are caught */
	char *buf = malloc(size ? size : 1);
	struct mc_req *r = malloc(sizeof(*r));
	size_t pos = 0;

	if (!buf || !r)
		goto out;
	memcpy(buf, data, size);
	stream(buf, size, r);
	while (pos < size) {
		size_t used = 0;
		enum mc_parse_result ret =
			mc_parse(buf + pos, size - pos, 4096, r, &used);

		if (ret == MC_PARSE_MORE || ret == MC_PARSE_TOO_LONG)
			break;
		CHECK(used > 0 && used <= size - pos);
		if (ret == MC_PARSE_CLIENT_ERROR)
			CHECK(r->err && *r->err);
		if (ret == MC_PARSE_OK)
			check_req(r, buf + pos, used);
		pos += used;
		/* skip a data block the way the daemon takes it */
		if ((ret == MC_PARSE_OK &&
		     (r->cmd == MC_MS ||
		      (r->cmd >= MC_SET && r->cmd <= MC_CAS))) ||
		    (ret == MC_PARSE_CLIENT_ERROR && r->swallow)) {
			if (r->bytes + 2 > size - pos)
				break;
			pos += r->bytes + 2;
		}
	}
out:
	free(buf);
	free(r);
	return 0;
}
