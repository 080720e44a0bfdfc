#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# web.sh ROUNDS BUILD...: vs-vinyl --quick's WEB part for goblind --mirror
# alone (bench/gen WEB at 1/64 served by nginx as the origin, goblind with
# vs-vinyl.sh's WEB flags (its GD_PART and start_goblind), population at 32 connections, then the measured
# manifest at $CONNS connections, default "16 1024"), the goblind of each
# BUILD (a worktree with build/) in turn, ROUNDS times; one goblinctl (the
# first build's) for all.  Prints each run's MiB/s and completion p50/p99
# and goblind's tail_turns counters.
set -euo pipefail
root=$(cd "$(dirname "$0")/../../../.." && pwd)
rounds=$1
shift
d=${DIR:-/var/tmp/web21}
gctl=$1/build/goblinctl
rm -rf "$d"
mkdir -p "$d/origin"
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true' EXIT
# shellcheck source=bench/lib.sh
. "$root/bench/lib.sh" # free_port
wait_port() {
	for _ in $(seq 1200); do
		nc -z 127.0.0.1 "$1" 2>/dev/null && return 0
		sleep 0.05
	done
	echo "nothing listens on $1" >&2
	exit 1
}
"$root/build/bench/gen" WEB --scale 1/64 --out "$d/web" >/dev/null
"$root/build/bench/gen" --materialize "$d/web/files" \
	--manifest "$d/web/WEB.population" >/dev/null
n=$(wc -l <"$d/web/WEB.population")
req=$(wc -l <"$d/web/WEB.measured")
oport=$(free_port)
cat >"$d/origin/nginx.conf" <<NGX
daemon off;
user root;
pid $d/origin/nginx.pid;
error_log $d/origin/error.log warn;
worker_processes 1;
events { worker_connections 8192; }
http {
	access_log off;
	sendfile on;
	keepalive_requests 1000000;
	keepalive_timeout 3600s;
	default_type application/octet-stream;
	server {
		listen 127.0.0.1:$oport;
		root $d/web/files;
		expires 1d;
		location / { rewrite "^/([^:/]+):(.*)\$" /\$1/\$2 break; }
	}
}
NGX
nginx -c "$d/origin/nginx.conf" -e "$d/origin/error.log" &
pids+=($!)
wait_port "$oport"
for r in $(seq "$rounds"); do
	for b in "$@"; do
		cport=$(free_port)
		"$b/build/goblind" --store "$d/store" --http-port "$cport" \
			--no-memcache --mirror "http://127.0.0.1:$oport" \
			--max-item 8G --ssd-size 2G --memory 2G \
			--small-memory 4G --ram-head 1M --cores 4 \
			--max-conns 4096 --http-timeout 0 2>"$d/gd.log" &
		gpid=$!
		pids+=("$gpid")
		wait_port "$cport"
		"$gctl" bench --proto http --host 127.0.0.1 --port "$cport" \
			--no-store --sweep --conns 32 --keys "$n" \
			--size "manifest:$d/web/WEB.population" >/dev/null
		line="round $r $(date -u +%H:%M:%S) $b:"
		for c in ${CONNS:-16 1024}; do
			res=$("$gctl" bench --proto http --host 127.0.0.1 \
				--port "$cport" --no-store --sweep --conns "$c" \
				--keys "$req" --size "manifest:$d/web/WEB.measured" |
				grep '^RESULT')
			line="$line C$c $(echo "$res" | grep -o 'mib_per_s=[0-9.]*' | cut -d= -f2) MiB/s"
			line="$line p50/p99 $(echo "$res" | grep -o ' completion_us=[^ ]*' | cut -d= -f2 | cut -d/ -f1,3) us;"
		done
		turns=$(curl -s "http://127.0.0.1:$cport/_goblin/stats" |
			grep -o '"tail_turns_[a-z]*": *[0-9]*' | tr -d '" ' |
			paste -sd ' ' || true) # none before 237023f
		echo "$line $turns"
		kill "$gpid"
		wait "$gpid" 2>/dev/null || true
		rm -rf "$d/store"
	done
done
