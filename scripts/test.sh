#!/usr/bin/env bash
# Set up, build, and run the whole test suite (lit + GoogleTest) with ctest,
# then the sanitizer stage (scripts/sanitize.sh: the suite again under
# ASan+UBSan in build-san/, and a bounded libFuzzer run). ATTN_SANITIZE=0
# skips that stage.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$ROOT/scripts/setup.sh"
# What the test suite uses beyond the build: PyTorch and NumPy from Debian
# (torch 1.13) run the docs/pytorch.md recipes against attn-run
# (test/Docs/pytorch-recipes.test) and are the expected values of the
# attn_mlir Python package's tests (test/Python, ctest -R python-); the
# tests that need them skip where they are missing.
if [ "${ATTN_TEST_TORCH:-1}" != 0 ]; then
  source "$ROOT/scripts/install-packages.sh"
  install_missing test python3-torch python3-numpy
fi
cd "$ROOT/build"
ctest --output-on-failure -j "${ATTN_JOBS:-2}" | tee ctest.log
# Where the suite's time goes (keep the whole under 30 minutes on 2 cores).
# sed, not head: head exits after ten lines, and sort's SIGPIPE would fail
# the script under pipefail once the list outgrows the pipe's buffer.
echo "test.sh: the ten slowest tests (seconds):"
sed -nE 's/.*Test +#[0-9]+: ([^ ]+) .* ([0-9.]+) sec$/\2 \1/p' ctest.log | sort -rn | sed -n 1,10p
if [ "${ATTN_SANITIZE:-1}" != 0 ]; then
  "$ROOT/scripts/sanitize.sh"
fi
