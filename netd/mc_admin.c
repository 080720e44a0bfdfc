/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * goblind's own memcache commands, which memcached has not (it answers
 * ERROR to them): "goblin inspect KEY [b]", where the bytes of KEY are in
 * this process (RAM, SMALL, SSD, HDD), and "goblin stat KEY [b]", its
 * metadata.  goblinctl --host ... inspect and stat speak them; see
 * goblind(8), "Admin commands".
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memcache.h"

_Static_assert(MC_ADMIN_KEY_MAX == GS_KEY_MAX,
	       "goblin's key limit is the store's");

#define RANGES_FIRST 64	       /* gs_inspect's first try */
#define RANGES_MAX   (1 << 20) /* and its last: as goblinctl inspect */

/*
 * RANGE TIER OFF LEN DEV_OFF lines, then END (NOT_FOUND for a miss).
 * DEV_OFF is the offset in the tier's file for SSD and HDD, '-' for the
 * tiers in memory.  The ranges are the store's at the moment asked: a
 * demotion a moment later moves them.
 */
static void goblin_inspect(struct conn *c, const char *key, size_t klen)
{
	struct gs_range *rv = NULL;
	int n, max = RANGES_FIRST;

	for (;;) { /* n == max may mean more: grow, as goblinctl does */
		free(rv);
		rv = malloc((size_t)max * sizeof(*rv));
		if (!rv) {
			OUT(c, "SERVER_ERROR out of memory\r\n");
			return;
		}
		n = gs_inspect(store_of(c), key, klen, rv, max);
		if (n < max || max >= RANGES_MAX)
			break;
		max *= 4;
	}
	if (n == -ENOENT) {
		OUT(c, "NOT_FOUND\r\n");
	} else if (n < 0) {
		conn_printf(c, "SERVER_ERROR %s\r\n", gs_strerror(n));
	} else {
		for (int i = 0; i < n && i < max; i++) {
			const struct gs_range *g = &rv[i];

			conn_printf(c, "RANGE %s %" PRIu64 " %" PRIu64,
				    gs_tier_name(g->tier), g->off, g->len);
			if (g->tier == GS_TIER_SSD || g->tier == GS_TIER_HDD)
				conn_printf(c, " %" PRIu64 "\r\n", g->dev_off);
			else
				OUT(c, " -\r\n");
		}
		OUT(c, "END\r\n");
	}
	free(rv);
}

/* STAT NAME VALUE lines of gs_meta, then END (NOT_FOUND for a miss). */
static void goblin_stat(struct conn *c, const char *key, size_t klen)
{
	struct gs_meta m;
	int ret;

	memset(&m, 0, sizeof(m));
	ret = gs_stat(store_of(c), key, klen, &m);
	if (ret == -ENOENT) {
		OUT(c, "NOT_FOUND\r\n");
		return;
	}
	if (ret < 0) {
		conn_printf(c, "SERVER_ERROR %s\r\n", gs_strerror(ret));
		return;
	}
	conn_printf(c,
		    "STAT size %" PRIu64 "\r\nSTAT flags %" PRIu32
		    "\r\nSTAT exptime %" PRId64 "\r\nSTAT cas %" PRIu64
		    "\r\nSTAT mtime_ns %" PRId64 "\r\nSTAT xxh3 %016" PRIx64
		    "\r\nSTAT attr_len %u\r\nEND\r\n",
		    m.size, m.flags, m.exptime, m.cas, m.mtime_ns, m.xxh3,
		    (unsigned)m.attr_len);
}

void mc_cmd_goblin(struct conn *c, const struct mc_req *q)
{
	char *buf = NULL;
	const char *key = q->key;
	size_t klen = q->klen;

	if (q->b64) { /* any store key: decoded here, keybuf is too small */
		int n;

		buf = malloc(MC_ADMIN_KEY_MAX);
		if (!buf) {
			OUT(c, "SERVER_ERROR out of memory\r\n");
			return;
		}
		n = mc_b64_decode(q->key, q->klen, buf, MC_ADMIN_KEY_MAX);
		if (n <= 0) {
			OUT(c, "CLIENT_ERROR bad command line format\r\n");
			free(buf);
			return;
		}
		key = buf;
		klen = (size_t)n;
	}
	if (q->arg_len == 7 && !memcmp(q->arg, "inspect", 7))
		goblin_inspect(c, key, klen);
	else
		goblin_stat(c, key, klen);
	free(buf);
}
