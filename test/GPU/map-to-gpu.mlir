// RUN: attn-opt %s --attn-gpu-pipeline="tile-q=32 tile-k=16 lower-to-llvm=false" | FileCheck %s

// attn-map-schedule-to-gpu: device copies of what the kernel reads, a
// gpu.launch over (B·H, ceil(Tq/32)) blocks of 32 threads, the five tiles
// as workgroup attributions, a private scores row at the top of the kernel,
// a gpu.barrier after every thread-level step, and the output copied back.

// CHECK-LABEL: func.func @causal
// CHECK-SAME:    (%[[Q:.*]]: memref<1x4x?x16xf32>, %[[K:.*]]: memref<1x2x?x16xf32>, %[[V:.*]]: memref<1x2x?x16xf32>)
// CHECK:       %[[OUT:.*]] = memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<1x4x?x16xf32>
// CHECK-DAG:   %[[DK:.*]] = gpu.alloc  (%{{.*}}) : memref<1x2x?x16xf32>
// CHECK-DAG:   gpu.memcpy  %[[DK]], %[[K]]
// CHECK-DAG:   %[[DV:.*]] = gpu.alloc  (%{{.*}}) : memref<1x2x?x16xf32>
// CHECK-DAG:   gpu.memcpy  %[[DV]], %[[V]]
// CHECK-DAG:   %[[DQ:.*]] = gpu.alloc  (%{{.*}}) : memref<1x4x?x16xf32>
// CHECK-DAG:   gpu.memcpy  %[[DQ]], %[[Q]]
// CHECK:       %[[DOUT:.*]] = gpu.alloc  (%{{.*}}) : memref<1x4x?x16xf32>
// CHECK-NOT:   gpu.memcpy  %[[DOUT]]
// CHECK:       gpu.launch blocks(%[[BX:.*]], %[[BY:.*]], %{{.*}}) in (%{{.*}} = %c4, %{{.*}} = %{{.*}}, %{{.*}} = %c1) threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c32, %{{.*}} = %c1, %{{.*}} = %c1)
// CHECK-SAME:    workgroup(%{{.*}} : memref<16x16xf32, #gpu.address_space<workgroup>>, %{{.*}} : memref<16x16xf32, #gpu.address_space<workgroup>>, %{{.*}} : memref<16x32xf32, #gpu.address_space<workgroup>>, %{{.*}} : memref<32xf32, #gpu.address_space<workgroup>>, %{{.*}} : memref<32xf32, #gpu.address_space<workgroup>>)
// CHECK-NEXT:    memref.alloca() : memref<16xf32>
// CHECK:         gpu.barrier
// CHECK:         scf.for
// CHECK:           gpu.barrier
// CHECK:           memref.load %[[DQ]]
// CHECK:           gpu.barrier
// CHECK:         memref.store %{{.*}}, %[[DOUT]]
// CHECK:         gpu.barrier
// CHECK-NEXT:    gpu.terminator
// CHECK:       gpu.memcpy  %[[OUT]], %[[DOUT]]
// CHECK-COUNT-4: gpu.dealloc
// CHECK:       return %[[OUT]]
func.func @causal(%q: tensor<1x4x?x16xf32>, %k: tensor<1x2x?x16xf32>,
                  %v: tensor<1x2x?x16xf32>) -> tensor<1x4x?x16xf32> {
  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<top_left>}
      : (tensor<1x4x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>) -> tensor<1x4x?x16xf32>
  return %o : tensor<1x4x?x16xf32>
}

// A ragged batch (attn.sdpa_varlen, one kernel a sequence): each sequence's
// rows of Q, K and V are strided subviews, which go to the device through a
// dense host staging buffer (memref.copy, then gpu.memcpy); the kernel reads
// the dense device buffer (through a cast back to the strided type, which
// the canonicalizer folds into the loads).
// CHECK-LABEL: func.func @ragged
// CHECK:       scf.for
// CHECK:       %[[SQ:.*]] = memref.subview %{{.*}} : memref<1x4x?x16xf32> to memref<1x4x?x16xf32, strided<[?, ?, 16, 1], offset: ?>>
// CHECK:       %[[STAGE:.*]] = memref.alloc(%{{.*}}) : memref<1x4x?x16xf32>
// CHECK:       memref.copy %[[SQ]], %[[STAGE]]
// CHECK:       %[[DEV:.*]] = gpu.alloc  (%{{.*}}) : memref<1x4x?x16xf32>
// CHECK:       gpu.memcpy  %[[DEV]], %[[STAGE]]
// CHECK:       gpu.launch
// CHECK:       memref.load %[[DEV]]
// CHECK:       gpu.terminator
// CHECK:       gpu.dealloc  %[[DEV]]
// CHECK:       memref.dealloc %[[STAGE]]
func.func @ragged(%q: tensor<1x4x?x16xf32>, %k: tensor<1x2x?x16xf32>, %v: tensor<1x2x?x16xf32>,
                  %cuq: tensor<?xi32>, %cuk: tensor<?xi32>) -> tensor<1x4x?x16xf32> {
  %o = attn.sdpa_varlen %q, %k, %v, %cuq, %cuk {causal = #attn.causal<bottom_right>}
      : (tensor<1x4x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<?xi32>,
         tensor<?xi32>) -> tensor<1x4x?x16xf32>
  return %o : tensor<1x4x?x16xf32>
}

// Static shapes: a slice's strides are static in its type; the kernel
// reads the dense device copy with the copy's own (dense) type, never
// through the slice's strides.
// CHECK-LABEL: func.func @ragged_static
// CHECK:       %[[SQ:.*]] = memref.subview %{{.*}} : memref<1x4x12x16xf32> to memref<1x4x1x16xf32, strided<[768, 192, 16, 1], offset: ?>>
// CHECK:       memref.copy %[[SQ]], %[[STAGE:.*]] : memref<1x4x1x16xf32, strided<[768, 192, 16, 1], offset: ?>> to memref<1x4x1x16xf32>
// CHECK:       %[[DEV:.*]] = gpu.alloc  () : memref<1x4x1x16xf32>
// CHECK:       gpu.memcpy  %[[DEV]], %[[STAGE]]
// CHECK:       gpu.launch
// CHECK-NOT:   strided<[768
// CHECK:       memref.load %[[DEV]]{{.*}} : memref<1x4x1x16xf32>
// CHECK:       gpu.terminator
func.func @ragged_static(%q: tensor<1x4x12x16xf32>, %k: tensor<1x2x20x16xf32>,
                         %v: tensor<1x2x20x16xf32>, %cuq: tensor<3xi32>,
                         %cuk: tensor<3xi32>) -> tensor<1x4x12x16xf32> {
  %o = attn.sdpa_varlen %q, %k, %v, %cuq, %cuk {causal = #attn.causal<bottom_right>}
      : (tensor<1x4x12x16xf32>, tensor<1x2x20x16xf32>, tensor<1x2x20x16xf32>, tensor<3xi32>,
         tensor<3xi32>) -> tensor<1x4x12x16xf32>
  return %o : tensor<1x4x12x16xf32>
}
