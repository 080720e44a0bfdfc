#!/usr/bin/env bats
# NUMA: --numa opens the store on a node (test_numa.c checks the binding),
# a node the machine lacks is an error, and the counters are there.  Moving blocks between nodes needs two
# nodes; test/unit/test_numa.c simulates them.

load goblinctl

stat_of() {	# stat_of NAME: a counter from the --show-stats output in $output
	echo "$output" | awk -v n="$1" '$1 == n { print $2 }'
}

@test "--numa 0 opens the store on node 0 and it works" {
	echo hello >"$T/v"
	run g --numa 0 --show-stats put k "$T/v"
	[ "$status" -eq 0 ]
	[ "$(stat_of numa_nodes)" -ge 1 ]
	run g --numa 0 get k
	[ "$status" -eq 0 ]
	[ "$output" = hello ]
}

@test "--numa with a node the machine does not have says so" {
	n=$(ls -d /sys/devices/system/node/node[0-9]* 2>/dev/null | wc -l)
	[ "$n" -ge 1 ] || n=1
	run g --numa "$n" put k /etc/hostname
	[ "$status" -eq 128 ]
	[[ "$output" == *"--numa $n: no such NUMA node"* ]]
}

@test "--numa with a malformed node is a usage error" {
	run g --numa x stats
	[ "$status" -eq 129 ]
	[[ "$output" == *"invalid value 'x' for --numa"* ]]
	run g --numa 64 stats
	[ "$status" -eq 129 ]
}

@test "the NUMA counters are listed and idle without traffic to move" {
	g --memory 8M put k /etc/hostname
	run g --memory 8M --no-numa-promotion stats
	[ "$status" -eq 0 ]
	for c in numa_nodes numa_promotions numa_bytes_moved \
		 numa_swap_ns_total numa_swap_ns_max numa_move_failures; do
		[ -n "$(stat_of $c)" ]
	done
	[ "$(stat_of numa_promotions)" = 0 ]
	[ "$(stat_of numa_move_failures)" = 0 ]
}

@test "--perverse on one node is refused, with the reason" {
	g --memory 8M put k /etc/hostname
	nodes=$(g stats | awk '$1 == "numa_nodes" { print $2 }')
	[ "$nodes" = 1 ] || skip "this machine has $nodes NUMA nodes"
	run g --perverse stats
	[ "$status" -eq 128 ]
	[[ "$output" == *"--perverse needs two NUMA nodes"* ]]
}

@test "--numa 0 with reserved HugeTLB pages keeps them" {
	reserve_hugepages 8	# 8 MiB of heads + 8 MiB small arena
	run g --numa 0 --memory 8M --small-memory 8M --show-stats put k /etc/hostname
	release_hugepages
	[ "$status" -eq 0 ]
	[ "$(stat_of hugetlb)" = 1 ]
}
