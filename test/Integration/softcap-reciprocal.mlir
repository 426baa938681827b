// The softcap's tanh divides once per score; the JIT turns that division
// (marked arcp/ninf by the kernel) into a reciprocal estimate plus a Newton
// step instead of a full divide, and the result still matches the
// reference lowering (which computes math.tanh).
// REQUIRES: avx2
// RUN: rm -rf %t && mkdir -p %t
// RUN: attn-run %s --pipeline=cpu --random-inputs --compare-with=reference --dump-object=%t/sc.o | FileCheck %s --check-prefix=OUT
// RUN: llvm-objdump -d %t/sc.o | FileCheck %s --check-prefix=ASM
// OUT-LABEL: attn-run: @sdpa
// OUT: result #0 vs reference: max_abs_error {{[0-9.]+}}e-{{0[6-9]|[1-9][0-9]}}
// The only divides left are the scalar ones of the per-row normalisation.
// ASM-NOT: vdivps
// ASM: vrcp{{(14)?}}ps
// ASM-NOT: vdivps
func.func @sdpa(%q: tensor<1x2x100x64xf32>, %k: tensor<1x2x100x64xf32>,
                %v: tensor<1x2x100x64xf32>) -> tensor<1x2x100x64xf32> {
  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<top_left>, softcap = 0.5 : f32}
      : (tensor<1x2x100x64xf32>, tensor<1x2x100x64xf32>, tensor<1x2x100x64xf32>) -> tensor<1x2x100x64xf32>
  return %o : tensor<1x2x100x64xf32>
}
