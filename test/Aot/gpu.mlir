// The gpu pipeline ahead of time: one variant per chip, each a fatbin with
// the chip's cubin and its PTX (for newer chips, compiled by the driver),
// embedded in the object with host code for a generic x86-64 that launches
// them through libattn_aot's mgpu* functions.
// REQUIRES: ptxas
// RUN: rm -rf %t && attn-aot %s --pipeline=gpu --gpu-chips=sm_80,sm_90 --name=gqa -o %t | FileCheck %s --check-prefix=TOOL
// RUN: %python %S/fatbin_entries.py %t/gqa.sm_80.fatbin | FileCheck %s --check-prefix=SM80
// RUN: %python %S/fatbin_entries.py %t/gqa.sm_90.fatbin | FileCheck %s --check-prefix=SM90
// RUN: llvm-nm --defined-only --extern-only %t/gqa.o | FileCheck %s --check-prefix=NM
// RUN: llvm-nm --undefined-only %t/gqa.o | FileCheck %s --check-prefix=UNDEF
// RUN: FileCheck %s --input-file=%t/gqa.h --check-prefix=HEADER
// The fatbins are in the object, byte for byte.
// RUN: %python -c "import sys; o = open('%t/gqa.o','rb').read(); sys.exit(not all(open('%t/gqa.%%s.fatbin' %% c,'rb').read() in o for c in ('sm_80','sm_90')))"
// --device-resident: inputs and outputs are device buffers, the host code
// copies nothing.
// RUN: attn-aot %s --pipeline=gpu --gpu-chips=sm_90 --device-resident --name=resident -o %t > /dev/null
// RUN: FileCheck %s --input-file=%t/resident.h --check-prefix=RESIDENT
// RUN: llvm-nm --undefined-only %t/resident.o | FileCheck %s --check-prefix=RESIDENT-UNDEF
// --tf32: f32 attention takes the tensor-core kernel with TF32 operands, and
// the header says so.
// RUN: attn-aot %S/../GPU/Inputs/tensor_core_tf32.mlir --entry=f32_d64_causal --pipeline=gpu --gpu-chips=sm_80 --tf32 --name=tf32 -o %t > /dev/null
// RUN: FileCheck %s --input-file=%t/tf32.h --check-prefix=TF32
// The host code is generic x86-64: no AVX in it.
// RUN: llvm-objdump -d %t/gqa.o | FileCheck %s --check-prefix=ASM

// TOOL: attn-aot: {{.*}}gqa.o ({{[0-9]+}} bytes, host code for x86-64), sm_80 {{[0-9]+}} bytes, sm_90 {{[0-9]+}} bytes
// SM80: ELF sm_80
// SM80-NEXT: PTX sm_80
// SM90: ELF sm_90
// SM90-NEXT: PTX sm_90
// NM: gqa_kernel
// NM-NOT: {{.}}
// UNDEF-DAG: mgpuLaunchKernel
// UNDEF-DAG: mgpuModuleLoad
// UNDEF-DAG: mgpuMemcpy
// HEADER: pipeline gpu, host code for x86-64, GPU variants sm_80 sm_90.
// RESIDENT: GPU variants sm_90, device-resident (inputs and outputs are CUDA device buffers).
// TF32: GPU variants sm_80, f32 attention with head dims 64/128 on tensor cores with TF32 operands.
// RESIDENT-UNDEF: mgpuLaunchKernel
// RESIDENT-UNDEF: mgpuMemAlloc
// RESIDENT-UNDEF-NOT: mgpuMemcpy
// ASM-NOT: {{[xy]}}mm{{[0-9]+}}{{.*}}v{{add|mul|fmadd}}

func.func @f(%q: tensor<?x8x?x64xf16>, %k: tensor<?x2x?x64xf16>,
             %v: tensor<?x2x?x64xf16>) -> tensor<?x8x?x64xf16> {
  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<bottom_right>}
      : (tensor<?x8x?x64xf16>, tensor<?x2x?x64xf16>, tensor<?x2x?x64xf16>)
        -> tensor<?x8x?x64xf16>
  return %o : tensor<?x8x?x64xf16>
}
