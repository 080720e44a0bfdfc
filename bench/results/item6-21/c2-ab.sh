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
. "$here/rotate.sh"
W=${W:-/var/tmp/c2-ab}
mkdir -p "$W-reports"

one() {	# one ROUND NAME GOBLIND
	GOBLIND=$3 bash "$root/bench/vs-memcached.sh" --cases 2 \
		--disk-reps 1 --dir "$W" --out "$W-reports/c2-$2-$1.md" \
		>/dev/null 2>&1
	for s in goblind extstore; do
		echo "$1 $2 disk-$s $(grep '^RESULT' "$W/logs/disk-$s-r1.txt" \
			2>/dev/null || echo "RESULT missing")"
	done
	echo "$1 $2 fio RESULT mib_per_s=$(fio_mib "$W/logs/disk-r1-fio.json" read)"
}
rotate "c2-ab.sh ROUNDS NAME=GOBLIND..." "${1:?rounds}" one "${@:2}"
