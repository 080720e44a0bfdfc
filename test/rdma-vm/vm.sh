#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Run one command in a throw-away QEMU guest with a real verbs stack:
# Debian's kernel, Soft-RoCE (rdma_rxe) on the guest's own NIC, rdma-core
# from the host.  The host's / is the guest's root (virtio-9p, read-only),
# the work tree (the current directory) is shared writable at its own
# path, so build/ binaries and test/bats run unchanged inside; a scratch
# ext4 disk is the guest's TMPDIR (the store needs O_DIRECT, which 9p and
# the 6.1 kernel's tmpfs do not give).
#
# usage: test/rdma-vm/vm.sh [--timeout S] [--console] -- COMMAND [ARG...]
#        test/rdma-vm/vm.sh --check     can this machine boot the guest?
#
# Inside, COMMAND runs as root in the work tree with RDMA_DEV=rxe0,
# RDMA_IP (the rxe netdev's IPv4), TMPDIR on the scratch disk and
# ulimit -l unlimited.  The caller's environment is not passed (use env).
# Exit status: COMMAND's; 124 when it timed out in the guest; 125 when the
# guest could not be booted or set up (no kernel, QEMU or initramfs that
# works, no rxe0: the reason on stderr, first line "rdma-vm: ..."); 126
# when the guest stopped while COMMAND ran and gave no status.
# RDMAVM_KERNEL: the kernel image to boot (default /boot/vmlinuz-KVER).
set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
CACHE=${RDMAVM_CACHE:-/var/tmp/goblin-rdma-vm}
TIMEOUT=600 CONSOLE=0 CHECK=0 IP=10.0.2.15 MEM=2G SMP=2

fail() { echo "rdma-vm: $*" >&2; exit 125; }

while [ $# -gt 0 ]; do
	case $1 in
	--timeout) TIMEOUT=$2; shift 2 ;;
	--console) CONSOLE=1; shift ;;
	--check) CHECK=1; shift ;;
	--) shift; break ;;
	*) fail "unknown option '$1'" ;;
	esac
done

# Why this machine cannot boot the guest, or nothing.
why_not() {
	local t
	for t in qemu-system-x86_64 busybox cpio mkfs.ext4 depmod ibv_devices \
		timeout; do
		command -v "$t" >/dev/null ||
			{ echo "no $t (make deps-test)"; return; }
	done
	KVER=${RDMAVM_KVER:-}
	if [ -z "$KVER" ]; then
		for d in $(ls -1d /lib/modules/* 2>/dev/null | sort -Vr); do
			[ -r "/boot/vmlinuz-${d##*/}" ] || continue
			find "$d" -name 'rdma_rxe.ko*' | grep -q . || continue
			KVER=${d##*/}
			break
		done
	fi
	[ -n "$KVER" ] ||
		{ echo "no kernel with rdma_rxe (linux-image-amd64)"; return; }
}
reason=$(why_not)
why_not >/dev/null # sets KVER in this shell
if [ "$CHECK" = 1 ]; then
	[ -z "$reason" ] && exit 0
	echo "$reason"
	exit 1
fi
[ -z "$reason" ] || fail "$reason"
KERNEL=${RDMAVM_KERNEL:-/boot/vmlinuz-$KVER}
[ $# -gt 0 ] || fail "no command; usage: vm.sh [--timeout S] -- COMMAND..."

WORK=$(pwd -P)
case $WORK in
/ | /proc* | /sys* | /dev*) fail "will not share '$WORK' writable" ;;
esac

# The initramfs only mounts the host's / and hands over to init.sh; it is
# rebuilt when its builder or the kernel's modules change.
mkdir -p "$CACHE" || fail "cannot make $CACHE"
INITRD=$CACHE/initramfs-$KVER.gz
if [ ! -s "$INITRD" ] || [ "$HERE/mkinitramfs.sh" -nt "$INITRD" ] ||
	[ "/lib/modules/$KVER/modules.dep" -nt "$INITRD" ]; then
	"$HERE/mkinitramfs.sh" "$KVER" "$INITRD" ||
		fail "cannot build the initramfs"
fi

CTL=$(mktemp -d "$CACHE/run.XXXXXX") || fail "mktemp"
QPID=
cleanup() {
	[ -n "$QPID" ] && kill "$QPID" 2>/dev/null && wait "$QPID" 2>/dev/null
	rm -rf "$CTL"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

{
	printf 'WORK=%q\nTIMEOUT=%q\nIP=%q\n' "$WORK" "$TIMEOUT" "$IP"
} >"$CTL/env"
printf '%q ' "$@" >"$CTL/cmd"
: >"$CTL/out"
# sparse: costs only what the tests write
truncate -s 4G "$CTL/scratch.img" || fail "cannot make the scratch disk"

# The NIC's user-mode backend is restricted: the guest reaches nothing
# outside itself (rxe talks to its own address).
timeout -k 5 $((TIMEOUT + 120)) qemu-system-x86_64 -name goblin-rdma \
	-accel tcg -cpu max -machine pc -m "$MEM" -smp "$SMP" \
	-nodefaults -no-user-config -display none -no-reboot \
	-kernel "$KERNEL" -initrd "$INITRD" \
	-append "console=ttyS0 quiet loglevel=3 panic=-1 mitigations=off goblin.init=$HERE/init.sh" \
	-serial "file:$CTL/console" -monitor none \
	-fsdev local,id=r,path=/,security_model=none,readonly=on,multidevs=remap \
	-device virtio-9p-pci,fsdev=r,mount_tag=hostroot \
	-fsdev "local,id=w,path=${WORK//,/,,},security_model=none,multidevs=remap" \
	-device virtio-9p-pci,fsdev=w,mount_tag=work \
	-fsdev "local,id=c,path=$CTL,security_model=none" \
	-device virtio-9p-pci,fsdev=c,mount_tag=ctl \
	-drive "file=$CTL/scratch.img,if=virtio,format=raw,cache=unsafe" \
	-netdev user,id=n0,restrict=on -device virtio-net-pci,netdev=n0 \
	>"$CTL/qemu.log" 2>&1 </dev/null &
QPID=$!
tail -n +1 -F -s 0.3 --pid="$QPID" "$CTL/out" 2>/dev/null
wait "$QPID"
QRC=$?
QPID=
if [ -s "$CTL/rc" ]; then
	RC=$(cat "$CTL/rc")
	[ "$RC" = 125 ] && [ ! -e "$CTL/started" ] &&
		echo "rdma-vm: the guest's setup failed: $(tail -n 1 "$CTL/setup.log" 2>/dev/null)" >&2
elif [ -e "$CTL/started" ]; then
	RC=126
	echo "rdma-vm: the guest stopped while the command ran (qemu exit $QRC)" >&2
elif [ -e "$CTL/setup.log" ]; then
	RC=125
	echo "rdma-vm: the guest booted but its setup stopped: $(tail -n 1 "$CTL/setup.log")" >&2
else
	RC=125
	echo "rdma-vm: the guest did not boot (qemu exit $QRC): $(grep -m1 -v '^$' "$CTL/qemu.log" 2>/dev/null)" >&2
fi
if [ "$RC" = 125 ] || [ "$RC" = 126 ] || [ "$CONSOLE" = 1 ]; then
	echo "--- rdma-vm: guest setup ---" >&2
	cat "$CTL/setup.log" >&2 2>/dev/null
	echo "--- rdma-vm: qemu ---" >&2
	cat "$CTL/qemu.log" >&2
	echo "--- rdma-vm: console (tail) ---" >&2
	tail -n 30 "$CTL/console" >&2 2>/dev/null
fi
exit "$RC"
