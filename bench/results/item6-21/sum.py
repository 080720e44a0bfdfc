#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# sum.py FILE FIELD...: web-ab.sh's, c2-ab.sh's or engine-ab.sh's lines
# summed up, per phase (or server, or engine): each build's median of
# FIELD (mib_per_s, or a percentile of a latency field: completion_us.p50,
# .p90, .p99, .p999) and the median of the rounds' ratios of each build to
# the first one the file names (the base).
import statistics, sys
from collections import defaultdict

PCT = {"p50": 0, "p90": 1, "p99": 2, "p999": 3}


def value(fields, name):
    """FIELD of a RESULT line, or None where the run did not give it."""
    key, _, pct = name.partition(".")
    try:
        v = fields[key]
        return float(v.split("/")[PCT[pct]] if pct else v)
    except (KeyError, IndexError, ValueError):
        return None


rows = defaultdict(dict)    # (phase, round) -> build -> fields
builds = []
for line in open(sys.argv[1]):
    w = line.split()
    if len(w) < 4 or w[3] != "RESULT" or "missing" in w:
        continue
    if w[1] not in builds:
        builds.append(w[1])
    rows[(w[2], w[0])][w[1]] = dict(x.split("=", 1) for x in w[4:] if "=" in x)
base = builds[0]
phases = sorted({p for p, _ in rows}, key=lambda p: (p[0] != "p", len(p), p))
for name in sys.argv[2:]:
    print("%s | %s | %s" % (name, " | ".join("%s, median" % b for b in builds),
          " | ".join("%s/%s by round | median" % (b, base) for b in builds[1:])))
    for ph in phases:
        got = [rows[k] for k in sorted(rows) if k[0] == ph]
        got = [g for g in got
               if all(b in g and value(g[b], name) is not None for b in builds)]
        if not got:
            continue
        cells = ["%.1f" % statistics.median(value(g[b], name) for g in got)
                 for b in builds]
        for b in builds[1:]:
            ratios = [value(g[b], name) / value(g[base], name) for g in got]
            cells.append(" ".join("%.2f" % x for x in ratios))
            cells.append("%.2f" % statistics.median(ratios))
        print("%s | %s" % (ph, " | ".join(cells)))
    print()
