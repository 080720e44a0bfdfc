/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RESP strings: GET SET MGET MSET DEL UNLINK EXISTS STRLEN GETRANGE
 * SETRANGE.  A value goes out as "$N\r\n", the RAM head at once and the
 * tail as its reads complete (small chunks copied, big ones zero-copy);
 * a SET whose value is a big bulk feeds a store writer as the bytes
 * arrive, its options (which follow the value) applied before the
 * commit.  A key is the store's key as memcache, HTTP and the mount see
 * it; a value set here has memcache flags 0 (see goblind(8), RESP).
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

/* The store keeps whole seconds: an expiry in ms is rounded up. */
static int64_t ms_to_exptime(int64_t ms)
{
	return ms <= 0 ? 1 : (ms + 999) / 1000;
}

/* Keep @len bytes in s->buf.  0 or -ENOMEM. */
static int keep(struct resp_state *s, const void *p, size_t len)
{
	if (len > s->buf_cap) {
		char *nb = realloc(s->buf, len ? len : 1);

		if (!nb)
			return -ENOMEM;
		s->buf = nb;
		s->buf_cap = len;
	}
	memcpy(s->buf, p, len);
	s->buf_len = len;
	return 0;
}

static void store_err(struct conn *c, int ret)
{
	switch (ret) {
	case -EFBIG:
		resp_err(c, "ERR goblind: object too large for the store");
		break;
	case -ENOSPC:
	case -ENOMEM:
		resp_err(c, "OOM goblind: out of space storing the value");
		break;
	case -EINVAL:
		resp_errf(c, "ERR goblind: a key of 1 to %u bytes", GS_KEY_MAX);
		break;
	default:
		resp_errf(c, "ERR goblind: cannot store the value: %s",
			  gs_strerror(ret));
		break;
	}
}

static bool key_ok(struct conn *c, const struct resp_arg *k)
{
	if (k->len && k->len <= GS_KEY_MAX)
		return true;
	resp_errf(c, "ERR goblind: a key of 1 to %u bytes", GS_KEY_MAX);
	return false;
}

/* ---- sending values ---- */

/* Send the rest of s->r and its "\r\n" (conn_send_value). */
static enum conn_run stream_value(struct conn *c)
{
	return conn_send_value(c, &resp_of(c)->r, "\r\n", "resp");
}

enum conn_run resp_value_run(struct conn *c)
{
	enum conn_run st = stream_value(c);

	if (st == RUN_INPUT)
		resp_of(c)->job = RJ_NONE;
	return st;
}

/* Start sending the value of the open reader s->r (its header now). */
static void value_start(struct conn *c, enum resp_job job)
{
	struct resp_state *s = resp_of(c);

	conn_printf(c, "$%" PRIu64 "\r\n", gs_reader_meta(s->r)->size);
	s->job = job;
}

enum conn_run resp_cmd_get(struct conn *c, struct resp_req *q)
{
	struct resp_state *s = resp_of(c);

	CNT(c->w, cmd_get);
	if (gd_reader_open(c->w, q->argv[1].p, q->argv[1].len, 0, &s->r) < 0) {
		s->r = NULL;
		CNT(c->w, get_misses);
		resp_null(c);
		return RUN_INPUT;
	}
	if (resp_kind(c, gs_reader_meta(s->r)) != RESP_KIND_STRING) {
		gd_reader_close(c->w, s->r);
		s->r = NULL;
		resp_wrongtype(c);
		return RUN_INPUT;
	}
	CNT(c->w, get_hits);
	value_start(c, RJ_VALUE);
	return RUN_INPUT;
}

/* ---- MGET: the keys kept as "<u32 length><bytes>" in s->buf ---- */

enum conn_run resp_cmd_mget(struct conn *c, struct resp_req *q)
{
	struct resp_state *s = resp_of(c);
	size_t need = 0, o = 0;

	for (unsigned i = 1; i < q->argc; i++)
		need += 4 + q->argv[i].len;
	if (need > s->buf_cap) {
		char *nb = realloc(s->buf, need);

		if (!nb) {
			resp_err(c, "OOM goblind: out of memory");
			return RUN_INPUT;
		}
		s->buf = nb;
		s->buf_cap = need;
	}
	for (unsigned i = 1; i < q->argc; i++) {
		uint32_t l = (uint32_t)q->argv[i].len;

		memcpy(s->buf + o, &l, 4);
		memcpy(s->buf + o + 4, q->argv[i].p, l);
		o += 4 + l;
	}
	s->buf_len = need;
	s->kpos = 0;
	s->kleft = q->argc - 1;
	resp_array(c, s->kleft);
	s->job = RJ_MGET;
	return RUN_INPUT;
}

enum conn_run resp_mget_run(struct conn *c)
{
	struct resp_state *s = resp_of(c);

	for (;;) {
		uint32_t l;

		if (s->r) {
			enum conn_run st = stream_value(c);

			if (st != RUN_INPUT)
				return st;
		}
		if (!s->kleft)
			break;
		if (c->wend - c->wstart > GD_WBUF_HIGH)
			return RUN_OUTPUT;
		memcpy(&l, s->buf + s->kpos, 4);
		CNT(c->w, cmd_get);
		if (gd_reader_open(c->w, s->buf + s->kpos + 4, l, 0, &s->r) <
		    0) {
			s->r = NULL;
			CNT(c->w, get_misses);
			resp_null(c);
		} else if (resp_kind(c, gs_reader_meta(s->r)) !=
			   RESP_KIND_STRING) { /* Redis: a null */
			gd_reader_close(c->w, s->r);
			s->r = NULL;
			resp_null(c);
		} else {
			CNT(c->w, get_hits);
			value_start(c, RJ_MGET);
		}
		s->kpos += 4 + l;
		s->kleft--;
	}
	s->job = RJ_NONE;
	if (s->buf_cap > 65536) { /* a long MGET's buffer goes back */
		free(s->buf);
		s->buf = NULL;
		s->buf_cap = s->buf_len = 0;
	}
	return RUN_INPUT;
}

/* ---- SET ---- */

struct set_opts {
	bool nx, xx, get, keepttl;
	bool has_exp;
	int64_t exptime; /* the store's: absolute seconds */
};

/*
 * SET's options as Redis's parseExtendedStringArgumentsOrReply() takes
 * them (conflicts are a syntax error), then the expiry as
 * getExpireMillisecondsOrReply() checks it.  0, or -1 with the reply
 * queued.
 */
static int set_opts_parse(struct conn *c, const struct resp_arg *a, unsigned n,
			  struct set_opts *o)
{
	enum { NONE, EX, PX, EXAT, PXAT } unit = NONE;
	const struct resp_arg *val = NULL;
	long long v;
	int64_t ms;

	memset(o, 0, sizeof(*o));
	for (unsigned j = 0; j < n; j++) {
		bool next = j + 1 < n;

		if (resp_is(&a[j], "nx") && !o->xx) {
			o->nx = true;
		} else if (resp_is(&a[j], "xx") && !o->nx) {
			o->xx = true;
		} else if (resp_is(&a[j], "get")) {
			o->get = true;
		} else if (resp_is(&a[j], "keepttl") && unit == NONE) {
			o->keepttl = true;
		} else if (next && !o->keepttl &&
			   ((resp_is(&a[j], "ex") &&
			     (unit == NONE || unit == EX)) ||
			    (resp_is(&a[j], "px") &&
			     (unit == NONE || unit == PX)) ||
			    (resp_is(&a[j], "exat") &&
			     (unit == NONE || unit == EXAT)) ||
			    (resp_is(&a[j], "pxat") &&
			     (unit == NONE || unit == PXAT)))) {
			unit = resp_is(&a[j], "ex")   ? EX :
			       resp_is(&a[j], "px")   ? PX :
			       resp_is(&a[j], "exat") ? EXAT :
							PXAT;
			val = &a[++j];
		} else {
			resp_syntax_err(c);
			return -1;
		}
	}
	if (unit == NONE)
		return 0;
	if (!resp_ll(val->p, val->len, &v)) {
		resp_not_int(c);
		return -1;
	}
	if (v <= 0 || ((unit == EX || unit == EXAT) && v > LLONG_MAX / 1000))
		goto invalid;
	ms = (unit == EX || unit == EXAT) ? (int64_t)v * 1000 : (int64_t)v;
	if (unit == EX || unit == PX) {
		if (ms > LLONG_MAX - now_ms())
			goto invalid;
		ms += now_ms();
	}
	o->has_exp = true;
	/*
	 * EX and EXAT in whole seconds are memcache's exptime (now + s, or
	 * s): the store's expiry is in whole seconds; PX and PXAT rounded up
	 */
	o->exptime = unit == EX || unit == EXAT ? ms / 1000 : ms_to_exptime(ms);
	return 0;
invalid:
	resp_err(c, "ERR invalid expire time in 'set' command");
	return -1;
}

/* The put's mode and expiry; KEEPTTL keeps the live one's. */
static void set_args(struct conn *c, const char *key, size_t klen,
		     const struct set_opts *o, struct gs_put_args *a)
{
	struct gs_meta *mt = &((struct resp_worker *)conn_pstate(c))->meta;

	memset(a, 0, sizeof(*a));
	a->mode = o->nx ? GS_ADD : o->xx ? GS_REPLACE : GS_SET;
	a->exptime = o->has_exp ? o->exptime : 0;
	if (o->keepttl && gs_stat(resp_store(c), key, klen, mt) == 0)
		a->exptime = mt->exptime;
}

/*
 * SET's reply once the put is done: +OK or a null, the old value with
 * GET (pinned in @old before the put).  0: the put's result is replied.
 */
static void set_reply(struct conn *c, const struct set_opts *o, int ret,
		      struct gs_reader *old)
{
	struct resp_state *s = resp_of(c);

	if (ret < 0 && ret != -EEXIST && ret != -ENOENT) {
		if (old)
			gd_reader_close(c->w, old);
		store_err(c, ret);
		return;
	}
	if (o->get) {
		if (!old) {
			resp_null(c);
			return;
		}
		s->r = old;
		value_start(c, RJ_VALUE);
		return;
	}
	if (ret == 0)
		resp_ok(c);
	else
		resp_null(c);
}

/* SET ... GET: the old version pinned; -EMEDIUMTYPE for no string. */
static int open_old(struct conn *c, const char *key, size_t klen,
		    const struct set_opts *o, struct gs_reader **r)
{
	*r = NULL;
	if (!o->get || gd_reader_open(c->w, key, klen, 0, r) < 0) {
		*r = NULL;
		return 0;
	}
	if (resp_kind(c, gs_reader_meta(*r)) != RESP_KIND_STRING) {
		gd_reader_close(c->w, *r);
		*r = NULL;
		return -EMEDIUMTYPE;
	}
	return 0;
}

enum conn_run resp_cmd_set(struct conn *c, struct resp_req *q)
{
	const struct resp_arg *k = &q->argv[1], *v = &q->argv[2];
	struct gs_reader *old;
	struct gs_put_args a;
	struct set_opts o;
	int ret;

	if (set_opts_parse(c, q->argv + 3, q->argc - 3, &o) < 0 ||
	    !key_ok(c, k))
		return RUN_INPUT;
	CNT(c->w, cmd_set);
	if (open_old(c, k->p, k->len, &o, &old) < 0) {
		resp_wrongtype(c);
		return RUN_INPUT;
	}
	set_args(c, k->p, k->len, &o, &a);
	a.size = v->len;
	ret = gs_put(resp_store(c), k->p, k->len, v->p, v->len, &a);
	set_reply(c, &o, ret, old);
	return RUN_INPUT;
}

/* ---- SET of a big value: streamed into a writer ---- */

enum conn_run resp_set_big_start(struct conn *c, struct resp_req *q)
{
	struct resp_state *s = resp_of(c);
	struct gs_put_args a;

	s->job = RJ_SETBIG;
	s->left = q->big_len + 2;
	s->tail = q->nargs - 3;
	s->bad_crlf = false;
	s->err = 0;
	s->big_len = q->big_len;
	if (!q->argv[1].len || q->argv[1].len > GS_KEY_MAX)
		s->err = -EINVAL;
	else if (keep(s, q->argv[1].p, q->argv[1].len) < 0)
		s->err = -ENOMEM;
	if (s->err)
		return RUN_INPUT;
	CNT(c->w, cmd_set);
	memset(&a, 0, sizeof(a));
	a.size = q->big_len;
	s->err = gs_put_begin(resp_store(c), s->buf, s->buf_len, &a, &s->wr);
	if (s->err)
		s->wr = NULL;
	return RUN_INPUT;
}

static void big_feed(struct resp_state *s, const uint8_t *p, size_t n)
{
	while (n) {
		if (s->left > 2) {
			size_t d = s->left - 2 < n ? (size_t)(s->left - 2) : n;

			if (s->wr && !s->err)
				s->err = gs_put_write(s->wr, p, d);
			s->left -= d;
			p += d;
			n -= d;
			continue;
		}
		if (*p != "\r\n"[2 - s->left])
			s->bad_crlf = true;
		s->left--;
		p++;
		n--;
	}
}

void resp_str_release(struct resp_state *s)
{
	if (s->wr)
		gs_put_abort(s->wr);
	s->wr = NULL;
}

/* The value and its options are in: commit and reply. */
static void big_finish(struct conn *c, struct resp_req *q)
{
	struct resp_state *s = resp_of(c);
	struct gs_reader *old = NULL;
	struct gs_put_args a;
	struct set_opts o;
	int ret = s->err;

	s->job = RJ_NONE;
	if (set_opts_parse(c, q->argv, q->argc, &o) < 0) {
		resp_str_release(s);
		return;
	}
	if (ret < 0) {
		resp_str_release(s);
		store_err(c, ret);
		return;
	}
	if (open_old(c, s->buf, s->buf_len, &o, &old) < 0) {
		resp_str_release(s);
		resp_wrongtype(c);
		return;
	}
	set_args(c, s->buf, s->buf_len, &o, &a);
	ret = gs_put_amend(s->wr, a.mode, 0, a.exptime);
	if (ret == 0) {
		ret = gs_put_commit(s->wr, NULL);
		s->wr = NULL;
	} else {
		resp_str_release(s);
	}
	set_reply(c, &o, ret, old);
}

enum conn_run resp_set_big_run(struct conn *c)
{
	struct resp_state *s = resp_of(c);
	struct resp_req *q = resp_req_of(c);
	struct resp_limits lim = {
		.whole_max = RESP_WHOLE_MAX,
		.big_min = RESP_BIG_MIN,
		.bulk_max = RESP_BIG_MIN,
		.mbulk_max = RESP_MBULK_MAX,
	};
	enum resp_parse_result pr;
	size_t used = 0;

	while (s->job == RJ_SETBIG && s->left) {
		const uint8_t *p;
		ssize_t got = conn_take(c, s->left, &p);

		if (got == 0)
			return RUN_WAIT;
		if (got < 0)
			return RUN_CLOSE; /* release() aborts the put */
		big_feed(s, p, (size_t)got);
	}
	if (s->bad_crlf) {
		resp_str_release(s);
		resp_err(c, "ERR Protocol error: expected '\\r\\n' after the "
			    "bytes of a bulk");
		return RUN_CLOSE;
	}
	s->job = RJ_SETTAIL;
	q->argc = 0;
	pr = resp_parse_bulks(c->rbuf + c->rstart, c->rend - c->rstart, s->tail,
			      &lim, q, &used);
	switch (pr) {
	case RESP_PARSE_OK:
		c->rstart += used;
		big_finish(c, q);
		return RUN_INPUT;
	case RESP_PARSE_MORE:
		return RUN_INPUT;
	case RESP_PARSE_ERROR:
		resp_str_release(s);
		resp_errf(c, "ERR Protocol error: %s", q->err);
		return RUN_CLOSE;
	default: /* SET's options are short words and numbers */
		resp_str_release(s);
		resp_syntax_err(c);
		return RUN_CLOSE;
	}
}

/* ---- MSET DEL UNLINK EXISTS STRLEN ---- */

enum conn_run resp_cmd_mset(struct conn *c, struct resp_req *q)
{
	struct gs_put_args a;

	if (q->argc % 2 == 0) {
		resp_arity_err(c, "mset");
		return RUN_INPUT;
	}
	for (unsigned i = 1; i < q->argc; i += 2)
		if (!key_ok(c, &q->argv[i]))
			return RUN_INPUT;
	memset(&a, 0, sizeof(a));
	for (unsigned i = 1; i < q->argc; i += 2) {
		int ret;

		CNT(c->w, cmd_set);
		a.size = q->argv[i + 1].len;
		ret = gs_put(resp_store(c), q->argv[i].p, q->argv[i].len,
			     q->argv[i + 1].p, q->argv[i + 1].len, &a);
		if (ret < 0) {
			store_err(c, ret);
			return RUN_INPUT;
		}
	}
	resp_ok(c);
	return RUN_INPUT;
}

enum conn_run resp_cmd_del(struct conn *c, struct resp_req *q)
{
	long long n = 0;

	for (unsigned i = 1; i < q->argc; i++) {
		if (gs_delete(resp_store(c), q->argv[i].p, q->argv[i].len) ==
		    0) {
			CNT(c->w, delete_hits);
			n++;
		} else {
			CNT(c->w, delete_misses);
		}
	}
	resp_int(c, n);
	return RUN_INPUT;
}

enum conn_run resp_cmd_exists(struct conn *c, struct resp_req *q)
{
	struct gs_meta *mt = &((struct resp_worker *)conn_pstate(c))->meta;
	long long n = 0;

	for (unsigned i = 1; i < q->argc; i++)
		if (gs_stat(resp_store(c), q->argv[i].p, q->argv[i].len, mt) ==
		    0)
			n++;
	resp_int(c, n);
	return RUN_INPUT;
}

enum conn_run resp_cmd_strlen(struct conn *c, struct resp_req *q)
{
	struct gs_meta *mt = &((struct resp_worker *)conn_pstate(c))->meta;

	if (gs_stat(resp_store(c), q->argv[1].p, q->argv[1].len, mt) < 0)
		resp_int(c, 0);
	else if (resp_kind(c, mt) != RESP_KIND_STRING)
		resp_wrongtype(c);
	else
		resp_int(c, (long long)mt->size);
	return RUN_INPUT;
}

/* ---- GETRANGE SETRANGE ---- */

enum conn_run resp_cmd_getrange(struct conn *c, struct resp_req *q)
{
	struct resp_state *s = resp_of(c);
	long long start, end, len;

	if (!resp_ll(q->argv[2].p, q->argv[2].len, &start) ||
	    !resp_ll(q->argv[3].p, q->argv[3].len, &end)) {
		resp_not_int(c);
		return RUN_INPUT;
	}
	CNT(c->w, cmd_get);
	if (gd_reader_open(c->w, q->argv[1].p, q->argv[1].len, 0, &s->r) < 0) {
		s->r = NULL;
		ROUT(c, "$0\r\n\r\n");
		return RUN_INPUT;
	}
	if (resp_kind(c, gs_reader_meta(s->r)) != RESP_KIND_STRING) {
		gd_reader_close(c->w, s->r);
		s->r = NULL;
		resp_wrongtype(c);
		return RUN_INPUT;
	}
	/* Redis's getrangeCommand(): negative counts from the end */
	len = (long long)gs_reader_meta(s->r)->size;
	if (start < 0 && end < 0 && start > end)
		goto empty;
	if (start < 0)
		start = len + start;
	if (end < 0)
		end = len + end;
	if (start < 0)
		start = 0;
	if (end < 0)
		end = 0;
	if (end >= len)
		end = len - 1;
	if (start > end || len == 0)
		goto empty;
	if (gs_reader_range(s->r, (uint64_t)start,
			    (uint64_t)(end - start + 1)) < 0)
		goto empty;
	conn_printf(c, "$%lld\r\n", end - start + 1);
	s->job = RJ_VALUE;
	return RUN_INPUT;
empty:
	gd_reader_close(c->w, s->r);
	s->r = NULL;
	ROUT(c, "$0\r\n\r\n");
	return RUN_INPUT;
}

/* Copy [off, off+len) of blocking reader @r into @wr through @buf. */
static int copy_range(struct gs_writer *wr, struct gs_reader *r, uint8_t *buf,
		      uint64_t off, uint64_t len)
{
	while (len) {
		size_t want = len < GD_SCRATCH ? (size_t)len : GD_SCRATCH;
		ssize_t got = gs_read(r, buf, want, off);
		int ret;

		if (got <= 0)
			return got < 0 ? (int)got : -EIO;
		if ((ret = gs_put_write(wr, buf, (size_t)got)) < 0)
			return ret;
		off += (uint64_t)got;
		len -= (uint64_t)got;
	}
	return 0;
}

/*
 * The store has no writes in place: SETRANGE writes a new version, the
 * old bytes copied around the new ones with blocking reads (as memcache's
 * append), and commits it only if the key still holds the version it
 * read (GS_CAS), trying again otherwise.
 */
static int setrange_put(struct conn *c, const struct resp_arg *k, uint64_t off,
			const struct resp_arg *v, uint64_t *size)
{
	struct gs_store *st = resp_store(c);
	uint8_t *buf = c->w->scratch;
	int ret = -ESTALE;

	for (int i = 0; i < 16 && ret == -ESTALE; i++) {
		struct gs_reader *old = NULL;
		struct gs_writer *wr = NULL;
		struct gs_put_args a;
		uint64_t osize = 0;

		memset(&a, 0, sizeof(a));
		a.mode = GS_ADD;
		if (gs_get_open(st, k->p, k->len, 0, &old) == 0) {
			const struct gs_meta *mt = gs_reader_meta(old);

			if (resp_kind(c, mt) != RESP_KIND_STRING) {
				gs_reader_close(old);
				return -EMEDIUMTYPE;
			}
			osize = mt->size;
			a.mode = GS_CAS;
			a.cas_match = mt->cas;
			a.flags = mt->flags;
			a.exptime = mt->exptime;
		} else {
			old = NULL;
		}
		a.size = off + v->len > osize ? off + v->len : osize;
		*size = a.size;
		if (!v->len) { /* nothing to write: Redis creates nothing */
			*size = osize;
			if (old)
				gs_reader_close(old);
			return 0;
		}
		if (a.size > c->w->gd->set.max_item) {
			if (old)
				gs_reader_close(old);
			return -E2BIG;
		}
		ret = gs_put_begin(st, k->p, k->len, &a, &wr);
		if (ret < 0)
			wr = NULL;
		if (ret == 0 && old)
			ret = copy_range(wr, old, buf, 0,
					 off < osize ? off : osize);
		for (uint64_t z = osize; ret == 0 && z < off;) {
			size_t n = off - z < GD_SCRATCH ? (size_t)(off - z) :
							  GD_SCRATCH;

			memset(buf, 0, n);
			ret = gs_put_write(wr, buf, n);
			z += n;
		}
		if (ret == 0)
			ret = gs_put_write(wr, v->p, v->len);
		if (ret == 0 && old && off + v->len < osize)
			ret = copy_range(wr, old, buf, off + v->len,
					 osize - off - v->len);
		if (old)
			gs_reader_close(old);
		if (ret < 0) {
			if (wr)
				gs_put_abort(wr);
			return ret;
		}
		ret = gs_put_commit(wr, NULL);
		if (ret == -EEXIST || ret == -ENOENT)
			ret = -ESTALE; /* created or deleted meanwhile */
		if (ret == -ESTALE)
			CNT(c->w, rmw_retries);
	}
	return ret;
}

enum conn_run resp_cmd_setrange(struct conn *c, struct resp_req *q)
{
	long long off;
	uint64_t size = 0;
	int ret;

	if (!resp_ll(q->argv[2].p, q->argv[2].len, &off)) {
		resp_not_int(c);
		return RUN_INPUT;
	}
	if (off < 0) {
		resp_err(c, "ERR offset is out of range");
		return RUN_INPUT;
	}
	if (!key_ok(c, &q->argv[1]))
		return RUN_INPUT;
	CNT(c->w, cmd_set);
	ret = setrange_put(c, &q->argv[1], (uint64_t)off, &q->argv[3], &size);
	if (ret == -EMEDIUMTYPE)
		resp_wrongtype(c);
	else if (ret == -E2BIG)
		resp_errf(c,
			  "ERR string exceeds maximum allowed size "
			  "(goblind's --max-item, %" PRIu64 " bytes)",
			  c->w->gd->set.max_item);
	else if (ret < 0)
		store_err(c, ret);
	else
		resp_int(c, (long long)size);
	return RUN_INPUT;
}
