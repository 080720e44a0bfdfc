#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# c2-ab.sh ROUNDS NAME=GOBLIND...: issue 21 item 6, case 2 (disk-sized ART
# against memcached with extstore) side by side: bench/vs-memcached.sh
# --cases 2 --disk-reps 1 once with each build's goblind a round, the
# builds' order rotating from round to round; the client and extstore are
# this tree's for all.  One line a run and server on stdout, as
# web-ab.sh's (sum.py sums them up): round, build name, disk-goblind,
# disk-extstore or fio (the ceiling the run read after goblind), RESULT.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
rounds=${1:?rounds}
shift
builds=("$@")
[ ${#builds[@]} -ge 2 ] || { echo "usage: c2-ab.sh ROUNDS NAME=GOBLIND..." >&2; exit 2; }
W=${W:-/var/tmp/c2-ab}
mkdir -p "$W-reports"
n=${#builds[@]}
for r in $(seq 1 "$rounds"); do
	for i in $(seq 0 $((n - 1))); do
		b=${builds[$(((i + r - 1) % n))]}
		GOBLIND=${b#*=} bash "$root/bench/vs-memcached.sh" --cases 2 \
			--disk-reps 1 --dir "$W" --out "$W-reports/c2-${b%%=*}-r$r.md" \
			>/dev/null 2>&1
		for s in goblind extstore; do
			echo "r$r ${b%%=*} disk-$s $(grep '^RESULT' \
				"$W/logs/disk-$s-r1.txt" 2>/dev/null || echo "RESULT missing")"
		done
		echo "r$r ${b%%=*} fio RESULT mib_per_s=$(python3 -c '
import json, sys
print("%.1f" % (json.load(open(sys.argv[1]))["jobs"][0]["read"]["bw_bytes"] / 1048576))
' "$W/logs/disk-r1-fio.json" 2>/dev/null || echo missing)"
	done
done
