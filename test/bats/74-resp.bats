#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# goblind speaks RESP (issue 23): Redis clients unchanged over TCP and a
# Unix socket.  Replies compared with Debian's redis-server 7 reply by
# reply (resp_conformance.py, the table of
# bench/results/resp-conformance.md), redis-cli and redis-py for every
# command, large values streamed both ways with bounded memory and head
# first, the keyspace memcache and HTTP share, readers against writers,
# hostile input, redis-benchmark, twemproxy in front of three goblinds.

bats_require_minimum_version 1.5.0

load goblind

CONF="$BATS_TEST_DIRNAME/resp_conformance.py"
CHECK="$BATS_TEST_DIRNAME/resp_check.py"
TABLE="$BATS_TEST_DIRNAME/../../bench/results/resp-conformance.md"

setup() {
	command -v redis-cli >/dev/null || skip "redis-tools is not installed"
	gd_setup resp
}

teardown() {
	gd_teardown
}

# redis_start [OPTIONS]: Debian's redis-server on the socket $T/redis.sock
# only (--port 0: no TCP), one database as goblind has
redis_start() {
	command -v redis-server >/dev/null ||
		skip "redis-server is not installed"
	local i
	REDIS_SOCK="$T/redis.sock"
	redis-server --port 0 --unixsocket "$REDIS_SOCK" --save '' \
		--appendonly no --databases 1 --dir "$T" "$@" \
		>"$T/redis.log" 2>&1 &
	GD_PIDS+=($!)
	for i in $(seq 100); do
		[ -S "$REDIS_SOCK" ] && return 0
		sleep 0.05
	done
	cat "$T/redis.log" >&2
	return 1
}

# rc ARGS...: redis-cli on goblind's TCP port
rc() {
	redis-cli -p "$RPORT" "$@"
}

vm() {
	awk -v f="$1:" '$1 == f { print $2 }' "/proc/$GPID/status"
}

@test "issue 23: goblind answers every case as redis-server 7 does, but for the listed differences" {
	redis_start
	resp_start s
	run "$PY" "$CONF" "$RSOCK" "$REDIS_SOCK" --table "$T/table.md"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "${lines[-1]}" =~ ^[0-9]+\ cases,\ [0-9]+\ differences\ listed,\ 0\ mismatched$ ]]
	run -0 "$PY" "$CONF" --check-table "$TABLE"
	[ "$(grep -c '| same |' "$T/table.md")" -gt 80 ]
	# the same over TCP
	run -0 "$PY" "$CONF" "$RPORT" "$REDIS_SOCK"
}

@test "issue 23: --resp-password is requirepass: NOAUTH, AUTH, HELLO AUTH as redis-server 7" {
	redis_start --requirepass sekret
	resp_start s --resp-password sekret
	run "$PY" "$CONF" "$RSOCK" "$REDIS_SOCK" --set auth
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "${lines[-1]}" == *" 0 mismatched" ]]
	run -0 rc set k v
	[ "$output" = "NOAUTH Authentication required." ]
	run -0 rc -a sekret --no-auth-warning set k v
	[ "$output" = OK ]
	run -0 rc -a wrong --no-auth-warning get k
	[[ "$output" == *"WRONGPASS"* ]]
}

@test "issue 23: redis-cli: every command, errors included, over TCP and the Unix socket" {
	resp_start s
	[ "$(rc ping)" = PONG ]
	[ "$(redis-cli -s "$RSOCK" ping)" = PONG ]
	[ "$(rc set k hello)" = OK ]
	[ "$(rc get k)" = hello ]
	[ "$(rc set k v2 NX)" = "" ]
	[ "$(rc set k v3 XX GET)" = hello ]
	[ "$(rc set k v4 EX 100)" = OK ]
	# whole seconds: a second may turn between the SET and the TTL
	ttl=$(rc ttl k)
	[ "$ttl" -ge 99 ] && [ "$ttl" -le 100 ]
	[ "$(rc set k v5 KEEPTTL)" = OK ]
	[ "$(rc ttl k)" -ge 99 ]
	[ "$(rc persist k)" = 1 ]
	[ "$(rc ttl k)" = -1 ]
	[ "$(rc expire k 30)" = 1 ]
	[ "$(rc pttl k)" -le 30000 ]
	[ "$(rc pexpire k 20000)" = 1 ]
	[ "$(rc mset a 1 b 2)" = OK ]
	[ "$(rc mget a b c | tr '\n' ,)" = "1,2,," ]
	[ "$(rc exists a b c a)" = 3 ]
	[ "$(rc del a c)" = 1 ]
	[ "$(rc unlink b)" = 1 ]
	[ "$(rc type k)" = string ]
	[ "$(rc type nope)" = none ]
	[ "$(rc set s 'Hello World')" = OK ]
	[ "$(rc strlen s)" = 11 ]
	[ "$(rc getrange s 0 4)" = Hello ]
	[ "$(rc setrange s 6 Redis)" = 11 ]
	[ "$(rc get s)" = "Hello Redis" ]
	[ "$(rc dbsize)" = 2 ]
	[ "$(rc scan 0 match 's*' count 100 | tr '\n' ,)" = "0,s," ]
	[ "$(rc select 0)" = OK ]
	[ "$(rc echo hi)" = hi ]
	[ "$(rc client setname me)" = OK ]
	[ "$(rc client id)" -gt 0 ]
	rc client info | grep -q 'resp=2'
	[ "$(rc command count)" -gt 20 ]
	rc config get save | grep -qx save
	rc info | grep -q '^redis_version:'
	rc info keyspace | grep -q '^db0:keys=2,'
	rc info goblin | grep -q '^objects:'
	[ "$(rc hello 3 | head -1)" = "server redis" ]
	[ "$(rc reset)" = RESET ]
	[ "$(rc flushdb)" = OK ]
	[ "$(rc dbsize)" = 0 ]
	[ "$(rc flushall)" = OK ]
	# errors as Redis words them
	[ "$(rc bogus a b)" = "ERR unknown command 'bogus', with args beginning with: 'a' 'b' " ]
	[ "$(rc get)" = "ERR wrong number of arguments for 'get' command" ]
	[ "$(rc set k v EX 0)" = "ERR invalid expire time in 'set' command" ]
	[ "$(rc set k v NX XX)" = "ERR syntax error" ]
	[ "$(rc expire k x)" = "ERR value is not an integer or out of range" ]
	[ "$(rc select 1)" = "ERR DB index is out of range" ]
	[ "$(rc setrange k -1 x)" = "ERR offset is out of range" ]
	[ "$(rc scan x)" = "ERR invalid cursor" ]
	[ "$(rc client bogus)" = "ERR unknown subcommand 'bogus'. Try CLIENT HELP." ]
	[ "$(rc hello 4)" = "NOPROTO unsupported protocol version" ]
	[ "$(rc auth x)" = "ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?" ]
	# inline commands, as a telnet user types them
	run -0 bash -c "printf 'PING\r\nSET il \"a b\"\r\nGET il\r\nQUIT\r\n' | '$PY' '$MCCHECK' raw $RPORT"
	[ "$output" = $'+PONG\r\n+OK\r\n$3\r\na b\r\n+OK\r\n<closed>' ]
}

@test "issue 23: redis-py: every command, errors, RESP3 and a pipeline, over TCP and the Unix socket" {
	resp_start s
	run -0 "$PY" "$CHECK" client "$RPORT"
	[ "$output" = ok ]
	run -0 "$PY" "$CHECK" client "$RSOCK"
	[ "$output" = ok ]
}

@test "issue 23: a 1 GiB SET and GET through redis-cli and redis-py with bounded server memory" {
	resp_start s
	head -c 1073741824 /dev/zero | tr '\0' 'g' >"$T/big"
	run -0 redis-cli -p "$RPORT" -x set clibig <"$T/big"
	[ "$output" = OK ]
	[ "$(rc strlen clibig)" = 1073741824 ]
	redis-cli -p "$RPORT" --raw get clibig | head -c 1073741824 |
		cmp - "$T/big"
	rm -f "$T/big"
	rc del clibig
	run -0 "$PY" "$CHECK" big "$RSOCK" 1073741824
	echo "$output"
	hwm=$(vm VmHWM)
	echo "goblind peak RSS: $hwm kB"
	(( hwm < 200 * 1024 ))
}

@test "issue 23: a big SET streams with its options after the value; other big arguments are refused, the framing kept" {
	resp_start s
	"$PY" - "$RPORT" <<'PYEOF'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
f = s.makefile("rb")
v = b"z" * 3000000
def req(*a):
    out = b"*%d\r\n" % len(a)
    for x in a:
        out += b"$%d\r\n%s\r\n" % (len(x), x)
    return out
s.sendall(req(b"SET", b"bk", v, b"EX", b"100", b"NX") +
          req(b"TTL", b"bk") +
          req(b"SET", b"bk", v, b"NX") +
          req(b"SET", b"bk", b"w" * 100000, b"XX", b"GET"))
assert f.readline() == b"+OK\r\n"
# whole seconds (goblind(8)): a second may turn between the SET and the TTL
assert f.readline() in (b":99\r\n", b":100\r\n")
assert f.readline() == b"$-1\r\n"
assert f.readline() == b"$3000000\r\n" and f.read(3000002) == v + b"\r\n"
# a big argument that is no SET's value: an error, then the next request
s.sendall(req(b"ECHO", b"e" * 100000) + req(b"SET", b"x", b"y", b"BOGUS",
                                             b"q" * 20000) +
          req(b"GET", b"bk") + req(b"PING"))
l = f.readline()
assert l.startswith(b"-ERR goblind: an argument of 100000 bytes to 'ECHO'"), l
l = f.readline()
assert l.startswith(b"-ERR goblind: an argument of 20000 bytes"), l
assert f.readline() == b"$100000\r\n" and f.read(100002)[:3] == b"www"
assert f.readline() == b"+PONG\r\n"
# a big SET whose options are wrong: refused after the value, nothing kept
s.sendall(req(b"SET", b"bk2", v, b"EX", b"0") + req(b"EXISTS", b"bk2"))
assert f.readline() == b"-ERR invalid expire time in 'set' command\r\n"
assert f.readline() == b":0\r\n"
# a bulk over --max-item: Redis's protocol error, the connection closed
s.sendall(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$99999999999\r\n")
assert f.readline() == b"-ERR Protocol error: invalid bulk length\r\n"
assert f.read() == b""
print("ok")
PYEOF
}

@test "issue 23: a large GET sends the bulk header and the RAM head before the tail is read" {
	gd_start s
	"$PY" "$MCCHECK" bigset "$PORT" art 268435456
	gd_stop
	resp_start s	# cold: the tail is on the SSD tier only
	read -r tail_read ttfb < <("$PY" "$CHECK" headfirst "$RSOCK" art "$PORT")
	echo "ssd bytes read while the client held off: $tail_read; ttfb $ttfb"
	[ -n "$tail_read" ]
	(( tail_read < 64 * 1048576 ))
}

@test "issue 23: one keyspace: RESP, memcache and HTTP see the same objects, TTLs and flags mapped" {
	resp_start s
	[ "$(rc set shared fromresp)" = OK ]
	run -0 mc <<<$'get shared\r\nquit\r'
	[ "$output" = $'VALUE shared 0 8\r\nfromresp\r\nEND\r\n<closed>' ]
	[ "$(curl -sf "http://127.0.0.1:$HPORT/shared")" = fromresp ]
	run -0 mc <<<$'set frommc 42 100 6\r\nmcval!\r\nquit\r'
	[ "$(rc get frommc)" = 'mcval!' ]
	ttl=$(rc ttl frommc) # a second may turn since the set
	[ "$ttl" -ge 99 ] && [ "$ttl" -le 100 ]
	[ "$(rc set frommc again KEEPTTL)" = OK ]
	# a RESP SET makes a new version with flags 0, KEEPTTL keeps the time
	run -0 mc <<<$'mg frommc f t v\r\nquit\r'
	[[ "$output" == $'VA 5 f0 t'* ]]
	[ "$(rc expire frommc 50)" = 1 ]
	run -0 mc <<<$'mg frommc t\r\nquit\r'
	[[ "$output" =~ HD\ t(49|50) ]]
	curl -sf -X DELETE "http://127.0.0.1:$HPORT/shared" >/dev/null
	[ "$(rc exists shared)" = 0 ]
}

@test "issue 23: small collections are store objects: they persist, expire and are bounded" {
	resp_start s
	[ "$(rc hset h f1 v1 f2 v2)" = 2 ]
	[ "$(rc zadd z 2 b 1 a)" = 2 ]
	[ "$(rc expire z 100)" = 1 ]
	gd_stop
	resp_start s
	[ "$(rc hget h f2)" = v2 ]
	[ "$(rc zrange z 0 -1 withscores | tr '\n' ,)" = "a,1,b,2," ]
	[ "$(rc ttl z)" -ge 99 ]
	[ "$(rc type h)" = hash ]
	# memcache serves the hash's encoding as it is (goblind(8))
	run -0 mc <<<$'get h\r\nquit\r'
	[[ "$output" == $'VALUE h 0 24\r\n'* ]]
	# 4,096 fields at most: one more is refused, nothing changed
	"$PY" - "$RPORT" <<'PYEOF'
import sys, redis
r = redis.Redis(port=int(sys.argv[1]))
# (a request is at most 32 KiB: the fields go in 8 of them)
for j in range(8):
    assert r.hset("big", mapping={"f%d" % i: i for i in
                                  range(j * 512, j * 512 + 512)}) == 512
try:
    r.hset("big", "one-more", 1)
    raise SystemExit("no error")
except redis.ResponseError as e:
    assert "at most 4096 entries" in str(e), e
assert r.hlen("big") == 4096 and r.hget("big", "one-more") is None
for j in range(8):
    assert r.zadd("bigz", {"m%d" % i: i for i in
                           range(j * 512, j * 512 + 512)}) == 512
try:
    r.zadd("bigz", {"m-1": -1, "m-2": -2})
    raise SystemExit("no error")
except redis.ResponseError as e:
    assert "at most 4096 entries" in str(e), e
assert r.zcard("bigz") == 4096 and r.zscore("bigz", "m-1") is None
print("ok")
PYEOF
}

@test "issue 23: readers against writers of the same keys never see a torn value" {
	resp_start s
	run -0 "$PY" "$CHECK" race "$RPORT" 3
	echo "$output"
	[[ "$output" == *" torn 0" ]]
}

@test "issue 23: malformed RESP gets errors or a close, never a crash" {
	resp_start s
	run -0 "$PY" "$CHECK" malformed "$RSOCK"
	echo "$output"
	[[ "$output" == *"server alive" ]]
	kill -0 "$GPID"
	[ "$(rc ping)" = PONG ]
}

# redis-benchmark has no mget test (-t takes it and runs get and set):
# MSET runs as its test, MGET as a command of its own
@test "issue 23: redis-benchmark -t get,set,mget -P 16 runs clean over TCP and the Unix socket" {
	local where
	resp_start s
	for where in "-p $RPORT" "-s $RSOCK"; do
		# shellcheck disable=SC2086
		run -0 redis-benchmark $where -t get,set,mget,mset -P 16 \
			-n 4000 -c 4 -q
		echo "$output"
		[[ "$output" == *"SET: "*"requests per second"* ]]
		[[ "$output" == *"GET: "*"requests per second"* ]]
		[[ "$output" == *"MSET (10 keys): "*"requests per second"* ]]
		[[ "$output" != *rror* ]]
		# shellcheck disable=SC2086
		run -0 redis-benchmark $where -P 16 -n 4000 -c 4 -q \
			MGET key:__rand_int__ a b c
		echo "$output"
		[[ "$output" == *"MGET key:__rand_int__ a b c: "*"requests per second"* ]]
		[[ "$output" != *rror* ]]
	done
	# what its SET stored, read back
	[ "$(rc get key:__rand_int__)" = VXK ]
}

@test "issue 23: twemproxy (redis: true, ketama) over three goblinds, with redis-cli and redis-py" {
	command -v nutcracker >/dev/null || skip "no nutcracker"
	local ports=() mcports=() i
	for i in 1 2 3; do
		resp_start "s$i"
		ports+=("$RPORT")
		mcports+=("$PORT")
	done
	gd_nutcracker "redis: true" "${ports[@]}"
	[ "$(redis-cli -p "$PPORT" set viaproxy yes)" = OK ]
	[ "$(redis-cli -p "$PPORT" get viaproxy)" = yes ]
	[ "$(redis-cli -p "$PPORT" mget viaproxy nope | tr '\n' ,)" = "yes,," ]
	"$PY" - "$PPORT" <<'PYEOF'
import sys, redis
r = redis.Redis(host="127.0.0.1", port=int(sys.argv[1]))
for i in range(300):
    assert r.set("key:%d" % i, b"value-%d" % i + b"x" * (i * 997))
big = bytes(range(256)) * 8192          # 2 MiB through the proxy
assert r.set("big", big, ex=1000)
for i in range(300):
    assert r.get("key:%d" % i) == b"value-%d" % i + b"x" * (i * 997), i
assert r.get("big") == big and 999 <= r.ttl("big") <= 1000
assert r.mget(["key:1", "key:2", "nope"])[2] is None
assert r.delete("key:1", "key:2") == 2
print("ok")
PYEOF
	total=0
	for i in 0 1 2; do
		n=$(redis-cli -p "${ports[$i]}" dbsize)
		echo "instance on ${ports[$i]} holds $n keys"
		(( n >= 30 ))	# each gets a fair share, none all of them
		total=$((total + n))
	done
	[ "$total" = 300 ]	# 300 + big + viaproxy - 2 deleted
}

@test "issue 23: RESP options: off by default, goblin.conf keys, bad values named" {
	gd_start s
	! grep -q "resp on" "$LOG"
	gd_stop
	cat >"$T/goblin.conf" <<-EOF
	resp-port = 0
	resp-unixsocket = $T/conf.sock
	resp-unixsocket-mask = 0770
	resp-password = pw
	resp-max-conns = 5
	EOF
	gd_start c --config "$T/goblin.conf"
	for i in $(seq 50); do
		grep -q "resp on unix socket $T/conf.sock (mode 0770)" "$LOG" &&
			break
		sleep 0.1
	done
	grep -q "resp on unix socket $T/conf.sock (mode 0770)" "$LOG"
	[ "$(stat -c %a "$T/conf.sock")" = 770 ]
	[ "$(redis-cli -s "$T/conf.sock" -a pw --no-auth-warning config get maxclients | tail -1)" = 5 ]
	# the gauge counts RESP's connections apart from memcache's
	"$PY" - "$T/conf.sock" "$PORT" <<'PYEOF'
import socket, sys, time
conns = []
for _ in range(3):
    s = socket.socket(socket.AF_UNIX)
    s.connect(sys.argv[1])
    s.sendall(b"AUTH pw\r\n")
    assert s.recv(100) == b"+OK\r\n"
    conns.append(s)
m = socket.create_connection(("127.0.0.1", int(sys.argv[2])))
m.sendall(b"stats\r\nquit\r\n")
out = b""
while not out.endswith(b"END\r\n"):
    out += m.recv(65536)
assert b"STAT curr_resp_connections 3\r\n" in out, out
PYEOF
	run -129 "$GD" --store "$T/x" --resp-port 70000
	[[ "$output" == *"--resp-port"* ]]
	run -129 "$GD" --store "$T/x" --resp-unixsocket-mask 999
	[[ "$output" == *"--resp-unixsocket-mask"* ]]
	run -129 "$GD" --store "$T/x" --resp-max-conns 5000 --max-conns 10
	[[ "$output" == *"--resp-max-conns 5000 is over --max-conns 10"* ]]
}
