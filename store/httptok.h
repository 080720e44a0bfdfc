/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * httptok.h: the HTTP token helpers (RFC 9110 sec. 5.6) that the three
 * HTTP parsers of the tree share: the store's HTTP-dates (httpdate.c), the
 * origin client's RFC 9111 rules (origin/rfc9111.c) and goblind's ranges
 * and preconditions (netd/http_sem.c).  Inline, on (pointer, length),
 * never past it.
 */
#ifndef GOBLIN_HTTPTOK_H
#define GOBLIN_HTTPTOK_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

static inline bool ht_is_ows(char c)
{
	return c == ' ' || c == '\t';
}

static inline bool ht_is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static inline char ht_lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/* trim OWS at both ends of [*s, *s + *len) */
static inline void ht_trim(const char **s, size_t *len)
{
	while (*len && ht_is_ows(**s)) {
		(*s)++;
		(*len)--;
	}
	while (*len && ht_is_ows((*s)[*len - 1]))
		(*len)--;
}

/* [a, a + alen) is @b, ASCII case aside */
static inline bool ht_eq_nocase(const char *a, size_t alen, const char *b)
{
	size_t blen = strlen(b);

	if (alen != blen)
		return false;
	for (size_t i = 0; i < alen; i++)
		if (ht_lower(a[i]) != ht_lower(b[i]))
			return false;
	return true;
}

/*
 * Split a #list (RFC 9110 sec. 5.6.1) at commas outside quoted strings.
 * Each call yields the next element, OWS trimmed, possibly empty (empty
 * elements are allowed and the callers skip them).  False at the end.
 */
struct ht_list {
	const char *p, *end;
	bool done;
};

static inline void ht_list_init(struct ht_list *l, const char *s, size_t len)
{
	l->p = s;
	l->end = s + len;
	l->done = false;
}

static inline bool ht_list_next(struct ht_list *l, const char **e, size_t *elen)
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
	ht_trim(e, elen);
	if (q < l->end)
		l->p = q + 1;
	else
		l->done = true;
	return true;
}

#endif
