#!/usr/bin/env bash
# Builds the Matrix Market libFuzzer target with clang (ASan + UBSan) and fuzzes it for $1 seconds.
#
# Usage: scripts/fuzz.sh [seconds=60]. No CMake needed: the binary goes to build-fuzz/, and so
# does any crash, leak or timeout input (crash-*, leak-*, timeout-*). Seeds are the malformed
# corpus of tests/data/malformed plus a few small valid files, copied into a temporary corpus
# folder that is removed afterwards. Exits non-zero when the fuzzer finds anything.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
mkdir -p build-fuzz
clang++ -std=c++20 -O1 -g -DSPADE_HEADER_ONLY -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
  -I include -I /usr/include/eigen3 tests/fuzz/fuzz_matrix_market.cpp \
  -o build-fuzz/fuzz_matrix_market -lz -pthread

corpus=$(mktemp -d)
trap 'rm -rf "$corpus"' EXIT
cp tests/data/malformed/* "$corpus"/
printf '%%%%MatrixMarket matrix coordinate real general\n%% comment\n3 4 5\n1 1 1.5\n3 4 -2e1\n2 2 .25\n1 3 4\n3 1 +7.0\n' >"$corpus/general.mtx"
printf '%%%%MatrixMarket matrix coordinate pattern symmetric\n3 3 3\n2 1\n3 3\n3 1\n' >"$corpus/pattern.mtx"
printf '%%%%MatrixMarket matrix coordinate real skew-symmetric\r\n3 3 2\r\n2 1 3\r\n3 1 -4\r\n' >"$corpus/skew.mtx"
printf '%%%%MatrixMarket matrix coordinate integer general\n2 2 4\n1 2 -7\n\n2 1 12\n1 2 7\n2 2 0\n' >"$corpus/integer.mtx"
printf '%%%%MatrixMarket matrix array real symmetric\n3 3\n1\n2\n4\n3\n0\n6\n' >"$corpus/array.mtx"
printf '%%%%MatrixMarket matrix array integer skew-symmetric\n3 3\n1\n-2\n3' >"$corpus/array_skew.mtx"

./build-fuzz/fuzz_matrix_market -max_total_time="$seconds" -max_len=4096 -timeout=5 \
  -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix=build-fuzz/ "$corpus"
