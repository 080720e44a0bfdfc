/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * HTTP semantics of goblind's GET path without sockets or store: byte
 * ranges, entity tags and preconditions.  (HTTP-dates are the store's,
 * store/httpdate.c; the shared-cache rules the origin client's,
 * store/origin/rfc9111.c.)  Every parser walks (pointer, length) and
 * never reads past it.
 */
#include <string.h>

#include "../store/httptok.h"
#include "http_sem.h"

/* ---- Range ---- */

/* 1*DIGIT saturating at UINT64_MAX: huge numbers stay valid syntax */
static bool parse_u64(const char *s, size_t len, uint64_t *v)
{
	if (!len)
		return false;
	*v = 0;
	for (size_t i = 0; i < len; i++) {
		if (!ht_is_digit(s[i]))
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
	if (dash == e) { /* suffix-range */
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
	for (j = i;
	     j < *n && (r.last == UINT64_MAX || out[j].first <= r.last + 1);
	     j++) {
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
	struct ht_list l;
	struct http_range r;
	unsigned long sat = 0;
	bool any = false, suffix0 = false;

	*n = 0;
	ht_trim(&s, &len);
	eq = memchr(s, '=', len);
	if (!eq || !ht_eq_nocase(s, (size_t)(eq - s), "bytes"))
		return HTTP_RANGE_NONE;
	ht_list_init(&l, eq + 1, len - (size_t)(eq + 1 - s));
	while (ht_list_next(&l, &e, &elen)) {
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
	ht_list_init(&l, eq + 1, len - (size_t)(eq + 1 - s));
	while (ht_list_next(&l, &e, &elen)) {
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
	struct ht_list l;

	ht_trim(&s, &len);
	if (len == 1 && s[0] == '*')
		return exists || etag_len;
	ht_trim(&etag, &etag_len);
	have = etag_len && etag_parse(etag, etag_len, &cweak, &cop, &colen);
	ht_list_init(&l, s, len);
	while (ht_list_next(&l, &e, &elen)) {
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
			     &t) &&
		   last_modified > t) {
		return HTTP_COND_FAILED;
	}
	/* steps 3 and 4 */
	if (c->if_none_match) {
		if (http_etag_match(c->if_none_match, c->if_none_match_len,
				    etag, etag_len, true, exists))
			return get_or_head ? HTTP_COND_NOT_MODIFIED :
					     HTTP_COND_FAILED;
	} else if (get_or_head && last_modified &&
		   cond_date(c->if_modified_since, c->if_modified_since_len,
			     &t) &&
		   last_modified <= t) {
		return HTTP_COND_NOT_MODIFIED;
	}
	/* step 5, If-Range, is http_if_range()'s */
	return HTTP_COND_PASS;
}

bool http_if_range(const char *s, size_t len, const char *etag, size_t etag_len,
		   int64_t last_modified)
{
	const char *op;
	size_t olen;
	bool w;
	int64_t t;

	ht_trim(&s, &len);
	if ((len && s[0] == '"') || (len >= 2 && s[0] == 'W' && s[1] == '/')) {
		if (!etag_parse(s, len, &w, &op, &olen) || w)
			return false;
		return etag_len &&
		       http_etag_match(s, len, etag, etag_len, false, true);
	}
	return last_modified && http_date_parse(s, len, &t) == 0 &&
	       t == last_modified;
}
