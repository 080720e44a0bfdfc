#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""mount_wedge.py GOBLIND DIR ROUNDS: kill -9 goblind --mount while
lookups in one directory of the mount race memcache sets and deletes of
keys in it (each delete makes goblind tell the kernel to forget a name,
which waits for the directory's lock that a lookup holds).  Every round,
goblind must end within 5 s of the kill, the lookups return, and the dead
mount answer.  Prints a line per failed round and a summary; exit 1 when
a round failed.  A goblind that does not end is unwedged through fusectl
(root) so that the test itself ends."""
import multiprocessing as mp
import os
import re
import signal
import socket
import subprocess
import sys
import time

GD, DIR, ROUNDS = sys.argv[1], sys.argv[2], int(sys.argv[3])
NAMES = 50


def lookups(mnt, stop):
    i = 0
    while not stop.is_set():
        try:
            os.stat(os.path.join(mnt, "d", "n%d" % (i % NAMES)))
        except OSError:
            pass
        i += 1


def writer(port, stop):
    try:
        s = socket.create_connection(("127.0.0.1", port))
        i = 0
        while not stop.is_set():
            k = b"d/n%d" % (i % NAMES)
            s.sendall(b"set %s 0 0 1\r\nx\r\ndelete %s\r\n" % (k, k))
            buf = b""
            while buf.count(b"\r\n") < 2:
                c = s.recv(4096)
                if not c:
                    return
                buf += c
            i += 1
    except OSError:
        return


def tasks(pid):
    out = []
    try:
        for t in sorted(os.listdir("/proc/%d/task" % pid)):
            with open("/proc/%d/task/%s/stat" % (pid, t)) as f:
                st = f.read().rsplit(")", 1)[1].split()[0]
            with open("/proc/%d/task/%s/wchan" % (pid, t)) as f:
                out.append("%s %s %s" % (t, st, f.read()))
    except OSError:
        pass
    return out


def unwedge():
    ctl = "/sys/fs/fuse/connections"
    subprocess.run("mountpoint -q %s || mount -t fusectl none %s" %
                   (ctl, ctl), shell=True)
    for c in os.listdir(ctl):
        try:
            with open(os.path.join(ctl, c, "abort"), "w") as f:
                f.write("1")
        except OSError:
            pass


def ismounted(mnt):
    with open("/proc/self/mounts") as f:
        return any(ln.split()[1] == mnt for ln in f)


def round_(r, store, mnt, log):
    """A failure's text, or None."""
    with open(log, "wb") as lf:
        p = subprocess.Popen(
            [GD, "--store", store, "--memory", "16M", "--small-memory", "8M",
             "--no-hugetlb", "--no-mlock", "--ssd-size", "1G", "--cores",
             "2", "--memcache-port", "0", "--no-http", "--mount", mnt],
            stdout=lf, stderr=lf)
    port = None
    for _ in range(500):
        with open(log, errors="replace") as f:
            m = re.search(r"memcache on [^ ]*:(\d+),", f.read())
        if m and os.path.ismount(mnt):
            port = int(m.group(1))
            break
        time.sleep(0.02)
    if port is None:
        p.kill()
        p.wait()
        return "goblind did not start"
    # d/ stays: the names come and go in it
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.sendall(b"set d/keep 0 0 1\r\nx\r\n")
        s.recv(100)
    stop = mp.Event()
    procs = [mp.Process(target=lookups, args=(mnt, stop)) for _ in range(4)]
    procs += [mp.Process(target=writer, args=(port, stop)) for _ in range(2)]
    for q in procs:
        q.start()
    time.sleep(0.2 + (r % 5) * 0.1)
    p.send_signal(signal.SIGKILL)
    why = None
    try:
        p.wait(timeout=5)
    except subprocess.TimeoutExpired:
        why = "goblind %d did not end 5 s after kill -9: %s" % (
            p.pid, "; ".join(tasks(p.pid)))
        unwedge()
        p.wait(timeout=30)
    stop.set()
    for q in procs:
        q.join(timeout=5)
        if q.is_alive():
            why = why or "a lookup still waits 5 s after goblind ended"
            q.kill()
            q.join()
    # the dead mount answers (ENOTCONN) until auto_unmount's fusermount3
    # removes it
    try:
        subprocess.run(["stat", mnt], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=5)
    except subprocess.TimeoutExpired:
        why = why or "a stat of the dead mount still waits after 5 s"
        unwedge()
    if ismounted(mnt):
        subprocess.run(["fusermount3", "-u", "-z", mnt])
    return why


def main():
    store, mnt = os.path.join(DIR, "store"), os.path.join(DIR, "mnt")
    os.makedirs(mnt, exist_ok=True)
    failed = aborted = 0
    for r in range(ROUNDS):
        log = os.path.join(DIR, "goblind.%d.log" % r)
        why = round_(r, store, mnt, log)
        with open(log, errors="replace") as f:
            aborted += "aborted" in f.read()
        if why:
            failed += 1
            print("round %d: %s" % (r, why), flush=True)
    print("wedge: %d rounds, %d failed, %d unwedged by the guard" %
          (ROUNDS, failed, aborted))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
