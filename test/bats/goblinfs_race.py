#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Bounded stress loops for 22-goblinfs-races.bats: readers that open and
# read a file whole while a writer replaces it, and the write half of a
# close-then-kill -9 round.  Every version is self-describing, so a reader
# can tell a whole version from a short, padded or mixed one.
#   rename SECS READERS DIR     writer: write DIR/f.tmp, rename it over DIR/f
#   rewrite SECS READERS DIR    writer: open DIR/f O_TRUNC, write, close
#   close-kill DIR PID ROUND    write DIR/f and DIR/new.ROUND, close, kill -9
#   verify DIR ROUND            DIR/f is version ROUND, DIR/new.J version J
# The loops print their counts ("opens=... enoent=... wrong=...") and exit
# 1 when a reader saw ENOENT, another error or a wrong byte, or when too
# little happened for the run to mean anything.
import errno
import os
import signal
import sys
import time

CHUNK = 1 << 17     # the writer's write(2) size


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def version(k):
    """Version k: an 8-digit header, then one letter.  Sizes differ from
    one version to the next by a byte to 200 KB, both ways, around the
    256 KiB RAM head (smaller ones are small-arena objects)."""
    size = 200003 + (k * 7919) % 5 * 100001 + k % 3
    fill = bytes([ord("A") + k % 26])
    head = b"%08d" % k
    return head + fill * (size - len(head))


def whole(data):
    """The version number when @data is exactly one whole version, else
    None."""
    if len(data) < 8 or not data[:8].isdigit():
        return None
    k = int(data[:8])
    return k if data == version(k) else None


def write_all(fd, data):
    for off in range(0, len(data), CHUNK):
        os.write(fd, data[off:off + CHUNK])


def put(path, data, flags=os.O_WRONLY | os.O_CREAT | os.O_TRUNC):
    fd = os.open(path, flags, 0o644)
    try:
        write_all(fd, data)
    finally:
        os.close(fd)


def read_all(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        parts = []
        while True:
            b = os.read(fd, 1 << 20)
            if not b:
                return b"".join(parts)
            parts.append(b)
    finally:
        os.close(fd)


def reader(path, until, out):
    """Open and read @path whole until @until; write the counts to @out."""
    opens = enoent = errs = wrong = 0
    first_wrong = ""
    while time.monotonic() < until:
        opens += 1
        try:
            data = read_all(path)
        except OSError as e:
            if e.errno == errno.ENOENT:
                enoent += 1
            else:
                errs += 1
                if not first_wrong:
                    first_wrong = "error %s" % errno.errorcode.get(e.errno)
            continue
        if whole(data) is None:
            wrong += 1
            if not first_wrong:
                k = data[:8]
                tail = data[-4:]
                first_wrong = "%d bytes, header %r, tail %r" % (
                    len(data), k, tail)
    os.write(out, ("%d %d %d %d %s\n" % (opens, enoent, errs, wrong,
                                         first_wrong)).encode())


def stress(mode, secs, nreaders, d):
    path = os.path.join(d, "f")
    tmp = os.path.join(d, "f.tmp")
    put(path, version(0))
    until = time.monotonic() + secs
    kids = []
    for _ in range(nreaders):
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            code = 0
            try:
                reader(path, until, w)
            except BaseException as e:      # report, never hang the test
                print("reader: %r" % e, file=sys.stderr)
                code = 1
            os._exit(code)
        os.close(w)
        kids.append((pid, r))
    k = 0
    while time.monotonic() < until:
        k += 1
        if mode == "rename":
            put(tmp, version(k))
            os.rename(tmp, path)
        else:
            put(path, version(k), os.O_WRONLY | os.O_TRUNC)
    opens = enoent = errs = wrong = 0
    first = ""
    for pid, r in kids:
        line = b""
        while True:
            b = os.read(r, 4096)
            if not b:
                break
            line += b
        os.close(r)
        _, status = os.waitpid(pid, 0)
        if status != 0 or not line:
            fail("a reader died (status %d)" % status)
        f = line.decode().rstrip("\n").split(" ", 4)
        opens += int(f[0])
        enoent += int(f[1])
        errs += int(f[2])
        wrong += int(f[3])
        if len(f) > 4 and f[4] and not first:
            first = f[4]
    print("%s: versions=%d opens=%d enoent=%d errors=%d wrong=%d%s" % (
        mode, k, opens, enoent, errs, wrong,
        " first: " + first if first else ""))
    # the file left is the last version, whole
    last = whole(read_all(path))
    if last != k:
        fail("the file holds version %r, the last written is %d" % (last, k))
    if enoent or errs or wrong:
        fail("%d ENOENT, %d other errors, %d reads that were no whole "
             "version" % (enoent, errs, wrong))
    if k < 20 or opens < 100:
        fail("too little happened: %d versions, %d opens" % (k, opens))


def close_kill(d, pid, rnd):
    """Rewrite f (O_TRUNC) and create new.ROUND, then kill -9 @pid as soon
    as the last close returned: both closes happened before the kill.
    new.ROUND is written in one of three ways, by turns: open, write,
    close; through two descriptors of one open file, the first closed (a
    flush) after half of it, the rest written through the dup()ed one (two
    flushes, writes after the first); or as a shell's redirection does it,
    by a child that opens the file, dup2()s it to 1, closes the original
    (a flush with nothing written), writes through 1 and exits."""
    put(os.path.join(d, "f"), version(rnd))
    data = version(rnd)
    path = os.path.join(d, "new.%d" % rnd)
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
    if rnd % 3 == 1:
        fd = os.open(path, flags, 0o644)
        half = len(data) // 2
        write_all(fd, data[:half])
        fd2 = os.dup(fd)
        os.close(fd)
        write_all(fd2, data[half:])
        os.close(fd2)
    elif rnd % 3 == 2:
        child = os.fork()
        if child == 0:
            code = 1
            try:
                fd = os.open(path, flags, 0o644)
                os.dup2(fd, 1)
                os.close(fd)
                write_all(1, data)
                code = 0
            finally:
                os._exit(code)
        _, status = os.waitpid(child, 0)
        if status != 0:
            fail("the redirected child failed (status %d)" % status)
    else:
        put(path, data)
    os.kill(pid, signal.SIGKILL)


def verify(d, rnd):
    """f is version ROUND, and every new.J (J <= ROUND) is version J."""
    want = [("f", rnd)] + [("new.%d" % j, j) for j in range(rnd + 1)]
    for name, k in want:
        try:
            got = whole(read_all(os.path.join(d, name)))
        except OSError as e:
            fail("round %d: %s: %s" % (rnd, name,
                                        errno.errorcode.get(e.errno)))
        if got != k:
            fail("round %d: %s holds version %r, closed was %d" % (
                rnd, name, got, k))
    print("round %d: %d files verified" % (rnd, len(want)))


def main():
    cmd = sys.argv[1]
    if cmd in ("rename", "rewrite"):
        stress(cmd, float(sys.argv[2]), int(sys.argv[3]), sys.argv[4])
    elif cmd == "close-kill":
        close_kill(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    elif cmd == "verify":
        verify(sys.argv[2], int(sys.argv[3]))
    else:
        fail("unknown command " + cmd)


if __name__ == "__main__":
    main()
