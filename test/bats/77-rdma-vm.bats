#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# test/rdma-vm/bats.sh, which make test runs 76-rdma.bats through (issue
# 22): only a guest that cannot boot makes a skip, with the reason; a
# guest that boots and fails a case is a failure.  On the host.

bats_require_minimum_version 1.5.0

VMBATS="$BATS_TEST_DIRNAME/../rdma-vm/bats.sh"
VMSH="$BATS_TEST_DIRNAME/../rdma-vm/vm.sh"

@test "issue 22: a guest that cannot boot (no kernel that loads) is one skip with the reason" {
	"$VMSH" --check || skip "no QEMU or kernel here: $("$VMSH" --check)"
	echo "not a kernel" >"$BATS_TEST_TMPDIR/vmlinuz"
	RDMAVM_KERNEL="$BATS_TEST_TMPDIR/vmlinuz" run -0 --separate-stderr "$VMBATS" \
		"$BATS_TEST_DIRNAME/76-rdma.bats"
	[ "${lines[0]}" = "1..1" ]
	[[ "${lines[1]}" == "ok 1 76-rdma.bats # skip cannot boot the RDMA guest: the guest did not boot"* ]]
	[[ "$stderr" == *"--- rdma-vm: qemu ---"* ]] # its log, for the why
}

@test "issue 22: a guest that boots and fails a case fails, and one that passes passes" {
	"$VMSH" --check || skip "no QEMU or kernel here: $("$VMSH" --check)"
	# in the work tree: the guest sees the host's /tmp not at all
	d="$BATS_TEST_DIRNAME/../../build/test"
	mkdir -p "$d"
	# (printf: bats would take a test line in a here-document for ours)
	t=@test
	printf '%s "passes in the guest" { [ -e /dev/infiniband/uverbs0 ]; }\n%s "fails in the guest" { [ "$RDMA_DEV" = not-rxe0 ]; }\n' \
		"$t" "$t" >"$d/rdma-vm-cases.bats"
	cd "$BATS_TEST_DIRNAME/../.."
	run -1 "$VMBATS" build/test/rdma-vm-cases.bats
	rm -f "$d/rdma-vm-cases.bats"
	[[ "$output" == *"ok 1 passes in the guest"* ]]
	[[ "$output" == *"not ok 2 fails in the guest"* ]]
}
