# SPDX-License-Identifier: BSD-3-Clause
"""RESP checks of 74-resp.bats (issue 23), with redis-py and raw sockets.

  resp_check.py client WHERE         every command through redis-py
  resp_check.py big WHERE SIZE       SET and GET of SIZE bytes via redis-py
  resp_check.py headfirst WHERE KEY MCPORT
                                     GET KEY's header and head, hold off,
                                     print the SSD bytes read meanwhile
  resp_check.py race WHERE SECONDS   writers and readers of the same keys
  resp_check.py malformed WHERE      hostile input, then the server lives

WHERE is a TCP port on 127.0.0.1 or a Unix socket path.
"""
import hashlib
import os
import random
import socket
import sys
import threading
import time

import redis


def client(where, **kw):
    if "/" in where:
        return redis.Redis(unix_socket_path=where, **kw)
    return redis.Redis(host="127.0.0.1", port=int(where), **kw)


def raw(where):
    if "/" in where:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(where)
    else:
        s = socket.create_connection(("127.0.0.1", int(where)))
    s.settimeout(10)
    return s


def raises(fn, text):
    try:
        fn()
    except redis.ResponseError as e:
        assert text in str(e), (text, str(e))
        return
    raise AssertionError("no error: " + text)


def check_client(where):
    r = client(where)
    r.flushall()
    assert r.ping()
    assert r.echo("hi") == b"hi"
    assert r.set("a", "1") and r.get("a") == b"1"
    assert r.set("a", "2", nx=True) is None
    assert r.set("b", "1", xx=True) is None
    assert r.set("a", "3", xx=True, get=True) == b"1"
    assert r.set("a", "4", ex=100) and 99 <= r.ttl("a") <= 100
    assert r.set("a", "5", keepttl=True) and r.ttl("a") > 0
    assert r.set("a", "6", px=100000) and 98000 <= r.pttl("a") <= 101000
    assert r.persist("a") and r.ttl("a") == -1
    assert r.expire("a", 50) and 49 <= r.ttl("a") <= 50
    # milliseconds round up to the store's next whole second
    assert r.pexpire("a", 50000) and 49 <= r.ttl("a") <= 51
    assert r.ttl("nope") == -2 and r.pttl("nope") == -2
    assert r.mset({"m1": "x", "m2": "y"})
    assert r.mget("m1", "m2", "m3") == [b"x", b"y", None]
    assert r.exists("m1", "m2", "m3") == 2
    assert r.delete("m1", "m3") == 1 and r.unlink("m2") == 1
    assert r.type("a") == b"string" and r.type("nope") == b"none"
    assert r.set("s", "Hello World") and r.strlen("s") == 11
    assert r.getrange("s", 0, 4) == b"Hello"
    assert r.getrange("s", -5, -1) == b"World"
    assert r.setrange("s", 6, "Redis") == 11 and r.get("s") == b"Hello Redis"
    assert r.setrange("pad", 2, "x") == 3 and r.get("pad") == b"\0\0x"
    for i in range(50):
        r.set("scan:%d" % i, i)
    seen, cur = set(), 0
    while True:
        cur, keys = r.scan(cur, match="scan:*", count=7)
        seen.update(keys)
        if cur == 0:
            break
    assert seen == {b"scan:%d" % i for i in range(50)}, len(seen)
    assert set(r.scan_iter(match="scan:1*")) == \
        {b"scan:1"} | {b"scan:1%d" % i for i in range(10)}
    assert r.dbsize() == 50 + 3
    info = r.info()
    assert info["redis_version"] and info["connected_clients"] >= 1
    assert "db0" in info and info["db0"]["keys"] == 53
    assert "objects" in r.info("goblin")
    assert r.config_get("save") == {"save": ""}
    assert r.client_setname("me") and r.client_getname() == "me"
    assert r.client_id() > 0
    assert r.execute_command("COMMAND COUNT") > 20
    assert r.execute_command("SELECT", 0)
    raises(lambda: r.execute_command("SELECT", 1), "DB index is out of range")
    raises(lambda: r.execute_command("BOGUS", "x"),
           "unknown command 'BOGUS', with args beginning with: 'x'")
    raises(lambda: r.execute_command("GET"), "wrong number of arguments")
    raises(lambda: r.set("a", "1", ex=0), "invalid expire time")
    raises(lambda: r.execute_command("SET", "a", "1", "NX", "XX"),
           "syntax error")
    raises(lambda: r.execute_command("EXPIRE", "a", "x"),
           "value is not an integer")
    raises(lambda: r.execute_command("AUTH", "x"), "without any password")
    assert r.flushdb() and r.dbsize() == 0
    # RESP3
    s = raw(where)
    s.sendall(b"HELLO 3\r\nGET nope\r\nQUIT\r\n")
    out = b""
    while True:
        d = s.recv(65536)
        if not d:
            break
        out += d
    assert out.startswith(b"%7\r\n") and out.endswith(b"_\r\n+OK\r\n"), out
    # pipelining through redis-py
    p = r.pipeline(transaction=False)
    for i in range(1000):
        p.set("p%d" % i, i)
        p.get("p%d" % i)
    res = p.execute()
    assert res == [v for i in range(1000) for v in (True, b"%d" % i)]
    print("ok")


def pattern(size, seed=b"goblin"):
    block = hashlib.sha256(seed).digest() * 2048  # 64 KiB
    return (block * (size // len(block) + 1))[:size]


def check_big(where, size):
    r = client(where, socket_timeout=600)
    v = pattern(size)
    want = hashlib.sha1(v).hexdigest()
    t0 = time.monotonic()
    assert r.set("pybig", v)
    t1 = time.monotonic()
    del v
    got = r.get("pybig")
    t2 = time.monotonic()
    assert len(got) == size and hashlib.sha1(got).hexdigest() == want
    assert r.strlen("pybig") == size
    print("set %.2f s get %.2f s" % (t1 - t0, t2 - t1))


def headfirst(where, key, mcport):
    s = raw(where)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 16)
    t0 = time.monotonic()
    s.sendall(b"GET %s\r\n" % key.encode())
    head = b""
    while b"\r\n" not in head:
        head += s.recv(1)
    assert head.startswith(b"$") and int(head[1:-2]) > 1 << 20, head
    got = 0
    while got < 256 << 10:
        d = s.recv((256 << 10) - got)
        if not d:
            raise SystemExit("closed early")
        got += len(d)
    ttfb = time.monotonic() - t0
    time.sleep(1)   # the server has every chance to read ahead now
    m = socket.create_connection(("127.0.0.1", int(mcport)))
    m.sendall(b"stats tiers\r\nquit\r\n")
    out = b""
    while True:
        d = m.recv(65536)
        if not d:
            break
        out += d
    for line in out.decode().split("\r\n"):
        if line.startswith("STAT ssd:bytes_read "):
            print(line.split()[2], "%.6f" % ttfb)
    s.close()


def race(where, seconds):
    """Writers replace values of a few keys (lengths from 1 byte to 300 KiB,
    so small and streamed paths both run) while readers read them: every
    value read must be one written whole, with its own checksum."""
    keys = ["race:%d" % i for i in range(4)]
    stop = time.monotonic() + seconds
    errors, counts = [], {"r": 0, "w": 0}

    def value(n, tag):
        body = (b"%d:" % tag) * (n // 4 + 1)
        body = body[:n]
        return hashlib.sha1(body).hexdigest().encode() + b"|" + body

    def writer(wid):
        r = client(where)
        rnd = random.Random(wid)
        while time.monotonic() < stop:
            n = rnd.choice([1, 100, 5000, 20000, 300000])
            r.set(rnd.choice(keys), value(n, rnd.randrange(1 << 30)))
            counts["w"] += 1

    def reader(rid):
        r = client(where)
        rnd = random.Random(100 + rid)
        while time.monotonic() < stop:
            vs = r.mget(keys) if rnd.random() < 0.3 else \
                [r.get(rnd.choice(keys))]
            for v in vs:
                counts["r"] += 1
                if v is None:
                    continue
                h, _, body = v.partition(b"|")
                if hashlib.sha1(body).hexdigest().encode() != h:
                    errors.append(len(v))

    ts = [threading.Thread(target=writer, args=(i,)) for i in range(2)] + \
        [threading.Thread(target=reader, args=(i,)) for i in range(3)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    print("reads %d writes %d torn %d" % (counts["r"], counts["w"],
                                          len(errors)))
    assert counts["r"] > 50 and counts["w"] > 20 and not errors


def malformed(where):
    bad = [b"*-2\r\n", b"*1\r\n$-2\r\n", b"*2\r\n$3\r\nGET\r\n*1\r\n",
           b"*" + b"9" * 40 + b"\r\n", b"*1\r\n$" + b"9" * 40 + b"\r\n",
           b"*1\r\n" * 10000, b"[" * 100000, b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n"
           b"$5\r\nab\r\n", b"\"unterminated\r\n", b"*1\r\n$4\r\nPI",
           b"*2\r\n$4\r\nECHO\r\n$100000\r\nshort", b"\x00\xff" * 5000,
           b"*100\r\n" + b"$1\r\na\r\n" * 50]
    rnd = random.Random(23)
    for i in range(300):
        bad.append(bytes(rnd.randrange(256) for _ in
                         range(rnd.randrange(1, 200))))
        frame = b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$4\r\nvvvv\r\n"
        cut = rnd.randrange(len(frame))
        bad.append(frame[:cut] + bytes([rnd.randrange(256)]) +
                   frame[cut + 1:])
    replies = 0
    for b in bad:
        s = raw(where)
        s.settimeout(0.5)
        try:
            s.sendall(b)
            s.shutdown(socket.SHUT_WR)
            while s.recv(65536):
                replies += 1
        except (socket.timeout, ConnectionResetError, BrokenPipeError):
            pass
        s.close()
    r = client(where)
    assert r.ping() and r.set("alive", "yes") and r.get("alive") == b"yes"
    print("%d inputs, %d replies read, server alive" % (len(bad), replies))


if __name__ == "__main__":
    mode, where = sys.argv[1], sys.argv[2]
    if mode == "client":
        check_client(where)
    elif mode == "big":
        check_big(where, int(sys.argv[3]))
    elif mode == "headfirst":
        headfirst(where, sys.argv[3], sys.argv[4])
    elif mode == "race":
        race(where, float(sys.argv[3]))
    elif mode == "malformed":
        malformed(where)
    else:
        raise SystemExit("unknown mode " + mode)
