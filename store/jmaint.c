/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Journal maintenance: rewriting the journal to its live records.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "internal.h"

#define JOURNAL_REWRITE_MIN (64ull << 20)

/*
 * Write every live object's record to a new journal and switch to it.  The
 * new file's descriptors are opened before the rename: once it is the
 * journal, nothing can fail (an open after it could, leaving no journal
 * open).  Objects learn their records' new sizes and places only then.
 */
int journal_rewrite(struct gs_store *s)
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

