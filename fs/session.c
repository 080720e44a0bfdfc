/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The goblinfs session: gfs_new/gfs_free and the options, mount, the
 * FUSE loop and unmount, the connection's settings (init), statfs, and
 * the low-level operations table that sends each request to its room.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "internal.h"
#include "mirror.h"

static void gfs_init(void *data, struct fuse_conn_info *conn)
{
	(void)data;
	conn->max_write = GFS_MAX_IO;
	conn->max_readahead = GFS_MAX_IO;
	if (conn->capable & FUSE_CAP_ATOMIC_O_TRUNC)
		conn->want |= FUSE_CAP_ATOMIC_O_TRUNC;
	if (conn->capable & FUSE_CAP_AUTO_INVAL_DATA)
		conn->want |= FUSE_CAP_AUTO_INVAL_DATA;
	if (conn->capable & FUSE_CAP_PARALLEL_DIROPS)
		conn->want |= FUSE_CAP_PARALLEL_DIROPS;
	conn->want &= ~(unsigned)FUSE_CAP_WRITEBACK_CACHE;
	/*
	 * The kernel takes S_ISUID/S_ISGID off at a chown and a truncate,
	 * goblinfs at a write and an O_TRUNC open (node_drop_privs): with
	 * this on, it would have to do the chown's too.
	 */
	conn->want &= ~(unsigned)FUSE_CAP_HANDLE_KILLPRIV;
	/*
	 * Read-ahead requests in order, one at a time per file: sent
	 * together they reach our threads out of order, and every step
	 * back restarts the store's read-ahead.  Our own read-ahead (the
	 * store's io_depth) keeps the device busy meanwhile.
	 */
	conn->want &= ~(unsigned)FUSE_CAP_ASYNC_READ;
}

static void gfs_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct gfs *fs = req_fs(req);
	struct gs_stats st;
	struct statvfs sv;
	uint64_t freeb;

	(void)ino;
	gs_stats_get(fs->s, &st);
	memset(&sv, 0, sizeof(sv));
	sv.f_bsize = 4096;
	sv.f_frsize = 4096;
	/* both disk tiers: big files live on the HDD, the rest on the SSD */
	freeb = (st.ssd_capacity > st.ssd_used ? st.ssd_capacity - st.ssd_used :
						 0) +
		(st.hdd_capacity > st.hdd_used ? st.hdd_capacity - st.hdd_used :
						 0);
	sv.f_blocks = (st.ssd_capacity + st.hdd_capacity) / 4096;
	sv.f_bfree = freeb / 4096;
	sv.f_bavail = sv.f_bfree;
	pthread_mutex_lock(&fs->lock);
	sv.f_files = fs->hcount + 1;
	pthread_mutex_unlock(&fs->lock);
	sv.f_ffree = UINT32_MAX;
	sv.f_favail = sv.f_ffree;
	sv.f_namemax = GFS_NAME_MAX;
	fuse_reply_statfs(req, &sv);
}

static const struct fuse_lowlevel_ops gfs_ops = {
	.init = gfs_init,
	.lookup = gfs_lookup,
	.forget = gfs_forget,
	.forget_multi = gfs_forget_multi,
	.getattr = gfs_getattr,
	.setattr = gfs_setattr,
	.mkdir = gfs_mkdir,
	.rmdir = gfs_rmdir,
	.unlink = gfs_unlink,
	.rename = gfs_rename,
	.link = gfs_link,
	.symlink = gfs_symlink,
	.readlink = gfs_readlink,
	.mknod = gfs_mknod,
	.open = gfs_open,
	.create = gfs_create,
	.read = gfs_read,
	.write = gfs_write,
	.flush = gfs_flush,
	.release = gfs_release,
	.fsync = gfs_fsync,
	.opendir = gfs_opendir,
	.readdir = gfs_readdir,
	.readdirplus = gfs_readdirplus,
	.statfs = gfs_statfs,
	.getxattr = gfs_getxattr,
	.listxattr = gfs_listxattr,
	.setxattr = gfs_setxattr,
	.removexattr = gfs_removexattr,
};

void gfs_options_init(struct gfs_options *o)
{
	memset(o, 0, sizeof(*o));
	o->max_threads = 16;
	o->entry_timeout = 1.0;
	o->attr_timeout = 1.0;
	o->commit_wait = 2.0;
	o->negative_timeout = -1.0;
	o->direct_read = 64ull << 20;
	o->rewrite_max = 256ull << 20;
}

struct gfs *gfs_new(struct gs_store *s, const struct gfs_options *o, char *err,
		    size_t errlen)
{
	struct gfs *fs = calloc(1, sizeof(*fs));
	const char *why = NULL;
	char mwhy[256];
	int ret;

	if (!fs) {
		why = "out of memory";
		goto fail;
	}
	fs->s = s;
	if (o)
		fs->o = *o;
	else
		gfs_options_init(&fs->o);
	if (!fs->o.max_threads)
		fs->o.max_threads = 1;
	fs->guard_fd = -1;
	fs->uid = getuid();
	fs->gid = getgid();
	fs->start_ns = gs_real_ns();
	if (fs->o.negative_timeout < 0)
		fs->o.negative_timeout = fs->o.mirror ? 5.0 :
							fs->o.entry_timeout;
	pthread_mutex_init(&fs->lock, NULL);
	pthread_mutex_init(&fs->ring_lock, NULL);
	pthread_mutex_init(&fs->drop_lock, NULL);
	pthread_cond_init(&fs->commit_cond, NULL);
	pthread_cond_init(&fs->drop_cond, NULL);
	if (fs->o.mirror &&
	    !(fs->mirror = mirror_new(s, fs->o.mirror,
				      fs->o.mirror_stale_on_error, mwhy,
				      sizeof(mwhy)))) {
		why = mwhy;
		goto fail;
	}
	if (fs->mirror &&
	    !(fs->absent = calloc(GFS_ABSENT_SLOTS, sizeof(*fs->absent)))) {
		why = "out of memory";
		goto fail;
	}
	if (ns_init(fs) < 0) {
		why = "out of memory";
		goto fail;
	}
	changes_start(fs); /* before the load: no change is missed */
	ret = ns_load(fs);
	if (ret < 0) {
		why = gs_strerror(ret);
		goto fail;
	}
	if (fs->skipped || fs->shadowed)
		fprintf(stderr,
			"goblinfs: %" PRIu64 " keys are no path and %" PRIu64
			" files are hidden by a directory of the same name\n",
			fs->skipped, fs->shadowed);
	return fs;
fail:
	if (err && errlen)
		snprintf(err, errlen, "%s", why);
	if (fs)
		gfs_free(fs);
	return NULL;
}

int gfs_mount(struct gfs *fs, const char *mountpoint, struct fuse_args *args)
{
	/* for the guard, resolved before: a stat of the mount would wait
	 * for an answer from us */
	free(fs->mount_path);
	fs->mount_path = realpath(mountpoint, NULL);
	fs->se = fuse_session_new(args, &gfs_ops, sizeof(gfs_ops), fs);
	if (!fs->se)
		goto fail;
	if (fuse_set_signal_handlers(fs->se) < 0)
		goto fail;
	if (fuse_session_mount(fs->se, mountpoint) < 0) {
		fuse_remove_signal_handlers(fs->se);
		goto fail;
	}
	fs->mounted = true;
	return 0;
fail:
	if (fs->se)
		fuse_session_destroy(fs->se);
	fs->se = NULL;
	return -1;
}

int gfs_loop(struct gfs *fs)
{
	struct fuse_loop_config *cfg = fuse_loop_cfg_create();
	int ret;

	if (!cfg)
		return -ENOMEM;
	fuse_loop_cfg_set_max_threads(cfg, fs->o.max_threads);
	/* idle threads stay: a thread per request costs more than the read */
	fuse_loop_cfg_set_idle_threads(cfg, fs->o.max_threads);
	fuse_loop_cfg_set_clone_fd(cfg, 0);
	ret = fuse_session_loop_mt(fs->se, cfg);
	fuse_loop_cfg_destroy(cfg);
	return ret > 0 ? 0 : ret; /* > 0: ended by a signal */
}

void gfs_exit(struct gfs *fs)
{
	if (fs->se)
		fuse_session_exit(fs->se);
}

void gfs_unmount(struct gfs *fs)
{
	changes_stop(fs); /* it uses the session */
	guard_stop(fs);
	if (!fs->se)
		return;
	fuse_remove_signal_handlers(fs->se);
	if (fs->mounted)
		fuse_session_unmount(fs->se);
	fs->mounted = false;
	fuse_session_destroy(fs->se);
	fs->se = NULL;
}

void gfs_free(struct gfs *fs)
{
	if (!fs)
		return;
	changes_stop(fs);
	/* files the kernel never released (a lazy unmount, a signal) */
	fh_close_all(fs);
	/* after the readers: a fill nobody reads is aborted, not waited for */
	mirror_free(fs->mirror);
	free(fs->absent);
	rings_free(fs);
	ns_release(fs);
	pthread_mutex_destroy(&fs->lock);
	pthread_mutex_destroy(&fs->ring_lock);
	pthread_mutex_destroy(&fs->drop_lock);
	pthread_cond_destroy(&fs->commit_cond);
	pthread_cond_destroy(&fs->drop_cond);
	changes_free(fs);
	free(fs->mount_path);
	free(fs);
}
