#!/usr/bin/env bash
# make fuzz-long: every libFuzzer target under build/fuzz/ fuzzes for
# FUZZ_TIME seconds, FUZZ_JOBS targets at once (one per core).  Each runs
# in a scratch corpus under build/fuzz-long/<target>/ seeded from the
# checked-in test/fuzz/corpus_<target>; a crash does not end the target's
# time: its input is kept and the fuzzer starts again for what is left.
# Afterwards the inputs that add coverage are merged (-merge=1, which
# keeps only inputs with new features, the smallest first) into the
# checked-in corpus, and the summary goes to bench/results/fuzz.md.
#
#   FUZZ_TIME=600 FUZZ_JOBS=2 bash test/fuzz/fuzz-long.sh [target...]
set -u
cd "$(dirname "$0")/../.."
FUZZ_TIME=${FUZZ_TIME:-600}
FUZZ_JOBS=${FUZZ_JOBS:-2}
FUZZ_OUT=${FUZZ_OUT:-bench/results/fuzz.md}
FUZZ_MAXLEN=${FUZZ_MAXLEN:-}	# empty: libFuzzer's default
FUZZ_MERGE=${FUZZ_MERGE:-1}	# 0: do not touch the checked-in corpora
top=build/fuzz-long

targets=()
if [ $# -gt 0 ]; then
	for t in "$@"; do targets+=("build/fuzz/${t#build/fuzz/}"); done
else
	for f in build/fuzz/fuzz_*; do [ -x "$f" ] && targets+=("$f"); done
fi
[ ${#targets[@]} -gt 0 ] || { echo "fuzz-long: no targets: run make fuzz" >&2; exit 1; }

csize() {	# files and bytes of a corpus directory
	local n b
	n=$(find "$1" -maxdepth 1 -type f | wc -l)
	b=$(find "$1" -maxdepth 1 -type f -printf '%s\n' | awk '{s+=$1} END {print s+0}')
	echo "$n $b"
}

# Fuzz one target for FUZZ_TIME seconds; leaves $top/<name>/result.
fuzz_one() {
	local bin=$1 name corpus dir scratch art start now left runs=0
	name=$(basename "$bin")
	corpus=test/fuzz/corpus_${name#fuzz_}
	dir=$top/$name scratch=$top/$name/corpus art=$top/$name/artifacts
	rm -rf "$dir"
	mkdir -p "$scratch" "$art" "$corpus"
	read -r before_n before_b < <(csize "$corpus")
	cp "$corpus"/* "$scratch"/ 2>/dev/null
	start=$(date +%s)
	: >"$dir/log"
	while :; do
		now=$(date +%s)
		left=$((FUZZ_TIME - (now - start)))
		[ $left -gt 0 ] || break
		runs=$((runs + 1))
		echo "=== run $runs: $left s left" >>"$dir/log"
		"$bin" -max_total_time=$left -timeout=25 -rss_limit_mb=2048 \
		    -print_final_stats=1 -artifact_prefix="$art/" \
		    ${FUZZ_MAXLEN:+-max_len=$FUZZ_MAXLEN} \
		    "$scratch" >>"$dir/log" 2>&1
		rc=$?
		[ $rc -eq 0 ] && break
		# a crash, leak or timeout: its input is in $art; go on
		[ $runs -ge 50 ] && break
	done
	secs=$(( $(date +%s) - start ))
	# executions summed over the runs; the last stats line's cov and ft
	execs=$(awk -F': *' '/^stat::number_of_executed_units/ {s+=$NF} END {print s+0}' "$dir/log")
	last=$(grep -E '^#[0-9]+' "$dir/log" | grep -E 'cov: ' | tail -1)
	cov=$(sed -nE 's/.* cov: ([0-9]+).*/\1/p' <<<"$last")
	ft=$(sed -nE 's/.* ft: ([0-9]+).*/\1/p' <<<"$last")
	rss=$(awk -F': *' '/^stat::peak_rss_mb/ {if ($NF+0>m) m=$NF+0} END {print m+0}' "$dir/log")
	read -r scratch_n _ < <(csize "$scratch")
	if [ "$FUZZ_MERGE" = 1 ]; then
		"$bin" -merge=1 -timeout=25 -rss_limit_mb=2048 \
		    ${FUZZ_MAXLEN:+-max_len=$FUZZ_MAXLEN} \
		    "$corpus" "$scratch" >"$dir/merge.log" 2>&1 ||
			echo "merge failed: see $dir/merge.log" >>"$dir/log"
	fi
	read -r after_n after_b < <(csize "$corpus")
	crashes=$(find "$art" -type f | wc -l)
	echo "$name $secs $runs $execs ${cov:-?} ${ft:-?} $rss $before_n $before_b $scratch_n $after_n $after_b $crashes" >"$dir/result"
}

mkdir -p "$top"
started=$(date -u '+%Y-%m-%d %H:%M:%S UTC')
t0=$(date +%s)
running=0
for bin in "${targets[@]}"; do
	if [ $running -ge "$FUZZ_JOBS" ]; then
		wait -n
		running=$((running - 1))
	fi
	echo "fuzz-long: $(basename "$bin") for ${FUZZ_TIME}s"
	fuzz_one "$bin" &
	running=$((running + 1))
done
wait
wall=$(( $(date +%s) - t0 ))

# the summary
mkdir -p "$(dirname "$FUZZ_OUT")"
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
dirty=$(git status --porcelain -- netd store test/fuzz 2>/dev/null | grep -v corpus_ | head -1)
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
{
	echo "# Fuzzing: make fuzz-long"
	echo
	echo "- command: \`make fuzz-long FUZZ_TIME=$FUZZ_TIME FUZZ_JOBS=$FUZZ_JOBS\`" \
	     "(test/fuzz/fuzz-long.sh; nice $(nice))"
	echo "- started: $started, wall time ${wall} s"
	echo "- commit: $commit${dirty:+ (with uncommitted changes)}"
	echo "- machine: $(nproc) CPUs ($cpu), $(uname -sr);" \
	     "shared with other sessions, so exec/s are not benchmarks"
	echo "- compiler: $(${CLANG:-clang-14} --version 2>/dev/null | head -1)," \
	     "-fsanitize=fuzzer,address,undefined -O1"
	echo
	echo "Each target ran in a scratch corpus seeded from its checked-in one;"
	echo "\"runs\" counts fuzzer starts (more than 1: it was restarted after a"
	echo "crash); cov and ft are from libFuzzer's last stats line; \"found\" is"
	echo "the scratch corpus at the end; the checked-in corpus got what"
	echo "\`-merge=1\` kept (only inputs with new features)."
	echo
	echo "| target | seconds | runs | executions | exec/s | cov | ft | peak RSS MB | corpus before (files/bytes) | found | corpus after (files/bytes) | crashes |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
	for bin in "${targets[@]}"; do
		r=$top/$(basename "$bin")/result
		[ -f "$r" ] || continue
		read -r name secs runs execs cov ft rss bn bb sn an ab cr <"$r"
		eps=$(( secs > 0 ? execs / secs : 0 ))
		echo "| $name | $secs | $runs | $execs | $eps | $cov | $ft | $rss | $bn / $bb | $sn | $an / $ab | $cr |"
	done
	echo
	any=0
	for bin in "${targets[@]}"; do
		art=$top/$(basename "$bin")/artifacts
		for f in "$art"/*; do
			[ -f "$f" ] || continue
			[ $any = 1 ] || { echo "## Crash, leak and timeout inputs"; echo; any=1; }
			echo "- $(basename "$bin"): \`$(basename "$f")\`" \
			     "($(stat -c %s "$f") bytes), base64:"
			echo
			echo '```'
			head -c 4096 "$f" | base64 -w 76
			echo '```'
		done
	done
	[ $any = 1 ] || echo "No crash, leak or timeout input in any target."
} >"$FUZZ_OUT"
cat "$FUZZ_OUT"
