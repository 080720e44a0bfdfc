/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * goblinctl's memcache client: reply-line and metadump parsers (pure) and
 * a small blocking client (TCP or a Unix socket) for the online commands.  bench has its own
 * non-blocking loop and uses only the parsers.
 */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "mc_client.h"

static bool starts(const char *s, size_t len, const char *lit)
{
	size_t l = strlen(lit);

	return len >= l && !memcmp(s, lit, l);
}

/* An unsigned decimal ending at a space or @end; advances *@p. */
static bool take_u64(const char **p, const char *end, uint64_t max,
		     uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;

	if (s >= end || *s < '0' || *s > '9')
		return false;
	for (; s < end && *s >= '0' && *s <= '9'; s++) {
		unsigned d = (unsigned)(*s - '0');

		if (v > (max - d) / 10)
			return false;
		v = v * 10 + d;
	}
	if (s < end && *s != ' ')
		return false;
	*p = s;
	*out = v;
	return true;
}

static const char *skip_token(const char *p, const char *end)
{
	while (p < end && *p == ' ')
		p++;
	while (p < end && *p != ' ')
		p++;
	while (p < end && *p == ' ')
		p++;
	return p;
}

/* "VALUE key flags bytes [cas]" */
static int parse_value(struct mcc_reply *r)
{
	const char *end = r->text + r->len;
	const char *p = skip_token(r->text, end); /* "VALUE" */
	uint64_t v;

	p = skip_token(p, end); /* the key */
	if (!take_u64(&p, end, UINT32_MAX, &v))
		return -EPROTO;
	r->flags = (uint32_t)v;
	while (p < end && *p == ' ')
		p++;
	if (!take_u64(&p, end, INT64_MAX, &r->bytes))
		return -EPROTO;
	return 0;
}

int mcc_reply_parse(const char *buf, size_t len, struct mcc_reply *r,
		    size_t *consumed)
{
	static const struct {
		const char *word;
		enum mcc_kind kind;
	} words[] = {
		{ "VALUE ", MCC_VALUE },
		{ "STAT ", MCC_STAT },
		{ "CLIENT_ERROR", MCC_ERROR },
		{ "SERVER_ERROR", MCC_ERROR },
	};
	static const struct {
		const char *line;
		enum mcc_kind kind;
	} lines[] = {
		{ "END", MCC_END },
		{ "STORED", MCC_STORED },
		{ "NOT_STORED", MCC_NOT_STORED },
		{ "EXISTS", MCC_EXISTS },
		{ "NOT_FOUND", MCC_NOT_FOUND },
		{ "DELETED", MCC_DELETED },
		{ "ERROR", MCC_ERROR },
	};
	size_t scan = len < MCC_LINE_MAX + 2 ? len : MCC_LINE_MAX + 2;
	const char *nl = memchr(buf, '\n', scan);
	size_t i;

	if (!nl)
		return len >= MCC_LINE_MAX + 2 ? -EPROTO : 1;
	memset(r, 0, sizeof(*r));
	*consumed = (size_t)(nl - buf) + 1;
	r->text = buf;
	r->len = (size_t)(nl - buf);
	if (r->len && buf[r->len - 1] == '\r')
		r->len--;
	r->kind = MCC_OTHER;
	for (i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
		if (r->len == strlen(lines[i].line) &&
		    starts(buf, r->len, lines[i].line))
			r->kind = lines[i].kind;
	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (starts(buf, r->len, words[i].word))
			r->kind = words[i].kind;
	if (r->kind == MCC_VALUE)
		return parse_value(r);
	return 0;
}

bool mcc_key_valid(const char *key, size_t klen)
{
	if (!klen || klen > MCC_KEY_MAX)
		return false;
	for (size_t i = 0; i < klen; i++)
		if ((unsigned char)key[i] <= ' ' || key[i] == 0x7f)
			return false;
	return true;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static int uri_decode(const char *s, size_t len, struct mcc_dump *d)
{
	size_t i, n = 0;

	for (i = 0; i < len; i++) {
		char ch = s[i];

		if (ch == '%') {
			int hi, lo;

			if (i + 2 >= len)
				return -EPROTO;
			hi = hexval(s[i + 1]);
			lo = hexval(s[i + 2]);
			if (hi < 0 || lo < 0)
				return -EPROTO;
			ch = (char)(hi << 4 | lo);
			i += 2;
		}
		if (n >= MCC_STORE_KEY_MAX || !ch)
			return -EPROTO;
		d->key[n++] = ch;
	}
	if (!n)
		return -EPROTO;
	d->key[n] = 0;
	d->klen = n;
	return 0;
}

/* A signed decimal field value of exactly @len bytes. */
static bool field_i64(const char *s, size_t len, int64_t *out)
{
	const char *p = s + (len && *s == '-');
	uint64_t v;

	if (!take_u64(&p, s + len, INT64_MAX, &v) || p != s + len)
		return false;
	*out = *s == '-' ? -(int64_t)v : (int64_t)v;
	return true;
}

int mcc_dump_parse(const char *line, size_t len, struct mcc_dump *d)
{
	const char *p = line, *end = line + len;
	bool have_key = false;

	memset(d, 0, sizeof(*d));
	d->exp = -1;
	while (p < end) {
		const char *tok = p, *eq, *te;
		int64_t v;

		while (p < end && *p != ' ')
			p++;
		te = p;
		while (p < end && *p == ' ')
			p++;
		eq = memchr(tok, '=', (size_t)(te - tok));
		if (!eq)
			return -EPROTO;
		if (starts(tok, (size_t)(te - tok), "key=")) {
			if (uri_decode(eq + 1, (size_t)(te - eq - 1), d) < 0)
				return -EPROTO;
			have_key = true;
			continue;
		}
		if (!starts(tok, (size_t)(te - tok), "exp=") &&
		    !starts(tok, (size_t)(te - tok), "la=") &&
		    !starts(tok, (size_t)(te - tok), "size="))
			continue;
		if (!field_i64(eq + 1, (size_t)(te - eq - 1), &v))
			return -EPROTO;
		if (*tok == 'e')
			d->exp = v;
		else if (*tok == 'l')
			d->la = v;
		else if (v >= 0)
			d->size = (uint64_t)v;
		else
			return -EPROTO;
	}
	return have_key ? 0 : -EPROTO;
}

/* ---- the blocking client ---- */

/* The connection's read buffer, once @fd is connected. */
static int conn_ready(struct mcc_conn *c, int fd, char *why, size_t wlen)
{
	c->buf = malloc(MCC_RBUF);
	if (!c->buf) {
		close(fd);
		snprintf(why, wlen, "%s", strerror(ENOMEM));
		return -1;
	}
	c->fd = fd;
	return 0;
}

static int unix_connect(struct mcc_conn *c, const char *path, char *why,
			size_t wlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(why, wlen, "a socket path is at most %zu bytes",
			 sizeof(sa.sun_path) - 1);
		return -1;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		snprintf(why, wlen, "%s", strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return conn_ready(c, fd, why, wlen);
}

int mcc_connect(struct mcc_conn *c, const char *host, const char *port,
		char *why, size_t wlen)
{
	struct addrinfo hints, *res, *ai;
	int fd = -1, rc, err = 0, one = 1;

	memset(c, 0, sizeof(*c));
	c->fd = -1;
	if (host[0] == '/')
		return unix_connect(c, host, why, wlen);
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	rc = getaddrinfo(host, port, &hints, &res);
	if (rc) {
		snprintf(why, wlen, "%s", gai_strerror(rc));
		return -1;
	}
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC,
			    ai->ai_protocol);
		if (fd < 0) {
			err = errno;
			continue;
		}
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
			break;
		err = errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0) {
		snprintf(why, wlen, "%s", strerror(err));
		return -1;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return conn_ready(c, fd, why, wlen);
}

void mcc_close(struct mcc_conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	free(c->buf);
	c->fd = -1;
	c->buf = NULL;
}

int mcc_send(struct mcc_conn *c, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = send(c->fd, p, len, MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Read more into the buffer; 0, -ECONNRESET at EOF, or -errno. */
static int fill(struct mcc_conn *c)
{
	ssize_t n;

	if (c->start && c->start == c->end)
		c->start = c->end = 0;
	if (c->end == MCC_RBUF) {
		memmove(c->buf, c->buf + c->start, c->end - c->start);
		c->end -= c->start;
		c->start = 0;
	}
	do
		n = recv(c->fd, c->buf + c->end, MCC_RBUF - c->end, 0);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (n == 0)
		return -ECONNRESET;
	c->end += (size_t)n;
	return 0;
}

int mcc_read_reply(struct mcc_conn *c, struct mcc_reply *r)
{
	for (;;) {
		size_t used = 0;
		int rc = mcc_reply_parse(c->buf + c->start, c->end - c->start,
					 r, &used);

		if (rc <= 0) {
			c->start += used;
			return rc;
		}
		rc = fill(c);
		if (rc < 0)
			return rc;
	}
}

ssize_t mcc_read_some(struct mcc_conn *c, void *buf, size_t len)
{
	size_t have = c->end - c->start;
	ssize_t n;

	if (have) {
		if (have > len)
			have = len;
		memcpy(buf, c->buf + c->start, have);
		c->start += have;
		return (ssize_t)have;
	}
	do
		n = recv(c->fd, buf, len, 0);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return n ? n : -ECONNRESET;
}

int mcc_read_crlf(struct mcc_conn *c)
{
	char two[2];
	size_t got = 0;

	while (got < 2) {
		ssize_t n = mcc_read_some(c, two + got, 2 - got);

		if (n < 0)
			return (int)n;
		got += (size_t)n;
	}
	return two[0] == '\r' && two[1] == '\n' ? 0 : -EPROTO;
}
