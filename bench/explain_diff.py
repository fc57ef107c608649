#!/usr/bin/env python3
"""Compares two `spade-bench explain` dumps (e.g. before and after a planner refactor).

usage: bench/explain_diff.py OLD.txt NEW.txt [--context N]   (either may be gzipped: .gz)

A dump is a run of blocks: a `=== matrix ...` line opens a matrix, a `--- product ...` line
opens one plan under it, and the lines up to the next header are that plan's explain() text.
Lines before the first matrix (the command, device and commit lines) are not compared. Blocks
are matched by (matrix line, product line); the report lists every block whose text differs
(as a unified diff), every block found in one dump only, and ends with one summary line:
"explain_diff: 0 differences over B blocks" or "explain_diff: D differences over B blocks".

Exit status: 0 no differences, 1 differences, 2 a file unreadable or holding no block.
"""

import difflib
import gzip
import sys


def blocks(path):
    """Ordered {(matrix line, product line): [text lines]} of one dump."""
    out = {}
    matrix = None
    key = None
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8", errors="replace") as f:
        for raw in f:
            line = raw.rstrip("\n")
            if line.startswith("=== "):
                matrix, key = line, None
            elif line.startswith("--- ") and matrix is not None:
                key = (matrix, line)
                if key in out:  # a repeated header is a malformed dump; keep both texts apart
                    key = (matrix, line + f" (repeat {sum(k[1].startswith(line) for k in out)})")
                out[key] = []
            elif key is not None:
                out[key].append(line)
    return out


def main(argv):
    args = [a for a in argv if not a.startswith("--")]
    context = 3
    if "--context" in argv:
        at = argv.index("--context")
        if at + 1 >= len(argv):
            print("explain_diff: --context needs a number", file=sys.stderr)
            return 2
        context = int(argv[at + 1])
        args = [a for a in args if a != argv[at + 1]]
    if len(args) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    try:
        old, new = blocks(args[0]), blocks(args[1])
    except OSError as e:
        print(f"explain_diff: {e}", file=sys.stderr)
        return 2
    for path, b in ((args[0], old), (args[1], new)):
        if not b:
            print(f"explain_diff: {path} holds no '=== matrix' / '--- product' block",
                  file=sys.stderr)
            return 2
    differences = 0
    for key in old:
        if key not in new:
            differences += 1
            print(f"ONLY IN OLD  {key[0][4:]} :: {key[1][4:]}")
        elif old[key] != new[key]:
            differences += 1
            print(f"DIFFERS      {key[0][4:]} :: {key[1][4:]}")
            for line in difflib.unified_diff(old[key], new[key], "old", "new", n=context,
                                             lineterm=""):
                print("    " + line)
    for key in new:
        if key not in old:
            differences += 1
            print(f"ONLY IN NEW  {key[0][4:]} :: {key[1][4:]}")
    total = len(set(old) | set(new))
    print(f"explain_diff: {differences} differences over {total} blocks")
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
