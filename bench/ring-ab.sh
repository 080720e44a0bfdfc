#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# ring-ab: side-by-side round trips of goblind --ring builds (issue 22):
# each DIR holds a goblind and a goblinctl (a build/ of another commit);
# one goblind of each runs at once (--cores 1), and ROUNDS times, in turn,
# a 32-byte GET bench of 1 s for each (goblinctl bench --transport ring,
# its own client, one request in flight), then the same with the client
# pinned to the worker's CPU, with bench/pingpong --mode ring (the floor)
# before each round.  Prints one line per round and the medians:
#   RESULT name=DIR p50_us=MEDIAN same_cpu_p50_us=MEDIAN
# usage: bench/ring-ab.sh [--rounds N] DIR...
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
PP=$root/build/bench/pingpong
rounds=5
[ "${1:-}" = --rounds ] && { rounds=$2; shift 2; }
[ $# -gt 0 ] || { echo "usage: bench/ring-ab.sh [--rounds N] DIR..." >&2; exit 129; }
[ -x "$PP" ] || { echo "ring-ab: $PP is not built (make)" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/goblin-ring-ab.XXXXXX")
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	rm -rf "$tmp"
}
trap cleanup EXIT
i=0
for d in "$@"; do
	mkdir -p "$tmp/$i"
	"$d/goblind" --store "$tmp/$i/store" --memory 64M --small-memory 16M \
		--no-hugetlb --no-mlock --ssd-size 1G --cores 1 \
		--memcache-port 0 --http-port 0 --ring "$tmp/$i/ring.sock" \
		2>"$tmp/$i/log" &
	pids+=($!)
	i=$((i + 1))
done
for i in $(seq 0 $(($# - 1))); do
	for _ in $(seq 100); do
		grep -q 'ring on unix socket' "$tmp/$i/log" && break
		sleep 0.1
	done
done
cpu0=$(taskset -pc $$ | sed 's/.*: *//; s/[-,].*//')
p50() { grep '^RESULT' | sed -n 's/.* p50_us=\([0-9.]*\).*/\1/p'; }
for r in $(seq "$rounds"); do
	line="round $r floor_ns=$("$PP" --mode ring --secs 0.5 | sed -n 's/.* p50_ns=\([0-9]*\).*/\1/p')"
	i=0
	for d in "$@"; do
		a=$("$d/goblinctl" --transport ring --host "$tmp/$i/ring.sock" \
			bench --size 32 --keys 100 --duration 1 | p50)
		b=$(taskset -c "$cpu0" "$d/goblinctl" --transport ring \
			--host "$tmp/$i/ring.sock" bench --size 32 --keys 100 \
			--duration 1 | p50)
		line="$line | $d $a same_cpu $b"
		echo "$i $a $b" >>"$tmp/all"
		i=$((i + 1))
	done
	echo "$line"
done
med() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
i=0
for d in "$@"; do
	echo "RESULT name=$d p50_us=$(awk -v i=$i '$1 == i { print $2 }' "$tmp/all" | med) same_cpu_p50_us=$(awk -v i=$i '$1 == i { print $3 }' "$tmp/all" | med)"
	i=$((i + 1))
done
