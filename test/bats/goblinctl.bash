# SPDX-License-Identifier: BSD-3-Clause
# Shared by the goblinctl bats files: a temp dir per test, the binary, and
# small helpers.  GOBLINCTL overrides the binary (e.g. an installed one).

GCTL="${GOBLINCTL:-$BATS_TEST_DIRNAME/../../build/goblinctl}"
BG_PIDS=()

setup() {
	if [ ! -x "$GCTL" ]; then
		echo "goblinctl is not built: $GCTL" >&2
		return 1
	fi
	T="$(mktemp -d "${TMPDIR:-/tmp}/goblinctl-bats.XXXXXX")"
	S="$T/store"
	unset GOBLIN_STORE
}

teardown() {
	local p
	for p in "${BG_PIDS[@]}"; do
		kill "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	[ -n "${T:-}" ] && rm -rf "$T"
}

# goblinctl on this test's store
g() {
	"$GCTL" --store "$S" "$@"
}

# mkrand FILE BYTES: random content
mkrand() {
	head -c "$2" /dev/urandom >"$1"
}

# stat_field KEY NAME: one field of `goblinctl stat`
stat_field() {
	g stat "$1" | awk -v n="$2" '$1 == n { print $2 }'
}

# stats_field NAME [FILE]: one counter of `goblinctl stats` (or of FILE)
stats_field() {
	if [ -n "${2:-}" ]; then
		awk -v n="$1" '$1 == n { print $2 }' "$2"
	else
		g stats | awk -v n="$1" '$1 == n { print $2 }'
	fi
}

# roundtrip KEY BYTES: put a random file, get it back, compare
roundtrip() {
	mkrand "$T/in.$1" "$2"
	g put "$1" "$T/in.$1"
	g get "$1" >"$T/out.$1"
	cmp "$T/in.$1" "$T/out.$1"
	[ "$(stat_field "$1" size)" = "$2" ]
}

# reserve_hugepages N: N more HugeTLB pages reserved, or skip the test;
# release_hugepages gives them back
reserve_hugepages() {
	HP=/proc/sys/vm/nr_hugepages
	[ "$(id -u)" = 0 ] && [ -w "$HP" ] || skip "needs root to reserve HugeTLB pages"
	HP_OLD=$(cat "$HP")
	local free now
	free=$(awk '/HugePages_Free/ { print $2 }' /proc/meminfo)
	echo $((HP_OLD + $1)) >"$HP"
	now=$(awk '/HugePages_Free/ { print $2 }' /proc/meminfo)
	if [ "$now" -lt $((free + $1)) ]; then
		echo "$HP_OLD" >"$HP"
		skip "the kernel could not reserve $1 more HugeTLB pages"
	fi
}

release_hugepages() {
	echo "$HP_OLD" >"$HP"
}
