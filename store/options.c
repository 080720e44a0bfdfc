/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Options: gs_options defaults, the option table front-ends build their
 * command lines and config keys from, their parsing and their validation;
 * sizes and error strings.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"

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
	{ "ram-head", "SIZE",
	  "head slot size: bytes of an object kept in RAM" },
	{ "io-chunk", "SIZE", "tail read unit" },
	{ "write-io-chunk", "SIZE", "tail write unit" },
	{ "io-depth", "N", "tail reads in flight per reader" },
	{ "ssd-dir", "DIR", "SSD tier directory (default: STORE/ssd)" },
	{ "ssd-size", "SIZE", "SSD tier capacity (default: free space)" },
	{ "ssd-floor", "SIZE", "with no --ssd-size: bytes left free" },
	{ "hdd-dir", "DIR", "HDD tier directory (default: none)" },
	{ "hdd-size", "SIZE", "HDD tier capacity (default: free space)" },
	{ "ssd-prefix", "SIZE",
	  "with an HDD tier: bytes after the head kept on SSD (default 4M)" },
	{ "no-mlock", NULL, "do not lock the RAM pools" },
	{ "no-hugetlb", NULL, "do not try HugeTLB pages" },
	{ "numa", "NODE", "bind the RAM pools and threads to a NUMA node" },
	{ "no-numa-promotion", NULL,
	  "do not move hot head blocks between nodes" },
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
					   gs_option_list[i].arg ?
						   required_argument :
						   no_argument,
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
		{ "write-io-chunk",
		  offsetof(struct gs_options, write_io_chunk) },
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
			*why = ret == -ERANGE ?
				       "too large" :
				       "not a size (4096, 256K, 64M, 2MiB, 1G)";
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
	case 'K':
		mul = 1ull << 10;
		end++;
		break;
	case 'M':
		mul = 1ull << 20;
		end++;
		break;
	case 'G':
		mul = 1ull << 30;
		end++;
		break;
	case 'T':
		mul = 1ull << 40;
		end++;
		break;
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
	case EBADMSG:
		return "data failed its checksum";
	case ECANCELED:
		return "the fill was aborted";
	case EPROTO:
		return "fewer bytes written than declared";
	case ESTALE:
		return "cas mismatch";
	case EFBIG:
		return "object larger than the store can hold";
	case EBUSY:
		return "store is in use";
	default:
		return strerror(-err);
	}
}

int store_errf(char *err, size_t len, int ret, const char *fmt, ...)
{
	va_list ap;

	if (err && len) {
		va_start(ap, fmt);
		vsnprintf(err, len, fmt, ap);
		va_end(ap);
	}
	return ret;
}

int options_check(const struct gs_options *o, char *err, size_t len)
{
	if (o->ram_head % GS_CSUM_BLOCK || o->io_chunk == 0 ||
	    o->io_chunk % GS_CSUM_BLOCK || o->write_io_chunk == 0 ||
	    o->write_io_chunk % GS_CSUM_BLOCK)
		return store_errf(
			err, len, -EINVAL,
			"--ram-head, --io-chunk and --write-io-chunk must "
			"be multiples of %d",
			GS_CSUM_BLOCK);
	if (o->block == 0 || o->block % 4096)
		return store_errf(err, len, -EINVAL,
				  "--block must be a multiple of 4096");
	if (o->ram_head > o->block && o->memory)
		return store_errf(err, len, -EINVAL,
				  "--ram-head must not exceed --block");
	if (o->io_depth == 0 || o->io_depth > GS_MAX_DEPTH)
		return store_errf(err, len, -EINVAL, "io depth must be 1..%d",
				  GS_MAX_DEPTH);
	if (o->ssd_prefix % GS_ALLOC_UNIT)
		return store_errf(err, len, -EINVAL,
				  "--ssd-prefix must be a multiple of %d",
				  GS_ALLOC_UNIT);
	return 0;
}
