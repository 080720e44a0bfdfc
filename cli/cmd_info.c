/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * goblinctl ls, stat, inspect and stats: read-only views of the store, one
 * record per line so that scripts can use them.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <sys/sysmacros.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"

struct ls_entry {
	char *key;
	size_t klen;
	uint64_t size;
	int64_t mtime_ns;
	char *kind; /* goblinfs's kind when not a file (issue 20), or NULL */
};

struct ls_list {
	struct ls_entry *v;
	size_t nr, alloc;
};

/*
 * What ls -l adds after the key of an object goblinfs made that is no
 * regular file (its record's file block): "  [symlink -> TARGET]",
 * "  [fifo]", "  [socket]", "  [chr MAJOR,MINOR]", "  [blk ...]".  A
 * malloc'ed string, or NULL for files and directories (which end in
 * '/' already).
 */
static char *ls_kind(const struct gs_meta *m)
{
	struct gs_attr_file *f = malloc(sizeof(*f));
	char *out = NULL;
	int ret;

	if (!f)
		die("out of memory");
	if (gs_attr_file_get(m->attr, m->attr_len, f) <= 0)
		goto out;
	switch (f->kind) {
	case GS_KIND_SYMLINK:
		ret = asprintf(&out, "  [symlink -> %s]", f->target);
		break;
	case GS_KIND_FIFO:
		ret = asprintf(&out, "  [fifo]");
		break;
	case GS_KIND_SOCK:
		ret = asprintf(&out, "  [socket]");
		break;
	case GS_KIND_CHR:
	case GS_KIND_BLK:
		ret = asprintf(&out, "  [%s %u,%u]",
			       f->kind == GS_KIND_CHR ? "chr" : "blk",
			       major((dev_t)f->rdev), minor((dev_t)f->rdev));
		break;
	default:
		goto out;
	}
	if (ret < 0)
		die("out of memory");
out:
	free(f);
	return out;
}

static int ls_collect(void *arg, const void *key, size_t klen,
		      const struct gs_meta *m)
{
	struct ls_list *l = arg;
	struct ls_entry *e;

	if (l->nr == l->alloc) {
		size_t n = l->alloc ? l->alloc * 2 : 256;
		void *p = realloc(l->v, n * sizeof(*l->v));

		if (!p)
			die("out of memory");
		l->v = p;
		l->alloc = n;
	}
	e = &l->v[l->nr];
	e->key = malloc(klen ? klen : 1);
	if (!e->key)
		die("out of memory");
	memcpy(e->key, key, klen);
	e->klen = klen;
	e->size = m->size;
	e->mtime_ns = m->mtime_ns;
	e->kind = ls_kind(m);
	l->nr++;
	return 0;
}

/* Byte order, shorter first on a common prefix: what sort(1) does in C. */
static int ls_cmp(const void *a, const void *b)
{
	const struct ls_entry *x = a, *y = b;
	size_t n = x->klen < y->klen ? x->klen : y->klen;
	int d = memcmp(x->key, y->key, n);

	if (d)
		return d;
	return x->klen < y->klen ? -1 : x->klen > y->klen;
}

int cmd_ls(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "long", no_argument, NULL, 'l' },
		{ NULL, 0, NULL, 0 },
	};
	struct ls_list l = { NULL, 0, 0 };
	const char *prefix = "";
	bool lng = false;
	char when[64];
	size_t i;
	int ch, ret;

	while ((ch = ctl_getopt(cmd, argc, argv, "l", longopts)) != -1)
		if (ch == 'l')
			lng = true;
	ctl_want_args(cmd, argc, 0, 1);
	if (optind < argc)
		prefix = argv[optind];
	if (c->host)
		return net_ls(c, prefix, lng);

	ctl_open(c, false);
	ret = gs_iterate(c->store, prefix, strlen(prefix), ls_collect, &l);
	if (ret < 0)
		die("cannot list the store: %s", gs_strerror(ret));
	if (l.nr)
		qsort(l.v, l.nr, sizeof(*l.v), ls_cmp);
	for (i = 0; i < l.nr; i++) {
		if (lng) {
			fmt_time_ns(when, sizeof(when), l.v[i].mtime_ns, false);
			printf("%12" PRIu64 " %s ", l.v[i].size, when);
		}
		fwrite(l.v[i].key, 1, l.v[i].klen, stdout);
		if (lng && l.v[i].kind)
			fputs(l.v[i].kind, stdout);
		putchar('\n');
		free(l.v[i].key);
		free(l.v[i].kind);
	}
	free(l.v);
	return 0;
}

static int one_key(const struct ctl_cmd *cmd, int argc, char **argv,
		   const char **key)
{
	while (ctl_getopt(cmd, argc, argv, NULL, NULL) != -1)
		;
	ctl_want_args(cmd, argc, 1, 1);
	*key = argv[optind];
	return 0;
}

int cmd_stat(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv)
{
	struct gs_meta m;
	const char *key;
	char when[64];
	int ret;

	one_key(cmd, argc, argv, &key);
	if (c->host)
		return net_stat(c, key);
	ctl_open(c, false);
	memset(&m, 0, sizeof(m));
	ret = gs_stat(c->store, key, strlen(key), &m);
	if (ret == -ENOENT) {
		error("no such key '%s'", key);
		return CTL_EXIT_MISS;
	}
	if (ret < 0)
		die("cannot stat '%s': %s", key, gs_strerror(ret));
	fmt_time_ns(when, sizeof(when), m.mtime_ns, true);
	printf("key %s\n", key);
	printf("size %" PRIu64 "\n", m.size);
	printf("flags %" PRIu32 "\n", m.flags);
	printf("exptime %" PRId64 "\n", m.exptime);
	printf("cas %" PRIu64 "\n", m.cas);
	printf("mtime %s\n", when);
	printf("xxh3 %016" PRIx64 "\n", m.xxh3);
	printf("attr_len %u\n", (unsigned)m.attr_len);
	return 0;
}

int cmd_inspect(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv)
{
	struct gs_range *rv = NULL;
	const char *key;
	int i, n, max = 64;

	one_key(cmd, argc, argv, &key);
	if (c->host)
		return net_inspect(c, key);
	ctl_open(c, false);
	/* the count may be the number filled: grow until it is below max */
	for (;;) {
		free(rv);
		rv = calloc((size_t)max, sizeof(*rv));
		if (!rv)
			die("out of memory");
		n = gs_inspect(c->store, key, strlen(key), rv, max);
		if (n < max || max >= (1 << 20))
			break;
		max *= 4;
	}
	if (n == -ENOENT) {
		free(rv);
		error("no such key '%s'", key);
		return CTL_EXIT_MISS;
	}
	if (n < 0)
		die("cannot inspect '%s': %s", key, gs_strerror(n));
	if (n > max)
		n = max;
	for (i = 0; i < n; i++) {
		const struct gs_range *g = &rv[i];

		printf("%-5s %12" PRIu64 " %12" PRIu64, gs_tier_name(g->tier),
		       g->off, g->len);
		if (g->tier == GS_TIER_SSD || g->tier == GS_TIER_HDD)
			printf(" %14" PRIu64 "\n", g->dev_off);
		else
			printf(" %14s\n", "-");
	}
	free(rv);
	return 0;
}

int cmd_stats(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv)
{
	while (ctl_getopt(cmd, argc, argv, NULL, NULL) != -1)
		;
	ctl_want_args(cmd, argc, 0, 0);
	if (c->host)
		return net_stats(c);
	ctl_open(c, false);
	ctl_print_stats(c->store, stdout);
	return 0;
}
