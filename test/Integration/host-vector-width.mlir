// The fused CPU kernel takes the host's widest vectors: on an AVX-512 host
// the JIT lowers with vector-width 16, so the score and P·V microkernels
// are FMAs on 512-bit registers (zmm); small tiles narrow the width until
// tile-k holds two vectors (tile-k 16: 8 lanes, ymm).
// REQUIRES: avx512f
// RUN: rm -rf %t && mkdir -p %t
// RUN: attn-run %s --pipeline=cpu --random-inputs --compare-with=reference --dump-object=%t/wide.o | FileCheck %s --check-prefix=OUT
// RUN: llvm-objdump -d %t/wide.o | FileCheck %s --check-prefix=ZMM
// RUN: attn-run %s --pipeline=cpu --random-inputs --tile-q=8 --tile-k=16 --compare-with=reference --dump-object=%t/narrow.o | FileCheck %s --check-prefix=OUT
// RUN: llvm-objdump -d %t/narrow.o | FileCheck %s --check-prefix=YMM
// OUT-LABEL: attn-run: @sdpa
// OUT: result #0 vs reference: max_abs_error {{[0-9.]+}}e-{{0[6-9]|[1-9][0-9]}}
// ZMM: vfmadd{{[0-9]+}}ps {{.*}}%zmm
// YMM-NOT: vfmadd{{[0-9]+}}ps {{.*}}%zmm
// YMM: vfmadd{{[0-9]+}}ps {{.*}}%ymm
func.func @sdpa(%q: tensor<1x2x100x64xf32>, %k: tensor<1x2x100x64xf32>,
                %v: tensor<1x2x100x64xf32>) -> tensor<1x2x100x64xf32> {
  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<top_left>}
      : (tensor<1x2x100x64xf32>, tensor<1x2x100x64xf32>, tensor<1x2x100x64xf32>) -> tensor<1x2x100x64xf32>
  return %o : tensor<1x2x100x64xf32>
}
