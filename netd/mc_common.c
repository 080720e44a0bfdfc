/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memcache: what the command rooms share.  The noreply-aware one-line
 * reply, keys and the return flags of meta replies, and a put of a value
 * held in memory (small values, counters, placeholders).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "memcache.h"

void mc_reply(struct conn *c, const char *line)
{
	if (mc_of(c)->noreply)
		return;
	conn_out(c, line, strlen(line));
	conn_out(c, "\r\n", 2);
}

void mc_out_key(struct conn *c, const struct mc_req *q)
{
	if (q->b64) {
		char enc[(MC_KEY_MAX + 2) / 3 * 4 + 1];
		size_t n = mc_b64_encode(q->key, q->klen, enc);

		conn_out(c, enc, n);
	} else {
		conn_out(c, q->key, q->klen);
	}
}

int64_t mc_ttl_left(const struct gs_meta *mt)
{
	int64_t left;

	if (!mt->exptime)
		return -1;
	left = mt->exptime - now_sec();
	return left > 0 ? left : 0;
}

/* The return flags the request asked for, in its order. */
void mc_meta_flags_out(struct conn *c, const struct mc_req *q,
		       const struct gs_meta *mt, uint64_t cas)
{
	const struct mc_meta *m = &q->meta;
	int64_t la;

	for (unsigned i = 0; i < m->n; i++) {
		const struct mc_flag *f = &m->fl[i];

		switch (f->f) {
		case 'k': /* b follows a base64 key: memcached's order */
			OUT(c, " k");
			mc_out_key(c, q);
			if (q->b64)
				OUT(c, " b");
			break;
		case 'O':
			OUT(c, " O");
			conn_out(c, f->tok, f->len);
			break;
		case 'c': /* ms answers c0 for a value it did not store */
			if (cas || mt || q->cmd == MC_MS)
				conn_printf(c, " c%" PRIu64,
					    cas ? cas :
					    mt	? mt->cas :
						  0);
			break;
		}
		if (!mt)
			continue;
		switch (f->f) {
		case 'f':
			conn_printf(c, " f%" PRIu32, mt->flags);
			break;
		case 's':
			conn_printf(c, " s%" PRIu64, mt->size);
			break;
		case 't':
			conn_printf(c, " t%" PRId64, mc_ttl_left(mt));
			break;
		case 'h':
			OUT(c, " h0"); /* not tracked */
			break;
		case 'l':
			la = now_sec() - mt->mtime_ns / 1000000000ll;
			conn_printf(c, " l%" PRId64, la > 0 ? la : 0);
			break;
		}
	}
}

/* Store @len bytes held in memory with @a: 0 (cas in *cas) or -errno. */
int mc_put_buf(struct gs_store *s, const char *key, size_t klen,
	       const struct gs_put_args *a, const void *data, size_t len,
	       uint64_t *cas)
{
	struct gs_writer *wr;
	int ret = gs_put_begin(s, key, klen, a, &wr);

	if (ret < 0)
		return ret;
	ret = gs_put_write(wr, data, len);
	if (ret < 0) {
		gs_put_abort(wr);
		return ret;
	}
	return gs_put_commit(wr, cas);
}
