#!/bin/bash
# vv18.sh ROUNDS: vs-vinyl.sh --quick, before issue 18 (4b2ff0c, /work/pre18) and after (main), alternately
mkdir -p /tmp/vv18
for r in $(seq ${1:-2}); do for src in /work/pre18 /work/main; do
	n=$(basename $src)
	(cd $src && bash bench/vs-vinyl.sh --quick --out /tmp/vv18/$n-$r.md) > /tmp/vv18/$n-$r.log 2>&1
	echo "$(date -u +%T) $n $(git -C $src log --oneline -1 | cut -c1-8) $(grep '^RESULT' /tmp/vv18/$n-$r.md | tr ' ' '\n' | grep -E 'ratio|goblind_' | tr '\n' ' ')"
done; done
