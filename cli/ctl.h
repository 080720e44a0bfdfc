/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * goblinctl: what the command files share.  The tool context (store
 * directory, options, the open store), git-style error helpers and the
 * command table entries.
 */
#ifndef GOBLINCTL_CTL_H
#define GOBLINCTL_CTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <getopt.h>
#include <sys/types.h>

#include "../store/clock.h"
#include "../store/goblin.h"
#include "../store/prog.h"

#define CTL_NAME   "goblinctl"
#define CTL_IO_BUF (1u << 20) /* put/populate read unit: 1 MiB */

/* Exit codes (git's idiom; 1 is "no such key"). */
#define CTL_EXIT_MISS  1
#define CTL_EXIT_DIE   PROG_EXIT_DIE
#define CTL_EXIT_USAGE PROG_EXIT_USAGE

/* --transport: memcache over TCP (or --socket), goblind --ring, RDMA */
enum ctl_transport { CTL_TCP = 0, CTL_RING, CTL_RDMA, CTL_TRANSPORT_BAD };

struct ctl {
	const char *dir;	/* --store, else $GOBLIN_STORE, else NULL */
	struct gs_options opts; /* from gs_options_init() and the flags */
	struct gs_store *store; /* set by ctl_open() */
	bool show_stats;	/* --show-stats: counters on stderr at exit */
	const char *host;	/* --host: online mode (goblind), else NULL;
				 * --socket PATH: the path ("/...") */
	const char *port;	/* --port, default 11211 */
	const char *socket;	/* --socket PATH, else NULL */
	enum ctl_transport transport; /* --transport, CTL_TCP by default */
	uint64_t window; /* --window: an RDMA get's registered window */
};

struct ctl_cmd {
	const char *name;
	int (*fn)(struct ctl *c, const struct ctl_cmd *cmd, int argc,
		  char **argv);
	const char *synopsis; /* "put [--flags N] [--ttl SECONDS] KEY [FILE]" */
	const char *summary;  /* one line for the command list */
	const char *help;     /* option lines, may be NULL */
	bool online;	      /* also works against goblind (--host) */
};

/* ---- errors (util.c; die() and error() are store/prog.h's) ---- */

/* A usage error: message, the command's usage on stderr, exit 129. */
__attribute__((noreturn, format(printf, 2, 3))) void
usage_error(const struct ctl_cmd *cmd, const char *fmt, ...);
/*
 * The usage of @cmd (NULL: the whole tool) on @f.  goblinctl.c, which holds
 * the command table, sets it first thing in main(); the helpers reach it
 * through this pointer so that they do not depend on the tool's main file.
 */
extern void (*usage_print)(FILE *f, const struct ctl_cmd *cmd);
/* Usage on stderr, exit 129. */
__attribute__((noreturn)) void usage_exit(const struct ctl_cmd *cmd);
/* Flush and check standard output; die on a write failure. */
void ctl_finish_stdout(void);

/* ---- store and helpers (util.c) ---- */

/*
 * Open the store named by c->dir, creating it when @create.  Dies with
 * "cannot open store 'DIR': ..." on failure.
 */
void ctl_open(struct ctl *c, bool create);
/* Print --show-stats counters if asked, then gs_close() the store. */
void ctl_close(struct ctl *c);
/* The open store's counters, one "name value" line each, on @f. */
void ctl_print_stats(struct gs_store *s, FILE *f);

/* Write all of @buf to @fd; 0 or -1 with errno set. */
int write_all(int fd, const void *buf, size_t len);
/* Read up to @len bytes, retrying on EINTR and short reads; -1 on error. */
ssize_t read_full(int fd, void *buf, size_t len);
/* Seconds since the epoch (with nanoseconds) as a local ISO 8601 string. */
void fmt_time_ns(char *buf, size_t len, int64_t ns, bool frac);
/*
 * A temporary file beside @path (the caller renames it over @path at the
 * end), with the mode a new file would get; *@tmp is its name, which the
 * caller frees.  Returns the fd or -1 with errno set.
 */
int ctl_open_temp(const char *path, char **tmp);

/* ---- put (cmd_put.c) ---- */

struct put_opts {
	uint32_t flags;
	int64_t exptime; /* absolute, 0: never */
};

/*
 * Store @size bytes read from @fd under @key, through @buf (CTL_IO_BUF
 * bytes).  @what names the source in messages.  Returns 0, or -1 after
 * printing an error (the put is aborted, nothing becomes visible).
 */
int ctl_put_fd(struct ctl *c, const char *key, size_t klen, int fd,
	       uint64_t size, const struct put_opts *po, const char *what,
	       void *buf);

/*
 * Copy @in to an unlinked temporary file in @dir and rewind it (a pipe's
 * size must be known before a put starts).  Returns the fd, or -1 after
 * printing an error.
 */
int ctl_spool(int in, const char *dir, uint64_t *size, void *buf);

/* ---- online mode: the same commands against goblind (cmd_online.c) ---- */

/* put of @size bytes from @fd; 0, or -1 after printing an error. */
int net_put(struct ctl *c, const char *key, int fd, uint64_t size,
	    const struct put_opts *po, const char *what, void *buf);
/* get to standard output (@out NULL) or FILE; returns an exit code. */
int net_get(struct ctl *c, const char *key, const char *out);
int net_del(struct ctl *c, const char *key);
int net_stats(struct ctl *c);
int net_ls(struct ctl *c, const char *prefix, bool lng);
/* stat and inspect in goblind (goblin stat|inspect); exit codes. */
int net_stat(struct ctl *c, const char *key);
int net_inspect(struct ctl *c, const char *key);
/* The same over goblind's RDMA transport (cmd_rdma.c; --transport rdma):
 * what net_get, net_put, net_del and net_stats return. */
int rdma_net_get(struct ctl *c, const char *key, const char *out);
int rdma_net_put(struct ctl *c, const char *key, int fd, uint64_t size,
		 const struct put_opts *po, const char *what);
int rdma_net_del(struct ctl *c, const char *key);
int rdma_net_stats(struct ctl *c);

/* ---- --transport ring|rdma: goblin's binary protocol (cmd_ring.c) ---- */

/* The transport named @name, or CTL_TRANSPORT_BAD. */
enum ctl_transport ctl_transport_of(const char *name);
/* put, get, del, stats and bench as net_*() and cmd_bench() over the
 * client library: the same exit codes and messages. */
int ctl_ring_put(struct ctl *c, const char *key, int fd, uint64_t size,
		 const struct put_opts *po, const char *what);
int ctl_ring_get(struct ctl *c, const char *key, const char *out);
int ctl_ring_del(struct ctl *c, const char *key);
int ctl_ring_stats(struct ctl *c);
int ctl_ring_bench(struct ctl *c, const struct ctl_cmd *cmd, int argc,
		   char **argv);

/* ---- commands ---- */

int cmd_put(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv);
int cmd_populate(struct ctl *c, const struct ctl_cmd *cmd, int argc,
		 char **argv);
int cmd_get(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv);
int cmd_del(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv);
int cmd_ls(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv);
int cmd_stat(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv);
int cmd_inspect(struct ctl *c, const struct ctl_cmd *cmd, int argc,
		char **argv);
int cmd_stats(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv);
int cmd_bench(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv);

/*
 * Option parsing shared by the commands: getopt_long() over @argv (argv[0]
 * is the command name) with --help added.  Returns the option character,
 * -1 at the end; prints help and exits 0 on --help, exits 129 on an
 * unknown option or a missing argument.
 */
int ctl_getopt(const struct ctl_cmd *cmd, int argc, char **argv,
	       const char *shortopts, const struct option *longopts);
/* Exit 129 unless @min <= argc - optind <= @max. */
void ctl_want_args(const struct ctl_cmd *cmd, int argc, int min, int max);

#endif
