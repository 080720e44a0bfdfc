/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * HTTP semantics that need no socket and no store: HTTP-dates, byte
 * ranges (RFC 9110 §14), conditional requests (RFC 9110 §13) and shared-
 * cache policy (RFC 9111).  Pure functions on header values; unit tested
 * and fuzzed.  Header values are (pointer, length), not NUL terminated.
 */
#ifndef HTTP_SEM_H
#define HTTP_SEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- HTTP-date (RFC 9110 §5.6.7) ---- */

#define HTTP_DATE_LEN 29	/* "Sun, 06 Nov 1994 08:49:37 GMT" */

/**
 * Parse an HTTP-date in any of the three formats (IMF-fixdate, obsolete
 * RFC 850, asctime).  Returns 0 and unix seconds in *@t, or -1.
 */
int http_date_parse(const char *s, size_t len, int64_t *t);

/** Format @t as IMF-fixdate into @out (HTTP_DATE_LEN + 1 bytes, NUL). */
void http_date_format(int64_t t, char *out);

/* ---- Range (RFC 9110 §14) ---- */

#define HTTP_RANGES_MAX 16	/* more ranges than this: serve 200 whole */

struct http_range {
	uint64_t first, last;	/* inclusive, resolved against the size */
};

enum http_range_result {
	HTTP_RANGE_NONE = 0,	/* ignore the header: send 200 and all */
	HTTP_RANGE_OK,		/* 206: *n ranges, in request order, each
				 * satisfiable; overlapping ones merged only
				 * if the request had more than HTTP_RANGES_MAX */
	HTTP_RANGE_UNSATISFIABLE,	/* 416 with Content-Range: bytes * /size */
};

/**
 * Resolve a Range header value against an object of @size bytes.  Only
 * the "bytes" unit is understood; a syntactically invalid header or
 * another unit is HTTP_RANGE_NONE (the RFC says ignore it).  Suffix
 * ranges ("-500") and open ones ("9500-") are resolved.  Ranges not
 * satisfiable against @size are dropped; when none is left, the result is
 * HTTP_RANGE_UNSATISFIABLE.  More than @max ranges (after dropping) is
 * HTTP_RANGE_NONE (a defence against many-small-ranges attacks).
 */
enum http_range_result http_range_parse(const char *s, size_t len,
					uint64_t size, struct http_range *out,
					unsigned max, unsigned *n);

/* ---- entity tags and conditionals (RFC 9110 §8.8.3, §13) ---- */

/**
 * True when the list @s (an If-Match / If-None-Match value: "*" or a
 * comma-separated list of entity tags) matches @etag (with its quotes,
 * possibly "W/"-prefixed).  @weak: use the weak comparison (If-None-Match),
 * else the strong one (If-Match: a weak tag never matches).  "*" matches
 * any existing representation (@etag non-empty or @exists).
 */
bool http_etag_match(const char *s, size_t len, const char *etag,
		     size_t etag_len, bool weak, bool exists);

/* The request's conditional headers, as http_proto.c gives them. */
struct http_cond {
	const char *if_match; size_t if_match_len;	/* NULL: absent */
	const char *if_none_match; size_t if_none_match_len;
	const char *if_modified_since; size_t if_modified_since_len;
	const char *if_unmodified_since; size_t if_unmodified_since_len;
	const char *if_range; size_t if_range_len;
};

enum http_cond_result {
	HTTP_COND_PASS = 0,	/* carry out the method */
	HTTP_COND_NOT_MODIFIED,	/* 304 (GET/HEAD only) */
	HTTP_COND_FAILED,	/* 412 Precondition Failed */
};

/**
 * Evaluate the preconditions in the order of RFC 9110 §13.2.2 for a
 * request with method @get_or_head (true: GET/HEAD; false: PUT/DELETE and
 * others) against the current representation: @exists, its strong
 * @etag (may be empty) and @last_modified (unix seconds, 0: unknown).
 * If-Modified-Since is only looked at for GET/HEAD and without
 * If-None-Match; If-Unmodified-Since only without If-Match.  An invalid
 * date is ignored, as the RFC says.
 */
enum http_cond_result http_cond_eval(const struct http_cond *c,
				     bool get_or_head, bool exists,
				     const char *etag, size_t etag_len,
				     int64_t last_modified);

/**
 * If-Range (RFC 9110 §13.1.5): true when the Range header should be
 * honoured.  An entity tag must match strongly; a date must equal
 * @last_modified exactly (and only a strong validator date qualifies,
 * which we take as given); anything else is false (send the whole
 * object).
 */
bool http_if_range(const char *s, size_t len, const char *etag,
		   size_t etag_len, int64_t last_modified);

/* ---- shared-cache policy (RFC 9111) ---- */

/* Cache-Control directives of one message; -1: absent. */
struct http_cc {
	bool no_store, no_cache, private_, public_, must_revalidate,
	     proxy_revalidate, immutable, only_if_cached, bad;
	int64_t max_age, s_maxage, max_stale, min_fresh; /* seconds or -1 */
};

/**
 * Parse a Cache-Control value (may be called once per header line; the
 * directives add up).  Initialise with http_cc_init().  Unknown
 * directives are ignored; a malformed delta-seconds sets @bad and is
 * treated as 0 (stale), per RFC 9111 §1.2.2 / §4.2.1 ("invalid freshness
 * information" is stale).  "no-cache" and "private" with field names are
 * taken as the unqualified directive (stricter).
 */
void http_cc_init(struct http_cc *cc);
void http_cc_parse(struct http_cc *cc, const char *s, size_t len);

/* What the origin's response said, collected by the fetcher. */
struct http_resp_info {
	int status;
	struct http_cc cc;
	int64_t date;		/* Date, 0: absent/invalid */
	int64_t expires;	/* Expires; -1 absent, 0 invalid (= stale) */
	int64_t last_modified;	/* 0: absent */
	int64_t age;		/* Age header, -1: absent */
	bool has_set_cookie;
	bool has_vary;		/* any Vary but none or "" */
	bool vary_star;		/* Vary: * */
	bool has_validator;	/* ETag or Last-Modified present */
	bool has_pragma_no_cache;
};

void http_resp_info_init(struct http_resp_info *r);

/* What the client's request said, as far as caching cares. */
struct http_req_info {
	bool authorization;	/* Authorization present */
	struct http_cc cc;	/* request Cache-Control */
};

enum http_store_why {
	HTTP_STORE_OK = 0,
	HTTP_STORE_STATUS,	/* status not stored (we store 200 only) */
	HTTP_STORE_NO_STORE,	/* no-store in request or response */
	HTTP_STORE_PRIVATE,	/* private: a shared cache must not store */
	HTTP_STORE_AUTH,	/* Authorization without public/s-maxage/
				 * must-revalidate (§3.5) */
	HTTP_STORE_SET_COOKIE,	/* Set-Cookie (we do not store these) */
	HTTP_STORE_VARY,	/* Vary present: we do not store variants */
	HTTP_STORE_NO_FRESHNESS,	/* no explicit lifetime, no heuristic
					 * allowed, and no validator to
					 * revalidate with */
};

struct http_store_decision {
	enum http_store_why why;	/* HTTP_STORE_OK: store it */
	bool revalidate_always;	/* no-cache: store, but revalidate on each
				 * use */
	bool must_revalidate;	/* must-revalidate / proxy-revalidate /
				 * s-maxage: never serve stale */
	int64_t age_base;	/* unix s at which the age was 0:
				 * response_time - corrected_initial_age */
	int64_t fresh_until;	/* unix s: age_base + freshness lifetime */
	bool heuristic;		/* lifetime from Last-Modified (10% rule,
				 * capped at one day) */
};

/**
 * Decide whether a shared cache may store the response @r to request @q,
 * and for how long it stays fresh (RFC 9111 §3, §4.2).  @request_time and
 * @response_time are unix seconds (for the age calculation of §4.2.3).
 * Heuristic freshness is used only for a 200 without explicit expiry
 * (max-age, s-maxage, Expires) and with Last-Modified, never with
 * no-cache.
 */
void http_store_decide(const struct http_req_info *q,
		       const struct http_resp_info *r, int64_t request_time,
		       int64_t response_time, struct http_store_decision *d);

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

#endif
