#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# bench/run.sh: every benchmark, in order (`make bench`).  Results go to
# bench/results/.  Add later benchmarks below.
#   bench/run.sh [ENGINE-VS-FIO OPTIONS] [--goblinfs GOBLINFS OPTIONS]
# Options before --goblinfs go to bench/engine-vs-fio.sh, those after it to
# bench/goblinfs.sh (e.g. bench/run.sh --reps 5 --goblinfs --reps 5).
set -euo pipefail
cd "$(dirname "$0")/.."

engine_args=()
goblinfs_args=()
while [ $# -gt 0 ]; do
	if [ "$1" = --goblinfs ]; then
		shift
		goblinfs_args=("$@")
		break
	fi
	engine_args+=("$1")
	shift
done

bash bench/engine-vs-fio.sh "${engine_args[@]}"
bash bench/goblinfs.sh "${goblinfs_args[@]}"
