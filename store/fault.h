/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fault injection in the store's I/O, for tests (RocksDB's
 * FaultInjectionTestFS in spirit).  Every pread, pwrite, fsync, rename,
 * fallocate, ftruncate and io_uring read or write of the store goes
 * through one check, FAULT(), which costs a load and a predicted branch
 * while nothing is armed.  Armed, a seeded table decides, per I/O, whether
 * the I/O at this step of this operation fails, and how:
 *
 *   EIO     the I/O fails, nothing is written or read
 *   SHORT   half of it is done and reported (the caller must go on or fail)
 *   ENOSPC  the I/O fails with ENOSPC, nothing written
 *   TORN    half of it is written, then it fails with EIO (a torn write;
 *           for a read, a short read that fails)
 *
 * Steps are set by the entry points (put, commit, delete, rename, journal
 * rewrite, recovery, read, and eviction inside them) in a thread-local, so
 * a rule can aim at one.
 * Arm from a test with fault_arm(), or for a whole process with
 * GOBLIN_FAULTS=SEED:STEP:CLASS:ONE_IN (STEP and CLASS a name or "*"),
 * read at gs_open.  Injected faults are counted per class in gs_stats.
 */
#ifndef GS_FAULT_H
#define GS_FAULT_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <unistd.h>
#include <sys/types.h>

enum fault_step {
	FS_NONE = 0, /* outside any operation below */
	FS_PUT,	     /* gs_put_begin, gs_put_write: data writes, eviction */
	FS_COMMIT,   /* gs_put_commit: the last data, sync, the record */
	FS_DELETE,   /* gs_delete */
	FS_RENAME,   /* gs_rename */
	FS_REWRITE,  /* journal rewrite (compaction) */
	FS_RECOVERY, /* gs_open: replay, rewrite at open, head preload */
	FS_READ,     /* gs_get_open, reads, streaming */
	FS_META,     /* gs_touch, gs_set_attr */
	FS_EVICT,    /* an eviction's DEL record, inside a put */
	FS_NSTEPS
};

enum fault_class { FC_EIO = 0, FC_SHORT, FC_ENOSPC, FC_TORN, FC_NCLASSES };

extern int fault_on;		    /* a rule is armed */
extern __thread uint8_t fault_step; /* enum fault_step */

struct gs_store;

/*
 * Arm: from now on an I/O at @step (FS_NONE: any) fails with @cls (-1: a
 * class drawn from @seed) with chance 1/@one_in, from its @skip+1-th
 * matching I/O on, at most @max times (0: no bound).
 */
void fault_arm(uint64_t seed, int step, int cls, uint32_t one_in, uint32_t skip,
	       uint32_t max);
void fault_disarm(void);
/* Faults injected since fault_arm (every store). */
uint64_t fault_count(void);
/* Matching I/Os seen since fault_arm. */
uint64_t fault_seen(void);
/* Parse GOBLIN_FAULTS if set: 0, or -EINVAL on a malformed value. */
int fault_env(void);
const char *fault_step_name(int step);
const char *fault_class_name(int cls);

/* The class to inject into this I/O, or -1.  Counts it in @s. */
int fault_pick(struct gs_store *s);

#define FAULT(s) (__builtin_expect(fault_on, 0) ? fault_pick(s) : -1)
/* Enter a step; FAULT_STEP_SAVE/RESTORE around nested ones. */
#define FAULT_STEP(st)                             \
	do {                                       \
		if (__builtin_expect(fault_on, 0)) \
			fault_step = (st);         \
	} while (0)

/*
 * Within a step, the I/O about to be done ("rename", "fsync" ...), so that
 * a rule can aim at one site of an operation (fault_arm_site); NULL
 * outside any.  Thread-local, set only while a rule is armed.  The journal
 * rewrite's (jmaint.c): "pad", "open", "pread", "write", "tail read",
 * "tail write", "fsync", "reopen", "rename", "dir fsync".
 */
extern __thread const char *fault_site;
#define FAULT_SITE(name)                           \
	do {                                       \
		if (__builtin_expect(fault_on, 0)) \
			fault_site = (name);       \
	} while (0)
/* Narrow the armed rule to the I/Os at @site (NULL: every site). */
void fault_arm_site(const char *site);
/* Arm a rule that fails nothing but sleeps @usec before each I/O at @step
 * and @site (NULL: any): to hold an operation at a point for a test. */
void fault_delay_arm(int step, const char *site, uint32_t usec);
/* The site of the last fault injected, or NULL. */
const char *fault_last_site(void);

/* The errno an I/O failing with @cls reports. */
static inline int fault_errno(int cls)
{
	return cls == FC_ENOSPC ? ENOSPC : EIO;
}

/*
 * The store's I/O calls.  Each is the plain system call while nothing is
 * armed; the slow paths (fault.c) inject.  Same returns as the calls.
 */
struct io_uring_sqe;
struct gs_io;
ssize_t fault_pwrite(struct gs_store *s, int fd, const void *buf, size_t len,
		     off_t off);
ssize_t fault_pread(struct gs_store *s, int fd, void *buf, size_t len,
		    off_t off);
int fault_call(struct gs_store *s); /* -1 with errno set, or 0 */
/* An io_uring read or write prepared in @sqe for @io: maybe shorten it, or
 * make it a no-op that completes with an error. */
void fault_sqe(struct gs_store *s, struct io_uring_sqe *sqe, struct gs_io *io);

static inline ssize_t f_pwrite(struct gs_store *s, int fd, const void *buf,
			       size_t len, off_t off)
{
	if (__builtin_expect(!fault_on, 1))
		return pwrite(fd, buf, len, off);
	return fault_pwrite(s, fd, buf, len, off);
}

static inline ssize_t f_pread(struct gs_store *s, int fd, void *buf, size_t len,
			      off_t off)
{
	if (__builtin_expect(!fault_on, 1))
		return pread(fd, buf, len, off);
	return fault_pread(s, fd, buf, len, off);
}

/* For calls that either work or fail (fsync, rename, fallocate...):
 * `if (F_CALL(s) < 0 || fsync(fd) < 0)` */
#define F_CALL(s) (__builtin_expect(fault_on, 0) ? fault_call(s) : 0)

static inline void f_sqe(struct gs_store *s, struct io_uring_sqe *sqe,
			 struct gs_io *io)
{
	if (__builtin_expect(fault_on, 0))
		fault_sqe(s, sqe, io);
}

#endif
