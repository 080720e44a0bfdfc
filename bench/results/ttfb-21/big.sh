#!/bin/bash
# big.sh ROUNDS BUILD...: vs-vinyl --quick's BIG part alone (the same four
# objects, population with --verify, page cache dropped, three shuffled
# passes, the same goblind flags), each BUILD (a worktree with build/) in
# turn, ROUNDS times; prints each run's TTFB p50/p90 and per-request MiB/s
# and every request's TTFB in us (from --csv).  One goblinctl (CLIENT,
# default the first build's) for all, so the client is the same.
set -u
R=$1; shift
d=${DIR:-/var/tmp/ttfb21}; rm -rf $d; mkdir -p $d
python3 - "$d" <<'PY'
import random, sys
d = sys.argv[1]
r = random.Random(1)
objs = [("big:%04d" % i, r.randint(256 << 20, 512 << 20)) for i in range(4)]
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
		--mirror http://127.0.0.1:$OPORT --ssd-size 3G --max-conns 4096 --http-timeout 0 ${EXTRA:-} 2>$d/gd.log &
	pid=$!
	port=
	for i in $(seq 100); do
		port=$(sed -n 's/.*http on [^ ]*:\([0-9]*\).*/\1/p' $d/gd.log | head -1)
		[ -n "$port" ] && break; sleep 0.05
	done
	$gc bench --proto http --host 127.0.0.1 --port $port --no-store --sweep --conns 1 --verify --keys 4 --size manifest:$d/pop >/dev/null 2>&1
	sync; echo 3 > /proc/sys/vm/drop_caches
	ppid=
	if [ -n "${RAWTRACE:-}" ]; then
		# every syscall of goblind's threads
		perf record -q -k CLOCK_MONOTONIC -e raw_syscalls:sys_enter -e raw_syscalls:sys_exit \
			-p $pid -o $RAWTRACE.$(basename $b).$r 2>/dev/null &
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
	res=$(${CL_CPUS:+taskset -c $CL_CPUS} $gc bench --proto http --host 127.0.0.1 --port $port --no-store --sweep --conns 1 --keys 12 --size manifest:$d/meas --csv $d/csv 2>&1 | grep '^RESULT')
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
	bp=$(curl -s http://127.0.0.1:$port/_goblin/stats | grep -o '"busy_poll[a-z_]*": *[0-9]*' | tr -d '" ' | tr '\n' ' ')
	echo "$(date -u +%T) r=$r $b $ttfb $bw $bp per-request: $per"
	kill $pid; wait $pid 2>/dev/null; rm -rf $d/st
done; done
kill $OPID; wait
