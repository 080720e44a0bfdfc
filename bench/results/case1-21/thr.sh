#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# thr.sh PID SECS: the CPU each thread of PID used over SECS (utime +
# stime, per cent of one CPU; interrupt and softirq time is not in them)
set -eu
declare -A a
for t in "/proc/$1/task/"*; do a[$t]=$(awk '{ print $14 + $15 }' "$t/stat"); done
sleep "$2"
for t in "/proc/$1/task/"*; do
	b=$(awk '{ print $14 + $15 }' "$t/stat")
	echo "$(cat "$t/comm") $(( (b - ${a[$t]:-0}) * 100 / ($2 * $(getconf CLK_TCK)) ))%"
done
