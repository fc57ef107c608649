#!/usr/bin/env python3
"""bench/explain_diff.py (plans before/after a refactor) on the crafted dumps of
tests/data/explain_diff.

same.txt is old.txt with other command/device/commit lines (not compared): 0 differences.
new.txt changes one plan (cage11's A*B: gcoo_spmm -> cusparse_spmm), drops delaunay_n16's A*A
and adds its A*transpose(A): 3 differences. empty.txt holds no block. preview.txt is a
spade-explain-preview dump of the same blocks: with --chosen, one block chooses another kernel,
one is skipped, three match in full text once the preview line is set aside. Run by CTest as
cpu_explain_diff.
"""

import subprocess
import sys
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "explain_diff"


def explain_diff(*names):
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "explain_diff.py"),
                           *[n if n.startswith("--") else str(DATA / n) for n in names]],
                          capture_output=True, text=True, timeout=60)
    return done.returncode, done.stdout + done.stderr


class ExplainDiff(unittest.TestCase):
    def test_same_plans(self):
        rc, out = explain_diff("old.txt", "same.txt")
        self.assertEqual(rc, 0, out)
        self.assertIn("explain_diff: 0 differences over 5 blocks", out)

    def test_changed_plans(self):
        rc, out = explain_diff("old.txt", "new.txt")
        self.assertEqual(rc, 1, out)
        self.assertIn("DIFFERS      cage11 (real) 39082x39082 nnz 559722 fp32 :: "
                      "A*B, B 32 columns row-major (first)", out)
        self.assertIn("-plan: gcoo_spmm", out)
        self.assertIn("+plan: cusparse_spmm", out)
        self.assertIn("ONLY IN OLD  delaunay_n16 (real) 65536x65536 nnz 393150 fp32 :: A*A", out)
        self.assertIn("ONLY IN NEW  delaunay_n16 (real) 65536x65536 nnz 393150 fp32 :: "
                      "A*transpose(A)", out)
        listed = [line for line in out.splitlines() if line.startswith(("DIFFERS", "ONLY"))]
        self.assertFalse([line for line in listed if "A*x" in line])  # unchanged: not listed
        self.assertIn("explain_diff: 3 differences over 6 blocks", out)

    def test_gzipped_dump(self):
        rc, out = explain_diff("old.txt.gz", "same.txt")
        self.assertEqual(rc, 0, out)
        self.assertIn("explain_diff: 0 differences over 5 blocks", out)

    def test_chosen_against_a_preview(self):
        rc, out = explain_diff("old.txt", "preview.txt", "--chosen")
        self.assertEqual(rc, 1, out)
        self.assertIn("CHOSEN DIFFERS  cage11 (real) 39082x39082 nnz 559722 fp32 :: "
                      "A*B, B 32 columns row-major (first): [] vs ['cusparse_spmm']", out)
        self.assertEqual(out.count("CHOSEN DIFFERS"), 1, out)
        self.assertIn("explain_diff: 1 differences in the chosen kernels over 4 blocks compared "
                      "(1 skipped, 3 of the compared identical in full text)", out)
        rc, out = explain_diff("old.txt", "same.txt", "--chosen")
        self.assertEqual(rc, 0, out)
        self.assertIn("explain_diff: 0 differences in the chosen kernels over 5 blocks compared "
                      "(0 skipped, 5 of the compared identical in full text)", out)

    def test_no_blocks(self):
        rc, out = explain_diff("old.txt", "empty.txt")
        self.assertEqual(rc, 2, out)
        self.assertIn("holds no", out)

    def test_missing_file(self):
        rc, out = explain_diff("old.txt", "absent.txt")
        self.assertEqual(rc, 2, out)


if __name__ == "__main__":
    unittest.main()
