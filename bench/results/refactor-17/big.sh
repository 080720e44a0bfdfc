#!/bin/bash
# big.sh ROUNDS: vs-vinyl --quick's BIG part alone, old and new goblind
# alternating; prints per-request MiB/s and which worker thread served
set -u
R=${1:-4}; EXTRA=${EXTRA:-}
d=/var/tmp/b8; rm -rf $d; mkdir -p $d
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
gc=/work/main/build/goblinctl
/work/main/build/bench/origin --port-file $d/oport --manifest $d/pop >/dev/null 2>$d/origin.log &
OPID=$!; sleep 1; OPORT=$(cat $d/oport)
for r in $(seq $R); do for s in old new; do
	gd=/work/old/build/goblind; [ $s = new ] && gd=/work/main/build/goblind
	port=$((26000 + RANDOM % 1000))
	$gd --store $d/st --no-memcache --http-port $port --memory 256M --small-memory 64M --max-item 8G \
		--mirror http://127.0.0.1:$OPORT --ssd-size 3G --max-conns 4096 --http-timeout 0 $EXTRA >$d/$s.log 2>&1 &
	pid=$!; sleep 1
	$gc bench --proto http --host 127.0.0.1 --port $port --no-store --sweep --conns 1 --verify --keys 4 --size manifest:$d/pop >/dev/null 2>&1
	sync; echo 3 > /proc/sys/vm/drop_caches
	res=$($gc bench --proto http --host 127.0.0.1 --port $port --no-store --sweep --conns 1 --keys 12 --size manifest:$d/meas 2>&1 | grep '^RESULT' | grep -o 'mib_per_s=[0-9.]*')
	thr=$(for t in /proc/$pid/task/*; do echo "$(cat $t/comm):$(awk '{print $14+$15, $39}' $t/stat)"; done | sort -t: -k2 -nr | head -3 | tr '\n' ' ')
	echo "$(date -u +%T) r=$r $s $res  $thr"
	kill $pid; wait $pid 2>/dev/null; rm -rf $d/st
done; done
kill $OPID; wait
