#!/bin/bash
# x.sh ORDER...: a fresh store, then each of ORDER (new|append) timed, 1 GiB
set -e
G=/work/wt-fs/build/goblinfs; D=/var/tmp/apx; rm -rf $D; mkdir -p $D/mnt $D/st
[ -s /tmp/apx/src.done ] || { head -c 1073741824 /dev/urandom > /tmp/apx/src; echo 1 > /tmp/apx/src.done; }
cat /tmp/apx/src > /dev/null
$G --memory 256M --store $D/st -f $D/mnt 2>$D/log & P=$!
sleep 1; mkdir -p $D/mnt/app
for side in "$@"; do
  rm -f $D/mnt/app/f
  [ $side = new ] || cat /tmp/apx/src > $D/mnt/app/f
  sync
  t0=$(date +%s.%N)
  if [ $side = new ]; then cat /tmp/apx/src > $D/mnt/app/f; else cat /tmp/apx/src >> $D/mnt/app/f; fi
  t1=$(date +%s.%N)
  echo "$side $(python3 -c "print('%.3f' % ($t1-$t0))")"
done
rm -f $D/mnt/app/f
fusermount3 -u $D/mnt; wait $P
