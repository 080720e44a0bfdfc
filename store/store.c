/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The store: open and recovery, the object lifecycle, eviction, delete,
 * stat, inspect, iterate and statistics.  Puts live in writer.c, gets in
 * reader.c.
 */
#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>
#include "internal.h"

#define FORMAT_VERSION 1
#define SUPER_NAME "goblin.super"
#define JOURNAL_REWRITE_MIN (64ull << 20)

void gs_options_init(struct gs_options *o)
{
	memset(o, 0, sizeof(*o));
	/* the store's remembered sizes, or defaults (see super_check) */
	o->memory = o->small_memory = o->block = o->ram_head = GS_UNSET;
	o->ssd_size = o->ssd_floor = GS_UNSET;
	o->hdd_size = o->ssd_prefix = GS_UNSET;
	o->io_chunk = 256ull << 10;
	o->write_io_chunk = 1ull << 20;
	o->io_depth = 4;
	o->numa_node = -1;
}

const struct gs_option_desc gs_option_list[] = {
	{ "memory", "SIZE", "RAM head pool" },
	{ "small-memory", "SIZE", "packed small-object arena" },
	{ "block", "SIZE", "head pool allocation unit" },
	{ "ram-head", "SIZE", "head slot size: bytes of an object kept in RAM" },
	{ "io-chunk", "SIZE", "tail read unit" },
	{ "write-io-chunk", "SIZE", "tail write unit" },
	{ "io-depth", "N", "tail reads in flight per reader" },
	{ "ssd-dir", "DIR", "SSD tier directory (default: STORE/ssd)" },
	{ "ssd-size", "SIZE", "SSD tier capacity (default: free space)" },
	{ "ssd-floor", "SIZE", "with no --ssd-size: bytes left free" },
	{ "hdd-dir", "DIR", "HDD tier directory (default: none)" },
	{ "hdd-size", "SIZE", "HDD tier capacity (default: free space)" },
	{ "ssd-prefix", "SIZE", "with an HDD tier: bytes after the head kept on SSD (default 4M)" },
	{ "no-mlock", NULL, "do not lock the RAM pools" },
	{ "no-hugetlb", NULL, "do not try HugeTLB pages" },
	{ "numa", "NODE", "bind the RAM pools and threads to a NUMA node" },
	{ "no-numa-promotion", NULL, "do not move hot head blocks between nodes" },
	{ "perverse", NULL, "head region zero on a remote node (A/B test)" },
	{ "preload-heads", NULL, "read hot heads back into RAM at open" },
	{ "no-preload-heads", NULL, "do not read heads back at open" },
	{ "sync", NULL, "fdatasync data and journal at each commit" },
	{ NULL, NULL, NULL },
};

_Static_assert(sizeof(gs_option_list) / sizeof(gs_option_list[0]) ==
		       GS_NOPTIONS + 1,
	       "GS_NOPTIONS counts gs_option_list");

void gs_option_getopt(struct option *opts, int base)
{
	for (int i = 0; i < GS_NOPTIONS; i++)
		opts[i] = (struct option){ gs_option_list[i].name,
					   gs_option_list[i].arg
						   ? required_argument
						   : no_argument,
					   NULL, base + i };
}

void gs_option_help(FILE *f)
{
	for (int i = 0; i < GS_NOPTIONS; i++) {
		char lhs[40];

		snprintf(lhs, sizeof(lhs), "--%s%s%s", gs_option_list[i].name,
			 gs_option_list[i].arg ? " " : "",
			 gs_option_list[i].arg ? gs_option_list[i].arg : "");
		fprintf(f, "  %-22s %s\n", lhs, gs_option_list[i].help);
	}
}

/* A decimal number from @lo to @hi into *@out: 0, or -EINVAL. */
static int parse_count(const char *value, unsigned long lo, unsigned long hi,
		       unsigned long *out)
{
	char *end;
	unsigned long n;

	if (!value || !isdigit((unsigned char)*value))
		return -EINVAL;
	errno = 0;
	n = strtoul(value, &end, 10);
	if (*end || errno || n < lo || n > hi)
		return -EINVAL;
	*out = n;
	return 0;
}

int gs_option_set(struct gs_options *o, const char *name, const char *value,
		  const char **why)
{
	static const struct {
		const char *name;
		size_t off;
	} sizes_by_name[] = {
		{ "memory", offsetof(struct gs_options, memory) },
		{ "small-memory", offsetof(struct gs_options, small_memory) },
		{ "block", offsetof(struct gs_options, block) },
		{ "ram-head", offsetof(struct gs_options, ram_head) },
		{ "io-chunk", offsetof(struct gs_options, io_chunk) },
		{ "write-io-chunk", offsetof(struct gs_options, write_io_chunk) },
		{ "ssd-size", offsetof(struct gs_options, ssd_size) },
		{ "ssd-floor", offsetof(struct gs_options, ssd_floor) },
		{ "hdd-size", offsetof(struct gs_options, hdd_size) },
		{ "ssd-prefix", offsetof(struct gs_options, ssd_prefix) },
	};
	uint64_t v;
	unsigned long n;
	int ret;

	*why = NULL;
	for (size_t i = 0; i < sizeof(sizes_by_name) / sizeof(sizes_by_name[0]);
	     i++) {
		if (strcmp(name, sizes_by_name[i].name))
			continue;
		ret = value ? gs_parse_size(value, &v) : -EINVAL;
		if (ret < 0) {
			*why = ret == -ERANGE ? "too large"
					      : "not a size (4096, 256K, 64M, 2MiB, 1G)";
			return ret;
		}
		*(uint64_t *)((char *)o + sizes_by_name[i].off) = v;
		return 0;
	}
	if (!strcmp(name, "io-depth")) {
		if (parse_count(value, 1, GS_MAX_DEPTH, &n) < 0) {
			*why = "not a depth from 1 to 32";
			return -EINVAL;
		}
		o->io_depth = (unsigned)n;
	} else if (!strcmp(name, "numa")) {
		if (parse_count(value, 0, NUMA_MAX_NODES - 1, &n) < 0) {
			*why = "not a node number from 0 to 63";
			return -EINVAL;
		}
		o->numa_node = (int)n;
	} else if (!strcmp(name, "no-numa-promotion")) {
		o->no_numa_promotion = true;
	} else if (!strcmp(name, "perverse")) {
		o->perverse = true;
	} else if (!strcmp(name, "ssd-dir") || !strcmp(name, "hdd-dir")) {
		if (!value || !*value) {
			*why = "empty";
			return -EINVAL;
		}
		*(name[0] == 's' ? &o->ssd_dir : &o->hdd_dir) = value;
	} else if (!strcmp(name, "no-mlock")) {
		o->no_mlock = true;
	} else if (!strcmp(name, "no-hugetlb")) {
		o->no_hugetlb = true;
	} else if (!strcmp(name, "preload-heads")) {
		o->preload_heads = true;
	} else if (!strcmp(name, "no-preload-heads")) {
		o->preload_heads = false;
	} else if (!strcmp(name, "sync")) {
		o->sync = true;
	} else {
		return -ENOENT;
	}
	return 0;
}

int gs_parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	uint64_t mul = 1;

	if (!s || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno == ERANGE)
		return -ERANGE;
	switch (toupper((unsigned char)*end)) {
	case 'K': mul = 1ull << 10; end++; break;
	case 'M': mul = 1ull << 20; end++; break;
	case 'G': mul = 1ull << 30; end++; break;
	case 'T': mul = 1ull << 40; end++; break;
	}
	/* an optional unit word: "B" alone, or "B"/"iB" after a prefix */
	if (strcmp(end, "B") == 0 || (mul > 1 && strcmp(end, "iB") == 0))
		end += strlen(end);
	if (*end)
		return -EINVAL;
	if (v > UINT64_MAX / mul)
		return -ERANGE;
	*out = v * mul;
	return 0;
}

const char *gs_strerror(int err)
{
	switch (-err) {
	case EBADMSG: return "data failed its checksum";
	case ECANCELED: return "the fill was aborted";
	case EPROTO: return "fewer bytes written than declared";
	case ESTALE: return "cas mismatch";
	case EFBIG: return "object larger than the store can hold";
	case EBUSY: return "store is in use";
	default: return strerror(-err);
	}
}

static unsigned stat_shard_of_thread(void)
{
	static _Atomic unsigned next;
	static __thread unsigned mine = UINT_MAX;

	if (mine == UINT_MAX)
		mine = atomic_fetch_add_explicit(&next, 1,
						 memory_order_relaxed) %
		       NSTAT_SHARDS;
	return mine;
}

void stat_add_idx(struct gs_store *s, size_t idx, uint64_t n)
{
	atomic_fetch_add_explicit(&s->stats[stat_shard_of_thread()].v[idx], n,
				  memory_order_relaxed);
}

static int errf(char *err, size_t len, int ret, const char *fmt, ...)
{
	va_list ap;

	if (err && len) {
		va_start(ap, fmt);
		vsnprintf(err, len, fmt, ap);
		va_end(ap);
	}
	return ret;
}

/* ---- object lifecycle (called with s->lock held) ---- */

bool obj_expired(const struct gs_obj *o, int64_t now)
{
	return o->exptime != 0 && o->exptime <= now;
}

static void obj_free(struct gs_store *s, struct gs_obj *o)
{
	if (o->small && o->item.ptr)
		arena_free(&s->arena, &o->item);
	slru_remove(&s->lru_head, &o->hlru);
	if (o->head)
		slots_put(&s->slots, o->head);
	for (uint32_t i = 0; i < o->next; i++)
		space_free(tier_space(s, o->ext[i].tier), &o->ext[i]);
	free(o->ext);
	free(o->csum);
	free(o->attr);
	if (o->node.key != o->key)	/* renamed */
		free((uint8_t *)o->node.key);
	free(o);
}

void obj_unref(struct gs_store *s, struct gs_obj *o)
{
	assert(o->refs > 0);
	if (--o->refs == 0)
		obj_free(s, o);
}

void obj_wake(struct gs_store *s, struct gs_obj *o)
{
	struct gs_reader *w = o->waiters;

	o->waiters = NULL;
	pthread_cond_broadcast(&s->fill_cond);
	while (w) {
		struct gs_reader *next = reader_waiter_next(w);

		reader_notify(w);
		w = next;
	}
}

/*
 * Cold small objects: out of the arena, their value only in the journal.
 * They are kept on a FIFO list, bounded to a quarter of the SSD tier's
 * capacity in value bytes; past that the oldest go for good.
 * All called with s->lock held.
 */
static void cold_del(struct gs_store *s, struct gs_obj *o)
{
	list_del(&o->lru.l);
	assert(s->ncold > 0 && s->cold_bytes >= o->size);
	s->ncold--;
	s->cold_bytes -= o->size;
}

static void obj_drop(struct gs_store *s, struct gs_obj *o);
static bool obj_evict(struct gs_store *s, struct gs_obj *o);

static void cold_add(struct gs_store *s, struct gs_obj *o)
{
	uint64_t cap = s->space.limit * GS_ALLOC_UNIT / 4;

	list_push(&s->cold, &o->lru.l);
	s->ncold++;
	s->cold_bytes += o->size;
	while (s->cold_bytes > cap && !list_empty(&s->cold)) {
		struct gs_obj *v = list_entry(s->cold.prev, struct gs_obj,
					      lru.l);

		if (v->refs != 1 || !obj_evict(s, v))
			break;	/* being read back: keep the order simple */
		stat_add(s, evictions_small, 1);
	}
}

/* Move a small object's value out of RAM; it stays in the journal. */
static void obj_chill(struct gs_store *s, struct gs_obj *o)
{
	slru_remove(&s->lru_small, &o->lru);
	arena_free(&s->arena, &o->item);
	stat_add(s, small_chills, 1);
	cold_add(s, o);
}

/* pread all of @len at @off, or fail. */
static int pread_full(struct gs_store *s, int fd, void *buf, size_t len,
		      uint64_t off)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n = f_pread(s, fd, p, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			stat_add(s, read_errors, 1);
			return n < 0 ? -errno : -EIO;
		}
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

/*
 * Read a cold small object back, into the arena when it has room (it is
 * then warm again), else into a private copy in *@own that the caller
 * frees.  Its checksum is checked: a value that fails is a miss, dropped.
 * The read is a pread of the journal under the lock: at most a head's
 * worth of bytes, usually from the page cache.  0 or -errno.
 */
int obj_warm(struct gs_store *s, struct gs_obj *o, uint8_t **own)
{
	uint8_t *p;
	int ret;

	cold_del(s, o);
	if (small_alloc(s, o, o->size) == 0) {
		p = o->item.ptr;
	} else if (!(p = *own = malloc(o->size ? o->size : 1))) {
		cold_add(s, o);
		return -ENOMEM;
	}
	ret = pread_full(s, s->jfd, p, o->size, o->jpos);
	if (ret == 0 && XXH3_64bits(p, o->size) != o->xxh3)
		ret = -EBADMSG;
	if (ret < 0) {
		if (p == o->item.ptr)
			arena_free(&s->arena, &o->item);
		free(*own);
		*own = NULL;
		cold_add(s, o);
		if (ret == -EBADMSG)
			obj_drop_corrupt(s, o);
		return ret;
	}
	if (p == o->item.ptr)
		slru_insert(&s->lru_small, &o->lru, o->item.len);
	else
		cold_add(s, o);
	stat_add(s, small_warms, 1);
	return 0;
}

/* Take @o out of the index; its space goes when the last reader leaves. */
void obj_unlink(struct gs_store *s, struct gs_obj *o)
{
	assert(o->state == OBJ_LIVE);
	index_remove(&s->idx, &o->node);
	o->state = OBJ_GONE;
	s->bytes -= o->size;
	s->jlive -= o->jlen;
	if (o->small) {
		s->nsmall--;
		if (o->item.ptr)
			slru_remove(&s->lru_small, &o->lru);
		else
			cold_del(s, o);
	} else {
		slru_remove(&s->lru_ssd, &o->lru);
		slru_remove(&s->lru_hdd, &o->dlru);
	}
	slru_remove(&s->lru_head, &o->hlru);
	obj_unref(s, o);
}

/* Write all of @len bytes at @off: 0 or -errno. */
static int pwrite_full(struct gs_store *s, int fd, const void *buf,
		       size_t len, uint64_t off)
{
	const uint8_t *p = buf;
	size_t done = 0;

	while (done < len) {
		ssize_t n = f_pwrite(s, fd, p + done, len - done,
				     (off_t)(off + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			stat_add(s, write_errors, 1);
			return n < 0 ? -errno : -EIO;
		}
		done += (size_t)n;
	}
	return 0;
}

/*
 * Keep the journal file allocated past @end.  Without room it grows with
 * its records, and tries again at the next one.
 */
static void journal_prealloc(struct gs_store *s, uint64_t end)
{
	uint64_t to = ALIGN4K(end) + JOURNAL_PREALLOC;

	if (end <= s->jalloc || s->jno_prealloc)
		return;
	/* blocks written since are left as they are */
	if (F_CALL(s) == 0 && fallocate(s->jfd, 0, (off_t)s->jalloc,
					(off_t)(to - s->jalloc)) == 0)
		s->jalloc = to;
	else if (errno == EOPNOTSUPP || errno == ENOSYS)
		s->jno_prealloc = true;
}

/*
 * Append a record.  At an explicit offset, not O_APPEND: the end of the
 * file may still be short of records reserved by puts.  0; -errno when it
 * was not written (nothing of it is left in front of later records); or
 * JOURNAL_UNSYNCED when it was written but --sync's fdatasync failed: the
 * record is in the journal and replay will apply it, so the caller applies
 * the change too and reports -EIO (a failure that may have happened, as
 * after a crash, never one that happens only after a restart).
 */
int journal_write(struct gs_store *s, const void *buf, size_t len)
{
	int ret;

	journal_prealloc(s, s->jbytes + len);
	ret = pwrite_full(s, s->jfd, buf, len, s->jbytes);
	if (ret < 0) {
		/* never leave a torn record in front of later ones */
		if (s->jinflight == 0) {
			if (F_CALL(s) < 0 || ftruncate(s->jfd, (off_t)s->jbytes))
				ret = -EIO;
			else
				s->jalloc = s->jbytes;
		}
		return ret;
	}
	s->jbytes += len;
	if (s->o.sync && (F_CALL(s) < 0 || fdatasync(s->jfd) < 0)) {
		stat_add(s, write_errors, 1);
		return JOURNAL_UNSYNCED;
	}
	return 0;
}

int journal_reserve(struct gs_store *s, size_t len, uint8_t *stack,
		    size_t stack_len, struct jslot *js)
{
	js->len = len;
	js->own = false;
	js->direct = s->jdfd >= 0 && !s->jno_direct &&
		     len >= JOURNAL_DIRECT_MIN && len <= s->jbufs.size &&
		     (js->buf = bufpool_get(&s->jbufs));
	if (js->direct) {
		/* zeros up to the 4 KiB boundary are padding to replay */
		js->off = ALIGN4K(s->jbytes);
		s->jbytes = js->off + ALIGN4K(len);
	} else {
		js->own = len > stack_len;
		js->buf = js->own ? malloc(len) : stack;
		if (!js->buf)
			return -ENOMEM;
		js->off = s->jbytes;
		s->jbytes += len;
	}
	journal_prealloc(s, s->jbytes);
	s->jinflight++;
	return 0;
}

/*
 * A direct write through @ring: the inode lock is held only while it is
 * submitted, not until it completes as with pwrite.  0 or -errno.
 */
static int write_direct(struct gs_store *s, struct io_uring *ring, int fd,
			const uint8_t *buf, size_t len, uint64_t off)
{
	size_t done = 0;

	while (done < len) {
		struct io_uring_sqe *sqe = io_get_sqe(ring);
		struct gs_io io;
		int ret;

		io_uring_prep_write(sqe, fd, buf + done,
				    (unsigned)(len - done), off + done);
		io_prep(sqe, &io);
		f_sqe(s, sqe, &io);
		ret = io_wait(ring, &io);
		if (ret == 0 && io.res <= 0)
			ret = io.res < 0 ? io.res : -EIO;
		if (ret < 0) {
			stat_add(s, write_errors, 1);
			return ret;
		}
		done += (size_t)io.res;
	}
	return 0;
}

/*
 * 0 or JOURNAL_BUFFERED and JOURNAL_UNSYNCED bits (see journal_write),
 * or -errno.  A failed record is left for replay to skip: later ones may
 * be written.
 */
int journal_write_slot(struct gs_store *s, struct jslot *js,
		       struct io_uring *ring)
{
	size_t plen = ALIGN4K(js->len);
	int ret, fd = s->jfd;

	if (!js->direct) {
		ret = pwrite_full(s, s->jfd, js->buf, js->len, js->off);
	} else {
		memset(js->buf + js->len, 0, plen - js->len);
		ret = write_direct(s, ring, fd = s->jdfd, js->buf, plen,
				   js->off);
		if (ret == -EINVAL)	/* a file system wanting more alignment */
			ret = pwrite_full(s, fd = s->jfd, js->buf, plen,
					  js->off);
	}
	if (ret < 0)
		return ret;
	ret = js->direct && fd != s->jdfd ? JOURNAL_BUFFERED : 0;
	if (s->o.sync && (F_CALL(s) < 0 || fdatasync(fd) < 0)) {
		stat_add(s, write_errors, 1);
		ret |= JOURNAL_UNSYNCED;
	}
	return ret;
}

void journal_unreserve(struct gs_store *s, const struct jslot *js, int how)
{
	if (js->direct)
		bufpool_put(&s->jbufs, js->buf);
	else if (js->own)
		free(js->buf);
	s->jinflight--;
	if (how > 0 && (how & JOURNAL_BUFFERED))
		s->jno_direct = true;	/* every record buffered from now on */
}

/* Journal a record that carries only a key (and an exptime for touch). */
static int journal_key_record(struct gs_store *s, uint8_t type,
			      const struct gs_obj *o, int64_t exptime)
{
	struct jrec r = {
		.type = type, .seq = ++s->seq, .key = o->node.key,
		.klen = o->node.klen, .exptime = exptime,
	};
	uint8_t stackbuf[256];
	size_t len = jrec_size(&r);
	uint8_t *buf = len <= sizeof(stackbuf) ? stackbuf : malloc(len);
	int ret;

	if (!buf)
		return -ENOMEM;
	jrec_encode(&r, NULL, NULL, buf);
	ret = journal_write(s, buf, len);
	if (buf != stackbuf)
		free(buf);
	return ret;
}

/* Fill a record describing live object @o. */
void obj_jrec(const struct gs_obj *o, uint64_t seq, struct jrec *r)
{
	memset(r, 0, sizeof(*r));
	r->type = o->small ? J_PUT_SMALL : J_PUT_LARGE;
	r->seq = seq;
	r->key = o->node.key;
	r->klen = o->node.klen;
	r->size = o->size;
	r->cas = o->cas;
	r->exptime = o->exptime;
	r->mtime_ns = o->mtime_ns;
	r->xxh3 = o->xxh3;
	r->flags = o->flags;
	r->attr = o->attr;
	r->attr_len = o->attr_len;
	r->value = o->small ? o->item.ptr : NULL;
	r->next = o->small ? 0 : o->next;
	r->ncsum = o->small ? 0 : (uint32_t)csum_blocks(o->size);
}

/*
 * Remove a live object for good (expiry, corruption, a failed small put):
 * it goes whatever the journal says, and the error is returned.  The DEL
 * record must precede any reuse of the object's extents, so that replay
 * never sees two live owners of one unit; where it could not be written,
 * replay gives a unit to its later owner (replay_claim()).
 */
int obj_remove(struct gs_store *s, struct gs_obj *o)
{
	int ret = journal_key_record(s, J_DEL, o, 0);

	obj_unlink(s, o);
	return ret;
}

/* Remove a live object the store decided to drop, and say so. */
static void obj_drop(struct gs_store *s, struct gs_obj *o)
{
	if (s->drop_hook)
		s->drop_hook(s->drop_arg, o->node.key, o->node.klen);
	obj_remove(s, o);
}

/*
 * Evict @o for room, if its DEL record can be written: without it the
 * room would go to a put whose record replay finds taken, and the object
 * would come back at a restart.  False (nothing changed) if it cannot.
 */
static bool obj_evict(struct gs_store *s, struct gs_obj *o)
{
	uint8_t step = fault_step;
	int ret;

	FAULT_STEP(FS_EVICT);
	ret = journal_key_record(s, J_DEL, o, 0);
	FAULT_STEP(step);
	if (ret < 0)
		return false;
	if (s->drop_hook)
		s->drop_hook(s->drop_arg, o->node.key, o->node.klen);
	obj_unlink(s, o);
	return true;
}

void obj_drop_corrupt(struct gs_store *s, struct gs_obj *o)
{
	stat_add(s, csum_failures, 1);
	if (o->corrupt)
		return;
	o->corrupt = 1;
	if (o->state == OBJ_LIVE)
		obj_drop(s, o);
}

void gs_set_drop_hook(struct gs_store *s,
		      void (*fn)(void *arg, const void *key, size_t klen),
		      void *arg)
{
	pthread_mutex_lock(&s->lock);
	s->drop_hook = fn;
	s->drop_arg = arg;
	pthread_mutex_unlock(&s->lock);
}

/* ---- eviction (called with s->lock held) ---- */

/*
 * Drop the SSD prefix of @o, which stays readable from its HDD copy: the
 * record without the SSD extents goes to the journal before they can be
 * reused.  Returns false (nothing changed) if it cannot be journalled.
 */
static bool drop_prefix(struct gs_store *s, struct gs_obj *o)
{
	struct extent *keep = malloc(o->next * sizeof(*keep));
	uint8_t *rec;
	struct jrec r;
	uint32_t n = 0;
	size_t len;

	if (!keep)
		return false;
	for (uint32_t i = 0; i < o->next; i++)
		if (o->ext[i].tier == TIER_HDD)
			keep[n++] = o->ext[i];
	obj_jrec(o, ++s->seq, &r);
	r.next = n;
	len = jrec_size(&r);
	rec = len ? malloc(len) : NULL;
	if (!rec) {
		free(keep);
		return false;
	}
	jrec_encode(&r, keep, o->csum, rec);
	if (journal_write(s, rec, len) < 0) {
		free(rec);
		free(keep);
		return false;
	}
	free(rec);
	s->jlive += len - o->jlen;
	o->jlen = len;
	for (uint32_t i = 0; i < o->next; i++)
		if (o->ext[i].tier == TIER_SSD)
			space_free(&s->space, &o->ext[i]);
	free(o->ext);
	o->ext = keep;
	o->next = n;
	o->ssd_len = 0;
	slru_remove(&s->lru_ssd, &o->lru);
	return true;
}

/*
 * Make room for @units on @tier, coldest first.  On the SSD an object with
 * an HDD copy loses only its SSD prefix; any other victim is evicted
 * whole.  Pinned objects stay.
 */
static bool evict(struct gs_store *s, int tier, uint64_t units)
{
	struct slru *q = tier == TIER_HDD ? &s->lru_hdd : &s->lru_ssd;
	struct space *sp = tier_space(s, tier);
	size_t off = tier == TIER_HDD ? offsetof(struct gs_obj, dlru)
				      : offsetof(struct gs_obj, lru);
	struct slru_node *n = slru_next_victim(q, NULL);

	while ((space_free_units(sp) < units || sp->used > sp->limit) && n) {
		struct slru_node *next = slru_next_victim(q, n);
		struct gs_obj *o = (struct gs_obj *)((char *)n - off);

		if (o->refs == 1 && tier == TIER_SSD && o->hdd) {
			if (drop_prefix(s, o))
				stat_add(s, ssd_prefix_drops, 1);
		} else if (o->refs == 1) {
			if (!obj_evict(s, o))
				break;
			if (tier == TIER_HDD)
				stat_add(s, evictions_hdd, 1);
			else
				stat_add(s, evictions_ssd, 1);
		}
		n = next;
	}
	return space_free_units(sp) >= units;
}

/* A free head slot, taking one from the coldest unpinned head if need be. */
uint8_t *head_slot_get(struct gs_store *s, struct gs_obj *o)
{
	uint8_t *slot = slots_get(&s->slots);
	struct slru_node *n;

	if (slot)
		return slot;
	for (n = slru_next_victim(&s->lru_head, NULL); n;
	     n = slru_next_victim(&s->lru_head, n)) {
		struct gs_obj *v = list_entry(n, struct gs_obj, hlru);

		if (v == o || v->refs != 1)
			continue;
		slru_remove(&s->lru_head, &v->hlru);
		slot = v->head;
		v->head = NULL;
		stat_add(s, evictions_head, 1);
		return slot;
	}
	return NULL;
}

static bool item_movable(struct arena_item *it, void *arg)
{
	struct gs_obj *o = list_entry(it, struct gs_obj, item);

	(void)arg;
	return o->refs == 1 && o->state == OBJ_LIVE;
}

/* Arena space for small object @o: compact, then evict cold small ones. */
int small_alloc(struct gs_store *s, struct gs_obj *o, uint64_t len)
{
	for (;;) {
		int ret = arena_alloc(&s->arena, &o->item, len);
		struct slru_node *n;
		struct gs_obj *v = NULL;

		if (ret != -ENOSPC)
			return ret;
		if (arena_compact(&s->arena, item_movable, NULL)) {
			stat_add(s, compactions, 1);
			continue;
		}
		for (n = slru_next_victim(&s->lru_small, NULL); n;
		     n = slru_next_victim(&s->lru_small, n)) {
			v = list_entry(n, struct gs_obj, lru);
			if (v->refs == 1)
				break;
			v = NULL;
		}
		if (!v)
			return -ENOSPC;
		obj_chill(s, v);	/* still readable, from the journal */
	}
}

struct space *tier_space(struct gs_store *s, int tier)
{
	return tier == TIER_HDD ? &s->hspace : &s->space;
}

int tier_fd(const struct gs_store *s, int tier)
{
	return tier == TIER_HDD ? s->hdd_fd : s->data_fd;
}

/*
 * Set @tier's limit to the room it has now: its capacity less the
 * journal's records when the journal shares its file system, and never more
 * than that file system can still hold: the units the data file has
 * blocks for, plus the free space above the tier's floor.  Without this
 * the tier filled the file system before it reached its capacity: writes
 * failed with ENOSPC while nothing was evicted.  Units allocated but not
 * yet written are in use and not yet in the file's blocks: the free space
 * still holds them.  Lock held; two system calls, once per allocation.
 */
void tier_limit_refresh(struct gs_store *s, int tier)
{
	struct space *sp = tier_space(s, tier);
	uint64_t lim = s->cap[tier] / GS_ALLOC_UNIT;
	int fd = tier_fd(s, tier);
	struct statvfs vfs;
	struct stat st;

	if (fd < 0 || !lim)
		return;
	if (s->jshare[tier]) {
		/* its records; the room allocated after them is free space
		 * that the file system check below sees taken */
		uint64_t j = (s->jbytes + GS_ALLOC_UNIT - 1) / GS_ALLOC_UNIT;

		lim = lim > j ? lim - j : 0;
	}
	if (fstatvfs(fd, &vfs) == 0 && fstat(fd, &st) == 0) {
		uint64_t avail = (uint64_t)vfs.f_bavail * vfs.f_frsize;
		uint64_t room = (uint64_t)st.st_blocks * 512 / GS_ALLOC_UNIT;

		if (avail > s->floor[tier])
			room += (avail - s->floor[tier]) / GS_ALLOC_UNIT;
		if (room < lim)
			lim = room;
	}
	sp->limit = lim;
}

/*
 * Make @o's extents on @tier cover at least @size bytes, appending to what
 * it has (a put of unknown size grows as it is written).  Evicts cold
 * objects for room.  0, -EFBIG (more than the tier) or -ENOSPC.
 */
int tier_alloc(struct gs_store *s, struct gs_obj *o, int tier, uint64_t size)
{
	struct space *sp = tier_space(s, tier);
	uint64_t have = (uint64_t)obj_units(o, tier) * GS_ALLOC_UNIT, units;
	struct extent *ext, *all;
	int n;

	/* checked first: the rounding below can wrap */
	if (size > s->cap[tier] / GS_ALLOC_UNIT * GS_ALLOC_UNIT)
		return -EFBIG;
	if (size == 0)
		size = 1;	/* every large object has an extent */
	if (have >= size)
		return 0;
	units = (size - have + GS_ALLOC_UNIT - 1) / GS_ALLOC_UNIT;
	tier_limit_refresh(s, tier);
	if (units > sp->limit)
		return -ENOSPC;	/* more than the room: evict nothing for it */
	if (space_free_units(sp) < units &&
	    !evict(s, tier, units))
		return -ENOSPC;
	ext = malloc(units * sizeof(*ext));
	if (!ext)
		return -ENOMEM;
	n = space_alloc(sp, units * GS_ALLOC_UNIT, ext, (int)units);
	if (n < 0) {
		free(ext);
		return n;
	}
	all = realloc(o->ext, (o->next + n) * sizeof(*all));
	if (!all) {
		for (int i = 0; i < n; i++)
			space_free(sp, &ext[i]);
		free(ext);
		return -ENOMEM;
	}
	for (int i = 0; i < n; i++)
		ext[i].tier = (uint8_t)tier;
	memcpy(all + o->next, ext, n * sizeof(*ext));
	free(ext);
	o->ext = all;
	o->next += (uint32_t)n;
	return 0;
}

void tier_trim(struct gs_store *s, struct gs_obj *o, int tier, uint64_t size)
{
	struct space *sp = tier_space(s, tier);
	uint64_t keep = (size + GS_ALLOC_UNIT - 1) / GS_ALLOC_UNIT *
			GS_ALLOC_UNIT;
	uint64_t off = 0;
	uint32_t n = 0;

	for (uint32_t i = 0; i < o->next; i++) {
		struct extent *e = &o->ext[i];

		if (e->tier != tier) {
			o->ext[n++] = *e;
			continue;
		}
		if (off >= keep) {
			space_free(sp, e);
			continue;
		}
		if (off + e->len > keep) {
			struct extent tail = { e->off + (keep - off),
					       off + e->len - keep, e->tier };

			space_free(sp, &tail);
			e->len = keep - off;
		}
		off += e->len;
		o->ext[n++] = *e;
	}
	o->next = n;
}

/* Give up the disk space and RAM head of @o (it became a small object). */
void obj_release_large(struct gs_store *s, struct gs_obj *o)
{
	for (uint32_t i = 0; i < o->next; i++)
		space_free(tier_space(s, o->ext[i].tier), &o->ext[i]);
	free(o->ext);
	o->ext = NULL;
	o->next = 0;
	free(o->csum);
	o->csum = NULL;
	if (o->head) {
		slots_put(&s->slots, o->head);
		o->head = NULL;
	}
}

uint32_t obj_units(const struct gs_obj *o, int tier)
{
	uint64_t u = 0;

	for (uint32_t i = 0; i < o->next; i++)
		if (o->ext[i].tier == tier)
			u += o->ext[i].len / GS_ALLOC_UNIT;
	return u > UINT32_MAX ? UINT32_MAX : (uint32_t)u;
}

uint64_t obj_dev_off(const struct gs_obj *o, int tier, uint64_t off,
		     uint64_t *run)
{
	for (uint32_t i = 0; i < o->next; i++) {
		if (o->ext[i].tier != tier)
			continue;
		if (off < o->ext[i].len) {
			*run = o->ext[i].len - off;
			return o->ext[i].off + off;
		}
		off -= o->ext[i].len;
	}
	*run = 0;
	return UINT64_MAX;
}

struct gs_obj *obj_new(const void *key, size_t klen)
{
	struct gs_obj *o = calloc(1, sizeof(*o) + klen);

	if (!o)
		return NULL;
	memcpy(o->key, key, klen);
	o->node.key = o->key;
	o->node.klen = (uint32_t)klen;
	o->node.hash = index_hash(key, klen);
	o->refs = 1;
	slru_node_init(&o->lru);
	slru_node_init(&o->hlru);
	slru_node_init(&o->dlru);
	list_init(&o->item.l);
	return o;
}

/* Publish @o under its key, replacing any live version.  Lock held. */
void obj_publish(struct gs_store *s, struct gs_obj *o)
{
	struct idx_node *n = index_find(&s->idx, o->node.hash, o->node.key,
					o->node.klen);

	if (n)
		obj_unlink(s, list_entry(n, struct gs_obj, node));
	index_insert(&s->idx, &o->node);
	o->state = OBJ_LIVE;
	s->bytes += o->size;
	s->jlive += o->jlen;
	if (o->small) {
		s->nsmall++;
		if (o->item.ptr)
			slru_insert(&s->lru_small, &o->lru, o->item.len);
		else
			cold_add(s, o);
	} else {
		if (o->ssd_len)
			slru_insert(&s->lru_ssd, &o->lru,
				    obj_units(o, TIER_SSD));
		if (o->hdd)
			slru_insert(&s->lru_hdd, &o->dlru,
				    obj_units(o, TIER_HDD));
		if (o->head && !slru_linked(&o->hlru))
			slru_insert(&s->lru_head, &o->hlru, 1);
	}
}

/* Live, unexpired object for @key, or NULL (an expired one is removed). */
struct gs_obj *obj_lookup(struct gs_store *s, const void *key, size_t klen)
{
	struct idx_node *n = index_find(&s->idx, index_hash(key, klen), key,
					klen);
	struct gs_obj *o;

	if (!n)
		return NULL;
	o = list_entry(n, struct gs_obj, node);
	if (obj_expired(o, time(NULL))) {
		stat_add(s, expired, 1);
		obj_drop(s, o);
		return NULL;
	}
	return o;
}

/* Give @o the key @key; it must not be in use.  Lock held. */
static void obj_rekey(struct gs_store *s, struct gs_obj *o, uint8_t *key,
		      size_t klen)
{
	index_remove(&s->idx, &o->node);
	if (o->node.key != o->key)
		free((uint8_t *)o->node.key);
	o->node.key = key;
	o->node.klen = (uint32_t)klen;
	o->node.hash = index_hash(key, klen);
	index_insert(&s->idx, &o->node);
}

/* Apply a rename to the index (live call or replay).  Lock held. */
static int rename_apply(struct gs_store *s, const void *from, size_t flen,
			const void *to, size_t tlen, uint64_t jlen)
{
	struct gs_obj *o = obj_lookup(s, from, flen), *dst;
	uint8_t *key;

	if (!o)
		return -ENOENT;
	key = malloc(tlen);
	if (!key)
		return -ENOMEM;
	memcpy(key, to, tlen);
	dst = obj_lookup(s, to, tlen);
	if (dst)
		obj_unlink(s, dst);
	obj_rekey(s, o, key, tlen);
	/* replay needs the rename record as well as the put */
	o->jlen += jlen;
	s->jlive += jlen;
	return 0;
}

/* ---- journal rewrite and replay ---- */

/*
 * Write every live object's record to a new journal and switch to it.  The
 * new file's descriptors are opened before the rename: once it is the
 * journal, nothing can fail (an open after it could, leaving no journal
 * open).  Objects learn their records' new sizes and places only then.
 */
static int journal_rewrite(struct gs_store *s)
{
	char *tmp = NULL, *path = NULL;
	uint64_t pos = 0, total = 0, seq = 0, *newpos = NULL, *newlen = NULL;
	uint8_t *buf = NULL, *cold = NULL, step = fault_step;
	size_t cap = 1u << 20, used = 0;
	struct idx_node *n = NULL;
	int fd = -1, dfd = -1, ret = -ENOMEM;

	FAULT_STEP(FS_REWRITE);
	if (asprintf(&tmp, "%s/journal.new", s->dir) < 0)
		tmp = NULL;
	if (asprintf(&path, "%s/journal", s->dir) < 0)
		path = NULL;
	buf = malloc(cap);
	if (!tmp || !path || !buf)
		goto fail;
	fd = open(tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		ret = -errno;
		goto fail;
	}
	newpos = malloc((s->idx.count + 1) * sizeof(*newpos));
	newlen = malloc((s->idx.count + 1) * sizeof(*newlen));
	if (!newpos || !newlen)
		goto fail;
	while ((n = index_next(&s->idx, &pos, n))) {
		struct gs_obj *o = list_entry(n, struct gs_obj, node);
		struct jrec r;
		size_t len;

		obj_jrec(o, ++seq, &r);
		len = jrec_size(&r);
		if (o->small && !o->item.ptr) {	/* cold: from the old file */
			free(cold);
			cold = malloc(o->size ? o->size : 1);
			if (!cold ||
			    pread_full(s, s->jfd, cold, o->size, o->jpos)) {
				ret = -EIO;
				goto fail;
			}
			r.value = cold;
		}
		newpos[seq - 1] = total + J_HDR + J_PUT_BODY + r.klen +
				  r.attr_len;
		newlen[seq - 1] = len;
		if (used + len > cap) {
			if (used && (ret = pwrite_full(s, fd, buf, used,
						       total - used)) < 0)
				goto fail;
			ret = -ENOMEM;
			used = 0;
			if (len > cap) {
				uint8_t *nb = realloc(buf, len);

				if (!nb)
					goto fail;
				buf = nb;
				cap = len;
			}
		}
		jrec_encode(&r, o->ext, o->csum, buf + used);
		used += len;
		total += len;
	}
	if (used && (ret = pwrite_full(s, fd, buf, used, total - used)) < 0)
		goto fail;
	dfd = open(tmp, O_WRONLY | O_DIRECT | O_CLOEXEC);	/* -1: none */
	if (F_CALL(s) < 0 || fsync(fd) < 0 || F_CALL(s) < 0 ||
	    rename(tmp, path) < 0) {
		ret = -errno;
		goto fail;
	}
	/* it is the journal now */
	close(s->jfd);
	s->jfd = fd;
	fd = -1;
	if (s->jdfd >= 0)
		close(s->jdfd);
	s->jdfd = dfd;
	dfd = -1;
	s->jalloc = total;
	/* the small values moved with their records */
	pos = 0;
	seq = 0;
	for (n = NULL; (n = index_next(&s->idx, &pos, n));) {
		struct gs_obj *o = list_entry(n, struct gs_obj, node);

		if (o->small)
			o->jpos = newpos[seq];
		o->jlen = newlen[seq];
		seq++;
	}
	s->jbytes = s->jlive = total;
	s->seq = seq;
	stat_add(s, journal_rewrites, 1);
	ret = 0;
fail:
	if (fd >= 0) {
		close(fd);
		unlink(tmp);
	}
	if (dfd >= 0)
		close(dfd);
	free(buf);
	free(cold);
	free(newpos);
	free(newlen);
	free(tmp);
	free(path);
	FAULT_STEP(step);
	return ret;
}

/*
 * Journal garbage grows with replaces and deletes; rewrite when it wins.
 * A journal on the SSD tier's file system counts in the tier's capacity:
 * there it is rewritten once its garbage would take an eighth of it, so
 * that dead records do not crowd out live objects on a small tier.
 */
void journal_maybe_rewrite(struct gs_store *s)
{
	uint64_t min = JOURNAL_REWRITE_MIN;

	if (s->jshare[TIER_SSD] && s->cap[TIER_SSD] / 8 < min)
		min = s->cap[TIER_SSD] / 8;
	/* not under a record being written: it would land in the old file */
	if (s->jinflight == 0 && s->jbytes > min && s->jbytes > 2 * s->jlive)
		journal_rewrite(s);
}

static int attr_copy(struct gs_obj *o, const void *attr, size_t len)
{
	o->attr_len = (uint16_t)len;
	if (!len)
		return 0;
	o->attr = malloc(len);
	if (!o->attr)
		return -ENOMEM;
	memcpy(o->attr, attr, len);
	return 0;
}

/* Give @o a copy of @attr in place of its own.  Lock held. */
static int attr_replace(struct gs_obj *o, const void *attr, size_t len)
{
	uint8_t *copy = NULL;

	if (len && !(copy = malloc(len)))
		return -ENOMEM;
	if (len)
		memcpy(copy, attr, len);
	free(o->attr);
	o->attr = copy;
	o->attr_len = (uint16_t)len;
	return 0;
}

/*
 * Claim @e for a put being replayed.  Units another live object holds are
 * its only if that object's DEL record was lost (a journal write that
 * failed while the store evicted or dropped it): the put is the later
 * record, so the earlier owner goes.  Lock held (single-threaded at open).
 */
static int replay_claim(struct gs_store *s, const struct extent *e,
			bool *dirty)
{
	struct space *sp = tier_space(s, e->tier);
	int ret = space_claim(sp, e);
	struct idx_node *n = NULL;
	uint64_t pos = 0;

	if (ret != -EEXIST)
		return ret;
	while ((n = index_next(&s->idx, &pos, n))) {
		struct gs_obj *o = list_entry(n, struct gs_obj, node);
		bool overlap = false;

		for (uint32_t i = 0; i < o->next && !overlap; i++)
			overlap = o->ext[i].tier == e->tier &&
				  o->ext[i].off < e->off + e->len &&
				  e->off < o->ext[i].off + o->ext[i].len;
		if (!overlap)
			continue;
		n = NULL;	/* the scan starts over: unlink changes it */
		pos = 0;
		obj_unlink(s, o);
		stat_add(s, recovery_dropped, 1);
		*dirty = true;
	}
	return space_claim(sp, e);
}

/* Apply one put record during replay.  Returns 0, or <0 to drop it. */
static int replay_put(struct gs_store *s, const struct jrec *r, long len,
		      int64_t now, uint64_t vpos, bool *dirty)
{
	struct gs_obj *o = obj_new(r->key, r->klen), *old;
	uint32_t i;

	if (!o)
		return -ENOMEM;
	o->size = r->size;
	o->cas = r->cas;
	o->exptime = r->exptime;
	o->mtime_ns = r->mtime_ns;
	o->xxh3 = r->xxh3;
	o->flags = r->flags;
	o->jlen = (uint64_t)len;
	o->written = o->durable = r->size;
	if (attr_copy(o, r->attr, r->attr_len) < 0)
		goto fail;
	if (r->cas > s->cas)
		s->cas = r->cas;
	/* Older version out first: its extents may be reused below. */
	old = obj_lookup(s, r->key, r->klen);
	if (old)
		obj_unlink(s, old);
	if (r->exptime && r->exptime <= now)
		goto fail;
	if (r->type == J_PUT_SMALL) {
		if (XXH3_64bits(r->value, r->size) != r->xxh3) {
			stat_add(s, csum_failures, 1);
			goto fail;
		}
		o->small = 1;
		o->jpos = vpos;
		/* no room in the arena: it stays cold, in the journal */
		if (small_alloc(s, o, r->size) == 0)
			memcpy(o->item.ptr, r->value, r->size);
	} else {
		o->ext = malloc(r->next * sizeof(*o->ext));
		o->csum = malloc(r->ncsum * sizeof(uint32_t));
		if (!o->ext || !o->csum)
			goto fail;
		for (i = 0; i < r->next; i++) {
			struct extent *e = &o->ext[i];

			jrec_get_ext(r, i, e);
			/* no HDD tier (any more): -ERANGE */
			if (replay_claim(s, e, dirty) < 0)
				break;
			o->hdd |= e->tier == TIER_HDD;
		}
		o->next = i;	/* obj_free releases what was claimed */
		if (i < r->next)
			goto fail;
		o->ssd_len = (uint64_t)obj_units(o, TIER_SSD) * GS_ALLOC_UNIT;
		if (!o->hdd || o->ssd_len > o->size)
			o->ssd_len = o->size;
		for (i = 0; i < r->ncsum; i++)
			o->csum[i] = jrec_get_csum(r, i);
	}
	obj_publish(s, o);
	return 0;
fail:
	obj_free(s, o);
	return -EINVAL;
}

static bool all_zero(const uint8_t *p, uint64_t n)
{
	return n == 0 || (p[0] == 0 && memcmp(p, p + 1, n - 1) == 0);
}

/*
 * Where the padding at @pos ends: the next 4 KiB boundary (or @size) if
 * everything up to it is zeros, else @pos (no padding).
 */
static uint64_t pad_end(const uint8_t *map, uint64_t size, uint64_t pos)
{
	uint64_t end = ALIGN4K(pos) < size ? ALIGN4K(pos) : size;

	if (pos % 4096 == 0)
		return pos;	/* a whole zero block is a lost record */
	return all_zero(map + pos, end - pos) ? end : pos;
}

/*
 * Rebuild the index from the journal.  A record that does not verify is
 * skipped (the scan resynchronises on the next valid record); a torn tail
 * is cut off.  Anything dropped makes the journal be rewritten.
 */
static int journal_replay(struct gs_store *s, bool *dirty)
{
	struct stat st;
	uint8_t *map;
	uint64_t pos = 0, good = 0, pad;
	int64_t now = time(NULL);

	if (F_CALL(s) < 0 || fstat(s->jfd, &st) < 0)
		return -errno;
	s->jbytes = s->jalloc = (uint64_t)st.st_size;
	if (st.st_size == 0)
		return 0;
	map = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, s->jfd, 0);
	if (map == MAP_FAILED)
		return -errno;
	madvise(map, st.st_size, MADV_SEQUENTIAL);
	while (pos < (uint64_t)st.st_size) {
		struct jrec r;
		long len = jrec_decode(map + pos, st.st_size - pos, &r);
		struct gs_obj *o;

		if (len <= 0 && all_zero(map + pos, st.st_size - pos)) {
			s->jbytes = pos;	/* the allocated room after it */
			break;
		}
		if (len <= 0 && (pad = pad_end(map, st.st_size, pos)) > pos) {
			pos = good = pad;
			continue;
		}
		if (len <= 0) {
			/* skip to the next plausible record */
			const uint32_t magic = J_MAGIC;
			uint8_t *m = memmem(map + pos + 1, st.st_size - pos - 1,
					    &magic, 4);

			stat_add(s, recovery_dropped, 1);
			*dirty = true;
			if (!m)
				break;
			pos = (uint64_t)(m - map);
			continue;
		}
		if (r.seq > s->seq)
			s->seq = r.seq;
		switch (r.type) {
		case J_PUT_SMALL:
		case J_PUT_LARGE:
			if (replay_put(s, &r, len, now,
				       r.value ? (uint64_t)(r.value - map)
					       : 0, dirty) < 0) {
				stat_add(s, recovery_dropped, 1);
				*dirty = true;
			}
			break;
		case J_DEL:
			o = obj_lookup(s, r.key, r.klen);
			if (o)
				obj_unlink(s, o);
			break;
		case J_TOUCH:
			o = obj_lookup(s, r.key, r.klen);
			if (o)
				o->exptime = r.exptime;
			break;
		case J_ATTR:
			o = obj_lookup(s, r.key, r.klen);
			if (o && o->cas == r.cas &&
			    attr_replace(o, r.attr, r.attr_len) == 0)
				o->exptime = r.exptime;
			break;
		case J_RENAME:
			rename_apply(s, r.key, r.klen, r.key2, r.klen2,
				     (uint64_t)len);
			break;
		}
		pos += (uint64_t)len;
		good = pos;
	}
	munmap(map, st.st_size);
	if (good < s->jbytes)
		*dirty = true;
	return 0;
}

#define PRELOAD_DEPTH 32

struct preload {
	struct gs_io io;
	struct gs_obj *o;
	uint8_t *slot;
	uint64_t hlen;
};

/* A head read has completed: keep it if it verifies. */
static void preload_done(struct gs_store *s, struct preload *pl)
{
	struct gs_obj *o = pl->o;

	if (pl->io.res < (int)pl->hlen ||
	    !blocks_verify(o, pl->slot, 0, pl->hlen)) {
		slots_put(&s->slots, pl->slot);
		if (pl->io.res >= (int)pl->hlen)
			obj_drop_corrupt(s, o);
		return;
	}
	o->head = pl->slot;
	slru_insert(&s->lru_head, &o->hlru, 1);
}

/*
 * Read the heads of recovered objects back into RAM while slots are free,
 * most recently written first, PRELOAD_DEPTH reads in flight, straight into
 * their slots.  Runs at open, before any other thread sees the store.
 */
static void preload_heads(struct gs_store *s)
{
	struct preload pl[PRELOAD_DEPTH] = { 0 };
	struct io_uring *ring = ring_get(s);
	struct list_head *p = s->lru_ssd.prob.next;
	unsigned head = 0, n = 0;

	if (!ring)
		return;
	while (n || (p != &s->lru_ssd.prob && s->slots.nfree)) {
		/* queue reads for the next candidates */
		while (n < PRELOAD_DEPTH && p != &s->lru_ssd.prob &&
		       s->slots.nfree) {
			struct gs_obj *o = list_entry(p, struct gs_obj, lru.l);
			struct preload *q = &pl[(head + n) % PRELOAD_DEPTH];
			int tier = obj_tier_of(o, 0);
			uint64_t run, dev = obj_dev_off(o, tier, 0, &run);
			struct io_uring_sqe *sqe;

			p = p->next;
			q->hlen = o->size < s->o.ram_head ? o->size
							   : s->o.ram_head;
			if (o->head || q->hlen == 0 || run < q->hlen)
				continue;
			q->o = o;
			q->slot = slots_get(&s->slots);
			sqe = io_get_sqe(ring);
			io_uring_prep_read(sqe, tier_fd(s, tier), q->slot,
					   ALIGN4K(q->hlen), dev);
			io_prep(sqe, &q->io);
			f_sqe(s, sqe, &q->io);
			n++;
		}
		if (!n)
			break;
		/* then finish the oldest */
		io_wait(ring, &pl[head].io);
		preload_done(s, &pl[head]);
		head = (head + 1) % PRELOAD_DEPTH;
		n--;
	}
	ring_put_locked(s, ring);	/* single-threaded at open */
}

/* ---- open and close ---- */

/* The SSD tier's directory as an absolute path (created if need be). */
static int ssd_dir_resolve(const char *want, char *out, char *err, size_t len)
{
	if (mkdir(want, 0755) < 0 && errno != EEXIST)
		return errf(err, len, -errno, "cannot create '%s': %s", want,
			    strerror(errno));
	if (!realpath(want, out))
		return errf(err, len, -errno, "cannot resolve '%s': %s", want,
			    strerror(errno));
	return 0;
}

static int options_check(const struct gs_options *o, char *err, size_t len);

/* The sizes a store remembers, as "name value" lines of the superblock. */
static const struct {
	const char *name;
	size_t off;
	uint64_t dflt;
} sizes[] = {
	{ "memory", offsetof(struct gs_options, memory), 64ull << 20 },
	{ "small-memory", offsetof(struct gs_options, small_memory),
	  16ull << 20 },
	{ "block", offsetof(struct gs_options, block), 2ull << 20 },
	{ "ram-head", offsetof(struct gs_options, ram_head), 256ull << 10 },
	{ "ssd-size", offsetof(struct gs_options, ssd_size), 0 },
	{ "ssd-floor", offsetof(struct gs_options, ssd_floor), 0 },
	{ "hdd-size", offsetof(struct gs_options, hdd_size), 0 },
	{ "ssd-prefix", offsetof(struct gs_options, ssd_prefix), 4ull << 20 },
};
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

static uint64_t *size_field(struct gs_options *o, size_t i)
{
	return (uint64_t *)((char *)o + sizes[i].off);
}

/* Write the superblock for @o (sizes resolved) atomically. */
static int super_write(const char *dir, const struct gs_options *o,
		       const char *ssd_rec, const char *hdd_rec,
		       long long created, char *err, size_t len)
{
	char path[PATH_MAX], tmp[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, SUPER_NAME);
	snprintf(tmp, sizeof(tmp), "%s/%s.new", dir, SUPER_NAME);
	f = fopen(tmp, "w");
	if (!f)
		return errf(err, len, -errno, "cannot create '%s': %s", tmp,
			    strerror(errno));
	fprintf(f, "goblin-store-format %d\nalloc-unit %d\ncsum-block %d\n"
		   "ssd-dir %s\nhdd-dir %s\ncreated %lld\n",
		FORMAT_VERSION, GS_ALLOC_UNIT, GS_CSUM_BLOCK, ssd_rec, hdd_rec,
		created);
	for (size_t i = 0; i < NSIZES; i++)
		fprintf(f, "%s %llu\n", sizes[i].name,
			(unsigned long long)*size_field((struct gs_options *)o,
							i));
	if (fflush(f) || fsync(fileno(f)) || fclose(f) || rename(tmp, path))
		return errf(err, len, -EIO, "cannot write '%s'", path);
	return 0;
}

/*
 * Read (or, creating, write) the superblock; settle where the SSD tier
 * lives and the sizes to run with.  The superblock keeps the SSD directory
 * given at creation ("-": the default <store>/ssd) and a later open may not
 * name another.  The HDD directory ("-": none) is kept the same way from
 * the first open that names one; @hdd_dir is left empty without one.  It
 * also keeps the sizes of the last open: a size the
 * caller leaves at GS_UNSET is taken from there (a built-in default for a
 * new store), so a command that names no sizes does not shrink a store
 * that was run bigger; a size that is given is used and remembered.
 */
static int super_check(const char *dir, struct gs_options *o, char *ssd_dir,
		       char *hdd_dir, char *err, size_t len)
{
	char path[PATH_MAX], line[PATH_MAX + 32], rec[PATH_MAX] = "-";
	char hrec[PATH_MAX] = "-";
	char dflt[PATH_MAX], given[PATH_MAX];
	uint64_t recorded[NSIZES];
	bool have[NSIZES] = { false }, changed = false;
	long long created = (long long)time(NULL);
	FILE *f;
	int version = 0, ret;
	unsigned long unit = 0, block = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, SUPER_NAME);
	snprintf(dflt, sizeof(dflt), "%s/ssd", dir);
	*hdd_dir = '\0';
	f = fopen(path, "r");
	if (!f && errno == ENOENT && o->create) {
		ret = ssd_dir_resolve(o->ssd_dir ? o->ssd_dir : dflt, ssd_dir,
				      err, len);
		if (ret == 0 && o->hdd_dir)
			ret = ssd_dir_resolve(o->hdd_dir, hdd_dir, err, len);
		if (ret < 0)
			return ret;
		for (size_t i = 0; i < NSIZES; i++)
			if (*size_field(o, i) == GS_UNSET)
				*size_field(o, i) = sizes[i].dflt;
		ret = options_check(o, err, len);
		return ret < 0 ? ret
			       : super_write(dir, o, o->ssd_dir ? ssd_dir : "-",
					     *hdd_dir ? hdd_dir : "-", created,
					     err, len);
	}
	if (!f) {
		if (errno == ENOENT)
			return errf(err, len, -ENOENT,
				    "'%s' is not a goblin store", dir);
		return errf(err, len, -errno, "cannot read '%s': %s", path,
			    strerror(errno));
	}
	while (fgets(line, sizeof(line), f)) {
		unsigned long long v;
		char name[32];

		line[strcspn(line, "\n")] = '\0';
		sscanf(line, "goblin-store-format %d", &version);
		sscanf(line, "alloc-unit %lu", &unit);
		sscanf(line, "csum-block %lu", &block);
		sscanf(line, "created %lld", &created);
		if (strncmp(line, "ssd-dir ", 8) == 0 &&
		    strlen(line + 8) < sizeof(rec))
			memcpy(rec, line + 8, strlen(line + 8) + 1);
		if (strncmp(line, "hdd-dir ", 8) == 0 &&
		    strlen(line + 8) < sizeof(hrec))
			memcpy(hrec, line + 8, strlen(line + 8) + 1);
		if (sscanf(line, "%31s %llu", name, &v) != 2)
			continue;
		for (size_t i = 0; i < NSIZES; i++)
			if (!strcmp(name, sizes[i].name)) {
				recorded[i] = v;
				have[i] = true;
			}
	}
	fclose(f);
	if (version != FORMAT_VERSION || unit != GS_ALLOC_UNIT ||
	    block != GS_CSUM_BLOCK)
		return errf(err, len, -EPROTO,
			    "store '%s' has format %d (unit %lu, block %lu); "
			    "this build reads format %d",
			    dir, version, unit, block, FORMAT_VERSION);
	ret = ssd_dir_resolve(strcmp(rec, "-") ? rec : dflt, ssd_dir, err,
			      len);
	if (ret < 0)
		return ret;
	if (o->ssd_dir) {
		ret = ssd_dir_resolve(o->ssd_dir, given, err, len);
		if (ret < 0)
			return ret;
		if (strcmp(given, ssd_dir))
			return errf(err, len, -EINVAL,
				    "store '%s' keeps its SSD tier in '%s', "
				    "not '%s'", dir, ssd_dir, o->ssd_dir);
	}
	if (strcmp(hrec, "-")) {
		ret = ssd_dir_resolve(hrec, hdd_dir, err, len);
		if (ret < 0)
			return ret;
	}
	if (o->hdd_dir) {
		ret = ssd_dir_resolve(o->hdd_dir, given, err, len);
		if (ret < 0)
			return ret;
		if (*hdd_dir && strcmp(given, hdd_dir))
			return errf(err, len, -EINVAL,
				    "store '%s' keeps its HDD tier in '%s', "
				    "not '%s'", dir, hdd_dir, o->hdd_dir);
		if (!*hdd_dir) {	/* an HDD tier from now on */
			memcpy(hdd_dir, given, strlen(given) + 1);
			memcpy(hrec, given, strlen(given) + 1);
			changed = true;
		}
	}
	for (size_t i = 0; i < NSIZES; i++) {
		uint64_t *v = size_field(o, i);

		if (*v == GS_UNSET)
			*v = have[i] ? recorded[i] : sizes[i].dflt;
		if (!have[i] || recorded[i] != *v)
			changed = true;
	}
	ret = options_check(o, err, len);
	if (ret < 0)
		return ret;
	return changed ? super_write(dir, o, rec, hrec, created, err, len) : 0;
}

static int lock_store(struct gs_store *s, char *err, size_t len)
{
	char path[PATH_MAX], pid[32];
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	ssize_t n;

	snprintf(path, sizeof(path), "%s/lock", s->dir);
	s->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (s->lock_fd < 0)
		return errf(err, len, -errno, "cannot open '%s': %s", path,
			    strerror(errno));
	if (fcntl(s->lock_fd, F_OFD_SETLK, &fl) < 0) {
		/* the holder writes its pid just after it takes the lock */
		for (int i = 0; i < 50; i++) {
			n = pread(s->lock_fd, pid, sizeof(pid) - 1, 0);
			pid[n > 0 ? n : 0] = '\0';
			if (strchr(pid, '\n'))
				break;
			usleep(2000);
		}
		pid[strcspn(pid, "\n")] = '\0';
		return errf(err, len, -EBUSY,
			    "store '%s' is in use by pid %s", s->dir,
			    *pid ? pid : "(unknown)");
	}
	n = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	if (ftruncate(s->lock_fd, 0) < 0 || pwrite(s->lock_fd, pid, n, 0) != n)
		return errf(err, len, -EIO, "cannot write '%s'", path);
	return 0;
}

static int options_check(const struct gs_options *o, char *err, size_t len)
{
	if (o->ram_head % GS_CSUM_BLOCK || o->io_chunk == 0 ||
	    o->io_chunk % GS_CSUM_BLOCK || o->write_io_chunk == 0 ||
	    o->write_io_chunk % GS_CSUM_BLOCK)
		return errf(err, len, -EINVAL,
			    "--ram-head, --io-chunk and --write-io-chunk must "
			    "be multiples of %d", GS_CSUM_BLOCK);
	if (o->block == 0 || o->block % 4096)
		return errf(err, len, -EINVAL,
			    "--block must be a multiple of 4096");
	if (o->ram_head > o->block && o->memory)
		return errf(err, len, -EINVAL,
			    "--ram-head must not exceed --block");
	if (o->io_depth == 0 || o->io_depth > GS_MAX_DEPTH)
		return errf(err, len, -EINVAL, "io depth must be 1..%d",
			    GS_MAX_DEPTH);
	if (o->ssd_prefix % GS_ALLOC_UNIT)
		return errf(err, len, -EINVAL,
			    "--ssd-prefix must be a multiple of %d",
			    GS_ALLOC_UNIT);
	return 0;
}

/*
 * A tier's capacity: @size, or the free space of @dir (with what its data
 * file @fd holds) less the floor.  *@floor becomes the bytes the tier
 * leaves free on its file system from then on (tier_limit_refresh()):
 * @floor when given, else without @size 5% of the file system, at least
 * 1 GiB, and with @size 1/32 of it, 4 MiB to 1 GiB.
 */
static uint64_t tier_capacity(const char *dir, int fd, uint64_t size,
			      uint64_t *floor)
{
	struct statvfs vfs;
	struct stat st;
	uint64_t avail, have = 0, fs;

	if (statvfs(dir, &vfs) < 0) {
		*floor = 0;
		return size / GS_ALLOC_UNIT * GS_ALLOC_UNIT;
	}
	fs = (uint64_t)vfs.f_blocks * vfs.f_frsize;
	if (size) {
		if (!*floor) {
			*floor = fs / 32;
			if (*floor < (4ull << 20))
				*floor = 4ull << 20;
			if (*floor > (1ull << 30))
				*floor = 1ull << 30;
		}
		return size / GS_ALLOC_UNIT * GS_ALLOC_UNIT;
	}
	if (fstat(fd, &st) == 0)
		have = (uint64_t)st.st_blocks * 512;
	avail = (uint64_t)vfs.f_bavail * vfs.f_frsize + have;
	if (!*floor) {
		*floor = fs / 20;
		if (*floor < (1ull << 30))
			*floor = 1ull << 30;
	}
	return avail > *floor ? (avail - *floor) / GS_ALLOC_UNIT * GS_ALLOC_UNIT
			      : 0;
}

/* Do @a and @b live on one file system? */
static bool same_fs(int a, int b)
{
	struct stat sa, sb;

	return a >= 0 && b >= 0 && fstat(a, &sa) == 0 && fstat(b, &sb) == 0 &&
	       sa.st_dev == sb.st_dev;
}

/* Units a data file spans: extents from an earlier, larger capacity. */
static uint64_t data_units(int fd)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return 0;
	return ((uint64_t)st.st_size + GS_ALLOC_UNIT - 1) / GS_ALLOC_UNIT;
}

static void bufs_init(struct gs_store *s)
{
	uint64_t rsz = s->o.io_chunk;

	if (rsz < s->o.ram_head)
		rsz = s->o.ram_head;	/* a whole head can be read back */
	bufpool_init(&s->rbufs, rsz);
	if (s->o.io_chunk < GS_LONG_READ)
		bufpool_init(&s->rbufs_long, GS_LONG_READ);
	else
		memset(&s->rbufs_long, 0, sizeof(s->rbufs_long));
	bufpool_init(&s->wbufs, s->o.write_io_chunk);
	/* a small put's record: value below a head, longest key and attrs */
	bufpool_init(&s->jbufs, ALIGN4K(J_HDR + J_PUT_BODY + GS_KEY_MAX +
					GS_ATTR_MAX + s->o.ram_head));
}

int gs_open(const char *dir, const struct gs_options *opt,
	    struct gs_store **out, char *err, size_t errlen)
{
	struct gs_store *s;
	char ssd_dir[PATH_MAX], hdd_dir[PATH_MAX], path[PATH_MAX];
	uint64_t cap, hcap = 0;
	bool dirty = false;
	int ret;

	if (err && errlen)
		*err = '\0';
	if (fault_env() < 0)
		return errf(err, errlen, -EINVAL, "GOBLIN_FAULTS: not "
			    "SEED:STEP:CLASS:ONE_IN");
	FAULT_STEP(FS_RECOVERY);
	if (opt->create && mkdir(dir, 0755) < 0 && errno != EEXIST)
		return errf(err, errlen, -errno, "cannot create '%s': %s", dir,
			    strerror(errno));
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->lock_fd = s->data_fd = s->hdd_fd = s->jfd = s->jdfd = -1;
	s->o = *opt;
	s->dir = strdup(dir);
	list_init(&s->cold);
	slru_init(&s->lru_ssd, 0);	/* sized below, once capacities are known */
	slru_init(&s->lru_small, 0);
	slru_init(&s->lru_head, 0);
	slru_init(&s->lru_hdd, 0);
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->fill_cond, NULL);
	if (!s->dir) {
		ret = -ENOMEM;
		goto fail;
	}
	snprintf(path, sizeof(path), "%s/%s", dir, SUPER_NAME);
	if (!opt->create && access(path, F_OK) < 0) {
		/* before the lock, which would leave a file behind */
		ret = errf(err, errlen, -ENOENT, "'%s' is not a goblin store",
			   dir);
		goto fail;
	}
	ret = lock_store(s, err, errlen);
	if (ret < 0)
		goto fail;
	ret = super_check(dir, &s->o, ssd_dir, hdd_dir, err, errlen);
	s->o.ssd_dir = s->o.hdd_dir = NULL;	/* the caller owns them */
	if (ret < 0)
		goto fail;
	if (snprintf(path, sizeof(path), "%s/data", ssd_dir) >=
	    (int)sizeof(path)) {
		ret = errf(err, errlen, -ENAMETOOLONG, "path too long: '%s'",
			   ssd_dir);
		goto fail;
	}
	s->data_fd = open(path, O_RDWR | O_CREAT | O_DIRECT | O_CLOEXEC, 0644);
	if (s->data_fd < 0) {
		ret = errf(err, errlen, -errno,
			   "cannot open '%s' with O_DIRECT: %s", path,
			   strerror(errno));
		goto fail;
	}
	snprintf(path, sizeof(path), "%s/journal", dir);
	s->jfd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (s->jfd < 0) {
		ret = errf(err, errlen, -errno, "cannot open '%s': %s", path,
			   strerror(errno));
		goto fail;
	}
	/* without O_DIRECT here every record is buffered */
	s->jdfd = open(path, O_WRONLY | O_DIRECT | O_CLOEXEC);
	s->floor[TIER_SSD] = s->o.ssd_floor;
	cap = tier_capacity(ssd_dir, s->data_fd, s->o.ssd_size,
			    &s->floor[TIER_SSD]);
	s->cap[TIER_SSD] = cap;
	s->jshare[TIER_SSD] = same_fs(s->jfd, s->data_fd);
	if (cap < GS_ALLOC_UNIT) {
		ret = errf(err, errlen, -ENOSPC,
			   "no room for the SSD tier in '%s'", ssd_dir);
		goto fail;
	}
	if (*hdd_dir) {
		if (snprintf(path, sizeof(path), "%s/data", hdd_dir) >=
		    (int)sizeof(path)) {
			ret = errf(err, errlen, -ENAMETOOLONG,
				   "path too long: '%s'", hdd_dir);
			goto fail;
		}
		s->hdd_fd = open(path, O_RDWR | O_CREAT | O_DIRECT | O_CLOEXEC,
				 0644);
		if (s->hdd_fd < 0) {
			ret = errf(err, errlen, -errno,
				   "cannot open '%s' with O_DIRECT: %s", path,
				   strerror(errno));
			goto fail;
		}
		s->floor[TIER_HDD] = s->o.ssd_floor;
		hcap = tier_capacity(hdd_dir, s->hdd_fd, s->o.hdd_size,
				     &s->floor[TIER_HDD]);
		s->cap[TIER_HDD] = hcap;
		s->jshare[TIER_HDD] = same_fs(s->jfd, s->hdd_fd);
		if (hcap < GS_ALLOC_UNIT) {
			ret = errf(err, errlen, -ENOSPC,
				   "no room for the HDD tier in '%s'",
				   hdd_dir);
			goto fail;
		}
		s->split = s->o.ram_head + s->o.ssd_prefix;
	}
	/* binds this thread first, so the pools fault in on its node */
	ret = numa_open(&s->numa, s->o.numa_node, !s->o.no_numa_promotion,
			s->o.perverse, err, errlen);
	if (ret < 0)
		goto fail;
	ret = ram_region_map(&s->head_mem, s->o.memory, s->o.block,
			     !s->o.no_hugetlb, !s->o.no_mlock);
	if (ret == 0)
		ret = ram_region_map(&s->small_mem, s->o.small_memory,
				     s->o.block, !s->o.no_hugetlb,
				     !s->o.no_mlock);
	if (ret < 0) {
		errf(err, errlen, ret, "cannot map RAM pools: %s",
		     strerror(-ret));
		goto fail;
	}
	ret = numa_place(&s->numa, s->head_mem.base, s->head_mem.size,
			 s->head_mem.page, s->small_mem.base, s->small_mem.size,
			 err, errlen);
	if (ret < 0)
		goto fail;
	if ((ret = slots_init(&s->slots, s->head_mem.base, s->head_mem.size,
			      s->o.ram_head)) < 0 ||
	    (ret = arena_init(&s->arena, s->small_mem.base,
			      s->small_mem.size, s->o.block)) < 0 ||
	    (ret = space_init(&s->space, cap, GS_ALLOC_UNIT)) < 0 ||
	    (ret = space_grow_map(&s->space, data_units(s->data_fd))) < 0 ||
	    (ret = space_init(&s->hspace, hcap, GS_ALLOC_UNIT)) < 0 ||
	    (s->hdd_fd >= 0 &&
	     (ret = space_grow_map(&s->hspace, data_units(s->hdd_fd))) < 0) ||
	    (ret = index_init(&s->idx, 1024)) < 0 ||
	    (ret = index_init(&s->fills, 16)) < 0)
		goto fail;
	bufs_init(s);
	/* the file's units are reused before it grows into its holes */
	space_set_mark(&s->space, data_units(s->data_fd));
	if (s->hdd_fd >= 0)
		space_set_mark(&s->hspace, data_units(s->hdd_fd));
	/* protected segments: 80% of each tier's capacity */
	slru_init(&s->lru_ssd, s->space.limit * 4 / 5);
	slru_init(&s->lru_small, s->small_mem.size * 4 / 5);
	slru_init(&s->lru_head, (uint64_t)s->slots.nslots * 4 / 5);
	slru_init(&s->lru_hdd, s->hspace.limit * 4 / 5);
	ret = journal_replay(s, &dirty);
	if (ret < 0) {
		errf(err, errlen, ret, "cannot read the journal: %s",
		     strerror(-ret));
		goto fail;
	}
	/* a smaller capacity than last time, or less room on the file
	 * system: evict down to it, by policy */
	tier_limit_refresh(s, TIER_SSD);
	tier_limit_refresh(s, TIER_HDD);
	if (s->space.used > s->space.limit) {
		evict(s, TIER_SSD, 0);
		dirty = true;
	}
	if (s->hspace.used > s->hspace.limit) {
		evict(s, TIER_HDD, 0);
		dirty = true;
	}
	stat_add(s, recovered, s->idx.count);
	if ((dirty || s->jbytes > 2 * s->jlive + (1u << 20)) &&
	    (ret = journal_rewrite(s)) < 0) {
		errf(err, errlen, ret, "cannot rewrite the journal: %s",
		     strerror(-ret));
		goto fail;
	}
	if (opt->preload_heads)
		preload_heads(s);
	FAULT_STEP(FS_NONE);
	*out = s;
	return 0;
fail:
	gs_close(s);
	FAULT_STEP(FS_NONE);
	return ret;
}

void gs_close(struct gs_store *s)
{
	uint64_t pos = 0;
	struct idx_node *n;

	if (!s)
		return;
	/*
	 * Drop the index's references; readers must all be closed.  Each
	 * unlink takes the head of bucket pos: the buckets before it are
	 * empty, so the scan goes on from there (from 0, a store of n
	 * objects took n times the bucket array to close).
	 */
	while (s->idx.b && (n = index_next(&s->idx, &pos, NULL))) {
		struct gs_obj *o = list_entry(n, struct gs_obj, node);

		obj_unlink(s, o);
	}
	while (s->reader_free) {
		struct gs_reader *r = s->reader_free;

		s->reader_free = reader_free_next(r);
		free(r);
	}
	/*
	 * A clean journal ends with its last record (replay would take the
	 * zeros after it for the end, too).
	 */
	if (s->jfd >= 0 && s->jalloc > s->jbytes &&
	    ftruncate(s->jfd, (off_t)s->jbytes) == 0)
		s->jalloc = s->jbytes;
	if (s->jfd >= 0 && s->o.sync)
		fdatasync(s->jfd);
	ring_pool_free(s);
	index_release(&s->idx);
	index_release(&s->fills);
	space_release(&s->space);
	space_release(&s->hspace);
	arena_release(&s->arena);
	slots_release(&s->slots);
	numa_close(&s->numa);	/* its thread moves pool pages */
	ram_region_unmap(&s->head_mem);
	ram_region_unmap(&s->small_mem);
	bufpool_release(&s->rbufs);
	bufpool_release(&s->rbufs_long);
	bufpool_release(&s->wbufs);
	bufpool_release(&s->jbufs);
	if (s->data_fd >= 0)
		close(s->data_fd);
	if (s->hdd_fd >= 0)
		close(s->hdd_fd);
	if (s->jfd >= 0)
		close(s->jfd);
	if (s->jdfd >= 0)
		close(s->jdfd);
	if (s->lock_fd >= 0)
		close(s->lock_fd);
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->fill_cond);
	free(s->dir);
	free(s);
}

/* ---- simple operations ---- */

int gs_delete(struct gs_store *s, const void *key, size_t klen)
{
	struct gs_obj *o;
	int ret = -ENOENT;

	FAULT_STEP(FS_DELETE);
	if (klen == 0 || klen > GS_KEY_MAX)
		return -EINVAL;
	pthread_mutex_lock(&s->lock);
	o = obj_lookup(s, key, klen);
	/* gone only once its record is written: else it stays */
	if (o && (ret = journal_key_record(s, J_DEL, o, 0)) >= 0) {
		obj_unlink(s, o);
		stat_add(s, deletes, 1);
		journal_maybe_rewrite(s);
		ret = ret == JOURNAL_UNSYNCED ? -EIO : 0;
	}
	pthread_mutex_unlock(&s->lock);
	return ret;
}

int gs_rename(struct gs_store *s, const void *from, size_t flen,
	      const void *to, size_t tlen)
{
	struct jrec r = { .type = J_RENAME, .key = from, .klen = (uint32_t)flen,
			  .key2 = to, .klen2 = (uint32_t)tlen };
	uint8_t *buf;
	size_t len;
	int ret;

	FAULT_STEP(FS_RENAME);
	if (!from || !to || flen == 0 || flen > GS_KEY_MAX || tlen == 0 ||
	    tlen > GS_KEY_MAX)
		return -EINVAL;
	len = jrec_size(&r);
	buf = malloc(len);
	if (!buf)
		return -ENOMEM;
	pthread_mutex_lock(&s->lock);
	if (!obj_lookup(s, from, flen)) {
		ret = -ENOENT;
	} else if (flen == tlen && memcmp(from, to, flen) == 0) {
		ret = 0;
	} else {
		r.seq = ++s->seq;
		jrec_encode(&r, NULL, NULL, buf);
		ret = journal_write(s, buf, len);
		if (ret >= 0) {
			int applied = rename_apply(s, from, flen, to, tlen,
						   len);

			ret = ret == JOURNAL_UNSYNCED ? -EIO : applied;
		}
		if (ret == 0)
			journal_maybe_rewrite(s);
	}
	pthread_mutex_unlock(&s->lock);
	free(buf);
	return ret;
}

void obj_meta(const struct gs_obj *o, struct gs_meta *m)
{
	m->size = o->size;
	m->cas = o->cas;
	m->exptime = o->exptime;
	m->mtime_ns = o->mtime_ns;
	m->xxh3 = o->xxh3;
	m->flags = o->flags;
	m->attr_len = o->attr_len;
	if (o->attr_len)
		memcpy(m->attr, o->attr, o->attr_len);
}

int gs_stat(struct gs_store *s, const void *key, size_t klen,
	    struct gs_meta *meta)
{
	struct gs_obj *o;

	if (klen == 0 || klen > GS_KEY_MAX)
		return -EINVAL;
	pthread_mutex_lock(&s->lock);
	o = obj_lookup(s, key, klen);
	if (o)
		obj_meta(o, meta);
	pthread_mutex_unlock(&s->lock);
	return o ? 0 : -ENOENT;
}

int gs_touch(struct gs_store *s, const void *key, size_t klen, int64_t exptime)
{
	struct gs_obj *o;
	int ret = -ENOENT;

	FAULT_STEP(FS_META);
	if (klen == 0 || klen > GS_KEY_MAX)
		return -EINVAL;
	pthread_mutex_lock(&s->lock);
	o = obj_lookup(s, key, klen);
	if (o) {
		ret = journal_key_record(s, J_TOUCH, o, exptime);
		if (ret >= 0)
			o->exptime = exptime;
		if (ret == JOURNAL_UNSYNCED)
			ret = -EIO;
	}
	pthread_mutex_unlock(&s->lock);
	return ret;
}

/*
 * The J_ATTR record is not counted in the object's live journal bytes (as
 * J_TOUCH): a journal rewrite folds it into the object's put record.
 */
int gs_set_attr(struct gs_store *s, const void *key, size_t klen, uint64_t cas,
		const void *attr, size_t attr_len, int64_t exptime)
{
	struct jrec r = {
		.type = J_ATTR, .key = key, .klen = (uint32_t)klen, .cas = cas,
		.exptime = exptime, .attr = attr, .attr_len = (uint32_t)attr_len,
	};
	uint8_t *buf = NULL, *copy = NULL;
	struct gs_obj *o;
	size_t len;
	int ret;

	FAULT_STEP(FS_META);
	if (!key || klen == 0 || klen > GS_KEY_MAX || attr_len > GS_ATTR_MAX ||
	    (!attr && attr_len))
		return -EINVAL;
	len = jrec_size(&r);
	buf = malloc(len);
	if (!buf || (attr_len && !(copy = malloc(attr_len)))) {
		free(buf);
		return -ENOMEM;
	}
	if (attr_len)
		memcpy(copy, attr, attr_len);
	pthread_mutex_lock(&s->lock);
	o = obj_lookup(s, key, klen);
	if (!o) {
		ret = -ENOENT;
		goto out;
	}
	if (o->cas != cas) {
		ret = -ESTALE;
		goto out;
	}
	r.seq = ++s->seq;
	jrec_encode(&r, NULL, NULL, buf);
	ret = journal_write(s, buf, len);
	if (ret < 0)
		goto out;
	free(o->attr);
	o->attr = copy;
	o->attr_len = (uint16_t)attr_len;
	o->exptime = exptime;
	copy = NULL;
	if (ret == JOURNAL_UNSYNCED)
		ret = -EIO;
out:
	pthread_mutex_unlock(&s->lock);
	free(copy);
	free(buf);
	return ret;
}

int gs_inspect(struct gs_store *s, const void *key, size_t klen,
	       struct gs_range *rg, int max)
{
	struct gs_obj *o;
	int n = 0;

	if (klen == 0 || klen > GS_KEY_MAX)
		return -EINVAL;
	pthread_mutex_lock(&s->lock);
	o = obj_lookup(s, key, klen);
	if (!o) {
		pthread_mutex_unlock(&s->lock);
		return -ENOENT;
	}
	if (o->small) {
		/* a cold one's bytes are on the SSD, in the journal */
		if (n < max)
			rg[n] = o->item.ptr
				? (struct gs_range){ GS_TIER_SMALL, 0, o->size, 0 }
				: (struct gs_range){ GS_TIER_SSD, 0, o->size,
						     o->jpos };
		n++;
	} else {
		uint64_t off = 0;

		if (o->head) {
			uint64_t h = o->size < s->o.ram_head ? o->size
							      : s->o.ram_head;
			if (n < max)
				rg[n] = (struct gs_range){ GS_TIER_RAM, 0, h, 0 };
			n++;
		}
		/*
		 * The disk copies start at 0: they are the head's durable
		 * home too.  The SSD holds [0, ssd_len); with an HDD copy,
		 * the HDD holds all of it.
		 */
		for (int t = TIER_SSD; t < NTIERS; t++) {
			uint64_t end = t == TIER_SSD ? o->ssd_len : o->size;

			off = 0;
			for (uint32_t i = 0; i < o->next && off < end; i++) {
				uint64_t len = o->ext[i].len;

				if (o->ext[i].tier != t)
					continue;
				if (len > end - off)
					len = end - off;
				if (n < max)
					rg[n] = (struct gs_range){
						t == TIER_SSD ? GS_TIER_SSD
							      : GS_TIER_HDD,
						off, len, o->ext[i].off
					};
				n++;
				off += len;
			}
		}
	}
	pthread_mutex_unlock(&s->lock);
	return n;
}

int gs_iterate(struct gs_store *s, const void *prefix, size_t plen,
	       int (*fn)(void *arg, const void *key, size_t klen,
			 const struct gs_meta *m),
	       void *arg)
{
	struct gs_meta *m = malloc(sizeof(*m));
	uint8_t *key = malloc(GS_KEY_MAX);
	uint64_t pos = 0, done = 0;
	int64_t now = time(NULL);
	int ret = 0;

	if (!m || !key) {
		free(m);
		free(key);
		return -ENOMEM;
	}
	/*
	 * Walk bucket by bucket, copying one entry out at a time so that @fn
	 * runs unlocked.  A bucket's chain is re-walked from its start, and
	 * entries already reported in it are skipped by count.
	 */
	for (;;) {
		struct idx_node *n;
		size_t klen = 0;
		uint64_t i = 0;
		bool found = false;

		pthread_mutex_lock(&s->lock);
		if (pos > s->idx.mask) {
			pthread_mutex_unlock(&s->lock);
			break;
		}
		for (n = s->idx.b[pos]; n; n = n->next) {
			struct gs_obj *o = list_entry(n, struct gs_obj, node);

			if (n->klen < plen || memcmp(n->key, prefix, plen) ||
			    obj_expired(o, now))
				continue;
			if (i++ < done)
				continue;
			klen = n->klen;
			memcpy(key, n->key, klen);
			obj_meta(o, m);
			found = true;
			break;
		}
		pthread_mutex_unlock(&s->lock);
		if (!found) {
			pos++;
			done = 0;
			continue;
		}
		done++;
		ret = fn(arg, key, klen, m);
		if (ret)
			break;
	}
	free(m);
	free(key);
	return ret;
}

void gs_stats_get(struct gs_store *s, struct gs_stats *st)
{
	uint64_t *v = (uint64_t *)st;
	struct numa_counts nc;

	memset(st, 0, sizeof(*st));
	for (int i = 0; i < NSTAT_SHARDS; i++)
		for (size_t k = 0; k < sizeof(*st) / 8; k++)
			v[k] += atomic_load_explicit(&s->stats[i].v[k],
						     memory_order_relaxed);
	pthread_mutex_lock(&s->lock);
	st->objects = s->idx.count;
	st->small_objects = s->nsmall;
	st->bytes = s->bytes;
	st->ram_capacity = s->head_mem.size;
	st->ram_slots = s->slots.nslots;
	st->ram_slots_used = s->slots.nslots - s->slots.nfree;
	st->small_capacity = s->small_mem.size;
	st->small_used = arena_used(&s->arena);
	st->small_live = s->arena.live;
	st->small_cold = s->ncold;
	st->small_cold_bytes = s->cold_bytes;
	st->ssd_capacity = s->space.limit * GS_ALLOC_UNIT;
	st->ssd_used = s->space.used * GS_ALLOC_UNIT;
	st->hdd_capacity = s->hspace.limit * GS_ALLOC_UNIT;
	st->hdd_used = s->hspace.used * GS_ALLOC_UNIT;
	st->journal_bytes = s->jbytes;
	st->io_buffer_bytes = bufpool_bytes(&s->rbufs) +
			      bufpool_bytes(&s->rbufs_long) +
			      bufpool_bytes(&s->wbufs) +
			      bufpool_bytes(&s->jbufs);
	st->hugetlb = s->head_mem.hugetlb;
	st->mlocked = s->head_mem.mlocked || !s->head_mem.size;
	pthread_mutex_unlock(&s->lock);
	numa_counts_get(&s->numa, &nc);
	st->numa_nodes = numa_topo_mem_nodes(&s->numa.topo);
	st->numa_promotions = nc.promotions;
	st->numa_bytes_moved = nc.bytes_moved;
	st->numa_swap_ns_total = nc.swap_ns_total;
	st->numa_swap_ns_max = nc.swap_ns_max;
	st->numa_move_failures = nc.move_failures;
}
