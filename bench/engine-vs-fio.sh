#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# engine-vs-fio: the embedded engine (build/bench/engine) against fio on the
# same file system in the same run; writes bench/results/engine-<date>.md.
set -euo pipefail

usage() {
	cat >&2 <<USAGE
usage: bench/engine-vs-fio.sh [--dir DIR] [--total SIZE] [--big-size SIZE]
       [--memory SIZE] [--passes N] [--reps N] [--out FILE] [-- ENGINE-ARGS]
  --dir DIR       scratch directory for the store and fio's file
                  (default /var/tmp/goblin-bench)
  --total SIZE    ART bytes (default 1536M)
  --big-size SIZE the one big object, and fio's file (default 1G)
  --memory SIZE   RAM head pool, large enough for every head (default 1G)
  --passes N      TTFB passes (default 3)
  --reps N        engine/fio pairs, alternating order (default 3)
  --out FILE      report (default bench/results/engine-<date>.md)
USAGE
	exit 129
}

root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/lib.sh"
invocation="bench/engine-vs-fio.sh${*:+ $*}"
dir=/var/tmp/goblin-bench
total=1536M
big=1G
memory=1G
passes=3
reps=3
out=
extra=()
while [ $# -gt 0 ]; do
	case $1 in
	--dir) dir=$2; shift 2 ;;
	--total) total=$2; shift 2 ;;
	--big-size) big=$2; shift 2 ;;
	--memory) memory=$2; shift 2 ;;
	--passes) passes=$2; shift 2 ;;
	--reps) reps=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--) shift; extra=("$@"); break ;;
	-h|--help) usage ;;
	*) echo "engine-vs-fio: unknown option '$1'" >&2; usage ;;
	esac
done
date_tag=$(date -u +%Y-%m-%d)
[ -n "$out" ] || out=$root/bench/results/engine-$date_tag.md

engine=$root/build/bench/engine
make -C "$root" --no-print-directory build/bench/engine >&2
command -v fio >/dev/null || { echo "engine-vs-fio: fio is missing (make deps)" >&2; exit 1; }

mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
store=$dir/store
fiofile=$dir/fio-seq.dat
logs=$dir/logs
rm -rf "$logs"
mkdir -p "$logs"
trap 'rm -f "$fiofile"' EXIT

# The page cache cannot help either side (both read O_DIRECT), but start
# each measurement from the same state anyway, where we may.
drop_caches_if() {
	drop_caches 2>/dev/null || true
}

engine_cmd=("$engine" --store "$store" --memory "$memory" --total "$total"
	--big-size "$big" --seed 1 --passes "$passes" "${extra[@]}")
fio_cmds "$fiofile" "$big"

run_engine() {
	local i=$1
	drop_caches_if
	echo "engine-vs-fio: rep $i: engine" >&2
	"${engine_cmd[@]}" --csv "$logs/engine-$i.csv" >"$logs/engine-$i.log" \
		2>"$logs/engine-$i.err" || {
		echo "engine-vs-fio: engine failed (rep $i), see $logs/engine-$i.{log,err}" >&2
		cat "$logs/engine-$i.err" >&2
	}
	grep -E '^(RESULT|DETAIL)' "$logs/engine-$i.log" >&2 || true
}

run_fio() {
	local i=$1
	rm -f "$fiofile"
	drop_caches_if
	echo "engine-vs-fio: rep $i: fio (fresh $big file)" >&2
	fio_huge "${fio_write_cmd[@]}" >"$logs/fio-write-$i.json"
	fio_huge "${fio_read_cmd[@]}" >"$logs/fio-read-$i.json"
	rm -f "$fiofile"
	python3 - "$logs/fio-read-$i.json" >&2 <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
print("fio read: %.1f MiB/s" % (j["jobs"][0]["read"]["bw_bytes"] / 2**20))
PY
}

for i in $(seq 1 "$reps"); do
	if [ $((i % 2)) -eq 1 ]; then
		run_engine "$i"; run_fio "$i"
	else
		run_fio "$i"; run_engine "$i"
	fi
done

# The machine, for the report.
machine_info "$dir" "$root" >"$logs/machine.txt"

mkdir -p "$(dirname "$out")"
python3 - "$logs" "$reps" "$out" "$date_tag" "$passes" "$invocation" \
	"$(printf '%q ' "${engine_cmd[@]}" | sed "s#$root/##g")--csv $logs/engine-N.csv" \
	"$(printf '%q ' "${fio_write_cmd[@]}")" \
	"$(printf '%q ' "${fio_read_cmd[@]}")" <<'PY'
import json, os, re, statistics, sys, datetime

logs, reps, out, date_tag, passes, inv, ecmd, fwcmd, frcmd = sys.argv[1:10]
reps = int(reps)

def kv(line):
    return {k: v for k, v in re.findall(r"(\w+)=([^\s]+)", line)}

runs = []
for i in range(1, reps + 1):
    text = open(os.path.join(logs, "engine-%d.log" % i)).read()
    r = {"log": text}
    for line in text.splitlines():
        if line.startswith("RESULT ") or line.startswith("DETAIL ") or \
           line.startswith("ttfb_us: "):
            r.update(kv(line))
        if line.startswith("workload: "):
            r["workload"] = line[len("workload: "):]
        if line.startswith("ttfb: "):
            r["ttfb_line"] = line
        if line.startswith("ttfb split: "):
            a, b = line.split(";", 1)
            r["split_open"] = kv(a)
            r["split_next"] = kv(b)
    fj = json.load(open(os.path.join(logs, "fio-read-%d.json" % i)))
    r["fio_mibps"] = fj["jobs"][0]["read"]["bw_bytes"] / 2**20
    wj = json.load(open(os.path.join(logs, "fio-write-%d.json" % i)))
    r["fio_write_mibps"] = wj["jobs"][0]["write"]["bw_bytes"] / 2**20
    runs.append(r)

def f(r, k):
    try:
        return float(r[k])
    except (KeyError, ValueError):
        return float("nan")

def med(k):
    v = [f(r, k) for r in runs]
    v = [x for x in v if x == x]
    return statistics.median(v) if v else float("nan")

order = ["engine, fio" if i % 2 == 1 else "fio, engine"
         for i in range(1, reps + 1)]
ttfb50 = med("ttfb_p50_us")
tail = med("big_tail_mibps")
fio = statistics.median(r["fio_mibps"] for r in runs)
# the verdict uses the median of the side-by-side pairs' ratios: each pair
# ran back to back, so it cancels most of the device's drift
ratio = statistics.median(f(r, "big_tail_mibps") / r["fio_mibps"]
                          for r in runs if r["fio_mibps"])
ok_ttfb = ttfb50 < 20
ok_ratio = ratio >= 0.9
errors = sum(int(r.get("errors", "1")) for r in runs)

L = []
w = L.append
w("# Engine benchmark: TTFB and tail bandwidth against fio (%s)" % date_tag)
w("")
w("Generated by `bench/engine-vs-fio.sh` on %s UTC." %
  datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M"))
w("")
w("## Result")
w("")
w("| target | measured (median of %d) | met |" % reps)
w("|---|---|---|")
w("| TTFB of RAM-head objects, median < 20 us | %.2f us | %s |" %
  (ttfb50, "yes" if ok_ttfb else "**no**"))
w("| tail read / fio sequential read >= 0.9 (median of per-pair ratios) "
  "| %.3f (medians: %.1f / %.1f MiB/s) | %s |"
  % (ratio, tail, fio, "yes" if ok_ratio else "**no**"))
w("")
w("Errors reported by the engine (misses, read errors, wrong bytes), all "
  "runs: %d." % errors)
w("")
w("## Machine")
w("")
w("```")
w(open(os.path.join(logs, "machine.txt")).read().rstrip())
w("```")
w("")
w("## Commands")
w("")
w("Each repetition writes fresh data and reads it at once on both sides "
  "(the virtual disk is faster on freshly written data): the engine puts "
  "the big object and reads it back right away; fio writes a fresh file "
  "then reads it. Order alternates: %s." % "; ".join(
      "rep %d: %s" % (i + 1, o) for i, o in enumerate(order)))
w("")
w("```")
w("# the whole run (from the top of the repository)")
w(inv)
w("# engine (creates the store fresh, removes it at the end)")
w(ecmd.strip())
w("# fio: write a fresh file, then the measured read")
w(fwcmd.strip())
w(frcmd.strip())
w("```")
w("")
w("The caches are dropped (`sync; echo 3 > /proc/sys/vm/drop_caches`) "
  "before each side; both read with O_DIRECT.")
w("")
w("## Workload (ART, seed 1)")
w("")
w("Realised: %s" % runs[0].get("workload", "?"))
w("")
w("Plus one big object `big:00000000` (the `--big-size`), put after the ART "
  "reads and read back at once; its tail is what the fio ratio uses.")
w("")
w("## Time to first byte (RAM heads)")
w("")
w("From just before `gs_get_open()` to the return of the first "
  "`gs_reader_next()` chunk, CLOCK_MONOTONIC, every object whose head "
  "`gs_inspect()` shows in RAM, %s passes in independently shuffled orders; "
  "the rest of each object is then read (and byte-checked in pass 1)." %
  passes)
w("")
w("| rep | n | p50 us | p90 us | p99 us | p99.9 us | mean us | max us |")
w("|---|---|---|---|---|---|---|---|")
for i, r in enumerate(runs):
    w("| %d | %s | %s | %s | %s | %s | %s | %s |" % (
        i + 1, r.get("ttfb_n", "?"), r.get("p50", "?"), r.get("p90", "?"),
        r.get("p99", "?"), r.get("ttfb_p999_us", "?"),
        r.get("mean", "?"), r.get("max", "?")))
w("| median | | %.2f | %.2f | %.2f | %.2f | %.2f | |" % (
    ttfb50, med("ttfb_p90_us"), med("ttfb_p99_us"), med("ttfb_p999_us"),
    med("ttfb_mean_us")))
w("")
w("Where the time goes (same opens; microseconds):")
w("")
w("| rep | gs_get_open p50 | p90 | p99 | first gs_reader_next p50 | p90 | p99 |")
w("|---|---|---|---|---|---|---|")
for i, r in enumerate(runs):
    so, sn = r.get("split_open", {}), r.get("split_next", {})
    w("| %d | %s | %s | %s | %s | %s | %s |" % (
        i + 1, so.get("p50", "?"), so.get("p90", "?"), so.get("p99", "?"),
        sn.get("p50", "?"), sn.get("p90", "?"), sn.get("p99", "?")))
w("")
w("## Bandwidth (MiB/s)")
w("")
w("| rep | order | populate ART | ART tail (beyond head) | ART all bytes "
  "| big put | big tail | fio write | fio read | big tail / fio |")
w("|---|---|---|---|---|---|---|---|---|---|")
for i, r in enumerate(runs):
    w("| %d | %s | %s | %s | %s | %s | %s | %.1f | %.1f | %.3f |" % (
        i + 1, order[i], r.get("populate_mibps", "?"),
        r.get("art_tail_mibps", "?"), r.get("art_all_mibps", "?"),
        r.get("big_put_mibps", "?"), r.get("big_tail_mibps", "?"),
        r["fio_write_mibps"], r["fio_mibps"],
        f(r, "big_tail_mibps") / r["fio_mibps"]))
w("| median | | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.3f |" % (
    med("populate_mibps"), med("art_tail_mibps"), med("art_all_mibps"),
    med("big_put_mibps"), tail,
    statistics.median(r["fio_write_mibps"] for r in runs), fio, ratio))
w("")
w("ART tail: every ART object read whole, one at a time in key order; the "
  "rate counts the bytes beyond the RAM head over the phase's wall time. "
  "Big tail: the big object's bytes beyond its head over open-to-last-byte. "
  "The ratio is the median of the per-pair ratios (big tail / fio read of "
  "the same repetition).")
w("")
fr = [r["fio_mibps"] for r in runs]
bt = [f(r, "big_tail_mibps") for r in runs]
pr = sorted(b / a for a, b in zip(fr, bt))
w("Run-to-run noise of the device: fio read ranged %.0f-%.0f MiB/s and the "
  "big tail %.0f-%.0f MiB/s across the %d repetitions; per-pair ratios "
  "ranged %.3f-%.3f (median %.3f). A verdict on the 0.9 target is only as "
  "good as this spread allows." % (min(fr), max(fr), min(bt), max(bt), reps,
                                   pr[0], pr[-1], statistics.median(pr)))
w("")
w("## Engine output")
w("")
for i, r in enumerate(runs):
    w("<details><summary>rep %d</summary>" % (i + 1))
    w("")
    w("```")
    w(r["log"].rstrip())
    w("```")
    w("</details>")
    w("")
open(out, "w").write("\n".join(L))
print("engine-vs-fio: wrote %s: ttfb p50 %.2f us (target < 20: %s), "
      "tail %.1f, fio %.1f MiB/s, median pair ratio %.3f (target >= 0.9: %s)" % (
          out, ttfb50, "met" if ok_ttfb else "NOT met", tail, fio, ratio,
          "met" if ok_ratio else "NOT met"))
PY
