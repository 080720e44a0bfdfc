#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# rdma: goblin's binary protocol transports against the stream sockets
# (issue 22, item 6), on this host.  The ring part (this script, for now):
#   1. a 32-byte GET's round trip, one request in flight, median and p99:
#      goblind --ring (goblinctl bench --transport ring), Redis 7 over RESP
#      on a Unix socket (Debian's redis-server, persistence off), goblind
#      memcache over TCP and over its Unix socket (bench/lat); every client
#      times with clock_gettime(CLOCK_MONOTONIC), from before the request
#      is written to after the whole reply is read
#   2. 256 KiB and 4 MiB values on the ring: response header and first
#      window times
# Prints "RESULT ring_p50_us=... redis_uds_p50_us=... ring_vs_redis_uds=..."
# (Redis's median over the ring's) and writes bench/results/ring.md
# (--quick: ring-quick.md) with the command, machine, date and commit.
# --rxe runs the RDMA half instead: one boot of the Soft-RoCE guest
# (test/rdma-vm) runs bench/rdma-rxe.sh, goblinctl bench --transport rdma
# and ib_write_lat/ib_write_bw as its ceiling, into
# bench/results/rdma-rxe[-quick].md: emulation figures, not RDMA speed.
# goblind runs with --cores 1: one worker, the client on the other core.
set -euo pipefail

usage() {
	cat >&2 <<USAGE
usage: bench/rdma.sh [--quick] [--dir DIR] [--out FILE]
  --quick      short: 2 s of ring bench, 20000 socket GETs (default 10 s,
               200000)
  --dir DIR    scratch directory (default: a new one under \$TMPDIR)
  --out FILE   report (default bench/results/ring[-quick].md)
  --rxe        the RDMA half in the Soft-RoCE guest (default report
               bench/results/rdma-rxe[-quick].md)
USAGE
	exit 129
}

root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/lib.sh"
invocation="bench/rdma.sh${*:+ $*}"
quick=0 dir= out= rxe=0
while [ $# -gt 0 ]; do
	case $1 in
	--quick) quick=1; shift ;;
	--rxe) rxe=1; shift ;;
	--dir) dir=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	-h|--help) usage ;;
	*) echo "rdma: unknown option '$1'" >&2; usage ;;
	esac
done
if [ "$rxe" = 1 ]; then
	secs=10 sfx=
	[ "$quick" = 1 ] && secs=2 sfx=-quick
	: "${out:=$root/bench/results/rdma-rxe$sfx.md}"
	rxe_out=$(cd "$root" && test/rdma-vm/vm.sh --timeout 900 -- \
		bench/rdma-rxe.sh "$secs")
	{
		echo "# goblind over RDMA on Soft-RoCE (issue 22): EMULATION figures"
		echo
		echo "QEMU TCG guest, the kernel's rdma_rxe (test/rdma-vm), one boot:"
		echo "goblinctl bench --transport rdma (CLOCK_MONOTONIC per request),"
		echo "then ib_write_lat / ib_write_bw on the same rxe0 as the ceiling."
		echo "Nothing here says how fast RDMA hardware is."
		echo
		echo "Command: \`$invocation\`, $(date -u +%Y-%m-%dT%H:%MZ),"
		echo "commit $(git -C "$root" rev-parse --short HEAD), $(nproc) CPUs."
		echo
		echo '```'
		echo "$rxe_out"
		echo '```'
	} >"$out"
	echo "$rxe_out" | grep '^RESULT' || true
	echo "rdma: wrote $out"
	exit 0
fi
if [ "$quick" = 1 ]; then
	secs=2 n=20000
	: "${out:=$root/bench/results/ring-quick.md}"
else
	secs=10 n=200000
	: "${out:=$root/bench/results/ring.md}"
fi
GD=$root/build/goblind GCTL=$root/build/goblinctl LAT=$root/build/bench/lat
for b in "$GD" "$GCTL" "$LAT"; do
	[ -x "$b" ] || { echo "rdma: $b is not built (make)" >&2; exit 1; }
done
command -v redis-server >/dev/null || { echo "rdma: no redis-server" >&2; exit 1; }
[ -n "$dir" ] || dir=$(mktemp -d "${TMPDIR:-/tmp}/goblin-rdma.XXXXXX")
mkdir -p "$dir"
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	rm -rf "$dir/store"
}
trap cleanup EXIT

# goblind: the ring, memcache on TCP port 0 and on a Unix socket
"$GD" --store "$dir/store" --memory 256M --small-memory 16M --no-hugetlb \
	--no-mlock --ssd-size 2G --cores 1 --memcache-port 0 --http-port 0 \
	--unixsocket "$dir/mc.sock" --ring "$dir/ring.sock" 2>"$dir/goblind.log" &
pids+=($!)
for _ in $(seq 100); do
	port=$(sed -n 's/.*memcache on [^ ]*:\([0-9]*\),.*/\1/p' "$dir/goblind.log")
	[ -n "$port" ] && grep -q 'ring on unix socket' "$dir/goblind.log" && break
	sleep 0.1
done
[ -n "$port" ] || { cat "$dir/goblind.log" >&2; exit 1; }
# Redis 7, persistence off, on a Unix socket only
redis-server --port 0 --unixsocket "$dir/redis.sock" --save '' \
	--appendonly no --daemonize no >"$dir/redis.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do [ -S "$dir/redis.sock" ] && break; sleep 0.1; done
[ -S "$dir/redis.sock" ] || { cat "$dir/redis.log" >&2; exit 1; }

val() { sed -n "s/.* $1=\([0-9.]*\).*/\1/p"; }

ring_out=$("$GCTL" --transport ring --host "$dir/ring.sock" bench --size 32 \
	--keys 100 --duration "$secs" --verify)
ring_p50=$(echo "$ring_out" | grep '^RESULT' | val p50_us)
ring_p99=$(echo "$ring_out" | grep '^RESULT' | val p99_us)
redis_out=$("$LAT" resp "unix:$dir/redis.sock" 32 "$n")
mct_out=$("$LAT" mc "tcp:127.0.0.1:$port" 32 "$n")
mcu_out=$("$LAT" mc "unix:$dir/mc.sock" 32 "$n")
redis_p50=$(echo "$redis_out" | val p50_us)
redis_p99=$(echo "$redis_out" | val p99_us)
mct_p50=$(echo "$mct_out" | val p50_us) mct_p99=$(echo "$mct_out" | val p99_us)
mcu_p50=$(echo "$mcu_out" | val p50_us) mcu_p99=$(echo "$mcu_out" | val p99_us)
ratio=$(awk -v r="$redis_p50" -v g="$ring_p50" 'BEGIN { printf "%.1f", r / g }')

big() {	# big SIZE KEYS: header and first window p50/p99 on the ring
	"$GCTL" --transport ring --host "$dir/ring.sock" bench --size "$1" \
		--keys "$2" --duration "$secs" --verify --key-prefix "big$1:"
}
b256=$(big 256K 8)
b4m=$(big 4M 4)
pct() {	# pct WHAT OUTPUT: "p50 / p99" of one line of the ring bench
	echo "$2" | awk -v w="$1" 'index($0, w) == 1 {
		for (i = 1; i <= NF; i++) {
			if ($i ~ /^p50=/) p50 = substr($i, 5)
			if ($i ~ /^p99=/) p99 = substr($i, 5)
		}
		print p50 " / " p99 }'
}

result="RESULT ring_p50_us=$ring_p50 ring_p99_us=$ring_p99 redis_uds_p50_us=$redis_p50 redis_uds_p99_us=$redis_p99 mc_tcp_p50_us=$mct_p50 mc_tcp_p99_us=$mct_p99 mc_uds_p50_us=$mcu_p50 mc_uds_p99_us=$mcu_p99 ring_vs_redis_uds=$ratio"
mkdir -p "$(dirname "$out")"
{
	echo "# goblind --ring against Redis and memcache sockets (issue 22)"
	echo
	echo "Command: \`$invocation\`, $(date -u '+%Y-%m-%d %H:%M UTC')."
	echo "This machine is shared by several sessions at once (2 cores,"
	echo "other builds and tests running): the tails (p99) are mostly"
	echo "theirs; medians are the figures to read, and even they are noisy."
	echo
	echo "One request in flight, a 32-byte value, round trip from before the"
	echo "request is written to after the whole reply is read,"
	echo "clock_gettime(CLOCK_MONOTONIC) in every client: the ring's is"
	echo "\`goblinctl bench --transport ring\` (${secs} s), the sockets'"
	echo "is bench/lat ($n GETs after $((n / 10)) warm-up ones)."
	echo "goblind runs with --cores 1; Redis is Debian's $(redis-server --version | awk '{print $3}'),"
	echo "\`--save '' --appendonly no\`, on a Unix socket only."
	echo
	echo "| transport | p50 us | p99 us |"
	echo "|---|---:|---:|"
	echo "| goblind ring | $ring_p50 | $ring_p99 |"
	echo "| Redis RESP, Unix socket | $redis_p50 | $redis_p99 |"
	echo "| goblind memcache, TCP loopback | $mct_p50 | $mct_p99 |"
	echo "| goblind memcache, Unix socket | $mcu_p50 | $mcu_p99 |"
	echo
	echo "Redis UDS median over the ring's: **${ratio}x** (target: >= 20x,"
	echo "and a ring median under 1 us)."
	echo
	echo "Big values on the ring (p50 / p99 us from the send):"
	echo
	echo "| size | header | first window | last byte |"
	echo "|---|---:|---:|---:|"
	echo "| 256 KiB | $(pct header "$b256") | $(pct 'first window' "$b256") | $(pct completion "$b256") |"
	echo "| 4 MiB | $(pct header "$b4m") | $(pct 'first window' "$b4m") | $(pct completion "$b4m") |"
	echo
	echo '```'
	echo "$result"
	echo "$ring_out"
	echo "$redis_out"
	echo "$mct_out"
	echo "$mcu_out"
	echo "$b256"
	echo "$b4m"
	echo '```'
	echo
	echo "Machine:"
	echo
	echo '```'
	machine_info "$dir" "$root" 2>&1
	echo '```'
} >"$out"
echo "$result"
echo "report: $out"
