/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * goblinfs(1): mount a Goblin Store directory.  Parses the store and mount
 * options, daemonizes, opens the store in the process that serves it and
 * runs the filesystem (goblinfs.h) until it is unmounted.
 */
#define FUSE_USE_VERSION 312

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fuse_opt.h>

#include "../store/goblin.h"
#include "../store/prog.h"
#include "goblinfs.h"

#define NAME "goblinfs"

/* In the background child: where the parent waits for "ok" or an error. */
static int status_fd = -1;

/* A message in the background child goes to the parent to print. */
static void report_to_parent(const char *msg)
{
	if (status_fd >= 0) {
		/* the parent prints it: this process has no terminal */
		if (write(status_fd, msg, strlen(msg)) < 0)
			fputs(msg, stderr);
		return;
	}
	prog_report_stderr(msg);
}

static const char usage_line[] =
	"usage: goblinfs [store options] [mount options] --store DIR "
	"MOUNTPOINT\n";

static void usage_print(FILE *f)
{
	fputs(usage_line, f);
	fputs("\nMount the Goblin Store in DIR on MOUNTPOINT.  Unmount with\n"
	      "'fusermount3 -u MOUNTPOINT' (or umount as root).\n\n"
	      "Mount options:\n"
	      "  -f, --foreground       do not daemonize; messages on stderr\n"
	      "  -o OPT[,OPT...]        FUSE mount options (ro, allow_other,\n"
	      "                         max_read=N, debug, ...)\n"
	      "  -d, --debug            -f and FUSE request tracing\n"
	      "  --threads N            FUSE worker threads (default 16)\n"
	      "  --no-auto-unmount      leave the mount when goblinfs dies\n"
	      "  --mirror URL           read-through cache of the HTTP origin "
	      "URL;\n"
	      "                         the mount is read-only\n"
	      "  --mirror-stale-on-error S  read a stored file up to S\n"
	      "                         seconds stale when the origin fails\n"
	      "                         (default 0: EIO)\n"
	      "  --negative-timeout S   seconds a missing name is remembered\n"
	      "                         (default 1, 5 with --mirror)\n"
	      "  --direct-read SIZE     read files of SIZE or more past the\n"
	      "                         kernel page cache (default 64M;\n"
	      "                         0: never)\n"
	      "  --rewrite-max SIZE     largest file written in place\n"
	      "                         (default 256M; larger: EFBIG)\n"
	      "\n"
	      "Store options (SIZE: 4096, 256K, 64M, 2MiB, 1G ...):\n"
	      "  --store DIR            the store directory (default: "
	      "$GOBLIN_STORE),\n"
	      "                         created when missing\n",
	      f);
	gs_option_help(f);
	fputs("\nExit status: 0 unmounted, 128 error, 129 usage.\n", f);
}

enum {
	OPT_STORE = 256,
	OPT_THREADS,
	OPT_NO_AUTO_UNMOUNT,
	OPT_MIRROR,
	OPT_NEGATIVE_TIMEOUT,
	OPT_DIRECT_READ,
	OPT_MIRROR_STALE_ON_ERROR,
	OPT_REWRITE_MAX,
	OPT_STORE_OPTION, /* + index in gs_option_list */
};

/* Our own options, then the store's (filled in by main). */
#define NOWN 11
static struct option options[NOWN + GS_NOPTIONS + 1] = {
	{ "help", no_argument, NULL, 'h' },
	{ "foreground", no_argument, NULL, 'f' },
	{ "debug", no_argument, NULL, 'd' },
	{ "store", required_argument, NULL, OPT_STORE },
	{ "threads", required_argument, NULL, OPT_THREADS },
	{ "no-auto-unmount", no_argument, NULL, OPT_NO_AUTO_UNMOUNT },
	{ "mirror", required_argument, NULL, OPT_MIRROR },
	{ "negative-timeout", required_argument, NULL, OPT_NEGATIVE_TIMEOUT },
	{ "direct-read", required_argument, NULL, OPT_DIRECT_READ },
	{ "mirror-stale-on-error", required_argument, NULL,
	  OPT_MIRROR_STALE_ON_ERROR },
	{ "rewrite-max", required_argument, NULL, OPT_REWRITE_MAX },
};

struct cmdline {
	const char *dir;
	const char *mountpoint;
	struct gs_options so;
	struct gfs_options fo;
	bool foreground, debug, auto_unmount;
	struct fuse_args fargs;
};

/* A store option's value that does not parse: a usage error. */
static void store_option(struct gs_options *o, int i, const char *val)
{
	const struct gs_option_desc *d = &gs_option_list[i];
	const char *why;

	if (gs_option_set(o, d->name, val, &why) < 0)
		usage_die("invalid %s '%s' for --%s: %s",
			  !strcmp(d->arg, "SIZE") ? "size" : "value", val,
			  d->name, why);
}

static unsigned count_opt(const char *name, const char *val, unsigned max)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(val, &end, 10);
	if (errno || end == val || *end || v == 0 || v > max)
		usage_die("invalid value '%s' for --%s", val, name);
	return (unsigned)v;
}

static double seconds_opt(const char *name, const char *val)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(val, &end);
	if (errno || end == val || *end || !(v >= 0 && v <= 86400))
		usage_die("invalid value '%s' for --%s", val, name);
	return v;
}

/* Whole seconds, 0 (off) included; at most a year. */
static unsigned secs_opt(const char *name, const char *val)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(val, &end, 10);
	if (errno || end == val || *end || !isdigit((unsigned char)*val) ||
	    v > 366ul * 86400)
		usage_die("invalid value '%s' for --%s", val, name);
	return (unsigned)v;
}

static void add_farg(struct cmdline *c, const char *arg)
{
	if (fuse_opt_add_arg(&c->fargs, arg) < 0)
		die("out of memory");
}

static void parse(struct cmdline *c, int argc, char **argv)
{
	int ch;

	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":hfdo:", options, NULL)) != -1) {
		switch (ch) {
		case 'h':
			usage_print(stdout);
			exit(0);
		case 'f':
			c->foreground = true;
			break;
		case 'd':
			c->foreground = c->debug = true;
			break;
		case 'o':
			add_farg(c, "-o");
			add_farg(c, optarg);
			break;
		case OPT_STORE:
			c->dir = optarg;
			break;
		case OPT_THREADS:
			c->fo.max_threads = count_opt("threads", optarg, 1024);
			break;
		case OPT_NO_AUTO_UNMOUNT:
			c->auto_unmount = false;
			break;
		case OPT_MIRROR:
			if (strncmp(optarg, "http://", 7) &&
			    strncmp(optarg, "https://", 8))
				usage_die("invalid URL '%s' for --mirror "
					  "(http:// or https://)",
					  optarg);
			c->fo.mirror = optarg;
			break;
		case OPT_NEGATIVE_TIMEOUT:
			c->fo.negative_timeout =
				seconds_opt("negative-timeout", optarg);
			break;
		case OPT_DIRECT_READ:
			if (gs_parse_size(optarg, &c->fo.direct_read) < 0)
				usage_die("invalid size '%s' for "
					  "--direct-read",
					  optarg);
			break;
		case OPT_MIRROR_STALE_ON_ERROR:
			c->fo.mirror_stale_on_error =
				secs_opt("mirror-stale-on-error", optarg);
			break;
		case OPT_REWRITE_MAX:
			if (gs_parse_size(optarg, &c->fo.rewrite_max) < 0)
				usage_die("invalid size '%s' for "
					  "--rewrite-max",
					  optarg);
			break;
		case ':':
			usage_die("option '%s' needs a value",
				  argv[optind - 1]);
		default:
			if (ch >= OPT_STORE_OPTION &&
			    ch < OPT_STORE_OPTION + GS_NOPTIONS) {
				store_option(&c->so, ch - OPT_STORE_OPTION,
					     optarg);
				break;
			}
			if (optopt)
				usage_die("unknown option '-%c'", optopt);
			usage_die("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		usage_die("no mountpoint given");
	if (optind + 1 < argc)
		usage_die("too many arguments ('%s')", argv[optind + 1]);
	c->mountpoint = argv[optind];
	if (!c->dir || !*c->dir)
		usage_die("no store given (use --store DIR)");
	if (c->fo.mirror_stale_on_error && !c->fo.mirror)
		usage_die("--mirror-stale-on-error needs --mirror");
}

/* @path made absolute: the daemon runs in "/".  Caller frees. */
static char *absolute(const char *path)
{
	char cwd[PATH_MAX], *out;

	if (path[0] == '/')
		out = strdup(path);
	else if (!getcwd(cwd, sizeof(cwd)))
		die("cannot find the current directory: %s", strerror(errno));
	else if (asprintf(&out, "%s/%s", cwd, path) < 0)
		out = NULL;
	if (!out)
		die("out of memory");
	return out;
}

/*
 * Fork: the parent waits until the child has opened the store and mounted
 * (exit 0) or failed (its message, exit 128).  The store is opened in the
 * child: io_uring rings and the store lock must belong to the process
 * that serves, and a startup error must still reach the caller's terminal
 * and exit status (fuse_daemonize() exits 0 before either is known).
 */
static void daemonize_begin(void)
{
	int p[2];
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		die("cannot create a pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		die("cannot fork: %s", strerror(errno));
	if (pid > 0) {
		char msg[4096];
		ssize_t n;
		size_t got = 0;

		close(p[1]);
		while ((n = read(p[0], msg + got, sizeof(msg) - 1 - got)) > 0)
			got += (size_t)n;
		msg[got] = '\0';
		if (got == 2 && !strcmp(msg, "ok"))
			_exit(0);
		fprintf(stderr, "%s\n",
			got ? msg : NAME ": the daemon died while starting");
		_exit(PROG_EXIT_DIE);
	}
	close(p[0]);
	status_fd = p[1];
	if (setsid() < 0)
		die("cannot start a session: %s", strerror(errno));
}

static void daemonize_end(void)
{
	int fd;

	if (chdir("/") < 0)
		die("cannot change to '/': %s", strerror(errno));
	fd = open("/dev/null", O_RDWR);
	if (fd < 0)
		die("cannot open '/dev/null': %s", strerror(errno));
	dup2(fd, 0);
	dup2(fd, 1);
	dup2(fd, 2);
	if (fd > 2)
		close(fd);
	if (write(status_fd, "ok", 2) != 2)
		_exit(PROG_EXIT_DIE);
	close(status_fd);
	status_fd = -1;
}

/* The mount failed: say so, and how to clear a dead mount in the way. */
__attribute__((noreturn)) static void die_mount(const char *mp)
{
	struct stat st;

	if (stat(mp, &st) < 0 && errno == ENOTCONN)
		die("cannot mount '%s': a dead FUSE mount is still there; "
		    "unmount it with fusermount3 -u",
		    mp);
	die("cannot mount '%s'", mp);
}

int main(int argc, char **argv)
{
	struct cmdline c;
	struct gs_store *s = NULL;
	struct gfs *fs;
	char why[512] = "", *dir, *mp, *opts;
	const char *env;
	int ret;

	prog_name = NAME;
	prog_usage_line = usage_line;
	prog_report_hook = report_to_parent;
	memset(&c, 0, sizeof(c));
	gs_option_getopt(&options[NOWN], OPT_STORE_OPTION);
	gs_options_init(&c.so);
	c.so.preload_heads = true; /* a mount lives long: heads first */
	gfs_options_init(&c.fo);
	c.auto_unmount = true;
	c.fargs = (struct fuse_args)FUSE_ARGS_INIT(0, NULL);
	add_farg(&c, NAME);
	env = getenv("GOBLIN_STORE");
	if (env && *env)
		c.dir = env;
	parse(&c, argc, argv);

	dir = absolute(c.dir);
	mp = absolute(c.mountpoint);
	if (asprintf(&opts,
		     "fsname=goblin:%s,subtype=goblinfs,"
		     "default_permissions%s%s",
		     dir, c.auto_unmount ? ",auto_unmount" : "",
		     c.fo.mirror ? ",ro" : "") < 0)
		die("out of memory");
	add_farg(&c, "-o");
	add_farg(&c, opts);
	if (c.debug)
		add_farg(&c, "-d");
	c.fo.fsname = dir;
	c.fo.stage_dir = dir; /* in-place writes' copies: beside the store */
	c.so.create = true;

	if (!c.foreground)
		daemonize_begin();
	ret = gs_open(dir, &c.so, &s, why, sizeof(why));
	if (ret < 0)
		die("cannot open store '%s': %s", dir,
		    *why ? why : gs_strerror(ret));
	fs = gfs_new(s, &c.fo, why, sizeof(why));
	if (!fs) {
		gs_close(s);
		die("cannot read store '%s': %s", dir, why);
	}
	if (gfs_mount(fs, mp, &c.fargs) < 0) {
		gfs_free(fs);
		gs_close(s);
		die_mount(mp);
	}
	fuse_opt_free_args(&c.fargs);
	if (!c.foreground)
		daemonize_end();
	gfs_guard(fs);

	ret = gfs_loop(fs);
	gfs_unmount(fs);
	gfs_free(fs);
	gs_close(s);
	free(opts);
	free(dir);
	free(mp);
	if (ret < 0) {
		fprintf(stderr, "%s: the session failed: %s\n", NAME,
			strerror(-ret));
		return PROG_EXIT_DIE;
	}
	return 0;
}
