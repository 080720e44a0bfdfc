/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libgoblin-origin: the one HTTP origin client of goblind --mirror and
 * goblinfs --mirror, and the one set of caching rules (RFC 9111 for a
 * shared cache) both follow.  A library of its own beside libgoblin,
 * because it needs libcurl and libgoblin touches media only; front-ends
 * include this header and store/goblin.h, never each other.
 *
 * The fetcher (fetch.c, fetch_head.c, fetch_job.c): a few threads, each
 * driving a libcurl multi handle for the keys that hash to it.  A miss
 * becomes one origin request however many clients ask for the object
 * meanwhile; a cacheable response is admitted
 * to the store as a fill while it arrives, and every waiting client reads
 * the fill (read-while-fill).  Uncacheable responses reach their clients
 * the same way, through a fill under a private key that is never served
 * by name and is deleted when the response is complete.
 *
 * Vary (RFC 9111 sec. 4.1), for the gateway's requests (fetch_req.fields
 * given; goblinfs's responses with Vary are passed as before).  The store
 * has no notion of variants; a URL with a varying response keeps, under
 * its own key K, a stub: an empty object whose attribute record has
 * GS_ATTR_VARY and two header lines, "Vary: a,b" (the response's field
 * names, lower-cased, in its order) and "Goblin-Variants: D1 D2 ..." (the
 * variants stored, oldest first, at most VARIANTS_MAX = 16).  Each
 * variant is an ordinary object under K + "\0v" + D, D being 16 hex
 * digits of the XXH3 digest of the request's values of those fields
 * (fetch_variant_key(): field lines of one name combined with ", ", list
 * elements' surrounding whitespace removed and inner runs made one
 * space; a field absent differs from a field empty).  No request target
 * has a NUL, so no URL's key is another's variant.  A lookup that finds a
 * stub looks up, fetches or revalidates the variant's key instead.  A
 * response is stored under the variant its own request selects; one with
 * another Vary list replaces the stub and deletes the variants it listed,
 * one without Vary is stored under K and deletes them too; the 17th
 * variant deletes the oldest.  "Vary: *" is never stored.  Two variants
 * stored at once may each rewrite the stub from the same old list: the
 * list then misses one, which stays reachable by its key but is no longer
 * counted (the store's eviction reclaims it in time).  Concurrent misses
 * of K before the stub exists collapse into one fetch; when its response
 * varies, the waiters whose own values select another variant get
 * FETCH_RETRY, and ask again on their own (fetch_req.alone).
 */
#ifndef GOBLIN_ORIGIN_H
#define GOBLIN_ORIGIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../goblin.h"

struct fetcher;

struct fetch_opts {
	const char *origin;	 /* base URL: "http://host:port[/prefix]" */
	unsigned timeout_ms;	 /* connect + response head; and a transfer
				  * that makes no progress for this long */
	uint64_t max_object;	 /* larger responses are passed, not stored */
	unsigned max_transfers;	 /* origin transfers at once, in all */
	unsigned threads;	 /* fetcher threads (shards by key hash),
				  * at most FETCH_THREADS_MAX; 0: 1 */
	const char *thread_name; /* their names' prefix (up to 10
				  * bytes); NULL: "goblind-f" */
	size_t max_header;	 /* response heads (status line and
				  * header lines) longer than this are
				  * passed, not stored; 0: the default */
	/*
	 * Stale on error: when the origin fails (connect or transfer error
	 * before the response head, a timeout, or a 500, 502, 503 or 504
	 * answer) and the request came with a stored copy (fetcher_get's
	 * @stale) at most this many seconds stale, its waiters get
	 * FETCH_OBJECT on that copy (fetch_waiter.stale set) instead of the
	 * error.  0: off, only the response's or request's own
	 * stale-if-error (RFC 5861) allows it.  Never for a copy whose
	 * must-revalidate, proxy-revalidate, s-maxage or no-cache forbids
	 * serving it stale (RFC 9111 sec. 4.2.4).
	 */
	unsigned stale_on_error_s;
	bool no_via;	       /* add no "Via: 1.1 goblind" */
	bool no_xff;	       /* add no X-Forwarded-For */
	int heuristic_pct;     /* http_policy.heuristic_pct; 0: the
				  * default, -1: no heuristic freshness */
	int64_t heuristic_max; /* http_policy.heuristic_max; 0: default */
};

/* fetch_opts.max_header: Varnish's http_resp_size, and its ceiling */
#define FETCH_MAX_HEADER_DEFAULT (32 * 1024)
#define FETCH_MAX_HEADER_CEIL	 (32 * 1024)

#define FETCH_THREADS_MAX 64

enum fetch_kind {
	FETCH_OBJECT = 0, /* r: the object under the key (a fill or
			   * committed); serve it, attrs in its meta */
	FETCH_PASS,	  /* r: a private fill holding the origin's
			   * response (status and headers in its attr
			   * record); not stored under the key */
	FETCH_REPLY,	  /* no body from the origin: reply @status
			   * (502, 504) with @msg */
	FETCH_RETRY,	  /* the response varies, and not as this
			   * waiter's request does: ask again, alone */
};

/*
 * One client's interest in a fetch.  The caller owns it (embedded in its
 * connection) and sets @done before fetcher_get(); the fetcher fills in
 * the result and calls @done exactly once, on the fetcher thread, unless
 * fetcher_cancel() withdrew it first.  @done must only hand @fw back to
 * its owner (a mailbox and an eventfd write): it must not call into the
 * fetcher or the store.
 */
struct fetch_waiter {
	void (*done)(struct fetch_waiter *fw);
	/* the caller's request fields (see fetch_req), kept until done()
	 * ran: they say which variant of a varying response it may have */
	const char *fields;
	size_t fields_len;
	/* the result, valid when done() runs */
	enum fetch_kind kind;
	int status;	     /* FETCH_REPLY */
	char msg[160];	     /* FETCH_REPLY: why, for the body */
	struct gs_reader *r; /* FETCH_OBJECT, FETCH_PASS: the
			      * caller's now; gs_reader_close() */
	bool stale;	     /* FETCH_OBJECT: the stored copy, served
			      * stale because the origin failed */
	/* the fetcher's */
	struct fetch_waiter *next;
	void *job;
	unsigned shard;
};

/* Counters, summed over the fetcher's life. */
struct fetch_stats {
	uint64_t origin_requests; /* requests sent to the origin */
	uint64_t origin_bytes;	  /* response body bytes received */
	uint64_t origin_errors;	  /* connect/transfer failures: 502 */
	uint64_t origin_timeouts; /* timeouts: 504 */
	uint64_t collapsed;	  /* waiters that joined a running fetch */
	uint64_t stored;	  /* responses admitted under their key */
	uint64_t passed;	  /* responses not stored (any reason) */
	uint64_t revalidations;	  /* conditional requests for stale ones */
	uint64_t not_modified;	  /* ... answered 304: metadata refreshed */
	uint64_t forwarded;	  /* PUT/POST/DELETE passed to the origin */
	uint64_t aborted_fills;	  /* fills given up mid-body */
	uint64_t served_stale;	  /* waiters given a stale copy: the
				   * origin failed (stale-if-error) */
	uint64_t background;	  /* background revalidations started
				   * (stale-while-revalidate) */
};

/**
 * Start the fetcher thread for @s.  Returns NULL with a message in @err
 * (a bad URL, libcurl failing to start).
 */
struct fetcher *fetcher_new(struct gs_store *s, const struct fetch_opts *o,
			    char *err, size_t errlen);

/** Stop the thread: running fetches are aborted, waiters get 502. */
void fetcher_free(struct fetcher *f);

/*
 * What the client's request says that the origin and RFC 9111 care about.
 *
 * Gateway forwarding (RFC 9110 sec. 7.6): with @fields, every end-to-end
 * header field of the client's request goes to the origin as it came;
 * the hop-by-hop ones (Connection, Keep-Alive, Proxy-*, TE, Trailer,
 * Transfer-Encoding, Upgrade) and those Connection names are dropped,
 * and so are Host, Content-Length and Expect (libcurl writes its own).
 * A request the cache may answer (not @pass) also loses its
 * preconditions and Range: the cache wants the whole current response
 * and evaluates those itself.  "Via: 1.1 goblind" and the client's
 * address in X-Forwarded-For are appended unless fetch_opts says not to.
 * When concurrent misses collapse into one fetch, the first request's
 * fields are the ones that go (as Varnish does): requests for one key
 * are taken as equivalent, which is what Vary is for.
 */
struct fetch_req {
	const char *target; /* the origin-form path and query as the
			     * client sent them, sent unchanged; NULL:
			     * the key, percent-encoded by segment */
	size_t target_len;
	const char *fields; /* the client's header section: field lines,
			     * each ending in CRLF; NULL: none */
	size_t fields_len;
	const char *client;    /* the client's address (X-Forwarded-For) */
	bool pass;	       /* the answer cannot come from the cache */
	bool no_authorization; /* the client's Authorization was for
				    * us: it does not go */
	bool alone; /* joins no fetch and none joins it (FETCH_RETRY) */
	const char *authorization; /* NULL: none */
	size_t authorization_len;
	const char *cache_control; /* NULL: none */
	size_t cache_control_len;
};

/*
 * Is the request header field @name (@nlen bytes) forwarded to the origin,
 * given the client's Connection value @conn (NULL: none) and @pass (see
 * fetch_req)?  Pure: test/unit/test_fetch.c.
 */
bool fetch_forwards_field(const char *name, size_t nlen, const char *conn,
			  size_t conn_len, bool pass);

/**
 * The cache key of the origin-form request target @t (@len bytes from its
 * '/': the path and query as the client sent them) into @out (room for
 * @max bytes and a NUL): the target without its leading '/', normalised
 * only as RFC 9110 sec. 4.2.3 and RFC 3986 sec. 6.2.2 allow: a percent-
 * encoded unreserved character (ALPHA, DIGIT, "-", ".", "_", "~") is
 * decoded and every other escape's hex digits are upper-cased.  Nothing
 * else changes: query parameters keep their order, "+" and empty ones,
 * and "/p" and "/p?" stay two keys.  (Scheme and host are the origin's
 * and not in the key; a mirror has one origin.)  A '%' not followed by
 * two hex digits is kept as it is in the query and refused in the path.
 * "/" alone, whose key would be empty (no key for the store), gets
 * FETCH_ROOT_KEY, which no target makes (it starts with a NUL).
 * Returns the length, -EINVAL (no leading '/', a bad escape in the path,
 * %00) or -ENAMETOOLONG.  Pure: test/unit/test_fetch.c.
 */
long fetch_key_of(const char *t, size_t len, char *out, size_t max);
#define FETCH_ROOT_KEY	   "\0/"
#define FETCH_ROOT_KEY_LEN 2

/**
 * The key of the variant of the URL with key @key that a request with
 * header fields @fields (field lines, each with its CRLF) selects, given
 * the URL's stub @stub (GS_ATTR_VARY; see the top of this file), into
 * @out (room for @max bytes).  Its length, or -EINVAL (no Vary in the
 * stub), -ENAMETOOLONG.
 */
long fetch_variant_key(const char *key, size_t klen, const struct gs_attr *stub,
		       const char *fields, size_t fields_len, char *out,
		       size_t max);

/**
 * Ask for @key (goblind: fetch_key_of() of the target; goblinfs: the
 * decoded file path; either without its leading '/').  @req (may be NULL) is copied: with Authorization the
 * request goes to the origin with it, on its own (it joins no other fetch
 * and none joins it), and its response is stored only where RFC 9111 §3.5
 * allows; a request Cache-Control of no-store keeps the response out of
 * the store.  @stale is read before the call returns.  With @stale (the metadata of a stored version that is
 * no longer fresh) the request is conditional on its validators, and a
 * 304 refreshes the stored metadata without a new body.  Joins a fetch of
 * the same key already running.  Returns 0: done() will be called.
 */
int fetcher_get(struct fetcher *f, const char *key, size_t klen,
		const struct gs_meta *stale, const struct fetch_req *req,
		struct fetch_waiter *fw);

/**
 * Revalidate (or refetch) @key in the background: the stale-while-
 * revalidate of RFC 5861, where the caller serves its stale copy @stale
 * at once.  Nobody waits; the response refreshes or replaces the stored
 * copy as fetcher_get()'s would.  Nothing is started when a fetch of
 * @key is already running (that one brings the new copy).  0, or
 * -ENOMEM, -ESHUTDOWN, -EINVAL.
 */
int fetcher_refresh(struct fetcher *f, const char *key, size_t klen,
		    const struct gs_meta *stale, const struct fetch_req *req);

/*
 * A request the cache does not answer, passed through to the origin
 * (mirror mode): an unsafe or unknown method, or a safe one but GET and
 * HEAD.
 */
struct fetch_forward {
	const char *method; /* "PUT", "POST", "DELETE", any token */
	const void *body;   /* the whole request body, or NULL */
	size_t body_len;
	const char *ctype; /* Content-Type, or NULL; ignored with
			    * req.fields (it is among them) */
	size_t ctype_len;
	bool safe;	      /* OPTIONS, TRACE: invalidates nothing */
	struct fetch_req req; /* target, fields, client (pass is implied) */
};

/**
 * Send @fwd to the origin for @key; on a 2xx or 3xx answer to an unsafe
 * method the stored object is deleted (invalidated, RFC 9111 sec. 4.4),
 * and so are the objects of the same-origin URLs in the response's
 * Location and Content-Location.  The answer reaches @fw as FETCH_PASS
 * (or FETCH_REPLY on failure).  The caller keeps @fwd's buffers until
 * done() ran or the waiter was cancelled.
 */
int fetcher_forward(struct fetcher *f, const char *key, size_t klen,
		    const struct fetch_forward *fwd, struct fetch_waiter *fw);

/**
 * Withdraw @fw (its client went away).  true: withdrawn, done() will not
 * run.  false: done() ran or is running; the owner will receive @fw and
 * must close fw->r.
 */
bool fetcher_cancel(struct fetcher *f, struct fetch_waiter *fw);

void fetcher_stats(struct fetcher *f, struct fetch_stats *out);

/* fetcher_head(): the name is a directory on the origin. */
#define FETCH_HEAD_DIR 1

/**
 * HEAD <origin>/<key>, on the caller's thread (goblinfs's lookups: the
 * kernel wants a size before anything is read).  0 with the size
 * (Content-Length) and modification time (Last-Modified in unix seconds,
 * 0 when absent) of a file; FETCH_HEAD_DIR when the origin redirected to
 * <key>/ (how web servers answer for a directory) and that answered 200
 * or 403; -ENOENT on 404 or 410; -EIO on any other answer, a 200 without
 * a Content-Length, or a transport error; -ENOMEM.  Nothing is stored.
 */
int fetcher_head(struct fetcher *f, const char *key, size_t klen,
		 uint64_t *size, int64_t *mtime);

/* ---- the shared-cache rules (RFC 9111), rfc9111.c ---- */

/* Cache-Control directives of one message; -1: absent. */
struct http_cc {
	bool no_store, no_cache, private_, public_, must_revalidate,
		proxy_revalidate, immutable, only_if_cached, must_understand,
		bad;
	/* no-cache="f": only the fields listed (http_cc_names_field())
	 * need revalidation; private="f" is taken as private */
	bool no_cache_fields;
	int64_t max_age, s_maxage, max_stale, min_fresh; /* seconds or -1 */
	/* RFC 5861 (either message); a malformed value is ignored */
	int64_t stale_while_revalidate, stale_if_error; /* seconds or -1 */
};

/**
 * Parse a Cache-Control value (may be called once per header line; the
 * directives add up).  Initialise with http_cc_init().  Unknown
 * directives are ignored; a malformed delta-seconds sets @bad and is
 * treated as 0 (stale), per RFC 9111 §1.2.2 / §4.2.1 ("invalid freshness
 * information" is stale); of repeated max-age / s-maxage the first
 * counts.  "no-cache" with field names sets no_cache_fields, not the
 * unqualified directive; "private" with field names is taken whole.
 */
void http_cc_init(struct http_cc *cc);
void http_cc_parse(struct http_cc *cc, const char *s, size_t len);

/**
 * Does the Cache-Control value @s (@len bytes) list @field (@flen bytes,
 * any case) in a no-cache="..." directive?  Those fields are not sent
 * from the cache without a successful revalidation (RFC 9111 §5.2.2.4).
 */
bool http_cc_names_field(const char *s, size_t len, const char *field,
			 size_t flen);

/**
 * Parse every @name line (e.g. "Cache-Control") of a stored header block
 * (gs_attr.headers: "Name: value\r\n" lines) into @cc, as
 * http_cc_parse() does with each value.
 */
void http_cc_parse_block(struct http_cc *cc, const char *name,
			 const char *block, size_t len);

/*
 * Surrogate-Control (W3C Edge Architecture 1.0, as Varnish and Fastly
 * honour it): the directives that address this cache, a surrogate whose
 * device token is HTTP_SC_TOKEN (advertised in Surrogate-Capability).
 * For it they take the place of Cache-Control's freshness (max-age) and
 * keep the response out of the store (no-store); the field never leaves
 * the cache.
 */
#define HTTP_SC_TOKEN	   "goblin"
#define HTTP_SC_CAPABILITY "Surrogate-Capability: goblin=\"Surrogate/1.0\""

struct http_sc {
	bool no_store;
	int64_t max_age; /* seconds or -1 */
};

void http_sc_init(struct http_sc *sc);
/**
 * Parse a Surrogate-Control value (once per field line; they add up):
 * "directive[=value][;device-token]" elements, a directive with another
 * token than @token ignored, as are malformed ones ("max-age =5").
 * max-age's "+N" (a revalidation period) is not used.
 */
void http_sc_parse(struct http_sc *sc, const char *s, size_t len,
		   const char *token);

/* What the origin's response said, collected by the fetcher. */
struct http_resp_info {
	int status;
	struct http_cc cc;
	int64_t date;	       /* Date, 0: absent/invalid */
	int64_t expires;       /* Expires; -1 absent, 0 invalid (= stale) */
	int64_t last_modified; /* 0: absent */
	int64_t age;	       /* Age header, -1: absent (or invalid) */
	bool age_invalid;      /* an Age that is not delta-seconds */
	bool has_vary;	       /* any Vary but none or "" */
	bool vary_star;	       /* Vary: * */
	bool has_validator;    /* ETag or Last-Modified present */
	struct http_sc sc;     /* Surrogate-Control for this cache */
};

void http_resp_info_init(struct http_resp_info *r);

/**
 * Take an Expires or Age header line's value (@v, @vlen) into @r; call
 * once per line, in order: the first Expires counts, one that is not an
 * HTTP-date is expired (0); the first member of the first Age counts,
 * one that is not delta-seconds sets age_invalid (the response is then
 * stale).
 */
void http_resp_expires(struct http_resp_info *r, const char *v, size_t vlen);
void http_resp_age(struct http_resp_info *r, const char *v, size_t vlen);

/* What the client's request said, as far as caching cares. */
struct http_req_info {
	bool authorization; /* Authorization present */
	struct http_cc cc;  /* request Cache-Control */
	bool variants;	    /* the cache stores Vary's variants */
};

enum http_store_why {
	HTTP_STORE_OK = 0,
	HTTP_STORE_STATUS,	 /* a status not stored: not final, 206,
				  * 304, or neither heuristically
				  * cacheable nor explicitly fresh */
	HTTP_STORE_NO_STORE,	 /* no-store in request or response */
	HTTP_STORE_PRIVATE,	 /* private: a shared cache must not store */
	HTTP_STORE_AUTH,	 /* Authorization without public/s-maxage/
				  * must-revalidate (§3.5) */
	HTTP_STORE_VARY,	 /* Vary: *, or Vary where variants are not
				  * stored (goblinfs) */
	HTTP_STORE_NO_FRESHNESS, /* no explicit lifetime, no heuristic
				  * allowed, and no validator to
				  * revalidate with */
};

struct http_store_decision {
	enum http_store_why why; /* HTTP_STORE_OK: store it */
	bool revalidate_always;	 /* no-cache: store, but revalidate on each
				  * use */
	bool must_revalidate;	 /* must-revalidate / proxy-revalidate /
				  * s-maxage: never serve stale */
	int64_t age_base;	 /* unix s at which the age was 0:
				  * response_time - corrected_initial_age */
	int64_t fresh_until;	 /* unix s: age_base + freshness lifetime */
	bool heuristic;		 /* lifetime from Last-Modified (a percent
				  * of its age, capped: http_policy) */
};

/* What RFC 9111 leaves to the cache (goblind's --mirror-heuristic*). */
struct http_policy {
	unsigned heuristic_pct; /* §4.2.2: a heuristic lifetime is this
				 * percent of the time since Last-Modified;
				 * 0: none */
	int64_t heuristic_max;	/* ... and at most this many seconds */
};

#define HTTP_HEURISTIC_PCT_DEFAULT 10
#define HTTP_HEURISTIC_MAX_DEFAULT 86400

/**
 * The status codes RFC 9110 defines as heuristically cacheable (sec.
 * 15.1) that this cache stores: 200, 203, 204, 300, 301, 308, 404, 405,
 * 410, 414, 501 (206 is, but ranges are not stored).
 */
bool http_status_heuristic(int status);

/**
 * Decide whether a shared cache may store the response @r to request @q,
 * and for how long it stays fresh (RFC 9111 §3, §4.2).  @request_time and
 * @response_time are unix seconds (for the age calculation of §4.2.3).
 * Stored: a final status other than 206 and 304 that is heuristically
 * cacheable (http_status_heuristic()) or has explicit freshness
 * (max-age, s-maxage, Expires) or public.  Heuristic freshness (@pol's
 * percent of the time since Last-Modified, capped) only without
 * explicit expiry, for a heuristically cacheable status or a public
 * response, never with no-cache.  http_store_decide() uses the default
 * policy (10%, at most a day).
 * Surrogate-Control's max-age, where present, is the lifetime before
 * all of those, and its no-store keeps the response out.
 */
void http_store_decide(const struct http_req_info *q,
		       const struct http_resp_info *r, int64_t request_time,
		       int64_t response_time, struct http_store_decision *d);
void http_store_decide_policy(const struct http_req_info *q,
			      const struct http_resp_info *r,
			      const struct http_policy *pol,
			      int64_t request_time, int64_t response_time,
			      struct http_store_decision *d);

/** A lower-case reason for @why, for logs and the X-Cache header. */
const char *http_store_strwhy(enum http_store_why why);

/**
 * True when a stored response with @fresh_until and @age_base may be
 * served to request @q at @now without revalidation (request max-age,
 * min-fresh, no-cache and max-stale of §5.2.1 included; @must_revalidate
 * forbids max-stale).  @fresh_until 0 means always fresh.
 */
bool http_fresh_for(const struct http_cc *q, int64_t fresh_until,
		    int64_t age_base, bool revalidate_always,
		    bool must_revalidate, int64_t now);

/* Why a stale stored response would be served (http_stale_ok). */
enum http_stale_use {
	HTTP_STALE_ERROR,      /* the origin failed (stale-if-error) */
	HTTP_STALE_REVALIDATE, /* while one background revalidation runs
				* (stale-while-revalidate) */
};

/**
 * May a stored response that is no longer fresh for request @q be served
 * stale at @now (RFC 5861, RFC 9111 §4.2.4)?  @resp: the stored
 * response's Cache-Control; @fresh_until, @age_base and the two flags as
 * for http_fresh_for().  HTTP_STALE_ERROR: up to the largest of
 * @window_s (the cache's own, --mirror-stale-on-error), the response's and
 * the request's stale-if-error seconds past its freshness.
 * HTTP_STALE_REVALIDATE: up to the response's stale-while-revalidate, and
 * only when the request asks for nothing fresher (no no-cache, and age
 * within its max-age).  Never with @revalidate_always (no-cache) or
 * @must_revalidate (must-revalidate, proxy-revalidate, s-maxage).
 */
bool http_stale_ok(enum http_stale_use use, const struct http_cc *resp,
		   const struct http_cc *q, int64_t fresh_until,
		   int64_t age_base, bool revalidate_always,
		   bool must_revalidate, int64_t window_s, int64_t now);

#endif
