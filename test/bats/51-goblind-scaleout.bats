#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# Scale-out the way users do it: twemproxy (nutcracker) with ketama
# hashing in front of three goblind instances.

bats_require_minimum_version 1.5.0

load goblind

setup() {
	command -v nutcracker >/dev/null || skip "no nutcracker"
	gd_setup goblind-scaleout
}

teardown() {
	gd_teardown
}

@test "nutcracker with ketama spreads keys over three goblinds, all readable through it" {
	local ports=() i
	for i in 1 2 3; do
		gd_start "s$i"
		ports+=("$PORT")
	done
	gd_nutcracker "${ports[@]}"
	"$PY" - "$PPORT" <<'PYEOF'
import sys
from pymemcache.client.base import Client
c = Client(("127.0.0.1", int(sys.argv[1])), default_noreply=False)
for i in range(300):
    assert c.set("key:%d" % i, b"value-%d" % i + b"x" * (i * 997))
big = bytes(range(256)) * 8192          # 2 MiB through the proxy
assert c.set("big", big)
for i in range(300):
    assert c.get("key:%d" % i) == b"value-%d" % i + b"x" * (i * 997), i
assert c.get("big") == big
print("ok")
PYEOF
	total=0
	for p in "${ports[@]}"; do
		n=$(stat_of curr_items "" "$p")
		echo "instance on $p holds $n items"
		(( n >= 30 ))	# each gets a fair share, none all of them
		total=$((total + n))
	done
	[ "$total" = 301 ]
}
