// ATTN_MAX_OPT_LEVEL caps the LLVM optimisation level of every compiled
// function (lib/Runtime/Lowering.h, cappedOptLevel): the sanitizer stage
// sets 0, so its JIT runs must give the same values at O0 as at O3 on
// both pipelines, within the usual f32 tolerance of a double reference.
// RUN: rm -rf %t && mkdir -p %t
// RUN: env ATTN_MAX_OPT_LEVEL=0 attn-run %s --pipeline=cpu --random-inputs --seed=3 --compare-with=reference | FileCheck %s
// RUN: env ATTN_MAX_OPT_LEVEL=0 attn-run %s --pipeline=cpu --random-inputs --seed=3 --output=%t/o0.npy --quiet
// RUN: attn-run %s --pipeline=cpu --random-inputs --seed=3 --expect=%t/o0.npy --atol=1e-6 --rtol=1e-5 | FileCheck %s --check-prefix=SAME
// CHECK: result #0 vs reference: max_abs_error {{.*}} max_rel_error {{[0-9]\.[0-9]+e-(0[6-9]|[1-9][0-9])}}
// SAME: result #0 vs {{.*}}o0.npy: max_abs_error {{.*}}, ok
//
// A value other than 0-3 is refused before anything is compiled, by
// attn-run (exit 2) and attn-aot alike; empty is unset.
// RUN: env ATTN_MAX_OPT_LEVEL=4 not attn-run %s --pipeline=cpu --random-inputs 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: env ATTN_MAX_OPT_LEVEL=1x not attn-aot %s -o %t/x.o 2>&1 | FileCheck %s --check-prefix=BADAOT
// RUN: env ATTN_MAX_OPT_LEVEL= attn-run %s --pipeline=reference --random-inputs --quiet
// BAD: ATTN_MAX_OPT_LEVEL='4': expected 0, 1, 2 or 3
// BADAOT: ATTN_MAX_OPT_LEVEL='1x': expected 0, 1, 2 or 3
func.func @attend(%q: tensor<2x4x37x32xf32>, %k: tensor<2x2x53x32xf32>,
                  %v: tensor<2x2x53x32xf32>) -> tensor<2x4x37x32xf32> {
  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<bottom_right>}
      : (tensor<2x4x37x32xf32>, tensor<2x2x53x32xf32>, tensor<2x2x53x32xf32>) -> tensor<2x4x37x32xf32>
  return %o : tensor<2x4x37x32xf32>
}
