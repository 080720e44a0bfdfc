#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# `make run`: a demo store under ./var/store with a few sample objects, then
# a short tour of goblinctl.  Safe to run again: the samples are replaced.
set -euo pipefail
cd "$(dirname "$0")/.."

G=build/goblinctl
STORE=./var/store

# show a command, then run it
run() {
	printf '\n$ %s\n' "$*"
	"$@"
}

mkdir -p var
printf 'Hello from Goblin Store: RAM heads, SSD tails.\n' >var/hello.txt
[ -s var/sample-1m.bin ] || head -c 1048576 /dev/urandom >var/sample-1m.bin
[ -s var/sample-5m.bin ] || head -c 5242880 /dev/urandom >var/sample-5m.bin

run "$G" --store "$STORE" put demo/hello.txt var/hello.txt
run "$G" --store "$STORE" put --flags 7 demo/sample-1m.bin var/sample-1m.bin
run "$G" --store "$STORE" put demo/sample-5m.bin var/sample-5m.bin
run "$G" --store "$STORE" get demo/hello.txt
run "$G" --store "$STORE" ls -l
run "$G" --store "$STORE" stat demo/sample-5m.bin
# a fresh process has no heads in RAM until it reads them or preloads them
run "$G" --store "$STORE" --preload-heads inspect demo/sample-5m.bin

printf '\n$ %s\n' "$G --store $STORE get demo/sample-5m.bin | cmp - var/sample-5m.bin"
"$G" --store "$STORE" get demo/sample-5m.bin | cmp - var/sample-5m.bin
echo "identical"

run "$G" --store "$STORE" stats
printf '\nThe demo store is %s; try: %s --store %s --help\n' \
	"$STORE" "$G" "$STORE"
