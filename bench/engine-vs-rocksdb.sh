#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# engine-vs-rocksdb: Goblin's embedded API against RocksDB (plain and
# BlobDB, with and without a cache) on the WEB workload, one engine at a
# time on the same file system: populate, drop caches, replay the measured
# manifest serially (build/bench/vsrocks), then the replay's chunks through
# an ideal link (build/bench/netsim).  Every engine populates twice, with
# --put-threads threads (then replays) and with one (populate only); its
# populate time is the better of the two.  Writes
# bench/results/engine-vs-rocksdb.md (--quick: engine-vs-rocksdb-quick.md);
# the last line printed is
#   RESULT populate_ratio=X replay_ratio=Y ttfb_ratio=Z
# (RocksDB time / Goblin time, RocksDB being the better of rocksdb and
# blobdb, the issue's uncached configurations, for each figure).
set -euo pipefail

usage() {
	cat >&2 <<USAGE
usage: bench/engine-vs-rocksdb.sh [--quick] [--scale F] [--reps N] [--dir DIR]
       [--engines LIST] [--rates LIST] [--out FILE] [-- VSROCKS-ARGS]
  --quick         WEB at 1/64 (under 5 minutes here); default 1/8
  --scale F       WEB scale (default 1/8, --quick 1/64)
  --reps N        repetitions, engine order rotating (default 3)
  --dir DIR       scratch directory on the file system under test
                  (default /var/tmp/goblin-rocks)
  --engines LIST  comma-separated (default
                  goblin,rocksdb,blobdb,rocksdb-cache,blobdb-cache)
  --rates LIST    link rates for netsim, Gbit/s (default 0.937,10)
  --put-threads N populate with N threads (default 16), and once more with
                  one; each engine's better time counts
  --out FILE      report (default bench/results/engine-vs-rocksdb.md,
                  --quick: bench/results/engine-vs-rocksdb-quick.md)
  VSROCKS-ARGS    passed to every vsrocks run (--memory, --small-memory,
                  --min-blob-size, --no-verify)
USAGE
	exit 129
}

root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/lib.sh"
invocation="bench/engine-vs-rocksdb.sh${*:+ $*}"
quick=0
scale=
reps=3
dir=/var/tmp/goblin-rocks
engines=goblin,rocksdb,blobdb,rocksdb-cache,blobdb-cache
rates=0.937,10
put_threads=16
out=
extra=()
while [ $# -gt 0 ]; do
	case $1 in
	--quick) quick=1; shift ;;
	--scale) scale=$2; shift 2 ;;
	--reps) reps=$2; shift 2 ;;
	--dir) dir=$2; shift 2 ;;
	--engines) engines=$2; shift 2 ;;
	--rates) rates=$2; shift 2 ;;
	--put-threads) put_threads=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--) shift; extra=("$@"); break ;;
	-h|--help) usage ;;
	*) echo "engine-vs-rocksdb: unknown option '$1'" >&2; usage ;;
	esac
done
[ -n "$scale" ] || { [ "$quick" = 1 ] && scale=1/64 || scale=1/8; }
if [ -z "$out" ]; then
	out=$root/bench/results/engine-vs-rocksdb.md
	if [ "$quick" = 1 ]; then
		out=$root/bench/results/engine-vs-rocksdb-quick.md
	fi
fi
case ,$engines, in
*,goblin,*) ;;
*) echo "engine-vs-rocksdb: --engines must include goblin" >&2; exit 129 ;;
esac

make -C "$root" --no-print-directory build/bench/gen build/bench/vsrocks \
	build/bench/netsim >&2
gen=$root/build/bench/gen
vsrocks=$root/build/bench/vsrocks
netsim=$root/build/bench/netsim

mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
db=$dir/db
logs=$dir/logs
chunks=$dir/chunks.txt
rm -rf "$logs" "$db"
mkdir -p "$logs" "$dir/web"
trap 'rm -rf "$db" "$chunks" "$dir/ceiling.dat"' EXIT

"$gen" WEB --scale "$scale" --out "$dir/web" >"$logs/gen.txt"
rate_args=()
IFS=, read -r -a rate_list <<<"$rates"
for r in "${rate_list[@]}"; do rate_args+=(--rate "$r"); done
IFS=, read -r -a engine_list <<<"$engines"
n=${#engine_list[@]}
vs_cmd=("$vsrocks" --dir "$db" --population "$dir/web/WEB.population"
	--measured "$dir/web/WEB.measured" --chunks "$chunks"
	--put-threads "$put_threads" "${extra[@]}")
serial_cmd=("$vsrocks" --dir "$db" --population "$dir/web/WEB.population"
	--measured "$dir/web/WEB.measured" --put-threads 1 --populate-only
	"${extra[@]}")

# run_vsrocks ENGINE LOG CMD...: one vsrocks run in a fresh directory
run_vsrocks() {
	local e=$1 log=$2
	shift 2
	rm -rf "$db" "$chunks"
	if ! "$@" --engine "$e" >"$log.log" 2>"$log.err"; then
		echo "engine-vs-rocksdb: $e failed, see $log.{log,err}" >&2
		cat "$log.err" >&2
		exit 1
	fi
}

# device_ceiling LOG: what the device gives a writer of the corpus that
# writes each byte once, sequentially, with O_DIRECT (fio, a fresh file);
# the command goes to $logs/fio-cmd.txt for the report
device_ceiling() {
	local bytes cmd
	bytes=$(sed -n 's/^population: .* total=\([0-9]*\) .*/\1/p' \
		"$logs/gen.txt")
	cmd=(fio --name=ceiling --filename="$dir/ceiling.dat" --rw=write
		--bs=1M --size="$(( bytes >> 20 ))M" --direct=1
		--ioengine=io_uring --iodepth=16 --mem=shmhuge
		--output-format=json)
	printf '%q ' "${cmd[@]}" >"$logs/fio-cmd.txt"
	rm -rf "$db"
	fio_huge "${cmd[@]}" >"$1"
	rm -f "$dir/ceiling.dat"
}

start=$(date +%s)
for i in $(seq 1 "$reps"); do
	echo "engine-vs-rocksdb: rep $i/$reps: fio" >&2
	device_ceiling "$logs/fio-$i.json"
	for k in $(seq 0 $((n - 1))); do	# rep i starts at engine i-1
		e=${engine_list[$(((k + i - 1) % n))]}
		echo "engine-vs-rocksdb: rep $i/$reps: $e" >&2
		if [ "$put_threads" != 1 ]; then
			run_vsrocks "$e" "$logs/$e-$i-serial" "${serial_cmd[@]}"
			grep '^populate:' "$logs/$e-$i-serial.log" >&2
		fi
		run_vsrocks "$e" "$logs/$e-$i" "${vs_cmd[@]}"
		grep '^SUMMARY' "$logs/$e-$i.log" >&2
		"$netsim" "${rate_args[@]}" "$chunks" >"$logs/$e-$i.netsim"
	done
done
elapsed=$(($(date +%s) - start))
machine_info "$dir" "$root" >"$logs/machine.txt"

mkdir -p "$(dirname "$out")"
python3 "$root/bench/vsrocks-report.py" "$logs" "$out" "$reps" "$engines" \
	"$scale" "$quick" "$elapsed" "$invocation" \
	"$(printf '%q ' "${vs_cmd[@]}" | sed "s#$root/##g")--engine ENGINE" \
	"$(printf '%q ' "${serial_cmd[@]}" | sed "s#$root/##g")--engine ENGINE" \
	"$(printf '%q ' "$netsim" "${rate_args[@]}" | sed "s#$root/##g")$chunks"
stamp_report "$out"
