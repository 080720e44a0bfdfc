/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * coldtail: ART objects whose heads are in RAM, whose SSD prefix is on the
 * SSD and whose bulk is on the HDD tier, read one after the other (issue 4,
 * section 7).  Two steps, with the caches dropped in between by the caller:
 *
 *   coldtail populate [store options] --store DIR [--count N] [--seed N]
 *   coldtail read     [store options] --store DIR [--count N] [--seed N]
 *                     [--rate MBPS] [--csv FILE] [--no-verify]
 *
 * populate puts N ART objects (art:%08d, WORKLOADS.md sizes, bench/gen
 * payloads).  read reopens the store with its heads preloaded into RAM and
 * streams every object with gs_reader_next in a shuffled order (so that
 * each object starts with a seek, as in a cache), recording when each chunk
 * was ready.  It prints time to first byte, completion, the bandwidth of
 * each object that has bytes on the HDD, and a stall check: chunk-ready
 * times fed through an ideal link of --rate MB/s (default 200, the
 * emulated HDD's rate; chunk_start = max(ready, previous_end)) show whether
 * a reader at that rate ever waits, i.e. whether the head and the SSD
 * prefix cover the HDD's seek.  Last line: RESULT key=value ...
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../cli/workload.h"
#include "../store/clock.h"
#include "../store/goblin.h"
#include "../store/prog.h"

#define PIECE (1u << 20)

struct obj {
	char key[32];
	uint64_t size, seed;
	uint64_t ttfb_ns, done_ns; /* from gs_get_open */
	uint64_t hdd_bytes;	   /* read from the HDD tier */
	uint64_t stall_ns;	   /* a reader at --rate waited this long */
	uint64_t seek_stall_ns;	   /* of which for the first HDD chunk */
};

/* Bytes of @key on the SSD tier: where its HDD part starts. */
static uint64_t ssd_bytes(struct gs_store *s, const char *key)
{
	struct gs_range rg[256];
	int n = gs_inspect(s, key, strlen(key), rg, 256);
	uint64_t b = 0;

	for (int i = 0; i < n && i < 256; i++)
		if (rg[i].tier == GS_TIER_SSD)
			b += rg[i].len;
	return b;
}

static void usage(int status)
{
	fprintf(status ? stderr : stdout,
		"usage: coldtail populate|read [store options] --store DIR\n"
		"       [--count N] [--seed N] [--rate MBPS] [--csv FILE]\n"
		"       [--no-verify]\n"
		"  --count N      ART objects (default 200)\n"
		"  --seed N       workload seed (default 1)\n"
		"  --rate MBPS    the stall check's link, MB/s (default 200)\n"
		"  --csv FILE     per object: key size ttfb_ns done_ns "
		"hdd_bytes stall_ns seek_stall_ns\n"
		"  --no-verify    do not compare the bytes with the generator\n"
		"Store options:\n");
	gs_option_help(status ? stderr : stdout);
	exit(status);
}

enum {
	OPT_STORE = 256,
	OPT_COUNT,
	OPT_SEED,
	OPT_RATE,
	OPT_CSV,
	OPT_NO_VERIFY,
	OPT_HELP,
	OPT_STORE_OPTION
};
#define NOWN 7

/* Stream one object; fill its times and its stall at @rate bytes/ns. */
static void read_one(struct gs_store *s, struct obj *o, double rate,
		     bool verify, unsigned char *scratch, uint64_t *errors)
{
	struct gs_stats st0, st1;
	struct gs_reader *r;
	struct gs_chunk c;
	uint64_t got = 0, split = ssd_bytes(s, o->key);
	double link_end = 0; /* ns since open the link is busy until */
	int64_t t0;
	int rc;

	gs_stats_get(s, &st0);
	t0 = gs_mono_ns();
	rc = gs_get_open(s, o->key, strlen(o->key), 0, &r);
	if (rc) {
		count_error(errors, "gs_get_open '%s': %s", o->key,
			    gs_strerror(rc));
		return;
	}
	while ((rc = gs_reader_next(r, &c)) == 1) {
		double ready = (double)(gs_mono_ns() - t0);

		if (!got)
			o->ttfb_ns = (uint64_t)ready;
		if (c.off != got) {
			count_error(errors,
				    "'%s': chunk at %" PRIu64
				    ", expected %" PRIu64,
				    o->key, c.off, got);
			break;
		}
		/* the link sends the first chunk when it is ready */
		if (got && ready > link_end) {
			o->stall_ns += (uint64_t)(ready - link_end);
			if (c.off == split) /* the HDD's seek shows */
				o->seek_stall_ns = (uint64_t)(ready - link_end);
		}
		link_end = (ready > link_end ? ready : link_end) +
			   (double)c.len / rate;
		if (verify && payload_check(o->seed, c.off, c.data, c.len,
					    scratch, PIECE)) {
			count_error(errors, "'%s': wrong bytes at %" PRIu64,
				    o->key, c.off);
			break;
		}
		got += c.len;
	}
	o->done_ns = (uint64_t)(gs_mono_ns() - t0);
	gs_reader_close(r);
	if (rc < 0)
		count_error(errors, "'%s' at %" PRIu64 ": %s", o->key, got,
			    gs_strerror(rc));
	else if (got != o->size)
		count_error(errors, "'%s': %" PRIu64 " of %" PRIu64 " bytes",
			    o->key, got, o->size);
	gs_stats_get(s, &st1);
	o->hdd_bytes = st1.bytes_read_hdd - st0.bytes_read_hdd;
}

int main(int argc, char **argv)
{
	static struct option opts[NOWN + GS_NOPTIONS + 1] = {
		{ "store", required_argument, NULL, OPT_STORE },
		{ "count", required_argument, NULL, OPT_COUNT },
		{ "seed", required_argument, NULL, OPT_SEED },
		{ "rate", required_argument, NULL, OPT_RATE },
		{ "csv", required_argument, NULL, OPT_CSV },
		{ "no-verify", no_argument, NULL, OPT_NO_VERIFY },
		{ "help", no_argument, NULL, OPT_HELP },
	};
	struct gs_options so;
	struct gs_store *s;
	struct gs_stats st;
	struct rng rng;
	struct obj *objs;
	const char *dir = NULL, *csv = NULL, *why;
	uint64_t count = 200, seed = 1, errors = 0, total = 0, *v, *order;
	uint64_t hdd_objs = 0, stalled = 0, stall_total = 0, hdd_bytes = 0;
	uint64_t bw_ns = 0, bw_bytes = 0, seek_stalled = 0;
	unsigned char *buf;
	double rate_mbps = 200;
	bool populate, verify = true;
	char err[256];
	int ch, rc;

	prog_name = "coldtail";
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
		usage(argc < 2 ? 129 : 0);
	if (strcmp(argv[1], "populate") && strcmp(argv[1], "read"))
		usage(129);
	populate = !strcmp(argv[1], "populate");
	gs_options_init(&so);
	gs_option_getopt(&opts[NOWN], OPT_STORE_OPTION);
	optind = 2;
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (ch) {
		case OPT_STORE:
			dir = optarg;
			break;
		case OPT_COUNT:
			count = parse_num_opt("count", optarg);
			break;
		case OPT_SEED:
			seed = parse_num_opt("seed", optarg);
			break;
		case OPT_RATE:
			rate_mbps = (double)parse_num_opt("rate", optarg);
			break;
		case OPT_CSV:
			csv = optarg;
			break;
		case OPT_NO_VERIFY:
			verify = false;
			break;
		case 'h':
		case OPT_HELP:
			usage(0);
			break;
		default:
			if (ch < OPT_STORE_OPTION ||
			    ch >= OPT_STORE_OPTION + GS_NOPTIONS)
				usage(129);
			if (gs_option_set(
				    &so,
				    gs_option_list[ch - OPT_STORE_OPTION].name,
				    optarg, &why) < 0)
				die("bad value '%s' for --%s: %s",
				    optarg ? optarg : "",
				    gs_option_list[ch - OPT_STORE_OPTION].name,
				    why ? why : "?");
		}
	}
	if (!dir || optind != argc || !count || rate_mbps <= 0)
		usage(129);
	so.create = populate;
	so.preload_heads = !populate; /* the heads are in RAM */
	rc = gs_open(dir, &so, &s, err, sizeof(err));
	if (rc)
		die("%s", err);
	objs = calloc(count, sizeof(*objs));
	order = malloc(count * sizeof(*order));
	buf = malloc(PIECE);
	if (!objs || !order || !buf)
		die("out of memory");
	rng_init(&rng, seed);
	for (uint64_t i = 0; i < count; i++) {
		struct obj *o = &objs[i];

		snprintf(o->key, sizeof(o->key), "art:%08" PRIu64, i);
		o->size = workload_art_size(&rng);
		o->seed = workload_payload_seed(o->key, o->size);
		total += o->size;
		order[i] = i;
	}
	if (populate) {
		int64_t t0 = gs_mono_ns(), gen = 0;
		double secs;

		for (uint64_t i = 0; i < count; i++)
			gen += workload_gs_put(s, objs[i].key, objs[i].size,
					       objs[i].seed, buf, PIECE);
		secs = (double)(gs_mono_ns() - t0) / 1e9;
		gs_stats_get(s, &st);
		gs_close(s);
		printf("RESULT step=populate objects=%" PRIu64 " bytes=%" PRIu64
		       " seconds=%.3f mibps=%.1f gen_seconds=%.3f hdd_used=%" PRIu64
		       " ssd_used=%" PRIu64 " ssd_prefix_drops=%" PRIu64 "\n",
		       count, total, secs, (double)total / 1048576 / secs,
		       (double)gen / 1e9, st.hdd_used, st.ssd_used,
		       st.ssd_prefix_drops);
		free(objs);
		free(order);
		free(buf);
		return 0;
	}

	gs_stats_get(s, &st);
	if (!st.hdd_capacity)
		die("store '%s' has no HDD tier (--hdd-dir)", dir);
	rng_shuffle(&rng, order, count);
	for (uint64_t i = 0; i < count; i++)
		read_one(s, &objs[order[i]], rate_mbps * 1e6 / 1e9, verify, buf,
			 &errors);
	gs_stats_get(s, &st);
	gs_close(s);

	v = malloc(count * sizeof(*v));
	if (!v)
		die("out of memory");
	for (uint64_t i = 0; i < count; i++) {
		const struct obj *o = &objs[i];

		if (!o->hdd_bytes)
			continue;
		/* per-object bandwidth in kB/s, to sort as integers */
		v[hdd_objs++] = (uint64_t)((double)o->size /
					   ((double)o->done_ns / 1e9) / 1e3);
		bw_ns += o->done_ns;
		bw_bytes += o->size;
		hdd_bytes += o->hdd_bytes;
		stalled += o->stall_ns > 0;
		seek_stalled += o->seek_stall_ns > 0;
		stall_total += o->stall_ns;
	}
	qsort(v, hdd_objs, sizeof(*v), cmp_u64);
	printf("objects %" PRIu64 ", %.1f MiB; %" PRIu64 " with bytes on the "
	       "HDD (%.1f MiB from it); heads preloaded %" PRIu64 "\n",
	       count, (double)total / 1048576, hdd_objs,
	       (double)hdd_bytes / 1048576, st.ram_slots_used);
	{
		uint64_t *t = malloc(count * sizeof(*t));
		struct lat ttfb, done;

		if (!t)
			die("out of memory");
		for (uint64_t i = 0; i < count; i++)
			t[i] = objs[i].ttfb_ns;
		ttfb = latency(t, count);
		for (uint64_t i = 0; i < count; i++)
			t[i] = objs[i].done_ns;
		done = latency(t, count);
		free(t);
		printf("ttfb us: p50 %.1f p90 %.1f p99 %.1f max %.1f\n",
		       ttfb.p50, ttfb.p90, ttfb.p99, ttfb.max);
		printf("completion us: p50 %.1f p90 %.1f p99 %.1f max %.1f\n",
		       done.p50, done.p90, done.p99, done.max);
		printf("per-object MB/s of the %" PRIu64
		       " HDD objects: p10 %.1f "
		       "p50 %.1f p90 %.1f min %.1f; aggregate %.1f\n",
		       hdd_objs, (double)pct(v, hdd_objs, 10) / 1000,
		       (double)pct(v, hdd_objs, 50) / 1000,
		       (double)pct(v, hdd_objs, 90) / 1000,
		       hdd_objs ? (double)v[0] / 1000 : 0.0,
		       bw_ns ? (double)bw_bytes / ((double)bw_ns / 1e9) / 1e6 :
			       0.0);
		printf("a reader at %.0f MB/s waited on %" PRIu64 " of them, "
		       "%.3f ms in all; at the HDD's seek (the first chunk "
		       "after the SSD prefix) on %" PRIu64 "\n",
		       rate_mbps, stalled, (double)stall_total / 1e6,
		       seek_stalled);
		if (csv) {
			FILE *f = fopen(csv, "w");

			if (!f)
				die("cannot write '%s'", csv);
			fprintf(f, "key,size,ttfb_ns,done_ns,hdd_bytes,"
				   "stall_ns,seek_stall_ns\n");
			for (uint64_t i = 0; i < count; i++)
				fprintf(f,
					"%s,%" PRIu64 ",%" PRIu64 ",%" PRIu64
					",%" PRIu64 ",%" PRIu64 ",%" PRIu64
					"\n",
					objs[i].key, objs[i].size,
					objs[i].ttfb_ns, objs[i].done_ns,
					objs[i].hdd_bytes, objs[i].stall_ns,
					objs[i].seek_stall_ns);
			fclose(f);
		}
		printf("RESULT step=read objects=%" PRIu64
		       " hdd_objects=%" PRIu64
		       " ttfb_p50_us=%.1f ttfb_p99_us=%.1f obj_mbps_p10=%.1f "
		       "obj_mbps_p50=%.1f agg_mbps=%.1f stalled=%" PRIu64
		       " stall_ms=%.3f seek_stalled=%" PRIu64 " errors=%" PRIu64
		       "\n",
		       count, hdd_objs, ttfb.p50, ttfb.p99,
		       (double)pct(v, hdd_objs, 10) / 1000,
		       (double)pct(v, hdd_objs, 50) / 1000,
		       bw_ns ? (double)bw_bytes / ((double)bw_ns / 1e9) / 1e6 :
			       0.0,
		       stalled, (double)stall_total / 1e6, seek_stalled,
		       errors);
	}
	free(v);
	free(objs);
	free(order);
	free(buf);
	return errors ? 1 : 0;
}
