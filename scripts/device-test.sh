#!/usr/bin/env bash
# On the GPU machine, from the repository root, with .deps carried (scripts/make-deps.sh makes
# it on the workstation). Runs the build, every cpu and gpu test, compute-sanitizer for the named
# test families, a benchmark set, and bench/compare.py against the committed baselines. It ends
# with one summary block, printed last and also written to $OUT/summary.txt:
#
#   scripts/device-test.sh [--sanitize FAMILIES] [--bench quick|full|none] [--baseline DIR]
#                          [--jobs N] [--time-limit SECONDS] [--no-ctest]
#
#   --sanitize    comma list of tests/gpu suites (build-dev/tests/gpu_test_gpu_<family>) to run
#                 under compute-sanitizer memcheck and racecheck: tiled, spgemm, ellr, gcoo (with
#                 gcoo_spmm), formats, expressions, vendor, any other suite name, all, or none
#                 (default none). These runs read the small tests/data/matrices and set
#                 SPADE_SKIP_TALL=1, because the million-row cases take too long under the tools.
#   --bench       quick (default: scripts/bench.sh's quick sets), full (the full sets, which
#                 take many minutes), none. fp32 and fp64 both run (SPADE_BENCH_DOUBLE=1).
#   --baseline    folder of baseline CSVs for bench/compare.py (docs/benchmarks/baselines)
#   --jobs        ctest -j (default 4)
#   --no-ctest    leave ctest out (a second call on the still-warm machine, after one that built
#                 and ran ctest, then runs the sanitizers and benchmarks with SPADE_PREBUILT=1:
#                 one call of build + ctest + sanitizers + benchmarks does not fit 10 minutes)
#   --time-limit  stop starting steps once this many seconds are used, with 20 s kept back for
#                 the summary; a step cut short or skipped fails the run. Use it when the machine
#                 kills commands after a fixed time, so that the summary still gets printed.
#
# Environment: OUT (default /tmp/spade-out), SPADE_COMMIT (when the tree has no .git),
# SPADE_PREBUILT=1 (use the carried build-dev and skip configure + build), SPADE_CMAKE_ARGS,
# SPADE_CTEST_ARGS, SPADE_SKIP_TALL, and scripts/bench.sh's SPADE_BENCH_RUNS / _N / _DOUBLE.
# Exits 1 when the summary says FAIL. Logs, the bench CSVs included, go to $OUT/logs.tar.gz.
# The device returns only 8 files from $OUT, so $OUT ends up holding two: summary.txt and the
# tar.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

sanitize=none bench=quick baseline=docs/benchmarks/baselines jobs=4 limit=0 run_ctest=1
usage() {
  sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
  exit 2
}
while (($#)); do
  case $1 in
    --sanitize) sanitize=${2:?}; shift 2 ;;
    --bench) bench=${2:?}; shift 2 ;;
    --baseline) baseline=${2:?}; shift 2 ;;
    --jobs) jobs=${2:?}; shift 2 ;;
    --time-limit) limit=${2:?}; shift 2 ;;
    --no-ctest) run_ctest=0; shift ;;
    *) usage ;;
  esac
done
[[ $bench =~ ^(quick|full|none)$ && $jobs =~ ^[0-9]+$ && $limit =~ ^[0-9]+$ ]] || usage
[[ $sanitize =~ ^[a-z0-9_,]+$ ]] || usage

out=${OUT:-/tmp/spade-out}
logs=$out/logs
rm -rf "$logs" "$out/summary.txt" "$out/logs.tar.gz"
mkdir -p "$logs"
summary=() reasons=()
note() { summary+=("$*"); }
fail() { reasons+=("$*"); }
say() { echo "device-test [$((SECONDS))s] $*"; }
# Status 124 is timeout's: the step ran out of --time-limit, or had no time left to start.
limited() { ((${1} == 124 && limit > 0)) && echo " (--time-limit: cut short or not started)"; }

# A step's output goes to its log. With --time-limit it runs under timeout; with no time left it
# does not start (status 124, as timeout's).
run_logged() {
  local log=$1
  shift
  if ((limit == 0)); then
    "$@" >"$log" 2>&1
    return
  fi
  local left=$((limit - SECONDS - 20))
  if ((left <= 0)); then
    echo "not started: --time-limit $limit reached" >"$log"
    return 124
  fi
  timeout --kill-after=10 "$left" "$@" >"$log" 2>&1
}

# shellcheck disable=SC2317  # reached through the EXIT trap
finish() {
  local status=0
  ((${#reasons[@]})) && status=1
  local verdict="device-test: PASS"
  if ((status)); then
    local joined
    joined=$(printf '%s; ' "${reasons[@]}")
    verdict="device-test: FAIL (${joined%; })"
  fi
  {
    echo "==== device-test summary ===="
    printf '%s\n' "${summary[@]}"
    echo "$verdict"
    echo "==== end ===="
  } >"$out/summary.txt"
  cp "$out/summary.txt" "$logs/"
  tar czf "$out/logs.tar.gz" -C "$out" logs && rm -rf "$logs"
  echo
  cat "$out/summary.txt"
  exit "$status"
}
trap finish EXIT
trap 'fail "interrupted (signal)"; exit 1' TERM INT

# ---- what runs where ------------------------------------------------------------------------
commit=${SPADE_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
export SPADE_COMMIT=$commit
dirty=""
if git rev-parse --git-dir >/dev/null 2>&1 &&
  [[ -n $(git status --porcelain --untracked-files=no) ]]; then
  dirty=" (the working tree differs from it)"
fi
note "commit: $commit$dirty"
if device=$(nvidia-smi -L 2>&1); then
  while read -r line; do note "device: ${line% (UUID:*}"; done <<<"$device"
else
  note "device: none ($device)"
  fail "no GPU (nvidia-smi -L failed)"
fi
note "options: --sanitize $sanitize --bench $bench --baseline $baseline --jobs $jobs" \
  "--time-limit $limit; SPADE_PREBUILT=${SPADE_PREBUILT:-0}"
export SPADE_MATRIX_DIR=$PWD/.deps/matrices
[[ -d .deps/matrices ]] || fail "no .deps/matrices (run scripts/make-deps.sh and carry .deps)"

# ---- build ----------------------------------------------------------------------------------
ctest_extra=()
if [[ ${SPADE_PREBUILT:-0} == 1 && -d build-dev ]]; then
  # The carried tree records the workstation's absolute paths. Where that source folder does not
  # exist here, a link to this checkout makes those paths resolve.
  src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' build-dev/CMakeCache.txt 2>/dev/null)
  if [[ -n $src && $src != "$PWD" && ! -e $src ]]; then
    mkdir -p "$(dirname "$src")" && ln -s "$PWD" "$src"
  fi
  # compile_fail tests run the workstation's compiler on its include paths, which are not here.
  ctest_extra=(-E '^compile_fail_')
  note "build: prebuilt build-dev carried (no configure or build; compile_fail tests left out)"
else
  if [[ -d .deps/include ]]; then
    # Installed targets may not point into the source tree, so the headers move out of it first.
    deps=/tmp/spade-deps
    rm -rf "$deps" && mkdir -p "$deps" && cp -r .deps/include .deps/lib .deps/share "$deps"/
  else
    fail "no .deps/include (run scripts/make-deps.sh on the workstation and carry .deps)"
    deps=/usr
  fi
  say "configure"
  rm -f build-dev/CMakeCache.txt
  # shellcheck disable=SC2086  # SPADE_CMAKE_ARGS holds several arguments
  if ! run_logged "$logs/configure.log" cmake -S . -B build-dev -G Ninja \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$deps" -DZLIB_ROOT="$deps" \
    -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DSPADE_MATRIX_DIR="$SPADE_MATRIX_DIR" ${SPADE_CMAKE_ARGS:-}; then
    tail -20 "$logs/configure.log"
    note "build: configure failed (logs/configure.log)"
    fail "configure failed"
    exit 1
  fi
  say "build"
  build_start=$SECONDS
  # -k 0: the targets that do build still run, so one broken file does not hide every result.
  if run_logged "$logs/build.log" cmake --build build-dev -j "$(nproc)" -- -k 0; then
    note "build: ok ($((SECONDS - build_start)) s)"
  else
    grep -B2 -A8 -E "error|FAILED" "$logs/build.log" | head -40
    note "build: FAILED ($(grep -c '^FAILED:' "$logs/build.log") targets; logs/build.log)"
    fail "build failed"
  fi
fi
[[ -x build-dev/tools/spade ]] && build-dev/tools/spade device >"$logs/spade-device.txt" 2>&1

# ---- ctest over cpu + gpu -------------------------------------------------------------------
if ((run_ctest == 0)); then
  note "ctest: not run here (--no-ctest)"
else
say "ctest -j $jobs"
test_start=$SECONDS
# shellcheck disable=SC2086  # SPADE_CTEST_ARGS holds several arguments
run_logged "$logs/ctest.log" ctest --test-dir build-dev --output-on-failure -j "$jobs" \
  "${ctest_extra[@]}" ${SPADE_CTEST_ARGS:-}
ctest_status=$?
line=$(grep -E "tests passed|No tests were found" "$logs/ctest.log" | tail -1)
took=$((SECONDS - test_start))
note "ctest: ${line:-no result (exit $ctest_status)} (-j $jobs, $took s)$(limited $ctest_status)"
mapfile -t failed < <(sed -n '/The following tests FAILED:/,$p' "$logs/ctest.log" |
  grep -E '^\s+[0-9]+ - ' | sed 's/^\s*//')
for t in "${failed[@]:0:20}"; do note "ctest failed: $t"; done
((${#failed[@]} > 20)) && note "ctest failed: ... and $((${#failed[@]} - 20)) more (logs/ctest.log)"
# CTest 3.x prints "100% tests passed, 0 tests failed out of N", newer ones "100% tests passed
# out of N" (seen on the device's CMake, 2026-11-24).
if ((ctest_status != 0)) || [[ $line != "100% tests passed"* ]]; then
  fail "ctest"
fi
fi

# ---- compute-sanitizer ----------------------------------------------------------------------
suites=()
IFS=, read -ra families <<<"$sanitize"
for f in "${families[@]}"; do
  case $f in
    none) ;;
    all)
      for t in build-dev/tests/gpu_test_gpu_*; do
        [[ -x $t ]] && suites+=("${t#build-dev/tests/gpu_test_gpu_}")
      done
      ;;
    gcoo) suites+=(gcoo gcoo_spmm) ;;
    *) suites+=("$f") ;;
  esac
done
for s in "${suites[@]}"; do
  bin=build-dev/tests/gpu_test_gpu_$s
  if [[ ! -x $bin ]]; then
    note "sanitize $s: no $bin"
    fail "sanitize $s: not built"
    continue
  fi
  for tool in memcheck racecheck; do
    say "compute-sanitizer --tool $tool $s"
    log=$logs/sanitizer-$tool-$s.log
    # cuSPARSE's own kernels report shared-memory write-write hazards under racecheck (SpGEMM's
    # load_balancing_kernel, SpMV's csrmv_v3_kernel: docs/vendor-bugs.md). racecheck leaves
    # those kernels uninstrumented (every kernel whose name holds "cusparse"), so Spade's kernels
    # in the same test cases are still checked; memcheck runs everything. Test cases named
    # *cuSPARSE* (the forced cusparse_spgemm) stay out of racecheck as before.
    exclude=() tool_args=()
    if [[ $tool == racecheck ]]; then
      exclude=('--test-case-exclude=*cuSPARSE*')
      tool_args=(--kernel-name-exclude kns=cusparse)
    fi
    SPADE_SKIP_TALL=${SPADE_SKIP_TALL:-1} SPADE_MATRIX_DIR=$PWD/tests/data/matrices \
      run_logged "$log" compute-sanitizer --tool "$tool" "${tool_args[@]}" --error-exitcode 9 \
      --report-api-errors no "$bin" "${exclude[@]}"
    rc=$?
    found=$(grep -hE 'ERROR SUMMARY|RACECHECK SUMMARY|test cases:' "$log" | sed 's/^=* *//' |
      tr -s ' ' | awk '{ printf "%s%s", (NR > 1 ? " :: " : ""), $0 }')
    note "sanitize $tool $s: exit $rc :: ${found:-no summary line}$(limited $rc)"
    ((rc != 0)) && fail "$tool $s (exit $rc)"
  done
done

# ---- benchmarks and the regression gate -----------------------------------------------------
if [[ $bench != none ]]; then
  say "benchmarks ($bench)"
  [[ $bench == full ]] && export SPADE_BENCH_QUICK=""
  export SPADE_BENCH_DOUBLE=${SPADE_BENCH_DOUBLE:-1}
  run_logged "$logs/bench.log" bash scripts/bench.sh --run "$logs/bench" \
    --bin build-dev/bench/spade-bench
  bench_status=$?
  # In the order bench.sh ran them: "== spade-bench ARGS: exit RC (log DIR/NAME.log)".
  ran='s/^== spade-bench .* \(log .*\/([^/]+)\.log\)$/\1/p'
  mapfile -t names < <(sed -nE "$ran" "$logs/bench.log")
  for name in "${names[@]}"; do
    log=$logs/bench/$name.log
    [[ -f $log ]] || continue
    # spade-bench's summary in one line: geomean, worst, failures.
    line=$(grep -hE '^(geomean ratio|worst:|failed or error:)' "$log" |
      sed -E 's/ \((baseline|direct)_ms \/ spade_ms, > 1: Spade faster\)//' |
      awk '{ printf "%s%s", (NR > 1 ? " | " : ""), $0 }')
    [[ -n $line ]] && note "bench $name: $line"
    # overhead: one verdict on the +3 us target per case.
    while read -r l; do
      note "bench $name: $l"
    done < <(grep -hE '\(target <= \+3 us\)|planning cost:' "$log" | tr -s ' ')
  done
  # A run that exited non-zero (3: a result failed its check or Spade raised an error).
  failed_run='s/^== spade-bench .*: exit ([1-9][0-9]*) \(log .*\/([^/]+)\.log\)$/\2: exit \1/p'
  while read -r l; do
    note "bench $l"
    fail "benchmark $l"
  done < <(sed -nE "$failed_run" "$logs/bench.log")
  ((bench_status == 124)) && fail "benchmarks cut short by --time-limit"
  if [[ -d $baseline ]] && compgen -G "$logs/bench/*.csv" >/dev/null; then
    say "compare against $baseline"
    run_logged "$logs/compare.log" python3 bench/compare.py "$baseline" "$logs/bench"
    compare_status=$?
    # The per-file lines repeat at the end of the log; take them from there, then the total.
    mapfile -t lines < <(grep -E '^compare' "$logs/compare.log" | awk '!seen[$0]++')
    for l in "${lines[@]}"; do note "$l"; done
    ((compare_status != 0)) && fail "bench/compare.py: regressions or failures (logs/compare.log)"
  else
    note "compare: not run (no baseline folder $baseline or no CSV from the benchmarks)"
    fail "no benchmark comparison"
  fi
fi
exit 0  # finish (the EXIT trap) prints the summary and sets the status
