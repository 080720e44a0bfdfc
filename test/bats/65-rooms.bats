#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# The tree keeps its rooms (issue 17): no source file of store/, netd/, fs/
# or cli/ over 1,000 lines, no long function without a reason above it, no
# circle of calls between the files of a folder, and netd/worker.c names no
# protocol.  test/rooms_check.py is first shown to catch each of these on a
# small tree made for it.

bats_require_minimum_version 1.5.0

ROOT="$BATS_TEST_DIRNAME/../.."
RC="$ROOT/test/rooms_check.py"

setup() {
	T="$(mktemp -d "${TMPDIR:-/tmp}/goblin-rooms.XXXXXX")"
}

teardown() {
	rm -rf "$T"
}

# obj FOLDER NAME SOURCE: write FOLDER/NAME.c and compile it under build/
obj() {
	mkdir -p "$T/$1" "$T/build/$1"
	printf '%s\n' "$3" >"$T/$1/$2.c"
	cc -c -o "$T/build/$1/$2.o" "$T/$1/$2.c"
}

@test "issue 17: rooms_check finds a circle of calls between two files" {
	obj store a 'int b(void); int a(void) { return b(); }'
	obj store c 'int a(void); int c(void) { return a(); }'
	run -0 python3 "$RC" --root "$T" store
	obj store b 'int c(void); int b(void) { return c(); }'
	run -1 python3 "$RC" --root "$T" store
	[[ "$output" == *"store: files call each other in a circle"* ]]
	[[ "$output" == *"a->b (b)"* && "$output" == *"b->c (c)"* &&
	   "$output" == *"c->a (a)"* ]]
}

@test "issue 17: rooms_check finds a long file and a long function" {
	body=$(for i in $(seq 101); do echo "	x += $i;"; done)
	obj fs f "$(printf 'int\nf(int x)\n{\n%s\n\treturn x;\n}\n' "$body")"
	run -1 python3 "$RC" --root "$T" fs
	[[ "$output" == *"fs/f.c:1: f() is 102 lines with no comment above"* ]]
	# a comment just above it, saying why, lets it pass
	obj fs f "$(printf '/* one table */\nint\nf(int x)\n{\n%s\n\treturn x;\n}\n' "$body")"
	run -0 python3 "$RC" --root "$T" fs
	seq 1001 | sed 's/.*/int v&;/' >"$T/fs/g.h"
	run -1 python3 "$RC" --root "$T" fs
	[[ "$output" == "fs/g.h: 1001 lines (more than 1000)" ]]
}

@test "issue 17: rooms_check finds a protocol named in netd/worker.c" {
	obj netd worker '/* memcache and http reach us by ops */ int w(void) { return 0; }'
	run -0 python3 "$RC" --root "$T" netd
	obj netd worker 'int mc_conn_run(void); int w(void) { return mc_conn_run(); }'
	run -1 python3 "$RC" --root "$T" netd
	[[ "$output" == *"netd/worker.c:1: names a protocol: mc_conn_run"* ]]
}

@test "issue 17: the tree keeps its rooms" {
	run python3 "$RC" --root "$ROOT"
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "issue 17: make format-check fails on code not in the house style" {
	printf 'int f(void){return 1;}\n' >"$T/bad.c"
	printf 'int f(void)\n{\n\treturn 1;\n}\n' >"$T/good.c"
	run -0 make -s -C "$ROOT" format-check FORMAT_SRC="$T/good.c"
	[[ "$output" == "format-check: 1 files in the house style" ]]
	run -2 make -s -C "$ROOT" format-check FORMAT_SRC="$T/good.c $T/bad.c"
	[[ "$output" == *"bad.c:1:12: error: code should be clang-formatted"* ]]
}

@test "issue 17: the tree is in the house style (.clang-format)" {
	run make -s -C "$ROOT" format-check
	echo "$output" | head -40
	[ "$status" -eq 0 ]
}
