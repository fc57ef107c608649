#!/usr/bin/env python3
"""scripts/check-includes.py (the one-way include graph) on small trees made here: a clean one,
a header including a layer above it, a lib family including another's file, an exception that
no longer occurs, a malformed exceptions file; and on the repository itself. Run by CTest as
cpu_check_includes.
"""

import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "check-includes.py"


def run(root):
    done = subprocess.run([sys.executable, str(SCRIPT), "--root", str(root)],
                          capture_output=True, text=True, timeout=60)
    return done.returncode, done.stdout + done.stderr


def tree(files, exceptions=""):
    base = Path(tempfile.mkdtemp(prefix="spade-includes-"))
    for name, text in files.items():
        (base / name).parent.mkdir(parents=True, exist_ok=True)
        (base / name).write_text(text)
    (base / "scripts").mkdir(exist_ok=True)
    (base / "scripts" / "include-exceptions.txt").write_text(exceptions)
    return base


CLEAN = {
    "include/spade/core/error.hpp": "#pragma once\n",
    "include/spade/formats/csr.hpp": '#include "spade/core/error.hpp"\n',
    "include/spade/eval/evaluate.hpp": '#include "spade/formats/csr.hpp"\n',
    "include/spade/device/kernels.hpp": '#include "spade/eval/evaluate.hpp"\n',
    "include/spade/io/matrix_market.hpp": '#include "spade/cpu/convert.hpp"\n',
    "include/spade/spade.hpp": '#include "spade/io/matrix_market.hpp"\n',
    "lib/kernels/spmv.cu": '#include "detail/checks.hpp"\n#include "kernels/own.cuh"\n',
    "lib/detail/checks.hpp": "#pragma once\n",
}


class CheckIncludes(unittest.TestCase):
    def test_clean_tree(self):
        rc, out = run(tree(CLEAN))
        self.assertEqual(rc, 0, out)
        self.assertIn("check-includes: 0 violation(s), 0 listed", out)

    def test_header_including_a_layer_above(self):
        files = dict(CLEAN)
        files["include/spade/formats/convert.hpp"] = '#include "spade/device/convert.hpp"\n'
        files["include/spade/cpu/eigen.hpp"] = '#include "spade/device/kernels.hpp"\n'
        rc, out = run(tree(files))
        self.assertEqual(rc, 1, out)
        self.assertIn("include/spade/formats/convert.hpp: formats includes device", out)
        self.assertIn("include/spade/cpu/eigen.hpp: cpu includes device", out)  # beside it
        self.assertIn("2 violation(s)", out)

    def test_lib_family_including_another(self):
        files = dict(CLEAN)
        files["lib/kernels/gemm.cu"] = '#include "../vendor/support.cuh"\n'
        files["lib/convert/ellr.cu"] = '#include "kernels/shared.cuh"\n'
        rc, out = run(tree(files))
        self.assertEqual(rc, 1, out)
        self.assertIn("lib/kernels/gemm.cu: relative include of another lib family", out)
        self.assertIn("lib/convert/ellr.cu: lib/convert includes lib/kernels", out)

    def test_listed_exception_and_stale_line(self):
        files = dict(CLEAN)
        files["include/spade/formats/convert.hpp"] = '#include "spade/plan/thresholds.hpp"\n'
        listed = ("# why\ninclude/spade/formats/convert.hpp -> plan  # moves up\n"
                  "include/spade/eval/select.hpp -> device\n")
        rc, out = run(tree(files, listed))
        self.assertEqual(rc, 1, out)
        self.assertNotIn("formats includes plan", out)
        self.assertIn("include-exceptions.txt:3: 'include/spade/eval/select.hpp -> device' no "
                      "longer occurs", out)

    def test_malformed_exceptions(self):
        rc, out = run(tree(CLEAN, "include/spade/formats/convert.hpp plan\n"))
        self.assertEqual(rc, 2, out)

    def test_repository(self):
        rc, out = run(ROOT)
        self.assertEqual(rc, 0, out)


if __name__ == "__main__":
    unittest.main()
