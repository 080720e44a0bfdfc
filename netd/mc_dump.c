/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lru_crawler metadump: memcached's listing of every live key, streamed.
 * A thread of the listing's own walks the store into pages and the worker
 * sends them, so a listing of any length costs a connection two pages,
 * and a client that reads slowly slows the walk, not the worker.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memcache.h"

#define DUMP_PAGE     (64u << 10)
/* the longest line: "key=" and every byte of the longest key as %XX */
#define DUMP_LINE_MAX (4 + 3 * GS_KEY_MAX + 128)

_Static_assert(DUMP_LINE_MAX < DUMP_PAGE, "a line fits a page");

/*
 * Listings at once, in the process: each holds a thread and two pages.
 * memcached runs one crawler at a time and answers the others BUSY; a
 * few at once serve a few admins without letting a client's connections
 * each hold a thread.
 */
#define DUMPS_MAX 8
static atomic_uint dumps_running;

/*
 * Two pages: the walker fills one while the worker sends the other.  The
 * walker runs gs_iterate(), whose callback may wait (the store is
 * unlocked between calls), and waits there for the worker to take the
 * page it filled; the worker takes a page only when its output is below
 * GD_WBUF_HIGH, and waits for the next with RUN_DISK, woken by the
 * walker's conn_post().
 */
struct mc_dump {
	struct conn *c;
	struct gs_store *s;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond; /* the worker took the ready page, or cancel */
	char *prefix;	     /* a copy: the line's buffer moves on */
	size_t plen;
	/* protected by lock */
	char *ready;  /* a page for the worker ... */
	size_t rlen;  /* ... of rlen bytes, 0: none */
	bool done;    /* the walk ended: err says how */
	int err;      /* 0, or gs_iterate's -errno */
	bool waiting; /* the worker waits (RUN_DISK): post when ready */
	bool posted;  /* a post may be in the worker's mailbox */
	bool cancel;  /* the connection is closing: stop the walk */
	/* the walker's own */
	char *fill;
	size_t flen;
	char pages[2][DUMP_PAGE];
};

/*
 * Wake the worker if it waits for us.  A connection may be in a mailbox
 * once only: the worker takes a post back (mc_dump_run) before it waits
 * again, so there is never a second one.  Called with d->lock held.
 */
static void dump_post(struct mc_dump *d)
{
	if (!d->waiting)
		return;
	d->waiting = false;
	d->posted = true;
	conn_post(d->c);
}

/* Called with d->lock held, on the worker: no post of ours is left in
 * its mailbox after this (mail_run took it, or we take it back). */
static void dump_unpost(struct mc_dump *d)
{
	if (d->posted)
		conn_unpost(d->c);
	d->posted = false;
}

/* Hand the filled page to the worker (waiting for it to take the last
 * one).  False when the listing was cancelled. */
static bool dump_hand(struct mc_dump *d)
{
	char *p;
	bool ok;

	pthread_mutex_lock(&d->lock);
	while (d->rlen && !d->cancel)
		pthread_cond_wait(&d->cond, &d->lock);
	ok = !d->cancel;
	if (ok && d->flen) {
		p = d->ready;
		d->ready = d->fill;
		d->rlen = d->flen;
		d->fill = p;
		d->flen = 0;
		dump_post(d);
	}
	pthread_mutex_unlock(&d->lock);
	return ok;
}

/*
 * One metadump line per key, memcached's format: the key URI-encoded
 * (unreserved bytes as they are, others %XX) whole, however long (a key
 * stored over HTTP may be up to GS_KEY_MAX bytes), exp and la in unix
 * seconds (exp -1: never; la: the write time, access times are not
 * tracked).
 */
static int dump_one(void *arg, const void *key, size_t klen,
		    const struct gs_meta *m)
{
	static const char unreserved[] = "abcdefghijklmnopqrstuvwxyz"
					 "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
					 "0123456789-._~";
	static const char hex[] = "0123456789ABCDEF";
	struct mc_dump *d = arg;
	const unsigned char *k = key;
	char *o;

	if (m->exptime && m->exptime <= now_sec())
		return 0;
	if (DUMP_PAGE - d->flen < DUMP_LINE_MAX && !dump_hand(d))
		return 1;
	o = d->fill + d->flen;
	memcpy(o, "key=", 4);
	o += 4;
	for (size_t i = 0; i < klen && i < GS_KEY_MAX; i++) {
		if (k[i] && strchr(unreserved, k[i])) {
			*o++ = (char)k[i];
		} else {
			*o++ = '%';
			*o++ = hex[k[i] >> 4];
			*o++ = hex[k[i] & 15];
		}
	}
	o += snprintf(o, 128,
		      " exp=%" PRId64 " la=%" PRId64 " cas=%" PRIu64
		      " fetch=no cls=1 size=%" PRIu64 "\n",
		      m->exptime ? m->exptime : -1,
		      (int64_t)(m->mtime_ns / 1000000000), m->cas, m->size);
	d->flen = (size_t)(o - d->fill);
	return 0;
}

static void *dump_walk(void *arg)
{
	struct mc_dump *d = arg;
	/* gs_iterate compares the prefix with memcmp: never NULL */
	int ret = gs_iterate(d->s, d->prefix ? d->prefix : "", d->plen,
			     dump_one, d);

	if (ret > 0) /* dump_one stopped it: cancelled */
		ret = 0;
	if (ret == 0)
		dump_hand(d);
	pthread_mutex_lock(&d->lock);
	d->done = true;
	d->err = ret;
	dump_post(d);
	pthread_mutex_unlock(&d->lock);
	return NULL;
}

static void dump_free(struct mc_dump *d)
{
	atomic_fetch_sub(&dumps_running, 1);
	pthread_mutex_destroy(&d->lock);
	pthread_cond_destroy(&d->cond);
	free(d->prefix);
	free(d);
}

enum conn_run mc_cmd_metadump(struct conn *c, const struct mc_req *q)
{
	struct mc_state *m = mc_of(c);
	struct mc_dump *d;

	if (atomic_fetch_add(&dumps_running, 1) >= DUMPS_MAX) {
		atomic_fetch_sub(&dumps_running, 1);
		OUT(c, "BUSY currently processing crawler request\r\n");
		return RUN_INPUT;
	}
	d = calloc(1, sizeof(*d));
	if (!d) {
		atomic_fetch_sub(&dumps_running, 1);
		goto fail;
	}
	d->c = c;
	d->s = store_of(c);
	d->ready = d->pages[0];
	d->fill = d->pages[1];
	pthread_mutex_init(&d->lock, NULL);
	pthread_cond_init(&d->cond, NULL);
	if (q->arg) {
		d->prefix = malloc(q->arg_len ? q->arg_len : 1);
		if (!d->prefix)
			goto fail;
		memcpy(d->prefix, q->arg, q->arg_len);
		d->plen = q->arg_len;
	}
	if (pthread_create(&d->thread, NULL, dump_walk, d))
		goto fail;
	m->dump = d;
	m->job = JOB_DUMP;
	return RUN_INPUT;
fail:
	if (d)
		dump_free(d);
	OUT(c, "SERVER_ERROR out of memory\r\n");
	return RUN_INPUT;
}

/* JOB_DUMP: send the pages as they come, then END. */
enum conn_run mc_dump_run(struct conn *c)
{
	struct mc_state *m = mc_of(c);
	struct mc_dump *d = m->dump;
	bool done;

	for (;;) {
		if (c->wend - c->wstart > GD_WBUF_HIGH)
			return RUN_OUTPUT;
		pthread_mutex_lock(&d->lock);
		dump_unpost(d);
		if (d->rlen) {
			conn_out(c, d->ready, d->rlen);
			d->rlen = 0;
			pthread_cond_signal(&d->cond);
			pthread_mutex_unlock(&d->lock);
			continue;
		}
		done = d->done;
		if (!done)
			d->waiting = true;
		pthread_mutex_unlock(&d->lock);
		if (!done)
			return RUN_DISK;
		break;
	}
	pthread_join(d->thread, NULL);
	dump_unpost(d); /* its last post, if this call did not come of it */
	if (d->err < 0)
		OUT(c, "SERVER_ERROR cannot list the store\r\n");
	else
		OUT(c, "END\r\n");
	dump_free(d);
	m->dump = NULL;
	m->job = JOB_NONE;
	return RUN_INPUT;
}

void mc_dump_release(struct conn *c)
{
	struct mc_state *m = mc_of(c);
	struct mc_dump *d = m->dump;

	if (!d)
		return;
	pthread_mutex_lock(&d->lock);
	d->cancel = true;
	pthread_cond_signal(&d->cond);
	pthread_mutex_unlock(&d->lock);
	pthread_join(d->thread, NULL); /* within one store entry */
	dump_unpost(d);
	dump_free(d);
	m->dump = NULL;
}
