#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# The README's commands work as written (issue 15): every ```sh block but
# the first (the two commands themselves, which fresh-machine.sh and CI
# run), in order, in one shell, from a directory laid out like the project's,
# against a goblind of the test's own started as `make run` starts it.  Only
# what the machine owns is changed: the ports (11211, 8080: the test's
# goblind's) and the mount point (/mnt/cache: the test's).

bats_require_minimum_version 1.5.0

load goblind

TOP="$BATS_TEST_DIRNAME/../.."

setup() {
	gd_setup goblin-readme
	M="$T/mnt"
}

teardown() {
	gd_teardown
}

@test "issue 15: the README's commands run as written, in order" {
	[ -e /dev/fuse ] || skip "no /dev/fuse: the README mounts goblinfs"
	command -v getfattr >/dev/null || skip "no getfattr (package attr)"
	local b=0
	# ```sh blocks: a file each, the first left out
	awk -v d="$T/blocks" '
		/^```sh$/ { n++; on = 1; f = sprintf("%s.%02d", d, n); next }
		/^```/ { on = 0; next }
		on { print > f }' "$TOP/README.md"
	[ -f "$T/blocks.02" ]
	grep -q 'make run' "$T/blocks.01"
	# the project's layout, minus what the commands make
	mkdir "$T/w"
	ln -s "$(cd "$TOP" && pwd)/build" "$T/w/build"
	cp -r "$TOP/man" "$T/w/man"
	mkdir "$T/w/var"	# make run made it
	# goblind as netd/run.sh starts it, on ports of its own
	gd_start var-store --memory 64M
	for f in "$T"/blocks.*; do
		[ "$f" = "$T/blocks.01" ] && continue
		sed -e "s/11211/$PORT/g" -e "s/8080/$HPORT/g" \
		    -e "s|/mnt/cache|$M|g" "$f" >>"$T/script"
	done
	# it must say what it needs: the substitutions took
	! grep -qE '11211|8080|/mnt/cache' "$T/script"
	cd "$T/w"
	run bash -ex "$T/script"
	[ "$status" = 0 ] || { echo "$output" | tail -40; false; }
	# what the blocks showed, beyond their exit codes
	[[ "$output" == *"VALUE hello 0 6"* ]]
	[[ "$output" == *"ram="* ]]
	[[ "$output" == *"goblin_"* ]]
	grep -q 'p50' <<<"$output"
	! mountpoint -q "$M"
}
