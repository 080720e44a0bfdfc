/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The origin fetcher (see origin.h; internal.h names its rooms): a few
 * shards, each a thread driving a libcurl multi handle over the keys that
 * hash to it; responses stream into store fills that the waiting clients
 * read while they arrive.  This room: the threads and their multi loop,
 * the origin request, the end of a transfer, and the public functions.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <xxhash.h>

#include "internal.h"

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

/* ---- the origin request ---- */

static bool field_is(const char *name, size_t nlen, const char *lit)
{
	return nlen == strlen(lit) && !strncasecmp(name, lit, nlen);
}

/* Is @name among the comma-separated tokens of @v (@vlen bytes)? */
static bool list_has(const char *v, size_t vlen, const char *name, size_t nlen)
{
	const char *end = v + vlen;

	while (v < end) {
		const char *comma = memchr(v, ',', (size_t)(end - v));
		const char *te = comma ? comma : end;

		while (v < te && (*v == ' ' || *v == '\t'))
			v++;
		while (te > v && (te[-1] == ' ' || te[-1] == '\t'))
			te--;
		if ((size_t)(te - v) == nlen && !strncasecmp(v, name, nlen))
			return true;
		v = comma ? comma + 1 : end;
	}
	return false;
}

bool fetch_forwards_field(const char *name, size_t nlen, const char *conn,
			  size_t conn_len, bool pass)
{
	/* hop-by-hop (RFC 9110 sec. 7.6.1), and those libcurl writes */
	static const char *const never[] = {
		"connection",
		"keep-alive",
		"proxy-connection",
		"proxy-authorization",
		"proxy-authenticate",
		"te",
		"trailer",
		"transfer-encoding",
		"upgrade",
		"host",
		"content-length",
		"expect",
	};
	/* the cache evaluates these itself (RFC 9111 sec. 4.3.2) */
	static const char *const cached[] = {
		"if-match",	     "if-none-match",
		"if-modified-since", "if-unmodified-since",
		"if-range",	     "range",
	};

	for (size_t i = 0; i < sizeof(never) / sizeof(never[0]); i++)
		if (field_is(name, nlen, never[i]))
			return false;
	if (!pass)
		for (size_t i = 0; i < sizeof(cached) / sizeof(cached[0]); i++)
			if (field_is(name, nlen, cached[i]))
				return false;
	return !conn || !list_has(conn, conn_len, name, nlen);
}

/* One field line into @l: "Name: value", or "Name;" for an empty value
 * (libcurl's spelling; "Name:" would remove the field). */
static int append_field(struct curl_slist **l, const char *name, size_t nlen,
			const char *v, size_t vlen)
{
	char *line = malloc(nlen + vlen + 3);
	struct curl_slist *n;

	if (!line)
		return -ENOMEM;
	if (vlen)
		snprintf(line, nlen + vlen + 3, "%.*s: %.*s", (int)nlen, name,
			 (int)vlen, v);
	else
		snprintf(line, nlen + 2, "%.*s;", (int)nlen, name);
	n = curl_slist_append(*l, line);
	free(line);
	if (!n)
		return -ENOMEM;
	*l = n;
	return 0;
}

/* The field lines of @j's client request: calls @fn for each. */
static int each_field(const struct job *j,
		      int (*fn)(void *arg, const char *name, size_t nlen,
				const char *v, size_t vlen),
		      void *arg)
{
	const char *p = j->fields, *end = j->fields + j->fields_len;
	int ret;

	while (p && p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		const char *colon = memchr(p, ':', (size_t)(le - p));
		const char *v, *ve = le;

		if (colon) {
			v = colon + 1;
			while (v < ve && (*v == ' ' || *v == '\t'))
				v++;
			while (ve > v && (ve[-1] == '\r' || ve[-1] == ' ' ||
					  ve[-1] == '\t'))
				ve--;
			if ((ret = fn(arg, p, (size_t)(colon - p), v,
				      (size_t)(ve - v))))
				return ret;
		}
		p = le + 1;
	}
	return 0;
}

/* What add_fields collects over the client's field lines. */
struct fields_ctx {
	const struct job *j;
	struct curl_slist **l;
	char *conn; /* the Connection values, comma-joined */
	size_t conn_len;
	char *via, *xff; /* the client's Via, X-Forwarded-For, joined */
	size_t via_len, xff_len;
	bool accept;
};

static int join(char **s, size_t *len, const char *v, size_t vlen)
{
	char *n = realloc(*s, *len + vlen + 3);

	if (!n)
		return -ENOMEM;
	if (*len) {
		memcpy(n + *len, ", ", 2);
		*len += 2;
	}
	memcpy(n + *len, v, vlen);
	*len += vlen;
	n[*len] = '\0';
	*s = n;
	return 0;
}

static int collect_conn(void *arg, const char *name, size_t nlen, const char *v,
			size_t vlen)
{
	struct fields_ctx *x = arg;

	if (field_is(name, nlen, "connection"))
		return join(&x->conn, &x->conn_len, v, vlen);
	return 0;
}

static int add_one(void *arg, const char *name, size_t nlen, const char *v,
		   size_t vlen)
{
	struct fields_ctx *x = arg;
	const struct fshard *f = x->j->f;

	if (!fetch_forwards_field(name, nlen, x->conn, x->conn_len,
				  x->j->passreq || x->j->forward) ||
	    (x->j->no_auth && field_is(name, nlen, "authorization")))
		return 0;
	if (!f->o.no_via && field_is(name, nlen, "via"))
		return join(&x->via, &x->via_len, v, vlen);
	if (!f->o.no_xff && field_is(name, nlen, "x-forwarded-for"))
		return join(&x->xff, &x->xff_len, v, vlen);
	if (field_is(name, nlen, "accept"))
		x->accept = true;
	return append_field(x->l, name, nlen, v, vlen);
}

/*
 * The client's end-to-end fields into @l (see fetch_req), with Via and
 * X-Forwarded-For appended to.
 */
static int add_fields(struct job *j, struct curl_slist **l)
{
	struct fields_ctx x = { .j = j, .l = l };
	int ret;

	if ((ret = each_field(j, collect_conn, &x)) ||
	    (ret = each_field(j, add_one, &x)))
		goto out;
	/* libcurl would send an "Accept: any" of its own */
	if (!x.accept && j->fields && !curl_slist_append(*l, "Accept:")) {
		ret = -ENOMEM;
		goto out;
	}
	if (!j->f->o.no_via && j->fields &&
	    ((ret = join(&x.via, &x.via_len, "1.1 goblind", 11)) ||
	     (ret = append_field(l, "Via", 3, x.via, x.via_len))))
		goto out;
	if (!j->f->o.no_xff && j->client[0] &&
	    ((ret = join(&x.xff, &x.xff_len, j->client, strlen(j->client))) ||
	     (ret = append_field(l, "X-Forwarded-For", 15, x.xff, x.xff_len))))
		goto out;
	ret = 0;
out:
	free(x.conn);
	free(x.via);
	free(x.xff);
	return ret;
}

/* @j's origin URL: the client's target as it came, or its key encoded. */
static char *job_url(struct job *j, CURL *h)
{
	struct fshard *f = j->f;
	char *url;

	if (!j->target)
		return fetch_url(f->base, h, j->key, j->klen);
	/* the base has no trailing '/' and the target starts with one */
	url = malloc(strlen(f->base) + j->target_len + 1);
	if (url)
		sprintf(url, "%s%.*s", f->base, (int)j->target_len, j->target);
	return url;
}

static int job_handle(struct job *j)
{
	struct fshard *f = j->f;
	CURL *h = curl_easy_init();
	char *url = h ? job_url(j, h) : NULL;

	if (!url)
		goto fail;
	j->h = h;
	j->errbuf[0] = '\0';
	curl_easy_setopt(h, CURLOPT_URL, url);
	free(url);
	/* the target's bytes go as they came: no "/../" squashed */
	curl_easy_setopt(h, CURLOPT_PATH_AS_IS, 1L);
	curl_easy_setopt(h, CURLOPT_PRIVATE, j);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, j->errbuf);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)f->o.timeout_ms);
	/* a stall is timed by check_deadlines(), not by curl's low-speed
	 * check: that one averages the speed over the last 5 s, so a
	 * transfer stalled after some bytes ran for timeout + ~5 s */
	/* redirects and errors are relayed to the client as they are */
	curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, fetch_on_header);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, j);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, fetch_on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, j);
	/* 64 KiB a transfer, not 16: a quarter of the callbacks, store
	 * calls and reader wakeups (goblind's fill CPU -17%; 256 KiB did
	 * worse) */
	curl_easy_setopt(h, CURLOPT_BUFFERSIZE, 64L << 10);
	/* the body is stored as the origin sent it, encoding and all */
	curl_easy_setopt(h, CURLOPT_HTTP_CONTENT_DECODING, 0L);
	curl_easy_setopt(h, CURLOPT_HTTP_TRANSFER_DECODING, 1L);
	j->hdrs = curl_slist_append(NULL, "Expect:");
	/* a surrogate says so (Edge Architecture): Surrogate-Control ;goblin */
	if (!j->hdrs || !curl_slist_append(j->hdrs, HTTP_SC_CAPABILITY))
		goto fail;
	if (j->forward) {
		curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, j->fwd.method);
		/* a body goes when there is one; PUT and POST always
		 * have one, if empty */
		if (j->fwd.body || !strcmp(j->fwd.method, "PUT") ||
		    !strcmp(j->fwd.method, "POST")) {
			curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE,
					 (curl_off_t)j->fwd.body_len);
			curl_easy_setopt(h, CURLOPT_POSTFIELDS,
					 j->fwd.body ? j->fwd.body : "");
		}
		if (j->fwd.ctype && !j->fields) {
			char line[GS_ATTR_CTYPE_MAX + 32];
			int len = (int)(j->fwd.ctype_len < GS_ATTR_CTYPE_MAX ?
						j->fwd.ctype_len :
						GS_ATTR_CTYPE_MAX);

			snprintf(line, sizeof(line), "Content-Type: %.*s", len,
				 j->fwd.ctype);
			if (!curl_slist_append(j->hdrs, line))
				goto fail;
		}
	} else if (j->conditional) {
		char line[GS_ATTR_ETAG_MAX + 32];

		if (j->stale.etag_len) {
			snprintf(line, sizeof(line), "If-None-Match: %.*s",
				 (int)j->stale.etag_len, j->stale.etag);
			if (!curl_slist_append(j->hdrs, line))
				goto fail;
		}
		if (j->stale.last_modified) {
			char date[GS_HTTP_DATE_LEN + 1];

			gs_http_date_format(j->stale.last_modified, date);
			snprintf(line, sizeof(line), "If-Modified-Since: %s",
				 date);
			if (!curl_slist_append(j->hdrs, line))
				goto fail;
		}
	}
	if (add_fields(j, &j->hdrs) < 0)
		goto fail;
	if (j->auth && !j->fields) {
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

static void list_remove(struct job **head, struct job *j)
{
	for (struct job **p = head; *p; p = &(*p)->pnext)
		if (*p == j) {
			*p = j->pnext;
			return;
		}
}

/* Start @j's transfer. */
static void job_start(struct job *j)
{
	struct fshard *f = j->f;

	j->state = JOB_HEAD;
	j->status = 0;
	j->request_time = time(NULL);
	j->deadline_ms = gs_mono_ms() + f->o.timeout_ms;
	if (job_handle(j) < 0 || curl_multi_add_handle(f->multi, j->h)) {
		job_release_handle(j);
		STAT(f, origin_errors);
		pthread_mutex_lock(&f->lock);
		job_table_remove(f, j);
		job_unkick(f, j);
		pthread_mutex_unlock(&f->lock);
		if (!job_serve_stale(j))
			job_reply_all(j, 502,
				      "origin unreachable: cannot start a "
				      "request");
		job_free(j);
		return;
	}
	STAT(f, origin_requests);
	if (j->conditional)
		STAT(f, revalidations);
	if (j->background)
		STAT(f, background);
	j->pnext = f->active;
	f->active = j;
	f->nactive++;
}

/* ---- the end of a transfer ---- */

static void job_finish(struct job *j)
{
	struct fshard *f = j->f;

	list_remove(&f->active, j);
	f->nactive--;
	pthread_mutex_lock(&f->lock);
	job_table_remove(f, j);
	job_unkick(f, j);
	pthread_mutex_unlock(&f->lock);
}

/*
 * A transfer that failed before its head: the stale copy if one may be
 * served instead (stale-if-error), else 504 or 502.
 */
static void fail_head(struct job *j, CURLcode rc)
{
	struct fshard *f = j->f;

	if (rc == CURLE_OPERATION_TIMEDOUT)
		STAT(f, origin_timeouts);
	else
		STAT(f, origin_errors);
	if (job_serve_stale(j))
		return;
	if (rc == CURLE_OPERATION_TIMEDOUT) {
		job_reply_all(j, 504, "origin timed out: %s",
			      j->errbuf[0] ? j->errbuf :
					     curl_easy_strerror(rc));
	} else if (rc == CURLE_COULDNT_CONNECT ||
		   rc == CURLE_COULDNT_RESOLVE_HOST ||
		   rc == CURLE_COULDNT_RESOLVE_PROXY ||
		   rc == CURLE_SSL_CONNECT_ERROR) {
		job_reply_all(j, 502, "origin unreachable: %s",
			      j->errbuf[0] ? j->errbuf :
					     curl_easy_strerror(rc));
	} else {
		job_reply_all(j, 502, "bad response from the origin: %s",
			      j->errbuf[0] ? j->errbuf :
					     curl_easy_strerror(rc));
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
			STAT(f, aborted_fills); /* before readers learn it */
			gs_put_abort(j->w);
			j->w = NULL;
		}
		if (rc != CURLE_OK)
			job_reply_all(
				j, rc == CURLE_OPERATION_TIMEDOUT ? 504 : 502,
				"origin transfer failed: %s",
				j->errbuf[0] ? j->errbuf :
					       curl_easy_strerror(rc));
		else
			job_deliver(j, j->key, j->klen, FETCH_OBJECT,
				    0); /* 304 */
	} else {
		int ret = gs_put_commit(j->w, NULL);

		j->w = NULL;
		if (ret < 0) {
			STAT(f, aborted_fills);
			job_reply_all(j, 502,
				      "cannot keep the origin's response: %s",
				      gs_strerror(ret));
		} else if (j->late && j->storable &&
			   gs_rename(f->s, j->rkey, j->rklen, j->key,
				     j->klen) == 0) {
			STAT(f, stored);
			job_deliver(j, j->key, j->klen, FETCH_OBJECT, 0);
		} else {
			if (j->late)
				STAT(f, passed);
			else if (!j->pass)
				STAT(f, stored);
			job_deliver_current(j);
		}
		if (j->pass) /* readers pin their version */
			gs_delete(f->s, j->rkey, j->rklen);
	}
	if (j->forward)
		STAT(f, forwarded);
	job_free(j);
}

/* ---- the thread ---- */

static void start_pending(struct fshard *f)
{
	while (f->pending &&
	       (!f->o.max_transfers || f->nactive < f->o.max_transfers)) {
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
	int64_t now = gs_mono_ms();
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
	while (f->kicked) { /* to a private list, flags cleared */
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
	for (j = inc; j; j = inc) { /* never started */
		inc = j->qnext;
		j->pnext = f->pending;
		f->pending = j;
	}
	while ((j = f->pending)) {
		f->pending = j->pnext;
		pthread_mutex_lock(&f->lock);
		job_table_remove(f, j);
		pthread_mutex_unlock(&f->lock);
		job_reply_all(j, 502, "origin fetcher stopped");
		job_free(j);
	}
	while ((j = f->active)) {
		job_finish(j);
		if (j->w) {
			STAT(f, aborted_fills); /* before readers learn it */
			gs_put_abort(j->w);
			j->w = NULL;
		}
		job_reply_all(j, 502, "origin fetcher stopped");
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
		while ((j = inc)) { /* FIFO: reverse the LIFO list */
			inc = j->qnext;
			j->pnext = NULL;
			struct job **p = &f->pending;

			while (*p)
				p = &(*p)->pnext;
			*p = j;
		}
		for (j = kick; j; j = j->qnext)
			job_deliver_current(j);
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

static struct fshard *shard_new(struct gs_store *s, const struct fetch_opts *o,
				char *err, size_t errlen)
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

static void shard_stats(struct fshard *f, struct fetch_stats *out)
{
	uint64_t *o = (uint64_t *)out;

	for (size_t i = 0; i < sizeof(*out) / sizeof(uint64_t); i++)
		o[i] = atomic_load(&f->st[i]);
}

/* ---- the fetcher: its shards ---- */

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
	so.max_transfers = o->max_transfers / f->n ? o->max_transfers / f->n :
						     1;
	if (!so.max_header)
		so.max_header = FETCH_MAX_HEADER_DEFAULT;
	if (so.max_header > FETCH_MAX_HEADER_CEIL)
		so.max_header = FETCH_MAX_HEADER_CEIL; /* the record's room */
	if (!so.heuristic_pct)
		so.heuristic_pct = HTTP_HEURISTIC_PCT_DEFAULT;
	if (so.heuristic_pct > 100)
		so.heuristic_pct = 100;
	if (so.heuristic_max <= 0)
		so.heuristic_max = HTTP_HEURISTIC_MAX_DEFAULT;
	/* before any shard runs: their private keys are all new */
	gs_iterate(s, PASS_PREFIX, PASS_PREFIX_LEN, sweep_one, s);
	for (unsigned i = 0; i < f->n; i++) {
		char name[16];

		if (!(f->sh[i] = shard_new(s, &so, err, errlen))) {
			fetcher_free(f);
			return NULL;
		}
		snprintf(name, sizeof(name), "%.10s%u",
			 o->thread_name ? o->thread_name : "goblind-f",
			 i % 100);
		pthread_setname_np(f->sh[i]->thread, name);
	}
	/* after the shards: they have checked the URL */
	if (!(f->lookup = lookup_new(o))) {
		snprintf(err, errlen, "out of memory");
		fetcher_free(f);
		return NULL;
	}
	return f;
}

void fetcher_free(struct fetcher *f)
{
	if (!f)
		return;
	for (unsigned i = 0; i < f->n; i++)
		shard_free(f->sh[i]);
	lookup_free(f->lookup);
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

int fetcher_refresh(struct fetcher *f, const char *key, size_t klen,
		    const struct gs_meta *stale, const struct fetch_req *req)
{
	uint64_t hash = XXH3_64bits(key, klen);

	return shard_get(f->sh[hash % f->n], key, klen, hash, stale, req, NULL);
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
