/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for the RESP request parser: the input is a stream of
 * requests parsed until it runs out, as goblind's loop takes them (a big
 * bulk skipped, then its tail parsed), once with the limits of an
 * authenticated connection and once with those before AUTH.  Checks that
 * every argument lies inside the buffer, that the bytes consumed never
 * pass its end, and that an error always has its text.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "resp_proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c)                 \
	do {                     \
		if (!(c))        \
			abort(); \
	} while (0)

static struct resp_req req;

static void check_args(const char *buf, size_t len)
{
	for (unsigned i = 0; i < req.argc; i++) {
		const char *p = req.argv[i].p;

		if (req.inline_req)
			CHECK(p >= req.unq &&
			      p + req.argv[i].len <= req.unq + sizeof(req.unq));
		else
			CHECK(p >= buf && p + req.argv[i].len <= buf + len);
	}
}

static void run(const char *buf, size_t len, bool unauth)
{
	struct resp_limits lim = {
		.whole_max = 4096,
		.big_min = 64,
		.bulk_max = 1u << 20,
		.mbulk_max = RESP_MBULK_MAX,
		.unauth = unauth,
	};
	size_t pos = 0;

	while (pos < len) {
		size_t used = 0;
		enum resp_parse_result r =
			resp_parse(buf + pos, len - pos, &lim, &req, &used);

		CHECK(used <= len - pos);
		check_args(buf + pos, len - pos);
		if (r == RESP_PARSE_ERROR) {
			CHECK(req.err && *req.err);
			return;
		}
		if (r == RESP_PARSE_MORE || r == RESP_PARSE_TOO_LONG)
			return;
		if (r == RESP_PARSE_BIG) {
			uint64_t tail = req.nargs - req.argc - 1;

			CHECK(req.big_len > lim.big_min);
			CHECK(req.nargs > req.argc);
			pos += used;
			if (req.big_len + 2 > len - pos)
				return;
			pos += (size_t)req.big_len + 2;
			req.argc = 0;
			r = resp_parse_bulks(buf + pos, len - pos, tail, &lim,
					     &req, &used);
			if (r != RESP_PARSE_OK)
				return;
			CHECK(used <= len - pos);
			check_args(buf + pos, len - pos);
		}
		if (r == RESP_PARSE_OK && !req.inline_req)
			CHECK(req.argc == req.nargs || req.big_len);
		if (!used)
			return;
		pos += used;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size ? size : 1);

	if (!buf)
		return 0;
	memcpy(buf, data, size); /* exact bounds for ASan */
	run(buf, size, false);
	run(buf, size, true);
	free(buf);
	return 0;
}
