/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdma_probe: a client of goblind's RDMA transport that does what a
 * client must not, for 76-rdma.bats (issue 22).
 *   rdma_probe HOST PORT bad-rkey KEY  a get whose window carries an rkey
 *                                      the client never registered
 * Prints the client's error; exits 0 when the get failed, 1 when it did
 * not (the server wrote into a window it had no key to), 2 on misuse.
 */
#include <stdio.h>
#include <string.h>

#include "../../cli/rdma_client.h"

static int drop(void *arg, const void *p, size_t n, uint64_t off)
{
	(void)arg;
	(void)p;
	(void)n;
	(void)off;
	return 0;
}

int main(int argc, char **argv)
{
	struct grc_window w;
	struct grc *c;
	char err[512];
	int ret;

	if (argc != 5 || strcmp(argv[3], "bad-rkey")) {
		fprintf(stderr, "usage: rdma_probe HOST PORT bad-rkey KEY\n");
		return 2;
	}
	c = grc_connect(argv[1], argv[2], 1u << 20, 30000, err, sizeof(err));
	if (!c) {
		fprintf(stderr, "rdma_probe: %s\n", err);
		return 2;
	}
	grc_window_of(c, &w);
	w.rkey ^= 0x5a5a00; /* not the window's: the WRITE must fail */
	ret = grc_get_in(c, &w, argv[4], strlen(argv[4]), drop, NULL, NULL,
			 NULL);
	printf("rdma_probe: get with a bad rkey: %s\n",
	       ret ? grc_error(c) : "it worked");
	grc_close(c);
	return ret < 0 ? 0 : 1;
}
