#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# crash: the long run of the crash test (issue 16): goblind killed with
# SIGKILL at random moments for --minutes (default 20) under memcache,
# HTTP and mount writers and readers, restarted on the same store each
# round, every object checked against the model of acknowledged writes
# (test/crash/crashtest.py --long; make test runs its one-minute profile).
# Writes bench/results/crash.md; a run shorter than 20 minutes is labelled
# a short run in it.
set -euo pipefail

usage() {
	cat >&2 <<USAGE
usage: bench/crash.sh [--minutes N] [--seed N] [--dir DIR] [--out FILE]
  --minutes N  minutes of rounds before the final check (default 20)
  --seed N     replay a seed (default: random, recorded)
  --dir DIR    scratch directory (default /var/tmp/goblin-crash)
  --out FILE   report (default bench/results/crash.md)
USAGE
	exit 129
}

root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/lib.sh"
invocation="bench/crash.sh${*:+ $*}"
minutes=20
seed=
dir=/var/tmp/goblin-crash
out=$root/bench/results/crash.md
while [ $# -gt 0 ]; do
	case $1 in
	--minutes) minutes=$2; shift 2 ;;
	--seed) seed=$2; shift 2 ;;
	--dir) dir=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	-h|--help) usage ;;
	*) echo "crash: unknown option '$1'" >&2; usage ;;
	esac
done
[ -e /dev/fuse ] && command -v fusermount3 >/dev/null ||
	{ echo "crash: needs FUSE (/dev/fuse, fusermount3)" >&2; exit 1; }
rm -rf "$dir/run"
mkdir -p "$dir"
log=$dir/crash.log
# A mount write is acknowledged when close() returns (goblinfs commits at
# FLUSH), and a mount read at a stale size fails the run like any other
# wrong byte (both goblinfs bugs of issue 16 are fixed).
cmd=(/usr/bin/python3 "$root/test/crash/crashtest.py" --long
     --duration "$((minutes * 60))" --dir "$dir/run" --mount-ack close
     ${seed:+--seed "$seed"})
echo "crash: ${cmd[*]}" >&2
start=$(date -u '+%Y-%m-%d %H:%M UTC')
t0=$(date +%s)
set +e
"${cmd[@]}" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
set -e
elapsed=$(( $(date +%s) - t0 ))
[ "$rc" = 0 ] && rm -rf "$dir/run"

/usr/bin/python3 - "$log" "$out" "$invocation" "${cmd[*]}" "$elapsed" \
	"$rc" "$minutes" "$start" "$(machine_info "$dir" "$root")" <<'PY'
import re, sys
log, out, inv, cmd, elapsed, rc, minutes, start, machine = sys.argv[1:]
text = open(log).read()
def grab(pat, default="?"):
    m = re.search(pat, text, re.M)
    return m.group(1) if m else default
short = int(minutes) < 20
title = "# Crash test: kill -9 of goblind under memcache, HTTP and mount load"
if short:
    title += " (SHORT RUN: %s minutes, not the 20-minute bench)" % minutes
summary = grab(r"^crash: (\d+ rounds, .*)$")
rounds = [l[7:] for l in text.splitlines() if l.startswith("crash: round ")]
early = sum("(recovery)" in l for l in rounds)
res = "PASS" if rc == "0" else "FAIL (exit %s)" % rc
seed = grab(r"^crash: seed (\d+)")
profile = grab(r"^crash: seed \d+; (.*); dir")
final = grab(r"^crash: final: (.*)$")
ops = grab(r"^crash: (\d+ acknowledged operations .*)$")
with open(out, "w") as f:
    f.write(f"""{title}

{res}: **{summary}**

- date: {start}; {elapsed} s in all (rounds, then the final check)
- command: `{inv}`, which ran `{cmd}`
- seed: {seed} (replay: `bench/crash.sh --minutes {minutes} --seed {seed}`;
  the schedule replays, thread interleavings do not)
- profile: {profile}
- rounds: {len(rounds)}, of which {early} were killed during startup and
  recovery (no load); each other round verified every key through one
  front-end drawn per key, ran writers and readers, and was killed
- final check: {final}
- operations: {ops}

A write counts as acknowledged on memcache STORED, HTTP 201/204, and for
the mount when close() has returned (goblinfs commits at FUSE FLUSH,
before close() returns).  Mount writes are whole files (O_TRUNC), in
place (O_RDWR from offset 0, then ftruncate) or appends (O_APPEND to the
version the key holds: the store shares its extents; issue 20), a third
each; an appended version must come back whole or as the version it was
appended to.  Every wrong byte fails the run, mount reads cut short or
padded at a stale size included.

## Machine

```
{machine}
```

## Rounds

```
""")
    f.write("\n".join(rounds) + "\n```\n")
    errs = [l for l in text.splitlines()
            if re.match(r"crash: (LOST|WRONG|STALE|DIED|HUNG|STARTUP)", l)]
    if errs:
        f.write("\n## Failures\n\n```\n" + "\n".join(errs[:100]) + "\n```\n")
PY
echo "crash: report in $out" >&2
exit "$rc"
