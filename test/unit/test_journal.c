/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Journal records: round trips, torn tails, bit flips, hostile headers;
 * and gs_parse_size, the other parser of untrusted text.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <xxhash.h>
#include "goblin.h"
#include "journal_codec.h"

#define U GS_ALLOC_UNIT

static const uint8_t key[] = "objects/2024/blob-0001";
static const uint8_t attr[] = "content-type: application/octet-stream";
static const uint8_t value[] = "hello, small world\0with a NUL inside";

/* A record to encode, with its extents and checksums. */
struct rec {
	struct jrec r;
	struct extent ext[4];
	uint32_t csum[8];
};

static void rec_small(struct rec *x)
{
	memset(x, 0, sizeof(*x));
	x->r.type = J_PUT_SMALL;
	x->r.seq = 42;
	x->r.key = key;
	x->r.klen = sizeof(key) - 1;
	x->r.size = sizeof(value);
	x->r.cas = 0x1122334455667788ull;
	x->r.xxh3 = XXH3_64bits(value, sizeof(value));
	x->r.exptime = -5;
	x->r.mtime_ns = 1700000000123456789ll;
	x->r.flags = 0xdeadbeef;
	x->r.attr = attr;
	x->r.attr_len = sizeof(attr) - 1;
	x->r.value = value;
}

/* 3 blocks and 100 bytes: 4 checksums, two extents of 3 + 1 units. */
static void rec_large(struct rec *x)
{
	memset(x, 0, sizeof(*x));
	x->r.type = J_PUT_LARGE;
	x->r.seq = 43;
	x->r.key = key;
	x->r.klen = sizeof(key) - 1;
	x->r.size = 3ull * GS_CSUM_BLOCK + 100;
	x->r.cas = 7;
	x->r.xxh3 = 0x0123456789abcdefull;
	x->r.exptime = 1234567;
	x->r.mtime_ns = 99;
	x->r.flags = 3;
	x->r.attr = attr;
	x->r.attr_len = 5;
	x->r.next = 2;
	x->ext[0].off = 0;
	x->ext[0].len = 3 * U;
	x->ext[1].off = 10 * U;
	x->ext[1].len = U;
	x->r.ncsum = 4;
	for (int i = 0; i < 4; i++)
		x->csum[i] = 0xc0de0000u + (uint32_t)i;
}

static void rec_del(struct rec *x)
{
	memset(x, 0, sizeof(*x));
	x->r.type = J_DEL;
	x->r.seq = 44;
	x->r.key = key;
	x->r.klen = sizeof(key) - 1;
}

static void rec_touch(struct rec *x)
{
	memset(x, 0, sizeof(*x));
	x->r.type = J_TOUCH;
	x->r.seq = 45;
	x->r.key = key;
	x->r.klen = 1;
	x->r.exptime = 86400;
}

static void rec_attr(struct rec *x)
{
	static const uint8_t attr[] = "\x01\x01\xc8\x00 an http attr record";

	memset(x, 0, sizeof(*x));
	x->r.type = J_ATTR;
	x->r.seq = 47;
	x->r.key = key;
	x->r.klen = 1;
	x->r.cas = 1234;
	x->r.exptime = 86400;
	x->r.attr = attr;
	x->r.attr_len = sizeof(attr) - 1;
}

static const uint8_t key2[] = "objects/2024/blob-0001.published";

static void rec_rename(struct rec *x)
{
	memset(x, 0, sizeof(*x));
	x->r.type = J_RENAME;
	x->r.seq = 46;
	x->r.key = key;
	x->r.klen = sizeof(key) - 1;
	x->r.key2 = key2;
	x->r.klen2 = sizeof(key2) - 1;
}

static uint8_t *encode(const struct rec *x, size_t *len)
{
	uint8_t *buf;

	*len = jrec_size(&x->r);
	assert_true(*len >= J_HDR);
	buf = malloc(*len);
	assert_non_null(buf);
	jrec_encode(&x->r, x->ext, x->csum, buf);
	return buf;
}

/* Recompute the checksum after editing a header field by hand. */
static void reseal(uint8_t *buf)
{
	uint32_t rlen, c;

	memcpy(&rlen, buf + 4, 4);
	c = (uint32_t)XXH3_64bits(buf + 12, rlen - 12);
	memcpy(buf + 8, &c, 4);
}

static void assert_same(const struct rec *x, const struct jrec *d)
{
	const struct jrec *r = &x->r;

	assert_int_equal(d->type, r->type);
	assert_int_equal(d->seq, r->seq);
	assert_int_equal(d->klen, r->klen);
	assert_memory_equal(d->key, r->key, r->klen);
	switch (r->type) {
	case J_PUT_SMALL:
	case J_PUT_LARGE:
		assert_int_equal(d->size, r->size);
		assert_int_equal(d->cas, r->cas);
		assert_int_equal(d->xxh3, r->xxh3);
		assert_int_equal(d->exptime, r->exptime);
		assert_int_equal(d->mtime_ns, r->mtime_ns);
		assert_int_equal(d->flags, r->flags);
		assert_int_equal(d->attr_len, r->attr_len);
		if (r->attr_len)
			assert_memory_equal(d->attr, r->attr, r->attr_len);
		break;
	case J_TOUCH:
		assert_int_equal(d->exptime, r->exptime);
		break;
	case J_ATTR:
		assert_int_equal(d->cas, r->cas);
		assert_int_equal(d->exptime, r->exptime);
		assert_int_equal(d->attr_len, r->attr_len);
		assert_memory_equal(d->attr, r->attr, r->attr_len);
		break;
	case J_RENAME:
		assert_int_equal(d->klen2, r->klen2);
		assert_memory_equal(d->key2, r->key2, r->klen2);
		break;
	}
	if (r->type == J_PUT_SMALL) {
		assert_int_equal(d->next, 0);
		assert_int_equal(d->ncsum, 0);
		if (r->size)
			assert_memory_equal(d->value, r->value, r->size);
	}
	if (r->type == J_PUT_LARGE) {
		assert_int_equal(d->next, r->next);
		assert_int_equal(d->ncsum, r->ncsum);
		for (uint32_t i = 0; i < r->next; i++) {
			struct extent e;

			jrec_get_ext(d, i, &e);
			assert_int_equal(e.off, x->ext[i].off);
			assert_int_equal(e.len, x->ext[i].len);
			assert_int_equal(e.tier, x->ext[i].tier);
		}
		for (uint32_t i = 0; i < r->ncsum; i++)
			assert_int_equal(jrec_get_csum(d, i), x->csum[i]);
	}
}

static void (*const makers[])(struct rec *) = {
	rec_small, rec_large, rec_del, rec_touch, rec_rename, rec_attr,
};
enum { NMAKERS = sizeof(makers) / sizeof(makers[0]) };

static void test_sizes(void **state)
{
	struct rec x;
	const uint64_t kl = sizeof(key) - 1;

	(void)state;
	rec_small(&x);
	assert_int_equal(jrec_size(&x.r), J_HDR + J_PUT_BODY + kl +
						  x.r.attr_len + sizeof(value));
	rec_large(&x);
	assert_int_equal(jrec_size(&x.r),
			 J_HDR + J_PUT_BODY + kl + 5 + 2 * 16 + 4 * 4);
	rec_del(&x);
	assert_int_equal(jrec_size(&x.r), J_HDR + kl);
	rec_touch(&x);
	assert_int_equal(jrec_size(&x.r), J_HDR + 8 + 1);

	/* over J_MAX_RECORD: 0, "cannot be a record" */
	rec_small(&x);
	x.r.size = J_MAX_RECORD;
	assert_int_equal(jrec_size(&x.r), 0);
	x.r.size = UINT32_MAX;
	assert_int_equal(jrec_size(&x.r), 0);
	rec_large(&x);
	x.r.ncsum = J_MAX_RECORD / 4;
	assert_int_equal(jrec_size(&x.r), 0);
}

static void test_round_trip(void **state)
{
	(void)state;
	for (int m = 0; m < NMAKERS; m++) {
		struct rec x;
		struct jrec d;
		size_t len;
		uint8_t *buf;
		uint32_t magic, rlen;

		makers[m](&x);
		buf = encode(&x, &len);
		memcpy(&magic, buf, 4);
		memcpy(&rlen, buf + 4, 4);
		assert_int_equal(magic, J_MAGIC);
		assert_int_equal(rlen, len);
		assert_int_equal(jrec_decode(buf, len, &d), (long)len);
		assert_same(&x, &d);
		/* decoded pointers point into the buffer */
		assert_true(d.key > buf && d.key + d.klen <= buf + len);

		/* re-encoding the decoded record gives the same bytes */
		struct rec y = x;
		uint8_t *again;
		size_t len2;

		y.r = d;
		for (uint32_t i = 0; i < d.next; i++)
			jrec_get_ext(&d, i, &y.ext[i]);
		for (uint32_t i = 0; i < d.ncsum; i++)
			y.csum[i] = jrec_get_csum(&d, i);
		again = encode(&y, &len2);
		assert_int_equal(len2, len);
		assert_memory_equal(again, buf, len);
		free(again);
		free(buf);
	}
}

static void test_round_trip_edges(void **state)
{
	static uint8_t bigkey[GS_KEY_MAX], bigattr[GS_ATTR_MAX];
	struct rec x;
	struct jrec d;
	size_t len;
	uint8_t *buf;

	(void)state;
	memset(bigkey, 'k', sizeof(bigkey));
	memset(bigattr, 'a', sizeof(bigattr));

	/* empty value, no attributes */
	rec_small(&x);
	x.r.size = 0;
	x.r.value = NULL;
	x.r.attr = NULL;
	x.r.attr_len = 0;
	buf = encode(&x, &len);
	assert_int_equal(jrec_decode(buf, len, &d), (long)len);
	assert_same(&x, &d);
	free(buf);

	/* the longest key and attribute blob */
	rec_small(&x);
	x.r.key = bigkey;
	x.r.klen = GS_KEY_MAX;
	x.r.attr = bigattr;
	x.r.attr_len = GS_ATTR_MAX;
	buf = encode(&x, &len);
	assert_int_equal(jrec_decode(buf, len, &d), (long)len);
	assert_same(&x, &d);
	free(buf);

	/* large, exactly block sized, one extent, no slack */
	rec_large(&x);
	x.r.size = 2ull * GS_CSUM_BLOCK;
	x.r.ncsum = 2;
	x.r.next = 1;
	x.ext[0].off = 5 * U;
	x.ext[0].len = 2 * U;
	buf = encode(&x, &len);
	assert_int_equal(jrec_decode(buf, len, &d), (long)len);
	assert_same(&x, &d);
	free(buf);

	/* large with an empty value still has one unit */
	rec_large(&x);
	x.r.size = 0;
	x.r.ncsum = 0;
	x.r.next = 1;
	x.ext[0].len = U;
	buf = encode(&x, &len);
	assert_int_equal(jrec_decode(buf, len, &d), (long)len);
	assert_same(&x, &d);
	free(buf);
}

/* Records back to back decode one after another, as replay reads them. */
static void test_sequence(void **state)
{
	uint8_t log[4096];
	size_t pos = 0, lens[NMAKERS];
	struct rec x[NMAKERS];

	(void)state;
	for (int m = 0; m < NMAKERS; m++) {
		uint8_t *b;

		makers[m](&x[m]);
		b = encode(&x[m], &lens[m]);
		assert_true(pos + lens[m] <= sizeof(log));
		memcpy(log + pos, b, lens[m]);
		pos += lens[m];
		free(b);
	}
	size_t end = pos;

	pos = 0;
	for (int m = 0; m < NMAKERS; m++) {
		struct jrec d;
		long n = jrec_decode(log + pos, end - pos, &d);

		assert_int_equal(n, (long)lens[m]);
		assert_same(&x[m], &d);
		pos += (size_t)n;
	}
	assert_int_equal(pos, end);
}

/* Every proper prefix of a record is a torn tail: 0, never an error. */
static void test_truncated(void **state)
{
	(void)state;
	for (int m = 0; m < NMAKERS; m++) {
		struct rec x;
		struct jrec d;
		size_t len;
		uint8_t *buf, *cut;

		makers[m](&x);
		buf = encode(&x, &len);
		for (size_t n = 0; n < len; n++) {
			/* an exact-size copy, so ASan sees any over-read */
			cut = malloc(n ? n : 1);
			assert_non_null(cut);
			memcpy(cut, buf, n);
			assert_int_equal(jrec_decode(cut, n, &d), 0);
			free(cut);
		}
		assert_int_equal(jrec_decode(buf, len, &d), (long)len);
		free(buf);
	}
}

/*
 * Flip every bit of every record: the result is an error, or (for a
 * length grown past the buffer) a torn tail; never a record.
 */
static void flip_all(const uint8_t *buf, size_t len, size_t avail)
{
	uint8_t *copy = malloc(avail);

	assert_non_null(copy);
	for (size_t byte = 0; byte < len; byte++)
		for (int bit = 0; bit < 8; bit++) {
			struct jrec d;
			uint32_t rlen;
			long ret;

			memcpy(copy, buf, avail);
			copy[byte] ^= (uint8_t)(1u << bit);
			ret = jrec_decode(copy, avail, &d);
			memcpy(&rlen, copy + 4, 4);
			if (byte >= 4 && byte < 8 && rlen > avail &&
			    rlen <= J_MAX_RECORD)
				assert_int_equal(ret, 0);
			else
				assert_int_equal(ret, -EBADMSG);
		}
	free(copy);
}

static void test_bit_flips(void **state)
{
	(void)state;
	for (int m = 0; m < NMAKERS; m++) {
		struct rec x, y;
		size_t len, len2;
		uint8_t *buf, *next, *both;

		makers[m](&x);
		buf = encode(&x, &len);
		flip_all(buf, len, len);

		/* with a valid record behind it, too */
		makers[(m + 1) % NMAKERS](&y);
		next = encode(&y, &len2);
		both = malloc(len + len2);
		assert_non_null(both);
		memcpy(both, buf, len);
		memcpy(both + len, next, len2);
		flip_all(both, len, len + len2);
		free(both);
		free(next);
		free(buf);
	}
}

static void expect_bad(const struct rec *x)
{
	struct jrec d;
	size_t len;
	uint8_t *buf = encode(x, &len);
	long ret = jrec_decode(buf, len, &d);

	free(buf); /* before the assertion: no leak when it fails */
	assert_int_equal(ret, -EBADMSG);
}

static void expect_good(const struct rec *x)
{
	struct jrec d;
	size_t len;
	uint8_t *buf = encode(x, &len);
	long ret = jrec_decode(buf, len, &d);

	free(buf); /* before the assertion: no leak when it fails */
	assert_int_equal(ret, (long)len);
}

/* Header fields edited by hand, checksum made valid again. */
static void test_hostile_header(void **state)
{
	struct rec x;
	struct jrec d;
	size_t len;
	uint8_t *buf, *big;
	uint32_t v32;

	(void)state;
	rec_del(&x);
	buf = encode(&x, &len);

	/* bad magic, sealed or not */
	buf[0] ^= 1;
	assert_int_equal(jrec_decode(buf, len, &d), -EBADMSG);
	reseal(buf);
	assert_int_equal(jrec_decode(buf, len, &d), -EBADMSG);
	buf[0] ^= 1;
	reseal(buf);
	assert_int_equal(jrec_decode(buf, len, &d), (long)len);

	/* huge lengths are errors at once, not "wait for more" */
	v32 = J_MAX_RECORD + 1;
	memcpy(buf + 4, &v32, 4);
	assert_int_equal(jrec_decode(buf, len, &d), -EBADMSG);
	v32 = UINT32_MAX;
	memcpy(buf + 4, &v32, 4);
	assert_int_equal(jrec_decode(buf, len, &d), -EBADMSG);
	/* the largest legal length is a torn tail */
	v32 = J_MAX_RECORD;
	memcpy(buf + 4, &v32, 4);
	assert_int_equal(jrec_decode(buf, len, &d), 0);
	/* shorter than a header */
	for (v32 = 0; v32 < J_HDR; v32++) {
		memcpy(buf + 4, &v32, 4);
		assert_int_equal(jrec_decode(buf, len, &d), -EBADMSG);
	}
	free(buf);

	/* a length that does not match the body: one trailing byte */
	rec_del(&x);
	buf = encode(&x, &len);
	big = calloc(1, len + 1);
	assert_non_null(big);
	memcpy(big, buf, len);
	v32 = (uint32_t)len + 1;
	memcpy(big + 4, &v32, 4);
	reseal(big);
	assert_int_equal(jrec_decode(big, len + 1, &d), -EBADMSG);
	free(big);

	/* unknown types, non-zero padding */
	static const uint8_t types[] = { 0, 5, 6, 0x81, 0xff };

	for (size_t i = 0; i < sizeof(types); i++) {
		buf[12] = types[i];
		reseal(buf);
		assert_int_equal(jrec_decode(buf, len, &d), -EBADMSG);
	}
	buf[12] = J_DEL;
	buf[13] = 1;
	reseal(buf);
	assert_int_equal(jrec_decode(buf, len, &d), -EBADMSG);
	buf[13] = 0;
	reseal(buf);
	assert_int_equal(jrec_decode(buf, len, &d), (long)len);

	/* a delete relabelled as touch has no room for the exptime */
	buf[12] = J_TOUCH;
	reseal(buf);
	assert_int_equal(jrec_decode(buf, len, &d), -EBADMSG);
	/* ... and as puts, no room for the body */
	buf[12] = J_PUT_SMALL;
	reseal(buf);
	assert_int_equal(jrec_decode(buf, len, &d), -EBADMSG);
	buf[12] = J_PUT_LARGE;
	reseal(buf);
	assert_int_equal(jrec_decode(buf, len, &d), -EBADMSG);
	free(buf);

	/* put header: pad16, extents on a small put, size beyond the body */
	rec_small(&x);
	buf = encode(&x, &len);
	buf[J_HDR + 46] = 1; /* pad16 */
	reseal(buf);
	assert_int_equal(jrec_decode(buf, len, &d), -EBADMSG);
	buf[J_HDR + 46] = 0;
	buf[J_HDR + 48] = 1; /* next */
	reseal(buf);
	assert_int_equal(jrec_decode(buf, len, &d), -EBADMSG);
	buf[J_HDR + 48] = 0;
	buf[J_HDR + 52] = 1; /* ncsum */
	reseal(buf);
	assert_int_equal(jrec_decode(buf, len, &d), -EBADMSG);
	buf[J_HDR + 52] = 0;
	buf[J_HDR + 0] += 1; /* size + 1 */
	reseal(buf);
	assert_int_equal(jrec_decode(buf, len, &d), -EBADMSG);
	buf[J_HDR + 0] -= 1;
	buf[J_HDR + 7] = 0x80; /* size 2^63 + n */
	reseal(buf);
	assert_int_equal(jrec_decode(buf, len, &d), -EBADMSG);
	buf[J_HDR + 7] = 0;
	reseal(buf);
	assert_int_equal(jrec_decode(buf, len, &d), (long)len);
	free(buf);
}

static void test_hostile_key_attr(void **state)
{
	static uint8_t bigkey[GS_KEY_MAX + 1], bigattr[GS_ATTR_MAX + 1];
	struct rec x;

	(void)state;
	for (int m = 0; m < NMAKERS; m++) {
		makers[m](&x);
		x.r.klen = 0;
		expect_bad(&x);
		makers[m](&x);
		x.r.key = bigkey;
		x.r.klen = GS_KEY_MAX + 1;
		expect_bad(&x);
		x.r.klen = GS_KEY_MAX;
		expect_good(&x);
	}
	rec_small(&x);
	x.r.attr = bigattr;
	x.r.attr_len = GS_ATTR_MAX + 1;
	expect_bad(&x);
	x.r.attr_len = GS_ATTR_MAX;
	expect_good(&x);
	rec_large(&x);
	x.r.attr = bigattr;
	x.r.attr_len = GS_ATTR_MAX + 1;
	expect_bad(&x);
}

static void test_hostile_extents(void **state)
{
	struct rec x;

	(void)state;
	rec_large(&x);
	expect_good(&x);

	/* extents short of the size */
	rec_large(&x);
	x.ext[0].len = 2 * U;
	expect_bad(&x);
	rec_large(&x);
	x.r.next = 1; /* only the first 3 units */
	expect_bad(&x);
	/* far more than size rounded up */
	rec_large(&x);
	x.ext[1].len = 3 * U;
	expect_bad(&x);
	rec_large(&x);
	x.ext[1].len = UINT64_MAX / U * U;
	expect_bad(&x);
	/* no extents at all */
	rec_large(&x);
	x.r.next = 0;
	expect_bad(&x);
	/* empty, misaligned, overflowing extents */
	rec_large(&x);
	x.r.next = 3;
	x.ext[2].off = 20 * U;
	x.ext[2].len = 0;
	expect_bad(&x);
	rec_large(&x);
	x.ext[1].off = 10 * U + 4096;
	expect_bad(&x);
	rec_large(&x);
	x.ext[1].off = 10 * U + 1;
	expect_bad(&x);
	rec_large(&x);
	x.ext[0].len = 3 * U + 4096;
	x.ext[1].len = U - 4096;
	expect_bad(&x);
	rec_large(&x);
	x.ext[1].off = UINT64_MAX / U * U; /* off + len wraps */
	expect_bad(&x);
	/* checksum count must match the size */
	rec_large(&x);
	x.r.ncsum = 3;
	expect_bad(&x);
	rec_large(&x);
	x.r.ncsum = 5;
	expect_bad(&x);
	rec_large(&x);
	x.r.ncsum = 0;
	expect_bad(&x);
}

/*
 * With an HDD tier: the whole value on the HDD, a prefix (or nothing) on
 * the SSD.  The tier survives the round trip; each tier's extents are
 * checked on their own.
 */
static void test_hdd_extents(void **state)
{
	struct rec x;

	(void)state;
	rec_large(&x);
	x.r.next = 3;
	x.ext[0] = (struct extent){ 5 * U, U, TIER_SSD, 0 }; /* prefix */
	x.ext[1] = (struct extent){ 0, 3 * U, TIER_HDD, 0 };
	x.ext[2] = (struct extent){ 7 * U, U, TIER_HDD, 0 };
	expect_good(&x);
	x.r.next = 2; /* the prefix dropped: the HDD alone */
	x.ext[0] = x.ext[1];
	x.ext[1] = x.ext[2];
	expect_good(&x);
	x.ext[1].len = 0; /* an HDD copy short of the size */
	expect_bad(&x);
	x.ext[1] = (struct extent){ 7 * U, 3 * U, TIER_HDD, 0 }; /* too much */
	expect_bad(&x);
	rec_large(&x); /* an SSD "prefix" longer than the value */
	x.r.next = 4;
	x.ext[0] = (struct extent){ 0, 6 * U, TIER_SSD, 0 };
	x.ext[2] = (struct extent){ 10 * U, 3 * U, TIER_HDD, 0 };
	x.ext[3] = (struct extent){ 20 * U, U, TIER_HDD, 0 };
	x.ext[1] = (struct extent){ 9 * U, U, TIER_SSD, 0 };
	expect_bad(&x);
}

/*
 * Extents whose lengths sum past 2^64 wrap to a total that "covers" the
 * size; the check must not be fooled (each extent alone is aligned and
 * does not wrap the device offset).
 */
static void test_hostile_extent_sum_overflow(void **state)
{
	struct rec x;

	(void)state;
	rec_large(&x);
	x.r.size = 100;
	x.r.ncsum = 1;
	x.r.next = 2;
	x.ext[0].off = 0;
	x.ext[0].len = 1ull << 63;
	x.ext[1].off = 0;
	x.ext[1].len = (1ull << 63) + U; /* sum wraps to one unit */
	expect_bad(&x);
}

/* A rename's new key: empty or longer than GS_KEY_MAX is not a record. */
static void test_hostile_rename(void **state)
{
	struct rec x;
	struct jrec d;
	uint8_t *buf;
	size_t len;
	uint32_t k2;
	(void)state;

	rec_rename(&x);
	buf = encode(&x, &len);
	assert_int_equal(jrec_decode(buf, len, &d), (long)len);
	for (int i = 0; i < 2; i++) {
		k2 = i == 0 ? 0 : GS_KEY_MAX + 1;
		memcpy(buf + J_HDR, &k2, 4);
		reseal(buf);
		assert_int_equal(jrec_decode(buf, len, &d), -EBADMSG);
	}
	free(buf);
}

static void test_csum_blocks(void **state)
{
	const uint8_t data[] = "abcdefgh";

	(void)state;
	assert_int_equal(csum_blocks(0), 0);
	assert_int_equal(csum_blocks(1), 1);
	assert_int_equal(csum_blocks(GS_CSUM_BLOCK - 1), 1);
	assert_int_equal(csum_blocks(GS_CSUM_BLOCK), 1);
	assert_int_equal(csum_blocks(GS_CSUM_BLOCK + 1), 2);
	assert_int_equal(csum_blocks(10ull * GS_CSUM_BLOCK), 10);
	assert_int_equal(csum_blocks(1ull << 40), (1ull << 40) / GS_CSUM_BLOCK);

	assert_int_equal(csum_block(data, 8), (uint32_t)XXH3_64bits(data, 8));
	assert_int_equal(csum_block(data, 0), (uint32_t)XXH3_64bits(data, 0));
	assert_int_not_equal(csum_block(data, 8), csum_block(data, 7));
}

/*
 * Block checksums are on disk: whichever XXH3 entry point the store
 * calls (libxxhash's vector-dispatching ones on x86-64), they must equal
 * the reference, which this file calls, at the lengths where XXH3 takes
 * its vector paths (over 240 bytes) too.
 */
static void test_csum_block_reference(void **state)
{
	static const size_t lens[] = { 129,	      240,
				       241,	      1000,
				       1024,	      4095,
				       GS_CSUM_BLOCK, 3 * GS_CSUM_BLOCK + 7 };
	size_t max = 3 * GS_CSUM_BLOCK + 7;
	uint8_t *buf = malloc(max);
	uint64_t x = 0x9e3779b97f4a7c15ull;
	(void)state;

	assert_non_null(buf);
	for (size_t i = 0; i < max; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		buf[i] = (uint8_t)x;
	}
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++)
		assert_int_equal(csum_block(buf, lens[i]),
				 (uint32_t)XXH3_64bits(buf, lens[i]));
	free(buf);
}

/* Sizes near 2^64 must not wrap to zero blocks. */
static void test_csum_blocks_no_overflow(void **state)
{
	(void)state;
	assert_int_equal(csum_blocks(UINT64_MAX - GS_CSUM_BLOCK + 1),
			 UINT64_MAX / GS_CSUM_BLOCK);
	assert_int_equal(csum_blocks(UINT64_MAX),
			 UINT64_MAX / GS_CSUM_BLOCK + 1);
}

/* ---- gs_parse_size ---- */

static void test_parse_size_good(void **state)
{
	static const struct {
		const char *s;
		uint64_t v;
	} ok[] = {
		{ "0", 0 },
		{ "4096", 4096 },
		{ "64M", 64ull << 20 },
		{ "2MiB", 2ull << 20 },
		{ "256K", 256ull << 10 },
		{ "256k", 256ull << 10 },
		{ "1G", 1ull << 30 },
		{ "1T", 1ull << 40 },
		{ "1TiB", 1ull << 40 },
		{ "0M", 0 },
		{ "007", 7 },
		{ "18446744073709551615", UINT64_MAX },
		{ "16777215T", 16777215ull << 40 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		uint64_t v = 12345;

		assert_int_equal(gs_parse_size(ok[i].s, &v), 0);
		assert_int_equal(v, ok[i].v);
	}
}

/* A plain "B" suffix means bytes, like "MiB" or "MB" for larger units. */
static void test_parse_size_byte_suffix(void **state)
{
	uint64_t v = 12345;

	(void)state;
	assert_int_equal(gs_parse_size("1B", &v), 0);
	assert_int_equal(v, 1);
	assert_int_equal(gs_parse_size("4096B", &v), 0);
	assert_int_equal(v, 4096);
}

static void test_parse_size_bad(void **state)
{
	static const char *const bad[] = {
		"",	 "M",	"-1",	"1X",	"1MB2", " 1",
		"1 ",	 "+1",	"1.5M", "0x10", "1iB",	"1Mi",
		"1MiB ", "1KK", "K1",	"1\n",	"1BB",
	};
	static const char *const range[] = {
		"99999999999999999999", "20000000T",
		"18446744073709551616", "16777216T",
		"17179869184G",		"18014398509481984K",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint64_t v = 12345;

		assert_int_equal(gs_parse_size(bad[i], &v), -EINVAL);
		assert_int_equal(v, 12345); /* untouched */
	}
	for (size_t i = 0; i < sizeof(range) / sizeof(range[0]); i++) {
		uint64_t v = 12345;

		assert_int_equal(gs_parse_size(range[i], &v), -ERANGE);
		assert_int_equal(v, 12345);
	}
	assert_int_equal(gs_parse_size(NULL, &(uint64_t){ 0 }), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_round_trip_edges),
		cmocka_unit_test(test_sequence),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_bit_flips),
		cmocka_unit_test(test_hostile_header),
		cmocka_unit_test(test_hostile_key_attr),
		cmocka_unit_test(test_hostile_extents),
		cmocka_unit_test(test_hostile_extent_sum_overflow),
		cmocka_unit_test(test_hdd_extents),
		cmocka_unit_test(test_hostile_rename),
		cmocka_unit_test(test_csum_blocks),
		cmocka_unit_test(test_csum_block_reference),
		cmocka_unit_test(test_csum_blocks_no_overflow),
		cmocka_unit_test(test_parse_size_good),
		cmocka_unit_test(test_parse_size_byte_suffix),
		cmocka_unit_test(test_parse_size_bad),
	};

	return cmocka_run_group_tests_name("journal", tests, NULL, NULL);
}
