/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * goblinctl: the offline command-line tool.  Parses the store options,
 * finds the command and runs it; the commands live in cmd_*.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"

static int cmd_help(struct ctl *c, const struct ctl_cmd *cmd, int argc,
		    char **argv);

static const struct ctl_cmd commands[] = {
	{ "put", cmd_put, "put [--flags N] [--ttl SECONDS] KEY [FILE]",
	  "store FILE (default: standard input) under KEY",
	  "  --flags N           32-bit client flags stored with the object\n"
	  "  --ttl SECONDS       expire the object after SECONDS (0: never)\n"
	  "FILE '-' is standard input.\n",
	  true },
	{ "get", cmd_get, "get KEY [-o FILE]",
	  "write the value of KEY to standard output or FILE",
	  "  -o, --output FILE   write to FILE (replaced whole, at the end)\n"
	  "                      instead of standard output; '-': stdout\n",
	  true },
	{ "del", cmd_del, "del KEY", "delete KEY", NULL, true },
	{ "ls", cmd_ls, "ls [-l] [PREFIX]",
	  "list the keys starting with PREFIX, sorted",
	  "  -l, --long          also show size and modification time\n",
	  true },
	{ "stat", cmd_stat, "stat KEY", "show the metadata of KEY", NULL,
	  true },
	{ "inspect", cmd_inspect, "inspect KEY",
	  "show which tier holds each byte range of KEY", NULL, true },
	{ "stats", cmd_stats, "stats", "show the store's counters", NULL,
	  true },
	{ "populate", cmd_populate, "populate [--prefix P] DIR",
	  "store every regular file under DIR, keyed by its relative path",
	  "  --prefix P          put P in front of every key\n", false },
	{ "bench", cmd_bench, "bench [--host H] [--port P] [OPTIONS]",
	  "load goblind or an HTTP cache and measure it",
	  "  --host H, --port P   goblind (default 127.0.0.1, 11211)\n"
	  "  --proto P            memcache (default), or http: GET and PUT of\n"
	  "                       http://H:P/PREFIX/KEY, keep-alive connections\n"
	  "  --path-prefix STR    http: the URL path before each key (/)\n"
	  "  --conns N            connections, one request in flight each (16)\n"
	  "  --threads N          event loops (default: CPUs, at most N conns)\n"
	  "  --duration S         seconds of the measured phase (10)\n"
	  "  --keys N             keys bench:00000000 ... (1000)\n"
	  "  --size SPEC          SIZE, pareto:LOC,SCALE,SHAPE[,MAX], fb_value,\n"
	  "                       art or manifest:FILE ('key size' lines) (4096)\n"
	  "  --hot-start K        gets and sets go to keys K ...\n"
	  "  --hot-keys N         ... K+N-1 (default: to the last key)\n"
	  "  --populate-only      store every key once, report, exit\n"
	  "  --sweep              get every key of the window once, in order,\n"
	  "                       instead of --duration (counts what is lost)\n"
	  "  --no-store           skip the population\n"
	  "  --get-ratio R        share of gets in the measured phase (1.0)\n"
	  "  --verify             check every value got against its payload\n"
	  "  --csv FILE           one row per request, nanosecond timestamps\n"
	  "  --server-pid PID     measure the server's CPU (default: its\n"
	  "                       stats pid, when on this machine)\n"
	  "  --seed N             sizes and request order (1)\n"
	  "  --max-records N      requests recorded at most (4000000)\n"
	  "  --key-prefix P       key names (bench:)\n",
	  true },
	{ "help", cmd_help, "help [COMMAND]", "show the help of a command",
	  NULL, true },
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static void store_options_help(FILE *f)
{
	fputs("Store options (SIZE: 4096, 256K, 64M, 2MiB, 1G ...).  The store\n"
	      "remembers --memory, --small-memory, --block, --ram-head, --ssd-size\n"
	      "and --ssd-floor: one not given is as the store last ran.\n"
	      "  --store DIR            the store directory (default: $GOBLIN_STORE)\n"
	      "  --host HOST            online mode: talk to goblind on HOST\n"
	      "                         (put, get, del, ls, stat, inspect, stats,\n"
	      "                         bench)\n"
	      "  --port PORT            goblind's memcache port (default 11211)\n"
	      "  --socket PATH          online mode over goblind's Unix socket\n"
	      "                         (--unixsocket), instead of --host\n"
	      "  --transport T          tcp (memcache, default), ring (goblind\n"
	      "                         --ring: --host SOCKET_PATH) or rdma (goblind\n"
	      "                         --rdma-port: --host ADDR --port P); get, put,\n"
	      "                         del, stats, bench\n"
	      "  --window SIZE          rdma: the registered window gets land in\n"
	      "                         (default 4M; a larger value: window by window)\n",
	      f);
	gs_option_help(f);
	fputs("  --show-stats           print the counters of this run on stderr\n",
	      f);
}

static const struct ctl_cmd *ctl_cmd_find(const char *name)
{
	size_t i;

	for (i = 0; i < NCOMMANDS; i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

static void tool_usage(FILE *f, const struct ctl_cmd *cmd)
{
	size_t i;

	if (cmd) {
		fprintf(f, "usage: %s [--store DIR] [store options] %s\n\n",
			CTL_NAME, cmd->synopsis);
		fprintf(f, "%s%s\n", cmd->summary,
			cmd->help ? "\n\nOptions:" : "");
		if (cmd->help)
			fputs(cmd->help, f);
		fprintf(f, "\nRun '%s --help' for the store options.\n",
			CTL_NAME);
		return;
	}
	fprintf(f, "usage: %s [--store DIR] [store options] COMMAND [ARGS]\n\n",
		CTL_NAME);
	fputs("Commands:\n", f);
	for (i = 0; i < NCOMMANDS; i++)
		fprintf(f, "  %-9s %s\n", commands[i].name,
			commands[i].summary);
	fputc('\n', f);
	store_options_help(f);
	fprintf(f,
		"\nRun '%s COMMAND --help' for the arguments of a command.\n"
		"Exit status: 0 success, 1 no such key, 128 error, 129 usage.\n",
		CTL_NAME);
}

static int cmd_help(struct ctl *c, const struct ctl_cmd *cmd, int argc,
		    char **argv)
{
	const struct ctl_cmd *which = NULL;

	(void)c;
	while (ctl_getopt(cmd, argc, argv, NULL, NULL) != -1)
		;
	ctl_want_args(cmd, argc, 0, 1);
	if (optind < argc) {
		which = ctl_cmd_find(argv[optind]);
		if (!which)
			usage_error(NULL, "unknown command '%s'", argv[optind]);
	}
	usage_print(stdout, which);
	ctl_finish_stdout();
	return 0;
}

enum {
	OPT_STORE = 256,
	OPT_SHOW_STATS,
	OPT_HOST,
	OPT_PORT,
	OPT_SOCKET,
	OPT_TRANSPORT,
	OPT_WINDOW,
	OPT_STORE_OPTION, /* + index in gs_option_list */
};

/* Our own options, then the store's (filled in by main). */
#define NGLOBAL 8
static struct option global_options[NGLOBAL + GS_NOPTIONS + 1] = {
	{ "help", no_argument, NULL, 'h' },
	{ "store", required_argument, NULL, OPT_STORE },
	{ "show-stats", no_argument, NULL, OPT_SHOW_STATS },
	{ "host", required_argument, NULL, OPT_HOST },
	{ "port", required_argument, NULL, OPT_PORT },
	{ "socket", required_argument, NULL, OPT_SOCKET },
	{ "transport", required_argument, NULL, OPT_TRANSPORT },
	{ "window", required_argument, NULL, OPT_WINDOW },
};

/* A store option's value that does not parse: a usage error. */
static void store_option(struct gs_options *o, int i, const char *val)
{
	const struct gs_option_desc *d = &gs_option_list[i];
	const char *why;

	if (gs_option_set(o, d->name, val, &why) < 0)
		usage_error(NULL, "invalid %s '%s' for --%s: %s",
			    !strcmp(d->arg, "SIZE") ? "size" : "value", val,
			    d->name, why);
}

static void parse_global(struct ctl *c, int argc, char **argv)
{
	struct gs_options *o = &c->opts;
	int ch, idx;

	opterr = 0;
	/* '+': stop at the command name; its options are its own */
	while ((ch = getopt_long(argc, argv, "+:h", global_options, &idx)) !=
	       -1) {
		switch (ch) {
		case 'h':
			usage_print(stdout, NULL);
			ctl_finish_stdout();
			exit(0);
		case OPT_STORE:
			c->dir = optarg;
			break;
		case OPT_SHOW_STATS:
			c->show_stats = true;
			break;
		case OPT_HOST:
			c->host = optarg;
			break;
		case OPT_PORT:
			c->port = optarg;
			break;
		case OPT_SOCKET:
			if (optarg[0] != '/')
				usage_error(NULL,
					    "--socket '%s': not an absolute "
					    "path",
					    optarg);
			c->socket = optarg;
			break;
		case OPT_TRANSPORT:
			c->transport = ctl_transport_of(optarg);
			if (c->transport == CTL_TRANSPORT_BAD)
				usage_error(NULL,
					    "--transport '%s': tcp, ring or "
					    "rdma",
					    optarg);
			break;
		case OPT_WINDOW:
			if (gs_parse_size(optarg, &c->window) < 0 ||
			    !c->window || c->window > UINT32_MAX)
				usage_error(NULL,
					    "--window '%s': not a size "
					    "from 1 to 4G",
					    optarg);
			break;
		case ':':
			usage_error(NULL, "option '%s' needs a value",
				    argv[optind - 1]);
		default:
			if (ch >= OPT_STORE_OPTION &&
			    ch < OPT_STORE_OPTION + GS_NOPTIONS) {
				store_option(o, ch - OPT_STORE_OPTION, optarg);
				break;
			}
			if (optopt)
				usage_error(NULL, "unknown option '-%c'",
					    optopt);
			usage_error(NULL, "unknown option '%s'",
				    argv[optind - 1]);
		}
	}
}

/* The commands --transport ring|rdma serves. */
static bool ctl_ring_command(const char *name)
{
	static const char *const ok[] = { "get", "put", "del", "stats",
					  "bench" };

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		if (!strcmp(name, ok[i]))
			return true;
	return false;
}

int main(int argc, char **argv)
{
	struct ctl c;
	const struct ctl_cmd *cmd;
	const char *env;
	int ret;

	usage_print = tool_usage;
	prog_name = CTL_NAME;
	memset(&c, 0, sizeof(c));
	gs_option_getopt(&global_options[NGLOBAL], OPT_STORE_OPTION);
	gs_options_init(&c.opts);
	c.opts.preload_heads = false;
	env = getenv("GOBLIN_STORE");
	if (env && *env)
		c.dir = env;

	parse_global(&c, argc, argv);
	if (optind >= argc)
		usage_error(NULL, "no command given");
	cmd = ctl_cmd_find(argv[optind]);
	if (!cmd)
		usage_error(NULL, "unknown command '%s'", argv[optind]);
	if (c.transport == CTL_RING && (!c.host || c.host[0] != '/'))
		usage_error(NULL, "--transport ring needs --host SOCKET_PATH "
				  "(goblind --ring)");
	if (c.transport != CTL_TCP &&
	    (c.socket || !ctl_ring_command(cmd->name)))
		usage_error(NULL,
			    "--transport %s: get, put, del, stats and bench "
			    "only, with --host",
			    c.transport == CTL_RING ? "ring" : "rdma");
	if (c.socket && (c.host || c.port))
		usage_error(NULL, "--socket goes without --host and --port");
	if (c.socket && !strcmp(cmd->name, "bench"))
		usage_error(NULL, "bench runs over TCP only, not --socket");
	if (c.socket)
		c.host = c.socket; /* mcc_connect: a path is a Unix socket */
	if (c.transport == CTL_RDMA && (!c.host || !c.port))
		usage_error(NULL, "--transport rdma needs --host ADDR and "
				  "--port P");
	if (!c.window)
		c.window = 4u << 20;
	if (c.port && !c.host)
		c.host = "127.0.0.1";
	if (!c.port)
		c.port = "11211";
	if (c.host && !cmd->online)
		usage_error(NULL,
			    "'%s' works on a store directory only, not "
			    "with --host",
			    cmd->name);

	argc -= optind;
	argv += optind;
	optind = 0; /* GNU getopt: start afresh on the command's args */
	ret = cmd->fn(&c, cmd, argc, argv);
	ctl_close(&c);
	ctl_finish_stdout();
	return ret;
}
