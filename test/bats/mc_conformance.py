# SPDX-License-Identifier: BSD-3-Clause
"""goblind's memcache replies against memcached 1.6.18's (issue 19).

  mc_conformance.py GOBLIND_PORT MEMCACHED_PORT [--table FILE]
  mc_conformance.py --check-table FILE
  mc_conformance.py --big GOBLIND_PORT MEMCACHED_PORT

Every case of CASES is sent, on a connection of its own, to both servers
on 127.0.0.1; the replies are compared after NORMALISE (cas uniques and
times differ between any two servers).  A case listed in DIFFERENCES must
differ, and goblind's reply must be the one written there (bytes, or a
regular expression for replies with counts in them); any other case must
be byte for byte memcached's.  So a new difference fails, and so does a
listed one that went away.  Exit 1 on a mismatch.  --table writes the
markdown table of bench/results/memcache-conformance.md; --check-table
checks that such a file names every listed difference.  --big sends
BIG_CASES, gets of values past goblind's RAM head (a tail read from its
disk and sent zero-copy, the reply's END in the same write) and below it,
and wants every reply byte for byte memcached's (not in the table: the
values are long).
"""
import re
import socket
import sys
import time

from conformance import judge, write_table

K250 = b"k" * 250
K251 = b"k" * 251
BIN_NOOP = bytes([0x80, 0x0a]) + bytes(22)  # binary protocol: noop

# (family, name, input, sentinel): "{k}" is the case's own key; with
# sentinel, "mn\r\n" follows the input and the reply is read up to "MN"
CASES = [
    # ---- storage ----
    ("storage", "set get", b"set {k} 5 0 3\r\nabc\r\nget {k}\r\n", True),
    ("storage", "set noreply", b"set {k} 0 0 1 noreply\r\nx\r\nget {k}\r\n",
     True),
    ("storage", "set flags max", b"set {k} 4294967295 0 1\r\nx\r\nget {k}\r\n",
     True),
    ("storage", "set flags over", b"set {k} 4294967296 0 1\r\nx\r\n", True),
    ("storage", "set empty value", b"set {k} 0 0 0\r\n\r\nget {k}\r\n", True),
    ("storage", "set bad chunk", b"set {k} 0 0 3\r\nabcd\r\nget {k}\r\n",
     True),
    ("storage", "set length -1", b"set {k} 0 0 -1\r\n", True),
    ("storage", "set length 2^32-1", b"set {k} 0 0 4294967295\r\n", True),
    ("storage", "set length not a number", b"set {k} 0 0 x\r\n", True),
    ("storage", "set noreply in the length's place",
     b"set {k} 0 0 noreply\r\n", True),
    ("storage", "set too few tokens", b"set {k} 0 0\r\n", True),
    ("storage", "set too many tokens", b"set {k} 0 0 1 noreply x\r\n", True),
    ("storage", "set key 250", b"set " + K250 + b" 0 0 1\r\nx\r\n", True),
    ("storage", "set key 251", b"set " + K251 + b" 0 0 1\r\nx\r\n", True),
    ("storage", "set expired", b"set {k} 0 -1 1\r\nx\r\nget {k}\r\n", True),
    ("storage", "add", b"add {k} 0 0 1\r\nx\r\nadd {k} 0 0 1\r\ny\r\n"
     b"get {k}\r\n", True),
    ("storage", "replace", b"replace {k} 0 0 1\r\nx\r\nset {k} 0 0 1\r\nx\r\n"
     b"replace {k} 0 0 1\r\ny\r\nget {k}\r\n", True),
    ("storage", "append prepend", b"append {k} 0 0 1\r\nx\r\n"
     b"set {k} 3 0 1\r\nb\r\nappend {k} 0 0 1\r\nc\r\n"
     b"prepend {k} 0 0 1\r\na\r\nget {k}\r\n", True),
    ("storage", "cas", b"cas {k} 0 0 1 1\r\nx\r\nset {k} 0 0 1\r\nx\r\n"
     b"cas {k} 0 0 1 18446744073709551615\r\ny\r\ngets {k}\r\n", True),
    ("storage", "cas bad unique", b"cas {k} 0 0 1 x\r\n", True),
    ("storage", "unknown case", b"SET {k} 0 0 1\r\n", True),
    # ---- retrieval ----
    ("retrieval", "get miss", b"get {k}\r\n", True),
    ("retrieval", "get no key", b"get\r\n", True),
    ("retrieval", "get many", b"set {k}a 0 0 1\r\na\r\nset {k}c 1 0 1\r\nc\r\n"
     b"get {k}a {k}b {k}c {k}a\r\n", True),
    ("retrieval", "get spaces", b"set {k} 0 0 1\r\nx\r\nget   {k}   {k}  \r\n",
     True),
    ("retrieval", "get newline only", b"set {k} 0 0 1\r\nx\r\nget {k}\n", True),
    ("retrieval", "gets", b"set {k} 0 0 1\r\nx\r\ngets {k}\r\n", True),
    ("retrieval", "get key 251 alone", b"get " + K251 + b"\r\n", True),
    ("retrieval", "get key 251 after a good key",
     b"get {k} " + K251 + b"\r\n", True),
    ("retrieval", "set then get with a key 251",
     b"set {k} 0 0 1\r\nx\r\nget {k} " + K251 + b"\r\n", True),
    ("retrieval", "gat", b"set {k} 0 0 1\r\nx\r\ngat 100 {k}\r\n"
     b"mg {k} t\r\n", True),
    ("retrieval", "gats", b"set {k} 0 0 1\r\nx\r\ngats 0 {k}\r\n", True),
    ("retrieval", "gat past time", b"set {k} 0 0 2\r\nhi\r\ngat -1 {k}\r\n"
     b"get {k}\r\n", True),
    ("retrieval", "gat bad exptime", b"gat x {k}\r\n", True),
    ("retrieval", "gat no key", b"gat 10\r\n", True),
    # ---- arithmetic ----
    ("arithmetic", "incr decr", b"set {k} 0 0 2\r\n10\r\nincr {k} 5\r\n"
     b"decr {k} 3\r\ndecr {k} 100\r\nget {k}\r\n", True),
    ("arithmetic", "incr miss", b"incr {k} 1\r\n", True),
    ("arithmetic", "incr wraps", b"set {k} 0 0 20\r\n18446744073709551615\r\n"
     b"incr {k} 2\r\n", True),
    ("arithmetic", "incr not a number", b"set {k} 0 0 1\r\nx\r\n"
     b"incr {k} 1\r\n", True),
    ("arithmetic", "incr bad delta", b"incr {k} x\r\n", True),
    ("arithmetic", "incr noreply", b"set {k} 0 0 1\r\n1\r\n"
     b"incr {k} 1 noreply\r\nget {k}\r\n", True),
    ("arithmetic", "incr noreply as delta", b"incr {k} noreply\r\n", True),
    # ---- delete, touch ----
    ("delete", "delete", b"set {k} 0 0 1\r\nx\r\ndelete {k}\r\n"
     b"delete {k}\r\n", True),
    ("delete", "delete hold 0", b"delete {k} 0\r\n", True),
    ("delete", "delete hold 1", b"delete {k} 1\r\n", True),
    ("delete", "delete noreply", b"set {k} 0 0 1\r\nx\r\n"
     b"delete {k} noreply\r\nget {k}\r\n", True),
    ("delete", "delete 0 noreply", b"delete {k} 0 noreply\r\n", True),
    ("touch", "touch", b"set {k} 0 0 1\r\nx\r\ntouch {k} 100\r\n"
     b"touch {k}x 100\r\n", True),
    ("touch", "touch bad exptime", b"touch {k} x\r\n", True),
    # ---- meta ----
    ("meta", "mn", b"mn\r\n", True),
    ("meta", "mg miss", b"mg {k} v\r\n", True),
    ("meta", "mg miss quiet", b"mg {k} v q\r\n", True),
    ("meta", "mg flags", b"set {k} 7 0 3\r\nabc\r\nmg {k} s v f t k\r\n",
     True),
    ("meta", "mg opaque", b"mg {k} O123 k\r\n", True),
    ("meta", "mg T then t", b"set {k} 0 0 1\r\nx\r\nmg {k} T300 t\r\n"
     b"mg {k} t\r\n", True),
    ("meta", "mg bad flag", b"mg {k} !\r\n", True),
    ("meta", "mg duplicate flag", b"mg {k} v v\r\n", True),
    ("meta", "ms", b"ms {k} 2\r\nhi\r\nmg {k} v\r\n", True),
    ("meta", "ms flags ttl", b"ms {k} 2 F5 T100\r\nhi\r\nmg {k} f t v\r\n",
     True),
    ("meta", "ms add exists", b"ms {k} 1\r\nx\r\nms {k} 1 ME\r\ny\r\n", True),
    ("meta", "ms cas miss c", b"ms {k} 2 c C99\r\nhi\r\n", True),
    ("meta", "ms cas bad c", b"ms {k} 1\r\nx\r\nms {k} 2 c C18446744073709551615\r\nhi\r\n",
     True),
    ("meta", "ms cas not a number", b"ms {k} 2 c C99x\r\nhi\r\n", True),
    ("meta", "ms bad mode", b"ms {k} 2 MX\r\nhi\r\n", True),
    ("meta", "ms quiet", b"ms {k} 2 q\r\nhi\r\nmg {k} v\r\n", True),
    ("meta", "ms base64 key", b"ms Zm9v 2 b\r\nhi\r\nmg Zm9v b v k\r\n",
     True),
    ("meta", "md", b"set {k} 0 0 1\r\nx\r\nmd {k}\r\nmd {k}\r\n"
     b"md {k} q\r\n", True),
    ("meta", "ma", b"ma {k}\r\nma {k} N0 J5 v\r\nma {k} v\r\n"
     b"ma {k} MD D2 v\r\n", True),
    ("meta", "ma not a number", b"set {k} 0 0 1\r\nx\r\nma {k}\r\n", True),
    # ---- the rest ----
    ("misc", "version", b"version\r\n", True),
    ("misc", "verbosity", b"verbosity 1\r\n", True),
    ("misc", "verbosity noreply", b"verbosity noreply\r\n", True),
    ("misc", "verbosity 1 noreply", b"verbosity 1 noreply\r\n", True),
    ("misc", "verbosity invalid", b"verbosity invalid\r\n", True),
    ("misc", "verbosity alone", b"verbosity\r\n", True),
    ("misc", "empty line", b"\r\n", True),
    ("misc", "unknown command", b"bogus\r\n", True),
    ("misc", "one letter", b"g\r\n", True),
    ("misc", "stats unknown", b"stats bogus\r\n", True),
    ("misc", "stats sizes", b"stats sizes\r\n", True),
    ("misc", "stats slabs", b"stats slabs\r\n", True),
    ("misc", "stats items", b"stats items\r\n", True),
    ("misc", "stats detail", b"stats detail\r\n", True),
    ("misc", "stats conns", b"stats conns\r\n", True),
    ("misc", "lru_crawler crawl", b"lru_crawler crawl all\r\n", True),
    ("misc", "lru_crawler crawl class 0", b"lru_crawler crawl 0\r\n", True),
    ("misc", "lru_crawler bogus", b"lru_crawler bogus\r\n", True),
    ("misc", "lru_crawler metadump", b"lru_crawler metadump all\r\n", False),
    ("misc", "lru_crawler metadump pipelined",
     b"set {k} 0 0 1\r\nx\r\nlru_crawler metadump all\r\n", False),
    ("misc", "quit", b"quit\r\n", False),
    ("misc", "HTTP GET", b"GET / HTTP/1.0\r\n\r\n", False),
    ("misc", "HTTP POST", b"POST /x HTTP/1.1\r\nHost: a\r\n\r\n", False),
    ("misc", "HTTP after a command", b"version\r\nHEAD / HTTP/1.1\r\n", False),
    ("misc", "HTTP-looking get", b"get / HTTP/1.1\r\n", True),
    ("misc", "HTTP-looking set", b"set / HTTP/1.1\r\n", True),
    ("misc", "binary protocol", BIN_NOOP, False),
    ("misc", "flush_all", b"set {k} 0 0 1\r\nx\r\nflush_all\r\nget {k}\r\n",
     True),
    ("misc", "flush_all noreply", b"flush_all noreply\r\n", True),
    ("misc", "flush_all bad delay", b"flush_all x\r\n", True),
]

# name -> (goblind's reply, why it differs); a reply given as a compiled
# regular expression must match whole
DIFFERENCES = {
    "set then get with a key 251": (
        b"STORED\r\nCLIENT_ERROR bad command line format\r\n",
        "memcached drops every reply not yet sent on that connection, "
        "STORED of the earlier set included; goblind drops the get's "
        "values only"),
    "stats slabs": (
        re.compile(rb"(STAT [1-4]:(chunk_size|chunks_per_page|total_pages|"
                   rb"total_chunks|used_chunks|free_chunks|free_chunks_end)"
                   rb" \d+\r\n)+STAT active_slabs \d\r\n"
                   rb"STAT total_malloced \d+\r\nEND\r\n"),
        "no slab classes: each tier is a class (1 RAM head slots, 2 small "
        "arena, 3 SSD, 4 HDD in 1 MiB pages), memcached's per-class "
        "command counters are not kept per tier"),
    "stats items": (
        re.compile(rb"STAT items:1:number \d+\r\n"
                   rb"STAT items:1:mem_requested \d+\r\n"
                   rb"STAT items:1:evicted \d+\r\n"
                   rb"STAT items:1:outofmemory \d+\r\n"
                   rb"STAT items:1:reclaimed \d+\r\nEND\r\n"),
        "one LRU over every tier, shown as class 1 with the fields goblind "
        "keeps (number, bytes, evictions, refusals, expired found)"),
    "stats detail": (
        b"ERROR\r\n",
        "no per-prefix statistics"),
    "stats conns": (
        b"ERROR\r\n",
        "no per-connection list"),
    "lru_crawler metadump": (
        re.compile(rb"(key=\S+ exp=\S+ la=\S+ cas=\S+ fetch=no cls=1 "
                   rb"size=\d+\n)+END\r\n"),
        "size= is the value's bytes (memcached: the item's, header "
        "included), fetch= is not tracked (no); memcached answers nothing "
        "more on that connection"),
    "set flags over": (
        b"CLIENT_ERROR bad command line format\r\nERROR\r\n",
        "memcached 1.6.18 reads flags with a 64-bit strtoul and keeps the "
        "low 32 bits (4294967296 is stored as 0); goblind refuses flags "
        "over 2^32-1, and the data line that follows is then a command, "
        "as after any bad storage line"),
    "incr decr": (
        b"STORED\r\n15\r\n12\r\n0\r\nVALUE <k> 0 1\r\n0\r\nEND\r\n",
        "memcached writes a shorter result over the old digits in place, "
        "padded with spaces (\"0 \"); goblind stores the digits alone "
        "(incr and decr reply the same)"),
    "lru_crawler metadump pipelined": (
        re.compile(rb"STORED\r\n(key=\S+ exp=\S+ la=\S+ cas=\S+ fetch=no "
                   rb"cls=1 size=\d+\n)+END\r\n"),
        "memcached refuses a metadump behind other commands in the same "
        "read (ERROR cannot pipeline other commands before metadump); "
        "goblind answers in order"),
    "HTTP after a command": (
        b"VERSION 1.6.18\r\n<closed>",
        "both close on the HTTP line; memcached drops the replies not yet "
        "sent, goblind sends what it answered before"),
    "binary protocol": (
        b"<closed>",
        "no binary protocol: the connection is closed at once (and "
        "logged), so a binary-only client fails fast"),
}


def normalise(b):
    """Cas uniques and times differ between any two servers."""
    b = re.sub(rb"(VALUE \S+ \d+ \d+) \d+\r\n", rb"\1 <cas>\r\n", b)
    b = re.sub(rb"(?m)^(\w\w(?: [^\r\n]*)?) c\d+", rb"\1 c<cas>", b)
    b = re.sub(rb"cas=\d+", rb"cas=<cas>", b)
    b = re.sub(rb"exp=\d+", rb"exp=<t>", b)
    b = re.sub(rb"la=\d+", rb"la=<t>", b)
    return b


def exchange(port, data, sentinel):
    s = socket.create_connection(("127.0.0.1", port))
    s.settimeout(0.5 if not sentinel else 3.0)
    s.sendall(data + (b"mn\r\n" if sentinel else b""))
    out = b""
    mns = data.count(b"mn\r\n") + 1
    try:
        while not (sentinel and out.endswith(b"MN\r\n") and
                   out.count(b"MN\r\n") >= mns):
            b = s.recv(65536)
            if not b:
                out += b"<closed>"
                break
            out += b
    except socket.timeout:
        if sentinel:
            out += b"<no MN>"
    except ConnectionResetError:
        out += b"<closed>"
    s.close()
    if sentinel and out.endswith(b"MN\r\n"):
        out = out[:-4]
    return out


def run(gport, mport, table):
    bad = 0
    rows = []
    for i, (fam, name, data, sentinel) in enumerate(CASES):
        key = b"conf%d" % i
        data = data.replace(b"{k}", key)
        g, m = (re.sub(rb"\b%s\b" % key, b"<k>",
                       normalise(exchange(p, data, sentinel)))
                for p in (gport, mport))
        ok, why, listed = judge(name, data, g, m, DIFFERENCES, "memcached")
        bad += not ok
        rows.append((fam, name, data, m, g, listed, why))
    print("%d cases, %d differences listed, %d mismatched" %
          (len(CASES), len(DIFFERENCES), bad))
    if table:
        write_table(table, rows, "memcached 1.6.18")
    return bad


def big_value(n, seed):
    return bytes((i * 7 + seed) % 251 for i in range(n))


def big_sets():
    """The sets of BIG_CASES' keys: b1 (300,000 bytes), b2 (900,000), b3
    (40,000) and b4 (10,000), built only for --big."""
    return b"".join(b"set %s %d 0 %d\r\n%s\r\n" % (k, f, len(v), v)
                    for k, f, v in ((b"b1", 1, big_value(300000, 1)),
                                    (b"b2", 2, big_value(900000, 2)),
                                    (b"b3", 3, big_value(40000, 3)),
                                    (b"b4", 4, big_value(10000, 4))))


# (name, input), each on a connection of its own after big_sets()
BIG_CASES = [
    ("get tail", b"get b1\r\n"),
    ("get longer tail, a space after the key", b"get b2 \r\n"),
    ("get below the head", b"get b3\r\n"),
    ("get small", b"get b4\r\n"),
    ("multi-get", b"get b1 b2 b3 b4\r\n"),
    ("multi-get, small values first", b"get b4 b3 b1\r\n"),
    ("multi-get ending in a miss", b"get b1 nokey\r\n"),
    ("multi-get, a miss between", b"get b2 nokey b1\r\n"),
    ("gets", b"gets b2\r\n"),
    ("gat", b"gat 0 b1 b3\r\n"),
    ("pipelined gets", b"get b1\r\nget b3\r\nget b2 b4\r\n"),
    ("mg", b"mg b1 v f\r\nmg b3 v\r\n"),
]


def run_big(gport, mport):
    sets = big_sets()
    for p in (gport, mport):
        if exchange(p, sets, True).count(b"STORED\r\n") != 4:
            print("the sets of the big values failed on port %d" % p)
            return 1
    bad = 0
    for name, data in BIG_CASES:
        g, m = (normalise(exchange(p, data, True)) for p in (gport, mport))
        same = g == m and not g.endswith(b"<no MN>")
        print("%s: %s (%d bytes)" % (name, "same" if same else "DIFFERS",
                                     len(m)))
        if not same:
            i = next((i for i in range(min(len(g), len(m)))
                      if g[i] != m[i]), min(len(g), len(m)))
            print("  first difference at byte %d: goblind %r memcached %r"
                  % (i, g[i:i + 40], m[i:i + 40]))
        bad += not same
    print("%d big cases, %d mismatched" % (len(BIG_CASES), bad))
    return 1 if bad else 0


def check_table(path):
    text = open(path).read()
    missing = [n for n in DIFFERENCES if "| %s |" % n not in text]
    for n in missing:
        print("not in %s: %s" % (path, n))
    return 1 if missing else 0


if __name__ == "__main__":
    if sys.argv[1] == "--check-table":
        sys.exit(check_table(sys.argv[2]))
    if sys.argv[1] == "--big":
        sys.exit(run_big(int(sys.argv[2]), int(sys.argv[3])))
    out = sys.argv[4] if len(sys.argv) > 4 and sys.argv[3] == "--table" \
        else None
    sys.exit(1 if run(int(sys.argv[1]), int(sys.argv[2]), out) else 0)
