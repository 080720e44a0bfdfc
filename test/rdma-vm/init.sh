#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# PID 1 of the guest (vm.sh): / is the host's, read-only.  Mount the work
# tree and the control directory, make the scratch disk TMPDIR, bring up
# rxe0 on the NIC, run the command, write its status, power off.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
P9=trans=virtio,version=9p2000.L,msize=262144
off() {
	sync
	umount -l /run/ctl 2>/dev/null
	echo o >/proc/sysrq-trigger
	sleep 60
}
mount -t tmpfs tmpfs /run
mount -t tmpfs tmpfs /tmp
mkdir -p /run/ctl /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
# bats uses process substitution: /dev/fd (udev would make these)
ln -sf /proc/self/fd /dev/fd
ln -sf /proc/self/fd/0 /dev/stdin
ln -sf /proc/self/fd/1 /dev/stdout
ln -sf /proc/self/fd/2 /dev/stderr
mount -t 9p -o $P9 ctl /run/ctl || off
CTL=/run/ctl
exec 3>>$CTL/setup.log
log() { echo "guest $(cut -d' ' -f1 /proc/uptime)s: $*" >&3; }
give_up() { log "$*"; echo 125 >$CTL/rc; off; }
log "init.sh: the guest booted"
. $CTL/env # WORK TIMEOUT IP
# A work tree in what the guest mounts afresh (/tmp, /run: a clone in
# /tmp, as CI makes) has no directory there to mount it on: make one.
[ -d "$WORK" ] || mkdir -p "$WORK" 2>&3
mount -t 9p -o $P9,cache=none work "$WORK" 2>&3 || give_up "cannot mount $WORK"
S=/run/scratch
modprobe virtio_blk 2>&3
for _ in $(seq 50); do [ -b /dev/vda ] && break; sleep 0.1; done
mkdir -p $S
mkfs.ext4 -q -F /dev/vda 2>&3 && mount /dev/vda $S 2>&3 ||
	give_up "no scratch disk"
mkdir -m 1777 $S/tmp
ip link set lo up
modprobe virtio_net 2>&3
for _ in $(seq 50); do [ -e /sys/class/net/eth0 ] && break; sleep 0.1; done
ip link set eth0 up 2>&3
ip addr add "$IP/24" dev eth0 2>&3
for m in rdma_rxe ib_uverbs rdma_ucm; do modprobe $m 2>&3; done
rdma link add rxe0 type rxe netdev eth0 2>&3 || give_up "rdma link add failed"
for _ in $(seq 50); do
	[ -e /dev/infiniband/uverbs0 ] && [ -e /dev/infiniband/rdma_cm ] && break
	sleep 0.1
done
[ -e /dev/infiniband/uverbs0 ] || give_up "no /dev/infiniband/uverbs0"
ulimit -l unlimited
export RDMA_DEV=rxe0 RDMA_IP=$IP HOME=/tmp TMPDIR=$S/tmp LANG=C.UTF-8
log "rxe0 up on eth0 $IP"
cd "$WORK"
: >$CTL/started # from here a lost result is the command's failure
timeout -k 5 "$TIMEOUT" /bin/bash $CTL/cmd >$CTL/out 2>&1 </dev/null
rc=$?
[ $rc = 124 ] && log "command timed out after ${TIMEOUT}s"
echo $rc >$CTL/rc.tmp && mv $CTL/rc.tmp $CTL/rc
off
