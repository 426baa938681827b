// A BERT layer as TOSA (ONNX's form: rank-3 tosa.matmul projections with
// bias adds, reshape and transpose head split, scores scaled by tosa.mul,
// the padding mask (1 - m)·-10000 added, softmax by reduce_max / sub / exp
// / reduce_sum / reciprocal / mul, head merge, output projection, bias,
// residual; 4 heads of 8, T 32) after upstream's TOSA lowerings: the
// attention with its four projections becomes one attn.mha (the rank-3
// weights and [1, 1, 32] biases collapsed to rank 2 and 1) whose score
// function adds the captured mask; the output bias and the residual stay
// generic adds. With mha=false it is attn.sdpa between attn.projects. The
// layer raised through the cpu pipeline (both ways) matches the layer as
// written through the reference pipeline.
// RUN: rm -rf %t && mkdir -p %t
// RUN: attn-opt %s --pass-pipeline="builtin.module(func.func(tosa-to-linalg-named,tosa-to-linalg,tosa-to-arith,tosa-to-tensor))" -o %t/linalg.mlir
// RUN: attn-opt %t/linalg.mlir --attn-raise=zero-empty-rows --canonicalize | FileCheck %s --check-prefix=IR
// IR: attn.mha %arg0, %arg0, {{.*}} qkv_bias({{.*}}) captures(%arg1) {layout = #attn.layout<in_out>, num_heads = 4 : i64, scale = 1.000000e+00 : f32} score_mod {
// IR-NOT: attn.sdpa
// IR-NOT: attn.project
// IR-NOT: linalg.batch_matmul
// IR-NOT: math.exp
// RUN: attn-opt %t/linalg.mlir "--attn-raise=zero-empty-rows mha=false" --canonicalize | FileCheck %s --check-prefix=NOMHA
// NOMHA-COUNT-3: attn.project %arg0
// NOMHA: attn.sdpa {{.*}} captures(%arg1) {scale = 1.000000e+00 : f32} score_mod {
// NOMHA: attn.project
// RUN: attn-run %t/linalg.mlir --random-inputs --seed=5 --output=%t/ref.npy --quiet
// RUN: attn-run %t/linalg.mlir --pipeline=cpu --raise=zero-empty-rows=1 --random-inputs --seed=5 --expect=%t/ref.npy --rtol=1e-5 --atol=1e-5 --quiet | FileCheck %s
// RUN: attn-run %t/linalg.mlir --pipeline=cpu "--raise=zero-empty-rows=1 mha=0" --random-inputs --seed=5 --expect=%t/ref.npy --rtol=1e-5 --atol=1e-5 --quiet | FileCheck %s
// CHECK: ok
// A bad attn-raise option is refused (exit 2):
// RUN: attn-run %t/linalg.mlir --pipeline=cpu --raise=no-such-option=1 --random-inputs > %t/bad.txt 2>&1 || echo "exit $?" >> %t/bad.txt
// RUN: FileCheck %s --check-prefix=BAD < %t/bad.txt
// BAD: attn-raise options 'no-such-option=1': {{.*}}no such option no-such-option
// BAD: exit 2

func.func @bert_layer(%x: tensor<1x32x32xf32>, %mask: tensor<1x1x32xf32>,
                      %wq: tensor<1x32x32xf32>, %wk: tensor<1x32x32xf32>, %wv: tensor<1x32x32xf32>,
                      %wo: tensor<1x32x32xf32>, %bq: tensor<1x1x32xf32>, %bk: tensor<1x1x32xf32>,
                      %bv: tensor<1x1x32xf32>, %bo: tensor<1x1x32xf32>) -> tensor<1x32x32xf32> {
  %zp = "tosa.const"() {values = dense<0.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %shift = "tosa.const"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  %one = "tosa.const"() {values = dense<1.0> : tensor<1x1x1xf32>} : () -> tensor<1x1x1xf32>
  %big = "tosa.const"() {values = dense<-10000.0> : tensor<1x1x1xf32>} : () -> tensor<1x1x1xf32>
  %scale = "tosa.const"() {values = dense<0.35355339059327373> : tensor<1x1x1xf32>} : () -> tensor<1x1x1xf32>
  %s4 = tosa.const_shape {values = dense<[1, 32, 4, 8]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %s3 = tosa.const_shape {values = dense<[4, 32, 8]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %s3k = tosa.const_shape {values = dense<[4, 8, 32]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %sm = tosa.const_shape {values = dense<[1, 32, 32]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %se = tosa.const_shape {values = dense<[1, 32, 32]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %s4o = tosa.const_shape {values = dense<[1, 4, 32, 8]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %qm = tosa.matmul %x, %wq, %zp, %zp : (tensor<1x32x32xf32>, tensor<1x32x32xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x32x32xf32>
  %km = tosa.matmul %x, %wk, %zp, %zp : (tensor<1x32x32xf32>, tensor<1x32x32xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x32x32xf32>
  %vm = tosa.matmul %x, %wv, %zp, %zp : (tensor<1x32x32xf32>, tensor<1x32x32xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x32x32xf32>
  %q1 = tosa.add %qm, %bq : (tensor<1x32x32xf32>, tensor<1x1x32xf32>) -> tensor<1x32x32xf32>
  %k1 = tosa.add %km, %bk : (tensor<1x32x32xf32>, tensor<1x1x32xf32>) -> tensor<1x32x32xf32>
  %v1 = tosa.add %vm, %bv : (tensor<1x32x32xf32>, tensor<1x1x32xf32>) -> tensor<1x32x32xf32>
  %q2 = tosa.reshape %q1, %s4 : (tensor<1x32x32xf32>, !tosa.shape<4>) -> tensor<1x32x4x8xf32>
  %k2 = tosa.reshape %k1, %s4 : (tensor<1x32x32xf32>, !tosa.shape<4>) -> tensor<1x32x4x8xf32>
  %v2 = tosa.reshape %v1, %s4 : (tensor<1x32x32xf32>, !tosa.shape<4>) -> tensor<1x32x4x8xf32>
  %q3 = tosa.transpose %q2 {perms = array<i32: 0, 2, 1, 3>} : (tensor<1x32x4x8xf32>) -> tensor<1x4x32x8xf32>
  %k3 = tosa.transpose %k2 {perms = array<i32: 0, 2, 3, 1>} : (tensor<1x32x4x8xf32>) -> tensor<1x4x8x32xf32>
  %v3 = tosa.transpose %v2 {perms = array<i32: 0, 2, 1, 3>} : (tensor<1x32x4x8xf32>) -> tensor<1x4x32x8xf32>
  %q4 = tosa.reshape %q3, %s3 : (tensor<1x4x32x8xf32>, !tosa.shape<3>) -> tensor<4x32x8xf32>
  %k4 = tosa.reshape %k3, %s3k : (tensor<1x4x8x32xf32>, !tosa.shape<3>) -> tensor<4x8x32xf32>
  %v4 = tosa.reshape %v3, %s3 : (tensor<1x4x32x8xf32>, !tosa.shape<3>) -> tensor<4x32x8xf32>
  %s = tosa.matmul %q4, %k4, %zp, %zp : (tensor<4x32x8xf32>, tensor<4x8x32xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<4x32x32xf32>
  %ss = tosa.mul %s, %scale, %shift : (tensor<4x32x32xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<4x32x32xf32>
  %inv = tosa.sub %one, %mask : (tensor<1x1x1xf32>, tensor<1x1x32xf32>) -> tensor<1x1x32xf32>
  %pen = tosa.mul %inv, %big, %shift : (tensor<1x1x32xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<1x1x32xf32>
  %xs = tosa.add %ss, %pen : (tensor<4x32x32xf32>, tensor<1x1x32xf32>) -> tensor<4x32x32xf32>
  %m = tosa.reduce_max %xs {axis = 2 : i32} : (tensor<4x32x32xf32>) -> tensor<4x32x1xf32>
  %dd = tosa.sub %xs, %m : (tensor<4x32x32xf32>, tensor<4x32x1xf32>) -> tensor<4x32x32xf32>
  %ex = tosa.exp %dd : (tensor<4x32x32xf32>) -> tensor<4x32x32xf32>
  %sum = tosa.reduce_sum %ex {axis = 2 : i32} : (tensor<4x32x32xf32>) -> tensor<4x32x1xf32>
  %r = tosa.reciprocal %sum : (tensor<4x32x1xf32>) -> tensor<4x32x1xf32>
  %p = tosa.mul %ex, %r, %shift : (tensor<4x32x32xf32>, tensor<4x32x1xf32>, tensor<1xi8>) -> tensor<4x32x32xf32>
  %o = tosa.matmul %p, %v4, %zp, %zp : (tensor<4x32x32xf32>, tensor<4x32x8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<4x32x8xf32>
  %o1 = tosa.reshape %o, %s4o : (tensor<4x32x8xf32>, !tosa.shape<4>) -> tensor<1x4x32x8xf32>
  %o2 = tosa.transpose %o1 {perms = array<i32: 0, 2, 1, 3>} : (tensor<1x4x32x8xf32>) -> tensor<1x32x4x8xf32>
  %o3 = tosa.reshape %o2, %se : (tensor<1x32x4x8xf32>, !tosa.shape<3>) -> tensor<1x32x32xf32>
  %pr = tosa.matmul %o3, %wo, %zp, %zp : (tensor<1x32x32xf32>, tensor<1x32x32xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x32x32xf32>
  %pb = tosa.add %pr, %bo : (tensor<1x32x32xf32>, tensor<1x1x32xf32>) -> tensor<1x32x32xf32>
  %out = tosa.add %pb, %x : (tensor<1x32x32xf32>, tensor<1x32x32xf32>) -> tensor<1x32x32xf32>
  return %out : tensor<1x32x32xf32>
}
