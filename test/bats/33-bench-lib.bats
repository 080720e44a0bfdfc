#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# bench/lib.sh's machine-level helpers, each in a network namespace of its
# own so that the machine's routes are never touched.

bats_require_minimum_version 1.5.0

LIB="$BATS_TEST_DIRNAME/../../bench/lib.sh"
PY=${PYTHON:-/usr/bin/python3}

# both ends' congestion control of a fresh loopback connection
cc_pair() {
	"$PY" -c '
import socket
l = socket.socket(); l.bind(("127.0.0.1", 0)); l.listen()
c = socket.create_connection(l.getsockname()); a, _ = l.accept()
cc = lambda s: s.getsockopt(socket.IPPROTO_TCP, 13, 16).rstrip(b"\0").decode()
print(cc(a), cc(c))'
}

@test "loopback_cc: both ends of every loopback connection on NAME, the routes back as they were after; a name the kernel lacks is refused" {
	command -v unshare >/dev/null || skip "no unshare"
	local want
	want=reno
	[ "$(cat /proc/sys/net/ipv4/tcp_congestion_control)" != reno ] ||
		want=cubic
	grep -qw "$want" /proc/sys/net/ipv4/tcp_available_congestion_control ||
		skip "this kernel has no $want"
	export LIB PY want
	export -f cc_pair
	run -0 unshare --net bash -c '
set -e
ip link set lo up
. "$LIB"
before=$(ip route show table local)
echo "default: $(cc_pair)"
loopback_cc "$want"
echo "during: $(cc_pair)"
echo "machine: $(machine_info /tmp /tmp 2>/dev/null | grep "^tcp:")"
loopback_cc_restore
echo "after: $(cc_pair)"
[ "$(ip route show table local)" = "$before" ] && echo "routes: as before"
loopback_cc no-such-cc 2>&1 && echo "no-such-cc: accepted" || echo "no-such-cc: refused"
[ "$(ip route show table local)" = "$before" ] && echo "routes: still as before"'
	echo "$output"
	sys=$(cat /proc/sys/net/ipv4/tcp_congestion_control)
	[ "${lines[0]}" = "default: $sys $sys" ]
	[ "${lines[1]}" = "during: $want $want" ]
	[[ "${lines[2]}" == *"loopback connections of this run: congctl $want"* ]]
	[ "${lines[3]}" = "after: $sys $sys" ]
	[ "${lines[4]}" = "routes: as before" ]
	[[ "$output" == *"no TCP congestion control 'no-such-cc' in this kernel"* ]]
	[[ "$output" == *"no-such-cc: refused"* ]]
	[[ "$output" == *"routes: still as before"* ]]
}
