#!/usr/bin/env bash
# Configures (once) and builds optistep in build/ (Release). Quick when up to date.
# Usage: scripts/build.sh [cmake --build arguments, e.g. --target optistep]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
if [[ ! -f "$root/build/CMakeCache.txt" ]]; then
  cmake -S "$root" -B "$root/build" -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
cmake --build "$root/build" --parallel "$(nproc)" "$@"
