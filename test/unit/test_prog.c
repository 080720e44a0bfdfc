/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The programs' shared pieces in store/: prog.h (die, error, usage_die,
 * parse_u64), clock.h, and the stats list of goblin.h (gs_stat_fields
 * covers struct gs_stats exactly, in order).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "clock.h"
#include "goblin.h"
#include "prog.h"

static void test_parse_u64(void **state)
{
	uint64_t v = 7;

	(void)state;
	assert_int_equal(parse_u64("42", 100, &v), 0);
	assert_int_equal(v, 42);
	assert_int_equal(parse_u64("0x10", 100, &v), 0);
	assert_int_equal(v, 16);
	assert_int_equal(parse_u64("18446744073709551615", UINT64_MAX, &v), 0);
	assert_true(v == UINT64_MAX);
	v = 7;
	assert_int_equal(parse_u64("101", 100, &v), -ERANGE);
	assert_int_equal(parse_u64("18446744073709551616", UINT64_MAX, &v),
			 -ERANGE);
	assert_int_equal(parse_u64("", 100, &v), -EINVAL);
	assert_int_equal(parse_u64(NULL, 100, &v), -EINVAL);
	assert_int_equal(parse_u64("-1", 100, &v), -EINVAL);
	assert_int_equal(parse_u64("+1", 100, &v), -EINVAL);
	assert_int_equal(parse_u64(" 1", 100, &v), -EINVAL);
	assert_int_equal(parse_u64("1x", 100, &v), -EINVAL);
	assert_int_equal(v, 7); /* untouched on an error */
}

static void test_clock(void **state)
{
	int64_t a, b, real;
	struct timespec ts, now;

	(void)state;
	a = gs_mono_ns();
	usleep(2000);
	b = gs_mono_ns();
	assert_true(b - a >= 2000000);
	assert_true(b - a < 10 * GS_NS_PER_SEC);
	real = gs_real_ns();
	clock_gettime(CLOCK_REALTIME, &now);
	assert_true(real <= (int64_t)now.tv_sec * GS_NS_PER_SEC + now.tv_nsec);
	assert_true(real > (int64_t)(now.tv_sec - 5) * GS_NS_PER_SEC);
	/* a deadline 1.5 s on, normalised: tv_nsec below a second */
	for (int i = 0; i < 100; i++) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		ts = gs_clock_after(CLOCK_MONOTONIC, 1500000000);
		assert_true(ts.tv_nsec >= 0 && ts.tv_nsec < GS_NS_PER_SEC);
		a = (int64_t)ts.tv_sec * GS_NS_PER_SEC + ts.tv_nsec;
		b = (int64_t)now.tv_sec * GS_NS_PER_SEC + now.tv_nsec;
		assert_true(a - b >= 1500000000 && a - b < 2500000000ll);
	}
}

/*
 * The list covers struct gs_stats: each field starts where the previous
 * ended (up to alignment), the last ends the struct, and gs_stat_value()
 * reads each field's own bytes.
 */
static void test_stat_fields(void **state)
{
	struct gs_stats st;
	size_t end = 0;
	unsigned i, j;

	(void)state;
	for (i = 0; i < GS_NSTATS; i++) {
		const struct gs_stat_field *f = &gs_stat_fields[i];
		size_t size = f->kind == GS_STAT_BOOL ? sizeof(bool) :
							f->n * sizeof(uint64_t);

		assert_non_null(f->name);
		assert_non_null(f->help);
		assert_true(*f->help);
		assert_true(f->n >= 1);
		assert_true(f->off >= end);
		/* no gap wider than the alignment of a uint64_t */
		assert_true(f->off - end < sizeof(uint64_t));
		end = f->off + size;
	}
	assert_int_equal((end + 7) / 8 * 8, sizeof(st));
	assert_string_equal(gs_stat_fields[GS_STAT_objects].name, "objects");
	assert_int_equal(gs_stat_fields[GS_STAT_ssd_read_hist].n, 16);
	assert_int_equal(gs_stat_fields[GS_STAT_ssd_read_hist].kind,
			 GS_STAT_HIST);
	assert_int_equal(gs_stat_fields[GS_STAT_ram_capacity].kind,
			 GS_STAT_GAUGE);
	assert_int_equal(gs_stat_fields[GS_STAT_puts].kind, GS_STAT_COUNTER);

	memset(&st, 0, sizeof(st));
	st.objects = 11;
	st.faults_torn = 12;
	st.ssd_read_hist[3] = 13;
	st.mlocked = true;
	for (i = 0; i < GS_NSTATS; i++) {
		const struct gs_stat_field *f = &gs_stat_fields[i];

		for (j = 0; j < f->n; j++) {
			uint64_t want = i == GS_STAT_objects	 ? 11 :
					i == GS_STAT_faults_torn ? 12 :
					i == GS_STAT_ssd_read_hist && j == 3 ?
								   13 :
					i == GS_STAT_mlocked ? 1 :
							       0;

			assert_true(gs_stat_value(&st, f, j) == want);
		}
	}
}

static int hook_ran;
static void die_hook(void)
{
	hook_ran = 1;
	fputs("hook\n", stderr);
}

/*
 * Run @fn in a child with stderr into a pipe; returns its exit status and
 * what it wrote in @out.
 */
static int child_run(void (*fn)(void), char *out, size_t len)
{
	int p[2], status;
	size_t got = 0;
	ssize_t n;
	pid_t pid;

	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(p[1], STDERR_FILENO);
		close(p[0]);
		fn();
		_exit(0);
	}
	close(p[1]);
	while (got < len - 1 && (n = read(p[0], out + got, len - 1 - got)) > 0)
		got += (size_t)n;
	out[got] = 0;
	close(p[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static void do_die(void)
{
	prog_name = "tprog";
	prog_die_hook = die_hook;
	die("cannot open '%s': %s", "x", "No such file");
}

static void do_usage(void)
{
	prog_name = "tprog";
	prog_usage_line = "usage: tprog FILE\n";
	usage_die("too many arguments");
}

static void do_error(void)
{
	prog_name = "tprog";
	if (error("bad %d", 5) != -1)
		_exit(3);
	if (hook_ran)
		_exit(4);
}

static char sent[64];
static void to_sent(const char *line)
{
	snprintf(sent, sizeof(sent), "[%s]", line);
}

static void test_die_usage_error(void **state)
{
	char out[512];

	(void)state;
	assert_int_equal(child_run(do_die, out, sizeof(out)), PROG_EXIT_DIE);
	assert_string_equal(out,
			    "tprog: cannot open 'x': No such file\nhook\n");
	assert_int_equal(child_run(do_usage, out, sizeof(out)),
			 PROG_EXIT_USAGE);
	assert_string_equal(out, "tprog: too many arguments\nusage: tprog "
				 "FILE\nRun 'tprog --help' for the options.\n");
	assert_int_equal(child_run(do_error, out, sizeof(out)), 0);
	assert_string_equal(out, "tprog: bad 5\n");

	/* the report hook takes the line instead of stderr */
	prog_name = "tprog";
	prog_report_hook = to_sent;
	assert_int_equal(error("x%s", "y"), -1);
	prog_report_hook = NULL;
	assert_string_equal(sent, "[tprog: xy]");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_u64),
		cmocka_unit_test(test_clock),
		cmocka_unit_test(test_stat_fields),
		cmocka_unit_test(test_die_usage_error),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
