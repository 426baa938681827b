#!/usr/bin/env bash
# Set up, build, and run the whole test suite (lit + GoogleTest) with ctest,
# then the sanitizer stage (scripts/sanitize.sh: the suite again under
# ASan+UBSan in build-san/, and a bounded libFuzzer run). ATTN_SANITIZE=0
# skips that stage.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$ROOT/scripts/setup.sh"
cd "$ROOT/build"
ctest --output-on-failure -j "${ATTN_JOBS:-2}"
if [ "${ATTN_SANITIZE:-1}" != 0 ]; then
  "$ROOT/scripts/sanitize.sh"
fi
