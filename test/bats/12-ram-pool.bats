#!/usr/bin/env bats
# The RAM pools: HugeTLB pages when reserved, ordinary pages otherwise;
# mlock unless --no-mlock.

load goblinctl

@test "the head pool uses reserved HugeTLB pages and says so" {
	# 64 MiB of heads + 16 MiB small arena = 40 pages of 2 MiB
	reserve_hugepages 40
	run g --memory 64M --small-memory 16M --show-stats put k /etc/hostname
	release_hugepages
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
