# readwrite.py PERF.DATA: big.sh's RAWTRACE recording (every syscall of
# goblind's threads): for each request read (a read of 40-999 bytes), the
# us from its return to the next writev's entry (the request path in user
# space: no syscall between) and that writev's own time; medians.
import statistics, subprocess, sys
out = subprocess.run(["perf", "script", "-i", sys.argv[1], "-F",
                      "time,event,trace"], capture_output=True,
                     text=True).stdout
ev = []
for line in out.splitlines():
    p = line.split()
    if len(p) >= 5:
        ev.append((float(p[0][:-1]) * 1e6, p[1].rstrip(":"), " ".join(p[2:])))
path, wv = [], []
for k, (t, e, r) in enumerate(ev):
    if e != "raw_syscalls:sys_exit" or not r.startswith("NR 0 ="):
        continue
    if not 40 < int(r.split("=")[1]) < 1000:
        continue
    for j in range(k + 1, min(k + 6, len(ev) - 1)):
        t2, e2, r2 = ev[j]
        if e2 == "raw_syscalls:sys_enter" and r2.startswith("NR 20 "):
            path.append(t2 - t)
            wv.append(ev[j + 1][0] - t2)
            break
if path:
    print("read->writev us: %s median %.1f | writev us median %.1f" %
          (" ".join("%.0f" % x for x in path), statistics.median(path),
           statistics.median(wv)))
