#!/usr/bin/env python3
"""A user file compiles only what depends on its expressions: the planned products and sums of
storage operands (planned_product, planned_sum, explain_choice; include/spade/eval/instances.hpp)
come from the library. Compiles a small user file with g++ -O2 and reads its symbols with nm:
each such symbol must be undefined there (a call into the library). The same file compiled with
-DSPADE_HEADER_ONLY, where the extern declarations are off, must define them: the control that
shows this check can fail. Also checks, at -O0, that no spade function returning a dense Eigen
object is called from the library (its allocator depends on the user's flags: 40d512e); the
check was seen failing with to_eigen(vector) made extern again. Run by CTest as
cpu_user_instances.

usage: test_user_instances.py COMPILER INCLUDE_DIR[|INCLUDE_DIR...]
"""

import subprocess
import sys
import tempfile
from pathlib import Path

USER_FILE = r"""
#include <spade/spade.hpp>
template <class S>
float use(const spade::csr<float, S>& a, const spade::dense<float, S>& d,
          const spade::vector<float, S>& x) {
  spade::dense<float, S> c = a * d;
  spade::dense<float, S> e = 2.0f * (a * d) + c;
  spade::vector<float, S> y = a * x;
  spade::csr<float, S> s = a + a;
  spade::dense<float, S> f = d - 0.5f * d;
  // Dense Eigen objects are made in the user's file, never in the library (see below).
  const auto dense_copy = spade::to_eigen(d);
  const auto vector_copy = spade::to_eigen(y);
  return static_cast<float>(spade::explain(a * d).size() + c.rows() + e.rows() + y.size() +
                            s.nnz() + f.rows()) +
         dense_copy.sum() + vector_copy.sum();
}
template float use<spade::cpu>(const spade::csr<float, spade::cpu>&,
                               const spade::dense<float, spade::cpu>&,
                               const spade::vector<float, spade::cpu>&);
template float use<spade::gpu>(const spade::csr<float, spade::gpu>&,
                               const spade::dense<float, spade::gpu>&,
                               const spade::vector<float, spade::gpu>&);
"""

PLANNED = ("spade::detail::planned_product<", "spade::detail::planned_sum<",
           "spade::detail::explain_choice<")
# A conversion returning a dense Eigen object must not come from the library: Eigen allocates it
# with an allocator that depends on the flags (-mavx, -fsanitize=address), so one allocated by
# the library and freed by a user's file built with other flags goes to the wrong free.
DENSE_EIGEN = ("Eigen::Matrix<", "Eigen::Array<")


def planned_symbols(compiler, include_flags, extra, work, prefixes=PLANNED):
    """(kind, name) of every symbol of the user file's object whose name (after its return
    type, if any) starts with one of `prefixes`, kind as nm prints it."""
    source = work / "user.cpp"
    source.write_text(USER_FILE)
    obj = work / ("user%s.o" % "".join(flag.replace("-", "_") for flag in extra))
    subprocess.run([compiler, "-std=c++20", "-O2", *include_flags, *extra, "-c", str(source),
                    "-o", str(obj)], check=True, timeout=600)
    listing = subprocess.run(["nm", "-C", str(obj)], check=True, capture_output=True,
                             text=True, timeout=60).stdout
    found = []
    for line in listing.splitlines():
        parts = line.split(None, 2) if line[:1] != " " else ["", *line.split(None, 1)]
        if len(parts) < 3:
            continue
        kind, name = parts[1], parts[2]
        if name.startswith(prefixes) or any(" " + p in name for p in prefixes):
            found.append((kind, name))
    return found


def dense_eigen_calls(symbols):
    """The spade functions returning a dense Eigen object that the user file calls (kind U)."""
    return [name for kind, name in symbols
            if kind == "U" and name.startswith(DENSE_EIGEN) and " spade::" in name]


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    compiler = sys.argv[1]
    include_flags = ["-I" + d for d in sys.argv[2].split("|") if d]
    failures = []
    with tempfile.TemporaryDirectory(prefix="spade-instances-") as tmp:
        work = Path(tmp)
        user = planned_symbols(compiler, include_flags, [], work)
        control = planned_symbols(compiler, include_flags, ["-DSPADE_HEADER_ONLY"], work)
        # -O0 keeps every called function a symbol (at -O2 the small ones are inlined).
        eigen = planned_symbols(compiler, include_flags, ["-O0"], work, DENSE_EIGEN)
    calls = [name for kind, name in user if kind == "U"]
    compiled = [name for kind, name in user if kind != "U"]
    if not calls:
        failures.append("the user file calls no planned product or sum (the probe is stale)")
    for name in compiled:
        failures.append("compiled in the user file, not taken from the library: " + name[:300])
    for name in dense_eigen_calls(eigen):
        failures.append("a dense Eigen object comes from the library: " + name[:300])
    if not any(name.startswith(DENSE_EIGEN) and "spade::to_eigen" in name for _, name in eigen):
        failures.append("the user file's to_eigen of a dense matrix or vector left no symbol "
                        "(the Eigen check is stale)")
    if not any(kind != "U" for kind, _ in control):
        failures.append("with -DSPADE_HEADER_ONLY the user file defines no planned product or "
                        "sum: this check could not fail")
    print("user file: %d planned symbols called from the library, %d compiled in it; "
          "header-only control: %d compiled" %
          (len(calls), len(compiled), sum(kind != "U" for kind, _ in control)))
    for failure in failures:
        print("FAIL: " + failure)
    print("%d passed, %d failed" % (1 if not failures else 0, 1 if failures else 0))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
