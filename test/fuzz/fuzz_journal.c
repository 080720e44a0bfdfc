/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for the journal record decoder: walk the input as replay
 * does (decode, or resynchronise on the next magic), check every accepted
 * record against its bytes and re-encode it bit for bit.  A second pass
 * rewrites each candidate's checksum first, so mutations reach the field
 * checks behind it instead of dying on the checksum.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>
#include "goblin.h"
#include "journal_codec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c)                 \
	do {                     \
		if (!(c))        \
			abort(); \
	} while (0)

/* A decoded record must lie in its bytes and encode back to them. */
static void check_record(const uint8_t *rec, long len, const struct jrec *r)
{
	const uint8_t *end = rec + len;
	struct extent *ext = NULL;
	uint32_t *csum = NULL;
	uint8_t *again;

	CHECK(len >= J_HDR && (unsigned long)len <= J_MAX_RECORD);
	CHECK(r->klen > 0 && r->klen <= GS_KEY_MAX);
	CHECK(r->key > rec && r->key + r->klen <= end);
	switch (r->type) {
	case J_PUT_SMALL:
		CHECK(r->attr_len <= GS_ATTR_MAX);
		CHECK(r->value + r->size == end);
		CHECK(r->next == 0 && r->ncsum == 0);
		break;
	case J_PUT_LARGE: {
		uint64_t total[NTIERS] = { 0, 0 }, cover;
		int wrapped = 0;

		CHECK(r->attr_len <= GS_ATTR_MAX);
		CHECK(r->next > 0 && r->ncsum == csum_blocks(r->size));
		CHECK(r->csum + 4ull * r->ncsum == end);
		ext = malloc(r->next * sizeof(*ext));
		csum = malloc((r->ncsum + 1) * sizeof(*csum));
		CHECK(ext && csum);
		for (uint32_t i = 0; i < r->next; i++) {
			jrec_get_ext(r, i, &ext[i]);
			CHECK(ext[i].len && ext[i].len % GS_ALLOC_UNIT == 0);
			CHECK(ext[i].off % GS_ALLOC_UNIT == 0);
			CHECK(ext[i].tier == TIER_SSD ||
			      ext[i].tier == TIER_HDD);
			if (__builtin_add_overflow(total[ext[i].tier],
						   ext[i].len,
						   &total[ext[i].tier]))
				wrapped = 1;
		}
		/*
		 * The extents of one tier cover the value (the HDD's when it
		 * has any), padded by less than a unit and a page; the SSD's
		 * beside an HDD copy are a prefix, no longer than that.  A
		 * sum that wraps is refused by the decoder.
		 */
		cover = total[TIER_HDD] ? total[TIER_HDD] : total[TIER_SSD];
		CHECK(!wrapped && cover >= r->size &&
		      cover - r->size < GS_ALLOC_UNIT + 4096 &&
		      total[TIER_SSD] < r->size + GS_ALLOC_UNIT + 4096);
		for (uint32_t i = 0; i < r->ncsum; i++)
			csum[i] = jrec_get_csum(r, i);
		break;
	}
	case J_DEL:
	case J_TOUCH:
		CHECK(r->key + r->klen == end);
		break;
	case J_ATTR:
		CHECK(r->attr_len <= GS_ATTR_MAX);
		CHECK(r->attr == r->key + r->klen);
		CHECK(r->attr + r->attr_len == end);
		break;
	case J_RENAME:
		CHECK(r->klen2 > 0 && r->klen2 <= GS_KEY_MAX);
		CHECK(r->key2 == r->key + r->klen);
		CHECK(r->key2 + r->klen2 == end);
		break;
	default:
		CHECK(0);
	}
	CHECK(jrec_size(r) == (size_t)len);
	again = malloc((size_t)len);
	CHECK(again);
	jrec_encode(r, ext, csum, again);
	CHECK(memcmp(again, rec, (size_t)len) == 0);
	free(again);
	free(ext);
	free(csum);
}

/* Replay's walk: a bad or torn record resynchronises on the next magic. */
static void walk(uint8_t *buf, size_t size, int reseal)
{
	const uint32_t magic = J_MAGIC;
	size_t pos = 0;

	while (pos < size) {
		struct jrec r;
		long len;

		if (reseal && size - pos >= J_HDR) {
			uint32_t rlen, c;

			memcpy(&rlen, buf + pos + 4, 4);
			if (rlen >= 12 && rlen <= size - pos) {
				c = (uint32_t)XXH3_64bits(buf + pos + 12,
							  rlen - 12);
				memcpy(buf + pos + 8, &c, 4);
			}
		}
		len = jrec_decode(buf + pos, size - pos, &r);
		CHECK(len == 0 || len == -EBADMSG ||
		      (len > 0 && (size_t)len <= size - pos));
		if (len > 0) {
			check_record(buf + pos, len, &r);
			pos += (size_t)len;
			continue;
		}
		if (size - pos <= 1)
			break;
		uint8_t *m = memmem(buf + pos + 1, size - pos - 1, &magic, 4);

		if (!m)
			break;
		pos = (size_t)(m - buf);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* exact-size copies: ASan sees any read past the input */
	uint8_t *buf = malloc(size ? size : 1);

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	walk(buf, size, 0);
	memcpy(buf, data, size);
	walk(buf, size, 1);
	free(buf);
	return 0;
}
