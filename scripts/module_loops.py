#!/usr/bin/env python3
"""Include loops between the modules of core/src (foo.hpp and foo.cpp are one module "foo").

    scripts/module_loops.py [SRC_DIR]

Prints every loop (a strongly connected set of modules, each reaching the others through
#include "..."), and exits 1 where one is not among KNOWN below, or where a KNOWN one is gone
(then it is to be struck from the list: the list only shrinks). A header that includes a header
that includes it back is a loop of its own, always an error."""
import collections
import os
import re
import sys

# Loops tolerated for now, each as its sorted modules: none since 2026-11-29 (issue 41 took the
# last five apart). A loop may be listed here only with the reason, and leaves the list by going.
KNOWN = []

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def graph(root):
    files = {}
    for d, _, names in os.walk(root):
        for n in names:
            if n.endswith((".hpp", ".cpp", ".h")):
                p = os.path.relpath(os.path.join(d, n), root)
                with open(os.path.join(d, n), encoding="utf-8", errors="replace") as f:
                    files[p] = INCLUDE.findall(f.read())

    def resolve(frm, name):
        for cand in (os.path.normpath(os.path.join(os.path.dirname(frm), name)), name):
            if cand in files:
                return cand
        return None

    modules, headers = collections.defaultdict(set), collections.defaultdict(set)
    for f, incs in files.items():
        for i in incs:
            r = resolve(f, i)
            if not r:
                continue
            if os.path.splitext(r)[0] != os.path.splitext(f)[0]:
                modules[os.path.splitext(f)[0]].add(os.path.splitext(r)[0])
            if f.endswith((".hpp", ".h")):
                headers[f].add(r)
    return modules, headers


def loops(g):
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]
    sys.setrecursionlimit(100000)

    def visit(n):
        index[n] = low[n] = counter[0]
        counter[0] += 1
        stack.append(n)
        on.add(n)
        for m in sorted(g.get(n, ())):
            if m not in index:
                visit(m)
                low[n] = min(low[n], low[m])
            elif m in on:
                low[n] = min(low[n], index[m])
        if low[n] == index[n]:
            comp = []
            while True:
                m = stack.pop()
                on.discard(m)
                comp.append(m)
                if m == n:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for n in sorted(g):
        if n not in index:
            visit(n)
    return sorted(out)


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "core", "src")
    modules, headers = graph(root)
    ok = True
    for loop in loops(headers):
        print("header loop (always an error): " + " -> ".join(loop))
        ok = False
    found = loops(modules)
    for loop in found:
        known = loop in KNOWN
        print(("known module loop: " if known else "NEW module loop: ") + ", ".join(loop))
        ok = ok and known
    for loop in KNOWN:
        if loop not in found:
            print("gone, strike it from KNOWN in scripts/module_loops.py: " + ", ".join(loop))
            ok = False
    print(f"{len(found)} module loop(s) in {root}" + ("" if ok else ": FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
