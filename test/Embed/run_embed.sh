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
echo "embed-example: OK"
