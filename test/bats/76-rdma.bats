#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# goblind over RDMA verbs (issue 22), on a real verbs stack: Soft-RoCE
# (rdma_rxe) in a QEMU guest.  make test runs this file once inside the
# guest through test/rdma-vm/vm.sh (test/run.sh); the host's own bats run
# leaves it out.  Correctness only: under emulation speed means nothing.

bats_require_minimum_version 1.5.0
load goblind

H=$((256 * 1024)) # the store's default --ram-head
GD_STORE_OPTS=(--memory 16M --small-memory 8M --no-hugetlb --no-mlock
	       --ssd-size 1G)
PROBE="${RDMA_PROBE:-$BATS_TEST_DIRNAME/../../build/test/rdma_probe}"

setup() {
	if [ -z "${RDMA_DEV:-}" ] || [ ! -e /dev/infiniband/uverbs0 ]; then
		skip "no RDMA device: this file runs in the guest (test/rdma-vm/vm.sh -- bats test/bats/76-rdma.bats)"
	fi
	gd_setup rdma
}

teardown() {
	gd_teardown
}

# rdma_start: goblind with --rdma-port 0 on the rxe device; sets RPORT
rdma_start() {
	gd_start s --rdma-port 0 --rdma-address "$RDMA_IP" "$@"
	RPORT=$(sed -n 's/.*rdma on [^ ]*:\([0-9]*\),.*/\1/p' "$LOG")
	[ -n "$RPORT" ]
}

# rctl ARGS...: goblinctl over RDMA to the goblind of rdma_start
rctl() {
	"$GCTL" --transport rdma --host "$RDMA_IP" --port "$RPORT" "$@"
}

# rstat NAME: one counter of goblind's stats, asked over RDMA
rstat() {
	rctl stats | awk -v n="$1" '$1 == n { print $2 }'
}

@test "issue 22: the guest has an active Soft-RoCE port" {
	run ibv_devinfo -d "$RDMA_DEV"
	[ "$status" -eq 0 ]
	[[ "$output" == *"PORT_ACTIVE"* ]]
	[[ "$output" == *"link_layer:		Ethernet"* ]]
}

@test "issue 22: --rdma-address without an RDMA device and a bad --rdma-port are clear errors" {
	run -128 "$GD" --store "$T/x" "${GD_STORE_OPTS[@]}" --memcache-port 0 \
		--http-port 0 --rdma-port 0 --rdma-address 127.0.0.1
	[[ "$output" == *"--rdma-address 127.0.0.1 is no address of an RDMA device"* ]]
	run -129 "$GD" --store "$T/x" --rdma-port 70000
	[[ "$output" == *"invalid value '70000' for --rdma-port"* ]]
}

@test "issue 22: rdma set and get of 0, 1, H-1, H, H+1 bytes, byte for byte, memcache sees the same" {
	rdma_start
	for n in 0 1 $((H - 1)) $H $((H + 1)); do
		head -c "$n" /dev/urandom >"$T/v$n"
		rctl put "k$n" "$T/v$n"
	done
	for n in 0 1 $((H - 1)) $H $((H + 1)); do
		rctl get "k$n" >"$T/r$n"
		cmp "$T/v$n" "$T/r$n"
		# one keyspace: memcache reads what RDMA stored
		"$GCTL" --port "$PORT" get "k$n" | cmp - "$T/v$n"
	done
	# and RDMA reads what memcache stored, head and tail
	head -c $((H + 4097)) /dev/urandom >"$T/m"
	"$GCTL" --port "$PORT" put mk "$T/m"
	rctl get mk | cmp - "$T/m"
	# sets over a SEND's size were pulled by RDMA READ; gets written
	# by RDMA WRITE from the store's memory (heads from their slots)
	[ "$(rstat rdma_pulled)" -ge $((H - 1 + H + H + 1)) ]
	[ "$(rstat rdma_zero_copy)" -ge $((2 * H + H + 4097)) ]
	[ "$(rstat rdma_errors)" -eq 0 ]
	run rctl get nosuchkey
	[ "$status" -eq 1 ]
	[[ "$output" == *"no such key 'nosuchkey'"* ]]
	rctl del k1
	run rctl get k1
	[ "$status" -eq 1 ]
}

@test "issue 22: rdma get of a 40 MiB object from disk, window by window, byte for byte" {
	rdma_start
	head -c $((40 << 20)) /dev/urandom >"$T/big"
	"$GCTL" --port "$PORT" put big "$T/big"
	w0=$(rstat rdma_written)
	b0=$(rstat rdma_bulk_ready)
	# 4 MiB windows: the rest of the value by getrange, ten windows
	rctl --window 4M get big | cmp - "$T/big"
	w1=$(rstat rdma_written)
	b1=$(rstat rdma_bulk_ready)
	[ $((w1 - w0)) -eq $((40 << 20)) ]
	# a BULK_READY after each piece: at least one per 256 KiB chunk
	[ $((b1 - b0)) -ge 160 ]
	# and a set of it pulled by RDMA READ reads back the same
	rctl put big2 "$T/big"
	"$GCTL" --port "$PORT" get big2 | cmp - "$T/big"
}

@test "issue 22: several QPs at once: gets and sets on both workers, every byte right" {
	rdma_start
	for i in 1 2 3 4; do
		head -c $((H * i + 13)) /dev/urandom >"$T/v$i"
		rctl put "q$i" "$T/v$i"
	done
	end=$((SECONDS + 4))
	pids=()
	for i in 1 2 3 4; do
		(
			n=0
			while [ $SECONDS -lt $end ] || [ $n -lt 2 ]; do
				rctl get "q$i" | cmp - "$T/v$i" || exit 1
				rctl put "w$i" "$T/v$i" || exit 1
				n=$((n + 1))
			done
			echo "$n" >"$T/n$i"
		) &
		pids+=($!)
	done
	for p in "${pids[@]}"; do
		wait "$p"
	done
	for i in 1 2 3 4; do
		echo "QP $i: $(cat "$T/n$i") rounds"
		rctl get "w$i" | cmp - "$T/v$i"
	done
	[ "$(rstat rdma_errors)" -eq 0 ]
	[ "$(rstat rdma_connections)" -ge 20 ]
}

@test "issue 22: a client killed mid-transfer: goblind keeps serving, registered memory back to its baseline" {
	rdma_start
	head -c $((40 << 20)) /dev/urandom >"$T/big"
	"$GCTL" --port "$PORT" put big "$T/big"
	# a whole get first: the read buffers it needs are registered
	rctl get big | cmp - "$T/big"
	mr0=$(rstat rdma_mr_bytes)
	n0=$(rstat rdma_mr)
	rctl --window 1M get big >"$T/part" &
	kid=$!
	# killed once bytes flow (at rxe's ~30 MB/s 40 MiB take over a
	# second; a stats request here would take long enough to miss it)
	for _ in $(seq 500); do
		[ -s "$T/part" ] && break
		sleep 0.01
	done
	kill -9 "$kid"
	wait "$kid" || true
	got=$(stat -c %s "$T/part")
	echo "killed after $got bytes"
	[ "$got" -lt $((40 << 20)) ]
	for _ in $(seq 100); do
		[ "$(rstat curr_rdma_connections)" -eq 1 ] && break
		sleep 0.2
	done
	[ "$(rstat curr_rdma_connections)" -eq 1 ] # the stats' own
	[ "$(rstat rdma_mr_bytes)" -eq "$mr0" ]
	[ "$(rstat rdma_mr)" -eq "$n0" ]
	rctl get big | cmp - "$T/big"
	gd_stop || { cat "$LOG"; false; } # and it stops clean
}

@test "issue 22: a window too small and a bad rkey: clear errors, the connection closed, goblind serves on" {
	rdma_start
	head -c $((1 << 20)) /dev/urandom >"$T/v"
	rctl put v "$T/v"
	run rctl --window 4K get v
	echo "$output"
	[ "$status" -ne 0 ]
	[[ "$output" == *"refused the 4096-byte window as too small, and closed the connection"* ]]
	[ "$(rstat rdma_bad_window)" -eq 1 ]
	# a value that fits a small window is no error
	head -c 1000 /dev/urandom >"$T/small"
	rctl put s "$T/small"
	rctl --window 4K get s | cmp - "$T/small"
	run "$PROBE" "$RDMA_IP" "$RPORT" bad-rkey v
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"get with a bad rkey: "* ]]
	grep -q "rdma: closing a connection: a failed RDMA WRITE: remote access error" "$LOG"
	[ "$(rstat rdma_errors)" -ge 2 ]
	rctl get v | cmp - "$T/v"
	[ "$(rstat curr_rdma_connections)" -eq 1 ]
	gd_stop || { cat "$LOG"; false; }
}

@test "issue 22: goblinctl bench --transport rdma over three QPs: every value verified, the four times per request printed" {
	rdma_start
	# three QPs in one client, one thread each
	run rctl bench --conns 3 --size $((H + 1)) --keys 4 --duration 1 --verify
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"verify         0 values of the wrong size or bytes"* ]]
	[[ "$output" == *"first window   n="* ]]
	[[ "$output" == *"RESULT proto=rdma "*" errors=0 wrong=0 "* ]]
	[ "$(rstat rdma_errors)" -eq 0 ]
}
