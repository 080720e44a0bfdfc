#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""An echoing origin for the goblind --mirror request tests (68-*.bats).

  echo_origin.py PORTFILE   listen on 127.0.0.1, port 0; write the port
                             to PORTFILE; serve until killed

Every request, whatever its method, is answered 200 with a JSON body that
echoes what arrived: {"method", "target", "headers": [[name, value], ...],
"body", "n"}, n counting the requests for that target so far (1 on the
first), so a client sees whether its answer came from the origin again.
The answer is cacheable (Cache-Control: max-age=3600) unless the path says
otherwise:
  /nostore/...  Cache-Control: no-store
  /vary/...     Vary: Accept-Encoding; the body's "variant" is the
                request's Accept-Encoding
A request header X-Probe-Location: URL is answered with Location: URL and
Content-Location: URL.
GET /_probe/requests (to the probe directly) lists every request so far,
[{"method", "target", "headers"}], in order.
"""
import http.server
import json
import sys
import threading

LOCK = threading.Lock()
SEEN = []
COUNT = {}


class Probe(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def __getattr__(self, name):
        # any method, extension ones too: do_BREW and the like
        if name.startswith("do_"):
            return self.answer
        raise AttributeError(name)

    def answer(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n).decode("latin-1") if n else ""
        headers = [[k, v] for k, v in self.headers.items()]
        if self.command == "GET" and self.path == "/_probe/requests":
            with LOCK:
                out = json.dumps(SEEN).encode()
            self.reply(out, [("Cache-Control", "no-store")])
            return
        with LOCK:
            SEEN.append({"method": self.command, "target": self.path,
                         "headers": headers})
            COUNT[self.path] = COUNT.get(self.path, 0) + 1
            count = COUNT[self.path]
        doc = {"method": self.command, "target": self.path,
               "headers": headers, "body": body, "n": count}
        extra = [("Content-Language", "en")]
        if self.path.startswith("/nostore/"):
            extra.append(("Cache-Control", "no-store"))
        else:
            extra.append(("Cache-Control", "max-age=3600"))
        if self.path.startswith("/vary/"):
            extra.append(("Vary", "Accept-Encoding"))
            doc["variant"] = self.headers.get("Accept-Encoding", "")
        loc = self.headers.get("X-Probe-Location")
        if loc:
            extra += [("Location", loc), ("Content-Location", loc)]
        self.reply(json.dumps(doc).encode(), extra)

    def reply(self, out, extra):
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        for k, v in extra:
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(out)


def main():
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Probe)
    srv.daemon_threads = True
    with open(sys.argv[1] + ".tmp", "w") as f:
        f.write(str(srv.server_address[1]))
    import os
    os.rename(sys.argv[1] + ".tmp", sys.argv[1])
    srv.serve_forever()


if __name__ == "__main__":
    main()
