#!/usr/bin/env bash
# On the workstation, before a device run: gathers into the ignored .deps/ what the GPU machine
# lacks (it has CUDA, CMake, ninja and python3, but no Debian -dev packages and no ../shared).
# scripts/device-test.sh reads the result there:
#
#   .deps/include   eigen3/Eigen, boost/hana(.hpp), doctest/, zlib.h, zconf.h
#   .deps/lib       libz.a, libz.so*, cmake/doctest/
#   .deps/share     eigen3/cmake/ (Eigen3Config.cmake: find_package(Eigen3) with the prefix .deps)
#   .deps/matrices  the real matrices, *.mtx.gz, from $SPADE_SHARED_MATRICES (../shared/matrices)
#
# The copy is made again from scratch on every run, so running the script twice gives the same
# .deps. The device's working tree (checkout + carried paths) may hold 64 MiB, so the script
# prints what it copied and the total, and copies only what Spade includes (see Hana below).
set -euo pipefail
cd "$(dirname "$0")/.."
deps=.deps
matrices=${SPADE_SHARED_MATRICES:-../shared/matrices}

need() {
  [[ -e $1 ]] && return 0
  echo "make-deps: $1 is missing (Debian package $2; scripts/install-deps.sh installs it)" >&2
  exit 1
}
need /usr/include/eigen3/Eigen/Core libeigen3-dev
need /usr/share/eigen3/cmake/Eigen3Config.cmake libeigen3-dev
need /usr/include/boost/hana.hpp libboost-dev
need /usr/include/doctest/doctest.h doctest-dev
need /usr/lib/cmake/doctest/doctestConfig.cmake doctest-dev
need /usr/include/zlib.h zlib1g-dev
zlib_dir=""
for d in "/usr/lib/$(gcc -dumpmachine 2>/dev/null || echo x86_64-linux-gnu)" /usr/lib64 /usr/lib; do
  [[ -f $d/libz.a ]] && { zlib_dir=$d; break; }
done
[[ -n $zlib_dir ]] || need /usr/lib/x86_64-linux-gnu/libz.a zlib1g-dev
if ! compgen -G "$matrices/*.mtx.gz" >/dev/null; then
  echo "make-deps: no *.mtx.gz in $matrices (set SPADE_SHARED_MATRICES to the folder)" >&2
  exit 1
fi
# The device is x86-64: a library copied from another architecture would not link there.
if [[ $(uname -m) != x86_64 ]]; then
  echo "make-deps: warning: this machine is $(uname -m); the device is x86_64" >&2
fi

# Hana is header-only and includes only itself, except its adapters for other Boost libraries
# (boost/hana/ext/boost/*: Fusion, MPL, Boost.Tuple) and experimental/printable.hpp (Boost.Core),
# which Spade never includes. So boost/hana is copied, not all 160 MB of /usr/include/boost. If
# Spade ever includes another Boost header, say so here rather than fail later on the device.
others=$(grep -rhoE '#include <boost/[^>]+>' include lib tests bench tools examples 2>/dev/null |
  grep -v '<boost/hana' | sort -u || true)
if [[ -n $others ]]; then
  echo "make-deps: Spade includes Boost headers outside Hana; copy them too:" >&2
  echo "$others" >&2
  exit 1
fi

rm -rf "$deps"
mkdir -p "$deps"/include/eigen3 "$deps"/include/boost "$deps"/lib/cmake "$deps"/share/eigen3 \
  "$deps"/matrices

report() {  # what, size of the copy, where it came from
  printf '  %-30s %6s  from %s\n' "$1" "$(du -sh "$deps/$1" | cut -f1)" "$2"
}
echo "make-deps: copying into $PWD/$deps"
# Eigen: the headers and the signature file its config looks for; unsupported/ (3 MB) is not used.
cp -a /usr/include/eigen3/Eigen /usr/include/eigen3/signature_of_eigen3_matrix_library \
  "$deps"/include/eigen3/
report include/eigen3 /usr/include/eigen3
# Eigen3Targets.cmake derives its prefix from its own location (share/eigen3/cmake -> .deps).
cp -a /usr/share/eigen3/cmake "$deps"/share/eigen3/
report share/eigen3/cmake /usr/share/eigen3/cmake
cp -a /usr/include/boost/hana /usr/include/boost/hana.hpp "$deps"/include/boost/
report include/boost /usr/include/boost/hana
cp -a /usr/include/doctest "$deps"/include/
report include/doctest /usr/include/doctest
# Debian's doctestTargets.cmake names the prefix /usr outright; make it relative to the file.
cp -a /usr/lib/cmake/doctest "$deps"/lib/cmake/
# shellcheck disable=SC2016  # the ${...} is CMake's, written as is
relative='get_filename_component(_IMPORT_PREFIX "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)'
sed -i "s|^set(_IMPORT_PREFIX \"/usr\")\$|$relative|" "$deps"/lib/cmake/doctest/doctestTargets.cmake
report lib/cmake/doctest /usr/lib/cmake/doctest
cp -a /usr/include/zlib.h /usr/include/zconf.h "$deps"/include/
# libz.so's soname is libz.so.1, which every Linux has; libz.a is there for static links.
real=$(readlink -f "$zlib_dir/libz.so")
cp "$real" "$deps/lib/$(basename "$real")"
ln -s "$(basename "$real")" "$deps"/lib/libz.so.1
ln -s "$(basename "$real")" "$deps"/lib/libz.so
cp -a "$zlib_dir/libz.a" "$deps"/lib/
printf '  %-30s %6s  from %s\n' "zlib (headers, lib/libz*)" \
  "$(du -shc "$deps"/include/z*.h "$deps"/lib/libz* | tail -1 | cut -f1)" "/usr/include, $zlib_dir"
cp -a "$matrices"/*.mtx.gz "$deps"/matrices/
[[ -f $matrices/README.md ]] && cp -a "$matrices"/README.md "$deps"/matrices/
count=$(find "$deps"/matrices -name '*.mtx.gz' | wc -l)
report matrices "$matrices ($count matrices)"

total_kib=$(du -sk "$deps" | cut -f1)
echo "make-deps: $deps holds $(du -sh "$deps" | cut -f1) (carried to the device: at most 64 MiB" \
  "together with the checkout)"
if ((total_kib > 48 * 1024)); then
  echo "make-deps: warning: over 48 MiB; with the checkout it may not fit the device's 64 MiB" >&2
fi
