#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""bench/soakconns.py: the soak's quiet and hostile connections (bench/soak.sh).

  soakconns.py --mc PORT --http PORT [--mirror PORT] --manifest FILE
               [--mirror-manifest FILE] [--idle N] [--slowloris N]
               [--slow-readers N] [--rate BYTES] [--stats FILE]

Holds, in one event loop, until SIGTERM:
  idle          connections that send nothing, half memcache and half HTTP
                (each one the server closes is counted and opened again)
  slowloris     HTTP connections sending a request head one byte every
                2 s: how the server cuts them off (408 or a close, and
                after how long) is counted
  slow readers  GETs of big values (memcache and HTTP on the server, HTTP
                on the mirror) read at --rate bytes/s each; every byte is
                checked against bench/workload.h's payload of (key, size),
                the one goblinctl bench --verify checks
Writes a JSON line of its counters to --stats every 10 s and at the end,
and prints a RESULT line at the end.
"""
import argparse
import json
import random
import resource
import selectors
import signal
import socket
import struct
import sys
import time

M64 = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15


def mix64(z):
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def payload_seed(key, size):
    h = 0xCBF29CE484222325
    for b in key.encode():
        h = ((h ^ b) * 0x100000001B3) & M64
    return mix64(h ^ mix64((size + GOLDEN) & M64))


def payload(seed, off, n):
    """Bytes [off, off+n) of the object of payload seed @seed."""
    first, last = off // 8, (off + n + 7) // 8
    words = [mix64((seed + (i + 1) * GOLDEN) & M64) for i in range(first, last)]
    raw = struct.pack("<%dQ" % len(words), *words)
    skip = off % 8
    return raw[skip:skip + n]


def load_manifest(path, least):
    """The keys of at least @least bytes, with their sizes."""
    out = []
    with open(path) as f:
        for line in f:
            k, s = line.split()
            if int(s) >= least:
                out.append((k, int(s)))
    return out


C = {k: 0 for k in (
    "idle_open", "idle_closed", "slowloris_open", "slowloris_cut",
    "slowloris_408", "slowloris_cut_secs_max", "slow_open", "slow_done",
    "slow_miss", "slow_status_other", "slow_cut", "slow_truncated",
    "slow_bytes_checked", "wrong_bytes", "wrong_values", "connect_errors",
    "refused_busy")}
C["slowloris_cut_secs_min"] = None


class Conn:
    def __init__(self, role, proto, port):
        self.role, self.proto, self.port = role, proto, port
        self.sock = None
        self.t0 = 0.0
        self.buf = b""
        self.next_send = 0.0
        self.reset_req()

    def reset_req(self):
        self.key = None
        self.size = 0
        self.seed = 0
        self.off = 0
        self.in_body = False
        self.budget = 0.0


class Soak:
    def __init__(self, a):
        self.a = a
        self.sel = selectors.DefaultSelector()
        self.conns = []
        self.reopen = []          # (when, conn)
        self.big = load_manifest(a.manifest, a.big)
        self.mbig = load_manifest(a.mirror_manifest, a.big) \
            if a.mirror_manifest else []
        self.stop = False
        self.rnd = random.Random(1)

    # ---- connections ----
    def open(self, c):
        s = socket.socket()
        try:
            if c.role == "slow":
                # small buffers, so the server's sends back up
                s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16384)
            s.settimeout(3)
            s.connect(("127.0.0.1", c.port))
            s.setblocking(False)
        except OSError:
            s.close()
            C["connect_errors"] += 1
            self.reopen.append((time.monotonic() + 2, c))
            return
        c.sock, c.t0, c.buf = s, time.monotonic(), b""
        c.reset_req()
        C[c.role + "_open"] += 1
        if c.role == "slowloris":
            c.head = b"GET /slowloris HTTP/1.1\r\nHost: soak\r\nX-Slow: " + \
                b"a" * 4096
            c.sent = 0
            c.next_send = c.t0
        if c.role == "slow":
            self.start_get(c)
        else:
            self.sel.register(s, selectors.EVENT_READ, c)

    def close(self, c, delay):
        if c.sock is None:
            return
        if c.role != "slow":
            self.sel.unregister(c.sock)
        c.sock.close()
        c.sock = None
        C[c.role + "_open"] -= 1
        if not self.stop:
            self.reopen.append((time.monotonic() + delay, c))

    # ---- slow readers ----
    def start_get(self, c):
        pool = self.mbig if c.proto == "mirror" else self.big
        c.reset_req()
        c.key, c.size = self.rnd.choice(pool)
        c.seed = payload_seed(c.key, c.size)
        if c.proto == "mc":
            req = b"get %s\r\n" % c.key.encode()
        else:
            req = b"GET /%s HTTP/1.1\r\nHost: soak\r\n\r\n" % c.key.encode()
        try:
            c.sock.send(req)
        except OSError:
            C["slow_cut"] += 1
            self.close(c, 1)

    def check(self, c, data):
        exp = payload(c.seed, c.off, len(data))
        if data != exp:
            bad = sum(1 for x, y in zip(data, exp) if x != y)
            C["wrong_bytes"] += bad
            if C["wrong_values"] < 5:
                print("soakconns: WRONG bytes in %s %s at %d (+%d): %d" %
                      (c.proto, c.key, c.off, len(data), bad),
                      file=sys.stderr)
            C["wrong_values"] += 1
        C["slow_bytes_checked"] += len(data)
        c.off += len(data)

    def slow_head(self, c):
        """Parse a reply head in c.buf; True when the body starts."""
        if c.proto == "mc":
            i = c.buf.find(b"\r\n")
            if i < 0:
                return False
            line, c.buf = c.buf[:i], c.buf[i + 2:]
            if line == b"END":
                C["slow_miss"] += 1
                self.start_get(c)
                return False
            f = line.split()
            if len(f) == 4 and f[0] == b"VALUE":
                if int(f[3]) != c.size:
                    C["wrong_values"] += 1
                    C["wrong_bytes"] += max(int(f[3]), c.size)
                c.body_len = int(f[3])
                c.trailer = b"\r\nEND\r\n"
                c.in_body = True
                return True
            C["slow_status_other"] += 1
            if C["slow_status_other"] <= 5:
                print("soakconns: memcache get %s: %r" % (c.key, line),
                      file=sys.stderr)
            self.close(c, 1)
            return False
        i = c.buf.find(b"\r\n\r\n")
        if i < 0:
            return False
        head, c.buf = c.buf[:i].decode("latin-1"), c.buf[i + 4:]
        lines = head.split("\r\n")
        status = int(lines[0].split()[1])
        length = None
        for ln in lines[1:]:
            k, _, v = ln.partition(":")
            if k.strip().lower() == "content-length":
                length = int(v)
        if status == 404:
            C["slow_miss"] += 1
            c.buf = c.buf[length or 0:]
            self.start_get(c)
            return False
        if status != 200 or length is None:
            C["slow_status_other"] += 1
            # a 5xx of the failing origin through the mirror, or the like
            self.close(c, 1)
            return False
        if length != c.size:
            C["wrong_values"] += 1
            C["wrong_bytes"] += max(length, c.size)
        c.body_len = length
        c.trailer = b""
        c.in_body = True
        return True

    def slow_tick(self, c, dt):
        c.budget = min(c.budget + self.a.rate * dt, 4 * self.a.rate)
        want = int(c.budget)
        if want <= 0:
            return
        try:
            data = c.sock.recv(want)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            C["slow_truncated" if c.in_body else "slow_cut"] += 1
            self.close(c, 1)
            return
        c.budget -= len(data)
        c.buf += data
        while c.sock is not None:
            if not c.in_body:
                if not self.slow_head(c):
                    return
            need = c.body_len - c.off
            take = c.buf[:need]
            c.buf = c.buf[need:]
            if take:
                self.check(c, take)
            if c.off < c.body_len:
                return
            if len(c.buf) < len(c.trailer):
                return
            if c.buf[:len(c.trailer)] != c.trailer:
                C["wrong_values"] += 1
            c.buf = c.buf[len(c.trailer):]
            C["slow_done"] += 1
            self.start_get(c)

    # ---- idle and slowloris: readable means answered or closed ----
    def readable(self, c):
        try:
            data = c.sock.recv(65536)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if c.role == "idle":
            if data and (b"Too many" in data or b" 503 " in data):
                C["refused_busy"] += 1
            C["idle_closed"] += 1
            self.close(c, 1)
            return
        # slowloris: whatever comes back ends it
        took = time.monotonic() - c.t0
        C["slowloris_cut"] += 1
        if data.startswith(b"HTTP/1.1 408") or data.startswith(b"HTTP/1.0 408"):
            C["slowloris_408"] += 1
        C["slowloris_cut_secs_max"] = max(C["slowloris_cut_secs_max"],
                                          round(took, 1))
        if C["slowloris_cut_secs_min"] is None or took < C["slowloris_cut_secs_min"]:
            C["slowloris_cut_secs_min"] = round(took, 1)
        self.close(c, 0.5)

    def run(self):
        a = self.a
        for i in range(a.idle):
            self.conns.append(Conn("idle", "mc" if i % 2 else "http",
                                   a.mc if i % 2 else a.http))
        for i in range(a.slowloris):
            self.conns.append(Conn("slowloris", "http", a.http))
        for i in range(a.slow_readers):
            kind = ["mc", "http", "mirror"][i % 3] if a.mirror else \
                ["mc", "http"][i % 2]
            port = {"mc": a.mc, "http": a.http, "mirror": a.mirror}[kind]
            self.conns.append(Conn("slow", kind, port))
        for c in self.conns:
            self.open(c)
        last = last_stats = time.monotonic()
        self.write_stats()
        while not self.stop:
            for key, _ in self.sel.select(0.25):
                if key.data.sock is not None:
                    self.readable(key.data)
            now = time.monotonic()
            dt, last = now - last, now
            for c in self.conns:
                if c.sock is None:
                    continue
                if c.role == "slow":
                    self.slow_tick(c, dt)
                elif c.role == "slowloris" and now >= c.next_send:
                    try:
                        c.sock.send(c.head[c.sent:c.sent + 1])
                        c.sent += 1
                    except OSError:
                        self.readable(c)
                        continue
                    c.next_send = now + 2
            due = [r for r in self.reopen if r[0] <= now]
            self.reopen = [r for r in self.reopen if r[0] > now]
            for _, c in due:
                self.open(c)
            if now - last_stats >= 10:
                last_stats = now
                self.write_stats()
        self.write_stats()
        print("RESULT " + " ".join("%s=%s" % (k, v) for k, v in C.items()))

    def write_stats(self):
        if self.a.stats:
            with open(self.a.stats, "a") as f:
                f.write(json.dumps(dict(C, t=round(time.time(), 1))) + "\n")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--mc", type=int, required=True)
    p.add_argument("--http", type=int, required=True)
    p.add_argument("--mirror", type=int, default=0)
    p.add_argument("--manifest", required=True)
    p.add_argument("--mirror-manifest")
    p.add_argument("--idle", type=int, default=800)
    p.add_argument("--slowloris", type=int, default=40)
    p.add_argument("--slow-readers", type=int, default=30)
    p.add_argument("--rate", type=float, default=4096,
                   help="bytes/s each slow reader reads")
    p.add_argument("--big", type=int, default=256 * 1024,
                   help="slow readers get values of at least this size")
    p.add_argument("--stats")
    a = p.parse_args()
    want = a.idle + a.slowloris + a.slow_readers + 256
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(want, hard), hard))
    s = Soak(a)

    def on_term(*_):
        s.stop = True
    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)
    s.run()


if __name__ == "__main__":
    main()
