#!/bin/bash
# vv21.sh ROUNDS: bench/vs-vinyl.sh --quick from main's worktree (299d5cf)
# and this branch's, alternately, main first; each run its own Varnish and
# nginx.  Reports in /tmp/vv21; one summary line per run.
mkdir -p /tmp/vv21
for r in $(seq ${1:-1}); do for src in /work/wt-ttfb-base /work/wt-ttfb; do
	n=$(basename $src)
	(cd $src && bash bench/vs-vinyl.sh --quick --dir /var/tmp/vv21 --out /tmp/vv21/$n-$r.md) >/tmp/vv21/$n-$r.log 2>&1
	echo "$(date -u +%T) $n $(git -C $src log --oneline -1 | cut -c1-8) $(grep '^RESULT' /tmp/vv21/$n-$r.md | tr ' ' '\n' | grep -E 'ratio|_big_|goblind_' | tr '\n' ' ')"
done; done
