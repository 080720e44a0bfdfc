#!/bin/bash
# A = /work/main, B = /work/wt-731 (731cc94), alternating
cd /tmp/b21
for i in ${ROUNDS:-1 2 3}; do
  for side in A B; do
    if [ $side = A ]; then root=/work/main; else root=/work/wt-731; fi
    echo "$(date -u +%H:%M:%S) start $side$i load $(cut -d' ' -f1-3 /proc/loadavg)" >> progress
    (cd $root && bench/goblinfs.sh --quick --dir /var/tmp/b21-$side --out /tmp/b21/$side$i.md) > /tmp/b21/$side$i.log 2>&1
    echo "$(date -u +%H:%M:%S) end $side$i rc $? load $(cut -d' ' -f1-3 /proc/loadavg)" >> progress
  done
done
