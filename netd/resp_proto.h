/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The RESP request parser (Redis's protocol, RESP2 and RESP3 requests are
 * the same): multibulk arrays of bulk strings and inline commands in,
 * argument vectors out.  Pure: no sockets, no store, no allocation; every
 * argument points into the caller's buffer.
 */
#ifndef RESP_PROTO_H
#define RESP_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Arguments a request parsed whole may carry (bounded by the buffer). */
#define RESP_ARGS_MAX	      8192
/* Redis's longest "*N" or "$N" line, and its longest array (INT_MAX). */
#define RESP_COUNT_LINE_MAX   (32u << 10)
#define RESP_MBULK_MAX	      (1024ll * 1024 * 1024 * 2 - 1)
/* Before AUTH (a --resp-password), as Redis 7 bounds them. */
#define RESP_UNAUTH_MBULK_MAX 10
#define RESP_UNAUTH_BULK_MAX  16384

enum resp_parse_result {
	RESP_PARSE_OK,	  /* a whole request: q->argc arguments */
	RESP_PARSE_EMPTY, /* "*0", "*-1" or an empty inline line: no reply */
	RESP_PARSE_MORE,  /* the request is not all in the buffer yet */
	/*
	 * A bulk longer than @big_min: q->argc arguments before it parsed,
	 * its bytes start at *used, q->big_len of them, then "\r\n" and
	 * q->nargs - q->argc - 1 more arguments.
	 */
	RESP_PARSE_BIG,
	/* The request does not fit in @whole_max bytes (no big bulk). */
	RESP_PARSE_TOO_LONG,
	/* A protocol error: reply "-ERR Protocol error: " q->err, close. */
	RESP_PARSE_ERROR,
};

struct resp_arg {
	const char *p;
	size_t len;
};

struct resp_req {
	unsigned argc;	  /* arguments in argv */
	uint64_t nargs;	  /* the array's count (argc for inline) */
	bool inline_req;  /* an inline command, not a multibulk */
	uint64_t big_len; /* RESP_PARSE_BIG: the bulk's length */
	const char *err;  /* RESP_PARSE_ERROR: Redis's text */
	char errbuf[32];
	struct resp_arg argv[RESP_ARGS_MAX];
	/* inline arguments unquoted: their bytes ("a\x41" -> "aA") */
	char unq[RESP_COUNT_LINE_MAX];
};

/* Limits of one parse. */
struct resp_limits {
	size_t whole_max;  /* a request parsed whole fits in this */
	uint64_t big_min;  /* a bulk longer than this is RESP_PARSE_BIG */
	uint64_t bulk_max; /* longer is "invalid bulk length" */
	int64_t mbulk_max; /* more arguments: "invalid multibulk length" */
	bool unauth;	   /* not authenticated: Redis's tighter bounds */
};

/*
 * Parse one request at @buf (@len bytes).  *@used: bytes consumed (OK,
 * EMPTY, ERROR), or where the big bulk's bytes start (BIG).  With BIG,
 * argv[0..argc) point into @buf.
 */
enum resp_parse_result resp_parse(const char *buf, size_t len,
				  const struct resp_limits *lim,
				  struct resp_req *q, size_t *used);

/*
 * Parse @n more bulk strings at @buf into q->argv from q->argc on (the
 * arguments after a big bulk): OK, MORE, TOO_LONG or ERROR as above.
 */
enum resp_parse_result resp_parse_bulks(const char *buf, size_t len, uint64_t n,
					const struct resp_limits *lim,
					struct resp_req *q, size_t *used);

/* Redis's string2ll: a strict signed 64-bit decimal.  True if it is one. */
bool resp_ll(const char *p, size_t len, long long *out);
/* A double as Redis's strtod takes it (inf, -inf, +inf too). */
bool resp_double(const char *p, size_t len, double *out);
/* Is @a the word @lit, any case? */
bool resp_is(const struct resp_arg *a, const char *lit);
/* Glob match as Redis's stringmatchlen (* ? [a-z] [^x] \x). */
bool resp_glob(const char *pat, size_t plen, const char *s, size_t slen);

#endif
