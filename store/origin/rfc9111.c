/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The shared-cache rules of RFC 9111, for both mirrors (goblind --mirror
 * and goblinfs --mirror): Cache-Control parsing, whether a response may
 * be stored and for how long it stays fresh (sec. 3, 4.2), and whether a
 * stored one may be served to a request without revalidation (sec. 5.2.1).
 * Pure functions on header values (pointer, length); unit tested and
 * fuzzed (test/unit/test_http_sem.c, test/fuzz/fuzz_http_sem.c).
 */
#include <string.h>
#include <strings.h>

#include "../httptok.h"
#include "origin.h"

/* RFC 9111 §1.2.2: delta-seconds that do not fit are 2^31 */
#define DELTA_MAX INT64_C(2147483648)

/* ---- small helpers ---- */

/* RFC 9110 §5.6.2 tchar */
static bool is_tchar(char c)
{
	unsigned char u = (unsigned char)c;

	if ((u >= '0' && u <= '9') || (u >= 'a' && u <= 'z') ||
	    (u >= 'A' && u <= 'Z'))
		return true;
	return u && strchr("!#$%&'*+-.^_`|~", u) != NULL;
}

static int64_t sat_add(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_add_overflow(a, b, &r))
		return b > 0 ? INT64_MAX : INT64_MIN;
	return r;
}

static int64_t sat_sub(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_sub_overflow(a, b, &r))
		return b < 0 ? INT64_MAX : INT64_MIN;
	return r;
}

static int64_t clamp(int64_t v, int64_t lo, int64_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/* ---- Cache-Control ---- */

void http_cc_init(struct http_cc *cc)
{
	memset(cc, 0, sizeof(*cc));
	cc->max_age = cc->s_maxage = cc->max_stale = cc->min_fresh = -1;
	cc->stale_while_revalidate = cc->stale_if_error = -1;
}

/*
 * delta-seconds from a token or a quoted string (RFC 9111 §5.2: accept
 * both forms); -1 when it is not one.
 */
static int64_t delta_seconds(const char *v, size_t len, bool quoted)
{
	int64_t r = 0;
	size_t n = 0;

	for (size_t i = 0; i < len; i++) {
		char c = v[i];

		if (quoted && c == '\\' && i + 1 < len)
			c = v[++i];
		if (!ht_is_digit(c))
			return -1;
		n++;
		if (r < DELTA_MAX)
			r = r * 10 + (c - '0');
	}
	if (!n)
		return -1;
	return r > DELTA_MAX ? DELTA_MAX : r;
}

enum dup_rule { DUP_FIRST, DUP_MIN, DUP_MAX };

/*
 * Store a delta directive.  RFC 9111 §4.2.1 lets a cache take either the
 * first of conflicting values or call the response stale; max-age and
 * s-maxage take the first (an invalid first one is stale, 0), as one
 * header line or several.  For the request's max-stale the smaller and
 * for min-fresh the larger wins: both the stricter.
 */
static void cc_delta(struct http_cc *cc, int64_t *field, const char *v,
		     size_t vlen, bool has_v, bool quoted, enum dup_rule rule)
{
	int64_t d = has_v ? delta_seconds(v, vlen, quoted) : -1;

	if (d < 0) {
		cc->bad = true;
		d = 0;
	}
	if (*field < 0)
		*field = d;
	else if (rule == DUP_FIRST)
		return;
	else if (rule == DUP_MIN)
		*field = d < *field ? d : *field;
	else
		*field = d > *field ? d : *field;
}

/*
 * RFC 5861's windows only widen what may be served: a malformed one is
 * ignored rather than made stale, and of repeated ones the smaller wins.
 */
static void cc_stale_window(int64_t *field, const char *v, size_t vlen,
			    bool has_v, bool quoted)
{
	int64_t d = has_v ? delta_seconds(v, vlen, quoted) : -1;

	if (d >= 0 && (*field < 0 || d < *field))
		*field = d;
}

static void cc_directive(struct http_cc *cc, const char *name, size_t nlen,
			 const char *v, size_t vlen, bool has_v, bool quoted)
{
	static const struct {
		const char *name;
		size_t off;
	} flags[] = {
		{ "no-store", offsetof(struct http_cc, no_store) },
		{ "no-cache", offsetof(struct http_cc, no_cache) },
		{ "private", offsetof(struct http_cc, private_) },
		{ "public", offsetof(struct http_cc, public_) },
		{ "must-revalidate",
		  offsetof(struct http_cc, must_revalidate) },
		{ "proxy-revalidate",
		  offsetof(struct http_cc, proxy_revalidate) },
		{ "immutable", offsetof(struct http_cc, immutable) },
		{ "only-if-cached", offsetof(struct http_cc, only_if_cached) },
		{ "must-understand",
		  offsetof(struct http_cc, must_understand) },
	};

	/*
	 * no-cache="f" (§5.2.2.4): the response may be reused, but not the
	 * listed fields without revalidation (http_cc_names_field() says
	 * which).  private="f" stays the whole message's: a shared cache
	 * may store the rest without the fields (§5.2.2.7), but then the
	 * client it was for would not get them either.
	 */
	if (has_v && vlen && ht_eq_nocase(name, nlen, "no-cache")) {
		cc->no_cache_fields = true;
		return;
	}
	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		if (ht_eq_nocase(name, nlen, flags[i].name)) {
			*(bool *)((char *)cc + flags[i].off) = true;
			return;
		}
	}
	if (ht_eq_nocase(name, nlen, "max-age"))
		cc_delta(cc, &cc->max_age, v, vlen, has_v, quoted, DUP_FIRST);
	else if (ht_eq_nocase(name, nlen, "s-maxage"))
		cc_delta(cc, &cc->s_maxage, v, vlen, has_v, quoted, DUP_FIRST);
	else if (ht_eq_nocase(name, nlen, "min-fresh"))
		cc_delta(cc, &cc->min_fresh, v, vlen, has_v, quoted, DUP_MAX);
	else if (ht_eq_nocase(name, nlen, "max-stale") && !has_v)
		/* no argument: any staleness; 2^31 s is as good as that */
		cc_delta(cc, &cc->max_stale, "2147483648", 10, true, false,
			 DUP_MIN);
	else if (ht_eq_nocase(name, nlen, "max-stale"))
		cc_delta(cc, &cc->max_stale, v, vlen, has_v, quoted, DUP_MIN);
	else if (ht_eq_nocase(name, nlen, "stale-while-revalidate"))
		cc_stale_window(&cc->stale_while_revalidate, v, vlen, has_v,
				quoted);
	else if (ht_eq_nocase(name, nlen, "stale-if-error"))
		cc_stale_window(&cc->stale_if_error, v, vlen, has_v, quoted);
}

/*
 * Each element: token [ "=" ( token / quoted-string ) ] (RFC 9111 §5.2;
 * no whitespace around the "=").  A name that is not a token is skipped;
 * a value that is neither form, or one with whitespace around its "=",
 * is still handed over, as an invalid value (a delta directive then
 * turns it into bad: stale, §4.2.1).
 */
void http_cc_parse(struct http_cc *cc, const char *s, size_t len)
{
	struct ht_list l;
	const char *e, *v;
	size_t elen, nlen, vlen;
	bool quoted, spaced;

	ht_list_init(&l, s, len);
	while (ht_list_next(&l, &e, &elen)) {
		for (nlen = 0; nlen < elen && is_tchar(e[nlen]); nlen++)
			;
		if (!nlen)
			continue;
		v = e + nlen;
		vlen = elen - nlen;
		spaced = vlen && ht_is_ows(v[0]);
		ht_trim(&v, &vlen);
		if (!vlen) {
			cc_directive(cc, e, nlen, NULL, 0, false, false);
			continue;
		}
		if (v[0] != '=')
			continue; /* "max-age 5": not a directive */
		v++;
		vlen--;
		if (spaced || (vlen && ht_is_ows(v[0]))) {
			/* "max-age =5", "max-age= 5": not a value */
			cc_directive(cc, e, nlen, "=", 1, true, false);
			continue;
		}
		quoted = vlen >= 2 && v[0] == '"' && v[vlen - 1] == '"';
		if (quoted) {
			v++;
			vlen -= 2;
		}
		cc_directive(cc, e, nlen, v, vlen, true, quoted);
	}
}

bool http_cc_names_field(const char *s, size_t len, const char *field,
			 size_t flen)
{
	struct ht_list l, names;
	const char *e, *v, *n;
	size_t elen, nlen, vlen, len2;

	ht_list_init(&l, s, len);
	while (ht_list_next(&l, &e, &elen)) {
		for (nlen = 0; nlen < elen && is_tchar(e[nlen]); nlen++)
			;
		if (!ht_eq_nocase(e, nlen, "no-cache"))
			continue;
		v = e + nlen;
		vlen = elen - nlen;
		if (!vlen || v[0] != '=')
			continue; /* unqualified, or not a value (OWS) */
		v++;
		vlen--;
		if (vlen >= 2 && v[0] == '"' && v[vlen - 1] == '"') {
			v++;
			vlen -= 2;
		}
		ht_list_init(&names, v, vlen);
		while (ht_list_next(&names, &n, &len2))
			if (len2 == flen && !strncasecmp(n, field, flen))
				return true;
	}
	return false;
}

void http_cc_parse_block(struct http_cc *cc, const char *name,
			 const char *block, size_t len)
{
	const char *p = block, *end = block + len;
	size_t nlen = strlen(name);

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		const char *v = p + nlen + 1;
		size_t vlen;

		if ((size_t)(le - p) > nlen && p[nlen] == ':' &&
		    ht_eq_nocase(p, nlen, name)) {
			vlen = (size_t)(le - v);
			if (vlen && v[vlen - 1] == '\r')
				vlen--;
			ht_trim(&v, &vlen);
			http_cc_parse(cc, v, vlen);
		}
		p = nl ? nl + 1 : end;
	}
}

/* ---- shared-cache policy ---- */

/* ---- Surrogate-Control ---- */

void http_sc_init(struct http_sc *sc)
{
	sc->no_store = false;
	sc->max_age = -1;
}

void http_sc_parse(struct http_sc *sc, const char *s, size_t len,
		   const char *token)
{
	struct ht_list l;
	const char *e, *semi, *v = NULL;
	size_t elen, nlen, vlen = 0;

	ht_list_init(&l, s, len);
	while (ht_list_next(&l, &e, &elen)) {
		semi = memchr(e, ';', elen);
		if (semi) { /* targeted: only ours */
			const char *t = semi + 1;
			size_t tlen = elen - (size_t)(t - e);

			ht_trim(&t, &tlen);
			if (!ht_eq_nocase(t, tlen, token))
				continue;
			elen = (size_t)(semi - e);
		}
		for (nlen = 0; nlen < elen && is_tchar(e[nlen]); nlen++)
			;
		if (!nlen)
			continue;
		if (nlen < elen) {
			/* "name=value", no white space around the '=' */
			if (e[nlen] != '=')
				continue;
			v = e + nlen + 1;
			vlen = elen - nlen - 1;
		} else {
			vlen = 0;
		}
		if (ht_eq_nocase(e, nlen, "no-store") && !vlen) {
			sc->no_store = true;
		} else if (ht_eq_nocase(e, nlen, "max-age") && vlen) {
			const char *plus = memchr(v, '+', vlen);
			int64_t d = delta_seconds(
				v, plus ? (size_t)(plus - v) : vlen, false);

			/* repeated: the smaller, the stricter */
			if (d >= 0 && (sc->max_age < 0 || d < sc->max_age))
				sc->max_age = d;
		}
	}
}

void http_resp_info_init(struct http_resp_info *r)
{
	memset(r, 0, sizeof(*r));
	http_cc_init(&r->cc);
	http_sc_init(&r->sc);
	r->expires = -1;
	r->age = -1;
}

/*
 * §5.3: an Expires that is not an HTTP-date is a time in the past (0
 * here); of several, the first counts (§4.2.1 allows the first or stale).
 */
void http_resp_expires(struct http_resp_info *r, const char *v, size_t vlen)
{
	int64_t t;

	if (r->expires >= 0)
		return;
	ht_trim(&v, &vlen);
	r->expires = gs_http_date_parse(v, vlen, &t) == 0 && t > 0 ? t : 0;
}

/*
 * §5.1: Age = delta-seconds; of a list (one line or several) the first
 * member counts, the rest is discarded.  One that is not delta-seconds
 * (a sign, a fraction, a parameter, empty) sets age_invalid.
 */
void http_resp_age(struct http_resp_info *r, const char *v, size_t vlen)
{
	const char *e;
	size_t elen;
	struct ht_list l;
	int64_t d;

	if (r->age >= 0 || r->age_invalid)
		return; /* a later line: discarded */
	ht_list_init(&l, v, vlen);
	do {
		if (!ht_list_next(&l, &e, &elen)) {
			e = "";
			elen = 0;
			break;
		}
	} while (!elen); /* empty elements do not count (RFC 9110 §5.6.1) */
	d = delta_seconds(e, elen, false);
	if (d < 0)
		r->age_invalid = true;
	else
		r->age = d;
}

bool http_status_heuristic(int status)
{
	switch (status) {
	case 200: /* 206 too, for a cache that stores ranges: not this one */
	case 203:
	case 204:
	case 300:
	case 301:
	case 308:
	case 404:
	case 405:
	case 410:
	case 414:
	case 501:
		return true;
	default:
		return false;
	}
}

/*
 * The final statuses RFC 9110 sec. 15 defines, whose caching rules this
 * cache follows (must-understand, RFC 9111 sec. 5.2.2.3); not 206 (no
 * ranges are stored) nor 304.
 */
static bool status_understood(int st)
{
	return (st >= 200 && st <= 205) ||
	       (st >= 300 && st <= 308 && st != 304 && st != 306) ||
	       (st >= 400 && st <= 417) || st == 421 || st == 422 ||
	       st == 426 || (st >= 500 && st <= 505);
}

/*
 * RFC 9111 sec. 3: a final status the cache understands (206 needs
 * stored ranges, 304 is only an update; with must-understand only the
 * ones it knows), and one that is heuristically cacheable or has
 * explicit freshness, or public.
 */
static bool status_storable(const struct http_resp_info *r)
{
	if (r->status < 200 || r->status > 999 || r->status == 206 ||
	    r->status == 304)
		return false;
	if (r->cc.must_understand && !status_understood(r->status))
		return false;
	return http_status_heuristic(r->status) || r->cc.public_ ||
	       r->cc.max_age >= 0 || r->cc.s_maxage >= 0 || r->expires >= 0 ||
	       r->sc.max_age >= 0;
}

static enum http_store_why store_why(const struct http_req_info *q,
				     const struct http_resp_info *r)
{
	if (!status_storable(r))
		return HTTP_STORE_STATUS;
	/* sec. 5.2.2.3: must-understand, understood, overrides no-store */
	if (q->cc.no_store || (r->cc.no_store && !r->cc.must_understand) ||
	    r->sc.no_store)
		return HTTP_STORE_NO_STORE;
	if (r->cc.private_)
		return HTTP_STORE_PRIVATE;
	if (q->authorization && !r->cc.public_ && r->cc.s_maxage < 0 &&
	    !r->cc.must_revalidate)
		return HTTP_STORE_AUTH;
	if (r->vary_star || (r->has_vary && !q->variants))
		return HTTP_STORE_VARY;
	return HTTP_STORE_OK;
}

/*
 * §4.2.1 and §4.2.2: the freshness lifetime, or -1 when there is none
 * (no explicit expiry, and no heuristic allowed or possible).  A
 * heuristic only for a status that is heuristically cacheable or a
 * public response (§4.2.2), never against no-cache.
 */
static int64_t lifetime(const struct http_resp_info *r,
			const struct http_policy *pol, bool no_cache,
			int64_t date, bool *heuristic)
{
	int64_t lm;

	*heuristic = false;
	if (r->sc.max_age >= 0) /* addressed to this cache: first */
		return r->sc.max_age;
	if (r->cc.s_maxage >= 0)
		return r->cc.s_maxage;
	if (r->cc.max_age >= 0)
		return r->cc.max_age;
	if (r->expires == 0) /* invalid Expires: already stale */
		return 0;
	if (r->expires > 0)
		return clamp(sat_sub(r->expires, date), 0, DELTA_MAX);
	if (no_cache || !r->last_modified || !pol->heuristic_pct ||
	    (!http_status_heuristic(r->status) && !r->cc.public_))
		return -1;
	*heuristic = true;
	lm = clamp(sat_sub(date, r->last_modified), 0, INT64_MAX);
	/* the percent of it, without overflowing */
	lm = lm / 100 * pol->heuristic_pct +
	     lm % 100 * pol->heuristic_pct / 100;
	return lm > pol->heuristic_max ? pol->heuristic_max : lm;
}

void http_store_decide(const struct http_req_info *q,
		       const struct http_resp_info *r, int64_t request_time,
		       int64_t response_time, struct http_store_decision *d)
{
	static const struct http_policy dflt = {
		.heuristic_pct = HTTP_HEURISTIC_PCT_DEFAULT,
		.heuristic_max = HTTP_HEURISTIC_MAX_DEFAULT,
	};

	http_store_decide_policy(q, r, &dflt, request_time, response_time, d);
}

void http_store_decide_policy(const struct http_req_info *q,
			      const struct http_resp_info *r,
			      const struct http_policy *pol,
			      int64_t request_time, int64_t response_time,
			      struct http_store_decision *d)
{
	int64_t date, life, apparent, corrected, initial;
	bool no_cache;

	memset(d, 0, sizeof(*d));
	d->why = store_why(q, r);
	if (d->why != HTTP_STORE_OK)
		return;
	/*
	 * Pragma is deprecated and never had a meaning in a response (RFC
	 * 9111 sec. 5.4): only Cache-Control's no-cache counts.
	 */
	no_cache = r->cc.no_cache;
	/* no Date: the time it was received (RFC 9110 §6.6.1) */
	date = r->date ? r->date : response_time;
	life = lifetime(r, pol, no_cache, date, &d->heuristic);
	/*
	 * An Age that is not delta-seconds leaves the age unknown: stale
	 * (sec. 4.2.1 encourages that for invalid freshness information;
	 * sec. 5.1's "ignore the field" would serve it as new).
	 */
	if (r->age_invalid && life > 0)
		life = 0;
	if (life < 0) {
		if (!r->has_validator) {
			d->why = HTTP_STORE_NO_FRESHNESS;
			return;
		}
		life = 0;
		no_cache = true;
	}
	d->revalidate_always = no_cache;
	d->must_revalidate = r->cc.must_revalidate || r->cc.proxy_revalidate ||
			     r->cc.s_maxage >= 0;
	/* §4.2.3 */
	apparent = clamp(sat_sub(response_time, date), 0, INT64_MAX);
	corrected = sat_add(clamp(r->age, 0, DELTA_MAX),
			    clamp(sat_sub(response_time, request_time), 0,
				  DELTA_MAX));
	initial = apparent > corrected ? apparent : corrected;
	d->age_base = sat_sub(response_time, initial);
	d->fresh_until = sat_add(d->age_base, life);
	/* 0 would read as "always fresh" */
	if (d->fresh_until == 0)
		d->fresh_until = -1;
}

const char *http_store_strwhy(enum http_store_why why)
{
	switch (why) {
	case HTTP_STORE_OK:
		return "stored";
	case HTTP_STORE_STATUS:
		return "status";
	case HTTP_STORE_NO_STORE:
		return "no-store";
	case HTTP_STORE_PRIVATE:
		return "private";
	case HTTP_STORE_AUTH:
		return "authorization";
	case HTTP_STORE_VARY:
		return "vary";
	case HTTP_STORE_NO_FRESHNESS:
		return "no freshness";
	}
	return "unknown";
}

/*
 * An object that is always fresh (stored by PUT: the store is its
 * origin) has nothing to revalidate against; request directives, which
 * address caches, do not apply to it.
 */
bool http_fresh_for(const struct http_cc *q, int64_t fresh_until,
		    int64_t age_base, bool revalidate_always,
		    bool must_revalidate, int64_t now)
{
	int64_t age, left;

	if (fresh_until == 0)
		return true;
	/* a request's no-cache="f" is not defined: taken as no-cache */
	if (q->no_cache || q->no_cache_fields || revalidate_always)
		return false;
	age = clamp(sat_sub(now, age_base), 0, INT64_MAX);
	left = sat_sub(fresh_until, now); /* < 0: stale by -left */
	if (q->max_age >= 0 && age > q->max_age)
		return false;
	if (q->min_fresh >= 0 && left < q->min_fresh)
		return false;
	if (left > 0)
		return true;
	if (must_revalidate || q->max_stale < 0)
		return false;
	return sat_sub(0, left) <= q->max_stale;
}

bool http_stale_ok(enum http_stale_use use, const struct http_cc *resp,
		   const struct http_cc *q, int64_t fresh_until,
		   int64_t age_base, bool revalidate_always,
		   bool must_revalidate, int64_t window_s, int64_t now)
{
	int64_t stale, window = -1;

	if (fresh_until == 0)
		return true; /* never stale */
	/* §4.2.4: no-cache, must-revalidate and the like forbid it */
	if (revalidate_always || must_revalidate)
		return false;
	stale = sat_sub(now, fresh_until);
	if (stale < 0)
		stale = 0;
	if (use == HTTP_STALE_ERROR) {
		window = window_s > 0 ? window_s : -1;
		if (resp->stale_if_error > window)
			window = resp->stale_if_error;
		if (q->stale_if_error > window)
			window = q->stale_if_error;
	} else {
		int64_t age = clamp(sat_sub(now, age_base), 0, INT64_MAX);

		/* the client asked for something fresher than a stale copy */
		if (q->no_cache || q->no_cache_fields || q->min_fresh >= 0 ||
		    (q->max_age >= 0 && age > q->max_age))
			return false;
		window = resp->stale_while_revalidate;
	}
	return window >= 0 && stale <= window;
}
