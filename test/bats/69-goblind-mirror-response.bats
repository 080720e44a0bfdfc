#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# goblind --mirror's responses (issue 18): every end-to-end header stored
# and replayed, Age, the bound on a stored head, the cacheable statuses,
# heuristic freshness and the parsing of Expires, Cache-Control, Pragma
# and ETag.  The origin is answer_origin.py: it answers with the response
# file the test writes, byte for byte.

bats_require_minimum_version 1.5.0

load goblind

PROBE="$BATS_TEST_DIRNAME/answer_origin.py"

setup() {
	gd_setup goblind-mirror-resp
	P="$T/probe"
	mkdir -p "$P"
	gd_origin "$T/pport" "$T/probe.log" "$PY" "$PROBE" "$P" "$T/pport"
	PPORT=$GD_ORIGIN_PORT
}

teardown() {
	gd_teardown
}

# answer NAME: the probe's response for /NAME, from standard input
answer() {
	cat >"$P/$1"
}

# origin_count NAME: the requests the probe had for /NAME
origin_count() {
	grep -c " /$1\$" "$P/_log" 2>/dev/null || true
}

# get NAME [CURL ARGS]: GET through the mirror; head in $T/h, body in $T/b
get() {
	local n="$1"
	shift
	curl -s -D "$T/h" -o "$T/b" "$@" "http://127.0.0.1:$HPORT/$n"
	tr -d '\r' <"$T/h" >"$T/hh"
}

# hdr NAME: the values of header NAME in the last response, one a line
hdr() {
	awk -v n="$(tr 'A-Z' 'a-z' <<<"$1")" -F': ' \
		'{ k = tolower($1) } k == n { sub(/^[^:]*: /, ""); print }' \
		"$T/hh"
}

@test "issue 18: Link, Access-Control-Allow-Origin and custom headers are stored and replayed on a hit" {
	local now
	now=$(date -u '+%a, %d %b %Y %H:%M:%S GMT')
	answer links <<EOF
HTTP/1.1 200 OK
Date: $now
Server: probe/1
Cache-Control: max-age=3600
Content-Type: text/css
Link: </a.css>; rel=preload
Link: </b.js>; rel=preload
Access-Control-Allow-Origin: *
X-Custom-Thing: 42 and more
Connection: x-hop
X-Hop: not for you
Keep-Alive: timeout=5

body
EOF
	gd_start s --mirror "http://127.0.0.1:$PPORT"
	get links
	hdr X-Cache | grep -qx MISS
	get links
	hdr X-Cache | grep -qx HIT
	[ "$(origin_count links)" = 1 ]
	[ "$(cat "$T/b")" = body ]
	[ "$(hdr Link | wc -l)" = 2 ]
	hdr Link | head -1 | grep -qx '</a.css>; rel=preload'
	hdr Link | tail -1 | grep -qx '</b.js>; rel=preload'
	hdr Access-Control-Allow-Origin | grep -qx '\*'
	hdr X-Custom-Thing | grep -qx '42 and more'
	hdr Content-Type | grep -qx 'text/css'
	hdr Cache-Control | grep -qx 'max-age=3600'
	# the origin's Date and Server stand, once each
	[ "$(hdr Date)" = "$now" ]
	[ "$(hdr Server)" = "probe/1" ]
	# hop-by-hop ones, and those Connection names, are not replayed
	[ -z "$(hdr X-Hop)" ]
	[ -z "$(hdr Keep-Alive)" ]
	! hdr Connection | grep -qi x-hop
	[ "$(hdr Content-Length)" = 5 ]
}

@test "Age on a hit (RFC 9111 sec. 4.2.3) is the origin's Age plus the time stored" {
	local now
	now=$(date -u '+%a, %d %b %Y %H:%M:%S GMT')
	answer aged <<EOF
HTTP/1.1 200 OK
Date: $now
Cache-Control: max-age=3600
Age: 100

aged
EOF
	gd_start s --mirror "http://127.0.0.1:$PPORT"
	get aged
	get aged
	hdr X-Cache | grep -qx HIT
	[ "$(hdr Age | wc -l)" = 1 ]
	local age
	age=$(hdr Age)
	[ "$age" -ge 100 ] && [ "$age" -le 103 ]
	sleep 2
	get aged
	age=$(hdr Age)
	[ "$age" -ge 102 ] && [ "$age" -le 105 ]
}

@test "issue 18: a response without Date is stored with one, and replayed with it" {
	answer nodate <<'EOF'
HTTP/1.1 200 OK
Cache-Control: max-age=3600

x
EOF
	gd_start s --mirror "http://127.0.0.1:$PPORT"
	get nodate
	local d1
	d1=$(hdr Date)
	[ -n "$d1" ]
	sleep 1.1
	get nodate
	hdr X-Cache | grep -qx HIT
	[ "$(hdr Date | wc -l)" = 1 ]
	[ "$(hdr Date)" = "$d1" ]
}

@test "issue 18: a head over --mirror-max-header is passed, not stored; under it is stored" {
	{
		printf 'HTTP/1.1 200 OK\nCache-Control: max-age=3600\n'
		for i in $(seq 40); do
			printf 'X-Filler-%d: %0100d\n' "$i" 0
		done
		printf '\nbig\n'
	} | answer bighead
	{
		printf 'HTTP/1.1 200 OK\nCache-Control: max-age=3600\n'
		printf 'X-Filler-1: %0100d\n' 0
		printf '\nsmall\n'
	} | answer smallhead
	gd_start s --mirror "http://127.0.0.1:$PPORT" --mirror-max-header 2k
	get bighead
	get bighead
	hdr X-Cache | grep -qx PASS
	[ "$(cat "$T/b")" = big ]
	[ "$(hdr X-Filler-40 | wc -c)" = 101 ]	# relayed whole
	[ "$(origin_count bighead)" = 2 ]
	get smallhead
	get smallhead
	hdr X-Cache | grep -qx HIT
	[ "$(origin_count smallhead)" = 1 ]
}

@test "issue 18: a head of 30 KiB is stored and replayed whole by default" {
	{
		printf 'HTTP/1.1 200 OK\nCache-Control: max-age=3600\n'
		for i in $(seq 300); do
			printf 'X-Filler-%d: %0090d\n' "$i" "$i"
		done
		printf '\nbig\n'
	} | answer bighead
	gd_start s --mirror "http://127.0.0.1:$PPORT"
	get bighead
	get bighead
	hdr X-Cache | grep -qx HIT
	[ "$(origin_count bighead)" = 1 ]
	[ "$(grep -c '^X-Filler-' "$T/hh")" = 300 ]
	hdr X-Filler-300 | grep -qx "$(printf '%090d' 300)"
	# and after a restart, from the journal
	gd_stop
	gd_start s --mirror "http://127.0.0.1:$PPORT"
	get bighead
	hdr X-Cache | grep -qx HIT
	[ "$(grep -c '^X-Filler-' "$T/hh")" = 300 ]
	[ "$(origin_count bighead)" = 1 ]
}

@test "issue 18: --mirror-max-header refuses sizes out of range" {
	run "$GD" --store "$T/x" "${GD_STORE_OPTS[@]}" --mirror http://127.0.0.1:1 \
		--mirror-max-header 64k
	[ "$status" -ne 0 ]
	grep -q 'mirror-max-header' <<<"$output"
	grep -q '256 to 32k' <<<"$output"
}

@test "issue 18: a 404 with max-age is stored and served twice with one origin request" {
	answer gone404 <<'EOF'
HTTP/1.1 404 Not Found
Cache-Control: max-age=3600
Content-Type: text/plain
X-Why: no such page

not here
EOF
	gd_start s --mirror "http://127.0.0.1:$PPORT"
	get gone404
	grep -q '^HTTP/1.1 404' "$T/hh"
	get gone404
	grep -q '^HTTP/1.1 404' "$T/hh"
	hdr X-Cache | grep -qx HIT
	[ "$(cat "$T/b")" = "not here" ]
	hdr X-Why | grep -qx 'no such page'
	get gone404 -I
	grep -q '^HTTP/1.1 404' "$T/hh"
	[ "$(hdr Content-Length)" = 9 ]
	[ "$(origin_count gone404)" = 1 ]
}

@test "issue 18: heuristically cacheable statuses are stored, 3xx with their Location, 204 without a body" {
	local st
	for st in 203 300 301 308 405 410 414 501; do
		printf 'HTTP/1.1 %s Whatever\nCache-Control: max-age=600\nLocation: /to/%s\n\nbody %s\n' \
			"$st" "$st" "$st" | answer "s$st"
	done
	printf 'HTTP/1.1 204 No Content\nCache-Control: max-age=600\nX-Empty: yes\n\n' |
		answer s204
	gd_start s --mirror "http://127.0.0.1:$PPORT"
	for st in 203 300 301 308 405 410 414 501; do
		get "s$st"
		get "s$st"
		grep -q "^HTTP/1.1 $st " "$T/hh"
		hdr X-Cache | grep -qx HIT
		hdr Location | grep -qx "/to/$st"
		[ "$(cat "$T/b")" = "body $st" ]
		[ "$(origin_count "s$st")" = 1 ]
	done
	get s204
	get s204
	grep -q '^HTTP/1.1 204 ' "$T/hh"
	hdr X-Cache | grep -qx HIT
	hdr X-Empty | grep -qx yes
	[ -z "$(hdr Content-Length)" ]
	[ ! -s "$T/b" ]
	[ "$(origin_count s204)" = 1 ]
}

@test "issue 18: a 302 or 500 is stored only with explicit freshness" {
	printf 'HTTP/1.1 302 Found\nLocation: /x\nLast-Modified: Mon, 01 Jan 2024 00:00:00 GMT\n\nmoved\n' |
		answer plain302
	printf 'HTTP/1.1 302 Found\nLocation: /y\nCache-Control: max-age=600\n\nmoved\n' |
		answer fresh302
	printf 'HTTP/1.1 500 Oops\nExpires: %s\n\nbroken\n' \
		"$(date -u -d '+1 hour' '+%a, %d %b %Y %H:%M:%S GMT')" |
		answer fresh500
	gd_start s --mirror "http://127.0.0.1:$PPORT"
	get plain302
	get plain302
	grep -q '^HTTP/1.1 302 ' "$T/hh"
	hdr X-Cache | grep -qx PASS
	hdr Location | grep -qx /x
	[ "$(origin_count plain302)" = 2 ]
	get fresh302
	get fresh302
	hdr X-Cache | grep -qx HIT
	hdr Location | grep -qx /y
	[ "$(origin_count fresh302)" = 1 ]
	get fresh500
	get fresh500
	grep -q '^HTTP/1.1 500 ' "$T/hh"
	hdr X-Cache | grep -qx HIT
	[ "$(cat "$T/b")" = broken ]
	[ "$(origin_count fresh500)" = 1 ]
}

@test "issue 18: heuristic freshness from Last-Modified, configurable, and only where allowed" {
	local lm
	lm=$(date -u -d '-10 days' '+%a, %d %b %Y %H:%M:%S GMT')
	printf 'HTTP/1.1 200 OK\nLast-Modified: %s\n\nold\n' "$lm" |
		answer lm200
	printf 'HTTP/1.1 404 Not Found\nLast-Modified: %s\n\nold\n' "$lm" |
		answer lm404
	# 302 is not heuristically cacheable: Last-Modified gives it nothing
	printf 'HTTP/1.1 302 Found\nLocation: /z\nLast-Modified: %s\n\nold\n' \
		"$lm" | answer lm302
	gd_start s --mirror "http://127.0.0.1:$PPORT"
	for n in lm200 lm404 lm302; do
		get $n
		get $n
	done
	[ "$(origin_count lm200)" = 1 ]
	[ "$(origin_count lm404)" = 1 ]
	[ "$(origin_count lm302)" = 2 ]
	gd_stop
	rm -f "$P/_log"
	# none: stored with its validator, revalidated on each use
	gd_start s2 --mirror "http://127.0.0.1:$PPORT" --mirror-heuristic 0
	get lm200
	get lm200
	[ "$(origin_count lm200)" = 2 ]
	[ "$(hdr X-Cache)" != HIT ]
	gd_stop
	rm -f "$P/_log"
	# 10% of 10 days capped at 2 s: stale after 2 s
	gd_start s3 --mirror "http://127.0.0.1:$PPORT" --mirror-heuristic-max 2
	get lm200
	get lm200
	[ "$(origin_count lm200)" = 1 ]
	sleep 3
	get lm200
	[ "$(origin_count lm200)" = 2 ]
}

# count_after NAME N: GET /NAME N times, print the origin's count of it
count_after() {
	local i
	for i in $(seq "$2"); do
		get "$1"
	done
	origin_count "$1"
}

@test "issue 18: Cache-Control over several lines and repeated: the first max-age counts; OWS around = is invalid" {
	printf 'HTTP/1.1 200 OK\nCache-Control: max-age=3600\nCache-Control: max-age=0\n\nx\n' |
		answer twoline
	printf 'HTTP/1.1 200 OK\nCache-Control: public, max-age=3600, max-age=1\n\nx\n' |
		answer twodir
	printf 'HTTP/1.1 200 OK\nCache-Control: max-age =3600\n\nx\n' |
		answer spaced
	printf 'HTTP/1.1 200 OK\nCache-Control: max-age="3600"\n\nx\n' |
		answer quoted
	printf 'HTTP/1.1 200 OK\nCache-Control: max-age=3600.0\n\nx\n' |
		answer decimal
	gd_start s --mirror "http://127.0.0.1:$PPORT"
	[ "$(count_after twoline 2)" = 1 ]
	[ "$(count_after twodir 2)" = 1 ]
	[ "$(count_after quoted 2)" = 1 ]
	[ "$(count_after spaced 2)" = 2 ]
	[ "$(count_after decimal 2)" = 2 ]
	# replayed as the origin sent them, both lines
	get twoline
	[ "$(hdr Cache-Control | wc -l)" = 2 ]
}

@test "issue 18: an Age that is not delta-seconds makes the response stale; a list's first member counts" {
	local a n=0
	for a in abc -7200 7200.0 '7200;foo=bar' '7200, 0'; do
		n=$((n + 1))
		printf 'HTTP/1.1 200 OK\nCache-Control: max-age=3600\nAge: %s\n\nx\n' "$a" |
			answer "age$n"
	done
	printf 'HTTP/1.1 200 OK\nCache-Control: max-age=3600\nAge: 7200\nAge: 0\n\nx\n' |
		answer agelines
	printf 'HTTP/1.1 200 OK\nCache-Control: max-age=3600\nAge: 0, 7200\n\nx\n' |
		answer agefirst
	gd_start s --mirror "http://127.0.0.1:$PPORT"
	for n in 1 2 3 4 5; do
		[ "$(count_after "age$n" 2)" = 2 ]
	done
	[ "$(count_after agelines 2)" = 2 ]
	[ "$(count_after agefirst 2)" = 1 ]
	# the origin's Age is not replayed; ours counts from the first member
	get agefirst
	[ "$(hdr Age | wc -l)" = 1 ]
	[ "$(hdr Age)" -le 2 ]
}

@test "issue 18: every invalid Expires is already expired; the first Expires line counts" {
	local good n=0 e
	good=$(date -u -d '+1 hour' '+%a, %d %b %Y %H:%M:%S GMT')
	for e in 0 'Thu, 18 Aug 2050 02:01:18 UTC' 'Thu 18 Aug 2050 02:01:18 GMT' \
		'Thu, 18 Aug 2050 2:01:18 GMT' 'Thu, 18-Aug-2050 02:01:18 GMT' never; do
		n=$((n + 1))
		printf 'HTTP/1.1 200 OK\nExpires: %s\nLast-Modified: Mon, 01 Jan 2024 00:00:00 GMT\n\nx\n' "$e" |
			answer "exp$n"
	done
	printf 'HTTP/1.1 200 OK\nExpires: %s\nExpires: 0\n\nx\n' "$good" |
		answer expfirst
	printf 'HTTP/1.1 200 OK\nExpires: Thu, 18 Aug 2050 02:01:18 GMT\n\nx\n' |
		answer expok
	gd_start s --mirror "http://127.0.0.1:$PPORT"
	for n in 1 2 3 4 5 6; do
		# not the heuristic either: an Expires, even invalid, is explicit
		[ "$(count_after "exp$n" 2)" = 2 ]
	done
	[ "$(count_after expfirst 2)" = 1 ]
	[ "$(count_after expok 2)" = 1 ]
}

@test "issue 18: Pragma: no-cache (deprecated by RFC 9111) neither makes a fresh response revalidate nor sends a request past the cache" {
	printf 'HTTP/1.1 200 OK\nCache-Control: max-age=3600\nPragma: no-cache\n\nx\n' |
		answer prag
	printf 'HTTP/1.1 200 OK\nLast-Modified: %s\nPragma: no-cache\n\nx\n' \
		"$(date -u -d '-10 days' '+%a, %d %b %Y %H:%M:%S GMT')" |
		answer pragheur
	gd_start s --mirror "http://127.0.0.1:$PPORT"
	[ "$(count_after prag 2)" = 1 ]
	[ "$(count_after pragheur 2)" = 1 ]
	get prag -H 'Pragma: no-cache'
	hdr X-Cache | grep -qx HIT
	hdr Pragma | grep -qx no-cache	# replayed, as the origin sent it
	[ "$(origin_count prag)" = 1 ]
	# Cache-Control: no-cache in the request still goes to the origin
	get prag -H 'Cache-Control: no-cache'
	[ "$(origin_count prag)" = 2 ]
}

@test "issue 18: must-understand: an unknown status is not stored, a known one is, no-store beside it ignored" {
	printf 'HTTP/1.1 599 Whatever\nCache-Control: max-age=3600, must-understand\n\nx\n' |
		answer mu599
	printf 'HTTP/1.1 200 OK\nCache-Control: max-age=3600, must-understand, no-store\n\nx\n' |
		answer mu200
	gd_start s --mirror "http://127.0.0.1:$PPORT"
	[ "$(count_after mu599 2)" = 2 ]
	grep -q '^HTTP/1.1 599 ' "$T/hh"
	[ "$(count_after mu200 2)" = 1 ]
}

@test "weak and strong ETags (obs-text too) are stored as sent and answer If-None-Match on a hit" {
	printf 'HTTP/1.1 200 OK\nCache-Control: max-age=3600\nETag: W/"v1"\n\nx\n' |
		answer weak
	printf 'HTTP/1.1 200 OK\nCache-Control: max-age=3600\nETag: "s\xfc1"\n\nx\n' |
		answer obs
	gd_start s --mirror "http://127.0.0.1:$PPORT"
	get weak
	hdr ETag | grep -qx 'W/"v1"'
	get weak -H 'If-None-Match: W/"v1"'
	grep -q '^HTTP/1.1 304 ' "$T/hh"
	get weak -H 'If-None-Match: "v1"'	# weak comparison: a match
	grep -q '^HTTP/1.1 304 ' "$T/hh"
	get weak -H 'If-None-Match: w/"v1"'	# not an entity-tag: no match
	grep -q '^HTTP/1.1 200 ' "$T/hh"
	get obs
	get obs -H "$(printf 'If-None-Match: "s\xfc1"')"
	grep -q '^HTTP/1.1 304 ' "$T/hh"
	[ "$(origin_count weak)" = 1 ]
	[ "$(origin_count obs)" = 1 ]
}

@test "issue 18: Set-Cookie does not inhibit storing (RFC 9111 sec. 7.3): stored and replayed; private still passes" {
	printf 'HTTP/1.1 200 OK\nCache-Control: max-age=3600\nSet-Cookie: a=1; Path=/\nSet-Cookie: b=2\n\nx\n' |
		answer cookie
	printf 'HTTP/1.1 200 OK\nCache-Control: private, max-age=3600\nSet-Cookie: s=secret\n\nx\n' |
		answer privcookie
	gd_start s --mirror "http://127.0.0.1:$PPORT"
	[ "$(count_after cookie 2)" = 1 ]
	hdr X-Cache | grep -qx HIT
	[ "$(hdr Set-Cookie | wc -l)" = 2 ]
	hdr Set-Cookie | head -1 | grep -qx 'a=1; Path=/'
	[ "$(count_after privcookie 2)" = 2 ]
	hdr Set-Cookie | grep -qx 's=secret'
}

@test "issue 18: no-cache=\"f\": the response is reused, the listed fields only after revalidation" {
	printf 'HTTP/1.1 200 OK\nCache-Control: max-age=3600, no-cache="Set-Cookie, X-A"\nSet-Cookie: s=1\nX-A: 1\nX-B: 2\nETag: "e1"\n\nx\n' |
		answer ncf
	gd_start s --mirror "http://127.0.0.1:$PPORT"
	get ncf
	hdr X-Cache | grep -qx MISS
	hdr Set-Cookie | grep -qx 's=1'	# the response to this request
	hdr X-A | grep -qx 1
	get ncf
	hdr X-Cache | grep -qx HIT
	[ "$(origin_count ncf)" = 1 ]
	[ -z "$(hdr Set-Cookie)" ]
	[ -z "$(hdr X-A)" ]
	hdr X-B | grep -qx 2
	hdr ETag | grep -qx '"e1"'
	hdr Cache-Control | grep -q 'no-cache="Set-Cookie, X-A"'
	# the unqualified no-cache still revalidates every use
	printf 'HTTP/1.1 200 OK\nCache-Control: max-age=3600, no-cache\nETag: "e2"\n\nx\n' |
		answer ncall
	get ncall
	get ncall
	[ "$(origin_count ncall)" = 2 ]
}
