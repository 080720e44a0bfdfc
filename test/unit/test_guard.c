/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the guard's reading of /proc/PID/mountinfo (fs/guard.c):
 * which FUSE connection is the mount's, with escaped paths, mounts
 * stacked on one another, other file systems and bad lines around it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "internal.h"

static long conn_of(const char *text, const char *real)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	long c;

	assert_non_null(f);
	c = guard_conn_of(f, real);
	fclose(f);
	return c;
}

static const char *const two =
	"22 1 254:1 / / rw,relatime shared:1 - ext4 /dev/vda1 rw\n"
	"97 22 0:45 / /tmp/a rw,nosuid,nodev,relatime shared:50 - "
	"fuse.goblinfs goblin:/s rw,user_id=0,group_id=0\n"
	"98 22 0:300 / /tmp/b rw shared:51 - fuse goblin:/t rw\n";

static void test_finds_its_mount(void **state)
{
	(void)state;
	assert_int_equal(conn_of(two, "/tmp/a"), 45);
	/* minors past 255: the kernel's dev_t, not the encoded one */
	assert_int_equal(conn_of(two, "/tmp/b"), 300);
	/* a major number: MKDEV's 20 bits of minor */
	assert_int_equal(conn_of("5 1 8:3 / /m rw - fuseblk /dev/sda3 rw\n",
				 "/m"),
			 (8 << 20) | 3);
}

static void test_not_fuse_or_elsewhere(void **state)
{
	(void)state;
	assert_int_equal(conn_of(two, "/"), -1);       /* ext4 */
	assert_int_equal(conn_of(two, "/tmp"), -1);    /* no mount there */
	assert_int_equal(conn_of(two, "/tmp/a/"), -1); /* resolved only */
	assert_int_equal(conn_of("", "/tmp/a"), -1);
}

static void test_escapes(void **state)
{
	(void)state;
	/* a space, a tab, a newline and a backslash, as the kernel writes
	 * them */
	assert_int_equal(conn_of("7 1 0:61 / /x\\040y\\011z\\012w\\134v rw - "
				 "fuse.goblinfs g rw\n",
				 "/x y\tz\nw\\v"),
			 61);
	/* not an escape: kept as it is */
	assert_int_equal(
		conn_of("7 1 0:62 / /x\\9y rw - fuse g rw\n", "/x\\9y"), 62);
}

static void test_the_top_one_wins(void **state)
{
	(void)state;
	/* a new mount over a dead one on the same directory */
	assert_int_equal(conn_of("97 22 0:45 / /m rw - fuse g rw\n"
				 "99 97 0:46 / /m rw - fuse g rw\n",
				 "/m"),
			 46);
}

static void test_bad_lines(void **state)
{
	static char big[71000], path[70000];
	size_t n;

	(void)state;
	/* after the good line: lines cut short, without the separator
	 * (one naming /m), without numbers, another file system on /m,
	 * the last without its newline: none of them taken for /m */
	assert_int_equal(conn_of("11 12 0:13 / /m rw - fuse g rw\n"
				 "garbage\n"
				 "1 2\n"
				 "3 4 x:y / /m rw - fuse g rw\n"
				 "5 6 0:7 / /m rw fuse g rw\n"
				 "8 9 0:10 /\n"
				 " - fuse\n"
				 "20 21 0:22 / /m rw - ext4 /dev/x rw",
				 "/m"),
			 13);
	/* a mount point of 69,000 bytes, on a line of 70,000 */
	n = (size_t)snprintf(big, sizeof(big), "1 2 0:14 / ");
	memset(path, 'a', sizeof(path) - 1000);
	path[0] = '/';
	snprintf(big + n, sizeof(big) - n, "%s rw - fuse g rw\n", path);
	assert_int_equal(conn_of(big, path), 14);
	assert_int_equal(conn_of(big, "/aaa"), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_finds_its_mount),
		cmocka_unit_test(test_not_fuse_or_elsewhere),
		cmocka_unit_test(test_escapes),
		cmocka_unit_test(test_the_top_one_wins),
		cmocka_unit_test(test_bad_lines),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
