#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# A hostile or idle client of goblind --ring (issue 22), speaking the
# setup of netd/ring.c and the layout of netd/ring_shm.h by hand:
#   ring_client.py SOCK hold SECONDS    set a ring up, send a noop, say
#                                       "ready", sit idle
#   ring_client.py SOCK garbage KIND    write KIND of garbage into the ring,
#                                       kick the server, and print "closed"
#                                       when it drops the connection within
#                                       5 s, else "open"
# KINDs: bytes (random bytes as a frame), tail (a request tail past the
# ring), unaligned (a tail off the cache-line slots), length (a header
# whose frame_len is over the ring), schema (a frame of another schema),
# head (the reply ring's head moved past the server's tail, then a get of
# "big", larger than the ring),
# socket (bytes on the setup socket after the hello); and window (a get
# naming an RDMA window, then a noop: prints "T:OPAQUE:STATUS" of the two
# replies instead, the connection kept).
#   ring_client.py SOCK fuzz SECONDS    for SECONDS, connection after
#                                       connection of frames nearly right,
#                                       random tails and heads
import array
import mmap
import os
import random
import select
import socket
import struct
import sys
import time

CTL, REQ, REP = 4096, 1 << 20, 1 << 20
REQ_TAIL, REQ_HEAD, REP_TAIL, REP_HEAD, SRV_PARKED = 64, 128, 192, 256, 320


def setup(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    s.sendall(b"GBRING1\n")
    msg, fds, _, _ = socket.recv_fds(s, 8, 3)
    assert msg == b"GBREADY\n" and len(fds) == 3, (msg, fds)
    m = mmap.mmap(fds[0], CTL + REQ + REP)
    os.close(fds[0])
    return s, m, fds[1], fds[2]


def u64(m, off, v=None):
    if v is None:
        return struct.unpack_from("<Q", m, off)[0]
    struct.pack_into("<Q", m, off, v)


def noop(opaque):
    hdr = struct.pack("<HHHHII", 56, 7, 0x4742, 1, 72, opaque)
    return hdr + bytes(56)


def publish(m, kick, frame, tail_add=None):
    tail = u64(m, REQ_TAIL)
    off = tail % REQ
    m[CTL + off:CTL + off + len(frame)] = frame
    slots = (len(frame) + 63) // 64 * 64
    u64(m, REQ_TAIL, tail + (slots if tail_add is None else tail_add))
    os.write(kick, struct.pack("<Q", 1))


def replies(m, n, secs=5.0):
    """The opaque and status of the next @n responses (small ones, no
    wrap: the first frames of a fresh ring)."""
    out, head, end = [], 0, time.time() + secs
    while len(out) < n and time.time() < end:
        if u64(m, REP_TAIL) == head:
            time.sleep(0.01)
            continue
        off = CTL + REQ + head
        blk, t, _, _, flen, opaque = struct.unpack_from("<HHHHII", m, off)
        status = struct.unpack_from("<H", m, off + 16)[0]
        out.append("%d:%d:%d" % (t, opaque, status))
        head += (flen + 63) // 64 * 64
        u64(m, REP_HEAD, head)
    return out


def wait_closed(s, secs=5.0):
    end = time.time() + secs
    while time.time() < end:
        r, _, _ = select.select([s], [], [], 0.1)
        if r:
            try:
                if not s.recv(1):
                    return True
            except ConnectionResetError:
                return True
    return False


def mutant(rnd):
    """A frame that is nearly right: a real header and block, one field
    or a few bytes of it wrong, or a right one."""
    t = rnd.choice([1, 2, 3, 4, 5, 6, 7, 64, 65, 0, 200])
    key = bytes(rnd.randrange(33, 127) for _ in range(rnd.randrange(0, 40)))
    inl = bytes(rnd.randrange(256) for _ in range(rnd.randrange(0, 300)))
    blk = bytearray(struct.pack("<HHIIIQQQQII", 0, len(key), 0, 0, 0, 0, 0,
                                len(inl) if t == 3 else 0, 0, 0, 0))
    body = bytes(blk) + key + (inl if t == 3 else b"")
    f = bytearray(struct.pack("<HHHHII", 56, t, 0x4742, 1, 16 + len(body),
                              rnd.randrange(1 << 32)) + body)
    for _ in range(rnd.randrange(0, 4)):
        f[rnd.randrange(len(f))] = rnd.randrange(256)
    return bytes(f)


def fuzz(path, secs, s, m, kick):
    """For @secs seconds, connection after connection: frames nearly
    right and wrong, random tails and heads; each connection either
    closes or goes on.  Prints how many of each."""
    rnd = random.Random(2222)
    end = time.time() + secs
    closed = open_ = 0
    while time.time() < end:
        for _ in range(rnd.randrange(1, 20)):
            r = rnd.random()
            if r < 0.05:
                u64(m, REP_HEAD, rnd.randrange(1 << 64))
            if r < 0.1:
                publish(m, kick, b"", tail_add=rnd.randrange(1 << 21))
            else:
                publish(m, kick, mutant(rnd))
        if wait_closed(s, 0.05):
            closed += 1
        else:
            open_ += 1
        s.close()
        os.close(kick)
        m.close()
        s, m, kick, _ = setup(path)
    print("closed %d open %d" % (closed, open_), flush=True)
    return 0


def main():
    path, mode, arg = sys.argv[1], sys.argv[2], sys.argv[3]
    s, m, kick, wake = setup(path)
    if mode == "hold":
        # one request first: a server that spun on after its last
        # progress for ever would show it now
        publish(m, kick, noop(1))
        time.sleep(0.2)
        print("ready", flush=True)
        time.sleep(float(arg))
        return 0
    rnd = random.Random(22)
    if mode == "fuzz":
        return fuzz(path, float(arg), s, m, kick)
    if arg == "bytes":
        publish(m, kick, bytes(rnd.randrange(1, 256) for _ in range(200)))
    elif arg == "tail":
        publish(m, kick, noop(1), tail_add=REQ + 64)
    elif arg == "unaligned":
        publish(m, kick, noop(1), tail_add=72)
    elif arg == "length":
        publish(m, kick, struct.pack("<HHHHII", 56, 1, 0x4742, 1,
                                     0x7FFFFFFF, 1) + bytes(56))
    elif arg == "schema":
        publish(m, kick, struct.pack("<HHHHII", 56, 7, 0x1111, 1, 72, 1) +
                bytes(56))
    elif arg == "head":
        # the server reads our head only when its copy has no room: a
        # value larger than the reply ring ("big", 2 MiB, stored by the
        # test) makes it look
        u64(m, REP_HEAD, 1 << 40)
        key = b"big"
        blk = struct.pack("<HHIIIQQQQII", 0, len(key), 0, 0, 0, 0, 0, 0, 0,
                          0, 0)
        publish(m, kick, struct.pack("<HHHHII", 56, 1, 0x4742, 1,
                                     72 + len(key), 1) + blk + key)
    elif arg == "window":
        # a get naming an RDMA window: answered "unsupported" (status 10),
        # the connection kept: then a noop must be answered too
        key = b"h"
        blk = struct.pack("<HHIIIQQQQII", 0x10, len(key), 0, 0, 7, 0, 0, 0,
                          4096, 4096, 0)
        publish(m, kick, struct.pack("<HHHHII", 56, 1, 0x4742, 1,
                                     72 + len(key), 5) + blk + key)
        publish(m, kick, noop(6))
        print(" ".join(str(x) for x in replies(m, 2)), flush=True)
        return 0
    elif arg == "socket":
        s.sendall(b"get x\r\n")
        os.write(kick, struct.pack("<Q", 1))
    else:
        print("unknown kind", arg, file=sys.stderr)
        return 2
    print("closed" if wait_closed(s) else "open", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
