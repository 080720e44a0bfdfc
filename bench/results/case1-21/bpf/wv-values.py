#!/usr/bin/env python3
# wv-values.py FILE: from wv.bt's lines, per value (a VALUE writev to the END one on its fd), the
# time from the head's write to the next write and to END (ms), by writes a value
# (written for 04b8671's goblind, whose END went in a writev of its own; from ab2ca03 on END rides the last chunk's)
import sys,statistics as st
cur={}; res=[]
for l in open(sys.argv[1],errors="replace"):
    p=l.split()
    if len(p)<4 or not p[0].isdigit(): continue
    t=int(p[0])/1e6; fd=p[1]
    if 'VALUE' in l: cur[fd]=[t]
    elif fd in cur:
        cur[fd].append(t)
        if ' END' in l:
            w=cur.pop(fd); res.append(w)
print("values",len(res))
for k in (2,3,4,5,6):
    s=[w for w in res if len(w)==k]
    if not s: continue
    print("writes=%d n=%d head->2nd p50 %.2f p90 %.2f ms; head->END p50 %.2f p90 %.2f"%(k,len(s),st.median(w[1]-w[0] for w in s),sorted(w[1]-w[0] for w in s)[int(len(s)*.9)],st.median(w[-1]-w[0] for w in s),sorted(w[-1]-w[0] for w in s)[int(len(s)*.9)]))
