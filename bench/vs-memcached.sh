#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# vs-memcached: goblind against memcached 1.6 (Debian) with the same client,
# goblinctl bench, on this host over loopback (issue 5, section 4); writes
# bench/results/vs-memcached.md (--quick: vs-memcached-quick.md).
#   1. memory-sized ART: throughput, completion p50/p99, server RSS
#   1n. the same over a link shaped as a cache server's NIC (10 and 1
#      Gbit/s): client and server in two network namespaces (the seed's
#      condition; issue 21)
#   2. disk-sized ART: goblind against memcached with extstore on the same
#      file system, each in a memory cgroup of the same size (page cache
#      included): throughput, median payload TTFB, misses; 2b. the same
#      with every tail byte on the emulated HDD (bench/hddemu)
#   3. overload ART: put at full speed into capacity to spare, then every
#      key read once (goblinctl bench --sweep): what each lost
#   4. FB small objects: server RSS and throughput
# Plots (gnuplot, SVG beside the report): the CDFs of completion in case 1
# and of payload TTFB in case 2.
# The server runs on CPU 1 (goblind --cores 1, memcached -t 1), the client
# on CPU 0 (--threads 1): as fair as 2 cores allow.  Each case populates
# each server fresh, then measures for --duration; the order of the two
# servers alternates between cases 1-3 (case 4 sizes goblind from the
# memcached run, so memcached goes first).
set -euo pipefail

usage() {
	cat >&2 <<USAGE
usage: bench/vs-memcached.sh [--quick] [--dir DIR] [--duration S] [--out FILE]
  --quick        smaller sets (~3 minutes): ART 512 keys (~0.5 GiB) in
                 RAM, 2048 (~2 GiB) on disk, 3072 (~3 GiB) overload, FB
                 100k; default 2048, 12288, 20480 and 400k
  --dir DIR      scratch directory (default /var/tmp/goblin-vsmc)
  --duration S   seconds of each measured phase (default 20; --quick 8)
  --disk-reps N  repetitions of case 2, the order of the servers
                 alternating (default 3); the table shows the median one
  --net-reps N   repetitions of case 1n at each rate, the order
                 alternating (default 3; --quick 1); the targets are on
                 the medians
  --out FILE     report (default bench/results/vs-memcached[-quick].md)
  --cases LIST   the cases to run, of 1,1n,2,2b,3,4 (default all); a
                 report of some has only their rows
  --tcp-congestion NAME  every loopback connection of the run, both
                 servers' and the client's alike, on TCP congestion
                 control NAME (a route's congctl, put back at exit;
                 default: the machine's, which the report names); case
                 1n's namespaces keep their default
USAGE
	exit 129
}

root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/lib.sh"
invocation="bench/vs-memcached.sh${*:+ $*}"
dir=/var/tmp/goblin-vsmc
quick=0
duration=
out=
disk_reps=3
net_reps=
cases=1,1n,2,2b,3,4
tcp_cc=
while [ $# -gt 0 ]; do
	case $1 in
	--quick) quick=1; shift ;;
	--dir) dir=$2; shift 2 ;;
	--duration) duration=$2; shift 2 ;;
	--disk-reps) disk_reps=$2; shift 2 ;;
	--net-reps) net_reps=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--cases) cases=$2; shift 2 ;;
	--tcp-congestion) tcp_cc=$2; shift 2 ;;
	-h|--help) usage ;;
	*) echo "vs-memcached: unknown option '$1'" >&2; usage ;;
	esac
done
if [ "$quick" = 1 ]; then
	: "${duration:=8}" "${net_reps:=1}"
	art_mem_keys=512 art_disk_keys=2048 art_over_keys=3072 fb_keys=100000
	: "${out:=$root/bench/results/vs-memcached-quick.md}"
else
	: "${duration:=20}" "${net_reps:=3}"
	art_mem_keys=2048 art_disk_keys=12288 art_over_keys=20480 fb_keys=400000
	: "${out:=$root/bench/results/vs-memcached.md}"
fi
say() { echo "vs-memcached: $*" >&2; }
want() { [[ ",$cases," == *",$1,"* ]]; }
die() { say "$*"; exit 1; }

gctl=${GOBLINCTL:-$root/build/goblinctl}
gd=${GOBLIND:-$root/build/goblind}
hddemu=${HDDEMU:-$root/build/bench/hddemu}
for b in "$gctl" "$gd" "$hddemu"; do [ -x "$b" ] || die "not built: $b (run make)"; done
command -v memcached >/dev/null || die "memcached is not installed (make deps)"
logs=$dir/logs
rm -rf "$dir"
mkdir -p "$logs"

ART="pareto:262144,583208,0.3,8388608"	# WORKLOADS.md, ART
SPID=
stop_server() {
	[ -n "$SPID" ] || return 0
	kill -TERM "$SPID" 2>/dev/null || true
	wait "$SPID" 2>/dev/null || true
	SPID=
}
trap 'stop_server; [ -z "${NET:-}" ] || net_down "$NET"; loopback_cc_restore' EXIT
loopback_cc "$tcp_cc" || die "--tcp-congestion $tcp_cc"

# Case 1n runs the servers in the namespace $NET-s and the client in
# $NET-c (net_up, bench/lib.sh): SRV and CLI prefix their commands, the
# servers listen on LISTEN, the client reaches them at HOST.  Both listen
# on every address of their namespace there: goblind takes writes from
# loopback only (without --auth-file), so the populating client runs
# beside the server (bench --local); the measured one crosses the link.
HOST=127.0.0.1
LISTEN=127.0.0.1
SRV=()
CLI=()
net_on() {
	NET=gsvm$$
	net_up "$NET" "$1"
	HOST=10.252.0.1 LISTEN=0.0.0.0
	SRV=(ip netns exec "$NET-s") CLI=(ip netns exec "$NET-c")
}
net_off() {
	net_down "$NET"
	HOST=127.0.0.1 LISTEN=127.0.0.1 SRV=() CLI=()
}

wait_port() {
	local i
	for i in $(seq 200); do
		"${CLI[@]}" python3 -c "import socket,sys; socket.create_connection(('$HOST', $1), 0.2)" \
			2>/dev/null && return 0
		kill -0 "$SPID" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}

# in_cg CMD...: exec CMD, inside the memory cgroup $CG when there is one
# (run in the background, so that $! is the server's pid)
CG=
in_cg() {
	[ -z "$CG" ] || exec sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' \
		"$CG" "$@"
	exec "$@"
}

# start_memcached NAME MEM_MB [EXT_SIZE [EXT_DIR [EXT_THREADS]]]: on CPU
# 1, one worker thread; with EXT_SIZE, extstore in a file of EXT_DIR
# (default $dir) with EXT_THREADS I/O threads (default 8: on the SSD its
# default of 1 reads one item at a time; case 2 quick here served 695
# MiB/s with 1, 1095 with 4, 1122 with 8, 1079 with 16)
start_memcached() {
	local name=$1 mem=$2 ext=${3:-} extra=()
	PORT=$(free_port)
	[ -n "$ext" ] && extra=(-o "ext_path=${4:-$dir}/$name-ext:$ext,ext_wbuf_size=8,ext_threads=${5:-8}")
	in_cg "${SRV[@]}" taskset -c 1 memcached -u root -l "$LISTEN" -p "$PORT" -U 0 -t 1 \
		-m "$mem" -I 8m -c 1024 "${extra[@]}" 2>"$logs/$name.log" &
	SPID=$!
	wait_port "$PORT" || die "memcached did not start: $(cat "$logs/$name.log")"
}

# start_goblind NAME [STORE OPTIONS]: on CPU 1, one worker
start_goblind() {
	local name=$1
	shift
	PORT=$(free_port)
	in_cg "${SRV[@]}" taskset -c 1 "$gd" --store "$dir/$name" --memcache-port "$PORT" --no-http \
		--listen-address "$LISTEN" --cores 1 --max-item 8M "$@" \
		2>"$logs/$name.log" &
	SPID=$!
	wait_port "$PORT" || die "goblind did not start: $(cat "$logs/$name.log")"
}

# bench NAME [--local] ARGS...: goblinctl bench on CPU 0 against $PORT
# (--local: from the server's side of a case 1n link); the output in
# $logs/NAME.txt, its RESULT line echoed
bench() {
	local name=$1 pre=("${CLI[@]}") host=$HOST
	shift
	if [ "${1:-}" = --local ]; then
		pre=("${SRV[@]}") host=127.0.0.1
		shift
	fi
	"${pre[@]}" taskset -c 0 "$gctl" bench --host "$host" --port "$PORT" \
		--threads 1 --server-pid "$SPID" "$@" >"$logs/$name.txt" 2>&1 ||
		die "bench $name failed: $(tail -3 "$logs/$name.txt")"
	say "  $name: $(grep '^RESULT' "$logs/$name.txt")"
}

rss_kib() { awk '/^VmRSS/ { print $2 }' "/proc/$SPID/status"; }
hwm_kib() { awk '/^VmHWM/ { print $2 }' "/proc/$SPID/status"; }
record_mem() { echo "$(rss_kib) $(hwm_kib)" >"$logs/$1.mem"; }

# device_read TAG FILE [BS]: what the device gives goblind's tail reads,
# right after them: random O_DIRECT reads of its SSD file FILE, in its
# io-chunk BS (default 256k), as many in flight as 16 readers keep (4
# each), into buffers on huge pages as goblind's are (bench/lib.sh,
# fio_huge)
device_read() {
	fio_huge fio --name=device --filename="$2" --readonly --rw=randread \
		--bs="${3:-256k}" --direct=1 --ioengine=io_uring --iodepth=64 \
		--time_based --runtime="$duration" --mem=shmhuge \
		--output-format=json >"$logs/$1-fio.json"
}

t_start=$(date +%s)
# ---- 1. memory-sized ART ----------------------------------------------------
art_mem_mb=$(( art_mem_keys * 3 / 2 + 256 ))	# memcached: every value, slack
# mem_case TAG [ORDER]: case 1's two servers (in ORDER, default
# "memcached goblind"), logs TAG-memcached, TAG-goblind
mem_case() {
	local tag=$1 side
	for side in ${2:-memcached goblind}; do
		settle_disk	# each server starts on a disk at rest (bench/lib.sh)
		if [ "$side" = memcached ]; then
			start_memcached $tag-mc "$art_mem_mb"
		else
			# heads of 64 KiB in RAM, tails on the SSD tier
			start_goblind $tag-gd --memory 128M --ram-head 64K \
				--small-memory 16M --no-hugetlb
		fi
		bench $tag-$side-populate --local --keys "$art_mem_keys" \
			--size "$ART" --populate-only --conns 16
		bench $tag-$side --keys "$art_mem_keys" --size "$ART" \
			--no-store --conns 16 --duration "$duration" \
			--csv "$logs/$tag-$side.csv"
		record_mem $tag-$side
		[ "$side" != goblind ] || [ -n "${NET:-}" ] ||
			device_read $tag "$dir/$tag-gd/ssd/data"
		stop_server
		rm -rf "$dir/$tag-gd"
	done
}
if want 1; then
	say "1. memory-sized ART: $art_mem_keys keys"
	mem_case mem
fi

# ---- 1n. memory-sized ART over a shaped link --------------------------------
# The seed's claim (same latency at a fraction of the RAM) was measured
# with both servers behind a NIC, where the link is the limit: the same
# case with the client and the server in two network namespaces joined by
# a veth pair shaped to 10 Gbit/s, then to 1 Gbit/s (net_up, bench/lib.sh).
# --net-reps times at each rate, memcached first in odd repetitions: one
# run's p99 (the 23rd slowest of ~2,300 gets at 1 Gbit/s) moves by 20%
# from run to run here.
if want 1n; then
	for rate in 10gbit 1gbit; do
		say "1n. memory-sized ART over a $rate link: $art_mem_keys keys, $net_reps times"
		net_on "$rate"
		for rep in $(seq 1 "$net_reps"); do
			order="memcached goblind"
			[ $((rep % 2)) = 1 ] || order="goblind memcached"
			mem_case "net${rate%bit}-r$rep" "$order"
		done
		net_off
		NET=
	done
fi

# ---- 2. disk-sized ART ------------------------------------------------------
# Both servers get the same RAM: a 64 KiB head of every object, and slack.
# Each runs in a memory cgroup of that RAM + 128 MiB, which counts the page
# cache: extstore reads its file through the page cache, which would
# otherwise hold its whole file and serve its hits from RAM.
disk_ram_mb=$(( art_disk_keys / 16 + 64 ))
disk_cg_mb=$(( disk_ram_mb + 128 ))

# disk_case TAG TAILDIR EXT_THREADS REPS [GOBLIND OPTIONS]: goblind (its
# SSD tier in TAILDIR) and memcached with extstore (its file in TAILDIR,
# EXT_THREADS I/O threads), REPS times, each on fresh files, goblind first
# in odd repetitions and second in even ones (this disk's speed drifts
# from minute to minute); logs TAG-SIDE-rN, and TAG-SIDE for the
# repetition whose values-served ratio is the median
disk_case() {
	local tag=$1 tails=$2 threads=$3 reps=$4 side rep order n
	shift 4
	for rep in $(seq 1 "$reps"); do
		order="goblind extstore"
		[ $((rep % 2)) = 1 ] || order="extstore goblind"
		for side in $order; do
			disk_side "$tag" "$tails" "$threads" "$rep" "$side" "$@"
		done
	done
	rep=$(for n in $(seq 1 "$reps"); do
		echo "$n $(mib_s "$tag-goblind-r$n") $(mib_s "$tag-extstore-r$n")"
	done | awk '{ print $2 / $3, $1 }' | sort -g |
		awk '{ r[NR] = $2 } END { print r[int((NR + 1) / 2)] }')
	for n in txt csv mem cg; do
		for side in goblind extstore; do
			cp "$logs/$tag-$side-r$rep.$n" "$logs/$tag-$side.$n"
		done
	done
	[ ! -e "$logs/$tag-r$rep-fio.json" ] ||
		cp "$logs/$tag-r$rep-fio.json" "$logs/$tag-fio.json"
	echo "$rep" >"$logs/$tag.median"
}

# mib_s NAME: the values served (MiB/s) of bench NAME's RESULT line
mib_s() {
	sed -n 's/^RESULT .* mib_per_s=\([0-9.]*\) .*/\1/p' "$logs/$1.txt"
}

# disk_side TAG TAILDIR EXT_THREADS REP SIDE [GOBLIND OPTIONS]: one
# server of disk_case, populated fresh, measured, its files removed after
disk_side() {
	local tag=$1 tails=$2 threads=$3 rep=$4 side=$5 name
	shift 5
	name=$tag-$side-r$rep
	settle_disk
	CG=$(mem_cgroup "goblin-vsmc-$tag-$side" $(( disk_cg_mb << 20 ))) ||
		CG=
	[ -n "$CG" ] || say "  no memory cgroup: page cache not limited"
	if [ "$side" = extstore ]; then
		start_memcached $tag-mc "$disk_ram_mb" \
			"$(( art_disk_keys * 2 ))M" "$tails" "$threads"
	else
		start_goblind $tag-gd --memory "${disk_ram_mb}M" \
			--ram-head 64K --small-memory 16M --no-hugetlb \
			--ssd-dir "$tails/$tag-gd-ssd" "$@"
	fi
	bench $name-populate --keys "$art_disk_keys" --size "$ART" \
		--populate-only --conns 16
	drop_caches
	bench $name --keys "$art_disk_keys" --size "$ART" --no-store \
		--conns 16 --duration "$duration" --csv "$logs/$name.csv"
	record_mem $name
	# the ceiling, in goblind's io-chunk (2b: 1 MiB)
	[ "$side" != goblind ] || device_read "$tag-r$rep" \
		"$tails/$tag-gd-ssd/data" "$([ "$tag" = hdd ] && echo 1m)"
	if [ -n "$CG" ]; then
		mem_cgroup_report "$CG" >"$logs/$name.cg"
	else
		echo none >"$logs/$name.cg"
	fi
	stop_server
	[ -z "$CG" ] || rmdir "$CG"
	CG=
	rm -rf "$dir/$tag-gd" "$tails/$tag-gd-ssd" "$tails/$tag-mc-ext"
}

if want 2; then
	say "2. disk-sized ART: $art_disk_keys keys, memcached with extstore"
	disk_case disk "$dir" 8 "$disk_reps"
fi

# the same on the emulated HDD (bench/hddemu: 5 ms seek, 200 MB/s): both
# servers keep every tail byte on it, goblind's whole SSD tier included,
# read in 1 MiB pieces (a seek costs as much as 1 MiB of transfer);
# extstore with its default single I/O thread, its best there (8 threads
# seek between their reads: 34 MiB/s served in the full run, against 83)
if want 2b; then
	say "2b. disk-sized ART on the emulated HDD"
	hdd=$dir/hdd
	mkdir -p "$hdd" "$dir/hdd-backing"
	trap 'stop_server; hdd_unmount "$hdd"; loopback_cc_restore' EXIT
	hdd_mount "$hddemu" "$dir/hdd-backing" "$hdd" "$logs/hddemu.log" ||
		die "hddemu did not mount"
	disk_case hdd "$hdd" 1 1 --io-chunk 1M
	hdd_unmount "$hdd"
	rm -rf "$dir/hdd-backing"
fi

# ---- 3. overload ART -------------------------------------------------------
want 3 || over_sides=
[ -n "${over_sides-x}" ] &&
	say "3. overload ART: $art_over_keys keys at full speed, then each read once"
for side in ${over_sides-extstore goblind}; do
	settle_disk
	if [ "$side" = extstore ]; then
		start_memcached over-mc 256 "$(( art_over_keys * 2 ))M"
	else
		start_goblind over-gd --memory 256M --small-memory 16M \
			--no-hugetlb
	fi
	bench over-$side-populate --keys "$art_over_keys" --size "$ART" \
		--populate-only --conns 16
	bench over-$side --keys "$art_over_keys" --size "$ART" --no-store \
		--sweep --conns 16
	stop_server
done

# ---- 4. FB small objects ----------------------------------------------------
want 4 || fb_sides=
[ -n "${fb_sides-x}" ] && say "4. FB: $fb_keys small objects"
fb_mb=$(( fb_keys / 1000 + 64 ))	# ~1 KiB a key: room for all
for side in ${fb_sides-memcached goblind}; do
	if [ "$side" = memcached ]; then
		start_memcached fb-mc "$(( fb_mb * 2 ))"
	else
		# goblind's arena is pre-faulted: size it to the values the
		# memcached run reported (+25%), as an admin would
		fb_bytes=$(sed -n 's/^sizes .* total=\([0-9]*\).*/\1/p' \
			"$logs/fb-memcached-populate.txt")
		start_goblind fb-gd --memory 2M --small-memory \
			"$(( fb_bytes * 5 / 4 / 1048576 + 4 ))M" --no-hugetlb
	fi
	bench fb-$side-populate --keys "$fb_keys" --size fb_value \
		--populate-only --conns 16
	bench fb-$side --keys "$fb_keys" --size fb_value --no-store \
		--conns 16 --duration "$duration"
	record_mem fb-$side
	stop_server
done

elapsed=$(( $(date +%s) - t_start ))

# ---- plots ------------------------------------------------------------------
# cdf CSV COLUMN-EXPR OUT: sorted microseconds of hits, with their quantile
cdf() {
	awk -F, -v what="$2" 'NR > 1 && $3 == "hit" {
		v = (what == "done" ? $8 - $5 : $7 - $5) / 1000; print v }' "$1" |
		sort -n | awk '{ v[NR] = $1 } END {	# at most ~500 points
			step = NR > 500 ? int(NR / 500) : 1
			for (i = step; i <= NR; i += step) print v[i], i / NR
			if (NR % step) print v[NR], 1 }' >"$3"
}
plot_base=${out%.md}
want 1 && want 2 && {
cdf "$logs/mem-goblind.csv" done "$logs/mem-goblind.cdf"
cdf "$logs/mem-memcached.csv" done "$logs/mem-memcached.cdf"
cdf "$logs/disk-goblind.csv" ttfb "$logs/disk-goblind.cdf"
cdf "$logs/disk-extstore.csv" ttfb "$logs/disk-extstore.cdf"
gnuplot <<GP
set terminal svg size 720,420 dynamic font "sans,11"
set logscale x
set grid
set key bottom right
set ylabel "fraction of requests"
set output "$plot_base-ram.svg"
set title "1. ART in RAM: completion of gets ($art_mem_keys keys, 16 connections)"
set xlabel "completion, microseconds (log)"
plot "$logs/mem-goblind.cdf" using 1:2 with lines lw 2 title "goblind", \
     "$logs/mem-memcached.cdf" using 1:2 with lines lw 2 title "memcached"
set output "$plot_base-disk.svg"
set title "2. ART on disk: time to the first value byte of hits ($art_disk_keys keys)"
set xlabel "payload TTFB, microseconds (log)"
plot "$logs/disk-goblind.cdf" using 1:2 with lines lw 2 title "goblind", \
     "$logs/disk-extstore.cdf" using 1:2 with lines lw 2 title "memcached + extstore (its hits only)"
GP
}

python3 - "$logs" "$out" "$invocation" "$elapsed" "$quick" \
	"$(machine_info "$dir" "$root")" "$disk_reps" "${BENCH_SETTLE:-15}" \
	"$net_reps" <<'PY'
import datetime, json, os, re, statistics, sys
logs, out, inv, elapsed, quick, machine, disk_reps, settle, net_reps = sys.argv[1:]
disk_reps, net_reps = int(disk_reps), int(net_reps)

def result(name):
    text = open(os.path.join(logs, name + ".txt")).read()
    line = [l for l in text.splitlines() if l.startswith("RESULT")][-1]
    r = {}
    for k, v in re.findall(r"(\w+)=(\S+)", line):
        if "/" in v:
            r[k] = [float(x) for x in v.split("/")]
        else:
            try:
                r[k] = float(v)
            except ValueError:
                r[k] = v
    return r

def mem(name):
    rss, hwm = open(os.path.join(logs, name + ".mem")).read().split()
    return int(rss), int(hwm)

def has(name):
    return os.path.exists(os.path.join(logs, name + ".txt"))

def fio_mib(tag):
    fio = json.load(open(os.path.join(logs, tag + "-fio.json")))
    return fio["jobs"][0]["read"]["bw_bytes"] / 1048576
def cg(name):
    return open(os.path.join(logs, name + ".cg")).read().strip()
# a miss costs a server nothing: compare the values served, in bytes;
# and the median payload TTFB, extstore's over goblind's (both ratios
# bigger-is-better for goblind)
def disk_ratios(g, x):
    return (g["mib_per_s"] / x["mib_per_s"],
            x["payload_ttfb_us"][0] / g["payload_ttfb_us"][0])
hit = lambda r: 100.0 * r["hits"] / r["gets"] if r["gets"] else 0.0
res = []	# the RESULT line's fields
L = []
w = L.append
w("# goblind against memcached (%s)%s" % (datetime.date.today(),
  " — quick run" if quick == "1" else ""))
w("")
w("Generated by `%s` in %s s. Same client (`goblinctl bench`, one thread on "
  "CPU 0), each server on CPU 1 with one worker, loopback." % (inv, elapsed))
w("")
w("| case | figure | goblind | memcached | ratio (bigger is better for goblind) | target |")
w("|---|---|---|---|---|---|")
# ceiling TAG CASE RIVAL: what fio read of goblind's file right after its
# phase, against the rival's values served
def ceiling(tag, case, rival, label=""):
    f = fio_mib(tag)
    w("| %s | the device's ceiling: fio's reads of goblind's file right after, MiB/s (rival: its values served) | %.0f | %.0f%s | %.2f | |" % (
        case, f, rival["mib_per_s"], label, f / rival["mib_per_s"]))
    return f
# mem_rows TAG CASE TARGETS: case 1's rows (and 1n's); returns the
# ratios: throughput, p50 and p99 (goblind's over memcached's), RSS
# (memcached's over goblind's), values served over the device's ceiling
# mem_ratios TAG: throughput, completion p50 and p99 (goblind's over
# memcached's), RSS (memcached's over goblind's) of case 1's run TAG
def mem_ratios(tag):
    mc, gd = result(tag + "-memcached"), result(tag + "-goblind")
    return (gd["ops_per_s"] / mc["ops_per_s"],
            gd["completion_us"][0] / mc["completion_us"][0],
            gd["completion_us"][2] / mc["completion_us"][2],
            mem(tag + "-memcached")[0] / mem(tag + "-goblind")[0])
def mem_rows(tag, case, t_tput, t_lat, t_rss):
    mc, gd = result(tag + "-memcached"), result(tag + "-goblind")
    mc_rss, gd_rss = mem(tag + "-memcached")[0], mem(tag + "-goblind")[0]
    tput, p50, p99, _ = mem_ratios(tag)
    w("| %s | requests/s | %.0f | %.0f | %.2f | >= %s |" % (case, gd["ops_per_s"], mc["ops_per_s"], tput, t_tput))
    w("| %s | completion p50 us | %.1f | %.1f | %.2f | goblind <= %sx |" % (
        case, gd["completion_us"][0], mc["completion_us"][0], 1 / p50, t_lat))
    w("| %s | completion p99 us | %.1f | %.1f | %.2f | goblind <= %sx |" % (
        case, gd["completion_us"][2], mc["completion_us"][2], 1 / p99, t_lat))
    w("| %s | server RSS MiB | %.0f | %.0f | %.2f | >= %s |" % (case, gd_rss / 1024, mc_rss / 1024, mc_rss / gd_rss, t_rss))
    w("| %s | values served, MiB/s | %.0f | %.0f | | |" % (case, gd["mib_per_s"], mc["mib_per_s"]))
    ceil = None
    if tag == "mem":	# over a shaped link, the link is the ceiling
        f = ceiling(tag, case, mc)
        ceil = gd["mib_per_s"] / f
        w("| %s | goblind's values served over the device's ceiling | | | %.2f | >= 0.95 |" % (case, ceil))
    return tput, p50, p99, mc_rss / gd_rss, ceil
if has("mem-goblind"):
    tput, p50, p99, memr, ceil = mem_rows("mem", "1. ART in RAM", "1.0", "1.1", "7")
    res += ["mem_ratio=%.2f" % memr, "tput_ratio=%.2f" % tput,
            "mem_vs_ceiling=%.2f" % ceil]
# case 1n: the rows of the repetition whose throughput ratio is the
# median, each repetition's ratios, and their medians, which the targets
# and the RESULT line take
net_logs = []
for rate in ("10g", "1g"):
    reps = ["net%s-r%d" % (rate, i) for i in range(1, net_reps + 1)
            if has("net%s-r%d-goblind" % (rate, i))]
    if not reps:
        continue
    case = "1n. ART in RAM over a %s Gbit/s link" % rate[:-1]
    per = []
    for tag in reps:
        per.append(mem_ratios(tag) + (tag,))
        net_logs += [tag + "-memcached", tag + "-goblind"]
    med_tag = sorted(per)[(len(per) - 1) // 2][4]
    w("| %s | the repetition whose throughput ratio is the median: %s | | | | |" % (case, med_tag))
    mem_rows(med_tag, case, "0.97", "1.1", "8")
    w("| %s | each repetition (memcached first in odd ones): throughput, p50, p99 (goblind / memcached), RSS ratios | | | %s | |" % (
        case, "; ".join("%.2f, %.2f, %.2f, %.1f" % p[:4] for p in per)))
    tput, p50, p99, memr = (statistics.median(p[i] for p in per) for i in range(4))
    w("| %s | median of the %d repetitions: requests/s | | | %.2f | >= 0.97 |" % (case, len(per), tput))
    w("| %s | median: completion p50, goblind / memcached | | | %.2f | <= 1.1 |" % (case, p50))
    w("| %s | median: completion p99, goblind / memcached | | | %.2f | <= 1.1 |" % (case, p99))
    w("| %s | median: RSS, memcached / goblind | | | %.2f | >= 8 |" % (case, memr))
    res += ["net%s_tput_ratio=%.2f" % (rate, tput),
            "net%s_p50_ratio=%.2f" % (rate, p50),
            "net%s_p99_ratio=%.2f" % (rate, p99),
            "net%s_rss_ratio=%.2f" % (rate, memr)]
# disk_rows CASE TAG G X: case 2's rows for goblind G and extstore X
def disk_rows(case, tag, g, x):
    t, f = disk_ratios(g, x)
    w("| %s | values served, MiB/s | %.0f | %.0f (extstore) | %.2f | >= 2 |" % (case, g["mib_per_s"], x["mib_per_s"], t))
    w("| %s | requests/s (misses included) | %.0f | %.0f | | |" % (case, g["ops_per_s"], x["ops_per_s"]))
    w("| %s | gets that found the value | %.1f%% | %.1f%% | | |" % (case, hit(g), hit(x)))
    w("| %s | payload TTFB p50 us | %.1f | %.1f | %.2f | >= 10 |" % (
        case, g["payload_ttfb_us"][0], x["payload_ttfb_us"][0], f))
    w("| %s | misses, errors | %d, %d | %d, %d | | |" % (case, g["misses"], g["errors"], x["misses"], x["errors"]))
    w("| %s | memory cgroup at the end | %s | %s | | |" % (case, cg(tag + "-goblind"), cg(tag + "-extstore")))
if has("disk-goblind"):
    ex, gdd = result("disk-extstore"), result("disk-goblind")
    disk_rows("2. ART on disk", "disk", gdd, ex)
    ceiling("disk", "2. ART on disk", ex, " (extstore)")
    # every repetition of case 2: values-served ratio, and fio's ceiling
    med = int(open(os.path.join(logs, "disk.median")).read())
    per = []
    for i in range(1, disk_reps + 1):
        g, x = result("disk-goblind-r%d" % i), result("disk-extstore-r%d" % i)
        bold = "**" if i == med else ""
        per.append("%s%.2f (%.0f / %.0f, fio %.0f)%s" % (
            bold, disk_ratios(g, x)[0], g["mib_per_s"], x["mib_per_s"],
            fio_mib("disk-r%d" % i), bold))
    w("| 2. ART on disk | values served, each repetition (goblind first in odd ones): ratio (goblind / extstore MiB/s, fio) | | | %s | |" % "; ".join(per))
    res += ["ext_tput_ratio=%.2f" % disk_ratios(gdd, ex)[0],
            "ext_ttfb_ratio=%.2f" % disk_ratios(gdd, ex)[1]]
if has("hdd-goblind"):
    hx, hgd = result("hdd-extstore"), result("hdd-goblind")
    disk_rows("2b. ART on the emulated HDD", "hdd", hgd, hx)
    ceiling("hdd", "2b. ART on the emulated HDD", hx, " (extstore)")
    res += ["hdd_tput_ratio=%.2f" % disk_ratios(hgd, hx)[0],
            "hdd_ttfb_ratio=%.2f" % disk_ratios(hgd, hx)[1]]
if has("over-goblind"):
    ovx, ovg = result("over-extstore"), result("over-goblind")
    ovxp, ovgp = result("over-extstore-populate"), result("over-goblind-populate")
    w("| 3. overload ART | put at full speed, MiB/s | %.0f | %.0f (extstore) | | |" % (ovgp["mib_per_s"], ovxp["mib_per_s"]))
    w("| 3. overload ART | keys lost (of %d acknowledged) | %d | %d | | goblind 0 |" % (
        ovg["gets"], ovg["misses"], ovx["misses"]))
    res += ["lost_goblind=%d" % ovg["misses"], "lost_extstore=%d" % ovx["misses"]]
if has("fb-goblind"):
    fbm, fbg = result("fb-memcached"), result("fb-goblind")
    fbm_rss, fbg_rss = mem("fb-memcached")[0], mem("fb-goblind")[0]
    w("| 4. FB | requests/s | %.0f | %.0f | %.2f | >= 0.8 |" % (fbg["ops_per_s"], fbm["ops_per_s"], fbg["ops_per_s"] / fbm["ops_per_s"]))
    w("| 4. FB | server RSS MiB | %.0f | %.0f | %.2f (goblind / memcached) | <= 1.5 |" % (
        fbg_rss / 1024, fbm_rss / 1024, fbg_rss / fbm_rss))
    res += ["fb_mem_ratio=%.2f" % (fbm_rss / fbg_rss),
            "fb_tput_ratio=%.2f" % (fbg["ops_per_s"] / fbm["ops_per_s"])]
w("")
w("Each server of cases 1-3 starts after `sync` and a pause of %s s "
  "(`settle_disk`, bench/lib.sh: the last run's writes reach the disk "
  "before the next run starts). "
  "Each server is populated fresh with every key once (`--populate-only`, 16 "
  "connections, as fast as it acknowledges), then read for the measured "
  "phase (`--no-store`, 16 connections, keys uniform). memcached: `-t 1 -m "
  "MEM -I 8m` (case 1: every value fits; case 2: `-m RAM` and `-o "
  "ext_path=FILE:SIZE,ext_wbuf_size=8,ext_threads=8` on the same file "
  "system: 8 I/O threads, as its default of 1 reads one item at a time). goblind: "
  "`--cores 1` (case 1: `--memory 128M --ram-head 64K`, tails on the SSD "
  "tier; case 2: `--memory RAM --ram-head 64K`). Case 1n is case 1 "
  "with the server in one network namespace and the client in another, "
  "joined by a veth pair whose two ends each send through a tc token "
  "bucket of 10 (then 1) Gbit/s, a burst of 1 ms (`net_up`, "
  "bench/lib.sh): the seed's condition, where the link and not the "
  "server is the limit; it runs %d times at each rate, memcached first in "
  "odd repetitions, and its targets are on the medians of the "
  "repetitions' ratios. The device's ceiling "
  "(cases 1, 2 and 2b): random O_DIRECT reads of goblind's SSD file by fio "
  "right after goblind's measured phase, 256 KiB (its `--io-chunk`; 2b: "
  "1 MiB), 64 "
  "in flight (16 readers of `--io-depth` 4), into buffers on huge pages as "
  "goblind's are (`fio_huge`, bench/lib.sh): what the device gave such "
  "reads then (it varies from minute to minute here). Its ratio to the "
  "rival's values served is about the most a server reading its values "
  "from this device could reach (goblind's 64 KiB heads, from RAM, add "
  "some 7%%). Case 2 runs %d times on fresh files, goblind first in odd "
  "repetitions and second in even ones (this disk's speed drifts from "
  "minute to minute); its rows are from the repetition whose "
  "values-served ratio is the median (in bold in the repetitions row), "
  "and so is the RESULT line. Case 2 gives both the same "
  "RAM: 64 KiB a key plus 64 MiB, and runs each server in a memory cgroup "
  "of that RAM plus 128 MiB, which counts the page cache (extstore reads "
  "its file through it; goblind reads O_DIRECT); the cgroup line gives its "
  "peak use, page cache and the times it hit the limit, in MiB. Caches "
  "dropped before case 2's measured phase. Case 2b is case 2 with every "
  "tail byte on the emulated HDD (`bench/hddemu`, 5 ms seek, 200 MB/s): "
  "extstore's file (one I/O thread, its default and its best on the "
  "spindle), and goblind's SSD tier (`--ssd-dir` on the mount, "
  "`--io-chunk 1M`). RSS: VmRSS after the measured phase. Case 3 puts every key once "
  "at full speed (16 connections) into capacity to spare (extstore: a file "
  "of twice the data), then `--sweep` gets every key once: a miss is a "
  "value acknowledged and lost. Case 4: FB value sizes (`fb_value`) under "
  "`bench:NNNNNNNN` keys (not FB's key sizes); memcached `-m` twice the "
  "data (it allocates as it goes), goblind `--memory 2M` and "
  "`--small-memory` 1.25 times the value bytes plus 4 MiB (its pools are "
  "pre-faulted, so its RSS is what it is given). The per-server outputs are "
  "in the logs under the scratch directory." % (settle, net_reps, disk_reps))
w("")
for name in ["mem-memcached", "mem-goblind"] + net_logs + [
             "disk-goblind", "disk-extstore", "hdd-goblind", "hdd-extstore",
             "over-extstore", "over-goblind", "fb-goblind", "fb-memcached"]:
    if not has(name):
        continue
    w("`%s`: `%s`" % (name, [l for l in open(os.path.join(logs, name + ".txt")).read().splitlines() if l.startswith("RESULT")][-1]))
    w("")
base = os.path.basename(out)[:-3]
if has("mem-goblind") and has("disk-goblind"):
    w("## Plots")
    w("")
    w("![case 1: completion CDF](%s-ram.svg)" % base)
    w("")
    w("![case 2: payload TTFB CDF](%s-disk.svg)" % base)
    w("")
w("## Machine")
w("")
w("```")
w(machine)
w("```")
open(out, "w").write("\n".join(L) + "\n")
print("vs-memcached: wrote %s" % out)
print("RESULT " + " ".join(res))
PY
stamp_report "$out"
