#!/usr/bin/env bash
# The main job: set up, build the spade tool, and run it (default: spade info on a bundled matrix).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh --target spade_tool
if [[ $# -eq 0 ]]; then
  set -- info tests/data/matrices/cage10.mtx.gz
fi
exec "${SPADE_BUILD_DIR:-build}/tools/spade" "$@"
