#!/usr/bin/env bash
# On the lent GPU machine: build with the carried headers (.deps), run every test, then the gpu
# tests under compute-sanitizer (memcheck, racecheck). Logs go to $OUT.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/spade-out}
mkdir -p "$out"
export SPADE_MATRIX_DIR=$PWD/.deps/matrices
# Installed targets may not point into the source tree, so the headers move out of it first.
deps=/tmp/spade-deps
rm -rf "$deps" && mkdir -p "$deps" && cp -r .deps/include .deps/lib .deps/share "$deps"/
nvidia-smi -L
rm -f build-dev/CMakeCache.txt
cmake -S . -B build-dev -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$deps" \
  -DZLIB_ROOT="$deps" -DCMAKE_CUDA_ARCHITECTURES=90 ${SPADE_CMAKE_ARGS:-} >"$out/configure.log" 2>&1 ||
  { tail -30 "$out/configure.log"; exit 1; }
cmake --build build-dev -j "$(nproc)" -- -k 0 >"$out/build.log" 2>&1 || { grep -B2 -A8 -E "error|FAILED" "$out/build.log" | head -60; echo "BUILD FAILED (the targets that built still run)"; }
build-dev/tools/spade device
ctest --test-dir build-dev --output-on-failure -j 4 ${SPADE_CTEST_ARGS:-} >"$out/ctest.log" 2>&1
status=$?
grep -E "tests passed|tests failed|Failed|\*\*\*|Test +#" "$out/ctest.log" | tail -40
# SPADE_SANITIZE: the gpu test executables to run under compute-sanitizer (default: all).
for t in build-dev/tests/gpu_*; do
  [[ -x $t ]] || continue
  if [[ -n ${SPADE_SANITIZE:-} && " $SPADE_SANITIZE " != *" $(basename "$t") "* ]]; then continue; fi
  for tool in memcheck racecheck; do
    SPADE_MATRIX_DIR=$PWD/tests/data/matrices compute-sanitizer --tool $tool --error-exitcode 9 --report-api-errors no \
      "$t" >"$out/sanitizer-$tool-$(basename "$t").log" 2>&1
    echo "compute-sanitizer --tool $tool $(basename "$t"): exit $? :: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|test cases' "$out/sanitizer-$tool-$(basename "$t").log" | tr '\n' ' ')"
  done
done
# Optional benchmarks (docs/benchmarks/README.md): SPADE_BENCH=1 runs spade-bench overhead and the
# quick spmv / spmm / spgemm sets (SPADE_BENCH_QUICK= for the full ones) into $out/bench; bring
# the CSVs back and run `bash scripts/bench.sh --from DIR` on the workstation for plots.
if [[ ${SPADE_BENCH:-0} == 1 ]]; then
  bash scripts/bench.sh --run "$out/bench" --bin build-dev/bench/spade-bench || status=1
fi
exit $status
