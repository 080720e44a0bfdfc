#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# goblind --ring (issue 22): goblin's binary protocol over a shared-memory
# ring on the host, through goblinctl --transport ring (the client
# library) and a hand-made client (ring_client.py) for what a well-behaved
# client never does.  H is the RAM head (--ram-head 64K): values of 0, 1,
# H-1, H, H+1 bytes and a 40 MiB one (its tail on the SSD file, read with
# O_DIRECT: cold, in many windows of the 1 MiB reply ring) go both ways
# byte for byte, checked against memcache over TCP as well.

bats_require_minimum_version 1.5.0

load goblind

RCLIENT="$BATS_TEST_DIRNAME/ring_client.py"
H=65536

setup() {
	gd_setup goblind-ring
	R="$T/ring.sock"
	gd_start one --ram-head 64K --ring "$R"
	grep -q "ring on unix socket $R" "$LOG"
}

teardown() {
	gd_teardown
}

ring() {
	"$GCTL" --transport ring --host "$R" "$@"
}

tcp() {
	"$GCTL" --host 127.0.0.1 --port "$PORT" "$@"
}

# ring_stat NAME: one counter of stats over the ring
ring_stat() {
	ring stats | awk -v n="$1" '$1 == n { print $2 }'
}

# wait_conns N: curr_ring_connections is N within 5 s (a client's end is
# seen at the server's next look at its socket: parked, or every 1 ms)
wait_conns() {
	for _ in $(seq 50); do
		[ "$(ring_stat curr_ring_connections)" = "$1" ] && return 0
		sleep 0.1
	done
	echo "curr_ring_connections: $(ring_stat curr_ring_connections), not $1"
	return 1
}

# goblind's CPU time, in clock ticks (utime + stime of /proc/PID/stat)
cpu_ticks() {
	awk '{ print $14 + $15 }' "/proc/$GPID/stat"
}

@test "issue 22: ring get and set of 0, 1, H-1, H, H+1 bytes and 40 MiB, byte for byte" {
	head -c 41943040 /dev/urandom >"$T/big"
	for n in 0 1 $((H - 1)) $H $((H + 1)); do
		head -c $n /dev/urandom >"$T/v$n"
	done
	# set over the ring, get over the ring and over memcache
	for n in 0 1 $((H - 1)) $H $((H + 1)) big; do
		f="$T/v$n"
		[ "$n" = big ] && f="$T/big"
		ring put "r$n" "$f"
		ring get "r$n" >"$T/o$n"
		cmp "$f" "$T/o$n"
		tcp get "r$n" >"$T/t$n"
		cmp "$f" "$T/t$n"
	done
	# set over memcache, get over the ring
	for n in 0 1 $((H - 1)) $H $((H + 1)) big; do
		f="$T/v$n"
		[ "$n" = big ] && f="$T/big"
		tcp put "m$n" "$f"
		ring get "m$n" -o "$T/p$n"
		cmp "$f" "$T/p$n"
	done
	run -1 ring get nosuchkey
	[[ "$output" == *"no such key 'nosuchkey'"* ]]
	ring del r1
	run -1 ring del r1
	run -1 tcp get r1
	[ "$(ring_stat get_misses)" -ge 2 ]
}

@test "issue 22: several ring clients read and write at once" {
	ring bench --keys 50 --size 3000 --duration 1 >/dev/null
	pids=()
	for i in 1 2 3; do
		ring bench --keys 50 --size 3000 --duration 3 --verify \
			--key-prefix "bench:" >"$T/bench$i" 2>&1 &
		pids+=($!)
	done
	# a writer meanwhile: new values of other keys, each read back
	end=$((SECONDS + 3))
	n=0
	while [ $SECONDS -lt $end ]; do
		head -c $((RANDOM * 8 + n)) /dev/urandom >"$T/w"
		ring put "w$((n % 5))" "$T/w"
		ring get "w$((n % 5))" >"$T/wo"
		cmp "$T/w" "$T/wo"
		n=$((n + 1))
	done
	for p in "${pids[@]}"; do
		wait "$p"
	done
	[ "$n" -gt 3 ]
	for i in 1 2 3; do
		grep -q '^verify         0 values of the wrong size' "$T/bench$i"
		grep -q 'errors=0 wrong=0' "$T/bench$i"
		req=$(sed -n 's/.* requests=\([0-9]*\).*/\1/p' "$T/bench$i")
		[ "$req" -gt 100 ]
	done
	wait_conns 1
}

@test "issue 22: a ring client killed mid-transfer costs the server only its connection" {
	head -c 41943040 /dev/urandom >"$T/big"
	ring put big "$T/big"
	base_conns=$(ring_stat curr_ring_connections)
	base_map=$(ring_stat ring_mapped_bytes)
	[ "$base_conns" = 1 ]
	# the reader blocks on a pipe nobody reads: mid-value, then killed
	mkfifo "$T/fifo"
	"$GCTL" --transport ring --host "$R" get big >"$T/fifo" &
	victim=$!
	exec 7<"$T/fifo"
	head -c 100000 <&7 >/dev/null
	sleep 0.3
	[ "$(ring_stat curr_ring_connections)" = 2 ]
	kill -9 "$victim"
	wait "$victim" || true
	exec 7<&-
	wait_conns "$base_conns"
	[ "$(ring_stat ring_mapped_bytes)" = "$base_map" ]
	ring get big >"$T/o"
	cmp "$T/big" "$T/o"
	kill -0 "$GPID"
}

@test "issue 22: garbage in the ring drops that connection, the server goes on" {
	echo hello >"$T/h"
	ring put h "$T/h"
	head -c 2097152 /dev/urandom >"$T/big"
	ring put big "$T/big"
	for kind in bytes tail unaligned length schema head socket; do
		run "$PY" "$RCLIENT" "$R" garbage "$kind"
		[ "$status" -eq 0 ]
		[ "$output" = closed ] || { echo "kind $kind: $output"; false; }
		[ "$(ring get h)" = hello ]
	done
	# an RDMA window is refused, the connection kept: unsupported (10),
	# then the noop's ok (0)
	run "$PY" "$RCLIENT" "$R" garbage window
	[ "$output" = "64:5:10 64:6:0" ]
	grep -q 'ring: dropping a client' "$LOG"
	wait_conns 1
	[ "$(ring_stat ring_mapped_bytes)" = 2101248 ]
	kill -0 "$GPID"
}

@test "issue 22: 3 s of frames nearly right, random tails and heads: the server goes on" {
	echo hello >"$T/h"
	ring put h "$T/h"
	ring bench --keys 20 --size 100 --duration 0.2 >/dev/null
	"$PY" "$RCLIENT" "$R" fuzz 3 >"$T/fuzz" &
	fz=$!
	# a well-behaved client meanwhile
	ring bench --keys 20 --size 100 --duration 3 --verify >"$T/bench"
	wait "$fz"
	cat "$T/fuzz"
	grep -q '^closed [1-9][0-9]* open [0-9]*$' "$T/fuzz"
	grep -q 'errors=0 wrong=0' "$T/bench"
	[ "$(ring get h)" = hello ]
	wait_conns 1
	[ "$(ring_stat ring_mapped_bytes)" = 2101248 ]
	kill -0 "$GPID"
}

@test "issue 22: an idle ring client costs goblind no CPU" {
	"$PY" "$RCLIENT" "$R" hold 6 >"$T/hold" &
	holder=$!
	for _ in $(seq 50); do
		grep -q ready "$T/hold" && break
		sleep 0.1
	done
	grep -q ready "$T/hold"
	# a few requests first, so the server spun and then parked
	ring bench --keys 10 --size 32 --duration 0.2 >/dev/null
	sleep 0.5
	wait_conns 2
	t0=$(cpu_ticks)
	sleep 2
	t1=$(cpu_ticks)
	kill "$holder" 2>/dev/null || true
	wait "$holder" 2>/dev/null || true
	echo "goblind used $((t1 - t0)) ticks in 2 s idle"
	# a busy-polling ring would take ~200 ticks (a core); parked, ~0
	[ $((t1 - t0)) -le 5 ]
}

@test "issue 22: ring stats have the names of /_goblin/stats, the tiers' included (RDMA's are the same text: gd_stats_text)" {
	ring stats | awk '{ print $1 }' | sort >"$T/ring.names"
	curl -s "http://127.0.0.1:$HPORT/_goblin/stats" |
		"$PY" -c 'import json, sys; print("\n".join(json.load(sys.stdin)))' |
		sort >"$T/http.names"
	[ "$(wc -l <"$T/ring.names")" -gt 100 ]
	diff "$T/ring.names" "$T/http.names"
	grep -qx 'ram:capacity' "$T/ring.names" # memcache's "stats" has no tiers
}

@test "issue 22: goblinctl --transport: rdma needs a port (and here an RDMA device), ring needs a socket path" {
	run -129 "$GCTL" --transport rdma --host 127.0.0.1 get x
	[[ "$output" == *"--transport rdma needs --host ADDR and --port P"* ]]
	# this host has no RDMA device: a clear error (76-rdma.bats runs
	# the transport in the Soft-RoCE guest)
	run -128 "$GCTL" --transport rdma --host 127.0.0.1 --port 1 get x
	[[ "$output" == *"goblinctl: rdma 127.0.0.1:1: "* ]]
	run -129 "$GCTL" --transport ring get x
	[[ "$output" == *"--transport ring needs --host SOCKET_PATH"* ]]
	run -129 "$GCTL" --transport carrier-pigeon --host "$R" get x
	[[ "$output" == *"--transport 'carrier-pigeon': tcp, ring or rdma"* ]]
	run -128 "$GCTL" --transport ring --host "$T/nothing.sock" get x
	[[ "$output" == *"cannot connect to '$T/nothing.sock'"* ]]
}
