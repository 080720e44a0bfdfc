#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Checks Prometheus text exposition (format 0.0.4) on standard input.

What promtool's `check metrics` checks and a little more, for machines
without it: every family has one HELP and one TYPE line before its first
sample, its samples are together, names and labels are well formed, values
are numbers, counters end in _total, a histogram's buckets are cumulative
with ascending `le` ending in +Inf, and its _count equals the +Inf bucket.
Exits 1 with one line per problem, 0 when there is none.
"""
import math
import re
import sys

NAME = re.compile(r'[a-zA-Z_:][a-zA-Z0-9_:]*$')
LABEL = re.compile(r'[a-zA-Z_][a-zA-Z0-9_]*$')
TYPES = {'counter', 'gauge', 'histogram', 'summary', 'untyped'}
SUFFIXES = {'histogram': ('_bucket', '_sum', '_count'),
            'summary': ('_sum', '_count')}


def parse_value(s):
    if s in ('+Inf', 'Inf'):
        return math.inf
    if s == '-Inf':
        return -math.inf
    if s == 'NaN':
        return math.nan
    return float(s)		# ValueError on anything else


def parse_labels(s, problem):
    """'{a="x",b="y"}' -> dict; the text must be consumed exactly."""
    labels, i = {}, 1
    while i < len(s) and s[i] != '}':
        m = re.match(r'\s*([^=\s]+)\s*=\s*"', s[i:])
        if not m:
            problem('bad label list %r' % s)
            return labels
        name, i = m.group(1), i + m.end()
        if not LABEL.match(name):
            problem('bad label name %r' % name)
        val = []
        while i < len(s) and s[i] != '"':
            if s[i] == '\\':
                if i + 1 >= len(s) or s[i + 1] not in '\\"n':
                    problem('bad escape in label %r' % name)
                i += 1
            val.append(s[i] if i < len(s) else '')
            i += 1
        if i >= len(s):
            problem('unterminated label value in %r' % s)
            return labels
        if name in labels:
            problem('label %r twice' % name)
        labels[name] = ''.join(val)
        i += 1
        m = re.match(r'\s*,?\s*', s[i:])
        i += m.end()
    if s[i:] != '}':
        problem('text after the labels in %r' % s)
    return labels


def check(text):
    problems = []
    help_, type_, seen, done = {}, {}, set(), set()
    hist = {}		# family -> {'le': [(le, v)], 'count': v}
    current = None

    def problem(msg):
        problems.append('line %d: %s' % (lineno, msg))

    def family_of(name):
        for fam, t in type_.items():
            for suf in SUFFIXES.get(t, ()):
                if name == fam + suf:
                    return fam, suf
        return name, ''

    lineno = 0
    for lineno, line in enumerate(text.split('\n'), 1):
        if not line.strip():
            continue
        if line.startswith('#'):
            parts = line.split(None, 3)
            if len(parts) >= 3 and parts[1] in ('HELP', 'TYPE'):
                kind, name = parts[1], parts[2]
                rest = parts[3] if len(parts) > 3 else ''
                if not NAME.match(name):
                    problem('bad metric name %r' % name)
                table = help_ if kind == 'HELP' else type_
                if name in table:
                    problem('second %s for %s' % (kind, name))
                if name in seen:
                    problem('%s for %s after its samples' % (kind, name))
                if kind == 'TYPE' and rest not in TYPES:
                    problem('unknown type %r for %s' % (rest, name))
                if kind == 'HELP' and not rest.strip():
                    problem('empty HELP for %s' % name)
                table[name] = rest
            continue
        m = re.match(r'([^\s{]+)(\{[^}]*\})?\s+(\S+)(\s+-?\d+)?\s*$', line)
        if not m:
            problem('not a sample: %r' % line)
            continue
        name, labels, value = m.group(1), m.group(2) or '', m.group(3)
        if not NAME.match(name):
            problem('bad metric name %r' % name)
        lab = parse_labels(labels, problem) if labels else {}
        try:
            v = parse_value(value)
        except ValueError:
            problem('bad value %r for %s' % (value, name))
            continue
        fam, suf = family_of(name)
        if fam not in type_:
            problem('sample of %s before (or without) its TYPE' % fam)
        if fam not in help_:
            problem('sample of %s before (or without) its HELP' % fam)
        if fam != current:
            if fam in done:
                problem('samples of %s are not together' % fam)
            if current:
                done.add(current)
            current = fam
        key = (name, tuple(sorted(lab.items())))
        if key in seen:
            problem('series %s%s twice' % (name, labels))
        seen.add(key)
        seen.add(fam)
        t = type_.get(fam)
        if t == 'counter':
            if not fam.endswith('_total'):
                problem('counter %s does not end in _total' % fam)
            if v < 0:
                problem('counter %s is negative' % fam)
        if t == 'histogram':
            h = hist.setdefault(fam, {'le': [], 'count': None, 'sum': None})
            if suf == '_bucket':
                if 'le' not in lab:
                    problem('bucket of %s without le' % fam)
                    continue
                try:
                    h['le'].append((parse_value(lab['le']), v))
                except ValueError:
                    problem('bad le %r in %s' % (lab['le'], fam))
            elif suf == '_count':
                h['count'] = v
            elif suf == '_sum':
                h['sum'] = v
            else:
                problem('histogram %s has a bare sample' % fam)
    for fam, h in hist.items():
        les = [le for le, _ in h['le']]
        vals = [v for _, v in h['le']]
        if not les or les[-1] != math.inf:
            problems.append('%s: no +Inf bucket last' % fam)
        if les != sorted(les) or len(set(les)) != len(les):
            problems.append('%s: le not ascending' % fam)
        if vals != sorted(vals):
            problems.append('%s: buckets not cumulative' % fam)
        if h['count'] is None or h['sum'] is None:
            problems.append('%s: no _count or no _sum' % fam)
        elif vals and h['count'] != vals[-1]:
            problems.append('%s: _count %g != +Inf bucket %g'
                            % (fam, h['count'], vals[-1]))
    for fam in set(type_) | set(help_):
        if fam not in seen:
            problems.append('%s: declared but no sample' % fam)
    return problems


def main():
    problems = check(sys.stdin.read())
    for p in problems:
        print('prom_check: ' + p)
    sys.exit(1 if problems else 0)


if __name__ == '__main__':
    main()
