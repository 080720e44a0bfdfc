#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# resp: goblind's RESP against Debian's redis-server 7 with the same
# client, redis-benchmark, on this host (issue 23, item 6): GET and SET of
# 100 B and 256 KiB values over TCP loopback and over a Unix socket, the
# two servers side by side; writes bench/results/resp.md (--quick:
# resp-quick.md).  Each server runs on CPU 1 (goblind --cores 1;
# redis-server is single-threaded), redis-benchmark on CPU 0; each cell is
# one run of -n requests, the servers alternating.  The latency shootout
# of the ring issue (one request in flight, goblind RESP/UDS against
# Redis RESP/UDS) is that issue's bench: see bench/results/resp.md.
set -euo pipefail

usage() {
	cat >&2 <<USAGE
usage: bench/resp.sh [--quick] [--dir DIR] [--out FILE]
  --quick   fewer requests (100 B: 20,000; 256 KiB: 1,000) and 8
            connections; default 200,000 and 20,000 with 16
  --dir DIR scratch directory (default /var/tmp/goblin-resp)
  --out FILE report (default bench/results/resp[-quick].md)
USAGE
	exit 129
}

root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/lib.sh"
invocation="bench/resp.sh${*:+ $*}"
dir=/var/tmp/goblin-resp
quick=0
out=
while [ $# -gt 0 ]; do
	case $1 in
	--quick) quick=1; shift ;;
	--dir) dir=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	-h|--help) usage ;;
	*) echo "resp: unknown option '$1'" >&2; usage ;;
	esac
done
if [ "$quick" = 1 ]; then
	n_small=20000 n_big=1000 conns=8
	: "${out:=$root/bench/results/resp-quick.md}"
else
	n_small=200000 n_big=20000 conns=16
	: "${out:=$root/bench/results/resp.md}"
fi
for t in redis-server redis-benchmark redis-cli taskset; do
	command -v "$t" >/dev/null ||
		{ echo "resp: $t is not installed (make deps-bench)" >&2; exit 1; }
done
gd="$root/build/goblind"
[ -x "$gd" ] || { echo "resp: build goblind first (make)" >&2; exit 1; }

rm -rf "$dir"
mkdir -p "$dir"
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
}
trap cleanup EXIT

gport=$(free_port)
rport=$(free_port)
taskset -c 1 "$gd" --store "$dir/store" --memory 512M --small-memory 64M \
	--ssd-size 8G --no-hugetlb --no-mlock --cores 1 --no-http \
	--memcache-port 0 --resp-port "$gport" \
	--resp-unixsocket "$dir/goblind.sock" 2>"$dir/goblind.log" &
pids+=($!)
gpid=$!
taskset -c 1 redis-server --port "$rport" --bind 127.0.0.1 \
	--unixsocket "$dir/redis.sock" --save '' --appendonly no \
	--databases 1 --maxmemory 2gb --dir "$dir" >"$dir/redis.log" 2>&1 &
pids+=($!)
rpid=$!
for _ in $(seq 100); do
	[ -S "$dir/goblind.sock" ] && [ -S "$dir/redis.sock" ] && break
	sleep 0.1
done

# bench WHERE TEST SIZE N: requests per second and p50 ms of one run
bench() {
	local line
	line=$(taskset -c 0 redis-benchmark $1 -t "$2" -d "$3" -n "$4" \
		-c "$conns" -r 10000 -q 2>&1 | tr '\r' '\n' |
		grep -E "^${2^^}: [0-9.]+ requests per second" | tail -1)
	echo "$line" | sed -E 's/.*: ([0-9.]+) requests per second, p50=([0-9.]+) msec.*/\1 \2/'
}

rows=()
for size in 100 262144; do
	n=$n_small
	[ "$size" = 262144 ] && n=$n_big
	for tr in tcp unix; do
		for t in set get; do
			if [ "$tr" = tcp ]; then
				gw="-h 127.0.0.1 -p $gport" rw="-h 127.0.0.1 -p $rport"
			else
				gw="-s $dir/goblind.sock" rw="-s $dir/redis.sock"
			fi
			read -r g_rps g_p50 < <(bench "$gw" "$t" "$size" "$n")
			read -r r_rps r_p50 < <(bench "$rw" "$t" "$size" "$n")
			rows+=("| $t | $size | $tr | $n | $g_rps | $g_p50 | $r_rps | $r_p50 |")
		done
	done
done
g_rss=$(awk '/VmHWM/ { print $2 }' "/proc/$gpid/status")
r_rss=$(awk '/VmHWM/ { print $2 }' "/proc/$rpid/status")

{
	echo "# RESP: goblind against redis-server 7, redis-benchmark (issue 23)"
	echo
	echo "\`$invocation\` on $(date -u '+%Y-%m-%d %H:%M UTC'):"
	echo "redis-benchmark -t get|set -d SIZE -n N -c $conns -r 10000 -q, one"
	echo "run per cell, goblind (--cores 1) and redis-server each on CPU 1,"
	echo "the client on CPU 0.  Requests per second, and redis-benchmark's"
	echo "p50 in ms.  The machine is shared with other sessions: a cell is"
	echo "one run, not a median, and may carry their load."
	echo
	echo "| test | value bytes | transport | requests | goblind rps | goblind p50 ms | redis rps | redis p50 ms |"
	echo "|---|---|---|---|---|---|---|---|"
	printf '%s\n' "${rows[@]}"
	echo
	echo "Peak RSS: goblind ${g_rss} kB, redis-server ${r_rss} kB."
	echo
	echo "The one-request-in-flight latency rows (goblind RESP/UDS against"
	echo "Redis RESP/UDS) belong to the ring issue's shootout, not run here."
	echo
	echo '```'
	echo "redis-server: $(redis-server --version)"
	machine_info "$dir" "$root"
	echo '```'
} >"$out"
echo "resp: wrote $out"
