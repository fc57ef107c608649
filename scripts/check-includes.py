#!/usr/bin/env python3
"""The include graph runs one way (issue 19): a file includes only its own layer and those below.

Headers, lowest layer first: core, formats, expr, plan, eval, then the back ends cpu and device
(beside each other), then io (files into host matrices, through the cpu back end) and multi
(multi_gpu operands, running the single-GPU planner on each part), beside each other; spade.hpp
includes everything (spade/mpi.hpp, above every layer, is included by MPI programs alone). lib/: a family
(convert, core, host, kernels, vendor) includes public headers, its own files and lib/detail/
(the helpers every family shares), never another family's files.

Known violations that the redesign of issue 19 removes are listed in
scripts/include-exceptions.txt, one `FILE -> LAYER` per line with the reason after a '#'; an
exception that no longer occurs fails the check too, so the list only shrinks.

usage: scripts/check-includes.py [--root DIR]   (DIR: another tree, for the tests)
Exit status 0 clean, 1 violations (listed), 2 a malformed exceptions file.
"""

import re
import sys
from pathlib import Path

ROOT = Path(sys.argv[sys.argv.index("--root") + 1]).resolve() if "--root" in sys.argv \
    else Path(__file__).resolve().parents[1]
RANK = {"core": 0, "formats": 1, "expr": 2, "plan": 3, "eval": 4, "cpu": 5, "device": 5, "io": 6,
        "multi": 6}
LIB_SHARED = "detail"
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def header_layer(path):
    parts = path.relative_to(ROOT / "include" / "spade").parts
    return parts[0] if len(parts) > 1 else None  # None: spade.hpp, above every layer


def violations():
    found = []
    for path in sorted((ROOT / "include" / "spade").rglob("*.hpp")):
        own = header_layer(path)
        for line in path.read_text(encoding="utf-8").splitlines():
            m = INCLUDE.match(line)
            if not m or not m.group(1).startswith("spade/"):
                continue
            target = m.group(1).split("/")
            if len(target) < 3:
                continue  # spade/spade.hpp
            layer = target[1]
            if layer not in RANK:
                found.append((path, layer, f"unknown layer '{layer}'"))
            elif own is not None and own != layer and RANK[layer] >= RANK[own]:
                found.append((path, layer, f"{own} includes {layer}, a layer above or beside it"))
    lib = ROOT / "lib"
    for path in sorted(p for p in lib.rglob("*") if p.suffix in (".cu", ".cuh", ".cpp", ".hpp")):
        family = path.relative_to(lib).parts[0]
        for line in path.read_text(encoding="utf-8").splitlines():
            m = INCLUDE.match(line)
            if not m or m.group(1).startswith("spade/"):
                continue
            name = m.group(1)
            if name.startswith("../"):
                found.append((path, name, "relative include of another lib family"))
            elif "/" in name and name.split("/")[0] not in (family, LIB_SHARED):
                found.append((path, name.split("/")[0],
                              f"lib/{family} includes lib/{name.split('/')[0]}: share it "
                              f"through lib/{LIB_SHARED}/"))
    return found


def exceptions():
    listed = {}
    text = (ROOT / "scripts" / "include-exceptions.txt").read_text(encoding="utf-8")
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if "->" not in line:
            print(f"include-exceptions.txt:{number}: expected 'FILE -> LAYER'", file=sys.stderr)
            sys.exit(2)
        file, layer = (x.strip() for x in line.split("->", 1))
        listed[(file, layer)] = number
    return listed


def main():
    listed = exceptions()
    used = set()
    bad = 0
    for path, layer, why in violations():
        key = (str(path.relative_to(ROOT)), layer)
        if key in listed:
            used.add(key)
            continue
        bad += 1
        print(f"{key[0]}: {why}")
    for key, number in sorted(listed.items(), key=lambda kv: kv[1]):
        if key not in used:
            bad += 1
            print(f"include-exceptions.txt:{number}: '{key[0]} -> {key[1]}' no longer occurs; "
                  "remove the line")
    print(f"check-includes: {bad} violation(s), {len(used)} listed exception(s) still to remove")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
