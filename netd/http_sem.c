/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * HTTP semantics without sockets or store: HTTP-dates, byte ranges,
 * entity tags and preconditions, Cache-Control and shared-cache policy.
 * Every parser walks (pointer, length) and never reads past it.
 */
#include <string.h>

#include "http_sem.h"

/* RFC 9111 §1.2.2: delta-seconds that do not fit are 2^31 */
#define DELTA_MAX INT64_C(2147483648)
#define HEURISTIC_MAX 86400	/* cap of the 10% rule (one day) */

/* IMF-fixdate years 0000-9999: what HTTP_DATE_LEN can hold */
#define DATE_MIN INT64_C(-62167219200)	/* 0000-01-01 00:00:00 */
#define DATE_MAX INT64_C(253402300799)	/* 9999-12-31 23:59:59 */

/* ---- small helpers ---- */

static bool is_ows(char c)
{
	return c == ' ' || c == '\t';
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static char lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/* RFC 9110 §5.6.2 tchar */
static bool is_tchar(char c)
{
	unsigned char u = (unsigned char)c;

	if ((u >= '0' && u <= '9') || (u >= 'a' && u <= 'z') ||
	    (u >= 'A' && u <= 'Z'))
		return true;
	return u && strchr("!#$%&'*+-.^_`|~", u) != NULL;
}

/* trim OWS at both ends of [*s, *s + *len) */
static void trim(const char **s, size_t *len)
{
	while (*len && is_ows(**s)) {
		(*s)++;
		(*len)--;
	}
	while (*len && is_ows((*s)[*len - 1]))
		(*len)--;
}

static bool eq_nocase(const char *a, size_t alen, const char *b)
{
	size_t blen = strlen(b);

	if (alen != blen)
		return false;
	for (size_t i = 0; i < alen; i++)
		if (lower(a[i]) != lower(b[i]))
			return false;
	return true;
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

/* ---- HTTP-date ---- */

static const char *const wkday[7] = {
	"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat",
};
static const char *const weekday[7] = {
	"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday",
	"Saturday",
};
static const char *const month[12] = {
	"Jan", "Feb", "Mar", "Apr", "May", "Jun",
	"Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
};

static const int mdays[12] = {
	31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31,
};

static bool leap(int64_t y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

/* days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant) */
static int64_t days_from_civil(int64_t y, int m, int d)
{
	int64_t era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *y, int *m, int *d)
{
	int64_t era, doe, yoe, doy, mp;

	z += 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = z - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	*d = (int)(doy - (153 * mp + 2) / 5 + 1);
	*m = (int)(mp < 10 ? mp + 3 : mp - 9);
	*y = yoe + era * 400 + (*m <= 2);
}

/* A cursor over a date: each step consumes exactly what it matches. */
struct cur {
	const char *p, *end;
};

static bool lit(struct cur *c, const char *s)
{
	size_t n = strlen(s);

	if ((size_t)(c->end - c->p) < n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (lower(c->p[i]) != lower(s[i]))
			return false;
	c->p += n;
	return true;
}

/* exactly @n digits */
static bool digits(struct cur *c, int n, int *v)
{
	*v = 0;
	if (c->end - c->p < n)
		return false;
	for (int i = 0; i < n; i++) {
		if (!is_digit(c->p[i]))
			return false;
		*v = *v * 10 + (c->p[i] - '0');
	}
	c->p += n;
	return true;
}

/* one of the names in @names (case-insensitive); its index or -1 */
static int name(struct cur *c, const char *const *names, int count)
{
	for (int i = 0; i < count; i++)
		if (lit(c, names[i]))
			return i;
	return -1;
}

/* "HH:MM:SS" */
static bool time_of_day(struct cur *c, int *h, int *mi, int *s)
{
	return digits(c, 2, h) && lit(c, ":") && digits(c, 2, mi) &&
	       lit(c, ":") && digits(c, 2, s);
}

/*
 * The long day names start with the short ones: try the long list first
 * for RFC 850, and require the separator that follows to tell them apart.
 */
int http_date_parse(const char *s, size_t len, int64_t *t)
{
	struct cur c;
	int mon, day, year, h, mi, sec, wd;
	int64_t y;

	trim(&s, &len);
	c.p = s;
	c.end = s + len;
	if ((wd = name(&c, weekday, 7)) >= 0 && lit(&c, ", ")) {
		/* RFC 850: Sunday, 06-Nov-94 08:49:37 GMT */
		if (!digits(&c, 2, &day) || !lit(&c, "-") ||
		    (mon = name(&c, month, 12)) < 0 || !lit(&c, "-") ||
		    !digits(&c, 2, &year) || !lit(&c, " ") ||
		    !time_of_day(&c, &h, &mi, &sec) || !lit(&c, " GMT"))
			return -1;
		/* a fixed pivot keeps this pure: 70-99 are 19xx, 00-69 20xx */
		y = year + (year >= 70 ? 1900 : 2000);
	} else {
		c.p = s;
		if ((wd = name(&c, wkday, 7)) < 0)
			return -1;
		if (lit(&c, ", ")) {
			/* IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT */
			if (!digits(&c, 2, &day) || !lit(&c, " ") ||
			    (mon = name(&c, month, 12)) < 0 || !lit(&c, " ") ||
			    !digits(&c, 4, &year) || !lit(&c, " ") ||
			    !time_of_day(&c, &h, &mi, &sec) || !lit(&c, " GMT"))
				return -1;
		} else {
			/* asctime: Sun Nov  6 08:49:37 1994 */
			if (!lit(&c, " ") || (mon = name(&c, month, 12)) < 0 ||
			    !lit(&c, " "))
				return -1;
			if (lit(&c, " ")) {
				if (!digits(&c, 1, &day))
					return -1;
			} else if (!digits(&c, 2, &day)) {
				return -1;
			}
			if (!lit(&c, " ") || !time_of_day(&c, &h, &mi, &sec) ||
			    !lit(&c, " ") || !digits(&c, 4, &year))
				return -1;
		}
		y = year;
	}
	if (c.p != c.end)
		return -1;
	/* second 60: a leap second (RFC 5322), counted as the next minute */
	if (day < 1 || day > mdays[mon] + (mon == 1 && leap(y)) || h > 23 ||
	    mi > 59 || sec > 60)
		return -1;
	(void)wd;	/* a wrong day name is tolerated, as most servers do */
	*t = days_from_civil(y, mon + 1, day) * 86400 + h * 3600 + mi * 60 +
	     sec;
	return 0;
}

/* @v in exactly @n decimal digits, zero padded (0 <= v < 10^n) */
static void put_digits(char *out, int64_t v, int n)
{
	while (n--) {
		out[n] = (char)('0' + v % 10);
		v /= 10;
	}
}

void http_date_format(int64_t t, char *out)
{
	int64_t days, secs, y;
	int m, d, wd;

	t = clamp(t, DATE_MIN, DATE_MAX);
	days = t / 86400;
	secs = t % 86400;
	if (secs < 0) {
		secs += 86400;
		days--;
	}
	civil_from_days(days, &y, &m, &d);
	/* 1970-01-01 was a Thursday */
	wd = (int)(((days % 7) + 7 + 4) % 7);
	memcpy(out, wkday[wd], 3);
	memcpy(out + 3, ", ", 2);
	put_digits(out + 5, d, 2);
	out[7] = ' ';
	memcpy(out + 8, month[m - 1], 3);
	out[11] = ' ';
	put_digits(out + 12, y, 4);
	out[16] = ' ';
	put_digits(out + 17, secs / 3600, 2);
	out[19] = ':';
	put_digits(out + 20, secs / 60 % 60, 2);
	out[22] = ':';
	put_digits(out + 23, secs % 60, 2);
	memcpy(out + 25, " GMT", 5);	/* and the NUL */
}

/* ---- lists ---- */

/*
 * Split a #list (RFC 9110 §5.6.1) at commas outside quoted strings.
 * Each call yields the next element, OWS trimmed, possibly empty (empty
 * elements are allowed and the callers skip them).  False at the end.
 */
struct list {
	const char *p, *end;
	bool done;
};

static void list_init(struct list *l, const char *s, size_t len)
{
	l->p = s;
	l->end = s + len;
	l->done = false;
}

static bool list_next(struct list *l, const char **e, size_t *elen)
{
	const char *q = l->p;
	bool quoted = false;

	if (l->done)
		return false;
	for (; q < l->end; q++) {
		if (quoted && *q == '\\' && q + 1 < l->end)
			q++;
		else if (*q == '"')
			quoted = !quoted;
		else if (!quoted && *q == ',')
			break;
	}
	*e = l->p;
	*elen = (size_t)(q - l->p);
	trim(e, elen);
	if (q < l->end)
		l->p = q + 1;
	else
		l->done = true;
	return true;
}

/* ---- Range ---- */

/* 1*DIGIT saturating at UINT64_MAX: huge numbers stay valid syntax */
static bool parse_u64(const char *s, size_t len, uint64_t *v)
{
	if (!len)
		return false;
	*v = 0;
	for (size_t i = 0; i < len; i++) {
		if (!is_digit(s[i]))
			return false;
		unsigned d = (unsigned)(s[i] - '0');

		if (*v > (UINT64_MAX - d) / 10)
			*v = UINT64_MAX;
		else
			*v = *v * 10 + d;
	}
	return true;
}

/* @a < @b as decimal numbers of any length (both all digits) */
static bool dec_less(const char *a, size_t alen, const char *b, size_t blen)
{
	while (alen > 1 && *a == '0') {
		a++;
		alen--;
	}
	while (blen > 1 && *b == '0') {
		b++;
		blen--;
	}
	if (alen != blen)
		return alen < blen;
	return memcmp(a, b, alen) < 0;
}

enum spec_kind { SPEC_BAD, SPEC_EMPTY, SPEC_UNSAT, SPEC_OK, SPEC_SUFFIX0 };

/* one range-spec resolved against @size into @r */
static enum spec_kind range_spec(const char *e, size_t len, uint64_t size,
				 struct http_range *r)
{
	const char *dash = memchr(e, '-', len);
	uint64_t a, b;

	if (!len)
		return SPEC_EMPTY;
	if (!dash)
		return SPEC_BAD;
	if (dash == e) {	/* suffix-range */
		if (!parse_u64(e + 1, len - 1, &b))
			return SPEC_BAD;
		if (b == 0)
			return SPEC_UNSAT;
		if (size == 0)
			return SPEC_SUFFIX0;
		r->first = b >= size ? 0 : size - b;
		r->last = size - 1;
		return SPEC_OK;
	}
	if (!parse_u64(e, (size_t)(dash - e), &a))
		return SPEC_BAD;
	b = UINT64_MAX;
	if (dash + 1 < e + len) {
		const char *l = dash + 1;
		size_t llen = (size_t)(e + len - l);

		if (!parse_u64(l, llen, &b))
			return SPEC_BAD;
		if (b < a || (b == UINT64_MAX &&
			      dec_less(l, llen, e, (size_t)(dash - e))))
			return SPEC_BAD;
	}
	if (a >= size)
		return SPEC_UNSAT;
	r->first = a;
	r->last = b >= size ? size - 1 : b;
	return SPEC_OK;
}

/*
 * Add @r to the ascending, disjoint set out[0..*n), merging what overlaps
 * or touches it.  False when the set would need more than @max entries.
 */
static bool range_union(struct http_range *out, unsigned max, unsigned *n,
			struct http_range r)
{
	unsigned i = 0, j;

	while (i < *n && out[i].last != UINT64_MAX && out[i].last + 1 < r.first)
		i++;
	/* out[i..j) overlap or touch r */
	for (j = i; j < *n && (r.last == UINT64_MAX ||
			       out[j].first <= r.last + 1); j++) {
		if (out[j].first < r.first)
			r.first = out[j].first;
		if (out[j].last > r.last)
			r.last = out[j].last;
	}
	if (i == j) {
		if (*n >= max)
			return false;
		memmove(out + i + 1, out + i, (*n - i) * sizeof(*out));
		(*n)++;
	} else {
		memmove(out + i + 1, out + j, (*n - j) * sizeof(*out));
		*n -= j - i - 1;
	}
	out[i] = r;
	return true;
}

/*
 * Two passes: the first validates the whole header and counts what is
 * satisfiable; the second fills @out, in request order when they fit,
 * else as their union (ascending, merged), which must fit in @max.  The
 * union is built as it goes, so a request whose early ranges overflow
 * @max before later ones would cover them is refused: the whole object
 * is always a correct answer.
 */
enum http_range_result http_range_parse(const char *s, size_t len,
					uint64_t size, struct http_range *out,
					unsigned max, unsigned *n)
{
	const char *eq, *e;
	size_t elen;
	struct list l;
	struct http_range r;
	unsigned long sat = 0;
	bool any = false, suffix0 = false;

	*n = 0;
	trim(&s, &len);
	eq = memchr(s, '=', len);
	if (!eq || !eq_nocase(s, (size_t)(eq - s), "bytes"))
		return HTTP_RANGE_NONE;
	list_init(&l, eq + 1, len - (size_t)(eq + 1 - s));
	while (list_next(&l, &e, &elen)) {
		switch (range_spec(e, elen, size, &r)) {
		case SPEC_BAD:
			return HTTP_RANGE_NONE;
		case SPEC_EMPTY:
			continue;
		case SPEC_OK:
			sat++;
			break;
		case SPEC_SUFFIX0:
			suffix0 = true;
			break;
		case SPEC_UNSAT:
			break;
		}
		any = true;
	}
	if (!any)
		return HTTP_RANGE_NONE;
	/*
	 * An empty representation has no bytes to send in a 206: a suffix
	 * range on it, satisfiable by the RFC, gets the whole (empty) 200.
	 */
	if (suffix0)
		return HTTP_RANGE_NONE;
	if (!sat)
		return HTTP_RANGE_UNSATISFIABLE;
	list_init(&l, eq + 1, len - (size_t)(eq + 1 - s));
	while (list_next(&l, &e, &elen)) {
		if (range_spec(e, elen, size, &r) != SPEC_OK)
			continue;
		if (sat <= max) {
			out[(*n)++] = r;
		} else if (!range_union(out, max, n, r)) {
			*n = 0;
			return HTTP_RANGE_NONE;
		}
	}
	return HTTP_RANGE_OK;
}

/* ---- entity tags ---- */

/* RFC 9110 §8.8.3 etagc: %x21 / %x23-7E / obs-text */
static bool is_etagc(char c)
{
	unsigned char u = (unsigned char)c;

	return u == 0x21 || (u >= 0x23 && u != 0x7f);
}

/* a whole entity-tag; @opaque, @olen: the quoted part, quotes included */
static bool etag_parse(const char *s, size_t len, bool *weak,
		       const char **opaque, size_t *olen)
{
	*weak = false;
	if (len >= 2 && s[0] == 'W' && s[1] == '/') {
		*weak = true;
		s += 2;
		len -= 2;
	}
	if (len < 2 || s[0] != '"' || s[len - 1] != '"')
		return false;
	for (size_t i = 1; i + 1 < len; i++)
		if (!is_etagc(s[i]))
			return false;
	*opaque = s;
	*olen = len;
	return true;
}

/*
 * The whole list is checked before the answer is given: a malformed list
 * matches nothing, even when an element before the damage would.
 */
bool http_etag_match(const char *s, size_t len, const char *etag,
		     size_t etag_len, bool weak, bool exists)
{
	const char *e, *op, *cop = NULL;
	size_t elen, olen, colen = 0;
	bool w, cweak = false, have, match = false, any = false;
	struct list l;

	trim(&s, &len);
	if (len == 1 && s[0] == '*')
		return exists || etag_len;
	trim(&etag, &etag_len);
	have = etag_len && etag_parse(etag, etag_len, &cweak, &cop, &colen);
	list_init(&l, s, len);
	while (list_next(&l, &e, &elen)) {
		if (!elen)
			continue;
		if (!etag_parse(e, elen, &w, &op, &olen))
			return false;
		any = true;
		if (have && (weak || (!w && !cweak)) && olen == colen &&
		    !memcmp(op, cop, olen))
			match = true;
	}
	return any && match;
}

/* ---- conditionals ---- */

static bool cond_date(const char *s, size_t len, int64_t *t)
{
	return s && http_date_parse(s, len, t) == 0;
}

enum http_cond_result http_cond_eval(const struct http_cond *c,
				     bool get_or_head, bool exists,
				     const char *etag, size_t etag_len,
				     int64_t last_modified)
{
	int64_t t;

	/*
	 * RFC 9110 §13.2.1: preconditions are ignored when the answer
	 * without them would be neither 2xx nor 412; a GET or HEAD of
	 * nothing is a 404.
	 */
	if (get_or_head && !exists)
		return HTTP_COND_PASS;
	/* steps 1 and 2 */
	if (c->if_match) {
		if (!http_etag_match(c->if_match, c->if_match_len, etag,
				     etag_len, false, exists))
			return HTTP_COND_FAILED;
	} else if (exists && last_modified &&
		   cond_date(c->if_unmodified_since, c->if_unmodified_since_len,
			     &t) && last_modified > t) {
		return HTTP_COND_FAILED;
	}
	/* steps 3 and 4 */
	if (c->if_none_match) {
		if (http_etag_match(c->if_none_match, c->if_none_match_len,
				    etag, etag_len, true, exists))
			return get_or_head ? HTTP_COND_NOT_MODIFIED
					   : HTTP_COND_FAILED;
	} else if (get_or_head && last_modified &&
		   cond_date(c->if_modified_since, c->if_modified_since_len,
			     &t) && last_modified <= t) {
		return HTTP_COND_NOT_MODIFIED;
	}
	/* step 5, If-Range, is http_if_range()'s */
	return HTTP_COND_PASS;
}

bool http_if_range(const char *s, size_t len, const char *etag,
		   size_t etag_len, int64_t last_modified)
{
	const char *op;
	size_t olen;
	bool w;
	int64_t t;

	trim(&s, &len);
	if ((len && s[0] == '"') || (len >= 2 && s[0] == 'W' && s[1] == '/')) {
		if (!etag_parse(s, len, &w, &op, &olen) || w)
			return false;
		return etag_len && http_etag_match(s, len, etag, etag_len,
						   false, true);
	}
	return last_modified && http_date_parse(s, len, &t) == 0 &&
	       t == last_modified;
}

/* ---- Cache-Control ---- */

void http_cc_init(struct http_cc *cc)
{
	memset(cc, 0, sizeof(*cc));
	cc->max_age = cc->s_maxage = cc->max_stale = cc->min_fresh = -1;
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
		if (!is_digit(c))
			return -1;
		n++;
		if (r < DELTA_MAX)
			r = r * 10 + (c - '0');
	}
	if (!n)
		return -1;
	return r > DELTA_MAX ? DELTA_MAX : r;
}

enum dup_rule { DUP_STALE, DUP_MIN, DUP_MAX };

/*
 * Store a delta directive.  RFC 9111 §4.2.1 lets a cache take either the
 * first of conflicting values or call the response stale; max-age and
 * s-maxage do the latter.  For the request's max-stale the smaller and
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
	if (*field < 0 || *field == d)
		*field = d;
	else if (rule == DUP_STALE)
		*field = 0;
	else if (rule == DUP_MIN)
		*field = d < *field ? d : *field;
	else
		*field = d > *field ? d : *field;
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
		{ "must-revalidate", offsetof(struct http_cc, must_revalidate) },
		{ "proxy-revalidate",
		  offsetof(struct http_cc, proxy_revalidate) },
		{ "immutable", offsetof(struct http_cc, immutable) },
		{ "only-if-cached", offsetof(struct http_cc, only_if_cached) },
	};

	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		if (eq_nocase(name, nlen, flags[i].name)) {
			/* no-cache="f" and private="f": the whole message */
			*(bool *)((char *)cc + flags[i].off) = true;
			return;
		}
	}
	if (eq_nocase(name, nlen, "max-age"))
		cc_delta(cc, &cc->max_age, v, vlen, has_v, quoted, DUP_STALE);
	else if (eq_nocase(name, nlen, "s-maxage"))
		cc_delta(cc, &cc->s_maxage, v, vlen, has_v, quoted, DUP_STALE);
	else if (eq_nocase(name, nlen, "min-fresh"))
		cc_delta(cc, &cc->min_fresh, v, vlen, has_v, quoted, DUP_MAX);
	else if (eq_nocase(name, nlen, "max-stale") && !has_v)
		/* no argument: any staleness; 2^31 s is as good as that */
		cc_delta(cc, &cc->max_stale, "2147483648", 10, true, false,
			 DUP_MIN);
	else if (eq_nocase(name, nlen, "max-stale"))
		cc_delta(cc, &cc->max_stale, v, vlen, has_v, quoted, DUP_MIN);
}

/*
 * Each element: token [ OWS "=" OWS ( token / quoted-string ) ].  A name
 * that is not a token is skipped; a value that is neither form is still
 * handed over (a delta directive then turns it into bad).
 */
void http_cc_parse(struct http_cc *cc, const char *s, size_t len)
{
	struct list l;
	const char *e, *v;
	size_t elen, nlen, vlen;
	bool quoted;

	list_init(&l, s, len);
	while (list_next(&l, &e, &elen)) {
		for (nlen = 0; nlen < elen && is_tchar(e[nlen]); nlen++)
			;
		if (!nlen)
			continue;
		v = e + nlen;
		vlen = elen - nlen;
		trim(&v, &vlen);
		if (!vlen) {
			cc_directive(cc, e, nlen, NULL, 0, false, false);
			continue;
		}
		if (v[0] != '=')
			continue;	/* "max-age 5": not a directive */
		v++;
		vlen--;
		trim(&v, &vlen);
		quoted = vlen >= 2 && v[0] == '"' && v[vlen - 1] == '"';
		if (quoted) {
			v++;
			vlen -= 2;
		}
		cc_directive(cc, e, nlen, v, vlen, true, quoted);
	}
}

/* ---- shared-cache policy ---- */

void http_resp_info_init(struct http_resp_info *r)
{
	memset(r, 0, sizeof(*r));
	http_cc_init(&r->cc);
	r->expires = -1;
	r->age = -1;
}

/* no directive at all (unknown ones leave no trace either) */
static bool cc_empty(const struct http_cc *cc)
{
	struct http_cc none;

	http_cc_init(&none);
	return !memcmp(cc, &none, sizeof(none));
}

static enum http_store_why store_why(const struct http_req_info *q,
				     const struct http_resp_info *r)
{
	if (r->status != 200)
		return HTTP_STORE_STATUS;
	if (q->cc.no_store || r->cc.no_store)
		return HTTP_STORE_NO_STORE;
	if (r->cc.private_)
		return HTTP_STORE_PRIVATE;
	if (q->authorization && !r->cc.public_ && r->cc.s_maxage < 0 &&
	    !r->cc.must_revalidate)
		return HTTP_STORE_AUTH;
	if (r->has_set_cookie)
		return HTTP_STORE_SET_COOKIE;
	if (r->has_vary || r->vary_star)
		return HTTP_STORE_VARY;
	return HTTP_STORE_OK;
}

/*
 * §4.2.1 and §4.2.2: the freshness lifetime, or -1 when there is none
 * (no explicit expiry, and no heuristic allowed or possible).
 */
static int64_t lifetime(const struct http_resp_info *r, bool no_cache,
			int64_t date, bool *heuristic)
{
	int64_t lm;

	*heuristic = false;
	if (r->cc.s_maxage >= 0)
		return r->cc.s_maxage;
	if (r->cc.max_age >= 0)
		return r->cc.max_age;
	if (r->expires == 0)	/* invalid Expires: already stale */
		return 0;
	if (r->expires > 0)
		return clamp(sat_sub(r->expires, date), 0, DELTA_MAX);
	if (no_cache || !r->last_modified)
		return -1;
	*heuristic = true;
	lm = clamp(sat_sub(date, r->last_modified), 0, INT64_MAX) / 10;
	return lm > HEURISTIC_MAX ? HEURISTIC_MAX : lm;
}

void http_store_decide(const struct http_req_info *q,
		       const struct http_resp_info *r, int64_t request_time,
		       int64_t response_time, struct http_store_decision *d)
{
	int64_t date, life, apparent, corrected, initial;
	bool no_cache;

	memset(d, 0, sizeof(*d));
	d->why = store_why(q, r);
	if (d->why != HTTP_STORE_OK)
		return;
	no_cache = r->cc.no_cache ||
		   (r->has_pragma_no_cache && cc_empty(&r->cc));
	/* no Date: the time it was received (RFC 9110 §6.6.1) */
	date = r->date ? r->date : response_time;
	life = lifetime(r, no_cache, date, &d->heuristic);
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
	case HTTP_STORE_SET_COOKIE:
		return "set-cookie";
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
	if (q->no_cache || revalidate_always)
		return false;
	age = clamp(sat_sub(now, age_base), 0, INT64_MAX);
	left = sat_sub(fresh_until, now);	/* < 0: stale by -left */
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
