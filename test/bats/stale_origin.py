#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""A probe origin for the mirror's revalidation and staleness tests
(70-goblind-mirror-stale.bats): it answers every path as its current mode
says, counts the requests it gets and logs their headers.

    stale_origin.py PORTFILE     listen on 127.0.0.1, port 0; the port
                                 goes to PORTFILE

Control (sent to the origin directly, never through the mirror):
    POST /_probe/mode   a JSON object, any of:
        mode      "ok": 200 with body and headers (the default)
                  "cond": 304 with headers304 when If-None-Match names
                          etag, else as "ok"
                  "force304": 304 with headers304 and etag to any
                          request with If-None-Match, else as "ok"
                  "500", "503": that status, a short body
                  "drop": close the connection without a response
                  "hang": answer nothing for hang_s seconds, then drop
        body, etag, headers (200), headers304 (304), delay_ms (before
        any answer), hang_s
    GET /_probe/count   the number of requests to other paths
    GET /_probe/log     those requests as JSON: [{path, headers}, ...]
"""
import json
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

lock = threading.Lock()
state = {
    "mode": "ok",
    "body": "hello\n",
    "etag": '"v1"',
    "headers": {"Cache-Control": "max-age=1"},
    "headers304": {},
    "delay_ms": 0,
    "hang_s": 5,
}
log = []


class Probe(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, status, headers, body):
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        if status != 304:
            self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        if status != 304 and self.command != "HEAD":
            self.wfile.write(body)
        self.close_connection = True

    def control(self):
        if self.path == "/_probe/mode" and self.command == "POST":
            n = int(self.headers.get("Content-Length", "0"))
            new = json.loads(self.rfile.read(n) or b"{}")
            with lock:
                state.update(new)
            self.reply(200, {}, b"ok\n")
        elif self.path == "/_probe/count":
            with lock:
                n = len(log)
            self.reply(200, {}, b"%d\n" % n)
        elif self.path == "/_probe/log":
            with lock:
                out = json.dumps(log).encode()
            self.reply(200, {"Content-Type": "application/json"}, out)
        else:
            self.reply(404, {}, b"no such control\n")

    def answer(self):
        with lock:
            log.append({"path": self.path, "headers": dict(self.headers)})
            st = json.loads(json.dumps(state))
        if st["delay_ms"]:
            time.sleep(st["delay_ms"] / 1000.0)
        mode = st["mode"]
        body = st["body"].encode()
        if mode == "drop":
            self.connection.shutdown(socket.SHUT_RDWR)
            self.close_connection = True
            return
        if mode == "hang":
            time.sleep(st["hang_s"])
            self.connection.shutdown(socket.SHUT_RDWR)
            self.close_connection = True
            return
        if mode in ("500", "503"):
            self.reply(int(mode), {"Content-Type": "text/plain"},
                       b"origin error\n")
            return
        hdrs = dict(st["headers"])
        if st["etag"]:
            hdrs["ETag"] = st["etag"]
        inm = self.headers.get("If-None-Match")
        if mode == "force304" and inm:
            # 304 to any conditional request, with our (other) ETag
            h304 = dict(st["headers304"])
            h304["ETag"] = st["etag"]
            self.reply(304, h304, b"")
            return
        if mode == "cond" and inm and st["etag"] and \
                st["etag"] in [t.strip() for t in inm.split(",")]:
            h304 = dict(st["headers304"])
            h304["ETag"] = st["etag"]
            self.reply(304, h304, b"")
            return
        hdrs.setdefault("Content-Type", "text/plain")
        self.reply(200, hdrs, body)

    def do_GET(self):
        if self.path.startswith("/_probe/"):
            self.control()
        else:
            self.answer()

    do_HEAD = do_GET

    def do_POST(self):
        if self.path.startswith("/_probe/"):
            self.control()
        else:
            self.answer()


def main():
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Probe)
    srv.daemon_threads = True
    with open(sys.argv[1] + ".tmp", "w") as f:
        f.write("%d\n" % srv.server_address[1])
    import os
    os.rename(sys.argv[1] + ".tmp", sys.argv[1])
    srv.serve_forever()


if __name__ == "__main__":
    main()
