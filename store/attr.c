/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The attribute record (see goblin.h): a version byte, fixed fields
 * little-endian, then three length-prefixed strings (ETag, Content-Type,
 * header lines).  Version 3 is version 2 with goblinfs's file block
 * between the times and the strings (issue 20).  Decoding checks every
 * length: the bytes come from disk.
 * It reads every format ever written: versions 3 and 2, version 1
 * (goblind's before the record moved here: a header block of at most
 * 512 bytes) and the "Name: value\r\n" text goblinfs --mirror kept.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <strings.h>

#include "goblin.h"

#define V1_HEADERS_MAX 512 /* HTTP_ATTR_EXTRA_MAX of version 1 */
#define V3_VERSION     3   /* version 2 with the file block */
#define TIMES_END      28  /* version, flags, status, 3 times */
/* kind, mode, uid, gid, rdev, 3 times, the target's length */
#define FILE_FIXED     (1 + 3 * 4 + 4 * 8 + 2)

_Static_assert(GS_ATTR_FIXED == 1 + 1 + 2 + 3 * 8 + 3 * 2,
	       "GS_ATTR_FIXED is the record less its strings");

static void file_init(struct gs_attr_file *f)
{
	memset(f, 0, offsetof(struct gs_attr_file, target));
	f->target[0] = '\0';
	f->mode = 0644;
}

void gs_attr_init(struct gs_attr *a)
{
	memset(a, 0, offsetof(struct gs_attr, file));
	a->status = 200;
	file_init(&a->file);
}

struct cur {
	uint8_t *p;
	const uint8_t *in;
	size_t pos, cap;
	int err; /* the first error, sticky */
};

static void put_bytes(struct cur *c, const void *b, size_t n)
{
	if (c->err)
		return;
	if (n > c->cap - c->pos) {
		c->err = -ENOSPC;
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
		if (!c->err)
			c->err = -EMSGSIZE;
		return;
	}
	put_u(c, len, 2);
	put_bytes(c, s, len);
}

static void put_file(struct cur *c, const struct gs_attr_file *f)
{
	put_u(c, f->kind, 1);
	put_u(c, f->mode, 4);
	put_u(c, f->uid, 4);
	put_u(c, f->gid, 4);
	put_u(c, f->rdev, 8);
	put_u(c, (uint64_t)f->atime_ns, 8);
	put_u(c, (uint64_t)f->mtime_ns, 8);
	put_u(c, (uint64_t)f->ctime_ns, 8);
	put_str(c, f->target, f->target_len, GS_ATTR_TARGET_MAX);
}

/* every flag its own bit: two branches once gave RESP's hash and the file
 * block the same one, and a hash was written with a file block */
_Static_assert((GS_ATTR_ORIGIN + GS_ATTR_REVALIDATE + GS_ATTR_NO_CACHE +
		GS_ATTR_VARY + GS_ATTR_FILE + GS_ATTR_RESP_HASH +
		GS_ATTR_RESP_ZSET) ==
		       (GS_ATTR_ORIGIN | GS_ATTR_REVALIDATE | GS_ATTR_NO_CACHE |
			GS_ATTR_VARY | GS_ATTR_FILE | GS_ATTR_RESP_HASH |
			GS_ATTR_RESP_ZSET),
	       "gs_attr flags share a bit");

long gs_attr_encode(const struct gs_attr *a, uint8_t *buf, size_t cap)
{
	struct cur c = { .p = buf, .cap = cap };
	bool file = a->flags & GS_ATTR_FILE;
	size_t extra = file ? FILE_FIXED + a->file.target_len : 0;

	if (GS_ATTR_FIXED + extra + a->etag_len + a->ctype_len +
		    a->headers_len >
	    GS_ATTR_MAX)
		return -EMSGSIZE;
	if (file && a->file.kind > GS_KIND_MAX)
		return -EINVAL;
	put_u(&c, file ? V3_VERSION : GS_ATTR_VERSION, 1);
	put_u(&c, a->flags, 1);
	put_u(&c, a->status, 2);
	put_u(&c, (uint64_t)a->last_modified, 8);
	put_u(&c, (uint64_t)a->age_base, 8);
	put_u(&c, (uint64_t)a->fresh_until, 8);
	if (file)
		put_file(&c, &a->file);
	put_str(&c, a->etag, a->etag_len, GS_ATTR_ETAG_MAX);
	put_str(&c, a->ctype, a->ctype_len, GS_ATTR_CTYPE_MAX);
	put_str(&c, a->headers, a->headers_len, GS_ATTR_HEADERS_MAX);
	return c.err ? c.err : (long)c.pos;
}

long gs_attr_file_encode(const struct gs_attr_file *f, uint8_t *buf, size_t cap)
{
	struct cur c = { .p = buf, .cap = cap };

	if (f->kind > GS_KIND_MAX)
		return -EINVAL;
	put_u(&c, V3_VERSION, 1);
	put_u(&c, GS_ATTR_FILE, 1);
	put_u(&c, 200, 2);
	for (int i = 0; i < 3; i++) /* no validators, always fresh */
		put_u(&c, 0, 8);
	put_file(&c, f);
	for (int i = 0; i < 3; i++) /* no ETag, type or headers */
		put_u(&c, 0, 2);
	return c.err ? c.err : (long)c.pos;
}

static uint64_t get_u(struct cur *c, unsigned bytes)
{
	uint64_t v = 0;

	if (c->err)
		return 0;
	if (bytes > c->cap - c->pos) {
		c->err = -EBADMSG; /* truncated */
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

	if (c->err)
		return 0;
	if (n > c->cap - c->pos) {
		c->err = -EBADMSG;
		return 0;
	}
	if (n > max) {
		c->err = -EMSGSIZE;
		return 0;
	}
	memcpy(out, c->in + c->pos, n);
	c->pos += n;
	return n;
}

/* The file block at c->pos (version 3 with GS_ATTR_FILE). */
static void get_file(struct cur *c, struct gs_attr_file *f)
{
	f->kind = (uint8_t)get_u(c, 1);
	f->mode = (uint32_t)get_u(c, 4);
	f->uid = (uint32_t)get_u(c, 4);
	f->gid = (uint32_t)get_u(c, 4);
	f->rdev = get_u(c, 8);
	f->atime_ns = (int64_t)get_u(c, 8);
	f->mtime_ns = (int64_t)get_u(c, 8);
	f->ctime_ns = (int64_t)get_u(c, 8);
	f->target_len = get_str(c, f->target, GS_ATTR_TARGET_MAX);
	f->target[f->target_len] = '\0';
	if (!c->err && f->kind > GS_KIND_MAX)
		c->err = -EBADMSG;
	if (!c->err && (f->kind == GS_KIND_SYMLINK) != (f->target_len > 0))
		c->err = -EBADMSG; /* a symlink has a target, nothing else */
}

/* Versions 1 to 3: one layout, the header block's bound differs, and
 * version 3 may have the file block. */
static int decode_binary(const uint8_t *in, size_t len, struct gs_attr *a,
			 size_t headers_max)
{
	struct cur c = { .in = in, .cap = len, .pos = 1 };

	a->flags = (uint8_t)get_u(&c, 1);
	a->status = (uint16_t)get_u(&c, 2);
	a->last_modified = (int64_t)get_u(&c, 8);
	a->age_base = (int64_t)get_u(&c, 8);
	a->fresh_until = (int64_t)get_u(&c, 8);
	if (in[0] != V3_VERSION)
		a->flags &= (uint8_t)~GS_ATTR_FILE;
	else if (a->flags & GS_ATTR_FILE)
		get_file(&c, &a->file);
	else if (!c.err)
		c.err = -EBADMSG; /* version 3 is the one with the block */
	a->etag_len = get_str(&c, a->etag, GS_ATTR_ETAG_MAX);
	a->ctype_len = get_str(&c, a->ctype, GS_ATTR_CTYPE_MAX);
	a->headers_len = get_str(&c, a->headers, headers_max);
	if (!c.err && c.pos != len)
		c.err = -EBADMSG; /* trailing bytes */
	return c.err;
}

static bool name_is(const char *p, size_t nlen, const char *name)
{
	return strlen(name) == nlen && strncasecmp(p, name, nlen) == 0;
}

/*
 * The text form: "Name: value\r\n" lines.  goblinfs --mirror wrote one,
 * Last-Modified; Content-Type and ETag are taken too, anything else is
 * kept in the header block.  Such an object was served as always fresh,
 * and still is (flags 0, fresh_until 0).
 */
static int decode_text(const char *in, size_t len, struct gs_attr *a)
{
	const char *p = in, *end = in + len;

	while (p < end) {
		const char *cr = memchr(p, '\r', (size_t)(end - p));
		const char *colon = memchr(p, ':', (size_t)(end - p));
		const char *v;
		size_t nlen, vlen, llen;

		if (!cr || cr + 1 >= end || cr[1] != '\n' || !colon ||
		    colon > cr || colon == p)
			return -EBADMSG;
		llen = (size_t)(cr + 2 - p);
		for (const char *q = p; q < colon; q++)
			if (*q <= ' ' || *q >= 127)
				return -EBADMSG; /* not a field name */
		nlen = (size_t)(colon - p);
		v = colon + 1;
		while (v < cr && (*v == ' ' || *v == '\t'))
			v++;
		vlen = (size_t)(cr - v);
		if (name_is(p, nlen, "Last-Modified")) {
			if (gs_http_date_parse(v, vlen, &a->last_modified) < 0)
				return -EBADMSG;
		} else if (name_is(p, nlen, "Content-Type")) {
			if (vlen > GS_ATTR_CTYPE_MAX)
				return -EMSGSIZE;
			memcpy(a->ctype, v, vlen);
			a->ctype_len = vlen;
		} else if (name_is(p, nlen, "ETag")) {
			if (vlen > GS_ATTR_ETAG_MAX)
				return -EMSGSIZE;
			memcpy(a->etag, v, vlen);
			a->etag_len = vlen;
		} else {
			if (llen > GS_ATTR_HEADERS_MAX - a->headers_len)
				return -EMSGSIZE;
			memcpy(a->headers + a->headers_len, p, llen);
			a->headers_len += llen;
		}
		p += llen;
	}
	return 0;
}

int gs_attr_decode(const void *buf, size_t len, struct gs_attr *a)
{
	const uint8_t *in = buf;
	int ret;

	gs_attr_init(a);
	if (!len)
		return 0;
	if (len > GS_ATTR_MAX)
		ret = -EMSGSIZE;
	else if (in[0] == GS_ATTR_VERSION || in[0] == V3_VERSION)
		ret = decode_binary(in, len, a, GS_ATTR_HEADERS_MAX);
	else if (in[0] == 1)
		ret = decode_binary(in, len, a, V1_HEADERS_MAX);
	else if ((in[0] >= 'A' && in[0] <= 'Z') ||
		 (in[0] >= 'a' && in[0] <= 'z'))
		ret = decode_text(buf, len, a);
	else
		ret = -EPROTONOSUPPORT;
	if (ret < 0)
		gs_attr_init(a);
	return ret;
}

int gs_attr_file_get(const void *buf, size_t len, struct gs_attr_file *f)
{
	const uint8_t *in = buf;
	struct cur c = { .in = in, .cap = len, .pos = TIMES_END };

	file_init(f);
	if (len < TIMES_END || in[0] != V3_VERSION)
		return len && in[0] == V3_VERSION ? -EBADMSG : 0;
	if (len > GS_ATTR_MAX)
		return -EMSGSIZE;
	if (!(in[1] & GS_ATTR_FILE))
		return -EBADMSG;
	get_file(&c, f);
	if (c.err) {
		file_init(f);
		return c.err;
	}
	return 1;
}

enum gs_kind gs_attr_kind(const void *buf, size_t len)
{
	const uint8_t *in = buf;

	/* the kind is the block's first byte, right after the times */
	if (len <= TIMES_END || in[0] != V3_VERSION ||
	    !(in[1] & GS_ATTR_FILE) || in[TIMES_END] > GS_KIND_MAX)
		return GS_KIND_FILE;
	return (enum gs_kind)in[TIMES_END];
}
