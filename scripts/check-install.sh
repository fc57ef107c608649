#!/usr/bin/env bash
# Installs a build of Spade to a scratch prefix and builds a consumer with find_package(spade),
# one of spade::cpu with the CUDA toolkit hidden, and another through add_subdirectory: all must
# compile, link and run.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${1:-build}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cmake --install "$build_dir" --prefix "$scratch/prefix" >/dev/null
# The exported targets name no include directory of the build machine (Hana and Eigen are
# found again by the package config on the consumer's).
if grep -n '"[^"$]*/include' "$scratch"/prefix/lib*/cmake/spade/spadeTargets*.cmake >&2; then
  echo "install check: the exported targets hard-code an include directory (above)" >&2
  exit 1
fi
cmake -S tests/install -B "$scratch/find" -G Ninja -DCMAKE_PREFIX_PATH="$scratch/prefix" >/dev/null
cmake --build "$scratch/find" >/dev/null
"$scratch/find/consumer"
# A program of cpu types only links spade::cpu and needs no CUDA toolkit, even against a CUDA
# build: the toolkit is hidden from this consumer's configure.
cmake -S tests/install -B "$scratch/cpu" -G Ninja -DCMAKE_PREFIX_PATH="$scratch/prefix" \
  -DSPADE_CONSUMER_TARGET=spade::cpu -DCMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit=TRUE >/dev/null
cmake --build "$scratch/cpu" >/dev/null
"$scratch/cpu/consumer"
if grep -qi 'cudart\|cusparse\|cublas' "$scratch/cpu/build.ninja"; then
  echo "install check: the spade::cpu consumer links a CUDA library" >&2
  exit 1
fi
cmake -S tests/install -B "$scratch/sub" -G Ninja -DSPADE_CONSUMER_ADD_SUBDIRECTORY="$PWD" \
  ${SPADE_CMAKE_ARGS:-} >/dev/null
cmake --build "$scratch/sub" --target consumer >/dev/null
"$scratch/sub/consumer"
# As a subdirectory Spade leaves the parent's build type alone and adds no header check.
if grep -q '^CMAKE_BUILD_TYPE:STRING=.\+' "$scratch/sub/CMakeCache.txt"; then
  echo "install check: add_subdirectory(spade) set the parent's CMAKE_BUILD_TYPE" >&2
  exit 1
fi
if grep -q 'spade_header_check' "$scratch/sub/build.ninja"; then
  echo "install check: add_subdirectory(spade) added the header-check target" >&2
  exit 1
fi
echo "install check: find_package(spade) (spade::spade, and spade::cpu without the CUDA toolkit) and add_subdirectory consumers built and ran"
