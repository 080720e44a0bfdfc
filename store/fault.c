/* SPDX-License-Identifier: BSD-3-Clause */
/* Fault injection in the store's I/O (see fault.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "fault.h"

int fault_on;
__thread uint8_t fault_step;
__thread const char *fault_site;

static pthread_mutex_t fault_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	uint64_t rng;
	int step, cls;
	uint32_t one_in, skip, max;
	uint64_t seen, fired;
	const char *site;      /* only I/Os at this site, if set */
	const char *last_site; /* of the last fault injected */
	uint32_t delay_us;     /* a delay rule: sleep, fail nothing */
} F;

static const char *const step_names[FS_NSTEPS] = {
	"*",	   "put",      "commit", "delete", "rename",
	"rewrite", "recovery", "read",	 "meta",   "evict",
};
static const char *const class_names[FC_NCLASSES] = {
	"eio",
	"short",
	"enospc",
	"torn",
};

const char *fault_step_name(int step)
{
	return step >= 0 && step < FS_NSTEPS ? step_names[step] : "?";
}

const char *fault_class_name(int cls)
{
	return cls >= 0 && cls < FC_NCLASSES ? class_names[cls] : "*";
}

static uint64_t splitmix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void fault_arm(uint64_t seed, int step, int cls, uint32_t one_in, uint32_t skip,
	       uint32_t max)
{
	pthread_mutex_lock(&fault_lock);
	F.rng = seed;
	F.step = step;
	F.cls = cls;
	F.one_in = one_in ? one_in : 1;
	F.skip = skip;
	F.max = max;
	F.seen = F.fired = 0;
	F.site = F.last_site = NULL;
	F.delay_us = 0;
	__atomic_store_n(&fault_on, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&fault_lock);
}

void fault_arm_site(const char *site)
{
	pthread_mutex_lock(&fault_lock);
	F.site = site;
	pthread_mutex_unlock(&fault_lock);
}

void fault_delay_arm(int step, const char *site, uint32_t usec)
{
	fault_arm(0, step, FC_EIO, 1, 0, 0);
	pthread_mutex_lock(&fault_lock);
	F.site = site;
	F.delay_us = usec;
	pthread_mutex_unlock(&fault_lock);
}

const char *fault_last_site(void)
{
	const char *site;

	pthread_mutex_lock(&fault_lock);
	site = F.last_site;
	pthread_mutex_unlock(&fault_lock);
	return site;
}

static bool site_matches(void)
{
	return !F.site || (fault_site && !strcmp(F.site, fault_site));
}

void fault_disarm(void)
{
	pthread_mutex_lock(&fault_lock);
	__atomic_store_n(&fault_on, 0, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&fault_lock);
}

uint64_t fault_count(void)
{
	uint64_t n;

	pthread_mutex_lock(&fault_lock);
	n = F.fired;
	pthread_mutex_unlock(&fault_lock);
	return n;
}

uint64_t fault_seen(void)
{
	uint64_t n;

	pthread_mutex_lock(&fault_lock);
	n = F.seen;
	pthread_mutex_unlock(&fault_lock);
	return n;
}

static int name_index(const char *s, size_t n, const char *const *names,
		      int count)
{
	for (int i = 0; i < count; i++)
		if (strlen(names[i]) == n && strncmp(s, names[i], n) == 0)
			return i;
	return -2;
}

int fault_env(void)
{
	static int parsed; /* once a process: a reopen does not re-arm */
	const char *e = getenv("GOBLIN_FAULTS"), *p, *q;
	unsigned long long seed, one_in;
	int step, cls;
	char *end;

	if (!e || !*e || __atomic_exchange_n(&parsed, 1, __ATOMIC_ACQ_REL))
		return 0;
	/* SEED:STEP:CLASS:ONE_IN */
	seed = strtoull(e, &end, 0);
	if (end == e || *end != ':')
		return -EINVAL;
	p = end + 1;
	q = strchr(p, ':');
	if (!q)
		return -EINVAL;
	step = name_index(p, (size_t)(q - p), step_names, FS_NSTEPS);
	p = q + 1;
	q = strchr(p, ':');
	if (!q || step < 0)
		return -EINVAL;
	cls = (q - p == 1 && *p == '*') ?
		      -1 :
		      name_index(p, (size_t)(q - p), class_names, FC_NCLASSES);
	if (cls < -1)
		return -EINVAL;
	one_in = strtoull(q + 1, &end, 0);
	if (*end || one_in == 0 || one_in > UINT32_MAX)
		return -EINVAL;
	fault_arm(seed, step, cls, (uint32_t)one_in, 0, 0);
	return 0;
}

int fault_pick(struct gs_store *s)
{
	uint32_t delay = 0;
	int cls = -1;

	pthread_mutex_lock(&fault_lock);
	if (fault_on && (F.step == FS_NONE || F.step == fault_step) &&
	    site_matches() && F.delay_us) {
		F.seen++;
		delay = F.delay_us;
	} else if (fault_on && (F.step == FS_NONE || F.step == fault_step) &&
		   site_matches() && F.seen++ >= F.skip &&
		   (!F.max || F.fired < F.max) &&
		   splitmix(&F.rng) % F.one_in == 0) {
		cls = F.cls >= 0 ? F.cls :
				   (int)(splitmix(&F.rng) % FC_NCLASSES);
		F.fired++;
		F.last_site = fault_site;
	}
	pthread_mutex_unlock(&fault_lock);
	if (delay)
		usleep(delay);
	if (cls >= 0 && s)
		stat_add_idx(s, STAT_IDX(faults_eio) + (size_t)cls, 1);
	return cls;
}

/* Half of @len, kept to 4 KiB multiples on an O_DIRECT @fd; 0: none. */
static size_t half(int fd, size_t len)
{
	int fl = fd >= 0 ? fcntl(fd, F_GETFL) : 0;

	if (fl >= 0 && (fl & O_DIRECT))
		return len / 2 & ~(size_t)4095;
	return len / 2;
}

ssize_t fault_pwrite(struct gs_store *s, int fd, const void *buf, size_t len,
		     off_t off)
{
	int cls = fault_pick(s);
	size_t h = half(fd, len);
	ssize_t n;

	if (cls < 0)
		return pwrite(fd, buf, len, off);
	if ((cls == FC_SHORT || cls == FC_TORN) && h) {
		n = pwrite(fd, buf, h, off);
		if (cls == FC_SHORT || n < 0)
			return n;
	}
	errno = fault_errno(cls);
	return -1;
}

ssize_t fault_pread(struct gs_store *s, int fd, void *buf, size_t len,
		    off_t off)
{
	int cls = fault_pick(s);
	size_t h = half(fd, len);

	if (cls < 0)
		return pread(fd, buf, len, off);
	if (cls == FC_SHORT && h)
		return pread(fd, buf, h, off);
	errno = EIO; /* no ENOSPC on a read; a torn read is a failed one */
	return -1;
}

int fault_call(struct gs_store *s)
{
	int cls = fault_pick(s);

	if (cls < 0)
		return 0;
	errno = fault_errno(cls);
	return -1;
}

void fault_sqe(struct gs_store *s, struct io_uring_sqe *sqe, struct gs_io *io)
{
	bool write = sqe->opcode == IORING_OP_WRITE;
	int cls = fault_pick(s);
	size_t h;

	if (cls < 0)
		return;
	h = half(sqe->fd, sqe->len);
	if (cls == FC_SHORT && h) {
		sqe->len = (unsigned)h; /* a real short read or write */
		return;
	}
	if (cls == FC_TORN && write && h) {
		sqe->len = (unsigned)h; /* half lands, then EIO */
		io->fault = -EIO;
		return;
	}
	io_uring_prep_nop(sqe);
	io->fault = write ? -fault_errno(cls) : -EIO;
}
