func.func @bert_layer(%x: tensor<1x512x768xf32>, %mask: tensor<1x1x512xf32>,
                      %wq: tensor<1x768x768xf32>, %wk: tensor<1x768x768xf32>, %wv: tensor<1x768x768xf32>,
                      %wo: tensor<1x768x768xf32>, %bq: tensor<1x1x768xf32>, %bk: tensor<1x1x768xf32>,
                      %bv: tensor<1x1x768xf32>, %bo: tensor<1x1x768xf32>) -> tensor<1x512x768xf32> {
  %zp = "tosa.const"() {values = dense<0.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %shift = "tosa.const"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  %one = "tosa.const"() {values = dense<1.0> : tensor<1x1x1xf32>} : () -> tensor<1x1x1xf32>
  %big = "tosa.const"() {values = dense<-10000.0> : tensor<1x1x1xf32>} : () -> tensor<1x1x1xf32>
  %scale = "tosa.const"() {values = dense<0.125> : tensor<1x1x1xf32>} : () -> tensor<1x1x1xf32>
  %s4 = tosa.const_shape {values = dense<[1, 512, 12, 64]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %s3 = tosa.const_shape {values = dense<[12, 512, 64]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %s3k = tosa.const_shape {values = dense<[12, 64, 512]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %sm = tosa.const_shape {values = dense<[1, 512, 512]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %se = tosa.const_shape {values = dense<[1, 512, 768]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %s4o = tosa.const_shape {values = dense<[1, 12, 512, 64]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %qm = tosa.matmul %x, %wq, %zp, %zp : (tensor<1x512x768xf32>, tensor<1x768x768xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x512x768xf32>
  %km = tosa.matmul %x, %wk, %zp, %zp : (tensor<1x512x768xf32>, tensor<1x768x768xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x512x768xf32>
  %vm = tosa.matmul %x, %wv, %zp, %zp : (tensor<1x512x768xf32>, tensor<1x768x768xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x512x768xf32>
  %q1 = tosa.add %qm, %bq : (tensor<1x512x768xf32>, tensor<1x1x768xf32>) -> tensor<1x512x768xf32>
  %k1 = tosa.add %km, %bk : (tensor<1x512x768xf32>, tensor<1x1x768xf32>) -> tensor<1x512x768xf32>
  %v1 = tosa.add %vm, %bv : (tensor<1x512x768xf32>, tensor<1x1x768xf32>) -> tensor<1x512x768xf32>
  %q2 = tosa.reshape %q1, %s4 : (tensor<1x512x768xf32>, !tosa.shape<4>) -> tensor<1x512x12x64xf32>
  %k2 = tosa.reshape %k1, %s4 : (tensor<1x512x768xf32>, !tosa.shape<4>) -> tensor<1x512x12x64xf32>
  %v2 = tosa.reshape %v1, %s4 : (tensor<1x512x768xf32>, !tosa.shape<4>) -> tensor<1x512x12x64xf32>
  %q3 = tosa.transpose %q2 {perms = array<i32: 0, 2, 1, 3>} : (tensor<1x512x12x64xf32>) -> tensor<1x12x512x64xf32>
  %k3 = tosa.transpose %k2 {perms = array<i32: 0, 2, 3, 1>} : (tensor<1x512x12x64xf32>) -> tensor<1x12x64x512xf32>
  %v3 = tosa.transpose %v2 {perms = array<i32: 0, 2, 1, 3>} : (tensor<1x512x12x64xf32>) -> tensor<1x12x512x64xf32>
  %q4 = tosa.reshape %q3, %s3 : (tensor<1x12x512x64xf32>, !tosa.shape<3>) -> tensor<12x512x64xf32>
  %k4 = tosa.reshape %k3, %s3k : (tensor<1x12x64x512xf32>, !tosa.shape<3>) -> tensor<12x64x512xf32>
  %v4 = tosa.reshape %v3, %s3 : (tensor<1x12x512x64xf32>, !tosa.shape<3>) -> tensor<12x512x64xf32>
  %s = tosa.matmul %q4, %k4, %zp, %zp : (tensor<12x512x64xf32>, tensor<12x64x512xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<12x512x512xf32>
  %ss = tosa.mul %s, %scale, %shift : (tensor<12x512x512xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<12x512x512xf32>
  %inv = tosa.sub %one, %mask : (tensor<1x1x1xf32>, tensor<1x1x512xf32>) -> tensor<1x1x512xf32>
  %pen = tosa.mul %inv, %big, %shift : (tensor<1x1x512xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<1x1x512xf32>
  %xs = tosa.add %ss, %pen : (tensor<12x512x512xf32>, tensor<1x1x512xf32>) -> tensor<12x512x512xf32>
  %m = tosa.reduce_max %xs {axis = 2 : i32} : (tensor<12x512x512xf32>) -> tensor<12x512x1xf32>
  %dd = tosa.sub %xs, %m : (tensor<12x512x512xf32>, tensor<12x512x1xf32>) -> tensor<12x512x512xf32>
  %ex = tosa.exp %dd : (tensor<12x512x512xf32>) -> tensor<12x512x512xf32>
  %sum = tosa.reduce_sum %ex {axis = 2 : i32} : (tensor<12x512x512xf32>) -> tensor<12x512x1xf32>
  %r = tosa.reciprocal %sum : (tensor<12x512x1xf32>) -> tensor<12x512x1xf32>
  %p = tosa.mul %ex, %r, %shift : (tensor<12x512x512xf32>, tensor<12x512x1xf32>, tensor<1xi8>) -> tensor<12x512x512xf32>
  %o = tosa.matmul %p, %v4, %zp, %zp : (tensor<12x512x512xf32>, tensor<12x512x64xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<12x512x64xf32>
  %o1 = tosa.reshape %o, %s4o : (tensor<12x512x64xf32>, !tosa.shape<4>) -> tensor<1x12x512x64xf32>
  %o2 = tosa.transpose %o1 {perms = array<i32: 0, 2, 1, 3>} : (tensor<1x12x512x64xf32>) -> tensor<1x512x12x64xf32>
  %o3 = tosa.reshape %o2, %se : (tensor<1x512x12x64xf32>, !tosa.shape<3>) -> tensor<1x512x768xf32>
  %pr = tosa.matmul %o3, %wo, %zp, %zp : (tensor<1x512x768xf32>, tensor<1x768x768xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x512x768xf32>
  %pb = tosa.add %pr, %bo : (tensor<1x512x768xf32>, tensor<1x1x768xf32>) -> tensor<1x512x768xf32>
  %out = tosa.add %pb, %x : (tensor<1x512x768xf32>, tensor<1x512x768xf32>) -> tensor<1x512x768xf32>
  return %out : tensor<1x512x768xf32>
}
