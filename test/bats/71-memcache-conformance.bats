#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# memcache as memcached 1.6.18 speaks it (issue 19): the same inputs to
# goblind and to Debian's memcached side by side (mc_conformance.py, the
# table of bench/results/memcache-conformance.md), multi-gets of any
# length with bounded memory, memccapable, pymemcache and memcslap, the
# binary protocol and HTTP lines refused by closing, the version.

bats_require_minimum_version 1.5.0

load goblind

CONF="$BATS_TEST_DIRNAME/mc_conformance.py"
TABLE="$BATS_TEST_DIRNAME/../../bench/results/memcache-conformance.md"

setup() {
	gd_setup mc-conformance
}

teardown() {
	gd_teardown
}

# memcached_start: Debian's memcached on 127.0.0.1, port 0 (it writes the
# port it got to MEMCACHED_PORT_FILENAME); sets MPORT
memcached_start() {
	command -v memcached >/dev/null ||
		skip "Debian's memcached is not installed"
	local i
	MEMCACHED_PORT_FILENAME="$T/mcport" memcached -u "$(id -un)" \
		-l 127.0.0.1:0 -U 0 -m 64 2>"$T/memcached.log" &
	GD_PIDS+=($!)
	for i in $(seq 100); do
		MPORT=$(sed -n 's/^TCP INET: //p' "$T/mcport" 2>/dev/null |
			head -1)
		[ -n "$MPORT" ] && return 0
		sleep 0.05
	done
	echo "memcached did not start" >&2
	return 1
}

# vm KB-FIELD: a field of goblind's /proc status, in kB
vm() {
	awk -v f="$1:" '$1 == f { print $2 }' "/proc/$GPID/status"
}

@test "issue 19: goblind answers every case as memcached 1.6.18 does, but for the listed differences" {
	memcached_start
	gd_start s
	run "$PY" "$CONF" "$PORT" "$MPORT" --table "$T/table.md"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "${lines[-1]}" =~ ^[0-9]+\ cases,\ [0-9]+\ differences\ listed,\ 0\ mismatched$ ]]
	# the table in bench/results names every listed difference
	run -0 "$PY" "$CONF" --check-table "$TABLE"
	# the replies the issue named, on goblind
	grep -qF '| verbosity noreply | `verbosity noreply\r\n` | `` | same |' "$T/table.md"
	grep -qF '| gat past time |' "$T/table.md"
	[ "$(grep -c '| same |' "$T/table.md")" -gt 80 ]
}

@test "issue 21: gets of values past the RAM head, END in the last value's write, come back as memcached's" {
	memcached_start
	gd_start s
	run "$PY" "$CONF" --big "$PORT" "$MPORT"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${lines[-1]}" = "12 big cases, 0 mismatched" ]
}

@test "issue 19: a get of 100,000 keys in one line comes back byte for byte, the connection's memory bounded" {
	gd_start s
	"$PY" - "$PORT" "$GPID" <<'PYEOF'
import hashlib, socket, sys
port, pid = int(sys.argv[1]), sys.argv[2]
N = 100000

def hwm():
    for l in open("/proc/%s/status" % pid):
        if l.startswith("VmHWM:"):
            return int(l.split()[1])

def conn():
    s = socket.create_connection(("127.0.0.1", port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s

def value(i):
    return b"v%d-" % i + hashlib.md5(b"%d" % i).hexdigest().encode()

def key(i):
    return b"key%06d" % i

s = conn()
s.sendall(b"".join(b"set %s %d 0 %d noreply\r\n%s\r\n" %
                   (key(i), i % 7, len(value(i)), value(i)) for i in range(N))
          + b"mn\r\n")
buf = b""
while not buf.endswith(b"MN\r\n"):
    buf += s.recv(65536)
assert buf == b"MN\r\n", buf[:200]

def get(keys, cmd=b"get"):
    """One line of all the keys, sent in pieces while the reply is read."""
    line = cmd + b" " + b" ".join(keys) + b"\r\n"
    want = b"".join(b"VALUE %s %d %d\r\n%s\r\n" % (key(i), i % 7,
                    len(value(i)), value(i)) for i in idx) + b"END\r\n"
    s.setblocking(False)
    got = bytearray()
    off = 0
    while len(got) < len(want):
        if off < len(line):
            try:
                off += s.send(line[off:off + 65536])
            except BlockingIOError:
                pass
        try:
            b = s.recv(1 << 20)
            if not b:
                raise SystemExit("connection closed after %d bytes" %
                                 len(got))
            got += b
        except BlockingIOError:
            pass
    s.setblocking(True)
    assert bytes(got) == want, "reply differs at byte %d" % next(
        i for i in range(len(want)) if got[i] != want[i])
    return len(line)

idx = list(range(N))
n1 = get([key(i) for i in idx])
before = hwm()
# three times the keys (and a miss): a line buffer would grow by MBs
idx = list(range(N)) * 3
n3 = get([key(i) for i in idx] + [b"absent"])
after = hwm()
print("line of %d then %d bytes; peak RSS %d kB -> %d kB" %
      (n1, n3, before, after))
assert n1 > 1000000 and n3 > 3000000
assert after - before < 1024, "peak RSS grew by %d kB" % (after - before)
# and 100,000 pipelined mg in one write
s.sendall(b"".join(b"mg %s v\r\n" % key(i) for i in range(N)) + b"mn\r\n")
want = b"".join(b"VA %d\r\n%s\r\n" % (len(value(i)), value(i))
                for i in range(N)) + b"MN\r\n"
got = b""
while len(got) < len(want):
    b = s.recv(1 << 20)
    assert b, "closed"
    got += b
assert got == want
print("100000 pipelined mg: ok")
PYEOF
	[ "$(stat_of conn_closed_long_line)" = 0 ]
	(( $(stat_of get_hits) >= 400000 ))
}

@test "issue 19: a long multi-get with a bad key, or a gat with a bad time, is refused and the connection goes on" {
	gd_start s
	run "$PY" - "$PORT" <<'PYEOF'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"set a 0 0 1\r\nx\r\n")
assert s.recv(100) == b"STORED\r\n"
many = b" a" * 40000  # 80 kB: over what a line buffer held before
s.sendall(b"get" + many + b" " + b"k" * 300 + many + b"\r\n" +
          b"gat x" + many + b"\r\nget a\r\n")
want = (b"VALUE a 0 1\r\nx\r\n" * 40000 +
        b"CLIENT_ERROR bad command line format\r\n"
        b"CLIENT_ERROR invalid exptime argument\r\n"
        b"VALUE a 0 1\r\nx\r\nEND\r\n")
got = b""
while len(got) < len(want):
    b = s.recv(65536)
    assert b, got[-200:]
    got += b
assert got == want, got[-300:]
print("ok")
PYEOF
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$output" = ok ]
}

@test "issue 19: memccapable -a passes 27 of 27" {
	command -v memccapable >/dev/null || skip "no memccapable (libmemcached-tools)"
	# the control: memcached passes the same 27
	memcached_start
	run timeout 120 memccapable -h 127.0.0.1 -p "$MPORT" -a
	[ "$(grep -c '\[pass\]' <<<"$output")" = 27 ]
	gd_start s
	run timeout 120 memccapable -h 127.0.0.1 -p "$PORT" -a
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(grep -c '\[pass\]' <<<"$output")" = 27 ]
	! grep -q '\[fail\]' <<<"$output"
	[[ "$output" == *"All tests passed"* ]]
}

@test "issue 19: pymemcache get_many of 10,000 keys, memcslap --test=mget" {
	command -v memcslap >/dev/null || skip "no memcslap (libmemcached-tools)"
	gd_start s
	"$PY" - "$PORT" <<'PYEOF'
import sys
from pymemcache.client.base import Client
c = Client(("127.0.0.1", int(sys.argv[1])), default_noreply=False)
keys = ["pm:%05d:%s" % (i, "x" * 20) for i in range(10000)]
c.set_many({k: k.encode() * 3 for k in keys[::2]})
got = c.get_many(keys)
assert got == {k: k.encode() * 3 for k in keys[::2]}, len(got)
print("get_many: %d of %d" % (len(got), len(keys)))
PYEOF
	run -0 timeout 120 memcslap --servers="127.0.0.1:$PORT" --test=mget \
		--concurrency=2 --execute-number=10000
	echo "$output"
	[[ "$output" == *"Time to mget          20000 keys by    2 threads"* ]]
	[ "$(stat_of conn_closed_long_line)" = 0 ]
	(( $(stat_of get_hits) >= 25000 ))
}

@test "issue 19: a binary protocol request is closed at once and logged; an HTTP request line closes the connection" {
	gd_start s
	run -0 "$PY" - "$PORT" <<'PYEOF'
import socket, sys, time
port = int(sys.argv[1])
def reply(data):
    s = socket.create_connection(("127.0.0.1", port))
    s.settimeout(5)
    s.sendall(data)
    out = b""
    t = time.monotonic()
    while True:
        b = s.recv(4096)
        if not b:
            return out, time.monotonic() - t
        out += b
# memjs's first request: a binary GET (magic 0x80, opcode 0)
out, t = reply(bytes([0x80, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1]) +
               bytes(12) + b"k")
assert out == b"" and t < 1, (out, t)
for line in (b"GET / HTTP/1.0\r\n\r\n", b"POST /x HTTP/1.1\r\nHost: h\r\n",
             b"version\r\nOPTIONS * HTTP/1.1\r\n"):
    out, t = reply(line)
    assert out in (b"", b"VERSION 1.6.18\r\n") and t < 1, (line, out, t)
print("ok")
PYEOF
	grep -q 'binary protocol request (magic 0x80).*closing' "$LOG"
	grep -q 'HTTP request line on the memcache port' "$LOG"
	# a get of "HTTP/1.1" is still a get, and the port still serves
	run -0 mc <<<$'get / HTTP/1.1\r\nversion\r'
	[ "$output" = $'END\r\nVERSION 1.6.18\r' ]
}

@test "issue 19: the version is memcached's 1.6.18 as clients parse it; goblind's own is stats goblind_version" {
	gd_start s
	"$PY" - "$PORT" <<'PYEOF'
import re, sys
from pymemcache.client.base import Client
c = Client(("127.0.0.1", int(sys.argv[1])))
v = c.version()
assert v == b"1.6.18", v
# node's memcached: /(\d+)\.(\d+)\.(\d+)$/ on the line's last token
m = re.search(rb"(\d+)\.(\d+)\.(\d+)$", v.split()[-1])
assert m.groups() == (b"1", b"6", b"18"), m.groups()
st = c.stats()
assert st[b"version"] == b"1.6.18", st[b"version"]
assert re.fullmatch(rb"\d+\.\d+\.\d+", st[b"goblind_version"])
print("ok")
PYEOF
	[ "$(stat_of goblind_version)" = "$("$GD" --version | awk '{ print $2 }')" ]
}

@test "issue 19: stats slabs and stats items report the tiers in memcached's shape; lru_crawler crawl is accepted, metadump works" {
	gd_start s
	printf 'set a 0 0 5\r\nhello\r\nquit\r\n' | mc >/dev/null
	run -0 mc <<<$'stats slabs\r\nstats items\r\nlru_crawler crawl all\r\nlru_crawler crawl 1,2\r\nlru_crawler crawl 0\r\nlru_crawler metadump all\r\nquit\r'
	echo "$output"
	[[ "$output" == *$'STAT 1:chunk_size '* ]]
	[[ "$output" == *$'STAT 3:total_pages 3072\r'* ]]	# --ssd-size 3G
	[[ "$output" == *$'STAT active_slabs 3\r'* ]]		# no HDD
	[[ "$output" == *$'STAT items:1:number 1\r\nSTAT items:1:mem_requested 5\r'* ]]
	[[ "$output" == *$'END\r\nOK\r\nOK\r\nBADCLASS invalid class id\r\nkey=a exp=-1 '*$' size=5\nEND\r\n<closed>' ]]
	# the ssd class's used and free chunks add up
	local used free
	used=$(tr -d '\r' <<<"$output" | awk '$2 == "3:used_chunks" { print $3 }')
	free=$(tr -d '\r' <<<"$output" | awk '$2 == "3:free_chunks" { print $3 }')
	[ $((used + free)) = 3072 ]
}

@test "issue 19: a streamed get stalled mid-line is an idle connection for --idle-timeout" {
	gd_start s --idle-timeout 1
	run -0 "$PY" - "$PORT" <<'PYEOF'
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"set a 0 0 1\r\nx\r\n")
assert s.recv(100) == b"STORED\r\n"
s.sendall(b"get" + b" a" * 6000)  # 12 kB, no newline: streamed
s.settimeout(10)
t, got = time.monotonic(), b""
while True:
    b = s.recv(65536)
    if not b:
        break
    got += b
waited = time.monotonic() - t
# the last "a" may go on into a longer key: not answered
assert got == b"VALUE a 0 1\r\nx\r\n" * 5999, len(got)
assert 0.5 < waited < 8, waited
print("closed after %.1f s" % waited)
PYEOF
	echo "$output"
	[ "$(stat_of idle_kicks)" = 1 ]
}

@test "issue 19: streamed multi-gets while other clients set and delete the same keys, 3 s" {
	gd_start s
	run -0 "$PY" - "$PORT" <<'PYEOF'
import re, socket, sys, threading, time
port = int(sys.argv[1])
KEYS = [b"race%05d" % i for i in range(8000)]  # 80 kB: over the old 64 KiB
stop = time.monotonic() + 3
errors, gets = [], [0]

def conn():
    return socket.create_connection(("127.0.0.1", port))

def writer(n):
    s, v = conn(), 0
    while time.monotonic() < stop:
        v += 1
        out = b""
        for k in KEYS[n::2]:
            val = k + b"=" + b"%d" % v * (v % 50 + 1)
            if v % 7 == 0:
                out += b"delete %s noreply\r\n" % k
            else:
                out += b"set %s 0 0 %d noreply\r\n%s\r\n" % (k, len(val), val)
        s.sendall(out)
    s.sendall(b"mn\r\n")
    buf = b""
    while not buf.endswith(b"MN\r\n"):
        buf += s.recv(65536)
    if buf != b"MN\r\n":
        errors.append(b"writer: " + buf[:200])

def reader():
    s = conn()
    f = s.makefile("rb")
    line = b"gets " + b" ".join(KEYS) + b"\r\n"
    while time.monotonic() < stop:
        s.sendall(line)
        seen = 0
        while True:
            h = f.readline()
            if h == b"END\r\n":
                break
            m = re.fullmatch(rb"VALUE (\S+) 0 (\d+) (\d+)\r\n", h)
            if not m:
                errors.append(b"header: " + h[:200])
                return
            data = f.read(int(m.group(2)) + 2)
            k = m.group(1)
            # a whole version of that key: its name, "=", one number repeated
            if not re.fullmatch(re.escape(k) + rb"=((\d+)\2*)\r\n", data) \
                    or KEYS.index(k) < seen:
                errors.append(b"value: " + k + b" " + data[:100])
                return
            seen = KEYS.index(k)
        gets[0] += 1

ts = [threading.Thread(target=writer, args=(i,)) for i in range(2)] + \
     [threading.Thread(target=reader) for _ in range(2)]
for t in ts:
    t.start()
for t in ts:
    t.join()
assert not errors, errors[:3]
assert gets[0] >= 2, gets
print("%d streamed gets of %d keys, every value whole" % (gets[0], len(KEYS)))
PYEOF
	echo "$output"
	[ "$(stat_of conn_closed_long_line)" = 0 ]
}
