#!/usr/bin/env python3
# bysize.py CSV...: the completion p50 and TTFB p50 (ms) of goblinctl bench --csv rows, by value size
# (the hits only), as case1-21.md's "two regimes" section splits them
import csv,sys,statistics as st
for f in sys.argv[1:]:
    rows=[r for r in csv.DictReader(open(f)) if r['status']=='hit']
    b=[(0,300e3),(300e3,500e3),(500e3,800e3),(800e3,1.5e6),(1.5e6,3e6),(3e6,9e6)]
    out=[]
    for lo,hi in b:
        c=[(int(r['last_byte_ns'])-int(r['sent_ns']))/1e6 for r in rows if lo<=int(r['bytes'])<hi]
        t=[(int(r['first_byte_ns'])-int(r['sent_ns']))/1e6 for r in rows if lo<=int(r['bytes'])<hi]
        out.append("%d-%dK n=%d c50=%.1f ttfb50=%.2f"%(lo/1e3,hi/1e3,len(c),st.median(c),st.median(t)))
    print(f); print("\n".join(out))
