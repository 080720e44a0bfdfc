#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# c1.sh [SERVER OPTIONS...]: vs-memcached.sh's case 1 for one server alone,
# for profiling: the server on CPU $SCPU (1), one worker; 2048 ART keys
# populated by 16 connections, then read for $DUR s (10) by goblinctl
# bench on CPU $CCPU (0) with $CONNS connections (16); prints the RESULT
# figures (payload_ttfb_us since 2026-12-08).  MC=1: memcached -t 1
# holding every value, else goblind with case 1's flags ($GDMEM replaces
# '--memory 128M --ram-head 64K'; $GD the binary).  PERF=S: perf record
# -g of the server for S s of the measured phase, into $DIR/perf.data.
# INFLIGHT=S: inflight.sh for S s of it.
# SYSCALLS=S: perf stat of the server's socket writes, io_uring_enter and
# epoll_wait, and of the machine's IPIs, for S s of it, with the bytes the
# server wrote to its sockets in the same S s (its stats' bytes_written).
# FIO=1 (goblind): then the device's ceiling as vs-memcached.sh measures
# it, fio's random 256 KiB O_DIRECT reads of goblind's SSD file, 64 in
# flight, into huge pages (fio_huge, bench/lib.sh), for $DUR s.
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
gd=${GD:-$root/build/goblind} gctl=$root/build/goblinctl
d=${DIR:-/var/tmp/c1}
rm -rf "$d"; mkdir -p "$d"
port=$((20000 + RANDOM % 10000))
if [ -n "${MC:-}" ]; then
	taskset -c "${SCPU:-1}" memcached -u root -l 127.0.0.1 -p $port -U 0 \
		-t 1 -m 3328 -I 8m -c 1024 "$@" 2>"$d/server.log" &
else
	# shellcheck disable=SC2086 # GDMEM is a list of flags
	taskset -c "${SCPU:-1}" "$gd" --store "$d/s" --memcache-port $port \
		--no-http --listen-address 127.0.0.1 --cores 1 --max-item 8M \
		${GDMEM:---memory 128M --ram-head 64K} --small-memory 16M \
		--no-hugetlb "$@" 2>"$d/server.log" &
fi
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
for _ in $(seq 400); do
	nc -z 127.0.0.1 $port 2>/dev/null && break
	kill -0 $pid 2>/dev/null || { cat "$d/server.log" >&2; exit 1; }
	sleep 0.05
done
bench() {
	taskset -c "${CCPU:-0}" "$gctl" bench --host 127.0.0.1 --port $port \
		--threads 1 --server-pid $pid --keys 2048 \
		--size pareto:262144,583208,0.3,8388608 "$@"
}
written() { # the server's bytes_written counter, at once
	local k v rest
	exec 3<>/dev/tcp/127.0.0.1/$port
	printf 'stats\r\n' >&3
	while read -r k v rest <&3; do
		[ "$k" = END$'\r' ] && break
		[ "$v" = bytes_written ] && echo "${rest%$'\r'}"
	done
	exec 3<&-
}
syscalls() {
	local b0 b1 e=syscalls:sys_enter_
	b0=$(written)
	perf stat -x, -p $pid -o "$d/perf-server.txt" \
		-e ${e}writev,${e}sendmsg,${e}io_uring_enter,${e}epoll_wait \
		-- sleep "$1" >/dev/null 2>&1 &
	perf stat -x, -a -o "$d/perf-ipi.txt" \
		-e irq_vectors:call_function_single_entry,irq_vectors:reschedule_entry \
		-- sleep "$1" >/dev/null 2>&1
	wait $!
	b1=$(written)
	echo "bytes_written=$((b1 - b0)) over $1 s"
	cat "$d/perf-server.txt" "$d/perf-ipi.txt" | grep -v '^#' | grep . |
		cut -d, -f1,3
}
bench --populate-only --conns 16 >/dev/null
pp=
if [ -n "${INFLIGHT:-}" ]; then
	(sleep 3; "$(dirname "$0")/inflight.sh" "$INFLIGHT" >"$d/inflight.txt") &
	pp=$!
elif [ -n "${SYSCALLS:-}" ]; then
	(sleep 2; syscalls "$SYSCALLS" >"$d/syscalls.txt") &
	pp=$!
elif [ -n "${PERF:-}" ]; then
	perf record -g -p $pid -o "$d/perf.data" -- sleep "$PERF" \
		>/dev/null 2>&1 &
	pp=$!
fi
bench --no-store --conns "${CONNS:-16}" --duration "${DUR:-10}" |
	sed -n 's/^RESULT .*\(ops_per_s=[0-9]*\) \(mib_per_s=[0-9.]*\) .*\(payload_ttfb_us=[^ ]*\) \(completion_us=[^ ]*\) .*\(server_cpu_s=[0-9.]*\)/\1 \2 \3 \4 \5/p'
[ -z "$pp" ] || wait $pp
[ -z "${INFLIGHT:-}" ] || echo "device reads in flight: $(cat "$d/inflight.txt")"
[ -z "${SYSCALLS:-}" ] || cat "$d/syscalls.txt"
if [ -n "${FIO:-}" ] && [ -z "${MC:-}" ]; then
	. "$root/bench/lib.sh"
	fio_huge fio --name=device --filename="$d/s/ssd/data" --readonly \
		--rw=randread --bs=256k --direct=1 --ioengine=io_uring \
		--iodepth=64 --time_based --runtime="${DUR:-10}" --mem=shmhuge \
		--output-format=json | python3 -c 'import json, sys
print("fio_mib_per_s=%.0f" % (json.load(sys.stdin)["jobs"][0]["read"]["bw"] / 1024))'
fi
