/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Puts that start as a committed version (issue 20): the append that shares
 * its base's extents, or copies a base that cannot be shared; and what a
 * writer holds so far, read back or made durable before its commit.
 */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "internal.h"

int gs_put_sync(struct gs_writer *w)
{
	struct gs_store *s = w->s;
	int b = w->cur;

	if (w->err)
		return w->err;
	if (w->o->small)
		return 0; /* its home is the journal record, at commit */
	if (writer_wait(w, !b) < 0 || writer_wait(w, b) < 0)
		return w->err;
	/* the buffer stays the current one: its next write covers this */
	if (w->blen[b] && (writer_flush(w, b) < 0 || writer_wait(w, b) < 0))
		return w->err;
	if (F_CALL(s) < 0 || fdatasync(s->data_fd) < 0 ||
	    (w->o->hdd && fdatasync(s->hdd_fd) < 0))
		return -errno;
	return 0;
}

uint64_t gs_put_size(const struct gs_writer *w)
{
	return w->pos;
}

/*
 * Read @len bytes of committed version @o at @off (4 KiB aligned; @len
 * reaching a block's end or @o's end) from its SSD extents into @buf
 * (aligned, ALIGN4K(len) bytes), and check their block checksums.  @o is
 * pinned by the caller; its extents do not change.
 */
static int base_read(struct gs_store *s, struct gs_obj *o, uint8_t *buf,
		     uint64_t off, uint64_t len)
{
	uint64_t done = 0, plen = ALIGN4K(len);

	while (done < plen) {
		uint64_t run, dev, n;

		pthread_mutex_lock(&s->lock);
		dev = obj_dev_off(o, TIER_SSD, off + done, &run);
		pthread_mutex_unlock(&s->lock);
		if (dev == UINT64_MAX)
			return -EIO;
		n = plen - done < run ? plen - done : run;
		if (pread_full(s, s->data_fd, buf + done, n, dev) < 0)
			return -EIO;
		done += n;
	}
	if (!blocks_verify(o, buf, off, len)) {
		stat_add(s, csum_failures, 1);
		return -EBADMSG;
	}
	return 0;
}

/*
 * The base's hash state at its end, when it kept none: hash its bytes
 * [0, @upto) read from its extents through @buf (a write buffer); the
 * caller adds the rest.
 */
static int base_rehash(struct gs_writer *w, struct gs_obj *o, uint64_t upto,
		       uint8_t *buf)
{
	uint64_t chunk = w->s->o.write_io_chunk;

	for (uint64_t off = 0; off < upto; off += chunk) {
		uint64_t n = upto - off < chunk ? upto - off : chunk;
		int ret = base_read(w->s, o, buf, off, n);

		if (ret < 0)
			return ret;
		XXH3_64bits_update(w->xs, buf, n);
	}
	return 0;
}

/*
 * Can @o be shared by an append?  A large committed version on the SSD
 * tier alone, whose head (when it has one in RAM) is whole.  Lock held.
 */
static bool base_shareable(struct gs_store *s, struct gs_obj *o)
{
	uint64_t from = o->size / GS_CSUM_BLOCK * GS_CSUM_BLOCK;

	return o->state == OBJ_LIVE && !o->small && !o->corrupt && !o->hdd &&
	       s->hdd_fd < 0 && o->ext && o->next && from >= s->o.ram_head &&
	       from > 0;
}

/*
 * Share base @o's extents for its bytes [0, @from) with @w's version
 * (in front of the extents the writer placed), take its head and block
 * checksums.  0, or -errno with nothing shared.  Lock held.
 */
static int share_extents(struct gs_writer *w, struct gs_obj *o, uint64_t from)
{
	struct gs_store *s = w->s;
	struct gs_obj *n = w->o;
	uint64_t nb = csum_blocks(from + s->o.write_io_chunk) + 1, off = 0;
	struct extent *all;
	uint32_t k = 0, i;
	uint32_t *c;
	int ret = 0;

	all = malloc((o->next + n->next) * sizeof(*all));
	c = realloc(n->csum, nb * sizeof(uint32_t));
	if (c)
		n->csum = c;
	if (!all || !c) {
		free(all);
		return -ENOMEM;
	}
	for (i = 0; i < o->next && off < from; i++) {
		struct extent e = o->ext[i];

		if (e.tier != TIER_SSD)
			continue;
		if (e.len > from - off)
			e.len = from - off; /* unit aligned: from is */
		e.shared = 1;
		if ((ret = space_share(&s->space, &e)) < 0)
			break;
		all[k++] = e;
		off += e.len;
	}
	if (ret == 0 && off < from)
		ret = -EIO; /* extents shorter than the value: cannot be */
	if (ret < 0) {
		while (k)
			space_free(&s->space, &all[--k]);
		free(all);
		return ret;
	}
	/* both records say so: replay gives the units to both */
	for (i = 0; i < o->next; i++)
		o->ext[i].shared = 1;
	memcpy(all + k, n->ext, n->next * sizeof(*all));
	free(n->ext);
	n->ext = all;
	n->next += k;
	memcpy(n->csum, o->csum, from / GS_CSUM_BLOCK * sizeof(uint32_t));
	if (n->head && o->head)
		memcpy(n->head, o->head, s->o.ram_head);
	else if (n->head) {
		/* the base's head is on disk only: so is ours */
		slots_put(&s->slots, n->head);
		n->head = NULL;
	}
	return 0;
}

/*
 * Begin @w as an append to base @o (pinned by the caller): share its
 * extents, and take again its last partial block.  1 when shared, 0 when
 * it cannot be (the caller copies), -errno.
 */
static int writer_share(struct gs_writer *w, struct gs_obj *o)
{
	struct gs_store *s = w->s;
	uint64_t from, tail;
	bool have_xs;
	int ret;

	pthread_mutex_lock(&s->lock);
	if (!base_shareable(s, o)) {
		pthread_mutex_unlock(&s->lock);
		return 0;
	}
	from = o->size / GS_CSUM_BLOCK * GS_CSUM_BLOCK;
	tail = o->size - from;
	ret = share_extents(w, o, from);
	have_xs = o->xs != NULL;
	if (ret == 0 && have_xs)
		XXH3_copyState(w->xs, o->xs);
	pthread_mutex_unlock(&s->lock);
	if (ret == -EMLINK || ret == -ENOMEM)
		return 0; /* copy it instead */
	if (ret < 0)
		return ret;
	/* from here the writer's extents hold the shares: abort frees them */
	w->pos = w->boff[0] = from;
	w->blen[0] = 0;
	if (!have_xs && (ret = base_rehash(w, o, from, w->buf[1])) < 0)
		return ret;
	if (tail) {
		ret = base_read(s, o, w->buf[1], from, tail);
		if (ret == 0 && !have_xs)
			XXH3_64bits_update(w->xs, w->buf[1], tail);
		if (ret == 0)
			ret = writer_take(w, w->buf[1], tail, false);
	}
	return ret < 0 ? ret : 1;
}

/* The other way: read the base through a reader and write it again. */
static int writer_copy(struct gs_writer *w, const void *key, size_t klen,
		       uint64_t base_cas)
{
	struct gs_reader *r = NULL;
	size_t bl = 1u << 20;
	uint8_t *buf = malloc(bl);
	uint64_t off = 0, size;
	int ret;

	if (!buf)
		return -ENOMEM;
	ret = gs_get_open(w->s, key, klen, 0, &r);
	if (ret == 0 && gs_reader_meta(r)->cas != base_cas)
		ret = -ESTALE;
	size = ret == 0 ? gs_reader_meta(r)->size : 0;
	while (ret == 0 && off < size) {
		ssize_t got = gs_read(r, buf, bl, off);

		if (got <= 0)
			ret = got < 0 ? (int)got : -EIO;
		else if ((ret = gs_put_write(w, buf, (size_t)got)) == 0)
			off += (uint64_t)got;
	}
	if (r)
		gs_reader_close(r);
	free(buf);
	return ret;
}

int gs_put_begin_append(struct gs_store *s, const void *key, size_t klen,
			uint64_t base_cas, const struct gs_put_args *a,
			struct gs_writer **out)
{
	struct gs_put_args args = *a;
	struct gs_writer *w;
	struct gs_obj *o;
	int ret;

	args.size = GS_SIZE_UNKNOWN;
	args.fill = false;
	ret = gs_put_begin(s, key, klen, &args, &w);
	if (ret < 0)
		return ret;
	pthread_mutex_lock(&s->lock);
	o = obj_lookup(s, key, klen);
	if (!o)
		ret = -ENOENT;
	else if (o->cas != base_cas)
		ret = -ESTALE;
	else
		o->refs++; /* pinned while we read its last block */
	pthread_mutex_unlock(&s->lock);
	if (ret == 0) {
		ret = writer_share(w, o);
		pthread_mutex_lock(&s->lock);
		obj_unref(s, o);
		pthread_mutex_unlock(&s->lock);
		if (ret == 1)
			stat_add(s, put_appends_shared, 1);
		else if (ret == 0)
			ret = writer_copy(w, key, klen, base_cas);
	}
	if (ret < 0) {
		gs_put_abort(w);
		return ret;
	}
	*out = w;
	return 0;
}

ssize_t gs_put_read(struct gs_writer *w, void *buf, size_t len, uint64_t off)
{
	struct gs_store *s = w->s;
	struct gs_obj *o = w->o;
	const size_t bl = 1u << 20;
	uint8_t *p = buf, *bounce = NULL;
	size_t done = 0;
	int tier = o->hdd ? TIER_HDD : TIER_SSD;

	if (w->err)
		return w->err;
	if (off >= w->pos)
		return 0;
	if (len > w->pos - off)
		len = (size_t)(w->pos - off);
	if (o->small) {
		memcpy(buf, o->item.ptr + off, len);
		return (ssize_t)len;
	}
	/* what is in flight lands first: then the device holds the rest */
	if (writer_wait(w, 0) < 0 || writer_wait(w, 1) < 0)
		return w->err;
	while (done < len) {
		uint64_t at = off + done, a4, run, dev, n, skip;
		bool inbuf = false;

		for (int b = 0; b < 2 && !inbuf; b++) {
			if (at >= w->boff[b] && at < w->boff[b] + w->blen[b]) {
				n = w->boff[b] + w->blen[b] - at;
				if (n > len - done)
					n = len - done;
				memcpy(p + done, w->buf[b] + (at - w->boff[b]),
				       n);
				done += n;
				inbuf = true;
			}
		}
		if (inbuf)
			continue;
		if (!bounce && posix_memalign((void **)&bounce, 4096, bl))
			return -ENOMEM;
		a4 = at / 4096 * 4096;
		skip = at - a4;
		pthread_mutex_lock(&s->lock);
		dev = obj_dev_off(o, tier, a4, &run);
		pthread_mutex_unlock(&s->lock);
		n = ALIGN4K(skip + (len - done));
		if (n > bl)
			n = bl;
		if (dev == UINT64_MAX || n > run) {
			if (dev == UINT64_MAX || run < 4096) {
				free(bounce);
				return -EIO;
			}
			n = run / 4096 * 4096;
		}
		if (pread_full(s, tier_fd(s, tier), bounce, n, dev) < 0) {
			free(bounce);
			return -EIO;
		}
		n -= skip;
		if (n > len - done)
			n = len - done;
		memcpy(p + done, bounce + skip, n);
		done += n;
	}
	free(bounce);
	return (ssize_t)len;
}
