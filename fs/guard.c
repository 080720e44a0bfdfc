/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The mount's guard: a process that ends the FUSE connection when the
 * server dies with one of its threads stuck in the kernel.
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
 * The guard, started at mount, learns from a parent-death signal that the
 * thread that started it is gone.  If the rest of the process has not
 * gone GUARD_GRACE_MS later (its end of a pipe is still open), it writes
 * to the connection's abort file: the lookup fails with ENOTCONN, the
 * stuck thread goes on and dies, and auto_unmount's fusermount3 removes
 * the dead mount.  A clean unmount closes the pipe first, and the guard
 * ends.
 *
 * The guard is this program again (/proc/self/exe), spawned with its own
 * argv and GUARD_ENV set, and caught by guard_main() before main() runs:
 * a fork would share every page of the server's memory copy-on-write for
 * as long as the mount lives, and the server's RAM pools and buffers
 * would then be copied page by page as it writes them.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"

#define GUARD_GRACE_MS 1000
#define GUARD_NAME     "goblin-guard"
#define GUARD_ENV      "GOBLIN_GUARD"
#define GUARD_FD       3 /* the pipe's read end, in the guard */
#define FUSECTL	       "/sys/fs/fuse/connections"

/*
 * The guard's arguments, after argv[0] (GUARD_NAME): the starting thread's
 * /proc/PID/task/TID/stat, the connection's number, the mountpoint, and
 * the server's name for its message.
 */
enum { ARG_TASK = 1, ARG_CONN, ARG_MOUNT, ARG_SERVER, NARGS };

long guard_conn_of(FILE *f, const char *real)
{
	char *line = NULL, *mp = NULL;
	size_t cap = 0;
	long conn = -1;

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
	return conn;
}

/*
 * The FUSE connection of this process's mount on @real; no stat of the
 * mount: nobody answers its requests yet.
 */
static long mount_conn(const char *real)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	long conn;

	if (!f)
		return -1;
	conn = guard_conn_of(f, real);
	fclose(f);
	return conn;
}

/* Has the thread that started the guard ended (a zombie leader, or no
 * more)?  @task: its /proc/PID/task/TID/stat. */
static bool starter_gone(const char *task)
{
	char buf[512], *p;
	ssize_t n;
	int fd = open(task, O_RDONLY | O_CLOEXEC);

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

/* Write "1" to @abort_path, a connection's abort file. */
static bool abort_conn(const char *abort_path)
{
	int fd = open(abort_path, O_WRONLY | O_CLOEXEC);
	bool ok;

	/* fusectl not mounted: mount it where only the guard sees it */
	if (fd < 0 && errno == ENOENT && !unshare(CLONE_NEWNS) &&
	    !mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) &&
	    !mount("fusectl", FUSECTL, "fusectl", 0, NULL))
		fd = open(abort_path, O_WRONLY | O_CLOEXEC);
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

/*
 * The guard's life, when this process is one: before main(), in both
 * programs that link the mount.  Its standard error is the server's.
 */
__attribute__((constructor)) static void guard_main(int argc, char **argv)
{
	struct pollfd p = { .fd = GUARD_FD, .events = POLLIN };
	struct sigaction sa;
	sigset_t all, wait_mask;
	char abort_path[96];

	if (argc != NARGS || strcmp(argv[0], GUARD_NAME) || !getenv(GUARD_ENV))
		return;
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = wake;
	sigaction(SIGUSR2, &sa, NULL);
	wait_mask = all;
	sigdelset(&wait_mask, SIGUSR2);
	prctl(PR_SET_NAME, GUARD_NAME);
	prctl(PR_SET_PDEATHSIG, SIGUSR2);

	/*
	 * Readable: the end (the whole process has gone, or unmounted).  A
	 * signal: the parent-death signal, or someone else's SIGUSR2.  A
	 * signal before ppoll waits is held until ppoll unblocks it.
	 */
	while (!starter_gone(argv[ARG_TASK]))
		if (ppoll(&p, 1, NULL, &wait_mask) > 0)
			_exit(0);
	if (poll(&p, 1, GUARD_GRACE_MS) == 0) {
		snprintf(abort_path, sizeof(abort_path), FUSECTL "/%s/abort",
			 argv[ARG_CONN]);
		if (abort_conn(abort_path))
			dprintf(STDERR_FILENO,
				"%s: the server died with a thread stuck in "
				"the kernel: FUSE connection %s of %s "
				"aborted\n",
				argv[ARG_SERVER], argv[ARG_CONN],
				argv[ARG_MOUNT]);
		else
			dprintf(STDERR_FILENO,
				"%s: the server died with a thread stuck in "
				"the kernel, and FUSE connection %s of %s "
				"cannot be aborted: echo 1 > %s as root\n",
				argv[ARG_SERVER], argv[ARG_CONN],
				argv[ARG_MOUNT], abort_path);
		poll(&p, 1, -1);
	}
	_exit(0);
}

void gfs_guard(struct gfs *fs)
{
	static char name[] = GUARD_NAME, env[] = GUARD_ENV "=1";
	char task[64], conn_s[24];
	char *argv[NARGS + 1], *envp[] = { env, NULL };
	posix_spawn_file_actions_t fa;
	long conn;
	int p[2];
	pid_t pid;

	if (!fs->mounted || fs->guard_fd >= 0 || !fs->mount_path ||
	    (conn = mount_conn(fs->mount_path)) < 0 || pipe2(p, O_CLOEXEC) < 0)
		return;
	snprintf(task, sizeof(task), "/proc/%d/task/%d/stat", getpid(),
		 gettid());
	snprintf(conn_s, sizeof(conn_s), "%ld", conn);
	argv[0] = name;
	argv[ARG_TASK] = task;
	argv[ARG_CONN] = conn_s;
	argv[ARG_MOUNT] = fs->mount_path;
	argv[ARG_SERVER] = program_invocation_short_name;
	argv[NARGS] = NULL;
	/*
	 * Nothing of the server's, least of all its /dev/fuse, and no end
	 * of a pipe that someone reads to its end: only standard error.
	 */
	posix_spawn_file_actions_init(&fa);
	if (!posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null",
					      O_RDONLY, 0) &&
	    !posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null",
					      O_WRONLY, 0) &&
	    !posix_spawn_file_actions_adddup2(&fa, p[0], GUARD_FD) &&
	    !posix_spawn_file_actions_addclosefrom_np(&fa, GUARD_FD + 1) &&
	    !posix_spawn(&pid, "/proc/self/exe", &fa, NULL, argv, envp)) {
		fs->guard_fd = p[1];
		fs->guard_pid = pid;
		p[1] = -1;
	}
	posix_spawn_file_actions_destroy(&fa);
	close(p[0]);
	if (p[1] >= 0)
		close(p[1]);
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
