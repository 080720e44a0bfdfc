#!/bin/bash
# gapm.sh ROUNDS BUILD...: goblind --mirror of each BUILD (a worktree with
# build/) in turn, vs-vinyl's BIG flags, in front of bench/origin; a
# 200,000-byte object (all RAM head) fetched once, then gap.py's TTFB at
# the gaps GAPS (us of client idle before each request; default 0 3000)
set -u
R=$1; shift
here=$(cd "$(dirname "$0")" && pwd)
d=${DIR:-/var/tmp/ttfb21g}; rm -rf $d; mkdir -p $d
printf 'k200 200000\nbig0 314572800\n' >$d/man
$1/build/bench/origin --port-file $d/oport --manifest $d/man >/dev/null 2>$d/origin.log &
OPID=$!
for i in $(seq 50); do [ -s $d/oport ] && break; sleep 0.1; done
OPORT=$(cat $d/oport)
for r in $(seq $R); do for b in "$@"; do
	: >$d/gd.log
	$b/build/goblind --store $d/st --no-memcache --http-port 0 --memory 256M --small-memory 64M --max-item 8G \
		--mirror http://127.0.0.1:$OPORT --ssd-size 3G --max-conns 4096 --http-timeout 0 ${EXTRA:-} 2>$d/gd.log &
	pid=$!
	port=
	for i in $(seq 100); do
		port=$(sed -n 's/.*http on [^ ]*:\([0-9]*\).*/\1/p' $d/gd.log | head -1)
		[ -n "$port" ] && break; sleep 0.05
	done
	curl -s -o /dev/null http://127.0.0.1:$port/${KEY:-k200}
	echo "$(date -u +%T) r=$r $b $(python3 $here/gap.py $port ${KEY:-k200} ${N:-300} ${GAPS:-0 3000} | tr '\n' ' ')"
	kill $pid; wait $pid 2>/dev/null; rm -rf $d/st
done; done
kill $OPID; wait
