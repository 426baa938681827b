// attn-run --vector-width=N sets the fused CPU kernel's f32 lanes per
// vector instead of the host's widest: 8 runs the AVX2 schedule on any
// x86 host (and on an AVX-512 host, 8-lane code only: ymm, no zmm).
// RUN: rm -rf %t && mkdir -p %t
// RUN: attn-run %s --pipeline=cpu --random-inputs --vector-width=8 --compare-with=reference --json --quiet --dump-object=%t/w8.o | FileCheck %s --check-prefix=JSON
// RUN: llvm-objdump -d %t/w8.o | FileCheck %s --check-prefix=YMM
// JSON: "max_abs_error": {{[0-9.]+}}e-{{0[6-9]|[1-9][0-9]}}
// JSON: "vector_width": 8
// YMM-NOT: vfmadd{{[0-9]+}}ps {{.*}}%zmm
// YMM: vfmadd{{[0-9]+}}ps {{.*}}%ymm
//
// A width whose two vectors do not divide tile-k is refused with the
// kernel's rule (exit 2), before anything runs.
// RUN: not attn-run %s --pipeline=cpu --random-inputs --vector-width=3 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: attn-run: convert-attn-to-loops: tile-q must be a positive multiple of 4 and tile-k a positive multiple of 2 x vector-width, got tile-q=64 tile-k=64 vector-width=3
// RUN: not attn-run %s --pipeline=cpu --random-inputs --vector-width=8 --tile-k=24 2>&1 | FileCheck %s --check-prefix=BAD24
// BAD24: got tile-q=64 tile-k=24 vector-width=8
//
// Other pipelines have no such kernel: a warning, and the run goes on.
// RUN: attn-run %s --pipeline=reference --random-inputs --vector-width=8 2>&1 | FileCheck %s --check-prefix=WARN
// WARN: attn-run: warning: --vector-width applies only to --pipeline=cpu, not reference; ignored
// WARN: result #0: float32[1,2,100,64]
func.func @sdpa(%q: tensor<1x2x100x64xf32>, %k: tensor<1x2x100x64xf32>,
                %v: tensor<1x2x100x64xf32>) -> tensor<1x2x100x64xf32> {
  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<top_left>}
      : (tensor<1x2x100x64xf32>, tensor<1x2x100x64xf32>, tensor<1x2x100x64xf32>) -> tensor<1x2x100x64xf32>
  return %o : tensor<1x2x100x64xf32>
}
