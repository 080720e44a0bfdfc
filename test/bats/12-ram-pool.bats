#!/usr/bin/env bats
# The RAM pools: HugeTLB pages when reserved, ordinary pages otherwise;
# mlock unless --no-mlock.

load goblinctl

hp=/proc/sys/vm/nr_hugepages

@test "the head pool uses reserved HugeTLB pages and says so" {
	[ "$(id -u)" = 0 ] && [ -w "$hp" ] || skip "needs root to reserve HugeTLB pages"
	old=$(cat "$hp")
	free=$(awk '/HugePages_Free/ { print $2 }' /proc/meminfo)
	# 64 MiB of heads + 16 MiB small arena = 40 pages of 2 MiB
	echo $((old + 40)) >"$hp"
	now=$(awk '/HugePages_Free/ { print $2 }' /proc/meminfo)
	if [ "$now" -lt $((free + 40)) ]; then
		echo "$old" >"$hp"
		skip "the kernel could not reserve 40 more HugeTLB pages"
	fi
	run g --memory 64M --small-memory 16M --show-stats put k /etc/hostname
	echo "$old" >"$hp"
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | awk '$1 == "hugetlb" { print $2 }')" = 1 ]
	[ "$(echo "$output" | awk '$1 == "ram_capacity" { print $2 }')" = 67108864 ]
}

@test "without reserved pages the pool falls back to ordinary pages" {
	run g --memory 8M --no-hugetlb --show-stats put k /etc/hostname
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | awk '$1 == "hugetlb" { print $2 }')" = 0 ]
	[ "$(echo "$output" | awk '$1 == "ram_capacity" { print $2 }')" = 8388608 ]
	[ "$(echo "$output" | awk '$1 == "ram_slots" { print $2 }')" = 32 ]
}

@test "the pools are mlocked unless --no-mlock" {
	[ "$(ulimit -l)" = unlimited ] || [ "$(id -u)" = 0 ] || skip "RLIMIT_MEMLOCK too small to lock the pool"
	run g --memory 8M --show-stats put k /etc/hostname
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | awk '$1 == "mlocked" { print $2 }')" = 1 ]
	run g --memory 8M --no-mlock --show-stats put k /etc/hostname
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | awk '$1 == "mlocked" { print $2 }')" = 0 ]
}
