/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The HTTP/1.1 request-head parser and chunked-body decoder on top of
 * http-parser: our strictness checks around the library's state machine.
 * See http_proto.h for which checks are ours and why.
 */
#include <string.h>
#include <strings.h>

#include "http_proto.h"

static const char *const errs[HTTP_E_COUNT] = {
	[HTTP_E_OK] = "ok",
	[HTTP_E_NUL] = "nul byte in request head",
	[HTTP_E_BARE_CR] = "bare cr in request head",
	[HTTP_E_BARE_LF] = "bare lf in request head",
	[HTTP_E_OBS_FOLD] = "obsolete header line folding",
	[HTTP_E_LINE_TOO_LONG] = "request line too long",
	[HTTP_E_HEAD_TOO_LONG] = "request head too long",
	[HTTP_E_TOO_MANY_HEADERS] = "too many header fields",
	[HTTP_E_METHOD] = "invalid method",
	[HTTP_E_METHOD_UNKNOWN] = "unknown method",
	[HTTP_E_TARGET] = "invalid request target",
	[HTTP_E_ESCAPE] = "invalid percent escape",
	[HTTP_E_ESCAPE_NUL] = "percent-encoded nul in path",
	[HTTP_E_KEY_TOO_LONG] = "key too long",
	[HTTP_E_VERSION] = "http version not supported",
	[HTTP_E_HEADER_NAME] = "invalid header name",
	[HTTP_E_CL] = "invalid content-length",
	[HTTP_E_TE] = "unsupported transfer-encoding",
	[HTTP_E_CL_TE] = "both content-length and transfer-encoding",
	[HTTP_E_DUP_HEADER] = "repeated header field",
	[HTTP_E_NO_HOST] = "missing host",
	[HTTP_E_CHUNK_SIZE] = "invalid chunk framing",
	[HTTP_E_CHUNK_TOO_BIG] = "chunk too large",
	[HTTP_E_CHUNK_EXT] = "invalid chunk extension",
	[HTTP_E_CHUNK_CRLF] = "chunk data not followed by crlf",
	[HTTP_E_TRAILER] = "invalid trailer section",
	[HTTP_E_TE_HTTP10] = "transfer-encoding in http/1.0",
	[HTTP_E_SYNTAX] = "malformed request",
};

const char *http_strerror(enum http_err e)
{
	return (unsigned)e < HTTP_E_COUNT ? errs[e] : "unknown error";
}

int http_err_status(enum http_err e)
{
	switch (e) {
	case HTTP_E_LINE_TOO_LONG:
	case HTTP_E_KEY_TOO_LONG:
		return 414;
	case HTTP_E_HEAD_TOO_LONG:
	case HTTP_E_TOO_MANY_HEADERS:
		return 431;
	case HTTP_E_METHOD_UNKNOWN:
		return 501;
	case HTTP_E_VERSION:
		return 505;
	case HTTP_E_CHUNK_TOO_BIG:
		return 413;
	default:
		return 400;
	}
}

/* RFC 9110 tchar */
static bool is_tchar(unsigned char c)
{
	return (c >= '0' && c <= '9') ||
	       ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') ||
	       (c && strchr("!#$%&'*+-.^_`|~", c));
}

static bool all_tchar(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (!is_tchar((unsigned char)s[i]))
			return false;
	return true;
}

static int hexval(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

long http_pct_decode(const char *in, size_t len, char *out, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < len; i++) {
		int c = (unsigned char)in[i];

		if (c == '%') {
			int hi, lo;

			if (len - i < 3)
				return -HTTP_E_ESCAPE;
			hi = hexval(in[i + 1]);
			lo = hexval(in[i + 2]);
			if (hi < 0 || lo < 0)
				return -HTTP_E_ESCAPE;
			c = hi << 4 | lo;
			if (!c)
				return -HTTP_E_ESCAPE_NUL;
			i += 2;
		}
		if (n == max)
			return -HTTP_E_KEY_TOO_LONG;
		out[n++] = (char)c;
	}
	out[n] = '\0';
	return (long)n;
}

/*
 * The pre-scan: find the end of the head at @buf (after empty lines,
 * already skipped) and refuse the byte-level smuggling vectors before
 * http-parser sees anything.  Returns the head length, 0 for "need more",
 * or -err.
 */
static long head_scan(const char *buf, size_t len)
{
	size_t lim = len < HTTP_HEAD_MAX ? len : HTTP_HEAD_MAX;
	bool first = true;

	for (size_t i = 0; i < lim; i++) {
		char c = buf[i];

		if (c == '\0')
			return -HTTP_E_NUL;
		if (c == '\n')
			return -HTTP_E_BARE_LF;
		if (c != '\r')
			continue;
		if (i + 1 == lim)
			break;
		if (buf[i + 1] != '\n')
			return -HTTP_E_BARE_CR;
		if (first && i + 2 > HTTP_LINE_MAX)
			return -HTTP_E_LINE_TOO_LONG;
		first = false;
		i++;
		if (i + 1 == lim)
			break;
		if (buf[i + 1] == ' ' || buf[i + 1] == '\t')
			return -HTTP_E_OBS_FOLD;
		if (buf[i + 1] == '\r') {
			if (i + 2 == lim)
				break;
			if (buf[i + 2] != '\n')
				return -HTTP_E_BARE_CR;
			return (long)(i + 3);
		}
	}
	if (first && lim >= HTTP_LINE_MAX)
		return -HTTP_E_LINE_TOO_LONG;
	if (len >= HTTP_HEAD_MAX)
		return -HTTP_E_HEAD_TOO_LONG;
	return 0;
}

/* Parse state while http-parser walks one head. */
struct head_ctx {
	struct http_req *req;
	enum http_err err;
	unsigned nfields;
	const char *field; /* current header name */
	size_t flen;
	struct http_str *val; /* where its value goes, NULL: ignored */
	size_t line_len;      /* request line without its CRLF */
	bool te, cl, expect;
	bool ext_method; /* parsed after a stand-in known method */
};

/* set the first error only: a callback returning nonzero stops the parser */
static int fail(struct head_ctx *x, enum http_err e)
{
	if (!x->err)
		x->err = e;
	return -1;
}

static int on_url(http_parser *p, const char *at, size_t len)
{
	struct head_ctx *x = p->data;

	if (x->req->target.p) /* only split by a buffer end: never here */
		return fail(x, HTTP_E_TARGET);
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)at[i] <= 0x20 ||
		    (unsigned char)at[i] >= 0x7f)
			return fail(x, HTTP_E_TARGET);
	x->req->target = (struct http_str){ at, len };
	return 0;
}

static bool name_is(const struct head_ctx *x, const char *name)
{
	return x->flen == strlen(name) && !strncasecmp(x->field, name, x->flen);
}

static int on_header_field(http_parser *p, const char *at, size_t len)
{
	struct head_ctx *x = p->data;
	struct http_req *r = x->req;
	static const struct {
		const char *name;
		size_t off;
		bool many; /* may repeat: the first is kept */
	} kept[] = {
		{ "host", offsetof(struct http_req, host), false },
		{ "range", offsetof(struct http_req, range), false },
		{ "if-none-match", offsetof(struct http_req, if_none_match),
		  false },
		{ "if-match", offsetof(struct http_req, if_match), false },
		{ "if-modified-since",
		  offsetof(struct http_req, if_modified_since), false },
		{ "if-unmodified-since",
		  offsetof(struct http_req, if_unmodified_since), false },
		{ "if-range", offsetof(struct http_req, if_range), false },
		{ "authorization", offsetof(struct http_req, authorization),
		  false },
		{ "content-type", offsetof(struct http_req, content_type),
		  false },
		{ "cache-control", offsetof(struct http_req, cache_control),
		  true },
		{ "pragma", offsetof(struct http_req, pragma), true },
	};

	if (++x->nfields > HTTP_HEADERS_MAX)
		return fail(x, HTTP_E_TOO_MANY_HEADERS);
	if (!all_tchar(at, len))
		return fail(x, HTTP_E_HEADER_NAME);
	x->field = at;
	x->flen = len;
	x->val = NULL;
	for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++) {
		if (!name_is(x, kept[i].name))
			continue;
		x->val = (struct http_str *)((char *)r + kept[i].off);
		if (x->val->p && kept[i].many)
			x->val = NULL;
		else if (x->val->p)
			return fail(x, HTTP_E_DUP_HEADER);
	}
	/* these may repeat: the last line is kept, it ends with the address
	 * the nearest proxy appended */
	if (name_is(x, "x-forwarded-for"))
		x->val = &r->x_forwarded_for;
	else if (name_is(x, "forwarded"))
		x->val = &r->forwarded;
	return 0;
}

static bool token_is(const char *at, size_t len, const char *tok)
{
	return len == strlen(tok) && !strncasecmp(at, tok, len);
}

static int on_header_value(http_parser *p, const char *at, size_t len)
{
	struct head_ctx *x = p->data;
	struct http_req *r = x->req;

	while (len && (*at == ' ' || *at == '\t'))
		at++, len--;
	while (len && (at[len - 1] == ' ' || at[len - 1] == '\t'))
		len--;
	if (x->val) {
		*x->val = (struct http_str){ at ? at : "", len };
	} else if (name_is(x, "transfer-encoding")) {
		if (x->te)
			return fail(x, HTTP_E_DUP_HEADER);
		x->te = true;
		if (!token_is(at, len, "chunked"))
			return fail(x, HTTP_E_TE);
	} else if (name_is(x, "content-length")) {
		if (x->cl)
			return fail(x, HTTP_E_CL);
		x->cl = true;
		if (!len)
			return fail(x, HTTP_E_CL);
		for (size_t i = 0; i < len; i++)
			if (at[i] < '0' || at[i] > '9')
				return fail(x, HTTP_E_CL);
	} else if (name_is(x, "expect")) {
		if (x->expect)
			return fail(x, HTTP_E_DUP_HEADER);
		x->expect = true;
		if (token_is(at, len, "100-continue"))
			r->expect_continue = true;
		else
			r->expect_other = true;
	}
	return 0;
}

static int on_headers_complete(http_parser *p)
{
	http_parser_pause(p, 1);
	return 0;
}

static const http_parser_settings head_settings = {
	.on_url = on_url,
	.on_header_field = on_header_field,
	.on_header_value = on_header_value,
	.on_headers_complete = on_headers_complete,
};

static enum http_method_id method_id(unsigned m)
{
	switch (m) {
	case HTTP_GET:
		return HTTP_M_GET;
	case HTTP_HEAD:
		return HTTP_M_HEAD;
	case HTTP_PUT:
		return HTTP_M_PUT;
	case HTTP_DELETE:
		return HTTP_M_DELETE;
	case HTTP_POST:
		return HTTP_M_POST;
	default:
		return HTTP_M_OTHER;
	}
}

/* Why http-parser stopped at @buf + @at, in our terms. */
static enum http_err lib_err(const http_parser *p, const char *buf, size_t at)
{
	size_t i;

	switch (HTTP_PARSER_ERRNO(p)) {
	case HPE_INVALID_METHOD:
		for (i = 0; buf[i] != ' ' && buf[i] != '\r'; i++)
			if (!is_tchar((unsigned char)buf[i]))
				return HTTP_E_METHOD;
		return i ? HTTP_E_METHOD_UNKNOWN : HTTP_E_METHOD;
	case HPE_INVALID_VERSION:
		return HTTP_E_VERSION;
	case HPE_INVALID_URL:
		return HTTP_E_TARGET;
	case HPE_INVALID_CONTENT_LENGTH:
		return HTTP_E_CL;
	case HPE_UNEXPECTED_CONTENT_LENGTH:
		/* a second Content-Length, or CL with chunked */
		return p->flags & F_CHUNKED ? HTTP_E_CL_TE : HTTP_E_CL;
	case HPE_INVALID_TRANSFER_ENCODING:
		return HTTP_E_TE;
	case HPE_INVALID_HEADER_TOKEN:
		return HTTP_E_HEADER_NAME;
	default:
		(void)at;
		return HTTP_E_SYNTAX;
	}
}

/* Split the target into key and query; origin-form or absolute-form. */
static enum http_err target_split(struct http_req *r)
{
	const char *t = r->target.p, *path, *q;
	size_t tlen = r->target.len, plen;
	long n;

	if (!t || memchr(t, '#', tlen))
		return HTTP_E_TARGET;
	if (t[0] != '/') {
		struct http_parser_url u;

		http_parser_url_init(&u);
		if (http_parser_parse_url(t, tlen, 0, &u) ||
		    !(u.field_set & (1 << UF_SCHEMA)) ||
		    !(u.field_set & (1 << UF_PATH)))
			return HTTP_E_TARGET;
		t += u.field_data[UF_PATH].off;
		tlen -= u.field_data[UF_PATH].off;
		if (!tlen || t[0] != '/')
			return HTTP_E_TARGET;
	}
	r->origin_form = (struct http_str){ t, tlen };
	path = t + 1;
	q = memchr(t, '?', tlen);
	plen = (q ? (size_t)(q - t) : tlen) - 1;
	if (q)
		r->query =
			(struct http_str){ q + 1, tlen - (size_t)(q + 1 - t) };
	n = http_pct_decode(path, plen, r->key, HTTP_KEY_MAX);
	if (n < 0)
		return (enum http_err) - n;
	r->klen = (size_t)n;
	return HTTP_E_OK;
}

/* Fill in what http-parser computed and check what it does not. */
static enum http_err head_finish(const http_parser *p, struct head_ctx *x)
{
	struct http_req *r = x->req;

	/* http-parser takes runs of spaces: the line must be exactly
	 * "METHOD SP target SP HTTP/1.x CRLF" */
	if (x->line_len != r->method_tok.len + r->target.len + 10)
		return HTTP_E_SYNTAX;
	r->major = p->http_major;
	r->minor = p->http_minor;
	if (r->major != 1 || r->minor > 1)
		return HTTP_E_VERSION;
	r->method = x->ext_method ? HTTP_M_OTHER : method_id(p->method);
	r->chunked = x->te;
	if (x->te && x->cl)
		return HTTP_E_CL_TE;
	/* RFC 9112 6.1: an HTTP/1.0 recipient cannot trust a
	 * Transfer-Encoding (a 1.0 proxy before us would not have) */
	if (x->te && r->minor == 0)
		return HTTP_E_TE_HTTP10;
	if (x->cl) {
		r->has_length = true;
		r->length = p->content_length;
	}
	if (r->minor == 1 && !r->host.p)
		return HTTP_E_NO_HOST;
	r->keep_alive = http_should_keep_alive(p);
	return target_split(r);
}

enum http_parse_result http_parse_head(const char *buf, size_t len,
				       struct http_req *req, size_t *consumed)
{
	struct head_ctx x = { .req = req };
	http_parser hp;
	size_t skip = 0, done, mlen;
	long n;

	*consumed = 0;
	memset(req, 0, offsetof(struct http_req, key));
	req->key[0] = '\0';
	/* RFC 9112 2.2: ignore empty lines before a request line */
	while (skip + 2 <= len && buf[skip] == '\r' && buf[skip + 1] == '\n' &&
	       skip < HTTP_HEAD_MAX)
		skip += 2;
	n = skip >= HTTP_HEAD_MAX ? -HTTP_E_HEAD_TOO_LONG :
				    head_scan(buf + skip, len - skip);
	if (n < 0) {
		req->err = (enum http_err) - n;
		return HTTP_PARSE_BAD;
	}
	if (n == 0)
		return HTTP_PARSE_MORE;

	x.line_len =
		(size_t)((const char *)memchr(buf + skip, '\r', (size_t)n) -
			 (buf + skip));
	for (mlen = 0;
	     mlen < x.line_len && is_tchar((unsigned char)buf[skip + mlen]);
	     mlen++)
		;
	req->method_tok = (struct http_str){ buf + skip, mlen };
	http_parser_init(&hp, HTTP_REQUEST);
	hp.data = &x;
	done = http_parser_execute(&hp, &head_settings, buf + skip, (size_t)n);
	if (!x.err && HTTP_PARSER_ERRNO(&hp) == HPE_INVALID_METHOD && mlen &&
	    buf[skip + mlen] == ' ') {
		/* an extension method: the rest after a stand-in (see .h) */
		x.ext_method = true;
		http_parser_init(&hp, HTTP_REQUEST);
		hp.data = &x;
		http_parser_execute(&hp, &head_settings, "POST ", 5);
		done = mlen + 1 +
		       http_parser_execute(&hp, &head_settings,
					   buf + skip + mlen + 1,
					   (size_t)n - mlen - 1);
	}
	if (x.err) {
		req->err = x.err;
	} else if (HTTP_PARSER_ERRNO(&hp) != HPE_PAUSED ||
		   done + 1 != (size_t)n) {
		/* paused in on_headers_complete, at the final LF: not counted */
		req->err = HTTP_PARSER_ERRNO(&hp) == HPE_PAUSED ?
				   HTTP_E_SYNTAX :
				   lib_err(&hp, buf + skip, done);
	} else {
		req->err = head_finish(&hp, &x);
	}
	if (req->err)
		return HTTP_PARSE_BAD;
	/* after the request line's CRLF, before the empty line's */
	req->fields = (struct http_str){ buf + skip + x.line_len + 2,
					 (size_t)n - x.line_len - 4 };
	*consumed = skip + (size_t)n;
	return HTTP_PARSE_OK;
}

/*
 * The strict chunked framing scanner (RFC 9112 sec. 7.1):
 *
 *   chunked-body = *chunk last-chunk trailer-section CRLF
 *   chunk        = chunk-size [ chunk-ext ] CRLF chunk-data CRLF
 *   chunk-ext    = *( BWS ";" BWS ext-name [ BWS "=" BWS ext-val ] )
 *   ext-val      = token / quoted-string
 *   trailer-section = *( field-name ":" OWS field-value OWS CRLF )
 *
 * One state per position in that grammar; chunk data is skipped in one
 * step, so the cost is per framing byte, not per body byte.
 */
enum {
	CS_SIZE0 = 0,	/* a size line's first byte: HEXDIG */
	CS_SIZE,	/* HEXDIG, BWS, ';' or CR */
	CS_BWS,		/* BWS before ';': SP, HT or ';' */
	CS_NAME0,	/* after ';': BWS or an ext-name's first tchar */
	CS_NAME,	/* tchar, BWS, '=', ';' or CR */
	CS_NAME_BWS,	/* BWS after a name: SP, HT, '=' or ';' */
	CS_VAL0,	/* after '=': BWS, tchar or DQUOTE */
	CS_TOKEN,	/* tchar, BWS, ';' or CR */
	CS_QUOTED,	/* in a quoted-string */
	CS_QUOTED_PAIR, /* after a backslash in it */
	CS_QUOTED_END,	/* after its DQUOTE: BWS, ';' or CR */
	CS_SIZE_LF,	/* the LF ending a size line */
	CS_DATA,	/* chunk data: c->left bytes */
	CS_DATA_CR,	/* the CRLF after chunk data */
	CS_DATA_LF,
	CS_TR0,	     /* a trailer line's first byte: tchar or CR */
	CS_TR_NAME,  /* tchar or ':' */
	CS_TR_VALUE, /* field bytes or CR */
	CS_TR_LF,    /* the LF ending a trailer line */
	CS_END_LF,   /* the LF ending the body */
	CS_DONE,
};

static bool is_ws(unsigned char ch)
{
	return ch == ' ' || ch == '\t';
}

/* qdtext and quoted-pair's second byte: HT, SP, VCHAR, obs-text */
static bool is_qchar(unsigned char ch)
{
	return ch == '\t' || (ch >= 0x20 && ch != 0x7f);
}

/* one byte of a size line after its first digit */
static enum http_err ext_step(struct http_chunked *c, unsigned char ch)
{
	switch (c->state) {
	case CS_SIZE:
	case CS_TOKEN:
	case CS_QUOTED_END:
	case CS_NAME:
		if (ch == '\r')
			c->state = CS_SIZE_LF;
		else if (ch == ';')
			c->state = CS_NAME0;
		else if (ch == ' ' || (is_ws(ch) && c->state != CS_SIZE))
			/* after the size only SP: http-parser, which decodes
			 * after us, takes no HT there */
			c->state = c->state == CS_NAME ? CS_NAME_BWS : CS_BWS;
		else if (c->state == CS_NAME && ch == '=')
			c->state = CS_VAL0;
		else if ((c->state == CS_NAME || c->state == CS_TOKEN) &&
			 is_tchar(ch))
			break;
		else
			return c->state == CS_SIZE ? HTTP_E_CHUNK_SIZE :
						     HTTP_E_CHUNK_EXT;
		break;
	case CS_BWS:
	case CS_NAME_BWS:
		if (ch == ';')
			c->state = CS_NAME0;
		else if (c->state == CS_NAME_BWS && ch == '=')
			c->state = CS_VAL0;
		else if (!is_ws(ch))
			return HTTP_E_CHUNK_EXT;
		break;
	case CS_NAME0:
	case CS_VAL0:
		if (is_tchar(ch))
			c->state = c->state == CS_NAME0 ? CS_NAME : CS_TOKEN;
		else if (c->state == CS_VAL0 && ch == '"')
			c->state = CS_QUOTED;
		else if (!is_ws(ch))
			return HTTP_E_CHUNK_EXT;
		break;
	case CS_QUOTED:
		if (ch == '"')
			c->state = CS_QUOTED_END;
		else if (ch == '\\')
			c->state = CS_QUOTED_PAIR;
		else if (!is_qchar(ch))
			return HTTP_E_CHUNK_EXT;
		break;
	case CS_QUOTED_PAIR:
		if (!is_qchar(ch))
			return HTTP_E_CHUNK_EXT;
		c->state = CS_QUOTED;
		break;
	}
	return HTTP_E_OK;
}

/* one byte of the trailer section */
static enum http_err trailer_step(struct http_chunked *c, unsigned char ch)
{
	if (++c->line > HTTP_HEAD_MAX)
		return HTTP_E_TRAILER;
	switch (c->state) {
	case CS_TR0:
		if (ch == '\r') {
			c->state = CS_END_LF;
		} else if (is_tchar(ch)) {
			if (++c->fields > HTTP_HEADERS_MAX)
				return HTTP_E_TRAILER;
			c->state = CS_TR_NAME;
		} else {
			return HTTP_E_TRAILER; /* obs-fold, ':', bare LF */
		}
		break;
	case CS_TR_NAME:
		if (ch == ':')
			c->state = CS_TR_VALUE;
		else if (!is_tchar(ch))
			return HTTP_E_TRAILER; /* "Name :", "Na me:" */
		break;
	case CS_TR_VALUE:
		if (ch == '\r')
			c->state = CS_TR_LF;
		else if (!is_qchar(ch))
			return HTTP_E_TRAILER; /* NUL, bare LF, CTLs */
		break;
	case CS_TR_LF:
	case CS_END_LF:
		if (ch != '\n')
			return HTTP_E_TRAILER;
		c->state = c->state == CS_TR_LF ? CS_TR0 : CS_DONE;
		break;
	}
	return HTTP_E_OK;
}

/*
 * Scan @len bytes of chunked body.  Returns how many belong to it (all,
 * or up to its end when c->state becomes CS_DONE), or -err.
 */
static long chunk_scan(struct http_chunked *c, const unsigned char *in,
		       size_t len)
{
	size_t i = 0;
	enum http_err e = HTTP_E_OK;

	while (i < len && c->state != CS_DONE) {
		unsigned char ch = in[i];
		int h;

		switch (c->state) {
		case CS_DATA: {
			size_t n = len - i;

			if (n > c->left)
				n = (size_t)c->left;
			c->left -= n;
			i += n;
			if (!c->left)
				c->state = CS_DATA_CR;
			continue;
		}
		case CS_DATA_CR:
		case CS_DATA_LF:
			if (ch != (c->state == CS_DATA_CR ? '\r' : '\n'))
				return -HTTP_E_CHUNK_CRLF;
			c->state = c->state == CS_DATA_CR ? CS_DATA_LF :
							    CS_SIZE0;
			break;
		case CS_SIZE0:
			h = hexval(ch);
			if (h < 0)
				return -HTTP_E_CHUNK_SIZE;
			c->left = (unsigned)h;
			c->line = 1;
			c->state = CS_SIZE;
			break;
		case CS_SIZE:
			h = hexval(ch);
			if (h >= 0) {
				if (c->left > UINT64_MAX >> 4)
					return -HTTP_E_CHUNK_SIZE;
				c->left = c->left << 4 | (unsigned)h;
			} else if (c->left > HTTP_CHUNK_MAX) {
				return -HTTP_E_CHUNK_TOO_BIG;
			} else {
				e = ext_step(c, ch);
			}
			if (!e && ++c->line > HTTP_CHUNK_LINE_MAX)
				e = HTTP_E_CHUNK_EXT;
			break;
		case CS_SIZE_LF:
			if (ch != '\n')
				return -HTTP_E_CHUNK_SIZE; /* bare CR */
			if (c->left) {
				c->state = CS_DATA;
			} else {
				c->state = CS_TR0;
				c->line = 0;
			}
			break;
		case CS_TR0:
		case CS_TR_NAME:
		case CS_TR_VALUE:
		case CS_TR_LF:
		case CS_END_LF:
			e = trailer_step(c, ch);
			break;
		default:
			e = ext_step(c, ch);
			if (!e && ++c->line > HTTP_CHUNK_LINE_MAX)
				e = HTTP_E_CHUNK_EXT;
			break;
		}
		if (e)
			return -(long)e;
		i++;
	}
	return (long)i;
}

/* chunked bodies: http-parser after a fixed head, body callbacks copy out */

static const char chunked_head[] =
	"PUT / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n";

static int on_chunk_header(http_parser *p)
{
	struct http_chunked *c = p->data;

	if (p->content_length > HTTP_CHUNK_MAX) {
		c->err = HTTP_E_CHUNK_TOO_BIG;
		return -1;
	}
	return 0;
}

static int on_body(http_parser *p, const char *at, size_t len)
{
	struct http_chunked *c = p->data;

	memmove(c->out + c->out_len, at, len);
	c->out_len += len;
	return 0;
}

static int on_message_complete(http_parser *p)
{
	struct http_chunked *c = p->data;

	c->done = true;
	http_parser_pause(p, 1);
	return 0;
}

/* trailer fields are dropped, but a non-token name is still refused */
static int on_trailer_field(http_parser *p, const char *at, size_t len)
{
	struct http_chunked *c = p->data;

	if (all_tchar(at, len))
		return 0;
	c->err = HTTP_E_CHUNK_SIZE;
	return -1;
}

static const http_parser_settings chunk_settings = {
	.on_header_field = on_trailer_field,
	.on_body = on_body,
	.on_chunk_header = on_chunk_header,
	.on_message_complete = on_message_complete,
};

void http_chunked_init(struct http_chunked *c)
{
	memset(c, 0, sizeof(*c));
	http_parser_init(&c->hp, HTTP_REQUEST);
	c->hp.data = c;
	http_parser_execute(&c->hp, &chunk_settings, chunked_head,
			    sizeof(chunked_head) - 1);
}

int http_chunked_feed(struct http_chunked *c, const char *in, size_t len,
		      char *out, size_t *out_len, size_t *consumed)
{
	size_t done;
	long n;

	*out_len = 0;
	*consumed = 0;
	if (c->err)
		return -1;
	if (c->done || !len)
		return 0;
	n = chunk_scan(c, (const unsigned char *)in, len);
	if (n < 0) {
		c->err = (enum http_err) - n;
		return -1;
	}
	c->out = out;
	c->out_len = 0;
	done = http_parser_execute(&c->hp, &chunk_settings, in, (size_t)n);
	*out_len = c->out_len;
	c->out = NULL;
	if (c->err)
		return -1;
	/* what the scanner passed, http-parser must take whole, ending the
	 * body at the same byte (paused after the final LF, counted too);
	 * a disagreement is refused, never guessed at */
	if (done != (size_t)n || c->done != (c->state == CS_DONE) ||
	    HTTP_PARSER_ERRNO(&c->hp) != (c->done ? HPE_PAUSED : HPE_OK)) {
		c->err = c->state >= CS_TR0 ? HTTP_E_TRAILER :
					      HTTP_E_CHUNK_SIZE;
		return -1;
	}
	*consumed = done;
	return 0;
}
