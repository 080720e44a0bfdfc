#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# goblinctl with an object much larger than its RAM: a 1 GiB put and get
# with --memory 64M must stream, never hold the object: peak RSS < 128 MiB.

bats_require_minimum_version 1.5.0
load goblinctl

# peak_rss_kib FILE: "Maximum resident set size" from /usr/bin/time -v
peak_rss_kib() {
	awk -F': *' '/Maximum resident set size/ { print $2 }' "$1"
}

@test "1 GiB put and get with --memory 64M: byte-exact, peak RSS under 128 MiB" {
	[ -x /usr/bin/time ] || skip "GNU time (/usr/bin/time) is not installed"
	local gib=1073741824 rss
	dd if=/dev/urandom of="$T/big" bs=1M count=1024 status=none
	[ "$(stat -c %s "$T/big")" -eq "$gib" ]

	/usr/bin/time -v -o "$T/time.put" \
		"$GCTL" --store "$S" --memory 64M put big "$T/big"
	rss="$(peak_rss_kib "$T/time.put")"
	echo "put: peak RSS $rss KiB"
	[ -n "$rss" ]
	[ "$rss" -lt 131072 ]
	[ "$(stat_field big size)" = "$gib" ]

	# to a pipe: streamed chunk by chunk, compared as it arrives
	set -o pipefail
	/usr/bin/time -v -o "$T/time.get" \
		"$GCTL" --store "$S" --memory 64M get big | cmp - "$T/big"
	rss="$(peak_rss_kib "$T/time.get")"
	echo "get: peak RSS $rss KiB"
	[ -n "$rss" ]
	[ "$rss" -lt 131072 ]
	grep -q 'Exit status: 0' "$T/time.get"
}

@test "a 100 MiB put from a pipe is spooled, stored whole, RSS bounded" {
	[ -x /usr/bin/time ] || skip "GNU time (/usr/bin/time) is not installed"
	local rss
	dd if=/dev/urandom of="$T/src" bs=1M count=100 status=none
	cat "$T/src" | /usr/bin/time -v -o "$T/time.put" \
		"$GCTL" --store "$S" --memory 64M put piped
	rss="$(peak_rss_kib "$T/time.put")"
	echo "put: peak RSS $rss KiB"
	[ "$rss" -lt 131072 ]
	g --memory 64M get piped -o "$T/out"
	cmp "$T/src" "$T/out"
}
