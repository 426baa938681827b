// attn.score_mod and attn.mask_mod to one elementwise linalg.generic each:
// the positions are linalg.index 0..3, a capture is read with each index
// clamped into its shape, bf16 scores go through f32, the mask function
// selects -inf.
// RUN: attn-opt %s -convert-attn-to-linalg -split-input-file | FileCheck %s

// CHECK-LABEL: func.func @relative_bias
// CHECK-SAME: %[[S:[^:]*]]: tensor<1x2x8x8xbf16>, %[[BIAS:[^:]*]]: tensor<2x15xf32>
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[S]] : tensor<1x2x8x8xbf16>)
// CHECK: ^bb0(%[[X:.*]]: bf16, %{{.*}}: bf16):
// CHECK-DAG: %[[H:.*]] = linalg.index 1 : index
// CHECK-DAG: %[[I:.*]] = linalg.index 2 : index
// CHECK-DAG: %[[J:.*]] = linalg.index 3 : index
// CHECK-DAG: %[[XF:.*]] = arith.extf %[[X]] : bf16 to f32
// CHECK: %[[R:.*]] = arith.addi
// CHECK: tensor.dim %[[BIAS]], %c0
// CHECK: %[[HC:.*]] = arith.minsi %{{.*}}, %{{.*}} : index
// CHECK: tensor.dim %[[BIAS]], %c1
// CHECK: %[[RC:.*]] = arith.minsi %{{.*}}, %{{.*}} : index
// CHECK: %[[E:.*]] = tensor.extract %[[BIAS]][%[[HC]], %[[RC]]] : tensor<2x15xf32>
// CHECK: %[[N:.*]] = arith.addf %[[XF]], %[[E]] : f32
// CHECK: %[[T:.*]] = arith.truncf %[[N]] : f32 to bf16
// CHECK: linalg.yield %[[T]] : bf16
func.func @relative_bias(%s: tensor<1x2x8x8xbf16>, %bias: tensor<2x15xf32>) -> tensor<1x2x8x8xbf16> {
  %y = attn.score_mod %s captures(%bias : tensor<2x15xf32>) {
  ^bb0(%x: f32, %b: index, %h: index, %i: index, %j: index, %t: tensor<2x15xf32>):
    %c7 = arith.constant 7 : index
    %d = arith.subi %i, %j : index
    %r = arith.addi %d, %c7 : index
    %v = tensor.extract %t[%h, %r] : tensor<2x15xf32>
    %n = arith.addf %x, %v : f32
    attn.yield %n : f32
  } : tensor<1x2x8x8xbf16>
  return %y : tensor<1x2x8x8xbf16>
}

// -----

// CHECK-LABEL: func.func @prefix_lm
// CHECK: linalg.generic
// CHECK: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-DAG: %[[I:.*]] = linalg.index 2 : index
// CHECK-DAG: %[[J:.*]] = linalg.index 3 : index
// CHECK: %[[KEEP:.*]] = arith.ori
// CHECK: %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[Y:.*]] = arith.select %[[KEEP]], %[[X]], %[[NINF]] : f32
// CHECK: linalg.yield %[[Y]] : f32
func.func @prefix_lm(%s: tensor<2x4x9x9xf32>) -> tensor<2x4x9x9xf32> {
  %y = attn.mask_mod %s {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %c3 = arith.constant 3 : index
    %causal = arith.cmpi ule, %j, %i : index
    %prefix = arith.cmpi ult, %j, %c3 : index
    %keep = arith.ori %causal, %prefix : i1
    attn.yield %keep : i1
  } : tensor<2x4x9x9xf32>
  return %y : tensor<2x4x9x9xf32>
}
