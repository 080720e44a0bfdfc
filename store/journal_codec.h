/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The journal record codec.  The journal is an append-only log of
 * checksummed records, the durable index of the store.  A put of a small object carries its value
 * (the log is the small objects' durable home); a put of a large object
 * carries its extents (on the SSD tier; with an HDD tier, the whole value
 * there and a prefix on the SSD) and one checksum per GS_CSUM_BLOCK.
 * Replay applies records in order; a torn or corrupt record ends it.
 */
#ifndef GS_JOURNAL_CODEC_H
#define GS_JOURNAL_CODEC_H

#include <stddef.h>
#include <stdint.h>
#include "space.h"

enum {
	J_PUT_SMALL = 1,
	J_PUT_LARGE = 2,
	J_DEL = 3,
	J_TOUCH = 4,
	J_RENAME = 5, /* key is the old key, key2 the new one */
	J_ATTR = 6,   /* new attr and exptime for the version cas */
};

#define J_MAGIC	     0x314a5347u /* "GSJ1" little-endian */
#define J_HDR	     24
#define J_PUT_BODY   56
#define J_MAX_RECORD (1u << 30)
/* An extent offset with this bit is on the HDD tier. */
#define J_EXT_HDD    (1ull << 63)
/* An extent offset with this bit may be shared with another version (an
 * append's, struct extent.shared): replay shares it with its holder. */
#define J_EXT_SHARED (1ull << 62)

/* A record, decoded in place: pointers refer to the source buffer. */
struct jrec {
	uint8_t type;
	uint64_t seq;
	const uint8_t *key;
	uint32_t klen;
	const uint8_t *key2; /* J_RENAME */
	uint32_t klen2;
	/* J_PUT_*; exptime for J_TOUCH; cas, exptime and attr for J_ATTR */
	uint64_t size, cas, xxh3;
	int64_t exptime, mtime_ns;
	uint32_t flags;
	const uint8_t *attr;
	uint32_t attr_len;
	const uint8_t *value; /* J_PUT_SMALL: size bytes */
	uint32_t next;	      /* J_PUT_LARGE: extents ... */
	const uint8_t *ext;
	uint32_t ncsum; /* ... and block checksums */
	const uint8_t *csum;
};

/* Encoded length of @r; 0 when it would exceed J_MAX_RECORD. */
size_t jrec_size(const struct jrec *r);

/*
 * Encode @r into @buf (jrec_size(r) bytes).  For J_PUT_LARGE the extents
 * and checksums come from @ext and @csum, not r->ext/r->csum.
 */
void jrec_encode(const struct jrec *r, const struct extent *ext,
		 const uint32_t *csum, uint8_t *buf);

/*
 * A J_PUT_SMALL record without its value, for a value still to be read:
 * encode @r but for the value (which would follow, r->size bytes) and the
 * checksum into @buf; returns the bytes written, jrec_size(r) - r->size.
 * Put the value after them, then jrec_seal().
 */
size_t jrec_encode_head(const struct jrec *r, uint8_t *buf);
/* Set the checksum of the whole record at @buf (its length is in it). */
void jrec_seal(uint8_t *buf);

/*
 * Decode one record at @buf.  Returns its length, 0 when @len is too short
 * to hold it (a torn tail), or -EBADMSG when it is not a valid record.
 */
long jrec_decode(const uint8_t *buf, size_t len, struct jrec *r);

void jrec_get_ext(const struct jrec *r, uint32_t i, struct extent *e);
uint32_t jrec_get_csum(const struct jrec *r, uint32_t i);

/* Blocks of GS_CSUM_BLOCK bytes covering @size bytes. */
uint64_t csum_blocks(uint64_t size);
/* The block checksum: low 32 bits of XXH3-64. */
uint32_t csum_block(const void *p, size_t len);

#endif
