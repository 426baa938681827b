#!/usr/bin/env bash
# bench/aot/call_bench.c for each T given (default 256 512 1024): compiles
# sdpa (B 1, H 12, D 64, f32, Tq = Tk = T dynamic) with attn-aot, links the
# program against build/'s libattn_aot and libomp, and runs it.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUILD="${ATTN_BUILD:-$ROOT/build}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cat > "$work/sdpa.mlir" <<'MLIR'
func.func @sdpa(%q: tensor<1x12x?x64xf32>, %k: tensor<1x12x?x64xf32>, %v: tensor<1x12x?x64xf32>) -> tensor<1x12x?x64xf32> {
  %o = attn.sdpa %q, %k, %v : (tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32>) -> tensor<1x12x?x64xf32>
  return %o : tensor<1x12x?x64xf32>
}
MLIR
"$BUILD/bin/attn-aot" "$work/sdpa.mlir" --name=sdpa -o "$work" >/dev/null
omp="$(ls /usr/lib/llvm-22/lib/libomp.so)"
cc -O2 -I"$ROOT/include" -I"$work" "$ROOT/bench/aot/call_bench.c" "$work/sdpa.o" \
  -L"$BUILD/lib" -lattn_aot "$omp" -Wl,-rpath,"$BUILD/lib" -Wl,-rpath,"$(dirname "$omp")" \
  -o "$work/call_bench"
ts=("$@")
[ "${#ts[@]}" -gt 0 ] || ts=(256 512 1024)
for t in "${ts[@]}"; do
  "$work/call_bench" "$t" 7 20
done
