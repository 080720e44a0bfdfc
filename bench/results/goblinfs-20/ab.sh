#!/bin/bash
# A = /work/wt-fs (h20-rest), B = /tmp/wt-731 (731cc94), alternating
cd /tmp/b20
for i in ${ROUNDS:-1 2 3}; do
  for side in A B; do
    if [ $side = A ]; then root=/work/wt-fs; extra="--append-size 1G"; else root=/tmp/wt-731; extra=; fi
    echo "$(date -u +%H:%M:%S) start $side$i load $(cut -d' ' -f1-3 /proc/loadavg)" >> progress
    (cd $root && bench/goblinfs.sh --quick $extra --dir /var/tmp/b20-$side --out /tmp/b20/$side$i.md) > /tmp/b20/$side$i.log 2>&1
    echo "$(date -u +%H:%M:%S) end $side$i rc $? load $(cut -d' ' -f1-3 /proc/loadavg)" >> progress
  done
done
