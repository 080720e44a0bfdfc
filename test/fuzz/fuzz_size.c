/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for gs_parse_size: NUL-terminated copies of the input,
 * checked against a plain reading of the grammar: digits, then K, M, G or
 * T (any case) optionally followed by "B" or "iB".
 */
#include <ctype.h>
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

/* 0 with *out, -EINVAL, -ERANGE; 1 for "not judged here". */
static int ref_parse(const char *s, uint64_t *out)
{
	uint64_t v = 0, mul = 1;
	int over = 0;
	const char *p = s;

	if (!isdigit((unsigned char)*p))
		return -EINVAL;
	for (; isdigit((unsigned char)*p); p++) {
		unsigned d = (unsigned)(*p - '0');

		if (v > (UINT64_MAX - d) / 10)
			over = 1;
		else
			v = v * 10 + d;
	}
	if (over)
		return -ERANGE; /* the number alone does not fit */
	switch (toupper((unsigned char)*p)) {
	case 'K':
		mul = 1ull << 10;
		p++;
		break;
	case 'M':
		mul = 1ull << 20;
		p++;
		break;
	case 'G':
		mul = 1ull << 30;
		p++;
		break;
	case 'T':
		mul = 1ull << 40;
		p++;
		break;
	}
	if (mul == 1 && strcmp(p, "B") == 0)
		return 1; /* plain "B": see test_parse_size_byte_suffix */
	if (mul > 1 && (strcmp(p, "B") == 0 || strcmp(p, "iB") == 0))
		p += strlen(p);
	if (*p)
		return -EINVAL;
	if (v > UINT64_MAX / mul)
		return -ERANGE;
	*out = v * mul;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	uint64_t got = 0x5a5a5a5a5a5a5a5aull, want = 0;
	int ret, ref;

	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	ret = gs_parse_size(s, &got);
	CHECK(ret == 0 || ret == -EINVAL || ret == -ERANGE);
	if (ret != 0)
		CHECK(got == 0x5a5a5a5a5a5a5a5aull); /* untouched */
	ref = ref_parse(s, &want);
	if (ref != 1) {
		CHECK(ret == ref);
		if (ret == 0)
			CHECK(got == want);
	}
	free(s);
	return 0;
}
