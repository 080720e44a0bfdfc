/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * goblinctl put and populate: stream files (or standard input, spooled to
 * an unlinked temporary file when its size is unknown) into store writers
 * in CTL_IO_BUF pieces, so memory does not grow with the object size.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ctl.h"

int ctl_put_fd(struct ctl *c, const char *key, size_t klen, int fd,
	       uint64_t size, const struct put_opts *po, const char *what,
	       void *buf)
{
	struct gs_put_args a;
	struct gs_writer *w;
	uint64_t left = size;
	int ret;

	memset(&a, 0, sizeof(a));
	a.size = size;
	a.flags = po->flags;
	a.exptime = po->exptime;
	a.mode = GS_SET;
	ret = gs_put_begin(c->store, key, klen, &a, &w);
	if (ret < 0)
		return error("cannot store '%s': %s", key, gs_strerror(ret));
	while (left) {
		size_t want = left < CTL_IO_BUF ? (size_t)left : CTL_IO_BUF;
		ssize_t n = read_full(fd, buf, want);

		if (n < 0) {
			ret = error("cannot read '%s': %s", what,
				    strerror(errno));
			goto fail;
		}
		if ((size_t)n < want) {
			ret = error("cannot read '%s': file shrank while "
				    "reading (%" PRIu64 " bytes missing)",
				    what, left - (uint64_t)n);
			goto fail;
		}
		ret = gs_put_write(w, buf, (size_t)n);
		if (ret < 0) {
			ret = error("cannot store '%s': %s", key,
				    gs_strerror(ret));
			goto fail;
		}
		left -= (uint64_t)n;
	}
	ret = gs_put_commit(w, NULL);
	if (ret < 0)
		return error("cannot store '%s': %s", key, gs_strerror(ret));
	return 0;
fail:
	gs_put_abort(w);
	return ret;
}

int ctl_spool(int in, const char *dir, uint64_t *size, void *buf)
{
	char *tmpl = NULL;
	int fd, saved;

	fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0) {
		/* file systems without O_TMPFILE: create and unlink */
		if (asprintf(&tmpl, "%s/.goblinctl-spool.XXXXXX", dir) < 0)
			die("out of memory");
		fd = mkostemp(tmpl, O_CLOEXEC);
		if (fd < 0) {
			error("cannot create a spool file in '%s': %s", dir,
			      strerror(errno));
			free(tmpl);
			return -1;
		}
		unlink(tmpl);
		free(tmpl);
	}
	*size = 0;
	for (;;) {
		ssize_t n = read(in, buf, CTL_IO_BUF);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			error("cannot read standard input: %s",
			      strerror(errno));
			goto fail;
		}
		if (n == 0)
			break;
		if (write_all(fd, buf, (size_t)n) < 0) {
			error("cannot write the spool file in '%s': %s", dir,
			      strerror(errno));
			goto fail;
		}
		*size += (uint64_t)n;
	}
	if (lseek(fd, 0, SEEK_SET) < 0) {
		error("cannot rewind the spool file: %s", strerror(errno));
		goto fail;
	}
	return fd;
fail:
	saved = errno;
	close(fd);
	errno = saved;
	return -1;
}

static void parse_put_opt(const struct ctl_cmd *cmd, int ch,
			  struct put_opts *po)
{
	uint64_t v;

	switch (ch) {
	case 'f':
		if (parse_u64(optarg, UINT32_MAX, &v) < 0)
			usage_error(cmd, "invalid value '%s' for --flags",
				    optarg);
		po->flags = (uint32_t)v;
		break;
	case 't':
		/* a relative lifetime; 100 years is plenty */
		if (parse_u64(optarg, 100ull * 366 * 86400, &v) < 0)
			usage_error(cmd, "invalid value '%s' for --ttl",
				    optarg);
		po->exptime = v ? (int64_t)time(NULL) + (int64_t)v : 0;
		break;
	}
}

int cmd_put(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "flags", required_argument, NULL, 'f' },
		{ "ttl", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 },
	};
	struct put_opts po = { 0, 0 };
	const char *key, *file = NULL, *what;
	struct stat st;
	uint64_t size;
	void *buf;
	int ch, fd, ret;

	while ((ch = ctl_getopt(cmd, argc, argv, "", longopts)) != -1)
		parse_put_opt(cmd, ch, &po);
	ctl_want_args(cmd, argc, 1, 2);
	key = argv[optind];
	if (optind + 1 < argc)
		file = argv[optind + 1];
	if (!*key)
		usage_error(cmd, "empty key");
	if (strlen(key) > GS_KEY_MAX)
		usage_error(cmd, "key longer than %d bytes", GS_KEY_MAX);

	/* the input first: a missing file must not create a store */
	if (!file || !strcmp(file, "-")) {
		fd = STDIN_FILENO;
		what = "standard input";
	} else {
		fd = open(file, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			die("cannot open '%s': %s", file, strerror(errno));
		what = file;
	}
	if (fstat(fd, &st) < 0)
		die("cannot stat '%s': %s", what, strerror(errno));
	if (S_ISDIR(st.st_mode))
		die("cannot read '%s': %s", what, strerror(EISDIR));

	buf = malloc(CTL_IO_BUF);
	if (!buf)
		die("out of memory");
	if (!c->host)
		ctl_open(c, true);
	if (S_ISREG(st.st_mode)) {
		/* standard input may be a file already partly read */
		off_t pos = lseek(fd, 0, SEEK_CUR);

		if (pos < 0)
			pos = 0;
		size = pos < st.st_size ? (uint64_t)(st.st_size - pos) : 0;
	} else {
		const char *tmpdir = getenv("TMPDIR");
		int sfd;

		if (!tmpdir || !*tmpdir)
			tmpdir = "/tmp";
		sfd = ctl_spool(fd, c->host ? tmpdir : c->dir, &size, buf);

		if (sfd < 0) {
			free(buf);
			ctl_close(c);
			exit(CTL_EXIT_DIE);
		}
		if (fd != STDIN_FILENO)
			close(fd);
		fd = sfd;
	}
	if (c->host)
		ret = net_put(c, key, fd, size, &po, what, buf);
	else
		ret = ctl_put_fd(c, key, strlen(key), fd, size, &po, what, buf);
	free(buf);
	if (fd != STDIN_FILENO)
		close(fd);
	if (ret < 0) {
		ctl_close(c);
		exit(CTL_EXIT_DIE);
	}
	return 0;
}

/* ---- populate ---- */

struct pop_file {
	char *path; /* relative to the root */
	uint64_t size;
};

/* nftw() has no argument pointer: the walk's state */
static struct {
	const char *root;
	size_t rootlen;
	struct pop_file *files;
	size_t nr, alloc;
	uint64_t bytes;
	int errors;
} walk;

static int walk_one(const char *path, const struct stat *st, int type,
		    struct FTW *ftw)
{
	const char *rel;

	(void)ftw;
	if (type == FTW_DNR || type == FTW_NS) {
		walk.errors++;
		error("cannot read '%s': %s", path, strerror(errno));
		return 0;
	}
	if (type != FTW_F || !S_ISREG(st->st_mode))
		return 0;
	rel = path + walk.rootlen;
	while (*rel == '/')
		rel++;
	if (walk.nr == walk.alloc) {
		size_t n = walk.alloc ? walk.alloc * 2 : 256;
		void *p = realloc(walk.files, n * sizeof(*walk.files));

		if (!p)
			die("out of memory");
		walk.files = p;
		walk.alloc = n;
	}
	walk.files[walk.nr].path = strdup(rel);
	if (!walk.files[walk.nr].path)
		die("out of memory");
	walk.files[walk.nr].size = (uint64_t)st->st_size;
	walk.nr++;
	walk.bytes += (uint64_t)st->st_size;
	return 0;
}

static int pop_file_cmp(const void *a, const void *b)
{
	const struct pop_file *x = a, *y = b;

	return strcmp(x->path, y->path);
}

struct progress {
	bool tty;
	int width; /* longest line drawn */
	double start, last;
	size_t total_files;
	uint64_t total_bytes;
};

static void progress_show(struct progress *p, size_t files, uint64_t bytes,
			  bool done)
{
	double now = gs_mono_ns() / 1e9, el = now - p->start;
	double pct = p->total_bytes ?
			     100.0 * (double)bytes / (double)p->total_bytes :
			     100.0;

	char line[160];
	int n;

	if (!p->tty || (!done && now - p->last < 0.1))
		return;
	p->last = now;
	n = snprintf(line, sizeof(line),
		     "populate: %3.0f%% (%zu/%zu objects, %.1f/%.1f MiB, "
		     "%.1f MiB/s)%s",
		     pct, files, p->total_files, (double)bytes / 1048576.0,
		     (double)p->total_bytes / 1048576.0,
		     el > 0 ? (double)bytes / 1048576.0 / el : 0.0,
		     done ? ", done." : "");
	/* pad over the tail of a longer previous line */
	if (n > p->width)
		p->width = n;
	fprintf(stderr, "\r%-*s%s", p->width, line, done ? "\n" : "");
	fflush(stderr);
}

/*
 * Store file @f of the walk under @prefix + its path below @root.
 * Returns 0, or -1 after printing an error.
 */
static int populate_one(struct ctl *c, const char *prefix, const char *root,
			struct pop_file *f, void *buf)
{
	struct put_opts po = { 0, 0 };
	struct stat st;
	char *path, *key;
	size_t klen;
	int fd, ret = -1;

	if (asprintf(&key, "%s%s", prefix, f->path) < 0 ||
	    asprintf(&path, "%s/%s", root, f->path) < 0)
		die("out of memory");
	klen = strlen(key);
	if (klen > GS_KEY_MAX) {
		error("cannot store '%s': key longer than %d bytes", path,
		      GS_KEY_MAX);
		goto out;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		error("cannot open '%s': %s", path, strerror(errno));
		goto out;
	}
	/* the size now, not at the walk: it may have changed */
	if (fstat(fd, &st) == 0)
		f->size = (uint64_t)st.st_size;
	if (ctl_put_fd(c, key, klen, fd, f->size, &po, path, buf) == 0)
		ret = 0;
	close(fd);
out:
	free(path);
	free(key);
	return ret;
}

int cmd_populate(struct ctl *c, const struct ctl_cmd *cmd, int argc,
		 char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "prefix", required_argument, NULL, 'p' },
		{ NULL, 0, NULL, 0 },
	};
	struct progress prog;
	const char *prefix = "";
	char *root;
	size_t i, done = 0, failed = 0;
	uint64_t bytes = 0, evicted;
	struct gs_stats st0, st1;
	struct stat st;
	double el;
	void *buf;
	int ch;

	while ((ch = ctl_getopt(cmd, argc, argv, "", longopts)) != -1)
		if (ch == 'p')
			prefix = optarg;
	ctl_want_args(cmd, argc, 1, 1);
	root = strdup(argv[optind]);
	if (!root)
		die("out of memory");
	/* "dir/" and "dir" give the same keys */
	for (i = strlen(root); i > 1 && root[i - 1] == '/'; i--)
		root[i - 1] = '\0';
	if (stat(root, &st) < 0)
		die("cannot open '%s': %s", root, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		die("cannot populate from '%s': %s", root, strerror(ENOTDIR));

	memset(&walk, 0, sizeof(walk));
	walk.root = root;
	walk.rootlen = strlen(root);
	if (nftw(root, walk_one, 64, FTW_PHYS) < 0)
		die("cannot walk '%s': %s", root, strerror(errno));
	if (walk.nr)
		qsort(walk.files, walk.nr, sizeof(*walk.files), pop_file_cmp);

	buf = malloc(CTL_IO_BUF);
	if (!buf)
		die("out of memory");
	ctl_open(c, true);

	gs_stats_get(c->store, &st0);
	memset(&prog, 0, sizeof(prog));
	prog.tty = isatty(STDERR_FILENO);
	prog.start = gs_mono_ns() / 1e9;
	prog.total_files = walk.nr;
	prog.total_bytes = walk.bytes;
	for (i = 0; i < walk.nr; i++) {
		if (populate_one(c, prefix, root, &walk.files[i], buf) < 0) {
			failed++;
		} else {
			done++;
			bytes += walk.files[i].size;
		}
		progress_show(&prog, done, bytes, false);
	}
	progress_show(&prog, done, bytes, true);
	el = gs_mono_ns() / 1e9 - prog.start;
	fprintf(stderr,
		"populated %zu objects, %" PRIu64 " bytes in %.2f s "
		"(%.1f MiB/s)\n",
		done, bytes, el, el > 0 ? (double)bytes / 1048576.0 / el : 0.0);
	/* a cache makes room by evicting: say so, the summary alone misleads */
	gs_stats_get(c->store, &st1);
	evicted = (st1.evictions_small - st0.evictions_small) +
		  (st1.evictions_ssd - st0.evictions_ssd);
	if (evicted)
		error("%" PRIu64 " objects were evicted to make room "
		      "(see --small-memory and --ssd-size)",
		      evicted);

	for (i = 0; i < walk.nr; i++)
		free(walk.files[i].path);
	free(walk.files);
	free(buf);
	free(root);
	if (failed || walk.errors) {
		error("%zu files could not be stored",
		      failed + (size_t)walk.errors);
		return CTL_EXIT_MISS;
	}
	return 0;
}
