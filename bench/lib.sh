# SPDX-License-Identifier: BSD-3-Clause
# Shared by the benchmark scripts (sourced): the page cache, a pause for
# the disk, fio's commands, a free port, the emulated HDD, memory
# cgroups, and the machine for the report.

# drop_caches: start a measurement from an empty page cache (root only;
# fails otherwise, for the caller to decide)
drop_caches() {
	sync
	echo 3 >/proc/sys/vm/drop_caches
}

# settle_disk: sync, then pause BENCH_SETTLE seconds (default 15), so
# that one run's writeback is not the next run's load.  (It was added
# against a fast/slow alternation between runs that turned out to be the
# store's buffers landing on scattered pages, not the disk: store/io.c,
# fio_huge below.)
settle_disk() {
	sync
	sleep "${BENCH_SETTLE:-15}"
}

# fio_cmds FILE SIZE: fio_write_cmd (a fresh file) and fio_read_cmd (the
# measured sequential O_DIRECT read, 1 MiB blocks, 8 in flight), both
# with their buffers on huge pages: run them with fio_huge
fio_cmds() {
	fio_write_cmd=(fio --name=write --filename="$1" --direct=1 --rw=write
		--bs=1M --iodepth=8 --ioengine=io_uring --size="$2"
		--refill_buffers=1 --mem=shmhuge --output-format=json)
	fio_read_cmd=(fio --name=seq --filename="$1" --direct=1 --rw=read
		--bs=1M --iodepth=8 --ioengine=io_uring --size="$2"
		--mem=shmhuge --output-format=json)
}

# fio_huge FIO ARGS...: run fio with --mem=shmhuge (its buffers on
# HugeTLB pages), reserving 64 pages for the run and giving them back
# after.  Every fio here is the device's best for a comparison, and an
# O_DIRECT request into buffers on scattered 4 KiB pages is one segment
# per page: this machine's virtio disk has no indirect descriptors, so
# it then holds fewer requests at a time.  Random 256 KiB reads, 64 in
# flight, alternating (2026-11-30): 1293, 2227, 2506 MiB/s with fio's
# malloc buffers against 3142, 3107, 3289 with huge pages.  The store's
# own buffers are on huge pages for the same reason (store/io.c).  Where
# no pages can be reserved (not root, no memory), fio runs with malloc
# buffers and says so on stderr.
fio_huge() {
	local nr=/proc/sys/vm/nr_hugepages old a args=() rc=0
	old=$(cat "$nr")
	if ! { echo $((old + 64)) >"$nr"; } 2>/dev/null ||
	   [ "$(awk '/^HugePages_Free/ { print $2 }' /proc/meminfo)" -lt 16 ]; then
		echo "fio_huge: no free huge pages: fio on malloc buffers" >&2
		for a in "$@"; do
			[ "$a" = --mem=shmhuge ] || args+=("$a")
		done
		set -- "${args[@]}"
	fi
	"$@" || rc=$?
	echo "$old" >"$nr" 2>/dev/null || true
	return $rc
}

# free_port: a free TCP port on loopback
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# hdd_mount HDDEMU BACKING MOUNTPOINT LOG: the emulated HDD (bench/hddemu)
# in the background, its pid in HDD_PID, its stderr in LOG; returns once
# mounted, or fails with LOG on stderr
hdd_mount() {
	"$1" -f "$2" "$3" 2>"$4" &
	HDD_PID=$!
	for _ in $(seq 50); do mountpoint -q "$3" && return 0; sleep 0.1; done
	cat "$4" >&2
	return 1
}

# hdd_unmount MOUNTPOINT: unmount what hdd_mount mounted there, and wait
# for hddemu to exit (it prints its counters to its LOG)
hdd_unmount() {
	[ -n "${HDD_PID:-}" ] || return 0
	fusermount3 -u "$1" 2>/dev/null || true
	wait "$HDD_PID" 2>/dev/null || true
	HDD_PID=
}

# machine_info DIR ROOT: the machine, DIR's file system and ROOT's commit
machine_info() {
	echo "nproc: $(nproc)"
	echo "uname -r: $(uname -r)"
	echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
	# an idle vCPU that halts costs the next wake-up tens of us: the
	# first-byte figures depend on it (ttfb-21.md, section 9)
	local virt idle hp=/sys/module/haltpoll/parameters/guest_halt_poll_ns
	virt=$(systemd-detect-virt --vm 2>/dev/null) || virt=${virt:-unknown}
	idle=$(cat /sys/devices/system/cpu/cpuidle/current_driver 2>/dev/null) ||
		idle=none
	[ ! -r $hp ] || idle="$idle, guest_halt_poll_ns $(cat $hp)"
	echo "hypervisor: $virt, cpuidle $idle"
	# bbr without fq paces every TCP socket with a timer, loopback too:
	# a third of goblind's CPU in case 1 on one VM (case1-21.md)
	echo "tcp: congestion control $(sysctl -n net.ipv4.tcp_congestion_control 2>/dev/null || echo unknown), default qdisc $(sysctl -n net.core.default_qdisc 2>/dev/null || echo unknown)${LOOPBACK_CC_SAVED[0]:+; loopback connections of this run: $(ip route show table local exact 127.0.0.1/32 | grep -o 'congctl [^ ]*') (--tcp-congestion)}"
	echo "free -g:"; free -g
	echo "df -h $1:"; df -h "$1"
	echo "fs: $(findmnt -n -o FSTYPE,OPTIONS -T "$1" 2>/dev/null || true)"
	echo "fio: $(fio --version)"
	echo "git: $(bench_commit "$2") (at the end; at the start: $bench_started_on)"
}

# bench_commit ROOT: ROOT's commit, and the files of its work tree that
# differ from it, bench/results/ (the reports themselves) not counted:
# "2326b6a" or "2326b6a with uncommitted changes to netd/worker.c"
bench_commit() {
	local c changed
	c=$(git -C "$1" rev-parse --short HEAD 2>/dev/null) ||
		{ echo "no commit yet"; return; }
	changed=$(git -C "$1" status --porcelain -- . ':!bench/results' \
		2>/dev/null | cut -c4- | tr '\n' ' ' | sed 's/ $//; s/ /, /g')
	echo "$c${changed:+ with uncommitted changes to $changed}"
}

# The commit of the work tree a benchmark started on, and when: the
# caller sets root before it sources this file
bench_started_on="$(bench_commit "${root:-.}"), $(date -u '+%Y-%m-%d %H:%M') UTC"

# stamp_report FILE: put the commit the run measured (as it started)
# under a report's title, its second line, where bench/stale.sh and the
# report's readers find it
stamp_report() {
	sed -i "1a\\\nMeasured on commit $bench_started_on." "$1"
}

# mem_cgroup NAME BYTES: a memory cgroup (v1) NAME below this shell's
# own, limited to BYTES of memory that counts the page cache too (a
# server's buffered file reads are charged to it); prints its directory.
# Fails where there is no v1 memory controller to write to.
mem_cgroup() {
	local own cg
	own=$(awk -F: '$2 == "memory" { print $3 }' /proc/self/cgroup)
	[ -n "$own" ] || return 1
	cg=/sys/fs/cgroup/memory${own%/}/$1
	[ -d "$cg" ] || mkdir "$cg" 2>/dev/null || return 1
	echo "$2" >"$cg/memory.limit_in_bytes" 2>/dev/null || return 1
	# one left by a run that died: its peak and failures start again
	echo 0 >"$cg/memory.max_usage_in_bytes"
	echo 0 >"$cg/memory.failcnt"
	echo "$cg"
}

# mem_cgroup_report CG: "peak=MIB cache=MIB failcnt=N" of a memory cgroup
mem_cgroup_report() {
	awk -v peak="$(cat "$1/memory.max_usage_in_bytes")" \
	    -v fail="$(cat "$1/memory.failcnt")" \
		'$1 == "total_cache" { c = $2 } END {
		printf "peak=%.0f cache=%.0f failcnt=%d\n",
			peak / 1048576, c / 1048576, fail }' "$1/memory.stat"
}

# loopback_cc NAME: every loopback connection made from now on, both its
# ends, whichever program makes it, on TCP congestion control NAME, by a
# congctl on the local table's 127.0.0.0/8 and 127.0.0.1 routes, until
# loopback_cc_restore puts those routes back as they were.  For running
# every server of a comparison unpaced alike when the machine's default
# is bbr without fq (case1-21.md: such a socket arms a timer for its
# pacing).  An empty NAME changes nothing.
LOOPBACK_CC_SAVED=()
loopback_cc() {
	local r dst words
	[ -n "$1" ] || return 0
	grep -qw -- "$1" /proc/sys/net/ipv4/tcp_available_congestion_control || {
		echo "no TCP congestion control '$1' in this kernel (it has:" \
			"$(cat /proc/sys/net/ipv4/tcp_available_congestion_control))" >&2
		return 1
	}
	for dst in 127.0.0.0/8 127.0.0.1/32; do
		r=$(ip route show table local exact "$dst")
		[ -n "$r" ] || continue
		LOOPBACK_CC_SAVED+=("$r")
		read -ra words <<<"${r% congctl *}"
		ip route replace table local "${words[@]}" congctl "$1"
	done
}
loopback_cc_restore() {
	local r words
	for r in "${LOOPBACK_CC_SAVED[@]}"; do
		read -ra words <<<"$r"
		ip route replace table local "${words[@]}"
	done
	LOOPBACK_CC_SAVED=()
}

# net_up NAME RATE: two network namespaces, NAME-s (the server's, 10.252.0.1)
# and NAME-c (the client's, 10.252.0.2), joined by a veth pair whose two
# ends each send through a token bucket of RATE (tc's units: 10gbit,
# 1gbit), as a cache server's NIC and its client's would.  Nothing leaves
# the two namespaces; net_down NAME removes them (and the pair with them).
net_up() {
	local n=$1 rate=$2 end
	net_down "$n"
	ip netns add "$n-s"
	ip netns add "$n-c"
	ip link add "$n-vs" type veth peer name "$n-vc"
	ip link set "$n-vs" netns "$n-s"
	ip link set "$n-vc" netns "$n-c"
	ip -n "$n-s" addr add 10.252.0.1/24 dev "$n-vs"
	ip -n "$n-c" addr add 10.252.0.2/24 dev "$n-vc"
	for end in s c; do
		ip -n "$n-$end" link set lo up
		ip -n "$n-$end" link set "$n-v$end" up
		# a burst of 1 ms at the rate (at least 64 KiB: one TSO
		# segment), queued up to 20 ms as a switch port might
		tc -n "$n-$end" qdisc add dev "$n-v$end" root tbf rate "$rate" \
			burst "$(tbf_burst "$rate")" latency 20ms
	done
}

# tbf_burst RATE: 1 ms of RATE in bytes, at least 64 KiB
tbf_burst() {
	python3 - "$1" <<'PY'
import re, sys
m = re.fullmatch(r"(\d+(?:\.\d+)?)([kmg]?)bit", sys.argv[1])
bits = float(m.group(1)) * {"": 1, "k": 1e3, "m": 1e6, "g": 1e9}[m.group(2)]
print(max(65536, int(bits / 8 / 1000)))
PY
}

net_down() {
	ip netns del "$1-s" 2>/dev/null || true
	ip netns del "$1-c" 2>/dev/null || true
}
