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
here=$(cd "$(dirname "$0")" && pwd)
. "$here/rotate.sh"
W=${W:-/var/tmp/engine-ab}
mkdir -p "$W-reports"

one() {	# one ROUND NAME TREE
	# shellcheck disable=SC2086 # ENGINE_ARGS is a list of options
	bash "$3/bench/engine-vs-rocksdb.sh" --engines goblin,rocksdb \
		--reps 1 ${ENGINE_ARGS:---scale 1/8} --dir "$W" \
		--out "$W-reports/engine-$2-$1.md" >/dev/null 2>&1
	for e in goblin rocksdb; do
		echo "$1 $2 $e RESULT $(sed -n 's/^SUMMARY //p' \
			"$W/logs/$e-1.log" 2>/dev/null) populate1_s=$(sed -n \
			's/^populate: .* s=\([0-9.]*\) .*/\1/p' \
			"$W/logs/$e-1-serial.log" 2>/dev/null)"
	done
	echo "$1 $2 fio RESULT mib_per_s=$(fio_mib "$W/logs/fio-1.json" write)"
}
rotate "engine-ab.sh ROUNDS NAME=TREE..." "${1:?rounds}" one "${@:2}"
