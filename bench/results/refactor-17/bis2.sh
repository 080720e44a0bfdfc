#!/bin/bash
for src in /work/main /work/old /work/main; do
	n=$(basename $src)
	(cd $src && bash bench/vs-vinyl.sh --quick --out /tmp/r17b/bis2-$n.md) > /tmp/r17b/bis2-$n.log 2>&1
	echo "$(date -u +%T) $n $(git -C $src log --oneline -1 | cut -c1-8) BIG: $(grep '^| goblind | 4 /' /tmp/r17b/bis2-$n.md | awk -F'|' '{print "ttfb",$5,"per-request",$7,"aggregate",$8}') varnish $(grep '^| varnish | 4 /' /tmp/r17b/bis2-$n.md | awk -F'|' '{print $7}') web $(grep '^| goblind | \(16\|256\|1024\) |' /tmp/r17b/bis2-$n.md | awk -F'|' '{printf "%s/", $4}')"
done
