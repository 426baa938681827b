// RUN: attn-opt %s --attn-emulate-gpu-schedule | FileCheck %s

// attn-emulate-gpu-schedule on a hand-written schedule: the block loop runs
// in parallel, each thread loop runs in order and completes before the
// next (the barrier), and workgroup memory becomes ordinary memory.
// CHECK-LABEL: func.func @schedule
// CHECK:       scf.parallel (%[[B:.*]]) = (%{{.*}}) to (%{{.*}}) step (%{{.*}}) {
// CHECK:         %[[WG:.*]] = memref.alloca() : memref<32xf32>
// CHECK:         scf.for %[[T:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:           memref.store %{{.*}}, %[[WG]][%[[T]]] : memref<32xf32>
// CHECK:         }
// CHECK:         scf.for %[[T2:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:           memref.load %[[WG]]
// CHECK:           memref.store %{{.*}}, %{{.*}}[%{{.*}}] : memref<?xf32>
// CHECK:         }
// CHECK:         scf.reduce
// CHECK:       }
// CHECK-NOT:   scf.forall
// CHECK-NOT:   #gpu.address_space
func.func @schedule(%out: memref<?xf32>, %blocks: index) {
  %c31 = arith.constant 31 : index
  %c32 = arith.constant 32 : index
  scf.forall (%b) in (%blocks) {
    %wg = memref.alloca() : memref<32xf32, #gpu.address_space<workgroup>>
    scf.forall (%t) in (32) {
      %i = arith.index_cast %t : index to i32
      %f = arith.sitofp %i : i32 to f32
      memref.store %f, %wg[%t] : memref<32xf32, #gpu.address_space<workgroup>>
      scf.forall.in_parallel {}
    } {mapping = [#gpu.thread<x>]}
    // Reads what another thread wrote: only right after a barrier.
    scf.forall (%t) in (32) {
      %r = arith.subi %c31, %t : index
      %x = memref.load %wg[%r] : memref<32xf32, #gpu.address_space<workgroup>>
      %base = arith.muli %b, %c32 : index
      %o = arith.addi %base, %t : index
      memref.store %x, %out[%o] : memref<?xf32>
      scf.forall.in_parallel {}
    } {mapping = [#gpu.thread<x>]}
    scf.forall.in_parallel {}
  } {mapping = [#gpu.block<x>]}
  return
}
