/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * netsim: deliver a recorded replay through an ideal network link.  Reads
 * chunk-ready times ("ready_ns bytes" lines, as bench/vsrocks --chunks
 * writes them, time 0 being the start of the replay) and sends each chunk
 * in order at the link rate: start = max(ready, previous end), end = start
 * + bytes * 8 / rate.  Prints the delivered throughput for each rate.
 *   netsim [--rate GBITPS]... [FILE]     (default rates 0.937 and 10)
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cli/workload.h"
#include "../store/prog.h"

#define MAX_RATES 16


/* One link: its rate and where its sending has got to. */
struct link {
	double gbps;	/* bits per nanosecond */
	double end_ns;	/* when the last chunk so far was sent */
	double busy_ns; /* time spent sending */
};

static void usage(void)
{
	fprintf(stderr,
		"usage: %s [--rate GBITPS]... [FILE]\n"
		"  --rate GBITPS  link rate in Gbit/s, repeatable "
		"(default 0.937 and 10)\n"
		"  FILE           \"ready_ns bytes\" lines, '#' comments "
		"(default stdin)\n",
		prog_name);
	exit(129);
}

static double parse_rate(const char *s)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v <= 0)
		die("bad rate: '%s'", s);
	return v;
}

/* Send one chunk of @bytes, ready at @ready_ns, on @l. */
static void link_send(struct link *l, double ready_ns, uint64_t bytes)
{
	double start = ready_ns > l->end_ns ? ready_ns : l->end_ns;
	double t = (double)bytes * 8.0 / l->gbps;

	l->end_ns = start + t;
	l->busy_ns += t;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "rate", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct link links[MAX_RATES];
	size_t nlinks = 0, lineno = 0;
	uint64_t chunks = 0, bytes = 0;
	double last_ready = 0;
	char line[256];
	FILE *f = stdin;
	int opt;

	prog_name = "netsim";
	memset(links, 0, sizeof(links));
	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		if (opt != 'r')
			usage();
		if (nlinks == MAX_RATES)
			die("at most %d rates", MAX_RATES);
		links[nlinks++].gbps = parse_rate(optarg);
	}
	if (argc - optind > 1)
		usage();
	if (optind < argc && !(f = fopen(argv[optind], "r")))
		die("cannot open '%s': %s", argv[optind], strerror(errno));
	if (!nlinks) {
		links[nlinks++].gbps = 0.937;
		links[nlinks++].gbps = 10.0;
	}

	while (fgets(line, sizeof(line), f)) {
		uint64_t ready, n;
		char extra;

		lineno++;
		if (line[0] == '#' || line[0] == '\n')
			continue;
		if (sscanf(line, "%" SCNu64 " %" SCNu64 " %c", &ready, &n,
			   &extra) != 2)
			die("line %zu: expected \"ready_ns bytes\"", lineno);
		if ((double)ready < last_ready)
			die("line %zu: ready time goes back", lineno);
		last_ready = (double)ready;
		for (size_t i = 0; i < nlinks; i++)
			link_send(&links[i], (double)ready, n);
		chunks++;
		bytes += n;
	}
	if (ferror(f))
		die("read error: %s", strerror(errno));

	/* The source alone: its bytes over the time its last chunk was ready. */
	printf("source: chunks=%" PRIu64 " bytes=%" PRIu64
	       " last_ready_ns=%.0f "
	       "gbps=%.3f\n",
	       chunks, bytes, last_ready,
	       last_ready > 0 ? (double)bytes * 8 / last_ready : 0.0);
	for (size_t i = 0; i < nlinks; i++) {
		const struct link *l = &links[i];

		printf("link: rate_gbps=%g delivered_ns=%.0f delivered_gbps=%.3f "
		       "delivered_mibps=%.1f link_busy=%.1f%%\n",
		       l->gbps, l->end_ns,
		       l->end_ns > 0 ? (double)bytes * 8 / l->end_ns : 0.0,
		       l->end_ns > 0 ? (double)bytes / MiB / (l->end_ns / 1e9) :
				       0.0,
		       l->end_ns > 0 ? 100.0 * l->busy_ns / l->end_ns : 0.0);
	}
	return 0;
}
