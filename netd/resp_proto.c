/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The RESP request parser: multibulk arrays of bulk strings as Redis 7's
 * processMultibulkBuffer() takes them, inline commands as its
 * processInlineBuffer() and sdssplitargs() do, with Redis's error texts.
 * One difference: a bulk's bytes must be followed by "\r\n" (Redis skips
 * two bytes unseen), so a client that miscounts a length gets an error
 * instead of a command made of its value's bytes.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "resp_proto.h"

bool resp_ll(const char *p, size_t len, long long *out)
{
	unsigned long long v = 0;
	bool neg = false;
	size_t i = 0;

	if (len == 0 || len > 20)
		return false;
	if (len == 1 && p[0] == '0') {
		*out = 0;
		return true;
	}
	if (p[0] == '-') {
		neg = true;
		if (++i == len)
			return false;
	}
	if (p[i] < '1' || p[i] > '9') /* no leading zero, sign or space */
		return false;
	for (; i < len; i++) {
		if (p[i] < '0' || p[i] > '9')
			return false;
		if (v > (ULLONG_MAX - (unsigned)(p[i] - '0')) / 10)
			return false;
		v = v * 10 + (unsigned)(p[i] - '0');
	}
	if (neg) {
		if (v > (unsigned long long)LLONG_MAX + 1)
			return false;
		*out = v == (unsigned long long)LLONG_MAX + 1 ? LLONG_MIN :
								-(long long)v;
	} else {
		if (v > LLONG_MAX)
			return false;
		*out = (long long)v;
	}
	return true;
}

bool resp_double(const char *p, size_t len, double *out)
{
	char buf[64], *end;
	double d;

	if (len == 0 || len >= sizeof(buf) || isspace((unsigned char)p[0]))
		return false;
	memcpy(buf, p, len);
	buf[len] = 0;
	errno = 0;
	d = strtod(buf, &end);
	if (*end || isnan(d) || (errno == ERANGE && !isinf(d)))
		return false;
	*out = d;
	return true;
}

bool resp_is(const struct resp_arg *a, const char *lit)
{
	size_t n = strlen(lit);

	return a->len == n && !strncasecmp(a->p, lit, n);
}

bool resp_glob(const char *pat, size_t plen, const char *s, size_t slen)
{
	while (plen && slen) {
		switch (pat[0]) {
		case '*':
			while (plen > 1 && pat[1] == '*') {
				pat++;
				plen--;
			}
			if (plen == 1)
				return true;
			for (size_t i = 0; i <= slen; i++)
				if (resp_glob(pat + 1, plen - 1, s + i,
					      slen - i))
					return true;
			return false;
		case '?':
			break;
		case '[': {
			bool neg, match = false;

			pat++;
			plen--;
			neg = plen && pat[0] == '^';
			if (neg) {
				pat++;
				plen--;
			}
			while (plen && pat[0] != ']') {
				if (pat[0] == '\\' && plen >= 2) {
					pat++;
					plen--;
					match |= pat[0] == s[0];
				} else if (plen >= 3 && pat[1] == '-') {
					char lo = pat[0], hi = pat[2];

					if (lo > hi) {
						char t = lo;

						lo = hi;
						hi = t;
					}
					match |= s[0] >= lo && s[0] <= hi;
					pat += 2;
					plen -= 2;
				} else {
					match |= pat[0] == s[0];
				}
				pat++;
				plen--;
			}
			if (neg)
				match = !match;
			if (!match)
				return false;
			if (!plen) /* "[abc" without its "]": as Redis */
				return false;
			break;
		}
		case '\\':
			if (plen >= 2) {
				pat++;
				plen--;
			}
			/* fall through */
		default:
			if (pat[0] != s[0])
				return false;
			break;
		}
		pat++;
		plen--;
		s++;
		slen--;
	}
	while (plen && pat[0] == '*') {
		pat++;
		plen--;
	}
	return !plen && !slen;
}

/* ---- inline commands (sdssplitargs) ---- */

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = (char)tolower((unsigned char)c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* Split @line into q->argv, unquoting into q->unq.  False: bad quotes. */
static bool split_args(const char *line, size_t len, struct resp_req *q)
{
	const char *p = line, *end = line + len;
	char *o = q->unq;

	q->argc = 0;
	for (;;) {
		char *start;
		bool dq = false, sq = false;

		while (p < end && isspace((unsigned char)*p))
			p++;
		if (p == end)
			return true;
		if (q->argc == RESP_ARGS_MAX)
			return false;
		start = o;
		for (;;) {
			if (dq) {
				if (p == end)
					return false;
				if (*p == '\\' && end - p >= 4 && p[1] == 'x' &&
				    hexval(p[2]) >= 0 && hexval(p[3]) >= 0) {
					*o++ = (char)(hexval(p[2]) * 16 +
						      hexval(p[3]));
					p += 3;
				} else if (*p == '\\' && end - p >= 2) {
					char c;

					p++;
					switch (*p) {
					case 'n':
						c = '\n';
						break;
					case 'r':
						c = '\r';
						break;
					case 't':
						c = '\t';
						break;
					case 'b':
						c = '\b';
						break;
					case 'a':
						c = '\a';
						break;
					default:
						c = *p;
						break;
					}
					*o++ = c;
				} else if (*p == '"') {
					/* the closing quote ends the word */
					if (end - p > 1 &&
					    !isspace((unsigned char)p[1]))
						return false;
					dq = false;
					p++;
					break;
				} else {
					*o++ = *p;
				}
			} else if (sq) {
				if (p == end)
					return false;
				if (*p == '\\' && end - p >= 2 &&
				    p[1] == '\'') {
					p++;
					*o++ = '\'';
				} else if (*p == '\'') {
					if (end - p > 1 &&
					    !isspace((unsigned char)p[1]))
						return false;
					sq = false;
					p++;
					break;
				} else {
					*o++ = *p;
				}
			} else {
				if (p == end || isspace((unsigned char)*p))
					break;
				if (*p == '"')
					dq = true;
				else if (*p == '\'')
					sq = true;
				else
					*o++ = *p;
			}
			p++;
		}
		q->argv[q->argc].p = start;
		q->argv[q->argc].len = (size_t)(o - start);
		q->argc++;
	}
}

static enum resp_parse_result parse_inline(const char *buf, size_t len,
					   const struct resp_limits *lim,
					   struct resp_req *q, size_t *used)
{
	const char *nl = memchr(buf, '\n', len);
	size_t ll;

	q->inline_req = true;
	if (!nl) {
		if (len >= lim->whole_max || len >= sizeof(q->unq)) {
			q->err = "too big inline request";
			return RESP_PARSE_ERROR;
		}
		return RESP_PARSE_MORE;
	}
	ll = (size_t)(nl - buf);
	*used = ll + 1;
	if (ll && buf[ll - 1] == '\r')
		ll--;
	if (ll >= sizeof(q->unq)) {
		q->err = "too big inline request";
		return RESP_PARSE_ERROR;
	}
	if (!split_args(buf, ll, q)) {
		q->err = "unbalanced quotes in request";
		return RESP_PARSE_ERROR;
	}
	q->nargs = q->argc;
	return q->argc ? RESP_PARSE_OK : RESP_PARSE_EMPTY;
}

/* ---- multibulk ---- */

/*
 * A "*N\r\n" or "$N\r\n" line at @buf: 1 with the number, 0 more input,
 * -1 too long.  *@used: its bytes.  *@ok: the number parsed.
 */
static int count_line(const char *buf, size_t len, long long *n, bool *ok,
		      size_t *used)
{
	const char *cr = memchr(buf, '\r', len);

	if (!cr)
		return len > RESP_COUNT_LINE_MAX ? -1 : 0;
	if ((size_t)(cr - buf) + 2 > len)
		return 0;
	*ok = resp_ll(buf + 1, (size_t)(cr - buf) - 1, n);
	*used = (size_t)(cr - buf) + 2; /* Redis skips the "\n" unseen */
	return 1;
}

enum resp_parse_result resp_parse_bulks(const char *buf, size_t len, uint64_t n,
					const struct resp_limits *lim,
					struct resp_req *q, size_t *used)
{
	size_t pos = 0;

	for (uint64_t i = 0; i < n; i++) {
		long long bl = 0;
		bool ok = false;
		size_t hl = 0;
		int r;

		if (pos >= len)
			goto more;
		if (buf[pos] != '$') {
			snprintf(q->errbuf, sizeof(q->errbuf),
				 "expected '$', got '%c'", buf[pos]);
			q->err = q->errbuf;
			return RESP_PARSE_ERROR;
		}
		r = count_line(buf + pos, len - pos, &bl, &ok, &hl);
		if (r < 0) {
			q->err = "too big bulk count string";
			return RESP_PARSE_ERROR;
		}
		if (r == 0)
			goto more;
		if (!ok || bl < 0 || (uint64_t)bl > lim->bulk_max) {
			q->err = "invalid bulk length";
			return RESP_PARSE_ERROR;
		}
		if (lim->unauth && bl > RESP_UNAUTH_BULK_MAX) {
			q->err = "unauthenticated bulk length";
			return RESP_PARSE_ERROR;
		}
		if ((uint64_t)bl > lim->big_min) {
			q->big_len = (uint64_t)bl;
			*used = pos + hl;
			return RESP_PARSE_BIG;
		}
		if (q->argc == RESP_ARGS_MAX)
			return RESP_PARSE_TOO_LONG;
		if (len - pos - hl < (size_t)bl + 2)
			goto more;
		if (buf[pos + hl + bl] != '\r' ||
		    buf[pos + hl + bl + 1] != '\n') {
			q->err = "expected '\\r\\n' after the bytes of a bulk";
			return RESP_PARSE_ERROR;
		}
		q->argv[q->argc].p = buf + pos + hl;
		q->argv[q->argc].len = (size_t)bl;
		q->argc++;
		pos += hl + (size_t)bl + 2;
	}
	*used = pos;
	return RESP_PARSE_OK;
more:
	return len >= lim->whole_max ? RESP_PARSE_TOO_LONG : RESP_PARSE_MORE;
}

enum resp_parse_result resp_parse(const char *buf, size_t len,
				  const struct resp_limits *lim,
				  struct resp_req *q, size_t *used)
{
	enum resp_parse_result r;
	long long n = 0;
	bool ok = false;
	size_t hl = 0, bused = 0;
	int cl;

	q->argc = 0;
	q->nargs = 0;
	q->err = NULL;
	q->inline_req = false;
	q->big_len = 0;
	*used = 0;
	if (!len)
		return RESP_PARSE_MORE;
	if (buf[0] != '*')
		return parse_inline(buf, len, lim, q, used);
	cl = count_line(buf, len, &n, &ok, &hl);
	if (cl < 0) {
		q->err = "too big mbulk count string";
		return RESP_PARSE_ERROR;
	}
	if (cl == 0)
		return RESP_PARSE_MORE;
	if (!ok || n > lim->mbulk_max) {
		q->err = "invalid multibulk length";
		return RESP_PARSE_ERROR;
	}
	if (lim->unauth && n > RESP_UNAUTH_MBULK_MAX) {
		q->err = "unauthenticated multibulk length";
		return RESP_PARSE_ERROR;
	}
	if (n <= 0) {
		*used = hl;
		return RESP_PARSE_EMPTY;
	}
	q->nargs = (uint64_t)n;
	r = resp_parse_bulks(buf + hl, len - hl, (uint64_t)n, lim, q, &bused);
	if (r == RESP_PARSE_OK || r == RESP_PARSE_BIG)
		*used = hl + bused;
	if (r == RESP_PARSE_MORE && len >= lim->whole_max)
		return RESP_PARSE_TOO_LONG;
	return r;
}
