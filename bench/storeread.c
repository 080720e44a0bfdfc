/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * storeread: stream one object of an existing store through the embedded
 * API (gs_reader_next), the baseline a mount's read bandwidth is held to.
 *   storeread --store DIR [store options] KEY
 * Prints RESULT bytes=... seconds=... mibps=... ttfb_us=...
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "../store/clock.h"
#include "../store/goblin.h"

int main(int argc, char **argv)
{
	struct gs_options o;
	struct gs_store *s;
	struct gs_reader *r;
	struct gs_chunk c;
	const char *dir = NULL, *key = NULL;
	char err[512];
	uint64_t t0, t1 = 0, bytes = 0;
	int ret;

	gs_options_init(&o);
	for (int i = 1; i < argc; i++) {
		const char *why, *name = argv[i] + 2;
		int j;

		if (!strcmp(argv[i], "--store") && i + 1 < argc) {
			dir = argv[++i];
			continue;
		}
		if (!key && argv[i][0] != '-') {
			key = argv[i];
			continue;
		}
		/* a store option: --name VALUE, or a --flag */
		for (j = 0; j < GS_NOPTIONS; j++)
			if (!strncmp(argv[i], "--", 2) &&
			    !strcmp(name, gs_option_list[j].name))
				break;
		if (j == GS_NOPTIONS ||
		    (gs_option_list[j].arg && i + 1 >= argc))
			goto usage;
		if (gs_option_set(&o, name,
				  gs_option_list[j].arg ? argv[++i] : NULL,
				  &why) < 0) {
			fprintf(stderr, "storeread: bad --%s: %s\n", name, why);
			return 129;
		}
	}
	if (!dir || !key)
		goto usage;
	if ((ret = gs_open(dir, &o, &s, err, sizeof(err))) < 0) {
		fprintf(stderr, "storeread: %s\n", err);
		return 128;
	}
	t0 = gs_mono_ns();
	ret = gs_get_open(s, key, strlen(key), 0, &r);
	if (ret < 0) {
		fprintf(stderr, "storeread: '%s': %s\n", key, gs_strerror(ret));
		return 1;
	}
	while ((ret = gs_reader_next(r, &c)) == 1) {
		if (!bytes)
			t1 = gs_mono_ns() - t0;
		bytes += c.len;
	}
	t0 = gs_mono_ns() - t0;
	gs_reader_close(r);
	gs_close(s);
	if (ret < 0) {
		fprintf(stderr, "storeread: '%s': %s\n", key, gs_strerror(ret));
		return 128;
	}
	printf("RESULT bytes=%" PRIu64
	       " seconds=%.3f mibps=%.1f ttfb_us=%.1f\n",
	       bytes, t0 / 1e9, bytes / 1048576.0 / (t0 / 1e9), t1 / 1e3);
	return 0;
usage:
	fprintf(stderr, "usage: storeread --store DIR [store options] KEY\n");
	gs_option_help(stderr);
	return 129;
}
