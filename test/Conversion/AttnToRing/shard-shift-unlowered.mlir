// Why the ring is written on the mpi dialect and not on MLIR 22's shard
// dialect (docs/distributed.md, *Why mpi, not shard*): the ring step is a
// cyclic shift of K/V along the ranks, shard.shift, and convert-shard-to-mpi
// cannot lower it. When this test fails, upstream can: reconsider.
// (The pass reports the error but exits 0, leaving the op in place.)
// RUN: mlir-opt %s --convert-shard-to-mpi 2>&1 | FileCheck %s
// CHECK: error: failed to legalize operation 'shard.shift'
// CHECK: func.func @ring_step
// CHECK-NOT: mpi.
// CHECK: shard.shift
shard.grid @ranks(shape = 4)
func.func @ring_step(%kv: tensor<2x64x16xf32>) -> tensor<2x64x16xf32> {
  %next = shard.shift %kv on @ranks grid_axes = [0] shift_axis = 0 offset = 1 rotate
      : tensor<2x64x16xf32> -> tensor<2x64x16xf32>
  return %next : tensor<2x64x16xf32>
}
