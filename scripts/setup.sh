#!/usr/bin/env bash
# Installs what is missing (Debian 12, as root), then configures and builds
# attn-mlir incrementally into build/. Sourced by run.sh and test.sh.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="$ROOT/build"
LLVM_PREFIX=/usr/lib/llvm-22

PACKAGES=(g++ clang-22 cmake ninja-build python3
          libmlir-22-dev mlir-22-tools llvm-22-dev llvm-22-tools
          libomp-22-dev googletest libgtest-dev
          # ring attention over MPI (libattn_mpi, attn-run --pipeline=ring)
          libopenmpi-dev openmpi-bin
          # the attn_mlir Python package (python/) and its tests
          pybind11-dev python3-dev python3-numpy python3-pytest)

source "$ROOT/scripts/install-packages.sh"
install_missing setup "${PACKAGES[@]}"

LAUNCHER=()
if command -v ccache >/dev/null 2>&1; then
  LAUNCHER=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi

# clang-22: with it the build precompiles the upstream MLIR headers once
# (ATTN_PCH, docs/design.md "The build"), which g++ cannot do to any gain;
# the sanitizer build (scripts/sanitize.sh) uses it too.
if [ ! -f "$BUILD/build.ninja" ]; then
  CC=clang-22 CXX=clang++-22 cmake -G Ninja -S "$ROOT" -B "$BUILD" \
    -DCMAKE_BUILD_TYPE=Release \
    -DMLIR_DIR="$LLVM_PREFIX/lib/cmake/mlir" \
    -DLLVM_EXTERNAL_LIT="$LLVM_PREFIX/bin/lit" \
    "${LAUNCHER[@]}"
fi
# Two cores, 24 GiB: two compile jobs at a time.
ninja -C "$BUILD" -j "${ATTN_JOBS:-2}"
