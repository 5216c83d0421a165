#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The layering check: the folders of daemon/ are layers, and includes only go down.

Each .c/.h file under common/, daemon/ and client/ is a node; a module is a file's folder plus its
name without extension (x.c and x.h are one module). The check fails on:
  - an include that goes up a layer, or across two sibling layers that must stay independent;
  - any include cycle between modules (x.c includes y.h while y.c includes x.h, or longer);
  - any circle of calls between the modules of one folder: x.c uses a function that y.c defines
    while y.c (or a module it uses) uses one of x.c's, whatever header declares them (a private
    header shared by several files hides such a circle from the include check). Each circle is
    named with the functions that close it. A file that defines the same function as another
    (x-fallback.c, built instead of x.c) does not use it.
A file's length is not checked: a file holds one job, named in its opening comment, whatever its
length (STYLE.md 15); a line count made files be split, and comments shortened, to fit it.
Problems listed in known-debt.txt (next to this script) are reported but do not fail the check, so
that the list can only shrink: an entry that no longer occurs fails the check until it is removed.
Usage: check-layers.py SOURCE_ROOT
"""
import os
import re
import sys

# Rank of each layer: a file may include its own layer and any layer of lower rank. Layers of
# equal rank are siblings and must not include each other (upstream knows nothing of agents,
# downstream nothing of servers).
RANK = {
    'common': 0,
    'daemon/sys': 1,
    'daemon/config': 2,
    'daemon/upstream': 3,
    'daemon/downstream': 3,
    'daemon/core': 4,
    'daemon/methods': 5,
    'daemon': 6,  # daemon.c and main.c: the top
    'client': 7,
}

# Files of client/ that are libmcpc itself: a library for agents, it must not link the daemon.
LIBRARY_ONLY_COMMON = {'client/mcpc.c', 'client/include/mcpc.h', 'client/mcpc-modern.c',
                       'client/mcpc-modern.h', 'client/mcpc-private.c', 'client/mcpc-private.h'}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
# Comments, strings and character constants, blanked before looking for names.
NOT_CODE = re.compile(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
# A function defined with external linkage: its name and parameters at the start of a line, then
# its body (STYLE.md puts the brace of a function on a line of its own).
DEFINITION = re.compile(r'^(?!static\b)(?!typedef\b)[A-Za-z_][\w \t*]*?\b([A-Za-z_]\w*)\s*\([^;{}]*\)\s*\{',
                        re.M)
NAME = re.compile(r'\b[A-Za-z_]\w*\b')


def layer_of(path):
    d = os.path.dirname(path)
    if d.startswith('client'):
        return 'client'
    return d


def module_of(path):
    return os.path.splitext(path)[0]


def strongly_connected(edges):
    """The groups of nodes that reach each other (Tarjan), each of more than one node."""
    index, low, stack, on_stack, groups = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return groups


def call_circles(root, files):
    """Circles of calls between the modules of one folder, with the functions that make them."""
    code, defined = {}, {}
    for f in files:
        if not f.endswith('.c'):
            continue
        code[f] = NOT_CODE.sub(' ', open(os.path.join(root, f), encoding='utf-8',
                                         errors='replace').read())
        for name in DEFINITION.findall(code[f]):
            defined.setdefault(name, set()).add(f)
    edges, uses = {}, {}
    for f, text in code.items():
        own = {n for n, where in defined.items() if f in where}
        for name in set(NAME.findall(text)) - own:
            for g in defined.get(name, ()):
                a, b = module_of(f), module_of(g)
                if a != b and os.path.dirname(f) == os.path.dirname(g):
                    edges.setdefault(a, set()).add(b)
                    uses.setdefault((a, b), set()).add(name)
    problems = []
    for group in strongly_connected(edges):
        folder = os.path.dirname(group[0])
        names = ', '.join(os.path.basename(m) for m in group)
        detail = '; '.join('%s uses %s of %s' % (os.path.basename(a), ' '.join(sorted(uses[a, b])),
                                                 os.path.basename(b))
                           for a in group for b in group if (a, b) in uses)
        problems.append(('call circle in %s: %s' % (folder, names), detail))
    return problems


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else '.'
    files = []
    for top in ('common', 'daemon', 'client'):
        for dirpath, _, names in os.walk(os.path.join(root, top)):
            for n in names:
                if n.endswith(('.c', '.h')):
                    files.append(os.path.relpath(os.path.join(dirpath, n), root))
    known = set(files)
    errors = []
    edges = {}
    for f in sorted(files):
        text = open(os.path.join(root, f), encoding='utf-8', errors='replace').read()
        lf = layer_of(f)
        for inc in INCLUDE.findall(text):
            target = inc
            if target not in known:
                # a header next to the file (e.g. "mcpc.h" through include/)
                local = os.path.normpath(os.path.join(os.path.dirname(f), inc))
                if local in known:
                    target = local
                elif os.path.join('client/include', inc) in known:
                    target = os.path.join('client/include', inc)
                else:
                    continue  # a system or generated header
            lt = layer_of(target)
            if lf not in RANK or lt not in RANK:
                errors.append('%s: unknown layer for %s or %s' % (f, lf, lt))
                continue
            if f in LIBRARY_ONLY_COMMON and lt not in ('common', 'client'):
                errors.append('%s includes %s: libmcpc uses common/ only' % (f, target))
            if RANK[lt] > RANK[lf]:
                errors.append('%s includes %s: %s is above %s' % (f, target, lt, lf))
            elif RANK[lt] == RANK[lf] and lt != lf:
                errors.append('%s includes %s: %s and %s are siblings and stay independent' %
                              (f, target, lf, lt))
            a, b = module_of(f), module_of(target)
            if a != b:
                edges.setdefault(a, set()).add(b)
    # Cycles between modules: depth-first search with colours.
    colour = {}
    stack = []

    def visit(n):
        colour[n] = 1
        stack.append(n)
        for m in sorted(edges.get(n, ())):
            if colour.get(m, 0) == 1:
                cyc = stack[stack.index(m):] + [m]
                errors.append('include cycle: ' + ' -> '.join(cyc))
            elif colour.get(m, 0) == 0:
                visit(m)
        stack.pop()
        colour[n] = 2

    sys.setrecursionlimit(10000)
    for n in sorted(edges):
        if colour.get(n, 0) == 0:
            visit(n)
    circles = call_circles(root, files)
    errors += [name for name, _ in circles]
    details = dict(circles)
    debt_path = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'known-debt.txt')
    debt = set()
    if os.path.exists(debt_path):
        for line in open(debt_path, encoding='utf-8'):
            line = line.strip()
            if line and not line.startswith('#'):
                debt.add(line)
    failed = 0
    for e in errors:
        if e in debt:
            print('known debt: ' + e)
        else:
            print('FAIL: ' + e)
            failed += 1
        if e in details:
            print('    (' + details[e] + ')')
    for d in sorted(debt - set(errors)):
        print('FAIL: fixed, remove it from known-debt.txt: ' + d)
        failed += 1
    print('%d files, %d problems, %d failing' % (len(files), len(errors), failed))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
