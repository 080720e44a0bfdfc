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
. "$here/rotate.sh"
CONNS=${CONNS:-16 64 256 1024}
W=${W:-/var/tmp/web-ab}

one() {	# one ROUND NAME GOBLIND
	GOBLIND=$3 W=$W NOBIG=1 SYSTEMS='' CONNS=$CONNS \
		bash "$root/bench/results/web-21/web-c1024.sh" >/dev/null
	# shellcheck disable=SC2086 # CONNS is a list
	for p in populate $(printf 'c%s ' $CONNS); do
		echo "$1 $2 $p $(grep '^RESULT' "$W/d/logs/web-goblind-$p.txt" \
			2>/dev/null || echo "RESULT missing")"
	done
}
rotate "web-ab.sh ROUNDS NAME=GOBLIND..." "${1:?rounds}" one "${@:2}"
