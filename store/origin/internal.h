/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The fetcher's insides, shared by its rooms (none of it is API):
 *   fetch.c       the shards: threads, the curl multi loop, the origin
 *                 request, the end of a transfer, the public functions
 *   fetch_head.c  the response head: parsing, the RFC 9111 decision,
 *                 admission to the store (fill, pass or 304 refresh)
 *   lookup.c      fetcher_head(): a blocking HEAD on the caller's thread
 *   fetch_job.c   jobs and their waiters: the table that collapses
 *                 concurrent misses of a key into one fetch, delivery of
 *                 readers, fetcher_get/forward/cancel's shard side; the
 *                 origin URL of a key; which key a varying response goes
 *                 under and which waiters may have it
 *   keys.c        keys of targets and of the URLs a response names,
 *                 Vary's stubs and variants in the store
 * A room calls only the rooms below it in this list, never one above.
 */
#ifndef GOBLIN_ORIGIN_INTERNAL_H
#define GOBLIN_ORIGIN_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include <curl/curl.h>

#include "../clock.h"
#include "origin.h"

/*
 * Response header lines kept with a stored or relayed response: what
 * the record leaves beside a longest ETag and type.  At least
 * MAX_HEADER_CEIL, so a head that passed --mirror-max-header fits.
 */
#define KEPT_HEADERS_MAX \
	(GS_ATTR_HEADERS_MAX - GS_ATTR_ETAG_MAX - GS_ATTR_CTYPE_MAX)
_Static_assert(KEPT_HEADERS_MAX >= FETCH_MAX_HEADER_CEIL,
	       "a head within the bound fits in the record");

#define HEAD_MAX	(64 * 1024) /* response header bytes kept per transfer */
#define NBUCKETS	256	    /* job table buckets */
#define PASS_PREFIX	"\0pass/"   /* private keys: no HTTP path has a NUL */
#define PASS_PREFIX_LEN 6

enum job_state {
	JOB_QUEUED = 0, /* waiting for a transfer slot */
	JOB_HEAD,	/* request sent, waiting for the response head */
	JOB_BODY,	/* head seen: the body flows into the writer */
};

struct job {
	/* protected by f->lock */
	struct job *hnext;	      /* in f->table[bucket], GET jobs */
	struct job *qnext;	      /* in f->incoming or f->kicked */
	struct fetch_waiter *waiters; /* not yet given their result */
	bool in_table, kicked;
	bool delivered; /* waiters get a reader on rkey at once */

	/* the fetcher thread's */
	struct fshard *f;
	struct job *pnext; /* in f->pending or f->active */
	enum job_state state;
	char *key;
	size_t klen;
	uint64_t hash;
	bool forward;
	struct fetch_forward fwd; /* forward: the caller's buffers */
	bool conditional;	  /* stale given: revalidation */
	bool has_stale;		  /* stale given (with validators or not) */
	bool stale_served;	  /* waiters get the stale copy */
	bool background;	  /* no client waits: stale-while-revalidate */
	char *auth;		  /* the client's Authorization, or NULL */
	size_t auth_len;
	char *cc; /* the client's Cache-Control, or NULL */
	size_t cc_len;
	char *target; /* the client's origin-form target, or NULL */
	size_t target_len;
	char *fields; /* the client's header fields, or NULL */
	size_t fields_len;
	char client[48];	    /* the client's address, or "" */
	bool passreq;		    /* the answer cannot come from the cache */
	bool no_auth;		    /* fetch_req.no_authorization */
	char *method;		    /* forward: fwd.method, copied */
	bool alone;		    /* fetch_req.alone */
	struct fetch_waiter *owner; /* the waiter it was started for */
	/* the response's Vary: its normalised field names ("" none), and
	 * the digest of the values of the request it was fetched for */
	char *vary;
	bool vary_star;
	uint64_t vdigest;
	uint64_t stale_cas;
	struct gs_attr stale;
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
	char rkey[PASS_PREFIX_LEN + 24]; /* the private key, or unused */
	size_t rklen;
	bool pass;	    /* the response goes under rkey */
	bool late;	    /* unknown length: stored or passed at the end */
	bool storable;	    /* late: rename to the key at the end */
	bool restart;	    /* a 304 found the stored version changed */
	bool drop;	    /* nobody wants the response: stop it */
	uint64_t size, got; /* declared (GS_SIZE_UNKNOWN) and received */
};

struct fshard {
	struct gs_store *s;
	struct fetch_opts o;
	char *base; /* origin URL without a trailing '/' */
	CURLM *multi;
	pthread_t thread;
	pthread_mutex_t lock;
	struct job *table[NBUCKETS];  /* protected by lock */
	struct job *incoming;	      /* protected by lock: to start */
	struct job *kicked;	      /* protected by lock: joiners */
	bool stopping;		      /* protected by lock */
	struct job *pending, *active; /* the fetcher thread's */
	unsigned nactive;
	_Atomic uint64_t st[sizeof(struct fetch_stats) / sizeof(uint64_t)];
};

#define STAT(f, field)                                                  \
	atomic_fetch_add(&(f)->st[offsetof(struct fetch_stats, field) / \
				  sizeof(uint64_t)],                    \
			 1)
#define STAT_ADD(f, field, n)                                           \
	atomic_fetch_add(&(f)->st[offsetof(struct fetch_stats, field) / \
				  sizeof(uint64_t)],                    \
			 (n))


struct fetcher {
	unsigned n;
	struct fshard *sh[FETCH_THREADS_MAX];
	struct fetch_lookup *lookup; /* lookup.c: fetcher_head() */
};

/* ---- fetch_job.c ---- */

/* Give every waiter of @j the reply @status. */
void job_reply_all(struct job *j, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Give every waiter of @j its own reader on @key. */
void job_deliver(struct job *j, const void *key, size_t klen,
		 enum fetch_kind kind, int getflags);
/*
 * The origin failed: true when @j's waiters were given its stale copy
 * instead (fetch_opts.stale_on_error_s, RFC 5861 stale-if-error).
 */
bool job_serve_stale(struct job *j);
/* ... on the key @j's response goes under. */
void job_deliver_current(struct job *j);
/* f->lock held: out of the table / the kicked queue */
void job_table_remove(struct fshard *f, struct job *j);
void job_unkick(struct fshard *f, struct job *j);
/* Take @j out of the table: a later fetcher_get starts a new fetch. */
void job_unpublish(struct job *j);
/* The same, saying whether it had waiters (atomically: none join after). */
bool job_unpublish_wanted(struct job *j);
void job_release_handle(struct job *j);
void job_free(struct job *j);
/* @fw NULL: a background fetch (fetcher_refresh), unless one runs */
int shard_get(struct fshard *f, const char *key, size_t klen, uint64_t hash,
	      const struct gs_meta *stale, const struct fetch_req *req,
	      struct fetch_waiter *fw);
int shard_forward(struct fshard *f, const char *key, size_t klen,
		  const struct fetch_forward *fwd, struct fetch_waiter *fw);
bool shard_cancel(struct fshard *f, struct fetch_waiter *fw);
/* @base + '/' + @key, each '/'-separated segment percent-encoded; free() */
char *fetch_url(const char *base, CURL *h, const char *key, size_t klen);
/* An unsafe method's 2xx/3xx: delete the same-origin URLs of the response
 * head's Location and Content-Location (RFC 9111 sec. 4.4). */
void job_invalidate_locations(struct job *j);
/*
 * Vary (see origin.h): with the response head in and *@storable decided,
 * note its Vary for delivery and, when it is stored, move @j to the key
 * its body goes under (the variant's, or the URL's when it no longer
 * varies) and update the URL's stub; *@storable false when it cannot be.
 */
void job_vary(struct job *j, bool *storable);
/* May @fw have @j's response?  Only if its request selects it. */
bool job_selects(const struct job *j, const struct fetch_waiter *fw);
#define VARY_SEP     "\0v" /* a variant's key: the URL's, this, 16 hex */
#define VARY_SEP_LEN 2
#define VARIANTS_MAX 16 /* per URL; the oldest is replaced */

/* ---- keys.c ---- */

/* The key of the URL @u (Location, Content-Location) if it is one of the
 * origin @base's; -EINVAL when not. */
long url_key_of(const char *base, const char *u, size_t len, char *out,
		size_t max);
/* Delete what is stored for the URL of @key: its object, or its Vary stub
 * and the variants the stub lists. */
void url_delete(struct fshard *f, const char *key, size_t klen);
/* A response head's Vary field names, normalised (lower case, ","
 * joined) into @out; (size_t)-1 when they do not fit.  *@star: "*". */
size_t vary_names(const char *head, size_t len, char *out, size_t cap,
		  bool *star);
/* The digest of the request @fields' values of @names (see origin.h). */
uint64_t vary_digest(const char *names, size_t nlen, const char *fields,
		     size_t flen);
/* The URL's part of @key: all of it, or what a variant's key starts with. */
size_t key_primary_len(const char *key, size_t klen);
/* The variant key of digest @d of the URL @key (@plen bytes). */
long key_variant_of(const char *key, size_t plen, uint64_t d, char *out,
		    size_t max);
/* Write the stub of the URL @key naming @names with variant @hex added. */
int vary_stub_update(struct fshard *f, const char *key, size_t plen,
		     const char *names, const char *hex);

/* ---- lookup.c: fetcher_head()'s connections ---- */

struct fetch_lookup *lookup_new(const struct fetch_opts *o);
void lookup_free(struct fetch_lookup *l);

/* ---- fetch_head.c: libcurl's header and write callbacks ---- */

size_t fetch_on_header(char *p, size_t one, size_t n, void *arg);
size_t fetch_on_body(char *p, size_t one, size_t n, void *arg);

#endif
