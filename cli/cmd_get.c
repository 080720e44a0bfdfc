/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * goblinctl get and del.  get streams the pinned version chunk by chunk
 * (head first) to standard output or to a temporary file renamed over the
 * target at the end, and checks the whole value against its XXH3.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "ctl.h"

/*
 * Copy the reader's chunks to @fd.  Returns 0, or -1 after printing an
 * error; bytes already written stay written (they were verified).
 */
static int stream_out(struct gs_reader *r, const char *key, int fd,
		      const char *oname)
{
	const struct gs_meta *m = gs_reader_meta(r);
	uint64_t size = m->size, want = m->xxh3, off = 0;
	XXH3_state_t *h = XXH3_createState();
	struct gs_chunk ch;
	int ret;

	if (!h)
		die("out of memory");
	XXH3_64bits_reset(h);
	while ((ret = gs_reader_next(r, &ch)) > 0) {
		if (ch.off != off || ch.len > size - off) {
			ret = error("cannot read '%s': chunk at %" PRIu64
				    "+%zu out of order (expected %" PRIu64 ")",
				    key, ch.off, ch.len, off);
			goto out;
		}
		if (write_all(fd, ch.data, ch.len) < 0) {
			ret = error("cannot write '%s': %s", oname,
				    strerror(errno));
			goto out;
		}
		XXH3_64bits_update(h, ch.data, ch.len);
		off += ch.len;
	}
	if (ret < 0) {
		ret = error("cannot read '%s': %s", key, gs_strerror(ret));
		goto out;
	}
	if (off != size) {
		ret = error("cannot read '%s': object ended at byte %" PRIu64
			    " of %" PRIu64,
			    key, off, size);
		goto out;
	}
	if (XXH3_64bits_digest(h) != want) {
		ret = error("cannot read '%s': value does not match its "
			    "checksum",
			    key);
		goto out;
	}
	ret = 0;
out:
	XXH3_freeState(h);
	return ret;
}

int cmd_get(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "output", required_argument, NULL, 'o' },
		{ NULL, 0, NULL, 0 },
	};
	const char *key, *out = NULL;
	struct gs_reader *r;
	char *tmp = NULL;
	int ch, fd, ret;

	while ((ch = ctl_getopt(cmd, argc, argv, "o:", longopts)) != -1)
		if (ch == 'o')
			out = optarg;
	ctl_want_args(cmd, argc, 1, 1);
	key = argv[optind];
	if (out && !strcmp(out, "-"))
		out = NULL;
	if (c->host)
		return net_get(c, key, out);

	ctl_open(c, false);
	ret = gs_get_open(c->store, key, strlen(key), 0, &r);
	if (ret == -ENOENT) {
		error("no such key '%s'", key);
		return CTL_EXIT_MISS;
	}
	if (ret < 0)
		die("cannot read '%s': %s", key, gs_strerror(ret));

	if (out) {
		fd = ctl_open_temp(out, &tmp);
		if (fd < 0) {
			ret = errno;
			gs_reader_close(r);
			die("cannot create '%s': %s", out, strerror(ret));
		}
	} else {
		fd = STDOUT_FILENO;
	}
	ret = stream_out(r, key, fd, out ? tmp : "standard output");
	gs_reader_close(r);
	if (!out) {
		if (ret < 0) {
			ctl_close(c);
			exit(CTL_EXIT_DIE);
		}
		return 0;
	}
	if (ret == 0 && close(fd) < 0)
		ret = error("cannot write '%s': %s", tmp, strerror(errno));
	else if (ret < 0)
		close(fd);
	if (ret == 0 && rename(tmp, out) < 0)
		ret = error("cannot rename '%s' to '%s': %s", tmp, out,
			    strerror(errno));
	if (ret < 0) {
		unlink(tmp);
		free(tmp);
		ctl_close(c);
		exit(CTL_EXIT_DIE);
	}
	free(tmp);
	return 0;
}

int cmd_del(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv)
{
	const char *key;
	int ret;

	while (ctl_getopt(cmd, argc, argv, NULL, NULL) != -1)
		;
	ctl_want_args(cmd, argc, 1, 1);
	key = argv[optind];
	if (c->host)
		return net_del(c, key);
	ctl_open(c, false);
	ret = gs_delete(c->store, key, strlen(key));
	if (ret == -ENOENT) {
		error("no such key '%s'", key);
		return CTL_EXIT_MISS;
	}
	if (ret < 0)
		die("cannot delete '%s': %s", key, gs_strerror(ret));
	return 0;
}
