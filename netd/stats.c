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

#include "goblind.h"

/* Where the stats lines go: a memcache reply, JSON or Prometheus text. */
enum sink_kind { SINK_MC, SINK_JSON, SINK_PROM };

struct sink {
	enum sink_kind kind;
	struct conn *conn;	/* SINK_MC */
	struct gd_buf *b;	/* the others */
	unsigned n;		/* values written (JSON commas) */
};

/* Prometheus names: goblin_ + the name, ':' and others become '_'. */
static void prom_name(struct gd_buf *b, const char *name)
{
	char n[96];
	size_t i;

	for (i = 0; name[i] && i < sizeof(n) - 1; i++)
		n[i] = (name[i] >= 'a' && name[i] <= 'z') ||
		       (name[i] >= '0' && name[i] <= '9') ? name[i] : '_';
	n[i] = 0;
	gd_buf_printf(b, "goblin_%s", n);
}

static void sink_u64(struct sink *k, const char *name, uint64_t v)
{
	switch (k->kind) {
	case SINK_MC:
		conn_printf(k->conn, "STAT %s %" PRIu64 "\r\n", name, v);
		break;
	case SINK_JSON:
		gd_buf_printf(k->b, "%s\n  \"%s\": %" PRIu64,
			      k->n ? "," : "", name, v);
		break;
	case SINK_PROM:
		prom_name(k->b, name);
		gd_buf_printf(k->b, " %" PRIu64 "\n", v);
		break;
	}
	k->n++;
}

/* Strings are for people: Prometheus gets them as an info label. */
static void sink_str(struct sink *k, const char *name, const char *v)
{
	switch (k->kind) {
	case SINK_MC:
		conn_printf(k->conn, "STAT %s %s\r\n", name, v);
		break;
	case SINK_JSON:
		gd_buf_printf(k->b, "%s\n  \"%s\": \"", k->n ? "," : "",
			      name);
		for (; *v; v++)
			gd_buf_printf(k->b, *v == '"' || *v == '\\' ? "\\%c"
					    : (unsigned char)*v < 0x20
					    ? "\\u%04x" : "%c", *v);
		gd_buf_printf(k->b, "\"");
		break;
	case SINK_PROM:
		prom_name(k->b, name);
		gd_buf_printf(k->b, "_info{value=\"");
		for (; *v; v++)
			gd_buf_printf(k->b, *v == '"' || *v == '\\' ? "\\%c"
					    : *v == '\n' ? " " : "%c", *v);
		gd_buf_printf(k->b, "\"} 1\n");
		break;
	}
	k->n++;
}

/* Seconds with microseconds: a number in JSON and Prometheus too. */
static void sink_time(struct sink *k, const char *name, struct timeval tv)
{
	if (k->kind == SINK_MC) {
		conn_printf(k->conn, "STAT %s %ld.%06ld\r\n", name,
			    (long)tv.tv_sec, (long)tv.tv_usec);
	} else {
		if (k->kind == SINK_JSON)
			gd_buf_printf(k->b, "%s\n  \"%s\": ", k->n ? "," : "",
				      name);
		else
			prom_name(k->b, name);
		gd_buf_printf(k->b, "%s%ld.%06ld%s",
			      k->kind == SINK_PROM ? " " : "",
			      (long)tv.tv_sec, (long)tv.tv_usec,
			      k->kind == SINK_PROM ? "\n" : "");
	}
	k->n++;
}

#define U64(c, name, v) sink_u64(c, name, (uint64_t)(v))
#define STR(c, name, v) sink_str(c, name, v)

static void stats_general(struct gd *gd, struct sink *c,
			  const struct gs_stats *st)
{
	struct gd_counters n;
	struct rusage ru;
	int64_t now = time(NULL);

	gd_counters_sum(gd, &n);
	getrusage(RUSAGE_SELF, &ru);
	U64(c, "pid", getpid());
	U64(c, "uptime", now - gd->start_time);
	U64(c, "time", now);
	STR(c, "version", GD_MC_VERSION);
	U64(c, "pointer_size", sizeof(void *) * 8);
	sink_time(c, "rusage_user", ru.ru_utime);
	sink_time(c, "rusage_system", ru.ru_stime);
	U64(c, "max_connections", gd->set.max_conns);
	U64(c, "curr_connections", atomic_load(&gd->curr_conns));
	U64(c, "total_connections", n.total_connections);
	U64(c, "rejected_connections", n.rejected_connections);
	U64(c, "connection_structures", atomic_load(&gd->curr_conns));
	U64(c, "cmd_get", n.cmd_get);
	U64(c, "cmd_set", n.cmd_set);
	U64(c, "cmd_flush", n.cmd_flush);
	U64(c, "cmd_touch", n.cmd_touch);
	U64(c, "cmd_meta", n.cmd_meta);
	U64(c, "get_hits", n.get_hits);
	U64(c, "get_misses", n.get_misses);
	U64(c, "get_expired", st->expired);
	U64(c, "delete_misses", n.delete_misses);
	U64(c, "delete_hits", n.delete_hits);
	U64(c, "incr_misses", n.incr_misses);
	U64(c, "incr_hits", n.incr_hits);
	U64(c, "decr_misses", n.decr_misses);
	U64(c, "decr_hits", n.decr_hits);
	U64(c, "cas_misses", n.cas_misses);
	U64(c, "cas_hits", n.cas_hits);
	U64(c, "cas_badval", n.cas_badval);
	U64(c, "touch_hits", n.touch_hits);
	U64(c, "touch_misses", n.touch_misses);
	U64(c, "store_too_large", n.store_too_large);
	U64(c, "store_no_memory", n.store_no_memory);
	U64(c, "idle_kicks", n.idle_kicks);
	U64(c, "bytes_read", n.bytes_read);
	U64(c, "bytes_written", n.bytes_written);
	U64(c, "limit_maxbytes", st->ram_capacity + st->small_capacity +
				 st->ssd_capacity + st->hdd_capacity);
	U64(c, "accepting_conns", !atomic_load(&gd->stopping));
	U64(c, "threads", gd->nworkers);
	U64(c, "curr_items", st->objects);
	U64(c, "total_items", st->puts);
	U64(c, "bytes", st->bytes);
	U64(c, "evictions", st->evictions_ssd + st->evictions_hdd +
			    st->evictions_small);
	U64(c, "rmw_retries", n.rmw_retries);
	U64(c, "conn_closed_long_line", n.conn_closed_long_line);
	U64(c, "head_hits", st->head_hits);
	U64(c, "head_misses", st->head_misses);
	U64(c, "http_requests", n.http_requests);
	U64(c, "http_gets", n.http_gets);
	U64(c, "http_hits", n.http_hits);
	U64(c, "http_misses", n.http_misses);
	U64(c, "http_puts", n.http_puts);
	U64(c, "http_deletes", n.http_deletes);
	U64(c, "http_not_modified", n.http_not_modified);
	U64(c, "http_partial", n.http_partial);
	U64(c, "http_client_errors", n.http_client_errors);
	U64(c, "http_server_errors", n.http_server_errors);
	U64(c, "http_bad_requests", n.http_bad_requests);
	U64(c, "http_timeouts", n.http_timeouts);
	U64(c, "http_denied", n.http_denied);
	if (gd->fetcher) {
		struct fetch_stats f;

		fetcher_stats(gd->fetcher, &f);
		U64(c, "origin_requests", f.origin_requests);
		U64(c, "origin_bytes", f.origin_bytes);
		U64(c, "origin_errors", f.origin_errors);
		U64(c, "origin_timeouts", f.origin_timeouts);
		U64(c, "mirror_collapsed", f.collapsed);
		U64(c, "mirror_stored", f.stored);
		U64(c, "mirror_passed", f.passed);
		U64(c, "mirror_revalidations", f.revalidations);
		U64(c, "mirror_not_modified", f.not_modified);
		U64(c, "mirror_forwarded", f.forwarded);
		U64(c, "mirror_aborted_fills", f.aborted_fills);
		U64(c, "mirror_writes_refused", n.mirror_writes_refused);
	}
}

static void stats_settings(struct gd *gd, struct sink *c,
			   const struct gs_stats *st)
{
	const struct gd_settings *s = &gd->set;

	U64(c, "maxbytes", st->ram_capacity + st->small_capacity +
			   st->ssd_capacity + st->hdd_capacity);
	U64(c, "maxconns", s->max_conns);
	U64(c, "tcpport", s->port);
	U64(c, "udpport", 0);
	STR(c, "inter", s->listen);
	U64(c, "verbosity", atomic_load(&gd->verbosity));
	STR(c, "evictions", "on");
	U64(c, "num_threads", gd->nworkers);
	U64(c, "item_size_max", s->max_item);
	U64(c, "idle_time", s->idle_timeout);
	STR(c, "cas_enabled", "yes");
	STR(c, "binding_protocol", "ascii");
	STR(c, "store_dir", s->store_dir);
	STR(c, "mount", s->mount ? s->mount : "NULL");
	STR(c, "log_level", gd_log_names[gd_log_level]);
	U64(c, "memory", st->ram_capacity);
	U64(c, "small_memory", st->small_capacity);
	U64(c, "ssd_size", st->ssd_capacity);
	U64(c, "hdd_size", st->hdd_capacity);
	U64(c, "hugetlb", st->hugetlb);
	U64(c, "mlocked", st->mlocked);
}

static void stats_tiers(struct sink *c, const struct gs_stats *st)
{
	U64(c, "ram:capacity", st->ram_capacity);
	U64(c, "ram:slots", st->ram_slots);
	U64(c, "ram:slots_used", st->ram_slots_used);
	U64(c, "ram:bytes_read", st->bytes_read_ram);
	U64(c, "ram:head_hits", st->head_hits);
	U64(c, "ram:head_misses", st->head_misses);
	U64(c, "ram:head_evictions", st->evictions_head);
	U64(c, "ram:head_promotions", st->head_promotions);
	U64(c, "small:capacity", st->small_capacity);
	U64(c, "small:used", st->small_used);
	U64(c, "small:live", st->small_live);
	U64(c, "small:objects", st->small_objects);
	U64(c, "small:hits", st->small_hits);
	U64(c, "small:cold", st->small_cold);
	U64(c, "small:cold_bytes", st->small_cold_bytes);
	U64(c, "small:evictions", st->evictions_small);
	U64(c, "ssd:capacity", st->ssd_capacity);
	U64(c, "ssd:used", st->ssd_used);
	U64(c, "ssd:bytes_read", st->bytes_read_ssd);
	U64(c, "ssd:bytes_written", st->bytes_written_ssd);
	U64(c, "ssd:reads", st->ssd_reads);
	U64(c, "ssd:read_avg_us", st->ssd_reads ? st->ssd_read_ns /
						  st->ssd_reads / 1000 : 0);
	U64(c, "ssd:evictions", st->evictions_ssd);
	U64(c, "ssd:prefix_drops", st->ssd_prefix_drops);
	U64(c, "hdd:capacity", st->hdd_capacity);
	U64(c, "hdd:used", st->hdd_used);
	U64(c, "hdd:bytes_read", st->bytes_read_hdd);
	U64(c, "hdd:bytes_written", st->bytes_written_hdd);
	U64(c, "hdd:reads", st->hdd_reads);
	U64(c, "hdd:read_avg_us", st->hdd_reads ? st->hdd_read_ns /
						  st->hdd_reads / 1000 : 0);
	U64(c, "hdd:evictions", st->evictions_hdd);
	U64(c, "csum_failures", st->csum_failures);
	U64(c, "journal_bytes", st->journal_bytes);
	U64(c, "io_buffer_bytes", st->io_buffer_bytes);
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

void gd_stats_prom(struct gd *gd, struct gd_buf *b)
{
	struct sink k = { .kind = SINK_PROM, .b = b };

	stats_all(gd, &k);
}
