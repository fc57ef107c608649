#!/usr/bin/env bash
# Fails when a tracked C++/CUDA source differs from what clang-format (.clang-format) would write.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files '*.hpp' '*.cpp' '*.cu' '*.cuh')
clang-format --dry-run --Werror "${files[@]}"
echo "clang-format: ${#files[@]} files clean"
