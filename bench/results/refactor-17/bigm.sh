#!/bin/bash
# GET of 384 MiB objects over HTTP from goblind --mirror's store (hits),
# old vs new, page cache dropped before each GET
set -u
d=/var/tmp/r17-bigm; rm -rf $d; mkdir -p $d
printf 'big:0 402653184\nbig:1 301989888\n' > $d/man
/work/main/build/bench/origin --port-file $d/oport --manifest $d/man >/dev/null 2>$d/origin.log &
OPID=$!; sleep 1; OPORT=$(cat $d/oport)
for s in old new; do
	gd=/work/old/build/goblind; [ $s = new ] && gd=/work/main/build/goblind
	port=$((25000 + RANDOM % 1000))
	taskset -c 1 $gd --store $d/$s --no-memcache --http-port $port --cores 1 --max-item 8G \
		--mirror http://127.0.0.1:$OPORT --ssd-size 2G --no-hugetlb --max-conns 4096 --http-timeout 0 >/dev/null 2>$d/$s.log &
	pid=$!; sleep 1
	curl -s -o /dev/null http://127.0.0.1:$port/big:0; curl -s -o /dev/null http://127.0.0.1:$port/big:1
	eval "P_$s=$port; PID_$s=$pid"
done
for r in 1 2 3; do for s in old new; do for k in 0 1; do
	eval "port=\$P_$s"
	sync; echo 3 > /proc/sys/vm/drop_caches
	taskset -c 0 curl -s -o /dev/null -D $d/h -w "round=$r side=$s key=$k ttfb=%{time_starttransfer} MiBps=%{speed_download}\n" http://127.0.0.1:$port/big:$k | awk '{split($5,a,"="); printf "%s %s %s %s %.0f\n",$1,$2,$3,$4,a[2]/1048576}'
done; done; done
grep -i 'x-cache\|age' $d/h
kill $PID_old $PID_new $OPID; wait; rm -rf $d
