#!/usr/bin/env bash
# Installs attn-mlir from BUILD into a temporary prefix, builds the
# standalone consumer in examples/embed against it with find_package(AttnMLIR)
# and runs its three programs.
#   usage: run_embed.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
BUILD="$1"
SRC="$2"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

cmake --install "$BUILD" --prefix "$WORK/prefix" >/dev/null
# The package must not point back into the build or source tree.
if grep -rl -e "$BUILD" -e "$SRC/include" "$WORK/prefix/lib/cmake/AttnMLIR"; then
  echo "FAIL: the installed package refers to the build/source tree" >&2
  exit 1
fi
# Nor ship the test-only double-precision reference (test/unit/Reference).
if find "$WORK/prefix" -name 'Reference.h' -o -name '*AttnReference*' | grep . ||
   grep -rl "AttnReference" "$WORK/prefix/lib/cmake/AttnMLIR"; then
  echo "FAIL: the installed package contains the test-only reference" >&2
  exit 1
fi

LAUNCHER=()
if command -v ccache >/dev/null 2>&1; then
  LAUNCHER=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
cmake -G Ninja -S "$SRC/examples/embed" -B "$WORK/build" \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$WORK/prefix" \
  "${LAUNCHER[@]}" >/dev/null
ninja -C "$WORK/build" -j "${ATTN_JOBS:-2}" >/dev/null

echo "--- sdpa-app (compile-and-call)"
"$WORK/build/sdpa-app"
echo "--- capi-example (C API)"
"$WORK/build/capi-example" | tail -2
echo "--- my-opt (pass library)"
"$WORK/build/my-opt" --attn-cpu-pipeline "$SRC/examples/embed/sdpa.mlir" \
  > "$WORK/lowered.mlir"
grep -q "llvm.func @sdpa" "$WORK/lowered.mlir"
if grep -q "attn\." "$WORK/lowered.mlir"; then
  echo "FAIL: attn ops left after attn-cpu-pipeline" >&2
  exit 1
fi
"$WORK/build/my-opt" \
  --pass-pipeline='builtin.module(attn-decompose,attn-fuse,canonicalize)' \
  "$SRC/examples/embed/sdpa.mlir" | grep -c "attn.sdpa"
# An unknown pass is an error with a message, not a crash.
if "$WORK/build/my-opt" --pass-pipeline='builtin.module(attn-nope)' \
     "$SRC/examples/embed/sdpa.mlir" 2> "$WORK/err.txt"; then
  echo "FAIL: my-opt accepted an unknown pass" >&2
  exit 1
fi
grep -q "does not refer to a registered pass" "$WORK/err.txt"

# The package configures for any consumer: one with C++ only (no C, so no
# MPI's C component to find), and one with C only (the AOT runtime's C API).
mkdir -p "$WORK/cxx-only" "$WORK/c-only"
cat > "$WORK/cxx-only/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.20)
project(cxx-only CXX)
set(CMAKE_CXX_STANDARD 17)
find_package(AttnMLIR CONFIG REQUIRED)
find_package(Threads REQUIRED)
add_executable(sdpa-app "$SRC/examples/embed/sdpa-app.cpp")
target_link_libraries(sdpa-app PRIVATE AttnMLIR::Runtime Threads::Threads)
CMAKE
cat > "$WORK/c-only/main.c" <<'CSRC'
#include "attn-c/Aot.h"
#include <stdio.h>
#include <string.h>
int main(void) {
  /* No kernel: refused with a message, through the installed runtime. */
  int status = attn_aot_check(NULL, NULL, 0);
  printf("c-only: status %d: %s\n", status, attn_aot_last_error());
  return status == ATTN_AOT_ERROR_ARGUMENT && strstr(attn_aot_last_error(), "no kernel") ? 0 : 1;
}
CSRC
cat > "$WORK/c-only/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.20)
project(c-only C)
find_package(AttnMLIR CONFIG REQUIRED)
add_executable(aot-check main.c)
target_link_libraries(aot-check PRIVATE AttnMLIR::Aot)
CMAKE
for p in cxx-only c-only; do
  echo "--- $p consumer"
  cmake -G Ninja -S "$WORK/$p" -B "$WORK/$p/build" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_PREFIX_PATH="$WORK/prefix" "${LAUNCHER[@]}" > "$WORK/$p.log" 2>&1 ||
    { cat "$WORK/$p.log"; echo "FAIL: the $p consumer does not configure" >&2; exit 1; }
  ninja -C "$WORK/$p/build" -j "${ATTN_JOBS:-2}" >/dev/null
done
"$WORK/cxx-only/build/sdpa-app" | tail -1
"$WORK/c-only/build/aot-check"
echo "embed-example: OK"
