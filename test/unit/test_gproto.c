/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of goblin's binary protocol codec (netd/gproto.c, issue 22):
 * every template round-trips, the wire layout is the schema's
 * (netd/PROTOCOL.md), and truncated, oversized and lying frames are
 * refused with their reason.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gproto.h"

static uint8_t buf[GP_REQ_FIXED + GP_KEY_MAX + 256];
static struct gp_msg m;
static size_t used;

static enum gp_result D(size_t len)
{
	return gp_decode(buf, len, sizeof(buf), &m, &used);
}

static void put32at(size_t off, uint32_t v)
{
	buf[off] = (uint8_t)v;
	buf[off + 1] = (uint8_t)(v >> 8);
	buf[off + 2] = (uint8_t)(v >> 16);
	buf[off + 3] = (uint8_t)(v >> 24);
}

static void put16at(size_t off, uint16_t v)
{
	buf[off] = (uint8_t)v;
	buf[off + 1] = (uint8_t)(v >> 8);
}

static void test_get_roundtrip(void **state)
{
	struct gp_req r = { .key_len = 3 };
	int n;

	(void)state;
	n = gp_encode_req(buf, sizeof(buf), GP_T_GET, 77, &r, "abc", NULL, 0);
	assert_int_equal(n, GP_REQ_FIXED + 3);
	/* the schema's layout, byte for byte: little-endian header */
	assert_int_equal(buf[0], GP_REQ_BLOCK);
	assert_int_equal(buf[1], 0);
	assert_int_equal(buf[2], GP_T_GET);
	assert_int_equal(buf[4], 0x42);
	assert_int_equal(buf[5], 0x47);
	assert_int_equal(buf[6], GP_VERSION);
	assert_int_equal(buf[8], GP_REQ_FIXED + 3);
	assert_int_equal(buf[12], 77);
	assert_int_equal(buf[GP_HDR_LEN + 2], 3); /* key_len */
	assert_memory_equal(buf + GP_REQ_FIXED, "abc", 3);
	assert_int_equal(D((size_t)n), GP_OK);
	assert_int_equal(used, (size_t)n);
	assert_int_equal(m.h.template_id, GP_T_GET);
	assert_int_equal(m.h.opaque, 77);
	assert_int_equal(m.req.key_len, 3);
	assert_memory_equal(m.key, "abc", 3);
	assert_int_equal(m.payload_len, 0);
	/* and a frame may sit at any alignment */
	memmove(buf + 3, buf, (size_t)n);
	assert_int_equal(gp_decode(buf + 3, (size_t)n, sizeof(buf), &m, &used),
			 GP_OK);
	assert_memory_equal(m.key, "abc", 3);
}

static void test_set_fields(void **state)
{
	struct gp_req r = { .flags = GP_RQ_ADD | GP_RQ_QUIET,
			    .key_len = 1,
			    .ttl = 3600,
			    .client_flags = 0xdeadbeef,
			    .cas = 0x0102030405060708ull,
			    .length = 1000 };
	int n;

	(void)state;
	n = gp_encode_req(buf, sizeof(buf), GP_T_SET, 1, &r, "k", "hello", 5);
	assert_int_equal(n, GP_REQ_FIXED + 1 + 5);
	assert_int_equal(D((size_t)n), GP_OK);
	assert_int_equal(m.req.flags, GP_RQ_ADD | GP_RQ_QUIET);
	assert_int_equal(m.req.ttl, 3600);
	assert_int_equal(m.req.client_flags, 0xdeadbeef);
	assert_true(m.req.cas == 0x0102030405060708ull);
	assert_true(m.req.length == 1000);
	assert_int_equal(m.payload_len, 5);
	assert_memory_equal(m.payload, "hello", 5);
	/* more inline bytes than the value has */
	r.length = 4;
	assert_int_equal(gp_encode_req(buf, sizeof(buf), GP_T_SET, 1, &r, "k",
				       "hello", 5),
			 -EINVAL);
	/* add and replace at once */
	r.length = 5;
	r.flags = GP_RQ_ADD | GP_RQ_REPLACE;
	assert_int_equal(gp_encode_req(buf, sizeof(buf), GP_T_SET, 1, &r, "k",
				       "hello", 5),
			 -EINVAL);
	/* too small a buffer */
	r.flags = 0;
	assert_int_equal(gp_encode_req(buf, GP_REQ_FIXED + 5, GP_T_SET, 1, &r,
				       "k", "hello", 5),
			 -ENOSPC);
}

static void test_other_requests(void **state)
{
	struct gp_req r = { .key_len = 2, .offset = 10, .length = 20 };
	int n;

	(void)state;
	n = gp_encode_req(buf, sizeof(buf), GP_T_GETRANGE, 5, &r, "ab", NULL,
			  0);
	assert_int_equal(D((size_t)n), GP_OK);
	assert_true(m.req.offset == 10 && m.req.length == 20);
	/* a get has no range */
	assert_int_equal(gp_encode_req(buf, sizeof(buf), GP_T_GET, 5, &r, "ab",
				       NULL, 0),
			 -EINVAL);
	r.offset = UINT64_MAX;
	assert_int_equal(gp_encode_req(buf, sizeof(buf), GP_T_GETRANGE, 5, &r,
				       "ab", NULL, 0),
			 -EINVAL);
	memset(&r, 0, sizeof(r));
	r.key_len = 2;
	r.ttl = 9;
	n = gp_encode_req(buf, sizeof(buf), GP_T_TOUCH, 5, &r, "ab", NULL, 0);
	assert_int_equal(D((size_t)n), GP_OK);
	assert_int_equal(m.req.ttl, 9);
	r.ttl = 0;
	r.cas = 5;
	n = gp_encode_req(buf, sizeof(buf), GP_T_DELETE, 5, &r, "ab", NULL, 0);
	assert_int_equal(D((size_t)n), GP_OK);
	assert_int_equal(m.h.template_id, GP_T_DELETE);
	/* stats: a group name or none; noop: never a key */
	r.cas = 0;
	r.key_len = 0;
	n = gp_encode_req(buf, sizeof(buf), GP_T_STATS, 5, &r, NULL, NULL, 0);
	assert_int_equal(D((size_t)n), GP_OK);
	n = gp_encode_req(buf, sizeof(buf), GP_T_NOOP, 5, &r, NULL, NULL, 0);
	assert_int_equal(D((size_t)n), GP_OK);
	assert_int_equal(n, GP_REQ_FIXED);
	assert_int_equal(gp_encode_req(buf, sizeof(buf), GP_T_GET, 5, &r, NULL,
				       NULL, 0),
			 -EINVAL);
	r.key_len = 1;
	assert_int_equal(gp_encode_req(buf, sizeof(buf), GP_T_NOOP, 5, &r, "x",
				       NULL, 0),
			 -EINVAL);
	r.key_len = GP_KEY_MAX + 1;
	assert_int_equal(gp_encode_req(buf, sizeof(buf), GP_T_GET, 5, &r, buf,
				       NULL, 0),
			 -EINVAL);
	/* a window for RDMA */
	memset(&r, 0, sizeof(r));
	r.key_len = 1;
	r.flags = GP_RQ_WINDOW;
	r.win_addr = 0x7f0000001000ull;
	r.win_key = 0x1234;
	r.win_len = 262144;
	n = gp_encode_req(buf, sizeof(buf), GP_T_GET, 5, &r, "x", NULL, 0);
	assert_int_equal(D((size_t)n), GP_OK);
	assert_true(m.req.win_addr == 0x7f0000001000ull);
	assert_int_equal(m.req.win_key, 0x1234);
	assert_int_equal(m.req.win_len, 262144);
	r.flags = 0;
	assert_int_equal(gp_encode_req(buf, sizeof(buf), GP_T_GET, 5, &r, "x",
				       NULL, 0),
			 -EINVAL);
}

/* issue 22: a set over RDMA names the client's buffer, pulled by READ */
static void test_set_window(void **state)
{
	struct gp_req r = { .key_len = 1,
			    .flags = GP_RQ_WINDOW,
			    .length = 40u << 20,
			    .win_addr = 0x7f0000002000ull,
			    .win_key = 0x77,
			    .win_len = 40u << 20 };
	int n;

	(void)state;
	n = gp_encode_req(buf, sizeof(buf), GP_T_SET, 9, &r, "k", NULL, 0);
	assert_true(n > 0);
	assert_int_equal(D((size_t)n), GP_OK);
	assert_int_equal(m.req.flags, GP_RQ_WINDOW);
	assert_true(m.req.length == 40u << 20);
	assert_int_equal(m.req.win_key, 0x77);
	assert_int_equal(m.payload_len, 0);
	/* the window holds the whole value, and nothing comes inline */
	r.win_len = (40u << 20) - 1;
	assert_int_equal(gp_encode_req(buf, sizeof(buf), GP_T_SET, 9, &r, "k",
				       NULL, 0),
			 -EINVAL);
	r.win_len = 40u << 20;
	assert_int_equal(gp_encode_req(buf, sizeof(buf), GP_T_SET, 9, &r, "k",
				       "v", 1),
			 -EINVAL);
	/* the decoder says so too, for a frame the encoder would refuse */
	n = gp_encode_req(buf, sizeof(buf), GP_T_SET, 9, &r, "k", NULL, 0);
	put32at(GP_HDR_LEN + 48, (40u << 20) - 1); /* win_len */
	assert_int_equal(D((size_t)n), GP_BAD_LENGTH);
}

static void test_resp_and_data(void **state)
{
	struct gp_resp r = { .status = GP_S_OK,
			     .flags = GP_RS_VALUE,
			     .client_flags = 7,
			     .ttl = 60,
			     .credits = 16,
			     .cas = 99,
			     .value_size = 100,
			     .offset = 0,
			     .length = 100 };
	struct gp_data d = { .offset = 4, .len = 96, .flags = GP_DF_LAST };
	uint8_t val[100];
	int n;

	(void)state;
	memset(val, 'v', sizeof(val));
	n = gp_encode_resp(buf, sizeof(buf), 3, &r, val, 4);
	assert_int_equal(n, GP_RESP_FIXED + 4);
	assert_int_equal(D((size_t)n), GP_OK);
	assert_int_equal(m.h.template_id, GP_T_RESP);
	assert_int_equal(m.resp.credits, 16);
	assert_true(m.resp.value_size == 100 && m.resp.length == 100);
	assert_true(m.resp.cas == 99);
	assert_int_equal(m.resp.ttl, 60);
	assert_int_equal(m.payload_len, 4);
	n = gp_encode_data(buf, sizeof(buf), 3, &d, val + 4);
	assert_int_equal(n, GP_DATA_FIXED + 96);
	assert_int_equal(D((size_t)n), GP_OK);
	assert_int_equal(m.data.len, 96);
	assert_int_equal(m.data.flags, GP_DF_LAST);
	assert_int_equal(m.payload_len, 96);
	/* placed: a BULK_READY without bytes */
	d.flags = GP_DF_PLACED;
	n = gp_encode_data(buf, sizeof(buf), 3, &d, NULL);
	assert_int_equal(n, GP_DATA_FIXED);
	assert_int_equal(D((size_t)n), GP_OK);
	assert_int_equal(m.payload_len, 0);
	/* a response that claims more than the value holds */
	r.offset = 50;
	assert_int_equal(gp_encode_resp(buf, sizeof(buf), 3, &r, NULL, 0),
			 -EINVAL);
	/* a miss carries no bytes */
	memset(&r, 0, sizeof(r));
	r.status = GP_S_NOT_FOUND;
	n = gp_encode_resp(buf, sizeof(buf), 3, &r, NULL, 0);
	assert_int_equal(D((size_t)n), GP_OK);
	assert_int_equal(m.resp.status, GP_S_NOT_FOUND);
	r.length = r.value_size = 1;
	assert_int_equal(gp_encode_resp(buf, sizeof(buf), 3, &r, "x", 1),
			 -EINVAL);
	assert_string_equal(gp_status_name(GP_S_NOT_FOUND), "not found");
	assert_string_equal(gp_status_name(1000), "?");
}

/* Every prefix of a good frame asks for more, and says how much. */
static void test_truncated(void **state)
{
	struct gp_req r = { .key_len = 5, .length = 10 };
	int n;

	(void)state;
	n = gp_encode_req(buf, sizeof(buf), GP_T_SET, 1, &r, "abcde",
			  "0123456789", 10);
	for (size_t len = 0; len < (size_t)n; len++) {
		assert_int_equal(D(len), GP_MORE);
		assert_int_equal(used,
				 len < GP_HDR_LEN ? GP_HDR_LEN : (size_t)n);
	}
	assert_int_equal(D((size_t)n), GP_OK);
	/* the frame's limit is the caller's */
	assert_int_equal(gp_decode(buf, (size_t)n, (size_t)n - 1, &m, &used),
			 GP_TOO_BIG);
}

/* Frames whose fields lie: each refused for its own reason. */
static void test_lies(void **state)
{
	struct gp_req r = { .key_len = 3 };
	int n;

	(void)state;
	n = gp_encode_req(buf, sizeof(buf), GP_T_GET, 1, &r, "abc", NULL, 0);
	put16at(4, 0x1111);
	assert_int_equal(D((size_t)n), GP_BAD_SCHEMA);
	put16at(4, GP_SCHEMA_ID);
	put16at(6, 2);
	assert_int_equal(D((size_t)n), GP_BAD_VERSION);
	put16at(6, GP_VERSION);
	put16at(2, 200);
	assert_int_equal(D((size_t)n), GP_BAD_TEMPLATE);
	put16at(2, GP_T_GET);
	put16at(0, GP_RESP_BLOCK);
	assert_int_equal(D((size_t)n), GP_BAD_BLOCK);
	put16at(0, GP_REQ_BLOCK);
	/* a frame length shorter than its block */
	put32at(8, GP_HDR_LEN + 4);
	assert_int_equal(D((size_t)n), GP_BAD_LENGTH);
	/* a key longer than the frame */
	put32at(8, (uint32_t)n);
	put16at(GP_HDR_LEN + 2, 4);
	assert_int_equal(D((size_t)n), GP_BAD_LENGTH);
	/* a key longer than keys are */
	put32at(8, GP_REQ_FIXED + GP_KEY_MAX + 1);
	put16at(GP_HDR_LEN + 2, GP_KEY_MAX + 1);
	assert_int_equal(D(GP_REQ_FIXED + GP_KEY_MAX + 1), GP_BAD_KEY);
	/* a get with bytes after its key */
	put16at(GP_HDR_LEN + 2, 2);
	put32at(8, (uint32_t)n);
	assert_int_equal(D((size_t)n), GP_BAD_LENGTH);
	/* unknown flags */
	put16at(GP_HDR_LEN + 2, 3);
	put16at(GP_HDR_LEN, 0x8000);
	assert_int_equal(D((size_t)n), GP_BAD_FLAGS);
	put16at(GP_HDR_LEN, GP_RQ_QUIET); /* quiet means nothing to a get */
	assert_int_equal(D((size_t)n), GP_BAD_FLAGS);
	put16at(GP_HDR_LEN, 0);
	assert_int_equal(D((size_t)n), GP_OK);
	/* a frame length of 4 GiB - 1 is over any limit */
	put32at(8, UINT32_MAX);
	assert_int_equal(gp_decode(buf, (size_t)n, SIZE_MAX, &m, &used),
			 GP_TOO_BIG);
	/* a data frame whose len is not its inline bytes */
	{
		struct gp_data d = { .len = 8 };

		n = gp_encode_data(buf, sizeof(buf), 1, &d, "01234567");
		put32at(GP_HDR_LEN + 8, 9);
		assert_int_equal(D((size_t)n), GP_BAD_LENGTH);
	}
	assert_string_equal(gp_strerror(GP_BAD_KEY), "bad key length");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_get_roundtrip),
		cmocka_unit_test(test_set_fields),
		cmocka_unit_test(test_other_requests),
		cmocka_unit_test(test_set_window),
		cmocka_unit_test(test_resp_and_data),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_lies),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
