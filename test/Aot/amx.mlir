// The AMX path's code for named CPUs (issue 39): with --amx, a bf16
// prefill tile multiplies on tdpbf16ps for Sapphire Rapids, its tiles
// configured once per function (ldtilecfg) and released (tilerelease),
// at every optimisation level. Without --amx ahead-of-time code keeps
// its FMAs (the program linking the objects must first ask Linux for the
// AMX state: docs/cpu.md, "AMX tiles"); a CPU without AMX-BF16 refuses
// it. Every host checks this code generation, whether or not it has AMX.
// RUN: rm -rf %t
// RUN: attn-aot %s --target-cpu=sapphirerapids --amx --name=spr -o %t | FileCheck %s --check-prefix=TOOL
// RUN: llvm-objdump -d %t/spr.o | FileCheck %s --check-prefix=AMX
// RUN: env ATTN_MAX_OPT_LEVEL=0 attn-aot %s --target-cpu=sapphirerapids --amx --name=spr0 -o %t
// RUN: llvm-objdump -d %t/spr0.o | FileCheck %s --check-prefix=AMX
// RUN: attn-aot %s --target-cpu=graniterapids --amx --name=gnr -o %t
// RUN: llvm-objdump -d %t/gnr.o | FileCheck %s --check-prefix=AMX
// A bf16 projection takes the tiles too (blocks of 16 rows on two sum
// tiles).
// RUN: attn-aot %s --entry=p --target-cpu=sapphirerapids --amx --name=sprp -o %t
// RUN: llvm-objdump -d %t/sprp.o | FileCheck %s --check-prefix=AMX
// f16: on tdpfp16ps where the target has AMX-FP16 (Granite Rapids), on
// f32 FMAs where it has only AMX-BF16 (Sapphire Rapids).
// RUN: attn-aot %s --entry=h --target-cpu=graniterapids --amx --name=gnrh -o %t
// RUN: llvm-objdump -d %t/gnrh.o | FileCheck %s --check-prefix=FP16
// RUN: attn-aot %s --entry=h --target-cpu=sapphirerapids --amx --name=sprh -o %t
// RUN: llvm-objdump -d %t/sprh.o | FileCheck %s --check-prefix=NOFP16
// FP16: tdpfp16ps %tmm{{[0-7]}}, %tmm{{[0-7]}}, %tmm{{[0-7]}}
// NOFP16-NOT: tdp
// NOFP16: vfmadd{{[0-9]+}}ps {{.*}}%zmm
// NOFP16-NOT: tdp
// RUN: attn-aot %s --target-cpu=sapphirerapids --name=sprfma -o %t
// RUN: llvm-objdump -d %t/sprfma.o | FileCheck %s --check-prefix=FMA
// RUN: not attn-aot %s --target-cpu=znver4 --amx --name=bad -o %t 2>&1 | FileCheck %s --check-prefix=REFUSED
// RUN: not attn-aot %s --target-cpu=x86-64-v3 --amx --name=bad -o %t 2>&1 | FileCheck %s --check-prefix=REFUSED
// TOOL: host code for sapphirerapids
// AMX: ldtilecfg
// AMX-DAG: tileloadd
// AMX-DAG: tdpbf16ps %tmm{{[0-7]}}, %tmm{{[0-7]}}, %tmm{{[0-7]}}
// AMX-DAG: tilestored
// AMX: tilerelease
// FMA-NOT: tdpbf16ps
// FMA: vfmadd{{[0-9]+}}ps {{.*}}%zmm
// FMA-NOT: tdpbf16ps
// REFUSED: amx needs AMX-BF16 (tdpbf16ps), which the target CPU lacks

func.func @f(%q: tensor<1x2x128x64xbf16>, %k: tensor<1x2x128x64xbf16>, %v: tensor<1x2x128x64xbf16>) -> tensor<1x2x128x64xbf16> {
  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<top_left>} : (tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>) -> tensor<1x2x128x64xbf16>
  return %o : tensor<1x2x128x64xbf16>
}

func.func @h(%q: tensor<1x2x128x64xf16>, %k: tensor<1x2x128x64xf16>, %v: tensor<1x2x128x64xf16>) -> tensor<1x2x128x64xf16> {
  %o = attn.sdpa %q, %k, %v : (tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16>) -> tensor<1x2x128x64xf16>
  return %o : tensor<1x2x128x64xf16>
}

func.func @p(%x: tensor<1x40x320xbf16>, %w: tensor<64x320xbf16>, %b: tensor<64xbf16>) -> tensor<1x40x64xbf16> {
  %y = attn.project %x, %w, %b : (tensor<1x40x320xbf16>, tensor<64x320xbf16>, tensor<64xbf16>) -> tensor<1x40x64xbf16>
  return %y : tensor<1x40x64xbf16>
}
