/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The store: open (files, capacities, pools, recovery) and close, and the
 * simple operations: delete, rename, stat, touch, attributes, inspect,
 * iterate and statistics.  Puts live in writer.c, gets in reader.c; the
 * rooms below are listed in store/README.md.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>
#include "internal.h"

static int lock_store(struct gs_store *s, char *err, size_t len)
{
	char path[PATH_MAX], pid[32];
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	ssize_t n;

	snprintf(path, sizeof(path), "%s/lock", s->dir);
	s->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (s->lock_fd < 0)
		return store_errf(err, len, -errno, "cannot open '%s': %s",
				  path, strerror(errno));
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
		return store_errf(err, len, -EBUSY,
				  "store '%s' is in use by pid %s", s->dir,
				  *pid ? pid : "(unknown)");
	}
	n = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	if (ftruncate(s->lock_fd, 0) < 0 || pwrite(s->lock_fd, pid, n, 0) != n)
		return store_errf(err, len, -EIO, "cannot write '%s'", path);
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
	return avail > *floor ?
		       (avail - *floor) / GS_ALLOC_UNIT * GS_ALLOC_UNIT :
		       0;
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
		rsz = s->o.ram_head; /* a whole head can be read back */
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

/*
 * Open the tiers' data files and the journal, and settle the tiers'
 * capacities (*@cap, *@hcap: 0 without an HDD tier).
 */
static int tiers_open(struct gs_store *s, const char *dir, const char *ssd_dir,
		      const char *hdd_dir, uint64_t *cap, uint64_t *hcap,
		      char *err, size_t errlen)
{
	char path[PATH_MAX];
	int ret;

	if (snprintf(path, sizeof(path), "%s/data", ssd_dir) >=
	    (int)sizeof(path)) {
		return store_errf(err, errlen, -ENAMETOOLONG,
				  "path too long: '%s'", ssd_dir);
	}
	s->data_fd = open(path, O_RDWR | O_CREAT | O_DIRECT | O_CLOEXEC, 0644);
	if (s->data_fd < 0) {
		ret = store_errf(err, errlen, -errno,
				 "cannot open '%s' with O_DIRECT: %s", path,
				 strerror(errno));
		return ret;
	}
	snprintf(path, sizeof(path), "%s/journal", dir);
	s->jfd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (s->jfd < 0) {
		ret = store_errf(err, errlen, -errno, "cannot open '%s': %s",
				 path, strerror(errno));
		return ret;
	}
	/* without O_DIRECT here every record is buffered */
	s->jdfd = open(path, O_WRONLY | O_DIRECT | O_CLOEXEC);
	s->floor[TIER_SSD] = s->o.ssd_floor;
	*cap = tier_capacity(ssd_dir, s->data_fd, s->o.ssd_size,
			     &s->floor[TIER_SSD]);
	s->cap[TIER_SSD] = *cap;
	s->jshare[TIER_SSD] = same_fs(s->jfd, s->data_fd);
	if (*cap < GS_ALLOC_UNIT) {
		ret = store_errf(err, errlen, -ENOSPC,
				 "no room for the SSD tier in '%s'", ssd_dir);
		return ret;
	}
	if (*hdd_dir) {
		if (snprintf(path, sizeof(path), "%s/data", hdd_dir) >=
		    (int)sizeof(path)) {
			ret = store_errf(err, errlen, -ENAMETOOLONG,
					 "path too long: '%s'", hdd_dir);
			return ret;
		}
		s->hdd_fd = open(path, O_RDWR | O_CREAT | O_DIRECT | O_CLOEXEC,
				 0644);
		if (s->hdd_fd < 0) {
			ret = store_errf(err, errlen, -errno,
					 "cannot open '%s' with O_DIRECT: %s",
					 path, strerror(errno));
			return ret;
		}
		s->floor[TIER_HDD] = s->o.ssd_floor;
		*hcap = tier_capacity(hdd_dir, s->hdd_fd, s->o.hdd_size,
				      &s->floor[TIER_HDD]);
		s->cap[TIER_HDD] = *hcap;
		s->jshare[TIER_HDD] = same_fs(s->jfd, s->hdd_fd);
		if (*hcap < GS_ALLOC_UNIT) {
			ret = store_errf(err, errlen, -ENOSPC,
					 "no room for the HDD tier in '%s'",
					 hdd_dir);
			return ret;
		}
		s->split = s->o.ram_head + s->o.ssd_prefix;
	}
	return 0;
}

/* The RAM pools on their node, the allocators, the index, the buffers. */
static int pools_init(struct gs_store *s, uint64_t cap, uint64_t hcap,
		      char *err, size_t errlen)
{
	int ret;

	/* binds this thread first, so the pools fault in on its node */
	ret = numa_open(&s->numa, s->o.numa_node, !s->o.no_numa_promotion,
			s->o.perverse, err, errlen);
	if (ret < 0)
		return ret;
	ret = ram_region_map(&s->head_mem, s->o.memory, s->o.block,
			     !s->o.no_hugetlb, !s->o.no_mlock);
	if (ret == 0)
		ret = ram_region_map(&s->small_mem, s->o.small_memory,
				     s->o.block, !s->o.no_hugetlb,
				     !s->o.no_mlock);
	if (ret < 0) {
		store_errf(err, errlen, ret, "cannot map RAM pools: %s",
			   strerror(-ret));
		return ret;
	}
	ret = numa_place(&s->numa, s->head_mem.base, s->head_mem.size,
			 s->head_mem.page, s->small_mem.base, s->small_mem.size,
			 err, errlen);
	if (ret < 0)
		return ret;
	if ((ret = slots_init(&s->slots, s->head_mem.base, s->head_mem.size,
			      s->o.ram_head)) < 0 ||
	    (ret = arena_init(&s->arena, s->small_mem.base, s->small_mem.size,
			      s->o.block)) < 0 ||
	    (ret = space_init(&s->space, cap, GS_ALLOC_UNIT)) < 0 ||
	    (ret = space_grow_map(&s->space, data_units(s->data_fd))) < 0 ||
	    (ret = space_init(&s->hspace, hcap, GS_ALLOC_UNIT)) < 0 ||
	    (s->hdd_fd >= 0 &&
	     (ret = space_grow_map(&s->hspace, data_units(s->hdd_fd))) < 0) ||
	    (ret = index_init(&s->idx, 1024)) < 0 ||
	    (ret = index_init(&s->fills, 16)) < 0)
		return ret;
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
	return 0;
}

/*
 * Rebuild the index from the journal, fit the tiers' capacities, rewrite a
 * journal that dropped records or holds much garbage, and preload heads.
 * Single-threaded, before the maintenance thread starts.
 */
static int recover(struct gs_store *s, char *err, size_t errlen)
{
	bool dirty = false;
	int ret = journal_replay(s, &dirty);
	if (ret < 0) {
		store_errf(err, errlen, ret, "cannot read the journal: %s",
			   strerror(-ret));
		return ret;
	}
	/* a smaller capacity than last time, or less room on the file
	 * system: evict down to it, by policy */
	tier_limit_refresh(s, TIER_SSD);
	tier_limit_refresh(s, TIER_HDD);
	if (s->space.used > s->space.limit) {
		tier_evict(s, TIER_SSD, 0);
		dirty = true;
	}
	if (s->hspace.used > s->hspace.limit) {
		tier_evict(s, TIER_HDD, 0);
		dirty = true;
	}
	stat_add(s, recovered, s->idx.count);
	if (dirty || s->jbytes > 2 * s->jlive + (1u << 20)) {
		pthread_mutex_lock(&s->lock); /* journal_rewrite's rule */
		ret = journal_rewrite(s);
		pthread_mutex_unlock(&s->lock);
	}
	if (ret < 0) {
		store_errf(err, errlen, ret, "cannot rewrite the journal: %s",
			   strerror(-ret));
		return ret;
	}
	if (s->o.preload_heads)
		preload_heads(s);
	return 0;
}

int gs_open(const char *dir, const struct gs_options *opt,
	    struct gs_store **out, char *err, size_t errlen)
{
	struct gs_store *s;
	char ssd_dir[PATH_MAX], hdd_dir[PATH_MAX], path[PATH_MAX];
	uint64_t cap = 0, hcap = 0;
	int ret;

	if (err && errlen)
		*err = '\0';
	if (fault_env() < 0)
		return store_errf(err, errlen, -EINVAL,
				  "GOBLIN_FAULTS: not "
				  "SEED:STEP:CLASS:ONE_IN");
	FAULT_STEP(FS_RECOVERY);
	if (opt->create && mkdir(dir, 0755) < 0 && errno != EEXIST)
		return store_errf(err, errlen, -errno, "cannot create '%s': %s",
				  dir, strerror(errno));
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->lock_fd = s->data_fd = s->hdd_fd = s->jfd = s->jdfd = -1;
	s->o = *opt;
	s->dir = strdup(dir);
	list_init(&s->cold);
	slru_init(&s->lru_ssd, 0); /* sized below, once capacities are known */
	slru_init(&s->lru_small, 0);
	slru_init(&s->lru_head, 0);
	slru_init(&s->lru_hdd, 0);
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->fill_cond, NULL);
	pthread_cond_init(&s->jm_cond, NULL);
	pthread_cond_init(&s->jm_quiet, NULL);
	if (!s->dir) {
		ret = -ENOMEM;
		goto fail;
	}
	snprintf(path, sizeof(path), "%s/%s", dir, SUPER_NAME);
	if (!opt->create && access(path, F_OK) < 0) {
		/* before the lock, which would leave a file behind */
		ret = store_errf(err, errlen, -ENOENT,
				 "'%s' is not a goblin store", dir);
		goto fail;
	}
	ret = lock_store(s, err, errlen);
	if (ret < 0)
		goto fail;
	ret = super_check(dir, &s->o, ssd_dir, hdd_dir, err, errlen);
	s->o.ssd_dir = s->o.hdd_dir = NULL; /* the caller owns them */
	if (ret < 0)
		goto fail;
	ret = tiers_open(s, dir, ssd_dir, hdd_dir, &cap, &hcap, err, errlen);
	if (ret == 0)
		ret = pools_init(s, cap, hcap, err, errlen);
	if (ret == 0)
		ret = recover(s, err, errlen);
	if (ret == 0)
		ret = jmaint_start(s);
	if (ret < 0)
		goto fail;
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
	jmaint_stop(s); /* before any of what it uses goes */
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
	reader_pool_free(s);
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
	numa_close(&s->numa); /* its thread moves pool pages */
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
	pthread_cond_destroy(&s->jm_cond);
	pthread_cond_destroy(&s->jm_quiet);
	free(s->dir);
	free(s);
}

void gs_set_change_hook(struct gs_store *s,
			void (*fn)(void *arg, const struct gs_change *c),
			void *arg)
{
	pthread_mutex_lock(&s->lock);
	s->change_hook = fn;
	s->change_arg = arg;
	pthread_mutex_unlock(&s->lock);
	/* calls taken before the lock was ours run outside it: wait */
	while (atomic_load_explicit(&s->change_calls, memory_order_acquire))
		nanosleep(&(struct timespec){ .tv_nsec = 100000 }, NULL);
}

int gs_delete(struct gs_store *s, const void *key, size_t klen)
{
	struct gs_change c = { .kind = GS_CHANGE_DELETE,
			       .key = key,
			       .klen = klen };
	struct change_ref h;
	bool tell = false;
	struct gs_obj *o;
	int ret = -ENOENT;

	FAULT_STEP(FS_DELETE);
	if (klen == 0 || klen > GS_KEY_MAX)
		return -EINVAL;
	pthread_mutex_lock(&s->lock);
	o = obj_lookup(s, key, klen);
	/* gone only once its record is written: else it stays */
	if (o && (ret = journal_key_record(s, J_DEL, o, 0)) >= 0) {
		c.cas = o->cas;
		obj_unlink(s, o);
		stat_add(s, deletes, 1);
		journal_maybe_rewrite(s);
		ret = ret == JOURNAL_UNSYNCED ? -EIO : 0;
		tell = change_take(s, &h);
	}
	pthread_mutex_unlock(&s->lock);
	if (tell)
		change_give(s, &h, &c);
	return ret;
}

int gs_rename(struct gs_store *s, const void *from, size_t flen, const void *to,
	      size_t tlen)
{
	struct jrec r = { .type = J_RENAME,
			  .key = from,
			  .klen = (uint32_t)flen,
			  .key2 = to,
			  .klen2 = (uint32_t)tlen };
	struct gs_change c = { .kind = GS_CHANGE_RENAME,
			       .key = from,
			       .klen = flen,
			       .to = to,
			       .tlen = tlen };
	struct change_ref h;
	bool tell = false;
	struct gs_obj *src;
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
	if (!(src = obj_lookup(s, from, flen))) {
		ret = -ENOENT;
	} else if (flen == tlen && memcmp(from, to, flen) == 0) {
		ret = 0;
	} else {
		c.cas = src->cas; /* the version that moves */
		r.seq = ++s->seq;
		jrec_encode(&r, NULL, NULL, buf);
		ret = journal_write(s, buf, len);
		if (ret >= 0) {
			int applied =
				rename_apply(s, from, flen, to, tlen, len);

			if (applied == 0)
				tell = change_take(s, &h);
			ret = ret == JOURNAL_UNSYNCED ? -EIO : applied;
		}
		if (ret == 0)
			journal_maybe_rewrite(s);
	}
	pthread_mutex_unlock(&s->lock);
	free(buf);
	if (tell)
		change_give(s, &h, &c);
	return ret;
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
		.type = J_ATTR,
		.key = key,
		.klen = (uint32_t)klen,
		.cas = cas,
		.exptime = exptime,
		.attr = attr,
		.attr_len = (uint32_t)attr_len,
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

const char *gs_tier_name(enum gs_tier t)
{
	switch (t) {
	case GS_TIER_RAM:
		return "RAM";
	case GS_TIER_SMALL:
		return "SMALL";
	case GS_TIER_SSD:
		return "SSD";
	case GS_TIER_HDD:
		return "HDD";
	}
	return "?";
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
			rg[n] = o->item.ptr ?
					(struct gs_range){ GS_TIER_SMALL, 0,
							   o->size, 0 } :
					(struct gs_range){ GS_TIER_SSD, 0,
							   o->size, o->jpos };
		n++;
	} else {
		uint64_t off = 0;

		if (o->head) {
			uint64_t h = o->size < s->o.ram_head ? o->size :
							       s->o.ram_head;
			if (n < max)
				rg[n] = (struct gs_range){ GS_TIER_RAM, 0, h,
							   0 };
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
						t == TIER_SSD ? GS_TIER_SSD :
								GS_TIER_HDD,
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
	st->io_buffer_bytes =
		bufpool_bytes(&s->rbufs) + bufpool_bytes(&s->rbufs_long) +
		bufpool_bytes(&s->wbufs) + bufpool_bytes(&s->jbufs);
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

static bool in_slab(const struct bufpool *p, const uint8_t *b, void **base,
		    size_t *len)
{
	for (uint32_t i = 0; i < p->nslabs; i++) {
		const uint8_t *sl = p->slabs[i];

		if (b >= sl && b < sl + p->slab) {
			*base = p->slabs[i];
			*len = p->slab;
			return true;
		}
	}
	return false;
}

int gs_mem_region(struct gs_store *s, const void *p, void **base, size_t *len)
{
	const struct ram_region *ram[] = { &s->head_mem, &s->small_mem };
	const uint8_t *b = p;
	bool found;

	for (size_t i = 0; i < sizeof(ram) / sizeof(ram[0]); i++) {
		if (ram[i]->base && b >= ram[i]->base &&
		    b < ram[i]->base + ram[i]->size) {
			*base = ram[i]->base;
			*len = ram[i]->size;
			return 0;
		}
	}
	/* the pools grow under the store's lock */
	pthread_mutex_lock(&s->lock);
	found = in_slab(&s->rbufs, b, base, len) ||
		in_slab(&s->rbufs_long, b, base, len);
	pthread_mutex_unlock(&s->lock);
	return found ? 0 : -ENOENT;
}
