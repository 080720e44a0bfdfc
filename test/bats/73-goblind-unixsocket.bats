#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# goblind --unixsocket (memcached -s) and --unixsocket-mask (memcached -a):
# memcache on a Unix socket, served by every worker from one listening
# socket, with pymemcache as the client; the socket file's life (stale
# ones replaced, other files refused and kept, removed at a clean stop).

bats_require_minimum_version 1.5.0

load goblind

setup() {
	gd_setup goblind-unixsocket
	S="$T/mc.sock"
}

teardown() {
	gd_teardown
}

# ux_start NAME [OPTIONS]: goblind on store $T/NAME with HTTP on port 0
# and whatever OPTIONS say about memcache; waits for "memcache on unix
# socket" in its log; sets GPID and LOG.
ux_start() {
	local name="$1" i
	shift
	LOG="$T/$name.log"
	: >"$LOG"
	"$GD" --store "$T/$name" "${GD_STORE_OPTS[@]}" --http-port 0 \
		--cores 2 "$@" 2>"$LOG" &
	GPID=$!
	GD_PIDS+=("$GPID")
	for i in $(seq 100); do
		grep -q 'memcache on unix socket' "$LOG" && return 0
		kill -0 "$GPID" 2>/dev/null || break
		sleep 0.05
	done
	echo "goblind did not start; its log:" >&2
	cat "$LOG" >&2
	return 1
}

# ux_raw PATH: send standard input over the Unix socket PATH, print what
# comes back until the server closes or is quiet for 0.5 s
ux_raw() {
	"$PY" -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
s.sendall(sys.stdin.buffer.read())
s.settimeout(0.5)
out = b""
try:
    while True:
        d = s.recv(65536)
        if not d:
            break
        out += d
except socket.timeout:
    pass
sys.stdout.buffer.write(out)
' "$1"
}

@test "issue 19: --unixsocket alone serves memcache to pymemcache, no TCP memcache port, mode 0700 by default" {
	ux_start s --unixsocket "$S"
	[ -S "$S" ]
	# memcached -a's default, 0700 (memcached -h: "default: 700")
	[ "$(stat -c %a "$S")" = 700 ]
	# memcached -s turns the network off: no memcache TCP listener
	run -1 grep -q 'memcache on [0-9]' "$LOG"
	# the process's TCP listeners are HTTP's (one per worker) alone
	HPORT=$(sed -n 's/.*http on [^ ]*:\([0-9]*\).*/\1/p' "$LOG")
	run -0 ss -Hltnp
	[ "$(grep -c "pid=$GPID," <<<"$output")" = 2 ]
	[ "$(grep "pid=$GPID," <<<"$output" | grep -vc ":$HPORT ")" = 0 ]
	run -0 "$PY" - "$S" <<'EOF'
import sys
from pymemcache.client.base import Client

c = Client(sys.argv[1])          # pymemcache 3.5: a str is a Unix path
keys = ["k%05d" % i for i in range(10000)]
for k in keys[:200]:
    assert c.set(k, k.encode() * 3)
big = bytes(range(256)) * 8192   # 2 MiB: streamed both ways
assert c.set("big", big)
got = c.get_many(keys)           # one line of 10,000 keys
assert len(got) == 200, len(got)
assert all(got[k] == k.encode() * 3 for k in keys[:200])
assert c.get("big") == big
assert c.delete("k00000", noreply=False)
assert c.get("k00000") is None
print("ok", c.version().decode())
EOF
	[ "${lines[0]}" = "ok 1.6.18" ]
	# the socket's peers are local: writes are allowed as from loopback
	run -0 ux_raw "$S" <<<$'set w 0 0 1\r\nx\r\nmg w v\r'
	[ "$output" = $'STORED\r\nVA 1\r\nx\r' ]
	gd_stop
	# a clean stop removes the socket file
	[ ! -e "$S" ]
}

@test "issue 19: --unixsocket-mask sets the socket's mode before clients can connect; a user outside the mask is refused" {
	[ "$(id -u)" = 0 ] || skip "needs root to connect as another user"
	chmod 0711 "$T"
	ux_start s --unixsocket "$S" --unixsocket-mask 0700
	[ "$(stat -c %a "$S")" = 700 ]
	# nobody (uid 65534) may not write to a 0700 root socket: EACCES
	run -1 setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$PY" -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    s.connect(sys.argv[1])
except PermissionError:
    sys.exit(1)
s.sendall(b"version\r\n")
print(s.recv(100))
' "$S"
	gd_stop
	ux_start s --unixsocket "$S" --unixsocket-mask 666
	[ "$(stat -c %a "$S")" = 666 ]
	run -0 setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$PY" -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
s.sendall(b"version\r\n")
print(s.recv(100).decode().strip())
' "$S"
	[ "$output" = "VERSION 1.6.18" ]
	gd_stop
	# goblin.conf keys, and bad values refused at start
	printf 'unixsocket = %s\nunixsocket-mask = 0750\n' "$S" >"$T/g.conf"
	ux_start c --config "$T/g.conf"
	[ "$(stat -c %a "$S")" = 750 ]
	gd_stop
	run -129 "$GD" --store "$T/x" --unixsocket "$S" --unixsocket-mask 0800
	[[ "$output" == *"invalid value '0800' for --unixsocket-mask: not an octal mode"* ]]
	run -129 "$GD" --store "$T/x" --unixsocket "/$(printf 'd%.0s' $(seq 120))"
	[[ "$output" == *"not a socket path (1 to 107 bytes)"* ]]
	run -129 "$GD" --store "$T/x" --unixsocket "$S" --no-memcache
	[[ "$output" == *"--unixsocket serves memcache"* ]]
}

@test "issue 19: a stale socket is replaced; a live one and a regular file are refused, the file kept" {
	# a stale socket: bound by a process that is gone (kill -9 of a server)
	"$PY" -c 'import socket, sys
socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).bind(sys.argv[1])' "$S"
	[ -S "$S" ]
	ux_start s --unixsocket "$S"
	grep -q "removed the stale socket $S" "$LOG"
	run -0 ux_raw "$S" <<<$'version\r'
	[ "$output" = $'VERSION 1.6.18\r' ]
	# a second goblind on the same path: the first one answers there
	run -128 "$GD" --store "$T/t" "${GD_STORE_OPTS[@]}" --http-port 0 \
		--unixsocket "$S"
	[[ "$output" == *"cannot use --unixsocket '$S': a server is listening on it"* ]]
	# ... and the first still serves
	run -0 ux_raw "$S" <<<$'version\r'
	[ "$output" = $'VERSION 1.6.18\r' ]
	gd_stop
	[ ! -e "$S" ]
	# a regular file is never unlinked
	echo precious >"$S"
	run -128 "$GD" --store "$T/t" "${GD_STORE_OPTS[@]}" --http-port 0 \
		--unixsocket "$S"
	[[ "$output" == *"cannot use --unixsocket '$S': it exists and is not a socket"* ]]
	[ "$(cat "$S")" = precious ]
	rm "$S"
	mkdir "$S"
	run -128 "$GD" --store "$T/t" "${GD_STORE_OPTS[@]}" --http-port 0 \
		--unixsocket "$S"
	[[ "$output" == *"it exists and is not a socket"* ]]
	[ -d "$S" ]
}

@test "issue 19: --unixsocket with --memcache-port serves both at once; clients on each see the other's writes (3 s)" {
	ux_start s --unixsocket "$S" --memcache-port 0
	PORT=$(sed -n 's/.*memcache on [^ ]*:\([0-9]*\),.*/\1/p' "$LOG")
	[ -n "$PORT" ]
	run -0 "$PY" - "$S" "$PORT" <<'EOF'
import sys, threading, time
from pymemcache.client.base import Client

path, port = sys.argv[1], int(sys.argv[2])
stop = time.monotonic() + 3
errors, counts = [], []

def run(i):
    # writer on one transport, reader of its keys on the other
    w = Client(path) if i % 2 else Client(("127.0.0.1", port))
    r = Client(("127.0.0.1", port)) if i % 2 else Client(path)
    n = 0
    try:
        while time.monotonic() < stop:
            k = "t%d:%d" % (i, n % 50)
            v = ("%d-%d" % (i, n)).encode() * (1 + n % 300)
            assert w.set(k, v, noreply=False)
            got = r.get(k)
            if got != v:
                errors.append((k, len(v), got and len(got)))
                return
            n += 1
    except Exception as e:
        errors.append(repr(e))
    counts.append(n)

ts = [threading.Thread(target=run, args=(i,)) for i in range(8)]
for t in ts: t.start()
for t in ts: t.join()
print("errors", len(errors), errors[:3])
print("rounds", sum(counts), len(counts))
EOF
	[ "${lines[0]}" = "errors 0 []" ]
	[[ "${lines[1]}" =~ ^rounds\ [0-9]+\ 8$ ]]
	(( $(cut -d' ' -f2 <<<"${lines[1]}") > 100 ))
	# every connection was counted: 16 client connections at least
	(( $(stat_of total_connections) >= 16 ))
	gd_stop
	[ ! -e "$S" ]
}

@test "issue 19: connections on the socket are dealt round robin to the workers; 2 s of connection churn leaks none" {
	ux_start s --unixsocket "$S"
	# each worker's epoll holds its connections: count them per epoll fd
	# (/proc/PID/fdinfo lists an epoll's fds), before and with 16 open
	run -0 "$PY" - "$S" "$GPID" <<'EOF2'
import os, re, socket, sys, threading, time
path, pid = sys.argv[1], sys.argv[2]

def per_epoll():
    n = {}
    for fd in os.listdir("/proc/%s/fd" % pid):
        try:
            if "eventpoll" not in os.readlink("/proc/%s/fd/%s" % (pid, fd)):
                continue
            info = open("/proc/%s/fdinfo/%s" % (pid, fd)).read()
        except OSError:
            continue
        n[fd] = len(re.findall(r"^tfd:", info, re.M))
    return n

def talk(s, req):
    s.sendall(req)
    out = b""
    while not out.endswith(b"\r\n"):
        d = s.recv(4096)
        if not d:
            raise EOFError
        out += d
    return out

before = per_epoll()
held = []
for i in range(16):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    talk(s, b"version\r\n")   # accepted and served: on its worker now
    held.append(s)
time.sleep(0.2)
after = per_epoll()
print("spread", sorted(d for d in (after[f] - before.get(f, 0)
                                   for f in after) if d))
for s in held:
    s.close()

# churn: 4 threads open, use and close connections for 2 s
stop, bad, done = time.monotonic() + 2, [], []
def churn(i):
    n = 0
    while time.monotonic() < stop:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.connect(path)
            k = b"c%d" % i
            v = b"%d" % n
            if talk(s, b"set %s 0 0 %d\r\n%s\r\n" % (k, len(v), v)) != b"STORED\r\n":
                bad.append(n)
            if not talk(s, b"mg %s v\r\n" % k).startswith(b"VA %d" % len(v)):
                bad.append(n)
        except (OSError, EOFError) as e:
            bad.append(repr(e))
        s.close()
        n += 1
    done.append(n)
ts = [threading.Thread(target=churn, args=(i,)) for i in range(4)]
for t in ts: t.start()
for t in ts: t.join()
print("churn", len(bad), sum(done))
EOF2
	[ "${lines[0]}" = "spread [8, 8]" ]
	[[ "${lines[1]}" =~ ^churn\ 0\ [0-9]+$ ]]
	(( $(cut -d' ' -f3 <<<"${lines[1]}") > 50 ))
	# every closed connection was uncounted: this one is the only one
	for i in $(seq 50); do
		n=$(printf 'stats\r\nquit\r\n' | ux_raw "$S" | tr -d '\r' |
			awk '$2 == "curr_connections" { print $3 }')
		[ "$n" = 1 ] && break
		sleep 0.1
	done
	[ "$n" = 1 ]
	gd_stop
}

@test "issue 19: goblinctl --socket PATH speaks to goblind --unixsocket: put, get, ls, stat, inspect, stats, del" {
	ux_start s --unixsocket "$S"
	G=("$GCTL" --socket "$S")
	head -c 1000000 /dev/urandom >"$T/v"
	"${G[@]}" put --flags 3 v "$T/v"
	"${G[@]}" get v | cmp - "$T/v"
	run -0 "${G[@]}" ls
	[ "$output" = v ]
	run -0 "${G[@]}" stat v
	[ "${lines[1]}" = "size 1000000" ]
	[ "${lines[2]}" = "flags 3" ]
	run -0 "${G[@]}" inspect v
	[[ "${lines[0]}" =~ ^RAM\ +0\ +[0-9]+\ +-$ ]]
	run -0 "${G[@]}" stats
	grep -qx 'curr_items 1' <<<"$output"
	"${G[@]}" del v
	run -1 "${G[@]}" get v
	[ "$output" = "goblinctl: no such key 'v'" ]
	run -129 "$GCTL" --socket "$S" --host 127.0.0.1 ls
	[[ "$output" == *"--socket goes without --host and --port"* ]]
	run -129 "$GCTL" --socket mc.sock ls
	[[ "$output" == *"not an absolute path"* ]]
	run -129 "$GCTL" --socket "$S" bench
	[[ "$output" == *"bench runs over TCP only"* ]]
	gd_stop
	run -128 "${G[@]}" ls
	[[ "$output" == "goblinctl: cannot connect to '$S': No such file or directory" ]]
}
