#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# builds.sh ROUNDS BUILD...: case 1 (c1.sh, FIO=1: values served, then the
# device's ceiling) with the goblind of each BUILD (a worktree with
# build/goblind) in turn, ROUNDS times.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
rounds=$1
shift
for r in $(seq "$rounds"); do
	for b in "$@"; do
		out=$(GD=$b/build/goblind FIO=1 "$here/c1.sh" |
			sed 's/completion_us=[^ ]* //' | tr '\n' ' ')
		echo "round $r $(date -u +%H:%M:%S) $b: $out"
	done
done
