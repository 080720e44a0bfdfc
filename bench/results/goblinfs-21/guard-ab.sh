#!/bin/bash
# guard-ab.sh GOBLINFS...: open + first 4 KiB (fsread first4k after drop_caches)
# through each goblinfs build on one ART store (goblinfs.sh section 2's
# objects, /var/tmp/goblin-fsbench/art-src), 5 rounds, alternating
set -u
src=/var/tmp/goblin-fsbench/art-src
d=/tmp/abart; st=$d/store; mnt=$d/mnt; mkdir -p $mnt
rm -rf $st
/work/main/build/goblinctl --store $st --memory 264M populate $src >/dev/null 2>&1
(cd $src && find . -type f | sed 's|^\./||' | python3 -c 'import random,sys; k=sys.stdin.read().split(); random.Random(1).shuffle(k); print("\n".join(k))') > $d/order
mapfile -t keys < $d/order
for r in 1 2 3 4 5; do for b in "$@"; do
	$b --memory 264M --store $st $mnt -f 2>$d/err & pid=$!
	for i in $(seq 100); do mountpoint -q $mnt && break; sleep 0.1; done
	/work/main/build/bench/fsread first4k "${keys[@]/#/$mnt/}" >/dev/null
	sync; echo 3 > /proc/sys/vm/drop_caches
	echo "r=$r $b $(/work/main/build/bench/fsread first4k "${keys[@]/#/$mnt/}")"
	fusermount3 -u $mnt; wait $pid
done; done
