#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# bench/netsim, the ideal-link delivery simulator of
# bench/engine-vs-rocksdb.sh: its arithmetic on small known inputs.
# NETSIM overrides the binary.

bats_require_minimum_version 1.5.0

NETSIM="${NETSIM:-$BATS_TEST_DIRNAME/../../build/bench/netsim}"

setup() {
	if [ ! -x "$NETSIM" ]; then
		echo "netsim is not built: $NETSIM (make build/bench/netsim)" >&2
		return 1
	fi
	T="$(mktemp -d "${TMPDIR:-/tmp}/netsim-bats.XXXXXX")"
}

teardown() {
	[ -n "${T:-}" ] && rm -rf "$T"
}

@test "chunks queue behind the link, then wait for the source" {
	# 1 Gbit/s is 1 bit/ns: 1000 bytes take 8000 ns.  Two chunks ready at
	# 0 go back to back (0-8000, 8000-16000); the third is ready at
	# 20000, after the link went idle: 20000-24000.  At 0.5 Gbit/s the
	# link never idles: 16000 + 16000 + 8000.
	printf '# ready_ns bytes\n0 1000\n0 1000\n20000 500\n' >"$T/chunks"
	run -0 "$NETSIM" --rate 1 --rate 0.5 "$T/chunks"
	[ "${lines[0]}" = "source: chunks=3 bytes=2500 last_ready_ns=20000 gbps=1.000" ]
	[[ "${lines[1]}" == "link: rate_gbps=1 delivered_ns=24000 delivered_gbps=0.833 "*" link_busy=83.3%" ]]
	[[ "${lines[2]}" == "link: rate_gbps=0.5 delivered_ns=40000 delivered_gbps=0.500 "*" link_busy=100.0%" ]]
}

@test "a link faster than the source delivers at the source's pace" {
	# 125 bytes (1000 bits) every 10000 ns is 0.1 Gbit/s; at 10 Gbit/s
	# each chunk takes 100 ns, so the last ends 100 ns after it is ready.
	for i in 0 1 2 3 4 5 6 7 8 9; do echo "$((i * 10000)) 125"; done |
		"$NETSIM" --rate 10 >"$T/out"
	grep -qx 'link: rate_gbps=10 delivered_ns=90100 delivered_gbps=0.111 delivered_mibps=13.2 link_busy=1.1%' "$T/out"
}

@test "the default rates are 0.937 and 10 Gbit/s" {
	run -0 "$NETSIM" </dev/null
	[[ "${lines[1]}" == "link: rate_gbps=0.937 "* ]]
	[[ "${lines[2]}" == "link: rate_gbps=10 "* ]]
}

@test "bad input: malformed line, time going back, bad rate" {
	printf '0 10\nten 10\n' >"$T/bad"
	run -128 "$NETSIM" "$T/bad"
	[[ "$output" == *"line 2: expected \"ready_ns bytes\""* ]]
	printf '100 10\n50 10\n' >"$T/back"
	run -128 "$NETSIM" "$T/back"
	[[ "$output" == *"line 2: ready time goes back"* ]]
	run -128 "$NETSIM" --rate 0 "$T/back"
	[[ "$output" == *"bad rate: '0'"* ]]
	run -129 "$NETSIM" --bogus
}
