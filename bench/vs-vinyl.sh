#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# vs-vinyl: HTTP caches in front of the same origin, one at a time, fresh
# each time, on loopback (issue 6, section 3): Vinyl Cache (Debian's
# varnish, file storage), nginx proxy_cache, and goblind --mirror once it
# has one.  The client is goblinctl bench --proto http.  Writes
# bench/results/vs-vinyl.md (--quick: vs-vinyl-quick.md) and SVG plots.
#   a. BIG: one client, one connection, one request at a time, three
#      shuffled passes over objects populated once through the cache;
#      the origin (bench/origin, synthesized bytes) counts its requests:
#      one per object during the population, none during the passes.
#      goblind runs twice: as --mirror, and as the origin server itself
#      (goblind-origin: the same objects PUT first).  After each goblind
#      run, fio reads goblind's SSD file once, one sequential O_DIRECT
#      stream of 1 MiB reads GS_IO_DEPTH deep (what a goblind reader keeps
#      in flight): the device's ceiling for one stream.
#   b. WEB: nginx serving bench/gen's WEB files as the origin; population
#      from empty at 32 connections (fill bandwidth), then the measured
#      manifest at 16 ... 1024 connections (throughput, completion).
set -euo pipefail

usage() {
	cat >&2 <<USAGE
usage: bench/vs-vinyl.sh [--quick] [--dir DIR] [--out FILE] [--big-ram SIZE]
                         [--cache-ram SIZE] [--tcp-congestion NAME]
  --quick         BIG: 4 objects of 256-512 MiB; WEB at 1/64, measured at
                  16, 256 and 1024 connections (default: BIG per
                  bench/gen BIG, 1.5x --big-ram; WEB at 1/8 at 16, 64,
                  256 and 1024 connections)
  --dir DIR       scratch directory, also the caches' disk
                  (default /var/tmp/goblin-vsvinyl)
  --out FILE      report (default bench/results/vs-vinyl[-quick].md)
  --big-ram SIZE  full BIG: the corpus is 1.5x this (default: this
                  machine's RAM, shrunk to what the disk holds)
  --cache-ram SIZE  full BIG: run each cache in a memory cgroup of SIZE
                  (its page cache and mappings included) and make the
                  corpus 1.5x SIZE: a machine with SIZE of RAM, so that
                  the corpus outgrows it without 36 GiB per system
  --tcp-congestion NAME  every loopback connection of the run, every
                  server's and client's alike, on TCP congestion control
                  NAME (a route's congctl, put back at exit; default: the
                  machine's, which the report names)
USAGE
	exit 129
}

root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/lib.sh"
invocation="bench/vs-vinyl.sh${*:+ $*}"
dir=/var/tmp/goblin-vsvinyl
quick=0
out=
big_ram=
cache_ram=
tcp_cc=
while [ $# -gt 0 ]; do
	case $1 in
	--quick) quick=1; shift ;;
	--dir) dir=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--big-ram) big_ram=$2; shift 2 ;;
	--cache-ram) cache_ram=$2; big_ram=$2; shift 2 ;;
	--tcp-congestion) tcp_cc=$2; shift 2 ;;
	-h|--help) usage ;;
	*) echo "vs-vinyl: unknown option '$1'" >&2; usage ;;
	esac
done
if [ "$quick" = 1 ]; then
	web_scale=1/64 web_conns="16 256 1024"
	: "${out:=$root/bench/results/vs-vinyl-quick.md}"
else
	web_scale=1/8 web_conns="16 64 256 1024"
	: "${out:=$root/bench/results/vs-vinyl.md}"
fi
say() { echo "vs-vinyl: $*" >&2; }
die() { say "$*"; exit 1; }

gctl=${GOBLINCTL:-$root/build/goblinctl}
gd=${GOBLIND:-$root/build/goblind}
origin_bin=${ORIGIN:-$root/build/bench/origin}
gen=${GEN:-$root/build/bench/gen}
for b in "$gctl" "$origin_bin" "$gen"; do
	[ -x "$b" ] || die "not built: $b (run make)"
done
command -v varnishd >/dev/null || die "varnish is not installed (make deps)"
command -v nginx >/dev/null || die "nginx is not installed (make deps)"
[ "$(id -u)" = 0 ] || die "run as root (varnishd, nginx, drop_caches)"
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
systems="varnish nginx"
# the help is read whole: grep -q would stop reading at its match, and
# under pipefail goblind's SIGPIPE then made it look like no --mirror
gd_help=$([ -x "$gd" ] && "$gd" --help 2>&1 || true)
if grep -q -- --mirror <<<"$gd_help"; then
	systems="$systems goblind"
	gd_note="goblind --mirror"
else
	say "goblind: no --mirror yet"
	gd_note="goblind: no --mirror yet (not run)"
fi

logs=$dir/logs
rm -rf "$dir"
mkdir -p "$logs"

# ---- processes: every server this script starts is stopped on exit ----
PIDS=()
stop_all() {
	local p
	for p in "${PIDS[@]}"; do
		kill -TERM "$p" 2>/dev/null || true
	done
	for p in "${PIDS[@]}"; do
		wait "$p" 2>/dev/null || true
	done
	PIDS=()
	[ -z "$CG_MADE" ] || rmdir "$CG_MADE" 2>/dev/null || true
}
trap 'stop_all; loopback_cc_restore' EXIT
loopback_cc "$tcp_cc" || die "--tcp-congestion $tcp_cc"
trap 'exit 130' INT TERM

# A memory cgroup (v1, or v2 when that is what is mounted) for the caches
# of BIG with --cache-ram; "caged CMD..." runs CMD in it.
CG= CG_MADE=
cgroup_setup() {
	local bytes
	bytes=$(numfmt --from=iec "${cache_ram%B}") ||
		die "invalid --cache-ram '$cache_ram'"
	if [ -d /sys/fs/cgroup/memory ]; then
		CG=/sys/fs/cgroup/memory/goblin-vsvinyl
		mkdir -p "$CG"
		CG_MADE=$CG
		echo "$bytes" >"$CG/memory.limit_in_bytes"
	elif [ -f /sys/fs/cgroup/cgroup.controllers ]; then
		CG=/sys/fs/cgroup/goblin-vsvinyl
		mkdir -p "$CG"
		CG_MADE=$CG
		echo "$bytes" >"$CG/memory.max"
	else
		die "--cache-ram: no memory cgroup here"
	fi
}
# Run as "caged CMD ... &": exec, so that $! is CMD itself and stop_pid
# stops it (a function run in the background is a subshell of its own).
caged() {
	if [ -n "$CG" ]; then
		exec bash -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$CG" "$@"
	else
		exec "$@"
	fi
}

# wait_http PORT PID LOG: until PORT answers HTTP, or PID died
wait_http() {
	local i
	for i in $(seq 400); do
		curl -s -o /dev/null "http://127.0.0.1:$1/" && return 0
		kill -0 "$2" 2>/dev/null || die "server died: $(tail -5 "$3")"
		sleep 0.05
	done
	die "no answer on port $1: $(tail -5 "$3")"
}

# ---- the origins ----
# start_origin MANIFEST: bench/origin on OPORT
start_origin() {
	OPORT=$(free_port)
	"$origin_bin" --port "$OPORT" --manifest "$1" 2>"$logs/origin.log" &
	OPID=$!
	PIDS+=("$OPID")
	wait_http "$OPORT" "$OPID" "$logs/origin.log"
}

# origin_requests: object requests the origin answered so far
origin_requests() {
	if [ "$ORIGIN_KIND" = synth ]; then
		curl -sf "http://127.0.0.1:$OPORT/_origin/stats" |
			awk '$1 == "requests" { print $2 }'
	else	# nginx: its access log, a line a request
		wc -l <"$dir/web-origin/access.log"
	fi
}

# nginx_common DIR, nginx_http DIR: the configuration both nginx share:
# root, in the foreground, every path under DIR, long keep-alive, sendfile
# without tcp_nopush (see the report)
nginx_common() {
	printf 'daemon off;\nuser root;\npid %s/nginx.pid;\n' "$1"
	printf 'error_log %s/error.log warn;\n' "$1"
	printf 'events { worker_connections 8192; }\n'
}

nginx_http() {
	local t
	for t in client_body proxy fastcgi uwsgi scgi; do
		printf '\t%s_temp_path %s/%s;\n' "$t" "$1" "$t"
	done
	printf '\tsendfile on;\n\tkeepalive_requests 1000000;\n'
	printf '\tkeepalive_timeout 3600s;\n'
}

# start_web_origin FILES: nginx serving FILES (web:ID at /web/ID) on OPORT
start_web_origin() {
	local d=$dir/web-origin
	mkdir -p "$d"
	: >"$d/access.log"
	OPORT=$(free_port)
	cat >"$d/nginx.conf" <<NGX
worker_processes 1;
$(nginx_common "$d")
http {
	access_log $d/access.log;
$(nginx_http "$d")
	default_type application/octet-stream;
	server {
		listen 127.0.0.1:$OPORT;
		root $1;
		expires 1d;
		location = / { return 200 "web origin\n"; }
		location / { rewrite "^/([^:/]+):(.*)\$" /\$1/\$2 break; }
	}
}
NGX
	nginx -c "$d/nginx.conf" -e "$d/error.log" 2>>"$d/error.log" &
	OPID=$!
	PIDS+=("$OPID")
	wait_http "$OPORT" "$OPID" "$d/error.log"
}

# ---- the caches under test; each in CPORT, CPID ----
# cache_started NAME DIR: the cache just started in the background ($!)
# answers; DIR is deleted when it stops
cache_started() {
	CPID=$!
	PIDS+=("$CPID")
	wait_http "$CPORT" "$CPID" "$logs/$1.log"
	CSTORE=$2
}

# start_varnish NAME STORAGE_BYTES
start_varnish() {
	local name=$1 size=$2 d=$dir/$1
	mkdir -p "$d"
	CPORT=$(free_port)
	cat >"$d/default.vcl" <<VCL
vcl 4.1;
backend origin {
	.host = "127.0.0.1";
	.port = "$OPORT";
	.connect_timeout = 5s;
	.first_byte_timeout = 600s;
	.between_bytes_timeout = 600s;
}
sub vcl_recv {
	return (hash);
}
sub vcl_backend_response {
	# cache everything, big objects too, and stream them while they come:
	# no hit-for-pass, no hit-for-miss
	set beresp.ttl = 1d;
	set beresp.grace = 0s;
	set beresp.do_stream = true;
	return (deliver);
}
VCL
	caged varnishd -F -j none -n "$d/work" -a "127.0.0.1:$CPORT" \
		-f "$d/default.vcl" -s "file,$d/storage.bin,$size" \
		-p timeout_idle=3600 -p send_timeout=3600 \
		>"$logs/$name.log" 2>&1 &
	cache_started "$name" "$d"
}

# start_nginx NAME CACHE_BYTES: proxy_cache on disk, buffering on
start_nginx() {
	local name=$1 size=$2 d=$dir/$1
	mkdir -p "$d/cache"
	CPORT=$(free_port)
	cat >"$d/nginx.conf" <<NGX
worker_processes auto;
$(nginx_common "$d")
http {
	access_log off;
$(nginx_http "$d")
	proxy_cache_path $d/cache levels=1:2 keys_zone=gs:64m
		max_size=$size inactive=7d use_temp_path=off;
	upstream origin {
		server 127.0.0.1:$OPORT;
		keepalive 64;
	}
	server {
		listen 127.0.0.1:$CPORT backlog=4096;
		location / {
			proxy_pass http://origin;
			proxy_http_version 1.1;
			proxy_set_header Connection "";
			proxy_buffering on;
			proxy_cache gs;
			proxy_cache_key \$uri;
			proxy_cache_valid 200 1d;
			proxy_cache_lock on;
			proxy_cache_lock_timeout 1h;
			proxy_cache_lock_age 1h;
			proxy_read_timeout 600s;
		}
	}
}
NGX
	caged nginx -c "$d/nginx.conf" -e "$d/error.log" \
		>"$logs/$name.log" 2>&1 &
	cache_started "$name" "$d"
}

# start_goblind NAME DISK_BYTES [ORIGIN_OPTIONS]: goblind --mirror of the
# origin (or given "--no-mirror", an origin server itself), its SSD tier
# sized like the others' storage; its RAM (and for WEB its workers) are
# $GD_PART, set by each part (BIG, WEB) below
start_goblind() {
	local name=$1 size=$2 d=$dir/$1 mirror
	mirror=(--mirror "http://127.0.0.1:$OPORT")
	[ "${3:-}" = --no-mirror ] && mirror=()
	mkdir -p "$d"
	CPORT=$(free_port)
	# shellcheck disable=SC2086
	caged "$gd" --store "$d/store" --http-port "$CPORT" --no-memcache \
		"${mirror[@]}" --max-item 8G \
		--ssd-size "$size" $GD_PART \
		--max-conns 4096 --http-timeout 0 \
		>"$logs/$name.log" 2>&1 &
	cache_started "$name" "$d"
}

start_goblind-origin() { start_goblind "$1" "$2" --no-mirror; }

# device_stream TAG FILE: fio's one sequential O_DIRECT stream of FILE, as
# a goblind reader streams a BIG tail (1 MiB reads, io-depth deep), into
# huge-page buffers as goblind's are (fio_huge, bench/lib.sh)
device_stream() {
	fio_huge fio --name=stream --filename="$2" --readonly --rw=read \
		--bs=1M --direct=1 --ioengine=io_uring --iodepth="$GS_IO_DEPTH" \
		--mem=shmhuge --output-format=json >"$logs/$1-fio.json"
}

# stop_pid PID: stop one server of PIDS
stop_pid() {
	local p keep=()
	kill -TERM "$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
	for p in "${PIDS[@]}"; do [ "$p" = "$1" ] || keep+=("$p"); done
	PIDS=("${keep[@]}")
}

stop_cache() {
	stop_pid "$CPID"
	rm -rf "$CSTORE"	# the next system starts from an empty disk
}

stop_origin() { stop_pid "$OPID"; }

# bench NAME ARGS...: goblinctl bench --proto http against the cache; the
# output in $logs/NAME.txt, its RESULT line echoed
bench() {
	bench_run "$1" --no-store "${@:2}"
}

# bench_run NAME ARGS...: the same, population (PUT) included
bench_run() {
	local name=$1
	shift
	"$gctl" bench --proto http --host 127.0.0.1 --port "$CPORT" \
		"$@" >"$logs/$name.txt" 2>&1 ||
		die "bench $name failed: $(tail -3 "$logs/$name.txt")"
	say "  $name: $(grep '^RESULT' "$logs/$name.txt")"
}

field() {	# field FILE NAME: NAME= of FILE's RESULT line
	grep '^RESULT' "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"
}

lines() { wc -l <"$1" | tr -d ' '; }
manifest_bytes() { awk '{ s += $2 } END { printf "%.0f\n", s }' "$1"; }

t_start=$(date +%s)
# ---- a. BIG ---------------------------------------------------------------
mkdir -p "$dir/big"
if [ "$quick" = 1 ]; then
	# 4 objects of 256-512 MiB: a corpus that fits in RAM, so this
	# measures hits from memory (page cache or varnish's mmap)
	python3 - "$dir/big" <<'PY'
import random, sys
d = sys.argv[1]
r = random.Random(1)
objs = [("big:%04d" % i, r.randint(256 << 20, 512 << 20)) for i in range(4)]
with open(d + "/BIG.population", "w") as f:
    for k, s in objs:
        f.write("%s %d\n" % (k, s))
with open(d + "/BIG.measured", "w") as f:
    for p in range(3):      # three passes, each shuffled on its own
        o = list(objs)
        random.Random(0x243f6a8885a308d3 + p).shuffle(o)
        for k, s in o:
            f.write("%s %d\n" % (k, s))
PY
	big_how="4 objects of 256-512 MiB (python random.Random(1)); passes shuffled by random.Random(0x243f6a8885a308d3 + pass)"
else
	# bench/gen BIG: 1-4 GiB objects to 1.5x RAM, shrunk to what the disk
	# holds (one system's cache at a time, with a quarter to spare)
	ram_b=$(awk '/^MemTotal/ { printf "%.0f\n", $2 * 1024 }' /proc/meminfo)
	free_b=$(df -B1 --output=avail "$dir" | tail -1 | tr -d ' ')
	if [ -z "$big_ram" ]; then
		big_ram=$ram_b
		cap=$(( free_b * 2 / 3 / 5 * 4 ))	# 1.5 x RAM x 1.25 <= free
		[ "$big_ram" -gt "$cap" ] && big_ram=$cap
		big_ram=$(( big_ram / 1048576 ))M
	fi
	"$gen" BIG --ram "$big_ram" --out "$dir/big" >"$logs/gen-big.txt"
	big_how="bench/gen BIG --ram $big_ram (seed 1): 1-4 GiB objects to 1.5x $big_ram; 3 passes shuffled by gen (seed 0x243f6a8885a308d3)"
fi
big_n=$(lines "$dir/big/BIG.population")
big_bytes=$(manifest_bytes "$dir/big/BIG.population")
big_req=$(lines "$dir/big/BIG.measured")
big_store=$(( big_bytes + big_bytes / 4 + (512 << 20) ))
say "a. BIG: $big_n objects, $big_bytes bytes, $big_req measured requests"
ORIGIN_KIND=synth
# BIG's heads are few: goblind needs little RAM for them
GD_PART="--memory 256M --small-memory 64M"
if [ -n "$cache_ram" ]; then
	cgroup_setup
	say "  every cache in a memory cgroup of $cache_ram ($CG)"
	big_how="$big_how; every cache in a memory cgroup of $cache_ram (page cache and mappings included)"
fi
# goblind's reads of a BIG tail: 1 MiB each (GS_LONG_READ), its default
# --io-depth in flight
GS_IO_DEPTH=4
big_systems=$systems
[[ " $systems " == *" goblind "* ]] && big_systems="$systems goblind-origin"
for sys in $big_systems; do
	start_origin "$dir/big/BIG.population"
	"start_$sys" "big-$sys" "$big_store"
	o0=$(origin_requests)
	# population: every object once through the cache, bytes verified;
	# into goblind-origin by PUT
	if [ "$sys" = goblind-origin ]; then
		bench_run "big-$sys-populate" --populate-only --conns 1 \
			--keys "$big_n" --size "manifest:$dir/big/BIG.population"
	else
		bench "big-$sys-populate" --sweep --conns 1 --verify \
			--keys "$big_n" --size "manifest:$dir/big/BIG.population"
	fi
	o1=$(origin_requests)
	drop_caches || true
	bench "big-$sys" --sweep --conns 1 --keys "$big_req" \
		--size "manifest:$dir/big/BIG.measured" \
		--csv "$logs/big-$sys.csv"
	o2=$(origin_requests)
	if [[ $sys == goblind* ]]; then
		device_stream "big-$sys" "$CSTORE/store/ssd/data"
	fi
	# and the stored bytes, checked after the measured passes
	bench "big-$sys-verify" --sweep --conns 1 --verify \
		--keys "$big_n" --size "manifest:$dir/big/BIG.population"
	o3=$(origin_requests)
	echo "$((o1 - o0)) $((o2 - o1)) $((o3 - o2))" >"$logs/big-$sys.origin"
	say "  big-$sys: origin requests: populate $((o1 - o0)) (of $big_n objects), passes $((o2 - o1)), verify $((o3 - o2))"
	stop_cache
	stop_origin
done

# ---- b. WEB ---------------------------------------------------------------
CG=	# WEB's caches run without a memory cgroup
# goblind: 2 GiB of heads of 1 MiB and 4 GiB of small objects: at 1/8 every
# object under 1 MiB (2.9 GiB) is whole in RAM and the 1,952 larger ones'
# heads take 1.9 GiB (the others use the page cache, unbounded)
# Two workers per CPU: the client and the origin share the two CPUs, and a
# worker the scheduler puts off stalls a quarter, not half, of the
# connections (WEB 1/64 at C16 and C64, three runs each: p95 -25 to -40%,
# p50 about twice, requests/s alike).
GD_PART="--memory 2G --small-memory 4G --ram-head 1M --cores 4"
mkdir -p "$dir/web"
"$gen" WEB --scale "$web_scale" --out "$dir/web" >"$logs/gen-web.txt"
"$gen" --materialize "$dir/web/files" --manifest "$dir/web/WEB.population" \
	>"$logs/materialize.txt"
web_n=$(lines "$dir/web/WEB.population")
web_bytes=$(manifest_bytes "$dir/web/WEB.population")
web_req=$(lines "$dir/web/WEB.measured")
web_store=$(( web_bytes + web_bytes / 4 + (512 << 20) ))
say "b. WEB at $web_scale: $web_n objects, $web_bytes bytes, $web_req measured requests"
ORIGIN_KIND=nginx
for sys in $systems; do
	start_web_origin "$dir/web/files"
	"start_$sys" "web-$sys" "$web_store"
	o0=$(origin_requests)
	bench "web-$sys-populate" --sweep --conns 32 --keys "$web_n" \
		--size "manifest:$dir/web/WEB.population"
	o1=$(origin_requests)
	for c in $web_conns; do
		bench "web-$sys-c$c" --sweep --conns "$c" --keys "$web_req" \
			--size "manifest:$dir/web/WEB.measured" \
			--csv "$logs/web-$sys-c$c.csv"
	done
	o2=$(origin_requests)
	bench "web-$sys-verify" --sweep --conns 16 --verify --keys "$web_n" \
		--size "manifest:$dir/web/WEB.population"
	o3=$(origin_requests)
	echo "$((o1 - o0)) $((o2 - o1)) $((o3 - o2))" >"$logs/web-$sys.origin"
	say "  web-$sys: origin requests: populate $((o1 - o0)) (of $web_n objects), measured $((o2 - o1)), verify $((o3 - o2))"
	stop_cache
	stop_origin
done
elapsed=$(( $(date +%s) - t_start ))

# ---- report and plots -----------------------------------------------------
mkdir -p "$(dirname "$out")"
python3 - "$logs" "$out" "$invocation" "$elapsed" "$quick" \
	"$(machine_info "$dir" "$root" 2>&1)" "$systems" "$web_conns" \
	"$big_how" "$web_scale" "$gd_note" "$big_systems" <<'PY'
import datetime, json, os, re, subprocess, sys
(logs, out, inv, elapsed, quick, machine, systems, web_conns, big_how,
 web_scale, gd_note, big_systems) = sys.argv[1:]
systems = systems.split()
big_systems = big_systems.split()
conns = [int(c) for c in web_conns.split()]
base = out[:-3]
L = []
w = L.append

def result(name):
    text = open(os.path.join(logs, name + ".txt")).read()
    line = [l for l in text.splitlines() if l.startswith("RESULT")][-1]
    r = {"line": line}
    for k, v in re.findall(r"(\w+)=(\S+)", line):
        if "/" in v:
            r[k] = [float(x) for x in v.split("/")]
        else:
            try:
                r[k] = float(v)
            except ValueError:
                r[k] = v
    return r

def sizes(name):
    text = open(os.path.join(logs, name + ".txt")).read()
    return [l for l in text.splitlines() if l.startswith("sizes")][0]

def rows(name):
    """(status, bytes, sent, first, payload, last) of each request."""
    out = []
    with open(os.path.join(logs, name + ".csv")) as f:
        next(f)
        for l in f:
            p = l.rstrip().split(",")
            out.append((p[2], int(p[3]), int(p[4]), int(p[5]), int(p[6]),
                        int(p[7])))
    return out

def pct(v, p):
    v = sorted(v)
    if not v:
        return float("nan")
    k = max(1, min(len(v), -(-len(v) * p // 100)))
    return v[int(k) - 1]

def origin(name):
    return [int(x) for x in open(os.path.join(logs, name + ".origin")).read().split()]

def fio_mib(name):
    """fio's read bandwidth in MiB/s, or None when it did not run"""
    path = os.path.join(logs, name + "-fio.json")
    if not os.path.exists(path):
        return None
    return json.load(open(path))["jobs"][0]["read"]["bw_bytes"] / 1048576

# BIG
big = {}
for s in big_systems:
    rs = rows("big-" + s)
    hits = [r for r in rs if r[0] == "hit"]
    big[s] = {
        "r": result("big-" + s), "pop": result("big-%s-populate" % s),
        "ver": result("big-%s-verify" % s), "origin": origin("big-" + s),
        "ttfb_ms": pct([(r[3] - r[2]) / 1e6 for r in hits], 50),
        "pttfb_ms": pct([(r[4] - r[2]) / 1e6 for r in hits], 50),
        "bw": pct([r[1] / 1048576 / ((r[5] - r[2]) / 1e9) for r in hits], 50),
        "n": len(rs), "hits": len(hits),
        "ttfbs": sorted((r[3] - r[2]) / 1e6 for r in hits),
        "bws": sorted(r[1] / 1048576 / ((r[5] - r[2]) / 1e9) for r in hits),
        "fio": fio_mib("big-" + s),
    }
# WEB
web = {}
for s in systems:
    web[s] = {"pop": result("web-%s-populate" % s), "origin": origin("web-" + s),
              "ver": result("web-%s-verify" % s), "pts": {}}
    for c in conns:
        rs = rows("web-%s-c%d" % (s, c))
        done = [(r[5] - r[2]) / 1e3 for r in rs if r[0] != "error"]
        web[s]["pts"][c] = {"r": result("web-%s-c%d" % (s, c)),
                            "p50": pct(done, 50), "p95": pct(done, 95)}

def valid_big(s):
    o = big[s]["origin"]
    b = big[s]
    return (o[1] == 0 and b["r"]["errors"] == 0 and b["pop"]["errors"] == 0
            and b["ver"]["errors"] == 0 and b["hits"] == b["n"])

L_ = []
w("# HTTP caches in front of one origin: Vinyl Cache, nginx, goblind (%s)%s"
  % (datetime.date.today(), " — quick run" if quick == "1" else ""))
w("")
w("Generated by `%s` in %s s on loopback; client `goblinctl bench --proto http` "
  "(epoll, keep-alive, one request in flight per connection). %s." % (inv, elapsed, gd_note))
w("Each system starts empty in front of a fresh origin, is populated through, "
  "measured, then stopped and its disk files deleted before the next.")
w("")
w("## a. BIG: one connection, serial, three shuffled passes")
w("")
w("Corpus: %s. `%s`" % (big_how, sizes("big-%s" % systems[0]).replace("sizes", "measured requests:").strip()))
w("")
w("Origin: `bench/origin` synthesizing each object's bytes (the payload "
  "`goblinctl bench --verify` checks). Population: every object once, "
  "`--sweep --conns 1 --verify`. Page cache dropped "
  "(`echo 3 > /proc/sys/vm/drop_caches`), then the measured manifest "
  "(3 passes) replayed in order on one connection without `--verify`, then "
  "every object read again with `--verify` (the stored bytes are right).")
w("")
w("goblind-origin is goblind without `--mirror`, the same objects PUT "
  "into it first (`goblinctl bench --populate-only`), no origin behind it. "
  "After each goblind's passes, fio reads goblind's SSD file once: one "
  "sequential stream, `fio --rw=read --bs=1M --direct=1 --ioengine=io_uring "
  "--iodepth=4 --mem=shmhuge` (1 MiB reads four deep, as a goblind reader "
  "streams a tail): the device's ceiling for one stream, in the last column.")
w("")
w("| system | origin requests: population / passes / verify | hits of requests | median TTFB ms | median payload TTFB ms | median per-request MiB/s | aggregate MiB/s | errors | valid | fio one stream MiB/s (per-request median / fio) |")
w("|---|---|---|---|---|---|---|---|---|---|")
for s in big_systems:
    b = big[s]
    fio = ("%.0f (%.2f)" % (b["fio"], b["bw"] / b["fio"])) if b["fio"] else ""
    w("| %s | %d / %d / %d (%d objects) | %d of %d | %.3f | %.3f | %.0f | %.0f | %d | %s | %s |" % (
        s, b["origin"][0], b["origin"][1], b["origin"][2],
        int(max(b["pop"]["gets"], b["pop"]["sets"])), b["hits"], b["n"],
        b["ttfb_ms"], b["pttfb_ms"], b["bw"], b["r"]["mib_per_s"],
        int(b["r"]["errors"] + b["ver"]["errors"]),
        "yes" if valid_big(s) else "NO", fio))
w("")
w("Population (origin -> cache -> client, one connection; goblind-origin: "
  "PUT): " + ", ".join(
    "%s %.0f MiB/s" % (s, big[s]["pop"]["mib_per_s"]) for s in big_systems) + ".")
w("")
if quick == "1":
    w("Quick mode: the corpus fits in RAM (see the machine below), so these "
      "are memory hits for every system, not its disk path; full BIG needs "
      "a corpus of 1.5x RAM.")
    w("")
w("Dropping the page cache evicts nginx's cache files but not Vinyl's "
  "file storage while varnishd maps it (WORKLOADS.md, BIG). Client, caches "
  "and origin share this machine's CPUs unpinned.")
w("")
w("## b. WEB at %s: population at C32, then the measured manifest" % web_scale)
w("")
w("Origin: nginx (1 worker, sendfile, `expires 1d`) serving the files of "
  "`bench/gen --materialize`, its requests counted by its access log. `%s`" % sizes("web-%s-populate" % systems[0]).strip())
w("")
w("| system | fill MiB/s (C32) | fill objects/s | origin requests: population / measured / verify | verify errors |")
w("|---|---|---|---|---|")
for s in systems:
    p = web[s]["pop"]
    o = web[s]["origin"]
    w("| %s | %.0f | %.0f | %d / %d / %d (%d objects) | %d |" % (
        s, p["mib_per_s"], p["ops_per_s"], o[0], o[1], o[2], int(p["gets"]),
        int(web[s]["ver"]["errors"])))
w("")
w("Measured manifest (`%s`), replayed in order (`--sweep`) at each concurrency:" %
  sizes("web-%s-c%d" % (systems[0], conns[0])).strip())
w("")
w("| system | connections | requests/s | MiB/s | completion p50 us | completion p95 us | hits | misses | errors |")
w("|---|---|---|---|---|---|---|---|---|")
for s in systems:
    for c in conns:
        pt = web[s]["pts"][c]
        r = pt["r"]
        w("| %s | %d | %.0f | %.0f | %.0f | %.0f | %d | %d | %d |" % (
            s, c, r["ops_per_s"], r["mib_per_s"], pt["p50"], pt["p95"],
            r["hits"], r["misses"], r["errors"]))
w("")

# plots
def write_series(name, pts):
    path = os.path.join(logs, name)
    with open(path, "w") as f:
        for p in pts:
            f.write("%s %s\n" % p)
    return path

cdfs = []
for s in big_systems:
    v = big[s]["ttfbs"]
    cdfs.append((s, write_series("big-%s.cdf" % s,
                 [(x, (i + 1) / len(v)) for i, x in enumerate(v)])))
tp = [(s, write_series("web-%s.tput" % s,
       [(c, web[s]["pts"][c]["r"]["mib_per_s"]) for c in conns])) for s in systems]
p50 = [(s, write_series("web-%s.p50" % s,
        [(c, web[s]["pts"][c]["p50"]) for c in conns])) for s in systems]
gp = """set terminal svg size 720,420 dynamic font "sans,11"
set grid
set output "%s-big-ttfb.svg"
set title "a. BIG: time to first byte of each request (one connection)"
set logscale x
set xlabel "TTFB, ms (log)"
set ylabel "fraction of requests"
set key bottom right
plot %s
set output "%s-web-tput.svg"
set title "b. WEB: throughput against connections"
set logscale x 2
unset logscale y
set xlabel "connections"
set ylabel "MiB/s"
set key top left
plot %s
set output "%s-web-p50.svg"
set title "b. WEB: median completion against connections"
set logscale y
set ylabel "completion p50, us (log)"
plot %s
""" % (base, ", ".join('"%s" using 1:2 with steps lw 2 title "%s"' % (p, s) for s, p in cdfs),
       base, ", ".join('"%s" using 1:2 with linespoints lw 2 title "%s"' % (p, s) for s, p in tp),
       base, ", ".join('"%s" using 1:2 with linespoints lw 2 title "%s"' % (p, s) for s, p in p50))
subprocess.run(["gnuplot"], input=gp.encode(), check=True)
b = os.path.basename(base)
w("## Plots")
w("")
w("![BIG TTFB CDF](%s-big-ttfb.svg)" % b)
w("")
w("![WEB throughput](%s-web-tput.svg)" % b)
w("")
w("![WEB median completion](%s-web-p50.svg)" % b)
w("")

# ratios: bigger is better for goblind
if "goblind" in systems:
    g, v = "goblind", "varnish"
    ratios = {
        "big_ttfb_ratio": big[v]["ttfb_ms"] / big[g]["ttfb_ms"],
        "big_bw_ratio": big[g]["bw"] / big[v]["bw"],
        "web_fill_ratio": web[g]["pop"]["mib_per_s"] / web[v]["pop"]["mib_per_s"],
        "web_tput_ratio_min": min(web[g]["pts"][c]["r"]["mib_per_s"] /
                                  web[v]["pts"][c]["r"]["mib_per_s"] for c in conns),
    }
    # issue 21's targets: the first byte in us (smaller is better), and
    # the bandwidth against nginx proxy_cache's
    ratios["big_ttfb_us"] = big[g]["ttfb_ms"] * 1000
    if "nginx" in systems:
        ratios["big_bw_vs_nginx"] = big[g]["bw"] / big["nginx"]["bw"]
    if big[g]["fio"]:
        ratios["big_bw_vs_fio"] = big[g]["bw"] / big[g]["fio"]
    o = "goblind-origin"
    if o in big:
        ratios["origin_big_ttfb_us"] = big[o]["ttfb_ms"] * 1000
        ratios["origin_big_ttfb_ratio"] = big[v]["ttfb_ms"] / big[o]["ttfb_ms"]
        if "nginx" in systems:
            ratios["origin_big_bw_vs_nginx"] = big[o]["bw"] / big["nginx"]["bw"]
        if big[o]["fio"]:
            ratios["origin_big_bw_vs_fio"] = big[o]["bw"] / big[o]["fio"]
    res = "RESULT " + " ".join("%s=%.2f" % kv for kv in ratios.items())
else:
    res = ("RESULT big_ttfb_ratio=NA big_bw_ratio=NA web_fill_ratio=NA "
           "web_tput_ratio_min=NA big_ttfb_us=NA big_bw_vs_nginx=NA")
res += " " + " ".join(
    "%s_big_ttfb_ms=%.3f %s_big_bw_mibs=%.0f %s_web_fill_mibs=%.0f %s_web_tput_mibs=%s" % (
        s, big[s]["ttfb_ms"], s, big[s]["bw"], s, web[s]["pop"]["mib_per_s"], s,
        "/".join("%.0f" % web[s]["pts"][c]["r"]["mib_per_s"] for c in conns))
    for s in systems)
w("## Result")
w("")
w("Ratios are goblind against Vinyl Cache, each so that bigger is better "
  "for goblind (Vinyl's median TTFB / goblind's; goblind's median "
  "per-request bandwidth / Vinyl's; fill bandwidth; the smallest WEB "
  "throughput ratio over the concurrencies); `big_ttfb_us` is goblind's "
  "median BIG TTFB in microseconds (smaller is better), "
  "`big_bw_vs_nginx` its median per-request bandwidth over nginx "
  "proxy_cache's and `big_bw_vs_fio` over fio's one stream of its file; "
  "the `origin_` keys are the same for goblind-origin; NA while goblind "
  "has no `--mirror`.")
w("")
w("```")
w(res)
w("```")
w("")
w("## Configurations")
w("")
w("- Vinyl Cache (Debian `varnish`): `varnishd -F -j none -a 127.0.0.1:PORT "
  "-s file,DIR/storage.bin,SIZE -p timeout_idle=3600 -p send_timeout=3600`, "
  "SIZE = corpus x 1.25 + 512 MiB on the scratch disk; VCL: `vcl_recv` "
  "returns hash, `vcl_backend_response` sets `beresp.ttl = 1d`, "
  "`beresp.grace = 0s`, `beresp.do_stream = true` and delivers (no "
  "hit-for-pass). Default thread pools.")
w("- nginx proxy_cache: `worker_processes auto`, `proxy_cache_path DIR "
  "levels=1:2 keys_zone=gs:64m max_size=SIZE use_temp_path=off` on the same "
  "disk, `proxy_buffering on`, `proxy_cache_valid 200 1d`, "
  "`proxy_cache_lock on`, upstream keepalive 64, sendfile, no `tcp_nopush` "
  "(with it, the end of each cached response waited for the client's "
  "40 ms delayed ACK: a first quick run measured 187 MiB/s at C16).")
w("- goblind: `goblind --store DIR --http-port PORT --no-memcache "
  "--mirror URL --max-item 8G --ssd-size SIZE RAM --max-conns 4096 "
  "--http-timeout 0`: its SSD tier on "
  "the same disk, sized like the others' storage; for WEB `--memory 2G "
  "--small-memory 4G --ram-head 1M` (2 GiB of RAM heads of 1 MiB and 4 GiB "
  "for objects under 1 MiB: at 1/8 those are 2.9 GiB, and the 1,952 larger "
  "objects' heads 1.9 GiB), while the others use the page cache, "
  "unbounded, and `--cores 4`: two workers per CPU, since the client and "
  "the origin share the two CPUs (with the default one per CPU, p95 was "
  "higher and p50 lower); for BIG `--memory 256M --small-memory 64M` (a few heads of "
  "the default 256 KiB)" +
  ("" if "goblind" in systems else " — not run: this goblind has no `--mirror` yet."))
w("")
w("## RESULT lines of every run")
w("")
for f in sorted(os.listdir(logs)):
    if f.endswith(".txt") and (f.startswith("big-") or f.startswith("web-")):
        w("`%s`: `%s`" % (f[:-4], result(f[:-4])["line"]))
        w("")
w("## Machine")
w("")
w("```")
w(machine)
w("```")
open(out, "w").write("\n".join(L) + "\n")
print("vs-vinyl: wrote %s" % out)
for s in systems:
    print("vs-vinyl: %s: BIG median TTFB %.3f ms, median per-request %.0f MiB/s (%s); "
          "WEB fill %.0f MiB/s, measured MiB/s %s" % (
          s, big[s]["ttfb_ms"], big[s]["bw"], "valid" if valid_big(s) else "INVALID",
          web[s]["pop"]["mib_per_s"],
          " ".join("C%d:%.0f" % (c, web[s]["pts"][c]["r"]["mib_per_s"]) for c in conns)))
print(res)
PY
stamp_report "$out"
