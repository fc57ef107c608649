#!/usr/bin/env bash
# Compile time of user files: g++ -O2 -std=c++20 -c on each examples/*.cpp and on
# bench/every_operation.cpp (one TU using every operation of the API), with the include flags of
# the spade target. Prints a markdown table: median wall seconds of RUNS compiles (default 3).
# Target (../shared/BENCHMARKS.md): <= 10 s each.
#
#   bash bench/compile_time.sh [BUILD_DIR]
#
# Include flags come from BUILD_DIR/compile_commands.json (the entry of every_operation.cpp;
# configure with -DCMAKE_EXPORT_COMPILE_COMMANDS=ON) when it exists, else from the source tree
# (include/), Eigen (/usr/include/eigen3 or .deps/include/eigen3) and the directory holding
# boost/hana.hpp. CXX overrides the compiler (default g++), RUNS the repetitions.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-bench}
cxx=${CXX:-g++}
runs=${RUNS:-3}

flags=()
if [[ -f $build/compile_commands.json ]] &&
  grep -q every_operation.cpp "$build/compile_commands.json"; then
  # The -I / -isystem / -D flags of the spade target, as CMake passes them.
  mapfile -t flags < <(python3 - "$build/compile_commands.json" <<'EOF'
import json, shlex, sys
for entry in json.load(open(sys.argv[1])):
    if entry["file"].endswith("every_operation.cpp"):
        words = shlex.split(entry["command"])
        i = 0
        while i < len(words):
            w = words[i]
            if w in ("-isystem", "-I", "-D"):
                print(w); print(words[i + 1]); i += 2; continue
            if w.startswith(("-I", "-D")):
                print(w)
            i += 1
        break
EOF
  )
  source_of_flags="$build/compile_commands.json"
else
  eigen=""
  for d in /usr/include/eigen3 .deps/include/eigen3 /usr/local/include/eigen3; do
    [[ -f $d/Eigen/Core ]] && { eigen=$d; break; }
  done
  hana=""
  for d in /usr/include .deps/include /usr/local/include; do
    [[ -f $d/boost/hana.hpp ]] && { hana=$d; break; }
  done
  [[ -n $eigen && -n $hana ]] || { echo "Eigen or Boost.Hana headers not found" >&2; exit 1; }
  flags=(-I include -isystem "$eigen")
  # /usr/include is searched already; naming it with -isystem reorders it before the C++
  # library's own wrappers (whose #include_next <stdlib.h> then fails).
  [[ $hana == /usr/include ]] || flags+=(-isystem "$hana")
  source_of_flags="explicit paths"
fi

# Each entry: a file, then extra flags (the last one builds the fp32 + fp64 variant). The first
# is the floor every user file pays: a file that only includes <spade/spade.hpp>.
floor=$(mktemp --suffix=.cpp)
printf '#include <spade/spade.hpp>\nint main() {}\n' >"$floor"
entries=("$floor|")
for f in examples/*.cpp bench/every_operation.cpp; do entries+=("$f|"); done
entries+=("bench/every_operation.cpp|-DSPADE_BENCH_BOTH_SCALARS")

echo "compiler: $($cxx --version | head -1); flags: -O2 -std=c++20 -c ${flags[*]} (from $source_of_flags)"
echo "date: $(date -u +%Y-%m-%dT%H:%MZ); host: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) at start; commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
echo "wall: elapsed seconds; cpu: user + sys seconds (less sensitive to a loaded machine); median of $runs"
echo
echo "| file | extra flags | wall s | cpu s | target wall <= 10 s |"
echo "|---|---|---|---|---|"
median() { sort -g | awk '{v[NR]=$1} END {printf "%.1f", (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'; }
status=0
log=$(mktemp)
trap 'rm -f "$log" "$floor"' EXIT
for entry in "${entries[@]}"; do
  f=${entry%%|*}
  extra=${entry#*|}
  walls=()
  cpus=()
  for ((r = 0; r < runs; ++r)); do
    # shellcheck disable=SC2086  # $extra is empty or one flag
    /usr/bin/time -f "%e %U %S" -o "$log" "$cxx" -O2 -std=c++20 "${flags[@]}" $extra -c "$f" -o /dev/null
    read -r e u s <"$log"
    walls+=("$e")
    cpus+=("$(echo "$u + $s" | bc -l)")
  done
  wall=$(printf '%s\n' "${walls[@]}" | median)
  cpu=$(printf '%s\n' "${cpus[@]}" | median)
  verdict=ok
  if (($(echo "$wall > 10" | bc -l))); then verdict=OVER; status=1; fi
  name=$f
  [[ $f == "$floor" ]] && name="(only #include <spade/spade.hpp>)"
  echo "| $name | ${extra:--} | $wall | $cpu | $verdict |"
done
echo
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
exit $status
