#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# make install and make uninstall (issue 15): the three programs, the
# manual pages, an example goblin.conf and the systemd unit, with PREFIX
# and DESTDIR honoured and the unit's paths following PREFIX; the installed
# goblind runs with the installed configuration.

bats_require_minimum_version 1.5.0

load goblind

TOP="$BATS_TEST_DIRNAME/../.."

setup() {
	gd_setup goblin-install
}

teardown() {
	gd_teardown
}

# mk TARGET [VAR=value ...]: make in the tree, quietly
mk() {
	make -s --no-print-directory -C "$TOP" "$@"
}

@test "issue 15: make install DESTDIR= puts every file where PREFIX says" {
	mk install DESTDIR="$T/root" >/dev/null
	(cd "$T/root" && find . -type f | sort) >"$T/got"
	cat >"$T/want" <<-'LIST'
	./usr/local/bin/goblinctl
	./usr/local/bin/goblinfs
	./usr/local/etc/goblin/goblin.conf
	./usr/local/lib/systemd/system/goblind.service
	./usr/local/sbin/goblind
	./usr/local/share/doc/goblin/goblin.conf.example
	./usr/local/share/man/man1/goblinctl.1
	./usr/local/share/man/man1/goblinfs.1
	./usr/local/share/man/man5/goblin.conf.5
	./usr/local/share/man/man7/goblin.7
	./usr/local/share/man/man8/goblind.8
	LIST
	diff -u "$T/want" "$T/got"
	local r="$T/root/usr/local"
	[ -x "$r/sbin/goblind" ] && [ -x "$r/bin/goblinctl" ] && [ -x "$r/bin/goblinfs" ]
	cmp "$r/sbin/goblind" "$TOP/build/goblind"
	[ "$(stat -c %a "$r/share/man/man7/goblin.7")" = 644 ]
	grep -qx 'ExecStart=/usr/local/sbin/goblind --config /usr/local/etc/goblin/goblin.conf' \
		"$r/lib/systemd/system/goblind.service"
	! grep -q '@[A-Z]*@' "$r/lib/systemd/system/goblind.service"
	# PREFIX=/usr: configuration in /etc, as Debian's own packages do
	mk install DESTDIR="$T/usr" PREFIX=/usr >/dev/null
	grep -qx 'ExecStart=/usr/sbin/goblind --config /etc/goblin/goblin.conf' \
		"$T/usr/usr/lib/systemd/system/goblind.service"
	[ -f "$T/usr/etc/goblin/goblin.conf" ]
	[ -x "$T/usr/usr/sbin/goblind" ]
}

@test "issue 15: the installed goblind runs with the installed goblin.conf" {
	mk install DESTDIR="$T/root" >/dev/null
	local r="$T/root/usr/local"
	run -0 "$r/sbin/goblind" --help
	[[ "$output" == *--config* ]]
	# the example as it is, but the store and the ports, which are the
	# machine's: command-line options override the file
	GD="$r/sbin/goblind" gd_start inst --config "$r/etc/goblin/goblin.conf"
	printf 'set k 0 0 2\r\nhi\r\nget k\r\nquit\r\n' | mc | tr -d '\r' >"$T/out"
	grep -qx 'STORED' "$T/out"
	grep -qx 'hi' "$T/out"
	gd_stop
	# every man page renders without a warning
	local m
	if command -v groff >/dev/null; then
		for m in "$r"/share/man/man*/*; do
			run -0 groff -man -Tutf8 -ww -z "$m"
			[ -z "$output" ] || { echo "$m: $output"; false; }
		done
	fi
}

@test "issue 15: systemd-analyze verify accepts the installed unit" {
	command -v systemd-analyze >/dev/null || skip "no systemd-analyze (package systemd)"
	# a unit it must accept first: where that fails (a chroot without
	# systemd's view of the system), verify cannot judge ours either
	printf '[Unit]\nDescription=control\n[Service]\nExecStart=%s\n' \
		"$(command -v true)" >"$T/control.service"
	systemd-analyze verify --man=no "$T/control.service" >"$T/ctl" 2>&1 ||
		skip "systemd-analyze cannot verify a unit here: $(head -c 200 "$T/ctl")"
	# installed for real under a prefix of the test's own, so that the
	# unit's ExecStart names a program that exists on this machine
	mk install PREFIX="$T/p" >/dev/null
	grep -qx "ExecStart=$T/p/sbin/goblind --config $T/p/etc/goblin/goblin.conf" \
		"$T/p/lib/systemd/system/goblind.service"
	# (--man=no: its man(1) check needs man-db; the pages Documentation=
	# names are checked here instead)
	run systemd-analyze verify --man=no \
		"$T/p/lib/systemd/system/goblind.service"
	[ "$status" = 0 ] && [ -z "$output" ] || { echo "$output"; false; }
	local doc n sec
	for doc in $(sed -n 's/^Documentation=//p' \
		     "$T/p/lib/systemd/system/goblind.service"); do
		[[ "$doc" =~ ^man:([a-z.]+)\(([0-9])\)$ ]]
		n=${BASH_REMATCH[1]} sec=${BASH_REMATCH[2]}
		[ -f "$T/p/share/man/man$sec/$n.$sec" ] ||
			{ echo "no page for $doc"; false; }
	done
}

@test "issue 15: make uninstall removes what install put, keeps an edited goblin.conf" {
	mk install DESTDIR="$T/root" >/dev/null
	mk uninstall DESTDIR="$T/root" >/dev/null
	run -0 find "$T/root" -type f
	[ -z "$output" ]
	# reinstalling keeps an admin's configuration, and so does uninstall
	mk install DESTDIR="$T/root" >/dev/null
	echo 'memory = 2G' >>"$T/root/usr/local/etc/goblin/goblin.conf"
	run -0 mk install DESTDIR="$T/root"
	[[ "$output" == *"keeping $T/root/usr/local/etc/goblin/goblin.conf"* ]]
	grep -qx 'memory = 2G' "$T/root/usr/local/etc/goblin/goblin.conf"
	run -0 mk uninstall DESTDIR="$T/root"
	[[ "$output" == *"it was edited"* ]]
	run -0 find "$T/root" -type f
	[ "$output" = "$T/root/usr/local/etc/goblin/goblin.conf" ]
}

# hold_port: a listener of this test's own on a free port; sets HELD
hold_port() {
	python3 -c 'import socket, sys, time
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen()
print(s.getsockname()[1], flush=True)
time.sleep(60)' >"$T/held" 2>/dev/null 3>&- &
	GD_PIDS+=("$!")
	local i
	for i in $(seq 100); do
		HELD=$(cat "$T/held" 2>/dev/null || true)
		[ -n "$HELD" ] && return 0
		sleep 0.05
	done
	return 1
}

@test "issue 15: a port in use is said plainly, with the option to change it" {
	hold_port
	run -128 "$TOP/build/goblind" --store "$T/s" "${GD_STORE_OPTS[@]}" \
		--memcache-port "$HELD" --http-port 0
	[[ "$output" == *"port $HELD: Address already in use"* ]]
	[[ "$output" == *"choose a free port with --memcache-port"* ]]
	run -128 "$TOP/build/goblind" --store "$T/s" "${GD_STORE_OPTS[@]}" \
		--memcache-port 0 --http-port "$HELD"
	[[ "$output" == *"choose a free port with --http-port"* ]]
	# make run checks before it starts goblind (a second goblind would
	# share a port with the first: SO_REUSEPORT)
	# (bounded: a check that let it start would leave goblind running)
	run -2 timeout 120 make -s -C "$TOP" run GOBLIND_PORT="$HELD"
	[[ "$output" == *"port $HELD (memcache) is already in use"* ]]
	[[ "$output" == *"make run GOBLIND_PORT=$((HELD + 1))"* ]]
	run -2 timeout 120 make -s -C "$TOP" run GOBLIND_PORT=0 \
		GOBLIND_HTTP_PORT="$HELD"
	[[ "$output" == *"make run GOBLIND_HTTP_PORT=$((HELD + 1))"* ]]
}
