// Which bf16 path the target CPU gets (issue 39): AVX512-BF16 dot products
// (vdpbf16ps) where they are faster than f32 FMAs (AMD Zen 4 and later),
// f32 FMAs after widening on Intel (vdpbf16ps at half the FMA rate there)
// and on targets without the instruction; --bf16-dot forces it where the
// target has it and is refused where it does not. Every host checks the
// code generation, whether or not it could run it.
// RUN: rm -rf %t
// RUN: attn-aot %s --target-cpu=znver4 --name=zen4 -o %t | FileCheck %s --check-prefix=TOOL
// RUN: llvm-objdump -d %t/zen4.o | FileCheck %s --check-prefix=DOT
// RUN: attn-aot %s --target-cpu=sapphirerapids --name=spr -o %t
// RUN: llvm-objdump -d %t/spr.o | FileCheck %s --check-prefix=FMA
// RUN: attn-aot %s --target-cpu=sapphirerapids --bf16-dot --name=sprdot -o %t
// RUN: llvm-objdump -d %t/sprdot.o | FileCheck %s --check-prefix=DOT
// RUN: attn-aot %s --target-cpu=znver4 --bf16-dot=false --name=zen4fma -o %t
// RUN: llvm-objdump -d %t/zen4fma.o | FileCheck %s --check-prefix=FMA
// RUN: attn-aot %s --target-cpu=x86-64-v3 --name=avx2 -o %t
// RUN: llvm-objdump -d %t/avx2.o | FileCheck %s --check-prefix=AVX2
// RUN: not attn-aot %s --target-cpu=x86-64-v3 --bf16-dot --name=bad -o %t 2>&1 | FileCheck %s --check-prefix=REFUSED
// TOOL: host code for znver4
// The scores and P·V each on dot products of zmm registers; the P rounded
// to bf16 on the way (vcvtneps2bf16).
// DOT-DAG: vdpbf16ps {{.*}}%zmm
// DOT-DAG: vcvtneps2bf16
// FMA-NOT: vdpbf16ps
// FMA: vfmadd{{[0-9]+}}ps {{.*}}%zmm
// FMA-NOT: vdpbf16ps
// AVX2-NOT: vdpbf16ps
// AVX2: vfmadd{{[0-9]+}}ps {{.*}}%ymm
// AVX2-NOT: vdpbf16ps
// REFUSED: bf16-dot needs AVX512-BF16 (vdpbf16ps), which the target CPU lacks

func.func @f(%q: tensor<1x2x128x64xbf16>, %k: tensor<1x2x128x64xbf16>, %v: tensor<1x2x128x64xbf16>) -> tensor<1x2x128x64xbf16> {
  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<top_left>} : (tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>) -> tensor<1x2x128x64xbf16>
  return %o : tensor<1x2x128x64xbf16>
}
