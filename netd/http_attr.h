/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The HTTP attribute record kept with each object (gs_meta.attr): content
 * type, validators, freshness and a few passed-through origin headers.
 * Pure: encode/decode only, no store, no allocation.
 */
#ifndef HTTP_ATTR_H
#define HTTP_ATTR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HTTP_ATTR_VERSION 1
#define HTTP_ATTR_ETAG_MAX 128	/* ETag as sent, quotes (and W/) included */
#define HTTP_ATTR_CTYPE_MAX 128	/* Content-Type value */
#define HTTP_ATTR_EXTRA_MAX 512	/* "Name: value\r\n" lines passed through */

/* http_attr.flags */
#define HTTP_ATTR_ORIGIN 0x01	/* fetched by --mirror from the origin */
#define HTTP_ATTR_REVALIDATE 0x02	/* must-revalidate/no-cache: never
					 * served stale / always revalidated */
#define HTTP_ATTR_NO_CACHE 0x04	/* stored, but revalidate on every use */

struct http_attr {
	uint8_t flags;		/* HTTP_ATTR_* */
	uint16_t status;	/* the stored response's status (200) */
	int64_t last_modified;	/* unix seconds, 0: none (use the commit) */
	int64_t age_base;	/* unix seconds: when the response's age was
				 * 0 (response time - corrected initial age);
				 * 0: not from an origin */
	int64_t fresh_until;	/* unix seconds; 0: always fresh (stored by
				 * PUT, or no freshness limit) */
	size_t etag_len;	/* 0: none; the server derives one */
	char etag[HTTP_ATTR_ETAG_MAX];
	size_t ctype_len;
	char ctype[HTTP_ATTR_CTYPE_MAX];
	size_t extra_len;
	char extra[HTTP_ATTR_EXTRA_MAX];
};

/** Zero @a: no validators, no type, status 200. */
void http_attr_init(struct http_attr *a);

/**
 * Encode @a into @buf (room for @cap bytes, GS_ATTR_MAX is enough for
 * every record).  Returns the length, or -1 when it does not fit or a
 * length is over its maximum.
 */
long http_attr_encode(const struct http_attr *a, uint8_t *buf, size_t cap);

/**
 * Decode @len bytes into @a.  0, or -1 when the bytes are not a record
 * (an object stored by memcache has none: @len 0 decodes to defaults).
 */
int http_attr_decode(const uint8_t *buf, size_t len, struct http_attr *a);

#endif
