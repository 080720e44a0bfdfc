#!/bin/bash
set -u
d=/var/tmp/r17-bigc; rm -rf $d; mkdir -p $d
printf 'big:0000 402653184\nbig:0001 301989888\n' > $d/man
/work/main/build/bench/origin --port-file $d/oport --manifest $d/man >/dev/null 2>$d/origin.log &
OPID=$!; sleep 1; OPORT=$(cat $d/oport)
for s in old new; do
	gd=/work/old/build/goblind; [ $s = new ] && gd=/work/main/build/goblind
	port=$((26000 + RANDOM % 1000))
	$gd --store $d/$s --no-memcache --http-port $port --memory 256M --small-memory 64M --max-item 8G \
		--mirror http://127.0.0.1:$OPORT --ssd-size 2G --no-hugetlb --max-conns 4096 --http-timeout 0 >/dev/null 2>$d/$s.log &
	pid=$!; sleep 1
	curl -s -o /dev/null http://127.0.0.1:$port/big:0000; curl -s -o /dev/null http://127.0.0.1:$port/big:0001
	eval "P_$s=$port; PID_$s=$pid"
done
for r in 1 2; do for s in old new; do for c in old new; do
	eval "port=\$P_$s"
	gc=/work/old/build/goblinctl; [ $c = new ] && gc=/work/main/build/goblinctl
	sync; echo 3 > /proc/sys/vm/drop_caches
	echo "round=$r server=$s client=$c $($gc bench --proto http --host 127.0.0.1 --port $port --sweep --conns 1 --keys 2 --key-prefix big: --size manifest:$d/man --csv $d/c.csv 2>&1 | grep -o 'mib_per_s=[0-9.]*\|completion_us=[0-9./]*' | tr '\n' ' ')"
done; done; done
kill $PID_old $PID_new $OPID; wait; rm -rf $d
