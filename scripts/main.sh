#!/usr/bin/env bash
# The main job: set up, build the spade tool, and run it (default: time and check A*B for a bundled
# real matrix and a 32-column dense block, with the plan).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh --target spade_tool
if [[ $# -eq 0 ]]; then
  set -- multiply tests/data/matrices/cage10.mtx.gz --dense 32 --check --explain
fi
exec "${SPADE_BUILD_DIR:-build}/tools/spade" "$@"
