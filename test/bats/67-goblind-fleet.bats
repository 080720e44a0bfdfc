#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# Issue 18, item 11: scale-out of goblind --mirror with an existing
# engine, as goblind(8) SCALING OUT shows it: nginx hashing $request_uri
# consistently over three goblind --mirror nodes in front of one origin.
# (51-goblind-scaleout.bats does the same for memcache, with twemproxy.)

bats_require_minimum_version 1.5.0

load goblind

ORIGIN="$BATS_TEST_DIRNAME/../../build/bench/origin"
GEN="$BATS_TEST_DIRNAME/../../build/bench/gen"
N=60

setup() {
	command -v nginx >/dev/null || {
		echo "nginx is missing (Debian nginx-light; make deps-test)" >&2
		return 1
	}
	gd_setup goblind-fleet
}

teardown() {
	gd_teardown
}

# synth: bench/origin (payloads made from key and size); sets OPORT
synth() {
	"$ORIGIN" --port-file "$T/oport" >"$T/origin.log" 2>&1 &
	GD_PIDS+=($!)
	for _ in $(seq 100); do
		[ -s "$T/oport" ] && break
		sleep 0.05
	done
	OPORT=$(cat "$T/oport")
}

origin_requests() {
	curl -s "http://127.0.0.1:$OPORT/_origin/stats" |
		awk '$1 == "requests" { print $2 }'
}

# hstat PORT NAME: a counter of goblind's /_goblin/stats
hstat() {
	curl -s "http://127.0.0.1:$1/_goblin/stats" |
		"$PY" -c 'import json,sys; print(json.load(sys.stdin)[sys.argv[1]])' "$2"
}

# size_of I: object I's size, 1 KB to about 3 MB (a RAM head and an SSD
# tail for the big ones)
size_of() {
	if (($1 % 6 == 0)); then
		echo $((2000000 + $1 * 17011))
	else
		echo $((1000 + ($1 * $1 * 7919) % 300000))
	fi
}

# order C: the object numbers in client C's order
order() {
	case $1 in
	1) seq $N ;;
	2) seq $N -1 1 ;;
	*) seq $N | awk '{ print ($1 * 7) % '$N' + 1 }' ;;
	esac
}

# fetch_all C ORDER [hit]: client C gets the objects of ORDER through nginx
# and compares every byte; with hit, each must be an X-Cache: HIT
fetch_all() {
	local i size d="$T/got$1"
	mkdir -p "$d"
	for i in $2; do
		size=$(size_of "$i")
		curl -sf -D "$d/$i.h" -o "$d/$i" \
			"http://127.0.0.1:$NPORT/fleet/o$i@$size" || {
			echo "client $1: object $i failed"
			return 1
		}
		cmp "$T/want/$i" "$d/$i" || return 1
		[ -z "${3:-}" ] || grep -q '^X-Cache: HIT' "$d/$i.h" || {
			echo "client $1: object $i not a hit:"
			cat "$d/$i.h"
			return 1
		}
	done
}

@test "issue 18: nginx hashing \$request_uri over three goblind --mirror nodes fetches each object from the origin once, every byte right" {
	local hports=() i p stored total=0 nodes=0
	synth
	for i in 1 2 3; do
		gd_start "n$i" --mirror "http://127.0.0.1:$OPORT"
		hports+=("$HPORT")
	done
	NPORT=$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	mkdir -p "$T/nginx/tmp"
	local user=
	[ "$(id -u)" != 0 ] || user="user root;"	# the temp dir is 0700
	# the configuration of goblind(8), SCALING OUT
	cat >"$T/nginx/nginx.conf" <<-EOF
	daemon off;
	$user
	worker_processes 1;
	pid $T/nginx/nginx.pid;
	error_log $T/nginx/error.log;
	events { worker_connections 256; }
	http {
		access_log off;
		client_body_temp_path $T/nginx/tmp/body;
		proxy_temp_path $T/nginx/tmp/proxy;
		fastcgi_temp_path $T/nginx/tmp/fastcgi;
		uwsgi_temp_path $T/nginx/tmp/uwsgi;
		scgi_temp_path $T/nginx/tmp/scgi;
		upstream goblin {
			hash \$request_uri consistent;
			server 127.0.0.1:${hports[0]};
			server 127.0.0.1:${hports[1]};
			server 127.0.0.1:${hports[2]};
			keepalive 16;
		}
		server {
			listen 127.0.0.1:$NPORT;
			location / {
				proxy_pass http://goblin;
				proxy_http_version 1.1;
				proxy_set_header Connection "";
				proxy_buffering off;
			}
		}
	}
	EOF
	nginx -p "$T/nginx" -c "$T/nginx/nginx.conf" -e "$T/nginx/error.log" \
		>"$T/nginx/nginx.log" 2>&1 &
	GD_PIDS+=($!)
	for _ in $(seq 100); do
		curl -s -o /dev/null "http://127.0.0.1:$NPORT/_goblin/stats" && break
		sleep 0.05
	done

	mkdir -p "$T/want"
	for i in $(seq $N); do
		size=$(size_of "$i")
		"$GEN" --payload "fleet/o$i@$size" "$size" >"$T/want/$i"
	done
	# first pass: three clients at once, each over all the objects in
	# its own order, so that misses of one object meet on its node (one
	# origin request, the others reading the same fill)
	local c pids=()
	for c in 1 2 3; do
		fetch_all "$c" "$(order "$c")" >"$T/client$c.log" 2>&1 &
		pids+=($!)
	done
	for c in 1 2 3; do
		wait "${pids[$((c - 1))]}" || {
			cat "$T/client$c.log"
			return 1
		}
	done
	echo "pass 1: origin requests $(origin_requests)"
	[ "$(origin_requests)" = "$N" ]
	# second pass, one client in yet another order: a balancer that only
	# took turns would send objects to other nodes this time; every one
	# comes from the node that stored it
	fetch_all 4 "$(seq $N -1 1)" hit
	echo "pass 2: origin requests $(origin_requests)"
	[ "$(origin_requests)" = "$N" ]
	for p in "${hports[@]}"; do
		stored=$(hstat "$p" mirror_stored)
		echo "node on $p stored $stored objects"
		total=$((total + stored))
		((stored == 0)) || nodes=$((nodes + 1))
	done
	[ "$total" = "$N" ]
	((nodes >= 2))	# spread, not all on one node
}
