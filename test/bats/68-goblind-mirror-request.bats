#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# goblind --mirror, the request side (issue 18): the key is the whole
# target (path and query), the origin gets the target as it came and every
# end-to-end request field, any method but GET and HEAD is passed to the
# origin and unsafe ones invalidate what is stored.  The origin is
# echo_origin.py, which echoes what it received.

bats_require_minimum_version 1.5.0

load goblind

PROBE="$BATS_TEST_DIRNAME/echo_origin.py"

setup() {
	gd_setup goblind-mirror-req
}

teardown() {
	gd_teardown
}

# probe: start echo_origin.py; sets PPORT
probe() {
	gd_origin "$T/pport" "$T/probe.log" "$PY" "$PROBE" "$T/pport"
	PPORT=$GD_ORIGIN_PORT
}

# field DOC EXPR: a python expression over the JSON document d of file DOC
field() {
	"$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

# hdr DOC NAME: the value the origin received for header NAME (case-blind;
# several lines joined by ", "), or "None"
hdr() {
	"$PY" -c '
import json,sys
d=json.load(open(sys.argv[1]))
v=[x[1] for x in d["headers"] if x[0].lower()==sys.argv[2].lower()]
print(", ".join(v) if v else None)' "$1" "$2"
}

# origin_count TARGET: how many requests the probe had for TARGET
origin_count() {
	curl -s "http://127.0.0.1:$PPORT/_probe/requests" |
		"$PY" -c 'import json,sys; print(sum(1 for r in json.load(sys.stdin) if r["target"]==sys.argv[1]))' "$1"
}

@test "issue 18: the query string is part of the key and reaches the origin unchanged" {
	probe
	gd_start s --mirror "http://127.0.0.1:$PPORT"
	local u="http://127.0.0.1:$HPORT"
	curl -s -D "$T/h1" -o "$T/1" "$u/q?x=1"
	curl -s -D "$T/h2" -o "$T/2" "$u/q?x=2"
	[ "$(field "$T/1" 'd["target"]')" = "/q?x=1" ]
	[ "$(field "$T/2" 'd["target"]')" = "/q?x=2" ]
	grep -q '^X-Cache: MISS' "$T/h2"
	# each from the store now, once fetched
	curl -s -D "$T/h3" -o "$T/3" "$u/q?x=1"
	grep -q '^X-Cache: HIT' "$T/h3"
	cmp "$T/1" "$T/3"
	# %31 is "1": the same URL (RFC 9110 sec. 4.2.3), the same object
	curl -s -D "$T/h4" -o "$T/4" "$u/q?x=%31"
	grep -q '^X-Cache: HIT' "$T/h4"
	cmp "$T/1" "$T/4"
	[ "$(origin_count '/q?x=1')" = 1 ]
	[ "$(origin_count '/q?x=2')" = 1 ]
	[ "$(origin_count '/q?x=%31')" = 0 ]
	# no query and an empty one are other URLs; nothing is sorted,
	# dropped or re-encoded on the way to the origin
	curl -s -o "$T/5" "$u/q"
	[ "$(field "$T/5" 'd["target"]')" = "/q" ]
	curl -s -o "$T/6" "$u/q?"
	[ "$(field "$T/6" 'd["target"]')" = "/q?" ]
	curl -s -o "$T/7" "$u/a%2fb/c%7e!*()?b=2&a=1&a=1&&s=%2f+%20"
	[ "$(field "$T/7" 'd["target"]')" = '/a%2fb/c%7e!*()?b=2&a=1&a=1&&s=%2f+%20' ]
	curl -s -o "$T/8" "$u/q?a=1&b=2"
	curl -s -o "$T/9" "$u/q?b=2&a=1"
	[ "$(field "$T/8" 'd["target"]')" = "/q?a=1&b=2" ]
	[ "$(field "$T/9" 'd["target"]')" = "/q?b=2&a=1" ]
	[ "$(field "$T/9" 'd["n"]')" = 1 ]
	# the root is a URL like the others, and "/?x=1" another
	curl -s -D "$T/hr" -o "$T/r1" "$u/"
	[ "$(field "$T/r1" 'd["target"]')" = "/" ]
	curl -s -D "$T/hr" -o "$T/r2" "$u/"
	grep -q '^X-Cache: HIT' "$T/hr"
	cmp "$T/r1" "$T/r2"
	curl -s -o "$T/r3" "$u/?x=1"
	[ "$(field "$T/r3" 'd["target"]')" = "/?x=1" ]
	# an invalid escape in the path: a clear 400, the daemon goes on
	run -0 curl -s -o /dev/null -w '%{http_code}' "$u/bad%zz?x=1"
	[ "$output" = 400 ]
	curl -s -D "$T/h10" -o "$T/10" "$u/q?x=2"
	grep -q '^X-Cache: HIT' "$T/h10"
	cmp "$T/2" "$T/10"
}

@test "issue 18: end-to-end request fields reach the origin, hop-by-hop ones do not; Via and X-Forwarded-For are appended" {
	probe
	gd_start s --mirror "http://127.0.0.1:$PPORT"
	local u="http://127.0.0.1:$HPORT"
	curl -s -D "$T/h" -o "$T/1" "$u/h?1" \
		-H 'User-Agent: probe-agent/1.0' \
		-H 'Cookie: session=abc' \
		-H 'Accept-Language: fr, en;q=0.5' \
		-H 'Accept-Encoding: br' \
		-H 'X-Custom-Thing: a b  c' \
		-H 'Connection: keep-alive, X-Hop' \
		-H 'X-Hop: do-not-forward' \
		-H 'Keep-Alive: timeout=5' \
		-H 'Upgrade: h2c' \
		-H 'TE: trailers' \
		-H 'Proxy-Authorization: Basic Zm9vOmJhcg==' \
		-H 'Via: 1.0 edge' \
		-H 'X-Forwarded-For: 192.0.2.7' \
		-H 'If-None-Match: "nope"'
	[ "$(hdr "$T/1" User-Agent)" = "probe-agent/1.0" ]
	[ "$(hdr "$T/1" Cookie)" = "session=abc" ]
	[ "$(hdr "$T/1" Accept-Language)" = "fr, en;q=0.5" ]
	[ "$(hdr "$T/1" Accept-Encoding)" = "br" ]
	[ "$(hdr "$T/1" X-Custom-Thing)" = "a b  c" ]
	[ "$(hdr "$T/1" Accept)" = "*/*" ]	# curl's own, forwarded
	[ "$(hdr "$T/1" Via)" = "1.0 edge, 1.1 goblind" ]
	[ "$(hdr "$T/1" X-Forwarded-For)" = "192.0.2.7, 127.0.0.1" ]
	[ "$(hdr "$T/1" Host)" = "127.0.0.1:$PPORT" ]
	for h in X-Hop Keep-Alive Upgrade TE Proxy-Authorization; do
		[ "$(hdr "$T/1" $h)" = None ]
	done
	# a request the cache answers: the client's preconditions stay here
	[ "$(hdr "$T/1" If-None-Match)" = None ]
	# and the other way: the origin's answer reaches the client
	grep -q '^HTTP/1.1 200' "$T/h"
	grep -q '^Content-Language: en' "$T/h"
	grep -q '^Content-Type: application/json' "$T/h"
	# a pass (credentials) keeps its preconditions
	curl -s -o "$T/2" "$u/h?2" -H 'Authorization: Basic YTpi' \
		-H 'If-None-Match: "nope"'
	[ "$(hdr "$T/2" If-None-Match)" = '"nope"' ]
	[ "$(hdr "$T/2" Authorization)" = "Basic YTpi" ]
	gd_stop

	# both can be turned off, on the command line and in goblin.conf
	gd_start n --mirror "http://127.0.0.1:$PPORT" --mirror-no-via \
		--mirror-no-xff
	curl -s -o "$T/3" "http://127.0.0.1:$HPORT/h?3" -H 'Via: 1.0 edge' \
		-H 'X-Forwarded-For: 192.0.2.7'
	[ "$(hdr "$T/3" Via)" = "1.0 edge" ]
	[ "$(hdr "$T/3" X-Forwarded-For)" = "192.0.2.7" ]
	curl -s -o "$T/4" "http://127.0.0.1:$HPORT/h?4"
	[ "$(hdr "$T/4" Via)" = None ]
	[ "$(hdr "$T/4" X-Forwarded-For)" = None ]
	gd_stop
	printf 'mirror-no-via = yes\nmirror-no-xff = no\n' >"$T/goblin.conf"
	gd_start c --mirror "http://127.0.0.1:$PPORT" --config "$T/goblin.conf"
	curl -s -o "$T/5" "http://127.0.0.1:$HPORT/h?5"
	[ "$(hdr "$T/5" Via)" = None ]
	[ "$(hdr "$T/5" X-Forwarded-For)" = "127.0.0.1" ]
}

@test "issue 18: unsafe methods, DELETE with a body and unknown methods reach the origin and invalidate the stored URL" {
	probe
	gd_start s --mirror "http://127.0.0.1:$PPORT"
	local u="http://127.0.0.1:$HPORT" m n=1
	curl -s -o /dev/null "$u/obj?v=1"
	curl -s -D "$T/h" -o /dev/null "$u/obj?v=1"
	grep -q '^X-Cache: HIT' "$T/h"
	for m in POST PUT PATCH DELETE BREW M-SEARCH; do
		run -0 curl -s -o "$T/fwd" -w '%{http_code}' -X "$m" \
			--data-binary "body of $m" "$u/obj?v=1"
		[ "$output" = 200 ]
		[ "$(field "$T/fwd" 'd["method"]')" = "$m" ]
		[ "$(field "$T/fwd" 'd["target"]')" = "/obj?v=1" ]
		[ "$(field "$T/fwd" 'd["body"]')" = "body of $m" ]
		# invalidated: the next GET goes to the origin again, once
		# (the probe counted the write too)
		n=$((n + 2))
		curl -s -D "$T/h" -o "$T/get" "$u/obj?v=1"
		grep -q '^X-Cache: MISS' "$T/h"
		[ "$(field "$T/get" 'd["n"]')" = "$n" ]
		curl -s -D "$T/h" -o /dev/null "$u/obj?v=1"
		grep -q '^X-Cache: HIT' "$T/h"
	done
	# a DELETE without a body, and a safe OPTIONS that invalidates nothing
	run -0 curl -s -o "$T/fwd" -w '%{http_code}' -X DELETE "$u/obj?v=1"
	[ "$(field "$T/fwd" 'd["body"]')" = "" ]
	curl -s -o /dev/null "$u/obj?v=1"
	run -0 curl -s -o "$T/fwd" -X OPTIONS "$u/obj?v=1"
	[ "$(field "$T/fwd" 'd["method"]')" = OPTIONS ]
	curl -s -D "$T/h" -o /dev/null "$u/obj?v=1"
	grep -q '^X-Cache: HIT' "$T/h"
	# the URLs of Location and Content-Location, when the origin's
	curl -s -o /dev/null "$u/other?x=1"
	curl -s -o /dev/null "$u/kept"
	curl -s -o /dev/null -X POST -H 'X-Probe-Location: /other?x=%31' \
		"$u/new"
	curl -s -D "$T/h" -o /dev/null "$u/other?x=1"
	grep -q '^X-Cache: MISS' "$T/h"
	curl -s -o /dev/null -X POST \
		-H 'X-Probe-Location: http://elsewhere.example/kept' "$u/new"
	curl -s -D "$T/h" -o /dev/null "$u/kept"
	grep -q '^X-Cache: HIT' "$T/h"
	# CONNECT is not forwarded
	run -0 curl -s -o /dev/null -w '%{http_code}' -X CONNECT "$u/x"
	[ "$output" = 501 ]
}

@test "issue 18: readers of many query strings while writers invalidate them: every answer is its own URL's" {
	probe
	gd_start s --mirror "http://127.0.0.1:$PPORT"
	"$PY" - "$HPORT" <<'EOF'
import http.client, json, random, sys, threading, time
port = int(sys.argv[1])
stop = time.monotonic() + 3
bad = []
count = [0, 0]

def worker(write):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    while time.monotonic() < stop and not bad:
        t = "/r?k=%d&v=%d" % (random.randrange(8), random.randrange(4))
        if write:
            c.request(random.choice(["POST", "DELETE", "BREW"]), t,
                      body=b"x")
        else:
            c.request("GET", t)
        r = c.getresponse()
        d = json.loads(r.read())
        if r.status != 200 or d["target"] != t:
            bad.append((t, r.status, d.get("target")))
        count[write] += 1

ts = [threading.Thread(target=worker, args=(i % 3 == 0,)) for i in range(6)]
for t in ts:
    t.start()
for t in ts:
    t.join()
print("reads", count[0], "writes", count[1], "bad", bad[:3])
sys.exit(1 if bad or not count[0] or not count[1] else 0)
EOF
	kill -0 "$GPID"
}

@test "issue 18: a Vary: Accept-Encoding pair is stored as two variants and each is served to its own requests" {
	probe
	gd_start s --mirror "http://127.0.0.1:$PPORT"
	local u="http://127.0.0.1:$HPORT/vary/pair?x=1" ae
	for ae in gzip br; do
		curl -s -D "$T/h" -o "$T/$ae" -H "Accept-Encoding: $ae" "$u"
		grep -q '^X-Cache: MISS' "$T/h"
		[ "$(field "$T/$ae" 'd["variant"]')" = "$ae" ]
	done
	for ae in gzip br gzip br; do
		curl -s -D "$T/h" -o "$T/again" -H "Accept-Encoding: $ae" "$u"
		grep -q '^X-Cache: HIT' "$T/h"
		cmp "$T/$ae" "$T/again"
	done
	# the same value with other whitespace and case of the name
	curl -s -D "$T/h" -o "$T/again" -H "accept-encoding:   gzip " "$u"
	grep -q '^X-Cache: HIT' "$T/h"
	cmp "$T/gzip" "$T/again"
	# no Accept-Encoding, and an empty one: two more variants
	curl -s -D "$T/h" -o "$T/none" -H "Accept-Encoding:" "$u"
	grep -q '^X-Cache: MISS' "$T/h"
	curl -s -D "$T/h" -o "$T/empty" -H "Accept-Encoding;" "$u"
	grep -q '^X-Cache: MISS' "$T/h"
	curl -s -D "$T/h" -o /dev/null -H "Accept-Encoding;" "$u"
	grep -q '^X-Cache: HIT' "$T/h"
	[ "$(origin_count /vary/pair?x=1)" = 4 ]
	# an unsafe method invalidates every variant
	curl -s -o /dev/null -X POST "$u"
	curl -s -D "$T/h" -o "$T/again" -H "Accept-Encoding: br" "$u"
	grep -q '^X-Cache: MISS' "$T/h"
	[ "$(field "$T/again" 'd["variant"]')" = br ]
	curl -s -D "$T/h" -o "$T/again" -H "Accept-Encoding: gzip" "$u"
	grep -q '^X-Cache: MISS' "$T/h"
}

@test "issue 18: concurrent misses of a varying URL with different Accept-Encoding: every client gets its own variant" {
	probe
	gd_start s --mirror "http://127.0.0.1:$PPORT"
	"$PY" - "$HPORT" <<'EOF'
import http.client, json, random, sys, threading, time
port = int(sys.argv[1])
stop = time.monotonic() + 3
bad, count = [], [0]
encs = ["gzip", "br", "deflate", "gzip, br", None]

def worker():
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    while time.monotonic() < stop and not bad:
        # new URLs keep coming, so misses of one URL collapse
        t = "/vary/c?k=%d" % int(time.monotonic() * 20)
        e = random.choice(encs)
        h = {} if e is None else {"Accept-Encoding": e}
        c.request("GET", t, headers=h)
        r = c.getresponse()
        d = json.loads(r.read())
        # http.client sends "Accept-Encoding: identity" when none is given
        if r.status != 200 or d["target"] != t or \
                d["variant"] != (e or "identity"):
            bad.append((t, e, r.status, d.get("variant")))
        count[0] += 1

ts = [threading.Thread(target=worker) for _ in range(8)]
for t in ts:
    t.start()
for t in ts:
    t.join()
print("requests", count[0], "bad", bad[:3])
sys.exit(1 if bad or count[0] < 50 else 0)
EOF
	kill -0 "$GPID"
}

@test "issue 18: Cache-Control: only-if-cached is answered from the store or with 504, never from the origin" {
	probe
	gd_start s --mirror "http://127.0.0.1:$PPORT"
	local u="http://127.0.0.1:$HPORT"
	run -0 curl -s -o /dev/null -w '%{http_code}' \
		-H 'Cache-Control: only-if-cached' "$u/oic"
	[ "$output" = 504 ]
	[ "$(origin_count /oic)" = 0 ]
	curl -s -o "$T/1" "$u/oic"
	run -0 curl -s -D "$T/h" -o "$T/2" -w '%{http_code}' \
		-H 'Cache-Control: only-if-cached' "$u/oic"
	[ "$output" = 200 ]
	grep -q '^X-Cache: HIT' "$T/h"
	cmp "$T/1" "$T/2"
	# and a copy too old for the request's max-age is none
	sleep 1.2
	run -0 curl -s -o /dev/null -w '%{http_code}' \
		-H 'Cache-Control: only-if-cached, max-age=0' "$u/oic"
	[ "$output" = 504 ]
	[ "$(origin_count /oic)" = 1 ]
}
