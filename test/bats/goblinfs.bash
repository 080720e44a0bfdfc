# SPDX-License-Identifier: BSD-3-Clause
# Shared by the goblinfs bats files: a temp dir with a store and a
# mountpoint per test, goblinfs in the foreground in the background, and
# unmounting whatever happens.  GOBLINFS and GOBLINCTL override the binaries.
# 40-hddemu mounts its FUSE daemon with the same helpers (GPID, $M).

GFS="${GOBLINFS:-$BATS_TEST_DIRNAME/../../build/goblinfs}"
GCTL="${GOBLINCTL:-$BATS_TEST_DIRNAME/../../build/goblinctl}"

# need_fuse DAEMON: skip without FUSE; fail if DAEMON is not built
need_fuse() {
	[ -e /dev/fuse ] || skip "no /dev/fuse"
	command -v fusermount3 >/dev/null || skip "no fusermount3"
	if [ ! -x "$1" ]; then
		echo "$(basename "$1") is not built: $1" >&2
		return 1
	fi
}

# gfs_setup NAME: skip without FUSE; T (named after NAME), S store, M mount
gfs_setup() {
	need_fuse "$GFS" || return 1
	T="$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX")"
	S="$T/store"
	M="$T/mnt"
	mkdir "$M"
	GPID=
	unset GOBLIN_STORE
}

unmount_quietly() {
	fusermount3 -u "$M" 2>/dev/null || umount -l "$M" 2>/dev/null || true
}

# gfs_teardown: unmount and stop goblinfs (the caller removes $T)
gfs_teardown() {
	unmount_quietly
	if [ -n "$GPID" ]; then
		kill "$GPID" 2>/dev/null || true
		wait "$GPID" 2>/dev/null || true
	fi
	unmount_quietly
}

# wait_mounted [LOG]: poll until $M is a mount (5 s); if it is not, show
# the daemon's LOG (default $T/gfs.log)
wait_mounted() {
	local i
	for i in $(seq 50); do
		timeout 2 mountpoint -q "$M" && return 0
		sleep 0.1
	done
	echo "nothing mounted on $M; the daemon's log:" >&2
	cat "${1:-$T/gfs.log}" >&2
	return 1
}

# wait_unmounted: poll until $M has left the mount table (10 s).  Not
# mountpoint(1): a mount whose daemon died fails stat() with ENOTCONN and
# looks unmounted to it while it is still in the table.
wait_unmounted() {
	local i
	for i in $(seq 100); do
		findmnt -rn --mountpoint "$M" >/dev/null || return 0
		sleep 0.1
	done
	echo "$M is still mounted:" >&2
	findmnt --mountpoint "$M" >&2
	return 1
}

# mount_fs [OPTIONS]: goblinfs -f in the background on this test's store
mount_fs() {
	"$GFS" "${STORE_OPTS[@]}" --store "$S" -f "$@" "$M" \
		2>>"$T/gfs.log" &
	GPID=$!
	wait_mounted
}

# umount_fs: unmount and wait for the daemon (GPID) to exit 0
umount_fs() {
	fusermount3 -u "$M"
	wait "$GPID"
	GPID=
}
