/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * prog.c: the programs' messages, exits and option numbers (prog.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "prog.h"

const char *prog_name = "goblin";
void (*prog_report_hook)(const char *line);
void (*prog_die_hook)(void);
const char *prog_usage_line;

void prog_report_stderr(const char *line)
{
	/* what the program printed so far comes before its last word */
	fflush(stdout);
	fprintf(stderr, "%s\n", line);
}

void prog_vreport(const char *prefix, const char *fmt, va_list ap)
{
	char msg[8192];
	int n;

	n = snprintf(msg, sizeof(msg), "%s: %s", prog_name, prefix);
	if (n < 0 || (size_t)n >= sizeof(msg))
		n = 0;
	vsnprintf(msg + n, sizeof(msg) - (size_t)n, fmt, ap);
	if (prog_report_hook)
		prog_report_hook(msg);
	else
		prog_report_stderr(msg);
}

void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	prog_vreport("", fmt, ap);
	va_end(ap);
	if (prog_die_hook)
		prog_die_hook();
	exit(PROG_EXIT_DIE);
}

int error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	prog_vreport("", fmt, ap);
	va_end(ap);
	return -1;
}

void usage_die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	prog_vreport("", fmt, ap);
	va_end(ap);
	fprintf(stderr, "%sRun '%s --help' for the options.\n",
		prog_usage_line ? prog_usage_line : "", prog_name);
	exit(PROG_EXIT_USAGE);
}

int parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (!s || !*s || *s == '-' || *s == '+' || *s == ' ')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (*end)
		return -EINVAL;
	if (errno == ERANGE || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}
