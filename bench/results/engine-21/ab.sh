#!/bin/bash
# ab.sh ROUNDS OLD NEW: engine-vs-rocksdb.sh --engines goblin --reps 1 of
# each worktree's own build, alternating; prints each run's goblin SUMMARY
mkdir -p /tmp/engab
for r in $(seq "$1"); do for b in "$2" "$3"; do
	t=/tmp/engab/$(basename "$b")-$r
	(cd "$b" && bash bench/engine-vs-rocksdb.sh --engines goblin --reps 1 \
		--dir /var/tmp/engab --out "$t.md" >"$t.log" 2>&1)
	echo "$(date -u +%T) r=$r $b $(grep '^SUMMARY engine=goblin' "$t.log" | tr '\n' ' ')"
done; done
