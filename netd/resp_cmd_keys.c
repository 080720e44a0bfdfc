/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RESP's keyspace commands: EXPIRE PEXPIRE TTL PTTL PERSIST TYPE SCAN
 * DBSIZE FLUSHDB FLUSHALL.  Expiry times are the store's, whole unix
 * seconds that memcache's exptime and HTTP's freshness share: a time in
 * milliseconds is rounded up to the next second.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "resp.h"

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static struct gs_meta *meta_of(const struct conn *c)
{
	return &((struct resp_worker *)conn_pstate(c))->meta;
}

/* ---- EXPIRE PEXPIRE PERSIST TTL PTTL TYPE ---- */

enum conn_run resp_cmd_expire(struct conn *c, struct resp_req *q)
{
	bool ms = resp_is(&q->argv[0], "pexpire");
	bool nx = false, xx = false, gt = false, lt = false;
	struct gs_meta *mt = meta_of(c);
	const struct resp_arg *k = &q->argv[1];
	long long when;
	int64_t cur, exptime;

	for (unsigned j = 3; j < q->argc; j++) {
		if (resp_is(&q->argv[j], "nx"))
			nx = true;
		else if (resp_is(&q->argv[j], "xx"))
			xx = true;
		else if (resp_is(&q->argv[j], "gt"))
			gt = true;
		else if (resp_is(&q->argv[j], "lt"))
			lt = true;
		else {
			resp_errf(c, "ERR Unsupported option %.*s",
				  (int)q->argv[j].len, q->argv[j].p);
			return RUN_INPUT;
		}
	}
	if (nx && (xx || gt || lt)) {
		resp_err(c, "ERR NX and XX, GT or LT options at the same time "
			    "are not compatible");
		return RUN_INPUT;
	}
	if (gt && lt) {
		resp_err(c, "ERR GT and LT options at the same time are not "
			    "compatible");
		return RUN_INPUT;
	}
	if (!resp_ll(q->argv[2].p, q->argv[2].len, &when)) {
		resp_not_int(c);
		return RUN_INPUT;
	}
	if (!ms && (when > LLONG_MAX / 1000 || when < LLONG_MIN / 1000))
		goto invalid;
	if (!ms)
		when *= 1000;
	if ((when > 0 && when > LLONG_MAX - now_ms()))
		goto invalid;
	when += now_ms();
	if (gs_stat(resp_store(c), k->p, k->len, mt) < 0) {
		resp_int(c, 0);
		return RUN_INPUT;
	}
	cur = mt->exptime ? mt->exptime * 1000 : 0; /* 0: none */
	if ((nx && cur) || (xx && !cur) || (gt && (!cur || when <= cur)) ||
	    (lt && cur && when >= cur)) {
		resp_int(c, 0);
		return RUN_INPUT;
	}
	CNT(c->w, cmd_touch);
	if (when <= now_ms()) { /* in the past: the key goes now */
		resp_int(c, gs_delete(resp_store(c), k->p, k->len) == 0);
		return RUN_INPUT;
	}
	/* whole seconds as memcache's exptime; milliseconds rounded up */
	exptime = ms ? (when + 999) / 1000 : when / 1000;
	resp_int(c, gs_touch(resp_store(c), k->p, k->len, exptime) == 0);
	return RUN_INPUT;
invalid:
	resp_errf(c, "ERR invalid expire time in '%s' command",
		  ms ? "pexpire" : "expire");
	return RUN_INPUT;
}

enum conn_run resp_cmd_persist(struct conn *c, struct resp_req *q)
{
	struct gs_meta *mt = meta_of(c);
	const struct resp_arg *k = &q->argv[1];

	if (gs_stat(resp_store(c), k->p, k->len, mt) < 0 || !mt->exptime) {
		resp_int(c, 0);
		return RUN_INPUT;
	}
	resp_int(c, gs_touch(resp_store(c), k->p, k->len, 0) == 0);
	return RUN_INPUT;
}

enum conn_run resp_cmd_ttl(struct conn *c, struct resp_req *q)
{
	bool ms = resp_is(&q->argv[0], "pttl");
	struct gs_meta *mt = meta_of(c);
	int64_t left;

	if (gs_stat(resp_store(c), q->argv[1].p, q->argv[1].len, mt) < 0) {
		resp_int(c, -2);
		return RUN_INPUT;
	}
	if (!mt->exptime) {
		resp_int(c, -1);
		return RUN_INPUT;
	}
	/* the store's whole seconds: it expires the key at exptime */
	left = ms ? mt->exptime * 1000 - now_ms() :
		    mt->exptime - (int64_t)time(NULL);
	resp_int(c, left < 0 ? 0 : left);
	return RUN_INPUT;
}

enum conn_run resp_cmd_type(struct conn *c, struct resp_req *q)
{
	if (gs_stat(resp_store(c), q->argv[1].p, q->argv[1].len, meta_of(c)) <
	    0)
		ROUT(c, "+none\r\n");
	else
		resp_simple(c, resp_kind_name(resp_kind(c, meta_of(c))));
	return RUN_INPUT;
}

/* ---- SCAN ---- */

/*
 * The store has no ordered walk to resume, so SCAN's cursor is a place
 * in the order of a 63-bit hash of the keys: each call walks every key
 * and returns the COUNT with the smallest hashes at or past the cursor
 * (a max-heap of them), the next cursor one past the largest.  A key
 * present for the whole scan is returned, as Redis guarantees; a call
 * costs a walk of the store (goblind(8)).
 */
#define SCAN_COUNT_MAX 1000

struct scan_ent {
	uint64_t h;
	char *key;
	size_t klen;
};

struct scan_ctx {
	uint64_t cursor;
	const char *pat;
	size_t plen;
	const struct conn *c;
	int kind; /* TYPE: RESP_KIND_*, -1: any, -2: none matches */
	struct scan_ent *heap;
	size_t n, max;
	bool oom;
};

static uint64_t key_hash(const void *key, size_t klen)
{
	const uint8_t *p = key;
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < klen; i++) {
		h ^= p[i];
		h *= 1099511628211ull;
	}
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 32;
	return h >> 1; /* one past the largest never wraps to 0 */
}

static void heap_down(struct scan_ent *hp, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		struct scan_ent t;

		if (l < n && hp[l].h > hp[m].h)
			m = l;
		if (r < n && hp[r].h > hp[m].h)
			m = r;
		if (m == i)
			return;
		t = hp[i];
		hp[i] = hp[m];
		hp[m] = t;
		i = m;
	}
}

static void heap_up(struct scan_ent *hp, size_t i)
{
	while (i) {
		size_t p = (i - 1) / 2;
		struct scan_ent t;

		if (hp[p].h >= hp[i].h)
			return;
		t = hp[i];
		hp[i] = hp[p];
		hp[p] = t;
		i = p;
	}
}

static int scan_one(void *arg, const void *key, size_t klen,
		    const struct gs_meta *m)
{
	struct scan_ctx *x = arg;
	uint64_t h = key_hash(key, klen);
	char *k;

	if (x->kind == -2 || h < x->cursor ||
	    (x->kind >= 0 && resp_kind(x->c, m) != x->kind) ||
	    (x->pat && !resp_glob(x->pat, x->plen, key, klen)))
		return 0;
	if (x->n == x->max && h >= x->heap[0].h)
		return 0;
	k = malloc(klen ? klen : 1);
	if (!k) {
		x->oom = true;
		return 1;
	}
	memcpy(k, key, klen);
	if (x->n == x->max) {
		free(x->heap[0].key);
		x->heap[0] = (struct scan_ent){ h, k, klen };
		heap_down(x->heap, x->n, 0);
	} else {
		x->heap[x->n] = (struct scan_ent){ h, k, klen };
		heap_up(x->heap, x->n++);
	}
	return 0;
}

enum conn_run resp_cmd_scan(struct conn *c, struct resp_req *q)
{
	struct scan_ctx x = { .c = c, .kind = -1 };
	long long count = 10;
	uint64_t next = 0;
	char *end, cur[32];

	if (q->argv[1].len >= sizeof(cur) || !q->argv[1].len)
		goto bad_cursor;
	memcpy(cur, q->argv[1].p, q->argv[1].len);
	cur[q->argv[1].len] = 0;
	errno = 0;
	x.cursor = strtoull(cur, &end, 10);
	if (*end || errno || cur[0] == ' ') /* strtoul's, as Redis */
		goto bad_cursor;
	for (unsigned j = 2; j < q->argc; j += 2) {
		if (j + 1 >= q->argc) {
			resp_syntax_err(c);
			return RUN_INPUT;
		}
		if (resp_is(&q->argv[j], "count")) {
			if (!resp_ll(q->argv[j + 1].p, q->argv[j + 1].len,
				     &count)) {
				resp_not_int(c);
				return RUN_INPUT;
			}
			if (count < 1) {
				resp_syntax_err(c);
				return RUN_INPUT;
			}
		} else if (resp_is(&q->argv[j], "match")) {
			x.pat = q->argv[j + 1].p;
			x.plen = q->argv[j + 1].len;
			if (x.plen == 1 && x.pat[0] == '*')
				x.pat = NULL;
		} else if (resp_is(&q->argv[j], "type")) {
			x.kind = resp_is(&q->argv[j + 1], "string") ?
					 RESP_KIND_STRING :
				 resp_is(&q->argv[j + 1], "hash") ?
					 RESP_KIND_HASH :
				 resp_is(&q->argv[j + 1], "zset") ?
					 RESP_KIND_ZSET :
					 -2;
		} else {
			resp_syntax_err(c);
			return RUN_INPUT;
		}
	}
	x.max = count > SCAN_COUNT_MAX ? SCAN_COUNT_MAX : (size_t)count;
	x.heap = malloc(x.max * sizeof(*x.heap));
	if (!x.heap) {
		resp_err(c, "OOM goblind: out of memory");
		return RUN_INPUT;
	}
	if (gs_iterate(resp_store(c), "", 0, scan_one, &x) < 0 || x.oom) {
		resp_err(c, "ERR goblind: the store's walk failed");
		goto out;
	}
	if (x.n == x.max)
		next = x.heap[0].h + 1;
	ROUT(c, "*2\r\n");
	conn_printf(c, "$%d\r\n%" PRIu64 "\r\n",
		    snprintf(cur, sizeof(cur), "%" PRIu64, next), next);
	resp_array(c, x.n);
	for (size_t i = 0; i < x.n; i++)
		resp_bulk(c, x.heap[i].key, x.heap[i].klen);
out:
	for (size_t i = 0; i < x.n; i++)
		free(x.heap[i].key);
	free(x.heap);
	return RUN_INPUT;
bad_cursor:
	resp_err(c, "ERR invalid cursor");
	return RUN_INPUT;
}

/* ---- DBSIZE FLUSHDB FLUSHALL ---- */

enum conn_run resp_cmd_dbsize(struct conn *c, struct resp_req *q)
{
	struct gs_stats *st = malloc(sizeof(*st));

	(void)q;
	if (!st) {
		resp_err(c, "OOM goblind: out of memory");
		return RUN_INPUT;
	}
	gs_stats_get(resp_store(c), st);
	resp_int(c, (long long)st->objects);
	free(st);
	return RUN_INPUT;
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

/*
 * Every key written before the command, as memcache's flush_all: walk
 * again until a walk deletes nothing (a delete during a walk may make it
 * skip a key of that bucket).  ASYNC is taken as SYNC.
 */
enum conn_run resp_cmd_flush(struct conn *c, struct resp_req *q)
{
	struct flush_ctx f = { resp_store(c), gs_real_ns(), 0 };
	uint64_t last;

	if (q->argc > 2 || (q->argc == 2 && !resp_is(&q->argv[1], "sync") &&
			    !resp_is(&q->argv[1], "async"))) {
		resp_syntax_err(c);
		return RUN_INPUT;
	}
	CNT(c->w, cmd_flush);
	do {
		last = f.deleted;
		if (gs_iterate(f.s, "", 0, flush_one, &f) < 0)
			break;
	} while (f.deleted != last);
	resp_ok(c);
	return RUN_INPUT;
}
