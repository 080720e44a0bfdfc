/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The fetcher's jobs and their waiters (see internal.h): the per-shard
 * table that collapses concurrent misses of one key into one origin
 * fetch, the delivery of readers (or a reply) to every waiter, and the
 * shard side of fetcher_get(), fetcher_forward() and fetcher_cancel(),
 * which run on the callers' threads under f->lock.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <xxhash.h>

#include "internal.h"

/* ---- waiters ---- */

static void result_reply(struct fetch_waiter *fw, int status, const char *msg)
{
	fw->kind = FETCH_REPLY;
	fw->status = status;
	fw->r = NULL;
	fw->stale = false;
	snprintf(fw->msg, sizeof(fw->msg), "%s", msg);
}

/* Take the job's waiters: from now on fetcher_cancel cannot have them. */
static struct fetch_waiter *take_waiters(struct fshard *f, struct job *j)
{
	struct fetch_waiter *list, *fw;

	pthread_mutex_lock(&f->lock);
	list = j->waiters;
	j->waiters = NULL;
	for (fw = list; fw; fw = fw->next)
		fw->job = NULL;
	pthread_mutex_unlock(&f->lock);
	return list;
}

/* Give every waiter of @j the reply @status. */
void job_reply_all(struct job *j, int status, const char *fmt, ...)
{
	struct fetch_waiter *fw = take_waiters(j->f, j), *next;
	char msg[sizeof(fw->msg)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	for (; fw; fw = next) {
		next = fw->next;
		fw->next = NULL;
		result_reply(fw, status, msg);
		fw->done(fw);
	}
}

/* Give every waiter of @j its own reader on @key. */
void job_deliver(struct job *j, const void *key, size_t klen,
		 enum fetch_kind kind, int getflags)
{
	struct fshard *f = j->f;
	struct fetch_waiter *fw = take_waiters(f, j), *next;

	for (; fw; fw = next) {
		int ret;

		next = fw->next;
		fw->next = NULL;
		if (!job_selects(j, fw)) { /* another variant's */
			fw->kind = FETCH_RETRY;
			fw->r = NULL;
			fw->done(fw);
			continue;
		}
		ret = gs_get_open(f->s, key, klen, getflags, &fw->r);
		fw->stale = ret == 0 && j->stale_served;
		if (ret < 0) {
			char msg[sizeof(fw->msg)];

			snprintf(msg, sizeof(msg),
				 "cannot read the origin's response: %s",
				 gs_strerror(ret));
			result_reply(fw, 502, msg);
		} else {
			fw->kind = kind;
		}
		fw->done(fw);
	}
}

bool job_serve_stale(struct job *j)
{
	struct http_cc resp, q;

	if (j->forward || !j->has_stale || j->background)
		return false;
	/* the stored response's own stale-if-error, and the request's */
	http_cc_init(&resp);
	http_cc_parse_block(&resp, "Cache-Control", j->stale.headers,
			    j->stale.headers_len);
	http_cc_init(&q);
	if (j->cc)
		http_cc_parse(&q, j->cc, j->cc_len);
	if (!http_stale_ok(HTTP_STALE_ERROR, &resp, &q, j->stale.fresh_until,
			   j->stale.age_base, j->stale.flags & GS_ATTR_NO_CACHE,
			   j->stale.flags & GS_ATTR_REVALIDATE,
			   j->f->o.stale_on_error_s, time(NULL)))
		return false;
	/* joiners from now on start a fetch of their own */
	job_unpublish(j);
	j->stale_served = true;
	STAT(j->f, served_stale);
	job_deliver(j, j->key, j->klen, FETCH_OBJECT, 0);
	return true;
}

void job_deliver_current(struct job *j)
{
	if (j->pass) /* of unknown length, it may still be stored: MISS */
		job_deliver(j, j->rkey, j->rklen,
			    j->late && j->storable ? FETCH_OBJECT : FETCH_PASS,
			    GS_GET_FILL);
	else
		job_deliver(j, j->key, j->klen, FETCH_OBJECT, GS_GET_FILL);
}

/* ---- the job table (f->lock held) ---- */

static struct job **bucket(struct fshard *f, uint64_t hash)
{
	return &f->table[hash % NBUCKETS];
}

static struct job *table_find(struct fshard *f, const char *key, size_t klen,
			      uint64_t hash)
{
	for (struct job *j = *bucket(f, hash); j; j = j->hnext)
		if (j->hash == hash && j->klen == klen &&
		    memcmp(j->key, key, klen) == 0)
			return j;
	return NULL;
}

void job_table_remove(struct fshard *f, struct job *j)
{
	struct job **p;

	if (!j->in_table)
		return;
	for (p = bucket(f, j->hash); *p != j; p = &(*p)->hnext)
		;
	*p = j->hnext;
	j->in_table = false;
}

void job_unkick(struct fshard *f, struct job *j)
{
	struct job **p;

	if (!j->kicked)
		return;
	for (p = &f->kicked; *p != j; p = &(*p)->qnext)
		;
	*p = j->qnext;
	j->kicked = false;
}

/* Take @j out of the table: a later fetcher_get starts a new fetch. */
void job_unpublish(struct job *j)
{
	pthread_mutex_lock(&j->f->lock);
	job_table_remove(j->f, j);
	pthread_mutex_unlock(&j->f->lock);
}

/* The same, saying whether @j had waiters then (atomically: none can
 * join after). */
bool job_unpublish_wanted(struct job *j)
{
	bool wanted;

	pthread_mutex_lock(&j->f->lock);
	wanted = j->waiters != NULL;
	job_table_remove(j->f, j);
	pthread_mutex_unlock(&j->f->lock);
	return wanted;
}

static void waiter_add(struct job *j, struct fetch_waiter *fw)
{
	fw->job = j;
	fw->next = j->waiters;
	j->waiters = fw;
}

void job_release_handle(struct job *j)
{
	if (j->h) {
		curl_multi_remove_handle(j->f->multi, j->h);
		curl_easy_cleanup(j->h);
		j->h = NULL;
	}
	curl_slist_free_all(j->hdrs);
	j->hdrs = NULL;
	free(j->head);
	j->head = NULL;
	j->head_len = 0;
}

void job_free(struct job *j)
{
	job_release_handle(j);
	free(j->key);
	free(j->auth);
	free(j->cc);
	free(j->target);
	free(j->fields);
	free(j->method);
	free(j->vary);
	free(j);
}

/* ---- the callers' side ---- */

static struct job *job_new(struct fshard *f, const char *key, size_t klen)
{
	struct job *j = calloc(1, sizeof(*j));

	if (!j || !(j->key = malloc(klen))) {
		free(j);
		return NULL;
	}
	memcpy(j->key, key, klen);
	j->klen = klen;
	j->hash = XXH3_64bits(key, klen);
	j->f = f;
	return j;
}

/* Queue @j for the fetcher thread.  f->lock held. */
static void enqueue(struct fshard *f, struct job *j)
{
	j->qnext = f->incoming;
	f->incoming = j;
}

/* Copy what the client's request says into @j: 0 or -ENOMEM. */
static int job_take_req(struct job *j, const struct fetch_req *req)
{
	if (!req)
		return 0;
	if (req->authorization &&
	    !(j->auth = strndup(req->authorization, req->authorization_len)))
		return -ENOMEM;
	j->auth_len = req->authorization_len;
	if (req->cache_control &&
	    !(j->cc = strndup(req->cache_control, req->cache_control_len)))
		return -ENOMEM;
	j->cc_len = req->cache_control_len;
	if (req->target && !(j->target = strndup(req->target, req->target_len)))
		return -ENOMEM;
	j->target_len = req->target_len;
	if (req->fields && !(j->fields = strndup(req->fields, req->fields_len)))
		return -ENOMEM;
	j->fields_len = req->fields_len;
	snprintf(j->client, sizeof(j->client), "%s",
		 req->client ? req->client : "");
	j->passreq = req->pass || req->authorization;
	j->no_auth = req->no_authorization;
	j->alone = req->alone;
	return 0;
}

int shard_get(struct fshard *f, const char *key, size_t klen, uint64_t hash,
	      const struct gs_meta *stale, const struct fetch_req *req,
	      struct fetch_waiter *fw)
{
	bool private = req && (req->authorization || req->alone);
	struct job *j, *nj = NULL;

	if (klen == 0 || klen > GS_KEY_MAX || (!fw && private))
		return -EINVAL;
	if (fw) {
		fw->next = NULL;
		fw->job = NULL;
		fw->r = NULL;
	}
	pthread_mutex_lock(&f->lock);
	for (;;) {
		if (f->stopping) {
			pthread_mutex_unlock(&f->lock);
			if (nj)
				job_free(nj);
			return -ESHUTDOWN;
		}
		/* one with credentials neither joins nor is joined */
		j = private ? NULL : table_find(f, key, klen, hash);
		if (j && !fw) { /* a background one: that fetch will do */
			pthread_mutex_unlock(&f->lock);
			if (nj)
				job_free(nj);
			return 0;
		}
		if (j) {
			waiter_add(j, fw);
			STAT(f, collapsed);
			if (j->delivered && !j->kicked) {
				j->kicked = true;
				j->qnext = f->kicked;
				f->kicked = j;
			}
			pthread_mutex_unlock(&f->lock);
			if (nj)
				job_free(nj);
			curl_multi_wakeup(f->multi);
			return 0;
		}
		if (nj)
			break;
		/* allocate without the lock, then look again */
		pthread_mutex_unlock(&f->lock);
		nj = job_new(f, key, klen);
		if (!nj)
			return -ENOMEM;
		if (job_take_req(nj, req) < 0) {
			job_free(nj);
			return -ENOMEM;
		}
		if (stale && gs_attr_decode(stale->attr, stale->attr_len,
					    &nj->stale) == 0) {
			/* kept for stale-if-error even without validators */
			nj->has_stale = true;
			nj->stale_cas = stale->cas;
			nj->conditional = nj->stale.etag_len ||
					  nj->stale.last_modified;
		}
		pthread_mutex_lock(&f->lock);
	}
	if (fw)
		waiter_add(nj, fw);
	nj->background = !fw;
	nj->owner = fw;
	if (!private) {
		nj->hnext = *bucket(f, hash);
		*bucket(f, hash) = nj;
		nj->in_table = true;
	}
	enqueue(f, nj);
	pthread_mutex_unlock(&f->lock);
	curl_multi_wakeup(f->multi);
	return 0;
}

int shard_forward(struct fshard *f, const char *key, size_t klen,
		  const struct fetch_forward *fwd, struct fetch_waiter *fw)
{
	struct job *j;

	if (klen > GS_KEY_MAX || !fwd->method) /* "/": no key */
		return -EINVAL;
	j = job_new(f, key, klen);
	if (!j)
		return -ENOMEM;
	j->forward = true;
	j->fwd = *fwd;
	if (!(j->method = strdup(fwd->method)) ||
	    job_take_req(j, &fwd->req) < 0) {
		job_free(j);
		return -ENOMEM;
	}
	j->fwd.method = j->method;
	j->passreq = true;
	fw->next = NULL;
	fw->r = NULL;
	pthread_mutex_lock(&f->lock);
	if (f->stopping) {
		pthread_mutex_unlock(&f->lock);
		job_free(j);
		return -ESHUTDOWN;
	}
	waiter_add(j, fw);
	enqueue(f, j);
	pthread_mutex_unlock(&f->lock);
	curl_multi_wakeup(f->multi);
	return 0;
}

bool shard_cancel(struct fshard *f, struct fetch_waiter *fw)
{
	struct fetch_waiter **p;
	struct job *j;
	bool found = false;

	pthread_mutex_lock(&f->lock);
	j = fw->job;
	if (j) {
		for (p = &j->waiters; *p; p = &(*p)->next)
			if (*p == fw) {
				*p = fw->next;
				fw->next = NULL;
				fw->job = NULL;
				found = true;
				break;
			}
	}
	pthread_mutex_unlock(&f->lock);
	return found;
}

/* ---- the origin URL ---- */

char *fetch_url(const char *base, CURL *h, const char *key, size_t klen)
{
	size_t cap = strlen(base) + 3 * klen + 2, len;
	char *url = malloc(cap);
	size_t i = 0;

	if (!url)
		return NULL;
	len = (size_t)snprintf(url, cap, "%s/", base);
	while (i < klen) {
		const char *seg = key + i;
		const char *slash = memchr(seg, '/', klen - i);
		size_t n = slash ? (size_t)(slash - seg) : klen - i;

		if (n) {
			char *e = curl_easy_escape(h, seg, (int)n);

			if (!e) {
				free(url);
				return NULL;
			}
			len += (size_t)snprintf(url + len, cap - len, "%s", e);
			curl_free(e);
		}
		i += n;
		if (i < klen) { /* the '/' itself */
			url[len++] = '/';
			url[len] = '\0';
			i++;
		}
	}
	return url;
}

void job_invalidate_locations(struct job *j)
{
	const char *p = j->head, *end = j->head + j->head_len;
	char *key = malloc(GS_KEY_MAX + 1);

	if (!key)
		return; /* they stay until they expire */
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end, *v;
		size_t n;
		long klen;

		if ((size_t)(le - p) > 9 && !strncasecmp(p, "location:", 9))
			v = p + 9;
		else if ((size_t)(le - p) > 17 &&
			 !strncasecmp(p, "content-location:", 17))
			v = p + 17;
		else
			v = NULL;
		if (v) {
			while (v < le && (*v == ' ' || *v == '\t'))
				v++;
			n = (size_t)(le - v);
			while (n && (v[n - 1] == '\r' || v[n - 1] == ' ' ||
				     v[n - 1] == '\t'))
				n--;
			klen = url_key_of(j->f->base, v, n, key, GS_KEY_MAX);
			if (klen > 0)
				url_delete(j->f, key, (size_t)klen);
		}
		p = le + 1;
	}
	free(key);
}

/* ---- Vary (see origin.h; the stubs and variants: keys.c) ---- */

static int job_rekey(struct job *j, const char *key, size_t klen)
{
	char *k = malloc(klen), *old;

	if (!k)
		return -ENOMEM;
	memcpy(k, key, klen);
	pthread_mutex_lock(&j->f->lock);
	old = j->key;
	j->key = k;
	j->klen = klen;
	pthread_mutex_unlock(&j->f->lock);
	free(old);
	return 0;
}

void job_vary(struct job *j, bool *storable)
{
	struct fshard *f = j->f;
	char names[1024], vk[GS_KEY_MAX + 1], hex[17];
	size_t nlen, plen = key_primary_len(j->key, j->klen);
	long vlen;

	if (!j->fields || !j->head)
		return; /* goblinfs: Vary is passed (rfc9111.c) */
	nlen = vary_names(j->head, j->head_len, names, sizeof(names),
			  &j->vary_star);
	if (nlen == (size_t)-1) {
		*storable = false;
		j->vary_star = true; /* too many names: none may share */
		return;
	}
	if (j->vary_star)
		return; /* never stored (rfc9111.c) */
	if (nlen) {
		if (!(j->vary = strdup(names))) {
			*storable = false;
			j->vary_star = true;
			return;
		}
		j->vdigest = vary_digest(names, nlen, j->fields, j->fields_len);
	}
	if (!*storable)
		return;
	if (!nlen) {
		if (plen != j->klen) { /* it varied, and no longer does */
			url_delete(f, j->key, plen);
			if (job_rekey(j, j->key, plen) < 0)
				*storable = false;
		}
		return;
	}
	vlen = key_variant_of(j->key, plen, j->vdigest, vk, GS_KEY_MAX);
	snprintf(hex, sizeof(hex), "%016" PRIx64, j->vdigest);
	if (vlen < 0 || vary_stub_update(f, j->key, plen, names, hex) < 0)
		*storable = false;
	else if (((size_t)vlen != j->klen || memcmp(vk, j->key, j->klen)) &&
		 job_rekey(j, vk, (size_t)vlen) < 0)
		*storable = false;
}

/* May @fw have @j's response?  Only if its request selects it. */
bool job_selects(const struct job *j, const struct fetch_waiter *fw)
{
	if (j->vary_star)
		return fw == j->owner;
	if (!j->vary)
		return true;
	return vary_digest(j->vary, strlen(j->vary), fw->fields,
			   fw->fields_len) == j->vdigest;
}
