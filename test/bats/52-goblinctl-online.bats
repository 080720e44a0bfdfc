#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# goblinctl against goblind (issue 5, section 3): online put/get/del/stats/ls
# streaming both ways, goblind's lru_crawler metadump listing, and
# goblinctl bench.

bats_require_minimum_version 1.5.0

load goblind

setup() {
	gd_setup goblinctl-online
	gd_start s
	G=("$GCTL" --host 127.0.0.1 --port "$PORT")
}

teardown() {
	gd_teardown
}

@test "issue 5: online put/get/del round trips, small and multi-MiB, a pipe, misses" {
	echo hello >"$T/small"
	"${G[@]}" put small "$T/small"
	run -0 "${G[@]}" get small
	[ "$output" = hello ]
	head -c 6000000 /dev/urandom >"$T/big"
	"${G[@]}" put --flags 7 big "$T/big"
	"${G[@]}" get big -o "$T/big.out"
	cmp "$T/big" "$T/big.out"
	"${G[@]}" get big | cmp - "$T/big"
	# a pipe has no size: spooled, then streamed
	cat "$T/big" | "${G[@]}" put piped
	"${G[@]}" get piped | cmp - "$T/big"
	# the server saw the same bytes and flags
	run -0 mc <<<$'mg big s f\r'
	[ "${lines[0]}" = $'HD s6000000 f7\r' ]
	run -1 "${G[@]}" get absent -o "$T/absent.out"
	[ "$output" = "goblinctl: no such key 'absent'" ]
	[ ! -e "$T/absent.out" ]
	"${G[@]}" del small
	run -1 "${G[@]}" del small
	[ "$output" = "goblinctl: no such key 'small'" ]
	run -1 "${G[@]}" get small
	[ "$(stat_of curr_items)" = 2 ]
}

@test "issue 5: online stats and ls; goblind's lru_crawler metadump" {
	for k in art:2 art:1 'w%b' fb:1; do
		printf 'x%.0s' $(seq 10) | "${G[@]}" put "$k"
	done
	run -0 "${G[@]}" stats
	grep -qx 'curr_items 4' <<<"$output"
	grep -qx 'cmd_set 4' <<<"$output"
	run -0 "${G[@]}" ls
	[ "$output" = $'art:1\nart:2\nfb:1\nw%b' ]
	run -0 "${G[@]}" ls art:
	[ "$output" = $'art:1\nart:2' ]
	run -0 "${G[@]}" ls -l fb
	[[ "$output" =~ ^\ +10\ [0-9]{4}-.*\ fb:1$ ]]
	run -0 "${G[@]}" ls nothing
	[ -z "$output" ]
	# memcached's format, the key URI-encoded
	run -0 mc <<<$'lru_crawler metadump all w\r'
	[[ "${lines[0]}" =~ ^key=w%25b\ exp=-1\ la=[0-9]+\ cas=[0-9]+\ fetch=no\ cls=1\ size=10$ ]]
	[ "${lines[1]}" = $'END\r' ]
	run -0 mc <<<$'lru_crawler metadump 1,2\r'
	[ "${lines[0]}" = $'ERROR\r' ]
	run -129 "${G[@]}" inspect art:1
	[[ "${lines[0]}" = *"'inspect' works on a store directory only"* ]]
}
