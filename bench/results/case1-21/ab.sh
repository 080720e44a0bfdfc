#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# ab.sh ROUNDS: case 1's servers side by side, ROUNDS times in turn (c1.sh):
# memcached holding every value; goblind holding every value in its small-
# object arena (--ram-head 8M, so every ART value is small); goblind as
# vs-memcached.sh case 1 runs it (64 KiB heads in RAM, tails from the SSD
# tier), with its reads in flight sampled and the device's ceiling after
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
for r in $(seq "${1:-3}"); do
	echo "round $r $(date -u +%H:%M:%S) load $(cut -d' ' -f1 /proc/loadavg)"
	echo "  memcached, all in RAM: $(MC=1 "$here/c1.sh")"
	echo "  goblind, all in its arena: $(GDMEM='--memory 16M --ram-head 8M --block 8M' \
		"$here/c1.sh" --small-memory 3G)"
	echo "  goblind, case 1: $(INFLIGHT=5 FIO=1 "$here/c1.sh" | tr '\n' ' ')"
done
