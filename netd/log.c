/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * goblind's log: one line per message on stderr, with its level, so that
 * systemd's journal (or a redirect) keeps it.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "goblind.h"

int gd_log_level = GD_LOG_INFO;

const char *const gd_log_names[] = { "error", "warn", "info", "debug" };

void gd_log(int level, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (level > gd_log_level)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* one write per line: lines of several threads do not interleave */
	fprintf(stderr, "%s: %s: %s\n", GD_NAME, gd_log_names[level], msg);
}

int gd_log_parse(const char *s)
{
	for (int i = 0; i <= GD_LOG_DEBUG; i++)
		if (!strcmp(s, gd_log_names[i]))
			return i;
	if (s[0] >= '0' && s[0] <= '3' && !s[1])
		return s[0] - '0';
	return -1;
}
