#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# bats.sh FILE: run a bats file in the Soft-RoCE guest (vm.sh), TAP on
# stdout, for make test (test/run.sh).  Only a machine that cannot boot
# the guest skips it: then one TAP line "ok 1 FILE # skip ..." with the
# reason, and status 0.  A guest that boots gives bats's own TAP and
# status: a case that fails there is a failure, and so is a guest that
# stops in the middle (vm.sh's 126) or a timeout (124).
set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
[ $# = 1 ] || { echo "usage: test/rdma-vm/bats.sh FILE" >&2; exit 129; }
name=${1##*/}
skip() {
	echo "1..1"
	echo "ok 1 $name # skip cannot boot the RDMA guest: $*"
	exit 0
}
why=$("$HERE/vm.sh" --check) || skip "$why"
err=$(mktemp)
trap 'rm -f "$err"' EXIT
"$HERE/vm.sh" --timeout "${RDMAVM_TIMEOUT:-900}" -- bats --tap "$1" 2>"$err"
rc=$?
if [ $rc = 125 ] && grep -q '^rdma-vm: ' "$err"; then
	cat "$err" >&2 # the guest's setup, QEMU's and the console's logs
	skip "$(grep -m1 '^rdma-vm: ' "$err" | sed 's/^rdma-vm: //')"
fi
cat "$err" >&2
exit $rc
