/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memcache "stats": the counters memcached clients expect, summed over
 * the workers and taken from the store, plus "stats settings" and the
 * per-tier detail of "stats tiers".  The same lists go out over HTTP as
 * JSON (/_goblin/stats) and Prometheus text (/metrics): one list, three
 * sinks.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "../store/origin/origin.h"
#include "goblind.h"

/* Where the stats lines go: a memcache reply, JSON or Prometheus text. */
enum sink_kind { SINK_MC, SINK_JSON, SINK_PROM, SINK_TEXT };

struct sink {
	enum sink_kind kind;
	struct conn *conn; /* SINK_MC */
	struct gd_buf *b;  /* the others; SINK_TEXT: "name value\n" lines */
	unsigned n;	   /* values written (JSON commas) */
};

/* Prometheus: a counter's value only grows, a gauge's goes up and down. */
enum metric { M_GAUGE, M_COUNTER };

/* Prometheus names: goblin_ + the name, ':' and others become '_'. */
/* Connections of the protocol named @name, 0 when it is not served. */
static unsigned proto_conns_named(struct gd *gd, const char *name)
{
	for (unsigned i = 0; i < gd->nprotos; i++)
		if (!strcmp(gd->protos[i].ops->name, name))
			return atomic_load(&gd->proto_conns[i]);
	return 0;
}

static void prom_name(struct gd_buf *b, const char *name, const char *suffix)
{
	char n[96];
	size_t i;

	for (i = 0; name[i] && i < sizeof(n) - 1; i++)
		n[i] = (name[i] >= 'a' && name[i] <= 'z') ||
				       (name[i] >= '0' && name[i] <= '9') ?
			       name[i] :
			       '_';
	n[i] = 0;
	gd_buf_printf(b, "goblin_%s%s", n, suffix);
}

/*
 * A family's HELP and TYPE lines, then the start of its sample line: the
 * exposition format wants both before the first sample, and a counter's
 * name ending in _total.
 */
static void prom_family(struct gd_buf *b, const char *name, const char *sfx,
			const char *type, const char *help)
{
	gd_buf_printf(b, "# HELP ");
	prom_name(b, name, sfx);
	gd_buf_printf(b, " %s\n# TYPE ", help);
	prom_name(b, name, sfx);
	gd_buf_printf(b, " %s\n", type);
}

static void sink_u64(struct sink *k, const char *name, enum metric m,
		     const char *help, uint64_t v)
{
	const char *sfx = m == M_COUNTER ? "_total" : "";

	switch (k->kind) {
	case SINK_MC:
		conn_printf(k->conn, "STAT %s %" PRIu64 "\r\n", name, v);
		break;
	case SINK_TEXT:
		gd_buf_printf(k->b, "%s %" PRIu64 "\n", name, v);
		break;
	case SINK_JSON:
		gd_buf_printf(k->b, "%s\n  \"%s\": %" PRIu64, k->n ? "," : "",
			      name, v);
		break;
	case SINK_PROM:
		prom_family(k->b, name, sfx,
			    m == M_COUNTER ? "counter" : "gauge", help);
		prom_name(k->b, name, sfx);
		gd_buf_printf(k->b, " %" PRIu64 "\n", v);
		break;
	}
	k->n++;
}

/* Strings are for people: Prometheus gets them as an info label. */
static void sink_str(struct sink *k, const char *name, const char *help,
		     const char *v)
{
	switch (k->kind) {
	case SINK_MC:
		conn_printf(k->conn, "STAT %s %s\r\n", name, v);
		break;
	case SINK_TEXT:
		gd_buf_printf(k->b, "%s %s\n", name, v);
		break;
	case SINK_JSON:
		gd_buf_printf(k->b, "%s\n  \"%s\": \"", k->n ? "," : "", name);
		for (; *v; v++)
			gd_buf_printf(k->b,
				      *v == '"' || *v == '\\'  ? "\\%c" :
				      (unsigned char)*v < 0x20 ? "\\u%04x" :
								 "%c",
				      *v);
		gd_buf_printf(k->b, "\"");
		break;
	case SINK_PROM:
		prom_family(k->b, name, "_info", "gauge", help);
		prom_name(k->b, name, "_info");
		gd_buf_printf(k->b, "{value=\"");
		for (; *v; v++)
			gd_buf_printf(k->b,
				      *v == '"' || *v == '\\' ? "\\%c" :
				      *v == '\n'	      ? " " :
								"%c",
				      *v);
		gd_buf_printf(k->b, "\"} 1\n");
		break;
	}
	k->n++;
}

/*
 * CPU seconds with microseconds: a number in JSON, a counter of seconds in
 * Prometheus (goblin_rusage_user_seconds_total).
 */
static void sink_time(struct sink *k, const char *name, const char *help,
		      struct timeval tv)
{
	switch (k->kind) {
	case SINK_MC:
		conn_printf(k->conn, "STAT %s %ld.%06ld\r\n", name,
			    (long)tv.tv_sec, (long)tv.tv_usec);
		break;
	case SINK_TEXT:
		gd_buf_printf(k->b, "%s %ld.%06ld\n", name, (long)tv.tv_sec,
			      (long)tv.tv_usec);
		break;
	case SINK_JSON:
		gd_buf_printf(k->b, "%s\n  \"%s\": %ld.%06ld", k->n ? "," : "",
			      name, (long)tv.tv_sec, (long)tv.tv_usec);
		break;
	case SINK_PROM:
		prom_family(k->b, name, "_seconds_total", "counter", help);
		prom_name(k->b, name, "_seconds_total");
		gd_buf_printf(k->b, " %ld.%06ld\n", (long)tv.tv_sec,
			      (long)tv.tv_usec);
		break;
	}
	k->n++;
}

/*
 * The SSD read latency as a Prometheus histogram (only that sink: memcache
 * and JSON keep their mean).  The store's bucket i counts reads under
 * 2^i * 16 us (the last one everything slower); Prometheus buckets are
 * cumulative and "le", which differs only for a read of exactly a bound,
 * to the nanosecond.  _count is the buckets' sum, so it always equals +Inf.
 */
static void sink_hist(struct sink *k, const char *name, const char *help,
		      const uint64_t *hist, unsigned nb, uint64_t sum_ns)
{
	uint64_t cum = 0;
	unsigned i;

	if (k->kind != SINK_PROM)
		return;
	prom_family(k->b, name, "_seconds", "histogram", help);
	for (i = 0; i < nb; i++) {
		cum += hist[i];
		prom_name(k->b, name, "_seconds_bucket");
		if (i + 1 < nb)
			gd_buf_printf(k->b, "{le=\"%g\"} %" PRIu64 "\n",
				      (double)(16ull << i) / 1e6, cum);
		else
			gd_buf_printf(k->b, "{le=\"+Inf\"} %" PRIu64 "\n", cum);
	}
	prom_name(k->b, name, "_seconds_sum");
	gd_buf_printf(k->b, " %.9f\n", (double)sum_ns / 1e9);
	prom_name(k->b, name, "_seconds_count");
	gd_buf_printf(k->b, " %" PRIu64 "\n", cum);
}

/* Prometheus only: a counter of seconds from one of nanoseconds. */
static void sink_seconds(struct sink *k, const char *name, const char *help,
			 uint64_t ns)
{
	prom_family(k->b, name, "_seconds_total", "counter", help);
	prom_name(k->b, name, "_seconds_total");
	gd_buf_printf(k->b, " %.9f\n", (double)ns / 1e9);
}

/* Prometheus only: a gauge of seconds from one of nanoseconds. */
static void sink_seconds_gauge(struct sink *k, const char *name,
			       const char *help, uint64_t ns)
{
	prom_family(k->b, name, "_seconds", "gauge", help);
	prom_name(k->b, name, "_seconds");
	gd_buf_printf(k->b, " %.9f\n", (double)ns / 1e9);
}

/* Every name has its help text: it is the HELP line of /metrics. */
#define COUNTER(c, name, help, v) \
	sink_u64(c, name, M_COUNTER, help, (uint64_t)(v))
#define GAUGE(c, name, help, v) sink_u64(c, name, M_GAUGE, help, (uint64_t)(v))
/* "stats settings" goes to memcache clients only: no help text */
#define U64(c, name, v)		sink_u64(c, name, M_GAUGE, NULL, (uint64_t)(v))
#define STR(c, name, help, v)	sink_str(c, name, help, v)

/*
 * Store field @id of @st under @name: its kind and help are goblin.h's
 * GS_STATS.  Histograms are not single values: the callers that show one
 * say how (stats_ssd_latency).
 */
static void sink_store(struct sink *c, const char *name,
		       const struct gs_stats *st, enum gs_stat_id id)
{
	const struct gs_stat_field *f = &gs_stat_fields[id];

	if (f->kind == GS_STAT_HIST)
		return;
	sink_u64(c, name, f->kind == GS_STAT_COUNTER ? M_COUNTER : M_GAUGE,
		 f->help, gs_stat_value(st, f, 0));
}

/* The process and its connections. */
static void stats_process(struct gd *gd, struct sink *c,
			  const struct gd_counters *cn)
{
	struct rusage ru;
	int64_t now = time(NULL);

	getrusage(RUSAGE_SELF, &ru);
	GAUGE(c, "pid", "process id of goblind", getpid());
	GAUGE(c, "uptime", "seconds since goblind started",
	      now - gd->start_time);
	GAUGE(c, "time", "current UNIX time of the server", now);
	STR(c, "version", "the memcached version goblind speaks as",
	    GD_MC_VERSION);
	STR(c, "goblind_version", "goblind's own version", GD_VERSION);
	GAUGE(c, "pointer_size", "bits in a pointer", sizeof(void *) * 8);
	sink_time(c, "rusage_user", "user CPU time of goblind", ru.ru_utime);
	sink_time(c, "rusage_system", "system CPU time of goblind",
		  ru.ru_stime);
	GAUGE(c, "max_connections", "the --max-conns limit", gd->set.max_conns);
	GAUGE(c, "curr_connections", "connections open now",
	      atomic_load(&gd->curr_conns));
	COUNTER(c, "total_connections", "connections accepted",
		cn->total_connections);
	COUNTER(c, "rejected_connections",
		"connections refused: over --max-conns or a protocol's limit, "
		"or out of file descriptors",
		cn->rejected_connections);
	COUNTER(c, "rejected_no_fd",
		"connections refused through the reserve fd, out of fds",
		cn->rejected_no_fd);
	COUNTER(c, "listen_disabled_num",
		"times accepting was paused: out of fds, no reserve",
		cn->listen_disabled_num);
	GAUGE(c, "curr_memcache_connections", "memcache connections open now",
	      atomic_load(&gd->proto_conns[0]));
	GAUGE(c, "curr_http_connections", "HTTP connections open now",
	      atomic_load(&gd->proto_conns[1]));
	GAUGE(c, "curr_resp_connections", "RESP connections open now",
	      proto_conns_named(gd, "resp"));

	GAUGE(c, "curr_ring_connections", "shared-memory ring clients now",
	      gd->ring_proto ?
		      atomic_load(&gd->proto_conns[gd->ring_proto->id]) :
		      0);
	GAUGE(c, "ring_mapped_bytes", "bytes of ring mappings held now",
	      atomic_load(&gd->ring_mapped));
	COUNTER(c, "auth_cmds", "memcache logins tried (--auth-file)",
		cn->auth_cmds);
	COUNTER(c, "auth_errors", "memcache logins that failed",
		cn->auth_errors);
	COUNTER(c, "memcache_denied",
		"memcache writes refused by the write policy", cn->mc_denied);
	GAUGE(c, "connection_structures", "connection structures allocated",
	      atomic_load(&gd->curr_conns));
}

/* memcache's commands, hits and misses, and the store's totals. */
static void stats_commands(struct gd *gd, struct sink *c,
			   const struct gd_counters *cn,
			   const struct gs_stats *st)
{
	COUNTER(c, "cmd_get", "keys asked for by get, gets, gat, gats and mg",
		cn->cmd_get);
	COUNTER(c, "cmd_set",
		"set, add, replace, append, prepend, cas and ms commands",
		cn->cmd_set);
	COUNTER(c, "cmd_flush", "flush_all commands", cn->cmd_flush);
	COUNTER(c, "cmd_touch", "touch, gat, gats and mg T commands",
		cn->cmd_touch);
	COUNTER(c, "cmd_meta", "meta commands", cn->cmd_meta);
	COUNTER(c, "get_hits", "keys found by retrieval commands",
		cn->get_hits);
	COUNTER(c, "get_misses", "keys not found by retrieval commands",
		cn->get_misses);
	sink_store(c, "get_expired", st, GS_STAT_expired);
	COUNTER(c, "delete_misses", "deletes of keys not found",
		cn->delete_misses);
	COUNTER(c, "delete_hits", "deletes that removed an object",
		cn->delete_hits);
	COUNTER(c, "incr_misses", "incr of keys not found", cn->incr_misses);
	COUNTER(c, "incr_hits", "incr of keys found", cn->incr_hits);
	COUNTER(c, "decr_misses", "decr of keys not found", cn->decr_misses);
	COUNTER(c, "decr_hits", "decr of keys found", cn->decr_hits);
	COUNTER(c, "cas_misses", "cas of keys not found", cn->cas_misses);
	COUNTER(c, "cas_hits", "cas that stored", cn->cas_hits);
	COUNTER(c, "cas_badval", "cas refused: the CAS value did not match",
		cn->cas_badval);
	COUNTER(c, "touch_hits", "touches of keys found", cn->touch_hits);
	COUNTER(c, "touch_misses", "touches of keys not found",
		cn->touch_misses);
	COUNTER(c, "store_too_large", "values over --max-item, refused",
		cn->store_too_large);
	COUNTER(c, "store_no_memory", "puts the store refused for room",
		cn->store_no_memory);
	COUNTER(c, "idle_kicks",
		"connections closed idle (--idle-timeout, --busy-idle-timeout)",
		cn->idle_kicks);
	COUNTER(c, "busy_polls",
		"times a worker polled for a request after an answer of "
		"1 MiB or more instead of sleeping (--busy-poll)",
		cn->busy_polls);
	COUNTER(c, "busy_poll_hits", "... and the request came while it polled",
		cn->busy_poll_hits);
	COUNTER(c, "busy_poll_ceded",
		"... stopped early: other tasks took over 1 ms of its yields",
		cn->busy_poll_ceded);
	COUNTER(c, "busy_poll_extended",
		"... started again, since the answer was still in its "
		"socket's send queue",
		cn->busy_poll_extended);
	COUNTER(c, "warm_passes",
		"times the last request ran again dry before the end of such "
		"an answer, to bring its code and data back into the CPU's "
		"caches",
		cn->warm_passes);
	COUNTER(c, "tail_turns_ended",
		"times a streaming answer gave way to new requests and the "
		"worker's other connections",
		cn->tail_turns_ended);
	COUNTER(c, "bytes_read", "bytes read from client sockets",
		cn->bytes_read);
	COUNTER(c, "bytes_written", "bytes written to client sockets",
		cn->bytes_written);
	GAUGE(c, "limit_maxbytes", "bytes the tiers may hold in all",
	      st->ram_capacity + st->small_capacity + st->ssd_capacity +
		      st->hdd_capacity);
	GAUGE(c, "accepting_conns", "1 while goblind accepts connections",
	      !atomic_load(&gd->stopping));
	GAUGE(c, "threads", "worker threads", gd->nworkers);
	GAUGE(c, "curr_items", "objects stored now", st->objects);
	COUNTER(c, "total_items", "objects stored since start", st->puts);
	GAUGE(c, "bytes", "bytes of the objects stored now", st->bytes);
	COUNTER(c, "evictions", "objects evicted from every tier",
		st->evictions_ssd + st->evictions_hdd + st->evictions_small);
	COUNTER(c, "rmw_retries",
		"append, prepend, incr and decr retried after a race",
		cn->rmw_retries);
	COUNTER(c, "conn_closed_long_line",
		"connections closed for a line too long",
		cn->conn_closed_long_line);
	sink_store(c, "head_hits", st, GS_STAT_head_hits);
	sink_store(c, "head_misses", st, GS_STAT_head_misses);
}

static void stats_http(struct sink *c, const struct gd_counters *cn)
{
	COUNTER(c, "http_requests", "HTTP request heads parsed",
		cn->http_requests);
	COUNTER(c, "http_gets", "HTTP GET and HEAD of objects", cn->http_gets);
	COUNTER(c, "http_hits", "HTTP GET and HEAD answered from the store",
		cn->http_hits);
	COUNTER(c, "http_misses",
		"HTTP GET and HEAD not stored: 404, or fetched",
		cn->http_misses);
	COUNTER(c, "http_puts", "HTTP PUTs stored", cn->http_puts);
	COUNTER(c, "http_deletes", "HTTP DELETEs that removed an object",
		cn->http_deletes);
	COUNTER(c, "http_not_modified", "HTTP 304 replies",
		cn->http_not_modified);
	COUNTER(c, "http_partial", "HTTP 206 replies", cn->http_partial);
	COUNTER(c, "http_client_errors", "HTTP 4xx replies but 304 and 206",
		cn->http_client_errors);
	COUNTER(c, "http_server_errors", "HTTP 5xx replies",
		cn->http_server_errors);
	COUNTER(c, "http_bad_requests", "unparsable HTTP request heads",
		cn->http_bad_requests);
	COUNTER(c, "http_timeouts", "HTTP heads not in within --http-timeout",
		cn->http_timeouts);
	COUNTER(c, "http_denied", "HTTP writes refused by the write gate",
		cn->http_denied);
}

/* --mirror: the origin fetcher's counters. */
static void stats_mirror(struct gd *gd, struct sink *c,
			 const struct gd_counters *cn)
{
	struct fetch_stats f;

	if (!gd->fetcher)
		return;
	fetcher_stats(gd->fetcher, &f);
	COUNTER(c, "origin_requests", "requests sent to the mirror origin",
		f.origin_requests);
	COUNTER(c, "origin_bytes", "body bytes received from the origin",
		f.origin_bytes);
	COUNTER(c, "origin_errors", "origin requests that failed",
		f.origin_errors);
	COUNTER(c, "origin_timeouts", "origin requests that timed out",
		f.origin_timeouts);
	COUNTER(c, "mirror_collapsed",
		"misses served by a fetch already under way", f.collapsed);
	COUNTER(c, "mirror_stored", "origin responses stored", f.stored);
	COUNTER(c, "mirror_passed", "origin responses relayed without storing",
		f.passed);
	COUNTER(c, "mirror_revalidations",
		"conditional requests sent to the origin", f.revalidations);
	COUNTER(c, "mirror_not_modified", "origin 304 replies to revalidations",
		f.not_modified);
	COUNTER(c, "mirror_forwarded",
		"requests forwarded to the origin uncached", f.forwarded);
	COUNTER(c, "mirror_aborted_fills", "store fills aborted mid-transfer",
		f.aborted_fills);
	COUNTER(c, "mirror_served_stale",
		"fetches answered with a stale copy: the origin failed",
		f.served_stale);
	COUNTER(c, "mirror_background_revalidations",
		"revalidations run while a stale copy was served",
		f.background);
	COUNTER(c, "mirror_writes_refused",
		"memcache writes refused by a mirror",
		cn->mirror_writes_refused);
}

static void stats_rdma(struct gd *gd, struct sink *c,
		       const struct gd_counters *cn)
{
	GAUGE(c, "curr_rdma_connections", "RDMA connections open now",
	      atomic_load(&gd->rdma_conns));
	COUNTER(c, "rdma_connections", "RDMA connections accepted",
		cn->rdma_connections);
	GAUGE(c, "rdma_mr", "memory regions registered with the RDMA device",
	      atomic_load(&gd->rdma_mr));
	GAUGE(c, "rdma_mr_bytes", "bytes of the registered memory regions",
	      atomic_load(&gd->rdma_mr_bytes));
	COUNTER(c, "rdma_requests", "RDMA requests decoded", cn->rdma_requests);
	COUNTER(c, "rdma_written", "value bytes RDMA WRITTEN to windows",
		cn->rdma_written);
	COUNTER(c, "rdma_zero_copy",
		"of rdma_written, bytes sent from the store's own memory",
		cn->rdma_zero_copy);
	COUNTER(c, "rdma_pulled", "set bytes pulled by RDMA READ",
		cn->rdma_pulled);
	COUNTER(c, "rdma_bulk_ready", "BULK_READY data frames sent",
		cn->rdma_bulk_ready);
	COUNTER(c, "rdma_bad_window", "RDMA gets refused: window too small",
		cn->rdma_bad_window);
	COUNTER(c, "rdma_errors",
		"RDMA connections closed on an error: a bad frame or window, "
		"a failed completion",
		cn->rdma_errors);
}

/*
 * memcache "stats": memcached's names first (clients expect them), then
 * goblind's own.
 */
static void stats_general(struct gd *gd, struct sink *c,
			  const struct gs_stats *st)
{
	struct gd_counters n;

	gd_counters_sum(gd, &n);
	stats_process(gd, c, &n);
	stats_commands(gd, c, &n, st);
	stats_http(c, &n);
	stats_mirror(gd, c, &n);
	stats_rdma(gd, c, &n);
}

static void stats_settings(struct gd *gd, struct sink *c,
			   const struct gs_stats *st)
{
	const struct gd_settings *s = &gd->set;

	U64(c, "maxbytes",
	    st->ram_capacity + st->small_capacity + st->ssd_capacity +
		    st->hdd_capacity);
	U64(c, "maxconns", s->max_conns);
	U64(c, "tcpport", s->port);
	U64(c, "udpport", 0);
	STR(c, "inter", NULL, s->listen);
	U64(c, "verbosity", atomic_load(&gd->verbosity));
	STR(c, "evictions", NULL, "on");
	U64(c, "num_threads", gd->nworkers);
	U64(c, "item_size_max", s->max_item);
	U64(c, "idle_time", s->idle_timeout);
	U64(c, "busy_idle_time", s->busy_idle_timeout);
	U64(c, "busy_poll_us", s->busy_poll_us);
	STR(c, "tcp_congestion", NULL,
	    s->tcp_congestion ? s->tcp_congestion : "NULL");
	U64(c, "memcache_maxconns", s->mc_max_conns);
	U64(c, "http_maxconns", s->http_max_conns);
	STR(c, "auth_enabled_ascii", NULL, s->auth_file ? "yes" : "no");
	STR(c, "trusted_proxy", NULL,
	    s->trusted_proxy ? s->trusted_proxy : "NULL");
	STR(c, "cas_enabled", NULL, "yes");
	STR(c, "binding_protocol", NULL, "ascii");
	STR(c, "store_dir", NULL, s->store_dir);
	STR(c, "mount", NULL, s->mount ? s->mount : "NULL");
	STR(c, "log_level", NULL, gd_log_names[gd_log_level]);
	U64(c, "memory", st->ram_capacity);
	U64(c, "small_memory", st->small_capacity);
	U64(c, "ssd_size", st->ssd_capacity);
	U64(c, "hdd_size", st->hdd_capacity);
	U64(c, "hugetlb", st->hugetlb);
	U64(c, "mlocked", st->mlocked);
}

/*
 * "stats tiers" (and the store's part of /_goblin/stats and /metrics):
 * goblind's names for the store's fields, in its order, a tier's fields
 * under its prefix.  Kind and help come from goblin.h's GS_STATS; a field
 * not named here and not shown elsewhere (below) follows under its own
 * name, so a field added to the store shows up without an edit here.
 */
static const struct tier_stat {
	const char *name;
	enum gs_stat_id id;
} tier_stats[] = {
	{ "ram:capacity", GS_STAT_ram_capacity },
	{ "ram:slots", GS_STAT_ram_slots },
	{ "ram:slots_used", GS_STAT_ram_slots_used },
	{ "ram:bytes_read", GS_STAT_bytes_read_ram },
	{ "ram:head_hits", GS_STAT_head_hits },
	{ "ram:head_misses", GS_STAT_head_misses },
	{ "ram:head_evictions", GS_STAT_evictions_head },
	{ "ram:head_promotions", GS_STAT_head_promotions },
	{ "small:capacity", GS_STAT_small_capacity },
	{ "small:used", GS_STAT_small_used },
	{ "small:live", GS_STAT_small_live },
	{ "small:objects", GS_STAT_small_objects },
	{ "small:hits", GS_STAT_small_hits },
	{ "small:cold", GS_STAT_small_cold },
	{ "small:cold_bytes", GS_STAT_small_cold_bytes },
	{ "small:evictions", GS_STAT_evictions_small },
	{ "ssd:capacity", GS_STAT_ssd_capacity },
	{ "ssd:used", GS_STAT_ssd_used },
	{ "ssd:bytes_read", GS_STAT_bytes_read_ssd },
	{ "ssd:bytes_written", GS_STAT_bytes_written_ssd },
	{ "ssd:reads", GS_STAT_ssd_reads },
	{ "ssd:read_latency", GS_STAT_ssd_read_hist }, /* stats_ssd_latency */
	{ "ssd:evictions", GS_STAT_evictions_ssd },
	{ "ssd:prefix_drops", GS_STAT_ssd_prefix_drops },
	{ "hdd:capacity", GS_STAT_hdd_capacity },
	{ "hdd:used", GS_STAT_hdd_used },
	{ "hdd:bytes_read", GS_STAT_bytes_read_hdd },
	{ "hdd:bytes_written", GS_STAT_bytes_written_hdd },
	{ "hdd:reads", GS_STAT_hdd_reads },
	{ "hdd:read", GS_STAT_hdd_read_ns }, /* stats_hdd_latency */
	{ "hdd:evictions", GS_STAT_evictions_hdd },
	{ "csum_failures", GS_STAT_csum_failures },
	{ "journal_bytes", GS_STAT_journal_bytes },
	{ "journal_rewrites", GS_STAT_journal_rewrites },
	{ "journal_rewrite_errors", GS_STAT_journal_rewrite_errors },
	{ "io_buffer_bytes", GS_STAT_io_buffer_bytes },
	{ "write_errors", GS_STAT_write_errors },
	{ "read_errors", GS_STAT_read_errors },
	/* GOBLIN_FAULTS's injections (goblinctl(1)); 0 in normal operation */
	{ "faults_eio", GS_STAT_faults_eio },
	{ "faults_short", GS_STAT_faults_short },
	{ "faults_enospc", GS_STAT_faults_enospc },
	{ "faults_torn", GS_STAT_faults_torn },
	/* the store's own, beside the memcache counters of the same names */
	{ "store:gets", GS_STAT_gets },
	{ "store:get_hits", GS_STAT_get_hits },
	{ "store:get_misses", GS_STAT_get_misses },
	{ "numa:nodes", GS_STAT_numa_nodes },
	{ "numa:promotions", GS_STAT_numa_promotions },
	{ "numa:bytes_moved", GS_STAT_numa_bytes_moved },
	{ "numa:swap_ns_total", GS_STAT_numa_swap_ns_total }, /* in seconds */
	{ "numa:swap_ns_max", GS_STAT_numa_swap_ns_max },     /* in /metrics */
	{ "numa:move_failures", GS_STAT_numa_move_failures },
};

/*
 * Fields the general list shows under memcached's names (curr_items,
 * total_items, bytes, get_expired), "stats settings" shows (hugetlb,
 * mlocked), or the latencies fold in (ssd_read_ns).
 */
static const enum gs_stat_id shown_elsewhere[] = {
	GS_STAT_objects, GS_STAT_puts,	  GS_STAT_bytes,       GS_STAT_expired,
	GS_STAT_hugetlb, GS_STAT_mlocked, GS_STAT_ssd_read_ns,
};

/*
 * The SSD read latency: a histogram in /metrics (the histogram says it,
 * in seconds), the mean in microseconds elsewhere.
 */
static void stats_ssd_latency(struct sink *c, const struct gs_stats *st)
{
	if (c->kind == SINK_PROM)
		sink_hist(c, "ssd:read_latency",
			  gs_stat_fields[GS_STAT_ssd_read_hist].help,
			  st->ssd_read_hist, 16, st->ssd_read_ns);
	else
		GAUGE(c, "ssd:read_avg_us", NULL,
		      st->ssd_reads ? st->ssd_read_ns / st->ssd_reads / 1000 :
				      0);
}

/* The HDD's: mean = rate(_seconds) / rate(reads) in /metrics. */
static void stats_hdd_latency(struct sink *c, const struct gs_stats *st)
{
	if (c->kind == SINK_PROM)
		sink_seconds(c, "hdd:read",
			     gs_stat_fields[GS_STAT_hdd_read_ns].help,
			     st->hdd_read_ns);
	else
		GAUGE(c, "hdd:read_avg_us", NULL,
		      st->hdd_reads ? st->hdd_read_ns / st->hdd_reads / 1000 :
				      0);
}

static void stats_tiers(struct sink *c, const struct gs_stats *st)
{
	bool shown[GS_NSTATS] = { false };
	size_t i;

	for (i = 0; i < sizeof(shown_elsewhere) / sizeof(*shown_elsewhere); i++)
		shown[shown_elsewhere[i]] = true;
	for (i = 0; i < sizeof(tier_stats) / sizeof(*tier_stats); i++) {
		const struct tier_stat *t = &tier_stats[i];

		shown[t->id] = true;
		if (t->id == GS_STAT_ssd_read_hist)
			stats_ssd_latency(c, st);
		else if (t->id == GS_STAT_hdd_read_ns)
			stats_hdd_latency(c, st);
		else if (c->kind == SINK_PROM &&
			 t->id == GS_STAT_numa_swap_ns_total)
			sink_seconds(c, "numa:swap", gs_stat_fields[t->id].help,
				     st->numa_swap_ns_total);
		else if (c->kind == SINK_PROM &&
			 t->id == GS_STAT_numa_swap_ns_max)
			sink_seconds_gauge(c, "numa:swap_max",
					   gs_stat_fields[t->id].help,
					   st->numa_swap_ns_max);
		else
			sink_store(c, t->name, st, t->id);
	}
	for (i = 0; i < GS_NSTATS; i++)
		if (!shown[i])
			sink_store(c, gs_stat_fields[i].name, st,
				   (enum gs_stat_id)i);
}

/*
 * "stats slabs" in memcached's shape, for the monitoring tools that read
 * it (memcached-tool, collectd, munin): goblind has no slab classes, so
 * each tier is a class: 1 the RAM head pool (a chunk is a head slot),
 * 2 the small-object arena, 3 the SSD, 4 the HDD (counted in 1 MiB
 * pages; used pages round up).  A tier of size 0 is left out.
 */
#define SLAB_PAGE (1u << 20)

static void slab_class(struct conn *c, int id, uint64_t chunk, uint64_t total,
		       uint64_t used, int *active, uint64_t *bytes)
{
	uint64_t pages = total * chunk / SLAB_PAGE;

	if (!total)
		return;
	if (used > total)
		used = total;
	conn_printf(c,
		    "STAT %d:chunk_size %" PRIu64 "\r\n"
		    "STAT %d:chunks_per_page %" PRIu64 "\r\n"
		    "STAT %d:total_pages %" PRIu64 "\r\n"
		    "STAT %d:total_chunks %" PRIu64 "\r\n"
		    "STAT %d:used_chunks %" PRIu64 "\r\n"
		    "STAT %d:free_chunks %" PRIu64 "\r\n"
		    "STAT %d:free_chunks_end 0\r\n",
		    id, chunk, id, pages ? total / pages : total, id, pages, id,
		    total, id, used, id, total - used, id);
	++*active;
	*bytes += total * chunk;
}

static void stats_slabs(struct conn *c, const struct gs_stats *st)
{
	uint64_t bytes = 0, slot = 0;
	int active = 0;

	if (st->ram_slots)
		slot = st->ram_capacity / st->ram_slots;
	slab_class(c, 1, slot, slot ? st->ram_slots : 0, st->ram_slots_used,
		   &active, &bytes);
	slab_class(c, 2, SLAB_PAGE, st->small_capacity / SLAB_PAGE,
		   (st->small_used + SLAB_PAGE - 1) / SLAB_PAGE, &active,
		   &bytes);
	slab_class(c, 3, SLAB_PAGE, st->ssd_capacity / SLAB_PAGE,
		   (st->ssd_used + SLAB_PAGE - 1) / SLAB_PAGE, &active, &bytes);
	slab_class(c, 4, SLAB_PAGE, st->hdd_capacity / SLAB_PAGE,
		   (st->hdd_used + SLAB_PAGE - 1) / SLAB_PAGE, &active, &bytes);
	conn_printf(c,
		    "STAT active_slabs %d\r\n"
		    "STAT total_malloced %" PRIu64 "\r\n",
		    active, bytes);
}

/*
 * "stats items": every object is in one LRU, shown as class 1 (the tiers
 * are "stats slabs" and "stats tiers"): its count, value bytes, the
 * objects evicted from any tier, the expired ones found, and the puts
 * refused for room.
 */
static void stats_items(struct gd *gd, struct conn *c,
			const struct gs_stats *st)
{
	struct gd_counters cn;

	gd_counters_sum(gd, &cn);
	conn_printf(c,
		    "STAT items:1:number %" PRIu64 "\r\n"
		    "STAT items:1:mem_requested %" PRIu64 "\r\n"
		    "STAT items:1:evicted %" PRIu64 "\r\n"
		    "STAT items:1:outofmemory %" PRIu64 "\r\n"
		    "STAT items:1:reclaimed %" PRIu64 "\r\n",
		    st->objects, st->bytes,
		    st->evictions_ssd + st->evictions_hdd + st->evictions_small,
		    cn.store_no_memory, st->expired);
}

static bool arg_is(const char *arg, size_t len, const char *s)
{
	return len == strlen(s) && !memcmp(arg, s, len);
}

int gd_stats(struct gd *gd, struct conn *conn, const char *arg, size_t len)
{
	struct gs_stats *st = malloc(sizeof(*st));
	struct sink sk = { .kind = SINK_MC, .conn = conn }, *c = &sk;

	if (!st) {
		conn_out(conn, "SERVER_ERROR out of memory\r\n", 28);
		return 0;
	}
	gs_stats_get(gd->s, st);
	while (len && arg[len - 1] == ' ')
		len--;
	if (!arg || !len)
		stats_general(gd, c, st);
	else if (arg_is(arg, len, "settings"))
		stats_settings(gd, c, st);
	else if (arg_is(arg, len, "tiers"))
		stats_tiers(c, st);
	else if (arg_is(arg, len, "slabs"))
		stats_slabs(conn, st);
	else if (arg_is(arg, len, "items"))
		stats_items(gd, conn, st);
	else if (arg_is(arg, len, "sizes")) /* memcached's default */
		conn_printf(conn, "STAT sizes_status disabled\r\n");
	else {
		free(st);
		return -1;
	}
	free(st);
	conn_out(conn, "END\r\n", 5);
	return 0;
}

void gd_buf_printf(struct gd_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->oom)
		return;
	for (;;) {
		size_t room = b->cap - b->len;

		va_start(ap, fmt);
		n = vsnprintf(b->p ? b->p + b->len : NULL, room, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->oom = true;
			return;
		}
		if ((size_t)n < room) {
			b->len += (size_t)n;
			return;
		}
		size_t cap = b->cap ? b->cap * 2 : 4096;
		char *np;

		while (cap - b->len <= (size_t)n)
			cap *= 2;
		np = realloc(b->p, cap);
		if (!np) {
			b->oom = true;
			return;
		}
		b->p = np;
		b->cap = cap;
	}
}

/* Every list, for the HTTP sinks: general, settings, tiers. */
static void stats_all(struct gd *gd, struct sink *k)
{
	struct gs_stats *st = malloc(sizeof(*st));

	if (!st) {
		k->b->oom = true;
		return;
	}
	gs_stats_get(gd->s, st);
	stats_general(gd, k, st);
	stats_tiers(k, st);
	free(st);
}

void gd_stats_json(struct gd *gd, struct gd_buf *b)
{
	struct sink k = { .kind = SINK_JSON, .b = b };

	gd_buf_printf(b, "{");
	stats_all(gd, &k);
	gd_buf_printf(b, "\n}\n");
}

int gd_stats_text(struct gd *gd, const char *group, size_t len,
		  struct gd_buf *b)
{
	struct sink k = { .kind = SINK_TEXT, .b = b };
	struct gs_stats *st;

	if (!len) {
		stats_all(gd, &k);
		return 0;
	}
	if (!arg_is(group, len, "settings") && !arg_is(group, len, "tiers"))
		return -1;
	if (!(st = malloc(sizeof(*st)))) {
		b->oom = true;
		return 0;
	}
	gs_stats_get(gd->s, st);
	if (arg_is(group, len, "settings"))
		stats_settings(gd, &k, st);
	else
		stats_tiers(&k, st);
	free(st);
	return 0;
}

void gd_stats_prom(struct gd *gd, struct gd_buf *b)
{
	struct sink k = { .kind = SINK_PROM, .b = b };

	stats_all(gd, &k);
}
