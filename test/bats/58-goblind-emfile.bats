#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# goblind out of file descriptors (issue 16, finding 4): accept4 failing
# with EMFILE must not spin or flood the log, clients over the limit get
# memcached's "ERROR Too many open connections" (HTTP: 503 + Retry-After),
# and the open files limit is raised to what --max-conns needs at start,
# or the start fails saying why.

bats_require_minimum_version 1.5.0

load goblind

CC="$BATS_TEST_DIRNAME/conn_check.py"

setup() {
	gd_setup goblind-emfile
}

teardown() {
	gd_teardown
}

# kv KEY: a value of conn_check.py's output in $output
kv() {
	sed -n "s/^$1=//p" <<<"$output"
}

# soft_nofile PID: the soft limit of open files of PID
soft_nofile() {
	awk '/^Max open files/ { print $4 }' "/proc/$1/limits"
}

@test "issue 16: out of fds, over-limit clients are refused, no spin, log bounded, served after" {
	gd_start s --max-conns 1000
	# 8 fds over goblind's lowest free one: then accept4 fails, EMFILE
	local free
	free=$(ls "/proc/$GPID/fd" | sort -n |
		awk 'NR - 1 != $1 { print NR - 1; exit } END { print NR }' |
		head -1)
	prlimit --pid "$GPID" --nofile=$((free + 8)):$((free + 8))
	run "$PY" "$CC" flood "$GPID" "$PORT" "$HPORT" 60 40 1
	echo "$output"
	[ "$status" -eq 0 ]
	# every client got an answer: served, or told why not
	[ "$(kv silent)" -eq 0 ]
	[ "$(kv other)" -eq 0 ]
	[ "$(kv mc_refused)" -gt 0 ]
	[ "$(kv http_503)" -gt 0 ]
	[ $(($(kv mc_ok) + $(kv http_ok))) -le 10 ]
	# while the flood holds every fd, the workers do not spin: under 10%
	# of a CPU (a spinning worker takes a whole one)
	[ "$(kv cpu_ticks)" -lt "$(($(getconf CLK_TCK) / 10))" ]
	# one warning per worker per 10 s, not one per failed accept
	ls -l "$LOG"
	[ "$(grep -c 'accept' "$LOG")" -le 4 ]
	[ "$(stat -c %s "$LOG")" -lt 8192 ]
	grep -q 'accept: Too many open files' "$LOG"
	[ "$(stat_of rejected_no_fd)" -gt 0 ]
	# the flood is gone: normal clients are served again
	run mc <<<$'set k 0 0 2\r\nhi\r\nget k\r\nquit\r'
	[[ "$output" == *"STORED"*"VALUE k 0 2"*"hi"*"END"* ]]
	[ "$(curl -s "http://127.0.0.1:$HPORT/k")" = hi ]
	gd_stop
}

@test "issue 16: the soft open files limit is raised to what --max-conns needs" {
	local soft
	ulimit -Sn 128
	gd_start s --max-conns 1000
	soft=$(soft_nofile "$GPID")
	echo "soft limit now $soft"
	[ "$soft" -ge 1000 ]
	grep -q 'open files limit raised from 128 to' "$LOG"
	# and it is used: 300 clients at once, all served
	run "$PY" "$CC" flood "$GPID" "$PORT" "$HPORT" 200 100 0
	echo "$output"
	[ "$(kv mc_ok)" -eq 200 ]
	[ "$(kv http_ok)" -eq 100 ]
	gd_stop
}

@test "issue 16: a hard open files limit too low for --max-conns stops the start" {
	run -128 bash -c 'ulimit -n 256; exec timeout 10 "$@"' _ "$GD" \
		--store "$T/s" "${GD_STORE_OPTS[@]}" --memcache-port 0 \
		--http-port 0 --cores 2 --max-conns 1024
	echo "$output"
	[[ "$output" == *"--max-conns 1024 needs "*" open files, but the hard limit (RLIMIT_NOFILE) is 256"* ]]
	# with a --max-conns that fits it starts
	gd_start s --max-conns 100
	gd_stop
}

@test "issue 16: out of fds with no reserve either, accepting backs off and resumes when fds are back" {
	gd_start s --max-conns 1000
	# below every fd goblind holds: even the reserve cannot be reopened
	prlimit --pid "$GPID" --nofile=3:
	run "$PY" "$CC" flood "$GPID" "$PORT" "$HPORT" 20 10 1
	echo "$output"
	# they wait in the backlog, and the workers wait with them: no spin
	[ "$(kv silent)" -eq 30 ]
	[ "$(kv cpu_ticks)" -lt "$(($(getconf CLK_TCK) / 10))" ]
	[ "$(grep -c 'accept' "$LOG")" -le 4 ]
	prlimit --pid "$GPID" --nofile=4096:
	# the paused listeners come back within the longest pause (1 s):
	# wait for the reply up to the close that quit brings, not 0.5 s
	run "$PY" "$MCCHECK" rawquit "$PORT" <<<$'set k 0 0 2\r\nhi\r\nget k\r\nstats\r\nquit\r'
	[[ "$output" == *"STORED"*"VALUE k 0 2"*"hi"*"END"* ]]
	local paused
	paused=$(tr -d '\r' <<<"$output" | awk '$2 == "listen_disabled_num" { print $3 }')
	echo "listen_disabled_num $paused"
	[ "$paused" -gt 0 ]
	# bounded retry: at most one pause per 10 ms per listener per worker
	# over these ~4 s, far fewer since the pause doubles up to 1 s
	[ "$paused" -lt 100 ]
	gd_stop
}
