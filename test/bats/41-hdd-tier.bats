#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# The store's HDD tier on the emulated HDD (bench/hddemu): placement across
# RAM, SSD and HDD as goblinctl shows it, bytes back whole through
# goblinctl and goblinfs, and cold objects read by bench/coldtail with
# their first byte from RAM while the HDD seeks.

bats_require_minimum_version 1.5.0

load goblinfs	# the FUSE helpers: need_fuse, wait_mounted, gfs_teardown

HDD="${HDDEMU:-$BATS_TEST_DIRNAME/../../build/bench/hddemu}"
CT="$BATS_TEST_DIRNAME/../../build/bench/coldtail"

setup() {
	need_fuse "$HDD" || return 1
	T="$(mktemp -d "${TMPDIR:-/tmp}/hdd-tier-bats.XXXXXX")"
	S="$T/store"
	M="$T/hdd"	# the emulated disk, mounted where the helpers look
	mkdir "$T/backing" "$M"
	GPID=
	"$HDD" -f "$T/backing" "$M" 2>"$T/hdd.log" &
	GPID=$!
	wait_mounted "$T/hdd.log"
}

teardown() {
	[ -n "${T:-}" ] || return 0
	gfs_teardown
	rm -rf "$T"
}

@test "an object goes to RAM, SSD and the emulated HDD; it reads back whole" {
	head -c 6000011 /dev/urandom >"$T/six"
	"$GCTL" --store "$S" --memory 8M --no-hugetlb --ssd-size 64M \
		--hdd-dir "$M" --hdd-size 64M --ssd-prefix 1M put six "$T/six"
	# the store remembers its HDD tier; heads come back at open
	run -0 "$GCTL" --store "$S" --preload-heads inspect six
	echo "$output"
	[ "$(awk '$1 == "RAM" { s += $3 } END { print s }' <<<"$output")" = 262144 ]
	[ "$(awk '$1 == "SSD" { s += $3 } END { print s }' <<<"$output")" = 1310720 ]
	[ "$(awk '$1 == "HDD" { s += $3 } END { print s }' <<<"$output")" = 6000011 ]
	[ -e "$T/backing/data" ]	# the HDD tier's file, through hddemu
	"$GCTL" --store "$S" get six | cmp - "$T/six"
	# and through a goblinfs mount of the same store
	mkdir "$T/fs"
	"$GFS" --store "$S" -f "$T/fs" 2>"$T/gfs.log" &
	local fpid=$!
	for i in $(seq 50); do mountpoint -q "$T/fs" && break; sleep 0.1; done
	cmp "$T/six" "$T/fs/six"
	run -0 python3 -c "import os; print(os.getxattr('$T/fs/six', 'user.goblin.tiers').decode())"
	fusermount3 -u "$T/fs"
	wait "$fpid"
	[ "$output" = "ram=262144 ssd=1310720 hdd=6000011 small=0" ]
}

@test "coldtail: cold ART objects start from RAM while the HDD seeks" {
	[ -x "$CT" ] || { echo "coldtail is not built: $CT" >&2; return 1; }
	"$CT" populate --store "$S" --memory 32M --no-hugetlb --ssd-size 256M \
		--hdd-dir "$M" --hdd-size 256M --ssd-prefix 512K --count 60
	sync
	echo 3 >/proc/sys/vm/drop_caches 2>/dev/null || true
	run -0 "$CT" read --store "$S" --count 60
	echo "$output"
	local res=${lines[-1]}
	[[ "$res" == *" errors=0" ]]
	# every head was preloaded: the first byte does not wait for a disk
	[[ "$output" == *"heads preloaded 60"* ]]
	ttfb=$(sed 's/.*ttfb_p50_us=\([0-9.]*\).*/\1/' <<<"$res")
	python3 -c "import sys; sys.exit(0 if $ttfb < 200 else 1)"
	# most of these objects have bytes past the prefix, on the HDD
	hdd=$(sed 's/.*hdd_objects=\([0-9]*\).*/\1/' <<<"$res")
	[ "$hdd" -ge 20 ]
}
