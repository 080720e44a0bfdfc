#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# c2ab.sh: vs-memcached.sh --quick --cases 1,2 with $OLD's goblind and this
# tree's in turn, twice; prints the RESULT lines of each run, reports in
# /var/tmp/c2ab-BUILD-ROUND.md
set -euo pipefail
cd "$(dirname "$0")/../../../.."
for r in 1 2; do
	for b in old new; do
		g=$PWD/build/goblind
		[ $b = new ] || g=${OLD:?OLD=the old goblind binary}
		echo "== $b round $r $(date +%T)"
		GOBLIND=$g bash bench/vs-memcached.sh --quick --cases 1,2 \
			--dir "/var/tmp/vm-$b" --out "/var/tmp/c2ab-$b-$r.md" 2>&1 |
			grep RESULT
	done
done
