/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RESP replies, in the connection's protocol version: RESP2's, or
 * RESP3's nulls, maps, sets and doubles after HELLO 3.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "resp.h"

void resp_ok(struct conn *c)
{
	ROUT(c, "+OK\r\n");
}

/* Redis turns CR and LF in an error into spaces: a reply is one line. */
static void err_line(struct conn *c, const char *msg, size_t len)
{
	char buf[512];

	if (len > sizeof(buf))
		len = sizeof(buf);
	memcpy(buf, msg, len);
	for (size_t i = 0; i < len; i++)
		if (buf[i] == '\r' || buf[i] == '\n')
			buf[i] = ' ';
	ROUT(c, "-");
	conn_out(c, buf, len);
	ROUT(c, "\r\n");
}

void resp_err(struct conn *c, const char *msg)
{
	err_line(c, msg, strlen(msg));
}

void resp_errf(struct conn *c, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	if ((size_t)n >= sizeof(buf))
		n = sizeof(buf) - 1;
	err_line(c, buf, (size_t)n);
}

void resp_simple(struct conn *c, const char *s)
{
	ROUT(c, "+");
	conn_out(c, s, strlen(s));
	ROUT(c, "\r\n");
}

void resp_int(struct conn *c, long long v)
{
	conn_printf(c, ":%lld\r\n", v);
}

void resp_bulk(struct conn *c, const void *p, size_t len)
{
	conn_printf(c, "$%zu\r\n", len);
	conn_out(c, p, len);
	ROUT(c, "\r\n");
}

void resp_bulk_str(struct conn *c, const char *s)
{
	resp_bulk(c, s, strlen(s));
}

void resp_null(struct conn *c)
{
	if (resp_of(c)->proto == 3)
		ROUT(c, "_\r\n");
	else
		ROUT(c, "$-1\r\n");
}

void resp_null_array(struct conn *c)
{
	if (resp_of(c)->proto == 3)
		ROUT(c, "_\r\n");
	else
		ROUT(c, "*-1\r\n");
}

void resp_array(struct conn *c, uint64_t n)
{
	conn_printf(c, "*%" PRIu64 "\r\n", n);
}

void resp_map(struct conn *c, uint64_t n)
{
	if (resp_of(c)->proto == 3)
		conn_printf(c, "%%%" PRIu64 "\r\n", n);
	else
		conn_printf(c, "*%" PRIu64 "\r\n", n * 2);
}

void resp_set(struct conn *c, uint64_t n)
{
	conn_printf(c, "%c%" PRIu64 "\r\n", resp_of(c)->proto == 3 ? '~' : '*',
		    n);
}

/* A double as Redis prints one: %.17g, and inf / -inf. */
static int fmt_double(char *buf, size_t cap, double d)
{
	if (isinf(d))
		return snprintf(buf, cap, "%s", d > 0 ? "inf" : "-inf");
	return snprintf(buf, cap, "%.17g", d);
}

void resp_double_out(struct conn *c, double d)
{
	char buf[64];
	int n = fmt_double(buf, sizeof(buf), d);

	if (resp_of(c)->proto == 3)
		conn_printf(c, ",%.*s\r\n", n, buf);
	else
		resp_bulk(c, buf, (size_t)n);
}

void resp_arity_err(struct conn *c, const char *name)
{
	resp_errf(c, "ERR wrong number of arguments for '%s' command", name);
}

void resp_syntax_err(struct conn *c)
{
	resp_err(c, "ERR syntax error");
}

void resp_not_int(struct conn *c)
{
	resp_err(c, "ERR value is not an integer or out of range");
}

void resp_wrongtype(struct conn *c)
{
	resp_err(c, "WRONGTYPE Operation against a key holding the wrong "
		    "kind of value");
}

int resp_kind(const struct conn *c, const struct gs_meta *mt)
{
	struct gs_attr *a = &((struct resp_worker *)conn_pstate(c))->attr;

	if (!mt->attr_len || gs_attr_decode(mt->attr, mt->attr_len, a) < 0)
		return RESP_KIND_STRING;
	if (a->flags & GS_ATTR_RESP_HASH)
		return RESP_KIND_HASH;
	if (a->flags & GS_ATTR_RESP_ZSET)
		return RESP_KIND_ZSET;
	return RESP_KIND_STRING;
}

long resp_kind_attr(int kind, uint8_t *buf, size_t cap)
{
	struct gs_attr *a = malloc(sizeof(*a));
	long n;

	if (!a)
		return -ENOMEM;
	gs_attr_init(a);
	a->flags = kind == RESP_KIND_HASH ? GS_ATTR_RESP_HASH :
					    GS_ATTR_RESP_ZSET;
	n = gs_attr_encode(a, buf, cap);
	free(a);
	return n;
}

const char *resp_kind_name(int kind)
{
	return kind == RESP_KIND_HASH ? "hash" :
	       kind == RESP_KIND_ZSET ? "zset" :
					"string";
}

void resp_subcmd_unknown(struct conn *c, const struct resp_arg *a,
			 const char *cmd)
{
	resp_errf(c, "ERR unknown subcommand '%.*s'. Try %s HELP.",
		  (int)(a->len > 128 ? 128 : a->len), a->p, cmd);
}
