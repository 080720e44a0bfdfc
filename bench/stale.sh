#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# bench/stale.sh [--check] [REPORT...]: say at the top of each report of
# record whether it is older than the code it measures.  A report's
# commit is its "Measured on commit X" line (stamp_report, bench/lib.sh)
# or, in reports from before that line, its machine section's "git: X".
# The code a report measures is the source of the programs it runs and
# its own script (the map below); a commit after X that changes any of
# it makes the report older than its code, and the report gets a line
# under its title that says so, with the count and the newest such
# commit; a report measured on today's code loses that line.  --check
# changes nothing and exits 1 when a report is older than its code.
# Default REPORTs: vs-vinyl, vs-memcached, engine-vs-rocksdb, goblinfs
# (and their --quick reports), the newest coldtail-* and overload-*.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
res=$root/bench/results
check=0
[ "${1:-}" = --check ] && { check=1; shift; }

# code REPORT: the paths whose changes a report measures
code() {
	case $(basename "$1") in
	vs-vinyl*) echo store netd cli bench/origin.c bench/gen.c bench/vs-vinyl.sh ;;
	vs-memcached*) echo store netd cli bench/hddemu.c bench/vs-memcached.sh ;;
	engine-vs-rocksdb*) echo store bench/vsrocks.c bench/netsim.c \
		bench/vsrocks-report.py bench/engine-vs-rocksdb.sh ;;
	goblinfs*) echo store fs bench/fsread.c bench/goblinfs.sh ;;
	coldtail*) echo store bench/coldtail.c bench/hddemu.c bench/coldtail.sh ;;
	overload*) echo store bench/engine.c bench/overload.sh ;;
	*) return 1 ;;
	esac
}

if [ $# -eq 0 ]; then
	for f in vs-vinyl vs-vinyl-quick vs-memcached vs-memcached-quick \
		engine-vs-rocksdb engine-vs-rocksdb-quick goblinfs; do
		[ ! -e "$res/$f.md" ] || set -- "$@" "$res/$f.md"
	done
	for f in coldtail overload; do
		# shellcheck disable=SC2012 # dated names: the newest sorts last
		f=$(ls "$res/$f"-2*.md 2>/dev/null | tail -1)
		[ -z "$f" ] || set -- "$@" "$f"
	done
fi

older=0
for r in "$@"; do
	paths=$(code "$r") || { echo "stale: $r: not a report of record" >&2; exit 2; }
	c=$(sed -n 's/^Measured on commit \([0-9a-f]\{7,\}\).*/\1/p; s/^git: \([0-9a-f]\{7,\}\).*/\1/p' "$r" | head -1)
	if [ -z "$c" ] || ! git -C "$root" rev-parse -q --verify "$c^{commit}" >/dev/null; then
		echo "stale: $r: names no commit of this repository" >&2
		exit 2
	fi
	# the later commits that change it, newest first
	# shellcheck disable=SC2086 # $paths: a list of paths
	later=$(git -C "$root" log --format='%h (%cs)' "$c..HEAD" -- $paths)
	n=$(printf '%s' "$later" | grep -c . || true)
	line=
	if [ "$n" -gt 0 ]; then
		older=1
		last=${later%%$'\n'*}
		line="> **Older than the code it measures:** measured on $c; $n later commits change what it runs (${paths// /, }), the newest $last. \`bench/stale.sh\`, $(date -u +%Y-%m-%d)."
		echo "stale: $r: $n commits since $c"
	else
		echo "stale: $r: measured on today's code ($c)"
	fi
	[ "$check" = 0 ] || continue
	# the old line and the blank line before it go; the new one, if
	# any, goes under the title
	sed -i '2{/^$/{N;/\n> \*\*Older than the code it measures:\*\*/d}}' "$r"
	[ -z "$line" ] || sed -i "1a\\\n$line" "$r"
done
[ "$check" = 0 ] || exit "$older"
