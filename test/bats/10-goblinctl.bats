#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# goblinctl on an offline store, end to end: every command, its output,
# its error messages and exit codes.  Each goblinctl call opens the store
# afresh, so every check after a put is also a check of persistence.

bats_require_minimum_version 1.5.0
load goblinctl

@test "put/get round trip at sizes around the head and the io chunk" {
	local n
	for n in 0 1 1000 65536 262143 262144 262145 1048576 5242880; do
		roundtrip "k$n" "$n"
	done
	run -0 g ls
	[ "${#lines[@]}" -eq 9 ]
}

@test "put reads standard input: pipe, '-', redirected file" {
	mkrand "$T/in" 700001
	cat "$T/in" | g put piped
	cat "$T/in" | g put dashed -
	g put redirected <"$T/in"
	for k in piped dashed redirected; do
		g get "$k" >"$T/out"
		cmp "$T/in" "$T/out"
	done
	# an empty pipe is an empty object
	g put empty </dev/null
	[ "$(stat_field empty size)" = 0 ]
	# no spool file is left in the store directory
	run -0 find "$S" -maxdepth 1 -name '.goblinctl-spool*'
	[ -z "$output" ]
}

@test "put replaces: get returns the new value and a new cas" {
	printf 'first' | g put k
	local cas1
	cas1="$(stat_field k cas)"
	printf 'second value' | g put k
	run -0 g get k
	[ "$output" = "second value" ]
	[ "$(stat_field k cas)" -gt "$cas1" ]
	run -0 g ls
	[ "$output" = k ]
}

@test "get -o writes the file, replaces it whole, leaves no temp file" {
	mkrand "$T/in" 300000
	g put k "$T/in"
	echo old >"$T/out"
	g get k -o "$T/out"
	cmp "$T/in" "$T/out"
	g get --output "$T/out2" k
	cmp "$T/in" "$T/out2"
	run -0 find "$T" -maxdepth 1 -name '*.goblinctl-*'
	[ -z "$output" ]
	# a miss leaves the target alone
	echo keep >"$T/keep"
	run -1 g get nosuch -o "$T/keep"
	[ "$(cat "$T/keep")" = keep ]
}

@test "del removes the key; get, stat, inspect, del of it exit 1" {
	echo hi | g put k
	g del k
	run -1 g get k
	[ "$output" = "goblinctl: no such key 'k'" ]
	run -1 g stat k
	[ "$output" = "goblinctl: no such key 'k'" ]
	run -1 g inspect k
	[ "$output" = "goblinctl: no such key 'k'" ]
	run -1 g del k
	[ "$output" = "goblinctl: no such key 'k'" ]
	run -0 g ls
	[ -z "$output" ]
}

@test "get of a missing key: message on stderr, nothing on stdout" {
	echo x | g put other
	run -1 --separate-stderr g get missing
	[ -z "$output" ]
	[ "$stderr" = "goblinctl: no such key 'missing'" ]
}

@test "ls lists sorted keys, filters by prefix, -l shows size and time" {
	local k
	for k in b/2 a/1 b/1 c a/10 b/3; do
		printf '%s' "$k" | g put "$k"
	done
	run -0 g ls
	[ "$output" = "$(printf '%s\n' a/1 a/10 b/1 b/2 b/3 c)" ]
	run -0 g ls b/
	[ "$output" = "$(printf '%s\n' b/1 b/2 b/3)" ]
	run -0 g ls a/1
	[ "$output" = "$(printf '%s\n' a/1 a/10)" ]
	run -0 g ls zzz
	[ -z "$output" ]
	run -0 g ls -l b/
	[ "${#lines[@]}" -eq 3 ]
	# size, ISO time, key
	[[ "${lines[0]}" =~ ^\ *3\ [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}[-+][0-9]{4}\ b/1$ ]]
	run -0 g ls b/ -l
	[ "${#lines[@]}" -eq 3 ]
}

@test "stat shows size, flags, exptime, cas, mtime and the XXH3" {
	local before after exp
	printf 'goblin\n' | g put --flags 42 k
	run -0 g stat k
	[ "${lines[0]}" = "key k" ]
	[ "$(stat_field k size)" = 7 ]
	[ "$(stat_field k flags)" = 42 ]
	[ "$(stat_field k exptime)" = 0 ]
	[ "$(stat_field k xxh3)" = de81073f6afeca39 ]
	[ "$(stat_field k cas)" -gt 0 ]
	[[ "$(stat_field k mtime)" =~ ^$(date +%Y)-[0-9]{2}-[0-9]{2}T ]]
	g put empty </dev/null
	[ "$(stat_field empty xxh3)" = 2d06800538d394c2 ]
	# flags are 32 bits, hex accepted
	printf x | g put --flags 0xffffffff big
	[ "$(stat_field big flags)" = 4294967295 ]
	before="$(date +%s)"
	printf x | g put --ttl 3600 t
	after="$(date +%s)"
	exp="$(stat_field t exptime)"
	[ "$exp" -ge $((before + 3600)) ]
	[ "$exp" -le $((after + 3600)) ]
}

@test "an expired object is a miss" {
	printf x | g put --ttl 1 short
	printf y | g put long
	sleep 2.2
	run -1 g get short
	[ "$output" = "goblinctl: no such key 'short'" ]
	run -0 g ls
	[ "$output" = long ]
}

@test "inspect: a 1 MiB object has RAM and SSD ranges, a tiny one SMALL" {
	mkrand "$T/big" 1048576
	g put big "$T/big"
	echo tiny | g put tiny
	# a fresh process has no heads in RAM unless they are preloaded
	run -0 g --preload-heads inspect big
	echo "$output"
	[[ "$output" =~ (^|$'\n')RAM\ + ]]
	[[ "$output" =~ (^|$'\n')SSD\ + ]]
	# the SSD ranges hold the whole tail, up to the last byte
	run -0 awk '$1 == "SSD" { if ($2 + $3 > end) end = $2 + $3 }
		END { print end }' <<<"$output"
	[ "$output" = 1048576 ]
	run -0 g inspect tiny
	[ "${#lines[@]}" -eq 1 ]
	[[ "${lines[0]}" =~ ^SMALL\ +0\ +5\ +-$ ]]
}

@test "stats: one 'name value' line per field; counters follow puts" {
	printf a | g put one
	run -0 g stats
	local f
	for f in objects small_objects bytes gets puts csum_failures \
		ram_capacity ssd_capacity ssd_read_hist_0 ssd_read_hist_15 \
		hugetlb mlocked; do
		[[ "$output" =~ (^|$'\n')$f\ [0-9]+($'\n'|$) ]]
	done
	# every line is a name and a number
	run -0 awk 'NF != 2 || $2 !~ /^[0-9]+$/' <<<"$output"
	[ -z "$output" ]
	[ "$(stats_field objects)" = 1 ]
	[ "$(stats_field bytes)" = 1 ]
	mkrand "$T/f" 1048576
	g put two "$T/f"
	[ "$(stats_field objects)" = 2 ]
	[ "$(stats_field bytes)" = 1048577 ]
	[ "$(stats_field ssd_used)" -ge 786432 ]
	# --show-stats prints the counters of that very run
	g --show-stats put three "$T/f" 2>"$T/err"
	[ "$(stats_field puts "$T/err")" = 1 ]
	[ "$(stats_field objects "$T/err")" = 3 ]
	g --show-stats get three 2>"$T/err" >/dev/null
	[ "$(stats_field gets "$T/err")" = 1 ]
	[ "$(stats_field get_hits "$T/err")" = 1 ]
	g del one
	[ "$(stats_field objects)" = 2 ]
}

@test "stats takes no arguments" {
	run -129 g stats extra
	[[ "$output" =~ "too many arguments" ]]
}

@test "populate stores a tree of files of many sizes, keyed by path" {
	local sizes=(0 1 2 3 100 511 512 4095 4096 4097 65535 65536 65537
		100000 262143 262144 262145 300000 524288 1000000 1048576
		1048577 2000000 3145728)
	local i n d total=0 rel
	mkdir -p "$T/tree"
	for i in $(seq 0 49); do
		n=${sizes[$((i % ${#sizes[@]}))]}
		d="$T/tree/d$((i % 4))"
		[ $((i % 3)) -eq 0 ] && d="$d/sub$((i % 5))"
		mkdir -p "$d"
		mkrand "$d/file$i.bin" "$n"
		total=$((total + n))
	done
	ln -s d0/file0.bin "$T/tree/link"	# not a regular file: skipped
	run -0 g populate "$T/tree/"
	[[ "$output" =~ ^populated\ 50\ objects,\ $total\ bytes\ in\ [0-9.]+\ s\ \([0-9.]+\ MiB/s\)$ ]]
	run -0 g ls
	[ "$output" = "$(cd "$T/tree" && find . -type f | sed 's|^\./||' |
		LC_ALL=C sort)" ]
	[ "${#lines[@]}" -eq 50 ]
	while read -r rel; do
		g get "$rel" >"$T/out"
		cmp "$T/tree/$rel" "$T/out"
	done < <(cd "$T/tree" && find . -type f | sed 's|^\./||')
	[ "$(stats_field objects)" = 50 ]
	[ "$(stats_field bytes)" = "$total" ]
	# --prefix, and populating again replaces rather than duplicates
	local nd1
	nd1="$(find "$T/tree/d1" -type f | wc -l)"
	run -0 g populate --prefix mirror/ "$T/tree/d1"
	run -0 g ls mirror/
	[ "${#lines[@]}" -eq "$nd1" ]
	[ "${lines[0]}" = mirror/file1.bin ]
	run -0 g populate "$T/tree"
	[ "$(stats_field objects)" = $((50 + nd1)) ]
}

@test "populate past the small arena keeps every object: the cold ones on disk" {
	local f
	mkdir "$T/tree"
	for f in $(seq 1 40); do
		mkrand "$T/tree/f$f" 100000
	done
	run -0 g --small-memory 2M --show-stats populate "$T/tree"
	[[ "${lines[0]}" =~ ^populated\ 40\ objects,\ 4000000\ bytes ]]
	# 4 MB of values through a 2 MiB arena: some left RAM, none the store
	[ "$(stats_field small_chills <(echo "$output"))" -gt 0 ]
	[ "$(stats_field evictions_small <(echo "$output"))" -eq 0 ]
	[[ "$output" != *"were evicted"* ]]
	run -0 g ls
	[ "${#lines[@]}" -eq 40 ]
	for f in "${lines[@]}"; do
		g get "$f" >"$T/out"
		cmp "$T/tree/$f" "$T/out"
	done
}

@test "populate of a missing directory dies, of an empty one stores nothing" {
	run -128 g populate "$T/nope"
	[ "$output" = "goblinctl: cannot open '$T/nope': No such file or directory" ]
	mkdir "$T/empty"
	run -0 g populate "$T/empty"
	[[ "$output" =~ ^populated\ 0\ objects,\ 0\ bytes\ in ]]
	run -0 g ls
	[ -z "$output" ]
}

@test "objects persist across invocations and count as recovered" {
	local n
	mkrand "$T/big" 2000000
	for n in 1 2 3; do
		printf 'value %s' "$n" | g put "small$n"
	done
	g put big "$T/big"
	# reopen with other RAM options: the store still has everything
	run -0 g --memory 8M --no-mlock stats
	[ "$(stats_field recovered <(echo "$output"))" = 4 ]
	for n in 1 2 3; do
		run -0 g get "small$n"
		[ "$output" = "value $n" ]
	done
	g --memory 8M get big >"$T/out"
	cmp "$T/big" "$T/out"
}

@test "GOBLIN_STORE names the store; --store wins over it" {
	echo env | GOBLIN_STORE="$S" "$GCTL" put k
	run -0 env GOBLIN_STORE="$S" "$GCTL" get k
	[ "$output" = env ]
	run -0 env GOBLIN_STORE="$T/other" "$GCTL" --store "$S" get k
	[ "$output" = env ]
}

@test "a second opener gets a clear error naming the holder's pid" {
	echo seed | g put seed
	mkfifo "$T/fifo"
	# the holder: a put reading a fifo that stays open
	"$GCTL" --store "$S" put held <"$T/fifo" 3>&- &
	local pid=$!
	BG_PIDS+=("$pid")
	exec 5>"$T/fifo"
	local try
	for try in $(seq 1 100); do
		run g stats
		[ "$status" -ne 0 ] && break
		sleep 0.1
	done
	[ "$status" -eq 128 ]
	[[ "$output" =~ ^goblinctl:\ cannot\ open\ store\ \'$S\':\  ]]
	[[ "$output" =~ [^0-9]$pid([^0-9]|$) ]]
	run -128 g get seed
	[[ "$output" =~ [^0-9]$pid([^0-9]|$) ]]
	# the holder finishes its put and lets go
	echo "held value" >&5
	exec 5>&-
	wait "$pid"
	run -0 g get held
	[ "$output" = "held value" ]
	run -0 g get seed
	[ "$output" = seed ]
}

@test "a killed holder leaves no lock behind and no partial object" {
	echo seed | g put seed
	mkfifo "$T/fifo"
	"$GCTL" --store "$S" put half <"$T/fifo" 3>&- &
	local pid=$! try
	BG_PIDS+=("$pid")
	exec 5>"$T/fifo"
	head -c 100000 /dev/zero >&5
	for try in $(seq 1 100); do
		run g stats
		[ "$status" -ne 0 ] && break
		sleep 0.1
	done
	[[ "$output" =~ [^0-9]$pid([^0-9]|$) ]]
	kill -9 "$pid"
	wait "$pid" || true
	exec 5>&-
	run -0 g ls
	[ "$output" = seed ]
	run -1 g get half
	[ "$(stats_field objects)" = 1 ]
}

@test "a corrupt byte on the SSD: get fails, no wrong bytes, counted" {
	local pos b st=0 n
	mkrand "$T/big" 1048576
	g put big "$T/big"
	# the device offset of object byte 600000 (in the tail)
	pos="$(g inspect big | awk -v o=600000 \
		'$1 == "SSD" && $2 <= o && o < $2 + $3 { print $4 + o - $2; exit }')"
	[ -n "$pos" ]
	[ -f "$S/ssd/data" ]
	# the byte there is the object's byte
	[ "$(od -An -tu1 -j "$pos" -N1 "$S/ssd/data")" = \
		"$(od -An -tu1 -j 600000 -N1 "$T/big")" ]
	b="$(od -An -tu1 -j "$pos" -N1 "$S/ssd/data" | tr -d ' ')"
	printf "\\$(printf '%03o' $((b ^ 0xa5)))" |
		dd of="$S/ssd/data" bs=1 seek="$pos" conv=notrunc,fsync status=none
	g --show-stats get big >"$T/out" 2>"$T/err" || st=$?
	cat "$T/err"
	[ "$st" -ne 0 ]
	# whatever came out is a prefix of the true value, short of byte 600000
	n="$(stat -c %s "$T/out")"
	[ "$n" -le 600000 ]
	cmp -n "$n" "$T/out" "$T/big"
	grep -q "^goblinctl: cannot read 'big': " "$T/err"
	[ "$(stats_field csum_failures "$T/err")" -ge 1 ]
	# and it stays unreadable: never the wrong bytes
	st=0
	g get big >"$T/out" 2>"$T/err" || st=$?
	[ "$st" -ne 0 ]
	n="$(stat -c %s "$T/out")"
	[ "$n" -le 600000 ]
	cmp -n "$n" "$T/out" "$T/big"
}

@test "a corrupt small-object record: that key is a miss, the others stay" {
	local n hit file off b
	for n in 1 2 3; do
		printf 'small value number %s' "$n" | g put "k$n"
	done
	# find the record's value bytes wherever the store logs small objects
	hit="$(cd "$S" && find . -type f ! -path ./ssd/data ! -name lock \
		-exec grep -obUa 'small value number 2' {} + | head -n 1)"
	[ -n "$hit" ]
	file="${hit%%:*}"
	off="${hit#*:}"
	off="${off%%:*}"
	off=$((off + 6))
	b="$(od -An -tu1 -j "$off" -N1 "$S/$file" | tr -d ' ')"
	printf "\\$(printf '%03o' $((b ^ 0x20)))" |
		dd of="$S/$file" bs=1 seek="$off" conv=notrunc,fsync status=none
	run -1 --separate-stderr g --show-stats get k2
	[ -z "$output" ]
	[[ "$stderr" =~ "no such key 'k2'" ]]
	# counted where it was found: at recovery, or on the read
	n=$(awk '$1 == "recovery_dropped" || $1 == "csum_failures" { s += $2 }
		END { print s + 0 }' <<<"$stderr")
	[ "$n" -ge 1 ]
	run -0 g get k1
	[ "$output" = "small value number 1" ]
	run -0 g get k3
	[ "$output" = "small value number 3" ]
	run -0 g ls
	[ "$output" = "$(printf '%s\n' k1 k3)" ]
}

@test "usage errors exit 129" {
	run -129 "$GCTL"
	[[ "$output" =~ "no command given" ]]
	run -129 g
	run -129 g frobnicate
	[[ "${lines[0]}" = "goblinctl: unknown command 'frobnicate'" ]]
	run -129 g --bogus stats
	[[ "${lines[0]}" = "goblinctl: unknown option '--bogus'" ]]
	run -129 g put
	[[ "${lines[0]}" = "goblinctl: too few arguments" ]]
	[[ "${lines[1]}" =~ ^usage:\ goblinctl\ .*put ]]
	run -129 g put a b c
	run -129 g get
	run -129 g get k -o
	run -129 g get --frob k
	run -129 g del
	run -129 g stat a b
	run -129 g inspect
	run -129 g ls a b
	run -129 g populate
	run -129 g --memory lots stats
	[[ "${lines[0]}" =~ ^goblinctl:\ invalid\ size\ \'lots\'\ for\ --memory ]]
	run -129 g --store
	run -129 g put --flags -1 k /dev/null
	run -129 g put --flags 4294967296 k /dev/null
	run -129 g put --ttl soon k /dev/null
	# no store was created by any of them
	[ ! -e "$S" ]
}

@test "--help prints usage on stdout and exits 0, for the tool and each command" {
	local c
	run -0 --separate-stderr "$GCTL" --help
	[[ "$output" =~ ^usage:\ goblinctl ]]
	[ -z "$stderr" ]
	for c in put get del ls stat inspect stats populate help; do
		run -0 --separate-stderr "$GCTL" "$c" --help
		[[ "${lines[0]}" =~ ^usage:\ goblinctl\ .*\ $c ]]
		[ -z "$stderr" ]
		run -0 "$GCTL" help "$c"
		[[ "${lines[0]}" =~ ^usage:\ goblinctl\ .*\ $c ]]
	done
	run -0 "$GCTL" put --help
	[[ "$output" =~ --ttl ]]
	[[ "$output" =~ --flags ]]
}

@test "a missing store or no store at all exits 128" {
	run -128 g get k
	[[ "$output" =~ ^goblinctl:\ cannot\ open\ store\ \'$S\':\ .+ ]]
	[ ! -e "$S" ]
	run -128 g ls
	run -128 g stats
	run -128 "$GCTL" stats
	[ "$output" = "goblinctl: no store given (use --store DIR)" ]
	run -128 g put k "$T/no-such-file"
	[ "$output" = "goblinctl: cannot open '$T/no-such-file': No such file or directory" ]
	[ ! -e "$S" ]
}

@test "put of a directory is an error and stores nothing" {
	echo x | g put keep
	run -128 g put k "$T"
	[[ "$output" =~ "Is a directory" ]]
	run -0 g ls
	[ "$output" = keep ]
}
