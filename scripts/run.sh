#!/usr/bin/env bash
# The main job: set up, build, and run attn-opt on the bundled GPT-2 small
# example (parse, verify, canonicalise).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$ROOT/scripts/setup.sh"
EXAMPLE="${1:-$ROOT/examples/gpt2_small_mha.mlir}"
echo "== attn-opt --verify-each --canonicalize $EXAMPLE"
"$ROOT/build/bin/attn-opt" --verify-each --canonicalize "$EXAMPLE"
echo "== $EXAMPLE: parsed, verified and canonicalised"
