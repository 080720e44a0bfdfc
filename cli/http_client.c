/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * goblinctl bench's HTTP/1.1 response parser and body framer: pure code,
 * strict where a lenient reading would let a server desynchronize the
 * stream (two lengths, a folded line, a chunk size that is not hex).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "http_client.h"

#define CHUNK_LINE_MAX 4096 /* a chunk-size or trailer line */

enum {
	CS_SIZE_FIRST, /* the first hex digit of a chunk size */
	CS_SIZE,       /* more digits, or the end of the size */
	CS_EXT,	       /* a chunk extension: skipped to its LF */
	CS_SIZE_LF,    /* CR seen: LF must follow */
	CS_DATA,
	CS_DATA_CR, /* after the data: CR (or bare LF) */
	CS_DATA_LF,
	CS_TRAILER_START, /* a trailer field, or the empty line */
	CS_TRAILER,	  /* inside a trailer field: to its LF */
	CS_TRAILER_LF,	  /* the final CR seen: LF must follow */
};

static bool is_tchar(unsigned char c)
{
	if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
	    (c >= 'A' && c <= 'Z'))
		return true;
	return c && strchr("!#$%&'*+-.^_`|~", c);
}

static int hexval(unsigned char c)
{
	const char *p = c ? strchr("0123456789abcdef", tolower(c)) : NULL;

	return p ? (int)(p - "0123456789abcdef") : -1;
}

/* The length of the head: up to and with the empty line; 0: none yet. */
static size_t head_end(const char *buf, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (buf[i] != '\n')
			continue;
		if (i + 1 < len && buf[i + 1] == '\n')
			return i + 2;
		if (i + 2 < len && buf[i + 1] == '\r' && buf[i + 2] == '\n')
			return i + 3;
	}
	return 0;
}

/* Trim optional white space around [*v, *v + *n). */
static void trim_ows(const char **v, size_t *n)
{
	while (*n && (**v == ' ' || **v == '\t')) {
		(*v)++;
		(*n)--;
	}
	while (*n && ((*v)[*n - 1] == ' ' || (*v)[*n - 1] == '\t'))
		(*n)--;
}

/* Does the comma-separated list @v (@n bytes) hold token @tok? */
static bool list_has(const char *v, size_t n, const char *tok)
{
	size_t tl = strlen(tok);

	while (n) {
		const char *comma = memchr(v, ',', n);
		size_t k = comma ? (size_t)(comma - v) : n;
		const char *e = v;
		size_t el = k;

		trim_ows(&e, &el);
		if (el == tl && !strncasecmp(e, tok, tl))
			return true;
		if (!comma)
			break;
		v += k + 1;
		n -= k + 1;
	}
	return false;
}

/* The last element of the comma-separated list @v, trimmed. */
static void list_last(const char **v, size_t *n)
{
	for (size_t i = *n; i > 0; i--)
		if ((*v)[i - 1] == ',') {
			*v += i;
			*n -= i;
			break;
		}
	trim_ows(v, n);
}

static int parse_length(const char *v, size_t n, uint64_t *out)
{
	uint64_t x = 0;

	if (!n)
		return -EPROTO;
	for (size_t i = 0; i < n; i++) {
		if (v[i] < '0' || v[i] > '9')
			return -EPROTO;
		x = x * 10 + (uint64_t)(v[i] - '0');
		if (x > HTTPC_LEN_MAX)
			return -EPROTO;
	}
	*out = x;
	return 0;
}

/* "HTTP/1.x SSS[ reason]": fills status and minor. */
static int parse_status_line(const char *l, size_t n, struct httpc_resp *r)
{
	if (n < 12 || memcmp(l, "HTTP/1.", 7) || l[7] < '0' || l[7] > '9' ||
	    l[8] != ' ')
		return -EPROTO;
	for (int i = 9; i < 12; i++)
		if (l[i] < '0' || l[i] > '9')
			return -EPROTO;
	if (n > 12 && l[12] != ' ')
		return -EPROTO;
	r->minor = l[7] - '0';
	r->status = (l[9] - '0') * 100 + (l[10] - '0') * 10 + (l[11] - '0');
	if (r->status < 100)
		return -EPROTO;
	return 0;
}

int httpc_parse_head(const char *buf, size_t len, bool head_request,
		     struct httpc_resp *r, size_t *consumed)
{
	size_t end, pos, llen;
	bool have_len = false, chunked = false, have_te = false;
	bool conn_close = false, conn_keep = false, first = true;
	uint64_t clen = 0;
	const char *l;
	int rc;

	/* a server that does not speak HTTP is told apart early */
	if (memcmp(buf, "HTTP/1.", len < 7 ? len : 7))
		return -EPROTO;
	end = head_end(buf, len < HTTPC_HEAD_MAX ? len : HTTPC_HEAD_MAX);
	if (!end)
		return len >= HTTPC_HEAD_MAX ? -EMSGSIZE : 1;
	if (memchr(buf, '\0', end))
		return -EPROTO;
	memset(r, 0, sizeof(*r));
	for (pos = 0;; pos += llen + 1) {
		const char *nl = memchr(buf + pos, '\n', end - pos);
		const char *colon, *v;
		size_t nlen, vlen;

		l = buf + pos;
		llen = (size_t)(nl - l);
		if (llen && l[llen - 1] == '\r')
			llen--;
		if (l[llen] == '\r') /* CR LF: step over both */
			pos++;
		if (first) {
			rc = parse_status_line(l, llen, r);
			if (rc)
				return rc;
			first = false;
			continue;
		}
		if (!llen)
			break; /* the empty line */
		if (l[0] == ' ' || l[0] == '\t')
			return -EPROTO; /* obsolete line folding */
		colon = memchr(l, ':', llen);
		if (!colon || colon == l)
			return -EPROTO;
		nlen = (size_t)(colon - l);
		for (size_t i = 0; i < nlen; i++)
			if (!is_tchar((unsigned char)l[i]))
				return -EPROTO; /* also "Name :" */
		v = colon + 1;
		vlen = llen - nlen - 1;
		trim_ows(&v, &vlen);
		for (size_t i = 0; i < vlen; i++)
			if ((unsigned char)v[i] < 0x20 && v[i] != '\t')
				return -EPROTO;
		if (nlen == 14 && !strncasecmp(l, "content-length", 14)) {
			uint64_t x;

			if (parse_length(v, vlen, &x))
				return -EPROTO;
			if (have_len && x != clen)
				return -EPROTO;
			have_len = true;
			clen = x;
		} else if (nlen == 17 &&
			   !strncasecmp(l, "transfer-encoding", 17)) {
			const char *last = v;
			size_t lastn = vlen;

			list_last(&last, &lastn);
			have_te = true;
			chunked = lastn == 7 &&
				  !strncasecmp(last, "chunked", 7);
		} else if (nlen == 10 && !strncasecmp(l, "connection", 10)) {
			conn_close |= list_has(v, vlen, "close");
			conn_keep |= list_has(v, vlen, "keep-alive");
		}
	}
	/* both lengths: a smuggling attempt or a broken server (RFC 9112) */
	if (have_te && have_len)
		return -EPROTO;
	r->close = conn_close || (r->minor == 0 && !conn_keep);
	if (head_request || r->status < 200 || r->status == 204 ||
	    r->status == 304) {
		r->framing = HTTPC_BODY_NONE;
	} else if (have_te) {
		/* a coding other than a final chunked: read until close */
		r->framing = chunked ? HTTPC_BODY_CHUNKED : HTTPC_BODY_CLOSE;
		r->close |= !chunked;
	} else if (have_len) {
		r->framing = HTTPC_BODY_LENGTH;
		r->length = clen;
	} else {
		r->framing = HTTPC_BODY_CLOSE;
		r->close = true;
	}
	*consumed = end;
	return 0;
}

void httpc_body_init(struct httpc_body *b, const struct httpc_resp *r)
{
	memset(b, 0, sizeof(*b));
	b->framing = r->framing;
	b->state = CS_SIZE_FIRST;
	switch (r->framing) {
	case HTTPC_BODY_NONE:
		b->done = true;
		break;
	case HTTPC_BODY_LENGTH:
		b->left = r->length;
		b->done = !r->length;
		break;
	default:
		break;
	}
}

/* One framing byte of a chunked body. */
static int chunk_byte(struct httpc_body *b, unsigned char c)
{
	int h;

	if (b->state != CS_DATA_CR && b->state != CS_DATA_LF &&
	    ++b->line > CHUNK_LINE_MAX)
		return -EPROTO;
	switch (b->state) {
	case CS_SIZE_FIRST:
		h = hexval(c);
		if (h < 0)
			return -EPROTO;
		b->left = (uint64_t)h;
		b->state = CS_SIZE;
		return 0;
	case CS_SIZE:
		h = hexval(c);
		if (h >= 0) {
			if (b->left > HTTPC_LEN_MAX >> 4)
				return -EPROTO;
			b->left = b->left << 4 | (uint64_t)h;
			return 0;
		}
		if (c == ';' || c == ' ' || c == '\t') {
			b->state = CS_EXT;
			return 0;
		}
		/* CR or LF end the size */
		/* fall through */
	case CS_EXT:
		if (c == '\r') {
			b->state = CS_SIZE_LF;
			return 0;
		}
		if (c != '\n')
			return c < 0x20 && c != '\t' ? -EPROTO : 0;
		/* fall through */
	case CS_SIZE_LF:
		if (c != '\n')
			return -EPROTO;
		b->line = 0;
		b->state = b->left ? CS_DATA : CS_TRAILER_START;
		return 0;
	case CS_DATA_CR:
		if (c == '\r') {
			b->state = CS_DATA_LF;
			return 0;
		}
		/* a bare LF */
		/* fall through */
	case CS_DATA_LF:
		if (c != '\n')
			return -EPROTO;
		b->line = 0;
		b->state = CS_SIZE_FIRST;
		return 0;
	case CS_TRAILER_START:
		if (c == '\r') {
			b->state = CS_TRAILER_LF;
			return 0;
		}
		if (c == '\n') {
			b->done = true;
			return 0;
		}
		b->state = CS_TRAILER;
		return 0;
	case CS_TRAILER:
		if (c == '\n') {
			b->line = 0;
			b->state = CS_TRAILER_START;
		}
		return 0;
	case CS_TRAILER_LF:
		if (c != '\n')
			return -EPROTO;
		b->done = true;
		return 0;
	}
	return -EPROTO;
}

int httpc_body_take(struct httpc_body *b, const char *buf, size_t len,
		    size_t *consumed, size_t *data_off, size_t *data_len)
{
	size_t i = 0, k;
	int rc;

	*consumed = *data_off = *data_len = 0;
	if (b->done)
		return 0;
	switch (b->framing) {
	case HTTPC_BODY_NONE:
		b->done = true;
		return 0;
	case HTTPC_BODY_CLOSE:
		*consumed = *data_len = len;
		return 0;
	case HTTPC_BODY_LENGTH:
		k = len < b->left ? len : (size_t)b->left;
		b->left -= k;
		b->done = !b->left;
		*consumed = *data_len = k;
		return 0;
	case HTTPC_BODY_CHUNKED:
		break;
	}
	while (i < len && !b->done) {
		if (b->state == CS_DATA) {
			k = len - i < b->left ? len - i : (size_t)b->left;
			b->left -= k;
			if (!b->left)
				b->state = CS_DATA_CR;
			*data_off = i;
			*data_len = k;
			i += k;
			break; /* one span per call */
		}
		rc = chunk_byte(b, (unsigned char)buf[i++]);
		if (rc)
			return rc;
	}
	*consumed = i;
	return 0;
}

int httpc_body_eof(struct httpc_body *b)
{
	if (b->framing == HTTPC_BODY_CLOSE) {
		b->done = true;
		return 0;
	}
	return b->done ? 0 : -EPIPE;
}

int httpc_target(char *out, size_t size, const char *prefix, const char *key)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = 0;

	for (int part = 0; part < 2; part++)
		for (const unsigned char *p =
			     (const unsigned char *)(part ? key : prefix);
		     *p; p++) {
			bool plain = (*p >= '0' && *p <= '9') ||
				     (*p >= 'a' && *p <= 'z') ||
				     (*p >= 'A' && *p <= 'Z') ||
				     strchr("-._~!$&'()*+,;=:@/", *p);

			if (n + (plain ? 1 : 3) >= size)
				return -ENAMETOOLONG;
			if (plain) {
				out[n++] = (char)*p;
			} else {
				out[n++] = '%';
				out[n++] = hex[*p >> 4];
				out[n++] = hex[*p & 15];
			}
		}
	out[n] = 0;
	return (int)n;
}
