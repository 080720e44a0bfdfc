/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * goblinctl online mode (--host/--port, --socket): put, get, del, stats
 * and ls against goblind over memcache text commands, streaming values
 * both ways through CTL_IO_BUF pieces so memory does not grow with the
 * value; stat and inspect over goblind's admin commands (goblin stat,
 * goblin inspect).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../netd/mc_proto.h"
#include "ctl.h"
#include "mc_client.h"

/* goblind as messages name it: "HOST:PORT", or the socket's path. */
static const char *where(const struct ctl *c)
{
	static char buf[512];

	if (c->host[0] == '/')
		return c->host;
	snprintf(buf, sizeof(buf), "%s:%s", c->host, c->port);
	return buf;
}

static void net_open(struct ctl *c, struct mcc_conn *m)
{
	char why[256];

	if (mcc_connect(m, c->host, c->port, why, sizeof(why)) < 0)
		die("cannot connect to '%s': %s", where(c), why);
}

/* A broken connection or an unexpected reply: the command cannot go on. */
__attribute__((noreturn)) static void net_die(struct ctl *c, int rc,
					      const struct mcc_reply *r)
{
	if (rc == -EPROTO || (!rc && r))
		die("unexpected reply from '%s': '%.*s'", where(c),
		    r && !rc ? (int)(r->len > 200 ? 200 : r->len) : 0,
		    r && !rc ? r->text : "");
	die("lost the connection to '%s': %s", where(c), strerror(-rc));
}

static void net_send(struct ctl *c, struct mcc_conn *m, const void *buf,
		     size_t len)
{
	int rc = mcc_send(m, buf, len);

	if (rc < 0)
		net_die(c, rc, NULL);
}

/* The next reply line; a broken connection dies. */
static struct mcc_reply net_next(struct ctl *c, struct mcc_conn *m)
{
	struct mcc_reply r;
	int rc = mcc_read_reply(m, &r);

	if (rc < 0)
		net_die(c, rc, NULL);
	return r;
}

/* Send one command line, return its first reply line. */
static struct mcc_reply net_simple(struct ctl *c, struct mcc_conn *m,
				   const char *line)
{
	net_send(c, m, line, strlen(line));
	return net_next(c, m);
}

static void check_key(const char *key)
{
	if (!mcc_key_valid(key, strlen(key)))
		die("invalid key '%s': memcache keys are 1 to %d bytes "
		    "without spaces or control characters",
		    key, MCC_KEY_MAX);
}

int net_put(struct ctl *c, const char *key, int fd, uint64_t size,
	    const struct put_opts *po, const char *what, void *buf)
{
	struct mcc_conn m;
	struct mcc_reply r;
	uint64_t left = size;
	char line[MCC_KEY_MAX + 80];
	int n, rc;

	if (c->transport == CTL_RDMA)
		return rdma_net_put(c, key, fd, size, po, what);
	if (c->transport != CTL_TCP)
		return ctl_ring_put(c, key, fd, size, po, what);
	check_key(key);
	net_open(c, &m);
	n = snprintf(line, sizeof(line),
		     "set %s %" PRIu32 " %" PRId64 " %" PRIu64 "\r\n", key,
		     po->flags, po->exptime, size);
	net_send(c, &m, line, (size_t)n);
	while (left) {
		size_t want = left < CTL_IO_BUF ? (size_t)left : CTL_IO_BUF;
		ssize_t got = read_full(fd, buf, want);

		/* a short source cannot be undone mid-value: close, the
		 * server drops the half-received value */
		if (got < 0)
			die("cannot read '%s': %s", what, strerror(errno));
		if ((size_t)got < want)
			die("cannot read '%s': file shrank while reading "
			    "(%" PRIu64 " bytes missing)",
			    what, left - (uint64_t)got);
		net_send(c, &m, buf, (size_t)got);
		left -= (uint64_t)got;
	}
	r = net_simple(c, &m, "\r\n");
	if (r.kind != MCC_STORED) {
		rc = error("cannot store '%s': %.*s", key, (int)r.len, r.text);
		mcc_close(&m);
		return rc;
	}
	mcc_close(&m);
	return 0;
}

/* Copy @size value bytes from @m to @fd, then the CRLF and END. */
static int get_stream(struct ctl *c, struct mcc_conn *m, uint64_t size, int fd,
		      const char *oname)
{
	struct mcc_reply r;
	uint64_t left = size;
	char *buf = malloc(CTL_IO_BUF);
	int rc = 0;

	if (!buf)
		die("out of memory");
	while (left) {
		size_t want = left < CTL_IO_BUF ? (size_t)left : CTL_IO_BUF;
		ssize_t n = mcc_read_some(m, buf, want);

		if (n < 0)
			net_die(c, (int)n, NULL);
		if (write_all(fd, buf, (size_t)n) < 0) {
			rc = error("cannot write '%s': %s", oname,
				   strerror(errno));
			break;
		}
		left -= (uint64_t)n;
	}
	free(buf);
	if (rc < 0)
		return rc;
	rc = mcc_read_crlf(m);
	if (rc == 0)
		rc = mcc_read_reply(m, &r);
	if (rc < 0 || r.kind != MCC_END)
		net_die(c, rc, &r);
	return 0;
}

int net_get(struct ctl *c, const char *key, const char *out)
{
	struct mcc_conn m;
	struct mcc_reply r;
	char line[MCC_KEY_MAX + 8], *tmp = NULL;
	int rc, fd = STDOUT_FILENO;

	if (c->transport == CTL_RDMA)
		return rdma_net_get(c, key, out);
	if (c->transport != CTL_TCP)
		return ctl_ring_get(c, key, out);
	check_key(key);
	net_open(c, &m);
	snprintf(line, sizeof(line), "get %s\r\n", key);
	r = net_simple(c, &m, line);
	if (r.kind == MCC_END) {
		mcc_close(&m);
		error("no such key '%s'", key);
		return CTL_EXIT_MISS;
	}
	if (r.kind != MCC_VALUE)
		die("cannot read '%s': %.*s", key, (int)r.len, r.text);
	if (out) {
		fd = ctl_open_temp(out, &tmp);
		if (fd < 0)
			die("cannot create '%s': %s", out, strerror(errno));
	}
	rc = get_stream(c, &m, r.bytes, fd, out ? tmp : "standard output");
	mcc_close(&m);
	if (out && rc == 0 && close(fd) < 0)
		rc = error("cannot write '%s': %s", tmp, strerror(errno));
	if (out && rc == 0 && rename(tmp, out) < 0)
		rc = error("cannot rename '%s' to '%s': %s", tmp, out,
			   strerror(errno));
	if (out && rc < 0)
		unlink(tmp);
	free(tmp);
	return rc < 0 ? CTL_EXIT_DIE : 0;
}

int net_del(struct ctl *c, const char *key)
{
	struct mcc_conn m;
	struct mcc_reply r;
	char line[MCC_KEY_MAX + 16];

	if (c->transport == CTL_RDMA)
		return rdma_net_del(c, key);
	if (c->transport != CTL_TCP)
		return ctl_ring_del(c, key);
	check_key(key);
	net_open(c, &m);
	snprintf(line, sizeof(line), "delete %s\r\n", key);
	r = net_simple(c, &m, line);
	mcc_close(&m);
	if (r.kind == MCC_NOT_FOUND) {
		error("no such key '%s'", key);
		return CTL_EXIT_MISS;
	}
	if (r.kind != MCC_DELETED)
		die("cannot delete '%s': %.*s", key, (int)r.len, r.text);
	return 0;
}

/* "STAT name value" lines as "name value", the offline format. */
int net_stats(struct ctl *c)
{
	struct mcc_conn m;
	struct mcc_reply r;

	if (c->transport == CTL_RDMA)
		return rdma_net_stats(c);
	if (c->transport != CTL_TCP)
		return ctl_ring_stats(c);
	net_open(c, &m);
	for (r = net_simple(c, &m, "stats\r\n"); r.kind == MCC_STAT;
	     r = net_next(c, &m)) {
		fwrite(r.text + 5, 1, r.len - 5, stdout);
		putchar('\n');
	}
	mcc_close(&m);
	if (r.kind != MCC_END)
		die("cannot read the stats: %.*s", (int)r.len, r.text);
	return 0;
}

/* A listed key: its own copy (keys are up to MCC_STORE_KEY_MAX bytes,
 * most are short: no fixed room per entry). */
struct net_ls_entry {
	char *key;
	size_t klen;
	int64_t la;
	uint64_t size;
};

struct net_ls_list {
	struct net_ls_entry *v;
	size_t nr, alloc;
};

static int dump_cmp(const void *a, const void *b)
{
	const struct net_ls_entry *x = a, *y = b;
	size_t n = x->klen < y->klen ? x->klen : y->klen;
	int d = memcmp(x->key, y->key, n);

	return d ? d : (x->klen > y->klen) - (x->klen < y->klen);
}

static void ls_add(struct net_ls_list *l, const struct mcc_dump *d)
{
	struct net_ls_entry *e;

	if (l->nr == l->alloc) {
		l->alloc = l->alloc ? 2 * l->alloc : 64;
		l->v = realloc(l->v, l->alloc * sizeof(*l->v));
		if (!l->v)
			die("out of memory");
	}
	e = &l->v[l->nr++];
	e->key = malloc(d->klen);
	if (!e->key)
		die("out of memory");
	memcpy(e->key, d->key, d->klen);
	e->klen = d->klen;
	e->la = d->la;
	e->size = d->size;
}

int net_ls(struct ctl *c, const char *prefix, bool lng)
{
	struct net_ls_list l = { NULL, 0, 0 };
	static struct mcc_dump d; /* MCC_STORE_KEY_MAX: not on the stack */
	struct mcc_conn m;
	struct mcc_reply r;
	char line[MCC_KEY_MAX + 40], when[64];
	size_t i;

	if (*prefix)
		check_key(prefix);
	net_open(c, &m);
	snprintf(line, sizeof(line), "lru_crawler metadump all%s%s\r\n",
		 *prefix ? " " : "", prefix);
	for (r = net_simple(c, &m, line); r.kind == MCC_OTHER;
	     r = net_next(c, &m)) {
		if (mcc_dump_parse(r.text, r.len, &d) < 0)
			net_die(c, 0, &r);
		ls_add(&l, &d);
	}
	mcc_close(&m);
	if (r.kind != MCC_END)
		die("cannot list the keys: %.*s", (int)r.len, r.text);
	if (l.nr)
		qsort(l.v, l.nr, sizeof(*l.v), dump_cmp);
	for (i = 0; i < l.nr; i++) {
		if (lng) {
			fmt_time_ns(when, sizeof(when),
				    l.v[i].la * 1000000000ll, false);
			printf("%12" PRIu64 " %s ", l.v[i].size, when);
		}
		fwrite(l.v[i].key, 1, l.v[i].klen, stdout);
		putchar('\n');
		free(l.v[i].key);
	}
	free(l.v);
	return 0;
}

/* Before connecting: the store's limit, not memcache's. */
static void check_store_key(const char *key)
{
	size_t klen = strlen(key);

	if (!klen || klen > MCC_STORE_KEY_MAX)
		die("invalid key '%.*s%s': store keys are 1 to %d bytes",
		    klen > 64 ? 64 : (int)klen, key, klen > 64 ? "..." : "",
		    MCC_STORE_KEY_MAX);
}

/*
 * Send "goblin CMD KEY" (goblind's admin commands, goblind(8)): the key
 * as it is when memcache could carry it, else base64 with "b" (a key of
 * HTTP's, longer or with spaces).  Returns the first reply line; a miss
 * is NOT_FOUND, a goblind without the command answers ERROR.
 */
static struct mcc_reply goblin_cmd(struct ctl *c, struct mcc_conn *m,
				   const char *cmd, const char *key)
{
	size_t klen = strlen(key);
	char *line = malloc(32 + (MCC_STORE_KEY_MAX + 2) / 3 * 4);
	struct mcc_reply r;
	int n;

	if (!line)
		die("out of memory");
	if (mcc_key_valid(key, klen)) {
		n = sprintf(line, "goblin %s %s\r\n", cmd, key);
	} else {
		n = sprintf(line, "goblin %s ", cmd);
		n += (int)mc_b64_encode(key, klen, line + n);
		n += sprintf(line + n, " b\r\n");
	}
	net_send(c, m, line, (size_t)n);
	free(line);
	r = net_next(c, m);
	if (r.kind == MCC_ERROR && r.len == 5)
		die("'%s' does not know 'goblin %s' (an older goblind, or not "
		    "goblind)",
		    where(c), cmd);
	return r;
}

int net_stat(struct ctl *c, const char *key)
{
	static const char *const names[] = { "size",	"flags",    "exptime",
					     "cas",	"mtime_ns", "xxh3",
					     "attr_len" };
	char vals[7][32] = { { 0 } }, when[64];
	struct mcc_conn m;
	struct mcc_reply r;

	check_store_key(key);
	net_open(c, &m);
	for (r = goblin_cmd(c, &m, "stat", key); r.kind == MCC_STAT;
	     r = net_next(c, &m)) {
		const char *name = r.text + 5, *sp;
		size_t nlen, vlen;

		sp = memchr(name, ' ', r.len - 5);
		if (!sp)
			net_die(c, 0, &r);
		nlen = (size_t)(sp - name);
		vlen = r.len - 5 - nlen - 1;
		for (size_t i = 0; i < 7; i++)
			if (strlen(names[i]) == nlen &&
			    !memcmp(names[i], name, nlen) &&
			    vlen < sizeof(vals[i]))
				memcpy(vals[i], sp + 1, vlen);
	}
	mcc_close(&m);
	if (r.kind == MCC_NOT_FOUND) {
		error("no such key '%s'", key);
		return CTL_EXIT_MISS;
	}
	if (r.kind != MCC_END)
		die("cannot stat '%s': %.*s", key, (int)r.len, r.text);
	fmt_time_ns(when, sizeof(when), strtoll(vals[4], NULL, 10), true);
	/* the offline format (cmd_stat) */
	printf("key %s\nsize %s\nflags %s\nexptime %s\ncas %s\nmtime "
	       "%s\nxxh3 %s\nattr_len %s\n",
	       key, vals[0], vals[1], vals[2], vals[3], when, vals[5], vals[6]);
	return 0;
}

/* RANGE TIER OFF LEN DEV_OFF lines, printed as they come. */
int net_inspect(struct ctl *c, const char *key)
{
	struct mcc_conn m;
	struct mcc_reply r;

	check_store_key(key);
	net_open(c, &m);
	for (r = goblin_cmd(c, &m, "inspect", key);
	     r.kind == MCC_OTHER && r.len > 6 && !memcmp(r.text, "RANGE ", 6);
	     r = net_next(c, &m)) {
		char text[128], tier[8], dev[24];
		uint64_t off, len;

		if (r.len >= sizeof(text))
			net_die(c, 0, &r);
		memcpy(text, r.text, r.len); /* sscanf must stop at its end */
		text[r.len] = 0;
		if (sscanf(text, "RANGE %7s %" SCNu64 " %" SCNu64 " %23s", tier,
			   &off, &len, dev) != 4)
			net_die(c, 0, &r);
		/* the offline format (cmd_inspect) */
		printf("%-5s %12" PRIu64 " %12" PRIu64 " %14s\n", tier, off,
		       len, dev);
	}
	mcc_close(&m);
	if (r.kind == MCC_NOT_FOUND) {
		error("no such key '%s'", key);
		return CTL_EXIT_MISS;
	}
	if (r.kind != MCC_END)
		die("cannot inspect '%s': %.*s", key, (int)r.len, r.text);
	return 0;
}
