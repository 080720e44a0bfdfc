/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Objects: the life of one version (new, publish, lookup, unlink, unref,
 * free), the cold small-object list, removal for good (expiry, corruption,
 * eviction's DEL record), renames, the record and meta of an object, and
 * where its bytes are (extents, block checksums).  Called with s->lock held.
 */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "internal.h"

bool obj_expired(const struct gs_obj *o, int64_t now)
{
	return o->exptime != 0 && o->exptime <= now;
}

void obj_free(struct gs_store *s, struct gs_obj *o)
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
	if (o->xs)
		XXH3_freeState(o->xs);
	if (o->node.key != o->key) /* renamed */
		free((uint8_t *)o->node.key);
	free(o);
}

void obj_unref(struct gs_store *s, struct gs_obj *o)
{
	assert(o->refs > 0);
	if (--o->refs == 0)
		obj_free(s, o);
}

/*
 * Cold small objects: out of the arena, their value only in the journal.
 * They are kept on a FIFO list, bounded to a quarter of the SSD tier's
 * capacity in value bytes; past that the oldest go for good.
 * All called with s->lock held.
 */
void cold_del(struct gs_store *s, struct gs_obj *o)
{
	list_del(&o->lru.l);
	assert(s->ncold > 0 && s->cold_bytes >= o->size);
	s->ncold--;
	s->cold_bytes -= o->size;
}

void cold_add(struct gs_store *s, struct gs_obj *o)
{
	uint64_t cap = s->space.limit * GS_ALLOC_UNIT / 4;

	list_push(&s->cold, &o->lru.l);
	s->ncold++;
	s->cold_bytes += o->size;
	while (s->cold_bytes > cap && !list_empty(&s->cold)) {
		struct gs_obj *v =
			list_entry(s->cold.prev, struct gs_obj, lru.l);

		if (v->refs != 1 || !obj_evict(s, v))
			break; /* being read back: keep the order simple */
		stat_add(s, evictions_small, 1);
	}
}

/* Move a small object's value out of RAM; it stays in the journal. */
void obj_chill(struct gs_store *s, struct gs_obj *o)
{
	slru_remove(&s->lru_small, &o->lru);
	arena_free(&s->arena, &o->item);
	stat_add(s, small_chills, 1);
	cold_add(s, o);
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

bool change_take(struct gs_store *s, struct change_ref *h)
{
	if (!s->change_hook)
		return false;
	h->fn = s->change_hook;
	h->arg = s->change_arg;
	/* under the lock: a setter that took it after us waits for this */
	atomic_fetch_add_explicit(&s->change_calls, 1, memory_order_relaxed);
	return true;
}

/* Called without s->lock. */
void change_give(struct gs_store *s, const struct change_ref *h,
		 const struct gs_change *c)
{
	h->fn(h->arg, c);
	atomic_fetch_sub_explicit(&s->change_calls, 1, memory_order_release);
}

/* Tell the change hook, from under the lock, that @o is being dropped. */
static void change_dropped(struct gs_store *s, const struct gs_obj *o)
{
	struct gs_change c = { .kind = GS_CHANGE_DROP,
			       .key = o->node.key,
			       .klen = o->node.klen,
			       .cas = o->cas,
			       .locked = true };

	if (s->change_hook)
		s->change_hook(s->change_arg, &c);
}

/* Remove a live object the store decided to drop, and say so. */
static void obj_drop(struct gs_store *s, struct gs_obj *o)
{
	change_dropped(s, o);
	obj_remove(s, o);
}

/*
 * Evict @o for room, if its DEL record can be written: without it the
 * room would go to a put whose record replay finds taken, and the object
 * would come back at a restart.  False (nothing changed) if it cannot.
 */
bool obj_evict(struct gs_store *s, struct gs_obj *o)
{
	uint8_t step = fault_step;
	int ret;

	FAULT_STEP(FS_EVICT);
	ret = journal_key_record(s, J_DEL, o, 0);
	FAULT_STEP(step);
	if (ret < 0)
		return false;
	change_dropped(s, o);
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
	struct idx_node *n =
		index_find(&s->idx, o->node.hash, o->node.key, o->node.klen);

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
	struct idx_node *n =
		index_find(&s->idx, index_hash(key, klen), key, klen);
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
int rename_apply(struct gs_store *s, const void *from, size_t flen,
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

bool blocks_verify(const struct gs_obj *o, const uint8_t *buf, uint64_t off,
		   uint64_t len)
{
	for (uint64_t b = off / GS_CSUM_BLOCK; b * GS_CSUM_BLOCK < off + len;
	     b++) {
		uint64_t start = b * GS_CSUM_BLOCK;
		uint64_t bl = o->size - start < GS_CSUM_BLOCK ?
				      o->size - start :
				      GS_CSUM_BLOCK;

		if (start + bl > off + len ||
		    csum_block(buf + (start - off), bl) != o->csum[b])
			return false;
	}
	return true;
}
