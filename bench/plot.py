#!/usr/bin/env python3
"""Plots and summarises spade-bench CSVs.

    python3 bench/plot.py RESULT.csv [--out PREFIX] [--title TEXT]

Writes PREFIX.png (ratio baseline/Spade per matrix, log scale; for `overhead` CSVs the host
microseconds per call of both sides) and PREFIX.md (device, commit, command, geomean ratio,
worst case, the targets of ../shared/BENCHMARKS.md where they apply, and one row per matrix).
PREFIX defaults to the CSV's path without .csv. Needs matplotlib (scripts/bench.sh installs
python3-matplotlib with apt when it is missing).
"""

import argparse
import csv
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after choosing the backend)


def number(text):
    try:
        return float(text)
    except (TypeError, ValueError):
        return math.nan


def geomean(values):
    values = [v for v in values if v > 0 and not math.isnan(v)]
    if not values:
        return math.nan
    return math.exp(sum(math.log(v) for v in values) / len(values))


def fmt(value, digits=3):
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{value:.{digits}g}"


def first(rows, key, default="unknown"):
    for row in rows:
        if row.get(key):
            return row[key]
    return default


# BENCHMARKS.md's bar, per operation: (what, test on the rows) -> text.
def targets(operation, rows):
    ok = [r for r in rows if not math.isnan(r["ratio"])]
    lines = []
    if not ok:
        return lines
    ratios = [r["ratio"] for r in ok]
    worst = min(ok, key=lambda r: r["ratio"])
    if operation == "spmv":
        lines.append(f"every matrix >= 0.95x cuSPARSE: worst {worst['ratio']:.3f} ({worst['matrix']})"
                     f" -> {'met' if worst['ratio'] >= 0.95 else 'NOT met'}")
        regular = [r["ratio"] for r in ok if r["family"] in ("stencil27", "stencil7", "banded",
                                                              "uniform_rows", "block_diagonal")]
        if regular:
            g = geomean(regular)
            lines.append(f"geomean >= 1.05x on regular (synthetic stencil/banded/uniform/block) "
                         f"matrices: {g:.3f} -> {'met' if g >= 1.05 else 'NOT met'}")
        for r in ok:
            if r["matrix"].startswith("stencil27_100") and not math.isnan(r["pct_copy"]):
                lines.append(f">= 85% of copy bandwidth on stencil27 100^3: {r['pct_copy']:.1f}% -> "
                             f"{'met' if r['pct_copy'] >= 85 else 'NOT met'}")
    elif operation == "spmm":
        for n, bar in ((128, 1.3), (32, 1.15)):
            sel = [r["ratio"] for r in ok if r["n"] == n]
            if sel:
                g = geomean(sel)
                lines.append(f"N = {n}: geomean >= {bar}x best-of cuSPARSE: {g:.3f} over {len(sel)} "
                             f"-> {'met' if g >= bar else 'NOT met'}")
        lines.append(f"no matrix below 0.9x: worst {worst['ratio']:.3f} ({worst['matrix']}, N = "
                     f"{worst['n']}) -> {'met' if worst['ratio'] >= 0.9 else 'NOT met'}")
    elif operation == "spgemm":
        g = geomean(ratios)
        lines.append(f"geomean >= 3x cusparseSpGEMM: {g:.3f} -> {'met' if g >= 3 else 'NOT met'}")
        lines.append(f"never below cuSPARSE: worst {worst['ratio']:.3f} ({worst['matrix']}) -> "
                     f"{'met' if worst['ratio'] >= 1 else 'NOT met'}")
        rmat = [r for r in rows if r["family"] == "rmat"]
        if rmat:
            lines.append(f"completes R-MAT scale 20: check {rmat[0]['check']} -> "
                         f"{'met' if rmat[0]['check'] == 'ok' else 'NOT met'}")
    elif operation == "tiled":
        friendly = [r for r in ok if any(n in r["matrix"] for n in (
            "s1rmq4m1", "bcsstk13", "Dubcova1", "stencil27", "block_diagonal"))]
        if friendly:
            g = geomean([r["ratio"] for r in friendly])
            lines.append(f">= 1.3x hash_spgemm on the tile-friendly matrices: geomean {g:.3f} over "
                         f"{len(friendly)} -> {'met' if g >= 1.3 else 'NOT met'}; below 1.3x: " +
                         (", ".join(f"{r['matrix']} {r['ratio']:.2f}" for r in friendly
                                    if r["ratio"] < 1.3) or "none"))
        picked = [r for r in ok if r.get("tiled_criterion") == "tiled_spgemm"]
        faster = [r for r in ok if r["ratio"] > 1]
        hits = [r for r in picked if r["ratio"] > 1]
        if picked or faster:
            precision = len(hits) / len(picked) if picked else float("nan")
            recall = len(hits) / len(faster) if faster else float("nan")
            lines.append(f"criterion (planner picks tiled_spgemm): precision {precision:.2f} "
                         f"({len(hits)} of {len(picked)} picks faster), recall {recall:.2f} "
                         f"({len(hits)} of {len(faster)} faster ones picked): " +
                         ", ".join(f"{r['matrix']}" for r in faster if r not in picked) +
                         (" faster but not picked" if [r for r in faster if r not in picked] else ""))
    return lines


def product_report(rows, out, title):
    for r in rows:
        for key in ("ratio", "spade_ms_median", "spade_ms_min", "spade_ms_max", "baseline_ms_median",
                    "gbps", "gflops", "copy_gbps", "working_set_mb", "gemm_ms", "spade_e2e_ms",
                    "spade_first_call_ms", "conversion_breakeven_calls", "check_error"):
            r[key] = number(r.get(key))
        r["n"] = int(number(r.get("n"))) if r.get("n") else 0
        r["pct_copy"] = r["gbps"] / r["copy_gbps"] * 100 if r["copy_gbps"] > 0 else math.nan
    operation = first(rows, "operation", "spmv")
    precision = first(rows, "precision", "")
    ok = [r for r in rows if not math.isnan(r["ratio"])]
    label = lambda r: r["matrix"] + (f" N={r['n']}" if operation == "spmm" else "")

    # The plot: one bar per (matrix, N), log-scale ratio, a line at 1 (parity with cuSPARSE).
    fig_h = max(4.0, 0.22 * len(rows) + 1.5)
    fig, ax = plt.subplots(figsize=(10, fig_h))
    colours = {"real": "#4c72b0"}
    names = [label(r) for r in rows]
    values = [r["ratio"] if not math.isnan(r["ratio"]) else 0 for r in rows]
    bars = ax.barh(range(len(rows)), values,
                   color=[colours.get(r["family"], "#dd8452") if r["check"] == "ok" else "#c44e52"
                          for r in rows])
    for bar, r in zip(bars, rows):
        if math.isnan(r["ratio"]):
            ax.text(1.0, bar.get_y() + bar.get_height() / 2, f"  {r['check']}", va="center",
                    fontsize=7, color="#c44e52")
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels(names, fontsize=7)
    ax.invert_yaxis()
    positive = [v for v in values if v > 0]
    if positive and max(positive) / min(positive) > 4:
        ax.set_xscale("log")
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.set_xlabel("hash_spgemm time / tiled_spgemm time  (> 1: tiles faster)"
                  if operation == "tiled" else
                  "cuSPARSE best-of time / Spade time  (> 1: Spade faster)")
    ax.set_title(title or f"spade-bench {operation} {precision}: ratio per matrix "
                          f"(blue real, orange synthetic, red failed)", fontsize=9)
    fig.tight_layout()
    fig.savefig(out + ".png", dpi=130)
    plt.close(fig)

    real = [r["ratio"] for r in ok if r["family"] == "real"]
    synth = [r["ratio"] for r in ok if r["family"] != "real"]
    dram = [r["ratio"] for r in ok if r.get("memory") == "dram"]
    worst = min(ok, key=lambda r: r["ratio"]) if ok else None
    failed = [r for r in rows if r["check"] not in ("ok", "skipped")]
    md = [f"# spade-bench {operation} ({precision})", "",
          f"- command: `{first(rows, 'command')}`",
          f"- commit: `{first(rows, 'commit')}`",
          f"- device: {first(rows, 'device')}",
          f"- device copy bandwidth: {fmt(rows[0]['copy_gbps'], 4)} GB/s (read + write)",
          "- times: CUDA events, median of >= 20 after >= 5 warm-ups, kernel-only (stream held "
          "while runs are queued; SpGEMM synchronises inside, so its times are per call);"
          " ratio = baseline_ms / spade_ms",
          "- GB/s: bytes = nnz*(sizeof(T)+4) + (rows+1)*4 + (rows+cols)*N*sizeof(T); counts for "
          "`memory` = dram (working set >= 200 MB) or l2-flushed only",
          "",
          f"**geomean ratio {fmt(geomean([r['ratio'] for r in ok]))}** over {len(ok)}; "
          f"real {fmt(geomean(real))} ({len(real)}), synthetic {fmt(geomean(synth))} ({len(synth)}),"
          f" working set >= 200 MB {fmt(geomean(dram))} ({len(dram)})"
          + (f"; worst {worst['ratio']:.3f} ({label(worst)})" if worst else ""), ""]
    if failed:
        md.append(f"failed / error: {', '.join(label(r) + ' (' + r['check'] + ')' for r in failed)}")
        md.append("")
    bar_lines = targets(operation, rows)
    if bar_lines:
        md.append("Targets (../shared/BENCHMARKS.md):")
        md.extend(f"- {line}" for line in bar_lines)
        md.append("")
    md.append(f"![ratio per matrix]({os.path.basename(out)}.png)")
    md.append("")
    md.append("| matrix | family | rows | nnz | N | Spade kernel | Spade ms (min-max) | baseline | "
              "baseline ms | ratio | GB/s | % copy | GFLOP/s | memory | check |")
    md.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        md.append(
            f"| {r['matrix']} | {r['family']} | {r['rows']} | {r['nnz']} | {r['n'] or '-'} | "
            f"{r['spade_kernel'] or '-'} | {fmt(r['spade_ms_median'], 4)} "
            f"({fmt(r['spade_ms_min'], 4)}-{fmt(r['spade_ms_max'], 4)}) | {r['baseline']} | "
            f"{fmt(r['baseline_ms_median'], 4)} | {fmt(r['ratio'])} | {fmt(r['gbps'], 4)} | "
            f"{fmt(r['pct_copy'], 3)} | {fmt(r['gflops'], 4)} | {r.get('memory') or '-'} | "
            f"{r['check']} |")
    notes = [r for r in rows if r.get("note")]
    if notes:
        md.append("")
        md.append("Notes per matrix (baseline variants, conversions, failures):")
        md.append("")
        md.extend(f"- {label(r)}: {r['note']}" for r in notes)
    with open(out + ".md", "w") as f:
        f.write("\n".join(md) + "\n")


def overhead_report(rows, out, title):
    # Dispatch rows compare host time with the stream held against a "baseline" side; the
    # planning-cost rows (sparse x sparse, which synchronise inside) compare wall time against
    # the kernel called "direct"ly, with the target max(10 us, 3 % of the direct call).
    planning = [r for r in rows if r["side"] == "direct"]
    planning_cases = {r["case"] for r in planning}
    all_rows = rows
    rows = [r for r in rows if r["case"] not in planning_cases]
    cases = []
    for r in rows:
        if r["case"] not in cases:
            cases.append(r["case"])
    side = {(r["case"], r["side"]): r for r in rows}
    fig, ax = plt.subplots(figsize=(9, 1.2 + 0.8 * len(cases)))
    y = range(len(cases))
    spade = [number(side[(c, "spade")]["host_us_held"]) for c in cases]
    base = [number(side[(c, "baseline")]["host_us_held"]) for c in cases]
    ax.barh([i - 0.2 for i in y], spade, height=0.4, label="Spade", color="#dd8452")
    ax.barh([i + 0.2 for i in y], base, height=0.4, label="baseline (direct call)", color="#4c72b0")
    ax.set_yticks(list(y))
    ax.set_yticklabels(cases, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("host microseconds per call (stream held: host work only)")
    ax.set_title(title or "spade-bench overhead: planning + dispatch per evaluation", fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out + ".png", dpi=130)
    plt.close(fig)
    md = ["# spade-bench overhead", "",
          f"- commit: `{first(rows, 'commit')}`",
          f"- device: {first(rows, 'device')}",
          "- host_us_held: loop time per call while the stream is held (host work only); "
          "host_us_loop: loop time per call with the stream running (sync after the loop, not "
          "timed); wall_us: (loop + sync) per call; gpu_us: CUDA-event median",
          "- target: Spade <= baseline + 3 us host time per evaluation", "",
          "| case | side | kernel | host us (held) | host us (loop) | wall us | GPU us median (min-max) |"
          " check |",
          "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        md.append(f"| {r['case']} | {r['side']} | {r['kernel']} | {fmt(number(r['host_us_held']))} |"
                  f" {fmt(number(r['host_us_loop']))} | {fmt(number(r['wall_us_per_call']))} | "
                  f"{fmt(number(r['gpu_us_median']))} ({fmt(number(r['gpu_us_min']))}-"
                  f"{fmt(number(r['gpu_us_max']))}) | {r['check']} |")
    md.append("")
    for c in cases:
        d = number(side[(c, "spade")]["host_us_held"]) - number(side[(c, "baseline")]["host_us_held"])
        md.append(f"- {c}: Spade - baseline = {d:+.2f} us per call -> "
                  f"{'met' if d <= 3 else 'NOT met'}")
    if planning:
        wall = {(r["case"], r["side"]): number(r["wall_us_per_call"]) for r in all_rows}
        md += ["", "Planning cost of sparse x sparse (wall time per call, both sides synchronise; "
               "target max(10 us, 3 % of the direct call)):", "",
               "| case | planned kernel | planned us | direct kernel | direct us | difference | target |",
               "|---|---|---|---|---|---|---|"]
        planned_kernel = {r["case"]: r["kernel"] for r in all_rows if r["side"] == "spade"}
        for r in planning:
            c = r["case"]
            d = wall[(c, "spade")] - wall[(c, "direct")]
            target = max(10.0, 0.03 * wall[(c, "direct")])
            md.append(f"| {c} | {planned_kernel.get(c, '')} | {fmt(wall[(c, 'spade')])} | "
                      f"{r['kernel']} | {fmt(wall[(c, 'direct')])} | {d:+.2f} us | "
                      f"<= {target:.2f} us: {'met' if d <= target else 'NOT met'} |")
    md.append("")
    md.append(f"![host time per call]({os.path.basename(out)}.png)")
    with open(out + ".md", "w") as f:
        f.write("\n".join(md) + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv")
    parser.add_argument("--out", help="output prefix (default: the CSV path without .csv)")
    parser.add_argument("--title")
    args = parser.parse_args()
    with open(args.csv, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        sys.exit(f"{args.csv}: no rows")
    out = args.out or (args.csv[:-4] if args.csv.endswith(".csv") else args.csv)
    if "case" in rows[0]:
        overhead_report(rows, out, args.title)
    else:
        product_report(rows, out, args.title)
    print(f"wrote {out}.png and {out}.md")


if __name__ == "__main__":
    main()
