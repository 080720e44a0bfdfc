#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# resp: goblind's RESP against Debian's redis-server 7 with the same
# client, redis-benchmark, on this host (issue 23, item 6): GET and SET of
# 100 B and 256 KiB values over TCP loopback and over a Unix socket, the
# two servers side by side; writes bench/results/resp.md (--quick:
# resp-quick.md).  Each server runs on CPU 1 (goblind --cores 1;
# redis-server is single-threaded), redis-benchmark on CPU 0; each cell is
# the median of --runs runs of -n requests, the servers alternating run
# by run.  The one-request-in-flight latency shootout (goblind RESP/UDS
# against Redis RESP/UDS) is bench/rdma.sh's.
set -euo pipefail

usage() {
	cat >&2 <<USAGE
usage: bench/resp.sh [--quick] [--runs N] [--dir DIR] [--out FILE]
  --quick   fewer requests (100 B: 20,000; 256 KiB: 1,000), 8
            connections and one run per cell; default 200,000 and
            20,000 with 16, three runs per cell
  --runs N  runs per cell and server (the median is reported)
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
runs=
out=
while [ $# -gt 0 ]; do
	case $1 in
	--quick) quick=1; shift ;;
	--runs) runs=$2; shift 2 ;;
	--dir) dir=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	-h|--help) usage ;;
	*) echo "resp: unknown option '$1'" >&2; usage ;;
	esac
done
if [ "$quick" = 1 ]; then
	n_small=20000 n_big=1000 conns=8
	: "${runs:=1}"
	: "${out:=$root/bench/results/resp-quick.md}"
else
	n_small=200000 n_big=20000 conns=16
	: "${runs:=3}"
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
	--databases 1 --maxmemory 4gb --dir "$dir" >"$dir/redis.log" 2>&1 &
pids+=($!)
rpid=$!
for _ in $(seq 100); do
	[ -S "$dir/goblind.sock" ] && [ -S "$dir/redis.sock" ] && break
	sleep 0.1
done

# bench WHERE TEST SIZE N: requests per second and p50 ms of one run
bench() {
	local all line
	all=$(taskset -c 0 redis-benchmark $1 -t "$2" -d "$3" -n "$4" \
		-c "$conns" -r 10000 -q 2>&1 | tr '\r' '\n')
	line=$(echo "$all" |
		grep -E "^${2^^}: [0-9.]+ requests per second" | tail -1)
	if [ -z "$line" ]; then
		echo "resp: redis-benchmark $1 -t $2 -d $3 gave no result:" >&2
		echo "$all" | grep -v '^ *$' | tail -5 >&2
		return 1
	fi
	echo "$line" | sed -E 's/.*: ([0-9.]+) requests per second, p50=([0-9.]+) msec.*/\1 \2/'
}

# median_runs "RPS P50"...: the median of each column (the middle run,
# or the mean of the two middle ones)
median_runs() {
	local col
	for col in 1 2; do
		printf '%s\n' "$@" | awk -v c="$col" '{ print $c }' | sort -g |
			awk '{ v[NR] = $1 } END {
				m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
				printf "%s ", m }'
	done
	echo
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
			g_runs=() r_runs=()
			for _ in $(seq "$runs"); do
				g_runs+=("$(bench "$gw" "$t" "$size" "$n")")
				r_runs+=("$(bench "$rw" "$t" "$size" "$n")")
			done
			read -r g_rps g_p50 < <(median_runs "${g_runs[@]}")
			read -r r_rps r_p50 < <(median_runs "${r_runs[@]}")
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
	echo "redis-benchmark -t get|set -d SIZE -n N -c $conns -r 10000 -q, the"
	echo "median of $runs run(s) per cell and server, the two servers"
	echo "alternating; goblind (--cores 1) and redis-server each on CPU 1,"
	echo "the client on CPU 0.  Requests per second, and redis-benchmark's"
	echo "p50 in ms.  Load average when the runs ended: $(cut -d' ' -f1-3 /proc/loadavg)."
	echo
	echo "| test | value bytes | transport | requests | goblind rps | goblind p50 ms | redis rps | redis p50 ms |"
	echo "|---|---|---|---|---|---|---|---|"
	printf '%s\n' "${rows[@]}"
	echo
	echo "Peak RSS: goblind ${g_rss} kB, redis-server ${r_rss} kB."
	echo
	echo "The 256 KiB rows are goblind's tiering, not its protocol: their"
	echo "10,000 keys are 2.5 GiB, goblind runs with --memory 512M, so it"
	echo "writes every 256 KiB SET through to its SSD file and reads most"
	echo "GETs' tails back from it, while redis-server holds all of them in"
	echo "RAM (its peak RSS above)."
	echo
	echo "The one-request-in-flight latency rows (goblind RESP/UDS against"
	echo "Redis RESP/UDS) are bench/rdma.sh's (bench/results/ring.md)."
	echo
	echo '```'
	echo "redis-server: $(redis-server --version)"
	machine_info "$dir" "$root"
	echo '```'
} >"$out"
echo "resp: wrote $out"
