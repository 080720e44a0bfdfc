#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# goblinctl bench --proto http against bench/origin, the synthesizing origin
# of bench/vs-vinyl.sh: verified payloads, counts by status, the origin's
# request counter, Range and HEAD.  GOBLINCTL and ORIGIN override the
# binaries.

bats_require_minimum_version 1.5.0

ROOT="$BATS_TEST_DIRNAME/../.."
GCTL="${GOBLINCTL:-$ROOT/build/goblinctl}"
ORIGIN="${ORIGIN:-$ROOT/build/bench/origin}"
GEN="${GEN:-$ROOT/build/bench/gen}"

setup() {
	for b in "$GCTL" "$ORIGIN" "$GEN"; do
		if [ ! -x "$b" ]; then
			echo "not built: $b (make)" >&2
			return 1
		fi
	done
	command -v curl >/dev/null || skip "no curl"
	T="$(mktemp -d "${TMPDIR:-/tmp}/bench-http-bats.XXXXXX")"
	OPID=
}

teardown() {
	[ -n "${OPID:-}" ] && kill "$OPID" 2>/dev/null
	[ -n "${OPID:-}" ] && wait "$OPID" 2>/dev/null
	[ -n "${T:-}" ] && rm -rf "$T"
	return 0
}

# start_origin [ARGS]: on an ephemeral port, in $PORT
start_origin() {
	"$ORIGIN" --port-file "$T/port" "$@" 2>"$T/origin.log" &
	OPID=$!
	for _ in $(seq 100); do
		[ -s "$T/port" ] && break
		sleep 0.05
	done
	PORT=$(cat "$T/port")
	[ -n "$PORT" ]
}

origin_requests() {
	curl -sf "http://127.0.0.1:$PORT/_origin/stats" | awk '$1 == "requests" { print $2 }'
}

# field NAME: the value of NAME= in the RESULT line of $output
field() {
	grep '^RESULT' <<<"$output" | tr ' ' '\n' | sed -n "s/^$1=//p"
}

@test "bench --proto http --verify: every manifest key once, byte-exact, one origin request each" {
	# sizes across the piece boundaries of both sides, and an empty one
	printf 'big:0000 3000000\nbig:0001 1\nbig:0002 0\nbig:0003 262145\nbig:0004 65536\n' >"$T/man"
	start_origin --manifest "$T/man"
	[ "$(origin_requests)" = 0 ]
	run -0 "$GCTL" bench --proto http --port "$PORT" --no-store --verify \
		--sweep --conns 2 --threads 1 --size "manifest:$T/man" --csv "$T/csv"
	[ "$(field gets)" = 5 ]
	[ "$(field hits)" = 5 ]
	[ "$(field misses)" = 0 ]
	[ "$(field errors)" = 0 ]
	[ "$(field statuses)" = "200:5" ]
	[ "$(origin_requests)" = 5 ]
	# the CSV: a row per request with the bytes of each object
	[ "$(head -1 "$T/csv")" = "op,key,status,bytes,sent_ns,first_byte_ns,first_payload_ns,last_byte_ns" ]
	[ "$(tail -n +2 "$T/csv" | cut -d, -f4 | sort -n | tr '\n' ' ')" = "0 1 65536 262145 3000000 " ]
	# ordered timestamps: sent <= first byte <= first payload <= last
	awk -F, 'NR > 1 && ($6 < $5 || ($7 && ($7 < $6 || $8 < $7))) { bad++ }
		END { exit bad > 0 }' "$T/csv"
}

@test "bench --proto http --verify fails payloads of another size or bytes" {
	printf 'obj:a 100000\n' >"$T/real"
	printf 'obj:a 100001\n' >"$T/lie"
	start_origin --manifest "$T/real"
	run -0 "$GCTL" bench --proto http --port "$PORT" --no-store --verify \
		--sweep --conns 1 --size "manifest:$T/lie"
	[ "$(field hits)" = 0 ]
	[ "$(field errors)" = 1 ]
	# without --verify the same response is a hit
	run -0 "$GCTL" bench --proto http --port "$PORT" --no-store \
		--sweep --conns 1 --size "manifest:$T/lie"
	[ "$(field hits)" = 1 ]
	[ "$(field errors)" = 0 ]
	# the right size, other bytes: /b + a@100000 is object "ba@100000"
	printf 'a@100000 100000\n' >"$T/same"
	run -0 "$GCTL" bench --proto http --port "$PORT" --no-store --verify \
		--sweep --conns 1 --size "manifest:$T/same" --path-prefix /b
	[ "$(field errors)" = 1 ]
	[ "$(field statuses)" = "200:1" ]
	run -0 "$GCTL" bench --proto http --port "$PORT" --no-store --verify \
		--sweep --conns 1 --size "manifest:$T/same"
	[ "$(field hits)" = 1 ]
}

@test "issue 16: origin --fail-pct fails requests three ways; --verify counts wrong values apart" {
	run -128 "$ORIGIN" --fail-pct 101
	[[ "$output" == *"bad --fail-pct"* ]]
	printf 'obj:a 100000\n' >"$T/real"
	printf 'obj:a 100001\n' >"$T/lie"
	start_origin --manifest "$T/real" --fail-pct 50
	# each curl a new connection: 200s whole, the rest a 503, a reset
	# before any answer, or a body cut half way
	local i ok=0 unavail=0 cut=0 reset=0 out
	for i in $(seq 30); do
		out=$(curl -s -o /dev/null -w '%{http_code} %{size_download}' \
			"http://127.0.0.1:$PORT/obj:a") && rc=0 || rc=$?
		case "$rc $out" in
		"0 200 100000") ok=$((ok + 1)) ;;
		"0 503 "*) unavail=$((unavail + 1)) ;;
		"18 200 "*|"56 200 "*) cut=$((cut + 1)) ;;
		"56 000 0"|"52 000 0") reset=$((reset + 1)) ;;
		*) echo "unexpected: rc $rc, $out" >&2; return 1 ;;
		esac
	done
	echo "ok $ok 503 $unavail reset $reset cut $cut"
	[ "$ok" -gt 0 ] && [ "$unavail" -gt 0 ] && [ "$reset" -gt 0 ] && [ "$cut" -gt 0 ]
	run -0 curl -sf "http://127.0.0.1:$PORT/_origin/stats"
	[[ "$output" == *"failed_503 $unavail"* ]]
	[[ "$output" == *"failed_reset $reset"* ]]
	[[ "$output" == *"failed_mid_body $cut"* ]]
	kill "$OPID"; wait "$OPID" || true
	# a failed request is an error, not a wrong value; a lie is both
	rm -f "$T/port"
	start_origin --manifest "$T/real" --fail-pct 100
	run -0 "$GCTL" bench --proto http --port "$PORT" --no-store --verify \
		--sweep --conns 1 --size "manifest:$T/real"
	[ "$(field statuses)" = "503:1" ]
	[ "$(field errors)" = 1 ]
	[ "$(field wrong)" = 0 ]
	kill "$OPID"; wait "$OPID" || true
	rm -f "$T/port"
	start_origin --manifest "$T/real"
	run -0 "$GCTL" bench --proto http --port "$PORT" --no-store --verify \
		--sweep --conns 1 --size "manifest:$T/lie"
	[ "$(field errors)" = 1 ]
	[ "$(field wrong)" = 1 ]
	[[ "$output" == *"verify         1 values of the wrong size or bytes"* ]]
}

@test "bench --proto http: 404s are misses, --path-prefix, sizes in names, timed runs" {
	printf 'k:0 1000\nk:1 2000\n' >"$T/man"
	# k:2 is in no manifest of the origin; x@64K is sized by its name
	printf 'k:0 1000\nk:1 2000\nk:2 10\nx@64K 65536\n' >"$T/ask"
	start_origin --manifest "$T/man"
	run -0 "$GCTL" bench --proto http --port "$PORT" --no-store --verify \
		--sweep --conns 3 --threads 1 --size "manifest:$T/ask"
	[ "$(field hits)" = 3 ]
	[ "$(field misses)" = 1 ]
	[ "$(field statuses)" = "200:3,404:1" ]
	# a prefix the origin does not know: every key a miss
	run -0 "$GCTL" bench --proto http --port "$PORT" --no-store \
		--sweep --conns 1 --size "manifest:$T/man" --path-prefix /cache/
	[ "$(field misses)" = 2 ]
	[ "$(field hits)" = 0 ]
	run -129 "$GCTL" bench --proto http --path-prefix nope
	run -129 "$GCTL" bench --proto gopher
	# a timed run over keep-alive connections: every response verified
	before=$(origin_requests)
	run -0 "$GCTL" bench --proto http --port "$PORT" --no-store --verify \
		--conns 4 --threads 2 --duration 1 --size "manifest:$T/man"
	[ "$(field errors)" = 0 ]
	n=$(field requests)
	[ "$n" -gt 10 ]
	[ "$(field hits)" = "$n" ]
	[ "$(origin_requests)" = $((before + n)) ]
}

@test "origin: headers, HEAD, Range, 304, 416, and what it counts" {
	printf 'big:0001 3000\n' >"$T/man"
	start_origin --manifest "$T/man"
	"$GEN" --payload big:0001 3000 >"$T/want"
	curl -sf -D "$T/h" -o "$T/got" "http://127.0.0.1:$PORT/big:0001"
	cmp "$T/want" "$T/got"
	grep -qi '^content-length: 3000' "$T/h"
	grep -qi '^cache-control: max-age=86400' "$T/h"
	grep -qi '^last-modified: ' "$T/h"
	etag=$(sed -n 's/^[Ee][Tt]ag: *\(".*"\).*/\1/p' "$T/h")
	[ -n "$etag" ]
	# a range: the same bytes as the whole object's
	curl -sf -D "$T/h" -o "$T/part" -r 1000-1999 "http://127.0.0.1:$PORT/big:0001"
	grep -q '^HTTP/1.1 206' "$T/h"
	grep -qi '^content-range: bytes 1000-1999/3000' "$T/h"
	cmp "$T/part" <(tail -c +1001 "$T/want" | head -c 1000)
	curl -sf -o "$T/part" -r -10 "http://127.0.0.1:$PORT/big:0001"
	cmp "$T/part" <(tail -c 10 "$T/want")
	[ "$(curl -s -o /dev/null -w '%{http_code}' -r 3000- "http://127.0.0.1:$PORT/big:0001")" = 416 ]
	# HEAD: the head alone
	curl -sfI "http://127.0.0.1:$PORT/big:0001" >"$T/h"
	grep -qi '^content-length: 3000' "$T/h"
	[ "$(curl -s -o /dev/null -w '%{http_code}' -H "If-None-Match: $etag" "http://127.0.0.1:$PORT/big:0001")" = 304 ]
	[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/none")" = 404 ]
	[ "$(curl -s -o /dev/null -w '%{http_code}' -X PUT -d x "http://127.0.0.1:$PORT/big:0001")" = 405 ]
	# 7 object requests so far (the PUT is refused, not counted); the
	# stats themselves are not counted
	[ "$(origin_requests)" = 7 ]
	[ "$(origin_requests)" = 7 ]
}

@test "origin --rate paces a body" {
	start_origin --rate 2
	start=$(date +%s%N)
	curl -sf -o "$T/got" "http://127.0.0.1:$PORT/slow@1M"
	ms=$(( ($(date +%s%N) - start) / 1000000 ))
	[ "$(stat -c %s "$T/got")" = 1048576 ]
	# 1 MiB at 2 MB/s: about 524 ms
	[ "$ms" -ge 450 ]
	[ "$ms" -lt 3000 ]
}
