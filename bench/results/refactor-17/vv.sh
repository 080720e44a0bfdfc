#!/bin/bash
# vv.sh ROUNDS: vs-vinyl.sh --quick for old and new alternately; BIG lines
mkdir -p /tmp/b8vv
for r in $(seq ${1:-3}); do for src in /work/old /work/main; do
	n=$(basename $src)
	(cd $src && bash bench/vs-vinyl.sh --quick --out /tmp/b8vv/$n-$r.md) > /tmp/b8vv/$n-$r.log 2>&1
	echo "$(date -u +%T) $n $(git -C $src log --oneline -1 | cut -c1-8) BIG: $(grep '^| goblind | 4 /' /tmp/b8vv/$n-$r.md | awk -F'|' '{print "ttfb",$5,"per-request",$7,"aggregate",$8}') varnish $(grep '^| varnish | 4 /' /tmp/b8vv/$n-$r.md | awk -F'|' '{print $7}')"
done; done
