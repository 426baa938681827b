// Attention as TOSA (the form ONNX and TFLite importers emit: tosa.matmul,
// tosa.transpose of K, a scale by tosa.mul, an additive mask by tosa.add,
// reduce_max / sub / exp / reduce_sum / reciprocal / mul) raises once the
// upstream TOSA lowerings have run: docs/raise.md's textual pipeline. A
// constant causal mask (0 below the diagonal, -inf above) becomes
// causal = top_left; a mask argument is sdpa's mask operand (with
// zero-empty-rows). The execution check compares the lowered function run
// as written (reference) and raised (cpu).
// RUN: attn-opt %s --pass-pipeline="builtin.module(func.func(tosa-to-linalg-named,tosa-to-linalg,tosa-to-arith,tosa-to-tensor),attn-raise{report=1 zero-empty-rows=1},canonicalize)" 2>&1 | FileCheck %s
// CHECK-DAG: remark: attn-raise: raised to attn.sdpa; a query row that keeps no key gives 0 here
// CHECK-DAG: remark: attn-raise: raised to attn.sdpa
// CHECK-LABEL: func.func @bert_attention
// CHECK: attn.sdpa {{.*}} {scale = 0.353553385 : f32} : (tensor<1x4x16x8xf32>, tensor<1x4x16x8xf32>, tensor<1x4x16x8xf32>, tensor<1x4x1x16xf32>) -> tensor<1x4x16x8xf32>
// CHECK-NOT: math.exp
// CHECK-LABEL: func.func @causal_attention
// CHECK: attn.sdpa {{.*}} {causal = #attn.causal<top_left>, scale = 0.353553385 : f32} : (tensor<1x4x16x8xf32>, tensor<1x4x16x8xf32>, tensor<1x4x16x8xf32>) -> tensor<1x4x16x8xf32>
// CHECK-NOT: math.exp
// RUN: rm -rf %t && mkdir -p %t
// RUN: attn-opt %s --pass-pipeline="builtin.module(func.func(tosa-to-linalg-named,tosa-to-linalg,tosa-to-arith,tosa-to-tensor))" -o %t/linalg.mlir
// RUN: attn-opt %t/linalg.mlir --attn-raise=zero-empty-rows -o %t/raised.mlir
// RUN: attn-run %t/linalg.mlir --entry=bert_attention --random-inputs --seed=3 --output=%t/a.npy --quiet
// RUN: attn-run %t/raised.mlir --entry=bert_attention --pipeline=cpu --random-inputs --seed=3 --expect=%t/a.npy --rtol=1e-5 --atol=1e-6 --quiet | FileCheck %s --check-prefix=RAN
// RUN: attn-run %t/linalg.mlir --entry=causal_attention --random-inputs --seed=4 --output=%t/b.npy --quiet
// RUN: attn-run %t/linalg.mlir --entry=causal_attention --pipeline=cpu --raise --random-inputs --seed=4 --expect=%t/b.npy --rtol=1e-5 --atol=1e-6 --quiet | FileCheck %s --check-prefix=RAN
// RAN: ok

func.func @bert_attention(%q: tensor<4x16x8xf32>, %k: tensor<4x16x8xf32>, %v: tensor<4x16x8xf32>, %mask: tensor<4x1x16xf32>) -> tensor<4x16x8xf32> {
  %kt = tosa.transpose %k {perms = array<i32: 0, 2, 1>} : (tensor<4x16x8xf32>) -> tensor<4x8x16xf32>
  %zp = "tosa.const"() {values = dense<0.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %s = tosa.matmul %q, %kt, %zp, %zp : (tensor<4x16x8xf32>, tensor<4x8x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<4x16x16xf32>
  %c = "tosa.const"() {values = dense<0.353553385> : tensor<1x1x1xf32>} : () -> tensor<1x1x1xf32>
  %shift = "tosa.const"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  %ss = tosa.mul %s, %c, %shift : (tensor<4x16x16xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<4x16x16xf32>
  %x = tosa.add %ss, %mask : (tensor<4x16x16xf32>, tensor<4x1x16xf32>) -> tensor<4x16x16xf32>
  %m = tosa.reduce_max %x {axis = 2 : i32} : (tensor<4x16x16xf32>) -> tensor<4x16x1xf32>
  %d = tosa.sub %x, %m : (tensor<4x16x16xf32>, tensor<4x16x1xf32>) -> tensor<4x16x16xf32>
  %e = tosa.exp %d : (tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
  %sum = tosa.reduce_sum %e {axis = 2 : i32} : (tensor<4x16x16xf32>) -> tensor<4x16x1xf32>
  %r = tosa.reciprocal %sum : (tensor<4x16x1xf32>) -> tensor<4x16x1xf32>
  %p = tosa.mul %e, %r, %shift : (tensor<4x16x16xf32>, tensor<4x16x1xf32>, tensor<1xi8>) -> tensor<4x16x16xf32>
  %o = tosa.matmul %p, %v, %zp, %zp : (tensor<4x16x16xf32>, tensor<4x16x8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<4x16x8xf32>
  return %o : tensor<4x16x8xf32>
}

func.func @causal_attention(%q: tensor<4x16x8xf32>, %k: tensor<4x16x8xf32>, %v: tensor<4x16x8xf32>) -> tensor<4x16x8xf32> {
  %kt = tosa.transpose %k {perms = array<i32: 0, 2, 1>} : (tensor<4x16x8xf32>) -> tensor<4x8x16xf32>
  %zp = "tosa.const"() {values = dense<0.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %s = tosa.matmul %q, %kt, %zp, %zp : (tensor<4x16x8xf32>, tensor<4x8x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<4x16x16xf32>
  %c = "tosa.const"() {values = dense<0.353553385> : tensor<1x1x1xf32>} : () -> tensor<1x1x1xf32>
  %shift = "tosa.const"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  %ss = tosa.mul %s, %c, %shift : (tensor<4x16x16xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<4x16x16xf32>
  %tri = "tosa.const"() {values = dense<[[[0.000000e+00, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000], [0.000000e+00, 0.000000e+00, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000], [0.000000e+00, 0.000000e+00, 0.000000e+00, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000], [0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000], [0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000], [0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000], [0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000], [0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000], [0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000], [0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000], [0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000], [0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000], [0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0xFF800000, 0xFF800000, 0xFF800000], [0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0xFF800000, 0xFF800000], [0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0xFF800000], [0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00]]]> : tensor<1x16x16xf32>} : () -> tensor<1x16x16xf32>
  %x = tosa.add %ss, %tri : (tensor<4x16x16xf32>, tensor<1x16x16xf32>) -> tensor<4x16x16xf32>
  %m = tosa.reduce_max %x {axis = 2 : i32} : (tensor<4x16x16xf32>) -> tensor<4x16x1xf32>
  %d = tosa.sub %x, %m : (tensor<4x16x16xf32>, tensor<4x16x1xf32>) -> tensor<4x16x16xf32>
  %e = tosa.exp %d : (tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
  %sum = tosa.reduce_sum %e {axis = 2 : i32} : (tensor<4x16x16xf32>) -> tensor<4x16x1xf32>
  %r = tosa.reciprocal %sum : (tensor<4x16x1xf32>) -> tensor<4x16x1xf32>
  %p = tosa.mul %e, %r, %shift : (tensor<4x16x16xf32>, tensor<4x16x1xf32>, tensor<1xi8>) -> tensor<4x16x16xf32>
  %o = tosa.matmul %p, %v, %zp, %zp : (tensor<4x16x16xf32>, tensor<4x16x8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<4x16x8xf32>
  return %o : tensor<4x16x8xf32>
}
