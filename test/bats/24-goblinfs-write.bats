#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# goblinfs: writes that are not a whole new file (issue 20).  Appends share
# the committed version's extents and write only the new bytes; writes in
# place, O_RDWR and truncates go through a copy (up to --rewrite-max); a
# new version is published whole at close, and survives kill -9.  Then the
# tools that write that way (git, rsync --inplace/--append, ccache, make),
# each compared with the same steps on the temp dir's own file system.

bats_require_minimum_version 1.5.0

load goblinfs
load goblind

W="$BATS_TEST_DIRNAME/goblinfs_write.py"
STORE_OPTS=(--memory 8M --no-hugetlb --ssd-size 512M)

setup() {
	gfs_setup goblinfs-write
}

teardown() {
	[ -n "${T:-}" ] || return 0
	gfs_teardown
	gd_teardown # goblind --mount's test; removes $T
}

@test "issue 20: appends, writes in place, O_RDWR reads, ftruncate and truncate give what ext4 gives" {
	mount_fs
	mkdir "$T/ref"
	python3 "$W" ops "$T/ref" >"$T/ref.out"
	python3 "$W" ops "$M" >"$T/mnt.out"
	diff -u "$T/ref.out" "$T/mnt.out"
	# and after a restart
	umount_fs
	mount_fs
	cmp "$T/ref/f" "$M/f"
	cmp "$T/ref/g" "$M/g"
	cmp "$T/ref/s" "$M/s"
}

@test "issue 20: truncate(2) by name right after a reader closed the file: stat gives the new size, as on ext4" {
	mount_fs
	mkdir "$T/ref"
	python3 "$W" truncstat "$T/ref" 1000
	# the reader's release reaches goblinfs after its close(), so the
	# truncate often finds the node held and gives the name a new node
	# (fresh-machine.sh saw stat keep the old size: 774 rounds of 2000)
	python3 "$W" truncstat "$M" 1000
	[ "$(stat -c %s "$M/ts")" = "$(stat -c %s "$T/ref/ts")" ]
	cmp "$T/ref/ts" "$M/ts"
}

@test "issue 20: echo >> appends; a reader of the old version keeps it whole, the next open sees the new one" {
	mount_fs
	head -c 3000000 /dev/urandom >"$T/base"
	cp "$T/base" "$M/log"
	echo first >>"$M/log"
	cat "$T/base" - <<<first >"$T/want"
	cmp "$T/want" "$M/log"
	python3 - "$M/log" "$T/want" <<'PY'
import os, sys
path, want = sys.argv[1], open(sys.argv[2], 'rb').read()
r = open(path, 'rb')                      # pins the version there now
head = r.read(4096)
fd = os.open(path, os.O_WRONLY | os.O_APPEND)
os.write(fd, b'second\n')
assert open(path, 'rb').read() == want, 'visible before close'
os.close(fd)
rest = r.read()
assert head + rest == want, 'the old reader saw %d bytes' % len(head + rest)
assert open(path, 'rb').read() == want + b'second\n', 'not published'
PY
}

@test "issue 20: an append of a few bytes to a 1 GiB file writes a few KiB, shares the rest, and costs what those bytes cost" {
	[ -x "$BATS_TEST_DIRNAME/../../build/goblind" ] || skip "no goblind"
	load goblind
	gd_setup goblind-append
	M="$T/mnt"
	mkdir "$M"
	gd_start s --mount "$M"
	for i in $(seq 100); do mountpoint -q "$M" && break; sleep 0.05; done
	# 1 GiB and 12345 bytes: the last block is a partial one
	head -c 12345 /dev/urandom >"$T/tail"
	{ head -c 1G /dev/zero; cat "$T/tail"; } >"$M/big"
	local w0 w1 shared0 shared1 used0 used1 t0 t1
	w0=$(stat_of ssd:bytes_written tiers)
	used0=$(stat_of ssd:used tiers)
	shared0=$(stat_of put_appends_shared tiers)
	t0=$(date +%s%N)
	echo appended >>"$M/big"
	t1=$(date +%s%N)
	w1=$(stat_of ssd:bytes_written tiers)
	used1=$(stat_of ssd:used tiers)
	shared1=$(stat_of put_appends_shared tiers)
	echo "append: $((w1 - w0)) bytes written, $(((t1 - t0) / 1000000)) ms," \
		"ssd used +$((used1 - used0))" >&3
	[ "$((shared1 - shared0))" -eq 1 ]
	# the last partial block again, and the new bytes: 16 KiB here
	[ "$((w1 - w0))" -le 65536 ]
	[ "$((used1 - used0))" -le 131072 ]
	# writing 1 GiB took seconds; the append, what 16 KiB take
	[ "$((t1 - t0))" -lt 1000000000 ]
	[ "$(stat -c %s "$M/big")" -eq $((1073741824 + 12345 + 9)) ]
	{ cat "$T/tail"; echo appended; } >"$T/want"
	tail -c $((12345 + 9)) "$M/big" | cmp - "$T/want"
	# and after a restart, with the old version gone
	gd_stop
	fusermount3 -u "$M" 2>/dev/null || true
	gd_start s --mount "$M"
	for i in $(seq 100); do mountpoint -q "$M" && break; sleep 0.05; done
	tail -c $((12345 + 9)) "$M/big" | cmp - "$T/want"
	[ "$(head -c 1G "$M/big" | tr -d '\0' | wc -c)" -eq 0 ]
}

# big_refused LOG: with --rewrite-max 1M, a pwrite into $M/big (2,000,000
# bytes; a copy in $T/big) fails with EFBIG, LOG names the option, and
# the file is as it was
big_refused() {
	head -c 2000000 /dev/urandom >"$T/big"
	cp "$T/big" "$M/big"
	run python3 -c "import os; fd = os.open('$M/big', os.O_WRONLY); os.pwrite(fd, b'x', 10)"
	[ "$status" -ne 0 ]
	[[ "$output" == *"File too large"* ]]
	grep -q "cannot write 'big' in place: 2000000 bytes is more than --rewrite-max (1048576 bytes)" "$1"
	cmp "$T/big" "$M/big"	# nothing changed
}

@test "issue 20: in-place writes above --rewrite-max fail with EFBIG and a log line naming the option; appends past it work" {
	mount_fs --rewrite-max 1M
	big_refused "$T/gfs.log"
	run truncate -s 1500000 "$M/big"
	[ "$status" -ne 0 ]
	[[ "$output" == *"File too large"* ]]
	cmp "$T/big" "$M/big"
	echo more >>"$M/big"	# an append copies nothing: no limit
	echo more >>"$T/big"
	cmp "$T/big" "$M/big"
	# a truncate copies what it keeps: 10 bytes are no more than 1M
	truncate -s 10 "$M/big"
	head -c 10 "$T/big" | cmp - "$M/big"
	# a small file is written in place
	echo abcdef >"$M/small"
	printf XY | dd of="$M/small" bs=1 seek=2 conv=notrunc status=none
	[ "$(cat "$M/small")" = abXYef ]
}

@test "issue 20: goblind --mount --rewrite-max: in-place writes above it fail with EFBIG and a log line naming the option; without --mount a usage error" {
	GD_PIDS=()
	run -129 "$GD" --store "$T/u" --rewrite-max 1M
	[[ "$output" == *"--rewrite-max is the mount's: it needs --mount"* ]]
	run -129 "$GD" --store "$T/u" --mount "$M" --rewrite-max 1Q
	[[ "$output" == *"invalid value '1Q' for --rewrite-max: not a size"* ]]
	gd_start s --mount "$M" --rewrite-max 1M
	wait_mounted "$LOG"
	big_refused "$LOG"
	head -c 1000000 /dev/urandom >"$T/mid"
	cp "$T/mid" "$M/mid"
	# below it (goblinfs's default would take both)
	printf x | dd of="$T/mid" bs=1 seek=10 conv=notrunc status=none
	printf x | dd of="$M/mid" bs=1 seek=10 conv=notrunc status=none
	cmp "$T/mid" "$M/mid"
	gd_stop
}

@test "issue 20: fsync returns with the bytes durable, visibility stays at close; closed appends and rewrites survive kill -9" {
	mount_fs
	printf 'v1\n' >"$M/f"
	head -c 500000 /dev/urandom >"$T/base"
	cp "$T/base" "$M/app"
	cp "$T/base" "$M/rw"
	# an append and a rewrite, closed; an append fsynced, never closed
	printf 'more\n' >>"$M/app"
	printf 'XYZ' | dd of="$M/rw" bs=1 seek=1000 conv=notrunc status=none
	python3 -c 'import os, sys, time
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND)
os.write(fd, b"v2\n")
os.fsync(fd)
assert open(sys.argv[1], "rb").read() == b"v1\n", "visible before close"
open(sys.argv[2], "w").close()
time.sleep(30)' "$M/f" "$T/synced" &
	local py=$!
	for i in $(seq 100); do
		[ -e "$T/synced" ] && break
		sleep 0.1
	done
	[ -e "$T/synced" ]
	kill -9 "$GPID"
	wait "$GPID" || true
	GPID=
	kill "$py" 2>/dev/null || true
	wait "$py" || true
	# auto_unmount; under load fusermount3 may find the mount busy
	wait_unmounted 2>/dev/null || unmount_quietly
	wait_unmounted
	mount_fs
	[ "$(cat "$M/f")" = v1 ]	# never closed: the version before
	{ cat "$T/base"; printf 'more\n'; } | cmp - "$M/app"
	cp "$T/base" "$T/rw"
	printf 'XYZ' | dd of="$T/rw" bs=1 seek=1000 conv=notrunc status=none
	cmp "$T/rw" "$M/rw"
}

@test "issue 20: readers see a whole old or a whole new version while appenders and in-place writers run" {
	mount_fs
	run -0 python3 "$W" stress "$M" 3
	echo "$output" >&3
}

# git with fixed dates: the same commits on both sides
git_steps() { # DIR: clone the test's repo into DIR/clone, then work there
	(
		set -e
		export GIT_AUTHOR_DATE=2026-12-01T12:00:00Z
		export GIT_COMMITTER_DATE=2026-12-01T12:00:00Z
		cd "$1"
		git clone -q "$T/repo" clone
		cd clone
		git config user.email t@example.com
		git config user.name t
		git checkout -q HEAD~5
		git checkout -q -
		echo change >>a.txt
		git commit -qam change
		git gc -q
		git fsck --strict --no-progress 2>&1
		git status --porcelain
		git log --format='%H %s'
		git rev-parse 'HEAD^{tree}'
	)
}

@test "issue 20: git clone, checkout HEAD~5, commit, gc and fsck on the mount as on ext4" {
	command -v git >/dev/null || skip "no git"
	mount_fs
	git init -q "$T/repo"
	(
		cd "$T/repo"
		git config user.email t@example.com
		git config user.name t
		for i in $(seq 8); do
			echo "line $i" >>a.txt
			mkdir -p "d$i"
			seq "$i" 2000 >"d$i/n.txt"
			git add -A
			GIT_AUTHOR_DATE=2026-12-01T0$i:00:00Z \
				GIT_COMMITTER_DATE=2026-12-01T0$i:00:00Z \
				git commit -qm "c$i"
		done
	)
	mkdir "$T/ext"
	git_steps "$T/ext" >"$T/ext.out"
	git_steps "$M" >"$T/mnt.out"
	diff -u "$T/ext.out" "$T/mnt.out"
	diff -r --exclude=.git "$T/ext/clone" "$M/clone"
}

@test "issue 20: rsync -a, then --inplace, then --append into the mount, each followed by diff -r, as into ext4" {
	command -v rsync >/dev/null || skip "no rsync (apt-get install rsync)"
	mount_fs
	local src="$T/src" d
	mkdir -p "$src/sub"
	for i in 1 2 3; do head -c $((i * 300000)) /dev/urandom >"$src/f$i"; done
	echo small >"$src/sub/s"
	mkdir "$T/ext"
	for d in "$T/ext/dst" "$M/dst"; do
		rsync -a "$src/" "$d/"
		diff -r "$src" "$d"
	done
	# changed in place; an explicit mtime, so that the quick check sees
	# the change whether or not the destination kept its times
	printf XXXX | dd of="$src/f2" bs=1 seek=5000 conv=notrunc status=none
	echo more >>"$src/sub/s"
	touch -d 2021-01-01 "$src/f2" "$src/sub/s"
	for d in "$T/ext/dst" "$M/dst"; do
		rsync -a --inplace "$src/" "$d/"
		diff -r "$src" "$d"
	done
	head -c 70000 /dev/urandom >>"$src/f3"
	touch -d 2021-01-02 "$src/f3"
	for d in "$T/ext/dst" "$M/dst"; do
		rsync -a --append "$src/" "$d/"
		diff -r "$src" "$d"
	done
	diff -r "$T/ext/dst" "$M/dst"
}

mkproj() { # DIR: a small C project
	mkdir -p "$1"
	cat >"$1/Makefile" <<'MK'
CFLAGS = -O1 -Wall
OBJ = main.o util.o more.o
prog: $(OBJ)
	$(CC) -o $@ $(OBJ)
%.o: %.c util.h
	$(CC) $(CFLAGS) -c -o $@ $<
clean:
	rm -f prog $(OBJ)
MK
	printf '#include <stdio.h>\n#include "util.h"\nint main(void) { printf("%%d\\n", twice(more(20))); return 0; }\n' >"$1/main.c"
	printf 'int twice(int x);\nint more(int x);\n' >"$1/util.h"
	printf '#include "util.h"\nint twice(int x) { return 2 * x; }\n' >"$1/util.c"
	printf '#include "util.h"\nint more(int x) { return x + 1; }\n' >"$1/more.c"
}

@test "issue 20: make of a small C project inside the mount builds what it builds on ext4, and rebuilds only what changed" {
	command -v cc >/dev/null || skip "no C compiler"
	mount_fs
	local d
	for d in "$T/ext" "$M"; do
		mkproj "$d/proj"
		make -s -C "$d/proj"
		[ "$(/lib64/ld-linux-x86-64.so.2 "$d/proj/prog")" = 42 ]
	done
	cmp "$T/ext/proj/util.o" "$M/proj/util.o"
	sleep 1	# make compares mtimes in seconds
	echo 'int unused(void) { return 0; }' >>"$M/proj/more.c"
	run -0 make -C "$M/proj"
	[[ "$output" == *"more.c"* ]]
	[[ "$output" != *"util.c"* ]]
	[ "$(/lib64/ld-linux-x86-64.so.2 "$M/proj/prog")" = 42 ]
}

ccache_builds() { # DIR: two builds of the project with the cache in DIR
	export CCACHE_DIR="$1/cache" CCACHE_NOHASHDIR=1 CCACHE_BASEDIR="$1"
	mkproj "$1/proj"
	make -s -C "$1/proj" CC="ccache cc"
	make -s -C "$1/proj" clean
	ccache -z >/dev/null
	make -s -C "$1/proj" CC="ccache cc"
	ccache --print-stats | awk '$1 == "direct_cache_hit" ||
		$1 == "preprocessed_cache_hit" || $1 == "cache_miss"' | sort
}

@test "issue 20: a second ccache build with its cache on the mount hits 100%, as on ext4" {
	command -v ccache >/dev/null || skip "no ccache (apt-get install ccache)"
	mount_fs
	mkdir "$T/ext"
	ccache_builds "$T/ext" >"$T/ext.out"
	ccache_builds "$M" >"$T/mnt.out"
	diff -u "$T/ext.out" "$T/mnt.out"
	grep -qx "cache_miss	0" "$T/mnt.out"
	grep -qx "direct_cache_hit	3" "$T/mnt.out"
}

@test "issue 20: git clone of a repo with a symlink keeps core.symlinks true and checks the link out as a link" {
	command -v git >/dev/null || skip "no git"
	mount_fs
	git init -q "$T/repo"
	(
		cd "$T/repo"
		echo lib >libx.so.1
		ln -s libx.so.1 libx.so
		git add -A
		git -c user.email=t@example.com -c user.name=t commit -qm links
	)
	git clone -q "$T/repo" "$M/clone"
	[ "$(git -C "$M/clone" config --get core.symlinks || echo unset)" != false ]
	[ -L "$M/clone/libx.so" ]
	[ "$(readlink "$M/clone/libx.so")" = libx.so.1 ]
	[ -z "$(git -C "$M/clone" status --porcelain)" ]
	git -C "$M/clone" fsck --strict --no-progress
}
