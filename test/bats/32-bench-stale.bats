#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# bench/stale.sh and stamp_report (bench/lib.sh): a report names the
# commit it measured under its title, and says at its top when later
# commits changed the code it measures (issue 21, item 2).  The reports
# here are copies in a temporary directory, named as reports of record.

bats_require_minimum_version 1.5.0

ROOT="$BATS_TEST_DIRNAME/../.."

setup() {
	if ! git -C "$ROOT" rev-parse -q --verify HEAD >/dev/null 2>&1; then
		skip "not a git work tree: reports name commits"
	fi
	T="$(mktemp -d "${TMPDIR:-/tmp}/stale-bats.XXXXXX")"
	printf '# A report\n\nbody\n\n```\ngit: 0000000\n```\n' >"$T/vs-vinyl.md"
	# the oldest commit that changed store/: every later one is newer
	# than a report measured on it
	OLD=$(git -C "$ROOT" rev-list HEAD -- store | tail -1)
	OLD=${OLD:0:9}
}

teardown() {
	[ -n "${T:-}" ] && rm -rf "$T"
}

stamp() {
	(root=$ROOT; cd "$T"; . "$ROOT/bench/lib.sh"; stamp_report "$1")
}

@test "stamp_report names the commit under the title, stale.sh keeps a report of today's code as it is" {
	stamp "$T/vs-vinyl.md"
	run -0 sed -n 3p "$T/vs-vinyl.md"
	[[ "$output" =~ ^"Measured on commit "$(git -C "$ROOT" rev-parse --short HEAD) ]]
	cp "$T/vs-vinyl.md" "$T/before"
	run -0 bash "$ROOT/bench/stale.sh" "$T/vs-vinyl.md"
	[[ "$output" == *"measured on today's code"* ]]
	cmp "$T/before" "$T/vs-vinyl.md"
	run -0 bash "$ROOT/bench/stale.sh" --check "$T/vs-vinyl.md"
}

@test "stale.sh says at the top that an old report is older than its code, once, and --check fails" {
	stamp "$T/vs-vinyl.md"
	sed -i "s/^Measured on commit [0-9a-f]*/Measured on commit $OLD/" "$T/vs-vinyl.md"
	run -1 bash "$ROOT/bench/stale.sh" --check "$T/vs-vinyl.md"
	run -1 grep -q "Older than the code" "$T/vs-vinyl.md"
	run -0 bash "$ROOT/bench/stale.sh" "$T/vs-vinyl.md"
	run -0 bash "$ROOT/bench/stale.sh" "$T/vs-vinyl.md"
	run -0 sed -n 3p "$T/vs-vinyl.md"
	[[ "$output" == "> **Older than the code it measures:** measured on $OLD; "* ]]
	run -0 grep -c "Older than the code" "$T/vs-vinyl.md"
	[ "$output" = 1 ]
	# measured again on today's code: the line goes
	sed -i "s/^Measured on commit $OLD/Measured on commit $(git -C "$ROOT" rev-parse --short HEAD)/" "$T/vs-vinyl.md"
	run -0 bash "$ROOT/bench/stale.sh" "$T/vs-vinyl.md"
	run -1 grep -q "Older than the code" "$T/vs-vinyl.md"
	run -0 sed -n 2,3p "$T/vs-vinyl.md"
	[[ "$output" == $'\nMeasured on commit '* ]]
}

@test "a report from before the stamp is dated by its machine section; one with no commit is an error" {
	sed -i "s/^git: 0000000/git: $OLD (working tree has uncommitted changes)/" "$T/vs-vinyl.md"
	run -0 bash "$ROOT/bench/stale.sh" "$T/vs-vinyl.md"
	[[ "$output" == *"commits since $OLD"* ]]
	sed -i "s/^git: .*/git: none/" "$T/vs-vinyl.md"
	run -2 bash "$ROOT/bench/stale.sh" "$T/vs-vinyl.md"
	[[ "$output" == *"names no commit"* ]]
	cp "$T/vs-vinyl.md" "$T/notes.md"
	run -2 bash "$ROOT/bench/stale.sh" "$T/notes.md"
	[[ "$output" == *"not a report of record"* ]]
}
