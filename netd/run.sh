#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# `make run`: goblind in the foreground on ./var/store, memcache on
# 127.0.0.1 (GOBLIND_PORT, default 11211) and HTTP (GOBLIND_HTTP_PORT,
# default 8080).  Ctrl-C stops it cleanly.
set -euo pipefail
cd "$(dirname "$0")/.."

port=${GOBLIND_PORT:-11211}
hport=${GOBLIND_HTTP_PORT:-8080}

# A port someone already serves is said plainly, with the way out.  (goblind
# listens with SO_REUSEPORT, so a second goblind would not fail on its own:
# it would share the port with the first.)
for p in "$port:GOBLIND_PORT:memcache" "$hport:GOBLIND_HTTP_PORT:HTTP"; do
	IFS=: read -r n var what <<<"$p"
	if (exec 3<>"/dev/tcp/127.0.0.1/$n") 2>/dev/null; then
		echo "make run: 127.0.0.1 port $n ($what) is already in use by another program;" >&2
		echo "make run: choose another port: make run $var=$((n + 1))" >&2
		exit 1
	fi
done
mkdir -p var
cat <<MSG
goblind: serving ./var/store on 127.0.0.1:$port (memcache text + meta)
         and on http://127.0.0.1:$hport/ (HTTP/1.1: GET/HEAD/PUT/DELETE /<key>)
try:   printf 'set hello 0 0 6\\r\\ngoblin\\r\\nget hello\\r\\n' | nc -q1 127.0.0.1 $port
       memcstat --servers=127.0.0.1:$port
       curl -T README.md http://127.0.0.1:$hport/readme && curl http://127.0.0.1:$hport/readme
       curl http://127.0.0.1:$hport/_goblin/stats
stop:  Ctrl-C (SIGINT): in-flight requests finish, the store closes
MSG
exec build/goblind --store ./var/store --memcache-port "$port" \
	--http-port "$hport" --memory 64M --no-hugetlb "$@"
