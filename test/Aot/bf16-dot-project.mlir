// A bf16 projection takes the target's bf16 path too (issue 39): AVX512-BF16
// dot products for znver4 (and when forced for sapphirerapids), f32 FMAs
// after widening for Intel by default, ymm FMAs for an AVX2 target. Every
// host checks the code generation, whether or not it could run it.
// RUN: rm -rf %t
// RUN: attn-aot %s --target-cpu=znver4 --name=zen4 -o %t
// RUN: llvm-objdump -d %t/zen4.o | FileCheck %s --check-prefix=DOT
// RUN: attn-aot %s --target-cpu=sapphirerapids --name=spr -o %t
// RUN: llvm-objdump -d %t/spr.o | FileCheck %s --check-prefix=FMA
// RUN: attn-aot %s --target-cpu=sapphirerapids --bf16-dot --name=sprdot -o %t
// RUN: llvm-objdump -d %t/sprdot.o | FileCheck %s --check-prefix=DOT
// RUN: attn-aot %s --target-cpu=x86-64-v3 --name=avx2 -o %t
// RUN: llvm-objdump -d %t/avx2.o | FileCheck %s --check-prefix=AVX2
// DOT: vdpbf16ps {{.*}}%zmm
// FMA-NOT: vdpbf16ps
// FMA: vfmadd{{[0-9]+}}ps {{.*}}%zmm
// FMA-NOT: vdpbf16ps
// AVX2-NOT: vdpbf16ps
// AVX2: vfmadd{{[0-9]+}}ps {{.*}}%ymm
// AVX2-NOT: vdpbf16ps

func.func @f(%x: tensor<1x64x768xbf16>, %w: tensor<768x768xbf16>, %b: tensor<768xbf16>) -> tensor<1x64x768xbf16> {
  %y = attn.project %x, %w, %b : (tensor<1x64x768xbf16>, tensor<768x768xbf16>, tensor<768xbf16>) -> tensor<1x64x768xbf16>
  return %y : tensor<1x64x768xbf16>
}
