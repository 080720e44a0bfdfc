#!/bin/bash
# first4k-ab.sh BUILD_DIR [REPS]: the open + first 4 KiB part of
# bench/goblinfs.sh --quick alone (300 ART objects, the same shuffled order,
# a head pool for every head, promoted by one pass, then REPS passes each
# after drop_caches) through BUILD_DIR/goblinfs; the ART set, gen and fsread
# are this tree's build/bench's, the same for every build; prints each
# pass's p50 in us
set -e
b=$1; reps=${2:-3}
m=$(cd "$(dirname "$0")/../../.." && pwd)/build/bench
d=/tmp/bis
if [ ! -d $d/artsrc ]; then
	$m/gen ART --count 300 --out $d/artw >/dev/null
	$m/gen --materialize $d/artsrc --manifest $d/artw/ART.population >/dev/null
	python3 - $d/artw/ART.population > $d/order <<'PY'
import random, sys
keys = [l.split()[0].replace(":", "/") for l in open(sys.argv[1]) if l.strip()]
random.Random(1).shuffle(keys)
print("\n".join(keys))
PY
fi
mapfile -t keys < $d/order
rm -rf $d/store; mkdir -p $d/mnt
"$b"/goblinctl --store $d/store --memory 214M populate $d/artsrc >/dev/null 2>&1
"$b"/goblinfs --memory 214M --store $d/store $d/mnt -f 2>$d/gfs.err &
pid=$!
for _ in $(seq 100); do mountpoint -q $d/mnt && break; sleep 0.1; done
$m/fsread first4k "${keys[@]/#/$d/mnt/}" >/dev/null
out=
for _ in $(seq "$reps"); do
	sync; echo 3 > /proc/sys/vm/drop_caches
	r=$($m/fsread first4k "${keys[@]/#/$d/mnt/}" | sed -n 's/.*p50_us=\([0-9.]*\).*/\1/p')
	out="$out $r"
done
fusermount3 -u $d/mnt; wait $pid || true
echo "p50:$out"
