#!/usr/bin/env python3
"""Compares two `spade-bench explain` dumps (e.g. before and after a planner refactor).

usage: bench/explain_diff.py OLD.txt NEW.txt [--context N] [--chosen]   (either may be .gz)

A dump is a run of blocks: a `=== matrix ...` line opens a matrix, a `--- product ...` line
opens one plan under it, and the lines up to the next header are that plan's explain() text.
Lines before the first matrix (the command, device and commit lines) are not compared. Blocks
are matched by (matrix line, product line); the report lists every block whose text differs
(as a unified diff), every block found in one dump only, and ends with one summary line:
"explain_diff: 0 differences over B blocks" or "explain_diff: D differences over B blocks".

With --chosen, only the kernels each block names as chosen are compared, and blocks that
either dump skipped ("skipped: ..." as their first line) are left out: a device's dump against
spade-explain-preview's (a device profile on a machine without the device), whose facts text
may differ where the device computes more (hash_spgemm's bins). It ends with
"explain_diff: D differences in the chosen kernels over B blocks compared (S skipped, F of
the compared identical in full text)".

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


def chosen(text):
    """The kernels a block's lines name as chosen, in order."""
    return [line.split("chosen: ", 1)[1].split(" ")[0] for line in text if "chosen: " in line]


def skipped(text):
    return bool(text) and text[0].startswith("skipped")


def compare_chosen(old, new):
    differences = compared = skipped_count = identical = 0
    for key in old:
        if key not in new or skipped(old[key]) or skipped(new[key]):
            skipped_count += 1
            continue
        compared += 1
        a = [line for line in old[key] if not line.startswith("previewed for ")]
        b = [line for line in new[key] if not line.startswith("previewed for ")]
        identical += a == b
        if chosen(a) != chosen(b):
            differences += 1
            print(f"CHOSEN DIFFERS  {key[0][4:]} :: {key[1][4:]}: {chosen(a)} vs {chosen(b)}")
    skipped_count += sum(1 for key in new if key not in old)
    print(f"explain_diff: {differences} differences in the chosen kernels over {compared} blocks "
          f"compared ({skipped_count} skipped, {identical} of the compared identical in full "
          f"text)")
    return 1 if differences else 0


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
    if "--chosen" in argv:
        return compare_chosen(old, new)
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
