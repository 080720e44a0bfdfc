/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for the HTTP head parser and chunked decoder: the
 * input is a stream of pipelined requests, parsed until it runs out, each
 * body skipped (Content-Length) or decoded (chunked) as the daemon would.
 * Checks that consumed counts stay inside the buffer, that keys hold no
 * NUL, that header values point into the head, and that a head parses
 * the same when it arrives in two pieces.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "http_proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c)                 \
	do {                     \
		if (!(c))        \
			abort(); \
	} while (0)

static void check_str(struct http_str s, const char *buf, size_t used)
{
	if (s.p)
		CHECK(s.p >= buf && s.p + s.len <= buf + used);
}

static void check_req(const struct http_req *r, const char *buf, size_t used)
{
	CHECK(r->klen <= HTTP_KEY_MAX && r->key[r->klen] == '\0');
	CHECK(!memchr(r->key, '\0', r->klen));
	CHECK(r->major == 1 && r->minor <= 1);
	CHECK(!(r->has_length && r->chunked));
	CHECK(r->minor == 0 || r->host.p);
	check_str(r->target, buf, used);
	check_str(r->query, buf, used);
	check_str(r->origin_form, buf, used);
	check_str(r->fields, buf, used);
	check_str(r->method_tok, buf, used);
	CHECK(r->method_tok.p == NULL || r->method_tok.len > 0);
	CHECK(!r->query.p ||
	      (r->origin_form.p && r->query.p > r->origin_form.p));
	check_str(r->host, buf, used);
	check_str(r->range, buf, used);
	check_str(r->authorization, buf, used);
}

/* decode a chunked body at @buf in two pieces; returns bytes used or 0 */
static size_t skip_chunked(char *buf, size_t len)
{
	struct http_chunked c;
	size_t half = len / 2, ol, used1, used2 = 0;

	http_chunked_init(&c);
	if (http_chunked_feed(&c, buf, half, buf, &ol, &used1))
		return 0;
	CHECK(used1 <= half && ol <= used1);
	if (!c.done) {
		if (http_chunked_feed(&c, buf + used1, len - used1, buf + used1,
				      &ol, &used2))
			return 0;
		CHECK(used1 + used2 <= len && ol <= used2);
	}
	return c.done ? used1 + used2 : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* a copy of exactly @size bytes: reads past it are caught */
	char *buf = malloc(size ? size : 1);
	struct http_req *r = malloc(sizeof(*r)), *r2 = malloc(sizeof(*r2));
	size_t pos = 0;

	if (!buf || !r || !r2)
		goto out;
	memcpy(buf, data, size);
	while (pos < size) {
		size_t used = 0, used2 = 0, n;
		enum http_parse_result ret;

		ret = http_parse_head(buf + pos, size - pos, r, &used);
		if (ret != HTTP_PARSE_OK) {
			CHECK(used == 0);
			CHECK(ret == HTTP_PARSE_MORE ||
			      (r->err > HTTP_E_OK && r->err < HTTP_E_COUNT));
			break;
		}
		CHECK(used > 0 && used <= size - pos);
		check_req(r, buf + pos, used);
		/* the first part of the head alone is never a whole head */
		CHECK(http_parse_head(buf + pos, used - 1, r2, &used2) !=
		      HTTP_PARSE_OK);
		pos += used;
		if (r->has_length) {
			if (r->length > size - pos)
				break;
			pos += r->length;
		} else if (r->chunked) {
			n = skip_chunked(buf + pos, size - pos);
			if (!n)
				break;
			pos += n;
		}
	}
out:
	free(buf);
	free(r);
	free(r2);
	return 0;
}
