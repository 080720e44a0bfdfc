/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the memcache parser (netd/mc_proto.c): well-formed lines,
 * and malformed, truncated, oversized and hostile ones, each with the
 * reply memcached gives it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mc_proto.h"

static struct mc_req req;
static size_t used;

/* Parse the NUL-terminated @line with the default limits. */
static enum mc_parse_result P(const char *line)
{
	used = 0;
	return mc_parse(line, strlen(line), 65536, &req, &used);
}

static void assert_key(const char *want)
{
	assert_int_equal(req.klen, strlen(want));
	assert_memory_equal(req.key, want, req.klen);
}

static void test_get_keys(void **state)
{
	const char *p, *end, *k;
	size_t kl;

	(void)state;
	assert_int_equal(P("get  a  bb ccc \r\nget x\r\n"), MC_PARSE_OK);
	assert_int_equal(req.cmd, MC_GET);
	assert_int_equal(used, strlen("get  a  bb ccc \r\n"));
	p = req.keys;
	end = req.keys + req.keys_len;
	assert_true(mc_next_key(&p, end, &k, &kl));
	assert_int_equal(kl, 1);
	assert_true(mc_next_key(&p, end, &k, &kl));
	assert_memory_equal(k, "bb", 2);
	assert_true(mc_next_key(&p, end, &k, &kl));
	assert_memory_equal(k, "ccc", 3);
	assert_false(mc_next_key(&p, end, &k, &kl));
	assert_int_equal(P("get\r\n"), MC_PARSE_ERROR);
	assert_int_equal(P("gets a\n"), MC_PARSE_OK);
	assert_int_equal(req.cmd, MC_GETS);
	assert_int_equal(used, 7);
	assert_int_equal(P("gat 10 a b\r\n"), MC_PARSE_OK);
	assert_int_equal(req.exptime, 10);
	assert_int_equal(P("gat\r\n"), MC_PARSE_ERROR);
	assert_int_equal(P("gat a\r\n"), MC_PARSE_CLIENT_ERROR);
	assert_string_equal(req.err, "invalid exptime argument");
	/* issue 19: "gats 5" has no key: END, as memcached answers */
	assert_int_equal(P("gats 5\r\n"), MC_PARSE_OK);
	assert_int_equal(req.keys_len, 0);
}

/* issue 19: one bad key refuses the whole line, before any value */
static void test_get_bad_key(void **state)
{
	char line[600];

	(void)state;
	snprintf(line, sizeof(line), "get a %0251d b\r\n", 0);
	assert_int_equal(P(line), MC_PARSE_CLIENT_ERROR);
	assert_string_equal(req.err, "bad command line format");
	assert_int_equal(used, strlen(line));
	snprintf(line, sizeof(line), "gat 1 a %0250d b\r\n", 0);
	assert_int_equal(P(line), MC_PARSE_OK);
	assert_int_equal(P("get a b\x01 c\r\n"), MC_PARSE_CLIENT_ERROR);
}

/* issue 19: a long retrieval line's head, then its keys as they come */
static void test_get_stream(void **state)
{
	const char *k;
	size_t kl, n;
	char big[300];

	(void)state;
	assert_int_equal(mc_parse_get_head("  get  a b", 10, &req, &n),
			 MC_PARSE_OK);
	assert_int_equal(req.cmd, MC_GET);
	assert_int_equal(n, 7);
	assert_int_equal(mc_parse_get_head("gats -5 k", 9, &req, &n),
			 MC_PARSE_OK);
	assert_int_equal(req.cmd, MC_GATS);
	assert_int_equal(req.exptime, -5);
	assert_int_equal(n, 8);
	assert_int_equal(mc_parse_get_head("gat x k", 7, &req, &n),
			 MC_PARSE_CLIENT_ERROR);
	assert_string_equal(req.err, "invalid exptime argument");
	assert_int_equal(n, 5);
	assert_int_equal(mc_parse_get_head("set k 0", 7, &req, &n),
			 MC_PARSE_TOO_LONG);
	assert_int_equal(mc_parse_get_head("getx k", 6, &req, &n),
			 MC_PARSE_TOO_LONG);
	assert_int_equal(mc_parse_get_head("gat 5555", 8, &req, &n),
			 MC_PARSE_TOO_LONG);

	assert_int_equal(mc_stream_key("  ab cd", 7, &k, &kl, &n), 1);
	assert_int_equal(kl, 2);
	assert_memory_equal(k, "ab", 2);
	assert_int_equal(n, 4);
	assert_int_equal(mc_stream_key(" cd", 3, &k, &kl, &n), 0);
	assert_int_equal(n, 1); /* the space: "cd" may go on */
	assert_int_equal(mc_stream_key("cd\r", 3, &k, &kl, &n), 0);
	assert_int_equal(mc_stream_key("cd\r\n", 4, &k, &kl, &n), 1);
	assert_int_equal(kl, 2);
	assert_int_equal(n, 2);
	assert_int_equal(mc_stream_key("\r\nget", 5, &k, &kl, &n), 2);
	assert_int_equal(n, 2);
	assert_int_equal(mc_stream_key("  \nget", 6, &k, &kl, &n), 2);
	assert_int_equal(n, 3);
	assert_int_equal(mc_stream_key("\r", 1, &k, &kl, &n), 0);
	assert_int_equal(mc_stream_key("", 0, &k, &kl, &n), 0);
	memset(big, 'k', sizeof(big));
	assert_int_equal(mc_stream_key(big, 251, &k, &kl, &n), 0);
	assert_int_equal(mc_stream_key(big, 252, &k, &kl, &n), -1);
	big[251] = ' ';
	assert_int_equal(mc_stream_key(big, 252, &k, &kl, &n), 1);
	assert_int_equal(kl, 251); /* the caller refuses it */
}

/* issue 19: what memcached closes on, and its noreply rule */
static void test_http_noreply(void **state)
{
	(void)state;
	assert_int_equal(P("GET / HTTP/1.0\r\n"), MC_PARSE_CLOSE);
	assert_int_equal(P("POST /x HTTP/1.1\r\n"), MC_PARSE_CLOSE);
	assert_int_equal(P("HEAD HTTP/2\r\n"), MC_PARSE_CLOSE);
	/* letters memcached sorts commands by, one-letter and meta-like
	 * commands: ERROR; a known command stays itself */
	assert_int_equal(P("trace / HTTP/1.1\r\n"), MC_PARSE_ERROR);
	assert_int_equal(P("mx / HTTP/1.1\r\n"), MC_PARSE_ERROR);
	assert_int_equal(P("G / HTTP/1.1\r\n"), MC_PARSE_ERROR);
	assert_int_equal(P("GET / HTTPS\r\n"), MC_PARSE_ERROR);
	assert_int_equal(P("get / HTTP/1.1\r\n"), MC_PARSE_OK);
	/* "noreply" as the last token makes a bad line's error quiet */
	assert_int_equal(P("verbosity noreply\r\n"), MC_PARSE_CLIENT_ERROR);
	assert_true(req.noreply);
	assert_int_equal(P("verbosity x\r\n"), MC_PARSE_CLIENT_ERROR);
	assert_false(req.noreply);
	assert_int_equal(P("set k 0 0 noreply\r\n"), MC_PARSE_CLIENT_ERROR);
	assert_true(req.noreply);
	assert_int_equal(P("incr k noreply\r\n"), MC_PARSE_CLIENT_ERROR);
	assert_true(req.noreply);
	assert_int_equal(P("delete noreply\r\n"), MC_PARSE_OK);
	assert_false(req.noreply); /* the key "noreply", as memcached */
}

static void test_storage(void **state)
{
	(void)state;
	assert_int_equal(P("set k 7 -1 5 noreply\r\nhello\r\n"), MC_PARSE_OK);
	assert_int_equal(req.cmd, MC_SET);
	assert_key("k");
	assert_int_equal(req.flags, 7);
	assert_int_equal(req.exptime, -1);
	assert_int_equal(req.bytes, 5);
	assert_true(req.noreply);
	assert_int_equal(used, strlen("set k 7 -1 5 noreply\r\n"));
	/* a sixth token that is not noreply is ignored, like memcached */
	assert_int_equal(P("add k 0 0 1 garbage\r\n"), MC_PARSE_OK);
	assert_false(req.noreply);
	assert_int_equal(P("cas k 0 0 1 18446744073709551615\r\n"),
			 MC_PARSE_OK);
	assert_true(req.cas == UINT64_MAX);
	assert_int_equal(P("cas k 0 0 1\r\n"), MC_PARSE_ERROR);
	assert_int_equal(P("set k 0 0\r\n"), MC_PARSE_ERROR);
	assert_int_equal(P("set k 0 0 1 noreply extra\r\n"), MC_PARSE_ERROR);
	assert_int_equal(P("set k x 0 1\r\n"), MC_PARSE_CLIENT_ERROR);
	assert_string_equal(req.err, "bad command line format");
	assert_int_equal(P("set k 0 0 -1\r\n"), MC_PARSE_CLIENT_ERROR);
	assert_int_equal(P("set k 4294967296 0 1\r\n"), MC_PARSE_CLIENT_ERROR);
	assert_int_equal(P("set k 4294967295 0 1\r\n"), MC_PARSE_OK);
	assert_int_equal(P("set k 0 0 99999999999999999999\r\n"),
			 MC_PARSE_CLIENT_ERROR);
	assert_int_equal(P("SET k 0 0 1\r\n"), MC_PARSE_ERROR);
}

static void test_keys(void **state)
{
	char line[400], key[300];

	(void)state;
	memset(key, 'k', sizeof(key));
	snprintf(line, sizeof(line), "set %.*s 0 0 1\r\n", MC_KEY_MAX, key);
	assert_int_equal(P(line), MC_PARSE_OK);
	assert_int_equal(req.klen, MC_KEY_MAX);
	snprintf(line, sizeof(line), "set %.*s 0 0 1\r\n", MC_KEY_MAX + 1, key);
	assert_int_equal(P(line), MC_PARSE_CLIENT_ERROR);
	assert_string_equal(req.err, "bad command line format");
	assert_int_equal(P("set a\x01z 0 0 1\r\n"), MC_PARSE_CLIENT_ERROR);
	assert_int_equal(P("delete a\x7f\r\n"), MC_PARSE_CLIENT_ERROR);
	assert_false(mc_key_valid("a\tb", 3));
	assert_false(mc_key_valid("", 0));
	assert_true(mc_key_valid("a/b:c", 5));
	/* a NUL inside the line is a control character too */
	assert_int_equal(mc_parse("touch a\0b 1\r\n", 13, 65536, &req, &used),
			 MC_PARSE_CLIENT_ERROR);
}

static void test_line_limits(void **state)
{
	char *buf = malloc(70000);

	(void)state;
	assert_int_equal(P("get a"), MC_PARSE_MORE);
	assert_int_equal(P(""), MC_PARSE_MORE);
	assert_int_equal(P("\r\n"), MC_PARSE_ERROR);
	assert_int_equal(used, 2);
	memset(buf, 'x', 70000);
	assert_int_equal(mc_parse(buf, MC_LINE_MAX, 65536, &req, &used),
			 MC_PARSE_MORE);
	assert_int_equal(mc_parse(buf, MC_LINE_MAX + 1, 65536, &req, &used),
			 MC_PARSE_TOO_LONG);
	/* a long multi-get is read up to its own limit */
	memcpy(buf, "get ", 4);
	assert_int_equal(mc_parse(buf, 60000, 65536, &req, &used),
			 MC_PARSE_MORE);
	assert_int_equal(mc_parse(buf, 65537, 65536, &req, &used),
			 MC_PARSE_TOO_LONG);
	for (size_t i = 4; i < 5000; i += 2)
		buf[i + 1] = ' ';
	buf[5000] = '\n';
	assert_int_equal(mc_parse(buf, 70000, 65536, &req, &used), MC_PARSE_OK);
	assert_int_equal(used, 5001);
	/* a whole line of anything else over the limit closes too */
	memcpy(buf, "set ", 4);
	assert_int_equal(mc_parse(buf, 70000, 65536, &req, &used),
			 MC_PARSE_TOO_LONG);
	free(buf);
}

static void test_other_text(void **state)
{
	(void)state;
	assert_int_equal(P("incr n 5\r\n"), MC_PARSE_OK);
	assert_int_equal(req.delta, 5);
	assert_int_equal(P("decr n -1\r\n"), MC_PARSE_CLIENT_ERROR);
	assert_string_equal(req.err, "invalid numeric delta argument");
	assert_int_equal(P("incr n 18446744073709551616\r\n"),
			 MC_PARSE_CLIENT_ERROR);
	assert_int_equal(P("incr n\r\n"), MC_PARSE_ERROR);
	assert_int_equal(P("delete a\r\n"), MC_PARSE_OK);
	assert_int_equal(P("delete a 0\r\n"), MC_PARSE_OK);
	assert_int_equal(P("delete a noreply\r\n"), MC_PARSE_OK);
	assert_true(req.noreply);
	assert_int_equal(P("delete a 0 noreply\r\n"), MC_PARSE_OK);
	assert_int_equal(P("delete a 1\r\n"), MC_PARSE_CLIENT_ERROR);
	assert_string_equal(req.err, "bad command line format.  "
				     "Usage: delete <key> [noreply]");
	assert_int_equal(P("touch a\r\n"), MC_PARSE_ERROR);
	assert_int_equal(P("touch a x\r\n"), MC_PARSE_CLIENT_ERROR);
	assert_string_equal(req.err, "invalid exptime argument");
	assert_int_equal(P("flush_all\r\n"), MC_PARSE_OK);
	assert_false(req.has_num);
	assert_int_equal(P("flush_all 10 noreply\r\n"), MC_PARSE_OK);
	assert_int_equal(req.num, 10);
	assert_true(req.noreply);
	assert_int_equal(P("flush_all x\r\n"), MC_PARSE_CLIENT_ERROR);
	assert_int_equal(P("flush_all 0 0 0\r\n"), MC_PARSE_ERROR);
	assert_int_equal(P("verbosity\r\n"), MC_PARSE_ERROR);
	assert_int_equal(P("verbosity x\r\n"), MC_PARSE_CLIENT_ERROR);
	assert_int_equal(P("verbosity 1 noreply\r\n"), MC_PARSE_OK);
	assert_int_equal(P("stats  tiers\r\n"), MC_PARSE_OK);
	assert_int_equal(req.arg_len, 5);
	assert_int_equal(P("version\r\n"), MC_PARSE_OK);
	assert_int_equal(P("quit\r\n"), MC_PARSE_OK);
	assert_int_equal(req.cmd, MC_QUIT);
}

static void test_metadump(void **state)
{
	(void)state;
	assert_int_equal(P("lru_crawler metadump all\r\n"), MC_PARSE_OK);
	assert_int_equal(req.cmd, MC_METADUMP);
	assert_null(req.arg);
	assert_int_equal(P("lru_crawler metadump hash art:\r\n"), MC_PARSE_OK);
	assert_int_equal(req.arg_len, 4);
	assert_memory_equal(req.arg, "art:", 4);
	assert_int_equal(P("lru_crawler\r\n"), MC_PARSE_ERROR);
	assert_int_equal(P("lru_crawler metadump\r\n"), MC_PARSE_ERROR);
	assert_int_equal(P("lru_crawler metadump 1,2\r\n"), MC_PARSE_ERROR);
	/* issue 19: crawl is accepted, its class list checked */
	assert_int_equal(P("lru_crawler crawl all\r\n"), MC_PARSE_OK);
	assert_int_equal(req.cmd, MC_CRAWL);
	assert_null(req.err);
	assert_int_equal(P("lru_crawler crawl 1,2,63\r\n"), MC_PARSE_OK);
	assert_null(req.err);
	assert_int_equal(P("lru_crawler crawl 0\r\n"), MC_PARSE_OK);
	assert_string_equal(req.err, "invalid class id");
	assert_int_equal(P("lru_crawler crawl 1,\r\n"), MC_PARSE_OK);
	assert_string_equal(req.err, "invalid class id");
	assert_int_equal(P("lru_crawler crawl 64\r\n"), MC_PARSE_OK);
	assert_string_equal(req.err, "invalid class id");
	assert_int_equal(P("lru_crawler crawl\r\n"), MC_PARSE_ERROR);
	assert_int_equal(P("lru_crawler metadump all a b\r\n"), MC_PARSE_ERROR);
	assert_int_equal(P("lru_crawler metadump all a\x01\r\n"),
			 MC_PARSE_CLIENT_ERROR);
}

static void test_meta(void **state)
{
	(void)state;
	assert_int_equal(P("mg k v k Oab12 t T30 s\r\n"), MC_PARSE_OK);
	assert_int_equal(req.cmd, MC_MG);
	assert_int_equal(req.meta.n, 6);
	assert_int_equal(req.meta.fl[2].f, 'O');
	assert_int_equal(req.meta.fl[2].len, 4);
	assert_memory_equal(req.meta.fl[2].tok, "ab12", 4);
	assert_true(mc_meta_has(&req.meta, 'T'));
	assert_int_equal(req.meta.ttl, 30);
	assert_false(mc_meta_has(&req.meta, 'q'));
	assert_int_equal(P("mg\r\n"), MC_PARSE_ERROR);
	assert_int_equal(P("mg k Z\r\n"), MC_PARSE_CLIENT_ERROR);
	assert_string_equal(req.err, "invalid flag");
	assert_int_equal(P("mg k v v\r\n"), MC_PARSE_CLIENT_ERROR);
	assert_string_equal(req.err, "duplicate flag");
	assert_int_equal(P("mg k O123456789012345678901234567890123\r\n"),
			 MC_PARSE_CLIENT_ERROR);
	assert_string_equal(req.err, "opaque token too long");
	assert_int_equal(P("mg k Tx\r\n"), MC_PARSE_CLIENT_ERROR);
	assert_string_equal(req.err, "bad token in command line format");
	assert_int_equal(P("mg k q\r\n"), MC_PARSE_OK);
	assert_true(req.noreply);
	/* ms: the data length is positional; a bad flag still swallows */
	assert_int_equal(P("ms k 5 T10 F3 MA c\r\n"), MC_PARSE_OK);
	assert_int_equal(req.bytes, 5);
	assert_int_equal(req.meta.client_flags, 3);
	assert_int_equal(req.meta.mode, MC_MS_APPEND);
	assert_false(req.swallow);
	assert_int_equal(P("ms k 2 MX\r\n"), MC_PARSE_CLIENT_ERROR);
	assert_string_equal(req.err, "invalid mode for ms M token");
	assert_true(req.swallow);
	assert_int_equal(req.bytes, 2);
	assert_int_equal(P("ms k S2\r\n"), MC_PARSE_CLIENT_ERROR);
	assert_false(req.swallow);
	assert_int_equal(P("ms k\r\n"), MC_PARSE_CLIENT_ERROR);
	assert_int_equal(P("ms\r\n"), MC_PARSE_ERROR);
	assert_int_equal(P("ma k MD D7 N0 J3 v\r\n"), MC_PARSE_OK);
	assert_int_equal(req.meta.mode, 1);
	assert_int_equal(req.meta.delta, 7);
	assert_int_equal(req.meta.initial, 3);
	assert_int_equal(P("ma k\r\n"), MC_PARSE_OK);
	assert_int_equal(req.meta.delta, 1);
	assert_int_equal(P("ma k Dx\r\n"), MC_PARSE_CLIENT_ERROR);
	assert_string_equal(req.err, "invalid or duplicate flag");
	assert_int_equal(P("md k I T5 q\r\n"), MC_PARSE_OK);
	assert_int_equal(P("md k v\r\n"), MC_PARSE_CLIENT_ERROR);
	assert_int_equal(P("mn\r\n"), MC_PARSE_OK);
	assert_int_equal(req.cmd, MC_MN);
	assert_int_equal(P("me\r\n"), MC_PARSE_CLIENT_ERROR);
	/* P and L are for proxies: taken and ignored */
	assert_int_equal(P("mg k Lpath P v\r\n"), MC_PARSE_OK);
}

static void test_meta_range(void **state)
{
	(void)state;
	assert_int_equal(P("mg k v G10-19\r\n"), MC_PARSE_OK);
	assert_int_equal(req.meta.range_first, 10);
	assert_int_equal(req.meta.range_last, 19);
	assert_int_equal(P("mg k v G100-\r\n"), MC_PARSE_OK);
	assert_true(req.meta.range_last == UINT64_MAX);
	assert_int_equal(P("mg k v G9-3\r\n"), MC_PARSE_CLIENT_ERROR);
	assert_int_equal(P("mg k v G-3\r\n"), MC_PARSE_CLIENT_ERROR);
	assert_int_equal(P("mg k v G5\r\n"), MC_PARSE_CLIENT_ERROR);
	assert_int_equal(P("ms k 1 G1-2\r\n"), MC_PARSE_CLIENT_ERROR);
}

static void test_base64(void **state)
{
	char out[300], enc[400];
	unsigned char bin[256];
	int n;

	(void)state;
	assert_int_equal(P("mg YWJj b k v\r\n"), MC_PARSE_OK);
	assert_true(req.b64);
	assert_key("abc");
	assert_ptr_equal(req.key, req.keybuf);
	assert_int_equal(P("mg !!!! b v\r\n"), MC_PARSE_CLIENT_ERROR);
	assert_string_equal(req.err, "error decoding key");
	assert_int_equal(P("mg YWJ b\r\n"), MC_PARSE_CLIENT_ERROR);
	assert_int_equal(P("mg YQ==YQ== b\r\n"), MC_PARSE_CLIENT_ERROR);
	/* binary keys, control bytes included, are fine in base64 */
	for (int i = 0; i < 256; i++)
		bin[i] = (unsigned char)i;
	for (size_t len = 1; len <= 180; len += 7) {
		size_t e = mc_b64_encode(bin, len, enc);

		assert_int_equal(e, (len + 2) / 3 * 4);
		n = mc_b64_decode(enc, e, out, sizeof(out));
		assert_int_equal(n, (int)len);
		assert_memory_equal(out, bin, len);
	}
	assert_int_equal(mc_b64_decode("YWJj", 4, out, 2), -1);
	/* RFC 4648's padding, as goblinctl sends the keys memcache cannot carry */
	assert_int_equal(mc_b64_encode("", 0, enc), 0);
	assert_int_equal(mc_b64_encode("a b", 3, enc), 4);
	assert_string_equal(enc, "YSBi");
	assert_int_equal(mc_b64_encode("a b/", 4, enc), 8);
	assert_string_equal(enc, "YSBiLw==");
	assert_int_equal(mc_b64_encode("a b/c", 5, enc), 8);
	assert_string_equal(enc, "YSBiL2M=");
}

/* issue 19: goblind's admin commands, keys of any store length in b */
static void test_goblin(void **state)
{
	static char line[6000];
	size_t n;

	(void)state;
	assert_int_equal(P("goblin inspect art:1\r\n"), MC_PARSE_OK);
	assert_int_equal(req.cmd, MC_GOBLIN);
	assert_int_equal(req.arg_len, 7);
	assert_memory_equal(req.arg, "inspect", 7);
	assert_key("art:1");
	assert_false(req.b64);
	assert_int_equal(P("goblin stat YSBi b\r\n"), MC_PARSE_OK);
	assert_true(req.b64);
	assert_key("YSBi"); /* decoded by the command: keybuf is too small */
	assert_int_equal(P("goblin stat k c\r\n"), MC_PARSE_CLIENT_ERROR);
	assert_int_equal(P("goblin stat a b c\r\n"), MC_PARSE_ERROR);
	assert_int_equal(P("goblin stat\r\n"), MC_PARSE_ERROR);
	assert_int_equal(P("goblin flush k\r\n"), MC_PARSE_ERROR);
	assert_int_equal(P("goblin\r\n"), MC_PARSE_ERROR);
	/* the base64 of a 4096-byte key: 5,464 bytes, longer than
	 * MC_LINE_MAX, within a retrieval line's whole limit */
	n = (size_t)sprintf(line, "goblin inspect ");
	memset(line + n, 'Q', 5464);
	n += 5464;
	memcpy(line + n, " b\r\n", 5);
	assert_true(n > MC_LINE_MAX);
	assert_int_equal(mc_parse(line, n + 4, MC_GET_WHOLE_MAX, &req, &used),
			 MC_PARSE_OK);
	assert_int_equal(req.klen, 5464);
	assert_int_equal(mc_parse(line, n - 100, MC_GET_WHOLE_MAX, &req, &used),
			 MC_PARSE_MORE);
	/* one byte more than a 4096-byte key's base64 */
	memmove(line + n + 4, line + n, 5);
	memcpy(line + n, "QQQQ", 4);
	assert_int_equal(mc_parse(line, n + 8, MC_GET_WHOLE_MAX, &req, &used),
			 MC_PARSE_CLIENT_ERROR);
	/* other commands keep MC_LINE_MAX */
	memcpy(line, "delete ", 7);
	assert_int_equal(mc_parse(line, n + 8, MC_GET_WHOLE_MAX, &req, &used),
			 MC_PARSE_TOO_LONG);
}

static void test_numbers(void **state)
{
	uint64_t u;
	int64_t i;

	(void)state;
	assert_true(mc_parse_u64("18446744073709551615", 20, UINT64_MAX, &u));
	assert_true(u == UINT64_MAX);
	assert_false(mc_parse_u64("18446744073709551616", 20, UINT64_MAX, &u));
	assert_false(mc_parse_u64("+1", 2, UINT64_MAX, &u));
	assert_false(mc_parse_u64("", 0, UINT64_MAX, &u));
	assert_true(mc_parse_i64("-9223372036854775808", 20, &i));
	assert_true(i == INT64_MIN);
	assert_false(mc_parse_i64("-", 1, &i));
	assert_int_equal(mc_exptime(0, 1000), 0);
	assert_int_equal(mc_exptime(-5, 1000), -1);
	assert_int_equal(mc_exptime(60, 1000), 1060);
	assert_int_equal(mc_exptime(MC_REL_TIME_MAX + 1, 1000),
			 MC_REL_TIME_MAX + 1);
	assert_int_equal(mc_exptime(MC_REL_TIME_MAX + 1, MC_REL_TIME_MAX + 5),
			 -1);
}

/* Hostile input: no result leaves the buffer or claims a key badly. */
static void test_hostile(void **state)
{
	char buf[4096];
	unsigned seed = 12345;

	(void)state;
	for (int round = 0; round < 20000; round++) {
		size_t len = (size_t)(rand_r(&seed) % sizeof(buf));
		enum mc_parse_result r;

		for (size_t i = 0; i < len; i++) {
			int x = rand_r(&seed) % 10;

			buf[i] =
				x < 3 ? ' ' :
				x < 4 ? '\n' :
				x < 6 ? "gsmadt0123vkqOTb"[rand_r(&seed) % 16] :
					(char)rand_r(&seed);
		}
		r = mc_parse(buf, len, 65536, &req, &used);
		if (r == MC_PARSE_MORE || r == MC_PARSE_TOO_LONG)
			continue;
		assert_true(used >= 1 && used <= len);
		if (r == MC_PARSE_OK && req.key)
			assert_true(mc_key_valid(req.key, req.klen));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_get_keys),
		cmocka_unit_test(test_get_bad_key),
		cmocka_unit_test(test_get_stream),
		cmocka_unit_test(test_http_noreply),
		cmocka_unit_test(test_storage),
		cmocka_unit_test(test_keys),
		cmocka_unit_test(test_line_limits),
		cmocka_unit_test(test_other_text),
		cmocka_unit_test(test_metadump),
		cmocka_unit_test(test_meta),
		cmocka_unit_test(test_meta_range),
		cmocka_unit_test(test_base64),
		cmocka_unit_test(test_goblin),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_hostile),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
