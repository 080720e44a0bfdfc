# ttfbtrace.py PERF.DATA: big.sh's TRACE recording (system wide, CLOCK_
# MONOTONIC): for each measured request, the client's send, the worker's
# wake-up and read of the request, its first writev, the client's first
# recv, in us from the send, and the CPUs of the client and the worker.
import subprocess, sys
out = subprocess.run(["perf", "script", "-i", sys.argv[1], "-F",
                      "comm,tid,cpu,time,event,trace"],
                     capture_output=True, text=True).stdout
ev = []
for line in out.splitlines():
    p = line.split()
    # comm may hold no spaces here (goblinctl, goblind-w0 ...)
    try:
        i = next(k for k, x in enumerate(p) if x.startswith("[") and x.endswith("]"))
    except StopIteration:
        continue
    comm, tid, cpu = p[0], int(p[i - 1]), int(p[i][1:-1])
    t = float(p[i + 1].rstrip(":")) * 1e6
    name = p[i + 2].rstrip(":")
    ev.append((t, comm, tid, cpu, name, " ".join(p[i + 3:])))
rows = []
for k, (t, comm, tid, cpu, name, rest) in enumerate(ev):
    if comm != "goblinctl" or name != "syscalls:sys_enter_sendto":
        continue
    # the worker's request read, first writev; the client's first recv
    wake = rd = wv = rc = None
    wcpu = None
    for t2, c2, tid2, cpu2, n2, r2 in ev[k + 1:k + 4000]:
        if t2 - t > 20000:
            break
        if rd is None and c2.startswith("goblind-w") and n2 == "syscalls:sys_exit_epoll_wait":
            wake = t2
        if rd is None and c2.startswith("goblind-w") and n2 == "syscalls:sys_exit_read" and r2 not in ("0x8",):
            rd, wcpu = t2, cpu2
        if rd is not None and wv is None and c2.startswith("goblind-w") and n2 == "syscalls:sys_exit_writev":
            wv = t2
        if c2 == "goblinctl" and n2 == "syscalls:sys_exit_recvfrom" and rc is None:
            rc = t2
            ccpu = cpu2
        if rc is not None and wv is not None:
            break
    if None in (rd, wv, rc):
        continue
    rows.append((t, cpu, wcpu, (wake or rd) - t, rd - t, wv - t, rc - t))
print("client cpu, worker cpu, us from send: worker epoll exit, read, first writev, client first recv")
for t, c, w, a, b, d, e in rows:
    print("%d %d  %6.0f %6.0f %6.0f %6.0f" % (c, w, a, b, d, e))
