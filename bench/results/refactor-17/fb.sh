#!/bin/bash
# issue 17 item 8: case 4 (FB, 100,000 small objects, memcache gets) of
# bench/vs-memcached.sh --quick, today's goblind (e0817d5) and the
# refactored one alternating, 5 rounds, one client (the new goblinctl)
set -u
gctl=/work/main/build/goblinctl
dir=/var/tmp/r17-fb
rm -rf $dir; mkdir -p $dir
start() { # SIDE
	local gd=/work/$1/build/goblind; [ $1 = new ] && gd=/work/main/build/goblind
	taskset -c 1 $gd --store $dir/$1 --memcache-port $2 --no-http --cores 1 \
		--max-item 8M --memory 2M --small-memory 150M --no-hugetlb >/dev/null 2>$dir/$1.log &
	echo $!
}
declare -A PID PORT
PORT[old]=23411; PORT[new]=23412
for s in old new; do
	PID[$s]=$(start $s ${PORT[$s]})
	sleep 1
	taskset -c 0 $gctl bench --host 127.0.0.1 --port ${PORT[$s]} --threads 1 \
		--keys 100000 --size fb_value --populate-only --conns 16 >/dev/null
done
for r in 1 2 3 4 5; do
	for s in old new; do
		taskset -c 0 $gctl bench --host 127.0.0.1 --port ${PORT[$s]} --threads 1 \
			--server-pid ${PID[$s]} --keys 100000 --size fb_value --no-store \
			--conns 16 --duration 8 | grep '^RESULT' | sed "s/^/round=$r side=$s /"
	done
done
kill ${PID[old]} ${PID[new]}; wait
rm -rf $dir
