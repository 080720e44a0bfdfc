# SPDX-License-Identifier: BSD-3-Clause
"""Talk memcache to goblind over a socket, for the bats tests.

  raw PORT              send stdin, print everything until the server
                        closes or stays quiet for 0.5 s
  rawquit PORT          the same for input that ends in quit: wait up to
                        10 s of silence for the server to close
  cases PORT            the exact-reply table below; exit 1 on a mismatch
  bigset PORT KEY SIZE  set SIZE pseudo-random bytes, streamed
  bigget PORT KEY SIZE  get them back and compare; prints "ttfb total"
  headfirst PORT KEY    read the header and the first 256 KiB, then stop
                        reading and print ssd:bytes_read from a second
                        connection (the tail must not be read ahead whole)
  bigline PORT MCSOCK   storage lines with lengths over --max-item, over
                        memcached's int32 bound, or unparseable: the same
                        bytes to goblind (PORT) and to memcached (its Unix
                        socket MCSOCK) must bring the same replies; then
                        goblind alone must answer such a line before any
                        of its data block is sent; exit 1 on a mismatch
"""
import hashlib
import socket
import sys
import time


def conn(port):
    if isinstance(port, str):       # a Unix socket's path
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(port)
        return s
    s = socket.create_connection(("127.0.0.1", port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def exchange(port, data, quiet=0.5, done=None):
    """Send @data, return what came back until the server closes or stays
    quiet for @quiet s.  With @done (a test of the bytes so far), a reply
    not yet done may be slow rather than over: it gets up to 10 s of
    silence (a loaded machine), and once done only @quiet for more."""
    s = conn(port)
    out = b""
    try:
        if data:
            s.sendall(data)
        while True:
            s.settimeout(quiet if done is None or done(out) else 10.0)
            d = s.recv(1 << 16)
            if not d:
                out += b"<closed>"
                break
            out += d
    except socket.timeout:
        pass
    except (ConnectionResetError, BrokenPipeError):
        out += b"<reset>"
    s.close()
    return out


# (what is sent, what must come back exactly); run in order, one
# connection each, on a fresh store.
CASES = [
    (b"bogus\r\n", b"ERROR\r\n"),
    (b"\r\n", b"ERROR\r\n"),
    (b"get\r\n", b"ERROR\r\n"),
    (b"get nothing\r\n", b"END\r\n"),
    (b"set a 5 0 3\r\nabc\r\nget a\r\ngets a b\r\n",
     b"STORED\r\nVALUE a 5 3\r\nabc\r\nEND\r\nVALUE a 5 3 @CAS\r\nabc\r\nEND\r\n"),
    (b"set a 0 0 1\r\nxyz\r\nget a\r\n",
     b"CLIENT_ERROR bad data chunk\r\nERROR\r\nVALUE a 5 3\r\nabc\r\nEND\r\n"),
    (b"set a 0 0 1\nx\nget a\n", b"CLIENT_ERROR bad data chunk\r\nERROR\r\n"),
    (b"set a x 0 1\r\nx\r\n", b"CLIENT_ERROR bad command line format\r\nERROR\r\n"),
    (b"set a 0 0 -1\r\n", b"CLIENT_ERROR bad command line format\r\n"),
    (b"set " + b"k" * 251 + b" 0 0 1\r\nx\r\n",
     b"CLIENT_ERROR bad command line format\r\nERROR\r\n"),
    (b"set " + b"k" * 250 + b" 0 0 1\r\nx\r\n", b"STORED\r\n"),
    (b"get " + b"k" * 251 + b"\r\n", b"CLIENT_ERROR bad command line format\r\n"),
    (b"set c\x01d 0 0 1\r\nx\r\n", b"CLIENT_ERROR bad command line format\r\nERROR\r\n"),
    (b"get a\x7f\r\n", b"CLIENT_ERROR bad command line format\r\n"),
    # oversize (--max-item 1M): swallowed, refused, framing kept, old gone
    (b"set a 0 0 2000000\r\n" + b"y" * 2000000 + b"\r\nget a\r\n",
     b"SERVER_ERROR object too large for cache\r\nEND\r\n"),
    (b"set a 0 0 2000000 noreply\r\n" + b"y" * 2000000 + b"\r\nmn\r\n",
     b"MN\r\n"),
    (b"set a 0 0 1 noreply\r\nx\r\nget a\r\n", b"VALUE a 0 1\r\nx\r\nEND\r\n"),
    (b"set a 0 0 1 noreply\r\nxyz\r\n", b"ERROR\r\n"),
    (b"add a 0 0 1\r\ny\r\nreplace zz 0 0 1\r\ny\r\nreplace a 0 0 1\r\nr\r\n",
     b"NOT_STORED\r\nNOT_STORED\r\nSTORED\r\n"),
    (b"append a 0 0 2\r\n-z\r\nprepend a 0 0 2\r\nA-\r\nget a\r\nappend zz 0 0 1\r\nq\r\n",
     b"STORED\r\nSTORED\r\nVALUE a 0 5\r\nA-r-z\r\nEND\r\nNOT_STORED\r\n"),
    (b"cas a 0 0 1 1\r\nx\r\ncas zz 0 0 1 5\r\nx\r\ncas a 0 0 1\r\nx\r\n",
     b"EXISTS\r\nNOT_FOUND\r\nERROR\r\nERROR\r\n"),
    (b"set n 0 0 2\r\n10\r\nincr n 5\r\ndecr n 100\r\nincr n x\r\nincr zz 1\r\n"
     b"incr a 1\r\nincr n 1 noreply\r\nget n\r\n",
     b"STORED\r\n15\r\n0\r\nCLIENT_ERROR invalid numeric delta argument\r\n"
     b"NOT_FOUND\r\nCLIENT_ERROR cannot increment or decrement non-numeric value\r\n"
     b"VALUE n 0 1\r\n1\r\nEND\r\n"),
    (b"set n 0 0 20\r\n18446744073709551615\r\nincr n 1\r\n", b"STORED\r\n0\r\n"),
    (b"delete n 1\r\ndelete n 0\r\ndelete n\r\ndelete zz noreply\r\nmn\r\n",
     b"CLIENT_ERROR bad command line format.  Usage: delete <key> [noreply]\r\n"
     b"DELETED\r\nNOT_FOUND\r\nMN\r\n"),
    (b"touch a\r\ntouch a 100\r\ntouch zz 10\r\ntouch a x\r\n",
     b"ERROR\r\nTOUCHED\r\nNOT_FOUND\r\nCLIENT_ERROR invalid exptime argument\r\n"),
    (b"gat 100 a zz\r\ngat\r\ngat a\r\n",
     b"VALUE a 0 5\r\nA-r-z\r\nEND\r\nERROR\r\nCLIENT_ERROR invalid exptime argument\r\n"),
    (b"set e 0 -1 1\r\nx\r\nget e\r\n", b"STORED\r\nEND\r\n"),
    (b"verbosity\r\nverbosity 1\r\nverbosity 1 noreply\r\nverbosity x\r\n",
     b"ERROR\r\nOK\r\nCLIENT_ERROR bad command line format\r\n"),
    (b"version\r\n", b"VERSION @VERSION\r\n"),
    (b"stats nosuch\r\n", b"ERROR\r\n"),
    (b"quit\r\nget a\r\n", b"<closed>"),
    (b"x" * 2100, b"<closed>"),
    (b"get " + b"k " * 1500 + b"\r\n", b"END\r\n"),
    # meta
    (b"mn\r\nmg\r\nmg zz v\r\nmg zz v q\r\nmg zz k Oxy\r\nmn\r\n",
     b"MN\r\nERROR\r\nEN\r\nEN kzz Oxy\r\nMN\r\n"),
    (b"ms m 2 T0 F5 c\r\nhi\r\nmg m s v f t k Oab\r\n",
     b"HD c@CAS\r\nVA 2 s2 f5 t-1 km Oab\r\nhi\r\n"),
    (b"ms m 2 q\r\nhi\r\nms m 2 q C1\r\nhi\r\nmn\r\n", b"EX\r\nMN\r\n"),
    (b"ms m 2 MX\r\nhi\r\nmn\r\n", b"CLIENT_ERROR invalid mode for ms M token\r\nMN\r\n"),
    (b"ms m S2\r\nhi\r\n", b"CLIENT_ERROR bad command line format\r\nERROR\r\n"),
    (b"mg m Z\r\nmg m v v\r\nmg m O" + b"x" * 33 + b"\r\nmg m Tx\r\n",
     b"CLIENT_ERROR invalid flag\r\nCLIENT_ERROR duplicate flag\r\n"
     b"CLIENT_ERROR opaque token too long\r\n"
     b"CLIENT_ERROR bad token in command line format\r\n"),
    (b"ms m 2 ME\r\nxx\r\nms m 2 MA\r\nyz\r\nms m 2 MP\r\n<<\r\nmg m v\r\n",
     b"NS\r\nHD\r\nHD\r\nVA 6\r\n<<hiyz\r\n"),
    (b"mg m v G2-3\r\nmg m v s G4-\r\nmg m v G9-10\r\n",
     b"VA 2\r\nhi\r\nVA 2 s6\r\nyz\r\nVA 0\r\n\r\n"),
    (b"ms YWJj 1 b k\r\nx\r\nmg YWJj b k v\r\nget abc\r\nmg !!! b v\r\n",
     b"HD kYWJj b\r\nVA 1 kYWJj b\r\nx\r\nVALUE abc 0 1\r\nx\r\nEND\r\n"
     b"CLIENT_ERROR error decoding key\r\n"),
    (b"md zz\r\nmd zz q\r\nmd m q\r\nmd m k Oab\r\nmn\r\n",
     b"NF\r\nNF\r\nNF km Oab\r\nMN\r\n"),
    (b"ma zz\r\nma zz N0 J13 v\r\nma zz v\r\nma zz MD D100 v\r\nma zz q\r\nmn\r\n",
     b"NF\r\nVA 2\r\n13\r\nVA 2\r\n14\r\nVA 1\r\n0\r\nMN\r\n"),
    (b"ma abc\r\n",
     b"CLIENT_ERROR cannot increment or decrement non-numeric value\r\n"),
    (b"mg v1 v N30\r\nmg v1 v N30\r\n", b"VA 0 W\r\n\r\nVA 0 Z\r\n\r\n"),
    (b"set s 0 0 1\r\n1\r\nmd s I T30\r\nmg s v\r\nmg s v\r\nset s 0 0 1\r\n2\r\nmg s v\r\n",
     b"STORED\r\nHD\r\nVA 1 X W\r\n1\r\nVA 1 Z X\r\n1\r\nSTORED\r\nVA 1\r\n2\r\n"),
    (b"mg s v t R30\r\nmg s v t R30\r\n", b"VA 1 t-1\r\n2\r\nVA 1 t-1\r\n2\r\n"),
    (b"me s\r\nme nokey\r\nme\r\n",
     b"ME s exp=-1 la=@LA cas=@CAS fetch=no cls=1 size=1\r\nEN\r\n"
     b"CLIENT_ERROR bad command line format\r\n"),
    (b"flush_all\r\nget a s\r\nflush_all x\r\nflush_all 0 0 0\r\nflush_all noreply\r\nmn\r\n",
     b"OK\r\nEND\r\nCLIENT_ERROR invalid exptime argument\r\nERROR\r\nMN\r\n"),
]


def match(want, got, version):
    """Compare with @CAS / @LA (any digits) and @VERSION placeholders."""
    import re
    pat = re.escape(want.replace(b"@VERSION", version.encode()))
    pat = pat.replace(re.escape(b"@CAS"), b"[0-9]+").replace(
        re.escape(b"@LA"), b"[0-9]+")
    return re.fullmatch(pat, got, re.S) is not None


def cases(port):
    version = exchange(port, b"version\r\n",
                       done=lambda o: o.endswith(b"\r\n")).decode().split()[1]
    bad = 0
    for i, (send, want) in enumerate(CASES):
        got = exchange(port, send,
                       done=lambda o, w=want: match(w, o, version))
        if not match(want, got, version):
            bad += 1
            print("case %d: sent %r\n  want %r\n  got  %r" %
                  (i, send[:120], want[:300], got[:300]))
    print("%d cases, %d mismatched" % (len(CASES), bad))
    return 1 if bad else 0


def pattern(size):
    """Deterministic incompressible-enough bytes, 1 MiB at a time."""
    blk = hashlib.sha256(b"goblin").digest() * (1 << 15)
    while size > 0:
        n = min(size, len(blk))
        yield blk[:n]
        size -= n


def recv_line(s):
    line = b""
    while not line.endswith(b"\r\n"):
        d = s.recv(1)
        if not d:
            raise SystemExit("closed in a line: %r" % line)
        line += d
    return line


def bigset(port, key, size):
    s = conn(port)
    s.sendall(b"set %s 0 0 %d\r\n" % (key.encode(), size))
    for b in pattern(size):
        s.sendall(b)
    s.sendall(b"\r\n")
    line = recv_line(s)
    if line != b"STORED\r\n":
        raise SystemExit("set: %r" % line)


def bigget(port, key, size):
    s = conn(port)
    t0 = time.monotonic()
    s.sendall(b"get %s\r\n" % key.encode())
    line = recv_line(s)
    ttfb = time.monotonic() - t0
    if line.split()[:4] != [b"VALUE", key.encode(), b"0", str(size).encode()]:
        raise SystemExit("get: %r" % line)
    want = hashlib.sha1()
    for b in pattern(size):
        want.update(b)
    got = hashlib.sha1()
    left = size + 2     # the value and its "\r\n"
    while left:
        d = s.recv(min(left, 1 << 20))
        if not d:
            raise SystemExit("closed with %d bytes left" % left)
        left -= len(d)
        got.update(d)
    total = time.monotonic() - t0
    if recv_line(s) != b"END\r\n":
        raise SystemExit("no END")
    want.update(b"\r\n")
    if got.digest() != want.digest():
        raise SystemExit("value differs")
    print("%.6f %.6f" % (ttfb, total))


def headfirst(port, key):
    s = conn(port)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 16)
    t0 = time.monotonic()
    s.sendall(b"get %s\r\n" % key.encode())
    recv_line(s)
    got = 0
    while got < 256 << 10:
        d = s.recv((256 << 10) - got)
        if not d:
            raise SystemExit("closed early")
        got += len(d)
    ttfb = time.monotonic() - t0
    time.sleep(1)   # the server has every chance to read ahead now
    out = exchange(port, b"stats tiers\r\n").decode()
    for line in out.split("\r\n"):
        if line.startswith("STAT ssd:bytes_read "):
            print(line.split()[2], "%.6f" % ttfb)
    s.close()


# (sent, what both reply); --max-item 1M on goblind, -I 1m on memcached
BIGLINES = [
    (b"set k 0 0 1\r\nx\r\nset k 0 0 2000000\r\n" + b"y" * 2000000 +
     b"\r\nget k\r\nmn\r\n",
     b"STORED\r\nSERVER_ERROR object too large for cache\r\nEND\r\nMN\r\n"),
    (b"ms k 2000000 T0\r\n" + b"y" * 2000000 + b"\r\nmn\r\n",
     b"SERVER_ERROR object too large for cache\r\nMN\r\n"),
    (b"set k 0 0 2000000 noreply\r\n" + b"y" * 2000000 + b"\r\nmn\r\n",
     b"MN\r\n"),
    # over memcached's int32 bound: refused, the block not read (its
    # bytes are then lines of their own: ERROR)
    (b"set k 0 0 2147483646\r\nabc\r\nmn\r\n",
     b"CLIENT_ERROR bad command line format\r\nERROR\r\nMN\r\n"),
    (b"set k 0 0 2147483648\r\nabc\r\nmn\r\n",
     b"CLIENT_ERROR bad command line format\r\nERROR\r\nMN\r\n"),
    (b"add k 0 0 4294967295\r\nabc\r\nmn\r\n",
     b"CLIENT_ERROR bad command line format\r\nERROR\r\nMN\r\n"),
    (b"cas k 0 0 4294967295 1\r\nabc\r\nmn\r\n",
     b"CLIENT_ERROR bad command line format\r\nERROR\r\nMN\r\n"),
    (b"append k 0 0 3000000000\r\nabc\r\nmn\r\n",
     b"CLIENT_ERROR bad command line format\r\nERROR\r\nMN\r\n"),
    (b"set k 0 0 4294967295 noreply\r\nabc\r\nmn\r\n",
     b"ERROR\r\nMN\r\n"),
    (b"ms k 4294967295 q\r\nabc\r\nmn\r\n",
     b"CLIENT_ERROR bad command line format\r\nERROR\r\nMN\r\n"),
    (b"ms k 2147483647\r\nabc\r\nmn\r\n",
     b"CLIENT_ERROR bad command line format\r\nERROR\r\nMN\r\n"),
    # unparseable
    (b"set k 0 0 18446744073709551616\r\nabc\r\nmn\r\n",
     b"CLIENT_ERROR bad command line format\r\nERROR\r\nMN\r\n"),
    (b"set k 0 0 99999999999999999999999\r\nabc\r\nmn\r\n",
     b"CLIENT_ERROR bad command line format\r\nERROR\r\nMN\r\n"),
    (b"set k 0 0 1x\r\nabc\r\nmn\r\n",
     b"CLIENT_ERROR bad command line format\r\nERROR\r\nMN\r\n"),
    (b"ms k 1x\r\nabc\r\nmn\r\n",
     b"CLIENT_ERROR bad command line format\r\nERROR\r\nMN\r\n"),
]

# (line, goblind's reply) for goblind alone, with no data block sent:
# the reply comes at once and the connection then takes the block (or,
# over memcached's bound, reads on as commands).  memcached 1.6.18 sends
# the first reply only after swallowing 2,000,002 bytes, and reads
# 99999999999 as an int32 (1215752191): it would swallow 1.2 GB.
EARLY = [
    (b"set k 0 0 2000000\r\n",
     b"SERVER_ERROR object too large for cache\r\n", 2000000),
    (b"ms k 2000000\r\n",
     b"SERVER_ERROR object too large for cache\r\n", 2000000),
    (b"set k 0 0 99999999999\r\n",
     b"CLIENT_ERROR bad command line format\r\n", None),
    (b"ms k 99999999999\r\n",
     b"CLIENT_ERROR bad command line format\r\n", None),
    (b"set k 0 0 9223372036854775807\r\n",
     b"CLIENT_ERROR bad command line format\r\n", None),
]


def recv_until(s, got, done, timeout):
    """Read from @s onto @got until done(got), a close or @timeout s of
    silence."""
    s.settimeout(timeout)
    try:
        while not done(got):
            d = s.recv(4096)
            if not d:
                break
            got += d
    except socket.timeout:
        pass
    return got


def bigline(port, mcsock):
    bad = 0
    for send, want in BIGLINES:
        got = exchange(port, send, done=lambda o, w=want: o == w)
        ref = exchange(mcsock, send, done=lambda o, w=want: o == w)
        if got != want or ref != want:
            bad += 1
            print("sent %r\n  want      %r\n  goblind   %r\n  memcached %r"
                  % (send[:60], want, got, ref))
    for line, want, block in EARLY:
        s = conn(port)
        t0 = time.monotonic()
        s.sendall(line)
        got = recv_until(s, b"", lambda g: len(g) >= len(want), 2.0)
        dt = time.monotonic() - t0
        if block is not None:    # the block is then taken, framing kept
            s.sendall(b"y" * block + b"\r\nmn\r\n")
        else:
            s.sendall(b"mn\r\n")
        got = recv_until(s, got, lambda g: g.endswith(b"MN\r\n"), 5.0)
        s.close()
        print("%r: first reply after %.3f s" % (line, dt))
        if got != want + b"MN\r\n" or dt > 1.0:
            bad += 1
            print("  want %r within 1 s\n  got  %r" % (want + b"MN\r\n", got))
    print("%d cases, %d mismatched" % (len(BIGLINES) + len(EARLY), bad))
    return 1 if bad else 0


def main():
    cmd, port = sys.argv[1], int(sys.argv[2])
    if cmd == "raw":
        # input that ends with quit is answered in full once the server
        # closes: wait for that (a loaded machine may take over 0.5 s)
        data = sys.stdin.buffer.read()
        ends = data.rstrip(b"\r\n").endswith(b"quit")
        sys.stdout.buffer.write(exchange(
            port, data, done=(lambda out: False) if ends else None))
    elif cmd == "rawquit":
        sys.stdout.buffer.write(exchange(port, sys.stdin.buffer.read(),
                                         done=lambda out: False))
    elif cmd == "cases":
        sys.exit(cases(port))
    elif cmd == "bigset":
        bigset(port, sys.argv[3], int(sys.argv[4]))
    elif cmd == "bigget":
        bigget(port, sys.argv[3], int(sys.argv[4]))
    elif cmd == "headfirst":
        headfirst(port, sys.argv[3])
    elif cmd == "bigline":
        sys.exit(bigline(port, sys.argv[3]))


if __name__ == "__main__":
    main()
