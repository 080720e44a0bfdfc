# SPDX-License-Identifier: BSD-3-Clause
"""What the conformance runs against a reference server share
(mc_conformance.py against memcached, resp_conformance.py against
redis-server): judging a case's two replies against the listed
differences, and the table of results under bench/results/."""


def matches(want, got):
    """@want is the bytes goblind must give, or a compiled pattern."""
    if isinstance(want, bytes):
        return want == got
    return want.fullmatch(got) is not None


def esc(b, limit=160):
    t = repr(b)[2:-1].replace("|", "\\|")
    return t if len(t) <= limit else t[:limit] + "..."


def judge(name, data, got, ref, diffs, peer):
    """Case @name: goblind gave @got, the reference @ref.  A case not in
    @diffs must give the same; a listed one must differ, as listed.
    Prints a mismatch; returns (ok, why, listed)."""
    d = diffs.get(name)
    if d is None:
        ok = got == ref
        why = "" if ok else "NEW DIFFERENCE"
    else:
        ok = got != ref and matches(d[0], got)
        why = d[1] if ok else ("listed difference gone" if got == ref else
                               "goblind's reply is not the listed one")
    if not ok:
        print("MISMATCH %s: %s\n  input    %r\n  goblind  %r\n"
              "  %-8s %r" % (name, why, data, got, peer, ref))
    return ok, why, d is not None


def write_table(path, rows, peer):
    """rows: (family, case, input, reference's reply, goblind's, listed,
    why); @peer heads the reference's column."""
    with open(path, "w") as f:
        f.write("| family | case | input | %s | goblind | "
                "differs because |\n|---|---|---|---|---|---|\n" % peer)
        for fam, name, data, ref, got, differs, why in rows:
            f.write("| %s | %s | `%s` | `%s` | %s | %s |\n" % (
                fam, name, esc(data, 80), esc(ref),
                "`%s`" % esc(got) if differs else "same", why if differs
                else ""))
