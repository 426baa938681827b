// attn.sdpa over K and V gathered from paged caches with one block table
// reads the blocks in place: no gathered tensor is built, and each key
// row's address is table[b, key / BS] (clamped into [0, NB)), row
// key mod BS. K and V gathered otherwise are built first, then read.
// RUN: attn-opt %s --convert-attn-to-loops="vector-width=8" | FileCheck %s
// RUN: attn-opt %s --convert-attn-to-loops="vector-width=8" --canonicalize | FileCheck %s --check-prefix=DEAD

// DEAD-LABEL: func @paged_decode
// DEAD-NOT: attn.gather_pages
// DEAD-NOT: linalg.generic
// DEAD: return

// CHECK-LABEL: func @paged_decode
// CHECK-SAME: %[[KC:[a-z0-9]+]]: tensor<64x16x2x64xf32>, %[[VC:[a-z0-9]+]]: tensor<64x16x2x64xf32>, %[[T:[a-z0-9]+]]: tensor<2x8xi32>
// CHECK-DAG: %[[KB:.*]] = bufferization.to_buffer %[[KC]]
// CHECK-DAG: %[[VB:.*]] = bufferization.to_buffer %[[VC]]
// CHECK-DAG: %[[TB:.*]] = bufferization.to_buffer %[[T]]
// The score loop: one block lookup per key, then its row of K.
// CHECK: scf.parallel (%[[KVH:[a-z0-9]+]], %[[BATCH:[a-z0-9]+]],
// CHECK: %[[BLK:.*]] = arith.divui %[[KEY:.*]], %c16
// CHECK-NEXT: %[[ID:.*]] = memref.load %[[TB]][%[[BATCH]], %[[BLK]]]
// CHECK-NEXT: %[[IDX:.*]] = arith.index_cast %[[ID]] : i32 to index
// CHECK-NEXT: %[[HI:.*]] = arith.minsi %[[IDX]], %c63
// CHECK-NEXT: %[[PAGE:.*]] = arith.maxsi %[[HI]], %c0
// CHECK-NEXT: %[[ROW:.*]] = arith.remui %[[KEY]], %c16
// CHECK: vector.load %[[KB]][%[[PAGE]], %[[ROW]], %[[KVH]], %{{.*}}] : memref<64x16x2x64xf32, {{.*}}>, vector<8xf32>
// P·V reads V's rows the same way.
// CHECK: vector.load %[[VB]][%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : memref<64x16x2x64xf32, {{.*}}>, vector<8xf32>
func.func @paged_decode(%q: tensor<2x8x1x64xf32>, %kc: tensor<64x16x2x64xf32>,
                        %vc: tensor<64x16x2x64xf32>, %table: tensor<2x8xi32>,
                        %len: tensor<2xi32>) -> tensor<2x8x1x64xf32> {
  %k = attn.gather_pages %kc, %table
      : (tensor<64x16x2x64xf32>, tensor<2x8xi32>) -> tensor<2x2x128x64xf32>
  %v = attn.gather_pages %vc, %table lengths(%len)
      : (tensor<64x16x2x64xf32>, tensor<2x8xi32>, tensor<2xi32>) -> tensor<2x2x128x64xf32>
  %o = attn.sdpa %q, %k, %v key_lengths(%len) {causal = #attn.causal<bottom_right>}
      : (tensor<2x8x1x64xf32>, tensor<2x2x128x64xf32>, tensor<2x2x128x64xf32>, tensor<2xi32>)
        -> tensor<2x8x1x64xf32>
  return %o : tensor<2x8x1x64xf32>
}

// Two tables: K and V are gathered (the reference lowering builds them)
// and the kernel reads the gathered tensors.
// CHECK-LABEL: func @two_tables
// CHECK: attn.gather_pages
// CHECK: attn.gather_pages
// CHECK-NOT: attn.sdpa
// CHECK: return
func.func @two_tables(%q: tensor<1x4x1x64xf32>, %kc: tensor<8x16x4x64xf32>, %vc: tensor<8x16x4x64xf32>,
                      %tk: tensor<1x2xi32>, %tv: tensor<1x2xi32>) -> tensor<1x4x1x64xf32> {
  %k = attn.gather_pages %kc, %tk : (tensor<8x16x4x64xf32>, tensor<1x2xi32>) -> tensor<1x4x32x64xf32>
  %v = attn.gather_pages %vc, %tv : (tensor<8x16x4x64xf32>, tensor<1x2xi32>) -> tensor<1x4x32x64xf32>
  %o = attn.sdpa %q, %k, %v : (tensor<1x4x1x64xf32>, tensor<1x4x32x64xf32>, tensor<1x4x32x64xf32>)
      -> tensor<1x4x1x64xf32>
  return %o : tensor<1x4x1x64xf32>
}

// Lengths on the gather but not on the sdpa: the keys past a length are
// zero rows the softmax still weighs, so they are gathered.
// CHECK-LABEL: func @lengths_only_on_gather
// CHECK: attn.gather_pages %{{.*}}, %{{.*}} lengths
// CHECK-NOT: attn.sdpa
// CHECK: return
func.func @lengths_only_on_gather(%q: tensor<1x4x1x64xf32>, %kc: tensor<8x16x4x64xf32>,
                                  %t: tensor<1x2xi32>, %len: tensor<1xi32>) -> tensor<1x4x1x64xf32> {
  %k = attn.gather_pages %kc, %t lengths(%len)
      : (tensor<8x16x4x64xf32>, tensor<1x2xi32>, tensor<1xi32>) -> tensor<1x4x32x64xf32>
  %v = attn.gather_pages %kc, %t : (tensor<8x16x4x64xf32>, tensor<1x2xi32>) -> tensor<1x4x32x64xf32>
  %o = attn.sdpa %q, %k, %v : (tensor<1x4x1x64xf32>, tensor<1x4x32x64xf32>, tensor<1x4x32x64xf32>)
      -> tensor<1x4x1x64xf32>
  return %o : tensor<1x4x1x64xf32>
}

// The hnd layout: a key row is [block, head, key mod BS].
// CHECK-LABEL: func @paged_hnd
// CHECK: scf.parallel (%[[KVH:[a-z0-9]+]], %[[BATCH:[a-z0-9]+]],
// CHECK: %[[BLK:.*]] = arith.divui %[[KEY:.*]], %c32
// CHECK: %[[PAGE:.*]] = arith.maxsi
// CHECK-NEXT: %[[ROW:.*]] = arith.remui %[[KEY]], %c32
// CHECK: vector.load %{{.*}}[%[[PAGE]], %[[KVH]], %[[ROW]], %{{.*}}] : memref<9x4x32x64xf16, {{.*}}>, vector<8xf16>
// CHECK-NOT: attn.gather_pages
func.func @paged_hnd(%q: tensor<1x8x1x64xf16>, %kc: tensor<9x4x32x64xf16>, %vc: tensor<9x4x32x64xf16>,
                     %t: tensor<1x3xi64>) -> tensor<1x8x1x64xf16> {
  %k = attn.gather_pages %kc, %t {layout = #attn.kv_layout<hnd>}
      : (tensor<9x4x32x64xf16>, tensor<1x3xi64>) -> tensor<1x4x96x64xf16>
  %v = attn.gather_pages %vc, %t {layout = #attn.kv_layout<hnd>}
      : (tensor<9x4x32x64xf16>, tensor<1x3xi64>) -> tensor<1x4x96x64xf16>
  %o = attn.sdpa %q, %k, %v : (tensor<1x8x1x64xf16>, tensor<1x4x96x64xf16>, tensor<1x4x96x64xf16>)
      -> tensor<1x8x1x64xf16>
  return %o : tensor<1x8x1x64xf16>
}

// Two layouts: gathered first.
// CHECK-LABEL: func @two_layouts
// CHECK: attn.gather_pages
// CHECK: attn.gather_pages
// CHECK-NOT: attn.sdpa
// CHECK: return
func.func @two_layouts(%q: tensor<1x4x1x64xf32>, %kc: tensor<8x16x4x64xf32>, %vc: tensor<8x4x16x64xf32>,
                       %t: tensor<1x2xi32>) -> tensor<1x4x1x64xf32> {
  %k = attn.gather_pages %kc, %t : (tensor<8x16x4x64xf32>, tensor<1x2xi32>) -> tensor<1x4x32x64xf32>
  %v = attn.gather_pages %vc, %t {layout = #attn.kv_layout<hnd>}
      : (tensor<8x4x16x64xf32>, tensor<1x2xi32>) -> tensor<1x4x32x64xf32>
  %o = attn.sdpa %q, %k, %v : (tensor<1x4x1x64xf32>, tensor<1x4x32x64xf32>, tensor<1x4x32x64xf32>)
      -> tensor<1x4x1x64xf32>
  return %o : tensor<1x4x1x64xf32>
}
