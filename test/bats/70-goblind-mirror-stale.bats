#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# goblind --mirror (issue 18, item 6): revalidation and staleness.  A 304
# refreshes the stored headers and keeps the body; concurrent requests for
# one stale object share one revalidation; stale-while-revalidate serves
# at once and revalidates once in the background; a failing origin
# (error status, dropped connection, timeout) gets the stale copy served
# where stale-if-error or --mirror-stale-on-error allow it and nothing
# forbids it; Surrogate-Control is honoured and removed.  The origin is
# stale_origin.py, whose mode each test sets.

bats_require_minimum_version 1.5.0

load goblind

PROBE="$BATS_TEST_DIRNAME/stale_origin.py"

setup() {
	gd_setup goblind-stale
}

teardown() {
	gd_teardown
}

# probe: start the origin; sets OPORT
probe() {
	gd_origin "$T/oport" "$T/probe.log" "$PY" "$PROBE" "$T/oport"
	OPORT=$GD_ORIGIN_PORT
}

# mode JSON: set the origin's behaviour
mode() {
	curl -sf -X POST --data-binary "$1" \
		"http://127.0.0.1:$OPORT/_probe/mode" >/dev/null
}

ocount() {
	curl -sf "http://127.0.0.1:$OPORT/_probe/count"
}

# get PATH NAME: GET through the mirror; head in $T/NAME.h, body in
# $T/NAME.b, status in $T/NAME.s
get() {
	curl -s -m 20 -D "$T/$2.h" -o "$T/$2.b" -w '%{http_code}' \
		"http://127.0.0.1:$HPORT/$1" >"$T/$2.s"
	tr -d '\r' <"$T/$2.h" >"$T/$2.hh"
	mv "$T/$2.hh" "$T/$2.h"
}

# hdr NAME FILE: the value of a response header
hdr() {
	awk -v n="$1" 'BEGIN { IGNORECASE = 1 }
		index(tolower($0), tolower(n) ":") == 1 {
			sub(/^[^:]*: */, ""); print; exit }' "$2"
}

@test "issue 18: a failing origin gets the stale copy within --mirror-stale-on-error, Warning-free and with its Age" {
	probe
	mode '{"mode": "ok", "body": "stored v1\n", "headers": {"Cache-Control": "max-age=1"}}'
	gd_start s --mirror "http://127.0.0.1:$OPORT" --mirror-stale-on-error 60 \
		--mirror-timeout 1
	get o 1
	[ "$(cat "$T/1.s")" = 200 ]
	sleep 2.2 # stale now
	local m
	for m in 500 503 drop hang; do
		mode "{\"mode\": \"$m\", \"hang_s\": 3}"
		get o "$m"
		echo "mode $m: $(cat "$T/$m.s")"
		cat "$T/$m.h"
		[ "$(cat "$T/$m.s")" = 200 ]
		[ "$(cat "$T/$m.b")" = "stored v1" ]
		[ "$(hdr X-Cache "$T/$m.h")" = STALE ]
		[ "$(hdr Age "$T/$m.h")" -ge 2 ]
		[ -z "$(hdr Warning "$T/$m.h")" ]
	done
	[ "$(ocount)" = 5 ]
}

@test "issue 18: without --mirror-stale-on-error, or past it, the origin's failure reaches the client" {
	probe
	mode '{"mode": "ok", "body": "stored v1\n", "headers": {"Cache-Control": "max-age=1"}}'
	gd_start s --mirror "http://127.0.0.1:$OPORT"
	get o 1
	sleep 2.2
	mode '{"mode": "500"}'
	get o 2
	[ "$(cat "$T/2.s")" = 500 ]
	mode '{"mode": "drop"}'
	get o 3
	[ "$(cat "$T/3.s")" = 502 ]
	gd_stop
	sleep 1 # whole seconds: the copy is now 2 s or more past its freshness
	gd_start s --mirror "http://127.0.0.1:$OPORT" --mirror-stale-on-error 1
	get o 4
	[ "$(cat "$T/4.s")" = 502 ]
	[ "$(cat "$T/4.b")" != "stored v1" ]
}

@test "issue 18: must-revalidate, proxy-revalidate, s-maxage and no-cache forbid serving stale on error" {
	probe
	gd_start s --mirror "http://127.0.0.1:$OPORT" --mirror-stale-on-error 600
	local cc i=0
	for cc in "max-age=1, must-revalidate" "max-age=1, proxy-revalidate" \
		"s-maxage=1" "max-age=1, no-cache" \
		"max-age=1, must-revalidate, stale-if-error=600"; do
		i=$((i + 1))
		mode "{\"mode\": \"ok\", \"headers\": {\"Cache-Control\": \"$cc\"}}"
		get "f$i" "a$i"
		[ "$(cat "$T/a$i.s")" = 200 ]
	done
	sleep 2.2
	mode '{"mode": "503"}'
	for i in 1 2 3 4 5; do
		get "f$i" "b$i"
		echo "f$i: $(cat "$T/b$i.s")"
		[ "$(cat "$T/b$i.s")" = 503 ]
	done
}

@test "issue 18: stale-if-error in the response or the request allows stale on error without the option" {
	probe
	mode '{"mode": "ok", "body": "sie\n", "headers": {"Cache-Control": "max-age=1, stale-if-error=60"}}'
	gd_start s --mirror "http://127.0.0.1:$OPORT"
	get r 1
	mode '{"mode": "ok", "body": "plain\n", "headers": {"Cache-Control": "max-age=1"}}'
	get q 2
	sleep 2.2
	mode '{"mode": "503"}'
	get r 3
	[ "$(cat "$T/3.s")" = 200 ]
	[ "$(cat "$T/3.b")" = sie ]
	[ "$(hdr X-Cache "$T/3.h")" = STALE ]
	# the request's own stale-if-error
	curl -s -o "$T/4.b" -w '%{http_code}' -H 'Cache-Control: stale-if-error=60' \
		"http://127.0.0.1:$HPORT/q" >"$T/4.s"
	[ "$(cat "$T/4.s")" = 200 ]
	[ "$(cat "$T/4.b")" = plain ]
	get q 5
	[ "$(cat "$T/5.s")" = 503 ]
}

hstat() {
	curl -s "http://127.0.0.1:$HPORT/_goblin/stats" |
		"$PY" -c 'import json,sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1"
}

@test "issue 18: a 304 refreshes the stored headers and keeps the body: one origin request, no body refetched" {
	probe
	mode '{"mode": "cond", "body": "body v1\n", "etag": "\"e1\"", "headers": {"Cache-Control": "max-age=1", "Content-Language": "en", "X-Version": "1", "X-Kept": "yes"}, "headers304": {"Cache-Control": "max-age=100", "Content-Language": "fr", "X-Version": "2", "Content-Encoding": "gzip"}}'
	gd_start s --mirror "http://127.0.0.1:$OPORT"
	get o 1
	[ "$(cat "$T/1.b")" = "body v1" ]
	[ "$(hdr Content-Language "$T/1.h")" = en ]
	local bytes
	bytes=$(hstat origin_bytes)
	sleep 2.2
	# the origin would now send another body: only a 304 keeps v1
	mode '{"body": "body v2 is longer\n"}'
	get o 2
	[ "$(cat "$T/2.s")" = 200 ]
	[ "$(cat "$T/2.b")" = "body v1" ]
	[ "$(hdr X-Cache "$T/2.h")" = REVALIDATED ]
	[ "$(hdr Content-Language "$T/2.h")" = fr ]
	[ "$(hdr Cache-Control "$T/2.h")" = max-age=100 ]
	[ "$(hdr X-Version "$T/2.h")" = 2 ]
	[ "$(hdr X-Kept "$T/2.h")" = yes ]
	# the stored body is not gzip: a 304 does not say otherwise
	[ -z "$(hdr Content-Encoding "$T/2.h")" ]
	[ "$(grep -ci '^X-Version:' "$T/2.h")" = 1 ]
	[ "$(ocount)" = 2 ]
	curl -s "http://127.0.0.1:$OPORT/_probe/log" | grep -q '"If-None-Match": "\\"e1\\""'
	# fresh for 100 s now: a hit, with the refreshed headers
	get o 3
	[ "$(hdr X-Cache "$T/3.h")" = HIT ]
	[ "$(cat "$T/3.b")" = "body v1" ]
	[ "$(hdr Content-Language "$T/3.h")" = fr ]
	[ "$(hdr X-Version "$T/3.h")" = 2 ]
	[ "$(ocount)" = 2 ]
	[ "$(hstat origin_bytes)" = "$bytes" ]
	[ "$(hstat mirror_not_modified)" = 1 ]
	[ "$(hstat mirror_stored)" = 1 ]
}

@test "issue 18: concurrent requests for one stale object share one revalidation, and one failed one serves them all stale" {
	probe
	mode '{"mode": "cond", "body": "shared\n", "headers": {"Cache-Control": "max-age=1, stale-if-error=60"}, "headers304": {"Cache-Control": "max-age=1, stale-if-error=60"}}'
	gd_start s --mirror "http://127.0.0.1:$OPORT"
	get o 0
	sleep 2.2
	mode '{"delay_ms": 1500}'
	local i pids=()
	for i in 1 2 3 4 5 6 7 8; do
		get o "c$i" &
		pids+=($!)
	done
	for i in "${pids[@]}"; do wait "$i"; done
	for i in 1 2 3 4 5 6 7 8; do
		[ "$(cat "$T/c$i.s")" = 200 ]
		[ "$(cat "$T/c$i.b")" = shared ]
	done
	[ "$(ocount)" = 2 ]
	[ "$(hstat mirror_revalidations)" = 1 ]
	# stale again; the origin answers 503 late: one request, all stale
	sleep 2.2
	mode '{"mode": "503", "delay_ms": 1500}'
	pids=()
	for i in 1 2 3 4 5 6 7 8; do
		get o "d$i" &
		pids+=($!)
	done
	for i in "${pids[@]}"; do wait "$i"; done
	for i in 1 2 3 4 5 6 7 8; do
		[ "$(cat "$T/d$i.s")" = 200 ]
		[ "$(cat "$T/d$i.b")" = shared ]
		[ "$(hdr X-Cache "$T/d$i.h")" = STALE ]
	done
	[ "$(ocount)" = 3 ]
}

@test "issue 18: within stale-while-revalidate the stale copy is served at once and one background revalidation refreshes it" {
	probe
	mode '{"mode": "cond", "body": "swr\n", "headers": {"Cache-Control": "max-age=1, stale-while-revalidate=60"}, "headers304": {"Cache-Control": "max-age=100"}}'
	gd_start s --mirror "http://127.0.0.1:$OPORT"
	get o 0
	sleep 2.2
	# the revalidation takes 2 s: every client is answered long before
	mode '{"delay_ms": 2000}'
	local i pids=() t0 t1
	t0=$(date +%s%N)
	for i in 1 2 3 4 5 6; do
		get o "c$i" &
		pids+=($!)
	done
	for i in "${pids[@]}"; do wait "$i"; done
	t1=$(date +%s%N)
	echo "6 stale answers in $(((t1 - t0) / 1000000)) ms"
	[ $(((t1 - t0) / 1000000)) -lt 1500 ]
	for i in 1 2 3 4 5 6; do
		[ "$(cat "$T/c$i.s")" = 200 ]
		[ "$(cat "$T/c$i.b")" = swr ]
		[ "$(hdr X-Cache "$T/c$i.h")" = STALE ]
		[ "$(hdr Age "$T/c$i.h")" -ge 2 ]
	done
	sleep 2.5 # the background revalidation's 304 is in
	[ "$(ocount)" = 2 ]
	[ "$(hstat mirror_background_revalidations)" = 1 ]
	get o 7
	[ "$(hdr X-Cache "$T/7.h")" = HIT ]
	[ "$(hdr Cache-Control "$T/7.h")" = max-age=100 ]
	[ "$(cat "$T/7.b")" = swr ]
	# a client that asks for no-cache is not given the stale copy
	mode '{"delay_ms": 0, "headers": {"Cache-Control": "max-age=1, stale-while-revalidate=60"}, "headers304": {"Cache-Control": "max-age=1, stale-while-revalidate=60"}}'
	get n 8
	sleep 2.2
	curl -s -D "$T/9.h" -o /dev/null -H 'Cache-Control: no-cache' \
		"http://127.0.0.1:$HPORT/n"
	grep -q '^X-Cache: REVALIDATED' "$T/9.h"
}

@test "issue 18: Surrogate-Control max-age and no-store are honoured for this cache and removed before the response leaves" {
	probe
	gd_start s --mirror "http://127.0.0.1:$OPORT"
	mode '{"mode": "ok", "body": "sc\n", "headers": {"Cache-Control": "max-age=1", "Surrogate-Control": "max-age=3600"}}'
	get long 1
	mode '{"headers": {"Cache-Control": "max-age=3600", "Surrogate-Control": "max-age=1;goblin"}}'
	get short 2
	mode '{"headers": {"Cache-Control": "max-age=1", "Surrogate-Control": "max-age=3600;not-for-you"}}'
	get other 3
	mode '{"headers": {"Cache-Control": "max-age=3600", "Surrogate-Control": "no-store"}}'
	get nostore 4
	[ "$(ocount)" = 4 ]
	curl -s "http://127.0.0.1:$OPORT/_probe/log" | grep -q '"Surrogate-Capability": "goblin=\\"Surrogate/1.0\\""'
	sleep 2.2
	get long 5
	[ "$(hdr X-Cache "$T/5.h")" = HIT ]
	[ "$(hdr Cache-Control "$T/5.h")" = max-age=1 ]
	get short 6
	[ "$(hdr X-Cache "$T/6.h")" != HIT ]
	get other 7
	[ "$(hdr X-Cache "$T/7.h")" != HIT ]
	get nostore 8
	[ "$(hdr X-Cache "$T/8.h")" = PASS ]
	[ "$(ocount)" = 7 ]
	for i in 1 2 3 4 5 6 7 8; do
		[ -z "$(hdr Surrogate-Control "$T/$i.h")" ]
	done
}

@test "issue 18: a 304 without freshness keeps the stored Cache-Control's, and one with another strong ETag is not taken for the stored copy" {
	probe
	mode '{"mode": "cond", "body": "body e1\n", "etag": "\"e1\"", "headers": {"Cache-Control": "max-age=3, stale-if-error=5"}, "headers304": {"X-Refreshed": "1"}}'
	gd_start s --mirror "http://127.0.0.1:$OPORT"
	get o 1
	sleep 4.2
	get o 2
	[ "$(hdr X-Cache "$T/2.h")" = REVALIDATED ]
	[ "$(hdr X-Refreshed "$T/2.h")" = 1 ]
	# the stored max-age=3 still holds: fresh again after the 304
	get o 3
	[ "$(hdr X-Cache "$T/3.h")" = HIT ]
	[ "$(hdr Cache-Control "$T/3.h")" = "max-age=3, stale-if-error=5" ]
	[ "$(ocount)" = 2 ]
	# a 304 that names "e2" is about another representation: the mirror
	# asks again without a condition and serves and stores what comes
	sleep 4.2
	mode '{"mode": "force304", "etag": "\"e2\"", "body": "body e2\n"}'
	get o 4
	[ "$(cat "$T/4.s")" = 200 ]
	[ "$(cat "$T/4.b")" = "body e2" ]
	[ "$(ocount)" = 4 ]
	get o 5
	[ "$(hdr X-Cache "$T/5.h")" = HIT ]
	[ "$(cat "$T/5.b")" = "body e2" ]
}

@test "issue 18: readers of a stale object while the origin flips between 304, new bodies, 503 and dropped connections: every answer is 200 and one whole version" {
	probe
	mode '{"mode": "ok", "body": "version 0\n", "etag": "\"e0\"", "headers": {"Cache-Control": "max-age=1, stale-if-error=600"}, "headers304": {"Cache-Control": "max-age=1, stale-if-error=600"}}'
	gd_start s --mirror "http://127.0.0.1:$OPORT" --mirror-timeout 2
	get o 0
	[ "$(cat "$T/0.s")" = 200 ]
	local st nm sd
	# rounds of 4 s, up to three, until each path was taken while the
	# readers read (under load one round may see no 304); every round's
	# answers must all be right (a round may begin with the last body of
	# the round before: the bodies the origin gave are kept in a file)
	local round
	echo "version 0" >"$T/bodies"
	for round in 1 2 3; do
		"$PY" - "$HPORT" "$OPORT" "$T/bodies" "$round" <<'PY'
import json, sys, threading, time, urllib.request, urllib.error

hport, oport, known, rnd = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
stop = time.time() + 4.0
bodies = {l + "\n" for l in open(known).read().splitlines()}
lock = threading.Lock()
bad = []
count = [0]

def ctl(m):
    urllib.request.urlopen("http://127.0.0.1:%s/_probe/mode" % oport,
                           json.dumps(m).encode(), timeout=5).read()

def flipper():
    n = 1000 * rnd
    while time.time() < stop:
        n += 1
        k = n % 4
        if k == 0:
            body = "version %d\n" % n
            with lock:
                bodies.add(body)
            with open(known, "a") as f:
                f.write(body)
            ctl({"mode": "ok", "body": body, "etag": '"e%d"' % n})
        elif k == 1:
            ctl({"mode": "cond"})
        elif k == 2:
            ctl({"mode": "503"})
        else:
            ctl({"mode": "drop"})
        time.sleep(0.3)

def reader():
    while time.time() < stop:
        try:
            r = urllib.request.urlopen("http://127.0.0.1:%s/o" % hport,
                                       timeout=10)
            st, b = r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            st, b = e.code, e.read().decode()
        except Exception as e:
            st, b = 0, repr(e)
        with lock:
            count[0] += 1
            if st != 200 or b not in bodies:
                bad.append((st, b))

ts = [threading.Thread(target=reader) for _ in range(6)]
ts.append(threading.Thread(target=flipper))
for t in ts:
    t.start()
for t in ts:
    t.join()
print("answers: %d, bad: %d" % (count[0], len(bad)))
for b in bad[:10]:
    print("bad:", b)
sys.exit(1 if bad or count[0] < 20 else 0)
PY
		st=$(hstat mirror_served_stale) nm=$(hstat mirror_not_modified)
		sd=$(hstat mirror_stored)
		echo "served stale $st, 304s $nm, stored $sd"
		[ "$st" -gt 0 ] && [ "$nm" -gt 0 ] && [ "$sd" -gt 1 ] && break
	done
	# each path was taken while the readers read
	[ "$st" -gt 0 ] && [ "$nm" -gt 0 ] && [ "$sd" -gt 1 ]
}
