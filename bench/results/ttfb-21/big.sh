#!/bin/bash
# big.sh ROUNDS BUILD...: vs-vinyl --quick's BIG part alone (the same four
# objects, population with --verify, page cache dropped, three shuffled
# passes, the same goblind flags), each BUILD (a worktree with build/) in
# turn, ROUNDS times; prints each run's TTFB p50/p90 and per-request MiB/s
# and every request's TTFB in us (from --csv).  One goblinctl (CLIENT,
# default the first build's) for all, so the client is the same.
# FIO=1: after each run's passes, fio's one O_DIRECT stream of goblind's
# SSD file, as vs-vinyl.sh's device_stream (1 MiB reads, FIO_DEPTH deep,
# default 4), and the per-request median over it.  BIG_N objects
# (default 4) of BIG_MIN to BIG_MAX MiB (256, 512), in an SSD of SSD
# (3G).  PERF=FILE: perf record -g of goblind's threads during the
# passes, to FILE.<build>.<round>.
# Each line also has, over the passes, goblind's CPU (server_busy, of one
# CPU), the machine's (machine_busy, of all), and the device's reads from
# /proc/diskstats: their number and mean size and time, the share of the
# time one was in flight (disk_busy) and the mean number in flight.
set -u
. "$(cd "$(dirname "$0")/../../.." && pwd)/bench/lib.sh"
R=$1; shift
d=${DIR:-/var/tmp/ttfb21}; rm -rf $d; mkdir -p $d
N=${BIG_N:-4}
python3 - "$d" "$N" "${BIG_MIN:-256}" "${BIG_MAX:-512}" <<'PY'
import random, sys
d = sys.argv[1]
r = random.Random(1)
n, lo, hi = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
objs = [("big:%04d" % i, r.randint(lo << 20, hi << 20)) for i in range(n)]
open(d + "/pop", "w").writelines("%s %d\n" % o for o in objs)
with open(d + "/meas", "w") as f:
    for p in range(3):
        o = list(objs); random.Random(0x243f6a8885a308d3 + p).shuffle(o)
        f.writelines("%s %d\n" % x for x in o)
PY
gc=${CLIENT:-$1/build/goblinctl}
$1/build/bench/origin --port-file $d/oport --manifest $d/pop >/dev/null 2>$d/origin.log &
OPID=$!
for i in $(seq 50); do [ -s $d/oport ] && break; sleep 0.1; done
OPORT=$(cat $d/oport)
for r in $(seq $R); do for b in "$@"; do
	: >$d/gd.log
	${GD_CPUS:+taskset -c $GD_CPUS} $b/build/goblind --store $d/st --no-memcache --http-port 0 --memory 256M --small-memory 64M --max-item 8G \
		--mirror http://127.0.0.1:$OPORT --ssd-size ${SSD:-3G} --max-conns 4096 --http-timeout 0 ${EXTRA:-} 2>$d/gd.log &
	pid=$!
	port=
	for i in $(seq 100); do
		port=$(sed -n 's/.*http on [^ ]*:\([0-9]*\).*/\1/p' $d/gd.log | head -1)
		[ -n "$port" ] && break; sleep 0.05
	done
	$gc bench --proto http --host 127.0.0.1 --port $port --no-store --sweep --conns 1 --verify --keys $N --size manifest:$d/pop >/dev/null 2>&1
	sync; echo 3 > /proc/sys/vm/drop_caches
	ppid=
	if [ -n "${RAWTRACE:-}" ]; then
		# every syscall of goblind's threads
		perf record -q -k CLOCK_MONOTONIC -e raw_syscalls:sys_enter -e raw_syscalls:sys_exit \
			-p $pid -o $RAWTRACE.$(basename $b).$r 2>/dev/null &
		ppid=$!; sleep 0.5
	fi
	if [ -n "${PERF:-}" ]; then
		perf record -q -g -p $pid -o $PERF.$(basename $b).$r 2>/dev/null &
		ppid=$!; sleep 0.5
	fi
	if [ -n "${TRACE:-}" ]; then
		# the worker's syscalls at the turn of each request, to time
		# its idle before the request (gapsys.py)
		perf record -q -a -k CLOCK_MONOTONIC -e syscalls:sys_exit_writev -e syscalls:sys_exit_read \
			-e syscalls:sys_enter_epoll_wait -e syscalls:sys_exit_epoll_wait \
			-e syscalls:sys_enter_sendto -e syscalls:sys_exit_recvfrom -e sched:sched_wakeup -e sched:sched_switch \
			-o $TRACE.$(basename $b).$r 2>/dev/null &
		ppid=$!; sleep 0.5
	fi
	cpu0=$(awk '{ print $14 + $15 }' /proc/$pid/stat); t0=$(date +%s%N)
	idle0=$(awk '/^cpu / { print $5 + $6 }' /proc/stat)
	dev=$(basename "$(df --output=source $d | tail -1)")
	ds0=$(awk -v d=$dev '$3 == d { print $4, $6, $7, $13, $14 }' /proc/diskstats)
	res=$(${CL_CPUS:+taskset -c $CL_CPUS} $gc bench --proto http --host 127.0.0.1 --port $port --no-store --sweep --conns 1 --keys $((3 * N)) --size manifest:$d/meas --csv $d/csv 2>&1 | grep '^RESULT')
	cpu1=$(awk '{ print $14 + $15 }' /proc/$pid/stat); t1=$(date +%s%N)
	idle1=$(awk '/^cpu / { print $5 + $6 }' /proc/stat)
	ds1=$(awk -v d=$dev '$3 == d { print $4, $6, $7, $13, $14 }' /proc/diskstats)
	# the device over the passes: its reads, their mean size and time,
	# the share of the time it had one in flight, and the mean in flight
	disk=$(echo $ds0 $ds1 $(( (t1 - t0) / 1000000 )) | awk '{ n = $6 - $1; printf "reads=%d read_kib=%.0f read_ms=%.2f disk_busy=%.2f disk_qd=%.2f", n, ($7 - $2) / 2 / (n ? n : 1), ($8 - $3) / (n ? n : 1), ($9 - $4) / $11, ($10 - $5) / $11 }')
	busy="server_busy=$(awk -v c=$((cpu1 - cpu0)) -v t=$((t1 - t0)) -v hz=$(getconf CLK_TCK) 'BEGIN { printf "%.2f", c / hz / (t / 1e9) }')"
	busy="$busy machine_busy=$(awk -v i=$((idle1 - idle0)) -v t=$((t1 - t0)) -v n=$(nproc) -v hz=$(getconf CLK_TCK) 'BEGIN { printf "%.2f", n - i / hz / (t / 1e9) }')"
	[ -n "$ppid" ] && { kill -INT $ppid; wait $ppid; }
	ttfb=$(echo "$res" | grep -o 'ttfb_us=[0-9.]*/[0-9.]*' | head -1)
	bw=$(echo "$res" | grep -o 'mib_per_s=[0-9.]*')
	per=$(python3 - $d/csv <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
k = [c for c in rows[0] if 'first' in c and 'payload' not in c][0] if rows else None
s = [c for c in rows[0] if 'sent' in c][0] if rows else None
print(' '.join('%.0f' % ((int(x[k]) - int(x[s])) / 1000) for x in rows))
PY
)
	fio=
	if [ -n "${FIO:-}" ]; then
		fio_huge fio --name=stream --filename=$d/st/ssd/data --readonly --rw=read \
			--bs=1M --direct=1 --ioengine=io_uring --iodepth=${FIO_DEPTH:-4} \
			--mem=shmhuge --output-format=json >$d/fio.json 2>/dev/null
		fio=$(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print("fio_mib=%.0f" % (j["jobs"][0]["read"]["bw"] / 1024))' $d/fio.json)
		fio="$fio $(python3 - $d/csv ${fio#fio_mib=} <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
bw = statistics.median(int(x["bytes"]) / 1048576 * 1e9 /
                       (int(x["last_byte_ns"]) - int(x["sent_ns"])) for x in rows)
print("per_request_mib=%.0f vs_fio=%.2f" % (bw, bw / float(sys.argv[2])))
PY
)"
	fi
	bp=$(curl -s http://127.0.0.1:$port/_goblin/stats | grep -o '"busy_poll[a-z_]*": *[0-9]*' | tr -d '" ' | tr '\n' ' ')
	echo "$(date -u +%T) r=$r $b ${EXTRA:-} $ttfb $bw $busy $disk $fio $bp per-request: $per"
	kill $pid; wait $pid 2>/dev/null; rm -rf $d/st
done; done
kill $OPID; wait
