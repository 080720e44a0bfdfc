# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# rotate.sh, sourced by web-ab.sh, c2-ab.sh and engine-ab.sh.

# rotate USAGE ROUNDS RUN NAME=THING...: ROUNDS rounds of `RUN rROUND NAME
# THING` once for each NAME=THING, the order rotating by one each round;
# USAGE is printed and the script exits 2 with fewer than two.
rotate() {
	local usage=$1 rounds=$2 run=$3 r i b
	shift 3
	local items=("$@")
	[ ${#items[@]} -ge 2 ] || { echo "usage: $usage" >&2; exit 2; }
	for r in $(seq 1 "$rounds"); do
		for i in $(seq 0 $((${#items[@]} - 1))); do
			b=${items[$(((i + r - 1) % ${#items[@]}))]}
			"$run" "r$r" "${b%%=*}" "${b#*=}"
		done
	done
}

# fio_mib JSON read|write: the MiB/s of fio's first job, or "missing"
fio_mib() {
	python3 -c '
import json, sys
job = json.load(open(sys.argv[1]))["jobs"][0]
print("%.1f" % (job[sys.argv[2]]["bw_bytes"] / 1048576))
' "$1" "$2" 2>/dev/null || echo missing
}
