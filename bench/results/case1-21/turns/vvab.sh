#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# vvab.sh ROUNDS OLD NEW: bench/vs-vinyl.sh --quick with goblind binary OLD,
# then NEW (GOBLIND=...), ROUNDS times in turn; the same client, origin,
# Varnish and nginx each time.  Prints each run's per-system RESULT line
# (BIG TTFB and MiB/s, WEB fill and MiB/s at each concurrency) and its
# ratios; the reports go to $DIR (default /var/tmp/vvab).
set -euo pipefail
root=$(cd "$(dirname "$0")/../../../.." && pwd)
rounds=$1 old=$2 new=$3 d=${DIR:-/var/tmp/vvab}
mkdir -p "$d"
for r in $(seq "$rounds"); do
	for b in old new; do
		bin=$old; [ $b = new ] && bin=$new
		echo "round $r $b $(date -u +%H:%M:%S) load $(cut -d' ' -f1 /proc/loadavg)"
		GOBLIND=$bin bash "$root/bench/vs-vinyl.sh" --quick \
			--out "$d/$b-$r.md" >"$d/$b-$r.log" 2>&1 ||
			{ echo "  failed: $d/$b-$r.log"; continue; }
		grep '^RESULT' "$d/$b-$r.md" | tr ' ' '\n' | grep -v '^RESULT' |
			paste -sd ' ' | sed 's/^/  /'
	done
done
