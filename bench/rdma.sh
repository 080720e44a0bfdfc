#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# rdma: goblin's binary protocol transports against the stream sockets
# (issue 22, item 6; issue 23, item 6), on this host.  The ring part:
#   1. a 32-byte GET's round trip, one request in flight, median and p99:
#      goblind --ring (goblinctl bench --transport ring), Redis 7 over RESP
#      on a Unix socket (Debian's redis-server, persistence off), goblind's
#      RESP on its Unix socket (--resp-unixsocket), goblind memcache over
#      TCP and over its Unix socket (bench/lat); every client times with
#      clock_gettime(CLOCK_MONOTONIC), from before the request is written
#      to after the whole reply is read.  Under two conditions, three runs
#      each (their medians are reported): the machine as it is (a vCPU
#      with nothing to run halts, and a socket's wake-up of the other CPU
#      waits for it), then "CPUs kept awake": a SCHED_IDLE spinner pinned
#      to each CPU, so that no vCPU halts (a wake-up preempts a spinner)
#   2. 256 KiB and 4 MiB values on the ring: response header and first
#      window times
# Prints "RESULT ring_p50_us=... redis_uds_p50_us=... ring_vs_redis_uds=...
# resp_vs_redis_uds=... ring_vs_redis_uds_awake=..." (Redis's median over
# the ring's, over goblind RESP's) and writes bench/results/ring.md
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
  --quick      short: 2 s of ring bench, 20000 socket GETs per run (default
               5 s, 100000), three runs per condition
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
	load_before=$(uptime)
	rxe_out=$(cd "$root" && test/rdma-vm/vm.sh --timeout 900 -- \
		bench/rdma-rxe.sh "$secs")
	load_after=$(uptime)
	{
		echo "# goblind over RDMA on Soft-RoCE (issue 22): EMULATION figures"
		echo
		echo "QEMU TCG guest, the kernel's rdma_rxe (test/rdma-vm), one boot:"
		echo "goblinctl bench --transport rdma (CLOCK_MONOTONIC per request),"
		echo "then ib_write_lat / ib_write_bw on the same rxe0 as the ceiling."
		echo "Nothing here says how fast RDMA hardware is."
		echo
		echo "Command: \`$invocation\`, $(date -u +%Y-%m-%dT%H:%MZ),"
		echo "commit $(git -C "$root" rev-parse --short HEAD), $(nproc) CPUs (a 2 vCPU VM; the guest"
		echo "is QEMU TCG on them, -smp 2)."
		echo "Load before: \`$load_before\`; after: \`$load_after\`."
		echo
		echo "goblinctl bench --transport rdma, one request in flight (p50 / p99 us):"
		echo
		echo "| size | header | first window | last byte |"
		echo "|---:|---:|---:|---:|"
		echo "$rxe_out" | awk '
			function pp(line,   i, a, b) {
				for (i = 1; i <= NF; i++) {
					if ($i ~ /^p50=/) a = substr($i, 5)
					if ($i ~ /^p99=/) b = substr($i, 5)
				}
				return a " / " b
			}
			/^== goblinctl/ { for (i = 1; i <= NF; i++) if ($i == "--size") size = $(i + 1) }
			/^header / { h = pp() }
			/^first window / { f = pp() }
			/^completion / { print "| " size " | " h " | " f " | " pp() " |" }'
		echo
		echo "The ceiling, perftest on the same rxe0 in the same boot (ib_write_lat:"
		echo "t_typical, half a round trip as perftest reports it; ib_write_bw:"
		echo "BW average):"
		echo
		echo "| tool | size | figure |"
		echo "|---|---:|---:|"
		echo "$rxe_out" | awk '
			/^== ib_write_(lat|bw)/ { tool = $2; next }
			tool == "ib_write_lat" && $1 ~ /^[0-9]+$/ && NF >= 5 { print "| ib_write_lat | " $1 " | " $5 " us |"; tool = "" }
			tool == "ib_write_bw" && $1 ~ /^[0-9]+$/ && NF >= 4 { print "| ib_write_bw | " $1 " | " $4 " MB/s |"; tool = "" }'
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
	secs=5 n=100000
	: "${out:=$root/bench/results/ring.md}"
fi
GD=$root/build/goblind GCTL=$root/build/goblinctl LAT=$root/build/bench/lat
PP=$root/build/bench/pingpong
for b in "$GD" "$GCTL" "$LAT" "$PP"; do
	[ -x "$b" ] || { echo "rdma: $b is not built (make)" >&2; exit 1; }
done
command -v redis-server >/dev/null || { echo "rdma: no redis-server" >&2; exit 1; }
# Servers on the first CPU (goblind's one worker pins itself there; Redis
# is pinned to it), every client on the second: where the scheduler puts
# an unpinned client decides between a cross-CPU wake-up and a context
# switch on one CPU, a factor of four on a socket's round trip here, and
# each row must get the same.
cpus=$(taskset -pc $$ | sed 's/.*: *//')
first_cpu() { echo "$cpus" | sed 's/[-,].*//'; }
second_cpu() {
	local a b
	a=$(first_cpu)
	b=$(echo "$cpus" | tr ',' '\n' | awk -F- -v a="$a" '{
		lo = $1; hi = NF > 1 ? $2 : $1
		for (c = lo; c <= hi; c++) if (c != a) { print c; exit } }' | head -1)
	echo "${b:-$a}"
}
C0=$(first_cpu) C1=$(second_cpu)
[ -n "$dir" ] || dir=$(mktemp -d "${TMPDIR:-/tmp}/goblin-rdma.XXXXXX")
mkdir -p "$dir"
pids=()
spinners=()
cleanup() {
	for p in "${spinners[@]}" "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	rm -rf "$dir/store"
}
trap cleanup EXIT

# goblind: the ring, memcache on TCP port 0 and on a Unix socket
"$GD" --store "$dir/store" --memory 256M --small-memory 16M --no-hugetlb \
	--no-mlock --ssd-size 2G --cores 1 --memcache-port 0 --http-port 0 \
	--unixsocket "$dir/mc.sock" --resp-unixsocket "$dir/resp.sock" \
	--ring "$dir/ring.sock" 2>"$dir/goblind.log" &
pids+=($!)
for _ in $(seq 100); do
	port=$(sed -n 's/.*memcache on [^ ]*:\([0-9]*\),.*/\1/p' "$dir/goblind.log")
	[ -n "$port" ] && grep -q 'ring on unix socket' "$dir/goblind.log" && break
	sleep 0.1
done
[ -n "$port" ] || { cat "$dir/goblind.log" >&2; exit 1; }
# Redis 7, persistence off, on a Unix socket only
taskset -c "$C0" redis-server --port 0 --unixsocket "$dir/redis.sock" --save '' \
	--appendonly no --daemonize no >"$dir/redis.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do [ -S "$dir/redis.sock" ] && break; sleep 0.1; done
[ -S "$dir/redis.sock" ] || { cat "$dir/redis.log" >&2; exit 1; }

val() { sed -n "s/.* $1=\([0-9.]*\).*/\1/p"; }
med() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }


# one run of every row: "ROW p50 p99" lines, and the clients' output in
# $dir/raw (appended)
rows() {
	local o
	o=$("$PP" --mode ring --secs 1)
	echo "floor $o" >>"$dir/raw"
	echo "floor $(echo "$o" | val p50_ns | awk '{ printf "%.3f", $1 / 1e3 }')" \
		"$(echo "$o" | val p99_ns | awk '{ printf "%.3f", $1 / 1e3 }')"
	o=$(taskset -c "$C1" "$GCTL" --transport ring --host "$dir/ring.sock" \
		bench --size 32 --keys 100 --duration "$secs" --verify |
		grep '^RESULT')
	echo "$o" >>"$dir/raw"
	echo "ring $(echo "$o" | val p50_us) $(echo "$o" | val p99_us)"
	# the client on the CPU of goblind's one worker (worker 0: the first
	# CPU), as on a machine with more runnable threads than CPUs
	o=$(taskset -c "$C0" "$GCTL" --transport ring \
		--host "$dir/ring.sock" bench --size 32 --keys 100 \
		--duration 1 --verify | grep '^RESULT')
	echo "ring1cpu $o" >>"$dir/raw"
	echo "ring1cpu $(echo "$o" | val p50_us) $(echo "$o" | val p99_us)"
	for r in "redis resp unix:$dir/redis.sock" \
		"resp resp unix:$dir/resp.sock" \
		"mct mc tcp:127.0.0.1:$port" "mcu mc unix:$dir/mc.sock"; do
		set -- $r
		o=$(taskset -c "$C1" "$LAT" "$2" "$3" 32 "$n")
		echo "$1 $o" >>"$dir/raw"
		echo "$1 $(echo "$o" | val p50_us) $(echo "$o" | val p99_us)"
	done
	# RESP with the client on the server's CPU: no cross-CPU wake-up, a
	# context switch each way, so the servers' own costs weigh more
	for r in "redis1cpu unix:$dir/redis.sock" "resp1cpu unix:$dir/resp.sock"; do
		set -- $r
		o=$(taskset -c "$C0" "$LAT" resp "$2" 32 "$n")
		echo "$1 $o" >>"$dir/raw"
		echo "$1 $(echo "$o" | val p50_us) $(echo "$o" | val p99_us)"
	done
}

# condition COND: three runs of rows(), the medians as ROW_COND_p50 and
# ROW_COND_p99 variables (and the runs' p50s as ROW_COND_runs)
condition() {
	local c=$1 all row
	echo "== $c" >>"$dir/raw"
	all=$(rows; rows; rows)
	for row in floor ring ring1cpu redis resp mct mcu redis1cpu resp1cpu; do
		printf -v "${row}_${c}_p50" %s "$(echo "$all" | awk -v r=$row '$1 == r { print $2 }' | med)"
		printf -v "${row}_${c}_p99" %s "$(echo "$all" | awk -v r=$row '$1 == r { print $3 }' | med)"
		printf -v "${row}_${c}_runs" %s "$(echo "$all" | awk -v r=$row '$1 == r { printf "%s%s", s, $2; s = ", " }')"
	done
}

# CPUs kept awake: a spinner per CPU that any other task preempts
spin_start() {
	for c in $(seq 0 $(($(nproc) - 1))); do
		taskset -c "$c" chrt --idle 0 nice -n 19 \
			bash -c 'while :; do :; done' &
		spinners+=($!)
	done
}
spin_stop() {
	for p in "${spinners[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${spinners[@]}"; do wait "$p" 2>/dev/null || true; done
	spinners=()
}

: >"$dir/raw"
load_before=$(uptime)
condition asis
spin_start
sleep 0.5
condition awake
spin_stop
load_after=$(uptime)
# ratio A B [DECIMALS]: A / B
ratio() { awk -v a="$1" -v b="$2" -v d="${3:-1}" 'BEGIN { printf "%.*f", d, a / b }'; }
ring_p50=$ring_asis_p50 ring_p99=$ring_asis_p99
redis_p50=$redis_asis_p50 redis_p99=$redis_asis_p99
ratio=$(ratio "$redis_asis_p50" "$ring_asis_p50")
ratio_awake=$(ratio "$redis_awake_p50" "$ring_awake_p50")
resp_ratio_1cpu=$(ratio "$redis1cpu_asis_p50" "$resp1cpu_asis_p50" 3)
resp_ratio=$(ratio "$redis_asis_p50" "$resp_asis_p50" 3)
resp_ratio_awake=$(ratio "$redis_awake_p50" "$resp_awake_p50" 3)

big() {	# big SIZE KEYS: header and first window p50/p99 on the ring
	taskset -c "$C1" "$GCTL" --transport ring --host "$dir/ring.sock" \
		bench --size "$1" \
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

result="RESULT ring_p50_us=$ring_p50 ring_p99_us=$ring_p99 redis_uds_p50_us=$redis_p50 redis_uds_p99_us=$redis_p99 mc_tcp_p50_us=$mct_asis_p50 mc_tcp_p99_us=$mct_asis_p99 mc_uds_p50_us=$mcu_asis_p50 mc_uds_p99_us=$mcu_asis_p99 ring_vs_redis_uds=$ratio resp_uds_p50_us=$resp_asis_p50 resp_uds_p99_us=$resp_asis_p99 resp_vs_redis_uds=$resp_ratio ring_awake_p50_us=$ring_awake_p50 redis_uds_awake_p50_us=$redis_awake_p50 resp_uds_awake_p50_us=$resp_awake_p50 ring_vs_redis_uds_awake=$ratio_awake resp_vs_redis_uds_awake=$resp_ratio_awake resp_vs_redis_uds_1cpu=$resp_ratio_1cpu"
row() {	# row LABEL VAR: a table row, both conditions
	local a50=${2}_asis_p50 a99=${2}_asis_p99 w50=${2}_awake_p50 w99=${2}_awake_p99
	local ar=${2}_asis_runs wr=${2}_awake_runs
	echo "| $1 | ${!a50} | ${!a99} | ${!w50} | ${!w99} | ${!ar} / ${!wr} |"
}
mkdir -p "$(dirname "$out")"
{
	echo "# goblind --ring against Redis and memcache sockets (issues 22, 23)"
	echo
	echo "Command: \`$invocation\`, $(date -u '+%Y-%m-%d %H:%M UTC'),"
	echo "commit $(git -C "$root" rev-parse --short HEAD)$(git -C "$root" diff --quiet HEAD -- netd store cli bench/lat.c || echo ' (with uncommitted changes)')."
	echo "Load before: \`$load_before\`; after: \`$load_after\`."
	echo "This machine is shared by several sessions at once (2 vCPUs,"
	echo "other builds, tests and benchmarks running): the tails (p99) are"
	echo "mostly theirs; medians are the figures to read, and even they move."
	echo
	echo "One request in flight, a 32-byte value, round trip from before the"
	echo "request is written to after the whole reply is read,"
	echo "clock_gettime(CLOCK_MONOTONIC) in every client: the ring's is"
	echo "\`goblinctl bench --transport ring\` (${secs} s a run), the sockets'"
	echo "is bench/lat ($n GETs after $((n / 10)) warm-up ones a run)."
	echo "goblind runs with --cores 1; Redis is Debian's $(redis-server --version | awk '{print $3}'),"
	echo "\`--save '' --appendonly no\`, on a Unix socket only."
	echo
	echo "The floor row is no server: bench/pingpong --mode ring, two pinned"
	echo "threads handing over the cache lines a ring GET moves, with the"
	echo "same clock, for a second in each run.  It moves with the host's"
	echo "placement of our two vCPUs (150 ns, or 600 ns and more, from one"
	echo "second to the next): read the ring against the floor of its run."
	echo
	echo "goblind's worker and Redis run on CPU $C0, every client on CPU $C1"
	echo "(but the row that says otherwise): an unpinned client lands on"
	echo "either, and a socket's round trip is ~4x longer across CPUs than"
	echo "on one here, so each row gets the same placement."
	echo
	echo "Two conditions, three runs each, every row in each run; the table"
	echo "gives the medians of the runs' p50 and p99, and each run's p50:"
	echo
	echo "- **as is**: nothing else of ours runs.  A vCPU with nothing to"
	echo "  run halts; a socket's reply wakes a task on the other vCPU, and"
	echo "  that wake-up (an IPI to a halted vCPU, through the hypervisor) is"
	echo "  most of a socket round trip here."
	echo "- **awake**: a spinner per CPU (\`taskset -c N chrt --idle 0\`, a"
	echo "  shell loop), which any woken task preempts at once, so that no"
	echo "  vCPU halts: a wake-up is an IPI to a running vCPU and a"
	echo "  reschedule.  The ring, which never sleeps while it works, should"
	echo "  not care; the sockets show what a wake-up costs without the halt."
	echo
	echo "| transport | as is p50 us | as is p99 us | awake p50 us | awake p99 us | runs' p50 (as is / awake) |"
	echo "|---|---:|---:|---:|---:|---|"
	row "floor: two threads, the ring's six lines (bench/pingpong)" floor
	row "goblind ring" ring
	row "goblind ring, the client on the worker's CPU (1 s)" ring1cpu
	row "Redis RESP, Unix socket" redis
	row "goblind RESP, Unix socket" resp
	row "goblind memcache, TCP loopback" mct
	row "goblind memcache, Unix socket" mcu
	row "Redis RESP, Unix socket, the client on Redis's CPU" redis1cpu
	row "goblind RESP, Unix socket, the client on the worker's CPU" resp1cpu
	echo
	echo "Redis UDS median over the ring's: **${ratio}x** as is, **${ratio_awake}x**"
	echo "awake (target: >= 20x, and a ring median under 1 us).  Redis UDS"
	echo "median over goblind RESP UDS's: **${resp_ratio}x** as is, **${resp_ratio_awake}x**"
	echo "awake, **${resp_ratio_1cpu}x** as is with each client on its server's"
	echo "CPU (target: >= 1.0, goblind's no higher)."
	echo
	echo "Big values on the ring (p50 / p99 us from the send), as is:"
	echo
	echo "| size | header | first window | last byte |"
	echo "|---|---:|---:|---:|"
	echo "| 256 KiB | $(pct header "$b256") | $(pct 'first window' "$b256") | $(pct completion "$b256") |"
	echo "| 4 MiB | $(pct header "$b4m") | $(pct 'first window' "$b4m") | $(pct completion "$b4m") |"
	echo
	echo '```'
	echo "$result"
	cat "$dir/raw"
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
