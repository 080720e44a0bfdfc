#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# goblind speaks memcache (issue 5): exact replies, real clients
# (pymemcache, libmemcached tools), streaming of large values with bounded
# memory and head-first gets, a clean stop and restart, goblin.conf, limits,
# stats, and --mount both ways.

bats_require_minimum_version 1.5.0

load goblind

setup() {
	gd_setup goblind-bats
}

teardown() {
	gd_teardown
}

@test "replies byte for byte as memcached: errors, noreply, oversize, long lines, meta, base64" {
	gd_start s --max-item 1M
	run -0 "$PY" "$MCCHECK" cases "$PORT"
	echo "$output"
	[ "${lines[-1]}" = "50 cases, 0 mismatched" ]
	[ "$(stat_of store_too_large)" = 2 ]
	[ "$(stat_of conn_closed_long_line)" = 1 ]
}

@test "pymemcache: small and multi-MiB values, gets/cas, incr/decr, touch, delete" {
	gd_start s
	"$PY" - "$PORT" <<'PYEOF'
import os, sys
from pymemcache.client.base import Client
c = Client(("127.0.0.1", int(sys.argv[1])), default_noreply=False)
assert c.set("small", b"hello")
assert c.get("small") == b"hello"
big = os.urandom(7 << 20)
assert c.set("big", big)
assert c.get("big") == big
got = c.get_many(["small", "big", "absent"])
assert got == {"small": b"hello", "big": big}, got.keys()
v, cas = c.gets("small")
assert v == b"hello"
assert c.cas("small", b"new", cas) is True
assert c.cas("small", b"newer", cas) is False
assert c.get("small") == b"new"
assert c.set("n", b"41")
assert c.incr("n", 1) == 42
assert c.decr("n", 50) == 0
assert c.incr("absent", 1) is None
assert c.touch("n", 100) is True
assert c.touch("absent", 100) is False
assert c.add("n", b"x") is False
assert c.replace("absent", b"x") is False
assert c.append("small", b"-tail") and c.prepend("small", b"head-")
assert c.get("small") == b"head-new-tail"
assert c.delete("n") is True
assert c.get("n") is None
assert c.delete("n") is False
st = c.stats()
assert st[b"curr_items"] == 2, st[b"curr_items"]
assert st[b"get_hits"] >= 6 and st[b"cas_badval"] == 1
print("ok")
PYEOF
}

@test "libmemcached tools: memccp, memccat, memcrm, memcstat, memcslap" {
	command -v memccp >/dev/null || skip "no libmemcached-tools"
	gd_start s
	S="--servers=127.0.0.1:$PORT"
	head -c 3000000 /dev/urandom >"$T/blob.bin"
	echo "hello goblin" >"$T/note.txt"
	(cd "$T" && memccp "$S" blob.bin note.txt)
	memccat "$S" blob.bin >"$T/out.bin"	# memccat adds a newline
	[ "$(stat -c %s "$T/out.bin")" = 3000001 ]
	cmp "$T/blob.bin" <(head -c 3000000 "$T/out.bin")
	run -0 memccat "$S" note.txt
	[ "$output" = "hello goblin" ]
	memcrm "$S" note.txt
	run memccat "$S" note.txt
	[ "$status" -ne 0 ]
	run -0 memcstat "$S"
	[[ "$output" == *"curr_items: 1"* ]]
	run -0 timeout 60 memcslap "$S" --concurrency=4 --execute-number=500
	[[ "$output" == *"Time to set"* ]]
	(( $(stat_of cmd_set) >= 2002 ))
}

@test "SIGTERM: stops accepting, exits 0, and a restart serves the same values" {
	gd_start s
	"$PY" "$MCCHECK" bigset "$PORT" big 50000000
	printf 'set k 7 0 5\r\nhello\r\nquit\r\n' | mc >/dev/null
	# a client that holds an idle connection does not keep it alive
	exec 7<>"/dev/tcp/127.0.0.1/$PORT"
	gd_stop
	exec 7<&-
	grep -q "stopped" "$LOG"
	run ! bash -c "exec 9<>/dev/tcp/127.0.0.1/$PORT"
	gd_start s
	run -0 mc <<<$'get k\r\nquit\r'
	[ "$output" = $'VALUE k 7 5\r\nhello\r\nEND\r\n<closed>' ]
	"$PY" "$MCCHECK" bigget "$PORT" big 50000000
	gd_stop
}

@test "a set in flight when SIGTERM comes is finished and kept" {
	gd_start s
	"$PY" - "$PORT" "$GPID" <<'PYEOF'
import os, signal, socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"set inflight 0 0 20000000\r\n" + b"a" * 10000000)
time.sleep(0.3)
os.kill(int(sys.argv[2]), signal.SIGTERM)
time.sleep(0.3)
s.sendall(b"b" * 10000000 + b"\r\n")
assert s.makefile("rb").readline() == b"STORED\r\n"
PYEOF
	wait "$GPID"
	gd_start s
	run -0 bash -c "printf 'mg inflight s\r\n' | '$PY' '$MCCHECK' raw $PORT"
	[ "$output" = $'HD s20000000\r' ]
}

@test "a 1 GiB value streams in and out with bounded server memory" {
	gd_start s --max-item 2G
	"$PY" "$MCCHECK" bigset "$PORT" huge 1073741824
	"$PY" "$MCCHECK" bigget "$PORT" huge 1073741824
	hwm=$(awk '/VmHWM/ { print $2 }' "/proc/$GPID/status")
	echo "goblind peak RSS: $hwm kB"
	(( hwm < 200 * 1024 ))
}

@test "a large get sends header and RAM head before the tail is read" {
	gd_start s
	"$PY" "$MCCHECK" bigset "$PORT" art 268435456
	gd_stop
	gd_start s	# cold: the tail is on the SSD tier only
	read -r tail_read ttfb < <("$PY" "$MCCHECK" headfirst "$PORT" art)
	echo "ssd bytes read while the client held off: $tail_read; ttfb $ttfb"
	# the head went out, yet only a bounded read-ahead of the tail
	(( tail_read < 64 * 1048576 ))
	read -r ttfb total < <("$PY" "$MCCHECK" bigget "$PORT" art 268435456)
	echo "ttfb $ttfb total $total"
	"$PY" -c "import sys; t, a = float('$ttfb'), float('$total'); sys.exit(not (t < 0.05 and t * 20 < a))"
}

@test "goblin.conf: keys apply, flags win, a bad line is named" {
	cat >"$T/goblin.conf" <<-EOF
	# a comment
	[goblind]
	max-item = 100
	max-conns = 7
	idle-timeout = 30
	log-level = warn
	memory = 16M
	no-mlock = yes
	EOF
	gd_start s --config "$T/goblin.conf" --max-conns 9 --log-level info
	[ "$(stat_of item_size_max settings)" = 100 ]
	[ "$(stat_of maxconns settings)" = 9 ]
	[ "$(stat_of idle_time settings)" = 30 ]
	[ "$(stat_of log_level settings)" = info ]
	printf 'bogus-key = 1\n' >"$T/bad.conf"
	run -129 "$GD" --store "$T/x" --config "$T/bad.conf"
	[[ "$output" == *"bad.conf:1: bogus-key = '1': no such option"* ]]
	run -129 "$GD" --store "$T/x" --memcache-port 70000
	[[ "$output" == *"invalid value '70000' for --memcache-port"* ]]
	run -128 "$GD" --store "$T/x" --config "$T/missing.conf"
	run -0 "$GD" --help
	[[ "$output" == *"--ram-head SIZE"* ]]
}

@test "limits: --max-conns refuses like memcached, --idle-timeout closes idle ones" {
	gd_start s --max-conns 2 --idle-timeout 1
	exec 7<>"/dev/tcp/127.0.0.1/$PORT"
	exec 8<>"/dev/tcp/127.0.0.1/$PORT"
	run -0 mc </dev/null	# it says why before closing
	[ "$output" = $'ERROR Too many open connections\r\n<closed>' ]
	sleep 2.5
	run -0 mc <<<$'mn\r'
	[ "$output" = $'MN\r' ]
	exec 7<&- 8<&-
	[ "$(stat_of idle_kicks)" = 2 ]
	[ "$(stat_of rejected_connections)" = 1 ]
}

@test "stats, stats settings and stats tiers count what happened" {
	gd_start s
	"$PY" "$MCCHECK" bigset "$PORT" big 5000000
	printf 'set s 0 0 1\r\nx\r\nget s big nope\r\nquit\r\n' | mc >/dev/null
	[ "$(stat_of curr_items)" = 2 ]
	[ "$(stat_of get_hits)" = 2 ]
	[ "$(stat_of get_misses)" = 1 ]
	[ "$(stat_of cmd_set)" = 2 ]
	[ "$(stat_of threads)" = 2 ]
	[ "$(stat_of bytes)" = 5000001 ]
	(( $(stat_of ssd:bytes_written tiers) >= 5000000 ))
	[ "$(stat_of ram:capacity tiers)" = 16777216 ]
	(( $(stat_of ram:bytes_read tiers) >= 262144 ))
	[ "$(stat_of tcpport settings)" = "$PORT" ]
}

@test "--mount: a memcache value is a file, a copied file is a memcache value" {
	[ -e /dev/fuse ] || skip "no /dev/fuse"
	command -v fusermount3 >/dev/null || skip "no fusermount3"
	M="$T/mnt"
	mkdir "$M"
	gd_start s --mount "$M"
	for i in $(seq 50); do
		mountpoint -q "$M" && break
		sleep 0.1
	done
	"$PY" "$MCCHECK" bigset "$PORT" big.bin 3000000
	printf 'set hello.txt 0 0 6\r\ngoblin\r\nquit\r\n' | mc >/dev/null
	[ "$(cat "$M/hello.txt")" = goblin ]
	[ "$(stat -c %s "$M/big.bin")" = 3000000 ]
	"$PY" -c "import hashlib, sys; sys.path.insert(0, '$BATS_TEST_DIRNAME'); import mc_check; d = open('$M/big.bin', 'rb').read(); sys.exit(d != b''.join(mc_check.pattern(3000000)))"
	head -c 2000000 /dev/urandom >"$T/in.bin"
	cp "$T/in.bin" "$M/copied.bin"
	printf 'get copied.bin\r\nquit\r\n' | mc >"$T/got"
	head -c 2000000 < <(tail -c +$(( $(head -1 "$T/got" | wc -c) + 1 )) "$T/got") >"$T/val"
	cmp "$T/in.bin" "$T/val"
	gd_stop
	run ! mountpoint -q "$M"
}

@test "each worker is a named thread pinned to one allowed CPU, round robin" {
	local cpus n i w want
	cpus=$(taskset -pc $$ | sed 's/.*: //')
	gd_start s --cores 3
	# the CPUs this shell may use, one per line, in order
	mapfile -t allowed < <("$PY" -c "
import sys
out = []
for part in sys.argv[1].split(','):
    a, _, b = part.partition('-')
    out += range(int(a), int(b or a) + 1)
print('\n'.join(map(str, out)))" "$cpus")
	n=0
	for t in /proc/"$GPID"/task/*; do
		w=$(cat "$t/comm")
		[[ "$w" == goblind-w* ]] || continue
		i=${w#goblind-w}
		want=${allowed[$((i % ${#allowed[@]}))]}
		echo "$w: $(grep Cpus_allowed_list "$t/status")"
		[ "$(awk '/Cpus_allowed_list/ { print $2 }' "$t/status")" = "$want" ]
		n=$((n + 1))
	done
	[ "$n" -eq 3 ]
	gd_stop
}

@test "issue 16: a set over --max-item is refused at once as memcached replies; a length over memcached's int32 is never read" {
	command -v memcached >/dev/null || skip "no memcached (Debian's memcached)"
	gd_start s --max-item 1M
	# the reference: Debian's memcached on a Unix socket in $T, no port
	memcached -u "$(id -un)" -s "$T/mc.sock" -a 0700 -U 0 -I 1m -m 64 &
	GD_PIDS+=($!)
	for i in $(seq 50); do
		[ -S "$T/mc.sock" ] && break
		sleep 0.1
	done
	run "$PY" "$MCCHECK" bigline "$PORT" "$T/mc.sock"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${lines[-1]}" = "20 cases, 0 mismatched" ]
	[ "$(stat_of store_too_large)" = 5 ]
	# nothing the server read was taken for the values' data
	[ "$(stat_of curr_items)" = 0 ]
}

@test "--tcp-congestion: memcache, HTTP and RESP connections use it; a name the kernel lacks is refused" {
	local sys want port got
	sys=$(cat /proc/sys/net/ipv4/tcp_congestion_control)
	# one the kernel has that is not the system's default (reno is
	# built into every kernel)
	want=reno
	[ "$sys" != reno ] || want=cubic
	grep -qw "$want" /proc/sys/net/ipv4/tcp_available_congestion_control ||
		skip "this kernel has no $want"
	resp_start s --tcp-congestion "$want"
	[ "$(stat_of tcp_congestion settings)" = "$want" ]
	for port in "$PORT" "$HPORT" "$RPORT"; do
		# a connection held open while ss reads the server's end of it
		got=$("$PY" -c '
import socket, subprocess, sys
port = int(sys.argv[1])
c = socket.create_connection(("127.0.0.1", port))
mine = c.getsockname()[1]
out = subprocess.run(["ss", "-Htin", "state", "established",
                      "( sport = :%d and dport = :%d )" % (port, mine)],
                     capture_output=True, text=True, check=True).stdout
print(out.split("\n")[1].split()[0] if out.count("\n") >= 2 else "none")
c.close()' "$port")
		echo "port $port: $got (want $want, system $sys)"
		[ "$got" = "$want" ]
	done
	gd_stop
	# a name the kernel does not have: goblind says so and does not start
	run "$GD" --store "$T/bad" "${GD_STORE_OPTS[@]}" --memcache-port 0 \
		--http-port 0 --tcp-congestion no-such-cc
	echo "$output"
	[ "$status" -ne 0 ]
	[[ "$output" == *"--tcp-congestion no-such-cc: No such file or directory (this kernel has: "*"$want"* ]]
	run "$GD" --store "$T/bad" --tcp-congestion 0123456789abcdefg
	[ "$status" -ne 0 ]
	[[ "$output" == *"congestion control's name"* ]]
}
