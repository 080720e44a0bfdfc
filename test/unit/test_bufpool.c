/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The store's I/O buffer pools: buffers carved from 2 MiB-aligned slabs
 * asked for as transparent huge pages, grown a slab at a time, reused
 * without growing, unmapped at release.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <cmocka.h>
#include "internal.h"

#define KiB 1024ull
#define MiB (1024 * KiB)

static bool mapped(const void *p)
{
	unsigned char v;

	return mincore((void *)p, 4096, &v) == 0;
}

/* The smaps VmFlags line of the mapping that holds @p, or "" */
static void vm_flags(const void *p, char *out, size_t len)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	bool in = false;

	out[0] = 0;
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;

		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 &&
		    strchr(line, '-') < strchr(line, ' ')) {
			in = (uintptr_t)p >= lo && (uintptr_t)p < hi;
		} else if (in && !strncmp(line, "VmFlags:", 8)) {
			snprintf(out, len, "%s", line + 8);
			break;
		}
	}
	fclose(f);
}

static void test_geometry(void **state)
{
	struct bufpool p;
	(void)state;

	bufpool_init(&p, 256 * KiB);
	assert_int_equal(p.size, 256 * KiB);
	assert_int_equal(p.slab, 2 * MiB);
	assert_int_equal(p.per_slab, 8);
	bufpool_release(&p);

	bufpool_init(&p, 70000); /* rounded up to 4 KiB for O_DIRECT */
	assert_int_equal(p.size, 73728);
	assert_int_equal(p.slab, 2 * MiB);
	assert_int_equal(p.per_slab, 2 * MiB / 73728);
	bufpool_release(&p);

	bufpool_init(&p, 3 * MiB); /* one buffer over two huge pages */
	assert_int_equal(p.slab, 4 * MiB);
	assert_int_equal(p.per_slab, 1);
	bufpool_release(&p);
}

/* Distinct, aligned buffers inside their slabs, whole and writable. */
static void test_buffers_carved(void **state)
{
	enum { N = 20 };
	struct bufpool p;
	uint8_t *b[N];
	(void)state;

	bufpool_init(&p, 256 * KiB);
	assert_int_equal(bufpool_bytes(&p), 0); /* nothing before a get */
	for (int i = 0; i < N; i++) {
		b[i] = bufpool_get(&p);
		assert_non_null(b[i]);
		assert_int_equal((uintptr_t)b[i] % 4096, 0);
		memset(b[i], i + 1, p.size);
		/* a slab at a time: 8 buffers each */
		assert_int_equal(p.nslabs, i / 8 + 1);
		assert_int_equal(p.n, p.nslabs * 8);
	}
	assert_int_equal(bufpool_bytes(&p), 3 * 2 * MiB);
	for (uint32_t k = 0; k < p.nslabs; k++)
		assert_int_equal((uintptr_t)p.slabs[k] % (2 * MiB), 0);
	for (int i = 0; i < N; i++) {
		bool inside = false;

		for (uint32_t k = 0; k < p.nslabs; k++)
			inside |= b[i] >= (uint8_t *)p.slabs[k] &&
				  b[i] + p.size <=
					  (uint8_t *)p.slabs[k] + p.slab;
		assert_true(inside);
		/* no buffer overlaps another: each kept its own fill */
		for (uint64_t j = 0; j < p.size; j += 4093)
			assert_int_equal(b[i][j], i + 1);
		assert_int_equal(b[i][p.size - 1], i + 1);
	}
	for (int i = 0; i < N; i++)
		bufpool_put(&p, b[i]);
	bufpool_release(&p);
}

/* Steady state: buffers given back are handed out again, no growth. */
static void test_reuse_without_growth(void **state)
{
	struct bufpool p;
	void *b[8];
	(void)state;

	bufpool_init(&p, 256 * KiB);
	for (int round = 0; round < 100; round++) {
		for (int i = 0; i < 8; i++)
			assert_non_null(b[i] = bufpool_get(&p));
		for (int i = 0; i < 8; i++)
			bufpool_put(&p, b[i]);
	}
	assert_int_equal(p.nslabs, 1);
	assert_int_equal(p.n, 8);
	assert_int_equal(p.nfree, 8);
	bufpool_release(&p);
}

/* Slabs ask for huge pages, and are unmapped at release. */
static void test_huge_advice_and_release(void **state)
{
	struct bufpool p;
	void *b, *slab;
	char flags[512];
	(void)state;

	bufpool_init(&p, 256 * KiB);
	b = bufpool_get(&p);
	assert_non_null(b);
	slab = p.slabs[0];
	assert_true(mapped(slab));
	if (access("/sys/kernel/mm/transparent_hugepage/enabled", F_OK) == 0) {
		vm_flags(slab, flags, sizeof(flags));
		/* "hg": MADV_HUGEPAGE took */
		assert_non_null(strstr(flags, " hg"));
	}
	bufpool_put(&p, b);
	bufpool_release(&p);
	assert_false(mapped(slab));
	assert_int_equal(errno, ENOMEM);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_geometry),
		cmocka_unit_test(test_buffers_carved),
		cmocka_unit_test(test_reuse_without_growth),
		cmocka_unit_test(test_huge_advice_and_release),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
