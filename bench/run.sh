#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# bench/run.sh: every benchmark, in order (`make bench`).  Results go to
# bench/results/.  Add later benchmarks below.
#   bench/run.sh [ENGINE-VS-FIO OPTIONS] [--goblinfs GOBLINFS OPTIONS]
#                [--rocksdb [ENGINE-VS-ROCKSDB OPTIONS]]
# Options before --goblinfs go to bench/engine-vs-fio.sh, those after it to
# bench/goblinfs.sh (e.g. bench/run.sh --reps 5 --goblinfs --reps 5).
# bench/coldtail.sh, bench/overload.sh, bench/vs-memcached.sh,
# bench/vs-vinyl.sh (--cache-ram 6G, as its report of record: 25 minutes),
# bench/resp.sh, bench/rdma.sh (the ring's latency shootout; its --rxe
# guest run is by hand), bench/crash.sh (20 minutes of kill -9 rounds)
# and, last, bench/soak.sh (30 minutes) run with their defaults.
# bench/engine-vs-rocksdb.sh runs only when --rocksdb is given (WEB at 1/8,
# long), with the options after it (bench/run.sh --rocksdb --quick).
set -euo pipefail
cd "$(dirname "$0")/.."

engine_args=()
goblinfs_args=()
rocksdb_args=()
rocksdb=0
to=engine
for a in "$@"; do
	case $a in
	--goblinfs) to=goblinfs; continue ;;
	--rocksdb) to=rocksdb; rocksdb=1; continue ;;
	esac
	case $to in
	engine) engine_args+=("$a") ;;
	goblinfs) goblinfs_args+=("$a") ;;
	rocksdb) rocksdb_args+=("$a") ;;
	esac
done

bash bench/engine-vs-fio.sh "${engine_args[@]}"
bash bench/goblinfs.sh "${goblinfs_args[@]}"
bash bench/coldtail.sh
bash bench/overload.sh
bash bench/vs-memcached.sh
bash bench/vs-vinyl.sh --cache-ram 6G
bash bench/resp.sh
bash bench/rdma.sh
bash bench/crash.sh
if [ "$rocksdb" = 1 ]; then
	bash bench/engine-vs-rocksdb.sh "${rocksdb_args[@]}"
fi
bash bench/soak.sh
