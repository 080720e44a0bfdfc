#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# dstat.sh SECS [DEV]: DEV's (vda) reads over SECS from /sys/block/DEV/stat,
# as iostat computes them: reads/s, MiB/s, r_await (ms from a read's
# submission to its completion), util (the share of time with a read in
# flight) and aqu (the mean reads in flight)
set -eu
dev=${2:-vda}
read -r a1 _ a3 a4 _ _ _ _ _ a10 a11 _ <"/sys/block/$dev/stat"
sleep "$1"
read -r b1 _ b3 b4 _ _ _ _ _ b10 b11 _ <"/sys/block/$dev/stat"
awk -v n=$((b1 - a1)) -v s=$((b3 - a3)) -v t=$((b4 - a4)) \
	-v u=$((b10 - a10)) -v q=$((b11 - a11)) -v d="$1" 'BEGIN {
	printf "reads/s %.0f MiB/s %.0f r_await %.2f ms util %.0f%% aqu %.1f\n",
		n / d, s * 512 / 1048576 / d, n ? t / n : 0, u / 10 / d, q / 1000 / d }'
