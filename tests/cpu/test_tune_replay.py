#!/usr/bin/env python3
"""bench/tune_replay.py on a crafted `spade tune` report: four matrices of one class at N = 4.

a, b and c are fastest on ALG1, d on ALG3; the rules pick ALG3 for all. In-sample each runs its
own fastest: gains 3, 3, 3, 1 (geometric mean 3^(3/4) = 2.280). Held out (halves a, c | b, d):
a and c see b and d, which disagree, so the rules (1); b sees a and c, unanimous ALG1 (3); d
sees a and c too and runs ALG1 at 4 ms for the rules' 1 ms (0.25): (3 · 0.25)^(1/4) = 0.931.
Run by CTest as cpu_tune_replay.
"""

import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

REPORT = """\
float {name}.mtx.gz (100 x 100, 400 entries), class f32.r6.m2.s0.t-
  N = 4: cuSPARSE alg1 {a1} alg2 2.0000 alg3 {a3}, fastest {fast} (the rules' alg3); class X
"""


def report_of(rows):
    return "".join(REPORT.format(name=n, a1=a1, a3=a3, fast=f) for n, a1, a3, f in rows)


def replay(text):
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        f.write(text)
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "tune_replay.py"), f.name],
                          capture_output=True, text=True, timeout=60)
    Path(f.name).unlink()
    return done.returncode, done.stdout + done.stderr


class TuneReplay(unittest.TestCase):
    def test_in_sample_and_held_out(self):
        code, out = replay(report_of([("a", "1.0000", "3.0000", "alg1"),
                                      ("b", "1.0000", "3.0000", "alg1"),
                                      ("c", "1.0000", "3.0000", "alg1"),
                                      ("d", "4.0000", "1.0000", "alg3")]))
        self.assertEqual(code, 0, out)
        self.assertEqual(out.strip(),
                         "float N 2-8: 4 products; in-sample 2.280 (best 3.00, 3 differ from the "
                         "rules); held out, class rule 0.931 (2 differ from the rules; worst: "
                         "0.25, d.mtx.gz N = 4: alg1 for the rules' alg3)")

    def test_a_report_without_times(self):
        code, out = replay("wrote 0 tuned entries\n")
        self.assertEqual(code, 1)
        self.assertIn("no cuSPARSE algorithm times found", out)


if __name__ == "__main__":
    unittest.main()
