#!/bin/bash
set -u
for src in /work/old /tmp/bis-7b72944 /tmp/bis-8a65da0 /tmp/bis-6a2edb8 /work/main; do
	n=$(basename $src)
	(cd $src && bash bench/vs-vinyl.sh --quick --out /tmp/r17b/bis-$n.md) > /tmp/r17b/bis-$n.log 2>&1
	echo "$(date -u +%T) $n $(git -C $src log --oneline -1 | cut -c1-8) BIG: $(grep '^| goblind | 4 /' /tmp/r17b/bis-$n.md | awk -F'|' '{print "ttfb",$5,"per-request",$7,"aggregate",$8}') varnish $(grep '^| varnish | 4 /' /tmp/r17b/bis-$n.md | awk -F'|' '{print $7}')"
done
echo BISDONE
