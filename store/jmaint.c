/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Journal maintenance: the journal rewritten to its live records, on a
 * maintenance thread and off the store lock (memcached compacts extstore
 * the same way), so that puts, gets and deletes go on while it runs.
 *
 * A rewrite takes a snapshot of the live objects' records under the lock
 * (metadata only: no I/O) at a journal offset P0, writes them to
 * journal.new without the lock (the small values read back from the old
 * journal, where they are immutable below P0), then copies what was
 * journaled meanwhile, [P0, end), after them: replay of the new file is
 * the snapshot, then every change since.  The last of that copy, the
 * sync, the rename and the directory's sync are under the lock, once no
 * reserved record is being written (jm_drain).  A failure leaves the old
 * journal in use and is counted, logged and retried with a backoff.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "clock.h"
#include "internal.h"

#define JOURNAL_REWRITE_MIN (64ull << 20)
/* copied without the lock while the tail is longer than this */
#define JM_TAIL_LOCKED	    (1u << 20)
#define JM_BUF		    (1u << 20)
/* retries: 50 ms, doubling, at most 10 s */
#define JM_BACKOFF_MS	    50u
#define JM_BACKOFF_MAX_MS   10000u

/* One live object of the snapshot. */
struct jm_ent {
	uint64_t cas;  /* which version: o->jsnap is only a hint */
	uint64_t hoff; /* its record (a small one's without its
			* value) in the snapshot buffer */
	uint64_t len;  /* the whole record's length */
	uint64_t size; /* small: value bytes, at jpos in the old
			* journal; 0 for a large one */
	uint64_t jpos;
	uint64_t oldjlen; /* o->jlen at the snapshot */
	uint64_t newpos;  /* small: where the value is in the new file */
	bool small;
};

struct jm_run {
	struct gs_store *s;
	char tmp[4096], path[4096];
	int oldfd;	 /* the journal being rewritten */
	int fd, dfd;	 /* journal.new, buffered and O_DIRECT */
	uint64_t p0;	 /* where the snapshot was taken */
	uint64_t total;	 /* snapshot bytes written */
	uint64_t start;	 /* where the tail goes: ALIGN4K(total) */
	uint64_t copied; /* old journal offset copied up to */
	struct jm_ent *e;
	uint64_t n;
	uint8_t *hdr; /* the snapshot's records */
	uint64_t hlen;
	uint8_t *buf; /* staging, JM_BUF or one record's worth */
	size_t cap;
	bool swapped; /* journal.new is the journal now */
};

/* gs_close asks, and the rewrite looks without the lock between I/Os. */
static bool stopping(const struct gs_store *s)
{
	return __atomic_load_n(&s->jm_stop, __ATOMIC_RELAXED);
}

/* Is the journal due?  Lock held. */
static bool rewrite_due(const struct gs_store *s)
{
	uint64_t min = JOURNAL_REWRITE_MIN;

	/*
	 * Journal garbage grows with replaces and deletes; rewrite when it
	 * wins.  A journal on the SSD tier's file system counts in the
	 * tier's capacity: there it is rewritten once its garbage would
	 * take an eighth of it, so that dead records do not crowd out live
	 * objects on a small tier.
	 */
	if (s->jshare[TIER_SSD] && s->cap[TIER_SSD] / 8 < min)
		min = s->cap[TIER_SSD] / 8;
	return s->jbytes > min && s->jbytes > 2 * s->jlive;
}

void journal_maybe_rewrite(struct gs_store *s)
{
	if (s->jm_started && !s->jm_want && rewrite_due(s)) {
		s->jm_want = true;
		pthread_cond_signal(&s->jm_cond);
	}
}

/*
 * Wait until no reserved record is being written, and have puts write
 * theirs under the lock meanwhile (writer.c), so that it happens soon.
 * Lock held (dropped while waiting); the caller ends it with jm_drain--.
 */
static void quiesce(struct gs_store *s)
{
	s->jm_drain++;
	while (s->jinflight)
		pthread_cond_wait(&s->jm_quiet, &s->lock);
}

/* Room for @len more bytes in the snapshot buffer. */
static int hdr_room(struct jm_run *m, uint64_t *cap, uint64_t len)
{
	uint8_t *nb;
	uint64_t want = *cap;

	if (m->hlen + len <= *cap)
		return 0;
	while (want < m->hlen + len)
		want = want ? 2 * want : 1u << 16;
	nb = realloc(m->hdr, want);
	if (!nb)
		return -ENOMEM;
	m->hdr = nb;
	*cap = want;
	return 0;
}

/*
 * The live objects' records as they are now, at journal offset m->p0,
 * which is made 4 KiB aligned (by zeros, replay's padding) so that the
 * direct records of the tail keep their alignment in the new file.
 * Lock held, nothing in flight.
 */
static int snapshot(struct jm_run *m)
{
	struct gs_store *s = m->s;
	struct idx_node *n = NULL;
	uint64_t pos = 0, cap = 0, seq = 0;
	static const uint8_t zeros[4096];
	uint64_t pad = ALIGN4K(s->jbytes) - s->jbytes;
	int ret;

	if (pad) {
		FAULT_SITE("pad");
		ret = pwrite_full(s, s->jfd, zeros, pad, s->jbytes);
		if (ret < 0)
			return ret;
		s->jbytes += pad;
		if (s->jalloc < s->jbytes)
			s->jalloc = s->jbytes;
	}
	m->p0 = m->copied = s->jbytes;
	m->oldfd = s->jfd;
	m->e = malloc((s->idx.count + 1) * sizeof(*m->e));
	if (!m->e)
		return -ENOMEM;
	while ((n = index_next(&s->idx, &pos, n))) {
		struct gs_obj *o = list_entry(n, struct gs_obj, node);
		struct jm_ent *e = &m->e[m->n];
		struct jrec r;

		obj_jrec(o, ++seq, &r);
		e->len = jrec_size(&r);
		e->small = o->small;
		e->size = o->small ? o->size : 0;
		e->jpos = o->jpos;
		e->cas = o->cas;
		e->oldjlen = o->jlen;
		e->hoff = m->hlen;
		if (hdr_room(m, &cap, e->len - e->size) < 0)
			return -ENOMEM;
		if (o->small)
			m->hlen += jrec_encode_head(&r, m->hdr + m->hlen);
		else
			jrec_encode(&r, o->ext, o->csum, m->hdr + m->hlen);
		if (!o->small)
			m->hlen += e->len;
		o->jsnap = (uint32_t)++m->n;
	}
	return 0;
}

static int flush(struct jm_run *m, size_t *used)
{
	int ret;

	if (!*used)
		return 0;
	FAULT_SITE("write");
	ret = pwrite_full(m->s, m->fd, m->buf, *used, m->total - *used);
	*used = 0;
	return ret;
}

/* The snapshot to journal.new, the small values read back.  Unlocked. */
static int write_snapshot(struct jm_run *m)
{
	struct gs_store *s = m->s;
	size_t used = 0;
	int ret;

	for (uint64_t i = 0; i < m->n && !stopping(s); i++) {
		struct jm_ent *e = &m->e[i];
		uint8_t *p;

		if (used + e->len > m->cap && (ret = flush(m, &used)) < 0)
			return ret;
		if (e->len > m->cap) {
			uint8_t *nb = realloc(m->buf, e->len);

			if (!nb)
				return -ENOMEM;
			m->buf = nb;
			m->cap = e->len;
		}
		p = m->buf + used;
		memcpy(p, m->hdr + e->hoff, e->len - e->size);
		if (e->small) {
			FAULT_SITE("pread");
			ret = pread_full(s, m->oldfd, p + e->len - e->size,
					 e->size, e->jpos);
			if (ret < 0)
				return ret;
			jrec_seal(p);
			e->newpos = m->total + e->len - e->size;
		}
		used += e->len;
		m->total += e->len;
	}
	if (stopping(s))
		return -ECANCELED;
	ret = flush(m, &used);
	m->start = ALIGN4K(m->total); /* zeros between: replay's padding */
	return ret;
}

/* Old journal bytes [m->copied, @end) after the snapshot. */
static int copy_tail(struct jm_run *m, uint64_t end)
{
	while (m->copied < end) {
		size_t len = end - m->copied < m->cap ? end - m->copied :
							m->cap;
		int ret;

		FAULT_SITE("tail read");
		ret = pread_full(m->s, m->oldfd, m->buf, len, m->copied);
		FAULT_SITE("tail write");
		if (ret == 0)
			ret = pwrite_full(m->s, m->fd, m->buf, len,
					  m->start + (m->copied - m->p0));
		if (ret < 0)
			return ret;
		m->copied += len;
	}
	return 0;
}

/* Follow the journal without the lock while it runs ahead.  Unlocked. */
static int catch_up(struct jm_run *m)
{
	struct gs_store *s = m->s;
	uint64_t end;
	int ret;

	for (int i = 0; i < 8; i++) {
		pthread_mutex_lock(&s->lock);
		quiesce(s);
		end = s->jbytes;
		s->jm_drain--;
		pthread_mutex_unlock(&s->lock);
		if (stopping(s))
			return -ECANCELED;
		if (end - m->copied <= JM_TAIL_LOCKED)
			break;
		ret = copy_tail(m, end);
		if (ret < 0)
			return ret;
	}
	/* the bulk synced here, so that the sync under the lock is short */
	FAULT_SITE("fsync");
	if (F_CALL(s) < 0 || fdatasync(m->fd) < 0)
		return -errno;
	return 0;
}

/* Sync the directory that holds the journal. */
static int dir_sync(struct gs_store *s)
{
	int fd, ret = 0;

	FAULT_SITE("dir fsync");
	fd = open(s->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || F_CALL(s) < 0 || fsync(fd) < 0)
		ret = -errno;
	if (fd >= 0)
		close(fd);
	return ret;
}

/*
 * The new file is the journal: positions and live bytes in its terms.  A
 * snapshot object still live (its jsnap entry has its cas) has its record
 * where the snapshot put it, plus what it journaled since (a rename); any
 * other record is in the tail, moved by start - p0.  Lock held.
 */
static void swap_in(struct jm_run *m)
{
	struct gs_store *s = m->s;
	struct idx_node *n = NULL;
	uint64_t pos = 0, jlive = 0;

	close(s->jfd);
	s->jfd = m->fd;
	m->fd = -1;
	if (s->jdfd >= 0)
		close(s->jdfd);
	s->jdfd = m->dfd;
	m->dfd = -1;
	while ((n = index_next(&s->idx, &pos, n))) {
		struct gs_obj *o = list_entry(n, struct gs_obj, node);
		struct jm_ent *e = o->jsnap && o->jsnap <= m->n ?
					   &m->e[o->jsnap - 1] :
					   NULL;

		/* a stale jsnap (of a failed run) names another object's
		 * entry, whose cas is not this one's */
		if (e && e->cas == o->cas) {
			if (o->small)
				o->jpos = e->newpos;
			if (o->jlen >= e->oldjlen)
				o->jlen = e->len + (o->jlen - e->oldjlen);
		} else if (o->small) {
			assert(o->jpos >= m->p0);
			o->jpos = o->jpos - m->p0 + m->start;
		}
		o->jsnap = 0;
		jlive += o->jlen;
	}
	s->jbytes = s->jbytes > m->p0 ? m->start + (s->jbytes - m->p0) :
					m->total;
	s->jalloc = s->jbytes;
	s->jlive = jlive;
}

/* The last of the tail, the sync, the rename: under the lock. */
static int finish(struct jm_run *m)
{
	struct gs_store *s = m->s;
	int ret;

	quiesce(s);
	ret = copy_tail(m, s->jbytes);
	FAULT_SITE("fsync");
	if (ret == 0 && (F_CALL(s) < 0 || fdatasync(m->fd) < 0))
		ret = -errno;
	if (ret == 0) {
		/* O_DIRECT refused here: every record buffered (-1) */
		FAULT_SITE("reopen");
		if (F_CALL(s) < 0)
			ret = -errno;
		else if ((m->dfd = open(m->tmp,
					O_WRONLY | O_DIRECT | O_CLOEXEC)) < 0 &&
			 errno != EINVAL)
			ret = -errno;
	}
	FAULT_SITE("rename");
	if (ret == 0 && (F_CALL(s) < 0 || rename(m->tmp, m->path) < 0))
		ret = -errno;
	if (ret == 0) {
		/* it is the journal now: nothing below may fail it */
		swap_in(m);
		m->swapped = true;
		ret = dir_sync(s);
		/* the rename may not last: the next rewrite syncs again */
		s->jm_force = ret < 0;
	}
	s->jm_drain--;
	return ret;
}

static void run_release(struct jm_run *m)
{
	if (m->fd >= 0) {
		close(m->fd);
		unlink(m->tmp);
	}
	if (m->dfd >= 0)
		close(m->dfd);
	free(m->e);
	free(m->hdr);
	free(m->buf);
}

/*
 * One rewrite, lock held on entry and return, dropped while the bulk is
 * written.  Only the maintenance thread (or gs_open, before it runs)
 * changes s->jfd, so the old journal stays open while it is read here.
 */
int journal_rewrite(struct gs_store *s)
{
	struct jm_run m = { .s = s, .fd = -1, .dfd = -1, .cap = JM_BUF };
	uint8_t step = fault_step;
	int ret;

	FAULT_STEP(FS_REWRITE);
	snprintf(m.tmp, sizeof(m.tmp), "%s/journal.new", s->dir);
	snprintf(m.path, sizeof(m.path), "%s/journal", s->dir);
	quiesce(s);
	ret = snapshot(&m);
	s->jm_drain--;
	if (ret < 0)
		goto fail_locked;
	pthread_mutex_unlock(&s->lock);
	m.buf = malloc(m.cap);
	FAULT_SITE("open");
	if (!m.buf)
		ret = -ENOMEM;
	else if (F_CALL(s) < 0 ||
		 (m.fd = open(m.tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC,
			      0644)) < 0)
		ret = -errno;
	if (ret == 0)
		ret = write_snapshot(&m);
	if (ret == 0)
		ret = catch_up(&m);
	pthread_mutex_lock(&s->lock);
	if (ret == 0 && s->jm_stop)
		ret = -ECANCELED;
	if (ret == 0)
		ret = finish(&m);
	if (ret == 0)
		stat_add(s, journal_rewrites, 1);
fail_locked:
	/* a failed run leaves objects' jsnap set: harmless, see swap_in */
	run_release(&m);
	fault_site = NULL;
	FAULT_STEP(step);
	return ret;
}

static unsigned backoff_ms(unsigned failures)
{
	unsigned ms = JM_BACKOFF_MS << (failures < 8 ? failures : 8);

	return ms < JM_BACKOFF_MAX_MS ? ms : JM_BACKOFF_MAX_MS;
}

/* The maintenance thread: a rewrite when one is due, retried on error. */
static void *jmaint_main(void *arg)
{
	struct gs_store *s = arg;
	uint64_t retry_at = 0;

	pthread_mutex_lock(&s->lock);
	while (!s->jm_stop) {
		struct timespec ts;
		uint64_t t = (uint64_t)gs_mono_ms();
		unsigned ms;
		int ret;

		if (!s->jm_want || t < retry_at) {
			if (!s->jm_want) {
				pthread_cond_wait(&s->jm_cond, &s->lock);
				continue;
			}
			ts = gs_clock_after(CLOCK_REALTIME,
					    (int64_t)(retry_at - t) * 1000000);
			pthread_cond_timedwait(&s->jm_cond, &s->lock, &ts);
			continue;
		}
		s->jm_want = false;
		if (!s->jm_force && !rewrite_due(s))
			continue;
		ret = journal_rewrite(s);
		if (ret == -ECANCELED && s->jm_stop)
			break;
		if (ret == 0) {
			s->jm_failures = 0;
			continue;
		}
		/* counted, said once, and tried again later: never dropped */
		ms = backoff_ms(s->jm_failures++);
		stat_add(s, journal_rewrite_errors, 1);
		fprintf(stderr,
			"goblin: cannot rewrite the journal of '%s': "
			"%s; the old one stays in use, retry in %u ms\n",
			s->dir, strerror(-ret), ms);
		retry_at = (uint64_t)gs_mono_ms() + ms;
		s->jm_want = true;
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

int jmaint_start(struct gs_store *s)
{
	sigset_t all, old;
	int ret;

	/* a library's thread takes none of the program's signals */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = pthread_create(&s->jm_thread, NULL, jmaint_main, s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret)
		return -ret;
	pthread_setname_np(s->jm_thread, "goblin-jmaint");
	pthread_mutex_lock(&s->lock);
	s->jm_started = true;
	journal_maybe_rewrite(s);
	pthread_mutex_unlock(&s->lock);
	return 0;
}

void jmaint_stop(struct gs_store *s)
{
	pthread_mutex_lock(&s->lock);
	if (!s->jm_started) {
		pthread_mutex_unlock(&s->lock);
		return;
	}
	__atomic_store_n(&s->jm_stop, true, __ATOMIC_RELAXED);
	pthread_cond_signal(&s->jm_cond);
	pthread_mutex_unlock(&s->lock);
	pthread_join(s->jm_thread, NULL);
	s->jm_started = false;
}
