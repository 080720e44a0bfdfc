#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# goblind refuses every request-smuggling shape of RFC 9112 sec. 11.2 (and
# sec. 6.1, 6.3, 7.1) with one 400 and a close (issue 16): raw bytes over
# a socket, each carrying a request hidden where a lenient parser would
# find the end of the first one; the hidden request must never be
# answered, and nothing of it stored.

bats_require_minimum_version 1.5.0

load goblind

HC="$BATS_TEST_DIRNAME/http_check.py"

setup() {
	gd_setup goblind-smuggle
}

teardown() {
	gd_teardown
}

hstat() {
	curl -s "http://127.0.0.1:$HPORT/_goblin/stats" |
		"$PY" -c 'import json,sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1"
}

code() {
	curl -s -o /dev/null -w '%{http_code}' "$@"
}

@test "issue 16: chunk framing and smuggling shapes get one 400 and a close, the hidden request is never answered" {
	gd_start s
	# the hidden requests: a read of the stats and a write
	local G='GET /_goblin/stats HTTP/1.1\r\nHost: a\r\n\r\n'
	local W='PUT /smuggled HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\n\r\nX'
	local P='PUT /s HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n'
	local C='GET /s HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n'
	run "$PY" "$HC" smuggle "$HPORT" <<EOF
# controls: well-formed, pipelined; the checker sees a second response
201,200 b'${P}3;e=1\r\nabc\r\n0\r\nX-T: 1\r\n\r\n$C'
200 b'$C$G'
# the CRLF after chunk data (the finding: 201 then 200 on main)
400 b'${P}3\r\nabcXX0\r\n\r\n$G'
400 b'${P}3\r\nabcXX0\r\n\r\n$W'
400 b'${P}3\r\nabc\rX0\r\n\r\n$G'
400 b'${P}3\r\nabcX\n0\r\n\r\n$G'
400 b'${P}3\r\nabc\n0\r\n\r\n$G'
400 b'${P}3\r\nabc0\r\n\r\n$G'
400 b'${P}2\r\nabc\r\n0\r\n\r\n$G'
# the CRLF after a size line
400 b'${P}3\rXabc\r\n0\r\n\r\n$G'
400 b'${P}3\nabc\r\n0\r\n\r\n$G'
400 b'${P}0\rX\r\n$G'
400 b'${P}0\n\r\n$G'
# chunk sizes: HEXDIG only, no overflow
400 b'${P}0x3\r\nabc\r\n0\r\n\r\n$G'
400 b'${P} 3\r\nabc\r\n0\r\n\r\n$G'
400 b'${P}+3\r\nabc\r\n0\r\n\r\n$G'
400 b'${P}-1\r\nabc\r\n0\r\n\r\n$G'
400 b'${P}10000000000000003\r\nabc\r\n0\r\n\r\n$G'
400 b'${P}fffffffffffffffffff\r\nabc\r\n0\r\n\r\n$G'
413 b'${P}10000000001\r\nabc\r\n0\r\n\r\n$G'
# chunk extensions
400 b'${P}3 \r\nabc\r\n0\r\n\r\n$G'
400 b'${P}3;\r\nabc\r\n0\r\n\r\n$G'
400 b'${P}3;a\nabc\r\n0\r\n\r\n$G'
400 b'${P}3;a=\"x\r\nabc\r\n0\r\n\r\n$G'
400 b'${P}3;a b\r\nabc\r\n0\r\n\r\n$G'
400 b'${P}0;a\n\r\n$G'
# trailers
400 b'${P}0\r\n\n$G'
400 b'${P}0\r\n\rX$G'
400 b'${P}0\r\nX: a\r\n b\r\n\r\n$G'
400 b'${P}0\r\nX: a\nY: b\r\n\r\n$G'
400 b'${P}0\r\nX : a\r\n\r\n$G'
400 b'${P}0\r\nX\r\n\r\n$G'
400 b'${P}0\r\n$G'
# CL and TE together, either order
400 b'PUT /s HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n$G'
400 b'PUT /s HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nContent-Length: 48\r\n\r\n0\r\n\r\n$G'
# Transfer-Encoding not ending in chunked, or not exactly chunked
400 b'PUT /s HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked, gzip\r\n\r\n0\r\n\r\n$G'
400 b'PUT /s HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n$G'
400 b'PUT /s HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: identity\r\nContent-Length: 0\r\n\r\n$G'
400 b'PUT /s HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: xchunked\r\n\r\n0\r\n\r\n$G'
400 b'PUT /s HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n$G'
# obs-fold in Transfer-Encoding
400 b'PUT /s HTTP/1.1\r\nHost: a\r\nTransfer-Encoding:\r\n chunked\r\n\r\n0\r\n\r\n$G'
400 b'PUT /s HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: x\r\n\tchunked\r\n\r\n0\r\n\r\n$G'
# duplicate and conflicting Content-Length
400 b'PUT /s HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc$G'
400 b'PUT /s HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nContent-Length: 48\r\n\r\nabc$G'
400 b'PUT /s HTTP/1.1\r\nHost: a\r\nContent-Length: 3, 3\r\n\r\nabc$G'
400 b'PUT /s HTTP/1.1\r\nHost: a\r\nContent-Length: +3\r\n\r\nabc$G'
# whitespace before the colon
400 b'PUT /s HTTP/1.1\r\nHost: a\r\nTransfer-Encoding : chunked\r\n\r\n0\r\n\r\n$G'
400 b'PUT /s HTTP/1.1\r\nHost: a\r\nContent-Length : 3\r\n\r\nabc$G'
# bare LF in the head
400 b'PUT /s HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\n\r\n0\r\n\r\n$G'
# Transfer-Encoding in HTTP/1.0 (201 then 200 on main)
400 b'PUT /s HTTP/1.0\r\nTransfer-Encoding: chunked\r\nConnection: keep-alive\r\n\r\n0\r\n\r\n$G'
EOF
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"50 cases, 0 failed"* ]]
	# nothing hidden was stored; the control's object is whole
	[ "$(code "http://127.0.0.1:$HPORT/smuggled")" = 404 ]
	run -0 curl -s "http://127.0.0.1:$HPORT/s"
	echo "GET /s: $output"
	[ "$output" = abc ]
	run -0 hstat http_bad_requests
	[ "$output" = 48 ]	# every case but the two controls
}
