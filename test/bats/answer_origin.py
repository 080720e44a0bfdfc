#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""An answering origin for the mirror's response tests: it answers exactly what
the test wrote.

  answer_origin.py DIR PORTFILE

GET or HEAD /NAME answers with the file DIR/NAME, sent as it is: its
status line, its header lines (CRLF or LF, sent as CRLF), a blank line,
then the body.  Content-Length is added when the file has neither it nor
Transfer-Encoding, unless the status is 1xx, 204 or 304.  A missing file
is a 404 without freshness.  Every request is logged in DIR/_log as
"METHOD /NAME" lines, flushed at once (the test counts them).
"""
import os
import socketserver
import sys

DIR = None


class Probe(socketserver.StreamRequestHandler):
    def handle(self):
        while True:
            line = self.rfile.readline()
            if not line:
                return
            try:
                method, target, _ = line.decode("latin-1").split(" ", 2)
            except ValueError:
                return
            length = 0
            while True:
                h = self.rfile.readline()
                if h in (b"\r\n", b"\n", b""):
                    break
                k, _, v = h.decode("latin-1").partition(":")
                if k.strip().lower() == "content-length":
                    length = int(v.strip())
            if length:
                self.rfile.read(length)
            with open(os.path.join(DIR, "_log"), "a") as f:
                f.write("%s %s\n" % (method, target))
            self.answer(method, target)

    def answer(self, method, target):
        name = target.lstrip("/").replace("/", "_")
        path = os.path.join(DIR, name)
        if not name or name.startswith("_") or not os.path.isfile(path):
            raw = b"HTTP/1.1 404 Not Found\n\nno such probe\n"
        else:
            with open(path, "rb") as f:
                raw = f.read()
        sep = raw.find(b"\n\n")
        if sep < 0:
            head, body = raw, b""
        else:
            head, body = raw[:sep], raw[sep + 2:]
        lines = [ln.rstrip(b"\r") for ln in head.split(b"\n")]
        status = int(lines[0].split()[1])
        names = [ln.split(b":", 1)[0].strip().lower() for ln in lines[1:]]
        if (b"content-length" not in names and
                b"transfer-encoding" not in names and
                status >= 200 and status not in (204, 304)):
            lines.append(b"Content-Length: %d" % len(body))
        out = b"\r\n".join(lines) + b"\r\n\r\n"
        if method != "HEAD" and status >= 200 and status not in (204, 304):
            out += body
        self.wfile.write(out)
        self.wfile.flush()


class Server(socketserver.ThreadingMixIn, socketserver.TCPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    global DIR
    DIR = sys.argv[1]
    srv = Server(("127.0.0.1", 0), Probe)
    with open(sys.argv[2] + ".tmp", "w") as f:
        f.write(str(srv.server_address[1]))
    os.rename(sys.argv[2] + ".tmp", sys.argv[2])
    srv.serve_forever()


if __name__ == "__main__":
    main()
