#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# goblinfs: the store mounted with FUSE, checked through ordinary tools:
# trees copied in and out, random-range reads, publish-by-rename, unlink
# while open, concurrency, errno of what it refuses, statfs, the tiers
# xattr, and kill -9 (auto_unmount) followed by a restart.

bats_require_minimum_version 1.5.0

load goblinfs

CHECK="$BATS_TEST_DIRNAME/goblinfs_check.py"
STORE_OPTS=(--memory 8M --no-hugetlb --ssd-size 256M)

setup() {
	gfs_setup goblinfs-bats
}

teardown() {
	[ -n "${T:-}" ] || return 0
	gfs_teardown
	rm -rf "$T"
}

# mktree DIR: files of many sizes, nested
mktree() {
	local n i=0
	mkdir -p "$1/a/b/c" "$1/empty" "$1/d"
	for n in 0 1 100 4095 4096 65535 65536 262143 262144 262145 \
		1048576 3000007; do
		head -c "$n" /dev/urandom >"$1/f$n"
		head -c "$n" /dev/urandom >"$1/a/b/c/g$n"
		i=$((i + 1))
	done
	for i in $(seq 40); do
		head -c $((i * 977)) /dev/urandom >"$1/d/small$i"
	done
}

# same_tree A B: the same names and the same bytes
same_tree() {
	diff <(cd "$1" && find . | sort) <(cd "$2" && find . | sort)
	(cd "$1" && find . -type f) | while read -r f; do
		cmp "$1/$f" "$2/$f" || return 1
	done
}

@test "copy a tree in, compare it out, remount and compare again" {
	mktree "$T/src"
	mount_fs
	cp -r "$T/src" "$M/src"
	same_tree "$T/src" "$M/src"
	# a name's size shows at once after close (the commit is at close)
	[ "$(stat -c %s "$M/src/f3000007")" = 3000007 ]
	umount_fs
	mount_fs
	same_tree "$T/src" "$M/src"
	run -0 ls "$M/src/empty"
	[ -z "$output" ]
	umount_fs
	# the same objects through goblinctl
	"$GCTL" --store "$S" --memory 8M --no-hugetlb get src/a/b/c/g262145 \
		>"$T/out"
	cmp "$T/src/a/b/c/g262145" "$T/out"
	run -0 "$GCTL" --store "$S" --memory 8M --no-hugetlb ls src/empty/
	[ "$output" = src/empty/ ]
}

@test "seeded random-range reads match the source (fsx-style)" {
	mkdir "$T/src"
	head -c 5000011 /dev/urandom >"$T/src/big"
	head -c 262145 /dev/urandom >"$T/src/head"
	head -c 9000 /dev/urandom >"$T/src/small"
	mount_fs
	cp "$T/src/big" "$T/src/head" "$T/src/small" "$M/"
	python3 "$CHECK" fsx 42 400 "$M" "$T/src/big" "$T/src/head" \
		"$T/src/small"
	umount_fs
	mount_fs	# cold: heads come from disk
	python3 "$CHECK" fsx 7 300 "$M" "$T/src/big" "$T/src/head" \
		"$T/src/small"
}

@test "publish-by-rename over a file that a reader holds open" {
	mount_fs
	python3 "$CHECK" rename-over "$M"
	umount_fs
	mount_fs
	[ "$(stat -c %s "$M/pub.bin")" = 300007 ]
	[ ! -e "$M/pub.bin.tmp" ]
}

@test "unlink while open: the reader keeps the old bytes" {
	mount_fs
	python3 "$CHECK" unlink-open "$M"
	run -0 ls "$M"
	[ -z "$output" ]
}

@test "concurrent readers and writers" {
	local i pids=()
	mkdir "$T/src"
	for i in 1 2 3 4 5 6; do
		head -c $((i * 700001)) /dev/urandom >"$T/src/w$i"
	done
	mount_fs
	cp "$T/src/w1" "$T/src/w2" "$M/"
	for i in 3 4 5 6; do
		cp "$T/src/w$i" "$M/w$i" &
		pids+=($!)
	done
	for i in 1 2 1 2; do
		cat "$M/w$i" >"$T/r$i.$RANDOM" &
		pids+=($!)
	done
	for i in "${pids[@]}"; do
		wait "$i"
	done
	for f in "$T"/r*; do
		i=$(basename "$f" | cut -c2)
		cmp "$T/src/w$i" "$f"
	done
	for i in 1 2 3 4 5 6; do
		cmp "$T/src/w$i" "$M/w$i"
	done
}

@test "errno of refused operations: ENOENT EISDIR ENOTEMPTY EPERM" {
	mount_fs
	python3 "$CHECK" errors "$M"
}

@test "a read-only mount answers EROFS" {
	mount_fs
	echo x >"$M/k"
	umount_fs
	mount_fs -o ro
	run -0 cat "$M/k"
	[ "$output" = x ]
	run python3 -c "open('$M/new', 'w')"
	[[ "$output" == *"Read-only file system"* ]]
	run rm "$M/k"
	[ "$status" -ne 0 ]
	[[ "$output" == *"Read-only file system"* ]]
}

@test "mkdir persists empty directories; emptied directories stay; rmdir" {
	mount_fs
	mkdir -p "$M/e1/e2" "$M/full"
	echo x >"$M/full/only"
	rm "$M/full/only"
	[ -d "$M/full" ]
	umount_fs
	mount_fs
	[ -d "$M/e1/e2" ]
	[ -d "$M/full" ]
	rmdir "$M/e1/e2" "$M/full"
	[ -d "$M/e1" ]
	mv "$M/e1" "$M/e3"	# an empty directory can be renamed
	umount_fs
	mount_fs
	run -0 ls "$M"
	[ "$output" = e3 ]
}

@test "statfs reports the store's capacity and use" {
	mount_fs
	run -0 stat -f -c '%S %b %a %l' "$M"
	read -r bs blocks avail namemax <<<"$output"
	[ "$bs" = 4096 ]
	[ "$blocks" = $((256 * 1024 * 1024 / 4096)) ]
	[ "$namemax" = 255 ]
	head -c 10485760 /dev/zero >"$M/ten"
	run -0 stat -f -c '%a' "$M"
	[ "$output" -le $((avail - 10485760 / 4096)) ]
	run -0 df -B1 "$M"
	[[ "$output" == *goblin:* ]]
}

@test "user.goblin.tiers shows where the bytes are" {
	mount_fs
	head -c 1000000 /dev/urandom >"$M/big"
	echo hello >"$M/small"
	run -0 python3 -c "import os; print(os.getxattr('$M/big', 'user.goblin.tiers').decode())"
	[ "$output" = "ram=262144 ssd=1000000 hdd=0 small=0" ]
	run -0 python3 -c "import os; print(os.getxattr('$M/small', 'user.goblin.tiers').decode())"
	[ "$output" = "ram=0 ssd=0 hdd=0 small=6" ]
	run -0 python3 -c "import os; print(os.listxattr('$M/big'))"
	[ "$output" = "['user.goblin.tiers']" ]
	run python3 -c "import os; os.getxattr('$M/big', 'user.other')"
	[[ "$output" == *"No data available"* ]]
}

@test "kill -9 of goblinfs leaves no hung mount; a restart shows the files" {
	local i
	mktree "$T/src"
	mount_fs
	cp -r "$T/src" "$M/src"
	same_tree "$T/src" "$M/src"
	# a file being written when the daemon dies never appears.  One
	# descriptor, never closed: every close(2) commits what was written
	# so far, also that of a child's inherited descriptor (a subshell's
	# "head" exiting)
	python3 -c 'import os, sys, time
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
os.write(fd, os.urandom(5000000))
open(sys.argv[2], "w").close()
time.sleep(5)' "$M/partial" "$T/written" 2>/dev/null &
	# killed once the writes are in and the mount is idle (a kill in the
	# middle of requests sometimes keeps fusermount3 from unmounting)
	for i in $(seq 100); do
		[ -e "$T/written" ] && break
		sleep 0.1
	done
	[ -e "$T/written" ]
	kill -9 "$GPID"
	wait "$GPID" || true
	GPID=
	# no hang: the mount fails at once, and auto_unmount removes it
	run timeout 5 ls "$M"
	[ "$status" -ne 124 ]
	wait_unmounted
	mount_fs
	same_tree "$T/src" "$M/src"
	[ ! -e "$M/partial" ]
}

@test "daemon mode: returns once mounted; startup errors exit 128, usage 129" {
	# also where its output is read to the end: the daemon and its
	# guard let go of it
	run -0 timeout 20 bash -c 'out=$("$@" 2>&1) && printf %s "$out"' _ \
		"$GFS" "${STORE_OPTS[@]}" --store "$S" "$M"
	[ -z "$output" ]
	wait_mounted
	run -0 pgrep -d, -f -- "--store $S $M"
	run -0 pgrep -x -P "$output" goblin-guard
	echo hi >"$M/k"
	# the store is locked by the running daemon
	mkdir "$T/m2"
	run -128 "$GFS" "${STORE_OPTS[@]}" --store "$S" "$T/m2"
	[[ "$output" == "goblinfs: cannot open store"* ]]
	fusermount3 -u "$M"
	run -129 "$GFS" "$M"
	[[ "$output" == *"no store given"* ]]
	run -129 "$GFS" --store "$S"
	[[ "$output" == *"no mountpoint given"* ]]
	run -129 "$GFS" --store "$S" --memory lots "$M"
	[[ "$output" == *"invalid size 'lots' for --memory"* ]]
	run -0 "$GFS" --help
	[[ "$output" == usage:* ]]
	# the daemon has let go of the store
	for i in $(seq 50); do
		"$GCTL" --store "$S" --memory 8M --no-hugetlb get k >"$T/out" \
			2>/dev/null && break
		sleep 0.1
	done
	[ "$(cat "$T/out")" = hi ]
}

@test "a file larger than the SSD tier fails with ENOSPC, stores nothing" {
	STORE_OPTS=(--memory 8M --no-hugetlb --ssd-size 4M)
	mount_fs
	run python3 - "$M/big" <<'PY'
import errno, os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
try:
    for _ in range(10):
        os.write(fd, b"x" * (1 << 20))
    os.close(fd)
except OSError as e:
    print(errno.errorcode[e.errno])
    sys.exit(0)
print("no error")
PY
	[ "$status" -eq 0 ]
	[ "$output" = ENOSPC ]
	# the abort runs at FUSE's release, which close() does not wait for
	for i in $(seq 50); do [ -e "$M/big" ] || break; sleep 0.1; done
	[ ! -e "$M/big" ]
	umount_fs
	# nothing of it in the store either
	run "$GCTL" --store "$S" stat big
	[ "$status" -eq 1 ]
}

@test "user.goblin.tiers adds up a file of more than 64 extents" {
	STORE_OPTS=(--memory 8M --no-hugetlb --ssd-size 48M)
	# put offline, sizes known: a copy into the mount takes a 1 MiB
	# extent until its commit at release, which close() does not wait
	# for, and under load a few pending ones overflow this small tier
	mkdir "$T/pieces"
	head -c 307200 /dev/urandom >"$T/piece"
	for i in $(seq 150); do cp "$T/piece" "$T/pieces/p$i"; done
	"$GCTL" "${STORE_OPTS[@]}" --store "$S" populate "$T/pieces" >/dev/null
	mount_fs
	for i in $(seq 1 2 150); do rm "$M/p$i"; done
	# the holes left are 5 units each: this file takes dozens of them
	head -c 23000000 /dev/urandom >"$M/frag"
	run -0 python3 -c "import os; print(os.getxattr('$M/frag', 'user.goblin.tiers').decode())"
	[[ "$output" == "ram="*" ssd=23000000 hdd=0 small=0" ]]
	umount_fs
	run -0 "$GCTL" --store "$S" inspect frag
	[ "$(echo "$output" | grep -c SSD)" -gt 64 ]
}

@test "files the store evicts leave the mount too" {
	STORE_OPTS=(--memory 8M --no-hugetlb --ssd-size 4M)
	mount_fs
	head -c 1048576 /dev/urandom >"$T/one"
	for i in 1 2 3 4 5 6 7 8; do cp "$T/one" "$M/f$i"; done
	# the drop thread works behind the evictions: give it a moment
	for i in $(seq 50); do
		[ -e "$M/f1" ] || break
		sleep 0.1
	done
	[ ! -e "$M/f1" ]
	run cat "$M/f1"
	[ "$status" -ne 0 ]
	cmp "$T/one" "$M/f8"
	listed=$(ls "$M" | sort | tr '\n' ' ')
	umount_fs
	stored=$("$GCTL" --store "$S" ls | sort | tr '\n' ' ')
	[ "$listed" = "$stored" ]
	[[ "$listed" != *"f1 "* ]]
}

@test "a remount reads the heads back: the first read comes from RAM" {
	mount_fs
	head -c 1000000 /dev/urandom >"$M/big"
	umount_fs
	mount_fs
	run -0 python3 -c "import os; print(os.getxattr('$M/big', 'user.goblin.tiers').decode())"
	[ "$output" = "ram=262144 ssd=1000000 hdd=0 small=0" ]
	umount_fs
	mount_fs --no-preload-heads
	run -0 python3 -c "import os; print(os.getxattr('$M/big', 'user.goblin.tiers').decode())"
	[ "$output" = "ram=0 ssd=1000000 hdd=0 small=0" ]
}

@test "files of --direct-read SIZE or more bypass the page cache" {
	mkdir "$T/src"
	head -c 3000017 /dev/urandom >"$T/src/big"
	head -c 700001 /dev/urandom >"$T/src/small"
	mount_fs --direct-read 1M
	cp "$T/src/big" "$T/src/small" "$M/"
	python3 "$CHECK" fsx 11 300 "$M" "$T/src/big" "$T/src/small"
	cmp "$T/src/big" "$M/big"
	# past the page cache, a shared mapping is refused (ENODEV) and a
	# private one still reads the bytes; under SIZE both map
	run -0 python3 - "$M" "$T/src" <<'PY'
import errno, mmap, os, sys
mnt, src = sys.argv[1], sys.argv[2]
def mapped(name, flags):
    with open(os.path.join(mnt, name), "rb") as f:
        try:
            m = mmap.mmap(f.fileno(), 0, flags=flags, prot=mmap.PROT_READ)
        except OSError as e:
            return errno.errorcode[e.errno]
        with open(os.path.join(src, name), "rb") as s:
            ok = m[:] == s.read()
        m.close()
        return "same" if ok else "differ"
for name in ("big", "small"):
    print(name, mapped(name, mmap.MAP_SHARED), mapped(name, mmap.MAP_PRIVATE))
PY
	[ "${lines[0]}" = "big ENODEV same" ]
	[ "${lines[1]}" = "small same same" ]
	umount_fs
	mount_fs --direct-read 0
	run -0 python3 -c "import mmap; f = open('$M/big', 'rb'); mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ); print('mapped')"
	[ "$output" = mapped ]
}

@test "readdir of a large directory: every name once, also while it changes" {
	mkdir -p "$T/src/big"
	(cd "$T/src/big" && for i in $(seq 3000); do : >"f$i"; done)
	"$GCTL" "${STORE_OPTS[@]}" --store "$S" populate "$T/src" >/dev/null
	mount_fs
	run -0 python3 - "$M/big" <<'PY'
import os, sys
d = sys.argv[1]
want = {"f%d" % i for i in range(1, 3001)}
names = os.listdir(d)
assert len(names) == len(set(names)) == 3000, len(names)
assert set(names) == want
# remove entries while a listing is under way: no name twice, and every
# name that was not removed shows up
seen, removed = [], set()
with os.scandir(d) as it:
    for n, e in enumerate(it):
        seen.append(e.name)
        if n == 1000:
            for i in range(1, 3001, 7):
                name = "f%d" % i
                if name not in seen:
                    os.unlink(os.path.join(d, name))
                    removed.add(name)
assert len(seen) == len(set(seen)), "a name came twice"
assert (want - removed) <= set(seen), sorted(want - removed - set(seen))[:5]
print(len(seen), len(removed))
PY
	echo "$output"
	[ "$(ls "$M/big" | wc -l)" -eq $((3000 - ${output#* })) ]
}
