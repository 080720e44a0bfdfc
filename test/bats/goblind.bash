# SPDX-License-Identifier: BSD-3-Clause
# Shared by the goblind bats files: goblind on an ephemeral port in a temp
# dir, always stopped in teardown.  GOBLIND overrides the binary.

GD="${GOBLIND:-$BATS_TEST_DIRNAME/../../build/goblind}"
GCTL="${GOBLINCTL:-$BATS_TEST_DIRNAME/../../build/goblinctl}"
# A python3 that imports Debian's python3-pymemcache and python3-requests:
# $PYTHON, else Debian's own (a python3 earlier in PATH, pyenv's say, may
# not see Debian's modules).
PY=${PYTHON:-/usr/bin/python3}
MCCHECK="$BATS_TEST_DIRNAME/mc_check.py"
GD_STORE_OPTS=(--memory 16M --small-memory 8M --no-hugetlb --no-mlock
	       --ssd-size 3G)
GD_PIDS=()

gd_setup() {
	if [ ! -x "$GD" ]; then
		echo "goblind is not built: $GD" >&2
		return 1
	fi
	T="$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX")"
	GD_PIDS=()
}

# gd_origin FILE LOG CMD...: start an origin (a test's probe, bench/origin)
# that writes the port it listens on to FILE, wait for it, and set
# GD_ORIGIN_PORT (not echoed: in a $(...) its pid would be lost);
# gd_teardown stops it.
gd_origin() {
	local file=$1 log=$2
	shift 2
	rm -f "$file"
	"$@" >"$log" 2>&1 &
	GD_PIDS+=($!)
	for _ in $(seq 100); do
		[ -s "$file" ] && break
		sleep 0.05
	done
	GD_ORIGIN_PORT=$(cat "$file")
}

gd_teardown() {
	local p
	for p in "${GD_PIDS[@]}"; do
		kill "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	[ -n "${M:-}" ] && { fusermount3 -u "$M" 2>/dev/null || true; }
	[ -n "${T:-}" ] && rm -rf "$T"
}

# gd_start NAME [OPTIONS]: goblind on store $T/NAME, memcache and HTTP on
# port 0 (the kernel picks); sets PORT, HPORT (HTTP, empty with --no-http),
# GPID and LOG (the log file)
gd_start() {
	local name="$1" i
	shift
	LOG="$T/$name.log"
	# made here: the child opens it only after the fork, and a sed of a
	# file not yet there fails the test under set -e
	: >"$LOG"
	"$GD" --store "$T/$name" "${GD_STORE_OPTS[@]}" --memcache-port 0 \
		--http-port 0 --cores 2 "$@" 2>"$LOG" &
	GPID=$!
	GD_PIDS+=("$GPID")
	for i in $(seq 100); do
		PORT=$(sed -n 's/.*memcache on [^ ]*:\([0-9]*\),.*/\1/p' \
			"$LOG")
		HPORT=$(sed -n 's/.*http on [^ ]*:\([0-9]*\).*/\1/p' \
			"$LOG" | cut -d, -f1)
		[ -n "$PORT" ] && { [ -n "$HPORT" ] ||
			[[ " $* " == *" --no-http "* ]]; } && return 0
		kill -0 "$GPID" 2>/dev/null || break
		sleep 0.05
	done
	echo "goblind did not start; its log:" >&2
	cat "$LOG" >&2
	return 1
}

# resp_start NAME [OPTIONS]: gd_start with RESP on port 0 and on the
# socket $T/NAME.sock; sets RPORT and RSOCK besides gd_start's
resp_start() {
	local name=$1 i
	shift
	RSOCK="$T/$name.sock"
	gd_start "$name" --resp-port 0 --resp-unixsocket "$RSOCK" "$@"
	for i in $(seq 100); do
		RPORT=$(sed -n 's/.*resp on [^ ]*:\([0-9]*\)$/\1/p' "$LOG")
		[ -n "$RPORT" ] && grep -q "resp on unix socket" "$LOG" &&
			return 0
		sleep 0.05
	done
	cat "$LOG" >&2
	return 1
}

# gd_stop: SIGTERM, and it must exit 0
gd_stop() {
	kill -TERM "$GPID"
	wait "$GPID"
}

# gd_nutcracker [OPTION_LINE] PORT1 PORT2 PORT3: twemproxy with ketama in
# front of three servers on 127.0.0.1, its config checked (-t) first, an
# OPTION_LINE such as "redis: true" added to its pool; sets PPORT once it
# accepts connections
gd_nutcracker() {
	local extra= i stats_port
	[ $# = 4 ] && { extra="  $1"; shift; }
	read -r PPORT stats_port < <("$PY" -c 'import socket
a, b = socket.socket(), socket.socket()
a.bind(("127.0.0.1", 0)); b.bind(("127.0.0.1", 0))
print(a.getsockname()[1], b.getsockname()[1])')
	cat >"$T/nutcracker.yml" <<-EOF
	goblin:
	  listen: 127.0.0.1:$PPORT
	  hash: fnv1a_64
	  distribution: ketama
	$extra
	  timeout: 5000
	  auto_eject_hosts: false
	  servers:
	   - 127.0.0.1:$1:1 g1
	   - 127.0.0.1:$2:1 g2
	   - 127.0.0.1:$3:1 g3
	EOF
	nutcracker -t -c "$T/nutcracker.yml"
	nutcracker -c "$T/nutcracker.yml" -o "$T/nutcracker.log" \
		-s "$stats_port" -a 127.0.0.1 -p "$T/nutcracker.pid" &
	GD_PIDS+=($!)
	for i in $(seq 50); do
		"$PY" -c "import socket; socket.create_connection(('127.0.0.1', $PPORT))" \
			2>/dev/null && return 0
		sleep 0.1
	done
	echo "nutcracker does not accept on $PPORT; its log:" >&2
	cat "$T/nutcracker.log" >&2
	return 1
}

# mc [PORT]: send standard input, print what came back (see mc_check.py)
mc() {
	"$PY" "$MCCHECK" raw "${1:-$PORT}"
}

# stat_of NAME [ARG [PORT]]: one "STAT NAME value" of stats (or stats ARG)
stat_of() {
	printf 'stats %s\r\nquit\r\n' "${2:-}" | mc "${3:-$PORT}" | tr -d '\r' |
		awk -v n="$1" '$1 == "STAT" && $2 == n { print $3 }'
}
