# SPDX-License-Identifier: BSD-3-Clause
"""What the busy-poll tests of 54-goblind-http.bats share: the state of
goblind's one worker thread, and reading a whole answer's bytes."""
import glob


def worker_state(pid):
    """A function that returns goblind-w0's state letter (R, S, ...)."""
    task = [t for t in glob.glob("/proc/%s/task/*" % pid)
            if open(t + "/comm").read().strip() == "goblind-w0"][0]

    def state():
        return open(task + "/stat").read().rsplit(")", 1)[1].split()[0]
    return state


def recv_exactly(s, n):
    """Read @n bytes off socket @s, 1 MiB at most at a time."""
    while n > 0:
        k = len(s.recv(min(n, 1 << 20)))
        assert k, "closed early"
        n -= k
