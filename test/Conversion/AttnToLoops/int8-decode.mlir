// attn.sdpa over K and V from attn.dequantize (int8 with per-token scales)
// in a decode tile reads the int8 rows in place: no float K/V is built;
// each K row is loaded as i8 and converted, the key's scale is gathered
// per slot and multiplies the folded scores, and P·V weighs V's int8 rows
// by P times V's scale. A prefill tile reads them in place too: each K row
// is converted and times its key's scale as the tile is transposed, and
// P·V reads V's int8 rows with P times V's scale.
// RUN: attn-opt %s --convert-attn-to-loops="vector-width=8" | FileCheck %s
// RUN: attn-opt %s --convert-attn-to-loops="vector-width=8" --canonicalize | FileCheck %s --check-prefix=DEAD

// DEAD-LABEL: func @decode
// DEAD-NOT: attn.dequantize
// DEAD-NOT: linalg.generic
// DEAD: return
// DEAD-LABEL: func @prefill
// DEAD-NOT: attn.dequantize
// DEAD-NOT: linalg.generic
// DEAD: return

// CHECK-LABEL: func @decode
// CHECK-SAME: %[[KQ:[a-z0-9]+]]: tensor<1x2x128x64xi8>, %[[KS:[a-z0-9]+]]: tensor<1x2x128xf32>, %[[VQ:[a-z0-9]+]]: tensor<1x2x128x64xi8>, %[[VS:[a-z0-9]+]]: tensor<1x2x128xf32>
// CHECK-DAG: %[[KB:.*]] = bufferization.to_buffer %[[KQ]] {{.*}} to memref<1x2x128x64xi8
// CHECK-DAG: %[[VB:.*]] = bufferization.to_buffer %[[VQ]] {{.*}} to memref<1x2x128x64xi8
// CHECK-DAG: %[[KSB:.*]] = bufferization.to_buffer %[[KS]]
// CHECK-DAG: %[[VSB:.*]] = bufferization.to_buffer %[[VS]]
// CHECK: scf.parallel (%[[KVH:[a-z0-9]+]], %[[BATCH:[a-z0-9]+]],
// CHECK: %[[SLOTS:.*]] = memref.alloca() {alignment = 64 : i64} : memref<8xf32>
// The score loop: each key's scale into its slot, its row as i8.
// CHECK: %[[SCALE:.*]] = memref.load %[[KSB]][%[[BATCH]], %[[KVH]], %{{.*}}]
// CHECK: memref.store %[[SCALE]], %[[SLOTS]]
// CHECK: %[[K8:.*]] = vector.load %[[KB]][%[[BATCH]], %[[KVH]], %{{.*}}, %{{.*}}] : memref<1x2x128x64xi8, {{.*}}>, vector<8xi8>
// CHECK: arith.sitofp %[[K8]] : vector<8xi8> to vector<8xf32>
// The folded scores times the run's scales.
// CHECK: %[[KSCALES:.*]] = vector.load %[[SLOTS]][%c0] : memref<8xf32>, vector<8xf32>
// CHECK: arith.mulf %{{.*}}, %[[KSCALES]] : vector<8xf32>
// P·V: P times V's scale, V's row as i8.
// CHECK: %[[VSC:.*]] = memref.load %[[VSB]][%[[BATCH]], %[[KVH]], %{{.*}}]
// CHECK: arith.mulf %{{.*}}, %[[VSC]] : f32
// CHECK: %[[V8:.*]] = vector.load %[[VB]][%[[BATCH]], %[[KVH]], %{{.*}}, %{{.*}}] : memref<1x2x128x64xi8, {{.*}}>, vector<8xi8>
// CHECK: arith.sitofp %[[V8]] : vector<8xi8> to vector<8xf32>
func.func @decode(%q: tensor<1x8x1x64xf32>, %kq: tensor<1x2x128x64xi8>, %ks: tensor<1x2x128xf32>,
                  %vq: tensor<1x2x128x64xi8>, %vs: tensor<1x2x128xf32>) -> tensor<1x8x1x64xf32> {
  %k = attn.dequantize %kq, %ks : (tensor<1x2x128x64xi8>, tensor<1x2x128xf32>) -> tensor<1x2x128x64xf32>
  %v = attn.dequantize %vq, %vs : (tensor<1x2x128x64xi8>, tensor<1x2x128xf32>) -> tensor<1x2x128x64xf32>
  %o = attn.sdpa %q, %k, %v : (tensor<1x8x1x64xf32>, tensor<1x2x128x64xf32>, tensor<1x2x128x64xf32>) -> tensor<1x8x1x64xf32>
  return %o : tensor<1x8x1x64xf32>
}

// CHECK-LABEL: func @prefill
// CHECK-SAME: %[[KQ:[a-z0-9]+]]: tensor<1x2x64x64xi8>, %[[KS:[a-z0-9]+]]: tensor<1x2x64xf32>, %[[VQ:[a-z0-9]+]]: tensor<1x2x64x64xi8>, %[[VS:[a-z0-9]+]]: tensor<1x2x64xf32>
// CHECK-DAG: %[[KB:.*]] = bufferization.to_buffer %[[KQ]] {{.*}} to memref<1x2x64x64xi8
// CHECK-DAG: %[[VB:.*]] = bufferization.to_buffer %[[VQ]] {{.*}} to memref<1x2x64x64xi8
// CHECK-DAG: %[[KSB:.*]] = bufferization.to_buffer %[[KS]]
// CHECK-DAG: %[[VSB:.*]] = bufferization.to_buffer %[[VS]]
// K's tile transposed: each key's scale broadcast, its row as i8, times it.
// CHECK: %[[KSC:.*]] = memref.load %[[KSB]]
// CHECK: %[[KSCV:.*]] = vector.broadcast %[[KSC]] : f32 to vector<8xf32>
// CHECK: %[[K8:.*]] = vector.load %[[KB]]{{.*}} : memref<1x2x64x64xi8, {{.*}}>, vector<8xi8>
// CHECK: %[[KF:.*]] = arith.sitofp %[[K8]] : vector<8xi8> to vector<8xf32>
// CHECK: arith.mulf %[[KF]], %[[KSCV]] : vector<8xf32>
// P·V: V's row as i8, P times V's scale.
// CHECK: %[[V8:.*]] = vector.load %[[VB]]{{.*}} : memref<1x2x64x64xi8, {{.*}}>, vector<8xi8>
// CHECK: arith.sitofp %[[V8]] : vector<8xi8> to vector<8xf32>
// CHECK: %[[VSC:.*]] = memref.load %[[VSB]]
// CHECK: arith.mulf %{{.*}}, %[[VSC]] : f32
// CHECK-NOT: attn.dequantize
// CHECK: return
func.func @prefill(%q: tensor<1x2x64x64xf32>, %kq: tensor<1x2x64x64xi8>, %ks: tensor<1x2x64xf32>,
                   %vq: tensor<1x2x64x64xi8>, %vs: tensor<1x2x64xf32>) -> tensor<1x2x64x64xf32> {
  %k = attn.dequantize %kq, %ks : (tensor<1x2x64x64xi8>, tensor<1x2x64xf32>) -> tensor<1x2x64x64xf32>
  %v = attn.dequantize %vq, %vs : (tensor<1x2x64x64xi8>, tensor<1x2x64xf32>) -> tensor<1x2x64x64xf32>
  %o = attn.sdpa %q, %k, %v : (tensor<1x2x64x64xf32>, tensor<1x2x64x64xf32>, tensor<1x2x64x64xf32>) -> tensor<1x2x64x64xf32>
  return %o : tensor<1x2x64x64xf32>
}
