#!/usr/bin/env bash
# One prepared check for a machine with an NVIDIA GPU (and its driver):
#   1. build (or reuse $ATTN_BUILD, default build/),
#   2. check attn-run --pipeline=gpu against the reference pipeline on a few
#      shapes: both causal kinds, T not a multiple of the tile, GQA, D 128, a
#      keep mask,
#   3. time B 4, H 16, D in {64, 128}, T in {1024, 4096, 16384}, causal and
#      not, printing the kernels' TFLOP/s (CUDA events around each launch;
#      4·B·H·T²·D FLOPs, full count also for causal) and the end-to-end time
#      (host<->device copies included).
# Budget: well under 8 minutes on an H200. Output: plain text; the last
# line says PASS or FAIL.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${ATTN_BUILD:-$ROOT/build}"
if [ ! -x "$BUILD/bin/attn-run" ]; then
  "$ROOT/scripts/setup.sh" || { echo "gpu_check: build failed"; exit 1; }
fi
RUN="$BUILD/bin/attn-run"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
date -u +"gpu_check: %Y-%m-%dT%H:%M:%SZ"

# sdpa NAME B H HKV TQ TK D CAUSAL(none|top_left|bottom_right) [MASK]
sdpa() {
  local name=$1 b=$2 h=$3 hkv=$4 tq=$5 tk=$6 d=$7 causal=$8 mask=${9:-}
  local q="tensor<${b}x${h}x${tq}x${d}xf32>" k="tensor<${b}x${hkv}x${tk}x${d}xf32>"
  local attrs="" margs="" mops="" mtypes=""
  [ "$causal" != none ] && attrs="{causal = #attn.causal<$causal>}"
  if [ -n "$mask" ]; then
    margs=", %m: tensor<${b}x1x${tq}x${tk}xi1>"; mops=", %m"; mtypes=", tensor<${b}x1x${tq}x${tk}xi1>"
  fi
  cat > "$WORK/$name.mlir" <<MLIR
func.func @f(%q: $q, %k: $k, %v: $k$margs) -> $q {
  %o = attn.sdpa %q, %k, %v$mops $attrs : ($q, $k, $k$mtypes) -> $q
  return %o : $q
}
MLIR
  echo "$WORK/$name.mlir"
}

json() { python3 -c "import json,sys; d=json.load(sys.stdin); print(d.get('$1'))"; }

status=PASS
echo "== correctness: attn-run --pipeline=gpu vs --compare-with=reference (max rel error <= 1e-4)"
for spec in "causal_tl 2 4 4 100 100 64 top_left" \
            "causal_br 2 4 4 77 130 64 bottom_right" \
            "gqa_d128 1 8 2 129 129 128 none" \
            "keep_mask 2 4 4 65 190 32 none keep" \
            "long_causal 1 2 2 1000 1000 64 top_left"; do
  set -- $spec
  f=$(sdpa "$@")
  out=$("$RUN" "$f" --pipeline=gpu --random-inputs --compare-with=reference --json 2>&1)
  err=$(echo "$out" | json max_rel_error 2>/dev/null)
  ok=$(python3 -c "print('ok' if '$err' not in ('None','') and float('$err') <= 1e-4 else 'FAIL')" 2>/dev/null || echo FAIL)
  [ "$ok" = ok ] || status=FAIL
  printf '%-12s B=%s H=%s Hkv=%s Tq=%s Tk=%s D=%s causal=%s%s: max_rel_error=%s %s\n' "$@" "${9:+ mask=$9}" "$err" "$ok"
  [ "$ok" = ok ] || echo "$out" | tail -3
done

echo "== timing: B=4 H=16, median of 3 runs (kernel TFLOP/s; end-to-end ms incl. copies)"
for d in 64 128; do
  for t in 1024 4096 16384; do
    for causal in none top_left; do
      f=$(sdpa "t_${d}_${t}_${causal}" 4 16 16 $t $t $d $causal)
      out=$(timeout 150 "$RUN" "$f" --pipeline=gpu --random-inputs --repeat=3 --json 2>&1)
      kms=$(echo "$out" | json gpu_kernel_median_ms 2>/dev/null)
      kgf=$(echo "$out" | json gpu_kernel_gflops 2>/dev/null)
      ms=$(echo "$out" | json median_ms 2>/dev/null)
      if [ -z "$kms" ] || [ "$kms" = None ]; then
        status=FAIL
        echo "D=$d T=$t causal=$causal: FAILED: $(echo "$out" | tail -2)"
        continue
      fi
      python3 -c "print('D=%-3d T=%-5d causal=%-8s kernel %9.2f ms  %6.2f TFLOP/s   end-to-end %9.2f ms' % ($d, $t, '$causal', $kms, $kgf / 1000, $ms))"
    done
  done
done
echo "gpu_check: $status"
[ "$status" = PASS ]
