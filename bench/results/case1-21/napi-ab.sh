#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# napi-ab.sh [ROUNDS]: case 1n at 10 Gbit/s by n10.sh, alternating
# memcached, goblind, memcached NAPI=1, goblind NAPI=1, ROUNDS (3) times;
# case1-21.md, "threaded NAPI on the veths".
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
for r in $(seq "${1:-3}"); do
	for cfg in "MC=1" "" "MC=1 NAPI=1" "NAPI=1"; do
		echo "=== $(date +%T) round $r cfg [${cfg:-goblind}]"
		env $cfg bash "$here/n10.sh" 2>&1
	done
done
