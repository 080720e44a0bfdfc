#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# cpus.sh ROUNDS: case 1 (c1.sh, FIO=1) with goblind on CPU 1 and the
# client on CPU 0 (as vs-memcached.sh places them), then the other way
# round, ROUNDS times in turn.  vda's single queue interrupts only CPU 1
# here (/proc/irq/N/effective_affinity_list of virtio1-req.0, a managed
# interrupt that cannot be moved): the first placement puts the reads'
# completions on the server's CPU, the second on the client's.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
irq=$(awk -F: '/virtio[0-9]*-req/ { gsub(/ /, "", $1); print $1; exit }' /proc/interrupts)
echo "disk interrupt $irq on CPU $(cat /proc/irq/"$irq"/effective_affinity_list)"
for r in $(seq "${1:-3}"); do
	for p in "1 0" "0 1"; do
		read -r s c <<<"$p"
		before=$(awk -v i="$irq:" '$1 == i { print $2 + $3 }' /proc/interrupts)
		out=$(SCPU=$s CCPU=$c FIO=1 "$here/c1.sh" | tr '\n' ' ')
		after=$(awk -v i="$irq:" '$1 == i { print $2 + $3 }' /proc/interrupts)
		echo "round $r $(date -u +%H:%M:%S) server CPU $s, client CPU $c: $out(disk interrupts $((after - before)))"
	done
done
