#!/usr/bin/env bash
# Run every unit test binary (cmocka, TAP output), replay every fuzz corpus,
# run every bats file, and end with one line: "N passed, N failed, N skipped".
# A skipped test (TAP "ok ... # skip") is counted as skipped, not passed.
set -u
cd "$(dirname "$0")/.."
pass=0 fail=0 skip=0 log=$(mktemp)
trap 'rm -f "$log"' EXIT

count() {	# count TAP results in $log, echoing failures and skips
	local p f s
	s=$(grep -ciE '^ok .*# skip' "$log")
	p=$(($(grep -cE '^ok ' "$log") - s))
	f=$(grep -cE '^not ok ' "$log")
	# each failure with the diagnostics that follow it ("# ..." lines)
	awk '/^not ok /{d=1; print "  FAIL: " $0; next}
	     /^(ok|not ok) /{d=0}
	     d && /^#/{print "    " $0}' "$log"
	grep -iE '^ok .*# skip' "$log" | sed 's/^/  SKIP: /'
	pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
	echo "  $p passed, $f failed, $s skipped"
}

for t in build/test/test_*; do
	[ -x "$t" ] || continue
	echo "unit: $t"
	CMOCKA_MESSAGE_OUTPUT=TAP "$t" >"$log" 2>&1
	rc=$?
	count
	if [ $rc -ne 0 ] && ! grep -qE '^not ok ' "$log"; then
		echo "  FAIL: $t exited $rc without a failing test:"
		tail -20 "$log" | sed 's/^/    /'
		fail=$((fail + 1))
	fi
done

for f in build/fuzz/fuzz_*; do	# replay each fuzz target's corpus
	[ -x "$f" ] || continue
	n=$(basename "$f") corpus=test/fuzz/corpus_${n#fuzz_}
	[ -d "$corpus" ] || continue
	if "$f" -runs=0 "$corpus" >"$log" 2>&1; then
		echo "fuzz: $n corpus replay: ok"
		pass=$((pass + 1))
	else
		echo "fuzz: $n corpus replay: FAIL"
		tail -20 "$log" | sed 's/^/    /'
		fail=$((fail + 1))
	fi
done

# 76-rdma.bats needs a verbs stack: it runs in the guest below, not here
host_bats=$(ls test/bats/*.bats 2>/dev/null | grep -v '/76-rdma\.bats$')
if [ -n "$host_bats" ]; then
	echo "bats: test/bats"
	# shellcheck disable=SC2086 # the file names have no spaces
	bats --tap $host_bats >"$log" 2>&1
	rc=$?
	count
	if [ $rc -ne 0 ] && ! grep -qE '^not ok ' "$log"; then
		echo "  FAIL: bats exited $rc:"
		tail -20 "$log" | sed 's/^/    /'
		fail=$((fail + 1))
	fi
fi

# One guest boot (Soft-RoCE under QEMU, test/rdma-vm) runs the RDMA file;
# a machine that cannot boot the guest counts it as skipped, with why
# (test/rdma-vm/bats.sh); a guest that boots and fails is a failure.
if [ -f test/bats/76-rdma.bats ]; then
	echo "rdma: test/bats/76-rdma.bats in a Soft-RoCE guest"
	test/rdma-vm/bats.sh test/bats/76-rdma.bats >"$log" 2>&1
	rc=$?
	count
	if [ $rc -ne 0 ] && ! grep -qE '^not ok ' "$log"; then
		echo "  FAIL: the RDMA guest exited $rc:"
		tail -40 "$log" | sed 's/^/    /'
		fail=$((fail + 1))
	fi
fi

echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
