/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * HTTP semantics of goblind's GET path that need no socket and no store:
 * byte ranges (RFC 9110 §14) and conditional requests (RFC 9110 §13).
 * Pure functions on header values; unit tested and fuzzed.  Header values
 * are (pointer, length), not NUL terminated.  The shared-cache rules (RFC
 * 9111) are the origin client's, store/origin/origin.h, for both mirrors;
 * HTTP-dates the store's (store/goblin.h), under netd's names here.
 */
#ifndef HTTP_SEM_H
#define HTTP_SEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../store/goblin.h"
#include "../store/origin/origin.h"

/* ---- HTTP-date (RFC 9110 §5.6.7): store/httpdate.c ---- */

#define HTTP_DATE_LEN GS_HTTP_DATE_LEN

static inline int http_date_parse(const char *s, size_t len, int64_t *t)
{
	return gs_http_date_parse(s, len, t);
}

static inline void http_date_format(int64_t t, char *out)
{
	gs_http_date_format(t, out);
}

/* ---- Range (RFC 9110 §14) ---- */

#define HTTP_RANGES_MAX 16 /* more ranges than this: serve 200 whole */

struct http_range {
	uint64_t first, last; /* inclusive, resolved against the size */
};

enum http_range_result {
	HTTP_RANGE_NONE = 0,	  /* ignore the header: send 200 and all */
	HTTP_RANGE_OK,		  /* 206: *n ranges, in request order, each
				   * satisfiable; overlapping ones merged only
				   * if the request had more than HTTP_RANGES_MAX */
	HTTP_RANGE_UNSATISFIABLE, /* 416 with Content-Range: bytes * /size */
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
	const char *if_match;
	size_t if_match_len; /* NULL: absent */
	const char *if_none_match;
	size_t if_none_match_len;
	const char *if_modified_since;
	size_t if_modified_since_len;
	const char *if_unmodified_since;
	size_t if_unmodified_since_len;
	const char *if_range;
	size_t if_range_len;
};

enum http_cond_result {
	HTTP_COND_PASS = 0,	/* carry out the method */
	HTTP_COND_NOT_MODIFIED, /* 304 (GET/HEAD only) */
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
bool http_if_range(const char *s, size_t len, const char *etag, size_t etag_len,
		   int64_t last_modified);

#endif
