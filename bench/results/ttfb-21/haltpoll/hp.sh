#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# hp.sh ROUNDS [NS...]: BIG's first byte against the guest's halt polling.
# For each round and each NS (default 0 200000) in turn, sets the haltpoll
# cpuidle driver's guest_halt_poll_ns (how long an idle vCPU polls before
# it halts and the hypervisor must wake it), then runs rtt.py (a loopback
# round trip between CPU 1 and CPU 0) and one round of ../big.sh with
# FIO=1.  The machine's own value is put back at exit.  A diagnosis of the
# machine, not a setting of any benchmark of record.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../../.." && pwd)
p=/sys/module/haltpoll/parameters/guest_halt_poll_ns
[ -w $p ] || { echo "hp.sh: no $p (is cpuidle-haltpoll this guest's driver?)" >&2; exit 1; }
orig=$(cat $p)
trap 'echo $orig >$p' EXIT
R=$1; shift
[ $# -gt 0 ] || set -- 0 200000
for r in $(seq "$R"); do for ns in "$@"; do
	echo "$ns" >$p
	python3 "$here/rtt.py" srv 1 & spid=$!
	sleep 0.3
	rtt=$(python3 "$here/rtt.py" cli 0)
	wait $spid
	big=$(FIO=1 bash "$here/../big.sh" 1 "$root" 2>&1 | grep ' r=1 ' | sed 's/ per-request:.*//')
	echo "round=$r halt_poll_ns=$ns $rtt | $big"
done; done
