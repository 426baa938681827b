// attn-lower-mpi: every mpi op becomes a call into libattn_mpi; a buffer
// moves as (address of its first element, bytes = every dim x element size),
// so N-D buffers move whole (upstream 22 sends dim 0 elements only), f16 is
// 2-byte words, and a subview starts at its offset.
// RUN: attn-opt %s --attn-lower-mpi -split-input-file -verify-diagnostics | FileCheck %s
// RUN: attn-opt %s --attn-lower-mpi --canonicalize -split-input-file -verify-diagnostics | FileCheck %s --check-prefix=BYTES
// BYTES-LABEL: func.func @ring_step
// BYTES: call @attn_mpi_isend(%{{.*}}, %c128_i64, {{.*}}) : (i64, i64, i32, i32, i64) -> i64
// BYTES: call @attn_mpi_irecv(%{{.*}}, %c60_i64, {{.*}}) : (i64, i64, i32, i32, i64) -> i64
// The row at offset 16 elements starts 64 bytes in:
// BYTES: arith.addi %{{.*}}, %c64 : index
// BYTES: call @attn_mpi_send(%{{.*}}, %c64_i64, {{.*}})
// BYTES: call @attn_mpi_allreduce(%{{.*}}, %{{.*}}, %c128_i64, %c128_i64,

// The declarations, first in the module:
// CHECK-DAG: func.func private @attn_mpi_isend(i64, i64, i32, i32, i64) -> i64
// CHECK-DAG: func.func private @attn_mpi_wait(i64) -> i32
// CHECK-LABEL: func.func @ring_step
// CHECK-SAME: (%[[A:.*]]: memref<4x8xf32>, %[[B:.*]]: memref<2x3x5xf16>, %[[C:.*]]: memref<2x16xf32>)
// CHECK: %[[INIT:.*]] = call @attn_mpi_init() : () -> i32
// CHECK: %[[COMM:.*]] = call @attn_mpi_comm_world() : () -> i64
// CHECK: %[[RANK:.*]] = call @attn_mpi_comm_rank(%[[COMM]]) : (i64) -> i32
// CHECK: call @attn_mpi_comm_size(%[[COMM]]) : (i64) -> i32
// 4 x 8 x 4 bytes:
// CHECK: %[[PA:.*]] = memref.extract_aligned_pointer_as_index %[[A]]
// CHECK: memref.extract_strided_metadata %[[A]]
// CHECK: %[[ADDR_A:.*]] = arith.index_cast %{{.*}} : index to i64
// CHECK: %[[BYTES_A:.*]] = arith.index_cast %{{.*}} : index to i64
// CHECK: %[[REQ:.*]] = call @attn_mpi_isend(%[[ADDR_A]], %[[BYTES_A]], %{{.*}}, %[[RANK]], %[[COMM]]) : (i64, i64, i32, i32, i64) -> i64
// 2 x 3 x 5 x 2 bytes:
// CHECK: memref.extract_aligned_pointer_as_index %[[B]]
// CHECK: call @attn_mpi_irecv({{.*}}) : (i64, i64, i32, i32, i64) -> i64
// CHECK: call @attn_mpi_wait(%[[REQ]]) : (i64) -> i32
// CHECK: call @attn_mpi_wait
// A subview: its offset (in elements) times 4 bytes is added to the base.
// CHECK: %[[SV:.*]] = memref.subview %[[C]][1, 0] [1, 16] [1, 1]
// CHECK: %[[BASE:.*]] = memref.extract_aligned_pointer_as_index %[[SV]]
// CHECK: %{{.*}}, %[[OFF:.*]], %{{.*}}, %{{.*}} = memref.extract_strided_metadata %[[SV]]
// CHECK: %[[OFFB:.*]] = arith.muli %[[OFF]], %c4
// CHECK: arith.addi %[[BASE]], %[[OFFB]]
// CHECK: call @attn_mpi_send
// CHECK: call @attn_mpi_recv
// CHECK: call @attn_mpi_barrier(%[[COMM]])
// CHECK: call @attn_mpi_allreduce({{.*}}, %c0_i32{{.*}}, %c3_i32{{.*}}, %[[COMM]]) : (i64, i64, i64, i64, i32, i32, i64) -> i32
// CHECK: %[[SPLIT:.*]] = call @attn_mpi_comm_split(%[[COMM]], %{{.*}}, %{{.*}}) : (i64, i32, i32) -> i64
// CHECK: call @attn_mpi_comm_rank(%[[SPLIT]])
// CHECK: %[[CLS:.*]] = call @attn_mpi_error_class(%[[INIT]]) : (i32) -> i32
// CHECK: arith.cmpi eq, %[[CLS]], %c0_i32
// CHECK: call @attn_mpi_finalize()
// CHECK-NOT: mpi.
func.func @ring_step(%a: memref<4x8xf32>, %b: memref<2x3x5xf16>, %c: memref<2x16xf32>) -> i1 {
  %e = mpi.init : !mpi.retval
  %comm = mpi.comm_world : !mpi.comm
  %rank = mpi.comm_rank(%comm) : i32
  %size = mpi.comm_size(%comm) : i32
  %tag = arith.constant 0 : i32
  %r1 = mpi.isend(%a, %tag, %rank, %comm) : memref<4x8xf32>, i32, i32 -> !mpi.request
  %r2 = mpi.irecv(%b, %tag, %size, %comm) : memref<2x3x5xf16>, i32, i32 -> !mpi.request
  mpi.wait(%r1) : !mpi.request
  mpi.wait(%r2) : !mpi.request
  %row = memref.subview %c[1, 0] [1, 16] [1, 1] : memref<2x16xf32> to memref<16xf32, strided<[1], offset: 16>>
  mpi.send(%row, %tag, %rank, %comm) : memref<16xf32, strided<[1], offset: 16>>, i32, i32
  mpi.recv(%row, %tag, %rank, %comm) : memref<16xf32, strided<[1], offset: 16>>, i32, i32
  mpi.barrier(%comm)
  mpi.allreduce(%a, %a, MPI_SUM, %comm) : memref<4x8xf32>, memref<4x8xf32>
  %sub = mpi.comm_split(%comm, %tag, %rank) : !mpi.comm
  %r = mpi.comm_rank(%sub) : i32
  %ok = mpi.retval_check %e = <MPI_SUCCESS> : i1
  mpi.finalize
  return %ok : i1
}

// -----

func.func @not_contiguous(%a: memref<4x8xf32>) {
  %comm = mpi.comm_world : !mpi.comm
  %t = arith.constant 0 : i32
  %col = memref.subview %a[0, 1] [4, 1] [1, 1] : memref<4x8xf32> to memref<4xf32, strided<[8], offset: 1>>
  // expected-error @+1 {{attn-lower-mpi: the buffer must be contiguous, got 'memref<4xf32, strided<[8], offset: 1>>'}}
  mpi.send(%col, %t, %t, %comm) : memref<4xf32, strided<[8], offset: 1>>, i32, i32
  return
}

// -----

func.func @allreduce_f16(%a: memref<4xf16>) {
  %comm = mpi.comm_world : !mpi.comm
  // expected-error @+1 {{attn-lower-mpi: allreduce supports f32, f64, i32 and i64, got 'f16'}}
  mpi.allreduce(%a, %a, MPI_SUM, %comm) : memref<4xf16>, memref<4xf16>
  return
}
