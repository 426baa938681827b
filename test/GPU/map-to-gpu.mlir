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
