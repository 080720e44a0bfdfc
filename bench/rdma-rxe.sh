#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# rdma-rxe: the RDMA half of bench/rdma.sh (issue 22, item 6), run inside
# the Soft-RoCE guest (test/rdma-vm/vm.sh: bench/rdma.sh --rxe boots it).
# In one boot: goblind --rdma-port on rxe0 and goblinctl bench --transport
# rdma (one request in flight, CLOCK_MONOTONIC per request: sent, header
# visible, first window visible, last byte) for 32 B, 256 KiB and 4 MiB
# values, then perftest's ib_write_lat and ib_write_bw on the same device
# as the ceiling.  These are EMULATION figures (QEMU TCG, the kernel's
# rdma_rxe): they say nothing about RDMA hardware.
# usage (in the guest): bench/rdma-rxe.sh SECONDS
set -euo pipefail
secs=${1:-2}
root=$(cd "$(dirname "$0")/.." && pwd)
GD=$root/build/goblind GCTL=$root/build/goblinctl
[ -n "${RDMA_DEV:-}" ] || { echo "rdma-rxe: no RDMA device (run it through bench/rdma.sh --rxe)" >&2; exit 1; }
dir=$(mktemp -d "${TMPDIR:-/tmp}/goblin-rxe.XXXXXX")
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	rm -rf "$dir"
}
trap cleanup EXIT
"$GD" --store "$dir/store" --memory 64M --small-memory 16M --no-hugetlb \
	--no-mlock --ssd-size 1G --cores 1 --memcache-port 0 --http-port 0 \
	--rdma-port 0 --rdma-address "$RDMA_IP" 2>"$dir/goblind.log" &
pids+=($!)
for _ in $(seq 100); do
	rport=$(sed -n 's/.*rdma on [^ ]*:\([0-9]*\),.*/\1/p' "$dir/goblind.log")
	[ -n "$rport" ] && grep -q 'memcache on' "$dir/goblind.log" && break
	sleep 0.1
done
[ -n "$rport" ] || { cat "$dir/goblind.log" >&2; exit 1; }
for size_keys in "32 100" "262144 20" "4194304 4"; do
	set -- $size_keys
	echo "== goblinctl bench --transport rdma --size $1 --keys $2 --duration $secs"
	"$GCTL" --transport rdma --host "$RDMA_IP" --port "$rport" bench \
		--size "$1" --keys "$2" --duration "$secs" --verify
done
# the ceiling: perftest on the same rxe device, server and client in this
# guest (RoCE v2 GID index 1)
perf() { # perf TOOL ARGS...: server in the background, then the client
	local tool=$1
	shift
	"$tool" -d "$RDMA_DEV" -x 1 "$@" >"$dir/$tool.srv" 2>&1 &
	local spid=$!
	sleep 1
	echo "== $tool $*"
	"$tool" -d "$RDMA_DEV" -x 1 "$@" "$RDMA_IP" || true
	wait "$spid" || true
}
perf ib_write_lat -s 32 -n 2000
perf ib_write_lat -s 262144 -n 200
perf ib_write_bw -s 262144 -n 200
perf ib_write_bw -s 4194304 -n 20
