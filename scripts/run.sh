#!/usr/bin/env bash
# The main job: set up, build, then compile the bundled GPT-2 small attention
# block (or the example given as $1) through the fused CPU pipeline, run it
# on seeded random inputs, compare it with the unfused reference pipeline and
# time it.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$ROOT/scripts/setup.sh"
EXAMPLE="${1:-$ROOT/examples/gpt2_small_mha.mlir}"
echo "== attn-opt --verify-each --canonicalize $EXAMPLE"
"$ROOT/build/bin/attn-opt" --verify-each --canonicalize "$EXAMPLE"
echo "== attn-run $EXAMPLE --pipeline=cpu --random-inputs --compare-with=reference --repeat=5"
"$ROOT/build/bin/attn-run" "$EXAMPLE" --pipeline=cpu --random-inputs --seed=0 \
  --compare-with=reference --repeat=5
