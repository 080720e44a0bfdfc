/* SPDX-License-Identifier: BSD-3-Clause */
/* The journal record codec: encoding and validation (see journal_codec.h). */
#include <errno.h>
#include <string.h>
#include "hash.h"
#include "goblin.h"
#include "journal_codec.h"

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the journal format is little-endian; add byte swapping"
#endif

uint64_t csum_blocks(uint64_t size)
{
	return size / GS_CSUM_BLOCK + (size % GS_CSUM_BLOCK != 0);
}

uint32_t csum_block(const void *p, size_t len)
{
	return (uint32_t)XXH3_64bits(p, len);
}

/* attr_len is 16 bits on disk (and in struct gs_obj) */
_Static_assert(GS_ATTR_MAX <= UINT16_MAX, "an attribute blob's length fits");

static uint64_t body_len(const struct jrec *r)
{
	switch (r->type) {
	case J_PUT_SMALL:
		return J_PUT_BODY + (uint64_t)r->attr_len + r->size;
	case J_PUT_LARGE:
		return J_PUT_BODY + (uint64_t)r->attr_len + 16ull * r->next +
		       4ull * r->ncsum;
	case J_TOUCH:
		return 8;
	case J_ATTR:
		return 20 + (uint64_t)r->attr_len;
	case J_RENAME:
		return 4 + (uint64_t)r->klen2;
	default:
		return 0;
	}
}

size_t jrec_size(const struct jrec *r)
{
	uint64_t n = J_HDR + (uint64_t)r->klen + body_len(r);

	return n > J_MAX_RECORD ? 0 : (size_t)n;
}

#define PUT(p, v)                           \
	do {                                \
		__typeof__(v) v_ = (v);     \
		memcpy(p, &v_, sizeof(v_)); \
		p += sizeof(v_);            \
	} while (0)
#define GET(p, v)                           \
	do {                                \
		memcpy(&(v), p, sizeof(v)); \
		p += sizeof(v);             \
	} while (0)

/* Every field of @r into @buf but the checksum, and with @value false a
 * small put's value; the end of what was written. */
static uint8_t *encode_fields(const struct jrec *r, const struct extent *ext,
			      const uint32_t *csum, uint8_t *buf, bool value)
{
	size_t len = jrec_size(r);
	uint8_t *p = buf;

	PUT(p, (uint32_t)J_MAGIC);
	PUT(p, (uint32_t)len);
	PUT(p, (uint32_t)0); /* checksum, filled last */
	PUT(p, (uint8_t)r->type);
	PUT(p, (uint8_t)0);
	PUT(p, (uint16_t)r->klen);
	PUT(p, r->seq);
	if (r->type == J_PUT_SMALL || r->type == J_PUT_LARGE) {
		PUT(p, r->size);
		PUT(p, r->cas);
		PUT(p, r->exptime);
		PUT(p, r->mtime_ns);
		PUT(p, r->xxh3);
		PUT(p, r->flags);
		PUT(p, (uint16_t)r->attr_len);
		PUT(p, (uint16_t)0);
		PUT(p, r->type == J_PUT_LARGE ? r->next : 0u);
		PUT(p, r->type == J_PUT_LARGE ? r->ncsum : 0u);
	} else if (r->type == J_TOUCH) {
		PUT(p, r->exptime);
	} else if (r->type == J_ATTR) {
		PUT(p, r->cas);
		PUT(p, r->exptime);
		PUT(p, (uint16_t)r->attr_len);
		PUT(p, (uint16_t)0);
	} else if (r->type == J_RENAME) {
		PUT(p, r->klen2);
	}
	memcpy(p, r->key, r->klen);
	p += r->klen;
	if (r->type == J_RENAME) {
		memcpy(p, r->key2, r->klen2);
		p += r->klen2;
	}
	if (r->type == J_PUT_SMALL || r->type == J_PUT_LARGE ||
	    r->type == J_ATTR) {
		if (r->attr_len)
			memcpy(p, r->attr, r->attr_len);
		p += r->attr_len;
	}
	if (r->type == J_PUT_SMALL && value) {
		if (r->size)
			memcpy(p, r->value, r->size);
		p += r->size;
	} else if (r->type == J_PUT_LARGE) {
		for (uint32_t i = 0; i < r->next; i++) {
			uint64_t off =
				ext[i].off |
				(ext[i].tier == TIER_HDD ? J_EXT_HDD : 0) |
				(ext[i].shared ? J_EXT_SHARED : 0);

			PUT(p, off);
			PUT(p, ext[i].len);
		}
		if (r->ncsum)
			memcpy(p, csum, 4ull * r->ncsum);
		p += 4ull * r->ncsum;
	}
	return p;
}

void jrec_seal(uint8_t *buf)
{
	uint32_t len, c;

	memcpy(&len, buf + 4, 4);
	c = (uint32_t)XXH3_64bits(buf + 12, len - 12);
	memcpy(buf + 8, &c, 4);
}

void jrec_encode(const struct jrec *r, const struct extent *ext,
		 const uint32_t *csum, uint8_t *buf)
{
	encode_fields(r, ext, csum, buf, true);
	jrec_seal(buf);
}

size_t jrec_encode_head(const struct jrec *r, uint8_t *buf)
{
	return (size_t)(encode_fields(r, NULL, NULL, buf, false) - buf);
}

/*
 * Over 100 lines: one pass over the fields in the order of the format,
 * each bounds check beside the field it guards; split, the checks and
 * the cursor would be spread over functions that each see part of it.
 */
long jrec_decode(const uint8_t *buf, size_t len, struct jrec *r)
{
	const uint8_t *p = buf;
	uint32_t magic, rlen, c;
	uint16_t klen, attr_len, pad16;
	uint8_t pad8;

	memset(r, 0, sizeof(*r));
	if (len < J_HDR)
		return 0;
	GET(p, magic);
	GET(p, rlen);
	GET(p, c);
	if (magic != J_MAGIC || rlen < J_HDR || rlen > J_MAX_RECORD)
		return -EBADMSG;
	if (rlen > len)
		return 0;
	if ((uint32_t)XXH3_64bits(buf + 12, rlen - 12) != c)
		return -EBADMSG;
	GET(p, r->type);
	GET(p, pad8);
	GET(p, klen);
	GET(p, r->seq);
	r->klen = klen;
	if (klen == 0 || klen > GS_KEY_MAX || pad8)
		return -EBADMSG;
	switch (r->type) {
	case J_PUT_SMALL:
	case J_PUT_LARGE:
		if (rlen < J_HDR + J_PUT_BODY)
			return -EBADMSG;
		GET(p, r->size);
		GET(p, r->cas);
		GET(p, r->exptime);
		GET(p, r->mtime_ns);
		GET(p, r->xxh3);
		GET(p, r->flags);
		GET(p, attr_len);
		GET(p, pad16);
		GET(p, r->next);
		GET(p, r->ncsum);
		r->attr_len = attr_len;
		if (attr_len > GS_ATTR_MAX || pad16)
			return -EBADMSG;
		if (r->type == J_PUT_SMALL &&
		    (r->next || r->ncsum || r->size > J_MAX_RECORD))
			return -EBADMSG;
		if (r->type == J_PUT_LARGE &&
		    (r->next == 0 || r->ncsum != csum_blocks(r->size)))
			return -EBADMSG;
		break;
	case J_TOUCH:
		if (rlen < J_HDR + 8)
			return -EBADMSG;
		GET(p, r->exptime);
		break;
	case J_ATTR:
		if (rlen < J_HDR + 20)
			return -EBADMSG;
		GET(p, r->cas);
		GET(p, r->exptime);
		GET(p, attr_len);
		GET(p, pad16);
		r->attr_len = attr_len;
		if (attr_len > GS_ATTR_MAX || pad16)
			return -EBADMSG;
		break;
	case J_RENAME:
		if (rlen < J_HDR + 4)
			return -EBADMSG;
		GET(p, r->klen2);
		if (r->klen2 == 0 || r->klen2 > GS_KEY_MAX)
			return -EBADMSG;
		break;
	case J_DEL:
		break;
	default:
		return -EBADMSG;
	}
	if ((uint64_t)J_HDR + klen + body_len(r) != rlen)
		return -EBADMSG;
	r->key = p;
	p += klen;
	if (r->type == J_RENAME)
		r->key2 = p;
	if (r->type == J_PUT_SMALL || r->type == J_PUT_LARGE ||
	    r->type == J_ATTR) {
		r->attr = p;
		p += r->attr_len;
	}
	if (r->type == J_PUT_SMALL) {
		r->value = p;
	} else if (r->type == J_PUT_LARGE) {
		uint64_t total[NTIERS] = { 0, 0 };

		r->ext = p;
		r->csum = p + 16ull * r->next;
		for (uint32_t i = 0; i < r->next; i++) {
			struct extent e;

			jrec_get_ext(r, i, &e);
			if (e.len == 0 || e.len % GS_ALLOC_UNIT ||
			    e.off % GS_ALLOC_UNIT || e.off + e.len < e.off ||
			    total[e.tier] + e.len < total[e.tier])
				return -EBADMSG;
			total[e.tier] += e.len;
		}
		/*
		 * The extents hold the value, 4 KiB padded, and no more: on
		 * the SSD tier, or whole on the HDD tier with a prefix (or
		 * nothing) on the SSD tier.
		 */
		if (total[TIER_HDD] &&
		    (total[TIER_HDD] < r->size ||
		     total[TIER_HDD] - r->size >= GS_ALLOC_UNIT + 4096 ||
		     total[TIER_SSD] >= r->size + GS_ALLOC_UNIT + 4096))
			return -EBADMSG;
		if (!total[TIER_HDD] &&
		    (total[TIER_SSD] < r->size ||
		     total[TIER_SSD] - r->size >= GS_ALLOC_UNIT + 4096))
			return -EBADMSG;
	}
	return rlen;
}

void jrec_get_ext(const struct jrec *r, uint32_t i, struct extent *e)
{
	memcpy(&e->off, r->ext + 16ull * i, 8);
	memcpy(&e->len, r->ext + 16ull * i + 8, 8);
	e->tier = e->off & J_EXT_HDD ? TIER_HDD : TIER_SSD;
	e->shared = (e->off & J_EXT_SHARED) != 0;
	e->off &= ~(J_EXT_HDD | J_EXT_SHARED);
}

uint32_t jrec_get_csum(const struct jrec *r, uint32_t i)
{
	uint32_t c;

	memcpy(&c, r->csum + 4ull * i, 4);
	return c;
}
