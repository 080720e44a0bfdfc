#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Writes through goblinfs that are not a whole new file (issue 20).

  goblinfs_write.py ops DIR
      the same appends, pwrites, O_RDWR reads and truncates in DIR (the
      mount, or an ext4 temp dir to compare with): prints what each step
      read back and the files' sizes and digests, one line each
  goblinfs_write.py stress DIR SECONDS
      readers, appenders and in-place writers on the same files at once:
      every read of a whole file must be one whole version (never a mix,
      never a torn append); prints the counts, exits 1 on a bad read
  goblinfs_write.py truncstat DIR N
      N rounds of: read the file whole and close it, truncate(2) it by
      name to another size, stat it: prints the rounds whose stat gave
      another size than the truncate's, and exits 1 if there were any
"""
import hashlib
import os
import sys
import threading
import time


def digest(path):
    with open(path, 'rb') as f:
        return hashlib.sha256(f.read()).hexdigest()[:16]


def ops(d):
    out = []
    p = os.path.join(d, 'f')
    with open(p, 'wb') as f:
        f.write(b'0123456789' * 1000)          # 10000 bytes
    fd = os.open(p, os.O_WRONLY | os.O_APPEND)  # O_APPEND
    os.write(fd, b'tail1')
    os.write(fd, b'tail2')
    os.close(fd)
    out.append('append %d %s' % (os.path.getsize(p), digest(p)))
    fd = os.open(p, os.O_WRONLY)                # a write at the end
    os.lseek(fd, 0, os.SEEK_END)
    os.write(fd, b'end')
    os.close(fd)
    out.append('at-end %d %s' % (os.path.getsize(p), digest(p)))
    fd = os.open(p, os.O_RDWR)                  # pwrite anywhere, read back
    os.pwrite(fd, b'MIDDLE', 5000)
    os.pwrite(fd, b'START', 0)
    out.append('pread %r %r' % (os.pread(fd, 8, 4998), os.pread(fd, 7, 0)))
    os.pwrite(fd, b'PAST', 20000)               # a hole, then bytes
    out.append('fstat %d' % os.fstat(fd).st_size)
    os.close(fd)
    out.append('pwrite %d %s' % (os.path.getsize(p), digest(p)))
    fd = os.open(p, os.O_RDWR)
    os.ftruncate(fd, 7777)                      # shorter
    out.append('ftruncate %d' % os.fstat(fd).st_size)
    os.write(fd, b'after-truncate')             # at offset 0
    os.close(fd)
    out.append('truncated %d %s' % (os.path.getsize(p), digest(p)))
    os.truncate(p, 12345)                       # longer, by name
    out.append('grown %d %s' % (os.path.getsize(p), digest(p)))
    os.truncate(p, 0)
    out.append('emptied %d' % os.path.getsize(p))
    fd = os.open(p, os.O_WRONLY | os.O_APPEND)
    os.write(fd, b'again')
    os.fsync(fd)
    os.close(fd)
    out.append('refilled %s' % open(p, 'rb').read())
    # a new file written out of order (as a linker does), fsynced
    q = os.path.join(d, 'g')
    fd = os.open(q, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
    os.pwrite(fd, b'B' * 3000, 4096)
    os.pwrite(fd, b'A' * 4096, 0)
    os.fdatasync(fd)
    os.close(fd)
    out.append('linker %d %s' % (os.path.getsize(q), digest(q)))
    # O_CREAT without O_TRUNC of a file that is there keeps it
    fd = os.open(q, os.O_CREAT | os.O_WRONLY | os.O_APPEND, 0o644)
    os.write(fd, b'C')
    os.close(fd)
    out.append('creat-append %d %s' % (os.path.getsize(q), digest(q)))
    # shell redirections
    os.system('cd "%s" && echo one > s && echo two >> s && echo three >> s'
              % d)
    out.append('shell %r' % open(os.path.join(d, 's'), 'rb').read())
    print('\n'.join(out))


REC = 100  # bytes per appended record


def record(i):
    head = b'%08d ' % i
    return head + bytes([65 + i % 26]) * (REC - len(head) - 1) + b'\n'


BLOCK = 8192


def stress(d, seconds):
    stop = time.monotonic() + seconds
    bad = []
    counts = {'reads': 0, 'appends': 0, 'rewrites': 0, 'mixed': 0}
    seen = {'app': set(), 'inplace': set(), 'mixed': set()}
    lock = threading.Lock()
    app, inplace, mixed = (os.path.join(d, n)
                           for n in ('app.log', 'inplace.bin', 'mixed.bin'))
    with open(app, 'wb') as f:
        f.write(b''.join(record(i) for i in range(50)))
    with open(inplace, 'wb') as f:
        f.write(bytes([0]) * BLOCK * 16)
    with open(mixed, 'wb') as f:
        f.write(bytes([0]) * BLOCK * 4)

    def appender():
        n = 50
        while time.monotonic() < stop:
            fd = os.open(app, os.O_WRONLY | os.O_APPEND)
            for _ in range(3):        # a version: 3 records, 3 writes
                os.write(fd, record(n))
                n += 1
            os.close(fd)
            with lock:
                counts['appends'] += 1

    def rewriter():
        g = 0
        while time.monotonic() < stop:
            g = g % 250 + 1
            nblocks = 8 + g % 12      # shrinks and grows too
            fd = os.open(inplace, os.O_RDWR)
            os.ftruncate(fd, nblocks * BLOCK)
            for b in reversed(range(nblocks)):  # one block at a time
                os.pwrite(fd, bytes([g]) * BLOCK, b * BLOCK)
            os.close(fd)
            with lock:
                counts['rewrites'] += 1

    def mixer():
        g = 0
        while time.monotonic() < stop:
            g = g % 250 + 1
            fd = os.open(mixed, os.O_RDWR)
            size = os.fstat(fd).st_size
            os.pwrite(fd, bytes([g]) * BLOCK, 0)
            os.lseek(fd, 0, os.SEEK_END)
            if size < 12 * BLOCK:
                os.write(fd, bytes([g]) * BLOCK)  # an append
            for b in range(1, size // BLOCK + 1):
                os.pwrite(fd, bytes([g]) * BLOCK, b * BLOCK)
            if size >= 12 * BLOCK:
                os.ftruncate(fd, 4 * BLOCK)
            os.close(fd)
            with lock:
                counts['mixed'] += 1

    def check(name, data):
        if name == 'app':
            if len(data) % REC:
                return 'torn append: %d bytes' % len(data)
            for i in range(len(data) // REC):
                if data[i * REC:(i + 1) * REC] != record(i):
                    return 'record %d wrong' % i
            return None
        if not data or len(data) % BLOCK:
            return '%s: %d bytes' % (name, len(data))
        if data.count(data[0]) != len(data):
            return '%s: a mix of versions (%s)' % (
                name, sorted(set(data[::BLOCK])))
        return None

    def reader():
        while time.monotonic() < stop:
            for name, path in (('app', app), ('inplace', inplace),
                               ('mixed', mixed)):
                with open(path, 'rb') as f:
                    data = f.read()
                why = check(name, data)
                with lock:
                    counts['reads'] += 1
                    seen[name].add(len(data) if name == 'app' else
                                   (data[0] if data else -1, len(data)))
                    if why:
                        bad.append(why)

    errors = []

    def guard(t):
        def run():
            try:
                t()
            except Exception as e:  # noqa: BLE001: reported below
                errors.append('%s: %r' % (t.__name__, e))
        return run
    threads = [threading.Thread(target=guard(t)) for t in
               (appender, rewriter, mixer, reader, reader)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # and once they are all closed: the last versions, whole
    for name, path in (('app', app), ('inplace', inplace), ('mixed', mixed)):
        why = check(name, open(path, 'rb').read())
        if why:
            bad.append('at the end: ' + why)
    print('reads %d appends %d rewrites %d mixed %d versions seen: '
          'app %d inplace %d mixed %d' % (
              counts['reads'], counts['appends'], counts['rewrites'],
              counts['mixed'], len(seen['app']), len(seen['inplace']),
              len(seen['mixed'])))
    for e in errors + bad[:10]:
        print('BAD', e)
    ok = (not errors and not bad and counts['reads'] > 10 and
          counts['appends'] > 2 and counts['rewrites'] > 2 and
          counts['mixed'] > 2 and min(len(v) for v in seen.values()) > 1)
    return 0 if ok else 1


def truncstat(d, rounds):
    """a reader's release comes after its close(): truncate(2) by name may
    meet a node readers still hold, and must still show its new size"""
    p = os.path.join(d, 'ts')
    with open(p, 'wb') as f:
        f.write(b'x' * 7777)
    bad = 0
    for i in range(rounds):
        size = 12345 if i % 2 else 7777 - i % 3
        digest(p)
        os.truncate(p, size)
        got = os.path.getsize(p)
        if got != size:
            bad += 1
    print('truncstat: %d of %d rounds stat another size' % (bad, rounds))
    return 1 if bad else 0


if __name__ == '__main__':
    if sys.argv[1] == 'ops':
        ops(sys.argv[2])
    elif sys.argv[1] == 'stress':
        sys.exit(stress(sys.argv[2], float(sys.argv[3])))
    elif sys.argv[1] == 'truncstat':
        sys.exit(truncstat(sys.argv[2], int(sys.argv[3])))
    else:
        sys.exit(__doc__)
