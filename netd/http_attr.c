/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The HTTP attribute record: a version byte, fixed fields little-endian,
 * then three length-prefixed strings (ETag, Content-Type, extra header
 * lines).  Decoding checks every length: the bytes come from disk.
 */
#include <string.h>

#include "http_attr.h"

void http_attr_init(struct http_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->status = 200;
}

struct cur {
	uint8_t *p;
	const uint8_t *in;
	size_t pos, cap;
	bool bad;
};

static void put_bytes(struct cur *c, const void *b, size_t n)
{
	if (c->bad || n > c->cap - c->pos) {
		c->bad = true;
		return;
	}
	memcpy(c->p + c->pos, b, n);
	c->pos += n;
}

static void put_u(struct cur *c, uint64_t v, unsigned bytes)
{
	uint8_t b[8];

	for (unsigned i = 0; i < bytes; i++)
		b[i] = (uint8_t)(v >> (8 * i));
	put_bytes(c, b, bytes);
}

static void put_str(struct cur *c, const char *s, size_t len, size_t max)
{
	if (len > max) {
		c->bad = true;
		return;
	}
	put_u(c, len, 2);
	put_bytes(c, s, len);
}

long http_attr_encode(const struct http_attr *a, uint8_t *buf, size_t cap)
{
	struct cur c = { .p = buf, .cap = cap };

	put_u(&c, HTTP_ATTR_VERSION, 1);
	put_u(&c, a->flags, 1);
	put_u(&c, a->status, 2);
	put_u(&c, (uint64_t)a->last_modified, 8);
	put_u(&c, (uint64_t)a->age_base, 8);
	put_u(&c, (uint64_t)a->fresh_until, 8);
	put_str(&c, a->etag, a->etag_len, HTTP_ATTR_ETAG_MAX);
	put_str(&c, a->ctype, a->ctype_len, HTTP_ATTR_CTYPE_MAX);
	put_str(&c, a->extra, a->extra_len, HTTP_ATTR_EXTRA_MAX);
	return c.bad ? -1 : (long)c.pos;
}

static uint64_t get_u(struct cur *c, unsigned bytes)
{
	uint64_t v = 0;

	if (c->bad || bytes > c->cap - c->pos) {
		c->bad = true;
		return 0;
	}
	for (unsigned i = 0; i < bytes; i++)
		v |= (uint64_t)c->in[c->pos + i] << (8 * i);
	c->pos += bytes;
	return v;
}

static size_t get_str(struct cur *c, char *out, size_t max)
{
	size_t n = (size_t)get_u(c, 2);

	if (c->bad || n > max || n > c->cap - c->pos) {
		c->bad = true;
		return 0;
	}
	memcpy(out, c->in + c->pos, n);
	c->pos += n;
	return n;
}

int http_attr_decode(const uint8_t *buf, size_t len, struct http_attr *a)
{
	struct cur c = { .in = buf, .cap = len };

	http_attr_init(a);
	if (!len)
		return 0;
	if (get_u(&c, 1) != HTTP_ATTR_VERSION)
		return -1;
	a->flags = (uint8_t)get_u(&c, 1);
	a->status = (uint16_t)get_u(&c, 2);
	a->last_modified = (int64_t)get_u(&c, 8);
	a->age_base = (int64_t)get_u(&c, 8);
	a->fresh_until = (int64_t)get_u(&c, 8);
	a->etag_len = get_str(&c, a->etag, HTTP_ATTR_ETAG_MAX);
	a->ctype_len = get_str(&c, a->ctype, HTTP_ATTR_CTYPE_MAX);
	a->extra_len = get_str(&c, a->extra, HTTP_ATTR_EXTRA_MAX);
	if (c.bad || c.pos != len) {
		http_attr_init(a);
		return -1;
	}
	return 0;
}
