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
	{"put", cmd_put, "put [--flags N] [--ttl SECONDS] KEY [FILE]",
	 "store FILE (default: standard input) under KEY",
	 "  --flags N           32-bit client flags stored with the object\n"
	 "  --ttl SECONDS       expire the object after SECONDS (0: never)\n"
	 "FILE '-' is standard input.\n"},
	{"get", cmd_get, "get KEY [-o FILE]",
	 "write the value of KEY to standard output or FILE",
	 "  -o, --output FILE   write to FILE (replaced whole, at the end)\n"
	 "                      instead of standard output; '-': stdout\n"},
	{"del", cmd_del, "del KEY", "delete KEY", NULL},
	{"ls", cmd_ls, "ls [-l] [PREFIX]",
	 "list the keys starting with PREFIX, sorted",
	 "  -l, --long          also show size and modification time\n"},
	{"stat", cmd_stat, "stat KEY", "show the metadata of KEY", NULL},
	{"inspect", cmd_inspect, "inspect KEY",
	 "show which tier holds each byte range of KEY", NULL},
	{"stats", cmd_stats, "stats", "show the store's counters", NULL},
	{"populate", cmd_populate, "populate [--prefix P] DIR",
	 "store every regular file under DIR, keyed by its relative path",
	 "  --prefix P          put P in front of every key\n"},
	{"help", cmd_help, "help [COMMAND]", "show the help of a command", NULL},
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static const char store_options_help[] =
	"Store options (SIZE: 4096, 256K, 64M, 2MiB, 1G ...).  The store\n"
	"remembers --memory, --small-memory, --block, --ram-head, --ssd-size\n"
	"and --ssd-floor: one not given is as the store last ran.\n"
	"  --store DIR            the store directory (default: $GOBLIN_STORE)\n"
	"  --memory SIZE          RAM head pool\n"
	"  --small-memory SIZE    packed small-object arena\n"
	"  --block SIZE           head pool allocation unit\n"
	"  --ram-head SIZE        head slot size: bytes of an object kept in RAM\n"
	"  --io-chunk SIZE        tail read unit\n"
	"  --write-io-chunk SIZE  tail write unit\n"
	"  --io-depth N           tail reads in flight per reader\n"
	"  --ssd-dir DIR          SSD tier directory (default: DIR/ssd)\n"
	"  --ssd-size SIZE        SSD tier capacity (default: free space)\n"
	"  --ssd-floor SIZE       with no --ssd-size: bytes left free\n"
	"  --no-mlock             do not lock the RAM pools\n"
	"  --no-hugetlb           do not try HugeTLB pages\n"
	"  --preload-heads        read hot heads back into RAM at open\n"
	"  --sync                 fdatasync data and journal at each commit\n"
	"  --show-stats           print the counters of this run on stderr\n";

static const struct ctl_cmd *ctl_cmd_find(const char *name)
{
	size_t i;

	for (i = 0; i < NCOMMANDS; i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

void usage_print(FILE *f, const struct ctl_cmd *cmd)
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
		fprintf(f, "  %-9s %s\n", commands[i].name, commands[i].summary);
	fputc('\n', f);
	fputs(store_options_help, f);
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
	OPT_MEMORY,
	OPT_SMALL_MEMORY,
	OPT_BLOCK,
	OPT_RAM_HEAD,
	OPT_IO_CHUNK,
	OPT_WRITE_IO_CHUNK,
	OPT_IO_DEPTH,
	OPT_SSD_DIR,
	OPT_SSD_SIZE,
	OPT_SSD_FLOOR,
	OPT_NO_MLOCK,
	OPT_NO_HUGETLB,
	OPT_PRELOAD_HEADS,
	OPT_SYNC,
	OPT_SHOW_STATS,
};

static const struct option global_options[] = {
	{"help", no_argument, NULL, 'h'},
	{"store", required_argument, NULL, OPT_STORE},
	{"memory", required_argument, NULL, OPT_MEMORY},
	{"small-memory", required_argument, NULL, OPT_SMALL_MEMORY},
	{"block", required_argument, NULL, OPT_BLOCK},
	{"ram-head", required_argument, NULL, OPT_RAM_HEAD},
	{"io-chunk", required_argument, NULL, OPT_IO_CHUNK},
	{"write-io-chunk", required_argument, NULL, OPT_WRITE_IO_CHUNK},
	{"io-depth", required_argument, NULL, OPT_IO_DEPTH},
	{"ssd-dir", required_argument, NULL, OPT_SSD_DIR},
	{"ssd-size", required_argument, NULL, OPT_SSD_SIZE},
	{"ssd-floor", required_argument, NULL, OPT_SSD_FLOOR},
	{"no-mlock", no_argument, NULL, OPT_NO_MLOCK},
	{"no-hugetlb", no_argument, NULL, OPT_NO_HUGETLB},
	{"preload-heads", no_argument, NULL, OPT_PRELOAD_HEADS},
	{"sync", no_argument, NULL, OPT_SYNC},
	{"show-stats", no_argument, NULL, OPT_SHOW_STATS},
	{NULL, 0, NULL, 0},
};

static void size_opt(const char *name, const char *val, uint64_t *out)
{
	int ret = gs_parse_size(val, out);

	if (ret < 0)
		usage_error(NULL, "invalid size '%s' for --%s: %s", val, name,
			    gs_strerror(ret));
}

static void parse_global(struct ctl *c, int argc, char **argv)
{
	struct gs_options *o = &c->opts;
	uint64_t v;
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
		case OPT_MEMORY:
			size_opt("memory", optarg, &o->memory);
			break;
		case OPT_SMALL_MEMORY:
			size_opt("small-memory", optarg, &o->small_memory);
			break;
		case OPT_BLOCK:
			size_opt("block", optarg, &o->block);
			break;
		case OPT_RAM_HEAD:
			size_opt("ram-head", optarg, &o->ram_head);
			break;
		case OPT_IO_CHUNK:
			size_opt("io-chunk", optarg, &o->io_chunk);
			break;
		case OPT_WRITE_IO_CHUNK:
			size_opt("write-io-chunk", optarg, &o->write_io_chunk);
			break;
		case OPT_IO_DEPTH:
			if (parse_u64(optarg, 4096, &v) < 0 || !v)
				usage_error(NULL,
					    "invalid value '%s' for --io-depth",
					    optarg);
			o->io_depth = (unsigned)v;
			break;
		case OPT_SSD_DIR:
			o->ssd_dir = optarg;
			break;
		case OPT_SSD_SIZE:
			size_opt("ssd-size", optarg, &o->ssd_size);
			break;
		case OPT_SSD_FLOOR:
			size_opt("ssd-floor", optarg, &o->ssd_floor);
			break;
		case OPT_NO_MLOCK:
			o->no_mlock = true;
			break;
		case OPT_NO_HUGETLB:
			o->no_hugetlb = true;
			break;
		case OPT_PRELOAD_HEADS:
			o->preload_heads = true;
			break;
		case OPT_SYNC:
			o->sync = true;
			break;
		case OPT_SHOW_STATS:
			c->show_stats = true;
			break;
		case ':':
			usage_error(NULL, "option '%s' needs a value",
				    argv[optind - 1]);
		default:
			if (optopt)
				usage_error(NULL, "unknown option '-%c'",
					    optopt);
			usage_error(NULL, "unknown option '%s'",
				    argv[optind - 1]);
		}
	}
}

int main(int argc, char **argv)
{
	struct ctl c;
	const struct ctl_cmd *cmd;
	const char *env;
	int ret;

	memset(&c, 0, sizeof(c));
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

	argc -= optind;
	argv += optind;
	optind = 0;	/* GNU getopt: start afresh on the command's args */
	ret = cmd->fn(&c, cmd, argc, argv);
	ctl_close(&c);
	ctl_finish_stdout();
	return ret;
}
