// The fused CPU kernel evaluates score and mask functions lane-wide: kv is
// a vector of key positions, b/h/q scalars; a capture read whose last index
// is ±kv + offset is one vector load when in bounds (reversed for -kv),
// else a gather of the clamped indices; an index that does not vary with
// the lane is a scalar load; an i1 capture is read lane by lane.
// RUN: attn-opt %s -convert-attn-to-loops="vector-width=8" -split-input-file | FileCheck %s
// With report-unfused, a mask function the per-tile bounds cannot follow
// is named (it costs an evaluation per score and skips no tile).
// RUN: attn-opt %s -convert-attn-to-loops="vector-width=8 report-unfused" -split-input-file \
// RUN:   -verify-diagnostics -o /dev/null

// CHECK-LABEL: func.func @relative_bias
// CHECK: %[[BIAS:.*]] = bufferization.to_buffer %{{.*}} : tensor<2x15xf32> to memref<2x15xf32, strided<[?, 1], offset: ?>>
// The score function, per row block and vector of keys:
// CHECK: scf.if %{{.*}} -> (vector<8xf32>) {
// CHECK:   %[[L:.*]] = vector.load %[[BIAS]][%{{.*}}, %{{.*}}] : memref<2x15xf32, strided<[?, 1], offset: ?>>, vector<8xf32>
// CHECK:   %[[R:.*]] = vector.shuffle %[[L]], %[[L]] [7, 6, 5, 4, 3, 2, 1, 0]
// CHECK:   scf.yield %[[R]] : vector<8xf32>
// CHECK: } else {
// CHECK-DAG: arith.maxsi %{{.*}} : vector<8xindex>
// CHECK-DAG: arith.minsi %{{.*}} : vector<8xindex>
// CHECK:   vector.gather %[[BIAS]][%{{.*}}, %c0] [%{{.*}}], %{{.*}}, %{{.*}} : memref<2x15xf32, strided<[?, 1], offset: ?>>, vector<8xindex>, vector<8xi1>, vector<8xf32> into vector<8xf32>
// CHECK: arith.addf %{{.*}}, %{{.*}} : vector<8xf32>
func.func @relative_bias(%q: tensor<1x2x8x8xf32>, %bias: tensor<2x15xf32>) -> tensor<1x2x8x8xf32> {
  %o = attn.sdpa %q, %q, %q captures(%bias) score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %t: tensor<2x15xf32>):
    %c7 = arith.constant 7 : index
    %d = arith.subi %i, %j : index
    %r = arith.addi %d, %c7 : index
    %x = tensor.extract %t[%h, %r] : tensor<2x15xf32>
    %n = arith.addf %s, %x : f32
    attn.yield %n : f32
  } : (tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>, tensor<2x15xf32>) -> tensor<1x2x8x8xf32>
  return %o : tensor<1x2x8x8xf32>
}

// -----

// CHECK-LABEL: func.func @documents
// CHECK: %[[DOC:.*]] = bufferization.to_buffer %{{.*}} : tensor<16xi32>
// CHECK: %[[KP:.*]] = bufferization.to_buffer %{{.*}} : tensor<16xi1>
// The query's id: one scalar load per row.
// CHECK: memref.load %[[DOC]][%{{.*}}] : memref<16xi32, strided<[1], offset: ?>>
// The keys' ids: a vector load in bounds.
// CHECK: vector.load %[[DOC]][%{{.*}}] : memref<16xi32, strided<[1], offset: ?>>, vector<8xi32>
// CHECK: arith.cmpi eq, %{{.*}}, %{{.*}} : vector<8xi32>
// The i1 capture: lane by lane.
// CHECK: memref.load %[[KP]][%{{.*}}] : memref<16xi1, strided<[1], offset: ?>>
// CHECK: vector.insert %{{.*}}, %{{.*}} [0] : i1 into vector<8xi1>
// Dropped keys become -inf.
// CHECK: arith.select %{{.*}}, %{{.*}}, %{{.*}} : vector<8xi1>, vector<8xf32>
func.func @documents(%q: tensor<1x2x16x8xf32>, %doc: tensor<16xi32>, %kmask: tensor<16xi1>)
    -> tensor<1x2x16x8xf32> {
  %o = attn.sdpa %q, %q, %q captures(%doc, %kmask) mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index, %d: tensor<16xi32>, %kp: tensor<16xi1>):
    %di = tensor.extract %d[%i] : tensor<16xi32>
    %dj = tensor.extract %d[%j] : tensor<16xi32>
    %same = arith.cmpi eq, %di, %dj : i32
    %k = tensor.extract %kp[%j] : tensor<16xi1>
    %keep = arith.andi %same, %k : i1
    attn.yield %keep : i1
  } : (tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<16xi32>, tensor<16xi1>)
      -> tensor<1x2x16x8xf32>
  return %o : tensor<1x2x16x8xf32>
}

// -----

// A dilated pattern: the remainder is not bounded per tile.
// CHECK-LABEL: func.func @dilated
// CHECK-NOT: attn.sdpa
func.func @dilated(%q: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-remark @+1 {{the mask function cannot be bounded per tile (its result rests on floats, remainders or scf.if): every visited tile evaluates it on every score, and no tile is skipped for it}}
  %o = attn.sdpa %q, %q, %q mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %c2 = arith.constant 2 : index
    %c0 = arith.constant 0 : index
    %r = arith.remsi %j, %c2 : index
    %even = arith.cmpi eq, %r, %c0 : index
    attn.yield %even : i1
  } : (tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32>
  return %o : tensor<1x2x16x8xf32>
}

// -----

// A BlockMask's lists as a table of block states [B, H, Q blocks, K/V
// blocks] (what attn_mlir.flex_attention passes): full (2), or partial (1)
// and a float compare. The compare alone cannot be bounded; the states
// can, so the kernel scans the tile's box of the table and needs no
// remark: a tile of unlisted blocks is skipped, one of full blocks is not
// masked per element.
// CHECK-LABEL: func.func @block_states
// CHECK: memref.load %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : memref<1x1x3x3xi32
// CHECK: scf.for %{{.*}} iter_args(%[[LO:.*]] = %{{.*}}, %[[HI:.*]] = %{{.*}}) -> (i32, i32)
// CHECK:   memref.load %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : memref<1x1x3x3xi32
// CHECK:   arith.minsi %[[LO]], %{{.*}} : i32
// CHECK:   arith.maxsi %[[HI]], %{{.*}} : i32
func.func @block_states(%q: tensor<1x2x40x8xf32>, %st: tensor<1x1x3x3xi32>) -> tensor<1x2x40x8xf32> {
  %o = attn.sdpa %q, %q, %q captures(%st) mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index, %s: tensor<1x1x3x3xi32>):
    %c0 = arith.constant 0 : index
    %c16 = arith.constant 16 : index
    %qb = arith.floordivsi %i, %c16 : index
    %kb = arith.floordivsi %j, %c16 : index
    %state = tensor.extract %s[%c0, %c0, %qb, %kb] : tensor<1x1x3x3xi32>
    %one = arith.constant 1 : i32
    %two = arith.constant 2 : i32
    %full = arith.cmpi eq, %state, %two : i32
    %partial = arith.cmpi eq, %state, %one : i32
    %ii = arith.index_cast %i : index to i64
    %jj = arith.index_cast %j : index to i64
    %fi = arith.sitofp %ii : i64 to f32
    %fj = arith.sitofp %jj : i64 to f32
    %near = arith.cmpf ole, %fj, %fi : f32
    %inner = arith.andi %partial, %near : i1
    %keep = arith.ori %full, %inner : i1
    attn.yield %keep : i1
  } : (tensor<1x2x40x8xf32>, tensor<1x2x40x8xf32>, tensor<1x2x40x8xf32>, tensor<1x1x3x3xi32>)
      -> tensor<1x2x40x8xf32>
  return %o : tensor<1x2x40x8xf32>
}

// -----

// Causal and a float compare: the compare is unknown per tile, so tiles
// above the diagonal are still skipped (no remark); none is full.
// CHECK-LABEL: func.func @causal_and_float
// CHECK-NOT: attn.sdpa
func.func @causal_and_float(%q: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  %o = attn.sdpa %q, %q, %q mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %causal = arith.cmpi sle, %j, %i : index
    %jj = arith.index_cast %j : index to i64
    %fj = arith.sitofp %jj : i64 to f32
    %half = arith.constant 7.5 : f32
    %low = arith.cmpf olt, %fj, %half : f32
    %keep = arith.andi %causal, %low : i1
    attn.yield %keep : i1
  } : (tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32>
  return %o : tensor<1x2x16x8xf32>
}
