/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for the attribute record decoder (store/attr.c): the
 * bytes come from disk, in any of the formats ever written (version 2,
 * version 1, goblinfs's text).  A record that decodes has its lengths
 * within their maxima and encodes to a version 2 record that decodes to
 * the same fields; a version 2 record encodes back to its own bytes.  A
 * refused one is left at the defaults.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "goblin.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c)                 \
	do {                     \
		if (!(c))        \
			abort(); \
	} while (0)

static void same(const struct gs_attr *a, const struct gs_attr *b)
{
	CHECK(a->flags == b->flags && a->status == b->status);
	CHECK(a->last_modified == b->last_modified);
	CHECK(a->age_base == b->age_base && a->fresh_until == b->fresh_until);
	CHECK(a->etag_len == b->etag_len &&
	      !memcmp(a->etag, b->etag, a->etag_len));
	CHECK(a->ctype_len == b->ctype_len &&
	      !memcmp(a->ctype, b->ctype, a->ctype_len));
	CHECK(a->headers_len == b->headers_len &&
	      !memcmp(a->headers, b->headers, a->headers_len));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gs_attr a, b;
	uint8_t *copy = malloc(size ? size : 1), out[GS_ATTR_MAX];
	long n;
	int ret;

	memcpy(copy, data, size); /* exactly size bytes: overreads trap */
	ret = gs_attr_decode(copy, size, &a);
	if (ret == 0) {
		CHECK(a.etag_len <= GS_ATTR_ETAG_MAX);
		CHECK(a.ctype_len <= GS_ATTR_CTYPE_MAX);
		CHECK(a.headers_len <= GS_ATTR_HEADERS_MAX);
		n = gs_attr_encode(&a, out, sizeof(out));
		/* a text record may hold more than a binary one can */
		CHECK(n > 0 || (n == -EMSGSIZE && size && copy[0] > 2));
		if (n > 0) {
			if (size && copy[0] == GS_ATTR_VERSION)
				CHECK(n == (long)size &&
				      !memcmp(out, copy, size));
			CHECK(gs_attr_decode(out, (size_t)n, &b) == 0);
			same(&a, &b);
		}
	} else {
		CHECK(ret == -EBADMSG || ret == -EMSGSIZE ||
		      ret == -EPROTONOSUPPORT);
		CHECK(a.status == 200 && !a.flags && !a.etag_len &&
		      !a.ctype_len && !a.headers_len);
	}
	free(copy);
	return 0;
}
