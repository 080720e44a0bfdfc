#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# web-c1024.sh [vs-vinyl.sh options]: vs-vinyl.sh --quick's WEB for nginx
# and goblind only, C256 (a pass that warms it, as in the script of
# record) then C1024, from a trimmed copy of the script in $W
# (/var/tmp/web).  SYSTEMS= ("nginx"), CONNS= ("256 1024") and SCALE=
# (1/64) choose other peers, concurrencies and WEB scale; goblind is
# $GOBLIND as in vs-vinyl.sh.
# The copy runs --quick's BIG first for each server but goblind-origin
# (the runs of web-21.md did); NOBIG=1 leaves BIG out.
# PERF=1: perf record $PERF_OPTS (-a -g) for $PERF_S (2) s, 0.4 s into
# each server's C1024 pass, into $W/perf-{nginx,goblind}.data.
# The report step fails (no BIG rows): the RESULT lines are what it prints.
set -u
root=$(cd "$(dirname "$0")/../../.." && pwd)
W=${W:-/var/tmp/web}
SYSTEMS=${SYSTEMS-nginx}
CONNS=${CONNS:-256 1024}
SCALE=${SCALE:-1/64}
mkdir -p "$W"
# shellcheck disable=SC2016 # the patterns match the script's $ literally
big='big_systems=$systems'
[ -n "${NOBIG:-}" ] && big='big_systems='
# shellcheck disable=SC2016
sed -e "s|^root=.*|root=$root|" \
	-e "s|^systems=\"varnish nginx\"|systems=\"$SYSTEMS\"|" \
	-e "s|web_scale=1/64 web_conns=\"16 256 1024\"|web_scale=$SCALE web_conns=\"$CONNS\"|" \
	-e 's|^\[\[ " \$systems " == \*" goblind "\* \]\] && big_systems=.*|:|' \
	-e "s|^big_systems=\\\$systems\$|$big|" \
	"$root/bench/vs-vinyl.sh" >"$W/vv.sh"
# a pattern that no longer matches vs-vinyl.sh would run all of it
if [ "$(grep -c -x -F -e "systems=\"$SYSTEMS\"" -e "$big" -e : "$W/vv.sh")" != 3 ] ||
	! grep -q -F "web_scale=$SCALE web_conns=\"$CONNS\"" "$W/vv.sh"; then
	echo "web-c1024.sh: vs-vinyl.sh changed" >&2
	exit 1
fi
rm -rf "$W/d"
if [ -n "${PERF:-}" ]; then
	(for s in nginx goblind; do
		while [ ! -e "$W/d/logs/web-$s-c1024.txt" ]; do sleep 0.2; done
		sleep 0.4
		# shellcheck disable=SC2086 # PERF_OPTS is a list of options
		perf record -q ${PERF_OPTS:--a -g} -o "$W/perf-$s.data" -- sleep "${PERF_S:-2}" >/dev/null 2>&1
	done) &
fi
bash "$W/vv.sh" --quick --dir "$W/d" --out "$W/vv.md" "$@" 2>&1 |
	grep -o "web-[a-z]*-c[0-9]*: RESULT.*secs=[0-9.]* requests=[0-9]* ops_per_s=[0-9]* mib_per_s=[0-9.]*"
wait
