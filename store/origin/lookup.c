/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fetcher_head(): a HEAD of the origin, on the caller's thread, for a
 * front-end that must know a name's size before it reads (goblinfs's
 * lookups).  Blocking libcurl easy handles that share their connections
 * and DNS answers through one share handle; nothing is stored.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct fetch_lookup {
	char *base; /* the origin URL without a trailing '/' */
	unsigned timeout_ms;
	CURLSH *share; /* connections and DNS shared by all handles */
	pthread_mutex_t share_lock[CURL_LOCK_DATA_LAST];
};

static void share_lock(CURL *h, curl_lock_data d, curl_lock_access a, void *arg)
{
	struct fetch_lookup *l = arg;

	(void)h;
	(void)a;
	pthread_mutex_lock(&l->share_lock[d]);
}

static void share_unlock(CURL *h, curl_lock_data d, void *arg)
{
	struct fetch_lookup *l = arg;

	(void)h;
	pthread_mutex_unlock(&l->share_lock[d]);
}

struct fetch_lookup *lookup_new(const struct fetch_opts *o)
{
	struct fetch_lookup *l = calloc(1, sizeof(*l));
	size_t n;

	if (!l || !(l->base = strdup(o->origin)) ||
	    !(l->share = curl_share_init())) {
		if (l)
			free(l->base);
		free(l);
		return NULL;
	}
	n = strlen(l->base);
	while (n > 0 && l->base[n - 1] == '/')
		l->base[--n] = '\0';
	l->timeout_ms = o->timeout_ms ? o->timeout_ms : 10000;
	for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
		pthread_mutex_init(&l->share_lock[i], NULL);
	curl_share_setopt(l->share, CURLSHOPT_LOCKFUNC, share_lock);
	curl_share_setopt(l->share, CURLSHOPT_UNLOCKFUNC, share_unlock);
	curl_share_setopt(l->share, CURLSHOPT_USERDATA, l);
	curl_share_setopt(l->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_CONNECT);
	curl_share_setopt(l->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
	return l;
}

void lookup_free(struct fetch_lookup *l)
{
	if (!l)
		return;
	curl_share_cleanup(l->share);
	for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
		pthread_mutex_destroy(&l->share_lock[i]);
	free(l->base);
	free(l);
}

int fetcher_head(struct fetcher *f, const char *key, size_t klen,
		 uint64_t *size, int64_t *mtime)
{
	struct fetch_lookup *l = f->lookup;
	CURL *h = curl_easy_init();
	char *url = h ? fetch_url(l->base, h, key, klen) : NULL;
	curl_off_t len = -1;
	long code = 0, ft = -1;
	char *eff = NULL;
	size_t ulen, elen;
	int ret = -EIO;

	if (!url) {
		if (h)
			curl_easy_cleanup(h);
		return -ENOMEM;
	}
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_SHARE, l->share);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)l->timeout_ms);
	/* a stalled origin fails the lookup instead of hanging it */
	curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME,
			 (long)(l->timeout_ms + 999) / 1000);
	/* a directory answers with a redirect to "<path>/" */
	curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L);
	curl_easy_setopt(h, CURLOPT_MAXREDIRS, 5L);
	curl_easy_setopt(h, CURLOPT_FILETIME, 1L);
	curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
	if (curl_easy_perform(h) == CURLE_OK) {
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
		curl_easy_getinfo(h, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &len);
		curl_easy_getinfo(h, CURLINFO_FILETIME, &ft);
		curl_easy_getinfo(h, CURLINFO_EFFECTIVE_URL, &eff);
		ulen = strlen(url);
		elen = eff ? strlen(eff) : 0;
		if (ulen && url[ulen - 1] != '/' && elen &&
		    eff[elen - 1] == '/' && (code == 200 || code == 403))
			ret = FETCH_HEAD_DIR; /* redirected to "path/" */
		else if (code == 404 || code == 410)
			ret = -ENOENT;
		else if (code == 200 && len >= 0) {
			*size = (uint64_t)len;
			*mtime = ft > 0 ? ft : 0;
			ret = 0;
		}
	}
	curl_easy_cleanup(h);
	free(url);
	return ret;
}
