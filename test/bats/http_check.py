#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""HTTP helpers for the goblind bats tests.

  raw PORT             send stdin as is, print every byte that comes back
                       until the server closes (or 5 s of silence)
  trickle PORT         send stdin one byte at a time, then as raw
  slowloris PORT SECS  send half a head, then wait: print the reply and
                       how many seconds the server took to answer
  smuggle PORT         stdin: lines "STATUS[,STATUS...] b'bytes'" (a
                       Python bytes literal; '#' lines are comments); each
                       is sent on a connection of its own and must get
                       exactly these responses and then the close: one
                       more is a request smuggled in the ones before;
                       exits 1 if any case fails
  origin PORTFILE      a scripted origin (see Origin below); writes its
                       port to PORTFILE, logs each request on stdout
"""
import http.server
import socket
import sys
import threading
import time


def read_all(s, quiet=5.0):
    s.settimeout(quiet)
    out = b""
    while True:
        try:
            b = s.recv(65536)
        except socket.timeout:
            break
        if not b:
            break
        out += b
    return out


def raw(port, data, trickle=False):
    s = socket.create_connection(("127.0.0.1", port))
    if trickle:
        for i in range(len(data)):
            s.sendall(data[i:i + 1])
            time.sleep(0.002)
    else:
        s.sendall(data)
    sys.stdout.buffer.write(read_all(s))


def slowloris(port, secs):
    s = socket.create_connection(("127.0.0.1", port))
    t0 = time.monotonic()
    s.sendall(b"GET /x HTTP/1.1\r\nHost: a\r\nX-Slow: ")
    out = read_all(s, quiet=secs)
    print("after %.1f s:" % (time.monotonic() - t0))
    sys.stdout.buffer.write(out)


def smuggle(port, cases):
    import ast
    import re
    bad = 0
    n = 0
    for line in cases.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        want, lit = line.split(" ", 1)
        data = ast.literal_eval(lit)
        n += 1
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(data)
        s.settimeout(3.0)
        out = b""
        closed = False
        while True:
            try:
                b = s.recv(65536)
            except socket.timeout:
                break
            except ConnectionResetError:
                closed = True
                break
            if not b:
                closed = True
                break
            out += b
        s.close()
        codes = re.findall(rb"HTTP/1\.[01] (\d{3}) ", out)
        got = b",".join(codes).decode()
        ok = got == want and closed
        if not ok:
            bad += 1
        print("%s want %s got [%s]%s: %s" % (
            "ok  " if ok else "FAIL", want, got,
            "" if closed else " (not closed)", lit[:90]))
    print("%d cases, %d failed" % (n, bad))
    sys.exit(1 if bad or not n else 0)


class Origin(http.server.BaseHTTPRequestHandler):
    """Paths choose the answer:
      /plain/N      200, N bytes, max-age=3600, ETag
      /nostore/N    Cache-Control: no-store
      /private/N    Cache-Control: private
      /cookie/N     Set-Cookie
      /stale/N      max-age=0 and an ETag: revalidated each time (304)
      /auth/N       max-age=600, but 401 without "Authorization: Bearer ok"
      /authpub/N    the same with "public": storable with credentials
      /missing      404
      /slowhead     the head after 3 s
      /chunked/N    200, max-age=3600, N bytes chunked in 10 parts 0.3 s apart
      /stall/N      200, max-age=3600, Content-Length N: N/2 bytes in 10
                    parts 0.1 s apart, then nothing for 60 s
    Any method counts in /_count (plain text: "METHOD PATH" lines).
    """
    protocol_version = "HTTP/1.1"
    log = []

    def log_message(self, *a):
        pass

    def body(self, n):
        return bytes((i * 7 + 3) & 0xff for i in range(n))

    def answer(self, head_only):
        p = self.path
        Origin.log.append("%s %s %s %s" % (
            self.command, p, self.headers.get("If-None-Match", "-"),
            self.headers.get("Authorization", "-").replace(" ", "_")))
        print(Origin.log[-1], flush=True)
        if p == "/_count":
            b = ("\n".join(Origin.log[:-1]) + "\n").encode()
            Origin.log.pop()
            return self.send(200, {}, b, head_only)
        parts = p.strip("/").split("/")
        kind = parts[0]
        n = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 10
        h = {"ETag": '"v1-%s-%d"' % (kind, n)}
        if kind == "missing":
            return self.send(404, {}, b"no such thing\n", head_only)
        if kind == "slowhead":
            time.sleep(3)
        if kind == "chunked":
            h["Cache-Control"] = "max-age=3600"
            return self.send_chunked(h, self.body(n), head_only)
        if kind == "stall":
            return self.send_stall(n)
        if kind == "nostore":
            h["Cache-Control"] = "no-store"
        elif kind == "private":
            h["Cache-Control"] = "private, max-age=600"
        elif kind == "cookie":
            h["Cache-Control"] = "max-age=600"
            h["Set-Cookie"] = "a=b"
        elif kind in ("auth", "authpub"):
            if self.headers.get("Authorization") != "Bearer ok":
                return self.send(401, {}, b"who are you\n", head_only)
            h["Cache-Control"] = ("public, " if kind == "authpub"
                                  else "") + "max-age=600"
        elif kind == "stale":
            h["Cache-Control"] = "max-age=0"
            if self.headers.get("If-None-Match") == h["ETag"]:
                return self.send(304, h, b"", True)
        else:
            h["Cache-Control"] = "max-age=3600"
        self.send(200, h, self.body(n), head_only)

    def send(self, st, h, b, head_only):
        self.send_response(st)
        for k, v in h.items():
            self.send_header(k, v)
        if st != 304:
            self.send_header("Content-Length", str(len(b)))
        self.end_headers()
        if not head_only and st != 304:
            self.wfile.write(b)

    def send_chunked(self, h, b, head_only):
        self.send_response(200)
        for k, v in h.items():
            self.send_header(k, v)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        if head_only:
            return
        step = max(1, len(b) // 10)
        for i in range(0, len(b), step):
            part = b[i:i + step]
            self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
            self.wfile.flush()
            time.sleep(0.3)
        self.wfile.write(b"0\r\n\r\n")

    def send_stall(self, n):
        self.send_response(200)
        self.send_header("Cache-Control", "max-age=3600")
        self.send_header("Content-Length", str(n))
        self.end_headers()
        b = self.body(n // 2)
        step = max(1, len(b) // 10)
        for i in range(0, len(b), step):
            self.wfile.write(b[i:i + step])
            self.wfile.flush()
            time.sleep(0.1)
        time.sleep(60)
        self.close_connection = True

    def do_GET(self):
        self.answer(False)

    def do_HEAD(self):
        self.answer(True)

    def do_PUT(self):
        n = int(self.headers.get("Content-Length", "0"))
        self.rfile.read(n)
        Origin.log.append("%s %s %d" % (self.command, self.path, n))
        self.send(201, {}, b"created\n", False)

    do_DELETE = do_PUT
    do_POST = do_PUT


def origin(portfile):
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Origin)
    with open(portfile + ".tmp", "w") as f:
        f.write(str(srv.server_address[1]))
    import os
    os.rename(portfile + ".tmp", portfile)
    srv.serve_forever()


def main():
    cmd = sys.argv[1]
    if cmd == "raw":
        raw(int(sys.argv[2]), sys.stdin.buffer.read())
    elif cmd == "trickle":
        raw(int(sys.argv[2]), sys.stdin.buffer.read(), trickle=True)
    elif cmd == "slowloris":
        slowloris(int(sys.argv[2]), float(sys.argv[3]))
    elif cmd == "smuggle":
        smuggle(int(sys.argv[2]), sys.stdin.read())
    elif cmd == "origin":
        origin(sys.argv[2])
    else:
        sys.exit("unknown command " + cmd)


if __name__ == "__main__":
    main()
