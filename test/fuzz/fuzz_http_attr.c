/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for the HTTP attribute record decoder: the bytes come
 * from disk.  A record that decodes must encode back to the same bytes,
 * and its lengths must be within their maxima.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "http_attr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c) do { if (!(c)) abort(); } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct http_attr a;
	uint8_t *copy = malloc(size ? size : 1), out[2048];
	long n;

	memcpy(copy, data, size);	/* exactly size bytes: overreads trap */
	if (http_attr_decode(copy, size, &a) == 0 && size) {
		CHECK(a.etag_len <= HTTP_ATTR_ETAG_MAX);
		CHECK(a.ctype_len <= HTTP_ATTR_CTYPE_MAX);
		CHECK(a.extra_len <= HTTP_ATTR_EXTRA_MAX);
		n = http_attr_encode(&a, out, sizeof(out));
		CHECK(n == (long)size && !memcmp(out, copy, size));
	}
	free(copy);
	return 0;
}
