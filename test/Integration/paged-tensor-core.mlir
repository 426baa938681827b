// Paged K/V in the GPU's tensor-core kernel (docs/gpu.md, "Paged K/V"):
// its cp.async tile loads read the NHD caches in place through the block
// table (SdpaBuffers::keyAt), as the CUDA-core kernel does, instead of the
// kernel being refused for paged caches. f16, blocks of 16, shuffled
// tables with garbage past each length: a prefill chunk (Tq 70: two Q
// blocks of 64, D 64, GQA, lengths 83, 96 = the capacity, and 5: rows
// that see no key give 0) and a decode step (D 128, lengths 47 and 96),
// through gpu-schedule (the kernel's threads in lockstep on the CPU)
// against a NumPy gather and float64 attention.
// REQUIRES: torch
// RUN: rm -rf %t && mkdir -p %t
// RUN: %torch_python %S/Inputs/paged_case.py %t tensor-core
// RUN: attn-run %s --entry=chunk --pipeline=gpu-schedule --input=%t/chunk_q.npy --input=%t/chunk_kc.npy --input=%t/chunk_vc.npy --input=%t/chunk_table.npy --input=%t/chunk_lens.npy --expect=%t/chunk_expect.npy --quiet | FileCheck %s
// RUN: attn-run %s --entry=decode --pipeline=gpu-schedule --input=%t/decode_q.npy --input=%t/decode_kc.npy --input=%t/decode_vc.npy --input=%t/decode_table.npy --input=%t/decode_lens.npy --expect=%t/decode_expect.npy --quiet | FileCheck %s
// CHECK: result #0 vs {{.*}}expect.npy: {{.*}}, ok
// The chunk in f32 with tf32 (TF32 operands, mma.sync m16n8k8; the f16
// values, exact in TF32), at f16's tolerances.
// RUN: attn-run %s --entry=chunk_tf32 --pipeline=gpu-schedule --tf32 --input=%t/chunk_q32.npy --input=%t/chunk_kc32.npy --input=%t/chunk_vc32.npy --input=%t/chunk_table.npy --input=%t/chunk_lens.npy --expect=%t/chunk_expect.npy --atol=1e-3 --rtol=1e-3 --quiet | FileCheck %s
// RUN: attn-opt %s --convert-attn-to-gpu=tf32=true | FileCheck %s --check-prefix=TF32
// TF32-LABEL: func.func @chunk_tf32
// TF32: nvgpu.device_async_copy %{{.*}} : memref<20x16x2x64xf32> to memref<{{.*}}xf32, #gpu.address_space<workgroup>>
// TF32: nvgpu.mma.sync({{.*}}) {mmaShape = [16, 8, 8], tf32Enabled}
// Both take the tensor-core kernel (mma.sync), its K/V copies reading the
// caches: [block, row, K/V head, column].
// RUN: attn-opt %s --convert-attn-to-gpu | FileCheck %s --check-prefix=IR
// IR-LABEL: func.func @chunk
// IR: nvgpu.device_async_copy %{{.*}} : memref<20x16x2x64xf16> to memref<{{.*}}xf16, #gpu.address_space<workgroup>>
// IR: nvgpu.mma.sync
// IR-LABEL: func.func @decode
// IR: nvgpu.device_async_copy %{{.*}} : memref<20x16x2x128xf16> to memref<{{.*}}xf16, #gpu.address_space<workgroup>>
// IR: nvgpu.mma.sync

func.func @chunk(%q: tensor<3x4x70x64xf16>, %kc: tensor<20x16x2x64xf16>, %vc: tensor<20x16x2x64xf16>,
                 %table: tensor<3x6xi32>, %len: tensor<3xi32>) -> tensor<3x4x70x64xf16> {
  %k = attn.gather_pages %kc, %table lengths(%len)
      : (tensor<20x16x2x64xf16>, tensor<3x6xi32>, tensor<3xi32>) -> tensor<3x2x96x64xf16>
  %v = attn.gather_pages %vc, %table lengths(%len)
      : (tensor<20x16x2x64xf16>, tensor<3x6xi32>, tensor<3xi32>) -> tensor<3x2x96x64xf16>
  %o = attn.sdpa %q, %k, %v key_lengths(%len) {causal = #attn.causal<bottom_right>}
      : (tensor<3x4x70x64xf16>, tensor<3x2x96x64xf16>, tensor<3x2x96x64xf16>, tensor<3xi32>)
        -> tensor<3x4x70x64xf16>
  return %o : tensor<3x4x70x64xf16>
}

func.func @decode(%q: tensor<2x4x1x128xf16>, %kc: tensor<20x16x2x128xf16>, %vc: tensor<20x16x2x128xf16>,
                  %table: tensor<2x6xi32>, %len: tensor<2xi32>) -> tensor<2x4x1x128xf16> {
  %k = attn.gather_pages %kc, %table lengths(%len)
      : (tensor<20x16x2x128xf16>, tensor<2x6xi32>, tensor<2xi32>) -> tensor<2x2x96x128xf16>
  %v = attn.gather_pages %vc, %table lengths(%len)
      : (tensor<20x16x2x128xf16>, tensor<2x6xi32>, tensor<2xi32>) -> tensor<2x2x96x128xf16>
  %o = attn.sdpa %q, %k, %v key_lengths(%len) {causal = #attn.causal<bottom_right>}
      : (tensor<2x4x1x128xf16>, tensor<2x2x96x128xf16>, tensor<2x2x96x128xf16>, tensor<2xi32>)
        -> tensor<2x4x1x128xf16>
  return %o : tensor<2x4x1x128xf16>
}

func.func @chunk_tf32(%q: tensor<3x4x70x64xf32>, %kc: tensor<20x16x2x64xf32>, %vc: tensor<20x16x2x64xf32>,
                      %table: tensor<3x6xi32>, %len: tensor<3xi32>) -> tensor<3x4x70x64xf32> {
  %k = attn.gather_pages %kc, %table lengths(%len)
      : (tensor<20x16x2x64xf32>, tensor<3x6xi32>, tensor<3xi32>) -> tensor<3x2x96x64xf32>
  %v = attn.gather_pages %vc, %table lengths(%len)
      : (tensor<20x16x2x64xf32>, tensor<3x6xi32>, tensor<3xi32>) -> tensor<3x2x96x64xf32>
  %o = attn.sdpa %q, %k, %v key_lengths(%len) {causal = #attn.causal<bottom_right>}
      : (tensor<3x4x70x64xf32>, tensor<3x2x96x64xf32>, tensor<3x2x96x64xf32>, tensor<3xi32>)
        -> tensor<3x4x70x64xf32>
  return %o : tensor<3x4x70x64xf32>
}
