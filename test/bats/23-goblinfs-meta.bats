#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# goblinfs metadata (issue 20): modes, owners and times kept per node and
# enforced by the kernel (default_permissions, -o allow_other), symlinks,
# FIFOs, sockets and device nodes as objects of their own kind, hard links
# refused, st_nlink 0 of an open file that lost its name; and the tools
# that need them (tar, cp -a, python3 -m venv), each compared with the
# same steps on the host's file system (ext4 here) in $T/ext4.

bats_require_minimum_version 1.5.0

load goblinfs
load goblind

STORE_OPTS=(--memory 8M --no-hugetlb --ssd-size 256M)
# any python3 (the standard library only: venv, os, socket)
PY3=python3

setup() {
	gfs_setup goblinfs-meta
	E="$T/ext4"
	mkdir "$E"
}

teardown() {
	[ -n "${T:-}" ] || return 0
	gfs_teardown
	gd_teardown # goblind --mount's test; removes $T
}

# remount [OPTIONS]: unmount (goblinfs exits 0), mount the store again
remount() {
	umount_fs
	mount_fs "$@"
}

# as_nobody CMD...: run CMD as uid/gid 65534 with no other groups
as_nobody() {
	setpriv --reuid=65534 --regid=65534 --clear-groups -- "$@"
}

# listing DIR: every name under DIR with type, mode, owner, size (not a
# directory's: ext4 says 4096, goblinfs its entries), mtime (ns) and
# symlink target; sorted
listing() {
	(cd "$1" && find . -mindepth 1 -printf '%p %y %m %U %G %s %T@ %l\n' |
		awk '$2 == "d" { $6 = "-" } 1' | sort)
}

@test "issue 20: st_nlink of a file unlinked or renamed over while open is 0, as on ext4" {
	mount_fs
	local d
	for d in "$E" "$M"; do
		echo one >"$d/a"
		echo two >"$d/b"
		echo three >"$d/c"
		run "$PY3" - "$d" <<'EOF'
import os, sys
d = sys.argv[1]
fa = os.open(os.path.join(d, "a"), os.O_RDONLY)
fb = os.open(os.path.join(d, "b"), os.O_RDONLY)
fc = os.open(os.path.join(d, "c"), os.O_RDONLY)
before = os.fstat(fa).st_nlink
os.unlink(os.path.join(d, "a"))
os.rename(os.path.join(d, "c"), os.path.join(d, "b"))  # over b
print(before, os.fstat(fa).st_nlink, os.fstat(fb).st_nlink,
      os.fstat(fc).st_nlink, os.read(fa, 9), os.read(fb, 9))
EOF
		[ "$status" -eq 0 ]
		echo "$d: $output"
		[ "$output" = "1 0 0 1 b'one\\n' b'two\\n'" ]
	done
}

@test "issue 20: a directory's mtime and ctime move when a file, directory, symlink or FIFO is made or removed in it, as on ext4 (pjdfstest open/00.t)" {
	mount_fs
	local d op before after
	for d in "$E" "$M"; do
		mkdir "$d/p"
		for op in "touch f" "mkdir s" "ln -s f l" "mkfifo q" "rm f" \
			"rmdir s" "mv l l2"; do
			touch -d '2000-01-01' "$d/p"
			before=$(stat -c '%Y %Z' "$d/p")
			sleep 1.1 # the kernel's cached attributes expire
			(cd "$d/p" && $op)
			after=$(stat -c '%Y %Z' "$d/p")
			echo "$d: $op: $before -> $after"
			[ "${after% *}" -gt 946684800 ] # mtime: not 2000 any more
			[ "${after#* }" -gt "${before#* }" ] # ctime moved on
		done
	done
}

@test "issue 20: chmod (execute, setgid, sticky), chown and utimensat with nanoseconds: stat as on ext4, and after a remount" {
	mount_fs
	local d fmt='%n %A %u %g %x %y'
	for d in "$E" "$M"; do
		mkdir "$d/dir"
		echo x >"$d/f"
		printf '#!/bin/sh\necho ran\n' >"$d/run.sh"
		chmod 0755 "$d/run.sh"
		chmod 2750 "$d/dir"
		chmod 1777 "$d/f"
		chmod 4711 "$d/f"
		chown 1234:5678 "$d/f"
		touch -a -d '2001-02-03 04:05:06.123456789' "$d/f"
		touch -m -d '2002-03-04 05:06:07.987654321' "$d/f"
		touch -d '1999-12-31 23:59:59.000000001' "$d/dir"
		# a chown takes set-user-ID and set-group-ID away
		echo s >"$d/suid"
		chmod 6755 "$d/suid"
		chown 4321 "$d/suid"
	done
	[ "$("$M/run.sh")" = ran ] # the execute bit works
	(cd "$E" && stat -c "$fmt" f dir && stat -c '%n %A %u' suid) >"$T/e"
	(cd "$M" && stat -c "$fmt" f dir && stat -c '%n %A %u' suid) >"$T/m"
	cat "$T/e" "$T/m"
	diff "$T/e" "$T/m"
	[ "$(stat -c %A "$M/run.sh")" = -rwxr-xr-x ]
	# chmod changes ctime, not mtime
	local c0 c1
	c0=$(stat -c %Z.%z "$M/run.sh")
	sleep 1.1
	chmod 0700 "$M/run.sh"
	c1=$(stat -c %Z.%z "$M/run.sh")
	[ "$c0" != "$c1" ]
	remount
	(cd "$M" && stat -c "$fmt" f dir && stat -c '%n %A %u' suid) >"$T/m2"
	diff "$T/e" "$T/m2"
	[ "$(stat -c '%A %Z.%z' "$M/run.sh")" = "-rwx------ $c1" ]
}

@test "issue 20: default_permissions with -o allow_other: another user is refused what the modes refuse, and only root gives a file away" {
	chmod 0755 "$T" # mktemp made it 0700: nobody could not reach $M
	mount_fs -o allow_other
	mkdir "$M/pub" "$M/priv"
	chmod 0777 "$M/pub"
	chmod 0700 "$M/priv"
	echo secret >"$M/priv/s"
	echo open >"$M/pub/o"
	chmod 0644 "$M/pub/o"
	echo mine >"$M/pub/r"
	chmod 0600 "$M/pub/r"
	[ "$(as_nobody cat "$M/pub/o")" = open ]
	run as_nobody cat "$M/pub/r"
	[ "$status" -ne 0 ]
	[[ "$output" == *"Permission denied"* ]]
	run as_nobody ls "$M/priv"
	[[ "$output" == *"Permission denied"* ]]
	run as_nobody sh -c "echo x >'$M/priv/new'"
	[[ "$output" == *"Permission denied"* ]]
	# nobody's own file in the world-writable directory: its owner
	as_nobody sh -c "echo n >'$M/pub/n'"
	[ "$(stat -c '%u %g' "$M/pub/n")" = "65534 65534" ]
	as_nobody chmod 0640 "$M/pub/n"
	[ "$(stat -c %a "$M/pub/n")" = 640 ]
	# only root changes the owner (POSIX chown)
	run as_nobody chown 0 "$M/pub/n"
	[[ "$output" == *"Operation not permitted"* ]]
	run as_nobody chmod 0777 "$M/pub/o" # not its owner
	[[ "$output" == *"Operation not permitted"* ]]
	chown 1000:1000 "$M/pub/n"
	[ "$(stat -c '%u %g' "$M/pub/n")" = "1000 1000" ]
	# sticky directory: another user's file cannot be removed
	chmod 1777 "$M/pub"
	run as_nobody rm -f "$M/pub/o"
	[[ "$output" == *"Operation not permitted"* ]]
	[ -e "$M/pub/o" ]
	# a setgid directory gives its group to what is made in it
	mkdir "$M/g"
	chown 0:4242 "$M/g"
	chmod 2775 "$M/g"
	mkdir "$M/g/sub"
	echo z >"$M/g/z"
	[ "$(stat -c '%g %A' "$M/g/sub")" = "4242 drwxr-sr-x" ]
	[ "$(stat -c %g "$M/g/z")" = 4242 ]
}

@test "issue 20: symlinks: ln -s, readlink, lstat as on ext4, a dangling one, kept across a remount, listed by goblinctl ls -l; hard links EPERM" {
	mount_fs
	local d
	for d in "$E" "$M"; do
		mkdir "$d/lib"
		echo elf >"$d/lib/libx.so.1"
		ln -s libx.so.1 "$d/lib/libx.so"
		ln -s ../nowhere "$d/dangling"
		ln -s lib "$d/libdir"
	done
	[ "$(cat "$M/lib/libx.so")" = elf ]
	[ "$(readlink "$M/lib/libx.so")" = libx.so.1 ]
	[ "$(cat "$M/libdir/libx.so")" = elf ]
	run cat "$M/dangling"
	[[ "$output" == *"No such file"* ]]
	(cd "$E" && stat -c '%n %F %s %N %a' lib/libx.so dangling libdir) >"$T/e"
	(cd "$M" && stat -c '%n %F %s %N %a' lib/libx.so dangling libdir) >"$T/m"
	diff "$T/e" "$T/m"
	run ln -s other "$M/dangling"
	[[ "$output" == *"File exists"* ]]
	# hard links: refused (goblinfs(1) says why), nothing changed
	run ln "$M/lib/libx.so.1" "$M/hard"
	[[ "$output" == *"Operation not permitted"* ]]
	[ ! -e "$M/hard" ]
	[ "$(stat -c %h "$M/lib/libx.so.1")" = 1 ]
	# rm and mv act on the link, not on its target
	mv "$M/libdir" "$M/libdir2"
	[ "$(readlink "$M/libdir2")" = lib ]
	rm "$M/libdir2"
	[ -d "$M/lib" ]
	remount
	(cd "$M" && stat -c '%n %F %s %N %a' lib/libx.so dangling) >"$T/m2"
	head -2 "$T/e" | diff - "$T/m2"
	umount_fs
	run "$GCTL" --store "$S" ls -l
	echo "$output"
	[[ "$output" == *" lib/libx.so  [symlink -> libx.so.1]"* ]]
	[[ "$output" == *" dangling  [symlink -> ../nowhere]"* ]]
	[[ "$output" == *" lib/libx.so.1"* ]]
}

@test "issue 20: mkfifo and mknod: FIFOs pass bytes, sockets bind, device nodes keep their numbers, all kept across a remount" {
	mount_fs
	local d
	for d in "$E" "$M"; do
		mkfifo -m 0620 "$d/fifo"
		mknod "$d/null" c 1 3
		mknod "$d/blk" b 7 200
		"$PY3" -c 'import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$d/sock"
	done
	(cd "$E" && stat -c '%n %F %a %t:%T' fifo null blk sock) >"$T/e"
	(cd "$M" && stat -c '%n %F %a %t:%T' fifo null blk sock) >"$T/m"
	diff "$T/e" "$T/m"
	# the kernel's pipe, through the mount's FIFO
	local w
	(echo through >"$M/fifo") &
	w=$!
	[ "$(timeout 5 cat "$M/fifo")" = through ]
	wait "$w"
	remount
	(cd "$M" && stat -c '%n %F %a %t:%T' fifo null blk sock) >"$T/m2"
	diff "$T/e" "$T/m2"
	umount_fs
	run "$GCTL" --store "$S" ls -l
	[[ "$output" == *" fifo  [fifo]"* ]]
	[[ "$output" == *" null  [chr 1,3]"* ]]
	[[ "$output" == *" blk  [blk 7,200]"* ]]
	[[ "$output" == *" sock  [socket]"* ]]
}

# mktree DIR: a tree as SDKs ship them: a shared library and its
# symlinks, an executable, modes, an empty sticky directory, times
mktree() {
	mkdir -p "$1/t/lib" "$1/t/bin" "$1/t/tmp" "$1/t/share/doc"
	echo so >"$1/t/lib/libx.so.1.2"
	ln -s libx.so.1.2 "$1/t/lib/libx.so.1"
	ln -s libx.so.1 "$1/t/lib/libx.so"
	ln -s ../lib/libx.so "$1/t/bin/link-to-lib"
	printf '#!/bin/sh\necho tool\n' >"$1/t/bin/tool"
	head -c 300000 /dev/urandom >"$1/t/share/doc/big"
	echo ro >"$1/t/share/doc/readonly"
	chmod 0755 "$1/t/bin/tool"
	chmod 0444 "$1/t/share/doc/readonly"
	chmod 1777 "$1/t/tmp"
	chmod 2750 "$1/t/share"
	chown -h 1001:1002 "$1/t/lib/libx.so"
	chown 1001:1002 "$1/t/bin/tool"
	touch -h -d '2003-03-03 03:03:03.3' "$1/t/lib/libx.so.1"
	find "$1/t" -depth ! -type l -exec touch -d '2004-04-04 04:04:04.44' {} +
}

@test "issue 20: tar x and tar c of a tree with symlinks, modes, owners and times: listings identical to ext4's" {
	mount_fs
	mktree "$T/src"
	tar --format=posix -C "$T/src" -cf "$T/in.tar" t
	tar -C "$E" -xpf "$T/in.tar"
	tar -C "$M" -xpf "$T/in.tar"
	listing "$E" >"$T/e"
	listing "$M" >"$T/m"
	diff "$T/e" "$T/m"
	tar --format=posix --sort=name -C "$E" -cf "$T/e.tar" t
	tar --format=posix --sort=name -C "$M" -cf "$T/m.tar" t
	tar --full-time --numeric-owner -tvf "$T/e.tar" >"$T/el"
	tar --full-time --numeric-owner -tvf "$T/m.tar" >"$T/ml"
	diff "$T/el" "$T/ml"
	[ "$(wc -l <"$T/ml")" -eq 13 ]
	"$M/t/bin/tool" | grep -qx tool
	cmp "$T/src/t/share/doc/big" "$M/t/share/doc/big"
	remount
	listing "$M" >"$T/m2"
	diff "$T/e" "$T/m2"
}

@test "issue 20: cp -a into the mount and back keeps modes, owners, times and symlinks, as on ext4" {
	mount_fs
	mktree "$T/src"
	cp -a "$T/src/t" "$E/t"
	cp -a "$T/src/t" "$M/t"
	listing "$E" >"$T/e"
	listing "$M" >"$T/m"
	diff "$T/e" "$T/m"
	mkdir "$T/back"
	cp -a "$M/t" "$T/back/t"
	listing "$T/back" | diff "$T/e" -
}

@test "issue 20: python3 -m venv in the mount, and a script run from it" {
	"$PY3" -c 'import venv' 2>/dev/null || skip "no python3 venv module"
	mount_fs
	"$PY3" -m venv --without-pip "$M/venv"
	[ -L "$M/venv/bin/python" ]
	printf 'import sys\nprint(sys.prefix)\n' >"$M/prefix.py"
	[ "$("$M/venv/bin/python" "$M/prefix.py")" = "$M/venv" ]
	# a script with a shebang into the venv, run by its execute bit
	printf '#!%s\nimport sys\nprint("hello from", sys.prefix)\n' \
		"$M/venv/bin/python" >"$M/venv/bin/hello"
	chmod +x "$M/venv/bin/hello"
	[ "$("$M/venv/bin/hello")" = "hello from $M/venv" ]
	remount
	[ "$("$M/venv/bin/hello")" = "hello from $M/venv" ]
}

@test "issue 20: goblind --mount: memcache and HTTP miss the symlinks and FIFOs the mount made, the files beside them are served" {
	GD_PIDS=()
	gd_start s --mount "$M"
	wait_mounted "$LOG"
	ln -s target "$M/lnk"
	mkfifo "$M/fifo"
	echo val >"$M/file"
	run mc <<<$'get lnk\r\nget fifo\r\nget file\r\nquit\r'
	echo "$output"
	[[ "$output" == *"VALUE file 0 4"* ]]
	[[ "$output" != *"VALUE lnk"* ]]
	[[ "$output" != *"VALUE fifo"* ]]
	[ "$(curl -s -o /dev/null -w '%{http_code}' \
		"http://127.0.0.1:$HPORT/lnk")" = 404 ]
	[ "$(curl -s -o /dev/null -w '%{http_code}' \
		"http://127.0.0.1:$HPORT/fifo")" = 404 ]
	[ "$(curl -s "http://127.0.0.1:$HPORT/file")" = val ]
	# and the mount still has them
	[ "$(readlink "$M/lnk")" = target ]
	[ -p "$M/fifo" ]
	gd_stop
}

@test "issue 20: a file another user made and then truncated or rewrote in place keeps its owner and mode, as on ext4 (pjdfstest truncate/05.t)" {
	chmod 0755 "$T" # mktemp made it 0700: nobody could not reach $M
	mount_fs -o allow_other
	local d
	for d in "$M" "$E"; do
		mkdir "$d/n1"
		chown 65534:65534 "$d/n1"
		as_nobody sh -c "umask 022; touch '$d/n1/f'"
		as_nobody truncate -s 123 "$d/n1/f"
		as_nobody sh -c "printf ab | dd of='$d/n1/f' bs=1 seek=5 conv=notrunc status=none"
		stat -c '%s %a %u %g' "$d/n1/f" >"$d.st"
		# the copy-on-write commits kept the creator, so it may go on
		as_nobody truncate -s 1234 "$d/n1/f"
		stat -c '%s %a %u %g' "$d/n1/f" >>"$d.st"
	done
	cat "$M.st"
	diff "$E.st" "$M.st"
	[ "$(head -1 "$M.st")" = "123 644 65534 65534" ]
	remount -o allow_other
	[ "$(stat -c '%s %a %u %g' "$M/n1/f")" = "1234 644 65534 65534" ]
}

# privs_steps DIR: set-user-ID and set-group-ID files in DIR/k (root's,
# world-writable) written, appended to, truncated and opened with O_TRUNC
# by nobody (no CAP_FSETID), one file each; a write by root, an open
# that writes nothing, nobody's own file, and a chown; prints each mode
privs_steps() {
	local d=$1 m op f
	mkdir "$d/k"
	chmod 0777 "$d/k"
	for m in 4777 2777 6777 2767 6767 4766; do
		for op in write append trunc trunc-same otrunc; do
			f="$d/k/f$m-$op"
			echo hello >"$f"
			chmod "$m" "$f"
			case $op in
			write) as_nobody sh -c "printf ab | dd of='$f' bs=1 seek=1 conv=notrunc status=none" ;;
			append) as_nobody sh -c "echo x >>'$f'" ;;
			trunc) as_nobody truncate -s 3 "$f" ;;
			trunc-same) as_nobody truncate -s 6 "$f" ;;
			otrunc) as_nobody sh -c "echo y >'$f'" ;;
			esac
			echo "$m $op $(stat -c '%a %s' "$f")"
		done
	done
	f="$d/k/root"
	echo hi >"$f"
	chmod 6777 "$f"
	echo z >>"$f"
	f="$d/k/noop"
	echo hi >"$f"
	chmod 6777 "$f"
	as_nobody sh -c "exec 3>>'$f'"
	as_nobody sh -c "umask 0; echo n >'$d/k/own'; chmod 4755 '$d/k/own'; echo o >>'$d/k/own'"
	f="$d/k/chown"
	echo hi >"$f"
	chmod 6777 "$f"
	chown 65534 "$f"
	(cd "$d/k" && stat -c '%n %a %s %U' root noop own chown)
}

@test "issue 20: a write, truncate or O_TRUNC open by a user without CAP_FSETID takes set-user-ID and set-group-ID off, as on ext4, and the mode stays after a remount (pjdfstest chmod/12.t)" {
	chmod 0755 "$T" # mktemp made it 0700: nobody could not reach $M
	mount_fs -o allow_other
	privs_steps "$E" >"$E.st"
	privs_steps "$M" >"$M.st"
	cat "$M.st"
	diff "$E.st" "$M.st"
	# what ext4 shows, that the comparison above is not empty-handed
	grep -qx '4777 write 777 6' "$M.st"
	grep -qx '2767 append 767 8' "$M.st"
	grep -qx 'root 6777 5 root' "$M.st"
	grep -qx 'noop 6777 3 root' "$M.st"
	remount -o allow_other
	(cd "$M/k" && stat -c '%a' f4777-write f2767-trunc f6777-otrunc noop) >"$T/re"
	[ "$(tr '\n' ' ' <"$T/re")" = "777 767 777 6777 " ]
}
