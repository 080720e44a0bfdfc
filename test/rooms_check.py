#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Check that the source tree keeps its rooms (issue 17).

usage: rooms_check.py [--root DIR] [--build DIR] [FOLDER...]

For each folder (default: store store/origin netd fs cli):
  - no .c or .h file over MAX_LINES lines;
  - no function body over MAX_FUNC lines unless a comment ends on the
    line just above its definition (the reason for its length);
  - no circle of calls between the folder's files: the file-level graph is
    built from `nm` of the folder's objects under the build directory, an
    edge a.o -> b.o for every symbol a.o uses and b.o defines;
and netd/worker.c names no protocol (outside comments): the worker reaches
protocols only through their ops tables.

Prints one line per finding and exits 1 if there is any, 0 otherwise.
"""

import argparse
import os
import re
import subprocess
import sys

MAX_LINES = 1000
MAX_FUNC = 100
DEFAULT_FOLDERS = ["store", "store/origin", "netd", "fs", "cli"]
# names of protocols, as they would appear in code that knows them
PROTOCOL_WORDS = re.compile(r"\b(mc_\w+|memcache\w*|http\w*|resp_\w+|"
                            r"mcp_\w+|MC_\w+|HTTP_\w+)\b")


def strip_comments(text):
    """text with C comments and string literals blanked (newlines kept)"""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + re.sub(r"[^\n]", " ", text[i + 1:j]) + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def long_functions(path):
    """(name, first line, length) of functions over MAX_FUNC lines with no
    comment just above them.  House style: a definition's body opens with
    '{' in column 0 and closes with '}' in column 0."""
    with open(path, errors="replace") as f:
        lines = f.read().split("\n")
    found = []
    i = 0
    while i < len(lines):
        if lines[i] != "{":
            i += 1
            continue
        start = i
        j = i + 1
        while j < len(lines) and not lines[j].startswith("}"):
            j += 1
        # the signature: back to the first line after a blank line, a
        # comment's end, a preprocessor line or a ';'/'}' line
        s = start - 1
        while s > 0 and lines[s - 1].strip() and \
                not lines[s - 1].rstrip().endswith(("*/", ";", "}")) and \
                not lines[s - 1].startswith("#"):
            s -= 1
        sig = " ".join(lines[s:start])
        m = re.search(r"(\w+)\s*\(", sig)
        body = j - start - 1
        commented = s > 0 and lines[s - 1].rstrip().endswith("*/")
        if m and "=" not in sig.split("(")[0] and body > MAX_FUNC and \
                not commented:
            found.append((m.group(1), s + 1, body))
        i = j + 1
    return found


def nm_symbols(obj):
    """(defined, undefined) global symbol sets of an object file"""
    out = subprocess.run(["nm", "-g", obj], capture_output=True,
                         text=True, check=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "U":
            undefined.add(parts[1])
        elif len(parts) == 3 and parts[1] not in "Uw":
            defined.add(parts[2])
    return defined, undefined


def cycles(graph):
    """strongly connected components of more than one node (Tarjan)"""
    index, low, stack, on, sccs = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            scc = []
            while True:
                w = stack.pop()
                on.discard(w)
                scc.append(w)
                if w == v:
                    break
            if len(scc) > 1:
                sccs.append(sorted(scc))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sccs


def check_folder(root, build, folder):
    problems = []
    src = os.path.join(root, folder)
    if not os.path.isdir(src):
        return problems
    names = sorted(n for n in os.listdir(src) if n.endswith((".c", ".h")))
    for n in names:
        p = os.path.join(src, n)
        with open(p, errors="replace") as f:
            count = f.read().count("\n")
        if count > MAX_LINES:
            problems.append("%s/%s: %d lines (more than %d)"
                            % (folder, n, count, MAX_LINES))
        if n.endswith(".c"):
            for name, line, body in long_functions(p):
                problems.append("%s/%s:%d: %s() is %d lines with no "
                                "comment above it saying why"
                                % (folder, n, line, name, body))
    objs = [n[:-2] + ".o" for n in names if n.endswith(".c")]
    objs = [o for o in objs if os.path.exists(os.path.join(build, folder, o))]
    missing = [n for n in names if n.endswith(".c")
               and n[:-2] + ".o" not in objs]
    if missing:
        problems.append("%s: not built, cannot check calls: %s (run make)"
                        % (folder, " ".join(missing)))
    syms = {o: nm_symbols(os.path.join(build, folder, o)) for o in objs}
    graph = {o: set() for o in objs}
    for a in objs:
        for b in objs:
            if a != b and syms[a][1] & syms[b][0]:
                graph[a].add(b)
    for scc in cycles(graph):
        detail = []
        for a in scc:
            for b in sorted(graph[a] & set(scc)):
                detail.append("%s->%s (%s)" % (a[:-2], b[:-2], ", ".join(
                    sorted(syms[a][1] & syms[b][0])[:3])))
        problems.append("%s: files call each other in a circle: %s"
                        % (folder, "; ".join(detail)))
    return problems


def check_worker(root):
    p = os.path.join(root, "netd", "worker.c")
    if not os.path.exists(p):
        return []
    with open(p, errors="replace") as f:
        code = strip_comments(f.read())
    problems = []
    for no, line in enumerate(code.split("\n"), 1):
        m = PROTOCOL_WORDS.search(line)
        if m:
            problems.append("netd/worker.c:%d: names a protocol: %s"
                            % (no, m.group(0)))
    return problems


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default=".")
    ap.add_argument("--build", default=None)
    ap.add_argument("folders", nargs="*")
    a = ap.parse_args()
    build = a.build or os.path.join(a.root, "build")
    problems = []
    folders = a.folders or DEFAULT_FOLDERS
    for folder in folders:
        problems += check_folder(a.root, build, folder)
    if "netd" in folders:
        problems += check_worker(a.root)
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
