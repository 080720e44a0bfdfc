# rtt.py srv CPU | cli CPU: the floor under a loopback round trip on this
# machine.  srv echoes what it reads on one TCP connection (port 23456),
# pinned to CPU; cli, pinned to its CPU, sends 40 bytes and reads the
# echo, 400 times after each idle gap (0, 50, 500, 3000 us: a spin for
# gaps under 200 us, a sleep above), and prints the round trip's median
# and p90 in us.  Both sides block in recv, as goblind's clients do;
# SPIN=1 in a side's environment makes that side spin on a non-blocking
# recv instead, so that its CPU never halts.
import os, socket, sys, time


def recv(sock):
    if not os.environ.get("SPIN"):
        return sock.recv(100)
    while True:
        try:
            return sock.recv(100, socket.MSG_DONTWAIT)
        except BlockingIOError:
            pass


mode, cpu, port = sys.argv[1], int(sys.argv[2]), 23456
os.sched_setaffinity(0, {cpu})
if mode == "srv":
    lst = socket.socket()
    lst.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    lst.bind(("127.0.0.1", port))
    lst.listen(1)
    c, _ = lst.accept()
    c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    while True:
        d = recv(c)
        if not d:
            break
        c.sendall(d)
    sys.exit(0)
s = socket.create_connection(("127.0.0.1", port))
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
out = []
for gap in (0, 50, 500, 3000):
    xs = []
    for _ in range(400):
        if gap >= 200:
            time.sleep(gap / 1e6)
        elif gap:
            t = time.perf_counter_ns() + gap * 1000
            while time.perf_counter_ns() < t:
                pass
        t0 = time.perf_counter_ns()
        s.sendall(b"x" * 40)
        recv(s)
        xs.append((time.perf_counter_ns() - t0) / 1000)
    xs.sort()
    out.append("gap%d=%.1f/%.1f" % (gap, xs[200], xs[360]))
print("rtt_us " + " ".join(out))
