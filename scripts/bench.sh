#!/usr/bin/env bash
# Benchmarks (docs/benchmarks/README.md). Three modes:
#
#   scripts/bench.sh --run OUTDIR [--bin PATH]   run spade-bench (needs a GPU): OUTDIR/<name>.csv
#                                                and OUTDIR/<name>.log per benchmark
#   scripts/bench.sh --from DIR [--date DATE]    on the workstation, once the CSVs are back:
#                                                docs/benchmarks/<name>-<DATE>.csv, .png and .md
#   scripts/bench.sh                             both, on a machine with a GPU (builds build-bench)
#
# --run reads: SPADE_BENCH_RUNS (default "overhead spmv spmm spgemm tiled"), SPADE_BENCH_QUICK
# (default --quick; set it empty for the full sets), SPADE_BENCH_N (spmm widths, default
# 32,128), SPADE_BENCH_DOUBLE=1 (fp64 too), SPADE_MATRIX_DIR (real matrices), SPADE_COMMIT
# (default: git rev-parse --short HEAD). --from installs python3-matplotlib with apt if no
# python3 here has matplotlib.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

run_benchmarks() {
  local dir=$1 bin=$2
  mkdir -p "$dir"
  local commit=${SPADE_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
  local quick=${SPADE_BENCH_QUICK---quick}
  local precisions=(fp32)
  [[ ${SPADE_BENCH_DOUBLE:-0} == 1 ]] && precisions+=(fp64)
  local status=0
  for b in ${SPADE_BENCH_RUNS:-overhead spmv spmm spgemm tiled}; do
    for p in "${precisions[@]}"; do
      local args=("$b") name=$b
      case $b in
        overhead) ;;
        spmm) args+=(--n "${SPADE_BENCH_N:-32,128}") ;;
      esac
      [[ -n $quick && $b != overhead ]] && args+=("$quick")
      [[ -n ${SPADE_MATRIX_DIR:-} && $b != overhead ]] && args+=(--matrices "$SPADE_MATRIX_DIR")
      [[ $p == fp64 ]] && { args+=(--double); name=$b-fp64; }
      "$bin" "${args[@]}" --commit "$commit" --csv "$dir/$name.csv" >"$dir/$name.log" 2>&1
      local rc=$?
      ((rc != 0)) && status=1
      echo "== spade-bench ${args[*]}: exit $rc (log $dir/$name.log)"
      # The summary: geomean, worst, failures, device (the per-matrix table is in the log).
      grep -E "^(geomean|  real|worst|failed|device:|commit:)|PASS|MISS|error|FAILED" \
        "$dir/$name.log" | tail -n 14
    done
  done
  return $status
}

find_python() {
  for py in python3 /usr/bin/python3; do
    if command -v "$py" >/dev/null && "$py" -c "import matplotlib" 2>/dev/null; then
      echo "$py"
      return 0
    fi
  done
  echo "installing python3-matplotlib (apt)" >&2
  local sudo=""
  ((EUID != 0)) && sudo=sudo
  $sudo apt-get install -y python3-matplotlib >/dev/null || return 1
  /usr/bin/python3 -c "import matplotlib" && echo /usr/bin/python3
}

plot_results() {
  local dir=$1 date=$2
  local py
  py=$(find_python) || { echo "no python3 with matplotlib" >&2; return 1; }
  mkdir -p docs/benchmarks
  local found=0
  for csv in "$dir"/*.csv; do
    [[ -f $csv ]] || continue
    found=1
    local name
    name=$(basename "$csv" .csv)
    cp "$csv" "docs/benchmarks/$name-$date.csv"
    "$py" bench/plot.py "docs/benchmarks/$name-$date.csv" || return 1
  done
  ((found)) || { echo "no CSV in $dir" >&2; return 1; }
}

mode=all
dir=""
bin=build-bench/bench/spade-bench
date=$(date -u +%Y-%m-%d)
while (($#)); do
  case $1 in
    --run) mode=run; dir=$2; shift 2 ;;
    --from) mode=from; dir=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    --date) date=$2; shift 2 ;;
    *) echo "usage: scripts/bench.sh [--run OUTDIR [--bin PATH] | --from DIR [--date DATE]]" >&2; exit 2 ;;
  esac
done

case $mode in
  run) run_benchmarks "$dir" "$bin" ;;
  from) plot_results "$dir" "$date" ;;
  all)
    if ! cmake -S . -B build-bench -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null ||
      ! cmake --build build-bench --target spade_bench >/dev/null; then
      echo "build failed" >&2
      exit 1
    fi
    dir=build-bench/bench-results
    run_benchmarks "$dir" "$bin"
    status=$?
    plot_results "$dir" "$date" || status=1
    exit $status
    ;;
esac
