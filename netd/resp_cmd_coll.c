/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RESP's small collections: HSET HGET HDEL HGETALL HLEN and ZADD ZSCORE
 * ZREM ZRANGE ZCARD.  A collection is one store object, so it persists,
 * expires and is evicted like any value: its bytes are the encoding
 * below, its attribute record says its kind (GS_ATTR_RESP_HASH or
 * GS_ATTR_RESP_ZSET), which RESP's string commands answer with
 * WRONGTYPE.  memcache and HTTP serve those bytes as they are.
 *
 * A change reads the whole object (at most RESP_COLL_MAX_BYTES), edits
 * it in memory and writes a new version that replaces exactly the one
 * read (GS_CAS, GS_ADD for a new key), again on a race, as memcache's
 * append does.  Bounded: RESP_COLL_MAX_ITEMS fields or members and
 * RESP_COLL_MAX_BYTES encoded; a change past either is refused with an
 * error and changes nothing.
 *
 * Encoding, little-endian: a hash is its fields in insertion order,
 * each "u32 field length, field, u32 value length, value"; a sorted set
 * its members in (score, member) order, each "f64 score, u32 member
 * length, member".
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "resp.h"

struct item {
	const char *k; /* field or member */
	size_t klen;
	const char *v; /* hash: the value */
	size_t vlen;
	double score; /* zset */
};

struct coll {
	struct item *it;
	size_t n, cap;
	int kind;  /* RESP_KIND_* */
	void *raw; /* the object's bytes, which the items point into */
	uint64_t cas;
	int64_t exptime;
	bool found;
};

static void coll_free(struct coll *o)
{
	free(o->it);
	free(o->raw);
	memset(o, 0, sizeof(*o));
}

static int add_item(struct coll *o, const struct item *x)
{
	if (o->n == o->cap) {
		size_t cap = o->cap ? o->cap * 2 : 16;
		struct item *ni = realloc(o->it, cap * sizeof(*ni));

		if (!ni)
			return -ENOMEM;
		o->it = ni;
		o->cap = cap;
	}
	o->it[o->n++] = *x;
	return 0;
}

static uint32_t get_u32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

/* Split the object's bytes into items.  0, or -EBADMSG. */
static int decode(struct coll *o, const uint8_t *p, size_t len)
{
	size_t pos = 0;

	while (pos < len) {
		struct item x = { 0 };

		if (o->kind == RESP_KIND_ZSET) {
			if (len - pos < 12)
				return -EBADMSG;
			memcpy(&x.score, p + pos, 8);
			pos += 8;
		}
		if (len - pos < 4 || len - pos - 4 < get_u32(p + pos))
			return -EBADMSG;
		x.klen = get_u32(p + pos);
		x.k = (const char *)p + pos + 4;
		pos += 4 + x.klen;
		if (o->kind == RESP_KIND_HASH) {
			if (len - pos < 4 || len - pos - 4 < get_u32(p + pos))
				return -EBADMSG;
			x.vlen = get_u32(p + pos);
			x.v = (const char *)p + pos + 4;
			pos += 4 + x.vlen;
		}
		if (add_item(o, &x) < 0)
			return -ENOMEM;
	}
	return 0;
}

/*
 * Read @key as a collection of @kind: 0 (o->found false when absent),
 * -EMEDIUMTYPE (another kind: WRONGTYPE), -EFBIG (too big to be ours),
 * or -errno.
 */
static int coll_load(struct conn *c, const struct resp_arg *key, int kind,
		     struct coll *o)
{
	struct gs_meta *mt = &((struct resp_worker *)conn_pstate(c))->meta;
	size_t len = 0;
	int ret;

	memset(o, 0, sizeof(*o));
	o->kind = kind;
	ret = gs_stat(resp_store(c), key->p, key->len, mt);
	if (ret == -ENOENT)
		return 0;
	if (ret < 0)
		return ret;
	if (resp_kind(c, mt) != kind)
		return -EMEDIUMTYPE;
	if (mt->size > RESP_COLL_MAX_BYTES)
		return -EFBIG;
	ret = gs_get(resp_store(c), key->p, key->len, &o->raw, &len, mt);
	if (ret == -ENOENT)
		return 0; /* gone since the stat */
	if (ret < 0)
		return ret;
	if (resp_kind(c, mt) != kind) {
		coll_free(o);
		return -EMEDIUMTYPE;
	}
	o->found = true;
	o->cas = mt->cas;
	o->exptime = mt->exptime;
	o->kind = kind;
	ret = decode(o, o->raw, len);
	if (ret < 0)
		coll_free(o);
	return ret;
}

static size_t encoded_len(const struct coll *o)
{
	size_t n = 0;

	for (size_t i = 0; i < o->n; i++)
		n += (o->kind == RESP_KIND_ZSET ? 12 : 8) + o->it[i].klen +
		     o->it[i].vlen;
	return n;
}

/*
 * Write the new version: replaces exactly the one loaded (or is a new
 * key), keeps its expiry; an empty collection deletes the key, as Redis
 * does.  0, -ESTALE on a race (load again), -E2BIG over the bounds.
 */
static int coll_store(struct conn *c, const struct resp_arg *key,
		      const struct coll *o)
{
	struct gs_put_args a;
	uint8_t attr[64];
	size_t len = encoded_len(o), pos = 0;
	uint8_t *buf;
	long alen;
	int ret;

	if (!o->n) {
		if (!o->found)
			return 0;
		ret = gs_delete(resp_store(c), key->p, key->len);
		return ret == -ENOENT ? -ESTALE : ret;
	}
	if (o->n > RESP_COLL_MAX_ITEMS || len > RESP_COLL_MAX_BYTES)
		return -E2BIG;
	alen = resp_kind_attr(o->kind, attr, sizeof(attr));
	if (alen < 0)
		return (int)alen;
	buf = malloc(len ? len : 1);
	if (!buf)
		return -ENOMEM;
	for (size_t i = 0; i < o->n; i++) {
		const struct item *x = &o->it[i];
		uint32_t l = (uint32_t)x->klen;

		if (o->kind == RESP_KIND_ZSET) {
			memcpy(buf + pos, &x->score, 8);
			pos += 8;
		}
		memcpy(buf + pos, &l, 4);
		memcpy(buf + pos + 4, x->k, x->klen);
		pos += 4 + x->klen;
		if (o->kind == RESP_KIND_HASH) {
			l = (uint32_t)x->vlen;
			memcpy(buf + pos, &l, 4);
			memcpy(buf + pos + 4, x->v, x->vlen);
			pos += 4 + x->vlen;
		}
	}
	memset(&a, 0, sizeof(a));
	a.size = len;
	a.attr = attr;
	a.attr_len = (size_t)alen;
	a.exptime = o->exptime;
	a.mode = o->found ? GS_CAS : GS_ADD;
	a.cas_match = o->cas;
	ret = gs_put(resp_store(c), key->p, key->len, buf, len, &a);
	free(buf);
	if (ret == -EEXIST || ret == -ENOENT)
		ret = -ESTALE;
	return ret;
}

/* An error of a load or a store, as a reply.  True if there was one. */
static bool coll_err(struct conn *c, int ret, const char *what)
{
	switch (ret) {
	case 0:
		return false;
	case -EMEDIUMTYPE:
		resp_wrongtype(c);
		break;
	case -E2BIG:
	case -EFBIG:
		resp_errf(c,
			  "ERR goblind: a %s holds at most %u entries and %u "
			  "bytes encoded",
			  what, RESP_COLL_MAX_ITEMS, RESP_COLL_MAX_BYTES);
		break;
	case -ESTALE:
		resp_errf(c,
			  "ERR goblind: the %s kept changing under this "
			  "command: try again",
			  what);
		break;
	default:
		resp_errf(c, "ERR goblind: cannot change the %s: %s", what,
			  gs_strerror(ret));
		break;
	}
	return true;
}

static long find(const struct coll *o, const struct resp_arg *k)
{
	for (size_t i = 0; i < o->n; i++)
		if (o->it[i].klen == k->len &&
		    !memcmp(o->it[i].k, k->p, k->len))
			return (long)i;
	return -1;
}

static void remove_at(struct coll *o, size_t i)
{
	memmove(o->it + i, o->it + i + 1, (o->n - i - 1) * sizeof(*o->it));
	o->n--;
}

#define COLL_TRIES 16

/* ---- hashes ---- */

enum conn_run resp_cmd_hset(struct conn *c, struct resp_req *q)
{
	long long added = 0;
	int ret = -ESTALE;

	if (q->argc % 2) {
		resp_arity_err(c, "hset");
		return RUN_INPUT;
	}
	CNT(c->w, cmd_set);
	for (int t = 0; t < COLL_TRIES && ret == -ESTALE; t++) {
		struct coll o;

		added = 0;
		ret = coll_load(c, &q->argv[1], RESP_KIND_HASH, &o);
		for (unsigned i = 2; ret == 0 && i < q->argc; i += 2) {
			long at = find(&o, &q->argv[i]);
			struct item x = { q->argv[i].p, q->argv[i].len,
					  q->argv[i + 1].p, q->argv[i + 1].len,
					  0 };

			if (at >= 0) {
				o.it[at].v = x.v;
				o.it[at].vlen = x.vlen;
			} else {
				ret = add_item(&o, &x);
				added++;
			}
		}
		if (ret == 0)
			ret = coll_store(c, &q->argv[1], &o);
		coll_free(&o);
	}
	if (!coll_err(c, ret, "hash"))
		resp_int(c, added);
	return RUN_INPUT;
}

/*
 * HDEL and ZREM: take the named members (argv[2...]) out of the
 * collection of @kind at argv[1], by read-modify-write on its cas; the
 * count removed, or the error naming @what.
 */
static enum conn_run coll_remove(struct conn *c, struct resp_req *q, int kind,
				 const char *what)
{
	long long n = 0;
	int ret = -ESTALE;

	for (int t = 0; t < COLL_TRIES && ret == -ESTALE; t++) {
		struct coll o;

		n = 0;
		ret = coll_load(c, &q->argv[1], kind, &o);
		for (unsigned i = 2; ret == 0 && i < q->argc; i++) {
			long at = find(&o, &q->argv[i]);

			if (at >= 0) {
				remove_at(&o, (size_t)at);
				n++;
			}
		}
		if (ret == 0 && n)
			ret = coll_store(c, &q->argv[1], &o);
		coll_free(&o);
	}
	if (!coll_err(c, ret, what))
		resp_int(c, n);
	return RUN_INPUT;
}

enum conn_run resp_cmd_hdel(struct conn *c, struct resp_req *q)
{
	return coll_remove(c, q, RESP_KIND_HASH, "hash");
}

enum conn_run resp_cmd_hget(struct conn *c, struct resp_req *q)
{
	struct coll o;
	int ret = coll_load(c, &q->argv[1], RESP_KIND_HASH, &o);
	long at;

	CNT(c->w, cmd_get);
	if (coll_err(c, ret, "hash"))
		return RUN_INPUT;
	at = find(&o, &q->argv[2]);
	if (at < 0)
		resp_null(c);
	else
		resp_bulk(c, o.it[at].v, o.it[at].vlen);
	coll_free(&o);
	return RUN_INPUT;
}

enum conn_run resp_cmd_hgetall(struct conn *c, struct resp_req *q)
{
	struct coll o;
	int ret = coll_load(c, &q->argv[1], RESP_KIND_HASH, &o);

	CNT(c->w, cmd_get);
	if (coll_err(c, ret, "hash"))
		return RUN_INPUT;
	resp_map(c, o.n);
	for (size_t i = 0; i < o.n; i++) {
		resp_bulk(c, o.it[i].k, o.it[i].klen);
		resp_bulk(c, o.it[i].v, o.it[i].vlen);
	}
	coll_free(&o);
	return RUN_INPUT;
}

/* HLEN and ZCARD. */
enum conn_run resp_cmd_card(struct conn *c, struct resp_req *q)
{
	bool z = resp_is(&q->argv[0], "zcard");
	struct coll o;
	int ret = coll_load(c, &q->argv[1], z ? RESP_KIND_ZSET : RESP_KIND_HASH,
			    &o);

	if (coll_err(c, ret, z ? "sorted set" : "hash"))
		return RUN_INPUT;
	resp_int(c, (long long)o.n);
	coll_free(&o);
	return RUN_INPUT;
}

/* ---- sorted sets ---- */

static int zcmp(const struct item *a, const struct item *b)
{
	size_t n = a->klen < b->klen ? a->klen : b->klen;
	int r;

	if (a->score != b->score)
		return a->score < b->score ? -1 : 1;
	r = memcmp(a->k, b->k, n);
	if (r)
		return r;
	return a->klen < b->klen ? -1 : a->klen > b->klen;
}

static int zcmp_q(const void *a, const void *b)
{
	return zcmp(a, b);
}

struct zadd_opts {
	bool nx, xx, gt, lt, ch, incr;
	unsigned first; /* the first score's argument */
};

/* Redis's zaddGenericCommand() checks, in its order.  False: replied. */
static bool zadd_parse(struct conn *c, const struct resp_req *q,
		       struct zadd_opts *z)
{
	unsigned j = 2, pairs;

	memset(z, 0, sizeof(*z));
	for (; j < q->argc; j++) {
		const struct resp_arg *a = &q->argv[j];

		if (resp_is(a, "nx"))
			z->nx = true;
		else if (resp_is(a, "xx"))
			z->xx = true;
		else if (resp_is(a, "gt"))
			z->gt = true;
		else if (resp_is(a, "lt"))
			z->lt = true;
		else if (resp_is(a, "ch"))
			z->ch = true;
		else if (resp_is(a, "incr"))
			z->incr = true;
		else
			break;
	}
	z->first = j;
	pairs = q->argc - j;
	if (pairs % 2 || !pairs) {
		resp_syntax_err(c);
		return false;
	}
	if (z->nx && z->xx) {
		resp_err(c, "ERR XX and NX options at the same time are not "
			    "compatible");
		return false;
	}
	if ((z->gt && z->nx) || (z->lt && z->nx) || (z->gt && z->lt)) {
		resp_err(c, "ERR GT, LT, and/or NX options at the same time "
			    "are not compatible");
		return false;
	}
	if (z->incr && pairs > 2) {
		resp_err(c, "ERR INCR option supports a single "
			    "increment-element pair");
		return false;
	}
	for (unsigned i = j; i < q->argc; i += 2) {
		double d;

		if (!resp_double(q->argv[i].p, q->argv[i].len, &d)) {
			resp_err(c, "ERR value is not a valid float");
			return false;
		}
	}
	return true;
}

enum conn_run resp_cmd_zadd(struct conn *c, struct resp_req *q)
{
	struct zadd_opts z;
	long long n = 0;
	double last = 0;
	bool done = false; /* INCR: the member was changed */
	int ret = -ESTALE;

	if (!zadd_parse(c, q, &z))
		return RUN_INPUT;
	CNT(c->w, cmd_set);
	for (int t = 0; t < COLL_TRIES && ret == -ESTALE; t++) {
		bool changed = false;
		struct coll o;

		n = 0;
		done = false;
		ret = coll_load(c, &q->argv[1], RESP_KIND_ZSET, &o);
		for (unsigned i = z.first; ret == 0 && i < q->argc; i += 2) {
			const struct resp_arg *m = &q->argv[i + 1];
			long at = find(&o, m);
			double s;

			resp_double(q->argv[i].p, q->argv[i].len, &s);
			if (at < 0) {
				struct item x = { m->p, m->len, NULL, 0, s };

				if (z.xx)
					continue;
				ret = add_item(&o, &x);
				n++;
				changed = done = true;
				last = s;
				continue;
			}
			if (z.nx)
				continue;
			if (z.incr)
				s += o.it[at].score;
			if (isnan(s)) {
				ret = -EDOM;
				break;
			}
			if ((z.gt && s <= o.it[at].score) ||
			    (z.lt && s >= o.it[at].score))
				continue;
			last = s;
			done = true;
			if (s != o.it[at].score) {
				o.it[at].score = s;
				changed = true;
				if (z.ch)
					n++;
			}
		}
		if (ret == 0 && changed) {
			qsort(o.it, o.n, sizeof(*o.it), zcmp_q);
			ret = coll_store(c, &q->argv[1], &o);
		}
		coll_free(&o);
	}
	if (ret == -EDOM) {
		resp_err(c, "ERR resulting score is not a number (NaN)");
		return RUN_INPUT;
	}
	if (coll_err(c, ret, "sorted set"))
		return RUN_INPUT;
	if (z.incr) {
		if (done)
			resp_double_out(c, last);
		else
			resp_null(c);
	} else {
		resp_int(c, n);
	}
	return RUN_INPUT;
}

enum conn_run resp_cmd_zrem(struct conn *c, struct resp_req *q)
{
	return coll_remove(c, q, RESP_KIND_ZSET, "sorted set");
}

enum conn_run resp_cmd_zscore(struct conn *c, struct resp_req *q)
{
	struct coll o;
	int ret = coll_load(c, &q->argv[1], RESP_KIND_ZSET, &o);
	long at;

	CNT(c->w, cmd_get);
	if (coll_err(c, ret, "sorted set"))
		return RUN_INPUT;
	at = find(&o, &q->argv[2]);
	if (at < 0)
		resp_null(c);
	else
		resp_double_out(c, o.it[at].score);
	coll_free(&o);
	return RUN_INPUT;
}

/* ZRANGE key start stop [REV] [WITHSCORES]: by index only. */
enum conn_run resp_cmd_zrange(struct conn *c, struct resp_req *q)
{
	bool scores = false, rev = false;
	long long start, stop, len;
	struct coll o;
	int ret;

	for (unsigned j = 4; j < q->argc; j++) {
		if (resp_is(&q->argv[j], "withscores")) {
			scores = true;
		} else if (resp_is(&q->argv[j], "rev")) {
			rev = true;
		} else if (resp_is(&q->argv[j], "byscore") ||
			   resp_is(&q->argv[j], "bylex") ||
			   resp_is(&q->argv[j], "limit")) {
			resp_err(c, "ERR goblind: ZRANGE by index only (no "
				    "BYSCORE, BYLEX or LIMIT)");
			return RUN_INPUT;
		} else {
			resp_syntax_err(c);
			return RUN_INPUT;
		}
	}
	if (!resp_ll(q->argv[2].p, q->argv[2].len, &start) ||
	    !resp_ll(q->argv[3].p, q->argv[3].len, &stop)) {
		resp_not_int(c);
		return RUN_INPUT;
	}
	CNT(c->w, cmd_get);
	ret = coll_load(c, &q->argv[1], RESP_KIND_ZSET, &o);
	if (coll_err(c, ret, "sorted set"))
		return RUN_INPUT;
	/* Redis's zrangeGenericCommand(): negative counts from the end */
	len = (long long)o.n;
	if (start < 0)
		start = len + start;
	if (stop < 0)
		stop = len + stop;
	if (start < 0)
		start = 0;
	if (start > stop || start >= len) {
		resp_array(c, 0);
		coll_free(&o);
		return RUN_INPUT;
	}
	if (stop >= len)
		stop = len - 1;
	resp_array(c, (uint64_t)(stop - start + 1) *
			      (scores && resp_of(c)->proto == 2 ? 2 : 1));
	for (long long i = start; i <= stop; i++) {
		const struct item *x = &o.it[rev ? len - 1 - i : i];

		if (scores && resp_of(c)->proto == 3)
			resp_array(c, 2);
		resp_bulk(c, x->k, x->klen);
		if (scores)
			resp_double_out(c, x->score);
	}
	coll_free(&o);
	return RUN_INPUT;
}
