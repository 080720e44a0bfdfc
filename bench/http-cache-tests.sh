#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The HTTP caching tests of cache-tests.fyi (npm package http-cache-tests,
# pinned to 0.4.5) against goblind --mirror, Debian's varnishd and nginx
# proxy_cache, each in front of the suite's own origin, all on loopback.
#
# For each system: the suite's origin (server/server.mjs) on a port the
# kernel picks, the cache in front of it in a temp dir, then the suite's
# client (cli.mjs) against the cache; everything is stopped and removed at
# the end.  Prints one line a system
#   RESULT system=S passed=N total=T required_passed=R required_total=RT
# then FAILED system=S ID... (every test not passed) and, with --out, writes
# a report (date, machine, command, counts, the failing ids by group).
#
# How it counts, as cache-tests.fyi does (lib/display.mjs,
# renderTestResults): total is every test the client runs (all but the
# browser_only ones: 350 in 0.4.5), passed is every test whose result is
# exactly true, whatever its kind (required, optimal, check, or none given).
# required_* are the tests of kind 'required' (the specification's MUSTs;
# 37 in 0.4.5).  A result that is not true is one of: "Assertion" (the
# cache did the wrong thing: a fail, shown as a warning for optimal tests
# and as "no" for checks), "Setup" (the test could not set up what it
# checks, e.g. the first response was not stored: cache-tests.fyi shows it
# apart, as a setup failure; "retry" when the cache retried a request), or
# anything else (a harness failure: the client's fetch failed, say on a
# reset connection).  All three count as not passed; the counts of setup
# and harness failures are printed with the rest, and config_failures
# counts the setup failures of the suite's own first step (the PUT of each
# test's configuration through the cache to the origin): those are a run
# that did not happen, not a cache's behaviour.  Dependencies (a test
# whose prerequisite failed, drawn grey on the site) are not subtracted:
# the site's own totals do not subtract them either.
#
# The caches:
#   goblind  build/goblind (or --goblind PATH) --mirror, a 16 MiB RAM head
#            pool, an 8 MiB small-object arena and a 1 GiB SSD tier in the
#            temp dir, no memcache
#   varnish  varnishd -F -j none, a VCL that only sets the backend (the
#            builtin VCL decides everything else), malloc storage of 64 MiB
#   nginx    proxy_pass and proxy_cache with no proxy_cache_valid, so the
#            origin's Cache-Control / Expires decide; everything else
#            nginx's defaults (HTTP/1.0 to the origin, no revalidation,
#            no cache lock, default cache key)
#
# usage: bench/http-cache-tests.sh [--system goblind|varnish|nginx]...
#            [--out FILE] [--json DIR] [--goblind PATH] [--id TEST-ID]
#            [--timeout S] [--install-only]
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cmdline="bench/http-cache-tests.sh${*:+ $*}"
HCT_VERSION=0.4.5
HCT_DIR=${HCT_DIR:-$root/build/hct}
PKG=$HCT_DIR/node_modules/http-cache-tests
STAMP=$HCT_DIR/.installed-$HCT_VERSION

usage() {
	sed -n 's/^# usage: /usage: /p; /^# usage:/,/^set /{/^#   /p}' "$0" |
		sed 's/^#  //' >&2
	exit 2
}

die() {
	echo "http-cache-tests: $*" >&2
	exit 1
}

systems=() out='' jsondir='' gd=$root/build/goblind testid='' limit=300
only_install=''
while [ $# -gt 0 ]; do
	case $1 in
	--system) [ $# -ge 2 ] || usage; systems+=("$2"); shift 2 ;;
	--out) [ $# -ge 2 ] || usage; out=$2; shift 2 ;;
	--json) [ $# -ge 2 ] || usage; jsondir=$2; shift 2 ;;
	--goblind) [ $# -ge 2 ] || usage; gd=$2; shift 2 ;;
	--id) [ $# -ge 2 ] || usage; testid=$2; shift 2 ;;
	--timeout) [ $# -ge 2 ] || usage; limit=$2; shift 2 ;;
	--install-only) only_install=1; shift ;;
	-h | --help) usage ;;
	*) echo "http-cache-tests: unknown argument: $1" >&2; usage ;;
	esac
done
[ ${#systems[@]} -gt 0 ] || systems=(goblind)
for s in "${systems[@]}"; do
	case $s in
	goblind | varnish | nginx) ;;
	*) die "unknown system '$s' (goblind, varnish or nginx)" ;;
	esac
done
[[ $limit =~ ^[0-9]+$ ]] || die "--timeout wants seconds, not '$limit'"

# ---- the suite, installed once --------------------------------------------
command -v node >/dev/null ||
	die "node is missing (Debian: apt-get install nodejs npm)"
node -e 'const [a, b] = process.versions.node.split(".").map(Number);
	process.exit(a > 14 || (a === 14 && b >= 8) ? 0 : 1)' ||
	die "node $(node --version) is too old: the suite wants >= 14.8"
# vendored_install: where npm cannot reach its registry (no network, or
# a TLS-intercepting proxy whose CA this machine's node does not trust),
# the registry's own tarballs from test/vendor/npm, each checked against
# the registry's sha512 first
vendored_install() {
	local vd=$root/test/vendor/npm name ver sum got
	rm -rf "$HCT_DIR/node_modules"
	while read -r name ver sum; do
		case $name in '#'* | '') continue ;; esac
		got=sha512-$(node -e 'const c = require("crypto"), fs = require("fs");
			process.stdout.write(c.createHash("sha512").update(
				fs.readFileSync(process.argv[1])).digest("base64"))' \
			"$vd/$name-$ver.tgz") || return 1
		[ "$got" = "$sum" ] || {
			echo "http-cache-tests: $vd/$name-$ver.tgz is not the registry's ($got)" >&2
			return 1
		}
		mkdir -p "$HCT_DIR/node_modules/$name"
		tar -xzf "$vd/$name-$ver.tgz" --strip-components=1 \
			-C "$HCT_DIR/node_modules/$name" || return 1
	done <"$vd/INTEGRITY"
}

if [ ! -e "$STAMP" ] || [ ! -f "$PKG/cli.mjs" ]; then
	mkdir -p "$HCT_DIR"
	echo "http-cache-tests: installing http-cache-tests@$HCT_VERSION into $HCT_DIR" >&2
	if ! command -v npm >/dev/null; then
		echo "http-cache-tests: npm is missing (Debian: apt-get install npm); unpacking the registry's tarballs kept in test/vendor/npm" >&2
		vendored_install ||
			die "cannot install http-cache-tests@$HCT_VERSION from test/vendor/npm"
	elif ! timeout 300 npm install --prefix "$HCT_DIR" --no-audit --no-fund \
		--fetch-retries=1 --fetch-timeout=30000 \
		"http-cache-tests@$HCT_VERSION" >"$HCT_DIR/npm-install.log" 2>&1; then
		tail -3 "$HCT_DIR/npm-install.log" >&2
		echo "http-cache-tests: npm cannot fetch it (its log: $HCT_DIR/npm-install.log); unpacking the registry's tarballs kept in test/vendor/npm" >&2
		vendored_install ||
			die "cannot install http-cache-tests@$HCT_VERSION from npm or test/vendor/npm"
	fi
	v=$(node -p "require('$PKG/package.json').version")
	[ "$v" = "$HCT_VERSION" ] ||
		die "installed http-cache-tests $v, not $HCT_VERSION"
	touch "$STAMP"
fi
[ -z "$only_install" ] || exit 0

# ---- the servers ------------------------------------------------------------
T=$(mktemp -d "${TMPDIR:-/tmp}/http-cache-tests.XXXXXX")
PIDS=()
cleanup() {
	local p
	for p in "${PIDS[@]}"; do
		kill -TERM "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# free_port: a port the kernel picks, for the servers that cannot report
# the one they got (varnishd, nginx)
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# wait_log FILE PID SED: the first port SED finds in FILE, while PID lives
wait_log() {
	local p
	for _ in $(seq 200); do
		p=$(sed -n "$3" "$1" | head -1)
		[ -n "$p" ] && { echo "$p"; return 0; }
		kill -0 "$2" 2>/dev/null || break
		sleep 0.05
	done
	tail -20 "$1" >&2
	return 1
}

# wait_http PORT PID LOG: PORT answers HTTP
wait_http() {
	for _ in $(seq 200); do
		curl -s -o /dev/null "http://127.0.0.1:$1/" && return 0
		kill -0 "$2" 2>/dev/null || break
		sleep 0.05
	done
	tail -20 "$3" >&2
	return 1
}

# The suite's origin calls server.listen(port), which takes every
# interface: this preload gives such a listen() the loopback address.
cat >"$T/loopback.cjs" <<'EOF'
const net = require('net')
const listen = net.Server.prototype.listen
net.Server.prototype.listen = function (...args) {
  if (args.length === 1 && /^[0-9]+$/.test(String(args[0]))) {
    args = [Number(args[0]), '127.0.0.1']
  }
  return listen.apply(this, args)
}
EOF

# start_origin DIR: the suite's origin; sets OPORT
start_origin() {
	local d=$1
	mkdir -p "$d"
	(cd "$PKG" && npm_config_protocol=http npm_config_port=0 \
		npm_config_pidfile="$d/origin.pid" \
		exec node -r "$T/loopback.cjs" server/server.mjs) \
		>"$d/origin.log" 2>&1 &
	PIDS+=($!)
	OPORT=$(wait_log "$d/origin.log" $! \
		's|^Listening on http://127\.0\.0\.1:\([0-9]*\)/.*|\1|p') ||
		die "the suite's origin did not start"
}

# start_goblind DIR: sets CPORT, DESC
start_goblind() {
	local d=$1
	[ -x "$gd" ] || die "goblind is not built: $gd (make)"
	"$gd" --store "$d/store" --memory 16M --small-memory 8M \
		--no-hugetlb --no-mlock --ssd-size 1G --no-memcache \
		--http-port 0 --cores 2 --mirror "http://127.0.0.1:$OPORT" \
		2>"$d/goblind.log" &
	PIDS+=($!)
	CPORT=$(wait_log "$d/goblind.log" $! \
		's/.*http on [^ ]*:\([0-9]*\).*/\1/p' | cut -d, -f1) ||
		die "goblind did not start"
	DESC="goblind $("$gd" --version 2>&1 | head -1 | awk '{print $2}'): --mirror, --memory 16M --small-memory 8M --ssd-size 1G"
}

start_varnish() {
	local d=$1
	command -v varnishd >/dev/null ||
		die "varnishd is missing (Debian: apt-get install varnish)"
	CPORT=$(free_port)
	cat >"$d/default.vcl" <<-VCL
	vcl 4.1;
	# only the backend: the builtin VCL decides the rest
	backend default {
		.host = "127.0.0.1";
		.port = "$OPORT";
	}
	VCL
	varnishd -F -j none -n "$d/work" -a "127.0.0.1:$CPORT" \
		-T 127.0.0.1:0 -f "$d/default.vcl" -s malloc,64m \
		>"$d/varnish.log" 2>&1 &
	PIDS+=($!)
	wait_http "$CPORT" $! "$d/varnish.log" || die "varnishd did not start"
	DESC="$(varnishd -V 2>&1 | head -1 | sed 's/ revision.*//;s/[()]//g'): builtin VCL, backend only, -s malloc,64m"
}

start_nginx() {
	local d=$1 user=
	command -v nginx >/dev/null ||
		die "nginx is missing (Debian: apt-get install nginx-light)"
	CPORT=$(free_port)
	mkdir -p "$d/cache" "$d/tmp"
	# workers run as nobody unless told otherwise, and the temp dir is 0700
	[ "$(id -u)" != 0 ] || user="user root;"
	cat >"$d/nginx.conf" <<-NGX
	daemon off;
	$user
	worker_processes 1;
	pid $d/nginx.pid;
	error_log $d/error.log;
	events { worker_connections 512; }
	http {
		access_log off;
		client_body_temp_path $d/tmp/body;
		proxy_temp_path $d/tmp/proxy;
		fastcgi_temp_path $d/tmp/fastcgi;
		uwsgi_temp_path $d/tmp/uwsgi;
		scgi_temp_path $d/tmp/scgi;
		proxy_cache_path $d/cache keys_zone=hct:8m max_size=64m;
		server {
			listen 127.0.0.1:$CPORT;
			location / {
				proxy_pass http://127.0.0.1:$OPORT;
				proxy_cache hct;
			}
		}
	}
	NGX
	nginx -p "$d" -c "$d/nginx.conf" -e "$d/error.log" \
		>"$d/nginx.log" 2>&1 &
	PIDS+=($!)
	wait_http "$CPORT" $! "$d/nginx.log" || die "nginx did not start"
	DESC="$(nginx -v 2>&1 | sed 's/^nginx version: //'): proxy_pass + proxy_cache, no proxy_cache_valid"
}

# stop_all: stop the servers of one system
stop_all() {
	local p
	for p in "${PIDS[@]}"; do
		kill -TERM "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	PIDS=()
}

# run_client DIR ID: cli.mjs against CPORT (ID empty: every test)
run_client() {
	(cd "$PKG" && npm_config_base="http://127.0.0.1:$CPORT" \
		npm_config_id="$2" npm_package_config_id="$2" \
		exec timeout "$limit" node --no-warnings cli.mjs)
}

if [ -n "$testid" ]; then	# one test, its requests and responses
	for s in "${systems[@]}"; do
		d=$T/$s
		mkdir -p "$d"
		start_origin "$d"
		"start_$s" "$d"
		echo "== $DESC" >&2
		run_client "$d" "$testid" || true
		stop_all
	done
	exit 0
fi

# ---- the runs and their scores ----------------------------------------------
# score RESULTS.json: the counts and failing ids, the way the header says
score() {
	node --input-type=module - "$PKG" "$1" <<-'EOF'
	import fs from 'fs'
	const [pkg, file] = process.argv.slice(2)
	const tests = (await import(`${pkg}/tests/index.mjs`)).default
	tests.push((await import(`${pkg}/tests/surrogate-control.mjs`)).default)
	const res = JSON.parse(fs.readFileSync(file, 'utf8'))
	const c = { passed: 0, total: 0, rp: 0, rt: 0, setup: 0, config: 0, harness: 0, missing: 0 }
	const groups = []
	for (const suite of tests) {
	  const g = { id: suite.id, name: suite.name, total: 0, failed: [] }
	  for (const t of suite.tests) {
	    if (t.browser_only === true) continue
	    const r = res[t.id]
	    const req = t.kind === 'required'
	    c.total++; g.total++
	    if (req) c.rt++
	    if (r === true) { c.passed++; if (req) c.rp++; continue }
	    let why
	    if (r === undefined) { c.missing++; why = 'no result' }
	    else if (r[0] === 'Setup') {
	      c.setup++; why = `setup: ${r[1]}`
	      // the test's configuration did not reach the suite's origin
	      if (/^PUT config /.test(r[1])) c.config++
	    }
	    else if (r[0] === 'Assertion') why = r[1]
	    else { c.harness++; why = `harness: ${r[0]}: ${r[1]}` }
	    g.failed.push({ id: t.id, kind: t.kind || 'none', why })
	  }
	  groups.push(g)
	}
	console.log(JSON.stringify({ counts: c, groups }))
	EOF
}

declare -A SCORE DESCS
for s in "${systems[@]}"; do
	d=$T/$s
	mkdir -p "$d"
	start_origin "$d"
	"start_$s" "$d"
	DESCS[$s]=$DESC
	echo "http-cache-tests: $DESC, origin on $OPORT, cache on $CPORT" >&2
	t0=$(date +%s)
	rc=0
	run_client "$d" "" >"$d/results.json" 2>"$d/client.err" || rc=$?
	stop_all
	[ "$rc" = 0 ] || { tail -5 "$d/client.err" >&2;
		die "$s: the client failed (exit $rc; 124: over --timeout $limit s)"; }
	node -e 'JSON.parse(require("fs").readFileSync(process.argv[1]))' \
		"$d/results.json" 2>/dev/null || { tail -5 "$d/client.err" >&2;
		die "$s: the client printed no JSON results"; }
	[ -z "$jsondir" ] || { mkdir -p "$jsondir"; cp "$d/results.json" "$jsondir/$s.json"; }
	SCORE[$s]=$(score "$d/results.json")
	node -e '
	const s = JSON.parse(process.argv[1]), c = s.counts, n = process.argv[2]
	console.log(`RESULT system=${n} passed=${c.passed} total=${c.total} ` +
	  `required_passed=${c.rp} required_total=${c.rt} setup_failures=${c.setup} ` +
	  `config_failures=${c.config} ` +
	  `harness_failures=${c.harness} no_result=${c.missing} ` +
	  `seconds=${process.argv[3]}`)
	const f = s.groups.flatMap(g => g.failed)
	console.log(`FAILED system=${n} ${f.map(x => x.id).join(" ")}`)
	console.log(`REQUIRED_FAILED system=${n} ` +
	  f.filter(x => x.kind === "required").map(x => x.id).join(" "))
	' "${SCORE[$s]}" "$s" "$(($(date +%s) - t0))"
done

[ -n "$out" ] || exit 0

# ---- the report -------------------------------------------------------------
{
	for s in "${systems[@]}"; do
		printf '%s\t%s\t%s\n' "$s" "${DESCS[$s]}" "${SCORE[$s]}"
	done
} >"$T/scores.tsv"
node --input-type=module - "$PKG" "$T/scores.tsv" "$cmdline" \
	"$(uname -srm)" "$(nproc)" "$(date -u '+%Y-%m-%d %H:%M UTC')" \
	>"$out.tmp" <<-'EOF'
import fs from 'fs'
const [pkg, file, cmd, uname, nproc, date] = process.argv.slice(2)
const tests = (await import(`${pkg}/tests/index.mjs`)).default
tests.push((await import(`${pkg}/tests/surrogate-control.mjs`)).default)
const runs = fs.readFileSync(file, 'utf8').trim().split('\n').map(l => {
  const [name, desc, json] = l.split('\t')
  return { name, desc, ...JSON.parse(json) }
})
const w = s => console.log(s)
w(`# http-cache-tests ${JSON.parse(fs.readFileSync(pkg + '/package.json')).version} (cache-tests.fyi): ${runs.map(r => r.name).join(', ')}`)
w('')
w(`- Date: ${date}`)
w(`- Machine: ${uname}, ${nproc} CPUs (shared with other sessions)`)
w(`- Command: \`${cmd}\``)
for (const r of runs) w(`- ${r.name}: ${r.desc}`)
w('')
w('Counted as cache-tests.fyi counts (see the script\'s header): passed is')
w('every test whose result is true, of any kind; required is kind')
w('"required". Setup and harness failures count as not passed.')
w('')
w('| system | passed | total | required passed | required total | setup failures | harness failures |')
w('|---|---|---|---|---|---|---|')
for (const r of runs) {
  const c = r.counts
  w(`| ${r.name} | ${c.passed} | ${c.total} | ${c.rp} | ${c.rt} | ${c.setup} | ${c.harness} |`)
}
w('')
w('## Failing tests by the suite\'s groups')
w('')
w('Each group: what it checks (the suite\'s own description), how many of')
w('its tests each system passes, then every test that one of them does not')
w('pass: its id, its kind (required: a MUST; optimal: what a good cache')
w('does; check: a behaviour the suite reports without judging; none given:')
w('shown as pass/fail), what it checks (the suite\'s name of the test), and')
w('per system pass or the suite\'s message. The suite tells a stored')
w('response from a fresh one by the origin\'s `Server-Request-Count`')
w('response header: a cache that drops it (does not store or replay the')
w('origin\'s headers) fails "comes from cache" and "does not come from')
w('cache" checks alike, whatever it did. It numbers its requests in a')
w('`Req-Num` request header, which its origin echoes in `Request-Numbers`;')
w('a cache that does not forward that header to the origin makes every')
w('number NaN, which the client takes for a request sent twice: "setup:')
w('retry".')
const cell = t => t.replace(/\s+/g, ' ').replace(/\|/g, '\\|').trim()
const short = t => { t = cell(t); return t.length > 90 ? t.slice(0, 87) + '...' : t }
tests.forEach((suite, i) => {
  const per = runs.map(r => r.groups[i])
  if (per.every(g => g.failed.length === 0)) return
  w('')
  w(`### ${suite.name} (\`${suite.id}\`, ${per[0].total} tests)`)
  w('')
  if (suite.description) w(cell(suite.description) + '\n')
  w(runs.map((r, j) => `${r.name} ${per[j].total - per[j].failed.length}`).join(', ') +
    ` of ${per[0].total} pass.`)
  w('')
  w(`| test | kind | what it checks | ${runs.map(r => r.name).join(' | ')} |`)
  w(`|---|---|---|${runs.map(() => '---').join('|')}|`)
  const fails = per.map(g => Object.fromEntries(g.failed.map(f => [f.id, f.why])))
  for (const t of suite.tests) {
    if (t.browser_only === true) continue
    if (fails.every(f => !(t.id in f))) continue
    w(`| \`${t.id}\` | ${t.kind || 'none'} | ${cell(t.name)} | ` +
      fails.map(f => t.id in f ? short(f[t.id]) : 'pass').join(' | ') + ' |')
  }
})
EOF
# the hand-written reasons (what the RFCs say, what is not built)
why=$root/bench/http-cache-tests-why.md
[ -f "$why" ] && { echo; cat "$why"; } >>"$out.tmp"
mv "$out.tmp" "$out"
echo "http-cache-tests: wrote $out" >&2
