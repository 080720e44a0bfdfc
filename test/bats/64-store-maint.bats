#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# Journal maintenance (issue 17): goblind's store rewrites its journal on a
# maintenance thread; a rewrite that fails is counted, said in the log,
# retried, and loses nothing, while goblind goes on serving.

bats_require_minimum_version 1.5.0

load goblind

setup() {
	gd_setup goblind-maint
}

teardown() {
	gd_teardown
}

# put KEY FILE / check KEY FILE over HTTP
put() {
	curl -sf -T "$2" "http://127.0.0.1:$HPORT/$1" >/dev/null
}

check() {
	curl -sf "http://127.0.0.1:$HPORT/$1" | cmp - "$2"
}

@test "issue 17: failing journal rewrites are counted and logged, goblind serves on, nothing is lost" {
	local i n
	# a 32 MiB SSD tier: a rewrite is due past 4 MiB of garbage
	GOBLIN_FAULTS=17:rewrite:eio:1 gd_start s --ssd-size 32M
	for i in $(seq 10); do
		head -c $((50000 + i * 1000)) /dev/urandom >"$T/v$i"
		put "k$i" "$T/v$i"
	done
	head -c 100000 /dev/urandom >"$T/g"
	# replaces of one key: garbage, until rewrites are due and fail
	for i in $(seq 300); do
		put g "$T/g"
		n=$(stat_of journal_rewrite_errors tiers)
		[ "${n:-0}" -ge 2 ] && break
	done
	[ "$n" -ge 2 ]
	# said once per failure, with what happens next
	grep -q "cannot rewrite the journal of .*Input/output error; the old one stays in use, retry in" "$LOG"
	[ "$(grep -c 'cannot rewrite the journal' "$LOG")" -ge 2 ]
	[ "$(stat_of journal_rewrites tiers)" = 0 ]
	# served meanwhile, every byte
	for i in $(seq 10); do
		check "k$i" "$T/v$i"
	done
	check g "$T/g"
	gd_stop
	# without the faults, the garbage makes the open rewrite (goblinctl
	# stats lists the counters beside the journal's)
	run -0 "$GCTL" --store "$T/s" stats
	[[ "$output" == *$'\njournal_rewrites 1\n'* ]]
	[[ "$output" == *$'\njournal_rewrite_errors 0\n'* ]]
	# and everything is there
	gd_start s --ssd-size 32M
	[ "$(stat_of journal_rewrite_errors tiers)" = 0 ]
	for i in $(seq 10); do
		check "k$i" "$T/v$i"
	done
	check g "$T/g"
}
