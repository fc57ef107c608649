#!/usr/bin/env python3
"""bench/compare.py (the benchmark regression gate) on the crafted CSVs of tests/data/compare.

old.csv -> new.csv holds one row per verdict: steady (no flag), regress (Spade x1.30, baseline
x1.01), machine (x1.30 and x1.15), improved (x0.80, baseline steady), faster_machine (x0.80 and
x0.85), baseline_faster (Spade x1.20 while the baseline got x0.90 faster), kernel_change,
failed (check error in NEW), the same matrix at fp64 and at n = 32 / 128 (keys hold n and
precision), only_old and only_new. new-machine.csv is old.csv with every time x1.2,
new-other-device.csv the same times from an H200, old-no-operation.csv old.csv without its
operation column; multi-old.csv -> multi-new.csv are `spade-bench multi` rows; baselines/ and
run/ are folders as docs/benchmarks/baselines and
`scripts/bench.sh --run` lay them out. Run by CTest as cpu_bench_compare.
"""

import subprocess
import sys
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "compare"


def compare(*args):
    """(exit status, stdout) of bench/compare.py with paths relative to tests/data/compare."""
    argv = [str(DATA / a) if a.endswith(".csv") or a in ("baselines", "run") else a for a in args]
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "compare.py"), *argv],
                          capture_output=True, text=True, timeout=60)
    return done.returncode, done.stdout + done.stderr


def flagged(output, matrix):
    """The table lines of one matrix: verdict, operation, then the matrix column."""
    verdicts = ("FAILED", "REGRESSION", "NOTE")
    return [line for line in output.splitlines()
            if line.startswith(verdicts) and line.split()[2] == matrix]


class Verdicts(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.status, cls.out = compare("old.csv", "new.csv")

    def test_regression_is_flagged_and_fails(self):
        self.assertEqual(self.status, 1, self.out)
        self.assertTrue(flagged(self.out, "regress")[0].startswith("REGRESSION"), self.out)
        # A baseline that got faster cannot explain a slower Spade.
        self.assertRegex(flagged(self.out, "baseline_faster")[0],
                         r"^REGRESSION .*Spade slower, baseline got faster")
        # n is part of the key: only the n = 128 row of "wide" regressed.
        wide = flagged(self.out, "wide")
        self.assertEqual(len(wide), 1, self.out)
        self.assertIn(" 128 ", wide[0])

    def test_steady_rows_are_not_listed(self):
        self.assertEqual(flagged(self.out, "steady"), [], self.out)

    def test_improvement_and_machine_are_notes(self):
        self.assertRegex(flagged(self.out, "improved")[0], r"^NOTE .*IMPROVED")
        self.assertRegex(flagged(self.out, "machine")[0],
                         r"^NOTE .*slower, baseline moved too \(machine\?")
        self.assertRegex(flagged(self.out, "faster_machine")[0],
                         r"^NOTE .*faster, baseline moved too \(machine\?")

    def test_kernel_change_is_a_note(self):
        self.assertRegex(flagged(self.out, "kernel_change")[0],
                         r"^NOTE .*kernel hash_spgemm -> tiled_spgemm")

    def test_failed_row_is_a_failure(self):
        self.assertRegex(flagged(self.out, "failed")[0], r"^FAILED .*check error in NEW")

    def test_rows_in_one_file_are_counted(self):
        self.assertIn("only in OLD (1): only_old", self.out)
        self.assertIn("only in NEW (1): only_new", self.out)

    def test_summary_line_is_last(self):
        self.assertEqual(self.out.strip().splitlines()[-1],
                         "compare: 11 matched, 3 regressions, 4 notes, 1 failures, "
                         "1 only-old, 1 only-new")
        self.assertNotIn("DEVICE DIFFERS", self.out)


class Comparisons(unittest.TestCase):
    def test_baseline_moved_too_is_a_note_and_passes(self):
        status, out = compare("old.csv", "new-machine.csv")
        self.assertEqual(status, 0, out)
        self.assertRegex(flagged(out, "regress")[0], r"^NOTE .*baseline moved too \(machine\?")
        self.assertEqual(out.strip().splitlines()[-1],
                         "compare: 12 matched, 0 regressions, 12 notes, 0 failures, "
                         "0 only-old, 0 only-new")

    def test_device_mismatch_is_loud(self):
        status, out = compare("old.csv", "new-other-device.csv")
        self.assertEqual(status, 0, out)
        self.assertIn("!!! DEVICE DIFFERS: OLD [NVIDIA H100", out)
        self.assertEqual(out.strip().splitlines()[-1],
                         "compare: 12 matched, 0 regressions, 0 notes, 0 failures, "
                         "0 only-old, 0 only-new; DEVICE DIFFERS")

    def test_missing_operation_column_still_matches(self):
        status, out = compare("old-no-operation.csv", "new.csv")
        self.assertEqual(status, 1, out)
        self.assertEqual(out.strip().splitlines()[-1],
                         "compare: 11 matched, 3 regressions, 4 notes, 1 failures, "
                         "1 only-old, 1 only-new")

    def test_thresholds_are_options(self):
        # At 50 % nothing regressed; the failure and the kernel change remain.
        status, out = compare("old.csv", "new.csv", "--threshold", "0.5")
        self.assertEqual(status, 1, out)
        self.assertEqual(out.strip().splitlines()[-1],
                         "compare: 11 matched, 0 regressions, 1 notes, 1 failures, "
                         "1 only-old, 1 only-new")

    def test_folders_pair_files_by_benchmark(self):
        status, out = compare("baselines", "run")
        self.assertEqual(status, 0, out)
        lines = out.strip().splitlines()
        # spmv.csv (fp32) meets spmv-real.csv; the fp64 baseline belongs to spmv-fp64.csv.
        self.assertIn("== spmv.csv vs spmv-real.csv", out)
        self.assertIn("compare spmv.csv: 2 matched, 0 regressions, 0 notes, 0 failures, "
                      "1 only-old, 1 only-new", lines)
        # Overhead CSVs compare host_us_held of both sides per case.
        self.assertRegex(out, r"\nNOTE +overhead +y = A\*x \(csr 1000x1000, 5/row\) .*IMPROVED")
        self.assertEqual(lines[-1], "compare: 5 matched, 0 regressions, 1 notes, 0 failures, "
                                    "1 only-old, 1 only-new")

    def test_multi_rows_hold_the_single_gpu_product_as_baseline(self):
        # multi-old.csv -> multi-new.csv: rmat_22 SpMM8 on 2 GPUs x1.25 with its single-GPU
        # product steady, the stencil's x1.25 with its single-GPU product x1.24; SpMV and the
        # weak-scaling row (no single-GPU time) steady; the projected row left out.
        status, out = compare("multi-old.csv", "multi-new.csv")
        self.assertEqual(status, 1, out)
        self.assertRegex(flagged(out, "rmat_22")[0],
                         r"^REGRESSION +spmm8 +rmat_22 +2 GPU fp64 .*baseline steady")
        self.assertEqual(len(flagged(out, "rmat_22")), 1, out)
        self.assertRegex(flagged(out, "stencil27_200^3")[0], r"^NOTE .*baseline moved too")
        self.assertEqual(flagged(out, "stencil27_200^2x400"), [], out)
        self.assertEqual(out.strip().splitlines()[-1],
                         "compare: 5 matched, 1 regressions, 1 notes, 0 failures, "
                         "0 only-old, 0 only-new")

    def test_bad_arguments(self):
        status, out = compare("old.csv", "missing.csv")
        self.assertEqual(status, 2, out)


if __name__ == "__main__":
    unittest.main(verbosity=2)
