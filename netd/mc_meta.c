/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memcache meta commands: mg (with the stale/win marks of metatab.c),
 * md, ma and me.  ms is a storage command (mc_store.c), mn the loop's.
 */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "memcache.h"

/* ---- meta commands ---- */

/* mg N: create the empty placeholder; its creator wins the recache. */
static int vivify(struct conn *c, const struct mc_req *q)
{
	struct gs_put_args a;
	uint64_t cas;
	int ret;

	memset(&a, 0, sizeof(a));
	a.exptime = store_exptime(q->meta.vivify_ttl);
	a.mode = GS_ADD;
	ret = mc_put_buf(store_of(c), q->key, q->klen, &a, "", 0, &cas);
	if (ret == 0)
		metatab_set(c->w->gd->meta, q->key, q->klen, cas, GD_MARK_WON);
	return ret;
}

/* The W, Z and X flags of a hit, marking the win when one is given. */
static void mg_marks(struct conn *c, const struct mc_req *q,
		     const struct gs_meta *mt, bool vivified)
{
	struct metatab *t = c->w->gd->meta;
	unsigned marks = metatab_get(t, q->key, q->klen, mt->cas);
	bool stale = marks & GD_MARK_STALE;
	bool want = stale || (mc_meta_has(&q->meta, 'R') && mt->exptime &&
			      mc_ttl_left(mt) < q->meta.recache);

	bool win = vivified;

	if (!vivified && want && !(marks & GD_MARK_WON))
		win = !(metatab_set(t, q->key, q->klen, mt->cas, GD_MARK_WON) &
			GD_MARK_WON);
	if (!win && (marks & GD_MARK_WON))
		OUT(c, " Z");
	if (stale)
		OUT(c, " X");
	if (win)
		OUT(c, " W");
}

enum conn_run mc_cmd_mg(struct conn *c)
{
	struct mc_state *m = mc_of(c);
	const struct mc_req *q = &m->req;
	struct worker *w = c->w;
	const struct gs_meta *mt;
	struct gs_meta touched;
	bool vivified = false;
	uint64_t first = 0, len;
	int ret;

	CNT(w, cmd_get);
	ret = gd_reader_open(c->w, q->key, q->klen, 0, &m->r);
	if (ret == -ENOENT && mc_meta_has(&q->meta, 'N')) {
		ret = vivify(c, q);
		vivified = ret == 0;
		ret = gd_reader_open(c->w, q->key, q->klen, 0, &m->r);
	}
	if (ret < 0) {
		m->r = NULL;
		m->job = JOB_NONE;
		CNT(w, get_misses);
		if (!mc_meta_has(&q->meta, 'q')) {
			OUT(c, "EN");
			mc_meta_flags_out(c, q, NULL, 0);
			OUT(c, "\r\n");
		}
		return RUN_INPUT;
	}
	CNT(w, get_hits);
	mt = gs_reader_meta(m->r);
	/* after the open: the pinned version is served even if T expires it */
	if (mc_meta_has(&q->meta, 'T')) {
		CNT(w, cmd_touch);
		if (gs_touch(store_of(c), q->key, q->klen,
			     store_exptime(q->meta.ttl)) == 0) {
			CNT(w, touch_hits);
			/* t reports the TTL just set, as memcached does */
			/* not *mt: a reader holds only attr_len bytes of
			 * attr (goblin.h), and none of it is needed here */
			memcpy(&touched, mt, offsetof(struct gs_meta, attr));
			touched.attr_len = 0;
			touched.exptime = store_exptime(q->meta.ttl);
			mt = &touched;
		} else {
			CNT(w, touch_misses);
		}
	}
	len = mt->size;
	if (mc_meta_has(&q->meta, 'G') && mc_meta_has(&q->meta, 'v')) {
		first = q->meta.range_first < mt->size ? q->meta.range_first :
							 mt->size;
		len = mt->size - first;
		if (q->meta.range_last != UINT64_MAX &&
		    q->meta.range_last - first + 1 < len)
			len = q->meta.range_last - first + 1;
		gs_reader_range(m->r, first, len);
	}
	if (mc_meta_has(&q->meta, 'v'))
		conn_printf(c, "VA %" PRIu64, len);
	else
		OUT(c, "HD");
	mc_meta_flags_out(c, q, mt, 0);
	mg_marks(c, q, mt, vivified);
	OUT(c, "\r\n");
	if (!mc_meta_has(&q->meta, 'v')) {
		gd_reader_close(w, m->r);
		m->r = NULL;
		m->job = JOB_NONE;
		return RUN_INPUT;
	}
	m->job = JOB_GET; /* one value, then done: no key list */
	m->kpos = m->kend = NULL;
	m->mg = true;
	return RUN_OUTPUT;
}

void mc_cmd_md(struct conn *c, const struct mc_req *q)
{
	struct gs_meta *mt = malloc(sizeof(*mt));
	const char *code = "HD";
	int ret;

	if (!mt) {
		OUT(c, "SERVER_ERROR out of memory\r\n");
		return;
	}
	ret = gs_stat(store_of(c), q->key, q->klen, mt);
	if (ret < 0) {
		code = "NF";
	} else if (mc_meta_has(&q->meta, 'C') && q->meta.cas != mt->cas) {
		code = "EX";
	} else if (mc_meta_has(&q->meta, 'I')) {
		metatab_clear(c->w->gd->meta, q->key, q->klen);
		metatab_set(c->w->gd->meta, q->key, q->klen, mt->cas,
			    GD_MARK_STALE);
		if (mc_meta_has(&q->meta, 'T'))
			gs_touch(store_of(c), q->key, q->klen,
				 store_exptime(q->meta.ttl));
	} else if (gs_delete(store_of(c), q->key, q->klen) < 0) {
		code = "NF";
	} else {
		metatab_clear(c->w->gd->meta, q->key, q->klen);
	}
	if (code[0] == 'H')
		CNT(c->w, delete_hits);
	else if (code[0] == 'N')
		CNT(c->w, delete_misses);
	free(mt);
	if (code[0] == 'H' && mc_meta_has(&q->meta, 'q'))
		return;
	conn_out(c, code, 2);
	mc_meta_flags_out(c, q, NULL, 0);
	OUT(c, "\r\n");
}

/* ma N on a miss: create the counter with J; -EEXIST when raced. */
static int ma_create(struct conn *c, const struct mc_req *q, uint64_t *cas)
{
	struct gs_put_args a;
	char buf[32];
	int n = snprintf(buf, sizeof(buf), "%" PRIu64, q->meta.initial);

	memset(&a, 0, sizeof(a));
	a.size = (uint64_t)n;
	a.exptime = store_exptime(q->meta.vivify_ttl);
	a.mode = GS_ADD;
	return mc_put_buf(store_of(c), q->key, q->klen, &a, buf, (size_t)n,
			  cas);
}

void mc_cmd_ma(struct conn *c, const struct mc_req *q)
{
	bool decr = q->meta.mode == 1;
	uint64_t v = q->meta.initial, cas = 0;
	struct gs_meta *mt;
	char num[32];
	int ret, n;

	ret = mc_arith(c, q, decr, q->meta.delta, &v, &cas);
	if (ret == -ENOENT && mc_meta_has(&q->meta, 'N')) {
		v = q->meta.initial;
		ret = ma_create(c, q, &cas);
		if (ret == -EEXIST)
			ret = mc_arith(c, q, decr, q->meta.delta, &v, &cas);
	}
	switch (ret) {
	case 0:
		break;
	case -ENOENT:
		mc_count_arith(c->w, decr, false);
		OUT(c, "NF");
		mc_meta_flags_out(c, q, NULL, 0);
		OUT(c, "\r\n");
		return;
	case -EINVAL:
		OUT(c, "CLIENT_ERROR cannot increment or decrement "
		       "non-numeric value\r\n");
		return;
	case -ESTALE:
		OUT(c, "EX");
		mc_meta_flags_out(c, q, NULL, 0);
		OUT(c, "\r\n");
		return;
	default:
		OUT(c, "SERVER_ERROR cannot store the value\r\n");
		return;
	}
	mc_count_arith(c->w, decr, true);
	n = snprintf(num, sizeof(num), "%" PRIu64, v);
	mt = malloc(sizeof(*mt));
	if (mt && gs_stat(store_of(c), q->key, q->klen, mt) < 0) {
		free(mt);
		mt = NULL;
	}
	if (mt)
		mt->cas = cas; /* ours, even if replaced since */
	if (mc_meta_has(&q->meta, 'v'))
		conn_printf(c, "VA %d", n);
	else if (mc_meta_has(&q->meta, 'q'))
		goto out;
	else
		OUT(c, "HD");
	mc_meta_flags_out(c, q, mt, cas);
	OUT(c, "\r\n");
	if (mc_meta_has(&q->meta, 'v')) {
		conn_out(c, num, (size_t)n);
		OUT(c, "\r\n");
	}
out:
	free(mt);
}

void mc_cmd_me(struct conn *c, const struct mc_req *q)
{
	struct gs_meta *mt = malloc(sizeof(*mt));
	int64_t la;

	if (!mt || gs_stat(store_of(c), q->key, q->klen, mt) < 0) {
		free(mt);
		OUT(c, "EN\r\n");
		return;
	}
	la = now_sec() - mt->mtime_ns / 1000000000ll;
	OUT(c, "ME ");
	mc_out_key(c, q);
	conn_printf(c,
		    " exp=%" PRId64 " la=%" PRId64 " cas=%" PRIu64
		    " fetch=no cls=1 size=%" PRIu64 "\r\n",
		    mc_ttl_left(mt), la > 0 ? la : 0, mt->cas, mt->size);
	free(mt);
}
