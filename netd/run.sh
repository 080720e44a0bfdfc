#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# `make run`: goblind in the foreground on ./var/store, memcache on
# 127.0.0.1 (GOBLIND_PORT, default 11211).  Ctrl-C stops it cleanly.
set -euo pipefail
cd "$(dirname "$0")/.."

port=${GOBLIND_PORT:-11211}
mkdir -p var
cat <<MSG
goblind: serving ./var/store on 127.0.0.1:$port (memcache text + meta)
try:   printf 'set hello 0 0 6\\r\\ngoblin\\r\\nget hello\\r\\n' | nc -q1 127.0.0.1 $port
       memcstat --servers=127.0.0.1:$port
stop:  Ctrl-C (SIGINT): in-flight requests finish, the store closes
MSG
exec build/goblind --store ./var/store --memcache-port "$port" \
	--memory 64M --no-hugetlb "$@"
