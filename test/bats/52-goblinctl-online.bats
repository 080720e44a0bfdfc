#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# goblinctl against goblind (issue 5, section 3): online put/get/del/stats/ls
# streaming both ways, goblind's lru_crawler metadump listing, and
# goblinctl bench.

bats_require_minimum_version 1.5.0

load goblind

setup() {
	gd_setup goblinctl-online
	gd_start s
	G=("$GCTL" --host 127.0.0.1 --port "$PORT")
}

teardown() {
	gd_teardown
	[ -z "${SHM:-}" ] || rm -rf "$SHM"
}

@test "issue 5: online put/get/del round trips, small and multi-MiB, a pipe, misses" {
	echo hello >"$T/small"
	"${G[@]}" put small "$T/small"
	run -0 "${G[@]}" get small
	[ "$output" = hello ]
	head -c 6000000 /dev/urandom >"$T/big"
	"${G[@]}" put --flags 7 big "$T/big"
	"${G[@]}" get big -o "$T/big.out"
	cmp "$T/big" "$T/big.out"
	"${G[@]}" get big | cmp - "$T/big"
	# a pipe has no size: spooled, then streamed
	cat "$T/big" | "${G[@]}" put piped
	"${G[@]}" get piped | cmp - "$T/big"
	# the server saw the same bytes and flags
	run -0 mc <<<$'mg big s f\r'
	[ "${lines[0]}" = $'HD s6000000 f7\r' ]
	run -1 "${G[@]}" get absent -o "$T/absent.out"
	[ "$output" = "goblinctl: no such key 'absent'" ]
	[ ! -e "$T/absent.out" ]
	"${G[@]}" del small
	run -1 "${G[@]}" del small
	[ "$output" = "goblinctl: no such key 'small'" ]
	run -1 "${G[@]}" get small
	[ "$(stat_of curr_items)" = 2 ]
}

@test "issue 5: online stats and ls; goblind's lru_crawler metadump" {
	for k in art:2 art:1 'w%b' fb:1; do
		printf 'x%.0s' $(seq 10) | "${G[@]}" put "$k"
	done
	run -0 "${G[@]}" stats
	grep -qx 'curr_items 4' <<<"$output"
	grep -qx 'cmd_set 4' <<<"$output"
	run -0 "${G[@]}" ls
	[ "$output" = $'art:1\nart:2\nfb:1\nw%b' ]
	run -0 "${G[@]}" ls art:
	[ "$output" = $'art:1\nart:2' ]
	run -0 "${G[@]}" ls -l fb
	[[ "$output" =~ ^\ +10\ [0-9]{4}-.*\ fb:1$ ]]
	run -0 "${G[@]}" ls nothing
	[ -z "$output" ]
	# memcached's format, the key URI-encoded
	run -0 mc <<<$'lru_crawler metadump all w\r'
	[[ "${lines[0]}" =~ ^key=w%25b\ exp=-1\ la=[0-9]+\ cas=[0-9]+\ fetch=no\ cls=1\ size=10$ ]]
	[ "${lines[1]}" = $'END\r' ]
	run -0 mc <<<$'lru_crawler metadump 1,2\r'
	[ "${lines[0]}" = $'ERROR\r' ]
	# populate stays offline only (inspect and stat went online in 19)
	run -129 "${G[@]}" populate "$T"
	[[ "${lines[0]}" = *"'populate' works on a store directory only"* ]]
}

@test "issue 19: goblinctl --host inspect and stat ask the running goblind; offline they read the store as before" {
	head -c 3000000 /dev/urandom >"$T/big"
	"${G[@]}" put --flags 9 big "$T/big"
	echo small | "${G[@]}" put small
	# the process's view: the RAM head it holds, the tail on the SSD
	run -0 "${G[@]}" inspect big
	echo "$output"
	[[ "${lines[0]}" =~ ^RAM\ +0\ +[0-9]+\ +-$ ]]
	grep -Eq '^SSD +0 +3000000 +[0-9]+$' <<<"$output"
	# the same ranges goblind answers to its admin command
	run -0 mc <<<$'goblin inspect big\r'
	[ "$(grep -c '^RANGE ' <<<"$output")" = "$(wc -l <<<"$(
		"${G[@]}" inspect big)")" ]
	[ "${lines[-1]}" = $'END\r' ]
	run -0 "${G[@]}" inspect small
	[[ "$output" =~ ^SMALL\ +0\ +6\ +-$ ]]
	run -0 "${G[@]}" stat big
	online="$output"
	[[ "$online" == "key big"$'\n'"size 3000000"$'\n'"flags 9"$'\n'* ]]
	# misses and bad keys, as offline
	run -1 "${G[@]}" stat absent
	[ "$output" = "goblinctl: no such key 'absent'" ]
	run -1 "${G[@]}" inspect absent
	[ "$output" = "goblinctl: no such key 'absent'" ]
	run -128 "${G[@]}" stat "$(printf 'k%.0s' $(seq 4097))"
	[[ "$output" == *"store keys are 1 to 4096 bytes"* ]]
	# memcached answers ERROR to goblin's commands: harmless to clients
	run -0 mc <<<$'goblin stat big\r\ngoblin nosuch big\r\ngoblin stat\r\nmn\r'
	[ "${lines[-3]}" = $'ERROR\r' ]
	[ "${lines[-2]}" = $'ERROR\r' ]
	[ "${lines[-1]}" = $'MN\r' ]
	gd_stop
	# offline, the same object: the same metadata, ranges in the store
	run -0 "$GCTL" --store "$T/s" "${GD_STORE_OPTS[@]}" stat big
	[ "$output" = "$online" ]
	run -0 "$GCTL" --store "$T/s" "${GD_STORE_OPTS[@]}" inspect big
	grep -Eq '^SSD +0 +3000000 +[0-9]+$' <<<"$output"
}

@test "issue 19: goblinctl --host ls, stat and inspect of a 4096-byte key with spaces (an HTTP key); ls of 100,000 keys" {
	# 1024 times "a b/": memcache cannot name it, HTTP can
	k=$(printf 'a b/%.0s' $(seq 1024))
	[ "${#k}" = 4096 ]
	url=$(printf 'a%%20b/%.0s' $(seq 1024))
	run -0 curl -s -o /dev/null -w '%{http_code}' -X PUT \
		--data-binary hello "http://127.0.0.1:$HPORT/$url"
	[ "$output" = 201 ] || [ "$output" = 204 ]
	echo hi | "${G[@]}" put short
	run -0 "${G[@]}" ls
	[ "${#lines[@]}" = 2 ]
	[ "${lines[0]}" = "$k" ]
	[ "${lines[1]}" = short ]
	run -0 "${G[@]}" ls -l
	[[ "${lines[0]}" =~ ^\ +5\ [0-9]{4}-.*\ a\ b/a\ b/ ]]
	run -0 "${G[@]}" stat "$k"
	[ "${lines[0]}" = "key $k" ]
	[ "${lines[1]}" = "size 5" ]
	run -0 "${G[@]}" inspect "$k"
	[[ "$output" =~ ^SMALL\ +0\ +5\ +-$ ]]
	# 100,000 keys (one pipelined connection of noreply sets), listed
	# whole and sorted
	"$PY" - "$PORT" <<'EOF2'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
buf = b"".join(b"set n:%06d 0 0 1 noreply\r\nx\r\n" % i
               for i in range(100000))
s.sendall(buf + b"mn\r\n")
out = b""
while not out.endswith(b"MN\r\n"):
    out += s.recv(65536)
assert out == b"MN\r\n", out[:200]
EOF2
	[ "$(stat_of curr_items)" = 100002 ]
	"${G[@]}" ls n: >"$T/ls.out"
	[ "$(wc -l <"$T/ls.out")" = 100000 ]
	sort -c "$T/ls.out"
	[ "$(head -1 "$T/ls.out")" = n:000000 ]
	[ "$(tail -1 "$T/ls.out")" = n:099999 ]
	"${G[@]}" ls >"$T/all.out"
	[ "$(wc -l <"$T/all.out")" = 100002 ]
	[ "$(head -1 "$T/all.out")" = "$k" ]
}

# field NAME of the RESULT line in $output
result_of() {
	grep '^RESULT ' <<<"$output" | tr ' ' '\n' | sed -n "s/^$1=//p"
}

@test "issue 5: bench runs, records every request, uses less CPU than goblind" {
	run -0 "$GCTL" bench --port "$PORT" --proto memcache --conns 4 \
		--threads 2 --duration 2 --keys 300 --size fb_value \
		--get-ratio 0.9 --verify --csv "$T/req.csv"
	echo "$output"
	[ "$(result_of errors)" = 0 ]
	[ "$(result_of misses)" = 0 ]
	n=$(result_of requests)
	[ "$n" -gt 1000 ]
	awk -v r="$(result_of ops_per_s)" 'BEGIN { exit !(r > 0) }'
	# p50 <= p90 <= p99 <= p99.9 of ttfb, payload ttfb and completion
	for f in ttfb_us payload_ttfb_us completion_us; do
		result_of $f | awk -F/ '{ exit !($1 > 0 && $1 <= $2 && $2 <= $3 && $3 <= $4) }'
	done
	# one row per request, sent <= first byte <= first payload <= last
	[ "$(($(wc -l <"$T/req.csv") - 1))" = "$n" ]
	awk -F, 'NR > 1 { if (!($5 <= $6 && $6 <= $8 && ($7 == 0 || ($6 <= $7 && $7 <= $8)))) bad++;
		if ($1 == "get" && $3 != "hit") bad++ }
		END { exit bad > 0 }' "$T/req.csv"
	# the server's CPU was found through its stats pid
	awk -v c="$(result_of client_cpu_s)" -v s="$(result_of server_cpu_s)" \
		'BEGIN { exit !(s > 0 && c > 0) }'
	# large values: the client spends less CPU than the server
	run -0 "$GCTL" bench --port "$PORT" --conns 4 --threads 1 \
		--duration 1.5 --keys 40 --size 256K
	echo "$output"
	[ "$(result_of errors)" = 0 ]
	awk -v c="$(result_of client_cpu_s)" -v s="$(result_of server_cpu_s)" \
		'BEGIN { exit !(c < s) }'
}

@test "issue 5: bench --populate-only stores --keys keys; --no-store counts misses" {
	run -0 "$GCTL" bench --port "$PORT" --no-store --conns 2 --duration 1 \
		--keys 50 --size 100
	[ "$(result_of errors)" = 0 ]
	[ "$(result_of hits)" = 0 ]
	[ "$(result_of misses)" = "$(result_of requests)" ]
	[ "$(result_of requests)" -gt 0 ]
	run -0 "$GCTL" bench --port "$PORT" --populate-only --conns 3 \
		--keys 123 --size pareto:1000,2000,0.3,65536
	[ "$(result_of sets)" = 123 ]
	[ "$(result_of errors)" = 0 ]
	[ "$(stat_of curr_items)" = 123 ]
	# --sweep gets each key once: one deleted, one miss
	run -0 mc <<<$'delete bench:00000042\r'
	run -0 "$GCTL" bench --port "$PORT" --no-store --sweep --conns 3 \
		--keys 123 --size pareto:1000,2000,0.3,65536 --verify
	[ "$(result_of gets)" = 123 ]
	[ "$(result_of misses)" = 1 ]
	[ "$(result_of errors)" = 0 ]
	run -129 "$GCTL" bench --port "$PORT" --sweep --get-ratio 0.5
	# a manifest's keys and sizes, gets limited to a hot window
	printf 'm:a 10\nm:b 20000\nm:c 3\n' >"$T/man"
	run -0 "$GCTL" bench --port "$PORT" --populate-only --size "manifest:$T/man"
	run -0 mc <<<$'mg m:b s\r'
	[ "${lines[0]}" = $'HD s20000\r' ]
	run -0 "$GCTL" bench --port "$PORT" --no-store --duration 1 --verify \
		--size "manifest:$T/man" --hot-start 1 --hot-keys 1 \
		--csv "$T/hot.csv"
	[ "$(result_of errors)" = 0 ]
	[ "$(awk -F, 'NR > 1 { print $2 }' "$T/hot.csv" | sort -u)" = 1 ]
	run -129 "$GCTL" bench --port "$PORT" --size pareto:1,0,0.3
	run -129 "$GCTL" bench --port "$PORT" --proto gopher
}

@test "issue 5: one worker streams 16 cold tails at once, every byte right" {
	local art=pareto:524288,1048576,0.3,4194304
	gd_stop
	gd_start one --cores 1 --memory 8M --ram-head 64K
	run -0 "$GCTL" bench --port "$PORT" --populate-only --conns 8 \
		--keys 48 --size "$art"
	[ "$(result_of errors)" = 0 ]
	gd_stop
	gd_start one --cores 1 --memory 8M --ram-head 64K	# tails on SSD
	run -0 "$GCTL" bench --port "$PORT" --no-store --verify --conns 16 \
		--duration 2 --keys 48 --size "$art"
	echo "$output"
	[ "$(result_of errors)" = 0 ]
	[ "$(result_of misses)" = 0 ]
	[ "$(result_of requests)" -ge 48 ]
	[ "$(stat_of ssd:bytes_read tiers)" -gt 0 ]
	# the tails went through the store's buffers: 2 MiB slabs
	b=$(stat_of io_buffer_bytes tiers)
	echo "io_buffer_bytes $b"
	[ "$b" -gt 0 ] && [ $((b % 2097152)) = 0 ]
}

# a one-worker goblind whose SSD tier is on tmpfs ($SHM, which teardown
# removes): its reads complete at once, so only the worker's turns decide
# how a tail goes out
tmpfs_tier_start() {
	[ -n "${SHM:-}" ] || SHM=$(mktemp -d /dev/shm/goblin-tier.XXXXXX)
	gd_stop
	gd_start one --cores 1 --memory 8M --ram-head 64K --io-depth 32 \
		--ssd-dir "$SHM"
}

@test "issue 21: a streaming answer gives way to the worker's other streams whenever its sockets are due, and comes back whole" {
	head -c 33554432 /dev/urandom >"$T/big"
	tmpfs_tier_start
	"$GCTL" --host 127.0.0.1 --port "$PORT" put big "$T/big"
	tmpfs_tier_start
	# two at once on the one worker, each whole
	"$GCTL" --host 127.0.0.1 --port "$PORT" get big >"$T/a" &
	"$GCTL" --host 127.0.0.1 --port "$PORT" get big >"$T/b"
	wait $!
	cmp "$T/a" "$T/big"
	cmp "$T/b" "$T/big"
	for _ in 1 2; do
		"$GCTL" --host 127.0.0.1 --port "$PORT" get big >/dev/null
	done
	ended=$(stat_of tail_turns_ended)
	echo "tail_turns_ended $ended"
	[ "$(stat_of ssd:bytes_read tiers)" -gt 100000000 ]
	# 4 x 32 MiB take milliseconds to write, the sockets are due every
	# 50 us: each answer gave way to the others many times (a tail that
	# kept the worker until it was done would give 0)
	[ "$ended" -ge 16 ]
}

@test "issue 21: answers go out in their requests' order: the older of two streams finishes well before the younger" {
	# the client takes both answers into its socket buffers: only the
	# worker's order decides.  One chunk each in turn (8b678dc) lands
	# both near together
	head -c 67108864 /dev/urandom >"$T/big"
	tmpfs_tier_start
	"$GCTL" --host 127.0.0.1 --port "$PORT" put big "$T/big"
	run -0 "$PY" - "$PORT" <<'EOF2'
import fcntl, socket, struct, sys, termios, time
port, size = int(sys.argv[1]), 67108864
want = len(b"VALUE big 0 %d\r\n" % size) + size + len(b"\r\nEND\r\n")
def conn():
    s = socket.socket()
    # SO_RCVBUFFORCE (33): room for the whole answer, so the client
    # reads nothing and only the worker decides which arrives first
    s.setsockopt(socket.SOL_SOCKET, 33, 1 << 28)
    s.connect(("127.0.0.1", port))
    return s
def queued(s):
    return struct.unpack("i", fcntl.ioctl(s, termios.FIONREAD, b"\0" * 4))[0]
def trial():
    a, b = conn(), conn()
    a.sendall(b"get big\r\n")
    while queued(a) == 0:               # a's answer is under way
        time.sleep(0.0001)
    t0 = time.monotonic()
    b.sendall(b"get big\r\n")
    done = {}
    while len(done) < 2 and time.monotonic() - t0 < 20:
        for s in (a, b):
            if s not in done and queued(s) >= want:
                done[s] = time.monotonic() - t0
        time.sleep(0.0002)
    assert len(done) == 2, "an answer did not come whole in 20 s"
    a.close()
    b.close()
    return done[a] / done[b]
# the older's time over the younger's: a chunk each in turn gave 0.84-1.69
# (median 1.00) in 15 trials, in order 0.38-0.87 (median 0.55)
r = sorted(trial() for _ in range(5))
print("older/younger", " ".join("%.2f" % x for x in r))
assert r[2] < 0.8, "the older answer did not go first"
EOF2
	echo "$output"
}

@test "issue 19: lru_crawler metadump streams: a 25 MB listing to a client that does not read holds goblind's memory flat; listings race writes and closes (3 s)" {
	run -0 "$PY" - "$PORT" "$GPID" <<'EOF2'
import socket, sys, threading, time, random
port, pid = int(sys.argv[1]), sys.argv[2]

def rss_kib():
    for l in open("/proc/%s/status" % pid):
        if l.startswith("VmRSS:"):
            return int(l.split()[1])

def conn():
    return socket.create_connection(("127.0.0.1", port))

def until(s, end):
    out = b""
    while not out.endswith(end):
        d = s.recv(1 << 16)
        if not d:
            raise EOFError(out[-200:])
        out += d
    return out

def threads():
    return len(__import__("os").listdir("/proc/%s/task" % pid))

# 100,000 keys of 198 bytes: a listing of about 25 MB
threads0 = threads()
s = conn()
pad = b"p" * 190
for base in range(0, 100000, 10000):
    s.sendall(b"".join(b"set %s%08d 0 0 1 noreply\r\nx\r\n" % (pad, i)
                       for i in range(base, base + 10000)))
s.sendall(b"mn\r\n")
until(s, b"MN\r\n")
time.sleep(0.5)
before = rss_kib()
d = conn()
d.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
d.sendall(b"lru_crawler metadump all\r\n")
time.sleep(1.5)                       # not reading: goblind must wait
stalled = rss_kib()
# the other connection is served meanwhile
s.sendall(b"mg %s00000007 v\r\n" % pad)
assert until(s, b"\r\n") .startswith(b"VA 1"), "stalled worker"
out = until(d, b"END\r\n")
n = out.count(b"\n")
print("lines", n, "bytes", len(out) // 1000000)
print("growth_kib", stalled - before)
d.close()

# races: listings (read whole, or closed early) while keys come and go
stop, bad = time.monotonic() + 3, []
def writer():
    w = conn()
    i = 0
    while time.monotonic() < stop:
        w.sendall(b"set r%d 0 0 1\r\nx\r\ndelete r%d\r\nmn\r\n" %
                  (i % 500, (i + 250) % 500))
        if not until(w, b"MN\r\n").startswith(b"STORED\r\n"):
            bad.append("set")
        i += 1
def lister(k):
    rnd = random.Random(k)
    while time.monotonic() < stop:
        c = conn()
        c.sendall(b"lru_crawler metadump all\r\n")
        if rnd.random() < 0.5:
            c.recv(rnd.randint(1, 200000))
            c.close()               # mid-listing: the walk is stopped
            continue
        out = until(c, b"END\r\n")
        lines = out.split(b"\n")[:-2]
        # no snapshot: a write in the bucket being walked may hide or
        # repeat a neighbour (goblind(8)), so a few, not none
        mine = [l.split(b" ")[0] for l in lines
                if l.startswith(b"key=" + pad)]
        if len(set(mine)) < 100000 - 10 or len(mine) > 100000 + 10:
            bad.append(len(mine))
        if any(not l.startswith(b"key=") or b" size=" not in l
               for l in lines):
            bad.append("format")
        c.close()
ts = [threading.Thread(target=writer)] + [
    threading.Thread(target=lister, args=(k,)) for k in range(3)]
for t in ts: t.start()
for t in ts: t.join()
print("bad", bad[:5])
# 8 listings at once at most (each a thread): the 9th is told BUSY, as
# memcached tells a second crawler request
held = []
for i in range(8):
    h = conn()
    h.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
    h.sendall(b"lru_crawler metadump all\r\n")
    h.recv(100)                     # its walk has started
    held.append(h)
n = conn()
n.sendall(b"lru_crawler metadump all\r\n")
print("ninth", until(n, b"\r\n").decode().strip())
for h in held:
    h.close()
for i in range(50):                 # the closes reach the workers
    time.sleep(0.1)
    n.sendall(b"lru_crawler metadump all\r\n")
    got = until(n, b"\r\n")          # BUSY, or the listing to its END
    if not got.startswith(b"BUSY"):
        break
print("after", got.count(b"key=" + pad), got.endswith(b"END\r\n"))
for i in range(50):                 # the walkers end with their listings
    if threads() == threads0:
        break
    time.sleep(0.1)
print("threads_left", threads() - threads0)
EOF2
	echo "$output"
	[ "${lines[0]}" = "lines 100001 bytes 25" ]
	# two 64 KiB pages and the output buffer, not the 25 MB listing
	(( $(sed -n 's/^growth_kib //p' <<<"$output") < 4096 ))
	[ "${lines[2]}" = "bad []" ]
	[ "${lines[3]}" = "ninth BUSY currently processing crawler request" ]
	[ "${lines[4]}" = "after 100000 True" ]
	[ "${lines[5]}" = "threads_left 0" ]
	# every listing connection is gone
	for i in $(seq 50); do
		[ "$(stat_of curr_connections)" = 1 ] && break
		sleep 0.1
	done
	[ "$(stat_of curr_connections)" = 1 ]
	run -0 "${G[@]}" ls "$(printf 'p%.0s' $(seq 190))0000000"
	[ "${#lines[@]}" = 10 ]
	# at rest, the listing is exact
	[ "$("${G[@]}" ls ppp | sort -u | wc -l)" = 100000 ]
	gd_stop
}
