/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * HTTP read-through for goblinfs --mirror (see mirror.h): one libcurl easy
 * handle per request, connections shared; each GET on its own thread.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <curl/curl.h>
#include "../store/goblin.h"
#include "mirror.h"

/*
 * The attributes of a cached object are HTTP header lines, "Name: value"
 * ending in CRLF; goblinfs writes only Last-Modified.
 */
#define LAST_MODIFIED "Last-Modified: "

struct mirror {
	char *base;		/* the origin URL without a trailing '/' */
	CURLSH *share;		/* connections and DNS shared by all handles */
	pthread_mutex_t share_lock[CURL_LOCK_DATA_LAST];
	pthread_mutex_t lock;	/* running, protected by itself */
	pthread_cond_t idle;
	unsigned running;	/* fetch threads alive */
	atomic_bool stopping;	/* mirror_free(): abort the transfers */
	_Atomic uint64_t heads, gets, bytes, failures;
};

struct fetch {
	struct mirror *m;
	struct gs_writer *w;
	char *url;
	uint64_t size, got;
	int err;		/* a store error while writing */
};

static void share_lock(CURL *h, curl_lock_data d, curl_lock_access a,
		       void *arg)
{
	struct mirror *m = arg;

	(void)h;
	(void)a;
	pthread_mutex_lock(&m->share_lock[d]);
}

static void share_unlock(CURL *h, curl_lock_data d, void *arg)
{
	struct mirror *m = arg;

	(void)h;
	pthread_mutex_unlock(&m->share_lock[d]);
}

struct mirror *mirror_new(const char *url, char *err, size_t errlen)
{
	struct mirror *m;
	size_t n;

	if (strncmp(url, "http://", 7) && strncmp(url, "https://", 8)) {
		snprintf(err, errlen, "mirror URL '%s' is not http(s)://", url);
		return NULL;
	}
	if (curl_global_init(CURL_GLOBAL_DEFAULT)) {
		snprintf(err, errlen, "cannot initialise libcurl");
		return NULL;
	}
	m = calloc(1, sizeof(*m));
	if (!m || !(m->base = strdup(url)) || !(m->share = curl_share_init())) {
		snprintf(err, errlen, "out of memory");
		if (m)
			free(m->base);
		free(m);
		return NULL;
	}
	n = strlen(m->base);
	while (n > 0 && m->base[n - 1] == '/')
		m->base[--n] = '\0';
	for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
		pthread_mutex_init(&m->share_lock[i], NULL);
	pthread_mutex_init(&m->lock, NULL);
	pthread_cond_init(&m->idle, NULL);
	curl_share_setopt(m->share, CURLSHOPT_LOCKFUNC, share_lock);
	curl_share_setopt(m->share, CURLSHOPT_UNLOCKFUNC, share_unlock);
	curl_share_setopt(m->share, CURLSHOPT_USERDATA, m);
	curl_share_setopt(m->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_CONNECT);
	curl_share_setopt(m->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
	return m;
}

void mirror_free(struct mirror *m)
{
	if (!m)
		return;
	atomic_store(&m->stopping, true);
	pthread_mutex_lock(&m->lock);
	while (m->running)
		pthread_cond_wait(&m->idle, &m->lock);
	pthread_mutex_unlock(&m->lock);
	curl_share_cleanup(m->share);
	for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
		pthread_mutex_destroy(&m->share_lock[i]);
	pthread_mutex_destroy(&m->lock);
	pthread_cond_destroy(&m->idle);
	free(m->base);
	free(m);
}

/* <base>/<path>, each segment of @path percent-encoded.  Caller frees. */
static char *url_for(struct mirror *m, CURL *h, const char *path)
{
	size_t cap = strlen(m->base) + 3 * strlen(path) + 2, len;
	char *url = malloc(cap);
	const char *p = path;

	if (!url)
		return NULL;
	len = (size_t)snprintf(url, cap, "%s", m->base);
	while (*p) {
		size_t seg = strcspn(p, "/");
		char *e = curl_easy_escape(h, p, (int)seg);

		if (!e) {
			free(url);
			return NULL;
		}
		len += (size_t)snprintf(url + len, cap - len, "/%s", e);
		curl_free(e);
		p += seg;
		if (*p == '/')
			p++;
	}
	return url;
}

/* Every transfer's progress callback: non-zero aborts it. */
static int on_progress(void *arg, curl_off_t dltotal, curl_off_t dlnow,
		       curl_off_t ultotal, curl_off_t ulnow)
{
	struct mirror *m = arg;

	(void)dltotal;
	(void)dlnow;
	(void)ultotal;
	(void)ulnow;
	return atomic_load(&m->stopping) ? 1 : 0;
}

static CURL *handle_new(struct mirror *m)
{
	CURL *h = curl_easy_init();

	if (!h)
		return NULL;
	curl_easy_setopt(h, CURLOPT_SHARE, m->share);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 10L);
	/* a stalled origin fails the fetch instead of hanging readers */
	curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, 30L);
	curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L);
	curl_easy_setopt(h, CURLOPT_MAXREDIRS, 5L);
	curl_easy_setopt(h, CURLOPT_FILETIME, 1L);
	curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(h, CURLOPT_XFERINFODATA, m);
	return h;
}

int mirror_head(struct mirror *m, const char *path, uint64_t *size,
		int64_t *mtime)
{
	CURL *h = handle_new(m);
	char *url = h ? url_for(m, h, path) : NULL;
	curl_off_t len = -1;
	long code = 0, ft = -1;
	char *eff = NULL;
	size_t ulen;
	int ret = -EIO;

	if (!url) {
		if (h)
			curl_easy_cleanup(h);
		return -ENOMEM;
	}
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
	atomic_fetch_add(&m->heads, 1);
	if (curl_easy_perform(h) == CURLE_OK) {
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
		curl_easy_getinfo(h, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &len);
		curl_easy_getinfo(h, CURLINFO_FILETIME, &ft);
		curl_easy_getinfo(h, CURLINFO_EFFECTIVE_URL, &eff);
		ulen = strlen(url);
		if (eff && ulen && url[ulen - 1] != '/' &&
		    strlen(eff) > 0 && eff[strlen(eff) - 1] == '/' &&
		    (code == 200 || code == 403))
			ret = MIRROR_DIR;	/* redirected to "path/" */
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

static size_t on_body(char *p, size_t one, size_t n, void *arg)
{
	struct fetch *f = arg;

	(void)one;
	if (f->got + n > f->size) {
		f->err = -EOVERFLOW;	/* more than announced: refuse */
		return 0;
	}
	f->err = gs_put_write(f->w, p, n);
	if (f->err < 0)
		return 0;	/* stops the transfer */
	f->got += n;
	atomic_fetch_add(&f->m->bytes, n);
	return n;
}

static void *fetch_main(void *arg)
{
	struct fetch *f = arg;
	struct mirror *m = f->m;
	CURL *h = handle_new(m);
	long code = 0;
	CURLcode rc = CURLE_FAILED_INIT;

	if (h) {
		curl_easy_setopt(h, CURLOPT_URL, f->url);
		curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
		curl_easy_setopt(h, CURLOPT_WRITEDATA, f);
		/* an error page must not become the object */
		curl_easy_setopt(h, CURLOPT_FAILONERROR, 1L);
		atomic_fetch_add(&m->gets, 1);
		rc = curl_easy_perform(h);
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
		curl_easy_cleanup(h);
	}
	if (rc == CURLE_OK && code == 200 && f->err == 0 && f->got == f->size) {
		if (gs_put_commit(f->w, NULL) < 0)
			atomic_fetch_add(&m->failures, 1);
	} else {
		gs_put_abort(f->w);
		atomic_fetch_add(&m->failures, 1);
	}
	free(f->url);
	free(f);
	pthread_mutex_lock(&m->lock);
	if (--m->running == 0)
		pthread_cond_broadcast(&m->idle);
	pthread_mutex_unlock(&m->lock);
	return NULL;
}

/* "Last-Modified: <IMF-fixdate>\r\n" into @buf; its length. */
static size_t attr_last_modified(int64_t mtime, char *buf, size_t len)
{
	time_t t = (time_t)mtime;
	struct tm tm;

	if (!gmtime_r(&t, &tm))
		return 0;
	return strftime(buf, len, LAST_MODIFIED "%a, %d %b %Y %H:%M:%S GMT\r\n",
			&tm);
}

int mirror_fetch(struct mirror *m, struct gs_store *s, const char *path,
		 const char *key, uint64_t size, int64_t mtime)
{
	struct gs_put_args a = { .size = size, .fill = true };
	struct fetch *f = calloc(1, sizeof(*f));
	char hdr[80];
	CURL *h = curl_easy_init();
	pthread_attr_t attr;
	pthread_t t;
	int ret;

	if (mtime > 0) {
		a.attr = hdr;
		a.attr_len = attr_last_modified(mtime, hdr, sizeof(hdr));
	}
	if (!f || !h || !(f->url = url_for(m, h, path))) {
		ret = -ENOMEM;
		goto fail;
	}
	ret = gs_put_begin(s, key, strlen(key), &a, &f->w);
	if (ret < 0)
		goto fail;
	f->m = m;
	f->size = size;
	pthread_mutex_lock(&m->lock);
	m->running++;
	pthread_mutex_unlock(&m->lock);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	ret = pthread_create(&t, &attr, fetch_main, f);
	pthread_attr_destroy(&attr);
	if (ret) {
		gs_put_abort(f->w);
		pthread_mutex_lock(&m->lock);
		m->running--;
		pthread_mutex_unlock(&m->lock);
		ret = -ret;
		goto fail;
	}
	curl_easy_cleanup(h);
	return 0;
fail:
	if (h)
		curl_easy_cleanup(h);
	if (f)
		free(f->url);
	free(f);
	return ret;
}

void mirror_stats_get(struct mirror *m, struct mirror_stats *st)
{
	st->heads = atomic_load(&m->heads);
	st->gets = atomic_load(&m->gets);
	st->bytes = atomic_load(&m->bytes);
	st->failures = atomic_load(&m->failures);
}

int64_t mirror_meta_mtime(const struct gs_meta *meta)
{
	size_t n = sizeof(LAST_MODIFIED) - 1, len = meta->attr_len;
	const char *a = (const char *)meta->attr;
	char date[64];

	for (size_t i = 0; i + n < len; i++) {
		const char *end;
		time_t t;

		if ((i && a[i - 1] != '\n') || strncasecmp(a + i, LAST_MODIFIED, n))
			continue;
		end = memchr(a + i + n, '\r', len - i - n);
		if (!end || (size_t)(end - (a + i + n)) >= sizeof(date))
			break;
		memcpy(date, a + i + n, (size_t)(end - (a + i + n)));
		date[end - (a + i + n)] = '\0';
		t = curl_getdate(date, NULL);
		if (t > 0)
			return (int64_t)t * 1000000000ll;
		break;
	}
	return meta->mtime_ns;
}
