/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * goblinctl: usage errors (die() and error() are store/prog.h's), opening
 * the store, option parsing shared by the commands, small I/O and
 * formatting helpers.
 */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ctl.h"

/* The open store, so that die() can close it on the way out. */
static struct ctl *open_ctl;

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

/*
 * Every field of struct gs_stats by name, in header order.  A field added
 * to the header and not here trips the layout assertion in
 * ctl_print_stats() (fields must tile the struct).
 */
#define STAT_U64(f) {#f, offsetof(struct gs_stats, f), sizeof(uint64_t)}
#define STAT_BOOL(f) {#f, offsetof(struct gs_stats, f), sizeof(bool)}
static const struct {
	const char *name;
	size_t off;
	size_t size;
} stat_fields[] = {
	STAT_U64(objects),
	STAT_U64(small_objects),
	STAT_U64(bytes),
	STAT_U64(gets),
	STAT_U64(get_hits),
	STAT_U64(get_misses),
	STAT_U64(head_hits),
	STAT_U64(head_misses),
	STAT_U64(small_hits),
	STAT_U64(puts),
	STAT_U64(put_aborts),
	STAT_U64(deletes),
	STAT_U64(expired),
	STAT_U64(bytes_read_ram),
	STAT_U64(bytes_read_ssd),
	STAT_U64(bytes_written_ssd),
	STAT_U64(bytes_read_hdd),
	STAT_U64(bytes_written_hdd),
	STAT_U64(evictions_ssd),
	STAT_U64(evictions_hdd),
	STAT_U64(ssd_prefix_drops),
	STAT_U64(evictions_small),
	STAT_U64(small_chills),
	STAT_U64(small_warms),
	STAT_U64(evictions_head),
	STAT_U64(head_promotions),
	STAT_U64(csum_failures),
	STAT_U64(recovered),
	STAT_U64(recovery_dropped),
	STAT_U64(compactions),
	STAT_U64(journal_rewrites),
	STAT_U64(ssd_reads),
	STAT_U64(ssd_read_ns),
	{"ssd_read_hist", offsetof(struct gs_stats, ssd_read_hist),
	 sizeof(((struct gs_stats *)0)->ssd_read_hist)},
	STAT_U64(hdd_reads),
	STAT_U64(hdd_read_ns),
	STAT_U64(ram_capacity),
	STAT_U64(ram_slots),
	STAT_U64(ram_slots_used),
	STAT_U64(small_capacity),
	STAT_U64(small_used),
	STAT_U64(small_live),
	STAT_U64(small_cold),
	STAT_U64(small_cold_bytes),
	STAT_U64(ssd_capacity),
	STAT_U64(ssd_used),
	STAT_U64(hdd_capacity),
	STAT_U64(hdd_used),
	STAT_U64(journal_bytes),
	STAT_U64(io_buffer_bytes),
	STAT_U64(numa_nodes),
	STAT_U64(numa_promotions),
	STAT_U64(numa_bytes_moved),
	STAT_U64(numa_swap_ns_total),
	STAT_U64(numa_swap_ns_max),
	STAT_U64(numa_move_failures),
	STAT_U64(write_errors),
	STAT_U64(read_errors),
	STAT_U64(faults_eio),
	STAT_U64(faults_short),
	STAT_U64(faults_enospc),
	STAT_U64(faults_torn),
	STAT_BOOL(hugetlb),
	STAT_BOOL(mlocked),
};

void ctl_print_stats(struct gs_store *s, FILE *f)
{
	struct gs_stats st;
	const char *base = (const char *)&st;
	size_t i, j;

	for (i = 1, j = stat_fields[0].off + stat_fields[0].size;
	     i < sizeof(stat_fields) / sizeof(stat_fields[0]); i++) {
		assert(stat_fields[i].off == j);
		j = stat_fields[i].off + stat_fields[i].size;
	}
	assert((j + 7) / 8 * 8 == sizeof(st));

	memset(&st, 0, sizeof(st));
	gs_stats_get(s, &st);
	for (i = 0; i < sizeof(stat_fields) / sizeof(stat_fields[0]); i++) {
		const char *p = base + stat_fields[i].off;
		uint64_t v;

		if (stat_fields[i].size == sizeof(bool)) {
			bool b;

			memcpy(&b, p, sizeof(b));
			fprintf(f, "%s %d\n", stat_fields[i].name, b ? 1 : 0);
			continue;
		}
		/* arrays: one line per element, name_<index> */
		if (stat_fields[i].size > sizeof(uint64_t)) {
			for (j = 0; j < stat_fields[i].size / sizeof(v); j++) {
				memcpy(&v, p + j * sizeof(v), sizeof(v));
				fprintf(f, "%s_%zu %" PRIu64 "\n",
					stat_fields[i].name, j, v);
			}
			continue;
		}
		memcpy(&v, p, sizeof(v));
		fprintf(f, "%s %" PRIu64 "\n", stat_fields[i].name, v);
	}
}

/* ---- option parsing ---- */

int ctl_getopt(const struct ctl_cmd *cmd, int argc, char **argv,
	       const char *shortopts, const struct option *longopts)
{
	static const struct option help_only[] = {
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
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
