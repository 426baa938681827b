#!/usr/bin/env bash
# Set up, build, and run the whole test suite (lit + GoogleTest) with ctest.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$ROOT/scripts/setup.sh"
cd "$ROOT/build"
ctest --output-on-failure -j "${ATTN_JOBS:-2}"
