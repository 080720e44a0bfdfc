#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# goblind over RDMA verbs (issue 22), on a real verbs stack: Soft-RoCE
# (rdma_rxe) in a QEMU guest.  make test runs this file once inside the
# guest through test/rdma-vm/vm.sh (test/run.sh); the host's own bats run
# leaves it out.  Correctness only: under emulation speed means nothing.

load goblind

setup() {
	if [ -z "${RDMA_DEV:-}" ] || [ ! -e /dev/infiniband/uverbs0 ]; then
		skip "no RDMA device: this file runs in the guest (test/rdma-vm/vm.sh -- bats test/bats/76-rdma.bats)"
	fi
}

@test "issue 22: the guest has an active Soft-RoCE port" {
	run ibv_devinfo -d "$RDMA_DEV"
	[ "$status" -eq 0 ]
	[[ "$output" == *"PORT_ACTIVE"* ]]
	[[ "$output" == *"link_layer:		Ethernet"* ]]
}
