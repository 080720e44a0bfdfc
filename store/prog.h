/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * prog.h: the scaffolding every program of the tree shares (goblinctl,
 * goblind, goblinfs, the bench drivers), git's usage.c idiom: messages
 * "NAME: what went wrong" on stderr, die() exits 128, usage_die() 129,
 * error() returns -1; and the parser of whole-number option values.
 * Public like goblin.h, but no part of the store: libgoblin itself never
 * calls these (a library does not exit), they only ride in its archive
 * because store/ is the one folder every program may include.
 */
#ifndef GOBLIN_PROG_H
#define GOBLIN_PROG_H

#include <stdarg.h>
#include <stdint.h>

#define PROG_EXIT_DIE	128
#define PROG_EXIT_USAGE 129

/* The program's name, the prefix of every message; main() sets it. */
extern const char *prog_name;

/*
 * Where a finished message line (no newline) goes; NULL, the default:
 * prog_report_stderr().  goblinfs's starting daemon sends it to its
 * parent instead.
 */
extern void (*prog_report_hook)(const char *line);
/* Called by die() before it exits (goblinctl closes its store); or NULL. */
extern void (*prog_die_hook)(void);
/*
 * usage_die() prints this after the message, then "Run 'NAME --help' for
 * the options."; NULL: only that last line.
 */
extern const char *prog_usage_line;

/* Flush standard output, then @line and a newline on stderr. */
void prog_report_stderr(const char *line);
/*
 * "NAME: " @prefix and the message, to the report hook.  A message over
 * 8 KiB is cut.
 */
void prog_vreport(const char *prefix, const char *fmt, va_list ap);

/* "NAME: message", prog_die_hook, exit 128. */
__attribute__((noreturn, format(printf, 1, 2))) void die(const char *fmt, ...);
/* "NAME: message"; returns -1. */
__attribute__((format(printf, 1, 2))) int error(const char *fmt, ...);
/* "NAME: message", prog_usage_line, the --help hint, exit 129. */
__attribute__((noreturn, format(printf, 1, 2))) void usage_die(const char *fmt,
							       ...);

/*
 * Parse an unsigned decimal or 0x hex number no larger than @max into
 * *@out.  No sign, no space, nothing after it.  Returns 0, -EINVAL (not
 * a number) or -ERANGE (over @max).
 */
int parse_u64(const char *s, uint64_t max, uint64_t *out);

#endif
