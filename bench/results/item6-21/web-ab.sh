#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# web-ab.sh ROUNDS NAME=GOBLIND...: issue 21 item 6, WEB side by side.
# vs-vinyl.sh --quick's WEB for goblind alone, at $SCALE (1/64): populate,
# then a pass at each of $CONNS (16 64 256 1024) connections
# (../web-21/web-c1024.sh with NOBIG=1 SYSTEMS=''), once with each
# build's goblind a round, the builds' order rotating from round to
# round.  The client, origin and flags are this tree's for all.  One line
# a pass and phase on stdout: round, build name, phase, the bench's
# RESULT fields (sum.py sums them up).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
rounds=${1:?rounds}
shift
builds=("$@")
[ ${#builds[@]} -ge 2 ] || { echo "usage: web-ab.sh ROUNDS NAME=GOBLIND..." >&2; exit 2; }
CONNS=${CONNS:-16 64 256 1024}
W=${W:-/var/tmp/web-ab}
n=${#builds[@]}
for r in $(seq 1 "$rounds"); do
	for i in $(seq 0 $((n - 1))); do
		b=${builds[$(((i + r - 1) % n))]}
		GOBLIND=${b#*=} W=$W NOBIG=1 SYSTEMS='' CONNS=$CONNS \
			bash "$root/bench/results/web-21/web-c1024.sh" >/dev/null
		# shellcheck disable=SC2086 # CONNS is a list
		for p in populate $(printf 'c%s ' $CONNS); do
			f=$W/d/logs/web-goblind-$p.txt
			echo "r$r ${b%%=*} $p $(grep '^RESULT' "$f" 2>/dev/null ||
				echo "RESULT missing")"
		done
	done
done
