/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The superblock (goblin.super): the format, where the tiers live and the
 * sizes a store remembers from its last open.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include "internal.h"

#define FORMAT_VERSION 1

/* The SSD tier's directory as an absolute path (created if need be). */
static int ssd_dir_resolve(const char *want, char *out, char *err, size_t len)
{
	if (mkdir(want, 0755) < 0 && errno != EEXIST)
		return store_errf(err, len, -errno, "cannot create '%s': %s",
				  want, strerror(errno));
	if (!realpath(want, out))
		return store_errf(err, len, -errno, "cannot resolve '%s': %s",
				  want, strerror(errno));
	return 0;
}

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
		return store_errf(err, len, -errno, "cannot create '%s': %s",
				  tmp, strerror(errno));
	fprintf(f,
		"goblin-store-format %d\nalloc-unit %d\ncsum-block %d\n"
		"ssd-dir %s\nhdd-dir %s\ncreated %lld\n",
		FORMAT_VERSION, GS_ALLOC_UNIT, GS_CSUM_BLOCK, ssd_rec, hdd_rec,
		created);
	for (size_t i = 0; i < NSIZES; i++)
		fprintf(f, "%s %llu\n", sizes[i].name,
			(unsigned long long)*size_field((struct gs_options *)o,
							i));
	if (fflush(f) || fsync(fileno(f)) || fclose(f) || rename(tmp, path))
		return store_errf(err, len, -EIO, "cannot write '%s'", path);
	return 0;
}

/* A new store's superblock: its tiers' directories, the sizes asked for
 * or the defaults. */
static int super_create(const char *dir, struct gs_options *o, const char *dflt,
			char *ssd_dir, char *hdd_dir, long long created,
			char *err, size_t len)
{
	int ret = ssd_dir_resolve(o->ssd_dir ? o->ssd_dir : dflt, ssd_dir, err,
				  len);

	if (ret == 0 && o->hdd_dir)
		ret = ssd_dir_resolve(o->hdd_dir, hdd_dir, err, len);
	if (ret < 0)
		return ret;
	for (size_t i = 0; i < NSIZES; i++)
		if (*size_field(o, i) == GS_UNSET)
			*size_field(o, i) = sizes[i].dflt;
	ret = options_check(o, err, len);
	return ret < 0 ?
		       ret :
		       super_write(dir, o, o->ssd_dir ? ssd_dir : "-",
				   *hdd_dir ? hdd_dir : "-", created, err, len);
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
int super_check(const char *dir, struct gs_options *o, char *ssd_dir,
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
	if (!f && errno == ENOENT && o->create)
		return super_create(dir, o, dflt, ssd_dir, hdd_dir, created,
				    err, len);
	if (!f) {
		if (errno == ENOENT)
			return store_errf(err, len, -ENOENT,
					  "'%s' is not a goblin store", dir);
		return store_errf(err, len, -errno, "cannot read '%s': %s",
				  path, strerror(errno));
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
		return store_errf(
			err, len, -EPROTO,
			"store '%s' has format %d (unit %lu, block %lu); "
			"this build reads format %d",
			dir, version, unit, block, FORMAT_VERSION);
	ret = ssd_dir_resolve(strcmp(rec, "-") ? rec : dflt, ssd_dir, err, len);
	if (ret < 0)
		return ret;
	if (o->ssd_dir) {
		ret = ssd_dir_resolve(o->ssd_dir, given, err, len);
		if (ret < 0)
			return ret;
		if (strcmp(given, ssd_dir))
			return store_errf(
				err, len, -EINVAL,
				"store '%s' keeps its SSD tier in '%s', "
				"not '%s'",
				dir, ssd_dir, o->ssd_dir);
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
			return store_errf(
				err, len, -EINVAL,
				"store '%s' keeps its HDD tier in '%s', "
				"not '%s'",
				dir, hdd_dir, o->hdd_dir);
		if (!*hdd_dir) { /* an HDD tier from now on */
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
