#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Checks for 20-goblinfs.bats that need system calls the shell cannot make:
# positional reads, descriptors held across renames, exact errno names.
#   fsx SEED COUNT MOUNTED SOURCE...  random-range reads vs the sources
#   rename-over DIR                    publish-by-rename under an open reader
#   unlink-open DIR                    read an unlinked file through its fd
#   errors DIR                         errno of the unsupported operations
import errno
import os
import random
import sys


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def expect_errno(name, want, fn, *args):
    try:
        fn(*args)
    except OSError as e:
        if e.errno != want:
            fail("%s: got %s, want %s" % (name, errno.errorcode.get(e.errno),
                                          errno.errorcode[want]))
        print("ok %s -> %s" % (name, errno.errorcode[want]))
        return
    fail("%s: succeeded, want %s" % (name, errno.errorcode[want]))


def put(path, data):
    with open(path, "wb") as f:
        f.write(data)


def fsx(seed, count, mounted, sources):
    """Seeded random reads: offsets anywhere (some past the end), lengths
    from 1 byte to 3 MiB, sequential runs mixed in, on fds held open."""
    rnd = random.Random(seed)
    fds = {}
    for src in sources:
        with open(src, "rb") as f:
            want = f.read()
        got_fd = os.open(os.path.join(mounted, os.path.basename(src)),
                         os.O_RDONLY)
        fds[src] = (want, got_fd)
    for i in range(count):
        src = rnd.choice(sources)
        want, fd = fds[src]
        size = len(want)
        kind = rnd.random()
        if kind < 0.1:
            fd2 = os.open(os.path.join(mounted, os.path.basename(src)),
                          os.O_RDONLY)   # a fresh open: the head first
            off, ln = 0, rnd.randint(1, 8192)
            got = os.pread(fd2, ln, off)
            os.close(fd2)
        elif kind < 0.3:     # a sequential run
            off = rnd.randint(0, max(0, size - 1))
            ln = rnd.randint(1, 1 << 20)
            got = b""
            pos = off
            while len(got) < ln:
                b = os.pread(fd, min(131072, ln - len(got)), pos)
                if not b:
                    break
                got += b
                pos += len(b)
        else:
            off = rnd.randint(0, size + 4096)
            ln = rnd.choice([1, 7, 4096, 65536, rnd.randint(1, 3 << 20)])
            got = os.pread(fd, ln, off)
        exp = want[off:off + ln]
        if got != exp:
            fail("op %d: %s off %d len %d: got %d bytes, want %d%s" %
                 (i, src, off, ln, len(got), len(exp),
                  "" if len(got) != len(exp) else " (bytes differ)"))
    for want, fd in fds.values():
        os.close(fd)
    print("ok fsx seed %d: %d reads" % (seed, count))


def rename_over(d):
    old = os.urandom(700001)
    new = os.urandom(300007)
    pub = os.path.join(d, "pub.bin")
    put(pub, old)
    fd = os.open(pub, os.O_RDONLY)
    first = os.pread(fd, 1000, 0)
    tmp = os.path.join(d, "pub.bin.tmp")
    put(tmp, new)
    os.rename(tmp, pub)
    # the open reader keeps the old version, whole
    if first + os.pread(fd, len(old), 1000) != old:
        fail("the reader of the replaced file lost its version")
    os.close(fd)
    with open(pub, "rb") as f:
        if f.read() != new:
            fail("the new name does not hold the new version")
    if os.path.exists(tmp):
        fail("the temporary name survived the rename")
    if os.stat(pub).st_size != len(new):
        fail("stat shows the old size")
    print("ok rename-over")


def unlink_open(d):
    data = os.urandom(1 << 20)
    p = os.path.join(d, "doomed")
    put(p, data)
    fd = os.open(p, os.O_RDONLY)
    os.unlink(p)
    expect_errno("stat of unlinked", errno.ENOENT, os.stat, p)
    if os.pread(fd, len(data) + 1, 0) != data:
        fail("the reader of an unlinked file lost its bytes")
    os.close(fd)
    print("ok unlink-open")


def errors(d):
    os.mkdir(os.path.join(d, "full"))
    put(os.path.join(d, "full", "f"), b"x")
    put(os.path.join(d, "file"), b"committed")
    expect_errno("open missing", errno.ENOENT, os.open,
                 os.path.join(d, "nosuch"), os.O_RDONLY)
    expect_errno("stat missing dir", errno.ENOENT, os.stat,
                 os.path.join(d, "nodir", "x"))
    expect_errno("open dir for write", errno.EISDIR, os.open,
                 os.path.join(d, "full"), os.O_WRONLY)
    expect_errno("unlink dir", errno.EISDIR, os.unlink,
                 os.path.join(d, "full"))
    expect_errno("rmdir non-empty", errno.ENOTEMPTY, os.rmdir,
                 os.path.join(d, "full"))
    expect_errno("rmdir file", errno.ENOTDIR, os.rmdir,
                 os.path.join(d, "file"))
    expect_errno("file as dir", errno.ENOTDIR, os.open,
                 os.path.join(d, "file", "x"), os.O_RDONLY)
    expect_errno("mkdir existing", errno.EEXIST, os.mkdir,
                 os.path.join(d, "full"))
    expect_errno("rename dir over file", errno.ENOTDIR, os.rename,
                 os.path.join(d, "full"), os.path.join(d, "file"))
    expect_errno("rename non-empty dir", errno.EXDEV, os.rename,
                 os.path.join(d, "full"), os.path.join(d, "full2"))
    expect_errno("name too long", errno.ENAMETOOLONG, os.open,
                 os.path.join(d, "n" * 256), os.O_WRONLY | os.O_CREAT)
    deep = d
    for i in range(20):     # a path longer than GS_KEY_MAX (4096)
        deep = os.path.join(deep, "%03d" % i + "d" * 250)
        try:
            os.mkdir(deep)
        except OSError as e:
            if e.errno != errno.ENAMETOOLONG:
                fail("deep mkdir: %s" % errno.errorcode[e.errno])
            print("ok key longer than GS_KEY_MAX -> ENAMETOOLONG")
            break
    else:
        fail("a 5000-byte key was accepted")
    # issue 20: writes at any offset, appends and truncates are taken
    # (copy on write); only a larger file than --rewrite-max is refused
    fd = os.open(os.path.join(d, "seq"), os.O_WRONLY | os.O_CREAT, 0o644)
    os.write(fd, b"a" * 5000)
    os.pwrite(fd, b"b", 10)
    os.pwrite(fd, b"b", 9000)
    os.close(fd)
    with open(os.path.join(d, "seq"), "rb") as f:
        want = b"a" * 10 + b"b" + b"a" * 4989 + b"\0" * 4000 + b"b"
        if f.read() != want:
            fail("writes at an earlier offset and past the end")
    # symlinks are made since issue 20 (23-goblinfs-meta.bats); hard
    # links stay refused
    expect_errno("hard link", errno.EPERM, os.link,
                 os.path.join(d, "file"), os.path.join(d, "lnk"))
    # O_TRUNC makes a new version
    fd = os.open(os.path.join(d, "file"), os.O_WRONLY | os.O_TRUNC)
    os.write(fd, b"second")
    os.close(fd)
    with open(os.path.join(d, "file"), "rb") as f:
        if f.read() != b"second":
            fail("O_TRUNC rewrite")
    print("ok errors")


def main():
    cmd = sys.argv[1]
    if cmd == "fsx":
        fsx(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5:])
    elif cmd == "rename-over":
        rename_over(sys.argv[2])
    elif cmd == "unlink-open":
        unlink_open(sys.argv[2])
    elif cmd == "errors":
        errors(sys.argv[2])
    else:
        fail("unknown command " + cmd)


main()
