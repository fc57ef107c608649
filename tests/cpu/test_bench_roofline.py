#!/usr/bin/env python3
"""bench/roofline.py on one crafted spade-bench spmm row and one small Matrix Market file.

The expected figures are worked out by hand below, not by the script. Run by CTest as
cpu_bench_roofline.
"""

import csv
import gzip
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bench" / "roofline.py"

FIELDS = ["matrix", "rows", "cols", "nnz", "n", "precision", "spade_kernel", "spade_ms_median",
          "baseline_ms_median", "copy_gbps", "tiled_kernel_ms", "memory", "check", "operation"]

# A 10 x 10 symmetric pattern, (1,1), (9,1) and (3,2) stored: mirrored, window 0 (rows 0-7)
# stores columns {0, 8} (row 0), {2} (row 1), {1} (row 2), window 1 (rows 8, 9) column {0}:
# 4 + 1 = 5 condensed columns; 5 entries after mirroring.
MATRIX = """%%MatrixMarket matrix coordinate pattern symmetric
% crafted for the roofline test
10 10 3
1 1
9 1
3 2
"""


def row(matrix, n, precision, spade_ms, base_ms, tiled_ms="", check="ok"):
    return {"matrix": matrix, "rows": 100, "cols": 100, "nnz": 500, "n": n,
            "precision": precision, "spade_kernel": "gcoo_spmm", "spade_ms_median": spade_ms,
            "baseline_ms_median": base_ms, "copy_gbps": 4000, "tiled_kernel_ms": tiled_ms,
            "memory": "l2-resident", "check": check, "operation": "spmm"}


class Roofline(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.path = Path(self.dir.name)
        with open(self.path / "run.csv", "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=FIELDS)
            w.writeheader()
            w.writerow(row("tiny", 32, "fp32", 0.01, 0.02, 0.04))
            w.writerow(row("tiny", 128, "fp32", 0.01, 0.02))
            w.writerow(row("wrong", 32, "fp32", 0.01, 0.02, check="FAILED"))
        with gzip.open(self.path / "tiny.mtx.gz", "wt") as f:
            f.write(MATRIX)

    def tearDown(self):
        self.dir.cleanup()

    def run_script(self, *sources):
        done = subprocess.run([sys.executable, str(SCRIPT), *sources, "--matrices",
                               str(self.path), "--out", str(self.path / "out")],
                              capture_output=True, text=True, timeout=60)
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        return (self.path / "out.md").read_text()

    def product_line(self, text, n):
        lines = [l for l in text.splitlines() if l.startswith(f"| tiny | fp32 | {n} |")]
        self.assertEqual(len(lines), 1, text)
        return [c.strip() for c in lines[0].strip("|").split("|")]

    def test_bytes_flops_roof_and_rates(self):
        cells = self.product_line(self.run_script(str(self.path / "run.csv")), 32)
        # flops 2*500*32 = 32000 (0.000 GFLOP); bytes 500*8 + 101*4 + 200*32*4 = 30004 (0.0 MB);
        # intensity 32000/30004 = 1.0665; roof 1.0665 * 4000 = 4266 GFLOP/s.
        self.assertEqual(cells[4:8], ["0.0", "0.000", "1.07", "4266"])
        # planned 32000 flop in 10 us = 3.2 GFLOP/s = 0.075 % of the roof; cuSPARSE 1.6, 0.0375 %.
        self.assertEqual(cells[8:13], ["gcoo_spmm", "3", "0.1", "2", "0.0"])
        # gathered 500*32*4 = 64000 B: 64000 / 10 us = 0.0064 TB/s, / 20 us = 0.0032.
        self.assertEqual(cells[13], "0.01 / 0.00")
        # reuse: the row's 500 entries over the file's 5 condensed columns = 100; tiled 0.02/0.04
        # = 0.5 of cuSPARSE; tiled gathered 5*32*4 = 640 B in 40 us.
        self.assertEqual(cells[14:17], ["100.00", "0.50", "0.00"])

    def test_unchecked_rows_are_left_out_and_widths_filter(self):
        text = self.run_script(str(self.path / "run.csv") + ":128")
        self.assertNotIn("| tiny | fp32 | 32 |", text)
        self.assertNotIn("wrong", text)
        cells = self.product_line(text, 128)
        # bytes 500*8 + 404 + 200*128*4 = 106804; flops 128000; intensity 1.1985.
        self.assertEqual(cells[6], "1.20")
        # the summary: one fp32 product at N = 128, smallest and median cuSPARSE time 20 us.
        summary = [l for l in text.splitlines() if l.startswith("| fp32 | 128 | 1 |")]
        self.assertEqual(len(summary), 1, text)
        self.assertTrue(summary[0].rstrip().endswith("| 20.0 / 20.0 |"), summary[0])


if __name__ == "__main__":
    unittest.main()
