#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# pacing/cc-ab.sh ROUNDS: case 1 (c1.sh, FIO=1: the device's ceiling after each
# goblind run) with goblind's connections on the machine's TCP congestion
# control and on --tcp-congestion ${CC:-cubic}, alternated; then, with
# MC=1, memcached (which has no such option) on the machine's.  Prints
# the machine's setting first.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
echo "# $(date -u '+%F %H:%M') net.ipv4.tcp_congestion_control=$(sysctl -n net.ipv4.tcp_congestion_control) net.core.default_qdisc=$(sysctl -n net.core.default_qdisc)"
for r in $(seq "${1:-3}"); do
	echo "r$r machine's $(FIO=1 "$here/c1.sh" | tr '\n' ' ')"
	echo "r$r --tcp-congestion ${CC:-cubic} $(FIO=1 "$here/c1.sh" --tcp-congestion "${CC:-cubic}" | tr '\n' ' ')"
	[ -z "${MC:-}" ] || echo "r$r memcached $(MC=1 "$here/c1.sh")"
done
