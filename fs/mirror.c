/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * goblinfs --mirror over the shared origin client (see mirror.h): the
 * fetcher's threads do the transfers; this file turns their asynchronous
 * results into the blocking calls a FUSE thread makes.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../store/goblin.h"
#include "../store/origin/origin.h"
#include "mirror.h"

/* what goblind's --mirror-timeout defaults to */
#define MIRROR_TIMEOUT_MS 30000
#define MIRROR_TRANSFERS  64 /* origin transfers at once */

struct mirror {
	struct gs_store *s;
	struct fetcher *f;
	/*
	 * Makes "not in the store, so fetch it" one step: a second open
	 * either finds the fill or joins the fetch (the fetcher collapses
	 * requests for a key while they are in its table).  Not held while
	 * the response is awaited.
	 */
	pthread_mutex_t lock;
	_Atomic uint64_t heads;
};

/* One open's wait for the fetcher's answer. */
struct mirror_wait {
	struct fetch_waiter fw;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool done;
};

/* On the fetcher's thread: only hands the result back. */
static void wait_done(struct fetch_waiter *fw)
{
	struct mirror_wait *w = (struct mirror_wait *)fw;

	pthread_mutex_lock(&w->lock);
	w->done = true;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
}

struct mirror *mirror_new(struct gs_store *s, const char *url,
			  unsigned stale_on_error_s, char *err, size_t errlen)
{
	struct fetch_opts o = {
		.origin = url,
		.timeout_ms = MIRROR_TIMEOUT_MS,
		/* the store's own limits decide (-EFBIG, -ENOSPC: passed) */
		.max_object = UINT64_MAX - 1,
		.max_transfers = MIRROR_TRANSFERS,
		.threads = 1,
		.thread_name = "goblinfs-f",
		.stale_on_error_s = stale_on_error_s,
	};
	struct mirror *m = calloc(1, sizeof(*m));

	if (!m) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	m->s = s;
	m->f = fetcher_new(s, &o, err, errlen);
	if (!m->f) {
		free(m);
		return NULL;
	}
	pthread_mutex_init(&m->lock, NULL);
	return m;
}

void mirror_free(struct mirror *m)
{
	if (!m)
		return;
	fetcher_free(m->f);
	pthread_mutex_destroy(&m->lock);
	free(m);
}

int mirror_head(struct mirror *m, const char *path, uint64_t *size,
		int64_t *mtime)
{
	int ret;

	atomic_fetch_add(&m->heads, 1);
	ret = fetcher_head(m->f, path, strlen(path), size, mtime);
	return ret == FETCH_HEAD_DIR ? MIRROR_DIR : ret;
}

/* A response the fetcher passed (not stored): what it means for a file. */
static int passed(struct gs_reader *r)
{
	const struct gs_meta *meta = gs_reader_meta(r);
	struct gs_attr a;

	if (gs_attr_decode(meta->attr, meta->attr_len, &a) < 0)
		return -EIO;
	if (a.status == 200)
		return 0; /* read through, not kept */
	return a.status == 404 || a.status == 410 ? -ENOENT : -EIO;
}

/*
 * Ask the fetcher for @key (conditionally on @stale's validators when
 * @stale is not NULL) and wait for its answer.  Called with m->lock held,
 * which it drops while waiting.  Same results as mirror_open().
 */
static int fetch_wait(struct mirror *m, const char *key, size_t klen,
		      const struct gs_meta *stale, struct gs_reader **r)
{
	struct mirror_wait w = { .fw.done = wait_done };
	int ret;

	pthread_mutex_init(&w.lock, NULL);
	pthread_cond_init(&w.cond, NULL);
	/* the fetcher reads @stale before it returns */
	ret = fetcher_get(m->f, key, klen, stale, NULL, &w.fw);
	pthread_mutex_unlock(&m->lock);
	if (ret < 0) {
		pthread_mutex_destroy(&w.lock);
		pthread_cond_destroy(&w.cond);
		return ret == -ENOMEM ? ret : -EIO;
	}

	pthread_mutex_lock(&w.lock);
	while (!w.done)
		pthread_cond_wait(&w.cond, &w.lock);
	pthread_mutex_unlock(&w.lock);
	pthread_mutex_destroy(&w.lock);
	pthread_cond_destroy(&w.cond);
	switch (w.fw.kind) {
	case FETCH_OBJECT:
		*r = w.fw.r;
		return 0;
	case FETCH_PASS:
		ret = passed(w.fw.r);
		if (ret < 0)
			gs_reader_close(w.fw.r);
		else
			*r = w.fw.r;
		return ret;
	case FETCH_RETRY: /* only for fetch_req.fields: not ours */
	case FETCH_REPLY:
		break;
	}
	return -EIO; /* 502, 504: unreachable, timed out, bad answer */
}

int mirror_open(struct mirror *m, const char *key, size_t klen,
		struct gs_reader **r)
{
	int ret;

	pthread_mutex_lock(&m->lock);
	ret = gs_get_open(m->s, key, klen, GS_GET_FILL, r);
	if (ret != -ENOENT) {
		pthread_mutex_unlock(&m->lock);
		return ret;
	}
	return fetch_wait(m, key, klen, NULL, r);
}

bool mirror_fresh(const struct gs_meta *meta)
{
	struct http_cc none;
	struct gs_attr a;

	/* a record we cannot read: ask the origin rather than trust it */
	if (gs_attr_decode(meta->attr, meta->attr_len, &a) < 0)
		return false;
	if (!(a.flags & GS_ATTR_ORIGIN))
		return true; /* stored by a client (goblind PUT), not fetched */
	http_cc_init(&none); /* an open says nothing of its own */
	return http_fresh_for(&none, a.fresh_until, a.age_base,
			      a.flags & GS_ATTR_NO_CACHE,
			      a.flags & GS_ATTR_REVALIDATE, time(NULL));
}

int mirror_revalidate(struct mirror *m, const char *key, size_t klen,
		      const struct gs_meta *stale, struct gs_reader **r)
{
	struct http_cc resp, none;
	struct gs_attr a;

	/* RFC 5861 stale-while-revalidate: read it now, refresh behind */
	http_cc_init(&resp);
	http_cc_init(&none);
	if (gs_attr_decode(stale->attr, stale->attr_len, &a) == 0)
		http_cc_parse_block(&resp, "Cache-Control", a.headers,
				    a.headers_len);
	if (resp.stale_while_revalidate >= 0 &&
	    http_stale_ok(HTTP_STALE_REVALIDATE, &resp, &none, a.fresh_until,
			  a.age_base, a.flags & GS_ATTR_NO_CACHE,
			  a.flags & GS_ATTR_REVALIDATE, 0, time(NULL)) &&
	    fetcher_refresh(m->f, key, klen, stale, NULL) == 0) {
		*r = NULL;
		return 0;
	}
	pthread_mutex_lock(&m->lock);
	return fetch_wait(m, key, klen, stale, r);
}

void mirror_stats_get(struct mirror *m, struct mirror_stats *st)
{
	struct fetch_stats fs;

	fetcher_stats(m->f, &fs);
	st->heads = atomic_load(&m->heads);
	st->gets = fs.origin_requests;
	st->bytes = fs.origin_bytes;
	st->failures = fs.origin_errors + fs.origin_timeouts;
}

int64_t mirror_meta_mtime(const struct gs_meta *meta)
{
	struct gs_attr a;

	if (gs_attr_decode(meta->attr, meta->attr_len, &a) == 0 &&
	    a.last_modified > 0)
		return a.last_modified * 1000000000ll;
	return meta->mtime_ns;
}
