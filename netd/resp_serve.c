/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RESP's part of the daemon's start (main.c calls it): its options and
 * goblin.conf keys, their help lines, its share of --max-conns, its
 * listeners on --resp-port and --resp-unixsocket, and their close.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>
#include <unistd.h>

#include "resp.h"
#include "../store/prog.h"

static int *resp_fds; /* --resp-port's, one per worker; NULL: none */
static struct gd_unix resp_unix = { .fd = -1 };
static bool mask_given;

static const char *const names[] = {
	"resp-port",	 "resp-unixsocket", "resp-unixsocket-mask",
	"resp-password", "resp-max-conns",
};

int resp_getopt(struct option *o, int val)
{
	int n = (int)(sizeof(names) / sizeof(names[0]));

	for (int i = 0; i < n; i++)
		o[i] = (struct option){ names[i], required_argument, NULL,
					val };
	return n;
}

void resp_usage(FILE *f)
{
	fputs("\nRESP, Redis clients (issue 23; also goblin.conf keys):\n"
	      "  --resp-port N          RESP on TCP port N of "
	      "--listen-address (default off)\n"
	      "  --resp-unixsocket PATH  RESP on the Unix socket PATH\n"
	      "  --resp-unixsocket-mask MODE  its mode bits, octal (default "
	      "0700)\n"
	      "  --resp-password PW     clients AUTH with PW first "
	      "(requirepass; default:\n"
	      "                         writes from loopback only)\n"
	      "  --resp-max-conns N     RESP connections at most (default: "
	      "3/4 of --max-conns)\n",
	      f);
}

static bool port_arg(const char *val, unsigned max, unsigned *out)
{
	char *end;
	unsigned long v = strtoul(val, &end, 10);

	if (!*val || *end || val[0] == '-' || v > max)
		return false;
	*out = (unsigned)v;
	return true;
}

bool resp_option(struct gd_settings *s, const char *name, const char *val,
		 const char **why)
{
	char *end;

	*why = NULL;
	if (!strcmp(name, "resp-port")) {
		if (!port_arg(val, 65535, &s->resp_port))
			*why = "not a port number";
		s->resp = true;
	} else if (!strcmp(name, "resp-unixsocket")) {
		if (!*val ||
		    strlen(val) >= sizeof(((struct sockaddr_un *)0)->sun_path))
			*why = "not a socket path (1 to 107 bytes)";
		s->resp_unixsocket = val;
	} else if (!strcmp(name, "resp-unixsocket-mask")) { /* chmod's */
		s->resp_unixsocket_mask = (unsigned)strtoul(val, &end, 8);
		if (*val < '0' || *val > '7' || *end || end - val > 4 ||
		    s->resp_unixsocket_mask > 0777)
			*why = "not an octal mode from 0 to 0777";
		mask_given = true;
	} else if (!strcmp(name, "resp-password")) {
		if (!*val)
			*why = "not a password (empty)";
		s->resp_password = val;
	} else if (!strcmp(name, "resp-max-conns")) {
		if (!port_arg(val, 1u << 20, &s->resp_max_conns) ||
		    !s->resp_max_conns)
			*why = "not a count";
	} else {
		return false;
	}
	return true;
}

/* As HTTP's and memcache's: 3/4 of --max-conns by default. */
void resp_settle(struct gd_settings *s)
{
	unsigned share = s->max_conns - s->max_conns / 4;

	if (!s->resp_max_conns)
		s->resp_max_conns = share ? share : 1;
	if (s->resp_max_conns > s->max_conns)
		usage_die("--resp-max-conns %u is over --max-conns %u",
			  s->resp_max_conns, s->max_conns);
	if (!mask_given)
		s->resp_unixsocket_mask = 0700;
}

static int listen_tcp(struct gd *gd)
{
	char why[512];
	int fd = gd_listen_tcp(gd->set.listen, gd->set.resp_port, "resp-port",
			       gd->set.tcp_congestion, gd->resp_name,
			       sizeof(gd->resp_name), &gd->set.resp_port, why,
			       sizeof(why));

	if (fd < 0)
		die("%s", why);
	return fd;
}

/*
 * Registered after memcache and HTTP, and only when served: on
 * --resp-port (a socket per worker, SO_REUSEPORT), on --resp-unixsocket
 * (one socket every worker polls), or both.  The log lines tests wait for
 * are written once each listens.
 */
void resp_serve(struct gd *gd)
{
	struct gd_settings *s = &gd->set;
	struct gd_proto *p;
	char why[512];

	if (!s->resp && !s->resp_unixsocket)
		return;
	p = gd_proto_add(gd, &resp_ops, s->resp_max_conns);
	if (!p)
		die("too many protocols");
	if (s->resp) {
		if (!(resp_fds = malloc(gd->nworkers * sizeof(int))))
			die("out of memory");
		for (unsigned i = 0; i < gd->nworkers; i++)
			resp_fds[i] = listen_tcp(gd);
		if (gd_listener_add(gd, p, resp_fds) < 0)
			die("too many listeners");
		gd_log(GD_LOG_INFO, "resp on %s", gd->resp_name);
	}
	if (s->resp_unixsocket) {
		if (gd_unix_listen(&resp_unix, s->resp_unixsocket,
				   s->resp_unixsocket_mask, gd->nworkers, why,
				   sizeof(why)) < 0)
			die("%s", why);
		if (gd_listener_add_shared(gd, p, resp_unix.fds) < 0)
			die("too many listeners");
		gd_log(GD_LOG_INFO, "resp on unix socket %s (mode %04o)",
		       s->resp_unixsocket, s->resp_unixsocket_mask);
	}
}

void resp_close(struct gd *gd)
{
	for (unsigned i = 0; resp_fds && i < gd->nworkers; i++)
		if (resp_fds[i] >= 0)
			close(resp_fds[i]);
	free(resp_fds);
	resp_fds = NULL;
	gd_unix_close(&resp_unix);
}
