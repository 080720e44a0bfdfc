/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Keys (see internal.h): the cache key of a request target
 * (fetch_key_of), the key of a URL the origin names (Location), and
 * Vary's stubs and variants in the store (the design: origin.h), with the
 * deletion of a URL and all its variants.  It calls the store only, no
 * other room.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <xxhash.h>

#include "internal.h"

/* ---- the keys of request targets ---- */

static int hexval(unsigned char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

static bool unreserved(unsigned char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	       (ch >= '0' && ch <= '9') || ch == '-' || ch == '.' ||
	       ch == '_' || ch == '~';
}

long fetch_key_of(const char *t, size_t len, char *out, size_t max)
{
	static const char hex[] = "0123456789ABCDEF";
	bool query = false;
	size_t o = 0;

	if (!len || t[0] != '/')
		return -EINVAL;
	if (len == 1) { /* "/": "" is no key */
		if (max < FETCH_ROOT_KEY_LEN)
			return -ENAMETOOLONG;
		memcpy(out, FETCH_ROOT_KEY, FETCH_ROOT_KEY_LEN);
		out[FETCH_ROOT_KEY_LEN] = '\0';
		return FETCH_ROOT_KEY_LEN;
	}
	for (size_t i = 1; i < len; i++) {
		unsigned char ch = (unsigned char)t[i];
		int hi, lo;

		if (!ch)
			return -EINVAL;
		if (ch == '?')
			query = true;
		hi = ch == '%' && i + 2 < len ?
			     hexval((unsigned char)t[i + 1]) :
			     -1;
		lo = hi >= 0 ? hexval((unsigned char)t[i + 2]) : -1;
		if (lo >= 0) {
			unsigned char v = (unsigned char)(hi << 4 | lo);

			if (!v && !query)
				return -EINVAL;
			if (o + 3 > max)
				return -ENAMETOOLONG;
			if (unreserved(v)) {
				out[o++] = (char)v;
			} else {
				out[o++] = '%';
				out[o++] = hex[hi];
				out[o++] = hex[lo];
			}
			i += 2;
			continue;
		}
		if (ch == '%' && !query)
			return -EINVAL;
		if (o + 1 > max)
			return -ENAMETOOLONG;
		out[o++] = (char)ch;
	}
	out[o] = '\0';
	return (long)o;
}

/*
 * The key of a URL the origin named (Location, Content-Location): a path
 * ("/x"), or an absolute URL of the origin itself; under the origin
 * URL's own path, which the key does not carry.  Relative references
 * other than a path are not resolved (nothing is invalidated for them).
 */
long url_key_of(const char *base, const char *u, size_t len, char *out,
		size_t max)
{
	const char *auth_end, *bpath;
	size_t alen, plen;

	auth_end = strstr(base, "://");
	bpath = auth_end ? strchr(auth_end + 3, '/') : NULL;
	alen = bpath ? (size_t)(bpath - base) : strlen(base);
	plen = bpath ? strlen(bpath) : 0;
	if (len >= 2 && u[0] == '/' && u[1] == '/')
		return -EINVAL; /* another host, scheme-relative */
	if (len && u[0] != '/') {
		if (len < alen || strncasecmp(u, base, alen) ||
		    (len > alen && u[alen] != '/'))
			return -EINVAL; /* not the origin's */
		u += alen;
		len -= alen;
		if (!len)
			u = "/", len = 1;
	}
	if (plen) {
		if (len < plen || memcmp(u, bpath, plen) ||
		    (len > plen && u[plen] != '/' && u[plen] != '?'))
			return -EINVAL; /* outside what we mirror */
		u += plen;
		len -= plen;
	}
	if (!len || u[0] != '/')
		return -EINVAL;
	return fetch_key_of(u, len, out, max);
}


/* ---- Vary: stubs and variants (see origin.h) ---- */

static bool ows(char ch)
{
	return ch == ' ' || ch == '\t';
}

/* Call @fn for each "Name: value" line of @p (LF or CRLF ends). */
static void each_line(const char *p, size_t len,
		      void (*fn)(void *arg, const char *name, size_t nlen,
				 const char *v, size_t vlen),
		      void *arg)
{
	const char *end = p + len;

	while (p && p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		const char *colon = memchr(p, ':', (size_t)(le - p));

		if (colon) {
			const char *v = colon + 1, *ve = le;

			while (v < ve && ows(*v))
				v++;
			while (ve > v && (ve[-1] == '\r' || ows(ve[-1])))
				ve--;
			fn(arg, p, (size_t)(colon - p), v, (size_t)(ve - v));
		}
		p = le + 1;
	}
}

struct names_ctx {
	const char *want; /* the field name whose lines are collected */
	size_t wlen;
	char *out; /* normalised, comma-joined; NULL: out of room */
	size_t len, cap;
	bool star, any;
	bool seen; /* a line of the wanted field, if empty */
};

static void out_byte(struct names_ctx *x, char ch)
{
	if (x->out && x->len + 1 < x->cap)
		x->out[x->len++] = ch;
	else
		x->out = NULL;
}

/*
 * A #list value, normalised into x->out: elements trimmed, inner runs of
 * whitespace one space, joined by ",", empty ones dropped; @lower for
 * field names.
 */
static void list_add(struct names_ctx *x, const char *v, size_t vlen,
		     bool lower)
{
	const char *end = v + vlen;

	while (v < end) {
		const char *comma = memchr(v, ',', (size_t)(end - v));
		const char *e = comma ? comma : end;

		while (v < e && ows(*v))
			v++;
		while (e > v && ows(e[-1]))
			e--;
		if (e > v) {
			if (x->any)
				out_byte(x, ',');
			x->any = true;
			if (e - v == 1 && *v == '*')
				x->star = true;
			for (; v < e; v++) {
				if (ows(*v) && v + 1 < e && ows(v[1]))
					continue;
				out_byte(x, ows(*v) ? ' ' :
					    lower   ? (char)tolower(*v) :
						      *v);
			}
		}
		v = comma ? comma + 1 : end;
	}
}

static void collect(void *arg, const char *name, size_t nlen, const char *v,
		    size_t vlen)
{
	struct names_ctx *x = arg;

	if (nlen != x->wlen || strncasecmp(name, x->want, nlen))
		return;
	x->seen = true;
	list_add(x, v, vlen, false);
}

/* The response head's Vary field names, normalised, into @out. */
size_t vary_names(const char *head, size_t len, char *out, size_t cap,
		  bool *star)
{
	struct names_ctx x = { .out = out, .cap = cap };
	const char *p = head, *end = head + len;

	/* the status line has no colon before its end, or one we skip:
	 * only "Vary:" lines count */
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;

		if ((size_t)(le - p) >= 5 && !strncasecmp(p, "vary:", 5)) {
			const char *v = p + 5, *ve = le;

			while (ve > v && (ve[-1] == '\r' || ows(ve[-1])))
				ve--;
			list_add(&x, v, (size_t)(ve - v), true);
		}
		p = le + 1;
	}
	*star = x.star;
	if (!x.out)
		return (size_t)-1; /* too long: not stored */
	out[x.len] = '\0';
	return x.len;
}

/* The digest of the values of @names (comma-separated) in @fields. */
uint64_t vary_digest(const char *names, size_t nlen, const char *fields,
		     size_t flen)
{
	XXH3_state_t *st = XXH3_createState();
	const char *p = names, *end = names + nlen;
	char *buf = malloc(HEAD_MAX + 1);
	uint64_t d;

	if (!st || !buf) {
		XXH3_freeState(st);
		free(buf);
		return 0; /* matches nothing stored by a digest */
	}
	XXH3_64bits_reset(st);
	while (p < end) {
		const char *comma = memchr(p, ',', (size_t)(end - p));
		const char *e = comma ? comma : end;
		struct names_ctx x = { .want = p,
				       .wlen = (size_t)(e - p),
				       .out = buf,
				       .cap = HEAD_MAX };

		each_line(fields, flen, collect, &x);
		/* absent ("\1") is not empty ("\2"); names end in "\0" */
		XXH3_64bits_update(st, x.seen ? "\2" : "\1", 1);
		if (x.out)
			XXH3_64bits_update(st, buf, x.len);
		XXH3_64bits_update(st, "", 1);
		p = comma ? comma + 1 : end;
	}
	d = XXH3_64bits_digest(st);
	XXH3_freeState(st);
	free(buf);
	return d;
}

/* The URL's key of @key: itself, or what a variant's key starts with. */
size_t key_primary_len(const char *key, size_t klen)
{
	const char *sep = memmem(key, klen, VARY_SEP, VARY_SEP_LEN);

	return sep ? (size_t)(sep - key) : klen;
}

long key_variant_of(const char *key, size_t plen, uint64_t d, char *out,
		    size_t max)
{
	if (plen + VARY_SEP_LEN + 16 > max)
		return -ENAMETOOLONG;
	memcpy(out, key, plen);
	memcpy(out + plen, VARY_SEP, VARY_SEP_LEN);
	snprintf(out + plen + VARY_SEP_LEN, 17, "%016" PRIx64, d);
	return (long)(plen + VARY_SEP_LEN + 16);
}

/* A stub's two lines, found in its header block. */
struct stub_ctx {
	const char *names, *list;
	size_t nlen, llen;
};

static void stub_line(void *arg, const char *name, size_t nlen, const char *v,
		      size_t vlen)
{
	struct stub_ctx *x = arg;

	if (nlen == 4 && !strncasecmp(name, "vary", 4)) {
		x->names = v;
		x->nlen = vlen;
	} else if (nlen == 15 && !strncasecmp(name, "goblin-variants", 15)) {
		x->list = v;
		x->llen = vlen;
	}
}

static void stub_parse(const struct gs_attr *a, struct stub_ctx *x)
{
	memset(x, 0, sizeof(*x));
	each_line(a->headers, a->headers_len, stub_line, x);
}

long fetch_variant_key(const char *key, size_t klen, const struct gs_attr *stub,
		       const char *fields, size_t fields_len, char *out,
		       size_t max)
{
	struct stub_ctx x;

	stub_parse(stub, &x);
	if (!(stub->flags & GS_ATTR_VARY) || !x.names || !x.nlen)
		return -EINVAL;
	return key_variant_of(key, key_primary_len(key, klen),
			      vary_digest(x.names, x.nlen, fields, fields_len),
			      out, max);
}

/* Delete the variants @x lists of the URL @key (its first @plen bytes). */
static void delete_listed(struct fshard *f, const char *key, size_t plen,
			  const struct stub_ctx *x, const char *keep)
{
	char vk[GS_KEY_MAX + 1];
	const char *p = x->list, *end = x->list + x->llen;

	if (plen + VARY_SEP_LEN + 16 > GS_KEY_MAX)
		return;
	memcpy(vk, key, plen);
	memcpy(vk + plen, VARY_SEP, VARY_SEP_LEN);
	while (p && p + 16 <= end) {
		if (!keep || memcmp(p, keep, 16)) {
			memcpy(vk + plen + VARY_SEP_LEN, p, 16);
			gs_delete(f->s, vk, plen + VARY_SEP_LEN + 16);
		}
		p += 17;
	}
}

/* @key's stub, decoded into @a: true if there is one. */
static bool stub_get(struct fshard *f, const char *key, size_t plen,
		     struct gs_attr *a, struct stub_ctx *x)
{
	struct gs_meta *m = malloc(sizeof(*m));
	bool ok = m && gs_stat(f->s, key, plen, m) == 0 &&
		  gs_attr_decode(m->attr, m->attr_len, a) == 0 &&
		  (a->flags & GS_ATTR_VARY);

	free(m);
	if (ok)
		stub_parse(a, x);
	return ok;
}

void url_delete(struct fshard *f, const char *key, size_t klen)
{
	struct gs_attr *a = malloc(sizeof(*a));
	size_t plen = key_primary_len(key, klen);
	struct stub_ctx x;

	if (a && stub_get(f, key, plen, a, &x))
		delete_listed(f, key, plen, &x, NULL);
	free(a);
	gs_delete(f->s, key, plen);
	if (plen != klen)
		gs_delete(f->s, key, klen);
}

/*
 * Write the stub of the URL @key (@plen bytes) naming @names, with the
 * variant @hex added to what it listed (when it named the same fields;
 * otherwise the variants it listed are deleted).  -errno: not stored.
 */
int vary_stub_update(struct fshard *f, const char *key, size_t plen,
		     const char *names, const char *hex)
{
	struct gs_attr *old = malloc(sizeof(*old)), *a = malloc(sizeof(*a));
	uint8_t *rec = malloc(GS_ATTR_MAX);
	struct gs_put_args args = { 0 };
	struct stub_ctx x;
	char list[VARIANTS_MAX * 17 + 1];
	size_t ll = 0, n = 0;
	long alen;
	int ret = -ENOMEM;

	if (!old || !a || !rec)
		goto out;
	if (stub_get(f, key, plen, old, &x)) {
		if (x.nlen == strlen(names) &&
		    !memcmp(x.names, names, x.nlen)) {
			/* the same fields: keep the list but @hex, less the
			 * oldest while it is full */
			const char *p = x.list, *end = x.list + x.llen;
			const char *keep[VARIANTS_MAX * 2];

			for (; p && p + 16 <= end && n < VARIANTS_MAX * 2;
			     p += 17)
				if (memcmp(p, hex, 16))
					keep[n++] = p;
			for (size_t i = 0; i < n; i++) {
				if (n - i >= VARIANTS_MAX) {
					struct stub_ctx one = { .list = keep[i],
								.llen = 16 };

					delete_listed(f, key, plen, &one, NULL);
					continue;
				}
				memcpy(list + ll, keep[i], 16);
				list[ll + 16] = ' ';
				ll += 17;
			}
		} else {
			delete_listed(f, key, plen, &x, NULL);
		}
	}
	memcpy(list + ll, hex, 16);
	ll += 16;
	gs_attr_init(a);
	a->flags = GS_ATTR_ORIGIN | GS_ATTR_VARY;
	a->headers_len = (size_t)snprintf(
		a->headers, sizeof(a->headers),
		"Vary: %s\r\nGoblin-Variants: %.*s\r\n", names, (int)ll, list);
	if (a->headers_len >= sizeof(a->headers)) {
		ret = -ENAMETOOLONG;
		goto out;
	}
	alen = gs_attr_encode(a, rec, GS_ATTR_MAX);
	if (alen < 0) {
		ret = (int)alen;
		goto out;
	}
	args.attr = rec;
	args.attr_len = (size_t)alen;
	ret = gs_put(f->s, key, plen, "", 0, &args);
out:
	free(old);
	free(a);
	free(rec);
	return ret;
}
