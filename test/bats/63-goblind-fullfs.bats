#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# goblind on a small file system of its own (a loop-mounted ext4 image,
# store, SSD tier and journal all on it): the tier evicts before the file
# system fills, room freed on a full one is reused at once, and a set that
# cannot fit says "out of space", not "out of memory".  Needs root for the
# mount: skipped, with the reason, where mounting is not permitted.

load goblind

setup() {
	gd_setup fullfs
	IMG="$T/img" MNT="$T/mnt"
	mkdir -p "$MNT"
	truncate -s 256M "$IMG"
	mkfs.ext4 -q -F "$IMG" >/dev/null 2>&1 ||
		skip "mkfs.ext4 is not available"
	mount -o loop "$IMG" "$MNT" 2>/dev/null ||
		skip "cannot loop-mount a file system here (needs root)"
	MOUNTED=1
}

teardown() {
	local p
	for p in "${GD_PIDS[@]}"; do
		kill "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	GD_PIDS=()
	[ -n "${MOUNTED:-}" ] && umount "$MNT"
	gd_teardown
}

# gd_here NAME: goblind with its store on the small file system
gd_here() {
	local T_SAVE="$T"
	T="$MNT" gd_start "$1" --ssd-size 215M
	T="$T_SAVE"
}

bigset() {	# KEY SIZE: "ok" or the server's reply
	"$PY" "$MCCHECK" bigset "$PORT" "$1" "$2" 2>&1 && echo ok || true
}

@test "issue 16: the SSD tier evicts before its file system fills, the journal on it too" {
	local i r
	gd_here s
	for i in $(seq 60); do	# 300 MB into a 256 MB file system
		r=$(bigset "k$i" 5000000)
		[ "$r" = ok ] || { echo "set $i: $r"; cat "$LOG"; false; }
	done
	[ "$(stat_of evictions)" -gt 0 ]
	# the newest are all there, byte for byte
	for i in $(seq 55 60); do
		"$PY" "$MCCHECK" bigget "$PORT" "k$i" 5000000 >/dev/null
	done
	# the file system was never filled: its floor is left free
	[ "$(df --output=avail -B1 "$MNT" | tail -1)" -gt $((4 << 20)) ]
	! grep -q "No space left" "$LOG"
}

@test "issue 16: on a file system others filled, a set says out of space and room freed by deletes is reused at once" {
	local i r
	gd_here s
	for i in $(seq 20); do
		r=$(bigset "k$i" 5000000)
		[ "$r" = ok ] || { echo "set $i: $r"; false; }
	done
	# someone else fills the file system to the last block
	dd if=/dev/zero of="$MNT/filler" bs=1M 2>/dev/null || true
	sync
	# more than the tier holds now, with nothing left on the fs
	r=$(bigset big 150000000)
	echo "big: $r"
	[[ "$r" == *"SERVER_ERROR out of space storing object"* ]]
	code=$(head -c 150000000 /dev/zero | curl -s -o /dev/null \
		-w '%{http_code}' -X PUT --data-binary @- \
		"http://127.0.0.1:$HPORT/bigh")
	[ "$code" = 507 ]
	# deletes free room in the data file: the next set takes it
	for i in $(seq 1 10); do
		r=$(printf "delete k%d\r\n" "$i" | mc)
		[[ "$r" == DELETED* ]] || { echo "delete $i: $r"; cat "$LOG"; false; }
	done
	r=$(bigset fresh 5000000)
	[ "$r" = ok ] || { echo "first set after the deletes: $r"; false; }
	"$PY" "$MCCHECK" bigget "$PORT" fresh 5000000 >/dev/null
	for i in $(seq 11 20); do
		"$PY" "$MCCHECK" bigget "$PORT" "k$i" 5000000 >/dev/null
	done
}
