/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memcache --auth-file: memcached's text protocol authentication (-Y),
 * before a connection has logged in.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "memcache.h"
#include "../store/prog.h"

/* ---- --auth-file: memcached's text protocol authentication ---- */

/*
 * Before it has logged in, a connection of a daemon with --auth-file
 * gets what memcached -Y gives (proto_text.c, try_read_command_asciiauth):
 * a "set <key> <flags> <exptime> <bytes>" line whose data block is
 * "user password" answers STORED and logs in; any other line gets
 * "CLIENT_ERROR unauthenticated"; a block not ending "\r\n", one that
 * is not two tokens, and wrong credentials get their own errors.  The
 * line and the block are tokenized as memcached does (on spaces only).
 * Unlike memcached, every pipelined line is answered in turn, and a
 * block over AUTH_BLOCK_MAX bytes is refused and the connection closed
 * (memcached waits for it forever).
 */
#define AUTH_LINE_MAX  2048 /* memcached closes without a newline by then */
#define AUTH_BLOCK_MAX 1024 /* "user password": fields are <= 255 bytes */
#define AUTH_TOKENS    24   /* memcached's MAX_TOKENS */

/* Split @s (@len bytes) on ' ' into at most @max tokens. */
static unsigned auth_tokens(const char *s, size_t len, const char **tok,
			    size_t *tlen, unsigned max)
{
	unsigned n = 0;
	size_t i = 0;

	while (i < len && n < max) {
		size_t b;

		while (i < len && s[i] == ' ')
			i++;
		if (i == len)
			break;
		b = i;
		while (i < len && s[i] != ' ')
			i++;
		tok[n] = s + b;
		tlen[n++] = i - b;
	}
	return n;
}

/* memcached's safe_strtoul on a token that may end in '\r'. */
static bool auth_size(const char *t, size_t len, uint32_t *out)
{
	char buf[32], *end;
	unsigned long v;

	if (!len || len >= sizeof(buf))
		return false;
	memcpy(buf, t, len);
	buf[len] = 0;
	errno = 0;
	v = strtoul(buf, &end, 10);
	if (errno || end == buf || (*end && *end != '\r') || strchr(buf, '-') ||
	    v > UINT32_MAX)
		return false;
	*out = (uint32_t)v;
	return true;
}

/* Constant time in the bytes compared (lengths may leak). */
static bool auth_equal(const char *a, size_t alen, const char *b, size_t blen)
{
	unsigned char d = alen != blen;

	for (size_t i = 0; i < alen && i < blen; i++)
		d |= (unsigned char)(a[i] ^ b[i]);
	return !d;
}

static bool auth_check(const struct gd *gd, const char *user, size_t ulen,
		       const char *pass, size_t plen)
{
	bool ok = false;

	for (unsigned i = 0; i < gd->nauth; i++) { /* no early exit */
		const struct gd_auth_user *u = &gd->auth[i];
		bool m = auth_equal(user, ulen, u->user, u->ulen);

		m &= auth_equal(pass, plen, u->pass, u->plen);
		ok |= m;
	}
	return ok;
}

/* One step of the login: 1 consumed input, 0 needs more, -1 close. */
int mc_auth_step(struct conn *c)
{
	struct mc_state *m = mc_of(c);
	const char *p = c->rbuf + c->rstart, *el, *tok[AUTH_TOKENS];
	size_t avail = c->rend - c->rstart, tlen[AUTH_TOKENS];
	uint32_t size;
	unsigned n;

	if (!m->auth_block) {
		if (avail < 2)
			return 0;
		el = memchr(p, '\n', avail);
		if (!el)
			return avail > AUTH_LINE_MAX ? -1 : 0;
		n = auth_tokens(p, (size_t)(el - p), tok, tlen, AUTH_TOKENS);
		c->rstart += (size_t)(el - p) + 1;
		if (n < 5 || tlen[0] != 3 || memcmp(tok[0], "set", 3) ||
		    !auth_size(tok[4], tlen[4], &size)) {
			OUT(c, "CLIENT_ERROR unauthenticated\r\n");
			return 1;
		}
		if (size > AUTH_BLOCK_MAX) {
			CNT(c->w, auth_cmds);
			CNT(c->w, auth_errors);
			OUT(c, "CLIENT_ERROR bad authentication token format"
			       "\r\n");
			return -1;
		}
		m->auth_left = size + 2;
		m->auth_block = true;
		return 1;
	}
	if (avail < m->auth_left)
		return 0;
	c->rstart += m->auth_left;
	m->auth_block = false;
	if (memcmp(p + m->auth_left - 2, "\r\n", 2)) {
		OUT(c, "CLIENT_ERROR bad command line termination\r\n");
		return 1;
	}
	n = auth_tokens(p, m->auth_left - 2, tok, tlen, AUTH_TOKENS);
	if (n < 2) {
		OUT(c, "CLIENT_ERROR bad authentication token format\r\n");
		return 1;
	}
	CNT(c->w, auth_cmds);
	if (auth_check(c->w->gd, tok[0], tlen[0], tok[1], tlen[1])) {
		m->authed = true;
		OUT(c, "STORED\r\n");
	} else {
		CNT(c->w, auth_errors);
		OUT(c, "CLIENT_ERROR authentication failure\r\n");
	}
	return 1;
}

/* ---- --auth-file: the users, as memcached -Y reads them (main.c) ---- */

#define AUTH_FILE_MAX  (1u << 20)
#define AUTH_FIELD_MAX 255 /* user or password */

/*
 * One "user:password" a line (the first ':' splits; a password may hold
 * ':' but no white space, which the client's "user password" block
 * could not carry).  Blank lines are skipped; anything else that is not
 * such a line stops the start with its line number.
 */
void mc_auth_load(struct gd *gd, const char *file)
{
	FILE *f = fopen(file, "r");
	struct stat st;
	char line[2 * AUTH_FIELD_MAX + 4];
	unsigned lineno = 0;

	if (!f)
		die("cannot open auth file '%s': %s", file, strerror(errno));
	if (fstat(fileno(f), &st) == 0 && (st.st_mode & 077))
		gd_log(GD_LOG_WARN,
		       "auth file '%s' can be read by other "
		       "users (chmod 600 it)",
		       file);
	if (fstat(fileno(f), &st) == 0 && st.st_size > AUTH_FILE_MAX)
		die("auth file '%s' is over %u bytes", file, AUTH_FILE_MAX);
	while (fgets(line, sizeof(line), f)) {
		size_t len = strlen(line);
		char *colon;
		struct gd_auth_user *u;

		lineno++;
		if (len && line[len - 1] != '\n' && !feof(f))
			die("auth file '%s' line %u: longer than %u bytes",
			    file, lineno, (unsigned)sizeof(line) - 2);
		while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = 0;
		if (!len)
			continue;
		colon = strchr(line, ':');
		if (!colon || colon == line || !colon[1])
			die("auth file '%s' line %u: not user:password", file,
			    lineno);
		if (strpbrk(line, " \t"))
			die("auth file '%s' line %u: white space in a user or "
			    "password (a client cannot send it)",
			    file, lineno);
		if ((size_t)(colon - line) > AUTH_FIELD_MAX ||
		    strlen(colon + 1) > AUTH_FIELD_MAX)
			die("auth file '%s' line %u: a user or password over "
			    "%d bytes",
			    file, lineno, AUTH_FIELD_MAX);
		u = realloc(gd->auth, (gd->nauth + 1) * sizeof(*gd->auth));
		if (!u)
			die("out of memory");
		gd->auth = u;
		u = &gd->auth[gd->nauth++];
		*colon = 0;
		u->user = strdup(line);
		u->pass = strdup(colon + 1);
		if (!u->user || !u->pass)
			die("out of memory");
		u->ulen = strlen(u->user);
		u->plen = strlen(u->pass);
	}
	if (ferror(f))
		die("cannot read auth file '%s': %s", file, strerror(errno));
	fclose(f);
	if (!gd->nauth)
		die("auth file '%s' has no user:password line", file);
}

void mc_auth_free(struct gd *gd)
{
	for (unsigned i = 0; i < gd->nauth; i++) {
		free(gd->auth[i].user);
		free(gd->auth[i].pass);
	}
	free(gd->auth);
	gd->auth = NULL;
	gd->nauth = 0;
}
