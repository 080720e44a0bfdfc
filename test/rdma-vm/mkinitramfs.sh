#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# mkinitramfs.sh KVER OUT: the guest's initramfs.  Busybox and the modules
# of virtio-9p, nothing else: it mounts the host's / (read-only) and
# switch_roots into it, running the init.sh that the kernel command line
# names (goblin.init=).  Everything else comes from the host's /.
set -eu
KVER=$1 OUT=$2
D=$(mktemp -d "${TMPDIR:-/var/tmp}/goblin-initramfs.XXXXXX")
trap 'rm -rf "$D"' EXIT
mkdir -p "$D/bin" "$D/dev" "$D/proc" "$D/sys" "$D/root" "$D/lib/modules/$KVER"
BB=$(command -v busybox)
cp "$BB" "$D/bin/busybox"
for l in $(ldd "$BB" 2>/dev/null | grep -o '/[^ ]*' || true); do
	mkdir -p "$D${l%/*}"
	cp -L "$l" "$D$l"
done
for a in sh mount modprobe switch_root sleep cat; do
	ln -s busybox "$D/bin/$a"
done
for m in virtio_pci 9pnet_virtio 9p; do
	modprobe -S "$KVER" --show-depends "$m" |
		awk '$1 == "insmod" { print $2 }' | while read -r f; do
		rel=${f#/lib/modules/$KVER/}
		mkdir -p "$D/lib/modules/$KVER/${rel%/*}"
		cp "$f" "$D/lib/modules/$KVER/$rel"
	done
done
cp /lib/modules/"$KVER"/modules.order /lib/modules/"$KVER"/modules.builtin* "$D/lib/modules/$KVER/" 2>/dev/null || true
depmod -b "$D" "$KVER"
cat >"$D/init" <<'INIT'
#!/bin/sh
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
for m in virtio_pci 9pnet_virtio 9p; do modprobe $m; done
for a in $(cat /proc/cmdline); do
	case $a in goblin.init=*) GINIT=${a#goblin.init=} ;; esac
done
n=0
until mount -t 9p -o trans=virtio,version=9p2000.L,ro,cache=loose,msize=262144 hostroot /root; do
	n=$((n + 1))
	[ $n -lt 50 ] || { echo "initramfs: no hostroot"; echo o >/proc/sysrq-trigger; }
	sleep 0.1
done
for m in dev proc sys; do mount --move /$m /root/$m; done
exec switch_root /root /bin/bash "$GINIT"
INIT
chmod +x "$D/init"
(cd "$D" && find . | cpio -o -H newc --quiet | gzip -1) >"$OUT.tmp.$$"
mv "$OUT.tmp.$$" "$OUT" # two runs at once: the last one wins, whole
