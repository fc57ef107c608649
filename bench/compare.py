#!/usr/bin/env python3
"""Benchmark regression gate: compares two spade-bench CSVs (or two folders of them).

    python3 bench/compare.py OLD.csv NEW.csv [--threshold 0.10] [--baseline-noise 0.05]
    python3 bench/compare.py OLD_DIR NEW_DIR [...]

Rows are matched by (operation, matrix, n, precision). Where a CSV has no `operation` column it
is read from the `command` column (`spade-bench spgemm ...`); if a row still has none, operations
are ignored on both sides and rows match by (matrix, n, precision) — one CSV holds one operation.
A missing `precision` (overhead CSVs) is read from the file name: `-fp64.csv` is fp64, else fp32.
Overhead CSVs (`case, side, ...`) compare Spade's and the direct call's `host_us_held`; cg CSVs
compare `spade_ms` with `direct_ms`. Multi CSVs (`spade-bench multi`: a `gpus` column) compare
each cluster's `ms` with the same run's single-GPU product `single_gpu_ms` as the baseline, keyed
with n = "<gpus> GPU"; the modelled `*_projected` rows are left out.

For a matched row, spade = new/old Spade median, base = new/old baseline median. The baseline ran
in the same process on the same inputs, so it tells a slower machine from slower code:
  REGRESSION  spade > 1 + threshold and base < 1 + noise (a baseline that got faster cannot
              explain a slower Spade, so it counts as steady here);
  NOTE        spade > 1 + threshold and base >= 1 + noise: "slower, baseline moved too (machine?)";
              spade < 1 - threshold and base > 1 - noise: IMPROVED; both faster: "machine?";
              Spade slower in a row without a baseline time (cuSPARSE failed there); the
              chosen kernel (spade_kernel) changed; a row not timed on one side.
  FAILED      NEW's check is neither ok nor skipped (FAILED, error): counted whether matched or not.
Rows only in one file are counted (quick-set runs share only some rows with full-set baselines).
A device that differs between the files is reported loudly; the rows are still compared.

Folders: each NEW_DIR/<bench>[-fp64].csv (as `scripts/bench.sh --run` names them) is compared
with every OLD_DIR/<bench>.csv and OLD_DIR/<bench>-*.csv together (docs/benchmarks/baselines
splits a family into sets: spgemm-real.csv, spgemm-synthetic.csv, spgemm-real-fp64.csv); old rows
of a precision NEW does not hold belong to the other NEW file and are not counted here.

Prints the flagged rows (times in the CSV's unit: ms, µs for overhead), then one line
`compare: M matched, R regressions, N notes, F failures, O only-old, W only-new` (in folder mode
one `compare <file>:` line per file first). Exit status: 1 with any regression or failure, 2 on
bad arguments, else 0. Standard library only.
"""

import argparse
import csv
import math
import sys
from pathlib import Path


COUNTED_AS = {"REGRESSION": "regressions", "FAILED": "failures", "NOTE": "notes"}


def number(text):
    """A positive finite time, or None (empty cells, nan, a failed side)."""
    try:
        value = float(text)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) and value > 0 else None


def file_precision(path):
    return "fp64" if Path(path).stem.endswith("-fp64") else "fp32"


def record(operation, matrix, n, precision, spade, baseline, kernel, check, row):
    return {"operation": operation, "matrix": matrix, "n": (n or "").strip(),
            "precision": precision, "spade": number(spade), "baseline": number(baseline),
            "kernel": kernel or "", "check": (check or "").strip(),
            "device": (row.get("device") or "").strip(),
            "commit": (row.get("commit") or "").strip()}


def read_rows(path):
    """The CSV's rows as records with the same fields whatever spade-bench command wrote it."""
    with open(path, newline="") as f:
        table = list(csv.DictReader(f))
    if table and "side" in table[0]:  # overhead: one spade and one baseline row per case
        cases = {}
        for row in table:
            cases.setdefault(row["case"], {})[row["side"]] = row
        rows = []
        for case, sides in cases.items():
            spade, base = sides.get("spade", {}), sides.get("baseline", {})
            rows.append(record("overhead", case, "", file_precision(path),
                               spade.get("host_us_held"), base.get("host_us_held"),
                               spade.get("kernel"), spade.get("check"), spade or base))
        return rows
    if table and "gpus" in table[0]:  # multi: each cluster size against one GPU, same run
        rows = []
        for row in table:
            operation = (row.get("operation") or "").strip()
            if operation.endswith("_projected"):  # modelled, not timed
                continue
            timed = number(row.get("ms")) is not None
            rows.append(record(operation, row.get("matrix", ""),
                               f"{(row.get('gpus') or '').strip()} GPU",
                               (row.get("precision") or "").strip() or file_precision(path),
                               row.get("ms"), row.get("single_gpu_ms"), "",
                               "ok" if timed else "skipped", row))
        return rows
    rows = []
    for row in table:
        cg = "direct_ms" in row
        command = (row.get("command") or "").split()
        operation = (row.get("operation") or "").strip() or (command[1] if len(command) > 1 else "")
        rows.append(record(operation, row.get("matrix", ""), row.get("n"),
                           (row.get("precision") or "").strip() or file_precision(path),
                           row.get("spade_ms" if cg else "spade_ms_median"),
                           row.get("direct_ms" if cg else "baseline_ms_median"),
                           row.get("spade_kernel"), row.get("check"), row))
    return rows


def judge(old, new, threshold, noise):
    """(verdict, reason) for a matched pair; verdict is REGRESSION, FAILED, NOTE or None."""
    if new["check"] not in ("ok", "skipped"):
        return "FAILED", f"check {new['check'] or '(empty)'} in NEW"
    if new["check"] == "skipped" or new["spade"] is None:
        return ("NOTE", "not timed in NEW") if old["spade"] is not None else (None, "")
    if old["check"] != "ok" or old["spade"] is None:
        return "NOTE", f"check {old['check']} in OLD, timed now"
    notes = []
    if old["kernel"] and new["kernel"] and old["kernel"] != new["kernel"]:
        notes.append(f"kernel {old['kernel']} -> {new['kernel']}")
    spade = new["spade"] / old["spade"]
    base = new["baseline"] / old["baseline"] if new["baseline"] and old["baseline"] else None
    versus = f"vs baseline x{spade / base:.2f}" if base else ""
    if spade > 1 + threshold:
        if base is None:
            notes.insert(0, "slower, no baseline time to tell code from machine")
        elif base >= 1 + noise:
            notes.insert(0, f"slower, baseline moved too (machine?; {versus})")
        else:
            why = "baseline steady" if base > 1 - noise else "baseline got faster"
            return "REGRESSION", "; ".join([f"Spade slower, {why}"] + notes)
    elif spade < 1 - threshold:
        if base is not None and base <= 1 - noise:
            notes.insert(0, f"faster, baseline moved too (machine?; {versus})")
        else:
            notes.insert(0, "IMPROVED")
    return ("NOTE", "; ".join(notes)) if notes else (None, "")


def keyed(rows, use_operation, label):
    out = {}
    for row in rows:
        operation = row["operation"] if use_operation else "*"
        key = (operation, row["matrix"], row["n"], row["precision"])
        if key in out:  # a rerun of one matrix in the same file: keep the first, say so
            print(f"warning: {label} has {key} twice; the first row is used", file=sys.stderr)
            continue
        out[key] = row
    return out


def describe(rows, field):
    return ", ".join(sorted({r[field] for r in rows if r[field]})) or "(none)"


def fmt(value, digits=4):
    return "-" if value is None else f"{value:.{digits}g}"


def compare(old_rows, new_rows, old_label, new_label, args):
    """Prints the comparison of two row lists; returns the counts for the summary line."""
    print(f"OLD {old_label}: commit {describe(old_rows, 'commit')}")
    print(f"NEW {new_label}: commit {describe(new_rows, 'commit')}")
    old_devices, new_devices = describe(old_rows, "device"), describe(new_rows, "device")
    device_differs = bool(old_rows and new_rows) and old_devices != new_devices
    if device_differs:
        print("!" * 100)
        print(f"!!! DEVICE DIFFERS: OLD [{old_devices}] vs NEW [{new_devices}]")
        print("!!! times come from different machines; rows are still compared, read with care")
        print("!" * 100)
    use_operation = all(r["operation"] for r in old_rows + new_rows)
    old, new = keyed(old_rows, use_operation, old_label), keyed(new_rows, use_operation, new_label)
    counts = {"matched": 0, "regressions": 0, "notes": 0, "failures": 0,
              "only-old": 0, "only-new": 0, "device": device_differs}
    flagged = []
    for key, row in new.items():
        if key not in old:
            counts["only-new"] += 1
            if row["check"] not in ("ok", "skipped"):
                counts["failures"] += 1
                flagged.append(("FAILED", None, row, f"check {row['check']} in NEW (no OLD row)"))
            continue
        counts["matched"] += 1
        verdict, reason = judge(old[key], row, args.threshold, args.baseline_noise)
        if verdict:
            counts[COUNTED_AS[verdict]] += 1
            flagged.append((verdict, old[key], row, reason))
    only_old = [row for key, row in old.items() if key not in new]
    counts["only-old"] = len(only_old)
    if flagged:
        print(f"{'verdict':<11} {'operation':<9} {'matrix':<36} {'n':>5} {'prec':<5} "
              f"{'old':>9} {'new':>9} {'spade':>6} {'base':>6}  why")
    order = {"FAILED": 0, "REGRESSION": 1, "NOTE": 2}
    for verdict, o, n, reason in sorted(flagged, key=lambda f: (order[f[0]], f[2]["matrix"])):
        ratio = lambda field: n[field] / o[field] if o and o[field] and n[field] else None
        print(f"{verdict:<11} {n['operation'] or '*':<9} {n['matrix'][:36]:<36} {n['n']:>5} "
              f"{n['precision']:<5} {fmt(o and o['spade']):>9} {fmt(n['spade']):>9} "
              f"{fmt(ratio('spade'), 3):>6} {fmt(ratio('baseline'), 3):>6}  {reason}")
    for label, rows in (("NEW", [r for k, r in new.items() if k not in old]), ("OLD", only_old)):
        if rows:
            names = [f"{r['matrix']}{' n=' + r['n'] if r['n'] else ''}" for r in rows]
            more = f" and {len(names) - 12} more" if len(names) > 12 else ""
            shown = ", ".join(names[:12]) + more
            print(f"only in {label} ({len(rows)}): {shown}")
    return counts


def summary(counts, label="compare"):
    line = (f"{label}: {counts['matched']} matched, {counts['regressions']} regressions, "
            f"{counts['notes']} notes, {counts['failures']} failures, "
            f"{counts['only-old']} only-old, {counts['only-new']} only-new")
    return line + ("; DEVICE DIFFERS" if counts["device"] else "")


def compare_folders(old_dir, new_dir, args):
    total = {"matched": 0, "regressions": 0, "notes": 0, "failures": 0,
             "only-old": 0, "only-new": 0, "device": False}
    lines = []
    # In bench.sh's order within a benchmark: spgemm.csv, then spgemm-fp64.csv.
    new_files = sorted(new_dir.glob("*.csv"), key=lambda p: (p.stem.split("-")[0], p.stem))
    if not new_files:
        print(f"compare: no CSV in {new_dir}", file=sys.stderr)
    for new_file in new_files:
        family = new_file.stem.split("-")[0]
        new_rows = read_rows(new_file)
        precisions = {r["precision"] for r in new_rows}
        old_files, old_rows = [], []
        for path in sorted(p for p in old_dir.glob("*.csv") if p.stem.split("-")[0] == family):
            rows = [r for r in read_rows(path) if r["precision"] in precisions]
            if rows:
                old_files.append(path)
                old_rows += rows
        print(f"== {new_file.name} vs {' + '.join(p.name for p in old_files) or 'no baseline'}")
        counts = compare(old_rows, new_rows, " + ".join(str(p) for p in old_files) or "(none)",
                         str(new_file), args)
        lines.append(summary(counts, f"compare {new_file.name}"))
        print(lines[-1] + "\n")
        for name in ("matched", "regressions", "notes", "failures", "only-old", "only-new"):
            total[name] += counts[name]
        total["device"] = total["device"] or counts["device"]
    for line in lines:  # again together, so a log's tail holds every file's line
        print(line)
    return total


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("old", type=Path, help="OLD.csv or a folder of baseline CSVs")
    parser.add_argument("new", type=Path, help="NEW.csv or a folder of spade-bench CSVs")
    parser.add_argument("--threshold", type=float, default=0.10,
                        help="Spade time change that counts (default 0.10 = 10%%)")
    parser.add_argument("--baseline-noise", type=float, default=0.05,
                        help="baseline change below which the machine counts as steady (0.05)")
    args = parser.parse_args()
    if args.old.is_dir() != args.new.is_dir() or not args.old.exists() or not args.new.exists():
        parser.error("give two CSV files or two folders that exist")
    if args.old.is_dir():
        counts = compare_folders(args.old, args.new, args)
    else:
        counts = compare(read_rows(args.old), read_rows(args.new), str(args.old), str(args.new),
                         args)
    print(summary(counts))
    return 1 if counts["regressions"] or counts["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
