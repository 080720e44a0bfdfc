#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# goblinfs --mirror: a read-through cache of an HTTP origin (python's
# http.server on an ephemeral port).  Origin requests are counted from the
# origin's own log: one GET per object, also for concurrent readers, none
# for cached objects (also after a remount); ENOENT, EROFS, and a failed
# transfer that is an I/O error and is not cached; the caching rules and
# the attribute record goblind --mirror has too (issue 17).

bats_require_minimum_version 1.5.0

load goblinfs

STORE_OPTS=(--memory 8M --no-hugetlb --ssd-size 64M)

# An origin that, while the file .short exists in its directory, announces
# the whole length of a file but sends half of it and closes.
SHORT_ORIGIN='
import functools, http.server, os, sys
class H(http.server.SimpleHTTPRequestHandler):
    def copyfile(self, src, dst):
        if os.path.exists(os.path.join(self.directory, ".short")):
            data = src.read()
            dst.write(data[:len(data) // 2])
            self.close_connection = True
        else:
            super().copyfile(src, dst)
port, root = int(sys.argv[1]), sys.argv[2]
http.server.ThreadingHTTPServer(("127.0.0.1", port),
    functools.partial(H, directory=root)).serve_forever()
'

# An origin that sends, with a file F, the header lines of the file F.hdr
# when there is one ("Name: value" lines).
HDR_ORIGIN='
import functools, http.server, os, sys
class H(http.server.SimpleHTTPRequestHandler):
    def end_headers(self):
        hdr = self.translate_path(self.path) + ".hdr"
        if os.path.isfile(hdr):
            for line in open(hdr):
                name, value = line.rstrip("\n").split(": ", 1)
                self.send_header(name, value)
        super().end_headers()
port, root = int(sys.argv[1]), sys.argv[2]
http.server.ThreadingHTTPServer(("127.0.0.1", port),
    functools.partial(H, directory=root)).serve_forever()
'

# An origin that revalidates (issue 18): every file with
# "Cache-Control: max-age=$MAXAGE" (default 3; or $ORIGIN_CC) and an ETag
# of its bytes,
# and a 304 to an If-None-Match that names that ETag; a 500 to everything
# while the file .fail exists in its directory; each answer a second late
# while .slow does.
REVAL_ORIGIN='
import functools, hashlib, http.server, os, sys, time
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def answer(self, body):
        if os.path.exists(os.path.join(root, ".slow")):
            time.sleep(1)
        if os.path.exists(os.path.join(root, ".fail")):
            self.send_response(500)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        try:
            with open(os.path.join(root, self.path.lstrip("/")), "rb") as f:
                data = f.read()
        except OSError:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        etag = "\"" + hashlib.sha1(data).hexdigest()[:16] + "\""
        inm = [t.strip() for t in self.headers.get("If-None-Match", "").split(",")]
        self.send_response(304 if etag in inm else 200)
        self.send_header("ETag", etag)
        self.send_header("Cache-Control", os.environ.get("ORIGIN_CC",
            "max-age=" + os.environ.get("MAXAGE", "3")))
        if etag in inm:
            self.end_headers()
            return
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if body:
            self.wfile.write(data)
    def do_GET(self):
        self.answer(True)
    def do_HEAD(self):
        self.answer(False)
port, root = int(sys.argv[1]), sys.argv[2]
http.server.ThreadingHTTPServer(("127.0.0.1", port), H).serve_forever()
'

GD="${GOBLIND:-$BATS_TEST_DIRNAME/../../build/goblind}"
MRACE="$BATS_TEST_DIRNAME/goblinfs_mirror_race.py"
FIXTURE="$BATS_TEST_DIRNAME/../fixtures/attr-v1-store.tar.gz"

setup() {
	gfs_setup goblinfs-mirror-bats
	O="$T/origin"
	mkdir "$O"
	OPID=
	GDPID=
}

teardown() {
	[ -n "${T:-}" ] || return 0
	gfs_teardown
	if [ -n "$GDPID" ]; then
		kill "$GDPID" 2>/dev/null || true
		wait "$GDPID" 2>/dev/null || true
	fi
	if [ -n "$OPID" ]; then
		kill "$OPID" 2>/dev/null || true
		wait "$OPID" 2>/dev/null || true
	fi
	rm -rf "$T"
}

# start_origin [short|hdr|reval]: serve $O on a free port, log to $T/origin.log
start_origin() {
	local i
	PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	if [ "${1:-}" = short ]; then
		python3 -c "$SHORT_ORIGIN" "$PORT" "$O" \
			>/dev/null 2>>"$T/origin.log" &
	elif [ "${1:-}" = hdr ]; then
		python3 -c "$HDR_ORIGIN" "$PORT" "$O" \
			>/dev/null 2>>"$T/origin.log" &
	elif [ "${1:-}" = reval ]; then
		python3 -c "$REVAL_ORIGIN" "$PORT" "$O" \
			>/dev/null 2>>"$T/origin.log" &
	else
		python3 -m http.server "$PORT" --bind 127.0.0.1 \
			--directory "$O" >/dev/null 2>>"$T/origin.log" &
	fi
	OPID=$!
	URL="http://127.0.0.1:$PORT"
	for i in $(seq 100); do
		(exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && return 0
		sleep 0.05
	done
	echo "the origin did not start" >&2
	return 1
}

# serve_store DIR [OPTIONS]: goblind (no mirror) on the store DIR, HTTP
# on a port the kernel picks; sets HPORT
serve_store() {
	local dir="$1" i
	shift
	: >"$T/gd.log"
	"$GD" --store "$dir" --no-mlock --memcache-port 0 --http-port 0 \
		--cores 1 "$@" 2>"$T/gd.log" &
	GDPID=$!
	for i in $(seq 100); do
		HPORT=$(sed -n 's/.*http on [^ ]*:\([0-9]*\).*/\1/p' "$T/gd.log" |
			cut -d, -f1)
		[ -n "$HPORT" ] && return 0
		kill -0 "$GDPID" 2>/dev/null || break
		sleep 0.05
	done
	echo "goblind did not start; its log:" >&2
	cat "$T/gd.log" >&2
	return 1
}

# header NAME PATH: the value of NAME in goblind's answer to HEAD PATH
header() {
	curl -sfI "http://127.0.0.1:$HPORT$2" | tr -d '\r' |
		sed -n "s/^$1: //Ip"
}

# mount_mirror [OPTIONS]: goblinfs -f --mirror $URL in the background
mount_mirror() {
	mount_fs --mirror "$URL" "$@"
}

# requests METHOD PATH: the origin's log lines for that request (PATH as
# sent: percent-encoded)
requests() {
	grep -cF "\"$1 $2 HTTP/" "$T/origin.log" || true
}

# answered STATUS METHOD PATH: how many of those requests got STATUS
answered() {
	grep -cF "\"$2 $3 HTTP/1.1\" $1 " "$T/origin.log" || true
}

# stop_origin: the origin goes away (its port refuses connections)
stop_origin() {
	kill "$OPID"
	wait "$OPID" 2>/dev/null || true
	OPID=
}

# origin_xattr: the mount's counters of origin requests
origin_xattr() {
	python3 -c "import os, sys; print(os.getxattr(sys.argv[1], 'user.goblin.origin').decode())" "$M"
}

FILES=(f0 f1 d/f100k d/e/f300k big5m)

# old FILE...: make files a year old or more.  python's http.server sends
# a Last-Modified and no lifetime, so RFC 9111's heuristic (a tenth of
# the age since the last change, at most a day) is all the freshness a
# cached copy has: a file written just now is stale at once and
# revalidated at each open (issue 18), an old one is fresh for a day.
old() {
	touch -d '2021-03-03 03:03:03 UTC' "$@"
}

mkorigin() {
	mkdir -p "$O/d/e"
	: >"$O/f0"
	head -c 1 /dev/urandom >"$O/f1"
	head -c 102400 /dev/urandom >"$O/d/f100k"
	head -c 307200 /dev/urandom >"$O/d/e/f300k"
	head -c 5242880 /dev/urandom >"$O/big5m"
	old "$O/f0" "$O/f1" "$O/d/e/f300k" "$O/big5m"
	touch -d '2020-02-02 02:02:02 UTC' "$O/d/f100k"
}

@test "read a tree through the mirror: one GET per object, none once cached, none after a remount" {
	local f
	mkorigin
	start_origin
	mount_mirror
	# attributes come from the HEAD before anything is cached
	[ "$(stat -c %s "$M/big5m")" = 5242880 ]
	[ "$(stat -c %Y "$M/d/f100k")" = "$(stat -c %Y "$O/d/f100k")" ]
	[ "$(requests GET /big5m)" = 0 ]
	for f in "${FILES[@]}"; do
		cmp "$O/$f" "$M/$f"
	done
	for f in "${FILES[@]}"; do
		[ "$(requests GET "/$f")" = 1 ]
	done
	# served from the store now
	for f in "${FILES[@]}"; do
		cmp "$O/$f" "$M/$f"
		[ "$(requests GET "/$f")" = 1 ]
	done
	run -0 origin_xattr
	[[ "$output" == *" gets=5 bytes=5652481 failures=0" ]]
	# the origin's Last-Modified is kept with the cached object
	[ "$(stat -c %Y "$M/d/f100k")" = "$(stat -c %Y "$O/d/f100k")" ]
	umount_fs
	mount_mirror
	cp "$T/origin.log" "$T/before"
	for f in "${FILES[@]}"; do
		cmp "$O/$f" "$M/$f"
	done
	cmp "$T/before" "$T/origin.log"	# not even a HEAD
	[ "$(stat -c %Y "$M/d/f100k")" = "$(stat -c %Y "$O/d/f100k")" ]
	run -0 origin_xattr
	[ "$output" = "heads=0 gets=0 bytes=0 failures=0" ]
	run -0 ls "$M/d"
	[ "$output" = "$(printf 'e\nf100k')" ]
}

@test "four concurrent readers of one 5 MiB file share one GET" {
	local i pids=()
	head -c 5242880 /dev/urandom >"$O/big"
	start_origin
	mount_mirror
	for i in 1 2 3 4; do
		cat "$M/big" >"$T/r$i" &
		pids+=($!)
	done
	for i in "${pids[@]}"; do
		wait "$i"
	done
	for i in 1 2 3 4; do
		cmp "$O/big" "$T/r$i"
	done
	[ "$(requests GET /big)" = 1 ]
}

@test "missing names are ENOENT (remembered); directories; readdir lists known names" {
	local i
	mkorigin
	start_origin
	mount_mirror --negative-timeout 1
	run stat "$M/nope"
	[ "$status" -ne 0 ]
	[[ "$output" == *"No such file or directory"* ]]
	run cat "$M/nope"
	[[ "$output" == *"No such file or directory"* ]]
	for i in 1 2 3; do
		[ ! -e "$M/nope" ]
	done
	[ "$(requests HEAD /nope)" = 1 ]	# remembered (--negative-timeout)
	sleep 1.2
	[ ! -e "$M/nope" ]
	[ "$(requests HEAD /nope)" = 2 ]	# forgotten after 1 s
	run cat "$M/d/nope/x"
	[[ "$output" == *"No such file or directory"* ]]
	# a directory on the origin (it redirects "d" to "d/")
	[ -d "$M/d" ]
	[ -d "$M/d/e" ]
	# listing shows only names looked up or cached
	run -0 ls "$M/d"
	[ "$output" = e ]
	cat "$M/d/f100k" >/dev/null
	run -0 ls "$M/d"
	[ "$output" = "$(printf 'e\nf100k')" ]
	run cat "$M/d"
	[[ "$output" == *"Is a directory"* ]]
}

@test "every change is EROFS" {
	mkorigin
	start_origin
	mount_mirror
	cmp "$O/f1" "$M/f1"
	run touch "$M/new"
	[[ "$output" == *"Read-only file system"* ]]
	run touch "$M/f1"
	[[ "$output" == *"Read-only file system"* ]]
	run mkdir "$M/dir"
	[[ "$output" == *"Read-only file system"* ]]
	run rm "$M/f1"
	[[ "$output" == *"Read-only file system"* ]]
	run rmdir "$M/d/e"
	[[ "$output" == *"Read-only file system"* ]]
	run mv "$M/f1" "$M/f2"
	[[ "$output" == *"Read-only file system"* ]]
	run bash -c "echo x >'$M/f1'"
	[[ "$output" == *"Read-only file system"* ]]
	run bash -c "echo x >>'$M/f1'"
	[[ "$output" == *"Read-only file system"* ]]
	run python3 -c "import os; os.setxattr('$M/f1', 'user.x', b'1')"
	[[ "$output" == *"Read-only file system"* ]]
	run python3 -c "import os; os.truncate('$M/f1', 0)"
	[[ "$output" == *"Read-only file system"* ]]
	cmp "$O/f1" "$M/f1"
	[ ! -e "$O/new" ] && [ ! -e "$O/f2" ]
}

@test "a failed origin transfer is an I/O error, is not cached, and is fetched again" {
	head -c 1000000 /dev/urandom >"$O/big"
	head -c 100000 /dev/urandom >"$O/small"
	old "$O/big" "$O/small"
	touch "$O/.short"
	start_origin short
	mount_mirror
	run cat "$M/big"
	[ "$status" -ne 0 ]
	[[ "$output" == *"Input/output error"* ]]
	run cat "$M/small"
	[ "$status" -ne 0 ]
	[[ "$output" == *"Input/output error"* ]]
	[ "$(requests GET /big)" = 1 ]
	[ "$(requests GET /small)" = 1 ]
	run -0 origin_xattr
	[[ "$output" == *" failures=2" ]]
	# nothing cached
	run python3 -c "import os; os.getxattr('$M/big', 'user.goblin.tiers')"
	[[ "$output" == *"No data available"* ]]
	rm "$O/.short"
	cmp "$O/big" "$M/big"
	cmp "$O/small" "$M/small"
	[ "$(requests GET /big)" = 2 ]
	[ "$(requests GET /small)" = 2 ]
	cmp "$O/big" "$M/big"
	[ "$(requests GET /big)" = 2 ]
}

@test "names with a space and UTF-8 characters" {
	mkdir "$O/dir é"
	head -c 300000 /dev/urandom >"$O/dir é/a b ü.bin"
	old "$O/dir é/a b ü.bin"
	start_origin
	mount_mirror
	cmp "$O/dir é/a b ü.bin" "$M/dir é/a b ü.bin"
	[ "$(requests GET /dir%20%C3%A9/a%20b%20%C3%BC.bin)" = 1 ]
	run -0 ls "$M/dir é"
	[ "$output" = "a b ü.bin" ]
	umount_fs
	mount_mirror
	cmp "$O/dir é/a b ü.bin" "$M/dir é/a b ü.bin"
	[ "$(requests GET /dir%20%C3%A9/a%20b%20%C3%BC.bin)" = 1 ]
}

@test "--mirror needs an http(s) URL; an unreachable origin is EIO" {
	run -129 "$GFS" --store "$S" --mirror ftp://x "$M"
	[[ "$output" == *"invalid URL 'ftp://x' for --mirror"* ]]
	PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	URL="http://127.0.0.1:$PORT"	# nobody listens there
	mount_mirror
	run stat "$M/x"
	[[ "$output" == *"Input/output error"* ]]
}

@test "issue 17: goblinfs --mirror keeps no-store and private answers out of the store, as goblind does" {
	local f
	for f in nostore private kept; do
		head -c 200000 /dev/urandom >"$O/$f"
	done
	echo "Cache-Control: no-store" >"$O/nostore.hdr"
	echo "Cache-Control: private, max-age=60" >"$O/private.hdr"
	echo "Cache-Control: max-age=60" >"$O/kept.hdr"
	start_origin hdr
	mount_mirror
	for f in nostore private kept; do
		cmp "$O/$f" "$M/$f"
		cmp "$O/$f" "$M/$f"
	done
	# read through each time, not kept
	[ "$(requests GET /nostore)" = 2 ]
	[ "$(requests GET /private)" = 2 ]
	[ "$(requests GET /kept)" = 1 ]
	run -0 python3 -c "import os; print(os.getxattr('$M/kept', 'user.goblin.tiers'))"
	run python3 -c "import os; os.getxattr('$M/nostore', 'user.goblin.tiers')"
	[[ "$output" == *"No data available"* ]]
	umount_fs
	run -0 "$GCTL" --store "$S" "${STORE_OPTS[@]}" ls
	[ "$output" = kept ]
}

@test "issue 17: goblind serves what goblinfs --mirror fetched with the origin's Last-Modified, ETag and type" {
	mkdir "$O/d"
	head -c 100000 /dev/urandom >"$O/d/page.txt"
	touch -d '2020-02-02 02:02:02 UTC' "$O/d/page.txt"
	echo 'ETag: "e-17"' >"$O/d/page.txt.hdr"
	start_origin hdr
	mount_mirror
	cmp "$O/d/page.txt" "$M/d/page.txt"
	umount_fs
	serve_store "$S" "${STORE_OPTS[@]}"
	[ "$(header Last-Modified /d/page.txt)" = "Sun, 02 Feb 2020 02:02:02 GMT" ]
	[ "$(header ETag /d/page.txt)" = '"e-17"' ]
	[ "$(header Content-Type /d/page.txt)" = text/plain ]
	curl -sf "http://127.0.0.1:$HPORT/d/page.txt" | cmp - "$O/d/page.txt"
}

# The fixture was written by main e0817d5's goblind and goblinfs (see
# test/fixtures/make-attr-v1-store.sh): version 1 records and goblinfs's
# text record.
@test "issue 17: a store written before the one attribute record opens with its attributes intact" {
	local fo=(--memory 8M --small-memory 4M --no-hugetlb --ssd-size 16M)
	tar -C "$T" -xzf "$FIXTURE"
	serve_store "$T/store" "${fo[@]}"
	[ "$(header Content-Type /p)" = text/x-put ]
	[ "$(curl -sf "http://127.0.0.1:$HPORT/p")" = "put body" ]
	[ "$(header ETag /m)" = '"m-etag-1"' ]
	[ "$(header Last-Modified /m)" = "Sun, 02 Feb 2020 02:02:02 GMT" ]
	[ "$(header Content-Type /m)" = text/x-mirror ]
	[ "$(header Cache-Control /m)" = max-age=3600 ]
	[ "$(header Last-Modified /f)" = "Mon, 01 Mar 2021 03:04:05 GMT" ]
	[ "$(curl -sf "http://127.0.0.1:$HPORT/f")" = "goblinfs body" ]
	kill -TERM "$GDPID"
	wait "$GDPID"
	GDPID=
	# and goblinfs --mirror reads the same records (no origin needed)
	S="$T/store"
	STORE_OPTS=("${fo[@]}")
	URL="http://127.0.0.1:9"
	mount_mirror
	[ "$(stat -c %Y "$M/f")" = 1614567845 ]
	[ "$(stat -c %Y "$M/m")" = 1580608922 ]
	[ "$(cat "$M/f")" = "goblinfs body" ]
}

@test "issue 18: goblinfs --mirror revalidates a stale file on open: a 304 keeps its bytes and makes it fresh again" {
	head -c 300000 /dev/urandom >"$O/f"
	start_origin reval
	mount_mirror
	cmp "$O/f" "$M/f"
	cmp "$O/f" "$M/f"	# fresh (max-age=3): from the store
	[ "$(requests GET /f)" = 1 ]
	sleep 4
	# stale: one request conditional on its ETag, answered 304
	cmp "$O/f" "$M/f"
	[ "$(requests GET /f)" = 2 ]
	[ "$(answered 304 GET /f)" = 1 ]
	# the 304 made it fresh again, and no body came twice
	cmp "$O/f" "$M/f"
	[ "$(requests GET /f)" = 2 ]
	run -0 origin_xattr
	[[ "$output" == *" gets=2 bytes=300000 failures=0" ]]
	[ "$(stat -c %s "$M/f")" = 300000 ]
}

# hold OUT: a reader of $M/f that reads 400000 bytes, waits for OUT.go,
# reads the rest and writes it all to OUT (in the background; its pid
# added to HOLDERS)
hold() {
	python3 -c '
import os, sys, time
f = open(sys.argv[1], "rb")
head = f.read(400000)
open(sys.argv[2] + ".ready", "w").close()
while not os.path.exists(sys.argv[2] + ".go"):
    time.sleep(0.05)
open(sys.argv[2], "wb").write(head + f.read())
' "$M/f" "$1" &
	HOLDERS+=($!)
	until [ -e "$1.ready" ]; do sleep 0.05; done
}

@test "issue 18: goblinfs --mirror: a changed file is read anew after expiry; a reader already open keeps the old version whole" {
	local i
	head -c 1000000 /dev/urandom >"$O/f"
	cp "$O/f" "$T/old"
	start_origin reval
	mount_mirror
	# a reader of the stored version, stopped halfway
	HOLDERS=()
	cmp "$O/f" "$M/f"
	hold "$T/held"
	head -c 1500000 /dev/urandom >"$O/f.new"
	mv "$O/f.new" "$O/f"
	sleep 4
	cmp "$O/f" "$M/f"	# the new version, in one GET
	[ "$(requests GET /f)" = 2 ]
	[ "$(answered 200 GET /f)" = 2 ]
	cmp "$O/f" "$M/f"	# and it is the stored one now
	[ "$(requests GET /f)" = 2 ]
	touch "$T/held.go"
	for i in "${HOLDERS[@]}"; do
		wait "$i"
	done
	cmp "$T/old" "$T/held"
	# the new size within the kernel's entry timeout (1 s)
	for i in $(seq 30); do
		[ "$(stat -c %s "$M/f")" = 1500000 ] && break
		sleep 0.1
	done
	[ "$(stat -c %s "$M/f")" = 1500000 ]
}

@test "issue 18: goblinfs --mirror: a reader of the fill that first brought a file keeps that version whole when a new one replaces it" {
	local i
	head -c 1000000 /dev/urandom >"$O/f"
	cp "$O/f" "$T/old"
	MAXAGE=1 start_origin reval
	mount_mirror
	HOLDERS=()
	hold "$T/fill"	# the first open: on the fill, stopped halfway
	head -c 1000000 /dev/urandom >"$O/f.new"
	mv "$O/f.new" "$O/f"
	sleep 2
	cmp "$O/f" "$M/f"	# the new version (its fill)
	# and again from the store, the second time through the page cache
	cmp "$O/f" "$M/f"
	cmp "$O/f" "$M/f"
	[ "$(answered 200 GET /f)" = 2 ]
	touch "$T/fill.go"
	wait "${HOLDERS[0]}"
	cmp "$T/old" "$T/fill"
}

@test "issue 18: goblinfs --mirror: the size of a file that changed on the origin is the new one right after the open that fetched it" {
	head -c 100000 /dev/urandom >"$O/f"
	MAXAGE=1 start_origin reval
	mount_mirror
	cmp "$O/f" "$M/f"
	[ "$(stat -c %s "$M/f")" = 100000 ]
	head -c 250000 /dev/urandom >"$O/f.new"
	mv "$O/f.new" "$O/f"
	sleep 2
	# stat alone does not ask the origin (close-to-open)
	[ "$(stat -c %s "$M/f")" = 100000 ]
	[ "$(requests GET /f)" = 1 ]
	cmp "$O/f" "$M/f"
	[ "$(stat -c %s "$M/f")" = 250000 ]
	[ "$(requests GET /f)" = 2 ]
}

@test "issue 18: goblinfs --mirror: concurrent opens of one stale file share one revalidation" {
	local i pids=()
	head -c 200000 /dev/urandom >"$O/f"
	MAXAGE=1 start_origin reval
	mount_mirror
	cmp "$O/f" "$M/f"
	sleep 2
	touch "$O/.slow"	# the 304 takes a second: the opens overlap
	for i in 1 2 3 4 5 6; do
		cat "$M/f" >"$T/r$i" &
		pids+=($!)
	done
	for i in "${pids[@]}"; do
		wait "$i"
	done
	for i in 1 2 3 4 5 6; do
		cmp "$O/f" "$T/r$i"
	done
	[ "$(requests GET /f)" = 2 ]
	[ "$(answered 304 GET /f)" = 1 ]
}

@test "issue 18: goblinfs --mirror: within stale-while-revalidate the stale file is read at once and refreshed behind" {
	local i
	head -c 100000 /dev/urandom >"$O/f"
	cp "$O/f" "$T/old"
	ORIGIN_CC="max-age=2, stale-while-revalidate=60" start_origin reval
	mount_mirror
	cmp "$O/f" "$M/f"
	head -c 150000 /dev/urandom >"$O/f.new"
	mv "$O/f.new" "$O/f"
	sleep 3
	# the stale copy, at once (waiting for the origin would give the new)
	cmp "$T/old" "$M/f"
	for i in $(seq 50); do
		cmp -s "$O/f" "$M/f" && break
		sleep 0.1
	done
	cmp "$O/f" "$M/f"
	# one background GET brought it (the opens meanwhile started none)
	[ "$(requests GET /f)" = 2 ]
	[ "$(answered 200 GET /f)" = 2 ]
}

@test "issue 18: goblinfs --mirror: a stale file whose origin is down is EIO" {
	head -c 100000 /dev/urandom >"$O/f"
	start_origin reval
	mount_mirror
	cmp "$O/f" "$M/f"
	stop_origin
	cmp "$O/f" "$M/f"	# fresh: the origin is not asked
	sleep 4
	run cat "$M/f"
	[ "$status" -ne 0 ]
	[[ "$output" == *"Input/output error"* ]]
}

@test "issue 18: goblinfs --mirror-stale-on-error: a stale file is read while the origin fails, within the window" {
	head -c 100000 /dev/urandom >"$O/f"
	MAXAGE=1 start_origin reval
	mount_mirror --mirror-stale-on-error 3
	cmp "$O/f" "$M/f"
	# the origin answers 500: the stored copy, stale by about a second
	touch "$O/.fail"
	sleep 2
	cmp "$O/f" "$M/f"
	[ "$(answered 500 GET /f)" = 1 ]
	# back: the next open revalidates it (still stale: it was not
	# refreshed), a 304
	rm "$O/.fail"
	cmp "$O/f" "$M/f"
	[ "$(answered 304 GET /f)" = 1 ]
	# the origin gone: the copy again, until it is 3 s past its freshness
	stop_origin
	sleep 2
	cmp "$O/f" "$M/f"
	sleep 3
	run cat "$M/f"
	[ "$status" -ne 0 ]
	[[ "$output" == *"Input/output error"* ]]
	run -0 origin_xattr
	[[ "$output" == *" gets=5 bytes=100000 "* ]]
}

@test "issue 18: goblinfs --mirror-stale-on-error needs whole seconds and --mirror" {
	run -129 "$GFS" --store "$S" --mirror http://127.0.0.1:9 \
		--mirror-stale-on-error 1.5 "$M"
	[[ "$output" == *"invalid value '1.5' for --mirror-stale-on-error"* ]]
	run -129 "$GFS" --store "$S" --mirror http://127.0.0.1:9 \
		--mirror-stale-on-error -1 "$M"
	[[ "$output" == *"invalid value '-1' for --mirror-stale-on-error"* ]]
	run -129 "$GFS" --store "$S" --mirror-stale-on-error 60 "$M"
	[[ "$output" == *"--mirror-stale-on-error needs --mirror"* ]]
}

@test "issue 18: goblinfs --mirror: readers of a file the origin keeps replacing read whole versions, the last one after expiry" {
	MAXAGE=1 start_origin reval
	mount_mirror
	# 6 s, 6 readers: an open that joined the fill of a refetch (the
	# stale version deleted first) read through the page cache, cut at
	# the size of the version before; 4 s and 3 readers missed it
	# mostly (make test saw it once in 2026-12-01's runs), this finds
	# it 2 runs in 3
	run python3 "$MRACE" 6 6 "$O" "$M" 2.5
	echo "$output"
	echo "origin: $(requests HEAD /f) HEAD"
	[ "$status" -eq 0 ]
	# several versions went through the mirror, each in one GET
	echo "origin: $(answered 200 GET /f) answered 200, $(answered 304 GET /f) 304"
	[ "$(answered 200 GET /f)" -ge 3 ]
}
