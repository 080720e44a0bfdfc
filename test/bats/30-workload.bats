#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# bench/gen, the workload generator of shared/WORKLOADS.md: determinism,
# the realised distributions against the ones WORKLOADS.md defines, and
# payload bytes.  GEN overrides the binary.

bats_require_minimum_version 1.5.0

GEN="${GEN:-$BATS_TEST_DIRNAME/../../build/bench/gen}"

setup() {
	if [ ! -x "$GEN" ]; then
		echo "gen is not built: $GEN (make build/bench/gen)" >&2
		return 1
	fi
	T="$(mktemp -d "${TMPDIR:-/tmp}/workload-bats.XXXXXX")"
}

teardown() {
	[ -n "${T:-}" ] && rm -rf "$T"
}

# field PREFIX NAME FILE: value of NAME=... on the line starting PREFIX
field() {
	awk -v p="$1" -v n="$2" 'index($0, p) == 1 {
		for (i = 1; i <= NF; i++)
			if (index($i, n "=") == 1) {
				sub(/^[^=]*=/, "", $i); sub(/%$/, "", $i)
				print $i; exit
			}
	}' "$3"
}

# differ A B: the files are not identical
differ() {
	! cmp -s "$1" "$2"
}

# within X LO HI: LO <= X <= HI (decimals allowed)
within() {
	awk -v x="$1" -v lo="$2" -v hi="$3" \
		'BEGIN { exit !(x + 0 >= lo + 0 && x + 0 <= hi + 0) }' ||
		{ echo "$1 not in [$2, $3]" >&2; return 1; }
}

@test "same seed gives identical manifests, another seed different ones" {
	local w s
	for w in ART FB WEB BIG; do
		s=; [ "$w" = WEB ] && s=1/64; [ "$w" = FB ] && s=0.05
		"$GEN" "$w" ${s:+--scale $s} --out "$T/a" >/dev/null
		"$GEN" "$w" ${s:+--scale $s} --seed 1 --out "$T/b" >/dev/null
		"$GEN" "$w" ${s:+--scale $s} --seed 2 --out "$T/c" >/dev/null
		cmp "$T/a/$w.population" "$T/b/$w.population"
		cmp "$T/a/$w.measured" "$T/b/$w.measured"
		differ "$T/a/$w.population" "$T/c/$w.population"
		differ "$T/a/$w.measured" "$T/c/$w.measured"
	done
}

@test "--stats prints the statistics and writes nothing" {
	cd "$T"
	run -0 "$GEN" ART --stats
	[[ "$output" == *"population: ART count=2048 "* ]]
	[[ "$output" == *"measured: ART requests=6144 "* ]]
	[ -z "$(ls "$T")" ]
}

@test "ART: mean ~1.00 MiB, max <= 8 MiB, keys art:%08d, --scale and --total" {
	"$GEN" ART --out "$T" >"$T/out"
	[ "$(field population: count "$T/out")" = 2048 ]
	within "$(field population: mean "$T/out")" 943718 1153434
	within "$(field population: p50 "$T/out")" 600000 800000
	within "$(field population: max "$T/out")" 262144 8388608
	within "$(field population: min "$T/out")" 262144 8388608
	[ "$(head -1 "$T/ART.population" | cut -d' ' -f1)" = art:00000000 ]
	[ "$(sed -n '2048p' "$T/ART.population" | cut -d' ' -f1)" = art:00002047 ]
	# measured: three shuffled passes over every object
	[ "$(wc -l <"$T/ART.measured")" = 6144 ]
	[ "$(sort -u "$T/ART.measured" | wc -l)" = 2048 ]
	"$GEN" ART --scale 1/8 --stats >"$T/out"
	[ "$(field population: count "$T/out")" = 256 ]
	# --total: objects until the total is reached, the same draws
	"$GEN" ART --total 100M --out "$T/t" >"$T/out"
	within "$(field population: total "$T/out")" 104857600 113246208
	n=$(wc -l <"$T/t/ART.population")
	head -n "$n" "$T/ART.population" | cmp - "$T/t/ART.population"
}

@test "FB: value and key sizes follow mutilate's fb_value and fb_key" {
	"$GEN" FB --out "$T" >"$T/out"
	[ "$(field population: count "$T/out")" = 400000 ]
	# GPD(15, 214.476, 0.348238): p50 183, p90 772, p99 2459, mean 344
	within "$(field population: p50 "$T/out")" 175 192
	within "$(field population: p90 "$T/out")" 740 805
	within "$(field population: p99 "$T/out")" 2300 2650
	within "$(field population: mean "$T/out")" 325 365
	[ "$(field population: min "$T/out")" -ge 15 ]
	# GEV(30.7984, 8.20449, 0.078688): p50 33.85, p90 50.6
	within "$(field keys: p50 "$T/out")" 33 35
	within "$(field keys: p90 "$T/out")" 48 53
	# keys: fb: + zero-padded id, as long as drawn, unique
	awk '{ if ($1 !~ /^fb:[0-9]+$/ || length($1) > 250) exit 1 }' \
		"$T/FB.population"
	[ "$(head -1 "$T/FB.population" | cut -d' ' -f1 | sed 's/^fb:0*//')" = "" ]
	[ "$(cut -d' ' -f1 "$T/FB.population" | sort -u | wc -l)" = 400000 ]
	[ "$(wc -l <"$T/FB.measured")" = 1200000 ]
}

@test "WEB at 1/64: count, mean ~174 KiB, 2.07% of requests to > 256 KiB" {
	"$GEN" WEB --scale 1/64 --out "$T" >"$T/out"
	# round(373165 / 64) objects, round(6141630 / 64) requests
	[ "$(field population: count "$T/out")" = 5831 ]
	[ "$(wc -l <"$T/WEB.population")" = 5831 ]
	[ "$(field measured: requests "$T/out")" = 95963 ]
	[ "$(wc -l <"$T/WEB.measured")" = 95963 ]
	within "$(field measured: per_object "$T/out")" 16.45 16.47
	within "$(field population: mean "$T/out")" 151450 204902
	within "$(field population: p50 "$T/out")" 25600 28300
	within "$(field population: p90 "$T/out")" 187000 208000
	within "$(field population: min "$T/out")" 128 200
	within "$(field population: max "$T/out")" 0 157391668
	within "$(field measured: large_share "$T/out")" 1.5 2.7
	# the same share, counted from the manifest itself
	share=$(awk '$2 > 262144 { l++ } END { printf "%.4f", 100 * l / NR }' \
		"$T/WEB.measured")
	within "$share" 1.5 2.7
	# skewed: the most requested object takes several percent
	top=$(cut -d' ' -f1 "$T/WEB.measured" | sort | uniq -c | sort -rn |
		head -1 | awk '{ print $1 }')
	within "$top" 2000 20000
	[ "$(head -1 "$T/WEB.population" | cut -d' ' -f1)" = web:00000000 ]
}

@test "WEB at 1/8 takes seconds" {
	local t0=$SECONDS
	"$GEN" WEB --scale 1/8 --out "$T" >"$T/out"
	[ "$(field population: count "$T/out")" = 46646 ]
	[ "$(field measured: requests "$T/out")" = 767704 ]
	[ $((SECONDS - t0)) -lt 10 ]
}

@test "BIG: 1-4 GiB objects totalling >= 1.5x RAM, three shuffled passes" {
	"$GEN" BIG --out "$T" >"$T/out"
	within "$(field population: total "$T/out")" 38654705664 1e12
	awk '{ if ($2 < 1073741824 || $2 > 4294967296) exit 1 }' \
		"$T/BIG.population"
	[ "$(head -1 "$T/BIG.population" | cut -d' ' -f1)" = big:0000 ]
	n=$(wc -l <"$T/BIG.population")
	[ "$(wc -l <"$T/BIG.measured")" = $((3 * n)) ]
	# each pass holds every object once
	head -n "$n" "$T/BIG.measured" | sort | cmp - <(sort "$T/BIG.population")
	"$GEN" BIG --ram 8G --scale 0.5 --stats >"$T/out"
	within "$(field population: total "$T/out")" 6442450944 10737418240
}

@test "payload: deterministic, incompressible, the same through --materialize" {
	"$GEN" --payload web:00000001 27000 >"$T/p1"
	"$GEN" --payload web:00000001 27000 >"$T/p2"
	[ "$(stat -c %s "$T/p1")" = 27000 ]
	cmp "$T/p1" "$T/p2"
	# another key or another size: other bytes
	"$GEN" --payload web:00000002 27000 >"$T/p3"
	differ "$T/p1" "$T/p3"
	"$GEN" --payload web:00000001 27001 | head -c 27000 >"$T/p4"
	differ "$T/p1" "$T/p4"
	# incompressible: gzip gains nothing on 1 MiB
	"$GEN" --payload art:00000000 1M >"$T/big"
	raw=$(stat -c %s "$T/big")
	z=$(gzip -c "$T/big" | wc -c)
	[ "$raw" = 1048576 ]
	[ $((z * 100)) -ge $((raw * 99)) ]
	"$GEN" --payload k 0 | cmp - /dev/null
	# --materialize: one file per manifest line, the same bytes
	printf 'web:00000001 27000\nfb:007 100\nweb:00000001 27000\n' >"$T/m"
	run -0 "$GEN" --materialize "$T/tree" --manifest "$T/m"
	[[ "$output" == *"2 files written (27100 bytes), 1 already present"* ]]
	cmp "$T/p1" "$T/tree/web/00000001"
	"$GEN" --payload fb:007 100 | cmp - "$T/tree/fb/007"
}

@test "errors: unknown workload, bad scale, usage" {
	run -128 "$GEN" NOPE --stats
	[[ "$output" == *"unknown workload 'NOPE'"* ]]
	run -128 "$GEN" WEB --scale 0 --stats
	[[ "$output" == *"bad scale: '0'"* ]]
	run -129 "$GEN"
	run -129 "$GEN" --payload onlykey
	printf 'key\n' >"$T/bad"
	run -128 "$GEN" --materialize "$T/tree" --manifest "$T/bad"
	printf '../x 1\n' >"$T/bad"
	run -128 "$GEN" --materialize "$T/tree" --manifest "$T/bad"
}
