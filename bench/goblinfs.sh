#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# goblinfs: the goblinfs mount against the store's embedded read, fio and
# plain ext4, each side by side in the same run (issue 3, section 2); writes
# bench/results/goblinfs.md (goblinfs-quick-<date>.md with --quick).
#   1. sequential read of a cached file: mount vs embedded (storeread) vs fio
#   2. open + first 4 KiB of ART objects whose head is in RAM vs ext4
#   3. 8 parallel readers of 8 large files through the mount vs fio
#   4. WEB (1/64) copied into the mount, replayed vs the ext4 tree
#   5. an append to an existing file vs writing a new one (issue 20)
set -euo pipefail

usage() {
	cat >&2 <<USAGE
usage: bench/goblinfs.sh [--quick] [--dir DIR] [--reps N] [--seq-size SIZE]
       [--par-size SIZE] [--art-count N] [--web-scale F] [--memory SIZE]
       [--append-size SIZE] [--keep] [--out FILE]
  --quick          smaller sizes, 1 repetition (~3 minutes); the report is
                   bench/results/goblinfs-quick-<date>.md and says so
  --dir DIR        scratch directory (default /var/tmp/goblin-fsbench)
  --reps N         repetitions of each comparison, order alternating
                   (default 3; --quick 1)
  --seq-size SIZE  the sequential file, and fio's file (default 1G; quick 512M)
  --par-size SIZE  each of the 8 parallel files (default 512M; quick 256M)
  --art-count N    ART objects for the first-4 KiB test (default 400;
                   quick 300)
  --web-scale F    WEB scale (default 1/64, also with --quick)
  --append-size SIZE  5.: the file appended to, and what is appended
                   (default: --seq-size)
  --memory SIZE    RAM head pool of the sequential and parallel stores
                   (default 256M); the ART and WEB stores get one large
                   enough for every head
  --keep           keep the stores and data files (default: removed at the
                   end; the materialized ART/WEB trees are kept for reuse)
  --out FILE       report (default bench/results/goblinfs.md; --quick:
                   bench/results/goblinfs-quick-<date>.md)
USAGE
	exit 129
}

root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/lib.sh"
invocation="bench/goblinfs.sh${*:+ $*}"
dir=/var/tmp/goblin-fsbench
quick=0
reps= seq_size= par_size= art_count= app_size=
web_scale=1/64
memory=256M
keep=0
out=
while [ $# -gt 0 ]; do
	case $1 in
	--quick) quick=1; shift ;;
	--dir) dir=$2; shift 2 ;;
	--reps) reps=$2; shift 2 ;;
	--seq-size) seq_size=$2; shift 2 ;;
	--par-size) par_size=$2; shift 2 ;;
	--art-count) art_count=$2; shift 2 ;;
	--append-size) app_size=$2; shift 2 ;;
	--web-scale) web_scale=$2; shift 2 ;;
	--memory) memory=$2; shift 2 ;;
	--keep) keep=1; shift ;;
	--out) out=$2; shift 2 ;;
	-h|--help) usage ;;
	*) echo "goblinfs-bench: unknown option '$1'" >&2; usage ;;
	esac
done
if [ "$quick" = 1 ]; then
	: "${reps:=1}" "${seq_size:=512M}" "${par_size:=256M}" "${art_count:=300}"
else
	: "${reps:=3}" "${seq_size:=1G}" "${par_size:=512M}" "${art_count:=400}"
fi
date_tag=$(date -u +%Y-%m-%d)
if [ -z "$out" ]; then
	if [ "$quick" = 1 ]; then
		out=$root/bench/results/goblinfs-quick-$date_tag.md
	else
		out=$root/bench/results/goblinfs.md
	fi
fi

say() { echo "goblinfs-bench: $*" >&2; }
die() { say "$*"; exit 1; }

# bytes of a SIZE (K/M/G suffixes, powers of 1024)
bytes_of() {
	python3 - "$1" <<'PY'
import re, sys
m = re.fullmatch(r"(\d+)([KMG]?)(iB)?", sys.argv[1])
if not m:
    sys.exit("bad size " + sys.argv[1])
print(int(m.group(1)) << {"": 0, "K": 10, "M": 20, "G": 30}[m.group(2)])
PY
}
seq_bytes=$(bytes_of "$seq_size")
: "${app_size:=$seq_size}"
app_bytes=$(bytes_of "$app_size")
par_bytes=$(bytes_of "$par_size")
[ "$reps" -ge 1 ] && [ "$art_count" -ge 1 ] || usage

make -C "$root" --no-print-directory build/goblinfs build/goblinctl \
	build/bench/fsread build/bench/storeread build/bench/gen >&2
goblinfs=$root/build/goblinfs
goblinctl=$root/build/goblinctl
fsread=$root/build/bench/fsread
storeread=$root/build/bench/storeread
gen=$root/build/bench/gen
for t in fio fusermount3 mountpoint python3; do
	command -v $t >/dev/null || die "$t is missing (make deps)"
done
[ -w /proc/sys/vm/drop_caches ] ||
	die "cannot write /proc/sys/vm/drop_caches (run as root)"

mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
mnt=$dir/mnt
logs=$dir/logs
fiofile=$dir/fio-seq.dat
src=$dir/src	# the sequential test's source file (ext4)
rm -rf "$logs" "$dir"/store-* "$src" "$fiofile"
mkdir -p "$logs" "$mnt" "$src"

gfs_pid=
cleanup() {
	local rc=$?
	if mountpoint -q "$mnt" 2>/dev/null; then
		fusermount3 -u "$mnt" 2>/dev/null || umount -l "$mnt" || true
	fi
	if [ -n "$gfs_pid" ] && kill -0 "$gfs_pid" 2>/dev/null; then
		kill "$gfs_pid" 2>/dev/null || true
		wait "$gfs_pid" 2>/dev/null || true
	fi
	rm -f "$fiofile"
	if [ "$keep" = 0 ]; then
		rm -rf "$dir"/store-* "$src"
	fi
	[ $rc -eq 0 ] || say "failed (exit $rc); logs in $logs"
	exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# mount_fs STORE TAG [STORE OPTIONS]: goblinfs in the foreground, in the
# background of this script, so that unmount_fs can wait for it to close
# the store (it is locked while mounted).
mounts=()
mount_fs() {
	local store=$1 tag=$2
	shift 2
	local cmd=("$goblinfs" "$@" --store "$store" "$mnt" -f)
	mounts+=("$(printf '%q ' "${cmd[@]}" | sed "s#$root/##g")")
	"${cmd[@]}" 2>>"$logs/goblinfs-$tag.err" &
	gfs_pid=$!
	for _ in $(seq 1 300); do
		mountpoint -q "$mnt" && return 0
		kill -0 "$gfs_pid" 2>/dev/null || break
		sleep 0.1
	done
	cat "$logs/goblinfs-$tag.err" >&2
	die "goblinfs did not mount ($tag)"
}
unmount_fs() {
	fusermount3 -u "$mnt"
	local rc=0
	wait "$gfs_pid" || rc=$?
	gfs_pid=
	[ $rc -eq 0 ] || die "goblinfs exited with status $rc, see $logs"
}

fio_cmds "$fiofile" "$seq_size"

# run_fio NAME: write a fresh file, drop caches, the measured read
# run_fio NAME [2]: write fio's file fresh, read it (twice with 2: NAME.json
# and NAME-2.json, each after drop_caches)
run_fio() {
	local name=$1 n=${2:-1} j
	rm -f "$fiofile"
	fio_huge "${fio_write_cmd[@]}" >"$logs/$name-write.json"
	for j in $(seq 1 "$n"); do
		drop_caches
		fio_huge "${fio_read_cmd[@]}" >"$logs/$name$([ "$j" = 1 ] || echo "-$j").json"
	done
	rm -f "$fiofile"
	python3 - "$logs/$name.json" <<'PY' >&2
import json, sys
j = json.load(open(sys.argv[1]))
print("goblinfs-bench:   fio read %.1f MiB/s" % (j["jobs"][0]["read"]["bw_bytes"] / 2**20))
PY
}

# timed CMD...: run, print the wall seconds on stdout
timed() {
	local t0 t1
	t0=$(date +%s.%N)
	"$@"
	t1=$(date +%s.%N)
	python3 -c "print('%.3f' % ($t1 - $t0))"
}

t_start=$(date +%s)

# ---- 1. sequential read of a cached file ------------------------------------
say "1. sequential read: $seq_size, $reps reps (mount, embedded, fio)"
seqkey=seq/big.dat
"$gen" --payload "$seqkey" "$seq_bytes" >"$src/big.dat"
sstore=$dir/store-seq
mkdir -p "$sstore"

# each repetition writes the object afresh through the mount, then reads
# that same object through the mount and embedded, twice each in ABBA order:
# the disk serves the same extents at the same age to both, and the first
# read after a write (often faster here) falls to each side in turn
seq_write() {
	local i=$1 w
	mount_fs "$sstore" seq --memory "$memory"
	rm -f "$mnt/$seqkey"
	mkdir -p "$mnt/seq"
	w=$(timed cp "$src/big.dat" "$mnt/$seqkey")
	echo "$w" >"$logs/seq-mount-write-$i.txt"
	unmount_fs
}
seq_mount() {
	local log=$logs/seq-mount-$1.txt
	mount_fs "$sstore" seq --memory "$memory"
	drop_caches
	"$fsread" seq "$mnt/$seqkey" >"$log"
	unmount_fs
	say "  rep $1 mount: $(cat "$log")"
}
seq_embedded() {
	local log=$logs/seq-embedded-$1.txt
	drop_caches
	"$storeread" --store "$sstore" --memory "$memory" "$seqkey" >"$log"
	say "  rep $1 embedded: $(cat "$log")"
}
for i in $(seq 1 "$reps"); do
	if [ $((i % 2)) -eq 1 ]; then
		seq_write "$i"
		seq_mount "$i"; seq_embedded "$i"
		seq_embedded "$i-2"; seq_mount "$i-2"
		run_fio "seq-fio-$i" 2
	else
		run_fio "seq-fio-$i" 2
		seq_write "$i"
		seq_embedded "$i"; seq_mount "$i"
		seq_mount "$i-2"; seq_embedded "$i-2"
	fi
done
# the bytes are right (once, outside the measurement)
mount_fs "$sstore" seq --memory "$memory"
cmp "$src/big.dat" "$mnt/$seqkey" || die "seq: the mount returned wrong bytes"
unmount_fs
rm -rf "$sstore" "$src/big.dat"

# ---- 2. open + first 4 KiB of RAM-head objects ------------------------------
say "2. open + first 4 KiB: ART --count $art_count"
artw=$dir/art-work
artsrc=$dir/art-src
mkdir -p "$artw"
"$gen" ART --count "$art_count" --out "$artw" >"$logs/art-gen.txt"
"$gen" --materialize "$artsrc" --manifest "$artw/ART.population" >&2
# a head pool with room for every head (ram-head 256 KiB), twice over
art_mem=$(( (art_count * 2 * 256 / 1024 + 64) ))M
astore=$dir/store-art
"$goblinctl" --store "$astore" --memory "$art_mem" populate "$artsrc" \
	>"$logs/art-populate.txt" 2>&1
cat "$logs/art-populate.txt" >&2
# the same shuffled order on both sides
python3 - "$artw/ART.population" >"$logs/art-order.txt" <<'PY'
import random, sys
keys = [l.split()[0].replace(":", "/") for l in open(sys.argv[1]) if l.strip()]
random.Random(1).shuffle(keys)
print("\n".join(keys))
PY
mapfile -t art_keys <"$logs/art-order.txt"
mount_fs "$astore" art --memory "$art_mem"
# heads in RAM? (they are not after a restart, until read once)
ram_check() {
	python3 - "$mnt" "$logs/art-order.txt" <<'PY'
import os, re, sys
mnt, order = sys.argv[1:3]
n = inram = 0
for k in open(order).read().split():
    v = os.getxattr(os.path.join(mnt, k), "user.goblin.tiers").decode()
    n += 1
    inram += int(re.search(r"ram=(\d+)", v).group(1)) > 0
print("%d %d" % (inram, n))
PY
}
ram_check >"$logs/art-ram.txt"; read -r r0 n0 <"$logs/art-ram.txt"
"$fsread" first4k "${art_keys[@]/#/$mnt/}" >"$logs/art-promote-4k.txt"
ram_check >"$logs/art-ram.txt"; read -r r1 _ <"$logs/art-ram.txt"
promote="after mount: $r0 of $n0 heads in RAM; after one open + 4 KiB read of each: $r1"
if [ "$r1" -lt "$n0" ]; then
	cat "${art_keys[@]/#/$mnt/}" >/dev/null
	ram_check >"$logs/art-ram.txt"; read -r r2 _ <"$logs/art-ram.txt"
	promote="$promote; after reading each file whole: $r2"
	[ "$r2" -eq "$n0" ] || {
		echo "$promote" >"$logs/art-promote.txt"
		die "only $r2 of $n0 ART heads are in RAM: $promote"
	}
fi
echo "$promote" >"$logs/art-promote.txt"
say "  $promote"
art_fs() {
	local i=$1
	drop_caches
	"$fsread" first4k "${art_keys[@]/#/$mnt/}" >"$logs/art-mount-$i.txt"
	say "  rep $i mount: $(cat "$logs/art-mount-$i.txt")"
}
art_ext4() {
	local i=$1
	drop_caches
	"$fsread" first4k "${art_keys[@]/#/$artsrc/}" >"$logs/art-ext4-$i.txt"
	say "  rep $i ext4: $(cat "$logs/art-ext4-$i.txt")"
}
for i in $(seq 1 "$reps"); do
	if [ $((i % 2)) -eq 1 ]; then art_fs "$i"; art_ext4 "$i"
	else art_ext4 "$i"; art_fs "$i"; fi
done
ram_check >"$logs/art-ram.txt"; read -r r3 _ <"$logs/art-ram.txt"
echo "$r3" >"$logs/art-ram-after.txt"
unmount_fs
rm -rf "$astore"

# ---- 3. 8 parallel readers ---------------------------------------------------
say "3. 8 parallel readers of $par_size each, $reps reps (mount, fio)"
pstore=$dir/store-par
par_files=()
for j in 1 2 3 4 5 6 7 8; do par_files+=("$mnt/par/$j.dat"); done
mount_fs "$pstore" par --memory "$memory"
par_mount() {
	local i=$1 w
	rm -rf "$mnt/par"
	mkdir -p "$mnt/par"
	w=$(timed bash -c 'for j in 1 2 3 4 5 6 7 8; do
		"$1" --payload par/$j.dat "$2" >"$3/par/$j.dat"; done' \
		_ "$gen" "$par_bytes" "$mnt")
	echo "$w" >"$logs/par-mount-write-$i.txt"
	drop_caches
	"$fsread" par "${par_files[@]}" >"$logs/par-mount-$i.txt"
	say "  rep $i mount: $(cat "$logs/par-mount-$i.txt")"
}
# the device read the same way: 8 fresh files of the same size on the same
# file system, written one after another, then read by 8 jobs at once, one
# synchronous 1 MiB read at a time each (what fsread par does)
par_fio() {
	local i=$1 j
	rm -rf "$dir/fiopar"
	mkdir -p "$dir/fiopar"
	for j in 1 2 3 4 5 6 7 8; do
		fio --name=write --filename="$dir/fiopar/$j.dat" --direct=1 \
			--rw=write --bs=1M --iodepth=8 --ioengine=io_uring \
			--size="$par_bytes" --refill_buffers=1 \
			--output-format=json >/dev/null
	done
	drop_caches
	fio_huge fio --name=par --filename_format="$dir/fiopar/\$jobnum.dat" \
		--numjobs=8 --group_reporting --direct=1 --rw=read --bs=1M \
		--ioengine=psync --size="$par_bytes" --mem=shmhuge \
		--output-format=json >"$logs/par-fio8-$i.json"
	rm -rf "$dir/fiopar"
}
for i in $(seq 1 "$reps"); do
	if [ $((i % 2)) -eq 1 ]; then
		par_mount "$i"; par_fio "$i"; run_fio "par-fio-$i"
	else
		run_fio "par-fio-$i"; par_fio "$i"; par_mount "$i"
	fi
done
# spot check: the bytes of one file are right
"$gen" --payload par/8.dat "$par_bytes" | cmp - "$mnt/par/8.dat" ||
	die "par: the mount returned wrong bytes"
unmount_fs
rm -rf "$pstore"

# ---- 4. WEB ------------------------------------------------------------------
say "4. WEB at scale $web_scale"
webw=$dir/web-work
websrc=$dir/web-src
mkdir -p "$webw"
"$gen" WEB --scale "$web_scale" --out "$webw" >"$logs/web-gen.txt"
"$gen" --materialize "$websrc" --manifest "$webw/WEB.population" >&2
# room for every object: heads of the large ones, the small ones whole
read -r web_mem web_small web_n web_bytes < <(python3 - "$webw/WEB.population" <<'PY'
import sys
H = 256 << 10
large = small = n = tot = 0
for l in open(sys.argv[1]):
    k, s = l.split()
    s = int(s)
    n += 1
    tot += s
    if s >= H:
        large += 1
    else:
        small += s
mib = lambda b: (b + (1 << 20) - 1) >> 20
print("%dM %dM %d %d" % (mib(large * H * 2) + 64, mib(small * 2) + 64, n, tot))
PY
)
wstore=$dir/store-web
mount_fs "$wstore" web --memory "$web_mem" --small-memory "$web_small"
drop_caches
webcp_s=$(timed cp -r "$websrc/web" "$mnt/")
echo "$webcp_s" >"$logs/web-copyin.txt"
nfiles=$(find "$mnt/web" -type f | wc -l)
echo "$nfiles" >"$logs/web-files.txt"
[ "$nfiles" -eq "$web_n" ] ||
	die "WEB: $nfiles files in the mount after the copy, $web_n expected"
say "  copied $web_n files, $web_bytes bytes in $webcp_s s"
web_fs() {
	local i=$1
	drop_caches
	"$fsread" replay "$mnt" "$webw/WEB.measured" >"$logs/web-mount-$i.txt"
	say "  rep $i mount: $(cat "$logs/web-mount-$i.txt")"
}
web_ext4() {
	local i=$1
	drop_caches
	"$fsread" replay "$websrc" "$webw/WEB.measured" >"$logs/web-ext4-$i.txt"
	say "  rep $i ext4: $(cat "$logs/web-ext4-$i.txt")"
}
for i in $(seq 1 "$reps"); do
	if [ $((i % 2)) -eq 1 ]; then web_fs "$i"; web_ext4 "$i"
	else web_ext4 "$i"; web_fs "$i"; fi
done
# byte check of a sample (every 50th object of the population)
sample=0
while read -r k _; do
	k=${k//://}
	cmp "$websrc/$k" "$mnt/$k" || die "WEB: '$k' differs in the mount"
	sample=$((sample + 1))
done < <(awk 'NR % 50 == 1' "$webw/WEB.population")
echo "$sample" >"$logs/web-cmp.txt"
unmount_fs
# with the mount's sizes: a smaller --small-memory would evict on open
"$goblinctl" --store "$wstore" --memory "$web_mem" --small-memory "$web_small" \
	stats >"$logs/web-stats.txt"
rm -rf "$wstore"

# ---- 5. append vs a new file ---------------------------------------------------
# issue 20: an append shares the committed version's extents, so appending
# S bytes to an S-byte file should cost what writing a new S-byte file
# does, not 2 S.  Both sides write the same cached source with cat (the
# same write sizes); the bytes are goblinfs's write_bytes (/proc/PID/io:
# what it sent to the SSD file, journal included) over the write and its
# close.
say "5. append $app_size to a $app_size file vs a new $app_size file, $reps reps"
"$gen" --payload app/src.dat "$app_bytes" >"$src/app.dat"
cat "$src/app.dat" >/dev/null
appstore=$dir/store-app
mount_fs "$appstore" app --memory "$memory"
mkdir -p "$mnt/app"
io_written() { awk '$1 == "write_bytes:" { print $2 }' "/proc/$gfs_pid/io"; }
# app_side new|append REP: the timed write and the bytes it wrote
app_side() {
	local side=$1 i=$2 b0 b1 s
	rm -f "$mnt/app/f"
	[ "$side" = new ] || cat "$src/app.dat" >"$mnt/app/f"
	sync
	b0=$(io_written)
	if [ "$side" = new ]; then
		s=$(timed sh -c 'cat "$1" >"$2"' _ "$src/app.dat" "$mnt/app/f")
	else
		s=$(timed sh -c 'cat "$1" >>"$2"' _ "$src/app.dat" "$mnt/app/f")
	fi
	b1=$(io_written)
	echo "$s $((b1 - b0))" >"$logs/app-$side-$i.txt"
	say "  rep $i $side: $s s, $((b1 - b0)) bytes written"
	if [ "$side" = append ]; then	# the file is both copies, whole
		[ "$(stat -c %s "$mnt/app/f")" -eq $((2 * app_bytes)) ] &&
			cmp -n "$app_bytes" "$src/app.dat" "$mnt/app/f" &&
			tail -c "$app_bytes" "$mnt/app/f" | cmp - "$src/app.dat" ||
			die "append: the mount's file is not the two copies"
	fi
	rm -f "$mnt/app/f"
}
# untimed: a file of twice the size written and removed first, so that
# neither side is the first write into space the store's SSD file never
# held (on this VM that write was ~35% slower, whichever side it was)
cat "$src/app.dat" "$src/app.dat" >"$mnt/app/f"
rm -f "$mnt/app/f"
for i in $(seq 1 "$reps"); do
	if [ $((i % 2)) -eq 1 ]; then app_side append "$i"; app_side new "$i"
	else app_side new "$i"; app_side append "$i"; fi
done
unmount_fs
rm -rf "$appstore" "$src/app.dat"

t_end=$(date +%s)

# ---- the report ----------------------------------------------------------------
{
	machine_info "$dir" "$root"
	echo "loadavg at the end: $(cat /proc/loadavg)"
	echo "fuse: $(fusermount3 --version 2>&1 | head -1)"
} >"$logs/machine.txt"
printf '%s\n' "${mounts[@]}" | awk '!seen[$0]++' >"$logs/mounts.txt"

strip() { sed "s#$root/##g"; }
{
	echo "# the whole run (from the top of the repository)"
	echo "$invocation"
	echo "# caches, before every measured read"
	echo "sync; echo 3 > /proc/sys/vm/drop_caches"
	echo "# mounts (each unmounted with fusermount3 -u $mnt)"
	cat "$logs/mounts.txt"
	echo "# 1. sequential: the mount (mounted, fresh copy, read, unmounted)"
	echo "build/bench/gen --payload $seqkey $seq_bytes > $src/big.dat"
	echo "cp $src/big.dat $mnt/$seqkey"
	echo "build/bench/fsread seq $mnt/$seqkey"
	echo "# 1. sequential: embedded (goblinfs unmounted; a fresh put)"
	echo "build/goblinctl --store $dir/store-seq --memory $memory del $seqkey"
	echo "build/goblinctl --store $dir/store-seq --memory $memory put $seqkey $src/big.dat"
	echo "build/bench/storeread --store $dir/store-seq --memory $memory $seqkey"
	echo "# 1. and 3. fio: a fresh file, then the measured read"
	printf '%q ' "${fio_write_cmd[@]}"; echo
	printf '%q ' "${fio_read_cmd[@]}"; echo
	echo "# 2. first 4 KiB"
	echo "build/bench/gen ART --count $art_count --out $artw"
	echo "build/bench/gen --materialize $artsrc --manifest $artw/ART.population"
	echo "build/goblinctl --store $dir/store-art --memory $art_mem populate $artsrc"
	echo "build/bench/fsread first4k $mnt/art/... (all $art_count, shuffled with seed 1; once to promote the heads, then measured)"
	echo "build/bench/fsread first4k $artsrc/art/... (the same order)"
	echo "# 3. parallel readers (fresh files each repetition)"
	echo "for j in 1..8: build/bench/gen --payload par/\$j.dat $par_bytes > $mnt/par/\$j.dat"
	echo "build/bench/fsread par $mnt/par/1.dat ... $mnt/par/8.dat"
	echo "# 4. WEB"
	echo "build/bench/gen WEB --scale $web_scale --out $webw"
	echo "build/bench/gen --materialize $websrc --manifest $webw/WEB.population"
	echo "cp -r $websrc/web $mnt/"
	echo "build/bench/fsread replay $mnt $webw/WEB.measured"
	echo "build/bench/fsread replay $websrc $webw/WEB.measured"
	echo "build/goblinctl --store $dir/store-web --memory $web_mem --small-memory $web_small stats   # after unmounting"
	echo "# 5. append vs new (write_bytes of goblinfs's /proc/PID/io around each)"
	echo "build/bench/gen --payload app/src.dat $app_bytes > $src/app.dat"
	echo "cat $src/app.dat $src/app.dat > $mnt/app/f; rm $mnt/app/f   # untimed, once"
	echo "cat $src/app.dat > $mnt/app/f; sync; cat $src/app.dat >> $mnt/app/f   # append"
	echo "sync; cat $src/app.dat > $mnt/app/f   # new"
} | strip >"$logs/commands.txt"

mkdir -p "$(dirname "$out")"
python3 - "$logs" "$reps" "$out" "$date_tag" "$quick" "$seq_size" \
	"$par_size" "$art_count" "$web_scale" "$web_n" "$web_bytes" \
	"$((t_end - t_start))" "$app_size" <<'PY'
import datetime, json, os, re, statistics, sys

(logs, reps, out, date_tag, quick, seq_size, par_size, art_count,
 web_scale, web_n, web_bytes, elapsed, app_size) = sys.argv[1:14]
reps, quick = int(reps), quick == "1"
web_n, web_bytes, elapsed = int(web_n), int(web_bytes), int(elapsed)
R = range(1, reps + 1)

def rd(name):
    return open(os.path.join(logs, name)).read()

def result(name):
    for line in rd(name).splitlines():
        if line.startswith("RESULT "):
            return {k: float(v) for k, v in re.findall(r"(\w+)=([^\s]+)", line)}
    raise SystemExit("no RESULT line in " + name)

def fio(name):
    return json.load(open(os.path.join(logs, name)))["jobs"][0]

def med(v):
    return statistics.median(v)

def yes(ok):
    return "yes" if ok else "**no**"

# 1
seq = []
for i in R:
    m, e = result("seq-mount-%d.txt" % i), result("seq-embedded-%d.txt" % i)
    m2 = result("seq-mount-%d-2.txt" % i)
    e2 = result("seq-embedded-%d-2.txt" % i)
    f, f2 = fio("seq-fio-%d.json" % i), fio("seq-fio-%d-2.json" % i)
    both = lambda a, b: (a["bytes"] + b["bytes"]) / (a["seconds"] + b["seconds"]) / 2**20
    seq.append(dict(mount=both(m, m2), emb=both(e, e2),
                    fio=2 / (2**20 / f["read"]["bw_bytes"] + 2**20 / f2["read"]["bw_bytes"]),
                    fio_w=fio("seq-fio-%d-write.json" % i)["write"]["bw_bytes"] / 2**20,
                    m_ttfb=m["ttfb_us"], e_ttfb=e["ttfb_us"],
                    write=m["bytes"] / 2**20 / float(rd("seq-mount-write-%d.txt" % i))))
    seq[-1]["r_emb"] = seq[-1]["mount"] / seq[-1]["emb"]
    seq[-1]["r_fio"] = seq[-1]["mount"] / seq[-1]["fio"]
r_emb = med([s["r_emb"] for s in seq])
r_fio = med([s["r_fio"] for s in seq])

# 2
art = [(result("art-mount-%d.txt" % i), result("art-ext4-%d.txt" % i)) for i in R]
art50 = med([a["p50_us"] for a, _ in art])
ext50 = med([b["p50_us"] for _, b in art])
promote = rd("art-promote.txt").strip()
ram_after = rd("art-ram-after.txt").strip()

# 3
par = []
for i in R:
    m = result("par-mount-%d.txt" % i)
    f = fio("par-fio-%d.json" % i)["read"]["bw_bytes"] / 2**20
    f8 = fio("par-fio8-%d.json" % i)["read"]["bw_bytes"] / 2**20
    par.append(dict(mount=m["mibps"], fio=f, fio8=f8, r=m["mibps"] / f8,
                    r1=m["mibps"] / f,
                    write=m["bytes"] / 2**20 / float(rd("par-mount-write-%d.txt" % i))))
r_par = med([p["r"] for p in par])

# 4
web = [(result("web-mount-%d.txt" % i), result("web-ext4-%d.txt" % i)) for i in R]
copy_s = float(rd("web-copyin.txt"))

# 5
def app(side, i):
    s, b = rd("app-%s-%d.txt" % (side, i)).split()
    return float(s), int(b)
apps = [(app("append", i), app("new", i)) for i in R]
r_app_t = med([a[0] / n[0] for a, n in apps])
r_app_b = med([a[1] / n[1] for a, n in apps])

L = []
w = L.append
kind = "QUICK RUN (smaller sizes, %d repetition%s): not the benchmark of record" % (
    reps, "" if reps == 1 else "s") if quick else "full run, %d repetitions" % reps
w("# goblinfs benchmark (%s)%s" % (date_tag, " — quick run" if quick else ""))
w("")
w("Generated by `bench/goblinfs.sh` on %s UTC in %d s: **%s**." % (
    datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M"), elapsed, kind))
if quick:
    w("")
    w("A quick run uses a %s sequential file (the target speaks of 1 GiB), "
      "8 x %s parallel files, %s ART objects and one repetition: its numbers "
      "show that the benchmark works and roughly where goblinfs stands, "
      "nothing more." % (seq_size, par_size, art_count))
w("")
w("## Result")
w("")
w("| target (issue 3, section 2) | measured (median over %d rep%s) | met |" % (
    reps, "" if reps == 1 else "s"))
w("|---|---|---|")
w("| sequential read of a %s cached file through the mount >= 85%% of the "
  "embedded read | %.3f (%.0f vs %.0f MiB/s) | %s |" % (
      seq_size, r_emb, med([s["mount"] for s in seq]),
      med([s["emb"] for s in seq]), yes(r_emb >= 0.85)))
w("| same >= 80%% of `fio --direct=1` on the same file system | %.3f "
  "(%.0f vs %.0f MiB/s) | %s |" % (
      r_fio, med([s["mount"] for s in seq]), med([s["fio"] for s in seq]),
      yes(r_fio >= 0.80)))
w("| open + first 4 KiB of a RAM-head object, median < 100 us | %.1f us "
  "(ext4 after drop_caches: %.1f us) | %s |" % (art50, ext50, yes(art50 < 100)))
w("| 8 parallel readers of 8 x %s: aggregate >= 90%% of the device's "
  "sequential bandwidth (fio, 8 jobs over 8 such files) | %.3f (%.0f vs "
  "%.0f MiB/s; vs fio one job on one file: %.3f) | %s |" % (
      par_size, r_par, med([p["mount"] for p in par]),
      med([p["fio8"] for p in par]), med([p["r1"] for p in par]),
      yes(r_par >= 0.90)))
w("| WEB (%s) replayed as file reads | %.0f MiB/s, TTFB p50 %.1f us "
  "(ext4 %.0f MiB/s, %.1f us) | no target |" % (
      web_scale, med([a["mibps"] for a, _ in web]),
      med([a["ttfb_p50_us"] for a, _ in web]),
      med([b["mibps"] for _, b in web]), med([b["ttfb_p50_us"] for _, b in web])))
w("| appending %s to a %s file costs no more than writing a new %s file "
  "(append / new, time and bytes written, <= 1.10) | time %.3f (%.2f vs "
  "%.2f s), bytes %.3f | %s |" % (
      app_size, app_size, app_size, r_app_t, med([a[0] for a, _ in apps]),
      med([n[0] for _, n in apps]), r_app_b,
      yes(r_app_t <= 1.10 and r_app_b <= 1.10)))
w("")
w("Ratios are medians of per-repetition ratios: each pair ran back to back, "
  "which cancels most of the virtual disk's drift.")
w("")
w("## Machine")
w("")
w("```")
w(rd("machine.txt").rstrip())
w("```")
w("")
w("## Commands")
w("")
w("Every measured read starts after `sync; echo 3 > /proc/sys/vm/drop_caches`. "
  "The order of the sides alternates between repetitions (odd: mount first; "
  "even: the other side(s) first, reversed).")
w("")
w("```")
w(rd("commands.txt").rstrip())
w("```")
w("")
w("## 1. Sequential read of a cached file (%s)" % seq_size)
w("")
w("Each repetition writes the object afresh through the mount (`cp` of "
  "the source file, which commits it; the virtual disk is much faster on "
  "freshly written data, so both sides must read the same bytes at the same "
  "age), unmounts, and then reads that same object twice each way in ABBA "
  "order (the first read after a write is often faster here; the order "
  "alternates between repetitions), each after dropping the caches; a "
  "side's figure is its bytes over its time for both reads. The mount side "
  "mounts and reads the file with 1 MiB `read()`s (files of 64 MiB and more "
  "are read past the page cache, `--direct-read`), the embedded side, with "
  "goblinfs unmounted (the store is locked while mounted), streams it with "
  "`gs_reader_next` (storeread). fio writes a fresh file and reads it "
  "twice with O_DIRECT, 1 MiB blocks, 8 in flight. TTFB here (the first "
  "read) is "
  "open to the return of the first 1 MiB `read()` on the mount (the kernel "
  "splits it into FUSE reads, some beyond the RAM head) and to the first "
  "chunk embedded; section 2 measures the first 4 KiB.")
w("")
w("| rep | mount MiB/s | embedded MiB/s | fio MiB/s | mount / embedded "
  "| mount / fio | mount TTFB us | embedded TTFB us | copy-in MiB/s | fio write MiB/s |")
w("|---|---|---|---|---|---|---|---|---|---|")
for i, s in enumerate(seq, 1):
    w("| %d | %.1f | %.1f | %.1f | %.3f | %.3f | %.0f | %.0f | %.0f | %.0f |" % (
        i, s["mount"], s["emb"], s["fio"], s["r_emb"], s["r_fio"],
        s["m_ttfb"], s["e_ttfb"], s["write"], s["fio_w"]))
if reps > 1:
    w("| median | %.1f | %.1f | %.1f | %.3f | %.3f | | | | |" % (
        med([s["mount"] for s in seq]), med([s["emb"] for s in seq]),
        med([s["fio"] for s in seq]), r_emb, r_fio))
w("")
w("## 2. open + first 4 KiB of RAM-head objects")
w("")
w("Workload: %s" % rd("art-gen.txt").strip().replace("\n", "  \n"))
w("")
w("%s" % rd("art-populate.txt").strip())
w("")
w("The objects were put with `goblinctl populate` before mounting, so the "
  "mount starts without their heads in RAM; `user.goblin.tiers` (ram=) "
  "per file: %s. After the measurements: %s of %s heads in RAM. Each pass: "
  "drop caches, then for every file in one shuffled order open, `pread` "
  "4 KiB at 0, close (the time of all three); ext4 reads the materialized "
  "tree the objects were populated from, in the same order." % (
      promote, ram_after, art_count))
w("")
w("| rep | side | n | p50 us | p90 us | p99 us | max us |")
w("|---|---|---|---|---|---|---|")
for i, (a, b) in enumerate(art, 1):
    for side, r in (("goblinfs", a), ("ext4", b)):
        w("| %d | %s | %d | %.1f | %.1f | %.1f | %.1f |" % (
            i, side, r["n"], r["p50_us"], r["p90_us"], r["p99_us"], r["max_us"]))
w("")
w("## 3. 8 parallel readers")
w("")
w("Each repetition writes 8 fresh files of %s into the mount (bench/gen "
  "payloads, one after another), drops the caches and reads all 8 at once, "
  "one thread per file, 1 MiB `read()`s; the aggregate is all bytes over "
  "the wall time from the first open to the last byte. The device's "
  "sequential bandwidth, in the same repetition: fio8 writes 8 fresh files "
  "of %s on the same file system one after another (O_DIRECT), drops the "
  "caches and reads them with 8 jobs at once, `--direct=1 --bs=1M "
  "--ioengine=psync` (the same volume, age and pattern as the mount's "
  "readers: the virtual disk is faster on less, fresher data); fio1 is "
  "one job reading one fresh %s file, 8 in flight, as in 1. The target "
  "ratio is mount / fio8." % (par_size, par_size, seq_size))
w("")
w("| rep | mount aggregate MiB/s | fio8 MiB/s | fio1 MiB/s | mount / fio8 | mount / fio1 | write into the mount MiB/s |")
w("|---|---|---|---|---|---|---|")
for i, p in enumerate(par, 1):
    w("| %d | %.1f | %.1f | %.1f | %.3f | %.3f | %.0f |" % (
        i, p["mount"], p["fio8"], p["fio"], p["r"], p["r1"], p["write"]))
if reps > 1:
    w("| median | %.1f | %.1f | %.1f | %.3f | %.3f | |" % (
        med([p["mount"] for p in par]), med([p["fio8"] for p in par]),
        med([p["fio"] for p in par]), r_par, med([p["r1"] for p in par])))
w("")
w("## 4. WEB (scale %s)" % web_scale)
w("")
w("Workload: %s" % rd("web-gen.txt").strip().replace("\n", "  \n"))
w("")
w("Copy-in: `cp -r` of the materialized population (%d files, %.1f MiB, "
  "source after drop_caches) into the mount: %.2f s, **%.1f MiB/s**, "
  "%.0f files/s. Byte check afterwards: %s sampled files identical (cmp)." % (
      web_n, web_bytes / 2**20, copy_s, web_bytes / 2**20 / copy_s,
      web_n / copy_s, rd("web-cmp.txt").strip()))
w("")
w("Replay: `fsread replay` opens, reads whole (1 MiB `read()`s) and closes "
  "each file of WEB.measured in order, one at a time; the caches are "
  "dropped before each replay, so each object's first request comes from "
  "the file system and repeats may come from the kernel's page cache (on "
  "the mount: kept across opens of an unchanged file). TTFB: open to the "
  "first `read()`'s return; completion: open to the last byte.")
w("")
w("| rep | side | requests | GiB | s | MiB/s | TTFB p50 us | TTFB p99 us | completion p50 us | completion p99 us |")
w("|---|---|---|---|---|---|---|---|---|---|")
for i, (a, b) in enumerate(web, 1):
    for side, r in (("goblinfs", a), ("ext4", b)):
        w("| %d | %s | %d | %.2f | %.2f | %.1f | %.1f | %.1f | %.1f | %.1f |" % (
            i, side, r["requests"], r["bytes"] / 2**30, r["seconds"], r["mibps"],
            r["ttfb_p50_us"], r["ttfb_p99_us"], r["done_p50_us"], r["done_p99_us"]))
w("")
st = {}
for line in rd("web-stats.txt").splitlines():
    p = line.split()
    if len(p) == 2:
        st[p[0]] = p[1]
w("Store after the WEB run (`goblinctl stats`): objects %s (small %s), "
  "evictions: %s." % (st.get("objects", "?"), st.get("small_objects", "?"),
                       ", ".join("%s %s" % (k, v) for k, v in sorted(st.items())
                                 if "evict" in k) or "?"))
w("")
w("## 5. Append vs a new file (%s)" % app_size)
w("")
w("Issue 20: an append (`cat src >> f`, O_APPEND) to a committed %s file "
  "makes a version that shares its extents and writes only the new bytes; "
  "a new file (`cat src > f`) writes all of its own. After an untimed "
  "file of twice the size is written and removed (the first write into a "
  "fresh store is slower, whichever side it is), each repetition "
  "does both on one mount, in alternating order, from the same source in "
  "the page cache; the time is the whole write and its close (the "
  "commit), the bytes goblinfs's `write_bytes` over it (`/proc/PID/io`). "
  "After each append the file is checked to be the two copies." % app_size)
w("")
w("| rep | append s | new s | append / new | append bytes | new bytes | bytes append / new |")
w("|---|---|---|---|---|---|---|")
for i, (a, n) in enumerate(apps, 1):
    w("| %d | %.2f | %.2f | %.3f | %d | %d | %.3f |" % (
        i, a[0], n[0], a[0] / n[0], a[1], n[1], a[1] / n[1]))
if reps > 1:
    w("| median | %.2f | %.2f | %.3f | | | %.3f |" % (
        med([a[0] for a, _ in apps]), med([n[0] for _, n in apps]), r_app_t,
        r_app_b))
w("")
open(out, "w").write("\n".join(L))
print("goblinfs-bench: wrote %s" % out)
print("  seq mount/embedded %.3f (>= 0.85: %s), mount/fio %.3f (>= 0.80: %s)" % (
    r_emb, "met" if r_emb >= 0.85 else "NOT met", r_fio,
    "met" if r_fio >= 0.80 else "NOT met"))
print("  first 4 KiB p50 %.1f us (< 100: %s), ext4 %.1f us" % (
    art50, "met" if art50 < 100 else "NOT met", ext50))
print("  8 readers / fio8 %.3f (>= 0.90: %s)" % (r_par, "met" if r_par >= 0.9 else "NOT met"))
print("  append / new: time %.3f, bytes %.3f" % (r_app_t, r_app_b))
PY
stamp_report "$out"
