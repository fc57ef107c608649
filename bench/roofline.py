#!/usr/bin/env python3
"""Places spade-bench spmm results on the device's roofline: bytes and flops per product.

    python3 bench/roofline.py RESULT.csv[:N,N...] [...] [--matrices DIR] [--out PREFIX]
                              [--title TEXT]

A CSV named with :N,N... contributes only those widths of B (to take each width from one run).

For every spmm row (C = A*B, A of nnz entries, B of N columns, element size s):

- flops = 2 * nnz * N;
- compulsory bytes, the model of spade-bench's GB/s column: every array read or written once,
  nnz * (s + 4) + (rows + 1) * 4 + (rows + cols) * N * s;
- intensity = flops / compulsory bytes, and the memory roof = intensity * the copy bandwidth that
  spade-bench measured at the start of the same run (column copy_gbps);
- gathered bytes, nnz * N * s: a row of B read for every stored entry, which is what a row-wise
  kernel (cuSPARSE's, gcoo_spmm, ellr_spmv) requests from L1 and L2 when nothing is reused
  inside a warp;
- with --matrices, the condensed columns of tiled_spmm's windows (the distinct columns of each
  8-row window, summed), counted from the Matrix Market files: tiled_spmm requests a row of B
  per condensed column, so its gathered bytes are condensed columns * N * s.

Writes PREFIX.md (one row per product, and the medians per precision and width) and, where
matplotlib is present, PREFIX.png (GFLOP/s against intensity, the memory roof drawn). Needs no
GPU: it reads the CSVs only.
"""

import argparse
import csv
import gzip
import math
import os
import statistics
import sys


def number(text):
    try:
        return float(text)
    except (TypeError, ValueError):
        return math.nan


def condensed_columns(path):
    """Sum over the 8-row windows of the distinct columns they store (symmetric files mirrored)."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        header = f.readline().lower().split()
        mirrored = len(header) >= 5 and header[4] in ("symmetric", "skew-symmetric", "hermitian")
        line = f.readline()
        while line.startswith("%"):
            line = f.readline()
        rows = int(line.split()[0])
        windows = [set() for _ in range((rows + 7) // 8)]
        for line in f:
            parts = line.split()
            if len(parts) < 2:
                continue
            i, j = int(parts[0]) - 1, int(parts[1]) - 1
            windows[i // 8].add(j)
            if mirrored and i != j:
                windows[j // 8].add(i)
    return sum(len(w) for w in windows)


def best_cusparse_ms(row):
    return number(row["baseline_ms_median"])


def split_source(source):
    """PATH or PATH:N,N... -> (PATH, set of widths or None)."""
    path, _, widths = source.rpartition(":")
    if path and widths and all(w.isdigit() for w in widths.split(",")):
        return path, {int(w) for w in widths.split(",")}
    return source, None


def read_rows(sources):
    rows = []
    for source in sources:
        path, widths = split_source(source)
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                if row.get("operation", "spmm") != "spmm" or row.get("check") != "ok":
                    continue
                if widths is not None and int(row["n"]) not in widths:
                    continue
                rows.append(row)
    return rows


def analyse(row, condensed):
    s = 8 if row["precision"] == "fp64" else 4
    nnz, n = int(row["nnz"]), int(row["n"])
    m, k = int(row["rows"]), int(row["cols"])
    flops = 2.0 * nnz * n
    compulsory = nnz * (s + 4) + (m + 1) * 4 + (m + k) * n * s
    gathered = float(nnz) * n * s
    copy = number(row["copy_gbps"])
    spade_ms, base_ms = number(row["spade_ms_median"]), best_cusparse_ms(row)
    tiled_ms = number(row.get("tiled_kernel_ms"))
    out = {
        "matrix": row["matrix"],
        "precision": row["precision"],
        "n": n,
        "memory": row.get("memory", ""),
        "kernel": row["spade_kernel"],
        "flops": flops,
        "compulsory": compulsory,
        "intensity": flops / compulsory,
        "roof": flops / compulsory * copy,  # GFLOP/s
        "gathered": gathered,
        "spade_gflops": flops / (spade_ms * 1e6),
        "base_gflops": flops / (base_ms * 1e6),
        "spade_gather": gathered / (spade_ms * 1e9),  # TB/s
        "base_gather": gathered / (base_ms * 1e9),
        "ratio": base_ms / spade_ms,
        "spade_us": spade_ms * 1e3,
        "base_us": base_ms * 1e3,
        "tiled_ratio": base_ms / tiled_ms if tiled_ms > 0 else math.nan,
        "reuse": math.nan,
        "tiled_gather": math.nan,
    }
    if condensed:
        cols = condensed.get(row["matrix"])
        if cols:
            tiled_bytes = float(cols) * n * s
            out["reuse"] = nnz / cols
            if tiled_ms > 0:
                out["tiled_gather"] = tiled_bytes / (tiled_ms * 1e9)
    return out


def fmt(value, digits=2):
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return f"{value:.{digits}f}"


def median(values):
    values = [v for v in values if not math.isnan(v)]
    return statistics.median(values) if values else math.nan


def write_markdown(path, results, sources, title):
    with open(path, "w") as f:
        f.write(f"# {title}\n\n")
        f.write("Written by `bench/roofline.py` from " + ", ".join(f"`{s}`" for s in sources))
        f.write(
            ". GFLOP/s = 2·nnz·N / median time; roof = intensity × the run's measured copy "
            "bandwidth; gather = nnz·N·s / time (TB/s of B rows requested, one per stored "
            "entry); tiled gather = condensed columns·N·s / tiled_spmm's time; reuse = entries "
            "per condensed column.\n\n"
        )
        f.write(
            "| precision | N | products | median intensity (flop/B) | median % of roof, planned "
            "| median % of roof, best cuSPARSE | median gather TB/s, planned | median gather TB/s, "
            "best cuSPARSE | median tiled gather TB/s | best cuSPARSE µs, smallest / median "
            "|\n|---|---|---|---|---|---|---|---|---|---|\n"
        )
        groups = {}
        for r in results:
            groups.setdefault((r["precision"], r["n"]), []).append(r)
        for (precision, n), rs in sorted(groups.items()):
            f.write(
                f"| {precision} | {n} | {len(rs)} | {fmt(median([r['intensity'] for r in rs]))} "
                f"| {fmt(100 * median([r['spade_gflops'] / r['roof'] for r in rs]), 1)} "
                f"| {fmt(100 * median([r['base_gflops'] / r['roof'] for r in rs]), 1)} "
                f"| {fmt(median([r['spade_gather'] for r in rs]))} "
                f"| {fmt(median([r['base_gather'] for r in rs]))} "
                f"| {fmt(median([r['tiled_gather'] for r in rs]))} "
                f"| {fmt(min(r['base_us'] for r in rs), 1)} / "
                f"{fmt(median([r['base_us'] for r in rs]), 1)} |\n"
            )
        f.write(
            "\n| matrix | precision | N | memory | compulsory MB | GFLOP | intensity | roof "
            "GFLOP/s | planned kernel | planned GFLOP/s | % roof | best cuSPARSE GFLOP/s | % roof "
            "| gather TB/s planned / cuSPARSE | reuse | tiled_spmm vs cuSPARSE | tiled gather "
            "TB/s |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n"
        )
        for r in sorted(results, key=lambda r: (r["precision"], r["n"], r["matrix"].lower())):
            f.write(
                f"| {r['matrix']} | {r['precision']} | {r['n']} | {r['memory']} "
                f"| {fmt(r['compulsory'] / 1e6, 1)} | {fmt(r['flops'] / 1e9, 3)} "
                f"| {fmt(r['intensity'])} | {fmt(r['roof'], 0)} | {r['kernel']} "
                f"| {fmt(r['spade_gflops'], 0)} | {fmt(100 * r['spade_gflops'] / r['roof'], 1)} "
                f"| {fmt(r['base_gflops'], 0)} | {fmt(100 * r['base_gflops'] / r['roof'], 1)} "
                f"| {fmt(r['spade_gather'])} / {fmt(r['base_gather'])} | {fmt(r['reuse'])} "
                f"| {fmt(r['tiled_ratio'])} | {fmt(r['tiled_gather'])} |\n"
            )


def write_plot(path, results, title):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("roofline: no matplotlib, no plot", file=sys.stderr)
        return False
    precisions = sorted({r["precision"] for r in results})
    fig, axes = plt.subplots(1, len(precisions), figsize=(6.5 * len(precisions), 5), squeeze=False)
    for ax, precision in zip(axes[0], precisions):
        rs = [r for r in results if r["precision"] == precision]
        copy = median([r["roof"] / r["intensity"] for r in rs])
        lo = min(r["intensity"] for r in rs) / 1.5
        hi = max(r["intensity"] for r in rs) * 1.5
        ax.plot([lo, hi], [lo * copy, hi * copy], "k-", lw=1,
                label=f"copy bandwidth {copy / 1000:.2f} TB/s")
        for n, marker in zip(sorted({r["n"] for r in rs}), "os^Dv"):
            sel = [r for r in rs if r["n"] == n]
            ax.scatter([r["intensity"] for r in sel], [r["base_gflops"] for r in sel],
                       marker=marker, facecolors="none", edgecolors="tab:gray",
                       label=f"best cuSPARSE, N = {n}")
            ax.scatter([r["intensity"] for r in sel], [r["spade_gflops"] for r in sel],
                       marker=marker, color="tab:blue", s=14, label=f"Spade planned, N = {n}")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("intensity, flop per compulsory byte")
        ax.set_ylabel("GFLOP/s")
        ax.set_title(f"{title} ({precision})")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return True


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv", nargs="+")
    parser.add_argument("--matrices", help="folder of the *.mtx.gz the runs read (condensed columns)")
    parser.add_argument("--out", help="output prefix (default: the first CSV without .csv)")
    parser.add_argument("--title", default="SpMM on the roofline")
    args = parser.parse_args()
    rows = read_rows(args.csv)
    if not rows:
        print("roofline: no checked spmm rows in the CSVs", file=sys.stderr)
        return 1
    condensed = {}
    if args.matrices:
        for name in sorted({r["matrix"] for r in rows}):
            path = os.path.join(args.matrices, name + ".mtx.gz")
            if os.path.exists(path):
                condensed[name] = condensed_columns(path)
    results = [analyse(r, condensed) for r in rows]
    prefix = args.out or os.path.splitext(split_source(args.csv[0])[0])[0]
    write_markdown(prefix + ".md", results, args.csv, args.title)
    plotted = write_plot(prefix + ".png", results, args.title)
    print(f"roofline: {len(results)} products -> {prefix}.md" + (f", {prefix}.png" if plotted else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
