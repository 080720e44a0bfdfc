#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""goblind --mount against memcache and HTTP on the same store (issue 19).

  random PORT HPORT MNT [--seed N] [--steps N]
      A seeded random walk of stores, deletes, overwrites and renames through
      memcache, HTTP and the mount, applied to a model too; after every step
      the three views must be the model's.  Prints the seed and the steps on
      a failure (exit 1).
  stress PORT HPORT MNT [--seconds S] [--seed N]
      Writers on memcache and HTTP overwrite and delete keys (and one on
      the mount, keys that come and go) while readers on the mount open,
      list and read them: every read is one whole version, and a key that
      exists throughout never gives ENOENT.

Only the standard library; loopback only.
"""
import http.client
import os
import random
import socket
import sys
import threading
import time


class Memcache:
    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port))
        self.f = self.s.makefile("rb")

    def cmd(self, line, data=None):
        msg = line.encode() + b"\r\n"
        if data is not None:
            msg += data + b"\r\n"
        self.s.sendall(msg)
        return self.f.readline().rstrip(b"\r\n").decode()

    def set(self, key, val):
        r = self.cmd("set %s 0 0 %d" % (key, len(val)), val)
        if r != "STORED":
            raise AssertionError("set %s: %s" % (key, r))

    def delete(self, key):
        return self.cmd("delete %s" % key)

    def get_many(self, keys):
        self.s.sendall(("get %s\r\n" % " ".join(keys)).encode())
        out = {}
        while True:
            line = self.f.readline().rstrip(b"\r\n").decode()
            if line == "END":
                return out
            parts = line.split()
            if parts[0] != "VALUE":
                raise AssertionError("get: %r" % line)
            data = self.f.read(int(parts[3]) + 2)[:-2]
            out[parts[1]] = data


class Http:
    def __init__(self, port):
        self.port = port
        self.c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)

    def req(self, method, key, body=None):
        for attempt in (0, 1):
            try:
                self.c.request(method, "/" + key, body=body)
                r = self.c.getresponse()
                return r.status, r.read()
            except (http.client.HTTPException, OSError):
                if attempt:
                    raise
                self.c.close()
                self.c = http.client.HTTPConnection("127.0.0.1", self.port,
                                                    timeout=10)

    def put(self, key, val):
        st, _ = self.req("PUT", key, val)
        if st not in (200, 201, 204):
            raise AssertionError("PUT %s: %d" % (key, st))

    def delete(self, key):
        return self.req("DELETE", key)[0]

    def get(self, key):
        return self.req("GET", key)


# ---- the random walk ----

DIRS = ["a", "b", "a/c"]
FILES = ["f0", "f1", "f2"]
UNIVERSE = FILES + ["%s/%s" % (d, f) for d in DIRS for f in FILES]
MARKERS = [d + "/" for d in DIRS]


def parent(key):
    return key.rsplit("/", 1)[0] if "/" in key else ""


def dirs_of(model):
    """The directories the mount must show for the keys of @model."""
    out = set()
    for k in model:
        p = k[:-1] if k.endswith("/") else parent(k)
        while p:
            out.add(p)
            p = parent(p)
    return out


def mount_view(mnt):
    files, dirs = {}, set()
    for root, ds, fs in os.walk(mnt):
        rel = os.path.relpath(root, mnt)
        for d in ds:
            dirs.add(d if rel == "." else rel + "/" + d)
        for f in fs:
            files[f if rel == "." else rel + "/" + f] = None
    return files, dirs


class Walk:
    def __init__(self, args, seed, steps):
        self.port, self.hport, self.mnt = int(args[0]), int(args[1]), args[2]
        self.rng = random.Random(seed)
        self.seed, self.steps = seed, steps
        self.mc = Memcache(self.port)
        self.http = Http(self.hport)
        self.model = {}
        self.mtime = {}  # key -> the mount's last mtime_ns for it
        self.log = []

    def path(self, key):
        return os.path.join(self.mnt, key)

    def value(self):
        n = self.rng.choice([1, 7, 100, 4096, 70000, 300000])
        return bytes([self.rng.randrange(256)]) * n + \
            self.rng.randbytes(8)

    def visible_files(self):
        return sorted(k for k in self.model if not k.endswith("/"))

    def keep_dir(self, d):
        """The mount keeps a directory its own unlink or rename empties."""
        if d and not any(k.startswith(d + "/") for k in self.model):
            self.model[d + "/"] = b""

    def mount_mkdirs(self, key):
        p, chain = parent(key), []
        while p and p not in dirs_of(self.model):
            chain.append(p)
            p = parent(p)
        for d in reversed(chain):
            os.mkdir(self.path(d))
            self.model[d + "/"] = b""

    def step(self):
        rng, model = self.rng, self.model
        op = rng.choice(["mc_set", "mc_set", "mc_del", "http_put",
                         "http_del", "mnt_write", "mnt_unlink",
                         "mnt_rename", "pinned"])
        key = rng.choice(UNIVERSE)
        files = self.visible_files()
        if op in ("mnt_unlink", "mnt_rename", "pinned") and not files:
            op = "mc_set"
        if op in ("mnt_unlink", "mnt_rename", "pinned"):
            key = rng.choice(files)
        self.log.append("%s %s" % (op, key))
        if op == "mc_set":
            v = self.value()
            self.mc.set(key, v)
            model[key] = v
        elif op == "mc_del":
            r = self.mc.delete(key)
            want = "DELETED" if key in model else "NOT_FOUND"
            assert r == want, "delete %s: %s, not %s" % (key, r, want)
            model.pop(key, None)
        elif op == "http_put":
            v = self.value()
            self.http.put(key, v)
            model[key] = v
        elif op == "http_del":
            st = self.http.delete(key)
            want = (200, 204) if key in model else (404,)
            assert st in want, "DELETE %s: %d" % (key, st)
            model.pop(key, None)
        elif op == "mnt_write":
            v = self.value()
            self.mount_mkdirs(key)
            with open(self.path(key), "wb") as f:
                f.write(v)
            model[key] = v
        elif op == "mnt_unlink":
            os.unlink(self.path(key))
            del model[key]
            self.keep_dir(parent(key))
        elif op == "mnt_rename":
            to = rng.choice([k for k in UNIVERSE if k != key])
            self.log[-1] += " " + to
            self.mount_mkdirs(to)
            os.rename(self.path(key), self.path(to))
            model[to] = model.pop(key)
            if parent(key) != parent(to):
                self.keep_dir(parent(key))
        elif op == "pinned":
            # an open file keeps its bytes whatever another front-end does
            old = model[key]
            with open(self.path(key), "rb", buffering=0) as f:
                if rng.random() < 0.5:
                    self.log[-1] += " mc_del"
                    self.mc.delete(key)
                    del model[key]
                else:
                    v = self.value()
                    self.log[-1] += " http_put %d" % len(v)
                    self.http.put(key, v)
                    model[key] = v
                got = b""
                while True:
                    b = f.read(1 << 20)
                    if not b:
                        break
                    got += b
            assert got == old, "open %s: %d bytes, not the %d it had" % (
                key, len(got), len(old))
        self.check(key if op != "mnt_rename" else None)

    def check(self, changed):
        model = self.model
        # memcache: every key, markers too
        got = self.mc.get_many(UNIVERSE + MARKERS)
        want = {k: v for k, v in model.items() if k in UNIVERSE + MARKERS}
        if got != want:
            diff = sorted(set(got.items()) ^ set(want.items()))
            raise AssertionError("memcache differs: %s" %
                                 [(k, len(v)) for k, v in diff])
        # HTTP: a few keys
        for k in self.rng.sample(UNIVERSE, 3):
            st, body = self.http.get(k)
            if k in model:
                assert st == 200 and body == model[k], \
                    "GET %s: %d, %d bytes" % (k, st, len(body))
            else:
                assert st == 404, "GET %s: %d" % (k, st)
        # the mount: names, sizes, bytes, mtimes; gone ones ENOENT
        files, dirs = mount_view(self.mnt)
        wfiles = set(self.visible_files())
        assert set(files) == wfiles, "mount lists %s, the model %s" % (
            sorted(files), sorted(wfiles))
        wdirs = dirs_of(model)
        assert dirs == wdirs, "mount dirs %s, the model %s" % (
            sorted(dirs), sorted(wdirs))
        for k in UNIVERSE:
            try:
                st = os.stat(self.path(k))
            except FileNotFoundError:
                assert k not in model, "%s: ENOENT on the mount" % k
                self.mtime.pop(k, None)
                continue
            except NotADirectoryError:
                assert k not in model, "%s: ENOTDIR on the mount" % k
                continue
            assert k in model, "%s: on the mount, deleted" % k
            assert st.st_size == len(model[k]), \
                "%s: size %d on the mount, %d stored" % (
                    k, st.st_size, len(model[k]))
            with open(self.path(k), "rb") as f:
                data = f.read()
            assert data == model[k], "%s: other bytes on the mount" % k
            last = self.mtime.get(k)
            if k == changed and last is not None:
                assert st.st_mtime_ns > last, \
                    "%s: mtime %d not after %d" % (k, st.st_mtime_ns, last)
            self.mtime[k] = st.st_mtime_ns

    def run(self):
        for k in UNIVERSE + MARKERS:  # what an earlier run left
            self.mc.delete(k)
        try:
            self.check(None)
            for i in range(self.steps):
                self.step()
        except Exception as e:
            print("FAILED at step %d (seed %d): %s: %s" %
                  (len(self.log), self.seed, type(e).__name__, e))
            print("steps:")
            for i, l in enumerate(self.log[-15:]):
                print("  %d %s" % (len(self.log) - len(self.log[-15:]) + i + 1,
                                   l))
            return 1
        print("%d steps, seed %d: all three views agreed after each" %
              (self.steps, self.seed))
        return 0


# ---- the stress run ----

def version_bytes(key, ver, size):
    """A value that names its key and version in every 64-byte line."""
    line = ("%s v%010d " % (key, ver)).encode()
    line = line + b"." * (63 - len(line)) + b"\n"
    n = size // 64 + 1
    return (line * n)[:size]


def check_whole(key, data):
    """@data is one whole version of @key: one line, repeated, its size."""
    if not data:
        return "empty read"
    first = data[:64]
    if not first.startswith(key.encode() + b" v"):
        return "starts with %r" % first[:40]
    ver = int(first.split()[1][1:])
    want = version_bytes(key, ver, len(data))
    if data != want:
        at = next(i for i in range(len(data)) if data[i] != want[i])
        return "torn at byte %d of %d (v%d)" % (at, len(data), ver)
    return None


def sizes(rng):
    return rng.choice([200, 5000, 200000, 600000, 1500000])


def stress(args, seconds, seed, nreaders=3, nmwriters=1):
    port, hport, mnt = int(args[0]), int(args[1]), args[2]
    steady = ["s/k%d" % i for i in range(4)]   # exist throughout
    flaky = ["f/k%d" % i for i in range(4)]    # come and go
    sizes_of = {}
    lock = threading.Lock()
    errors, counts = [], {"reads": 0, "writes": 0, "enoent": 0}
    rng = random.Random(seed)
    mc = Memcache(port)
    ver = [0]

    def put(client, key, r):
        with lock:
            ver[0] += 1
            v = ver[0]
        n = sizes(r)
        data = version_bytes(key, v, n)
        if isinstance(client, Memcache):
            client.set(key, data)
        else:
            client.put(key, data)
        with lock:
            counts["writes"] += 1

    for k in steady:
        put(mc, k, rng)
    stop = time.monotonic() + seconds

    def writer(kind, wseed):
        r = random.Random(wseed)
        c = Memcache(port) if kind == "mc" else Http(hport)
        try:
            while time.monotonic() < stop and not errors:
                k = r.choice(steady + flaky)
                if k in flaky and r.random() < 0.3:
                    if kind == "mc":
                        c.delete(k)
                    else:
                        c.delete(k)
                else:
                    put(c, k, r)
        except Exception as e:
            errors.append("writer %s: %r" % (kind, e))

    def mount_writer(wseed):
        # the mount's own changes, among the others' (flaky keys only)
        r = random.Random(wseed)
        try:
            while time.monotonic() < stop and not errors:
                k = r.choice(flaky)
                p = os.path.join(mnt, k)
                try:
                    if r.random() < 0.3:
                        os.unlink(p)
                        continue
                    os.makedirs(os.path.dirname(p), exist_ok=True)
                    with lock:
                        ver[0] += 1
                        v = ver[0]
                    with open(p, "wb") as f:
                        f.write(version_bytes(k, v, sizes(r)))
                    with lock:
                        counts["writes"] += 1
                except (FileNotFoundError, FileExistsError):
                    pass  # another front-end took the name meanwhile
        except Exception as e:
            errors.append("mount writer: %r" % e)

    def reader(rseed):
        r = random.Random(rseed)
        try:
            while time.monotonic() < stop and not errors:
                k = r.choice(steady + flaky)
                p = os.path.join(mnt, k)
                if r.random() < 0.2 and k in steady:
                    names = set(os.listdir(os.path.dirname(p)))
                    if os.path.basename(p) not in names:
                        errors.append("ls of s/ lacks %s" % k)
                    continue
                try:
                    with open(p, "rb") as f:
                        data = f.read()
                except FileNotFoundError:
                    if k in steady:
                        errors.append("ENOENT for %s, which exists "
                                      "throughout" % k)
                    with lock:
                        counts["enoent"] += 1
                    continue
                why = check_whole(k, data)
                if why:
                    errors.append("%s: %s" % (k, why))
                with lock:
                    counts["reads"] += 1
        except Exception as e:
            errors.append("reader: %r" % e)

    ts = [threading.Thread(target=writer, args=("mc", seed + 1)),
          threading.Thread(target=writer, args=("http", seed + 2))]
    ts += [threading.Thread(target=mount_writer, args=(seed + 3 + i,))
           for i in range(nmwriters)]
    ts += [threading.Thread(target=reader, args=(seed + 100 + i,))
           for i in range(nreaders)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    # once all is quiet, the mount is what memcache says, key by key
    final = mc.get_many(steady + flaky)
    for k in steady + flaky:
        p = os.path.join(mnt, k)
        try:
            with open(p, "rb") as f:
                data = f.read()
            listed = os.path.basename(p) in os.listdir(os.path.dirname(p))
        except FileNotFoundError:
            data, listed = None, False
        if data != final.get(k) or listed != (k in final):
            errors.append("at the end, %s: %s on the mount, %s stored" % (
                k, "absent" if data is None else "%d bytes" % len(data),
                "%d bytes" % len(final[k]) if k in final else "absent"))
    print("%.1f s, seed %d: %d writes, %d whole reads, %d ENOENT of keys "
          "that come and go" % (seconds, seed, counts["writes"],
                                counts["reads"], counts["enoent"]))
    if errors:
        for e in errors[:10]:
            print("FAILED:", e)
        return 1
    if counts["reads"] < 20 or counts["writes"] < 20:
        print("FAILED: too little done to mean anything")
        return 1
    return 0


def hammer(args, seconds, seed, nreaders=4, nmwriters=1):
    """One key, processes: a memcache writer that alternates small and
    large versions, a mount writer that rewrites it, and readers on the
    mount.  Every read is one whole version, no open or write fails."""
    import multiprocessing as mp
    port, mnt = int(args[0]), args[2]
    key = "h/k"
    path = os.path.join(mnt, key)
    Memcache(port).set(key, version_bytes(key, 0, 200))
    stop = time.monotonic() + seconds
    out = mp.Queue()

    def mc_writer(i):
        c, r, v, n = Memcache(port), random.Random(seed + i), i, 0
        while time.monotonic() < stop:
            v += 3
            c.set(key, version_bytes(key, v, r.choice([200, 200000])))
            n += 1
        out.put(("writes", n, None))

    def mount_writer(i):
        r, v, n, err = random.Random(seed + i), i, 0, None
        try:
            while time.monotonic() < stop:
                v += 3
                with open(path, "wb") as f:
                    f.write(version_bytes(key, v, r.choice([300, 90000])))
                n += 1
        except Exception as e:
            err = "mount writer: %r" % e
        out.put(("writes", n, err))

    def reader(i):
        n, err = 0, None
        try:
            while time.monotonic() < stop and not err:
                with open(path, "rb") as f:
                    data = f.read()
                err = check_whole(key, data)
                n += 1
        except Exception as e:
            err = "reader: %r" % e
        out.put(("reads", n, err))

    ps = [mp.Process(target=mc_writer, args=(1,))]
    ps += [mp.Process(target=mount_writer, args=(2 + i,))
           for i in range(nmwriters)]
    ps += [mp.Process(target=reader, args=(10 + i,))
           for i in range(nreaders)]
    for p in ps:
        p.start()
    counts, errors = {"reads": 0, "writes": 0}, []
    for p in ps:
        kind, n, err = out.get()
        counts[kind] += n
        if err:
            errors.append(err)
    for p in ps:
        p.join()
    print("%.1f s, seed %d: %d writes, %d whole reads of one key" % (
        seconds, seed, counts["writes"], counts["reads"]))
    for e in errors[:10]:
        print("FAILED:", e)
    if errors:
        return 1
    if counts["reads"] < 20 or counts["writes"] < 20:
        print("FAILED: too little done to mean anything")
        return 1
    return 0


def main():
    argv = sys.argv[1:]
    opts = {}
    pos = []
    i = 0
    while i < len(argv):
        if argv[i].startswith("--"):
            opts[argv[i][2:]] = argv[i + 1]
            i += 2
        else:
            pos.append(argv[i])
            i += 1
    seed = int(opts.get("seed", random.randrange(1 << 30)))
    if pos[0] == "random":
        return Walk(pos[1:], seed, int(opts.get("steps", 300))).run()
    if pos[0] == "hammer":
        return hammer(pos[1:], float(opts.get("seconds", 3)), seed,
                      int(opts.get("readers", 4)),
                      int(opts.get("mount-writers", 1)))
    if pos[0] == "stress":
        return stress(pos[1:], float(opts.get("seconds", 3)), seed,
                      int(opts.get("readers", 3)),
                      int(opts.get("mount-writers", 1)))
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
