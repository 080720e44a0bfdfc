/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * goblind(8): the network daemon.  Reads goblin.conf(5) and the command
 * line (flags win), opens the store, listens for memcache, starts the
 * workers and, with --mount, the filesystem; stops cleanly on SIGTERM.
 */
#define FUSE_USE_VERSION 312

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <netdb.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <fuse_opt.h>
#include <ini.h>

#include "goblind.h"
#include "http.h"
#include "memcache.h"
#include "rdma.h"
#include "resp.h"
#include "../fs/goblinfs.h"
#include "../store/prog.h"

static struct gd gd;

enum {
	OPT_OWN = 256, /* set_option() by the long option's name */
	OPT_CONFIG,
	OPT_STORE_OPTION, /* + index in gs_option_list */
};

/*
 * Our own options, then the store's (filled in by main after the first
 * unused entry: no count to keep in step with the list).
 */
#define NOWN_MAX 64
static struct option options[NOWN_MAX + GS_NOPTIONS + 1] = {
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ "config", required_argument, NULL, OPT_CONFIG },
	{ "store", required_argument, NULL, OPT_OWN },
	{ "listen-address", required_argument, NULL, OPT_OWN },
	{ "memcache-port", required_argument, NULL, OPT_OWN },
	{ "no-memcache", no_argument, NULL, OPT_OWN },
	{ "unixsocket", required_argument, NULL, OPT_OWN },
	{ "unixsocket-mask", required_argument, NULL, OPT_OWN },
	{ "ring", required_argument, NULL, OPT_OWN },
	{ "http-port", required_argument, NULL, OPT_OWN },
	{ "no-http", no_argument, NULL, OPT_OWN },
	{ "http-write-token", required_argument, NULL, OPT_OWN },
	{ "auth-file", required_argument, NULL, OPT_OWN },
	{ "trusted-proxy", required_argument, NULL, OPT_OWN },
	{ "http-timeout", required_argument, NULL, OPT_OWN },
	{ "mirror", required_argument, NULL, OPT_OWN },
	{ "mirror-timeout", required_argument, NULL, OPT_OWN },
	{ "mirror-max-object", required_argument, NULL, OPT_OWN },
	{ "mirror-threads", required_argument, NULL, OPT_OWN },
	{ "mirror-max-header", required_argument, NULL, OPT_OWN },
	{ "mirror-stale-on-error", required_argument, NULL, OPT_OWN },
	{ "mirror-no-via", no_argument, NULL, OPT_OWN },
	{ "mirror-no-xff", no_argument, NULL, OPT_OWN },
	{ "mirror-heuristic", required_argument, NULL, OPT_OWN },
	{ "mirror-heuristic-max", required_argument, NULL, OPT_OWN },
	{ "cores", required_argument, NULL, OPT_OWN },
	{ "max-item", required_argument, NULL, OPT_OWN },
	{ "max-conns", required_argument, NULL, OPT_OWN },
	{ "memcache-max-conns", required_argument, NULL, OPT_OWN },
	{ "http-max-conns", required_argument, NULL, OPT_OWN },
	{ "idle-timeout", required_argument, NULL, OPT_OWN },
	{ "busy-idle-timeout", required_argument, NULL, OPT_OWN },
	{ "busy-poll", required_argument, NULL, OPT_OWN },
	{ "tcp-congestion", required_argument, NULL, OPT_OWN },
	{ "mount", required_argument, NULL, OPT_OWN },
	{ "rewrite-max", required_argument, NULL, OPT_OWN },
	{ "log-level", required_argument, NULL, OPT_OWN },
	{ "rdma-port", required_argument, NULL, OPT_OWN },
	{ "rdma-address", required_argument, NULL, OPT_OWN },
	{ "rdma-max-conns", required_argument, NULL, OPT_OWN },
};

static bool count_arg(const char *val, unsigned min, unsigned max,
		      unsigned *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(val, &end, 10);
	if (errno || end == val || *end || v < min || v > max || val[0] == '-')
		return false;
	*out = (unsigned)v;
	return true;
}

/* A flag's value in goblin.conf: yes/no, true/false, on/off, 1/0. */
static int bool_arg(const char *val)
{
	if (!val || !strcmp(val, "yes") || !strcmp(val, "true") ||
	    !strcmp(val, "on") || !strcmp(val, "1"))
		return 1;
	if (!strcmp(val, "no") || !strcmp(val, "false") ||
	    !strcmp(val, "off") || !strcmp(val, "0"))
		return 0;
	return -1;
}

/*
 * Set option @name (no dashes) to @val (NULL for a flag on the command
 * line).  Returns NULL, or what is wrong.  @val must outlive the daemon.
 * One branch per option, each two or three lines: longer than ~100 lines
 * as a whole, but a table would need a parser per option all the same.
 */
static const char *set_option(const char *name, const char *val, bool conf)
{
	struct gd_settings *s = &gd.set;
	const char *why = NULL;
	int ret;

	if (!strcmp(name, "store")) {
		s->store_dir = val;
	} else if (!strcmp(name, "listen-address")) {
		s->listen = val;
	} else if (!strcmp(name, "memcache-port")) {
		if (!count_arg(val, 0, 65535, &s->port))
			return "not a port number";
		s->port_given = true;
	} else if (!strcmp(name, "unixsocket")) {
		if (!*val ||
		    strlen(val) >= sizeof(((struct sockaddr_un *)0)->sun_path))
			return "not a socket path (1 to 107 bytes)";
		s->unixsocket = val;
	} else if (!strcmp(name, "ring")) { /* issue 22 */
		s->ring = val;
	} else if (!strcmp(name, "unixsocket-mask")) { /* chmod's octal */
		char *end;

		s->unixsocket_mask = (unsigned)strtoul(val, &end, 8);
		if (*val < '0' || *val > '7' || *end || end - val > 4 ||
		    s->unixsocket_mask > 0777)
			return "not an octal mode from 0 to 0777";
	} else if (!strcmp(name, "no-memcache")) {
		if ((ret = bool_arg(val)) < 0)
			return "not yes or no";
		s->memcache = !ret;
	} else if (!strcmp(name, "http-port")) {
		if (!count_arg(val, 0, 65535, &s->http_port))
			return "not a port number";
	} else if (!strcmp(name, "no-http")) {
		if ((ret = bool_arg(val)) < 0)
			return "not yes or no";
		s->http = !ret;
	} else if (!strcmp(name, "http-write-token")) {
		if (!*val || strpbrk(val, " \t\r\n"))
			return "not a token (empty, or with white space)";
		s->http_token = val;
	} else if (!strcmp(name, "auth-file")) {
		if (!*val)
			return "not a file name";
		s->auth_file = val;
	} else if (!strcmp(name, "trusted-proxy")) {
		if (gd_addr_parse(val, strlen(val), &gd.proxy) < 0)
			return "not an IPv4 or IPv6 address";
		s->trusted_proxy = val;
		gd.has_proxy = true;
	} else if (!strcmp(name, "http-timeout")) {
		if (!count_arg(val, 0, 1u << 30, &s->http_timeout))
			return "not a number of seconds";
	} else if (!strcmp(name, "mirror")) {
		if (strncmp(val, "http://", 7) && strncmp(val, "https://", 8))
			return "not an http:// or https:// URL";
		s->mirror = val;
	} else if (!strcmp(name, "mirror-timeout")) {
		if (!count_arg(val, 1, 1u << 20, &s->mirror_timeout))
			return "not a number of seconds";
	} else if (!strcmp(name, "mirror-max-object")) {
		if (gs_parse_size(val, &s->mirror_max_object) < 0 ||
		    !s->mirror_max_object)
			return "not a size";
	} else if (!strcmp(name, "mirror-threads")) {
		if (!count_arg(val, 1, FETCH_THREADS_MAX, &s->mirror_threads))
			return "not a count from 1 to 64";
	} else if (!strcmp(name, "mirror-max-header")) {
		if (gs_parse_size(val, &s->mirror_max_header) < 0 ||
		    s->mirror_max_header < 256 ||
		    s->mirror_max_header > FETCH_MAX_HEADER_CEIL)
			return "not a size from 256 to 32k";
	} else if (!strcmp(name, "mirror-stale-on-error")) {
		if (!count_arg(val, 0, 1u << 30, &s->mirror_stale_on_error))
			return "not a number of seconds";
	} else if (!strcmp(name, "mirror-no-via")) {
		if ((ret = bool_arg(val)) < 0)
			return "not yes or no";
		s->mirror_no_via = ret;
	} else if (!strcmp(name, "mirror-no-xff")) {
		if ((ret = bool_arg(val)) < 0)
			return "not yes or no";
		s->mirror_no_xff = ret;
	} else if (!strcmp(name, "mirror-heuristic")) {
		if (!count_arg(val, 0, 100, &s->mirror_heuristic))
			return "not a percent from 0 to 100";
		s->mirror_heur_set = true;
	} else if (!strcmp(name, "mirror-heuristic-max")) {
		if (!count_arg(val, 1, 1u << 31, &s->mirror_heur_max))
			return "not a number of seconds from 1";
	} else if (resp_option(s, name, val, &why)) { /* resp_serve.c */
		return why;
	} else if (!strcmp(name, "cores")) {
		if (!count_arg(val, 1, 1024, &s->cores))
			return "not a count from 1 to 1024";
	} else if (!strcmp(name, "max-item")) {
		if (gs_parse_size(val, &s->max_item) < 0 || !s->max_item)
			return "not a size";
	} else if (!strcmp(name, "max-conns")) {
		if (!count_arg(val, 1, 1u << 20, &s->max_conns))
			return "not a count";
	} else if (!strcmp(name, "memcache-max-conns")) {
		if (!count_arg(val, 1, 1u << 20, &s->mc_max_conns))
			return "not a count";
	} else if (!strcmp(name, "http-max-conns")) {
		if (!count_arg(val, 1, 1u << 20, &s->http_max_conns))
			return "not a count";
	} else if (!strcmp(name, "idle-timeout")) {
		if (!count_arg(val, 0, 1u << 30, &s->idle_timeout))
			return "not a number of seconds";
	} else if (!strcmp(name, "busy-idle-timeout")) {
		if (!count_arg(val, 0, 1u << 30, &s->busy_idle_timeout))
			return "not a number of seconds";
	} else if (!strcmp(name, "busy-poll")) {
		if (!count_arg(val, 0, 1000000, &s->busy_poll_us))
			return "not a number of microseconds up to 1000000";
	} else if (!strcmp(name, "tcp-congestion")) {
		if (!*val || strlen(val) >= GD_CC_NAME_MAX)
			return "not a congestion control's name";
		s->tcp_congestion = val;
	} else if (!strcmp(name, "mount")) {
		s->mount = val;
	} else if (!strcmp(name, "rewrite-max")) {
		if (gs_parse_size(val, &s->rewrite_max) < 0)
			return "not a size";
		s->rewrite_max_set = true;
	} else if (!strcmp(name, "log-level")) {
		if ((ret = gd_log_parse(val)) < 0)
			return "not error, warn, info or debug";
		gd_log_level = ret;
	} else if (!strncmp(name, "rdma-", 5)) {
		return gd_rdma_option(s, name, val);
	} else {
		/* a store flag in goblin.conf: "no-mlock = yes" */
		for (int i = 0; i < GS_NOPTIONS; i++) {
			if (strcmp(gs_option_list[i].name, name))
				continue;
			if (conf && !gs_option_list[i].arg) {
				if ((ret = bool_arg(val)) < 0)
					return "not yes or no";
				if (!ret)
					return NULL; /* "no": the default */
				val = NULL;
			}
			break;
		}
		ret = gs_option_set(&s->so, name, val, &why);
		if (ret == -ENOENT)
			return "no such option";
		if (ret < 0)
			return why ? why : "invalid value";
	}
	return NULL;
}

/* Values read from goblin.conf: options keep pointers into them. */
struct conf_value {
	struct conf_value *next;
	char s[];
};
static struct conf_value *conf_values;

static char *conf_keep(const char *value)
{
	size_t n = strlen(value) + 1;
	struct conf_value *v = malloc(sizeof(*v) + n);

	if (!v)
		die("out of memory");
	memcpy(v->s, value, n);
	v->next = conf_values;
	conf_values = v;
	return v->s;
}

static void conf_free(void)
{
	while (conf_values) {
		struct conf_value *v = conf_values;

		conf_values = v->next;
		free(v);
	}
}

struct conf_ctx {
	const char *file;
	char msg[512]; /* why the first bad line is bad */
};

static int conf_line(void *arg, const char *section, const char *name,
		     const char *value)
{
	struct conf_ctx *cx = arg;
	char *v;
	const char *why;

	if (*cx->msg)
		return 0; /* inih reports the first bad line only */
	if (*section && strcmp(section, "goblind")) {
		snprintf(cx->msg, sizeof(cx->msg), "unknown section [%s]",
			 section);
		return 0;
	}
	if (!strcmp(name, "config")) {
		snprintf(cx->msg, sizeof(cx->msg),
			 "'config' cannot be set in a config file");
		return 0;
	}
	v = conf_keep(value); /* for the life of the daemon */
	why = set_option(name, v, true);
	if (why) {
		snprintf(cx->msg, sizeof(cx->msg), "%s = '%s': %s", name, value,
			 why);
		return 0;
	}
	return 1;
}

static void read_config(const char *file)
{
	struct conf_ctx cx = { file, "" };
	int ret = ini_parse(file, conf_line, &cx);

	if (ret == -1)
		die("cannot open config '%s': %s", file, strerror(errno));
	if (ret == -2)
		die("out of memory reading '%s'", file);
	if (ret > 0)
		usage_die("%s:%d: %s", file, ret,
			  *cx.msg ? cx.msg : "not 'name = value'");
}

static void parse(int argc, char **argv)
{
	const char *config = NULL, *why;
	int ch, idx;

	/* first pass: --config and --help only; the file goes first */
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":hV", options, &idx)) != -1) {
		if (ch == 'h') {
			gd_help(stdout);
			exit(0);
		}
		if (ch == 'V') {
			printf("goblind %s (memcache %s)\n", GD_VERSION,
			       GD_MC_VERSION);
			exit(0);
		}
		if (ch == OPT_CONFIG)
			config = optarg;
	}
	if (config) {
		gd.set.config = config;
		read_config(config);
	}
	optind = 0;
	while ((ch = getopt_long(argc, argv, ":hV", options, &idx)) != -1) {
		switch (ch) {
		case ':':
			usage_die("option '%s' needs a value",
				  argv[optind - 1]);
		case '?':
			if (optopt)
				usage_die("unknown option '-%c'", optopt);
			usage_die("unknown option '%s'", argv[optind - 1]);
		case OPT_CONFIG:
			continue;
		}
		why = set_option(options[idx].name, optarg, false);
		if (why)
			usage_die("invalid value '%s' for --%s: %s",
				  optarg ? optarg : "", options[idx].name, why);
	}
	if (optind < argc)
		usage_die("unexpected argument '%s'", argv[optind]);
	if (!gd.set.store_dir || !*gd.set.store_dir)
		usage_die("no store given (use --store DIR)");
}

/* ---- listening ---- */

/* Listen on @addr:@port (accept.c); the bound address goes to @name. */
static int listen_on(const char *addr, unsigned port, const char *opt,
		     char *name, size_t namelen, unsigned *bound)
{
	char why[512];
	int fd = gd_listen_tcp(addr, port, opt, gd.set.tcp_congestion, name,
			       namelen, bound, why, sizeof(why));

	if (fd < 0)
		die("%s", why);
	return fd;
}

/* ---- --unixsocket: memcache on a Unix socket (accept.c) ---- */

static struct gd_unix unix_sock = { .fd = -1 };

static void unix_listen(struct gd_proto *mc)
{
	char why[512];

	if (gd_unix_listen(&unix_sock, gd.set.unixsocket,
			   gd.set.unixsocket_mask, gd.nworkers, why,
			   sizeof(why)) < 0)
		die("%s", why);
	if (gd_listener_add_shared(&gd, mc, unix_sock.fds) < 0)
		die("too many listeners");
}

/* ---- --mount: the filesystem of fs/ on a thread of its own ---- */

static struct gfs *fs;
static int *mc_fds, *http_fds; /* the listeners: one socket per worker */
static pthread_t fs_thread;

static void wake_handler(int sig)
{
	(void)sig; /* only interrupts the FUSE loop's wait */
}

static void *fs_main(void *arg)
{
	sigset_t set;
	int ret;

	(void)arg;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	ret = gfs_loop(fs);
	if (ret < 0)
		gd_log(GD_LOG_ERROR, "the mount on %s failed: %s", gd.set.mount,
		       strerror(-ret));
	else if (!atomic_load(&gd.stopping))
		gd_log(GD_LOG_WARN, "the mount on %s ended; memcache goes on",
		       gd.set.mount);
	return NULL;
}

static void mount_start(void)
{
	struct gfs_options fo;
	struct fuse_args fargs = FUSE_ARGS_INIT(0, NULL);
	struct sigaction sa;
	char why[512] = "", *opts;
	int ret;

	gfs_options_init(&fo);
	fo.fsname = gd.set.store_dir;
	fo.stage_dir = gd.set.store_dir; /* in-place writes' copies */
	if (gd.set.rewrite_max_set)
		fo.rewrite_max = gd.set.rewrite_max;
	fs = gfs_new(gd.s, &fo, why, sizeof(why));
	if (!fs)
		die("cannot read store '%s' for --mount: %s", gd.set.store_dir,
		    why);
	/* a mirror stores only what its origin serves: mounted read-only */
	if (asprintf(&opts,
		     "fsname=goblin:%s,subtype=goblinfs,"
		     "default_permissions,auto_unmount%s",
		     gd.set.store_dir, gd.set.mirror ? ",ro" : "") < 0)
		die("out of memory");
	if (fuse_opt_add_arg(&fargs, GD_NAME) < 0 ||
	    fuse_opt_add_arg(&fargs, "-o") < 0 ||
	    fuse_opt_add_arg(&fargs, opts) < 0)
		die("out of memory");
	if (gfs_mount(fs, gd.set.mount, &fargs) < 0)
		die("cannot mount '%s'", gd.set.mount);
	gfs_guard(fs); /* this thread ends with goblind */
	fuse_opt_free_args(&fargs);
	free(opts);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = wake_handler; /* no SA_RESTART: waits end */
	sigaction(SIGUSR1, &sa, NULL);
	ret = pthread_create(&fs_thread, NULL, fs_main, NULL);
	if (ret)
		die("cannot start the filesystem thread: %s", strerror(ret));
	gd_log(GD_LOG_INFO, "store mounted on %s", gd.set.mount);
}

static void mount_stop(void)
{
	gfs_exit(fs);
	pthread_kill(fs_thread, SIGUSR1);
	pthread_join(fs_thread, NULL);
	gfs_unmount(fs);
	gfs_free(fs);
	fs = NULL;
}

/* ---- protocols and their listeners ---- */

/* memcache on TCP: not with --unixsocket alone (memcached -s) */
static bool mc_tcp(void)
{
	return gd.set.memcache && (!gd.set.unixsocket || gd.set.port_given);
}

/*
 * Every protocol is registered, served or not: its id is its slot in
 * proto_conns[] (stats: 0 memcache, 1 HTTP).  A listener is added for
 * each one served.  A listening socket per worker (SO_REUSEPORT): the
 * kernel spreads new connections over them evenly, where one shared
 * socket gave most of them to whichever worker happened to be waiting.
 * The first socket settles port 0 for the others.
 */
static void protocols_listen(void)
{
	struct gd_proto *mc = gd_proto_add(&gd, &mc_ops, gd.set.mc_max_conns);
	struct gd_proto *http =
		gd_proto_add(&gd, &http_ops, gd.set.http_max_conns);
	const char *why;

	if (!mc || !http)
		die("too many protocols");
	if (!(mc_fds = malloc(gd.nworkers * sizeof(int))) ||
	    !(http_fds = malloc(gd.nworkers * sizeof(int))))
		die("out of memory");
	for (unsigned i = 0; i < gd.nworkers; i++) {
		mc_fds[i] = http_fds[i] = -1;
		if (mc_tcp())
			mc_fds[i] = listen_on(gd.set.listen, gd.set.port,
					      "memcache-port", gd.listen_name,
					      sizeof(gd.listen_name),
					      &gd.set.port);
		if (gd.set.http)
			http_fds[i] = listen_on(gd.set.listen, gd.set.http_port,
						"http-port", gd.http_name,
						sizeof(gd.http_name),
						&gd.set.http_port);
	}
	if (mc_tcp() && gd_listener_add(&gd, mc, mc_fds) < 0)
		die("too many listeners");
	if (gd.set.unixsocket)
		unix_listen(mc);
	if (gd.set.http && gd_listener_add(&gd, http, http_fds) < 0)
		die("too many listeners");
	resp_serve(&gd); /* id 2, when served */

	if (gd.set.ring && (why = gd_ring_listen(&gd)))
		die("%s", why);
}

/* What is served where: the lines tests and scripts wait for. */
static void listening_log(void)
{
	if (mc_tcp())
		gd_log(GD_LOG_INFO, "memcache on %s, store %s, %u workers",
		       gd.listen_name, gd.set.store_dir, gd.nworkers);
	if (gd.set.unixsocket)
		gd_log(GD_LOG_INFO,
		       "memcache on unix socket %s (mode %04o), store %s, "
		       "%u workers",
		       gd.set.unixsocket, gd.set.unixsocket_mask,
		       gd.set.store_dir, gd.nworkers);
	if (gd.set.http)
		gd_log(GD_LOG_INFO, "http on %s%s%s", gd.http_name,
		       gd.set.mirror ? ", mirror of " : "",
		       gd.set.mirror ? gd.set.mirror : "");
}

static void protocols_close(void)
{
	for (unsigned i = 0; i < gd.nworkers; i++) {
		if (mc_fds[i] >= 0)
			close(mc_fds[i]);
		if (http_fds[i] >= 0)
			close(http_fds[i]);
	}
	free(mc_fds);
	free(http_fds);
	gd_unix_close(&unix_sock);
	resp_close(&gd);

	gd_ring_close();
}

/* ---- connection limits and the open files limit ---- */

/*
 * Each protocol's share of --max-conns.  By default each may take 3/4 of
 * it when both are served, so neither can lock the other out: a quarter
 * is always left for the other one.
 */
static void limits_settle(void)
{
	struct gd_settings *s = &gd.set;
	unsigned share = s->max_conns - s->max_conns / 4;
	bool both = s->memcache && s->http;

	if (!share)
		share = 1;
	if (!s->mc_max_conns)
		s->mc_max_conns = both ? share : s->max_conns;
	if (!s->http_max_conns)
		s->http_max_conns = both ? share : s->max_conns;
	if (s->mc_max_conns > s->max_conns)
		usage_die("--memcache-max-conns %u is over --max-conns %u",
			  s->mc_max_conns, s->max_conns);
	if (s->http_max_conns > s->max_conns)
		usage_die("--http-max-conns %u is over --max-conns %u",
			  s->http_max_conns, s->max_conns);
	resp_settle(s);
}

/* The fds open now (/proc/self/fd), or @guess when it cannot be read. */
static unsigned long fds_open(unsigned long guess)
{
	DIR *d = opendir("/proc/self/fd");
	unsigned long n = 0;
	struct dirent *e;

	if (!d)
		return guess;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n; /* the DIR's own fd included: slack */
}

/*
 * --max-conns means nothing if accept() runs out of fds first: raise the
 * soft RLIMIT_NOFILE to what it needs (never the hard limit, the
 * administrator's ceiling), or refuse to start.  Called with the store,
 * the listeners and the fetcher open; what opens later is counted:
 * per worker an epoll fd, two eventfds, an io_uring and the reserve fd,
 * the mirror's origin sockets, the mount's /dev/fuse, and some slack.
 */
static void fd_limit_raise(void)
{
	struct rlimit rl;
	unsigned long long need, old;

	need = fds_open(64) + 6ull * gd.nworkers + gd.set.max_conns + 32;
	if (gd.set.mirror)
		need += 2 * 64 + 4ull * gd.set.cores; /* 64 transfers */
	if (gd.set.mount)
		need += 16;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		die("cannot read the open files limit: %s", strerror(errno));
	if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= need)
		return;
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < need)
		die("--max-conns %u needs %llu open files, but the hard limit "
		    "(RLIMIT_NOFILE) is %llu: lower --max-conns or raise the "
		    "limit (ulimit -Hn, LimitNOFILE= of the service)",
		    gd.set.max_conns, need, (unsigned long long)rl.rlim_max);
	old = rl.rlim_cur;
	rl.rlim_cur = need;
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
		die("cannot raise the open files limit from %llu to %llu for "
		    "--max-conns %u: %s",
		    old, need, gd.set.max_conns, strerror(errno));
	gd_log(GD_LOG_INFO,
	       "open files limit raised from %llu to %llu for "
	       "--max-conns %u",
	       old, need, gd.set.max_conns);
}

/* ---- main ---- */

static void defaults(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	gs_options_init(&gd.set.so);
	gd.set.so.preload_heads = true; /* a daemon lives long: heads first */
	gd.set.so.create = true;
	gd.set.listen = "127.0.0.1";
	gd.set.port = 11211;
	gd.set.memcache = true;
	gd.set.unixsocket_mask = 0700; /* memcached -a's default */
	gd.set.cores = n > 0 ? (unsigned)n : 1;
	gd.set.max_item = 1ull << 30;
	gd.set.max_conns = 1024;
	gd.set.busy_idle_timeout = 60;
	gd.set.busy_poll_us = 250;
	gd.set.http = true;
	gd.set.http_port = 8080;
	gd.set.http_timeout = 30;
	gd.set.mirror_timeout = 30;
}

/* Block the stop signals in every thread: main takes them by signalfd. */
static int signals_setup(void)
{
	sigset_t set;
	int fd;

	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGUSR1); /* only the FUSE thread takes it */
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	sigdelset(&set, SIGUSR1);
	fd = signalfd(-1, &set, SFD_CLOEXEC);
	if (fd < 0)
		die("cannot create a signalfd: %s", strerror(errno));
	return fd;
}

static int wait_for_stop(int sfd)
{
	struct signalfd_siginfo si;

	for (;;) {
		ssize_t n = read(sfd, &si, sizeof(si));

		if (n < 0 && errno == EINTR)
			continue;
		if (n != sizeof(si))
			die("reading the signalfd: %s", strerror(errno));
		if (si.ssi_signo == SIGHUP) {
			gd_log(GD_LOG_INFO, "SIGHUP: nothing to reload; "
					    "restart to change settings");
			continue;
		}
		return (int)si.ssi_signo;
	}
}

/* --mirror: the origin fetcher, with the mirror's settings. */
static void mirror_start(void)
{
	char why[512] = "";
	struct fetch_opts fo = {
		.origin = gd.set.mirror,
		.timeout_ms = gd.set.mirror_timeout * 1000,
		.max_object = gd.set.mirror_max_object ?
				      gd.set.mirror_max_object :
				      gd.set.max_item,
		.max_transfers = 64,
		.threads = gd.set.mirror_threads ? gd.set.mirror_threads :
						   gd.set.cores,
		.max_header = (size_t)gd.set.mirror_max_header,
		.stale_on_error_s = gd.set.mirror_stale_on_error,
		.no_via = gd.set.mirror_no_via,
		.no_xff = gd.set.mirror_no_xff,
		.heuristic_pct =
			!gd.set.mirror_heur_set ? 0 :
			gd.set.mirror_heuristic ? (int)gd.set.mirror_heuristic :
						  -1,
		.heuristic_max = gd.set.mirror_heur_max,
	};

	gd.fetcher = fetcher_new(gd.s, &fo, why, sizeof(why));
	if (!gd.fetcher)
		die("cannot start the mirror of '%s': %s", gd.set.mirror, why);
}

int main(int argc, char **argv)
{
	char why[512] = "";
	int sfd, sig, ret;
	size_t nown;

	prog_name = GD_NAME;
	defaults();
	for (nown = 0; options[nown].name; nown++)
		;
	nown += (size_t)resp_getopt(&options[nown], OPT_OWN);
	gs_option_getopt(&options[nown], OPT_STORE_OPTION);
	parse(argc, argv);
	if (!gd.set.memcache && !gd.set.http && !gd.set.mount)
		usage_die("--no-memcache and --no-http without --mount "
			  "serve nothing");
	if (gd.set.rewrite_max_set && !gd.set.mount)
		usage_die("--rewrite-max is the mount's: it needs --mount");
	if (gd.set.mirror && !gd.set.http)
		usage_die("--mirror needs HTTP (drop --no-http)");
	if (gd.set.unixsocket && !gd.set.memcache)
		usage_die("--unixsocket serves memcache: it cannot go with "
			  "--no-memcache");
	limits_settle();
	if (gd.set.auth_file)
		mc_auth_load(&gd, gd.set.auth_file);

	sfd = signals_setup();
	ret = gs_open(gd.set.store_dir, &gd.set.so, &gd.s, why, sizeof(why));
	if (ret < 0)
		die("cannot open store '%s': %s", gd.set.store_dir,
		    *why ? why : gs_strerror(ret));
	gd.meta = metatab_new();
	if (!gd.meta)
		die("out of memory");
	gd.start_time = time(NULL);
	gd.nworkers = gd.set.cores;
	protocols_listen();
	if (gd.set.rdma && gd_rdma_listen(&gd, why, sizeof(why)) < 0)
		die("%s", why);
	if (gd.set.mirror)
		mirror_start();
	fd_limit_raise();
	pthread_rwlock_init(&gd.accept_lock, NULL);
	gd.spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (gd.spare_fd < 0)
		die("cannot open /dev/null: %s", strerror(errno));
	gd.workers = calloc(gd.nworkers, sizeof(*gd.workers));
	if (!gd.workers)
		die("out of memory");
	for (unsigned i = 0; i < gd.nworkers; i++)
		if (worker_start(&gd, &gd.workers[i], i, why, sizeof(why)) < 0)
			die("%s", why);
	if (gd.set.mount)
		mount_start();
	listening_log();

	sig = wait_for_stop(sfd);
	gd_log(GD_LOG_INFO, "%s: stopping", strsignal(sig));
	atomic_store(&gd.stopping, true);
	for (unsigned i = 0; i < gd.nworkers; i++)
		worker_stop(&gd.workers[i]);
	for (unsigned i = 0; i < gd.nworkers; i++)
		worker_join(&gd.workers[i]);
	protocols_close();
	gd_rdma_close(&gd);
	close(gd.spare_fd);
	pthread_rwlock_destroy(&gd.accept_lock);
	if (gd.fetcher)
		fetcher_free(gd.fetcher);
	if (fs)
		mount_stop();
	gs_close(gd.s);
	metatab_free(gd.meta);
	mc_auth_free(&gd);
	free(gd.workers);
	close(sfd);
	conf_free();
	gd_log(GD_LOG_INFO, "stopped");
	return 0;
}
