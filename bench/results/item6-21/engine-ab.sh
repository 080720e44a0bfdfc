#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# engine-ab.sh ROUNDS NAME=TREE...: issue 21 item 6, the embedded engine
# against RocksDB side by side: each tree's own bench/engine-vs-rocksdb.sh
# (its vsrocks is built on its store) with --engines goblin,rocksdb --reps
# 1 and $ENGINE_ARGS (--scale 1/8, the run of record's), once a tree a
# round, the trees' order rotating.  One line a run and engine on stdout,
# as web-ab.sh's (sum.py sums them up): round, tree name, goblin, rocksdb
# or fio (the sequential write ceiling), then RESULT and vsrocks's
# SUMMARY fields, with populate1_s, the one-thread populate.
set -u
rounds=${1:?rounds}
shift
trees=("$@")
[ ${#trees[@]} -ge 2 ] || { echo "usage: engine-ab.sh ROUNDS NAME=TREE..." >&2; exit 2; }
W=${W:-/var/tmp/engine-ab}
mkdir -p "$W-reports"
n=${#trees[@]}
for r in $(seq 1 "$rounds"); do
	for i in $(seq 0 $((n - 1))); do
		t=${trees[$(((i + r - 1) % n))]}
		name=${t%%=*}
		# shellcheck disable=SC2086 # ENGINE_ARGS is a list of options
		bash "${t#*=}/bench/engine-vs-rocksdb.sh" --engines goblin,rocksdb \
			--reps 1 ${ENGINE_ARGS:---scale 1/8} --dir "$W" \
			--out "$W-reports/engine-$name-r$r.md" >/dev/null 2>&1
		for e in goblin rocksdb; do
			echo "r$r $name $e RESULT $(sed -n 's/^SUMMARY //p' \
				"$W/logs/$e-1.log" 2>/dev/null) populate1_s=$(sed -n \
				's/^populate: .* s=\([0-9.]*\) .*/\1/p' \
				"$W/logs/$e-1-serial.log" 2>/dev/null)"
		done
		echo "r$r $name fio RESULT mib_per_s=$(python3 -c '
import json, sys
print("%.1f" % (json.load(open(sys.argv[1]))["jobs"][0]["write"]["bw_bytes"] / 1048576))
' "$W/logs/fio-1.json" 2>/dev/null || echo missing)"
	done
done
