// attn-result-destinations: each public function nothing calls takes one
// destination per result after its arguments; a result it allocates in its
// body (identity layout, through casts, never deallocated) is the
// destination when that is not null and has the allocation's sizes.
// Arguments returned as they are, deallocated buffers, private and called
// functions are left alone. The values (in place, another shape, none)
// are checked in test/unit (ResultDestinations.InPlaceOrAllocated).
// RUN: attn-opt %s --split-input-file --verify-diagnostics --attn-result-destinations | FileCheck %s

// CHECK-LABEL: func.func @dynamic(
// CHECK-SAME: %[[N:.*]]: index, %[[DEST:.*]]: memref<?xf32>) -> memref<?xf32>
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[PTR:.*]] = memref.extract_aligned_pointer_as_index %[[DEST]]
// CHECK-DAG: %[[NONNULL:.*]] = arith.cmpi ne, %[[PTR]], %[[C0]]
// CHECK-DAG: %[[DIM:.*]] = memref.dim %[[DEST]], %{{.*}} : memref<?xf32>
// CHECK-DAG: %[[SAME:.*]] = arith.cmpi eq, %[[DIM]], %[[N]]
// CHECK: %[[USE:.*]] = arith.andi %[[NONNULL]], %[[SAME]]
// CHECK: %[[BUF:.*]] = scf.if %[[USE]] -> (memref<?xf32>) {
// CHECK-NEXT: scf.yield %[[DEST]]
// CHECK-NEXT: } else {
// CHECK-NEXT: %[[A:.*]] = memref.alloc(%[[N]]) {alignment = 64 : i64}
// CHECK-NEXT: scf.yield %[[A]]
// CHECK: linalg.fill {{.*}} outs(%[[BUF]] : memref<?xf32>)
// CHECK: return %[[BUF]]
func.func @dynamic(%n: index) -> memref<?xf32> {
  %a = memref.alloc(%n) {alignment = 64 : i64} : memref<?xf32>
  %z = arith.constant 0.0 : f32
  linalg.fill ins(%z : f32) outs(%a : memref<?xf32>)
  return %a : memref<?xf32>
}

// -----

// A static allocation returned through a cast to a dynamic type: the
// destination has the returned type, its dynamic size is compared with the
// allocation's and it is cast back. An argument returned as it is leaves
// its destination unused; so does a second return of the same buffer.
// CHECK-LABEL: func.func @mixed(
// CHECK-SAME: %[[X:.*]]: memref<4xf32>, %[[D0:.*]]: memref<4xf32>, %[[D1:.*]]: memref<?x8xf32>, %[[D2:.*]]: memref<4xf32>, %[[D3:.*]]: memref<4xf32>)
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[DIM:.*]] = memref.dim %[[D1]], %{{.*}} : memref<?x8xf32>
// CHECK-DAG: arith.cmpi eq, %[[DIM]], %[[C2]]
// CHECK: %[[B1:.*]] = scf.if %{{.*}} -> (memref<2x8xf32>) {
// CHECK-NEXT: %[[CAST:.*]] = memref.cast %[[D1]] : memref<?x8xf32> to memref<2x8xf32>
// CHECK-NEXT: scf.yield %[[CAST]]
// CHECK: %[[R1:.*]] = memref.cast %[[B1]] : memref<2x8xf32> to memref<?x8xf32>
// CHECK: %[[B2:.*]] = scf.if %{{.*}} -> (memref<4xf32>) {
// CHECK-NEXT: scf.yield %[[D2]]
// CHECK: return %[[X]], %[[R1]], %[[B2]], %[[B2]]
func.func @mixed(%x: memref<4xf32>) -> (memref<4xf32>, memref<?x8xf32>, memref<4xf32>, memref<4xf32>) {
  %a = memref.alloc() : memref<2x8xf32>
  %c = memref.cast %a : memref<2x8xf32> to memref<?x8xf32>
  %b = memref.alloc() : memref<4xf32>
  return %x, %c, %b, %b : memref<4xf32>, memref<?x8xf32>, memref<4xf32>, memref<4xf32>
}

// -----

// A buffer the function frees, one in a nested region, a private function
// and one another function calls: not rewritten (the caller keeps its
// signature).
// CHECK-LABEL: func.func @freed(
// CHECK-SAME: %{{.*}}: memref<4xf32>) -> memref<4xf32>
// CHECK-NOT: scf.if
// CHECK: return
func.func @freed() -> memref<4xf32> {
  %a = memref.alloc() : memref<4xf32>
  %b = memref.alloc() : memref<4xf32>
  memref.dealloc %a : memref<4xf32>
  memref.copy %b, %b : memref<4xf32> to memref<4xf32>
  memref.dealloc %b : memref<4xf32>
  %c = memref.alloc() : memref<4xf32>
  %d = memref.cast %c : memref<4xf32> to memref<4xf32>
  memref.dealloc %d : memref<4xf32>
  return %c : memref<4xf32>
}
// CHECK-LABEL: func.func private @helper() -> memref<4xf32>
// CHECK-NOT: scf.if
func.func private @helper() -> memref<4xf32> {
  %a = memref.alloc() : memref<4xf32>
  return %a : memref<4xf32>
}
// CHECK-LABEL: func.func @called() -> memref<4xf32>
// CHECK-NOT: scf.if
func.func @called() -> memref<4xf32> {
  %a = memref.alloc() : memref<4xf32>
  return %a : memref<4xf32>
}
// CHECK-LABEL: func.func @caller(
// CHECK-SAME: %{{.*}}: memref<4xf32>) -> memref<4xf32>
// CHECK: call @called() : () -> memref<4xf32>
func.func @caller() -> memref<4xf32> {
  %r = call @called() : () -> memref<4xf32>
  return %r : memref<4xf32>
}

// -----

// Before bufferisation: an error.
// expected-error @below {{attn-result-destinations: a result that is not a ranked memref (run it after bufferisation)}}
func.func @tensor() -> tensor<4xf32> {
  %t = tensor.empty() : tensor<4xf32>
  return %t : tensor<4xf32>
}
