#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# soak (issue 16, item 6): goblind for a long time under everything at
# once, watching that nothing grows, nothing is wrong and nothing dies.
#   - mixed memcache and HTTP load (goblinctl bench, gets and sets, every
#     value got checked against its payload: --verify)
#   - ~1,000 connections: the busy ones plus idle memcache and HTTP ones,
#     slowloris request heads and slow readers of big values
#     (bench/soakconns.py, which checks every byte the slow readers get)
#   - writers putting several times the tiers' capacity (--ssd-size 512M),
#     so eviction runs all the time
#   - a mirror (a second goblind, --mirror) in front of bench/origin with
#     --fail-pct 5 (503s, resets, bodies cut half way), fetched with many
#     distinct URLs
# Every 10 s: RSS and fd count of both goblinds, the load's latency
# percentiles of that interval and the eviction count, into a CSV; plotted
# at the end.  Pass (computed here, see the report for the definition):
# RSS and fds flat after warm-up, zero wrong bytes, zero crashes, and
# eviction ran.  Writes bench/results/soak.md and soak.png (with --quick:
# soak-quick.md / soak-quick.png).
set -euo pipefail

usage() {
	cat >&2 <<USAGE
usage: bench/soak.sh [--duration SECONDS] [--quick] [--dir DIR] [--out FILE]
  --duration S   length of the soak (default 1800)
  --quick        a short one: 150 s, fewer keys (report soak-quick.md)
  --dir DIR      scratch directory (default /var/tmp/goblin-soak)
  --out FILE     report (default bench/results/soak.md; its plot next to
                 it, .png for .md)
USAGE
	exit 129
}

root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/lib.sh"
invocation="bench/soak.sh${*:+ $*}"
duration=1800
quick=0
dir=/var/tmp/goblin-soak
out=
while [ $# -gt 0 ]; do
	case $1 in
	--duration) duration=$2; shift 2 ;;
	--quick) quick=1; duration=150; shift ;;
	--dir) dir=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	-h|--help) usage ;;
	*) echo "soak: unknown option '$1'" >&2; usage ;;
	esac
done
case $duration in
''|*[!0-9]*) echo "soak: bad --duration '$duration'" >&2; usage ;;
esac
[ "$duration" -ge 60 ] || { echo "soak: --duration is at least 60" >&2; exit 129; }
if [ -z "$out" ]; then
	if [ "$quick" = 1 ]; then out=$root/bench/results/soak-quick.md
	else out=$root/bench/results/soak.md; fi
fi
png=${out%.md}.png

GD=$root/build/goblind
GCTL=$root/build/goblinctl
ORIGIN=$root/build/bench/origin
PY=/usr/bin/python3
for b in "$GD" "$GCTL" "$ORIGIN"; do
	[ -x "$b" ] || { echo "soak: $b is not built (make)" >&2; exit 1; }
done
command -v gnuplot >/dev/null || { echo "soak: gnuplot is missing (gnuplot-nox)" >&2; exit 1; }

# 1,000 client connections, as many server ends, the store's files
ulimit -n 16384 2>/dev/null || ulimit -n "$(ulimit -Hn)"

# the key sets: main ~3 GiB of values (6x the SSD tier), mirror ~1.5 GiB
if [ "$quick" = 1 ]; then nkeys=8000; nmkeys=8000; else nkeys=20000; nmkeys=40000; fi
rm -rf "$dir"
mkdir -p "$dir"
"$PY" - "$dir/keys" "$nkeys" "$dir/mkeys" "$nmkeys" <<'PY'
import random, sys
r = random.Random(16)
def size(big):
    x = r.random()
    if x < 0.70:
        return r.randint(1000, 64 * 1024)
    if x < 0.95:
        return r.randint(64 * 1024, 512 * 1024)
    return r.randint(512 * 1024, big)
with open(sys.argv[1], "w") as f:
    for i in range(int(sys.argv[2])):
        f.write("soak:%06d %d\n" % (i, size(2 << 20)))
with open(sys.argv[3], "w") as f:
    for i in range(int(sys.argv[4])):
        f.write("mirror/%06d %d\n" % (i, size(1 << 20)))
PY

pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
}
trap cleanup EXIT

# gd_start NAME OPTIONS...: sets GPID, MCPORT, HTTPPORT
gd_start() {
	local name=$1 i
	shift
	"$GD" --store "$dir/$name" --memcache-port 0 --http-port 0 \
		--no-hugetlb --no-mlock --cores 2 "$@" 2>"$dir/$name.log" &
	GPID=$!
	pids+=("$GPID")
	for i in $(seq 200); do
		MCPORT=$(sed -n 's/.*memcache on [^ ]*:\([0-9]*\),.*/\1/p' "$dir/$name.log")
		HTTPPORT=$(sed -n 's/.*http on [^ ]*:\([0-9]*\).*/\1/p' "$dir/$name.log" | cut -d, -f1)
		[ -n "$MCPORT" ] && [ -n "$HTTPPORT" ] && return 0
		kill -0 "$GPID" 2>/dev/null || break
		sleep 0.05
	done
	echo "soak: goblind $name did not start:" >&2
	cat "$dir/$name.log" >&2
	exit 1
}

"$ORIGIN" --manifest "$dir/mkeys" --fail-pct 5 --port-file "$dir/origin.port" \
	2>"$dir/origin.log" &
OPID=$!
pids+=("$OPID")
for _ in $(seq 100); do [ -s "$dir/origin.port" ] && break; sleep 0.05; done
oport=$(cat "$dir/origin.port")

main_opts=(--memory 64M --small-memory 16M --ssd-size 512M --max-conns 2048
	   --http-timeout 10)
mirror_opts=(--memory 32M --small-memory 8M --ssd-size 256M --max-conns 512
	     --http-timeout 10 --mirror "http://127.0.0.1:$oport"
	     --mirror-timeout 5)
gd_start main "${main_opts[@]}"
MPID=$GPID mport=$MCPORT hport=$HTTPPORT
gd_start mirror "${mirror_opts[@]}"
RPID=$GPID rhport=$HTTPPORT rmport=$MCPORT
echo "soak: main goblind $MPID (memcache $mport, http $hport), mirror $RPID" \
     "(http $rhport), origin $OPID ($oport), $duration s" >&2

t0=$(date +%s)
t_end=$((t0 + duration))
echo "$t0" >"$dir/t0"

# load NAME GOBLINCTL-BENCH-OPTIONS...: runs of 10 s back to back until
# the end, each one's RESULT line after its end time in NAME.results and
# its exit status in NAME.rc (a goblinctl killed by a signal is a crash)
load() {
	local name=$1 i=0 left rc
	shift
	while :; do
		[ ! -e "$dir/t_end" ] || break
		left=$((t_end - $(date +%s)))
		[ "$left" -ge 3 ] || break
		[ "$left" -le 10 ] || left=10
		i=$((i + 1))
		rc=0
		nice -n 5 "$GCTL" bench --threads 1 --keys 1000000 --no-store \
			--verify --duration "$left" --seed "$i" "$@" \
			>"$dir/$name.out" 2>>"$dir/$name.err" || rc=$?
		echo "$(date +%s) $rc $(grep '^RESULT' "$dir/$name.out" || echo RESULT none)" \
			>>"$dir/$name.results"
	done
}

# the busy connections: 24 memcache, 12 HTTP on the main goblind, 12 on
# the mirror; gets and sets, 60% gets
load mc --port "$mport" --size "manifest:$dir/keys" --conns 24 \
	--get-ratio 0.6 &
pids+=($!)
load http --proto http --port "$hport" --size "manifest:$dir/keys" \
	--conns 12 --get-ratio 0.6 &
pids+=($!)
load mirror --proto http --port "$rhport" --size "manifest:$dir/mkeys" \
	--conns 12 --get-ratio 1 &
pids+=($!)
# the rest of ~1,000: idle, slowloris and slow readers
nice -n 5 "$PY" "$root/bench/soakconns.py" --mc "$mport" --http "$hport" \
	--mirror "$rhport" --manifest "$dir/keys" \
	--mirror-manifest "$dir/mkeys" --idle 900 --slowloris 40 \
	--slow-readers 30 --rate 4096 --stats "$dir/conns.jsonl" \
	>"$dir/conns.out" 2>"$dir/conns.err" &
CPID=$!
pids+=("$CPID")

# stats_of PORT NAME...: memcache stats of goblind, comma-separated
# (empty where it did not answer within 8 s)
stats_of() {
	"$PY" - "$@" <<'STATS' 2>/dev/null || true
import socket, sys
port, names = int(sys.argv[1]), sys.argv[2:]
st = {}
try:
    s = socket.create_connection(("127.0.0.1", port), timeout=8)
    s.sendall(b"stats\r\n")
    buf = b""
    while not buf.endswith(b"END\r\n"):
        d = s.recv(65536)
        if not d:
            break
        buf += d
    for line in buf.decode().split("\r\n"):
        f = line.split()
        if len(f) == 3 and f[0] == "STAT":
            st[f[1]] = f[2]
except OSError:
    pass
print(",".join(st.get(n, "") for n in names))
STATS
}

# the sampler, every 10 s
echo "t,main_rss_kib,main_fds,mirror_rss_kib,mirror_fds,main_evictions,main_conns,mirror_evictions" \
	>"$dir/samples.csv"
# alive PID: running (a child that died is a zombie until waited for,
# and kill -0 still reaches a zombie)
alive() {
	[ -r "/proc/$1/status" ] && ! grep -q '^State:[[:space:]]*Z' "/proc/$1/status"
}
crashed=
while :; do
	now=$(date +%s)
	for p in "$MPID" "$RPID" "$OPID"; do
		alive "$p" || crashed+=" $p"
	done
	[ -z "$crashed" ] || break
	echo "$((now - t0)),$(awk '/^VmRSS/ { print $2 }' /proc/$MPID/status),$(ls /proc/$MPID/fd | wc -l),$(awk '/^VmRSS/ { print $2 }' /proc/$RPID/status),$(ls /proc/$RPID/fd | wc -l),$(stats_of "$mport" evictions curr_connections),$(stats_of "$rmport" evictions)" \
		>>"$dir/samples.csv"
	[ "$now" -lt "$t_end" ] || break
	sleep $((10 - ($(date +%s) - t0) % 10))
done
if [ -n "$crashed" ]; then
	echo "soak: a process died:$crashed" >&2
	echo 0 >"$dir/t_end"	# the loads' runs stop at their next turn
fi

# stop the clients, then the servers: each must still be there, and exit 0
kill -TERM "$CPID" 2>/dev/null || true
wait "$CPID" 2>/dev/null || true
for p in "${pids[@]}"; do
	case $p in "$MPID"|"$RPID"|"$OPID"|"$CPID") ;; *) wait "$p" 2>/dev/null || true ;; esac
done
exits=
for p in "$MPID" "$RPID"; do
	if kill -TERM "$p" 2>/dev/null; then
		rc=0; wait "$p" || rc=$?
	else
		rc=0; wait "$p" || rc=$?; rc="died($rc)"
	fi
	exits+=" $rc"
done
origin_stats=$(alive "$OPID" && curl -s "http://127.0.0.1:$oport/_origin/stats" | tr '\n' ' ' || echo "origin died")
kill "$OPID" 2>/dev/null || true
wait "$OPID" 2>/dev/null || true
pids=()

"$PY" - "$dir" "$out" "$png" "$invocation" "$duration" "$exits" \
	"$origin_stats" "${crashed:-}" "$(machine_info "$dir" "$root")" <<'PY'
import datetime, json, os, re, subprocess, sys
d, out, png, inv, duration, exits, origin, crashed, machine = sys.argv[1:]
duration = int(duration)

def results(name):
    rows = []
    p = os.path.join(d, name + ".results")
    for line in (open(p) if os.path.exists(p) else []):
        f = line.split(None, 2)
        kv = dict(re.findall(r"(\w+)=(\S+)", f[2]))
        rows.append((int(f[0]), int(f[1]), kv))
    return rows
loads = {n: results(n) for n in ("mc", "http", "mirror")}
t0 = None
samples = []
hdr = None
for line in open(os.path.join(d, "samples.csv")):
    f = line.strip().split(",")
    if hdr is None:
        hdr = f
        continue
    samples.append([int(x) if x else -1 for x in f])
t0 = int(open(os.path.join(d, "t0")).read())

def lat(name, t):
    """completion p50/p99 (us) of the last run of NAME that ended in
    (t-15, t]: the runs last 10 s and a little more to start"""
    got = ("", "")
    for end, rc, kv in loads[name]:
        if t - 15 < end - t0 <= t and "completion_us" in kv:
            p = kv["completion_us"].split("/")
            got = (p[0], p[2])
    return got

csv = os.path.join(d, "soak.csv")
with open(csv, "w") as f:
    f.write(",".join(hdr + ["mc_p50_us", "mc_p99_us", "http_p50_us",
                            "http_p99_us", "mirror_p50_us",
                            "mirror_p99_us"]) + "\n")
    for s in samples:
        row = [str(x) for x in s]
        for n in ("mc", "http", "mirror"):
            row += lat(n, s[0])
        f.write(",".join(row) + "\n")

# flat: after a warm-up of the first third, the last third's maximum is
# within 10% + 16 MiB of the second third's (RSS), and within 50 fds (5%
# of the 1,000 connections, which the load opens and closes all the time)
n = len(samples)
a, b = n // 3, 2 * n // 3
def growth(col, pct):
    mid = max(s[col] for s in samples[a:b])
    last = max(s[col] for s in samples[b:])
    return mid, last, (100.0 * (last - mid) / mid if pct else last - mid)
ok_flat = n >= 6
figs = {}
for who, rc, fc in (("main", 1, 2), ("mirror", 3, 4)):
    if n < 6:
        continue
    mid, last, g = growth(rc, True)
    figs[who + "_rss"] = (mid, last, g)
    ok_flat &= last <= mid * 1.10 + 16 * 1024
    mid, last, g = growth(fc, False)
    figs[who + "_fds"] = (mid, last, g)
    ok_flat &= last - mid <= 50

tot = {}
for name, rows in loads.items():
    t = tot.setdefault(name, {"runs": 0, "requests": 0, "gets": 0, "hits": 0,
                              "misses": 0, "sets": 0, "errors": 0,
                              "wrong": 0, "signalled": 0, "statuses": {}})
    for end, rc, kv in rows:
        t["runs"] += 1
        t["signalled"] += rc > 128
        for k in ("requests", "gets", "hits", "misses", "sets", "errors",
                  "wrong"):
            t[k] += int(kv.get(k, 0))
        for st in kv.get("statuses", "").split(","):
            if ":" in st:
                c, m = st.split(":")
                t["statuses"][c] = t["statuses"].get(c, 0) + int(m)
conns = {}
for line in open(os.path.join(d, "conns.jsonl")):
    conns = json.loads(line)
wrong_values = sum(t["wrong"] for t in tot.values()) + conns.get("wrong_values", 0)
wrong_bytes = conns.get("wrong_bytes", 0)
ex = exits.split()
crashes = (len(crashed.split()) + sum(e != "0" for e in ex) +
           sum(t["signalled"] for t in tot.values()))
evictions = max(s[5] for s in samples) if samples else 0
mevictions = max(s[7] for s in samples) if samples else 0
ok = (ok_flat and wrong_values == 0 and wrong_bytes == 0 and crashes == 0
      and evictions > 0 and samples[-1][0] >= duration - 10)

# the plot
gp = """
set terminal pngcairo size 1100,1000 font ",10"
set output '%s'
set datafile separator ','
set key autotitle columnhead outside right
set multiplot layout 3,1 title 'goblind soak: %s'
set xlabel 't (s)'
set ylabel 'RSS (MiB)'
set yrange [0:*]
plot '%s' using 1:($2/1024) with lines lw 2 title 'main', '' using 1:($4/1024) with lines lw 2 title 'mirror'
set ylabel 'open fds'
plot '%s' using 1:3 with lines lw 2 title 'main', '' using 1:5 with lines lw 2 title 'mirror'
set ylabel 'completion (ms)'
set logscale y
set yrange [*:*]
plot '%s' using 1:($9/1000) with lines title 'memcache p50', '' using 1:($10/1000) with lines title 'memcache p99', '' using 1:($11/1000) with lines title 'http p50', '' using 1:($12/1000) with lines title 'http p99', '' using 1:($13/1000) with lines title 'mirror p50', '' using 1:($14/1000) with lines title 'mirror p99'
unset multiplot
""" % (png, datetime.date.today(), csv, csv, csv)
open(os.path.join(d, "soak.gp"), "w").write(gp)
subprocess.run(["gnuplot", os.path.join(d, "soak.gp")], check=True)

def mib(k):
    return "%.1f" % (k / 1024.0)
L = ["# Soak: goblind under mixed load, hostile connections, eviction and a failing origin (%s)" % datetime.date.today(), "",
     "Generated by `%s` (issue 16, item 6). **%s.**" % (inv, "PASS" if ok else "FAIL"), "",
     "## What ran", "",
     "- main goblind: `%s`" % " ".join(["--memory 64M --small-memory 16M --ssd-size 512M --max-conns 2048 --http-timeout 10 --cores 2 --no-hugetlb --no-mlock"]),
     "- mirror goblind: `--memory 32M --small-memory 8M --ssd-size 256M --max-conns 512 --http-timeout 10 --mirror http://127.0.0.1:ORIGIN --mirror-timeout 5`",
     "- `bench/origin --fail-pct 5`: 5% of object requests fail, in turn a 503, a reset before the answer, a reset half way through the body",
     "- busy load, goblinctl bench in runs of 10 s back to back, every value got checked (`--verify`): memcache 24 conns and HTTP 12 conns on the main goblind (60% gets, 40% sets), HTTP 12 conns on the mirror (gets of distinct URLs)",
     "- main key set: %s keys, 70%% 1-64 KiB, 25%% 64-512 KiB, 5%% 512 KiB-2 MiB (several times the 512 MiB SSD tier + 64 MiB RAM: eviction all the time); mirror key set: %s URLs up to 1 MiB" % (
         sum(1 for _ in open(os.path.join(d, "keys"))),
         sum(1 for _ in open(os.path.join(d, "mkeys")))),
     "- bench/soakconns.py: 900 idle connections (half memcache, half HTTP), 40 slowloris (a request-head byte every 2 s), 30 slow readers at 4 KiB/s each (memcache and HTTP on the main goblind, HTTP on the mirror; every byte compared with the payload)",
     "- sampled every 10 s: VmRSS and `ls /proc/PID/fd | wc -l` of both goblinds, main's `evictions` and `curr_connections`, mirror's `evictions`, the completion percentiles (request sent to last byte) of the last 10 s run of each load that ended in the 15 s before the sample",
     "",
     "## Pass criteria", "",
     "- RSS flat: warm-up is the first third; the last third's maximum RSS is at most the second third's maximum x 1.10 + 16 MiB (each goblind)",
     "- fds flat: the last third's maximum fd count is at most the second third's maximum + 50 (5% of the 1,000 connections, which the 10 s runs close and open again)",
     "- zero wrong values (goblinctl --verify, every get) and zero wrong bytes (soakconns, every byte of the slow readers)",
     "- zero crashes: both goblinds and the origin alive to the end, both goblinds exit 0 on SIGTERM, no load generator killed by a signal",
     "- eviction ran (main's `evictions` > 0) and the soak lasted its duration",
     "",
     "## Result", "",
     "| | |", "|---|---|"]
for who in ("main", "mirror"):
    if who + "_rss" in figs:
        mid, last, g = figs[who + "_rss"]
        L.append("| %s RSS max, 2nd third / last third | %s / %s MiB (%+.1f%%) |" % (who, mib(mid), mib(last), g))
        mid, last, g = figs[who + "_fds"]
        L.append("| %s fds max, 2nd third / last third | %d / %d (%+d) |" % (who, mid, last, g))
L += ["| main evictions / mirror evictions | %d / %d |" % (evictions, mevictions),
      "| wrong values / wrong bytes | %d / %d |" % (wrong_values, wrong_bytes),
      "| crashes | %d (goblind exits on SIGTERM: %s%s) |" % (crashes, exits.strip(), ("; died: " + crashed) if crashed else ""),
      "| origin | %s |" % origin.strip(), ""]
L += ["| load | runs | requests | gets | hits | misses | sets | errors | wrong | statuses |",
      "|---|---|---|---|---|---|---|---|---|---|"]
for name, t in tot.items():
    L.append("| %s | %d | %d | %d | %d | %d | %d | %d | %d | %s |" % (
        name, t["runs"], t["requests"], t["gets"], t["hits"], t["misses"],
        t["sets"], t["errors"], t["wrong"],
        ", ".join("%s: %d" % kv for kv in sorted(t["statuses"].items())) or "-"))
L += ["", "Errors are failed requests; a wrong value is counted apart (the wrong column). On the mirror they are the origin's injected failures: its 503s passed on, 502s, and responses cut when the origin reset half way through a body.", "",
      "goblind's warnings and errors (their lines, by message):", "", "```"]
for who in ("main", "mirror"):
    msgs = {}
    for line in open(os.path.join(d, who + ".log"), errors="replace"):
        if ": info: " in line:
            continue
        m = re.sub(r"\d+", "N", line.strip())[:160]
        msgs[m] = msgs.get(m, 0) + 1
    L.append("%s: %d lines" % (who, sum(msgs.values())))
    for m, c in sorted(msgs.items(), key=lambda kv: -kv[1])[:8]:
        L.append("  %7d  %s" % (c, m))
L += ["```", "",
      "Connections (bench/soakconns.py, at the end):", "", "```",
      " ".join("%s=%s" % kv for kv in conns.items()), "```", "",
      "![RSS, fds and latency over time](%s)" % os.path.basename(png), "",
      "## Samples", "", "```", open(csv).read().strip(), "```", "",
      "## Machine", "", "```", machine, "```", ""]
open(out, "w").write("\n".join(L))
rss_g = figs.get("main_rss", (0, 0, 0))[2]
fd_g = figs.get("main_fds", (0, 0, 0))[2]
print("soak: wrote %s and %s" % (out, png))
print("RESULT soak_pass=%d rss_growth_pct=%.1f fd_growth=%d mirror_rss_growth_pct=%.1f mirror_fd_growth=%d wrong_bytes=%d wrong_values=%d crashes=%d evictions=%d" % (
    ok, rss_g, fd_g, figs.get("mirror_rss", (0, 0, 0))[2],
    figs.get("mirror_fds", (0, 0, 0))[2], wrong_bytes, wrong_values,
    crashes, evictions))
sys.exit(0 if ok else 1)
PY
