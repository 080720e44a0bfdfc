#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# Access control a shared host can use (issue 16, finding 7): memcache
# login as memcached -Y does it, one write policy for memcache and HTTP
# (loopback only by default, a token or the auth file otherwise),
# --trusted-proxy for X-Forwarded-For, connection limits per protocol and
# the idle timeout that applies under pressure.

bats_require_minimum_version 1.5.0

load goblind

CC="$BATS_TEST_DIRNAME/conn_check.py"

setup() {
	gd_setup goblind-access
	NS=
	MCD=
}

teardown() {
	[ -n "$MCD" ] && { kill "$MCD" 2>/dev/null || true; wait "$MCD" 2>/dev/null || true; }
	gd_teardown
	[ -n "$NS" ] && ip netns del "$NS" 2>/dev/null || true
}

# kv KEY: a value of conn_check.py's output in $output
kv() {
	sed -n "s/^$1=//p" <<<"$output"
}

# hstat NAME: a counter from /_goblin/stats
hstat() {
	curl -s "http://127.0.0.1:$HPORT/_goblin/stats" |
		"$PY" -c 'import json,sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1"
}

# put_code [curl args] URL: the status of a PUT of "v"
put_code() {
	curl -s -o /dev/null -w '%{http_code}' -X PUT --data-binary v "$@"
}

auth_file() {
	printf 'alice:secret\nbob:pw:2\n' >"$T/auth"
	chmod 600 "$T/auth"
}

@test "issue 16: --auth-file logs memcache clients in as memcached -Y does, reply for reply" {
	command -v memcached >/dev/null || skip "Debian's memcached is not installed"
	auth_file
	cat >"$T/steps" <<-'EOF'
	[
	 [b"get a\r\n", b"version\r\n", b"stats\r\n", b"quit\r\n", b"\r\n",
	  b"mg a v\r\n", b"add a 0 0 12\r\n", b"set a 0 0\r\n",
	  b"set a 0 0 x\r\n", b"set a 0 0 -1\r\n", b"SET a 0 0 12\r\n"],
	 [b"set a 0 0 1\r\nx\r\n", b"set a 0 0 5\r\nalice\r\n",
	  b"set a 0 0 12\r\nalice\tsecret\r\n", b"set a 0 0 12x\r\n",
	  b"set a 0 0 12\r\nalice secretXX",
	  b"set a 0 0 11\r\nalice wrong\r\n", b"set a 0 0 9\r\nbob pw:22\r\n",
	  b"set a 0 0 12\r\nalice secrex\r\n", b"get a\r\n",
	  b"set a 0 0 12\r\nalice secret\r\n", b"set k 0 0 2\r\nhi\r\n",
	  b"get k\r\n", b"delete k\r\n", b"get k\r\n"],
	 [("quiet", b"set a 0 0 12\n"), b"alice secret\r\n", b"get a\r\n"],
	 [b"set  x y z 8 noreply\r\nbob pw:2\r\n", b"set k 0 0 1\r\nz\r\n",
	  b"get k\r\n"],
	 [b"set a 0 0 16\r\nalice secret bob\r\n", b"mn\r\n"],
	 [b"set a 0 0 13\r\nalice  secret\r\n", b"incr k 1\r\n"],
	 [("quiet", b"set a 0 0 12\r\n"), ("quiet", b"alice"),
	  b" secret\r\n", b"get k\r\n"],
	 [b"x" * 3000]
	]
	EOF
	MEMCACHED_PORT_FILENAME="$T/mcport" memcached -u root -l 127.0.0.1:0 \
		-U 0 -Y "$T/auth" &
	MCD=$!
	local i mport
	for i in $(seq 100); do
		mport=$(sed -n 's/^TCP INET: //p' "$T/mcport" 2>/dev/null | head -1)
		[ -n "$mport" ] && break
		sleep 0.05
	done
	[ -n "$mport" ]
	gd_start s --auth-file "$T/auth"
	"$PY" "$CC" steps 127.0.0.1 "$mport" "$T/steps" >"$T/memcached.out"
	"$PY" "$CC" steps 127.0.0.1 "$PORT" "$T/steps" >"$T/goblind.out"
	cat "$T/goblind.out"
	diff -u "$T/memcached.out" "$T/goblind.out"
	# the replies that matter are there at all
	grep -qF "b'CLIENT_ERROR unauthenticated\r\n'" "$T/goblind.out"
	grep -qF "b'CLIENT_ERROR authentication failure\r\n'" "$T/goblind.out"
	grep -qF "b'VALUE k 0 2\r\nhi\r\nEND\r\n'" "$T/goblind.out"
	# pipelined, every line is answered in turn (memcached drops some)
	run "$PY" "$CC" raw 127.0.0.1 "$PORT" \
		<<<$'get k\r\nset a 0 0 11\r\nalice wrong\r\nset a 0 0 12\r\nalice secret\r\nget nokey\r'
	[ "$output" = $'CLIENT_ERROR unauthenticated\r\nCLIENT_ERROR authentication failure\r\nSTORED\r\nEND\r' ]
	[ "$(hstat auth_errors)" -ge 4 ]
	[ "$(hstat auth_cmds)" -gt "$(hstat auth_errors)" ]
	gd_stop
}

@test "issue 16: a bad --auth-file stops the start with its line number" {
	printf 'alice:secret\nnocolon\n' >"$T/auth"
	run -128 "$GD" --store "$T/s" "${GD_STORE_OPTS[@]}" --auth-file "$T/auth"
	[[ "$output" == *"auth file '$T/auth' line 2: not user:password"* ]]
	run -128 "$GD" --store "$T/s" "${GD_STORE_OPTS[@]}" --auth-file "$T/none"
	[[ "$output" == *"cannot open auth file"* ]]
}

# ns_setup: a network namespace of this test with 192.0.2.1 on its
# loopback device: a peer there is not on a loopback address, and no
# traffic leaves the namespace.  GD becomes goblind run inside it.
ns_setup() {
	NS="goblin-t$$-$BATS_TEST_NUMBER"
	ip netns add "$NS" 2>/dev/null ||
		skip "cannot create a network namespace (needs CAP_SYS_ADMIN)"
	ip -n "$NS" link set lo up
	ip -n "$NS" addr add 192.0.2.1/32 dev lo
	printf '#!/bin/sh\nexec ip netns exec %s %s "$@"\n' "$NS" "$GD" \
		>"$T/goblind-ns"
	chmod +x "$T/goblind-ns"
	GD="$T/goblind-ns"
}

# nmc HOST: memcache from inside the namespace (stdin to the server)
nmc() {
	ip netns exec "$NS" "$PY" "$CC" raw "$1" "$PORT"
}

# ncurl ARGS: curl from inside the namespace
ncurl() {
	ip netns exec "$NS" curl "$@"
}

@test "issue 16: one write policy: a non-loopback peer writes neither by memcache nor by HTTP" {
	ns_setup
	gd_start s --listen-address 0.0.0.0
	# from 192.0.2.1: reads yes, writes no, on both protocols
	run nmc 192.0.2.1 <<<$'set k 0 0 1\r\nx\r\nget k\r\ndelete k\r\nmn\r'
	echo "$output"
	[ "$output" = $'CLIENT_ERROR writes are accepted from loopback only (see --auth-file)\r\nEND\r\nCLIENT_ERROR writes are accepted from loopback only (see --auth-file)\r\nMN\r' ]
	run ncurl -s -o /dev/null -w '%{http_code}' -X PUT --data-binary v \
		"http://192.0.2.1:$HPORT/k"
	[ "$output" = 403 ]
	# from loopback, in the same namespace: both write
	run nmc 127.0.0.1 <<<$'set k 0 0 1\r\nx\r\nget k\r'
	[ "$output" = $'STORED\r\nVALUE k 0 1\r\nx\r\nEND\r' ]
	run ncurl -s "http://192.0.2.1:$HPORT/k"
	[ "$output" = x ]
	run nmc 192.0.2.1 <<<$'get k\r\nstats\r'
	[[ "$output" == $'VALUE k 0 1\r\nx\r\nEND\r\n'*"STAT memcache_denied 2"* ]]
	gd_stop
}

@test "issue 16: with --auth-file and a token, a non-loopback peer writes by both protocols" {
	ns_setup
	auth_file
	gd_start s --listen-address 0.0.0.0 --auth-file "$T/auth" \
		--http-write-token tok123
	run nmc 192.0.2.1 <<<$'delete k\r\nset k 0 0 1\r\nx\r'
	[ "$output" = $'CLIENT_ERROR unauthenticated\r\nCLIENT_ERROR bad authentication token format\r' ]
	run nmc 192.0.2.1 <<<$'set a 0 0 12\r\nalice secret\r\nset k 0 0 1\r\nx\r\nget k\r'
	[ "$output" = $'STORED\r\nSTORED\r\nVALUE k 0 1\r\nx\r\nEND\r' ]
	# loopback must log in as well (memcached -Y), and HTTP needs the token
	run nmc 127.0.0.1 <<<$'get k\r'
	[ "$output" = $'CLIENT_ERROR unauthenticated\r' ]
	run ncurl -s -o /dev/null -w '%{http_code}' -X PUT --data-binary y \
		"http://192.0.2.1:$HPORT/h"
	[ "$output" = 401 ]
	run ncurl -s -o /dev/null -w '%{http_code}' -X PUT --data-binary y \
		-H 'Authorization: Bearer tok123' "http://192.0.2.1:$HPORT/h"
	[ "$output" = 201 ]
	gd_stop
}

@test "issue 16: X-Forwarded-For is believed from --trusted-proxy only; a proxied request is not local" {
	gd_start s --trusted-proxy 127.0.0.2
	local u="http://127.0.0.1:$HPORT/k"
	# a direct loopback client writes
	[ "$(put_code "$u")" = 201 ]
	# a proxy we do not trust (127.0.0.1) speaks for someone: refused
	[ "$(put_code -H 'X-Forwarded-For: 127.0.0.1' "$u")" = 403 ]
	[ "$(put_code -H 'Forwarded: for=127.0.0.1' "$u")" = 403 ]
	# the trusted proxy: judged by the address it appended, the last one
	[ "$(put_code --interface 127.0.0.2 -H 'X-Forwarded-For: 127.0.0.1' "$u")" = 204 ]
	[ "$(put_code --interface 127.0.0.2 -H 'X-Forwarded-For: 203.0.113.7' "$u")" = 403 ]
	[ "$(put_code --interface 127.0.0.2 -H 'X-Forwarded-For: 127.0.0.1, 203.0.113.7' "$u")" = 403 ]
	[ "$(put_code --interface 127.0.0.2 -H 'X-Forwarded-For: 203.0.113.7, ::1' "$u")" = 204 ]
	[ "$(put_code --interface 127.0.0.2 -H 'X-Forwarded-For: 127.0.0.1' -H 'X-Forwarded-For: 198.51.100.9' "$u")" = 403 ]
	[ "$(put_code --interface 127.0.0.2 -H 'X-Forwarded-For: junk' "$u")" = 403 ]
	# without X-Forwarded-For the proxy did not say who its client is
	[ "$(put_code --interface 127.0.0.2 "$u")" = 403 ]
	# reads are not gated
	[ "$(curl -s --interface 127.0.0.2 -H 'X-Forwarded-For: 203.0.113.7' "$u")" = v ]
	[ "$(hstat http_denied)" -eq 7 ]
	gd_stop
}

@test "issue 16: idle memcache connections cannot lock HTTP out (limits per protocol)" {
	gd_start s --max-conns 40
	# 40 idle memcache clients: 3/4 of --max-conns get in, the rest are told
	run "$PY" "$CC" flood "$GPID" "$PORT" "$HPORT" 40 10 0
	echo "$output"
	[ "$(kv mc_ok)" -eq 30 ]
	[ "$(kv mc_refused)" -eq 10 ]
	# while they are held, HTTP is served
	[ "$(kv http_ok)" -eq 10 ]
	[ "$(kv http_503)" -eq 0 ]
	# explicit limits, and one over --max-conns is refused at start
	gd_start t --max-conns 40 --memcache-max-conns 5 --http-max-conns 40
	run "$PY" "$CC" flood "$GPID" "$PORT" "$HPORT" 10 30 0
	echo "$output"
	[ "$(kv mc_ok)" -eq 5 ]
	[ "$(kv mc_refused)" -eq 5 ]
	[ "$(kv http_ok)" -eq 30 ]
	run -129 "$GD" --store "$T/u" --max-conns 10 --http-max-conns 11
	[[ "$output" == *"--http-max-conns 11 is over --max-conns 10"* ]]
}

@test "issue 16: idle connections are closed after --busy-idle-timeout once they hold over half the limit" {
	gd_start s --max-conns 40 --memcache-max-conns 20 --busy-idle-timeout 2
	# 8 of 20: no pressure, idle connections stay (--idle-timeout is 0)
	run "$PY" "$CC" hold "$PORT" 8 5
	[ "$output" = open=8 ]
	[ "$(stat_of idle_kicks)" -eq 0 ]
	# 15 of 20: over half, idle ones older than 2 s go until half is left
	# (two workers may each close one at the edge: 8 or 9 may remain)
	run "$PY" "$CC" hold "$PORT" 15 5
	echo "$output"
	local open=${output#open=}
	[ "$open" -le 10 ]
	[ "$open" -ge 8 ]
	[ "$(stat_of idle_kicks)" -eq $((15 - open)) ]
	gd_stop
}

@test "issue 16: the access and limit options are goblin.conf keys" {
	auth_file
	cat >"$T/goblin.conf" <<-EOF
	[goblind]
	memcache-max-conns = 5
	http-max-conns = 6
	busy-idle-timeout = 7
	trusted-proxy = 127.0.0.2
	EOF
	gd_start s --config "$T/goblin.conf" --max-conns 10
	run stat_of memcache_maxconns settings
	[ "$output" = 5 ]
	run stat_of http_maxconns settings
	[ "$output" = 6 ]
	run stat_of busy_idle_time settings
	[ "$output" = 7 ]
	run stat_of trusted_proxy settings
	[ "$output" = 127.0.0.2 ]
	run stat_of auth_enabled_ascii settings
	[ "$output" = no ]
	gd_stop
	printf 'auth-file = %s\n' "$T/auth" >>"$T/goblin.conf"
	gd_start s --config "$T/goblin.conf" --max-conns 10
	run "$PY" "$CC" raw 127.0.0.1 "$PORT" \
		<<<$'set a 0 0 12\r\nalice secret\r\nstats settings\r'
	[[ "$output" == *"STAT auth_enabled_ascii yes"* ]]
	gd_stop
	printf 'busy-idle-timeout = soon\n' >>"$T/goblin.conf"
	run -129 "$GD" --config "$T/goblin.conf" --store "$T/s"
	[[ "$output" == *"busy-idle-timeout = 'soon': not a number of seconds"* ]]
}
