#!/usr/bin/env python3
"""Leave-half-out replay of `spade tune`'s cuSPARSE algorithm times (its report on stdout).

    bench/tune_replay.py TUNE_REPORT.txt

For each precision and group of widths, each matrix is judged by the tune entries of the half of
the matrices it is not in (alternate matrices by name), as the planner would follow a file
without it: its class's fastest algorithm when that was the fastest on every one of at least two
matrices, else the rules. It prints, as geometric means of the rules' time over the chosen
algorithm's (above 1: faster than the rules):

- in-sample: each matrix runs the algorithm measured fastest on it (what the planner does for a
  matrix the file measured);
- held out, class rule: what following the class's unanimous choice would give on the matrices
  left out, with the worst product and how many differ from the rules.

The times are the report's own (one run), so this compares algorithms, not planned products.
"""
import collections
import math
import re
import sys

HEADER = re.compile(r"^(float|double) (\S+) \(")
WIDTH = re.compile(
    r"^\s+N = (\d+):.*cuSPARSE alg1 ([\d.]+) alg2 ([\d.]+) alg3 ([\d.]+), "
    r"fastest (alg\d) \(the rules' (alg\d)\); class (\S+)")


def read_report(lines):
    """One dict per (matrix, precision, width): times, fastest, rules' pick, class."""
    rows, current = [], None
    for line in lines:
        header = HEADER.match(line)
        if header:
            current = (header.group(1), header.group(2))
            continue
        width = WIDTH.match(line)
        if width and current:
            rows.append({
                "precision": current[0],
                "matrix": current[1],
                "n": int(width.group(1)),
                "ms": {"alg1": float(width.group(2)), "alg2": float(width.group(3)),
                       "alg3": float(width.group(4))},
                "fastest": width.group(5),
                "rules": width.group(6),
                "class": width.group(7),
            })
    return rows


def class_decision(entries):
    """The class's choice for a matrix it did not measure: unanimous over >= 2, else None."""
    if len(entries) < 2:
        return None
    mean = {a: math.exp(sum(math.log(e["ms"][a]) for e in entries) / len(entries))
            for a in ("alg1", "alg2", "alg3")}
    best = min(mean, key=mean.get)
    return best if all(e["fastest"] == best for e in entries) else None


def geomean(values):
    return math.exp(sum(map(math.log, values)) / len(values)) if values else float("nan")


def replay(rows):
    """Lines of the summary, one per precision and width group."""
    matrices = sorted({r["matrix"] for r in rows})
    half = {m: k % 2 for k, m in enumerate(matrices)}
    out = []
    for precision in ("float", "double"):
        for label, widths in (("N 2-8", range(1, 16)), ("N 16+", range(16, 1 << 20))):
            group = [r for r in rows if r["precision"] == precision and r["n"] in widths]
            if not group:
                continue
            by_class = collections.defaultdict(list)
            for r in group:
                by_class[r["class"]].append(r)
            in_sample, held, worst, differ = [], [], (2.0, "none differs"), 0
            for r in group:
                rules_ms = r["ms"][r["rules"]]
                in_sample.append(rules_ms / r["ms"][r["fastest"]])
                others = [e for e in by_class[r["class"]] if half[e["matrix"]] != half[r["matrix"]]]
                chosen = class_decision(others) or r["rules"]
                gain = rules_ms / r["ms"][chosen]
                held.append(gain)
                differ += chosen != r["rules"]
                if chosen != r["rules"] and gain < worst[0]:
                    worst = (gain, f'{r["matrix"]} N = {r["n"]}: {chosen} for the rules\' {r["rules"]}')
            changed = sum(r["fastest"] != r["rules"] for r in group)
            out.append(
                f"{precision} {label}: {len(group)} products; in-sample {geomean(in_sample):.3f} "
                f"(best {max(in_sample):.2f}, {changed} differ from the rules); held out, class "
                f"rule {geomean(held):.3f} ({differ} differ from the rules; worst: "
                + (f"{worst[0]:.2f}, {worst[1]})" if differ else "none)"))
    return out


def main(argv):
    if len(argv) != 2:
        sys.stderr.write(__doc__)
        return 2
    with open(argv[1], encoding="utf-8") as report:
        rows = read_report(report)
    if not rows:
        sys.stderr.write(f"{argv[1]}: no cuSPARSE algorithm times found\n")
        return 1
    print("\n".join(replay(rows)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
