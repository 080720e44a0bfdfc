#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# inflight.sh SECS [DEV]: the reads DEV (vda) has in flight, sampled about
# every millisecond for SECS: mean and deciles
set -eu
dev=${2:-vda}
end=$(( $(date +%s%N) + $1 * 1000000000 ))
while [ "$(date +%s%N)" -lt $end ]; do
	read -r r _ <"/sys/block/$dev/inflight"
	echo "$r"
	sleep 0.001
done | sort -n | awk '{ a[NR] = $1; s += $1 }
	END { printf "samples %d mean %.1f p10 %d p50 %d p90 %d\n", NR, s / NR,
		a[int(NR * .1) + 1], a[int(NR * .5) + 1], a[int(NR * .9) + 1] }'
