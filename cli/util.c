/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * goblinctl: usage errors (die() and error() are store/prog.h's), opening
 * the store, option parsing shared by the commands, small I/O and
 * formatting helpers, temporary files.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ctl.h"

/* The open store, so that die() can close it on the way out. */
static struct ctl *open_ctl;

void (*usage_print)(FILE *f, const struct ctl_cmd *cmd);

static void close_open_store(void)
{
	if (open_ctl)
		ctl_close(open_ctl);
}

void usage_error(const struct ctl_cmd *cmd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	prog_vreport("", fmt, ap);
	va_end(ap);
	usage_exit(cmd);
}

void usage_exit(const struct ctl_cmd *cmd)
{
	if (cmd)
		usage_print(stderr, cmd);
	else
		fprintf(stderr,
			"usage: %s [--store DIR] [store options] COMMAND "
			"[ARGS]\nRun '%s --help' for the commands and options.\n",
			CTL_NAME, CTL_NAME);
	exit(CTL_EXIT_USAGE);
}

void ctl_finish_stdout(void)
{
	if (fflush(stdout) || ferror(stdout))
		die("write failure on standard output: %s", strerror(errno));
}

/* ---- the store ---- */

void ctl_open(struct ctl *c, bool create)
{
	char why[512] = "";
	int ret;

	if (!c->dir || !*c->dir)
		die("no store given (use --store DIR)");
	c->opts.create = create;
	ret = gs_open(c->dir, &c->opts, &c->store, why, sizeof(why));
	if (ret < 0)
		die("cannot open store '%s': %s", c->dir,
		    *why ? why : gs_strerror(ret));
	open_ctl = c;
	prog_die_hook = close_open_store;
}

void ctl_close(struct ctl *c)
{
	if (!c->store)
		return;
	if (c->show_stats) {
		fflush(stdout);
		ctl_print_stats(c->store, stderr);
	}
	gs_close(c->store);
	c->store = NULL;
	open_ctl = NULL;
}

/* Every field of struct gs_stats, in goblin.h's GS_STATS order. */
void ctl_print_stats(struct gs_store *s, FILE *f)
{
	struct gs_stats st;

	memset(&st, 0, sizeof(st));
	gs_stats_get(s, &st);
	for (unsigned i = 0; i < GS_NSTATS; i++) {
		const struct gs_stat_field *sf = &gs_stat_fields[i];

		if (sf->kind != GS_STAT_HIST) {
			fprintf(f, "%s %" PRIu64 "\n", sf->name,
				gs_stat_value(&st, sf, 0));
			continue;
		}
		/* arrays: one line per element, name_<index> */
		for (unsigned j = 0; j < sf->n; j++)
			fprintf(f, "%s_%u %" PRIu64 "\n", sf->name, j,
				gs_stat_value(&st, sf, j));
	}
}

/* ---- option parsing ---- */

int ctl_getopt(const struct ctl_cmd *cmd, int argc, char **argv,
	       const char *shortopts, const struct option *longopts)
{
	static const struct option help_only[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char so[64];
	int ch, idx = optind ? optind : 1;

	if (!longopts)
		longopts = help_only;
	/* ':' first: a missing argument returns ':' instead of '?' */
	snprintf(so, sizeof(so), ":h%s", shortopts ? shortopts : "");
	opterr = 0;
	ch = getopt_long(argc, argv, so, longopts, NULL);
	switch (ch) {
	case 'h':
		usage_print(stdout, cmd);
		ctl_finish_stdout();
		exit(0);
	case '?':
		/* optopt is 0 for long options; they are quoted as typed */
		if (optopt && !(optind > idx && argv[optind - 1][1] == '-'))
			usage_error(cmd, "unknown option '-%c'", optopt);
		usage_error(cmd, "unknown option '%s'", argv[optind - 1]);
	case ':':
		usage_error(cmd, "option '%s' needs a value", argv[optind - 1]);
	}
	return ch;
}

void ctl_want_args(const struct ctl_cmd *cmd, int argc, int min, int max)
{
	int n = argc - optind;

	if (n < min)
		usage_error(cmd, "too few arguments");
	if (n > max)
		usage_error(cmd, "too many arguments");
}

/* ---- I/O and formatting ---- */

int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

ssize_t read_full(int fd, void *buf, size_t len)
{
	char *p = buf;
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, p + got, len - got);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

void fmt_time_ns(char *buf, size_t len, int64_t ns, bool frac)
{
	time_t t = (time_t)(ns / 1000000000);
	long rem = (long)(ns % 1000000000);
	struct tm tm;
	char date[64], zone[16];

	if (rem < 0) {
		rem += 1000000000;
		t--;
	}
	if (!localtime_r(&t, &tm)) {
		snprintf(buf, len, "%" PRId64, ns);
		return;
	}
	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%S", &tm);
	strftime(zone, sizeof(zone), "%z", &tm);
	if (frac)
		snprintf(buf, len, "%s.%09ld%s", date, rem, zone);
	else
		snprintf(buf, len, "%s%s", date, zone);
}

int ctl_open_temp(const char *path, char **tmp)
{
	mode_t mask;
	int fd;

	if (asprintf(tmp, "%s.goblinctl-XXXXXX", path) < 0)
		die("out of memory");
	fd = mkostemp(*tmp, O_CLOEXEC);
	if (fd < 0)
		return -1;
	mask = umask(0);
	umask(mask);
	fchmod(fd, 0666 & ~mask);
	return fd;
}
