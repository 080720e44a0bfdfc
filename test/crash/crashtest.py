#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""crashtest.py: kill -9 goblind under memcache, HTTP and mount writers and
readers, restart it on the same store, and check every object against a
model of the acknowledged writes (issue 16, in the manner of RocksDB's
db_crashtest.py).

Each round starts goblind (memcache and HTTP on port 0, the ports read
back from its log, and --mount on a temp mountpoint), verifies every key,
runs writers and readers for a random time, and kills goblind with SIGKILL.
After the last round goblind is started once more, every key is read
through all three front-ends, and goblind is stopped with SIGTERM (it must
exit 0).

The model.  Keys are split among the writers, so each key has one writer
and its operations form one sequence.  A value is a function of (seed,
key, version): a header naming key, version and size, then bytes drawn
from a PRNG seeded with the three; so any object read names the version
it claims to be, and its every byte and its length can be checked without
keeping any bytes.  For each key the model keeps the state found at the
start of the round (verified) and the operations issued since, and the
index of the last one acknowledged.  After a kill the allowed states of a
key are the result of its last acknowledged operation and of every
operation issued after it (in flight at the kill, or answered with an
error): an object must be one of those, whole, and an acknowledged delete
stays deleted unless a later write was issued.

Acknowledged means: memcache STORED / DELETED / NOT_FOUND; HTTP 201 or 204
for PUT, 204 or 404 for DELETE; for the mount, see mount_write().

While the writers run, readers check every value they get (whole, one
version, byte-exact) through all three front-ends, and memcache and HTTP
reads also for freshness: a read begun after an acknowledgement returns
that operation's result or a later one (mount reads go through the
kernel's attribute and name caches, so only their bytes are checked).

Seeded: every random choice (sizes, keys, protocols, operations, how long
each round runs) comes from --seed and the round, writer or reader
number, so a failing seed replays the same schedule; thread interleavings
and the moment each operation is at when the kill lands are not
reproducible, as in db_crashtest.  Exit status: 0 when nothing was wrong,
lost or stale, 1 otherwise, 2 on a setup failure.
"""

import argparse
import errno
import http.client
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PROTOS = ("mc", "http", "mount")
ABSENT = None		# the state of a key with no object

PROFILES = {
    # make test: about a minute
    "short": dict(duration=55, writers=3, readers=3, keys=24,
                  max_size=3 << 20, run_min=0.4, run_max=3.0,
                  early_kill=0.1),
    # make bench: 20 minutes, more keys, larger objects, longer rounds
    "long": dict(duration=1200, writers=6, readers=6, keys=48,
                 max_size=6 << 20, run_min=0.5, run_max=15.0,
                 early_kill=0.1),
}


def log(msg):
    print("crash: " + msg, flush=True)


# ---- values ------------------------------------------------------------

def header(key, ver, size):
    return b"goblin-crash key=%s v=%d n=%d\n" % (key.encode(), ver, size)


HDR_RE = re.compile(rb"goblin-crash key=([^ ]+) v=(\d+) n=(\d+)\n")


def value_size(seed, key, ver, max_size):
    """The size of version @ver of @key: small (in the small-object
    arena), medium (below a 256 KiB RAM head) or large (head in RAM, tail
    on the SSD)."""
    r = random.Random("size:%d:%s:%d" % (seed, key, ver))
    h = len(header(key, ver, max_size))
    c = r.random()
    if c < 0.5:
        n = r.randint(1, 4096)
    elif c < 0.75:
        n = r.randint(4096, 256 << 10)
    else:
        n = r.randint(256 << 10, max_size)
    return max(n, h)


def plain_value(seed, key, ver, max_size):
    n = value_size(seed, key, ver, max_size)
    h = header(key, ver, n)
    body = random.Random("body:%d:%s:%d" % (seed, key, ver)).randbytes(
        n - len(h))
    return h + body


# Appended versions (issue 20).  A mount writer may make version v by
# appending to version p (O_APPEND to the file that holds p): v's value
# is then p's followed by v's segment, a header of its own naming v and
# p, and bytes drawn as a version's are.  Model.appended maps (key, v)
# to p, and Model.children (key, p) to the versions appended to it.

def seg_header(key, ver, parent, size):
    return b"goblin-crash key=%s v=%d after=%d n=%d\n" % (
        key.encode(), ver, parent, size)


def seg_size(seed, key, ver):
    """The size of the segment appended as version @ver: mostly small
    (a log line), sometimes past a RAM head."""
    r = random.Random("seg:%d:%s:%d" % (seed, key, ver))
    n = r.randint(1, 4096) if r.random() < 0.6 else r.randint(4096, 1 << 20)
    return max(n, len(seg_header(key, ver, ver, 1 << 20)))


def segment(seed, key, ver, parent):
    n = seg_size(seed, key, ver)
    h = seg_header(key, ver, parent, n)
    return h + random.Random("body:%d:%s:%d" % (seed, key, ver)).randbytes(
        n - len(h))


def chain(key, ver, appended):
    """@ver and the versions it was appended to, the plain one last."""
    out = [ver]
    while appended and (key, out[-1]) in appended:
        out.append(appended[(key, out[-1])])
    return out


def total_size(seed, key, ver, max_size, appended=None):
    c = chain(key, ver, appended)
    return value_size(seed, key, c[-1], max_size) + sum(
        seg_size(seed, key, v) for v in c[:-1])


def value(seed, key, ver, max_size, appended=None):
    c = chain(key, ver, appended)
    return plain_value(seed, key, c[-1], max_size) + b"".join(
        segment(seed, key, v, p) for v, p in zip(reversed(c[:-1]),
                                                 reversed(c[1:])))


class Wrong(str):
    """What is wrong with a value read.  .cut is "short" when it is a
    right prefix (possibly empty) of a version, "padded" when it is a
    whole version followed by NUL bytes, None otherwise; .got is the
    length read."""
    def __new__(cls, text, cut=None, got=0):
        w = str.__new__(cls, text)
        w.cut, w.got = cut, got
        return w


def identify(seed, key, data, max_size, appended=None, children=None):
    """(version, None) when @data is a whole version of @key, else
    (version or None, a Wrong saying what is wrong with it).  A plain
    version followed by segments is the last version they make up (a
    read that ends inside a segment is that version, cut short)."""
    m = HDR_RE.match(data[:200])
    if not m:
        short = (b"goblin-crash key=%s v=" % key.encode()).startswith(
            data[:len(key) + 20])
        return None, Wrong("no header: %d bytes starting %r" % (
            len(data), data[:40]),
            "short" if short and len(data) < 40 else None, len(data))
    if m.group(1).decode() != key:
        return None, Wrong("the value of key %r" % m.group(1).decode())
    ver, n = int(m.group(2)), int(m.group(3))
    if n != value_size(seed, key, ver, max_size):
        return ver, Wrong("header size %d is not version %d's" % (n, ver))
    pos = n
    while len(data) > pos:
        for v in (children or {}).get((key, ver), ()):
            h = seg_header(key, v, ver, seg_size(seed, key, v))
            if data[pos:pos + len(h)] == h[:len(data) - pos]:
                ver, pos = v, pos + seg_size(seed, key, v)
                break
        else:
            break
    want = value(seed, key, ver, max_size, appended)
    n = len(want)
    if data == want:
        return ver, None
    m = min(len(data), n)
    if data[:m] != want[:m]:
        off = next(i for i in range(m) if data[i] != want[i])
        return ver, Wrong("wrong bytes from offset %d of %d (%d read)" % (
            off, n, len(data)))
    if len(data) > n:
        pad = data[n:].count(0) == len(data) - n
        return ver, Wrong("too long: %d of %d bytes, a whole version then "
                          "%r" % (len(data), n, data[n:n + 16]),
                          "padded" if pad else None, len(data))
    return ver, Wrong("truncated: %d of %d bytes" % (len(data), n),
                      "short", len(data))


def stale_size(seed, key, ver, got, max_size, appended=None):
    """Whether a read of @got bytes of version @ver, right as far as it
    goes, stopped at the size of an earlier version of @key."""
    return any(total_size(seed, key, u, max_size, appended) == got
               for u in range(1, ver))


def state_str(s):
    return "absent" if s is ABSENT else "v%d" % s


# ---- clients -----------------------------------------------------------

class Gone(Exception):
    """The server went away (killed): the operation's outcome is
    unknown."""


class ServerError(Exception):
    """The server answered with an error: the outcome is unknown."""


class MC:
    def __init__(self, port, timeout):
        self.s = socket.create_connection(("127.0.0.1", port),
                                          timeout=timeout)
        self.f = self.s.makefile("rb")

    def close(self):
        for c in (self.f, self.s):
            try:
                c.close()
            except OSError:
                pass

    def line(self):
        ln = self.f.readline()
        if not ln.endswith(b"\r\n"):
            raise Gone("connection closed")
        return ln[:-2]

    def set(self, key, data):
        self.s.sendall(b"set %s 0 0 %d\r\n" % (key.encode(), len(data)))
        self.s.sendall(data)
        self.s.sendall(b"\r\n")
        r = self.line()
        if r != b"STORED":
            raise ServerError(r.decode(errors="replace"))

    def get(self, key):
        self.s.sendall(b"get %s\r\n" % key.encode())
        r = self.line()
        if r == b"END":
            return None
        p = r.split()
        if len(p) != 4 or p[0] != b"VALUE" or p[1] != key.encode():
            raise ServerError(r.decode(errors="replace"))
        n = int(p[3])
        data = self.f.read(n + 2)
        if len(data) != n + 2:
            raise Gone("connection closed in a value")
        if self.line() != b"END":
            raise ServerError("no END")
        return data[:n]

    def head(self, key, n):
        """The first @n bytes of @key's value (mg with a range)."""
        self.s.sendall(b"mg %s v G0-%d\r\n" % (key.encode(), n - 1))
        r = self.line()
        if r == b"EN":
            return None
        p = r.split()
        if len(p) < 2 or p[0] != b"VA":
            raise ServerError(r.decode(errors="replace"))
        k = int(p[1])
        data = self.f.read(k + 2)
        if len(data) != k + 2:
            raise Gone("connection closed in a value")
        return data[:k]

    def stat(self, name):
        """One counter of stats, as an int."""
        self.s.sendall(b"stats\r\n")
        val = None
        while True:
            r = self.line()
            if r == b"END":
                return val
            p = r.split()
            if len(p) == 3 and p[0] == b"STAT" and p[1] == name.encode():
                val = int(p[2])

    def delete(self, key):
        self.s.sendall(b"delete %s\r\n" % key.encode())
        r = self.line()
        if r not in (b"DELETED", b"NOT_FOUND"):
            raise ServerError(r.decode(errors="replace"))
        return r == b"DELETED"


class HTTP:
    def __init__(self, port, timeout):
        self.c = http.client.HTTPConnection("127.0.0.1", port,
                                            timeout=timeout)

    def close(self):
        self.c.close()

    def req(self, method, key, body=None):
        hdrs = {"Content-Type": "application/octet-stream"}
        try:
            self.c.request(method, "/" + key, body=body, headers=hdrs)
            r = self.c.getresponse()
            data = r.read()
        except (http.client.HTTPException, OSError) as e:
            raise Gone("%s: %s" % (type(e).__name__, e))
        return r.status, data

    def put(self, key, data):
        st, _ = self.req("PUT", key, data)
        if st not in (201, 204):
            raise ServerError("PUT: %d" % st)

    def get(self, key):
        st, data = self.req("GET", key)
        if st == 404:
            return None
        if st != 200:
            raise ServerError("GET: %d" % st)
        return data

    def delete(self, key):
        st, _ = self.req("DELETE", key)
        if st not in (204, 404):
            raise ServerError("DELETE: %d" % st)
        return st == 204


# ---- the model ---------------------------------------------------------

class Key:
    def __init__(self, name, owner):
        self.name = name
        self.owner = owner
        self.lock = threading.Lock()
        self.possible = {ABSENT}	# states allowed at the next start
        self.base = ABSENT		# the state verified this round
        self.ops = []		# [state, proto, t0, t1, outcome] this round
        self.acked = -1		# index in ops of the last acknowledged
        self.next_ver = 1

    def allowed(self, since, upto=None):
        """States a read may see, the last ack being op @since (-1: the
        verified base), counting the ops before @upto (default all).
        Called with self.lock held."""
        s = {self.base} if since < 0 else set()
        s.update(op[0] for op in self.ops[max(since, 0):upto])
        return s

    def end_round(self):
        self.possible = self.allowed(self.acked)

    def history(self):
        out = ["round start %s" % state_str(self.base)]
        for i, (st, proto, t0, t1, outcome) in enumerate(self.ops):
            out.append("%s %s via %s at %.3f-%s: %s" % (
                "write " + state_str(st) if st is not ABSENT else "delete",
                "(ack)" if i == self.acked else "", proto, t0,
                "%.3f" % t1 if t1 else "?", outcome))
        return "; ".join(out)


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.c = {}
        self.errors = []	# (kind, text)

    def add(self, name, n=1):
        with self.lock:
            self.c[name] = self.c.get(name, 0) + n

    def get(self, name):
        with self.lock:
            return self.c.get(name, 0)

    def error(self, kind, text):
        with self.lock:
            self.c[kind] = self.c.get(kind, 0) + 1
            self.errors.append((kind, text))
            n = self.c[kind]
        if n <= 20:
            log("%s: %s" % (kind.upper(), text))
        elif n == 21:
            log("%s: more of these are counted, not shown" % kind.upper())


# ---- goblind -----------------------------------------------------------

class Daemon:
    def __init__(self, args, tmp):
        self.args = args
        self.tmp = tmp
        self.store = os.path.join(tmp, "store")
        self.mnt = os.path.join(tmp, "mnt")
        os.makedirs(self.mnt, exist_ok=True)
        self.proc = None
        self.root = None	# fd of the mount's root while it is up
        self.n = 0

    def start(self):
        self.n += 1
        self.log = os.path.join(self.tmp, "goblind.%d.log" % self.n)
        cmd = [self.args.goblind, "--store", self.store,
               "--memory", "16M", "--small-memory", "8M", "--no-hugetlb",
               "--no-mlock", "--ssd-size", "3G", "--cores", "2",
               "--memcache-port", "0", "--http-port", "0",
               "--mount", self.mnt]
        with open(self.log, "wb") as lf:
            self.proc = subprocess.Popen(cmd, stdout=lf, stderr=lf)
        self.t_start = time.monotonic()

    def wait_ready(self, timeout=60):
        """Ports from the log (new ones after each restart) and the
        mount; False when goblind died or took too long."""
        self.port = self.hport = None
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            text = self.log_text()
            m = re.search(r"memcache on [^ ]*:(\d+),", text)
            h = re.search(r"http on [^ ]*:(\d+)", text)
            if m and h and os.path.ismount(self.mnt):
                self.port, self.hport = int(m.group(1)), int(h.group(1))
                # every mount operation goes through this descriptor of
                # the mount's root: once goblind is dead they fail with
                # ENOTCONN, where a path would reach the directory under
                # the mount as soon as the dead mount is removed
                self.root = os.open(self.mnt, os.O_RDONLY | os.O_DIRECTORY)
                return True
            if self.proc.poll() is not None:
                return False
            time.sleep(0.02)
        return False

    def log_text(self):
        with open(self.log, errors="replace") as f:
            return f.read()

    def kill(self, unmount=True):
        """SIGKILL; False when goblind had already died by itself.  With
        @unmount false the caller calls unmount() (once the clients are
        done)."""
        alive = self.proc.poll() is None
        if alive:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()
        if unmount:
            self.unmount()
        return alive

    def unmount(self):
        if self.root is not None:
            os.close(self.root)
            self.root = None
        # auto_unmount normally removes the dead mount; if not, it would
        # answer ENOTCONN until unmounted: -z detaches it even when busy
        for _ in range(200):
            if not os.path.ismount(self.mnt) and not self.in_mtab():
                return
            subprocess.run(["fusermount3", "-u", "-z", self.mnt],
                           stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
            time.sleep(0.05)
        raise RuntimeError("%s stays mounted" % self.mnt)

    def in_mtab(self):
        with open("/proc/self/mounts") as f:
            return any(ln.split()[1] == self.mnt for ln in f)

    def stop(self):
        """SIGTERM; goblind's exit status."""
        self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = self.proc.wait()
            rc = "hung (killed after 60 s)"
        self.unmount()
        return rc


# ---- the test ----------------------------------------------------------

class Crash:
    def __init__(self, args):
        self.a = args
        self.seed = args.seed
        self.stats = Stats()
        self.keys = []
        for w in range(args.writers):
            for i in range(args.keys):
                self.keys.append(Key("ct-w%d-k%03d" % (w, i), w))
        self.stop = threading.Event()
        self.killing = False
        self.t0 = time.monotonic()
        # appended versions (see seg_header); each key's writer adds its
        # own, and dict updates are atomic, so no lock
        self.appended, self.children = {}, {}

    def now(self):
        return time.monotonic() - self.t0

    def val(self, key, ver):
        return value(self.seed, key, ver, self.a.max_size, self.appended)

    def ident(self, key, data):
        return identify(self.seed, key, data, self.a.max_size,
                        self.appended, self.children)

    def append_to(self, k, ver):
        """The version mount write @ver of @k appends to, or None.  A
        third of them append when the key's state is certain (every op
        acknowledged) and a version no longer than --max-size with fewer
        than 16 segments.  Called with k.lock held."""
        if random.Random("append:%d:%s:%d" % (self.seed, k.name, ver)
                         ).random() >= 1 / 3 or k.acked != len(k.ops) - 1:
            return None
        p = k.ops[k.acked][0] if k.acked >= 0 else k.base
        if p is ABSENT or len(chain(k.name, p, self.appended)) >= 16 or \
                total_size(self.seed, k.name, p, self.a.max_size,
                           self.appended) > self.a.max_size:
            return None
        self.appended[(k.name, ver)] = p
        self.children.setdefault((k.name, p), []).append(ver)
        return p

    # -- one read through a front-end; (state, None) or (state, wrong) --

    def opener(self, name, flags):
        return os.open(name, flags, 0o644, dir_fd=self.d.root)

    def client(self, proto):
        d = self.d
        if proto == "mc":
            return MC(d.port, self.a.timeout)
        if proto == "http":
            return HTTP(d.hport, self.a.timeout)
        return None

    def read(self, conn, proto, key):
        if proto == "mount":
            try:
                with open(key, "rb", opener=self.opener) as f:
                    data = f.read()
            except FileNotFoundError:
                return ABSENT, None
            except OSError as e:
                if e.errno in (errno.ENOTCONN, errno.ECONNABORTED) or \
                        self.killing:
                    raise Gone("mount: %s" % e)
                # EBADMSG is a block that failed its checksum, EIO a
                # failed read: neither is an answer the model allows
                return ABSENT, Wrong("read failed: %s" % e)
        else:
            try:
                data = conn.get(key)
            except OSError as e:
                raise Gone("%s: %s" % (proto, e))
            if data is None:
                return ABSENT, None
        return self.ident(key, data)

    # -- writers --

    def mount_write(self, mc, key, ver, data, parent=None):
        """Write a file through the mount.  Acknowledged only after
        close() returned AND a memcache read of the key's first bytes
        shows this version: today the commit runs at FUSE RELEASE, which
        close() does not wait for (goblinfs(1), WRITING; issue 16 item
        3), so close() alone acknowledges nothing.  When close() is made
        to return only after the commit, tighten this to "acknowledged
        when close() returns" (--mount-ack close, then its default).
        With @parent, the file holds that version, and @ver is appended
        to it (O_APPEND, issue 20: the store shares its extents).
        Returns False when the open found no file (the kernel's name
        cache, as in write_op's delete): nothing was done."""
        # a third of them rewrite the file in place (issue 20: O_RDWR
        # without O_TRUNC, written from offset 0, then cut to its
        # length): goblinfs's copy on write, published at close as a
        # whole write is
        inplace = random.Random("inplace:%d:%s:%d" % (
            self.seed, key, ver)).random() < 1 / 3
        try:
            if parent is not None:
                try:
                    fd = self.opener(key, os.O_WRONLY | os.O_APPEND)
                except FileNotFoundError:
                    return False
                try:
                    old = total_size(self.seed, key, parent,
                                     self.a.max_size, self.appended)
                    for off in range(old, len(data), 256 << 10):
                        os.write(fd, data[off:off + (256 << 10)])
                finally:
                    os.close(fd)
                self.stats.add("mount_appends")
            elif inplace:
                self.stats.add("mount_inplace_writes")
                fd = self.opener(key, os.O_RDWR | os.O_CREAT)
                try:
                    for off in range(0, len(data), 256 << 10):
                        os.pwrite(fd, data[off:off + (256 << 10)], off)
                    os.ftruncate(fd, len(data))
                finally:
                    os.close(fd)
            else:
                with open(key, "wb", opener=self.opener) as f:
                    for off in range(0, len(data), 256 << 10):
                        f.write(data[off:off + (256 << 10)])
        except OSError as e:
            if e.errno in (errno.ENOTCONN, errno.ECONNABORTED, errno.EIO):
                raise Gone("mount: %s" % e)
            raise ServerError("mount: %s" % e)
        if self.a.mount_ack == "close":
            return True
        want = header(key, ver, len(data))
        end = time.monotonic() + self.a.timeout
        while time.monotonic() < end and not self.stop.is_set():
            try:
                # an appended version starts as its parent does
                got = mc.head(key, len(want)) if parent is None else \
                    mc.get(key)
            except OSError as e:
                raise Gone("mc: %s" % e)
            if got == (want if parent is None else data):
                return True
            time.sleep(0.002)
        raise ServerError("mount: version %d never seen through memcache"
                          % ver)

    def mount_delete(self, key):
        try:
            os.unlink(key, dir_fd=self.d.root)
            return True
        except FileNotFoundError:
            return False
        except OSError as e:
            raise Gone("mount: %s" % e)

    def write_op(self, r, k, mc, ht):
        proto = r.choices(PROTOS, weights=(40, 35, 25))[0]
        delete = r.random() < 0.2
        parent = None
        with k.lock:
            if delete:
                st = ABSENT
            else:
                st = k.next_ver
                k.next_ver += 1
                if proto == "mount":
                    parent = self.append_to(k, st)
            op = [st, proto, self.now(), None, "in flight"]
            k.ops.append(op)
            idx = len(k.ops) - 1
            since = k.acked
        data = None if delete else self.val(k.name, st)
        try:
            if delete:
                if proto == "mc":
                    found = mc.delete(k.name)
                elif proto == "http":
                    found = ht.delete(k.name)
                else:
                    found = self.mount_delete(k.name)
                    if not found:
                        # ENOENT may come from the kernel's name cache
                        # without asking goblind (a key another front-end
                        # wrote within the last second): it did nothing,
                        # which is all it says
                        with k.lock:
                            k.ops.pop(idx)
                        self.stats.add("mount_unlink_enoent")
                        return
            elif proto == "mc":
                mc.set(k.name, data)
            elif proto == "http":
                ht.put(k.name, data)
            elif not self.mount_write(mc, k.name, st, data, parent):
                with k.lock:
                    k.ops.pop(idx)
                self.stats.add("mount_append_enoent")
                return
        except (Gone, ServerError, OSError) as e:
            op[3], op[4] = self.now(), "%s: %s" % (type(e).__name__, e)
            if not self.killing and not isinstance(e, ServerError):
                self.dropped("%s via %s: %s" % (k.name, proto, e))
            if isinstance(e, ServerError) and not self.stop.is_set():
                self.stats.error("server_errors", "%s %s: %s" % (
                    k.name, proto, e))
            raise Gone(str(e))
        op[3] = self.now()
        with k.lock:
            if (delete and not found and proto != "mount" and
                    ABSENT not in k.allowed(since, idx)):
                # only this writer writes the key: something it was
                # acknowledged for is gone
                self.stats.error("lost", "%s: %s delete found nothing; "
                                 "history: %s" % (k.name, proto,
                                                  k.history()))
            op[4] = "ack" + ("" if not delete else
                             " (deleted)" if found else " (not found)")
            k.acked = idx
        self.stats.add("acked_%s_%s" % ("delete" if delete else "write",
                                        proto))

    def dropped(self, who):
        """A connection or a read failed while goblind was up: the op is
        uncertain (so the model checks less), worth a line."""
        self.stats.add("dropped")
        if self.stats.get("dropped") <= 5:
            log("note: %s failed before the kill" % who)

    def writer(self, w):
        r = random.Random("writer:%d:%d:%d" % (self.seed, self.round, w))
        mine = [k for k in self.keys if k.owner == w]
        mc = ht = None
        while not self.stop.is_set():
            try:
                if mc is None:
                    mc = MC(self.d.port, self.a.timeout)
                    ht = HTTP(self.d.hport, self.a.timeout)
                self.write_op(r, r.choice(mine), mc, ht)
            except (Gone, OSError) as e:
                # the kill (or the server dropping us): reconnect unless
                # we are stopping
                for c in (mc, ht):
                    if c:
                        c.close()
                mc = ht = None
                if not self.killing and not isinstance(e, Gone):
                    self.dropped("writer %d: %s" % (w, e))
                if not self.stop.is_set():
                    time.sleep(0.01)

    # -- readers --

    def reader(self, i):
        r = random.Random("reader:%d:%d:%d" % (self.seed, self.round, i))
        proto = PROTOS[i % 3]
        conn = None
        while not self.stop.is_set():
            k = r.choice(self.keys)
            with k.lock:
                since = k.acked
            t_read = self.now()
            try:
                if conn is None and proto != "mount":
                    conn = self.client(proto)
                st, wrong = self.read(conn, proto, k.name)
            except (Gone, ServerError, OSError) as e:
                if conn:
                    conn.close()
                conn = None
                if not self.killing:
                    self.dropped("reader via %s: %s" % (proto, e))
                if not self.stop.is_set():
                    time.sleep(0.01)
                continue
            self.stats.add("reads_" + proto)
            with k.lock:
                allowed = k.allowed(since)
                hist = k.history()
            if wrong and proto == "mount" and wrong.cut:
                why = self.mount_stale(k, st, wrong, t_read)
                if why:
                    self.stats.add("mount_stale_" + why)
                    n = self.stats.get("mount_stale_" + why)
                    if n <= 2:
                        log("known bug (%s): %s read via mount: %s; "
                            "history: %s" % (why, k.name, wrong, hist))
                    if not self.a.allow_mount_stale_size:
                        self.stats.error("wrong", "%s read via mount while"
                                         " running: %s (%s)" % (
                                             k.name, wrong, why))
                    continue
            elif wrong:
                self.stats.error("wrong", "%s read via %s while running: "
                                 "%s; history: %s" % (k.name, proto,
                                                      wrong, hist))
            elif proto != "mount" and st not in allowed:
                self.stats.error("stale", "%s read via %s: %s, allowed %s;"
                                 " history: %s" % (
                                     k.name, proto, state_str(st),
                                     sorted(map(state_str, allowed)), hist))
        if conn:
            conn.close()

    def mount_stale(self, k, st, wrong, t_read):
        """When a mount read that is a right prefix of a version, or a
        whole version padded with NUL bytes, comes from one of the two
        known bugs of goblinfs reported with issue 16, which of them;
        None otherwise.  Both are the kernel's cached size of the file,
        where the kernel ends a read (cutting it short) or up to which it
        fills the page with zeros (padding it):
        - "earlier-size": a file replaced by another front-end is looked
          up with the size of the version the mount saw last (a read cut
          at, or padded to, the size of an earlier version);
        - "rewrite": a file being rewritten through the mount (O_TRUNC)
          looks, to the kernel, as long as what was written so far
          (goblinfs(1), WRITING; the padded case is issue 16 item 2).
        """
        if st is not None and stale_size(self.seed, k.name, st, wrong.got,
                                         self.a.max_size, self.appended):
            return "earlier-size"
        with k.lock:	# a mount write in flight, or within the 1 s
            rewriting = any(	# the kernel keeps a size
                op[1] == "mount" and op[0] is not ABSENT and
                (op[3] is None or op[3] > t_read - 1.5) for op in k.ops)
        if rewriting:
            return "rewrite"
        return None

    # -- verification after a restart --

    def verify(self, protos, r):
        """Read every key through @protos (or one of them, drawn per key
        when @protos is None) and check it against the model.  What was
        found becomes the key's state for the next round, so one fault is
        reported once: a whole version or an absent key as it is, a
        damaged value after deleting it."""
        conns = {p: self.client(p) for p in PROTOS}
        n = present = 0
        try:
            for k in self.keys:
                seen, damaged = set(), False
                for p in protos or [r.choice(PROTOS)]:
                    st, wrong = self.read(conns[p], p, k.name)
                    n += 1
                    seen.add(st)
                    present += st is not ABSENT and not wrong
                    if wrong:
                        why, damaged = "wrong: " + wrong, True
                    elif st in k.possible:
                        continue
                    elif st is ABSENT:
                        why = "lost"
                    else:
                        why = "wrong: %s" % state_str(st)
                    self.stats.error(
                        "lost" if why == "lost" else "wrong",
                        "%s after restart %d via %s: %s, allowed %s; "
                        "history of the round before: %s" % (
                            k.name, self.d.n, p, why,
                            sorted(map(state_str, k.possible)),
                            k.history()))
                if len(seen) > 1 and not damaged:
                    self.stats.error("wrong", "%s: front-ends disagree: %s"
                                     % (k.name, sorted(map(state_str,
                                                           seen))))
                if damaged or len(seen) > 1:
                    conns["mc"].delete(k.name)
                    seen = {ABSENT}
                st = seen.pop()
                if (k.name, st) in self.appended and st in k.possible:
                    self.stats.add("verified_appended")
                k.base, k.possible = st, {st}
                k.ops, k.acked = [], -1
                if st is not ABSENT:
                    k.next_ver = max(k.next_ver, st + 1)
        finally:
            for c in conns.values():
                if c:
                    c.close()
        self.stats.add("verified", n)
        self.stats.add("verified_present", present)
        return n, present

    def plant(self, r):
        """--plant: behind the model's back, delete one acknowledged
        object and replace another by a cut copy of itself, so that a run
        shows the checks find a lost and a partial object."""
        held = [k for k in self.keys
                if len(k.possible) == 1 and ABSENT not in k.possible]
        if len(held) < 2:
            self.stats.error("startup", "--plant: fewer than two objects")
            return
        lose, cut = r.sample(held, 2)
        # an appended version, if one is held, is cut to its parent and
        # half its segment: the old file and part of the append (a mix)
        app = [k for k in held if k is not lose and
               (k.name, next(iter(k.possible))) in self.appended]
        if app:
            cut = r.choice(app)
        ver = next(iter(cut.possible))
        data = self.val(cut.name, ver)
        n = len(data) // 2 + 1
        if app:
            old = total_size(self.seed, cut.name,
                             self.appended[(cut.name, ver)],
                             self.a.max_size, self.appended)
            n = old + (len(data) - old) // 2 + 1
        mc = MC(self.d.port, self.a.timeout)
        mc.delete(lose.name)
        mc.set(cut.name, data[:n])
        mc.close()
        log("planted: deleted %s, cut %s%s to %d of %d bytes" % (
            lose.name, cut.name, " (an appended version: its parent and "
            "part of the append)" if app else "", n, len(data)))

    # -- rounds --

    def start(self):
        self.d.start()
        if not self.d.wait_ready():
            self.stats.error("startup", "goblind %d did not start (rc %s); "
                             "log %s:\n%s" % (self.d.n, self.d.proc.poll(),
                                              self.d.log,
                                              self.d.log_text()[-3000:]))
            self.d.kill()
            return False
        return True

    def one_round(self):
        r = random.Random("round:%d:%d" % (self.seed, self.round))
        self.killing = False
        early = r.random() < self.a.early_kill
        run = r.uniform(self.a.run_min, self.a.run_max)
        t = time.monotonic()
        if early:
            # kill during startup and recovery: the model carries over
            self.d.start()
            time.sleep(r.uniform(0, 0.3))
            if not self.d.kill():
                self.stats.error("died", "goblind %d exited by itself "
                                 "(rc %s) during startup; log %s" % (
                                     self.d.n, self.d.proc.returncode,
                                     self.d.log))
            log("round %d: killed %.3f s after start (recovery)" % (
                self.round, time.monotonic() - t))
            return
        if not self.start():
            return
        up = time.monotonic() - t
        if self.round == self.a.plant:
            self.plant(r)
        try:
            n, present = self.verify(None, r)
        except (Gone, ServerError, OSError) as e:
            self.stats.error("died", "goblind %d failed while verifying: "
                             "%s; log %s" % (self.d.n, e, self.d.log))
            self.d.kill()
            return
        before = dict(self.stats.c)
        self.stop.clear()
        th = [threading.Thread(target=self.writer, args=(w,))
              for w in range(self.a.writers)]
        th += [threading.Thread(target=self.reader, args=(i,))
               for i in range(self.a.readers)]
        for x in th:
            x.start()
        time.sleep(run)
        # evicted objects are no loss for a cache: the store is sized so
        # none is evicted, and the line says if one was
        try:
            mc = MC(self.d.port, 2)
            evicted = mc.stat("evictions")
            mc.close()
        except (Gone, OSError):
            evicted = None
        if evicted:
            self.stats.add("evictions", evicted)
        self.killing = True	# from here on, errors are the kill's
        alive = self.d.kill(unmount=False)
        self.stop.set()
        for x in th:
            x.join(self.a.timeout + 30)
            if x.is_alive():
                self.stats.error("hung", "a client thread did not finish "
                                 "after the kill")
        self.d.unmount()
        if not alive:
            self.stats.error("died", "goblind %d exited by itself (rc %s); "
                             "log %s:\n%s" % (self.d.n,
                                              self.d.proc.returncode,
                                              self.d.log,
                                              self.d.log_text()[-3000:]))
        inflight = 0
        for k in self.keys:
            with k.lock:
                inflight += len(k.ops) - 1 - k.acked
                k.end_round()

        def delta(prefix):
            return sum(v - before.get(c, 0) for c, v in self.stats.c.items()
                       if c.startswith(prefix))
        log("round %d: up in %.2f s, %d verified (%d present), ran %.2f s: "
            "%d writes and %d deletes acked (mc %d, http %d, mount %d), "
            "%d reads, %d not acked at the kill, %s evicted" % (
                self.round, up, n, present, run, delta("acked_write"),
                delta("acked_delete"), delta("acked_write_mc") +
                delta("acked_delete_mc"), delta("acked_write_http") +
                delta("acked_delete_http"), delta("acked_write_mount") +
                delta("acked_delete_mount"), delta("reads_"), inflight,
                "?" if evicted is None else evicted))

    def run(self):
        self.d = Daemon(self.a, self.a.dir)
        end = self.t0 + self.a.duration
        self.round = 0
        while True:
            if self.a.rounds:
                if self.round >= self.a.rounds:
                    break
            elif time.monotonic() >= end and self.round > 0:
                break
            self.round += 1
            self.one_round()
            if self.stats.get("startup") or self.stats.get("hung"):
                break
        # the last check: every key through every front-end
        self.round += 1
        if self.start():
            try:
                n, present = self.verify(list(PROTOS), None)
            except (Gone, ServerError, OSError) as e:
                self.stats.error("died", "goblind %d failed in the final "
                                 "check: %s; log %s" % (self.d.n, e,
                                                         self.d.log))
                self.d.kill()
                n = present = 0
            log("final: %d reads verified (%d present) through memcache, "
                "HTTP and the mount" % (n, present))
            rc = self.d.stop()
            if rc != 0:
                self.stats.error("died", "goblind did not exit 0 on "
                                 "SIGTERM: %s; log %s" % (rc, self.d.log))
        s = self.stats
        wrong = s.get("wrong") + s.get("stale")
        bad = (wrong + s.get("lost") + s.get("died") + s.get("startup") +
               s.get("hung"))
        acked = sum(v for c, v in s.c.items() if c.startswith("acked_"))
        log("%d acknowledged operations (%s), %d reads while running "
            "(mc %d, http %d, mount %d), %d mount writes in place, "
            "%d mount appends (%d appended versions found whole after a "
            "restart), %d mount unlinks and %d appends answered ENOENT, "
            "%d server errors, %d failed before a kill; mount reads cut short or NUL-padded at a stale "
            "size (known bugs): %d at an earlier version's size, %d "
            "during a mount rewrite" % (
                acked, ", ".join("%s %d" % (c[6:], v) for c, v in
                                 sorted(s.c.items())
                                 if c.startswith("acked_")),
                s.get("reads_mc") + s.get("reads_http") +
                s.get("reads_mount"), s.get("reads_mc"),
                s.get("reads_http"), s.get("reads_mount"),
                s.get("mount_inplace_writes"), s.get("mount_appends"),
                s.get("verified_appended"), s.get("mount_unlink_enoent"),
                s.get("mount_append_enoent"), s.get("server_errors"),
                s.get("dropped"),
                s.get("mount_stale_earlier-size"),
                s.get("mount_stale_rewrite")))
        log("%d rounds, %s objects verified, %d wrong, %d lost" % (
            self.round - 1, format(s.get("verified"), ","), wrong,
            s.get("lost")))
        if bad:
            argv, skip = [], False
            for x in sys.argv:
                if skip or x.startswith("--seed="):
                    skip = False
                    continue
                if x == "--seed":
                    skip = True
                    continue
                argv.append(x)
            log("FAILED with seed %d: replay with %s --seed %d" % (
                self.seed, " ".join(argv), self.seed))
        return 1 if bad else 0


def size_arg(s):
    m = re.fullmatch(r"(\d+)([KMG]?)(iB)?", s)
    if not m:
        raise argparse.ArgumentTypeError("not a size: %r" % s)
    return int(m.group(1)) << {"": 0, "K": 10, "M": 20, "G": 30}[m.group(2)]


def main():
    ap = argparse.ArgumentParser(
        description="kill -9 goblind under memcache, HTTP and mount "
        "writers and readers; verify against a model of acknowledged "
        "writes")
    ap.add_argument("--long", action="store_true",
                    help="the bench profile (20 minutes; default: about a "
                    "minute for make test); CRASH_LONG=1 also selects it")
    ap.add_argument("--seed", type=int, help="default: random, printed")
    ap.add_argument("--duration", type=float,
                    help="seconds of rounds before the final check")
    ap.add_argument("--rounds", type=int, default=0,
                    help="run exactly N rounds instead of --duration")
    ap.add_argument("--writers", type=int)
    ap.add_argument("--readers", type=int)
    ap.add_argument("--keys", type=int, help="keys per writer")
    ap.add_argument("--max-size", type=size_arg)
    ap.add_argument("--run-min", type=float,
                    help="least seconds a round runs before the kill")
    ap.add_argument("--run-max", type=float)
    ap.add_argument("--early-kill", type=float,
                    help="share of rounds killed during startup")
    ap.add_argument("--allow-mount-stale-size", action="store_true",
                    help="count, do not fail, mount reads cut short or "
                    "padded with NULs by the two known bugs of the "
                    "kernel's cached file size (see mount_stale())")
    ap.add_argument("--mount-ack", choices=("visible", "close"),
                    default="close",
                    help="a mount write is acknowledged when close() has "
                    "returned (close, the default: goblinfs commits at "
                    "FLUSH) or only once memcache also shows it (visible)")
    ap.add_argument("--plant", type=int, metavar="ROUND",
                    help="at the start of ROUND, lose one object and cut "
                    "another behind the model's back (checks the checks)")
    ap.add_argument("--timeout", type=float, default=20,
                    help="socket timeout (s)")
    ap.add_argument("--goblind", default=os.environ.get(
        "GOBLIND", os.path.join(ROOT, "build", "goblind")))
    ap.add_argument("--dir", help="scratch dir (default: a new temp dir, "
                    "removed when the run passes)")
    ap.add_argument("--keep", action="store_true",
                    help="keep the scratch dir")
    a = ap.parse_args()
    a.long = a.long or os.environ.get("CRASH_LONG") == "1"
    prof = PROFILES["long" if a.long else "short"]
    for k, v in prof.items():
        if getattr(a, k) is None:
            setattr(a, k, v)
    if a.seed is None:
        a.seed = int.from_bytes(os.urandom(4), "little")
    if not os.access(a.goblind, os.X_OK):
        print("crash: goblind is not built: %s" % a.goblind, file=sys.stderr)
        return 2
    own = a.dir is None
    if own:
        a.dir = tempfile.mkdtemp(prefix="goblin-crash.")
    else:
        os.makedirs(a.dir, exist_ok=True)
    log("seed %d; %s profile: %d writers x %d keys, %d readers, objects "
        "up to %d bytes, rounds of %.1f-%.1f s for %s; dir %s" % (
            a.seed, "long" if a.long else "short", a.writers, a.keys,
            a.readers, a.max_size, a.run_min, a.run_max,
            "%d rounds" % a.rounds if a.rounds else "%.0f s" % a.duration,
            a.dir))
    c = Crash(a)
    rc = 2
    try:
        rc = c.run()
    finally:
        if c.__dict__.get("d") and c.d.proc and c.d.proc.poll() is None:
            c.d.proc.kill()
            c.d.proc.wait()
        try:
            if c.__dict__.get("d"):
                c.d.unmount()
        except RuntimeError as e:
            log(str(e))
        if own and rc == 0 and not a.keep:
            shutil.rmtree(a.dir, ignore_errors=True)
        elif rc != 0:
            log("store and logs kept in %s" % a.dir)
    return rc


if __name__ == "__main__":
    sys.exit(main())
