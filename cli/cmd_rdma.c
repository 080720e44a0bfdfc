/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * goblinctl --transport rdma: get, put, del and stats over goblind's
 * RDMA transport (cli/rdma_client.h), as net_* do over memcache.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../netd/gproto.h"
#include "ctl.h"
#include "rdma_client.h"

#define RDMA_TIMEOUT_MS 30000 /* emulated RDMA (rxe) is slow: be patient */

static struct grc *rdma_open(struct ctl *c)
{
	char err[512];
	struct grc *g = grc_connect(c->host, c->port, c->window,
				    RDMA_TIMEOUT_MS, err, sizeof(err));

	if (!g)
		die("%s", err);
	return g;
}

static void rdma_check_key(const char *key)
{
	size_t n = strlen(key);

	if (!n || n > GP_KEY_MAX)
		die("invalid key '%s': keys are 1 to %d bytes", key,
		    GP_KEY_MAX);
}

struct fd_sink {
	int fd;
	const char *name;
	int err;
};

static int to_fd(void *arg, const void *p, size_t n, uint64_t off)
{
	struct fd_sink *s = arg;

	(void)off; /* in order: the client checks the offsets */
	if (write_all(s->fd, p, n) < 0) {
		s->err = errno;
		return -1;
	}
	return 0;
}

int rdma_net_get(struct ctl *c, const char *key, const char *out)
{
	struct fd_sink s = { STDOUT_FILENO, "standard output", 0 };
	struct grc *g;
	char *tmp = NULL;
	int ret;

	rdma_check_key(key);
	g = rdma_open(c);
	if (out) {
		s.fd = ctl_open_temp(out, &tmp);
		if (s.fd < 0)
			die("cannot create '%s': %s", out, strerror(errno));
		s.name = tmp;
	}
	ret = grc_get(g, key, strlen(key), to_fd, &s, NULL, NULL);
	if (ret == 1) {
		error("no such key '%s'", key);
	} else if (ret < 0 && s.err) {
		error("cannot write '%s': %s", s.name, strerror(s.err));
	} else if (ret < 0) {
		error("cannot read '%s': %s", key, grc_error(g));
	} else if (out && close(s.fd) < 0) {
		ret = error("cannot write '%s': %s", tmp, strerror(errno));
	} else if (out && rename(tmp, out) < 0) {
		ret = error("cannot rename '%s' to '%s': %s", tmp, out,
			    strerror(errno));
	}
	if (out && ret != 0)
		unlink(tmp);
	free(tmp);
	grc_close(g);
	return ret == 1 ? CTL_EXIT_MISS : ret < 0 ? CTL_EXIT_DIE : 0;
}

int rdma_net_put(struct ctl *c, const char *key, int fd, uint64_t size,
		 const struct put_opts *po, const char *what)
{
	struct grc *g;
	uint8_t *val;
	ssize_t got;
	int64_t ttl = po->exptime ? po->exptime - (int64_t)time(NULL) : 0;
	int ret;

	rdma_check_key(key);
	if (size > UINT32_MAX)
		die("cannot store '%s': over RDMA a value is at most 4 GiB",
		    key);
	/* the server pulls the value from this buffer by RDMA READ */
	val = malloc(size ? size : 1);
	if (!val)
		die("out of memory");
	got = read_full(fd, val, size);
	if (got < 0)
		die("cannot read '%s': %s", what, strerror(errno));
	if ((uint64_t)got < size)
		die("cannot read '%s': file shrank while reading", what);
	g = rdma_open(c);
	ret = grc_set(g, key, strlen(key), val, size, po->flags,
		      ttl > 0	  ? (uint32_t)ttl :
		      po->exptime ? 1 :
				    0);
	if (ret < 0)
		error("cannot store '%s': %s", key, grc_error(g));
	grc_close(g);
	free(val);
	return ret;
}

int rdma_net_del(struct ctl *c, const char *key)
{
	struct grc *g;
	int ret;

	rdma_check_key(key);
	g = rdma_open(c);
	ret = grc_del(g, key, strlen(key));
	if (ret == 1)
		error("no such key '%s'", key);
	else if (ret < 0)
		error("cannot delete '%s': %s", key, grc_error(g));
	grc_close(g);
	return ret == 1 ? CTL_EXIT_MISS : ret < 0 ? CTL_EXIT_DIE : 0;
}

int rdma_net_stats(struct ctl *c)
{
	struct fd_sink s = { STDOUT_FILENO, "standard output", 0 };
	struct grc *g = rdma_open(c);
	int ret = grc_stats(g, to_fd, &s);

	if (ret < 0)
		error("cannot read the stats: %s", grc_error(g));
	grc_close(g);
	return ret < 0 ? CTL_EXIT_DIE : 0;
}
