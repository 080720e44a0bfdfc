/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A unit test's scratch directory: a new one under $TMPDIR (/tmp when it is
 * unset or empty), as mkdtemp(3) makes it, and its removal.
 */
#ifndef GOBLIN_TESTDIR_H
#define GOBLIN_TESTDIR_H

#include <stdio.h>
#include <stdlib.h>

/*
 * Fills buf (n bytes) with "$TMPDIR/NAME-XXXXXX" made real; NULL on error,
 * with a line on stderr when $TMPDIR is too long for buf.
 */
static inline char *test_mkdtemp(char *buf, size_t n, const char *name)
{
	const char *t = getenv("TMPDIR");

	if (!t || !*t)
		t = "/tmp";
	if ((size_t)snprintf(buf, n, "%s/%s-XXXXXX", t, name) >= n) {
		fprintf(stderr, "TMPDIR '%s' is too long for this test\n", t);
		return NULL;
	}
	return mkdtemp(buf);
}

/* Remove @dir and everything under it (a teardown): system(3)'s status. */
static inline int test_rmtree(const char *dir)
{
	char cmd[4096 + 16]; /* a path, quoted, after rm -rf */

	if ((size_t)snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir) >=
	    sizeof(cmd))
		return -1;
	return system(cmd);
}

#endif
