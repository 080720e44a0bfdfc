/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hddemu [--seek-ms N] [--mbps N] [-f] [-o opts] BACKING_DIR MOUNTPOINT
 *
 * The emulated HDD of WORKLOADS.md ("The slow tier"): a FUSE passthrough
 * of BACKING_DIR whose reads and writes share one spindle.  A request that
 * does not start where the previous one ended (same file, next byte) pays a
 * seek; every byte pays 1/rate.  O_DIRECT opens stay O_DIRECT down to the
 * backing file and bypass the mount's page cache (direct_io).
 */
#define FUSE_USE_VERSION 312

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include <fuse_lowlevel.h>

#include "../store/clock.h"
#include "../store/prog.h"

#define NAME	  "hddemu"
#define MAX_IO	  (1u << 20) /* max_write; the kernel sizes max_pages by it */
#define DIO_ALIGN 4096	     /* buffer alignment for O_DIRECT backing I/O */

/*
 * Threads.  One session thread takes the kernel's requests in the order
 * they were queued: it serves metadata itself and reserves the spindle
 * for reads and writes, then hands them to the I/O threads, which do the
 * backing I/O and reply at the reservation's end.  Worker threads taking
 * requests straight from the kernel would race each other to the spindle
 * and turn an in-order stream into seeks that a real disk, behind an
 * in-order block queue, never sees; and one thread doing all the backing
 * I/O would hold the SSD to one request at a time.
 */
#define IO_THREADS 16

/*
 * The spindle (session thread only).  A request starts when the previous
 * reservation ends, or now if the disk is idle, and ends after its seek
 * and transfer time.  Reservations are back to back in emulated time
 * whatever the lateness of the I/O threads' sleeps, and the backing I/O
 * overlaps the charged time.
 */
struct spindle {
	uint64_t seek_ns;   /* charged for a non-contiguous request */
	double ns_per_byte; /* charged for every byte: 1000 / MB/s */

	uint64_t busy_until; /* ns, CLOCK_MONOTONIC: the last one's end */
	bool moved;	     /* a request has been served */
	dev_t dev;	     /* the file of the last request ... */
	ino_t ino;
	uint64_t end; /* ... and the byte after it */

	uint64_t reads;	      /* read requests charged */
	uint64_t writes;      /* write requests charged */
	uint64_t read_bytes;  /* bytes those reads asked for */
	uint64_t write_bytes; /* bytes those writes carried */
	uint64_t seeks;	      /* requests that paid a seek */
	uint64_t charged_ns;  /* seek and transfer time charged */
};

/* A read or write: the backing I/O, then the reply at @deadline. */
struct job {
	struct job *next;
	fuse_req_t req;
	int fd;
	bool write;
	off_t off;
	size_t size;
	uint64_t deadline;
	void *buf; /* DIO_ALIGN-aligned, kept with the job */
	size_t cap;
};

/*
 * The I/O threads and their queue.  Jobs are taken in the order they
 * were reserved; their entries come from and go back to a free list,
 * buffers included.
 */
struct io_pool {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct job *head, *tail; /* protected by lock */
	struct job *free;	 /* protected by lock */
	bool stop;		 /* protected by lock */
	unsigned nthreads;
	pthread_t threads[IO_THREADS];
};

/*
 * A backing file or directory the kernel knows by its address (the
 * FUSE inode number).  Session thread only, like all of the table.
 */
struct inode {
	struct inode *next, *prev;
	int fd; /* O_PATH */
	dev_t dev;
	ino_t ino;
	uint64_t nlookup; /* the kernel's references */
};

/* An open backing file (fi->fh). */
struct handle {
	int fd;
	dev_t dev; /* the file's identity, for the seek rule */
	ino_t ino;
};

/* An open backing directory (fi->fh). */
struct dir_handle {
	DIR *dp;
	struct dirent *entry; /* read but not yet sent */
	off_t offset;
};

static struct spindle disk;
static struct io_pool pool = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.cond = PTHREAD_COND_INITIALIZER,
};
/* The backing directory, and the head of the list of inodes (a list, as
 * in libfuse's passthrough_ll: an emulated disk holds a few big files). */
static struct inode root = { .next = &root, .prev = &root, .fd = -1 };

/* ---- the spindle ---- */

/* Reserve the spindle for @len bytes at @off of @h; returns the deadline. */
static uint64_t spindle_reserve(struct spindle *sp, const struct handle *h,
				uint64_t off, uint64_t len, bool write)
{
	uint64_t now = (uint64_t)gs_mono_ns(), cost;
	bool seek;

	seek = !sp->moved || h->dev != sp->dev || h->ino != sp->ino ||
	       off != sp->end;
	cost = (uint64_t)((double)len * sp->ns_per_byte + 0.5);
	if (seek)
		cost += sp->seek_ns;
	sp->busy_until = (sp->busy_until > now ? sp->busy_until : now) + cost;
	sp->moved = true;
	sp->dev = h->dev;
	sp->ino = h->ino;
	sp->end = off + len;
	if (write) {
		sp->writes++;
		sp->write_bytes += len;
	} else {
		sp->reads++;
		sp->read_bytes += len;
	}
	sp->seeks += seek;
	sp->charged_ns += cost;
	return sp->busy_until;
}

static void print_counters(const struct spindle *sp)
{
	fprintf(stderr,
		"%s: %" PRIu64 " reads (%" PRIu64 " bytes), %" PRIu64
		" writes (%" PRIu64 " bytes), %" PRIu64
		" seeks, %.3f s charged\n",
		NAME, sp->reads, sp->read_bytes, sp->writes, sp->write_bytes,
		sp->seeks, (double)sp->charged_ns / 1e9);
}

/* ---- the I/O threads ---- */

/* A free job whose buffer holds @size bytes, or NULL (ENOMEM). */
static struct job *job_get(struct io_pool *p, size_t size)
{
	struct job *j;

	pthread_mutex_lock(&p->lock);
	j = p->free;
	if (j)
		p->free = j->next;
	pthread_mutex_unlock(&p->lock);
	if (!j && !(j = calloc(1, sizeof(*j))))
		return NULL;
	if (j->cap < size) {
		free(j->buf);
		j->cap = 0;
		if (posix_memalign(&j->buf, DIO_ALIGN, size)) {
			j->buf = NULL;
			free(j);
			return NULL;
		}
		j->cap = size;
	}
	return j;
}

static void job_put(struct io_pool *p, struct job *j)
{
	pthread_mutex_lock(&p->lock);
	j->next = p->free;
	p->free = j;
	pthread_mutex_unlock(&p->lock);
}

static void job_push(struct io_pool *p, struct job *j)
{
	j->next = NULL;
	pthread_mutex_lock(&p->lock);
	if (p->tail)
		p->tail->next = j;
	else
		p->head = j;
	p->tail = j;
	pthread_cond_signal(&p->cond);
	pthread_mutex_unlock(&p->lock);
}

static void sleep_until(uint64_t deadline)
{
	struct timespec ts = {
		.tv_sec = (time_t)(deadline / 1000000000u),
		.tv_nsec = (long)(deadline % 1000000000u),
	};

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) ==
	       EINTR)
		;
}

static void job_run(struct job *j)
{
	ssize_t n;
	int err;

	n = j->write ? pwrite(j->fd, j->buf, j->size, j->off) :
		       pread(j->fd, j->buf, j->size, j->off);
	err = errno;
	sleep_until(j->deadline);
	if (n < 0)
		fuse_reply_err(j->req, err);
	else if (j->write)
		fuse_reply_write(j->req, (size_t)n);
	else
		fuse_reply_buf(j->req, j->buf, (size_t)n);
}

/* An I/O thread: jobs until stopped and the queue is empty. */
static void *io_thread(void *arg)
{
	struct io_pool *p = arg;
	struct job *j;

	/* wake up on the deadline, not the default 50 us after it */
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	pthread_mutex_lock(&p->lock);
	for (;;) {
		while (!p->head && !p->stop)
			pthread_cond_wait(&p->cond, &p->lock);
		j = p->head;
		if (!j)
			break;
		p->head = j->next;
		if (!p->head)
			p->tail = NULL;
		pthread_mutex_unlock(&p->lock);
		job_run(j);
		job_put(p, j);
		pthread_mutex_lock(&p->lock);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

static void pool_stop(struct io_pool *p)
{
	struct job *j;

	pthread_mutex_lock(&p->lock);
	p->stop = true;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	while (p->nthreads)
		pthread_join(p->threads[--p->nthreads], NULL);
	while ((j = p->free)) {
		p->free = j->next;
		free(j->buf);
		free(j);
	}
}

/* Signals stay with the session thread: its loop is what they stop. */
static int pool_start(struct io_pool *p)
{
	sigset_t all, old;
	int ret = 0;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	while (p->nthreads < IO_THREADS) {
		ret = pthread_create(&p->threads[p->nthreads], NULL, io_thread,
				     p);
		if (ret)
			break;
		p->nthreads++;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret)
		pool_stop(p);
	return -ret;
}

/* ---- inodes ---- */

static struct inode *inode_of(fuse_ino_t ino)
{
	return ino == FUSE_ROOT_ID ? &root : (struct inode *)(uintptr_t)ino;
}

static struct handle *handle_of(const struct fuse_file_info *fi)
{
	return (struct handle *)(uintptr_t)fi->fh;
}

static struct dir_handle *dir_of(const struct fuse_file_info *fi)
{
	return (struct dir_handle *)(uintptr_t)fi->fh;
}

/* /proc/self/fd/N: how an O_PATH fd is opened, truncated, timed */
static void proc_path(char *buf, size_t len, int fd)
{
	snprintf(buf, len, "/proc/self/fd/%d", fd);
}

static void inode_forget(struct inode *n, uint64_t nlookup)
{
	if (n == &root)
		return;
	n->nlookup -= nlookup < n->nlookup ? nlookup : n->nlookup;
	if (n->nlookup)
		return;
	n->prev->next = n->next;
	n->next->prev = n->prev;
	close(n->fd);
	free(n);
}

static void inode_free_all(void)
{
	while (root.next != &root)
		inode_forget(root.next, UINT64_MAX);
	close(root.fd);
}

/* Look @name up in @parent: fills @e, takes a reference for the kernel. */
static int do_lookup(fuse_ino_t parent, const char *name,
		     struct fuse_entry_param *e)
{
	struct inode *n;
	int fd, err;

	memset(e, 0, sizeof(*e));
	fd = openat(inode_of(parent)->fd, name,
		    O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstatat(fd, "", &e->attr, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0)
		goto fail;
	for (n = root.next; n != &root; n = n->next)
		if (n->dev == e->attr.st_dev && n->ino == e->attr.st_ino)
			break;
	if (n != &root) {
		close(fd);
	} else {
		n = calloc(1, sizeof(*n));
		if (!n) {
			errno = ENOMEM;
			goto fail;
		}
		n->fd = fd;
		n->dev = e->attr.st_dev;
		n->ino = e->attr.st_ino;
		n->next = root.next;
		n->prev = &root;
		root.next->prev = n;
		root.next = n;
	}
	n->nlookup++;
	/* no caching: the backing directory may change under us */
	e->ino = (uintptr_t)n;
	return 0;
fail:
	err = errno;
	close(fd);
	return -err;
}

static void reply_entry(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fuse_entry_param e;
	int ret = do_lookup(parent, name, &e);

	if (ret < 0)
		fuse_reply_err(req, -ret);
	else
		fuse_reply_entry(req, &e);
}

/* ---- operations ---- */

/*
 * The kernel sends async (io_uring, AIO) O_DIRECT reads and writes as
 * background requests and blocks the submitter while max_background
 * (libfuse's default: 12) are outstanding.  A disk queues far more than
 * that without blocking whoever submits: let the spindle's queue do the
 * waiting, as a disk's does.
 */
#define MAX_BACKGROUND 256

static void hd_init(void *data, struct fuse_conn_info *conn)
{
	(void)data;
	conn->max_write = MAX_IO;
	conn->max_background = MAX_BACKGROUND;
	conn->congestion_threshold = MAX_BACKGROUND * 3 / 4;
}

static void hd_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	reply_entry(req, parent, name);
}

static void hd_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	inode_forget(inode_of(ino), nlookup);
	fuse_reply_none(req);
}

static void hd_forget_multi(fuse_req_t req, size_t count,
			    struct fuse_forget_data *forgets)
{
	for (size_t i = 0; i < count; i++)
		inode_forget(inode_of(forgets[i].ino), forgets[i].nlookup);
	fuse_reply_none(req);
}

static void reply_attr(fuse_req_t req, fuse_ino_t ino)
{
	struct stat st;

	if (fstatat(inode_of(ino)->fd, "", &st,
		    AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0)
		fuse_reply_err(req, errno);
	else
		fuse_reply_attr(req, &st, 0);
}

static void hd_getattr(fuse_req_t req, fuse_ino_t ino,
		       struct fuse_file_info *fi)
{
	(void)fi;
	reply_attr(req, ino);
}

/* The timestamps of a setattr for utimensat(2). */
static void set_times(struct timespec tv[2], const struct stat *attr, int valid)
{
	tv[0].tv_nsec = tv[1].tv_nsec = UTIME_OMIT;
	if (valid & FUSE_SET_ATTR_ATIME_NOW)
		tv[0].tv_nsec = UTIME_NOW;
	else if (valid & FUSE_SET_ATTR_ATIME)
		tv[0] = attr->st_atim;
	if (valid & FUSE_SET_ATTR_MTIME_NOW)
		tv[1].tv_nsec = UTIME_NOW;
	else if (valid & FUSE_SET_ATTR_MTIME)
		tv[1] = attr->st_mtim;
}

static int do_setattr(struct inode *n, const struct stat *attr, int valid,
		      const struct fuse_file_info *fi)
{
	int fd = fi ? handle_of(fi)->fd : -1;
	struct timespec tv[2];
	char path[64];

	proc_path(path, sizeof(path), n->fd);
	if ((valid & FUSE_SET_ATTR_MODE) &&
	    (fd >= 0 ? fchmod(fd, attr->st_mode) : chmod(path, attr->st_mode)))
		return -errno;
	if ((valid & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)) &&
	    fchownat(n->fd, "",
		     valid & FUSE_SET_ATTR_UID ? attr->st_uid : (uid_t)-1,
		     valid & FUSE_SET_ATTR_GID ? attr->st_gid : (gid_t)-1,
		     AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW))
		return -errno;
	if ((valid & FUSE_SET_ATTR_SIZE) &&
	    (fd >= 0 ? ftruncate(fd, attr->st_size) :
		       truncate(path, attr->st_size)))
		return -errno;
	if (valid & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME)) {
		set_times(tv, attr, valid);
		if (fd >= 0 ? futimens(fd, tv) :
			      utimensat(AT_FDCWD, path, tv, 0))
			return -errno;
	}
	return 0;
}

static void hd_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr,
		       int valid, struct fuse_file_info *fi)
{
	int ret = do_setattr(inode_of(ino), attr, valid, fi);

	if (ret < 0)
		fuse_reply_err(req, -ret);
	else
		reply_attr(req, ino);
}

static void hd_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name,
		     mode_t mode)
{
	if (mkdirat(inode_of(parent)->fd, name, mode) < 0)
		fuse_reply_err(req, errno);
	else
		reply_entry(req, parent, name);
}

static void remove_entry(fuse_req_t req, fuse_ino_t parent, const char *name,
			 int flags)
{
	fuse_reply_err(req, unlinkat(inode_of(parent)->fd, name, flags) < 0 ?
				    errno :
				    0);
}

static void hd_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	remove_entry(req, parent, name, 0);
}

static void hd_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	remove_entry(req, parent, name, AT_REMOVEDIR);
}

static void hd_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
		      fuse_ino_t newparent, const char *newname,
		      unsigned int flags)
{
	fuse_reply_err(req,
		       renameat2(inode_of(parent)->fd, name,
				 inode_of(newparent)->fd, newname, flags) < 0 ?
			       errno :
			       0);
}

/* A handle for @fd, opened with the client's flags in @fi; closes @fd
 * when it fails. */
static int handle_new(int fd, struct fuse_file_info *fi)
{
	struct handle *h;
	struct stat st;
	int err;

	if (fstat(fd, &st) < 0)
		goto fail;
	h = malloc(sizeof(*h));
	if (!h) {
		errno = ENOMEM;
		goto fail;
	}
	h->fd = fd;
	h->dev = st.st_dev;
	h->ino = st.st_ino;
	fi->fh = (uintptr_t)h;
	/* O_DIRECT stays in the flags of the backing open; and past the
	 * mount's page cache, every read and write reaches the spindle */
	fi->direct_io = !!(fi->flags & O_DIRECT);
	return 0;
fail:
	err = errno;
	close(fd);
	return -err;
}

static void hd_create(fuse_req_t req, fuse_ino_t parent, const char *name,
		      mode_t mode, struct fuse_file_info *fi)
{
	struct fuse_entry_param e;
	int fd, ret;

	fd = openat(inode_of(parent)->fd, name,
		    (fi->flags | O_CREAT | O_CLOEXEC) & ~O_NOFOLLOW, mode);
	if (fd < 0) {
		fuse_reply_err(req, errno);
		return;
	}
	ret = handle_new(fd, fi);
	if (ret < 0) {
		fuse_reply_err(req, -ret);
		return;
	}
	ret = do_lookup(parent, name, &e);
	if (ret < 0) {
		close(handle_of(fi)->fd);
		free(handle_of(fi));
		fuse_reply_err(req, -ret);
		return;
	}
	fuse_reply_create(req, &e, fi);
}

static void hd_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	char path[64];
	int fd, ret;

	proc_path(path, sizeof(path), inode_of(ino)->fd);
	fd = open(path, (fi->flags | O_CLOEXEC) & ~O_NOFOLLOW);
	if (fd < 0) {
		fuse_reply_err(req, errno);
		return;
	}
	ret = handle_new(fd, fi);
	if (ret < 0)
		fuse_reply_err(req, -ret);
	else
		fuse_reply_open(req, fi);
}

static void hd_release(fuse_req_t req, fuse_ino_t ino,
		       struct fuse_file_info *fi)
{
	(void)ino;
	close(handle_of(fi)->fd);
	free(handle_of(fi));
	fuse_reply_err(req, 0);
}

/* Reserve the spindle for a read or write of @h; the I/O threads do it. */
static void submit(fuse_req_t req, const struct handle *h, const char *data,
		   size_t size, off_t off)
{
	struct job *j = job_get(&pool, size);

	if (!j) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	j->req = req;
	j->fd = h->fd;
	j->write = data != NULL;
	j->off = off;
	j->size = size;
	j->deadline = spindle_reserve(&disk, h, (uint64_t)off, size, j->write);
	if (data) /* libfuse reuses its buffer; ours is aligned */
		memcpy(j->buf, data, size);
	job_push(&pool, j);
}

static void hd_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	(void)ino;
	submit(req, handle_of(fi), NULL, size, off);
}

static void hd_write(fuse_req_t req, fuse_ino_t ino, const char *buf,
		     size_t size, off_t off, struct fuse_file_info *fi)
{
	(void)ino;
	submit(req, handle_of(fi), buf, size, off);
}

static void hd_fsync(fuse_req_t req, fuse_ino_t ino, int datasync,
		     struct fuse_file_info *fi)
{
	int fd = handle_of(fi)->fd;

	(void)ino;
	fuse_reply_err(req,
		       (datasync ? fdatasync(fd) : fsync(fd)) < 0 ? errno : 0);
}

static void hd_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t off,
			 off_t len, struct fuse_file_info *fi)
{
	(void)ino;
	fuse_reply_err(req, fallocate(handle_of(fi)->fd, mode, off, len) < 0 ?
				    errno :
				    0);
}

static void hd_opendir(fuse_req_t req, fuse_ino_t ino,
		       struct fuse_file_info *fi)
{
	struct dir_handle *d;
	int fd, err;

	d = calloc(1, sizeof(*d));
	if (!d) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	fd = openat(inode_of(ino)->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		goto fail;
	d->dp = fdopendir(fd);
	if (!d->dp) {
		err = errno;
		close(fd);
		errno = err;
		goto fail;
	}
	fi->fh = (uintptr_t)d;
	fuse_reply_open(req, fi);
	return;
fail:
	err = errno;
	free(d);
	fuse_reply_err(req, err);
}

/* Entries from @off into a buffer of @size; offsets are telldir()'s. */
static void hd_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	struct dir_handle *d = dir_of(fi);
	size_t used = 0, n;
	char *buf;

	(void)ino;
	buf = malloc(size);
	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	if (off != d->offset) {
		seekdir(d->dp, off);
		d->entry = NULL;
		d->offset = off;
	}
	for (;;) {
		struct stat st = { 0 };
		off_t next;

		if (!d->entry) {
			errno = 0;
			d->entry = readdir(d->dp);
			if (!d->entry) {
				if (errno && !used) {
					fuse_reply_err(req, errno);
					free(buf);
					return;
				}
				break;
			}
		}
		next = telldir(d->dp);
		st.st_ino = d->entry->d_ino;
		st.st_mode = (mode_t)d->entry->d_type << 12;
		n = fuse_add_direntry(req, buf + used, size - used,
				      d->entry->d_name, &st, next);
		if (n > size - used)
			break;
		used += n;
		d->entry = NULL;
		d->offset = next;
	}
	fuse_reply_buf(req, buf, used);
	free(buf);
}

static void hd_releasedir(fuse_req_t req, fuse_ino_t ino,
			  struct fuse_file_info *fi)
{
	(void)ino;
	closedir(dir_of(fi)->dp);
	free(dir_of(fi));
	fuse_reply_err(req, 0);
}

static void hd_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct statvfs st;

	if (fstatvfs(inode_of(ino)->fd, &st) < 0)
		fuse_reply_err(req, errno);
	else
		fuse_reply_statfs(req, &st);
}

static const struct fuse_lowlevel_ops hd_ops = {
	.init = hd_init,
	.lookup = hd_lookup,
	.forget = hd_forget,
	.forget_multi = hd_forget_multi,
	.getattr = hd_getattr,
	.setattr = hd_setattr,
	.mkdir = hd_mkdir,
	.unlink = hd_unlink,
	.rmdir = hd_rmdir,
	.rename = hd_rename,
	.create = hd_create,
	.open = hd_open,
	.release = hd_release,
	.read = hd_read,
	.write = hd_write,
	.fsync = hd_fsync,
	.fallocate = hd_fallocate,
	.opendir = hd_opendir,
	.readdir = hd_readdir,
	.releasedir = hd_releasedir,
	.statfs = hd_statfs,
};

/* ---- command line ---- */

static const char usage_line[] =
	"usage: hddemu [--seek-ms N] [--mbps N] [-f] [-o opts] BACKING_DIR "
	"MOUNTPOINT\n";

static void usage_print(void)
{
	fputs(usage_line, stdout);
	fputs("\nMount BACKING_DIR on MOUNTPOINT as one emulated hard disk: "
	      "reads and\nwrites are served one after the other; one that does "
	      "not continue the\nprevious request (same file, next byte) "
	      "pays a seek, and every byte\npays 1/rate.  Unmount with "
	      "'fusermount3 -u MOUNTPOINT'.\n\n"
	      "  --seek-ms N    seek time in milliseconds (default 5)\n"
	      "  --mbps N       transfer rate in MB/s of 10^6 bytes "
	      "(default 200)\n"
	      "  -f             stay in the foreground; print the spindle's\n"
	      "                 counters on stderr at unmount\n"
	      "  -o OPT[,OPT]   FUSE mount options (allow_other, "
	      "auto_unmount, ...)\n"
	      "  -h, --help     this text\n"
	      "\nExit status: 0 unmounted, 128 error, 129 usage.\n",
	      stdout);
}

/* A number of @name in [@min, @max]; fractions allowed. */
static double number_opt(const char *name, const char *val, double min,
			 double max)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(val, &end);
	if (errno || end == val || *end || !(v >= min && v <= max))
		usage_die("invalid value '%s' for --%s (%g to %g)", val, name,
			  min, max);
	return v;
}

enum { OPT_SEEK_MS = 256, OPT_MBPS };

static const struct option options[] = {
	{ "help", no_argument, NULL, 'h' },
	{ "seek-ms", required_argument, NULL, OPT_SEEK_MS },
	{ "mbps", required_argument, NULL, OPT_MBPS },
	{ NULL, 0, NULL, 0 },
};

struct cmdline {
	double seek_ms, mbps;
	bool foreground;
	const char *backing, *mountpoint;
	struct fuse_args args; /* for fuse_session_new: -o options */
};

static void add_arg(struct fuse_args *args, const char *arg)
{
	if (fuse_opt_add_arg(args, arg) < 0)
		die("out of memory");
}

static void parse(struct cmdline *c, int argc, char **argv)
{
	int ch;

	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":hfo:", options, NULL)) != -1) {
		switch (ch) {
		case 'h':
			usage_print();
			exit(0);
		case 'f':
			c->foreground = true;
			break;
		case 'o':
			add_arg(&c->args, "-o");
			add_arg(&c->args, optarg);
			break;
		case OPT_SEEK_MS:
			c->seek_ms = number_opt("seek-ms", optarg, 0, 10000);
			break;
		case OPT_MBPS:
			c->mbps = number_opt("mbps", optarg, 0.001, 1e6);
			break;
		case ':':
			usage_die("option '%s' needs a value",
				  argv[optind - 1]);
		default:
			if (optopt)
				usage_die("unknown option '-%c'", optopt);
			usage_die("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		usage_die("no backing directory given");
	if (optind + 1 >= argc)
		usage_die("no mountpoint given");
	if (optind + 2 < argc)
		usage_die("too many arguments ('%s')", argv[optind + 2]);
	c->backing = argv[optind];
	c->mountpoint = argv[optind + 1];
}

/* Mount, serve until unmounted; 0 or -1 (libfuse has said why). */
static int serve(struct cmdline *c)
{
	struct fuse_session *se;
	int ret = -1;

	se = fuse_session_new(&c->args, &hd_ops, sizeof(hd_ops), NULL);
	if (!se)
		return -1;
	if (fuse_set_signal_handlers(se) < 0)
		goto out_destroy;
	if (fuse_session_mount(se, c->mountpoint) < 0) {
		fprintf(stderr, "%s: cannot mount '%s'\n", NAME, c->mountpoint);
		goto out_signals;
	}
	if (fuse_daemonize(c->foreground) < 0)
		goto out_unmount;
	/* after the fork of fuse_daemonize(): threads do not survive it */
	if (pool_start(&pool) < 0) {
		fprintf(stderr, "%s: cannot start the I/O threads\n", NAME);
		goto out_unmount;
	}
	ret = fuse_session_loop(se) < 0 ? -1 : 0;
	pool_stop(&pool);
out_unmount:
	fuse_session_unmount(se);
out_signals:
	fuse_remove_signal_handlers(se);
out_destroy:
	fuse_session_destroy(se);
	return ret;
}

int main(int argc, char **argv)
{
	struct cmdline c = {
		.seek_ms = 5,
		.mbps = 200,
		.args = FUSE_ARGS_INIT(0, NULL),
	};
	char backing[PATH_MAX], *opts;
	int ret;

	prog_name = NAME;
	prog_usage_line = usage_line;
	add_arg(&c.args, NAME);
	parse(&c, argc, argv);
	disk.seek_ns = (uint64_t)(c.seek_ms * 1e6 + 0.5);
	disk.ns_per_byte = 1000.0 / c.mbps;

	if (!realpath(c.backing, backing))
		die("cannot open backing directory '%s': %s", c.backing,
		    strerror(errno));
	root.fd = open(backing, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root.fd < 0)
		die("cannot open backing directory '%s': %s", backing,
		    strerror(errno));
	if (asprintf(&opts,
		     "fsname=hddemu:%s,subtype=hddemu,"
		     "default_permissions",
		     backing) < 0)
		die("out of memory");
	add_arg(&c.args, "-o");
	add_arg(&c.args, opts);

	ret = serve(&c);
	if (c.foreground)
		print_counters(&disk);
	inode_free_all();
	fuse_opt_free_args(&c.args);
	free(opts);
	return ret < 0 ? PROG_EXIT_DIE : 0;
}
