# SPDX-License-Identifier: BSD-3-Clause
"""Many connections to goblind at once, for the bats tests (issue 16).

  flood PID MCPORT HPORT NMC NHTTP [HOLD]
        open NMC memcache and NHTTP HTTP connections at once, send one
        request on each ("version"; "GET /_goblin/stats") and wait up to
        3 s for each answer; then, holding them all open, measure the CPU
        time goblind (PID) uses over HOLD seconds (default 1).  Prints
        key=value lines: mc_ok, mc_refused (ERROR Too many open
        connections), http_ok, http_503 (with Retry-After), silent (no
        answer in time), other, cpu_ticks (utime+stime, 1/CLK_TCK s).
  steps HOST PORT FILE
        FILE holds a Python list of connections, each a list of
        requests: bytes, answered by a reply (read until it ends in
        "\r\n" or the server closes, up to 3 s, then 0.1 s of quiet), or
        ("quiet", bytes), answered by nothing (0.3 s of quiet).  Each is
        sent alone; what comes back is printed, one repr a line
        (<closed> when the server closed).  Run against two servers,
        outputs compare.
  raw HOST PORT
        send stdin on one connection, print what comes back: the first
        reply (up to 3 s), then all until 0.5 s of quiet
  hold PORT N SECS
        open N memcache connections, check each answers "version", keep
        them idle SECS seconds, then print open=K: how many goblind has
        not closed meanwhile (it closes idle ones under pressure).
"""
import resource
import selectors
import socket
import sys
import time


def cpu_ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])	# utime, stime


def classify(kind, data):
    if kind == "mc":
        if data.startswith(b"VERSION "):
            return "mc_ok"
        if data == b"ERROR Too many open connections\r\n":
            return "mc_refused"
        return "other"
    head = data.split(b"\r\n\r\n", 1)[0]
    if head.startswith(b"HTTP/1.1 200"):
        return "http_ok"
    if head.startswith(b"HTTP/1.1 503") and b"\r\nRetry-After: " in head:
        return "http_503"
    return "other"


def complete(kind, data):
    if kind == "mc":
        return data.endswith(b"\r\n")
    return b"\r\n\r\n" in data


def flood(pid, mcport, hport, nmc, nhttp, hold=1.0):
    """The memcache connections first, all at once; then, holding them,
    the HTTP ones."""
    socks = []
    reqs = {"mc": b"version\r\n",
            "http": b"GET /_goblin/stats HTTP/1.1\r\nHost: t\r\n\r\n"}
    for kind, port, n in (("mc", mcport, nmc), ("http", hport, nhttp)):
        sel = selectors.DefaultSelector()
        for _ in range(n):
            s = socket.create_connection(("127.0.0.1", port))
            s.sendall(reqs[kind])
            s.setblocking(False)
            st = {"kind": kind, "data": b"", "done": False}
            sel.register(s, selectors.EVENT_READ, st)
            socks.append((s, st))
        deadline = time.monotonic() + 3
        left = n
        while left and time.monotonic() < deadline:
            for key, _ in sel.select(0.1):
                st = key.data
                try:
                    d = key.fileobj.recv(1 << 16)
                except (ConnectionResetError, BlockingIOError):
                    d = b""
                if d:
                    st["data"] += d
                if not d or complete(st["kind"], st["data"]):
                    st["done"] = True
                    left -= 1
                    sel.unregister(key.fileobj)
        sel.close()
    counts = dict.fromkeys(["mc_ok", "mc_refused", "http_ok", "http_503",
                            "silent", "other"], 0)
    for _, st in socks:
        if not st["data"]:
            counts["silent"] += 1
        else:
            counts[classify(st["kind"], st["data"])] += 1
    t0 = cpu_ticks(pid)
    time.sleep(hold)
    counts["cpu_ticks"] = cpu_ticks(pid) - t0
    for k, v in counts.items():
        print(f"{k}={v}")
    for s, _ in socks:
        s.close()


def read_until(s, timeout, done=None):
    """What @s sends until done(bytes so far), a close ("<closed>" added),
    a reset ("<reset>" added) or @timeout s of silence."""
    out = b""
    s.settimeout(timeout)
    try:
        while done is None or not done(out):
            d = s.recv(1 << 16)
            if not d:
                return out + b"<closed>"
            out += d
    except socket.timeout:
        pass
    except ConnectionResetError:
        return out + b"<reset>"
    return out


def quiet_read(s, quiet):
    return read_until(s, quiet)


def reply_read(s):
    """A reply line (3 s for it to start), then whatever follows it
    within 0.1 s."""
    out = read_until(s, 3, lambda o: o.endswith(b"\r\n"))
    return out + quiet_read(s, 0.1) if out.endswith(b"\r\n") else out


def steps(host, port, file):
    with open(file) as f:
        conns = eval(f.read())	# a test's own literal list
    for reqs in conns:
        s = socket.create_connection((host, port))
        for r in reqs:
            if isinstance(r, tuple):
                r = r[1]
                s.sendall(r)
                got = quiet_read(s, 0.3)
            else:
                s.sendall(r)
                got = reply_read(s)
            print(repr(r), "->", repr(got))
            if got.endswith((b"<closed>", b"<reset>")):
                break
        s.close()
        print("--")


def raw(host, port):
    s = socket.create_connection((host, port))
    s.sendall(sys.stdin.buffer.read())
    out = reply_read(s)
    if not out.endswith((b"<closed>", b"<reset>")):
        out += quiet_read(s, 0.5)
    sys.stdout.buffer.write(out)
    s.close()


def hold(port, n, secs):
    socks = []
    for _ in range(n):
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(b"version\r\n")
        s.settimeout(3)
        if not s.recv(256).startswith(b"VERSION "):
            print("not served")
            sys.exit(1)
        socks.append(s)
    time.sleep(secs)
    still = 0
    for s in socks:
        s.setblocking(False)
        try:
            still += s.recv(1) != b""	# b"": goblind closed it
        except BlockingIOError:
            still += 1
        except ConnectionResetError:
            pass
        s.close()
    print(f"open={still}")


if __name__ == "__main__":
    # a test may have lowered the open files limit for goblind's sake
    _soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (_hard, _hard))
    if sys.argv[1] == "flood":
        a = sys.argv[2:]
        flood(int(a[0]), int(a[1]), int(a[2]), int(a[3]), int(a[4]),
              float(a[5]) if len(a) > 5 else 1.0)
    elif sys.argv[1] == "steps":
        steps(sys.argv[2], int(sys.argv[3]), sys.argv[4])
    elif sys.argv[1] == "raw":
        raw(sys.argv[2], int(sys.argv[3]))
    elif sys.argv[1] == "hold":
        hold(int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]))
    else:
        sys.exit(__doc__)
