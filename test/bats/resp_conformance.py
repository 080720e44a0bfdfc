# SPDX-License-Identifier: BSD-3-Clause
"""goblind's RESP replies against Debian's redis-server 7's (issue 23).

  resp_conformance.py GOBLIND REDIS [--set main|auth] [--table FILE]
  resp_conformance.py --check-table FILE

GOBLIND and REDIS are a TCP port on 127.0.0.1 or a Unix socket path.
Every case of the set (main: no password; auth: both servers started with
the password "sekret") is sent, on a connection of its own and followed
by QUIT, to both servers; the replies are compared byte for byte
up to QUIT's +OK (or the close).  A case listed in DIFFERENCES must
differ, and goblind's reply must match the one written there (bytes, or a
regular expression that must match whole); every other case must be
redis-server's, byte for byte.  So a new difference fails, and so does a
listed one that went away.  Exit 1 on a mismatch.  --table writes the
markdown table of bench/results/resp-conformance.md; --check-table checks
that such a file names every listed difference.

redis-server is started with --databases 1 (goblind has one database).
"""
import re
import socket
import sys
import time

from conformance import judge, write_table

END = b"*1\r\n$4\r\nQUIT\r\n"
END_REPLY = b"+OK\r\n<closed>"


def C(*args):
    """One multibulk request."""
    out = b"*%d\r\n" % len(args)
    for a in args:
        a = a if isinstance(a, bytes) else a.encode()
        out += b"$%d\r\n%s\r\n" % (len(a), a)
    return out


def S(*reqs):
    return b"".join(C(*r) if isinstance(r, tuple) else r for r in reqs)


LONG = "x" * 200

# (family, name, input): "{k}" is the case's own key
MAIN = [
    # ---- strings ----
    ("string", "set get", S(("SET", "{k}", "v"), ("GET", "{k}"))),
    ("string", "get missing", S(("GET", "{k}"))),
    ("string", "set binary value", S(("SET", "{k}", "a\r\n\0b"),
                                     ("GET", "{k}"))),
    ("string", "set empty value", S(("SET", "{k}", ""), ("GET", "{k}"),
                                    ("STRLEN", "{k}"))),
    ("string", "set nx", S(("SET", "{k}", "1", "NX"), ("SET", "{k}", "2",
                                                       "nx"),
                           ("GET", "{k}"))),
    ("string", "set xx", S(("SET", "{k}", "1", "XX"), ("SET", "{k}", "2"),
                           ("SET", "{k}", "3", "xx"), ("GET", "{k}"))),
    ("string", "set get option", S(("SET", "{k}", "1", "GET"),
                                   ("SET", "{k}", "2", "GET"),
                                   ("GET", "{k}"))),
    ("string", "set nx get", S(("SET", "{k}", "1"),
                               ("SET", "{k}", "2", "NX", "GET"),
                               ("GET", "{k}"))),
    ("string", "set xx get missing", S(("SET", "{k}", "2", "XX", "GET"),
                                       ("GET", "{k}"))),
    ("string", "set ex ttl", S(("SET", "{k}", "v", "EX", "100"),
                               ("TTL", "{k}"))),
    ("string", "set px ttl", S(("SET", "{k}", "v", "PX", "100000"),
                               ("TTL", "{k}"))),
    ("string", "set exat ttl", S(("SET", "{k}", "v", "EXAT",
                                  str(int(time.time()) + 1000)),
                                 ("TTL", "{k}"))),
    ("string", "set keepttl", S(("SET", "{k}", "v", "EX", "100"),
                                ("SET", "{k}", "w", "KEEPTTL"),
                                ("TTL", "{k}"), ("SET", "{k}", "x"),
                                ("TTL", "{k}"))),
    ("string", "set ex 0", S(("SET", "{k}", "v", "EX", "0"))),
    ("string", "set ex -1", S(("SET", "{k}", "v", "EX", "-1"))),
    ("string", "set ex not a number", S(("SET", "{k}", "v", "EX", "x"))),
    ("string", "set ex overflow", S(("SET", "{k}", "v", "EX",
                                     "9223372036854775807"))),
    ("string", "set ex without value", S(("SET", "{k}", "v", "EX"))),
    ("string", "set nx xx", S(("SET", "{k}", "v", "NX", "XX"))),
    ("string", "set ex px", S(("SET", "{k}", "v", "EX", "1", "PX", "1"))),
    ("string", "set keepttl ex", S(("SET", "{k}", "v", "KEEPTTL", "EX",
                                    "1"))),
    ("string", "set bogus option", S(("SET", "{k}", "v", "BOGUS"))),
    ("string", "set arity", S(("SET", "{k}"))),
    ("string", "get arity", S(("GET",), ("GET", "a", "b"))),
    ("string", "mset mget", S(("MSET", "{k}a", "1", "{k}b", "2"),
                              ("MGET", "{k}a", "{k}b", "{k}c"))),
    ("string", "mset odd", S(("MSET", "{k}a", "1", "{k}b"))),
    ("string", "mget arity", S(("MGET",))),
    ("string", "del unlink", S(("SET", "{k}a", "1"), ("SET", "{k}b", "1"),
                               ("DEL", "{k}a", "{k}b", "{k}c"),
                               ("SET", "{k}a", "1"),
                               ("UNLINK", "{k}a", "{k}a"),
                               ("GET", "{k}a"))),
    ("string", "exists", S(("SET", "{k}", "1"),
                           ("EXISTS", "{k}", "{k}", "{k}x"))),
    ("string", "strlen", S(("SET", "{k}", "hello"), ("STRLEN", "{k}"),
                           ("STRLEN", "{k}x"))),
    ("string", "getrange", S(("SET", "{k}", "This is a string"),
                             ("GETRANGE", "{k}", "0", "3"),
                             ("GETRANGE", "{k}", "-3", "-1"),
                             ("GETRANGE", "{k}", "0", "-1"),
                             ("GETRANGE", "{k}", "10", "100"),
                             ("GETRANGE", "{k}", "5", "2"),
                             ("GETRANGE", "{k}", "-1", "-5"),
                             ("GETRANGE", "{k}", "100", "200"))),
    ("string", "getrange missing", S(("GETRANGE", "{k}", "0", "-1"))),
    ("string", "getrange not a number", S(("GETRANGE", "{k}", "a", "1"))),
    ("string", "setrange", S(("SET", "{k}", "Hello World"),
                             ("SETRANGE", "{k}", "6", "Redis"),
                             ("GET", "{k}"),
                             ("SETRANGE", "{k}x", "3", "ab"),
                             ("GET", "{k}x"),
                             ("SETRANGE", "{k}y", "3", ""),
                             ("EXISTS", "{k}y"),
                             ("SETRANGE", "{k}", "2", ""))),
    ("string", "setrange negative", S(("SETRANGE", "{k}", "-1", "x"))),
    ("string", "setrange not a number", S(("SETRANGE", "{k}", "x", "x"))),
    ("string", "setrange too far", S(("SETRANGE", "{k}", "536870912",
                                      "x"))),
    # ---- small collections ----
    ("hash", "hset hget", S(("HSET", "{k}", "f1", "a", "f2", "b"),
                            ("HSET", "{k}", "f1", "c", "f3", "d"),
                            ("HGET", "{k}", "f1"), ("HGET", "{k}", "nof"),
                            ("HGET", "{k}x", "f1"), ("HLEN", "{k}"),
                            ("HGETALL", "{k}"), ("HGETALL", "{k}x"),
                            ("TYPE", "{k}"))),
    ("hash", "hdel", S(("HSET", "{k}", "a", "1", "b", "2"),
                       ("HDEL", "{k}", "a", "zz", "a"), ("HLEN", "{k}"),
                       ("HDEL", "{k}", "b"), ("EXISTS", "{k}"),
                       ("HDEL", "{k}", "b"))),
    ("hash", "hset arity", S(("HSET", "{k}", "f"),
                             ("HSET", "{k}", "f", "v", "g"))),
    ("hash", "hash wrongtype", S(("SET", "{k}", "v"), ("HSET", "{k}", "f",
                                                       "v"),
                                 ("HGET", "{k}", "f"), ("HLEN", "{k}"),
                                 ("HSET", "{k}y", "f", "v"),
                                 ("GET", "{k}y"), ("STRLEN", "{k}y"),
                                 ("GETRANGE", "{k}y", "0", "1"),
                                 ("SETRANGE", "{k}y", "0", "x"),
                                 ("SET", "{k}y", "s", "GET"),
                                 ("MGET", "{k}", "{k}y"),
                                 ("ZADD", "{k}y", "1", "m"),
                                 ("SET", "{k}y", "s"), ("GET", "{k}y"))),
    ("zset", "zadd zrange", S(("ZADD", "{k}", "2", "b", "1", "a", "3", "c"),
                              ("ZADD", "{k}", "1.5", "b", "4", "d"),
                              ("ZRANGE", "{k}", "0", "-1"),
                              ("ZRANGE", "{k}", "0", "-1", "WITHSCORES"),
                              ("ZRANGE", "{k}", "1", "2"),
                              ("ZRANGE", "{k}", "-2", "-1", "WITHSCORES"),
                              ("ZRANGE", "{k}", "5", "10"),
                              ("ZRANGE", "{k}", "0", "-1", "REV"),
                              ("ZCARD", "{k}"), ("ZCARD", "{k}x"),
                              ("TYPE", "{k}"))),
    ("zset", "zscore", S(("ZADD", "{k}", "0.1", "a", "-inf", "b",
                          "1e300", "c"),
                         ("ZSCORE", "{k}", "a"), ("ZSCORE", "{k}", "b"),
                         ("ZSCORE", "{k}", "c"), ("ZSCORE", "{k}", "x"),
                         ("ZSCORE", "{k}x", "a"))),
    ("zset", "zadd ties", S(("ZADD", "{k}", "1", "b", "1", "a", "1", "c"),
                            ("ZRANGE", "{k}", "0", "-1"))),
    ("zset", "zadd options", S(("ZADD", "{k}", "1", "a"),
                               ("ZADD", "{k}", "NX", "5", "a", "2", "b"),
                               ("ZADD", "{k}", "XX", "5", "a", "3", "c"),
                               ("ZADD", "{k}", "CH", "6", "a", "6", "b"),
                               ("ZADD", "{k}", "GT", "1", "a"),
                               ("ZADD", "{k}", "LT", "CH", "1", "a"),
                               ("ZADD", "{k}", "INCR", "2", "a"),
                               ("ZADD", "{k}", "NX", "INCR", "2", "a"),
                               ("ZRANGE", "{k}", "0", "-1", "WITHSCORES"))),
    ("zset", "zadd errors", S(("ZADD", "{k}", "1"),
                              ("ZADD", "{k}", "x", "a"),
                              ("ZADD", "{k}", "NX", "XX", "1", "a"),
                              ("ZADD", "{k}", "GT", "LT", "1", "a"),
                              ("ZADD", "{k}", "INCR", "1", "a", "2", "b"),
                              ("ZADD", "{k}", "nan", "a"),
                              ("ZADD", "{k}"))),
    ("zset", "zrem", S(("ZADD", "{k}", "1", "a", "2", "b"),
                       ("ZREM", "{k}", "a", "x", "a"), ("ZCARD", "{k}"),
                       ("ZREM", "{k}", "b"), ("EXISTS", "{k}"))),
    ("zset", "zrange errors", S(("ZRANGE", "{k}", "a", "1"),
                                ("ZRANGE", "{k}", "0", "1", "BOGUS"),
                                ("ZRANGE", "{k}", "0"))),
    ("zset", "zset wrongtype", S(("SET", "{k}", "v"),
                                 ("ZADD", "{k}", "1", "a"),
                                 ("ZSCORE", "{k}", "a"),
                                 ("ZRANGE", "{k}", "0", "1"),
                                 ("ZCARD", "{k}"), ("ZREM", "{k}", "a"),
                                 ("HSET", "{k}y", "f", "v"),
                                 ("ZCARD", "{k}y"))),
    ("zset", "resp3 replies", S(("HELLO", "3"),
                                ("HSET", "{k}h", "f", "v", "g", "w"),
                                ("HGETALL", "{k}h"), ("HGETALL", "{k}x"),
                                ("ZADD", "{k}z", "1.5", "a", "2", "b"),
                                ("ZRANGE", "{k}z", "0", "-1", "WITHSCORES"),
                                ("ZSCORE", "{k}z", "a"),
                                ("ZSCORE", "{k}z", "x"),
                                ("ZADD", "{k}z", "INCR", "1", "a"),
                                ("CONFIG", "GET", "save"))),
    ("zset", "scan type", S(("FLUSHALL",), ("HSET", "{k}h", "f", "v"),
                            ("ZADD", "{k}z", "1", "m"),
                            ("SCAN", "0", "TYPE", "hash"),
                            ("SCAN", "0", "TYPE", "zset"),
                            ("FLUSHALL",))),
    # ---- keys ----
    ("keys", "expire ttl", S(("SET", "{k}", "v"), ("EXPIRE", "{k}", "100"),
                             ("TTL", "{k}"), ("PERSIST", "{k}"),
                             ("TTL", "{k}"), ("PERSIST", "{k}"))),
    ("keys", "expire missing", S(("EXPIRE", "{k}", "100"),
                                 ("TTL", "{k}"), ("PTTL", "{k}"),
                                 ("PERSIST", "{k}"))),
    ("keys", "expire options", S(("SET", "{k}", "v"),
                                 ("EXPIRE", "{k}", "100", "XX"),
                                 ("EXPIRE", "{k}", "100", "NX"),
                                 ("EXPIRE", "{k}", "200", "NX"),
                                 ("EXPIRE", "{k}", "50", "GT"),
                                 ("EXPIRE", "{k}", "300", "GT"),
                                 ("EXPIRE", "{k}", "400", "LT"),
                                 ("EXPIRE", "{k}", "200", "LT"),
                                 ("TTL", "{k}"))),
    ("keys", "expire nx xx", S(("EXPIRE", "{k}", "1", "NX", "XX"))),
    ("keys", "expire gt lt", S(("EXPIRE", "{k}", "1", "GT", "LT"))),
    ("keys", "expire bogus option", S(("EXPIRE", "{k}", "1", "FOO"))),
    ("keys", "expire not a number", S(("EXPIRE", "{k}", "x"))),
    ("keys", "expire overflow", S(("SET", "{k}", "v"),
                                  ("EXPIRE", "{k}",
                                   "9223372036854775807"))),
    ("keys", "expire in the past", S(("SET", "{k}", "v"),
                                     ("EXPIRE", "{k}", "-1"),
                                     ("GET", "{k}"))),
    ("keys", "pexpire", S(("SET", "{k}", "v"), ("PEXPIRE", "{k}", "100000"),
                          ("TTL", "{k}"))),
    ("keys", "pexpire in the past", S(("SET", "{k}", "v"),
                                      ("PEXPIRE", "{k}", "0"),
                                      ("EXISTS", "{k}"))),
    ("keys", "pttl", S(("SET", "{k}", "v", "EX", "100"), ("PTTL", "{k}"))),
    ("keys", "ttl no expiry", S(("SET", "{k}", "v"), ("TTL", "{k}"),
                                ("PTTL", "{k}"))),
    ("keys", "type", S(("SET", "{k}", "v"), ("TYPE", "{k}"),
                       ("TYPE", "{k}x"))),
    ("keys", "flushdb scan dbsize", S(("FLUSHDB",), ("DBSIZE",),
                                      ("SET", "{k}", "v"), ("DBSIZE",),
                                      ("SCAN", "0", "COUNT", "100"),
                                      ("SCAN", "0", "MATCH", "{k}*"),
                                      ("SCAN", "0", "MATCH", "nomatch*"),
                                      ("SCAN", "0", "TYPE", "string"),
                                      ("SCAN", "0", "TYPE", "hash"),
                                      ("FLUSHALL",), ("DBSIZE",))),
    ("keys", "flushdb sync async", S(("FLUSHDB", "SYNC"),
                                     ("FLUSHALL", "ASYNC"))),
    ("keys", "flushdb bad", S(("FLUSHDB", "x"), ("FLUSHALL", "a", "b"))),
    ("keys", "scan bad cursor", S(("SCAN", "x"), ("SCAN", "-1"))),
    ("keys", "scan count 0", S(("SCAN", "0", "COUNT", "0"))),
    ("keys", "scan count not a number", S(("SCAN", "0", "COUNT", "x"))),
    ("keys", "scan bad option", S(("SCAN", "0", "FOO", "1"),
                                  ("SCAN", "0", "COUNT"))),
    ("keys", "dbsize arity", S(("DBSIZE", "x"))),
    # ---- the connection and the server ----
    ("server", "ping", S(("PING",), ("PING", "hi"), ("PING", "a", "b"))),
    ("server", "echo", S(("ECHO", "hi"), ("ECHO",))),
    ("server", "select", S(("SELECT", "0"), ("SELECT", "1"),
                           ("SELECT", "x"))),
    ("server", "quit", S(("QUIT",), ("PING",))),
    ("server", "reset", S(("CLIENT", "SETNAME", "n"), ("RESET",),
                          ("CLIENT", "GETNAME"))),
    ("server", "hello bad version", S(("HELLO", "4"), ("HELLO", "x"),
                                      ("HELLO", "1"))),
    ("server", "hello bad option", S(("HELLO", "2", "FOO"))),
    ("server", "hello 3 then a null", S(("HELLO", "3"), ("GET", "{k}"))),
    ("server", "hello 2 setname", S(("HELLO", "2", "SETNAME", "me"),
                                    ("CLIENT", "GETNAME"))),
    ("server", "auth without a password", S(("AUTH", "x"))),
    ("server", "auth default any", S(("AUTH", "default", "x"))),
    ("server", "auth other user", S(("AUTH", "bob", "x"))),
    ("server", "auth syntax", S(("AUTH", "a", "b", "c"))),
    ("server", "client names", S(("CLIENT", "GETNAME"),
                                 ("CLIENT", "SETNAME", "a b"),
                                 ("CLIENT", "SETNAME", "ab"),
                                 ("CLIENT", "GETNAME"),
                                 ("CLIENT", "SETNAME", ""),
                                 ("CLIENT", "GETNAME"))),
    ("server", "client arity", S(("CLIENT",), ("CLIENT", "SETNAME"),
                                 ("CLIENT", "GETNAME", "x"))),
    ("server", "client bogus", S(("CLIENT", "BOGUS"))),
    ("server", "client id", S(("CLIENT", "ID"))),
    ("server", "command count", S(("COMMAND", "COUNT"))),
    ("server", "command docs", S(("COMMAND", "DOCS", "get"))),
    ("server", "command bogus", S(("COMMAND", "BOGUS"))),
    ("server", "config get", S(("CONFIG", "GET", "save"),
                               ("CONFIG", "GET", "appendonly"),
                               ("CONFIG", "GET", "databases"),
                               ("CONFIG", "GET", "nosuchthing"))),
    ("server", "config get arity", S(("CONFIG", "GET"))),
    ("server", "config set", S(("CONFIG", "SET", "timeout", "0"))),
    ("server", "config bogus", S(("CONFIG", "BOGUS"))),
    # ---- the protocol ----
    ("protocol", "unknown command", S(("BOGUS", "a", "b"))),
    ("protocol", "unknown command long args",
     S(("BOGUS", LONG, LONG, "b"))),
    ("protocol", "unknown command no args", S(("BOGUS",))),
    ("protocol", "command name any case", S(("sEt", "{k}", "v"),
                                           ("gEt", "{k}"))),
    ("protocol", "inline", b"PING\r\nset {k} \"a b\"\r\nget {k}\r\n"),
    ("protocol", "inline lf", b"PING\nECHO x\n"),
    ("protocol", "inline quotes", b"ECHO \"a\\x41\\n\" 'b'\r\n"),
    ("protocol", "inline unbalanced", b"ECHO \"abc\r\n"),
    ("protocol", "inline empty lines", b"\r\n\r\nPING\r\n"),
    ("protocol", "empty multibulk", b"*0\r\n*-1\r\n" + C("PING")),
    ("protocol", "pipeline", S(("SET", "{k}", "1"), ("GET", "{k}"),
                               ("DEL", "{k}"), ("GET", "{k}"),
                               ("PING",))),
    ("protocol", "bad multibulk length", b"*x\r\n"),
    ("protocol", "huge multibulk length", b"*99999999999\r\n"),
    ("protocol", "negative bulk length", b"*1\r\n$-5\r\n"),
    ("protocol", "bad bulk length", b"*1\r\n$x\r\n"),
    ("protocol", "huge bulk length", b"*1\r\n$99999999999\r\n"),
    ("protocol", "not a bulk", b"*1\r\n:1\r\n"),
    ("protocol", "nested array", b"*1\r\n*1\r\n$4\r\nPING\r\n"),
    ("protocol", "bulk without its CRLF", b"*1\r\n$2\r\nPINGxx\r\n"),
    ("protocol", "wrong arity then more", S(("GET",), ("PING",))),
]

AUTH = [
    ("auth", "noauth", S(("GET", "{k}"), ("PING",), ("SET", "{k}", "v"))),
    ("auth", "unknown before auth", S(("BOGUS",))),
    ("auth", "arity before auth", S(("GET",))),
    ("auth", "auth wrong", S(("AUTH", "nope"), ("GET", "{k}"))),
    ("auth", "auth right", S(("AUTH", "sekret"), ("SET", "{k}", "v"),
                             ("GET", "{k}"))),
    ("auth", "auth default user", S(("AUTH", "default", "sekret"),
                                    ("PING",))),
    ("auth", "auth other user", S(("AUTH", "bob", "sekret"))),
    ("auth", "hello before auth", S(("HELLO", "2"))),
    ("auth", "hello auth", S(("HELLO", "2", "AUTH", "default", "sekret",
                              "SETNAME", "x"), ("CLIENT", "GETNAME"))),
    ("auth", "hello auth wrong", S(("HELLO", "2", "AUTH", "default",
                                    "bad"))),
    ("auth", "reset forgets auth", S(("AUTH", "sekret"), ("RESET",),
                                     ("PING",))),
    ("auth", "unauthenticated multibulk", b"*11\r\n"),
    ("auth", "unauthenticated bulk", b"*1\r\n$16385\r\n"),
    ("auth", "quit before auth", S(("QUIT",))),
]

HELLO3 = (rb"%7\r\n\$6\r\nserver\r\n\$5\r\nredis\r\n\$7\r\nversion\r\n"
          rb"\$5\r\n7\.0\.0\r\n\$5\r\nproto\r\n:3\r\n\$2\r\nid\r\n:\d+\r\n"
          rb"\$4\r\nmode\r\n\$10\r\nstandalone\r\n\$4\r\nrole\r\n"
          rb"\$6\r\nmaster\r\n\$7\r\nmodules\r\n\*0\r\n")
HELLO2 = HELLO3.replace(rb"%7", rb"\*14").replace(rb":3", rb":2")

# name -> (goblind's reply, why it differs)
DIFFERENCES = {
    "setrange too far": (
        b":536870913\r\n",
        "Redis caps strings at proto-max-bulk-len (512 MB); goblind at "
        "--max-item (1 GiB by default), so this SETRANGE is taken"),
    "hello 3 then a null": (
        re.compile(HELLO3 + rb"_\r\n"),
        "HELLO names the Redis protocol version goblind speaks (7.0.0), "
        "not a Redis release; the client id is goblind's"),
    "resp3 replies": (
        re.compile(HELLO3 + re.escape(
            b":2\r\n%2\r\n$1\r\nf\r\n$1\r\nv\r\n$1\r\ng\r\n$1\r\nw\r\n"
            b"%0\r\n:2\r\n*2\r\n*2\r\n$1\r\na\r\n,1.5\r\n*2\r\n$1\r\nb\r\n"
            b",2\r\n,1.5\r\n_\r\n,2.5\r\n%1\r\n$4\r\nsave\r\n$0\r\n\r\n")),
        "HELLO's version and id, as above; the replies after it are "
        "redis-server's"),
    "hello 2 setname": (
        re.compile(HELLO2 + rb"\$2\r\nme\r\n"),
        "HELLO's version and id, as above"),
    "client id": (
        re.compile(rb":\d+\r\n"),
        "client ids count goblind's connections"),
    "command count": (
        re.compile(rb":\d\d\r\n"),
        "goblind has its own commands (its table: resp.c)"),
    "command docs": (
        re.compile(rb"\*2\r\n\$3\r\nget\r\n\*6\r\n\$7\r\nsummary\r\n"
                   rb"\$\d+\r\n[^\r]+\r\n\$5\r\nsince\r\n\$5\r\n1\.0\.0\r\n"
                   rb"\$5\r\ngroup\r\n\$6\r\nstring\r\n"),
        "goblind's docs give summary, since and group only (what "
        "redis-cli's hints need), not complexity and arguments"),
    "config set": (
        re.compile(rb"-ERR goblind: CONFIG SET is not supported[^\r]*\r\n"),
        "goblind's options are set at start"),
    "bulk without its CRLF": (
        re.compile(rb"-ERR Protocol error: expected '\\r\\n' after the "
                   rb"bytes of a bulk\r\n<closed>"),
        "Redis skips the two bytes after a bulk unseen and reads the next "
        "request from the bytes that follow; goblind refuses a bulk whose "
        "length was miscounted and closes, as after any protocol error"),
}
# in the auth set
DIFFERENCES_AUTH = {
    "hello auth": (
        re.compile(HELLO2 + rb"\$1\r\nx\r\n"),
        "HELLO's version and id, as above"),
}


def exchange(where, data):
    if "/" in where:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(where)
    else:
        s = socket.create_connection(("127.0.0.1", int(where)))
    s.settimeout(3.0)
    s.sendall(data + END)
    out = b""
    try:
        while True:
            b = s.recv(65536)
            if not b:
                out += b"<closed>"
                break
            out += b
    except socket.timeout:
        out += b"<timeout>"
    except ConnectionResetError:
        out += b"<closed>"
    s.close()
    if out.endswith(END_REPLY):
        out = out[:-len(END_REPLY)]
    return out


B36 = b"0123456789abcdefghijklmnopqrstuvwxyz"


def near(m):
    """TTLs differ by the second they were read in, and by the store's
    whole seconds (PX rounded up): 98-101 s and 98,000-101,000 ms read as
    one value, as 998-1001 s do."""
    v = int(m.group(1))
    for base in (100, 1000, 100000):
        if base * 0.98 <= v <= base * 1.01:
            return b":<~%d>\r\n" % base
    return m.group(0)


def normalise(b):
    return re.sub(rb"(?m)^:(\d+)\r\n", near, b)


def run(gd, rd, which, table):
    cases, diffs = (AUTH, DIFFERENCES_AUTH) if which == "auth" else \
        (MAIN, DIFFERENCES)
    bad = 0
    rows = []
    for w in (gd, rd):  # each run starts from an empty keyspace
        exchange(w, (C("AUTH", "sekret") if which == "auth" else b"") +
                 C("FLUSHALL"))
    for i, (fam, name, data) in enumerate(cases):
        # as long as "{k}", so that the bulk lengths stay right
        key = b"Q" + B36[i // 36:i // 36 + 1] + B36[i % 36:i % 36 + 1]
        data = data.replace(b"{k}", key)
        g, r = (normalise(exchange(w, data)).replace(key, b"<k>")
                for w in (gd, rd))
        ok, why, listed = judge(name, data, g, r, diffs, "redis")
        bad += not ok
        rows.append((fam, name, data, r, g, listed, why))
    print("%d cases, %d differences listed, %d mismatched" %
          (len(cases), len(diffs), bad))
    if table:
        write_table(table, rows, "redis-server 7")
    return bad


def check_table(path):
    text = open(path).read()
    missing = [n for n in list(DIFFERENCES) + list(DIFFERENCES_AUTH)
               if "| %s |" % n not in text]
    for n in missing:
        print("not in %s: %s" % (path, n))
    return 1 if missing else 0


if __name__ == "__main__":
    if sys.argv[1] == "--check-table":
        sys.exit(check_table(sys.argv[2]))
    args = sys.argv[3:]
    which, table = "main", None
    while args:
        if args[0] == "--set":
            which = args[1]
        elif args[0] == "--table":
            table = args[1]
        args = args[2:]
    sys.exit(1 if run(sys.argv[1], sys.argv[2], which, table) else 0)
