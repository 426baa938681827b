// attn-emulate-amx: AMX tiles as 2-D vectors. A tile load reads one
// vector per row (rows i, i+1, ...), bitcast where the memref holds the
// bf16 pairs as i32; a store writes them back; a zero tile is a constant;
// tile_mulf sums each bf16 pair of A's row against B's even and odd
// halves in f32 FMAs (a loop over 16 rows, 16 pairs x 2 in each here).
// RUN: attn-opt %s --attn-emulate-amx --split-input-file --verify-diagnostics | FileCheck %s

// CHECK-LABEL: func.func @mulf
// CHECK-NOT: amx.
// CHECK: %[[Z:.*]] = arith.constant dense<0.000000e+00> : vector<16x16xf32>
// CHECK: %[[R0:.*]] = vector.load %arg0[%{{.*}}, %{{.*}}] : memref<32x16xi32>, vector<16xi32>
// CHECK: vector.bitcast %[[R0]] : vector<16xi32> to vector<32xbf16>
// CHECK-COUNT-15: vector.load %arg0
// CHECK: vector.load %arg1{{.*}} : memref<16x32xbf16>, vector<32xbf16>
// CHECK: vector.shuffle %{{.*}} [0, 2, 4, {{.*}}, 30] : vector<32xbf16>, vector<32xbf16>
// CHECK: arith.extf %{{.*}} : vector<16xbf16> to vector<16xf32>
// CHECK: vector.shuffle %{{.*}} [1, 3, 5, {{.*}}, 31] : vector<32xbf16>, vector<32xbf16>
// A's and C's rows go to stack buffers of an alloca_scope; the rows are
// a loop, each 16 pairs x 2 FMAs; the scope returns C's rows.
// CHECK: %[[ROWS:.*]]:16 = memref.alloca_scope -> (vector<16xf32>
// CHECK: %[[A:.*]] = memref.alloca() : memref<16x32xbf16>
// CHECK: %[[C:.*]] = memref.alloca() : memref<16x16xf32>
// CHECK: vector.store %{{.*}}, %[[A]][
// CHECK-COUNT-16: vector.store %{{.*}}, %[[C]][
// CHECK: scf.for %[[M:.*]] = %{{.*}} to %c16
// CHECK: vector.load %[[A]][%[[M]], %{{.*}}] : memref<16x32xbf16>, vector<32xbf16>
// CHECK: vector.load %[[C]][%[[M]], %{{.*}}] : memref<16x16xf32>, vector<16xf32>
// CHECK-COUNT-32: vector.fma
// CHECK-NOT: vector.fma
// CHECK: vector.store %{{.*}}, %[[C]][%[[M]], %{{.*}}]
// CHECK-COUNT-16: vector.load %[[C]]
// CHECK: memref.alloca_scope.return
// CHECK: vector.insert %[[ROWS]]#0
// CHECK: vector.insert %[[ROWS]]#15
// CHECK-COUNT-16: vector.store %{{.*}}, %arg2[%{{.*}}, %{{.*}}] : memref<16x16xf32>, vector<16xf32>
// CHECK: return
func.func @mulf(%a: memref<32x16xi32>, %b: memref<16x32xbf16>, %c: memref<16x16xf32>, %i: index) {
  %c0 = arith.constant 0 : index
  %z = amx.tile_zero : !amx.tile<16x16xf32>
  %ta = amx.tile_load %a[%i, %c0] : memref<32x16xi32> into !amx.tile<16x32xbf16>
  %tb = amx.tile_load %b[%c0, %c0] : memref<16x32xbf16> into !amx.tile<16x32xbf16>
  %m = amx.tile_mulf %ta, %tb, %z : !amx.tile<16x32xbf16>, !amx.tile<16x32xbf16>, !amx.tile<16x16xf32>
  amx.tile_store %c[%c0, %c0], %m : memref<16x16xf32>, !amx.tile<16x16xf32>
  return
}

// -----

module {
  func.func @muli(%a: memref<16x64xi8>, %c: memref<16x16xi32>) {
    %c0 = arith.constant 0 : index
    %t = amx.tile_load %a[%c0, %c0] : memref<16x64xi8> into !amx.tile<16x64xi8>
    %z = amx.tile_zero : !amx.tile<16x16xi32>
    // expected-error@+1 {{attn-emulate-amx: amx.tile_muli is not emulated}}
    %m = amx.tile_muli %t, %t, %z : !amx.tile<16x64xi8>, !amx.tile<16x64xi8>, !amx.tile<16x16xi32>
    amx.tile_store %c[%c0, %c0], %m : memref<16x16xi32>, !amx.tile<16x16xi32>
    return
  }
}

// -----

module {
  func.func @strided(%a: memref<512xi32>, %s: index) {
    %c0 = arith.constant 0 : index
    // expected-error@+1 {{attn-emulate-amx: a tile load or store with an explicit stride is not emulated}}
    %t = amx.tile_load %a[%c0], %s : memref<512xi32> into !amx.tile<16x32xbf16>
    // expected-error@+1 {{attn-emulate-amx: a tile load or store with an explicit stride is not emulated}}
    amx.tile_store %a[%c0], %t, %s : memref<512xi32>, !amx.tile<16x32xbf16>
    return
  }
}

// -----

module {
  func.func @odd_width_elements(%a: memref<16x16xi24>) {
    %c0 = arith.constant 0 : index
    // expected-error@+1 {{attn-emulate-amx: a tile load or store whose memref elements do not divide a tile row is not emulated}}
    %t = amx.tile_load %a[%c0, %c0] : memref<16x16xi24> into !amx.tile<16x16xf32>
    return
  }
}
