// The CPU kernel follows the target's vector width: an AVX2 target gets
// 8-lane ymm code, an AVX-512 one 16-lane zmm code, whatever this host has.
// RUN: rm -rf %t && attn-aot %s --target-cpu=x86-64-v3 --name=avx2 -o %t | FileCheck %s --check-prefix=TOOL2
// RUN: llvm-objdump -d %t/avx2.o | FileCheck %s --check-prefix=AVX2
// RUN: attn-aot %s --target-cpu=skylake-avx512 --name=avx512 -o %t | FileCheck %s --check-prefix=TOOL512
// RUN: llvm-objdump -d %t/avx512.o | FileCheck %s --check-prefix=AVX512
// TOOL2: host code for x86-64-v3
// AVX2: vfmadd{{[0-9]+}}ps {{.*}}%ymm
// AVX2-NOT: %zmm
// An AVX2 target packs K with upstream's AVX2 8 x 8 transpose (8 vblendps
// in the packing loop); x86-64 (SSE only) keeps the project's shuffles,
// which LLVM legalises: no AVX instruction at all.
// RUN: llvm-objdump -d %t/avx2.o | FileCheck %s --check-prefix=BLEND
// BLEND-COUNT-8: vblendps
// RUN: attn-aot %s --target-cpu=x86-64 --name=sse -o %t
// RUN: llvm-objdump -d %t/sse.o | FileCheck %s --check-prefix=SSE --implicit-check-not=vblendps --implicit-check-not=%%ymm
// SSE: mulps
// TOOL512: host code for skylake-avx512
// AVX512: vfmadd{{[0-9]+}}ps {{.*}}%zmm

func.func @f(%q: tensor<1x2x128x64xf32>) -> tensor<1x2x128x64xf32> {
  %o = attn.sdpa %q, %q, %q : (tensor<1x2x128x64xf32>, tensor<1x2x128x64xf32>, tensor<1x2x128x64xf32>) -> tensor<1x2x128x64xf32>
  return %o : tensor<1x2x128x64xf32>
}
