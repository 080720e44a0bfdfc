#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# A bounded stress loop for 21-goblinfs-mirror.bats (issue 18): readers
# open and read MOUNT/f whole through goblinfs --mirror while a writer
# replaces ORIGIN/f (a rename) on the origin, whose answers go stale
# within a second, so that opens revalidate and replace the cached copy
# while other readers hold the old one.  The versions are
# goblinfs_race.py's, self-describing.
#   SECS READERS ORIGIN MOUNT STALE
# After the loop it waits STALE seconds (the cached copy's lifetime
# passes) and checks that the mount then shows the last version.  Prints
# the counts; exits 1 when a reader saw an error or a wrong byte, or when
# too little happened for the run to mean anything.
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import goblinfs_race as gr  # noqa: E402


def main():
    secs, nreaders = float(sys.argv[1]), int(sys.argv[2])
    origin, mount, stale = sys.argv[3], sys.argv[4], float(sys.argv[5])
    path, tmp = os.path.join(origin, "f"), os.path.join(origin, "f.tmp")
    mpath = os.path.join(mount, "f")
    gr.put(path, gr.version(0))
    until = time.monotonic() + secs
    kids = []
    for _ in range(nreaders):
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            code = 0
            try:
                gr.reader(mpath, until, w)
            except BaseException as e:      # report, never hang the test
                print("reader: %r" % e, file=sys.stderr)
                code = 1
            os._exit(code)
        os.close(w)
        kids.append((pid, r))
    k = 0
    while time.monotonic() < until:
        time.sleep(0.2)    # a few versions a second: each read by some
        k += 1
        gr.put(tmp, gr.version(k))
        os.rename(tmp, path)
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
            gr.fail("a reader died (status %d)" % status)
        f = line.decode().rstrip("\n").split(" ", 4)
        opens += int(f[0])
        enoent += int(f[1])
        errs += int(f[2])
        wrong += int(f[3])
        if len(f) > 4 and f[4] and not first:
            first = f[4]
    print("mirror: versions=%d opens=%d enoent=%d errors=%d wrong=%d%s" % (
        k, opens, enoent, errs, wrong, " first: " + first if first else ""))
    if enoent or errs or wrong:
        gr.fail("%d ENOENT, %d other errors, %d reads that were no whole "
                "version" % (enoent, errs, wrong))
    if k < 5 or opens < 50:
        gr.fail("too little happened: %d versions, %d opens" % (k, opens))
    time.sleep(stale)
    last = gr.whole(gr.read_all(mpath))
    if last != k:
        gr.fail("after expiry the mount shows version %r, the origin %d"
                % (last, k))


if __name__ == "__main__":
    main()
