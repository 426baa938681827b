// convert-attn-to-gpu lowers attn.sdpa_grad to two kernel schedules: the
// dK/dV kernel, one block per (batch·K/V head, key tile) with one key per
// thread, and the dQ kernel, one block per (batch·head, Q tile) with one
// query row per thread; the workgroup buffers shrink until they fit 48
// KiB (at D = Dv = 64: 32 threads, steps of 8 rows or keys). What it does
// not take keeps the reference route, with the reason under report-kernel.
// RUN: attn-opt %s --convert-attn-to-gpu --canonicalize | FileCheck %s
// RUN: attn-opt %s --convert-attn-to-gpu=report-kernel=true -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=REMARK

// CHECK-LABEL: func.func @gqa
// The dK/dV kernel: B·Hkv = 4 by ceil(Tk / 32) = 8 blocks.
// CHECK: scf.forall (%{{.*}}, %{{.*}}) in (4, 8) {
// CHECK-DAG: memref.alloca() : memref<64x32xf32, #gpu.address_space<workgroup>>
// CHECK-DAG: memref.alloca() : memref<8x64xf32, #gpu.address_space<workgroup>>
// CHECK: scf.forall (%{{.*}}) in (32) {
// CHECK: } {mapping = [#gpu.thread<x>]}
// CHECK: } {mapping = [#gpu.block<x>, #gpu.block<y>]}
// The dQ kernel: B·H = 16 by ceil(Tq / 32) = 8 blocks.
// CHECK: scf.forall (%{{.*}}, %{{.*}}) in (16, 8) {
// CHECK-DAG: memref.alloca() : memref<64x32xf32, #gpu.address_space<workgroup>>
// CHECK-DAG: memref.alloca() : memref<8x64xf32, #gpu.address_space<workgroup>>
// CHECK: } {mapping = [#gpu.block<x>, #gpu.block<y>]}
// CHECK-NOT: attn.sdpa_grad
func.func @gqa(%q: tensor<2x8x256x64xf32>, %k: tensor<2x2x256x64xf32>,
               %v: tensor<2x2x256x64xf32>, %o: tensor<2x8x256x64xf32>,
               %do: tensor<2x8x256x64xf32>, %lse: tensor<2x8x256xf32>)
    -> (tensor<2x8x256x64xf32>, tensor<2x2x256x64xf32>, tensor<2x2x256x64xf32>) {
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %do, %lse {causal = #attn.causal<top_left>}
      : (tensor<2x8x256x64xf32>, tensor<2x2x256x64xf32>, tensor<2x2x256x64xf32>,
         tensor<2x8x256x64xf32>, tensor<2x8x256x64xf32>, tensor<2x8x256xf32>)
        -> (tensor<2x8x256x64xf32>, tensor<2x2x256x64xf32>, tensor<2x2x256x64xf32>)
  return %dq, %dk, %dv : tensor<2x8x256x64xf32>, tensor<2x2x256x64xf32>, tensor<2x2x256x64xf32>
}

// REMARK: remark: attn.sdpa_grad keeps the reference route on the host: the mask's gradient (grad_mask) is the [B,H,Tq,Tk] score gradient, which the GPU backward never forms
// CHECK-LABEL: func.func @grad_mask
// CHECK: attn.sdpa_grad
func.func @grad_mask(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>,
                     %v: tensor<1x2x8x16xf32>, %o: tensor<1x2x8x16xf32>,
                     %do: tensor<1x2x8x16xf32>, %lse: tensor<1x2x8xf32>,
                     %m: tensor<1x2x8x8xf32>)
    -> (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x8xf32>) {
  %dq, %dk, %dv, %dm = attn.sdpa_grad %q, %k, %v, %o, %do, %lse, %m
      : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>,
         tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8xf32>, tensor<1x2x8x8xf32>)
        -> (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x8xf32>)
  return %dq, %dk, %dv, %dm : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x8xf32>
}
