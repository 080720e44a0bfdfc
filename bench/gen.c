/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gen: the workload generator of ../shared/WORKLOADS.md.  Writes the
 * population and measured manifests of ART, FB, WEB and BIG from a seed,
 * prints their realised statistics, and streams or materializes object
 * payloads from (key, size) alone (bench/workload.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../cli/workload.h"
#include "../store/clock.h"
#include "../store/goblin.h"
#include "../store/prog.h"

#define KEY_MAX 256	  /* FB_KEY_MAX plus the terminator, rounded */
#define PIECE	(1 * MiB) /* payload write unit */

/* Stream tags: each random decision has its own stream of the seed. */
#define TAG_FB_VALUE  0x46425641ULL
#define TAG_FB_KEY    0x46424b45ULL
#define TAG_FB_REQ    0x46425251ULL
#define TAG_WEB_SIZE  0x57455353ULL
#define TAG_WEB_PLACE 0x5745504cULL
#define TAG_WEB_RANK  0x5745524bULL
#define TAG_WEB_REQ   0x57455251ULL
#define TAG_BIG_SIZE  0x42494753ULL


static void usage(void)
{
	fprintf(stderr,
		"usage: %s WORKLOAD [options]       WORKLOAD: ART, FB, WEB, BIG\n"
		"       %s --payload KEY SIZE       object bytes to stdout\n"
		"       %s --materialize DIR --manifest FILE\n"
		"  --seed N        workload seed (default 1)\n"
		"  --scale F       scale the counts, e.g. 0.125 or 1/8 "
		"(default 1)\n"
		"  --out DIR       where WORKLOAD.population and "
		"WORKLOAD.measured go (default .)\n"
		"  --stats         print the statistics only, write no manifest\n"
		"  --count N       ART/FB/WEB: objects before --scale "
		"(defaults 2048, 400000, 373165)\n"
		"  --total SIZE    ART: objects until this many bytes, "
		"before --scale\n"
		"  --ram SIZE      BIG: the RAM the corpus must exceed 1.5x "
		"(default 24G)\n"
		"  --passes N      ART/FB/BIG: measured requests = N x count "
		"(default 3)\n",
		prog_name, prog_name, prog_name);
	exit(129);
}

/* "0.125", "1/8", "1e-3": a positive finite factor. */
static double parse_scale(const char *s)
{
	char *end;
	double v, d = 1.0;

	errno = 0;
	v = strtod(s, &end);
	if (!errno && end != s && *end == '/') {
		const char *q = end + 1;

		d = strtod(q, &end);
		if (end == q)
			d = NAN;
	}
	v /= d;
	if (errno || end == s || *end || !isfinite(v) || v <= 0)
		die("bad scale: '%s'", s);
	return v;
}

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);

	if (!p)
		die("out of memory (%zu x %zu bytes)", n, size);
	return p;
}

static void *xrealloc(void *p, size_t n, size_t size)
{
	if (n && size > SIZE_MAX / n)
		die("out of memory");
	p = realloc(p, n ? n * size : 1);
	if (!p)
		die("out of memory (%zu x %zu bytes)", n, size);
	return p;
}

static uint64_t stream_seed(uint64_t seed, uint64_t tag)
{
	return mix64(seed ^ mix64(tag));
}

/* ---- the generated workload ---- */

enum wl { WL_ART, WL_FB, WL_WEB, WL_BIG };
static const char *const wl_name[] = { "ART", "FB", "WEB", "BIG" };

struct workload {
	enum wl kind;
	uint64_t seed;
	double scale;
	size_t n;	/* objects, ids 0..n-1 */
	uint64_t *size; /* value size of object id */
	uint8_t *klen;	/* FB: key length of object id */
	size_t nreq;	/* measured requests */
	uint32_t *req;	/* object id of each request */
	size_t cap;
};

static void wl_push(struct workload *w, uint64_t size)
{
	if (w->n == w->cap) {
		w->cap = w->cap ? 2 * w->cap : 1024;
		w->size = xrealloc(w->size, w->cap, sizeof(*w->size));
	}
	w->size[w->n++] = size;
}

/* Object id's key into buf (KEY_MAX bytes). */
static void wl_key(const struct workload *w, size_t id, char *buf)
{
	unsigned long long i = id;

	switch (w->kind) {
	case WL_ART:
		snprintf(buf, KEY_MAX, "art:%08llu", i);
		break;
	case WL_FB:
		snprintf(buf, KEY_MAX, "fb:%0*llu", (int)w->klen[id] - 3, i);
		break;
	case WL_WEB:
		snprintf(buf, KEY_MAX, "web:%08llu", i);
		break;
	case WL_BIG:
		snprintf(buf, KEY_MAX, "big:%04llu", i);
		break;
	}
}

static size_t scaled(uint64_t count, double scale)
{
	double v = llround((double)count * scale);

	if (v < 1)
		die("--scale %g leaves no objects of %" PRIu64, scale, count);
	if (v > (double)UINT32_MAX)
		die("--scale %g: too many objects", scale);
	return (size_t)v;
}

/* Measured passes, each a fresh shuffle of every id (as engine.c). */
static void measured_passes(struct workload *w, uint64_t passes)
{
	uint64_t *order = xcalloc(w->n, sizeof(*order));

	if (passes && w->n > SIZE_MAX / passes / sizeof(*w->req))
		die("--passes %" PRIu64 " too large", passes);
	w->nreq = w->n * passes;
	w->req = xcalloc(w->nreq, sizeof(*w->req));
	for (uint64_t p = 0; p < passes; p++) {
		struct rng r;

		rng_init(&r, workload_pass_seed(w->seed, p));
		for (size_t i = 0; i < w->n; i++)
			order[i] = i;
		rng_shuffle(&r, order, w->n);
		for (size_t i = 0; i < w->n; i++)
			w->req[p * w->n + i] = (uint32_t)order[i];
	}
	free(order);
}

/*
 * ART: the exact draw sequence of bench/engine.c (--count or --total), so
 * that an engine run and this manifest hold the same objects.
 */
static void gen_art(struct workload *w, uint64_t count, uint64_t total,
		    uint64_t passes)
{
	struct rng r;

	rng_init(&r, w->seed);
	if (total) {
		double t = (double)total * w->scale;
		uint64_t sum = 0;

		while ((double)sum < t) {
			uint64_t sz = workload_art_size(&r);

			wl_push(w, sz);
			sum += sz;
		}
		if (w->n > UINT32_MAX)
			die("--total too large");
	} else {
		size_t n = scaled(count, w->scale);

		while (w->n < n)
			wl_push(w, workload_art_size(&r));
	}
	measured_passes(w, passes);
}

static unsigned digits(uint64_t v)
{
	unsigned d = 1;

	while (v >= 10) {
		v /= 10;
		d++;
	}
	return d;
}

/* FB: mutilate's value and key sizes; measured: uniform random keys. */
static void gen_fb(struct workload *w, uint64_t count, uint64_t passes)
{
	size_t n = scaled(count, w->scale);
	unsigned min_len = 3 + digits(n - 1);
	struct rng rv, rk, rq;

	rng_init(&rv, stream_seed(w->seed, TAG_FB_VALUE));
	rng_init(&rk, stream_seed(w->seed, TAG_FB_KEY));
	rng_init(&rq, stream_seed(w->seed, TAG_FB_REQ));
	w->klen = xcalloc(n, sizeof(*w->klen));
	for (size_t i = 0; i < n; i++) {
		wl_push(w, workload_fb_value_size(&rv));
		w->klen[i] = workload_fb_key_len(&rk, min_len);
	}
	if (passes && n > SIZE_MAX / passes / sizeof(*w->req))
		die("--passes %" PRIu64 " too large", passes);
	w->nreq = n * passes;
	w->req = xcalloc(w->nreq, sizeof(*w->req));
	for (size_t i = 0; i < w->nreq; i++)
		w->req[i] = (uint32_t)rng_below(&rq, n);
}

/* Index of the first cdf entry > x (cdf ascending, x < cdf[n-1]). */
static size_t cdf_find(const double *cdf, size_t n, double x)
{
	size_t lo = 0, hi = n - 1;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cdf[mid] > x)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/*
 * WEB.  Sizes are stratified: object i of n takes quantile (i + U) / n of
 * the interpolated distribution, and a seeded shuffle places the sizes on
 * ids.  So the realised quantiles and mean follow the published ones at
 * any scale instead of depending on how many of the rare 32-150 MiB
 * objects a short run happens to draw.
 *
 * Popularity: Zipf(1.0) over ranks, a seeded permutation maps ranks to ids,
 * then the weights of objects larger than 256 KiB are scaled to carry
 * WEB_LARGE_SHARE of the total and the rest 1 - WEB_LARGE_SHARE.  The
 * requests are independent draws from that distribution.
 */
static void gen_web(struct workload *w, uint64_t count)
{
	size_t n = scaled(count, w->scale);
	double nr =
		llround((double)WEB_REQUESTS * w->scale * count / WEB_OBJECTS);
	uint64_t *perm;
	double *wt, *cdf, wl = 0, ws = 0, fl = 1, fs = 1;
	struct rng r;

	if (nr < 1 || nr > (double)(SIZE_MAX / sizeof(*w->req)))
		die("--scale %g: bad request count", w->scale);
	rng_init(&r, stream_seed(w->seed, TAG_WEB_SIZE));
	for (size_t i = 0; i < n; i++)
		wl_push(w, workload_web_size(((double)i + rng_open(&r)) / n));
	rng_init(&r, stream_seed(w->seed, TAG_WEB_PLACE));
	rng_shuffle(&r, w->size, n);

	perm = xcalloc(n, sizeof(*perm));
	wt = xcalloc(n, sizeof(*wt));
	cdf = xcalloc(n, sizeof(*cdf));
	for (size_t i = 0; i < n; i++)
		perm[i] = i;
	rng_init(&r, stream_seed(w->seed, TAG_WEB_RANK));
	rng_shuffle(&r, perm, n);
	for (size_t rank = 0; rank < n; rank++) {
		uint64_t id = perm[rank];

		wt[id] = pow((double)(rank + 1), -WEB_ZIPF);
		if (w->size[id] > WEB_LARGE)
			wl += wt[id];
		else
			ws += wt[id];
	}
	if (wl > 0 && ws > 0) { /* else nothing to reweight */
		fl = WEB_LARGE_SHARE / wl;
		fs = (1.0 - WEB_LARGE_SHARE) / ws;
	}
	for (size_t id = 0; id < n; id++) {
		double x = wt[id] * (w->size[id] > WEB_LARGE ? fl : fs);

		cdf[id] = (id ? cdf[id - 1] : 0) + x;
	}

	w->nreq = (size_t)nr;
	w->req = xcalloc(w->nreq, sizeof(*w->req));
	rng_init(&r, stream_seed(w->seed, TAG_WEB_REQ));
	for (size_t i = 0; i < w->nreq; i++)
		w->req[i] =
			(uint32_t)cdf_find(cdf, n, rng_open(&r) * cdf[n - 1]);
	free(perm);
	free(wt);
	free(cdf);
}

/* BIG: uniform 1-4 GiB until the total reaches 1.5x RAM x scale. */
static void gen_big(struct workload *w, uint64_t ram, uint64_t passes)
{
	double target = BIG_RAM_FACTOR * (double)ram * w->scale;
	uint64_t sum = 0;
	struct rng r;

	rng_init(&r, stream_seed(w->seed, TAG_BIG_SIZE));
	do {
		uint64_t sz = workload_big_size(&r);

		wl_push(w, sz);
		sum += sz;
	} while ((double)sum < target);
	measured_passes(w, passes);
}

/* ---- statistics ---- */


static const char *human(uint64_t v, char *buf, size_t len)
{
	if (v >= GiB)
		snprintf(buf, len, "%.2f GiB", (double)v / GiB);
	else if (v >= MiB)
		snprintf(buf, len, "%.2f MiB", (double)v / MiB);
	else if (v >= KiB)
		snprintf(buf, len, "%.1f KiB", (double)v / KiB);
	else
		snprintf(buf, len, "%" PRIu64 " B", v);
	return buf;
}

/* One line: what count=... total=... mean=... p50/p90/p99 max=... */
static void print_dist(const char *what, const uint64_t *vals, size_t n)
{
	uint64_t *v = xcalloc(n, sizeof(*v)), total = 0;
	char h[6][32];
	double mean;

	for (size_t i = 0; i < n; i++) {
		v[i] = vals[i];
		total += v[i];
	}
	qsort(v, n, sizeof(*v), cmp_u64);
	mean = n ? (double)total / n : 0.0;
	printf("%s count=%zu total=%" PRIu64 " (%s) mean=%.0f (%s) "
	       "p50=%" PRIu64 " (%s) p90=%" PRIu64 " (%s) p99=%" PRIu64
	       " (%s) max=%" PRIu64 " (%s) min=%" PRIu64 "\n",
	       what, n, total, human(total, h[0], 32), mean,
	       human(llround(mean), h[1], 32), pct(v, n, 50),
	       human(pct(v, n, 50), h[2], 32), pct(v, n, 90),
	       human(pct(v, n, 90), h[3], 32), pct(v, n, 99),
	       human(pct(v, n, 99), h[4], 32), n ? v[n - 1] : 0,
	       human(n ? v[n - 1] : 0, h[5], 32), n ? v[0] : 0);
	free(v);
}

static void print_stats(const struct workload *w)
{
	uint64_t bytes = 0, large = 0, distinct = 0;
	uint8_t *seen = xcalloc(w->n, 1);
	char line[64], h[32];

	snprintf(line, sizeof(line), "population: %s", wl_name[w->kind]);
	print_dist(line, w->size, w->n);
	if (w->kind == WL_FB) {
		uint64_t *k = xcalloc(w->n, sizeof(*k));

		for (size_t i = 0; i < w->n; i++)
			k[i] = w->klen[i];
		print_dist("keys: FB", k, w->n);
		free(k);
	}
	for (size_t i = 0; i < w->nreq; i++) {
		uint64_t sz = w->size[w->req[i]];

		bytes += sz;
		large += sz > WEB_LARGE;
		if (!seen[w->req[i]]) {
			seen[w->req[i]] = 1;
			distinct++;
		}
	}
	free(seen);
	printf("measured: %s requests=%zu per_object=%.2f bytes=%" PRIu64
	       " (%s) mean=%.0f distinct=%" PRIu64 " large_share=%.4f%%"
	       " (requests to objects > 256 KiB)\n",
	       wl_name[w->kind], w->nreq, w->n ? (double)w->nreq / w->n : 0,
	       bytes, human(bytes, h, sizeof(h)),
	       w->nreq ? (double)bytes / w->nreq : 0, distinct,
	       w->nreq ? 100.0 * large / w->nreq : 0);
	if (w->kind == WL_WEB) {
		double f = (double)w->n / WEB_OBJECTS;

		printf("reference: WEB source scaled by %.6f: objects=%.0f "
		       "total=%.2f GiB mean=174 KiB requests=%.0f "
		       "bytes=%.2f GiB large_share=2.07%%\n",
		       f, WEB_OBJECTS * f, 62.1 * f, WEB_REQUESTS * f,
		       266.1 * f);
	}
}

/* ---- manifests ---- */

static void write_manifest(const struct workload *w, const char *dir,
			   const char *suffix, bool measured)
{
	char path[4096], tmp[4200], key[KEY_MAX];
	size_t n = measured ? w->nreq : w->n;
	FILE *f;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s.%s", dir,
			     wl_name[w->kind], suffix) >= sizeof(path))
		die("path too long: '%s'", dir);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f)
		die("cannot open '%s': %s", tmp, strerror(errno));
	setvbuf(f, NULL, _IOFBF, 1 << 20);
	for (size_t i = 0; i < n; i++) {
		size_t id = measured ? w->req[i] : i;

		wl_key(w, id, key);
		fprintf(f, "%s %" PRIu64 "\n", key, w->size[id]);
	}
	if (fclose(f))
		die("cannot write '%s': %s", tmp, strerror(errno));
	if (rename(tmp, path))
		die("cannot rename '%s': %s", tmp, strerror(errno));
	printf("wrote: %s (%zu lines)\n", path, n);
}

/* ---- payloads ---- */

static void write_all(int fd, const void *buf, size_t len, const char *what)
{
	const char *p = buf;

	while (len) {
		ssize_t k = write(fd, p, len);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			die("cannot write '%s': %s", what, strerror(errno));
		p += k;
		len -= (size_t)k;
	}
}

static void payload_to_fd(int fd, const char *key, uint64_t size,
			  unsigned char *buf, const char *what)
{
	uint64_t seed = workload_payload_seed(key, size);

	for (uint64_t off = 0; off < size;) {
		size_t n = size - off < PIECE ? size - off : PIECE;

		workload_payload_fill(seed, off, buf, n);
		write_all(fd, buf, n, what);
		off += n;
	}
}

static int cmd_payload(const char *key, const char *size_s)
{
	unsigned char *buf = xcalloc(PIECE, 1);
	uint64_t size = parse_size_opt("payload", size_s);

	payload_to_fd(STDOUT_FILENO, key, size, buf, "stdout");
	free(buf);
	return 0;
}

static void mkdir_parents(char *path)
{
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0755) && errno != EEXIST)
			die("cannot create '%s': %s", path, strerror(errno));
		*p = '/';
	}
}

/*
 * Every object of a manifest as DIR/<key with ':' as '/'>.  A file already
 * there with the right size is kept: bytes are a function of (key, size),
 * and files are written under a temporary name and renamed, so a right-
 * sized file is a complete one.
 */
static int cmd_materialize(const char *dir, const char *manifest)
{
	unsigned char *buf = xcalloc(PIECE, 1);
	char line[1024], key[KEY_MAX], path[4096], tmp[4200];
	uint64_t files = 0, kept = 0, bytes = 0, lineno = 0;
	int64_t t0 = gs_mono_ns();
	FILE *f = fopen(manifest, "r");

	if (!f)
		die("cannot open '%s': %s", manifest, strerror(errno));
	if (mkdir(dir, 0755) && errno != EEXIST)
		die("cannot create '%s': %s", dir, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		unsigned long long size;
		struct stat st;
		int fd;

		lineno++;
		if (sscanf(line, "%255s %llu", key, &size) != 2)
			die("%s:%" PRIu64 ": expected 'key size'", manifest,
			    lineno);
		for (char *p = key; *p; p++)
			if (*p == ':')
				*p = '/';
		if (key[0] == '/' || strstr(key, "..") || strstr(key, "//"))
			die("%s:%" PRIu64 ": refusing key '%s' as a path",
			    manifest, lineno, key);
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, key) >=
		    sizeof(path))
			die("path too long for key '%s'", key);
		if (!stat(path, &st) && S_ISREG(st.st_mode) &&
		    (unsigned long long)st.st_size == size) {
			kept++;
			continue;
		}
		mkdir_parents(path);
		snprintf(tmp, sizeof(tmp), "%s.tmp", path);
		fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0)
			die("cannot open '%s': %s", tmp, strerror(errno));
		/* the key as written in the manifest: '/' back to ':' */
		for (char *p = key; *p; p++)
			if (*p == '/')
				*p = ':';
		payload_to_fd(fd, key, size, buf, tmp);
		if (close(fd))
			die("cannot write '%s': %s", tmp, strerror(errno));
		if (rename(tmp, path))
			die("cannot rename '%s': %s", tmp, strerror(errno));
		files++;
		bytes += size;
	}
	if (ferror(f))
		die("cannot read '%s': %s", manifest, strerror(errno));
	fclose(f);
	free(buf);
	printf("materialize: %s -> %s: %" PRIu64 " files written (%" PRIu64
	       " bytes), %" PRIu64 " already present, %.3f s\n",
	       manifest, dir, files, bytes, kept, (gs_mono_ns() - t0) / 1e9);
	return 0;
}

/* ---- main ---- */

enum {
	OPT_SEED = 256,
	OPT_SCALE,
	OPT_OUT,
	OPT_STATS,
	OPT_COUNT,
	OPT_TOTAL,
	OPT_RAM,
	OPT_PASSES,
	OPT_PAYLOAD,
	OPT_MATERIALIZE,
	OPT_MANIFEST,
	OPT_HELP,
};

static const struct option longopts[] = {
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "scale", required_argument, NULL, OPT_SCALE },
	{ "out", required_argument, NULL, OPT_OUT },
	{ "stats", no_argument, NULL, OPT_STATS },
	{ "count", required_argument, NULL, OPT_COUNT },
	{ "total", required_argument, NULL, OPT_TOTAL },
	{ "ram", required_argument, NULL, OPT_RAM },
	{ "passes", required_argument, NULL, OPT_PASSES },
	{ "payload", no_argument, NULL, OPT_PAYLOAD },
	{ "materialize", required_argument, NULL, OPT_MATERIALIZE },
	{ "manifest", required_argument, NULL, OPT_MANIFEST },
	{ "help", no_argument, NULL, OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

int main(int argc, char **argv)
{
	const char *out = ".", *mat_dir = NULL, *manifest = NULL;
	uint64_t count = 0, total = 0, ram = BIG_RAM, passes = 3;
	bool stats_only = false, payload = false;
	struct workload w;
	int64_t t0 = gs_mono_ns();
	int opt;

	prog_name = "gen";
	memset(&w, 0, sizeof(w));
	w.seed = 1;
	w.scale = 1.0;
	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (opt) {
		case OPT_SEED:
			w.seed = parse_num_opt("seed", optarg);
			break;
		case OPT_SCALE:
			w.scale = parse_scale(optarg);
			break;
		case OPT_OUT:
			out = optarg;
			break;
		case OPT_STATS:
			stats_only = true;
			break;
		case OPT_COUNT:
			count = parse_num_opt("count", optarg);
			if (!count)
				die("--count must be positive");
			break;
		case OPT_TOTAL:
			total = parse_size_opt("total", optarg);
			break;
		case OPT_RAM:
			ram = parse_size_opt("ram", optarg);
			break;
		case OPT_PASSES:
			passes = parse_num_opt("passes", optarg);
			break;
		case OPT_PAYLOAD:
			payload = true;
			break;
		case OPT_MATERIALIZE:
			mat_dir = optarg;
			break;
		case OPT_MANIFEST:
			manifest = optarg;
			break;
		default:
			usage();
		}
	}
	if (payload) {
		if (argc - optind != 2 || mat_dir || manifest)
			usage();
		return cmd_payload(argv[optind], argv[optind + 1]);
	}
	if (mat_dir || manifest) {
		if (!mat_dir || !manifest || optind != argc)
			usage();
		return cmd_materialize(mat_dir, manifest);
	}
	if (argc - optind != 1)
		usage();
	for (w.kind = WL_ART; w.kind <= WL_BIG; w.kind++)
		if (!strcasecmp(argv[optind], wl_name[w.kind]))
			break;
	if (w.kind > WL_BIG)
		die("unknown workload '%s' (ART, FB, WEB, BIG)", argv[optind]);
	if (total && w.kind != WL_ART)
		die("--total is for ART");
	if (ram == 0)
		die("--ram must be positive");

	switch (w.kind) {
	case WL_ART:
		gen_art(&w, count ? count : ART_COUNT, total, passes);
		break;
	case WL_FB:
		gen_fb(&w, count ? count : FB_COUNT, passes);
		break;
	case WL_WEB:
		gen_web(&w, count ? count : WEB_OBJECTS);
		break;
	case WL_BIG:
		gen_big(&w, ram, passes);
		break;
	}
	printf("workload: %s seed=%" PRIu64 " scale=%g", wl_name[w.kind],
	       w.seed, w.scale);
	if (w.kind == WL_BIG)
		printf(" ram=%" PRIu64 " target=%.0f", ram,
		       BIG_RAM_FACTOR * (double)ram * w.scale);
	if (w.kind == WL_ART && total)
		printf(" total_target=%.0f", (double)total * w.scale);
	printf(" generated in %.3f s\n", (gs_mono_ns() - t0) / 1e9);
	print_stats(&w);
	if (!stats_only) {
		if (mkdir(out, 0755) && errno != EEXIST)
			die("cannot create '%s': %s", out, strerror(errno));
		write_manifest(&w, out, "population", false);
		write_manifest(&w, out, "measured", true);
	}
	printf("done in %.3f s\n", (gs_mono_ns() - t0) / 1e9);
	free(w.size);
	free(w.klen);
	free(w.req);
	return 0;
}
