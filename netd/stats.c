/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memcache "stats": the counters memcached clients expect, summed over
 * the workers and taken from the store, plus "stats settings" and the
 * per-tier detail of "stats tiers".
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "goblind.h"

#define U64(c, name, v) conn_printf(c, "STAT %s %" PRIu64 "\r\n", name, \
				    (uint64_t)(v))
#define STR(c, name, v) conn_printf(c, "STAT %s %s\r\n", name, v)

static void stats_general(struct gd *gd, struct conn *c,
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
	conn_printf(c, "STAT rusage_user %ld.%06ld\r\n",
		    (long)ru.ru_utime.tv_sec, (long)ru.ru_utime.tv_usec);
	conn_printf(c, "STAT rusage_system %ld.%06ld\r\n",
		    (long)ru.ru_stime.tv_sec, (long)ru.ru_stime.tv_usec);
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
}

static void stats_settings(struct gd *gd, struct conn *c,
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

static void stats_tiers(struct conn *c, const struct gs_stats *st)
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
}

static bool arg_is(const char *arg, size_t len, const char *s)
{
	return len == strlen(s) && !memcmp(arg, s, len);
}

int gd_stats(struct gd *gd, struct conn *c, const char *arg, size_t len)
{
	struct gs_stats *st = malloc(sizeof(*st));

	if (!st) {
		conn_out(c, "SERVER_ERROR out of memory\r\n", 28);
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
	conn_out(c, "END\r\n", 5);
	return 0;
}
