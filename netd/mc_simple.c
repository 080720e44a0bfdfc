/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memcache commands answered at once, from the request in the read
 * buffer: incr and decr (read-modify-write, shared with ma), delete,
 * touch, flush_all (and the delayed one the loop's tick runs).
 * lru_crawler metadump streams from mc_dump.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "memcache.h"

/* ---- arithmetic ---- */

/* The value as memcached reads a counter: digits, spaces around them. */
static bool parse_counter(const char *buf, size_t len, uint64_t *v)
{
	size_t a = 0, b = len;

	while (a < b && buf[a] == ' ')
		a++;
	while (b > a && buf[b - 1] == ' ')
		b--;
	return mc_parse_u64(buf + a, b - a, UINT64_MAX, v);
}

/*
 * incr/decr/ma: read-modify-write, again on a race.  *val gets the new
 * value.  Returns 0, -ENOENT, -EINVAL (not a number), -ESTALE (ma C did
 * not match) or another -errno.
 */
int mc_arith(struct conn *c, const struct mc_req *q, bool decr, uint64_t delta,
	     uint64_t *val, uint64_t *cas)
{
	struct gs_store *s = store_of(c);
	int ret = -ESTALE;

	for (int i = 0; i < RMW_TRIES && ret == -ESTALE; i++) {
		struct gs_reader *r;
		const struct gs_meta *mt;
		struct gs_put_args a;
		char buf[32];
		ssize_t n;
		uint64_t v;

		if (i)
			CNT(c->w, rmw_retries);
		ret = gs_get_open(s, q->key, q->klen, 0, &r);
		if (ret < 0)
			return ret;
		mt = gs_reader_meta(r);
		memset(&a, 0, sizeof(a));
		a.flags = mt->flags;
		a.exptime = mt->exptime;
		a.mode = GS_CAS;
		a.cas_match = mt->cas;
		n = mt->size > 20 ? -EINVAL : gs_read(r, buf, mt->size, 0);
		gs_reader_close(r);
		if (n < 0)
			return (int)n;
		if (!parse_counter(buf, (size_t)n, &v))
			return -EINVAL;
		if (q->cmd == MC_MA && mc_meta_has(&q->meta, 'C') &&
		    q->meta.cas != a.cas_match)
			return -ESTALE;
		v = decr ? (v < delta ? 0 : v - delta) : v + delta;
		n = snprintf(buf, sizeof(buf), "%" PRIu64, v);
		a.size = (uint64_t)n;
		if (q->cmd == MC_MA && mc_meta_has(&q->meta, 'T'))
			a.exptime = store_exptime(q->meta.ttl);
		ret = mc_put_buf(s, q->key, q->klen, &a, buf, (size_t)n, cas);
		*val = v;
		if (ret == -ESTALE && q->cmd == MC_MA &&
		    mc_meta_has(&q->meta, 'C'))
			return ret;
	}
	if (ret == 0)
		metatab_clear(c->w->gd->meta, q->key, q->klen);
	return ret;
}

void mc_count_arith(struct worker *w, bool decr, bool hit)
{
	if (decr && hit)
		CNT(w, decr_hits);
	else if (decr)
		CNT(w, decr_misses);
	else if (hit)
		CNT(w, incr_hits);
	else
		CNT(w, incr_misses);
}

void mc_cmd_arith(struct conn *c, const struct mc_req *q)
{
	bool decr = q->cmd == MC_DECR;
	uint64_t v = 0, cas;
	int ret = mc_arith(c, q, decr, q->delta, &v, &cas);
	char line[32];

	if (ret == -ENOENT) {
		mc_count_arith(c->w, decr, false);
		mc_reply(c, "NOT_FOUND");
		return;
	}
	if (ret == -EINVAL) {
		mc_reply(c, "CLIENT_ERROR cannot increment or decrement "
			    "non-numeric value");
		return;
	}
	if (ret < 0) {
		mc_reply(c, "SERVER_ERROR cannot store the value");
		return;
	}
	mc_count_arith(c->w, decr, true);
	snprintf(line, sizeof(line), "%" PRIu64, v);
	mc_reply(c, line);
}

/* ---- delete, touch, flush_all ---- */

void mc_cmd_delete(struct conn *c, const struct mc_req *q)
{
	int ret = gs_delete(store_of(c), q->key, q->klen);

	metatab_clear(c->w->gd->meta, q->key, q->klen);
	if (ret == 0) {
		CNT(c->w, delete_hits);
		mc_reply(c, "DELETED");
	} else {
		CNT(c->w, delete_misses);
		mc_reply(c, "NOT_FOUND");
	}
}

void mc_cmd_touch(struct conn *c, const struct mc_req *q)
{
	CNT(c->w, cmd_touch);
	if (gs_touch(store_of(c), q->key, q->klen, store_exptime(q->exptime)) ==
	    0) {
		CNT(c->w, touch_hits);
		mc_reply(c, "TOUCHED");
	} else {
		CNT(c->w, touch_misses);
		mc_reply(c, "NOT_FOUND");
	}
}

struct flush_ctx {
	struct gs_store *s;
	int64_t before_ns;
	uint64_t deleted;
};

static int flush_one(void *arg, const void *key, size_t klen,
		     const struct gs_meta *m)
{
	struct flush_ctx *f = arg;

	if (m->mtime_ns <= f->before_ns && gs_delete(f->s, key, klen) == 0)
		f->deleted++;
	return 0;
}

uint64_t mc_flush(struct gd *gd, int64_t before_ns)
{
	struct flush_ctx f = { gd->s, before_ns, 0 };
	uint64_t last;

	/*
	 * Deleting while gs_iterate walks a bucket can make it skip a key
	 * of that bucket: walk again until a walk deletes nothing.
	 */
	do {
		last = f.deleted;
		if (gs_iterate(gd->s, "", 0, flush_one, &f) < 0)
			break;
	} while (f.deleted != last);
	return f.deleted;
}

void mc_cmd_flush_all(struct conn *c, const struct mc_req *q)
{
	struct gd *gd = c->w->gd;

	CNT(c->w, cmd_flush);
	if (q->has_num && q->num > 0) {
		int64_t at = mc_exptime((int64_t)q->num, now_sec());

		atomic_store(&gd->flush_at, at > 0 ? at : now_sec());
	} else {
		atomic_store(&gd->flush_at, 0);
		mc_flush(gd, gs_real_ns());
	}
	mc_reply(c, "OK");
}
