# gapsys.py PERF.DATA: from big.sh's TRACE recording, for each request
# read (a read() of under 4 KiB on the worker), how long the worker had
# been idle before it: since its last writev, and since it entered the
# epoll_wait that woke for the request.  Prints us per request, then
# the medians.
import subprocess, sys, re
out = subprocess.run(["perf", "script", "-i", sys.argv[1], "-F", "tid,time,event,trace"],
                     capture_output=True, text=True).stdout
last_w = {}
ep_in = {}
rows = []
for line in out.splitlines():
    m = re.match(r"\s*(\d+)\s+([\d.]+):\s+(\S+):\s*(.*)", line)
    if not m:
        continue
    tid, t, ev, rest = int(m[1]), float(m[2]), m[3], m[4]
    if "sys_exit_writev" in ev:
        last_w[tid] = t
    elif "sys_enter_epoll_wait" in ev:
        ep_in[tid] = t
    elif "sys_exit_read" in ev:
        r = int(rest.split("0x")[-1], 16) if "0x" in rest else 0
        if 16 < r < 4096 and tid in last_w:
            rows.append(((t - last_w[tid]) * 1e6, (t - ep_in.get(tid, t)) * 1e6))
for a, b in rows:
    print("since last writev %8.0f us, in epoll_wait %8.0f us" % (a, b))
if rows:
    xs = sorted(a for a, _ in rows); ys = sorted(b for _, b in rows)
    print("median: since last writev %.0f us, in epoll_wait %.0f us (n=%d)" %
          (xs[len(xs) // 2], ys[len(ys) // 2], len(rows)))
