#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# bench/hddemu, the emulated HDD: fio through the mount sees one seek per
# random read (~198 IOPS) and the transfer cap on sequential reads
# (200 MB/s), reads queue in the spindle without blocking an io_uring
# submitter, --seek-ms and --mbps move those figures, bytes and O_DIRECT
# pass through to the backing directory, a bad option is a usage error.
# HDDEMU overrides the binary.

bats_require_minimum_version 1.5.0

load goblinfs	# the FUSE helpers: need_fuse, wait_mounted, umount_fs, ...

HDD="${HDDEMU:-$BATS_TEST_DIRNAME/../../build/bench/hddemu}"
DATA_SIZE=$((256 * 1024 * 1024))

# one data file for the whole file, written and synced once, outside the
# mount: its bytes come from the SSD, not the page cache (fio uses O_DIRECT)
setup_file() {
	export DATA="$BATS_FILE_TMPDIR/data"
	head -c "$DATA_SIZE" /dev/urandom >"$DATA"
	sync "$DATA"
}

setup() {
	need_fuse "$HDD" || return 1
	T="$(mktemp -d "${TMPDIR:-/tmp}/hddemu-bats.XXXXXX")"
	B="$T/backing"
	M="$T/mnt"
	mkdir "$B" "$M"
	ln "$DATA" "$B/data" 2>/dev/null || cp "$DATA" "$B/data"
	GPID=
}

teardown() {
	[ -n "${T:-}" ] || return 0
	gfs_teardown
	rm -rf "$T"
}

# mount_hdd [OPTIONS]: hddemu -f on $B at $M, its stderr in $T/hdd.log
mount_hdd() {
	"$HDD" -f "$@" "$B" "$M" 2>"$T/hdd.log" &
	GPID=$!
	wait_mounted "$T/hdd.log"
}

# umount_hdd: unmount; hddemu exits 0 and prints its counters:
# READS and SEEKS of the spindle
umount_hdd() {
	umount_fs
	cat "$T/hdd.log"
	read -r READS SEEKS < <(sed -n \
		's/^hddemu: \([0-9]*\) reads.* \([0-9]*\) seeks.*/\1 \2/p' \
		"$T/hdd.log")
	[ -n "$SEEKS" ]
}

# fio_read RW BS ENGINE DEPTH SECONDS: O_DIRECT reads of $M/data; prints
# "IOPS MB/s" (MB = 10^6 bytes)
fio_read() {
	fio --name=hdd --filename="$M/data" --direct=1 --rw="$1" --bs="$2" \
		--ioengine="$3" --iodepth="$4" --runtime="$5" --time_based \
		--output-format=json >"$T/fio.json"
	python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["jobs"][0]["read"]
print("%.1f %.1f" % (r["iops"], r["bw_bytes"] / 1e6))' "$T/fio.json"
}

# measure FIELD LO HI FIO_ARGS...: fio_read until field FIELD (1 IOPS,
# 2 MB/s) is in [LO, HI]; sets FIGURE and RUNS.  The emulator can never beat its
# charges, so every run must stay <= HI.  A busy host (2 shared vCPUs, a
# shared SSD) can only slow it down, by up to 0.5 ms a request at
# iodepth 1 here, so up to 4 runs may be needed to reach LO.
measure() {
	local field=$1 lo=$2 hi=$3 run
	shift 3
	for run in 1 2 3 4; do
		RUNS=$run
		FIGURE=$(fio_read "$@" | cut -d' ' -f"$field")
		echo "# fio $* (run $run): $FIGURE" >&3
		python3 -c "import sys; sys.exit(not $FIGURE <= $hi)" || {
			echo "$FIGURE is above $hi" >&2
			return 1
		}
		python3 -c "import sys; sys.exit(not $FIGURE >= $lo)" &&
			return 0
	done
	echo "$FIGURE is below $lo after 4 runs" >&2
	return 1
}

@test "4 KiB random reads pay a seek each: 185-205 IOPS at iodepth 1" {
	mount_hdd
	# 1 / (5 ms + 4096 B / 200 MB/s) = 199.2
	measure 1 185 205 randread 4k psync 1 4
	umount_hdd
	# every random read moved the head (a 1 in 65536 chance not to)
	[ "$READS" -gt 500 ]
	[ "$SEEKS" -ge $((READS - 3)) ]
}

@test "1 MiB sequential reads run at the cap: 185-205 MB/s" {
	mount_hdd
	# 1 MiB / 200 MB/s = 5.24 ms a request, back to back at iodepth 4;
	# a seek each time fio wraps around the 256 MiB file
	measure 2 185 205 read 1M io_uring 4 4
	umount_hdd
	[ "$READS" -gt 100 ]
	# a seek to start each fio run and one a pass of the file (256 reads)
	[ "$SEEKS" -le $((RUNS + READS / 256 + 1)) ]
}

@test "queued reads keep their order: 128 KiB at iodepth 8 seek only on wrap" {
	mount_hdd
	measure 2 185 205 read 128k io_uring 8 2
	umount_hdd
	# threads racing for the spindle would add dozens of seeks here
	[ "$SEEKS" -le $((RUNS + READS / 2048 + 1)) ]
}

@test "many reads in flight wait in the spindle's queue, not in the submitter" {
	local run ok=
	mount_hdd
	# 64 O_DIRECT reads through io_uring: the kernel sends them as FUSE
	# background requests and blocks the submitter once max_background
	# are out (12 unless the daemon raises it); a disk's queue holds them.
	# A busy host only slows the emulator down (see measure): up to 3
	# runs to reach the floors, none may beat the spindle.
	for run in 1 2 3; do
		fio --name=hdd --filename="$M/data" --direct=1 \
			--rw=randread --bs=4k --ioengine=io_uring --iodepth=64 \
			--runtime=2 --time_based --output-format=json \
			>"$T/fio.json"
		read -r iops slat_us < <(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["jobs"][0]["read"]
print("%.1f %.1f" % (r["iops"], r["slat_ns"]["mean"] / 1000))' "$T/fio.json")
		echo "# iodepth 64 (run $run): $iops IOPS," \
			"mean submission $slat_us us" >&3
		# still one spindle: a seek a read
		python3 -c "import sys; sys.exit(not $iops <= 205)"
		# a blocked submit lasts a seek (5 ms) or more; a queued one, us
		if python3 -c "import sys; sys.exit(not ($iops >= 100 and $slat_us < 1000))"; then
			ok=1
			break
		fi
	done
	umount_hdd
	[ -n "$ok" ]
}

@test "--seek-ms and --mbps change the figures" {
	mount_hdd --seek-ms 20
	# 1 / (20 ms + 20 us) = 49.9
	measure 1 47 51 randread 4k psync 1 2
	umount_hdd
	mount_hdd --seek-ms 0 --mbps 50
	measure 2 47 51 read 1M io_uring 4 2
	umount_hdd
	# no seek and 4 us a block: far more than a disk's 200
	mount_hdd --seek-ms 0 --mbps 1000
	measure 1 1000 1000000 randread 4k psync 1 2
}

@test "bytes written through the mount land unchanged; O_DIRECT passes down" {
	mount_hdd --seek-ms 0 --mbps 1000
	head -c 3000007 /dev/urandom >"$T/src"
	cp "$T/src" "$M/copied"
	cmp "$T/src" "$B/copied"
	dd if="$T/src" of="$M/direct" bs=1M count=2 oflag=direct status=none
	cmp -n 2097152 "$T/src" "$B/direct"
	run -0 cmp -s <(dd if="$M/direct" bs=1M iflag=direct status=none) \
		<(head -c 2097152 "$T/src")
	mkdir "$M/dir"
	mv "$M/copied" "$M/dir/moved"
	cmp "$T/src" "$B/dir/moved"
	rm "$M/dir/moved"
	[ ! -e "$B/dir/moved" ]
	# the backing fd of an O_DIRECT open is O_DIRECT; a buffered one not
	run -0 python3 - "$M" "$B" "$GPID" <<'PY'
import os, sys
mnt, backing, pid = sys.argv[1:]
d = os.open(mnt + "/direct", os.O_RDONLY | os.O_DIRECT)
b = os.open(mnt + "/data", os.O_RDONLY)
for fd in os.listdir("/proc/%s/fd" % pid):
    try:
        target = os.readlink("/proc/%s/fd/%s" % (pid, fd))
    except OSError:
        continue
    if not target.startswith(backing + "/"):
        continue
    with open("/proc/%s/fdinfo/%s" % (pid, fd)) as f:
        flags = int([l.split()[1] for l in f if l.startswith("flags:")][0], 8)
    if not flags & os.O_PATH:  # hddemu's names for files, not open files
        print(os.path.basename(target),
              "direct" if flags & os.O_DIRECT else "buffered")
PY
	# (a late release of dd's handle may show one more "direct direct")
	grep -qx "direct direct" <<<"$output"
	grep -qx "data buffered" <<<"$output"
	run -1 grep -vx -e "direct direct" -e "data buffered" <<<"$output"
}

@test "a bad option is a usage error (129) and mounts nothing" {
	run -129 "$HDD" --bogus "$B" "$M"
	[[ "$output" == *"hddemu: unknown option '--bogus'"* ]]
	[[ "$output" == *usage:* ]]
	run -129 "$HDD" --mbps fast "$B" "$M"
	[[ "$output" == *"invalid value 'fast' for --mbps"* ]]
	run -129 "$HDD" --mbps 0 "$B" "$M"
	[[ "$output" == *"invalid value '0' for --mbps"* ]]
	run -129 "$HDD" --seek-ms -1 "$B" "$M"
	[[ "$output" == *"invalid value '-1' for --seek-ms"* ]]
	run -129 "$HDD" "$B"
	[[ "$output" == *"no mountpoint given"* ]]
	run -128 "$HDD" "$T/missing" "$M"
	[[ "$output" == *"cannot open backing directory"* ]]
	run ! mountpoint -q "$M"
	run -0 "$HDD" --help
	[[ "$output" == usage:* ]]
	[[ "$output" == *--seek-ms* ]]
}
