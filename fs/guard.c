/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The mount's guard: a child process that ends the FUSE connection when
 * the server dies with one of its threads stuck in the kernel.
 *
 * A thread that tells the kernel to forget a name (notify_inval_entry)
 * waits, uninterruptibly, for the directory's lock, and a lookup in that
 * directory holds the lock while it waits for our answer.  Killed (kill
 * -9, the OOM killer), the server's other threads die and the answer
 * never comes: the notifying thread waits forever, and so the process
 * never ends, its /dev/fuse descriptor stays open, the kernel never ends
 * the connection, and every process that touches the mount hangs.  Only
 * an abort through fusectl breaks the cycle, and nothing of the dead
 * server can do it.
 *
 * The guard, forked at mount, learns from a parent-death signal that the
 * thread that mounted is gone.  If the rest of the process has not gone
 * GUARD_GRACE_MS later (its end of a pipe is still open), it writes to
 * the connection's abort file: the lookup fails with ENOTCONN, the stuck
 * thread goes on and dies, and auto_unmount's fusermount3 removes the
 * dead mount.  A clean unmount closes the pipe first, and the guard ends.
 *
 * The child of a threaded process, it makes system calls only: every
 * path and message is written before the fork.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"

#define GUARD_GRACE_MS 1000
#define FUSECTL	       "/sys/fs/fuse/connections"

struct guard {
	int null;	/* /dev/null, for standard input and output */
	char task[64];	/* /proc/PID/task/TID/stat of the mounting thread */
	char abort[96]; /* FUSECTL/N/abort */
	char done[PATH_MAX + 160];
	char failed[PATH_MAX + 160];
};

/*
 * The FUSE connection of the mount on @real (a resolved path), from
 * /proc/self/mountinfo: the kernel names it after the superblock's device
 * number.  -1 when the mount is not found.  No stat of the mount: nobody
 * answers its requests yet.
 */
static long mount_conn(const char *real)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char *line = NULL, *mp = NULL;
	size_t cap = 0;
	long conn = -1;

	if (!f)
		return -1;
	while (getline(&line, &cap, f) > 0) {
		unsigned maj, min;
		char *dash = strstr(line, " - ");
		char *s, *d;

		free(mp);
		mp = NULL;
		if (!dash || strncmp(dash + 3, "fuse", 4) ||
		    sscanf(line, "%*u %*u %u:%u %*s %ms", &maj, &min, &mp) != 3)
			continue;
		/* octal escapes: \040 for a space, \011, \012, \134 */
		for (s = d = mp; *s; s++, d++) {
			if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' &&
			    s[2] >= '0' && s[2] <= '7' && s[3] >= '0' &&
			    s[3] <= '7') {
				*d = (char)((s[1] - '0') << 6 |
					    (s[2] - '0') << 3 | (s[3] - '0'));
				s += 3;
			} else {
				*d = *s;
			}
		}
		*d = '\0';
		/* the last one wins: the mount on top */
		if (!strcmp(mp, real))
			conn = (long)((maj << 20) | min);
	}
	free(mp);
	free(line);
	fclose(f);
	return conn;
}

/* Has the thread that mounted ended (a zombie leader, or no more)? */
static bool mounter_gone(const struct guard *g)
{
	char buf[512], *p;
	ssize_t n;
	int fd = open(g->task, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return true;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return true;
	buf[n] = '\0';
	p = strrchr(buf, ')'); /* after the command, which may hold any */
	return !p || p[1] != ' ' || p[2] == 'Z' || p[2] == 'X';
}

static void say(const char *msg)
{
	ssize_t n = write(STDERR_FILENO, msg, strlen(msg));

	(void)n;
}

static bool abort_conn(const struct guard *g)
{
	int fd = open(g->abort, O_WRONLY | O_CLOEXEC);
	bool ok;

	/* fusectl not mounted: mount it where only the guard sees it */
	if (fd < 0 && errno == ENOENT && !unshare(CLONE_NEWNS) &&
	    !mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) &&
	    !mount("fusectl", FUSECTL, "fusectl", 0, NULL))
		fd = open(g->abort, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ok = write(fd, "1", 1) == 1;
	close(fd);
	return ok;
}

static void wake(int sig)
{
	(void)sig; /* only ends ppoll */
}

__attribute__((noreturn)) static void guard_run(const struct guard *g, int rfd)
{
	struct pollfd p = { .fd = rfd, .events = POLLIN };
	struct sigaction sa;
	sigset_t all, wait_mask;

	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = wake;
	sigaction(SIGUSR2, &sa, NULL);
	wait_mask = all;
	sigdelset(&wait_mask, SIGUSR2);
	prctl(PR_SET_NAME, "goblin-guard");
	prctl(PR_SET_PDEATHSIG, SIGUSR2);
	/*
	 * Nothing of the server's, least of all its /dev/fuse, and no end
	 * of a pipe that someone reads to its end: only standard error.
	 */
	dup2(g->null, STDIN_FILENO);
	dup2(g->null, STDOUT_FILENO);
	if (rfd > 3)
		close_range(3, (unsigned)rfd - 1, 0);
	close_range((unsigned)rfd + 1, ~0u, 0);

	/*
	 * Readable: the end (the whole process has gone, or unmounted).  A
	 * signal: the parent-death signal, or someone else's SIGUSR2.  A
	 * signal before ppoll waits is held until ppoll unblocks it.
	 */
	while (!mounter_gone(g))
		if (ppoll(&p, 1, NULL, &wait_mask) > 0)
			_exit(0);
	if (poll(&p, 1, GUARD_GRACE_MS) == 0) {
		say(abort_conn(g) ? g->done : g->failed);
		poll(&p, 1, -1);
	}
	_exit(0);
}

void gfs_guard(struct gfs *fs)
{
	const char *real = fs->mount_path;
	struct guard g;
	long conn;
	int p[2];
	pid_t pid;

	if (!fs->mounted || fs->guard_fd >= 0 || !real ||
	    (conn = mount_conn(real)) < 0)
		return;
	snprintf(g.task, sizeof(g.task), "/proc/%d/task/%d/stat", getpid(),
		 gettid());
	snprintf(g.abort, sizeof(g.abort), FUSECTL "/%ld/abort", conn);
	snprintf(g.done, sizeof(g.done),
		 "%s: the server died with a thread stuck in the kernel: "
		 "FUSE connection %ld of %s aborted\n",
		 program_invocation_short_name, conn, real);
	snprintf(g.failed, sizeof(g.failed),
		 "%s: the server died with a thread stuck in the kernel, "
		 "and FUSE connection %ld of %s cannot be aborted: "
		 "echo 1 > %s as root\n",
		 program_invocation_short_name, conn, real, g.abort);
	if ((g.null = open("/dev/null", O_RDWR | O_CLOEXEC)) < 0)
		return;
	if (pipe2(p, O_CLOEXEC) < 0) {
		close(g.null);
		return;
	}
	pid = fork();
	if (pid == 0) {
		close(p[1]);
		guard_run(&g, p[0]);
	}
	close(g.null);
	close(p[0]);
	if (pid < 0) {
		close(p[1]);
		return;
	}
	fs->guard_fd = p[1];
	fs->guard_pid = pid;
}

void guard_stop(struct gfs *fs)
{
	if (fs->guard_fd < 0)
		return;
	close(fs->guard_fd);
	fs->guard_fd = -1;
	while (waitpid(fs->guard_pid, NULL, 0) < 0 && errno == EINTR)
		;
}
