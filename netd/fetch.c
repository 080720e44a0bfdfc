/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The mirror's origin fetcher (see fetch.h): a few shards, each a thread
 * driving a libcurl multi handle over the keys that hash to it; responses
 * stream into store fills that the waiting clients read while they arrive.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <curl/curl.h>
#include <xxhash.h>

#include "fetch.h"
#include "http_attr.h"
#include "http_sem.h"

/*
 * Shards.  One thread was the bottleneck of a fill of many small objects
 * (it receives, hashes and journals every byte), so the keys are spread
 * over fetch_opts.threads shards by their hash: all the jobs of one key,
 * and so the collapsing of its misses, stay in one shard.
 *
 * Threads.  fetcher_get/forward/cancel run on the callers' threads; they
 * touch only what f->lock protects: the job table, the queues and every
 * job's waiter list.  Everything else of a job (its curl handle, its
 * writer, the response head) belongs to the fetcher thread.
 *
 * The fetcher thread writes response bodies into the store with
 * gs_put_write(), which may block until the writer's older O_DIRECT buffer
 * is on the device.  That block is bounded (one write_io_chunk) and it is
 * the store's backpressure: while it lasts, libcurl reads no socket, TCP
 * slows the origins down, and no transfer buffers more than curl's own
 * receive buffer.  The price is that one slow device write delays every
 * transfer's progress by that much.
 *
 * Responses of unknown length (chunked, or ended by the connection close)
 * fill under their private key, as a fill of unknown size: their readers
 * stream it as it comes (chunked to HTTP/1.1 clients), and learn its end
 * when it commits.  A storable one is then renamed to its key if it stayed
 * within max_object; a larger one was passed.
 */

#define HEAD_MAX (64 * 1024)	/* response header bytes kept per transfer */
#define NBUCKETS 256		/* job table buckets */
#define PASS_PREFIX "\0pass/"	/* private keys: no HTTP path has a NUL */
#define PASS_PREFIX_LEN 6

enum job_state {
	JOB_QUEUED = 0,	/* waiting for a transfer slot */
	JOB_HEAD,	/* request sent, waiting for the response head */
	JOB_BODY,	/* head seen: the body flows into the writer */
};

struct job {
	/* protected by f->lock */
	struct job *hnext;		/* in f->table[bucket], GET jobs */
	struct job *qnext;		/* in f->incoming or f->kicked */
	struct fetch_waiter *waiters;	/* not yet given their result */
	bool in_table, kicked;
	bool delivered;		/* waiters get a reader on rkey at once */

	/* the fetcher thread's */
	struct fshard *f;
	struct job *pnext;		/* in f->pending or f->active */
	enum job_state state;
	char *key;
	size_t klen;
	uint64_t hash;
	bool forward;
	struct fetch_forward fwd;	/* forward: the caller's buffers */
	bool conditional;		/* stale given: revalidation */
	char *auth;			/* the client's Authorization, or NULL */
	size_t auth_len;
	char *cc;			/* the client's Cache-Control, or NULL */
	size_t cc_len;
	uint64_t stale_cas;
	struct http_attr stale;
	CURL *h;
	struct curl_slist *hdrs;
	char errbuf[CURL_ERROR_SIZE];
	/* JOB_HEAD: connect + head by deadline_ms; JOB_BODY: the next body
	 * bytes by then (moved on by every byte that comes) */
	int64_t request_time, deadline_ms;
	/* the response head, as received */
	char *head;
	size_t head_len;
	int status;
	/* the body */
	struct gs_writer *w;
	char rkey[PASS_PREFIX_LEN + 24];	/* the private key, or unused */
	size_t rklen;
	bool pass;		/* the response goes under rkey */
	bool late;		/* unknown length: stored or passed at the end */
	bool storable;		/* late: rename to the key at the end */
	bool restart;		/* a 304 found the stored version changed */
	bool drop;		/* nobody wants the response: stop it */
	uint64_t size, got;	/* declared (GS_SIZE_UNKNOWN) and received */
};

struct fshard {
	struct gs_store *s;
	struct fetch_opts o;
	char *base;		/* origin URL without a trailing '/' */
	CURLM *multi;
	pthread_t thread;
	pthread_mutex_t lock;
	struct job *table[NBUCKETS];	/* protected by lock */
	struct job *incoming;		/* protected by lock: to start */
	struct job *kicked;		/* protected by lock: joiners */
	bool stopping;			/* protected by lock */
	struct job *pending, *active;	/* the fetcher thread's */
	unsigned nactive;
	_Atomic uint64_t st[sizeof(struct fetch_stats) / sizeof(uint64_t)];
};

#define STAT(f, field) \
	atomic_fetch_add(&(f)->st[offsetof(struct fetch_stats, field) / \
				 sizeof(uint64_t)], 1)
#define STAT_ADD(f, field, n) \
	atomic_fetch_add(&(f)->st[offsetof(struct fetch_stats, field) / \
				 sizeof(uint64_t)], (n))

static _Atomic uint64_t pass_seq;

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- waiters ---- */

static void result_reply(struct fetch_waiter *fw, int status, const char *msg)
{
	fw->kind = FETCH_REPLY;
	fw->status = status;
	fw->r = NULL;
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
static void reply_all(struct job *j, int status, const char *fmt, ...)
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
static void deliver(struct job *j, const void *key, size_t klen,
		    enum fetch_kind kind, int getflags)
{
	struct fshard *f = j->f;
	struct fetch_waiter *fw = take_waiters(f, j), *next;

	for (; fw; fw = next) {
		int ret;

		next = fw->next;
		fw->next = NULL;
		ret = gs_get_open(f->s, key, klen, getflags, &fw->r);
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

static void deliver_current(struct job *j)
{
	if (j->pass)	/* of unknown length, it may still be stored: MISS */
		deliver(j, j->rkey, j->rklen,
			j->late && j->storable ? FETCH_OBJECT : FETCH_PASS,
			GS_GET_FILL);
	else
		deliver(j, j->key, j->klen, FETCH_OBJECT, GS_GET_FILL);
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

static void table_remove(struct fshard *f, struct job *j)
{
	struct job **p;

	if (!j->in_table)
		return;
	for (p = bucket(f, j->hash); *p != j; p = &(*p)->hnext)
		;
	*p = j->hnext;
	j->in_table = false;
}

static void unkick(struct fshard *f, struct job *j)
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
static void unpublish(struct job *j)
{
	pthread_mutex_lock(&j->f->lock);
	table_remove(j->f, j);
	pthread_mutex_unlock(&j->f->lock);
}

/* The same, if @j has no waiters (atomically: none can join after). */
static bool unpublish_if_unwanted(struct job *j)
{
	bool unwanted;

	pthread_mutex_lock(&j->f->lock);
	unwanted = j->waiters == NULL;
	if (unwanted)
		table_remove(j->f, j);
	pthread_mutex_unlock(&j->f->lock);
	return unwanted;
}

static void waiter_add(struct job *j, struct fetch_waiter *fw)
{
	fw->job = j;
	fw->next = j->waiters;
	j->waiters = fw;
}

/* ---- the origin request ---- */

/* base + '/' + @key with each '/'-separated segment percent-encoded. */
static char *url_for(struct fshard *f, CURL *h, const char *key, size_t klen)
{
	size_t cap = strlen(f->base) + 3 * klen + 2, len;
	char *url = malloc(cap);
	size_t i = 0;

	if (!url)
		return NULL;
	len = (size_t)snprintf(url, cap, "%s/", f->base);
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
		if (i < klen) {	/* the '/' itself */
			url[len++] = '/';
			url[len] = '\0';
			i++;
		}
	}
	return url;
}

static size_t on_header(char *p, size_t one, size_t n, void *arg);
static size_t on_body(char *p, size_t one, size_t n, void *arg);

static int job_handle(struct job *j)
{
	struct fshard *f = j->f;
	CURL *h = curl_easy_init();
	char *url = h ? url_for(f, h, j->key, j->klen) : NULL;

	if (!url)
		goto fail;
	j->h = h;
	j->errbuf[0] = '\0';
	curl_easy_setopt(h, CURLOPT_URL, url);
	free(url);
	curl_easy_setopt(h, CURLOPT_PRIVATE, j);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, j->errbuf);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)f->o.timeout_ms);
	/* a stall is timed by check_deadlines(), not by curl's low-speed
	 * check: that one averages the speed over the last 5 s, so a
	 * transfer stalled after some bytes ran for timeout + ~5 s */
	/* redirects and errors are relayed to the client as they are */
	curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, j);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, j);
	/* 64 KiB a transfer, not 16: a quarter of the callbacks, store
	 * calls and reader wakeups (goblind's fill CPU -17%; 256 KiB did
	 * worse) */
	curl_easy_setopt(h, CURLOPT_BUFFERSIZE, 64L << 10);
	/* the body is stored as the origin sent it, encoding and all */
	curl_easy_setopt(h, CURLOPT_HTTP_CONTENT_DECODING, 0L);
	curl_easy_setopt(h, CURLOPT_HTTP_TRANSFER_DECODING, 1L);
	j->hdrs = curl_slist_append(NULL, "Expect:");
	if (!j->hdrs)
		goto fail;
	if (j->forward) {
		curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, j->fwd.method);
		if (j->fwd.body || strcmp(j->fwd.method, "DELETE")) {
			curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE,
					 (curl_off_t)j->fwd.body_len);
			curl_easy_setopt(h, CURLOPT_POSTFIELDS,
					 j->fwd.body ? j->fwd.body : "");
		}
		if (j->fwd.ctype) {
			char line[HTTP_ATTR_CTYPE_MAX + 32];
			int len = (int)(j->fwd.ctype_len < HTTP_ATTR_CTYPE_MAX
						? j->fwd.ctype_len
						: HTTP_ATTR_CTYPE_MAX);

			snprintf(line, sizeof(line), "Content-Type: %.*s", len,
				 j->fwd.ctype);
			if (!curl_slist_append(j->hdrs, line))
				goto fail;
		}
	} else if (j->conditional) {
		char line[HTTP_ATTR_ETAG_MAX + 32];

		if (j->stale.etag_len) {
			snprintf(line, sizeof(line), "If-None-Match: %.*s",
				 (int)j->stale.etag_len, j->stale.etag);
			if (!curl_slist_append(j->hdrs, line))
				goto fail;
		}
		if (j->stale.last_modified) {
			char date[HTTP_DATE_LEN + 1];

			http_date_format(j->stale.last_modified, date);
			snprintf(line, sizeof(line), "If-Modified-Since: %s",
				 date);
			if (!curl_slist_append(j->hdrs, line))
				goto fail;
		}
	}
	if (j->auth) {
		char *line = malloc(j->auth_len + 32);

		if (!line)
			goto fail;
		snprintf(line, j->auth_len + 32, "Authorization: %.*s",
			 (int)j->auth_len, j->auth);
		if (!curl_slist_append(j->hdrs, line)) {
			free(line);
			goto fail;
		}
		free(line);
	}
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, j->hdrs);
	return 0;
fail:
	if (h)
		curl_easy_cleanup(h);
	j->h = NULL;
	return -ENOMEM;
}

static void job_release_handle(struct job *j)
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

static void list_remove(struct job **head, struct job *j)
{
	for (struct job **p = head; *p; p = &(*p)->pnext)
		if (*p == j) {
			*p = j->pnext;
			return;
		}
}

static void job_free(struct job *j)
{
	job_release_handle(j);
	free(j->key);
	free(j->auth);
	free(j->cc);
	free(j);
}

/* Start @j's transfer. */
static void job_start(struct job *j)
{
	struct fshard *f = j->f;

	j->state = JOB_HEAD;
	j->status = 0;
	j->request_time = time(NULL);
	j->deadline_ms = now_ms() + f->o.timeout_ms;
	if (job_handle(j) < 0 || curl_multi_add_handle(f->multi, j->h)) {
		job_release_handle(j);
		STAT(f, origin_errors);
		pthread_mutex_lock(&f->lock);
		table_remove(f, j);
		unkick(f, j);
		pthread_mutex_unlock(&f->lock);
		reply_all(j, 502, "origin unreachable: cannot start a request");
		job_free(j);
		return;
	}
	STAT(f, origin_requests);
	if (j->conditional)
		STAT(f, revalidations);
	j->pnext = f->active;
	f->active = j;
	f->nactive++;
}

/* ---- the response head ---- */

static bool name_is(const char *line, size_t nlen, const char *name)
{
	return strlen(name) == nlen && strncasecmp(line, name, nlen) == 0;
}

/* Split "Name: value" (no CRLF) into its parts, value trimmed. */
static bool header_split(const char *line, size_t len, size_t *nlen,
			 const char **v, size_t *vlen)
{
	const char *colon = memchr(line, ':', len);
	const char *e = line + len;

	if (!colon || colon == line)
		return false;
	*nlen = (size_t)(colon - line);
	*v = colon + 1;
	while (*v < e && (**v == ' ' || **v == '\t'))
		(*v)++;
	while (e > *v && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	*vlen = (size_t)(e - *v);
	return true;
}

/* Headers passed through with a stored response, and with relayed ones. */
static const char *const keep_stored[] = {
	"Cache-Control", "Content-Encoding", "Content-Disposition",
	"Content-Language", "Expires", NULL,
};
static const char *const keep_passed[] = {
	"Location", "Set-Cookie", "WWW-Authenticate", "Retry-After",
	"Allow", "Vary", "Content-Range", NULL,
};

static const char *kept_name(const char *line, size_t nlen, bool pass)
{
	for (int i = 0; keep_stored[i]; i++)
		if (name_is(line, nlen, keep_stored[i]))
			return keep_stored[i];
	for (int i = 0; pass && keep_passed[i]; i++)
		if (name_is(line, nlen, keep_passed[i]))
			return keep_passed[i];
	return NULL;
}

/* Append "Name: value\r\n" to @a's extra lines when it fits. */
static void extra_add(struct http_attr *a, const char *name, const char *v,
		      size_t vlen)
{
	size_t need = strlen(name) + 2 + vlen + 2;

	if (need > HTTP_ATTR_EXTRA_MAX - a->extra_len)
		return;		/* dropped: the record has a fixed room */
	a->extra_len += (size_t)snprintf(a->extra + a->extra_len,
					 HTTP_ATTR_EXTRA_MAX - a->extra_len + 1,
					 "%s: ", name);
	memcpy(a->extra + a->extra_len, v, vlen);
	a->extra_len += vlen;
	memcpy(a->extra + a->extra_len, "\r\n", 2);
	a->extra_len += 2;
}

/* Call @fn for each header line of @j's final response head. */
static void head_each(struct job *j,
		      void (*fn)(void *arg, const char *line, size_t nlen,
				 const char *v, size_t vlen),
		      void *arg)
{
	const char *p = j->head, *end = j->head + j->head_len;

	/* the status line first */
	p = memchr(p, '\n', (size_t)(end - p));
	while (p && ++p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		const char *v;
		size_t nlen, vlen;

		if (len && p[len - 1] == '\r')
			len--;
		if (header_split(p, len, &nlen, &v, &vlen))
			fn(arg, p, nlen, v, vlen);
		p = nl;
	}
}

struct head_info {
	struct http_resp_info ri;
	struct http_attr a;
	bool pass;		/* keep the relayed-only headers too */
	bool has_etag, has_lm, has_ctype;
	uint64_t clen;		/* Content-Length, GS_SIZE_UNKNOWN: none */
	bool chunked;
};

static void head_line(void *arg, const char *line, size_t nlen, const char *v,
		      size_t vlen)
{
	struct head_info *hi = arg;
	const char *kept = kept_name(line, nlen, hi->pass);
	int64_t t;

	if (name_is(line, nlen, "Cache-Control")) {
		http_cc_parse(&hi->ri.cc, v, vlen);
	} else if (name_is(line, nlen, "Date")) {
		if (http_date_parse(v, vlen, &t) == 0)
			hi->ri.date = t;
	} else if (name_is(line, nlen, "Expires")) {
		hi->ri.expires = http_date_parse(v, vlen, &t) == 0 ? t : 0;
	} else if (name_is(line, nlen, "Last-Modified")) {
		if (http_date_parse(v, vlen, &t) == 0) {
			hi->ri.last_modified = t;
			hi->a.last_modified = t;
			hi->has_lm = true;
			hi->ri.has_validator = true;
		}
	} else if (name_is(line, nlen, "Age")) {
		char num[24];

		if (vlen && vlen < sizeof(num)) {
			memcpy(num, v, vlen);
			num[vlen] = '\0';
			hi->ri.age = strtoll(num, NULL, 10);
			if (hi->ri.age < 0)
				hi->ri.age = 0;
		}
	} else if (name_is(line, nlen, "Set-Cookie")) {
		hi->ri.has_set_cookie = true;
	} else if (name_is(line, nlen, "Vary")) {
		if (vlen)
			hi->ri.has_vary = true;
		if (memchr(v, '*', vlen))
			hi->ri.vary_star = true;
	} else if (name_is(line, nlen, "ETag")) {
		hi->ri.has_validator = true;
		if (vlen <= HTTP_ATTR_ETAG_MAX) {
			memcpy(hi->a.etag, v, vlen);
			hi->a.etag_len = vlen;
			hi->has_etag = true;
		}
	} else if (name_is(line, nlen, "Pragma")) {
		if (vlen >= 8 && strncasecmp(v, "no-cache", 8) == 0)
			hi->ri.has_pragma_no_cache = true;
	} else if (name_is(line, nlen, "Content-Type")) {
		size_t n = vlen < HTTP_ATTR_CTYPE_MAX ? vlen
						      : HTTP_ATTR_CTYPE_MAX;

		memcpy(hi->a.ctype, v, n);
		hi->a.ctype_len = n;
		hi->has_ctype = true;
	} else if (name_is(line, nlen, "Content-Length")) {
		char num[24];
		char *e;

		if (vlen && vlen < sizeof(num)) {
			memcpy(num, v, vlen);
			num[vlen] = '\0';
			hi->clen = strtoull(num, &e, 10);
			if (*e || num[0] == '-')
				hi->clen = GS_SIZE_UNKNOWN;
		}
	} else if (name_is(line, nlen, "Transfer-Encoding")) {
		hi->chunked = true;
	}
	if (kept)
		extra_add(&hi->a, kept, v, vlen);
}

/* Parse @j's response head into @hi. */
static void head_parse(struct job *j, struct head_info *hi, bool pass)
{
	memset(hi, 0, sizeof(*hi));
	http_resp_info_init(&hi->ri);
	http_attr_init(&hi->a);
	hi->pass = pass;
	hi->clen = GS_SIZE_UNKNOWN;
	hi->ri.status = j->status;
	hi->a.status = (uint16_t)j->status;
	hi->a.flags = HTTP_ATTR_ORIGIN;
	head_each(j, head_line, hi);
	if (hi->chunked)
		hi->clen = GS_SIZE_UNKNOWN;
	/* no body, whatever Content-Length says */
	if (j->status == 204 || j->status == 304 || j->status < 200)
		hi->clen = 0;
}

static void attr_freshness(struct http_attr *a,
			   const struct http_store_decision *d)
{
	a->age_base = d->age_base;
	/* 0 would mean "always fresh" */
	a->fresh_until = d->fresh_until ? d->fresh_until : 1;
	a->flags &= (uint8_t)~(HTTP_ATTR_REVALIDATE | HTTP_ATTR_NO_CACHE);
	if (d->must_revalidate)
		a->flags |= HTTP_ATTR_REVALIDATE;
	if (d->revalidate_always)
		a->flags |= HTTP_ATTR_NO_CACHE;
}

static void decide(struct job *j, const struct http_resp_info *ri,
		   struct http_store_decision *d)
{
	struct http_req_info q;

	memset(&q, 0, sizeof(q));
	http_cc_init(&q.cc);
	q.authorization = j->auth != NULL;
	if (j->cc)
		http_cc_parse(&q.cc, j->cc, j->cc_len);
	http_store_decide(&q, ri, j->request_time, time(NULL), d);
}

/* Begin the writer under the private key. */
static int begin_pass(struct job *j, const struct http_attr *a, uint64_t size)
{
	uint8_t rec[GS_ATTR_MAX];
	long alen = http_attr_encode(a, rec, sizeof(rec));
	struct gs_put_args args = {
		.size = size, .attr = rec, .attr_len = alen > 0 ? (size_t)alen : 0,
		.fill = true,
	};
	uint64_t seq = atomic_fetch_add(&pass_seq, 1) + 1;

	memcpy(j->rkey, PASS_PREFIX, PASS_PREFIX_LEN);
	j->rklen = PASS_PREFIX_LEN +
		   (size_t)snprintf(j->rkey + PASS_PREFIX_LEN,
				    sizeof(j->rkey) - PASS_PREFIX_LEN,
				    "%" PRIu64, seq);
	j->pass = true;
	return gs_put_begin(j->f->s, j->rkey, j->rklen, &args, &j->w);
}

/* A 304 to our conditional request: refresh the stored version. */
static int head_not_modified(struct job *j)
{
	struct fshard *f = j->f;
	struct http_store_decision d;
	struct head_info hi;
	struct http_attr a = j->stale;
	uint8_t rec[GS_ATTR_MAX];
	long alen;
	int ret;

	head_parse(j, &hi, false);
	hi.ri.status = 200;	/* what the 304 stands for */
	hi.ri.has_validator = true;
	if (!hi.ri.last_modified)
		hi.ri.last_modified = a.last_modified;
	decide(j, &hi.ri, &d);
	if (d.why != HTTP_STORE_OK) {
		/*
		 * The origin says the stored response is current but may not
		 * be stored any more: serve it this once, then drop it.
		 */
		deliver(j, j->key, j->klen, FETCH_OBJECT, 0);
		gs_delete(f->s, j->key, j->klen);
		STAT(f, not_modified);
		return 0;
	}
	/* RFC 9111 §4.3.4: the 304's header fields replace the stored ones */
	attr_freshness(&a, &d);
	if (hi.has_etag) {
		memcpy(a.etag, hi.a.etag, hi.a.etag_len);
		a.etag_len = hi.a.etag_len;
	}
	if (hi.has_lm)
		a.last_modified = hi.a.last_modified;
	if (hi.a.extra_len) {
		struct http_attr merged = a;
		const char *p = a.extra, *end = a.extra + a.extra_len;

		merged.extra_len = 0;
		while (p < end) {
			const char *nl = memchr(p, '\n', (size_t)(end - p));
			size_t len = nl ? (size_t)(nl - p + 1) : (size_t)(end - p);
			const char *colon = memchr(p, ':', len);
			bool replaced = false;

			for (const char *q = hi.a.extra;
			     colon && q < hi.a.extra + hi.a.extra_len;) {
				size_t nlen = (size_t)(colon - p);

				if (strncasecmp(q, p, nlen) == 0 &&
				    q[nlen] == ':')
					replaced = true;
				q = memchr(q, '\n', (size_t)(hi.a.extra +
						     hi.a.extra_len - q));
				if (!q)
					break;
				q++;
			}
			if (!replaced && len <= HTTP_ATTR_EXTRA_MAX -
						    merged.extra_len) {
				memcpy(merged.extra + merged.extra_len, p, len);
				merged.extra_len += len;
			}
			p += len;
		}
		if (hi.a.extra_len <= HTTP_ATTR_EXTRA_MAX - merged.extra_len) {
			memcpy(merged.extra + merged.extra_len, hi.a.extra,
			       hi.a.extra_len);
			merged.extra_len += hi.a.extra_len;
		}
		a = merged;
	}
	alen = http_attr_encode(&a, rec, sizeof(rec));
	ret = alen < 0 ? -EINVAL
		       : gs_set_attr(f->s, j->key, j->klen, j->stale_cas, rec,
				     (size_t)alen, 0);
	if (ret == -ESTALE || ret == -ENOENT) {
		/* replaced or gone meanwhile: ask again, unconditionally */
		j->restart = true;
		return -1;
	}
	STAT(f, not_modified);
	deliver(j, j->key, j->klen, FETCH_OBJECT, 0);
	return 0;
}

/*
 * The final response head is in: decide where its body goes and give the
 * waiters their readers.  Returns 0, or -1 to stop the transfer.
 */
static int head_done(struct job *j)
{
	struct fshard *f = j->f;
	struct http_store_decision d;
	struct head_info hi;
	int ret;

	j->state = JOB_BODY;
	j->deadline_ms = now_ms() + f->o.timeout_ms;
	if (!j->forward && j->conditional && j->status == 304)
		return head_not_modified(j);
	head_parse(j, &hi, j->forward || j->status != 200);
	if (j->forward && j->status >= 200 && j->status < 400)
		gs_delete(f->s, j->key, j->klen);	/* invalidated */
	if (!j->forward && j->conditional &&
	    ((j->status >= 200 && j->status < 300) || j->status == 404 ||
	     j->status == 410))
		gs_delete(f->s, j->key, j->klen);	/* no longer current */
	j->size = hi.clen;
	if (!j->forward) {
		decide(j, &hi.ri, &d);
		if (d.why == HTTP_STORE_OK && j->status == 200) {
			attr_freshness(&hi.a, &d);
			j->storable = true;
		}
	}
	if (j->storable && hi.clen != GS_SIZE_UNKNOWN &&
	    hi.clen <= f->o.max_object) {
		uint8_t rec[GS_ATTR_MAX];
		long alen = http_attr_encode(&hi.a, rec, sizeof(rec));
		struct gs_put_args args = {
			.size = hi.clen, .attr = rec,
			.attr_len = alen > 0 ? (size_t)alen : 0, .fill = true,
		};

		ret = gs_put_begin(f->s, j->key, j->klen, &args, &j->w);
		if (ret == 0) {
			/* a live older version would hide the fill */
			gs_delete(f->s, j->key, j->klen);
			goto readers;
		}
		/* -ENOSPC, -EFBIG, -EEXIST (someone else fills it): pass */
		j->storable = false;
	}
	if (hi.clen != GS_SIZE_UNKNOWN)
		j->storable = false;	/* too large to store */
	if (!j->storable && !j->forward && unpublish_if_unwanted(j)) {
		j->drop = true;		/* nobody wants it and we keep none */
		return -1;
	}
	if (!j->storable && !j->forward && j->status == 200)
		head_parse(j, &hi, true);	/* relayed: Set-Cookie too */
	ret = begin_pass(j, &hi.a, hi.clen);
	if (ret < 0) {
		STAT(f, passed);
		j->w = NULL;
		unpublish(j);	/* joiners start a fetch of their own */
		reply_all(j, 502, "cannot relay the origin's response: %s",
			  gs_strerror(ret));
		j->drop = true;
		return -1;
	}
	if (hi.clen == GS_SIZE_UNKNOWN)
		j->late = true;	/* stored or passed: known at the end */
	else
		STAT(f, passed);
readers:
	pthread_mutex_lock(&f->lock);
	j->delivered = true;
	pthread_mutex_unlock(&f->lock);
	deliver_current(j);
	return 0;
}

static size_t on_header(char *p, size_t one, size_t n, void *arg)
{
	struct job *j = arg;

	(void)one;
	if (j->state != JOB_HEAD)
		return n;	/* trailers */
	if (n > HEAD_MAX - j->head_len)
		return 0;	/* a head this large is a bad response */
	if (!j->head && !(j->head = malloc(HEAD_MAX)))
		return 0;
	if (j->head_len == 0) {	/* the status line */
		int st = 0;

		if (n < 12 || strncmp(p, "HTTP/", 5) ||
		    sscanf(p, "HTTP/%*s %d", &st) != 1 || st < 100 ||
		    st > 999)
			return 0;
		j->status = st;
	}
	if ((n == 2 && p[0] == '\r' && p[1] == '\n') ||
	    (n == 1 && p[0] == '\n')) {
		if (j->status < 200) {	/* 100 Continue and the like */
			j->head_len = 0;
			return n;
		}
		return head_done(j) < 0 ? 0 : n;
	}
	memcpy(j->head + j->head_len, p, n);
	j->head_len += n;
	return n;
}

static size_t on_body(char *p, size_t one, size_t n, void *arg)
{
	struct job *j = arg;
	struct fshard *f = j->f;

	(void)one;
	STAT_ADD(f, origin_bytes, n);
	if (n)
		j->deadline_ms = now_ms() + f->o.timeout_ms;
	if (!j->w)
		return n;	/* a 304: nothing should come */
	if (j->storable && j->late && j->got + n > f->o.max_object)
		j->storable = false;	/* passed whole, not stored */
	if (gs_put_write(j->w, p, n) < 0)
		return 0;	/* stops the transfer */
	j->got += n;
	return n;
}

/* ---- the end of a transfer ---- */

static void job_finish(struct job *j)
{
	struct fshard *f = j->f;

	list_remove(&f->active, j);
	f->nactive--;
	pthread_mutex_lock(&f->lock);
	table_remove(f, j);
	unkick(f, j);
	pthread_mutex_unlock(&f->lock);
}

/* A transfer that failed before its head. */
static void fail_head(struct job *j, CURLcode rc)
{
	struct fshard *f = j->f;

	if (rc == CURLE_OPERATION_TIMEDOUT) {
		STAT(f, origin_timeouts);
		reply_all(j, 504, "origin timed out: %s",
			  j->errbuf[0] ? j->errbuf : curl_easy_strerror(rc));
	} else if (rc == CURLE_COULDNT_CONNECT ||
		   rc == CURLE_COULDNT_RESOLVE_HOST ||
		   rc == CURLE_COULDNT_RESOLVE_PROXY ||
		   rc == CURLE_SSL_CONNECT_ERROR) {
		STAT(f, origin_errors);
		reply_all(j, 502, "origin unreachable: %s",
			  j->errbuf[0] ? j->errbuf : curl_easy_strerror(rc));
	} else {
		STAT(f, origin_errors);
		reply_all(j, 502, "bad response from the origin: %s",
			  j->errbuf[0] ? j->errbuf : curl_easy_strerror(rc));
	}
}

/* Restart @j as an unconditional request (a 304 raced a replace). */
static void job_restart(struct job *j)
{
	struct fshard *f = j->f;

	job_release_handle(j);
	j->conditional = false;
	j->restart = false;
	list_remove(&f->active, j);
	f->nactive--;
	job_start(j);
}

static void job_done(struct job *j, CURLcode rc)
{
	struct fshard *f = j->f;

	if (j->restart) {
		job_restart(j);
		return;
	}
	if (rc == CURLE_OK && j->state != JOB_BODY) {
		/* a response without a head end: cannot be */
		rc = CURLE_WEIRD_SERVER_REPLY;
	}
	job_finish(j);
	if (j->state != JOB_BODY) {
		fail_head(j, rc);
	} else if (j->drop) {
		if (j->w)
			gs_put_abort(j->w);
		j->w = NULL;
	} else if (rc != CURLE_OK || !j->w) {
		if (rc != CURLE_OK) {
			if (rc == CURLE_OPERATION_TIMEDOUT)
				STAT(f, origin_timeouts);
			else
				STAT(f, origin_errors);
		}
		if (j->w) {
			STAT(f, aborted_fills);	/* before readers learn it */
			gs_put_abort(j->w);
			j->w = NULL;
		}
		if (rc != CURLE_OK)
			reply_all(j, rc == CURLE_OPERATION_TIMEDOUT ? 504 : 502,
				  "origin transfer failed: %s",
				  j->errbuf[0] ? j->errbuf
					       : curl_easy_strerror(rc));
		else
			deliver(j, j->key, j->klen, FETCH_OBJECT, 0); /* 304 */
	} else {
		int ret = gs_put_commit(j->w, NULL);

		j->w = NULL;
		if (ret < 0) {
			STAT(f, aborted_fills);
			reply_all(j, 502, "cannot keep the origin's response: %s",
				  gs_strerror(ret));
		} else if (j->late && j->storable &&
			   gs_rename(f->s, j->rkey, j->rklen, j->key,
				     j->klen) == 0) {
			STAT(f, stored);
			deliver(j, j->key, j->klen, FETCH_OBJECT, 0);
		} else {
			if (j->late)
				STAT(f, passed);
			else if (!j->pass)
				STAT(f, stored);
			deliver_current(j);
		}
		if (j->pass)	/* readers pin their version */
			gs_delete(f->s, j->rkey, j->rklen);
	}
	if (j->forward)
		STAT(f, forwarded);
	job_free(j);
}

/* ---- the thread ---- */

static void start_pending(struct fshard *f)
{
	while (f->pending && (!f->o.max_transfers ||
			      f->nactive < f->o.max_transfers)) {
		struct job *j = f->pending;

		f->pending = j->pnext;
		job_start(j);
	}
}

/*
 * Give transfers past their deadline 504: no head within the timeout, or
 * a body that stalled for it.  Returns the ms to the next deadline.
 */
static long check_deadlines(struct fshard *f)
{
	int64_t now = now_ms();
	long next = 1000;
	struct job *j, *jn;

	for (j = f->active; j; j = jn) {
		jn = j->pnext;
		if (j->deadline_ms <= now && j->state == JOB_HEAD) {
			snprintf(j->errbuf, sizeof(j->errbuf),
				 "no response head within %u ms",
				 f->o.timeout_ms);
			job_finish(j);
			fail_head(j, CURLE_OPERATION_TIMEDOUT);
			job_free(j);
		} else if (j->deadline_ms <= now) {
			snprintf(j->errbuf, sizeof(j->errbuf),
				 "no body bytes for %u ms", f->o.timeout_ms);
			j->restart = false;
			job_done(j, CURLE_OPERATION_TIMEDOUT);
		} else if (j->deadline_ms - now < next) {
			next = (long)(j->deadline_ms - now);
		}
	}
	return next;
}

static void take_queues(struct fshard *f, struct job **inc, struct job **kick,
			bool *stop)
{
	pthread_mutex_lock(&f->lock);
	*inc = f->incoming;
	f->incoming = NULL;
	*kick = NULL;
	while (f->kicked) {	/* to a private list, flags cleared */
		struct job *j = f->kicked;

		f->kicked = j->qnext;
		j->kicked = false;
		if (j->delivered) {
			j->qnext = *kick;
			*kick = j;
		}
	}
	*stop = f->stopping;
	pthread_mutex_unlock(&f->lock);
}

/* fetcher_free: every job ends, every waiter gets 502. */
static void shutdown_all(struct fshard *f)
{
	struct job *j, *inc, *kick;
	bool stop;

	take_queues(f, &inc, &kick, &stop);
	for (j = inc; j; j = inc) {	/* never started */
		inc = j->qnext;
		j->pnext = f->pending;
		f->pending = j;
	}
	while ((j = f->pending)) {
		f->pending = j->pnext;
		pthread_mutex_lock(&f->lock);
		table_remove(f, j);
		pthread_mutex_unlock(&f->lock);
		reply_all(j, 502, "origin fetcher stopped");
		job_free(j);
	}
	while ((j = f->active)) {
		job_finish(j);
		if (j->w) {
			STAT(f, aborted_fills);	/* before readers learn it */
			gs_put_abort(j->w);
			j->w = NULL;
		}
		reply_all(j, 502, "origin fetcher stopped");
		job_free(j);
	}
}

static void *fetcher_main(void *arg)
{
	struct fshard *f = arg;

	for (;;) {
		struct job *inc, *kick, *j;
		bool stop;
		int running;
		long wait;
		CURLMsg *m;

		take_queues(f, &inc, &kick, &stop);
		if (stop) {
			/* put what was taken back for shutdown_all */
			pthread_mutex_lock(&f->lock);
			f->incoming = inc;
			pthread_mutex_unlock(&f->lock);
			break;
		}
		while ((j = inc)) {	/* FIFO: reverse the LIFO list */
			inc = j->qnext;
			j->pnext = NULL;
			struct job **p = &f->pending;

			while (*p)
				p = &(*p)->pnext;
			*p = j;
		}
		for (j = kick; j; j = j->qnext)
			deliver_current(j);
		start_pending(f);
		curl_multi_perform(f->multi, &running);
		while ((m = curl_multi_info_read(f->multi, &running))) {
			struct job *dj = NULL;

			if (m->msg != CURLMSG_DONE)
				continue;
			curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE,
					  (char **)&dj);
			job_done(dj, m->data.result);
		}
		start_pending(f);
		wait = check_deadlines(f);
		curl_multi_poll(f->multi, NULL, 0, (int)(wait > 0 ? wait : 1),
				NULL);
	}
	shutdown_all(f);
	return NULL;
}

/* ---- the API ---- */

/* Private keys a crash left behind: nobody can read them. */
static int sweep_one(void *arg, const void *key, size_t klen,
		     const struct gs_meta *m)
{
	(void)m;
	gs_delete(arg, key, klen);
	return 0;
}

static struct fshard *shard_new(struct gs_store *s,
				const struct fetch_opts *o, char *err,
				size_t errlen)
{
	struct fshard *f;
	size_t n;

	if (!o->origin || (strncmp(o->origin, "http://", 7) &&
			   strncmp(o->origin, "https://", 8))) {
		snprintf(err, errlen, "origin URL '%s' is not http(s)://",
			 o->origin ? o->origin : "");
		return NULL;
	}
	if (curl_global_init(CURL_GLOBAL_DEFAULT)) {
		snprintf(err, errlen, "cannot initialise libcurl");
		return NULL;
	}
	f = calloc(1, sizeof(*f));
	if (!f || !(f->base = strdup(o->origin)) ||
	    !(f->multi = curl_multi_init())) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	n = strlen(f->base);
	while (n > 0 && f->base[n - 1] == '/')
		f->base[--n] = '\0';
	f->s = s;
	f->o = *o;
	f->o.origin = f->base;
	if (!f->o.timeout_ms)
		f->o.timeout_ms = 10000;
	pthread_mutex_init(&f->lock, NULL);
	if (pthread_create(&f->thread, NULL, fetcher_main, f)) {
		snprintf(err, errlen, "cannot start the fetcher thread");
		pthread_mutex_destroy(&f->lock);
		goto fail;
	}
	return f;
fail:
	if (f) {
		if (f->multi)
			curl_multi_cleanup(f->multi);
		free(f->base);
		free(f);
	}
	return NULL;
}

static void shard_free(struct fshard *f)
{
	if (!f)
		return;
	pthread_mutex_lock(&f->lock);
	f->stopping = true;
	pthread_mutex_unlock(&f->lock);
	curl_multi_wakeup(f->multi);
	pthread_join(f->thread, NULL);
	curl_multi_cleanup(f->multi);
	pthread_mutex_destroy(&f->lock);
	free(f->base);
	free(f);
}

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
	return 0;
}

static int shard_get(struct fshard *f, const char *key, size_t klen,
		     uint64_t hash, const struct gs_meta *stale,
		     const struct fetch_req *req, struct fetch_waiter *fw)
{
	bool private = req && req->authorization;
	struct job *j, *nj = NULL;

	if (klen == 0 || klen > GS_KEY_MAX)
		return -EINVAL;
	fw->next = NULL;
	fw->job = NULL;
	fw->r = NULL;
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
		if (stale && http_attr_decode(stale->attr, stale->attr_len,
					      &nj->stale) == 0 &&
		    (nj->stale.etag_len || nj->stale.last_modified)) {
			nj->conditional = true;
			nj->stale_cas = stale->cas;
		}
		pthread_mutex_lock(&f->lock);
	}
	waiter_add(nj, fw);
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

static int shard_forward(struct fshard *f, const char *key, size_t klen,
			 const struct fetch_forward *fwd,
			 struct fetch_waiter *fw)
{
	struct job *j;

	if (klen == 0 || klen > GS_KEY_MAX || !fwd->method)
		return -EINVAL;
	j = job_new(f, key, klen);
	if (!j)
		return -ENOMEM;
	j->forward = true;
	j->fwd = *fwd;
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

static bool shard_cancel(struct fshard *f, struct fetch_waiter *fw)
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

static void shard_stats(struct fshard *f, struct fetch_stats *out)
{
	uint64_t *o = (uint64_t *)out;

	for (size_t i = 0; i < sizeof(*out) / sizeof(uint64_t); i++)
		o[i] = atomic_load(&f->st[i]);
}

/* ---- the fetcher: its shards ---- */

struct fetcher {
	unsigned n;
	struct fshard *sh[FETCH_THREADS_MAX];
};

struct fetcher *fetcher_new(struct gs_store *s, const struct fetch_opts *o,
			    char *err, size_t errlen)
{
	struct fetcher *f = calloc(1, sizeof(*f));
	struct fetch_opts so = *o;

	if (!f) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	f->n = o->threads ? o->threads : 1;
	if (f->n > FETCH_THREADS_MAX)
		f->n = FETCH_THREADS_MAX;
	so.max_transfers = o->max_transfers / f->n ? o->max_transfers / f->n
						   : 1;
	/* before any shard runs: their private keys are all new */
	gs_iterate(s, PASS_PREFIX, PASS_PREFIX_LEN, sweep_one, s);
	for (unsigned i = 0; i < f->n; i++) {
		char name[16];

		if (!(f->sh[i] = shard_new(s, &so, err, errlen))) {
			fetcher_free(f);
			return NULL;
		}
		snprintf(name, sizeof(name), "goblind-f%u", i % 100);
		pthread_setname_np(f->sh[i]->thread, name);
	}
	return f;
}

void fetcher_free(struct fetcher *f)
{
	if (!f)
		return;
	for (unsigned i = 0; i < f->n; i++)
		shard_free(f->sh[i]);
	free(f);
}

int fetcher_get(struct fetcher *f, const char *key, size_t klen,
		const struct gs_meta *stale, const struct fetch_req *req,
		struct fetch_waiter *fw)
{
	uint64_t hash = XXH3_64bits(key, klen);

	fw->shard = (unsigned)(hash % f->n);
	return shard_get(f->sh[fw->shard], key, klen, hash, stale, req, fw);
}

int fetcher_forward(struct fetcher *f, const char *key, size_t klen,
		    const struct fetch_forward *fwd, struct fetch_waiter *fw)
{
	fw->shard = (unsigned)(XXH3_64bits(key, klen) % f->n);
	return shard_forward(f->sh[fw->shard], key, klen, fwd, fw);
}

bool fetcher_cancel(struct fetcher *f, struct fetch_waiter *fw)
{
	return shard_cancel(f->sh[fw->shard], fw);
}

void fetcher_stats(struct fetcher *f, struct fetch_stats *out)
{
	uint64_t *o = (uint64_t *)out;

	memset(out, 0, sizeof(*out));
	for (unsigned i = 0; i < f->n; i++) {
		struct fetch_stats one;
		const uint64_t *p = (const uint64_t *)&one;

		shard_stats(f->sh[i], &one);
		for (size_t k = 0; k < sizeof(*out) / sizeof(uint64_t); k++)
			o[k] += p[k];
	}
}
