// The JIT compiles for the host CPU and its features, not a generic
// x86-64: the target features include AVX2 and FMA, and the object code
// uses 256-bit (or wider) vector registers, which generic x86-64 code never does.
// At O3, which is when LLVM vectorises this loop: not under the sanitizer
// stage's ATTN_MAX_OPT_LEVEL cap.
// REQUIRES: avx2, fma
// RUN: rm -rf %t && mkdir -p %t
// RUN: env -u ATTN_MAX_OPT_LEVEL attn-run %s --random-inputs --json --dump-object=%t/jit.o | FileCheck %s --check-prefix=JSON
// JSON: "cpu": "{{[a-z0-9_-]+}}"
// JSON-NOT: "cpu": "generic"
// JSON-NOT: "cpu": "x86-64"
// JSON: "cpu_features": "{{.*}}+avx2
// RUN: llvm-objdump -d %t/jit.o | FileCheck %s --check-prefix=ASM
// ASM: {{v[a-z0-9]+ps}}{{.*}}%{{[yz]}}mm
func.func @scale(%s: tensor<1x4x64x64xf32>) -> tensor<1x4x64x64xf32> {
  %0 = attn.scale %s {scale = 0.125 : f32} : tensor<1x4x64x64xf32>
  return %0 : tensor<1x4x64x64xf32>
}
