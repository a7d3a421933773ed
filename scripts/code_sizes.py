#!/usr/bin/env python3
"""Functions over 100 lines and classes over 400 in the host's and plugins' sources (issue 41).

    scripts/code_sizes.py [--all] [DIR ...]      (default: core/src plugins)

Reads each definition's first and last line from Universal Ctags (`ctags --output-format=json
--fields=+ne`): functions and methods (a lambda counts in the function around it), classes and
structs (their body, methods defined inside included). Prints each one over its limit, longest
first, and exits 1 where one is not among KNOWN below, or where a KNOWN one is back within its
limit (then it is to be struck from the list: the list only shrinks). --all prints every one
over half its limit too."""
import json
import os
import re
import subprocess
import sys

FUNCTION_LIMIT = 100
CLASS_LIMIT = 400
SOURCES = (".cpp", ".hpp", ".h", ".c", ".cu", ".inc")

# Over their limit for now, as "path:name", each to be taken apart, with the reason; none since
# 2026-11-29 (issue 41 took the last 20 apart). Only shrinks.
KNOWN = set()


def definitions(dirs):
    files = [os.path.join(d, n) for top in dirs for d, _, names in os.walk(top) for n in sorted(names) if n.endswith(SOURCES)]
    out = subprocess.run(["ctags", "--output-format=json", "--fields=+neKZ", "--kinds-C++=+fpcs", "--kinds-C=+fs",
                          "--map-C++=+.cu", "--map-C++=+.inc", "--map-C++=+.h", "-o", "-", *files],
                         check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        tag = json.loads(line)
        if tag.get("_type") != "tag" or "end" not in tag:
            continue
        kind = tag.get("kind")
        if kind in ("function",) and tag.get("scopeKind") not in ("function",) and not tag["name"].startswith("__anon"):
            yield "function", tag["path"], tag.get("scope", ""), tag["name"], tag["line"], tag["end"]
        elif kind in ("class", "struct") and not tag["name"].startswith("__anon"):
            yield "class", tag["path"], tag.get("scope", ""), tag["name"], tag["line"], tag["end"]


def main(argv):
    show_all = "--all" in argv
    dirs = [a for a in argv if not a.startswith("--")] or ["core/src", "plugins"]
    over, near = [], []
    for what, path, scope, name, first, last in definitions(dirs):
        lines = last - first + 1
        limit = FUNCTION_LIMIT if what == "function" else CLASS_LIMIT
        full = re.sub(r"__anon[0-9a-f]+", "(anon)", f"{scope}::{name}" if scope else name)
        entry = (lines, what, path, full, first)
        if lines > limit:
            over.append(entry)
        elif lines > limit // 2:
            near.append(entry)
    over.sort(reverse=True)
    keys = {f"{path}:{name}" for _, _, path, name, _ in over}
    for lines, what, path, name, first in over:
        mark = "" if f"{path}:{name}" in KNOWN else "  NEW"
        print(f"{lines:5d} lines  {what:8s} {path}:{first}  {name}{mark}")
    if show_all:
        for lines, what, path, name, first in sorted(near, reverse=True):
            print(f"{lines:5d} lines  {what:8s} {path}:{first}  {name}  (within its limit)")
    new = sorted(keys - KNOWN)
    gone = sorted(KNOWN - keys)
    for k in gone:
        print(f"within its limit now, strike it from KNOWN: {k}")
    print(f"{len(over)} over the limits ({FUNCTION_LIMIT} lines a function, {CLASS_LIMIT} a class), {len(new)} not among the known")
    return 1 if new or gone else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
