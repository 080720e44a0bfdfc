#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# /metrics is valid Prometheus text exposition (issue 15): HELP and TYPE for
# every family, counters named _total, the SSD read latency a histogram.
# Checked by promtool (Debian's prometheus) where it is installed and always
# by test/bats/prom_check.py, which is itself shown to reject bad input.

bats_require_minimum_version 1.5.0

load goblind

PC="$BATS_TEST_DIRNAME/prom_check.py"

setup() {
	gd_setup goblind-metrics
}

teardown() {
	gd_teardown
}

# metric NAME: the value of the sample NAME (no labels) in $T/m
metric() {
	awk -v n="$1" '$1 == n { print $2 }' "$T/m"
}

@test "issue 15: prom_check rejects what the exposition format forbids" {
	run -1 python3 "$PC" <<<$'# TYPE a_total counter\na_total 1'
	[[ "$output" == *"without) its HELP"* ]]
	run -1 python3 "$PC" <<<$'# HELP a x\n# TYPE a counter\na 1'
	[[ "$output" == *"does not end in _total"* ]]
	run -1 python3 "$PC" <<<$'# HELP h x\n# TYPE h histogram\nh_bucket{le="1"} 3\nh_bucket{le="+Inf"} 2\nh_sum 1\nh_count 2'
	[[ "$output" == *"not cumulative"* ]]
	run -1 python3 "$PC" <<<$'# HELP h x\n# TYPE h histogram\nh_bucket{le="1"} 1\nh_sum 1\nh_count 1'
	[[ "$output" == *"no +Inf bucket"* ]]
	run -1 python3 "$PC" <<<$'# HELP a_total x\n# TYPE a_total counter\na_total 1\n# HELP b x\n# TYPE b gauge\nb 1\na_total{x="1"} 2'
	[[ "$output" == *"not together"* ]]
	run -1 python3 "$PC" <<<$'# HELP g x\n# TYPE g gauge\ng one'
	[[ "$output" == *"bad value"* ]]
	run -0 python3 "$PC" <<<$'# HELP g x\n# TYPE g gauge\ng{a="q\\"x"} 1.5e3'
}

@test "issue 15: /metrics passes promtool and prom_check, SSD latency a histogram" {
	gd_start s
	# a value with a tail on the SSD tier, read back: SSD reads happen
	head -c $((3 << 20)) /dev/urandom >"$T/v"
	curl -sf -T "$T/v" "http://127.0.0.1:$HPORT/big" >/dev/null
	curl -sf "http://127.0.0.1:$HPORT/big" | cmp - "$T/v"
	printf 'set a 0 0 1\r\nx\r\nget a\r\nquit\r\n' | mc >/dev/null
	curl -sf "http://127.0.0.1:$HPORT/metrics" >"$T/m"
	run -0 python3 "$PC" <"$T/m"
	if command -v promtool >/dev/null; then
		run -0 promtool check metrics <"$T/m"
	fi
	grep -qx '# TYPE goblin_get_hits_total counter' "$T/m"
	grep -qx '# TYPE goblin_curr_items gauge' "$T/m"
	grep -qx '# TYPE goblin_ssd_read_latency_seconds histogram' "$T/m"
	[ "$(metric goblin_get_hits_total)" = 1 ]
	[ "$(metric goblin_http_puts_total)" = 1 ]
	# the histogram counts the SSD reads the GET made, and took time
	local n
	n=$(metric goblin_ssd_read_latency_seconds_count)
	[ "$n" -ge 1 ]
	[ "$n" = "$(metric goblin_ssd_reads_total)" ]
	[ "$(grep -c '^goblin_ssd_read_latency_seconds_bucket' "$T/m")" = 16 ]
	awk '$1 == "goblin_ssd_read_latency_seconds_sum" && $2 > 0 { ok = 1 }
	     END { exit !ok }' "$T/m"
	# no derived mean with a unit abbreviation: the histogram says it
	! grep -q 'read_avg_us' "$T/m"
	# memcache stats keep memcached's names and their mean
	[ "$(stat_of get_hits)" = 1 ]
	[ -n "$(stat_of ssd:read_avg_us tiers)" ]
}

@test "issue 16: injected store faults show in stats tiers and /metrics" {
	GOBLIN_FAULTS=7:commit:eio:1 gd_start s
	run -0 mc <<<$'set a 0 0 1\r\nx\r\nget a\r\nquit\r'
	[[ "$output" == *"SERVER_ERROR I/O error storing object"* ]]
	[[ "$output" != *VALUE* ]]
	[ "$(stat_of faults_eio tiers)" -ge 1 ]
	[ "$(stat_of write_errors tiers)" -ge 1 ]
	[ "$(stat_of faults_torn tiers)" = 0 ]
	curl -sf "http://127.0.0.1:$HPORT/metrics" >"$T/m"
	[ "$(metric goblin_faults_eio_total)" -ge 1 ]
	[ "$(metric goblin_write_errors_total)" -ge 1 ]
	run -0 python3 "$PC" <"$T/m"
}
