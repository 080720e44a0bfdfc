#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# n10.sh [SERVER OPTIONS...]: vs-memcached.sh's case 1n for one server
# alone, for diagnosis: the server in namespace N-s on CPU 1 with case 1's
# flags (MC=1: memcached holding every value), populated over the
# server's loopback, then read for $DUR s (12) by goblinctl bench on CPU 0
# in N-c across the veth pair shaped to $RATE (10gbit) by net_up
# (bench/lib.sh).  Prints the RESULT figures, then the server side's tbf
# drops and overlimits and TCP counters (retransmitted segments, SACK
# recoveries), and each side's veth receive drops and TCP queue counters
# (TCPOFOQueue: segments that came out of order).  RPS=1: the client's
# veth hands its receive work to CPU 0 and the server's to CPU 1 (rps_cpus).
# NAPI=1: each veth receives through NAPI (GRO on) in a thread (threaded),
# the client's thread pinned to CPU 0 and the server's to CPU 1, so that
# a sender wakes the receiving side's thread once a batch rather than
# running its TCP receive itself.  TSO goes off with it: veth hands a TSO
# packet of a TCP socket to the peer's NAPI only when the sending device
# has no TSO (veth_skb_is_eligible_for_gro); with TSO on, the threads
# never run.
# MTU=BYTES: both veths' MTU (65535 with NAPI=1: each segment the size of
# a TSO one, so the receive needs no more packets than with TSO on).
# SYSCTL="KEY=VALUE ...": sysctl -w them in the server's namespace first.
# PERF=S: perf record -a -g of CPU 1 for S s of the measured phase.
# Each request's row is kept in $DIR/req.csv (goblinctl bench --csv); the
# store is removed at exit.
# STAT=S: the count of writev, sendmsg, epoll_wait and io_uring_enter calls
# in S s of it.
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
. "$root/bench/lib.sh"
gd=${GD:-$root/build/goblind} gctl=$root/build/goblinctl
d=${DIR:-/var/tmp/n10}
rm -rf "$d"
mkdir -p "$d"
N=gsn$$ port=21211 pid=
art=pareto:262144,583208,0.3,8388608
net_up $N "${RATE:-10gbit}"
trap '[ -z "$pid" ] || kill $pid 2>/dev/null; sleep 0.5; net_down $N; rm -rf "$d/s"' EXIT
for kv in ${SYSCTL:-}; do
	ip netns exec $N-s sysctl -qw "$kv"
done
if [ -n "${RPS:-}" ]; then
	ip netns exec $N-c sh -c "echo 1 >/sys/class/net/$N-vc/queues/rx-0/rps_cpus"
	ip netns exec $N-s sh -c "echo 2 >/sys/class/net/$N-vs/queues/rx-0/rps_cpus"
fi
if [ -n "${MTU:-}" ]; then
	for e in s c; do
		ip -n $N-$e link set $N-v$e mtu "$MTU"
	done
fi
if [ -n "${NAPI:-}" ]; then
	# the threads' names hold the device's name cut to 15 bytes: each
	# side's are the napi/ threads that setting threaded starts
	for e in c s; do
		before=$(pgrep '^napi/' || true)
		ip netns exec $N-$e ethtool -K $N-v$e gro on tso off
		ip netns exec $N-$e sh -c "echo 1 >/sys/class/net/$N-v$e/threaded"
		new=$(pgrep '^napi/' | grep -vxF "${before:-none}" || true)
		[ -n "$new" ] || { echo "n10.sh: no NAPI thread for $N-v$e" >&2; exit 1; }
		for t in $new; do taskset -pc $([ $e = c ] && echo 0 || echo 1) $t >/dev/null; done
	done
fi
if [ -n "${MC:-}" ]; then
	ip netns exec $N-s taskset -c 1 memcached -u root -l 0.0.0.0 -p $port \
		-U 0 -t 1 -m 3328 -I 8m -c 1024 2>"$d/server.log" &
else
	ip netns exec $N-s taskset -c 1 "$gd" --store "$d/s" \
		--memcache-port $port --no-http --listen-address 0.0.0.0 \
		--cores 1 --max-item 8M --memory 128M --ram-head 64K \
		--small-memory 16M --no-hugetlb "$@" 2>"$d/server.log" &
fi
pid=$!
for _ in $(seq 400); do
	ip netns exec $N-s nc -z 127.0.0.1 $port 2>/dev/null && break
	kill -0 $pid 2>/dev/null || { cat "$d/server.log" >&2; exit 1; }
	sleep 0.05
done
ip netns exec $N-s taskset -c 0 "$gctl" bench --host 127.0.0.1 --port $port \
	--threads 1 --server-pid $pid --keys 2048 --size $art --populate-only \
	--conns 16 >"$d/pop.txt"
[ -z "${PERF:-}" ] || (sleep 4; perf record -a -g -C 1 -o "$d/perf.data" \
	-- sleep "$PERF" >/dev/null 2>&1) &
[ -z "${STAT:-}" ] || (sleep 4; perf stat -a -x, -e syscalls:sys_enter_writev \
	-e syscalls:sys_enter_sendmsg -e syscalls:sys_enter_epoll_wait \
	-e syscalls:sys_enter_io_uring_enter \
	-- sleep "$STAT" 2>&1 >/dev/null | awk -F, '{ printf "%s %s ", $3, $1 } END { print "" }') &
ip netns exec $N-c taskset -c 0 "$gctl" bench --host 10.252.0.1 --port $port \
	--threads 1 --server-pid $pid --keys 2048 --size $art --no-store \
	--conns 16 --duration "${DUR:-12}" --csv "$d/req.csv" | grep ^RESULT | tee "$d/result.txt" |
	sed 's/.*ops_per_s=\([0-9]*\) mib_per_s=\([0-9.]*\).*completion_us=\([^ ]*\).*server_cpu_s=\(.*\)/ops \1 mib \2 compl \3 srvcpu \4/'
ip netns exec $N-s tc -s qdisc show dev $N-vs |
	grep -o 'dropped [0-9]*, overlimits [0-9]*' | tr '\n' ' '
ip netns exec $N-s nstat -a 2>/dev/null |
	awk '/TcpRetransSegs|TcpExtTCPLostRetransmit|TcpOutSegs|TcpExtTCPSackRecovery /{ printf "%s=%s ", $1, $2 }'
echo
for e in s c; do
	echo "$e: $(ip netns exec $N-$e ip -s link show dev $N-v$e |
		awk 'f { print "rx drop", $4; f = 0 } /RX:/ { f = 1 }') $(ip netns exec $N-$e nstat -a 2>/dev/null |
		awk '/Drop|Prune|Collapse|OFO/ { printf "%s=%s ", $1, $2 }')"
done
