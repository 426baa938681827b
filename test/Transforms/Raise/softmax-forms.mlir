// Softmax forms other compilers emit, each raised and run against the
// source: torch-mlir's two-result max (the value and an unused argmax from
// linalg.index), softmax on whole tensors (arith/math on tensors,
// linalg.broadcast of the row max and sum), an f16 attention whose
// softmax runs in f32 between extf and truncf (raised: 4.9e-4 from the
// source, whose P·V accumulates in f16), a NaN-guarded softmax, and P·V
// written transposed with V as the first operand.
// RUN: attn-opt %s --attn-raise --canonicalize | FileCheck %s
// RUN: rm -rf %t && mkdir -p %t
// RUN: attn-run %s --entry=argmax_max --random-inputs --seed=1 --output=%t/a.npy --quiet
// RUN: attn-run %s --entry=argmax_max --pipeline=cpu --raise --random-inputs --seed=1 --expect=%t/a.npy --rtol=1e-5 --atol=1e-6 --quiet | FileCheck %s --check-prefix=RAN
// The reference pipeline takes arith/math on tensors as linalg:
// RUN: attn-opt %s --convert-elementwise-to-linalg -o %t/elementwise.mlir
// RUN: attn-run %t/elementwise.mlir --entry=tensor_ops --random-inputs --seed=2 --output=%t/b.npy --quiet
// RUN: attn-run %s --entry=tensor_ops --pipeline=cpu --raise --random-inputs --seed=2 --expect=%t/b.npy --rtol=1e-5 --atol=1e-6 --quiet | FileCheck %s --check-prefix=RAN
// RUN: attn-run %s --entry=half --random-inputs --seed=3 --output=%t/c.npy --quiet
// RUN: attn-run %s --entry=half --pipeline=cpu --raise --random-inputs --seed=3 --expect=%t/c.npy --rtol=0 --atol=2e-3 --quiet | FileCheck %s --check-prefix=RAN
// RUN: attn-run %s --entry=nan_guard --random-inputs --seed=4 --output=%t/d.npy --quiet
// RUN: attn-run %s --entry=nan_guard --pipeline=cpu --raise --random-inputs --seed=4 --expect=%t/d.npy --rtol=1e-5 --atol=1e-6 --quiet | FileCheck %s --check-prefix=RAN
// RUN: attn-run %s --entry=transposed_output --random-inputs --seed=5 --output=%t/e.npy --quiet
// RUN: attn-run %s --entry=transposed_output --pipeline=cpu --raise --random-inputs --seed=5 --expect=%t/e.npy --rtol=1e-5 --atol=1e-6 --quiet | FileCheck %s --check-prefix=RAN
// RAN: ok

#id = affine_map<(b, i, j) -> (b, i, j)>
#row = affine_map<(b, i, j) -> (b, i)>

// CHECK-LABEL: func.func @argmax_max
// CHECK: attn.sdpa {{.*}} {scale = 1.000000e+00 : f32} : (tensor<1x2x16x8xf32>
// CHECK-NOT: linalg.index
func.func @argmax_max(%q: tensor<2x16x8xf32>, %k: tensor<2x8x16xf32>, %v: tensor<2x16x8xf32>) -> tensor<2x16x8xf32> {
  %zero = arith.constant 0.0 : f32
  %min = arith.constant -3.40282347E+38 : f32
  %c0 = arith.constant 0 : i64
  %e0 = tensor.empty() : tensor<2x16x16xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e0 : tensor<2x16x16xf32>) -> tensor<2x16x16xf32>
  %s = linalg.batch_matmul ins(%q, %k : tensor<2x16x8xf32>, tensor<2x8x16xf32>) outs(%z : tensor<2x16x16xf32>) -> tensor<2x16x16xf32>
  %e1 = tensor.empty() : tensor<2x16xf32>
  %ei = tensor.empty() : tensor<2x16xi64>
  %m0 = linalg.fill ins(%min : f32) outs(%e1 : tensor<2x16xf32>) -> tensor<2x16xf32>
  %i0 = linalg.fill ins(%c0 : i64) outs(%ei : tensor<2x16xi64>) -> tensor<2x16xi64>
  %m:2 = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%s : tensor<2x16x16xf32>) outs(%m0, %i0 : tensor<2x16xf32>, tensor<2x16xi64>) {
  ^bb0(%a: f32, %acc: f32, %arg: i64):
    %j = linalg.index 2 : index
    %ji = arith.index_cast %j : index to i64
    %mx = arith.maximumf %a, %acc : f32
    %gt = arith.cmpf ogt, %a, %acc : f32
    %am = arith.select %gt, %ji, %arg : i64
    linalg.yield %mx, %am : f32, i64
  } -> (tensor<2x16xf32>, tensor<2x16xi64>)
  %ex = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s, %m#0 : tensor<2x16x16xf32>, tensor<2x16xf32>) outs(%e0 : tensor<2x16x16xf32>) {
  ^bb0(%a: f32, %mx: f32, %o: f32):
    %d = arith.subf %a, %mx : f32
    %y = math.exp %d : f32
    linalg.yield %y : f32
  } -> tensor<2x16x16xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<2x16xf32>) -> tensor<2x16xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%ex : tensor<2x16x16xf32>) outs(%s0 : tensor<2x16xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %y = arith.addf %a, %acc : f32
    linalg.yield %y : f32
  } -> tensor<2x16xf32>
  %p = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%ex, %sum : tensor<2x16x16xf32>, tensor<2x16xf32>) outs(%e0 : tensor<2x16x16xf32>) {
  ^bb0(%a: f32, %t: f32, %o: f32):
    %y = arith.divf %a, %t : f32
    linalg.yield %y : f32
  } -> tensor<2x16x16xf32>
  %e2 = tensor.empty() : tensor<2x16x8xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x16x8xf32>) -> tensor<2x16x8xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x16x16xf32>, tensor<2x16x8xf32>) outs(%z2 : tensor<2x16x8xf32>) -> tensor<2x16x8xf32>
  return %o : tensor<2x16x8xf32>
}

// CHECK-LABEL: func.func @tensor_ops
// CHECK: attn.sdpa {{.*}} {scale = 5.000000e-01 : f32}
// CHECK-NOT: math.exp
func.func @tensor_ops(%q: tensor<2x16x8xf32>, %k: tensor<2x8x16xf32>, %v: tensor<2x16x8xf32>) -> tensor<2x16x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %half = arith.constant dense<0.5> : tensor<2x16x16xf32>
  %e0 = tensor.empty() : tensor<2x16x16xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e0 : tensor<2x16x16xf32>) -> tensor<2x16x16xf32>
  %s0 = linalg.batch_matmul ins(%q, %k : tensor<2x16x8xf32>, tensor<2x8x16xf32>) outs(%z : tensor<2x16x16xf32>) -> tensor<2x16x16xf32>
  %s = arith.mulf %s0, %half : tensor<2x16x16xf32>
  %e1 = tensor.empty() : tensor<2x16xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%e1 : tensor<2x16xf32>) -> tensor<2x16xf32>
  %m = linalg.reduce ins(%s : tensor<2x16x16xf32>) outs(%m0 : tensor<2x16xf32>) dimensions = [2]
    (%a: f32, %acc: f32) { %y = arith.maxnumf %a, %acc : f32
                           linalg.yield %y : f32 }
  %mb = linalg.broadcast ins(%m : tensor<2x16xf32>) outs(%e0 : tensor<2x16x16xf32>) dimensions = [2]
  %d = arith.subf %s, %mb : tensor<2x16x16xf32>
  %ex = math.exp %d : tensor<2x16x16xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<2x16xf32>) -> tensor<2x16xf32>
  %sum = linalg.reduce ins(%ex : tensor<2x16x16xf32>) outs(%z1 : tensor<2x16xf32>) dimensions = [2]
    (%a: f32, %acc: f32) { %y = arith.addf %a, %acc : f32
                           linalg.yield %y : f32 }
  %sb = linalg.broadcast ins(%sum : tensor<2x16xf32>) outs(%e0 : tensor<2x16x16xf32>) dimensions = [2]
  %p = arith.divf %ex, %sb : tensor<2x16x16xf32>
  %e2 = tensor.empty() : tensor<2x16x8xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x16x8xf32>) -> tensor<2x16x8xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x16x16xf32>, tensor<2x16x8xf32>) outs(%z2 : tensor<2x16x8xf32>) -> tensor<2x16x8xf32>
  return %o : tensor<2x16x8xf32>
}

// CHECK-LABEL: func.func @half
// CHECK: attn.sdpa {{.*}} {scale = 2.500000e-01 : f32} : (tensor<1x2x16x8xf16>, tensor<1x2x16x8xf16>, tensor<1x2x16x8xf16>) -> tensor<1x2x16x8xf16>
// CHECK-NOT: arith.extf
func.func @half(%q: tensor<2x16x8xf16>, %k: tensor<2x8x16xf16>, %v: tensor<2x16x8xf16>) -> tensor<2x16x8xf16> {
  %zero = arith.constant 0.0 : f16
  %zero32 = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %c = arith.constant 0.25 : f32
  %e0 = tensor.empty() : tensor<2x16x16xf16>
  %e32 = tensor.empty() : tensor<2x16x16xf32>
  %z = linalg.fill ins(%zero : f16) outs(%e0 : tensor<2x16x16xf16>) -> tensor<2x16x16xf16>
  %s = linalg.batch_matmul ins(%q, %k : tensor<2x16x8xf16>, tensor<2x8x16xf16>) outs(%z : tensor<2x16x16xf16>) -> tensor<2x16x16xf16>
  %x = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s : tensor<2x16x16xf16>) outs(%e32 : tensor<2x16x16xf32>) {
  ^bb0(%a: f16, %o: f32):
    %w = arith.extf %a : f16 to f32
    %y = arith.mulf %w, %c : f32
    linalg.yield %y : f32
  } -> tensor<2x16x16xf32>
  %e1 = tensor.empty() : tensor<2x16xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%e1 : tensor<2x16xf32>) -> tensor<2x16xf32>
  %m = linalg.reduce ins(%x : tensor<2x16x16xf32>) outs(%m0 : tensor<2x16xf32>) dimensions = [2]
    (%a: f32, %acc: f32) { %y = arith.maximumf %a, %acc : f32
                           linalg.yield %y : f32 }
  %ex = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %m : tensor<2x16x16xf32>, tensor<2x16xf32>) outs(%e32 : tensor<2x16x16xf32>) {
  ^bb0(%a: f32, %mx: f32, %o: f32):
    %d = arith.subf %a, %mx : f32
    %y = math.exp %d : f32
    linalg.yield %y : f32
  } -> tensor<2x16x16xf32>
  %z1 = linalg.fill ins(%zero32 : f32) outs(%e1 : tensor<2x16xf32>) -> tensor<2x16xf32>
  %sum = linalg.reduce ins(%ex : tensor<2x16x16xf32>) outs(%z1 : tensor<2x16xf32>) dimensions = [2]
    (%a: f32, %acc: f32) { %y = arith.addf %a, %acc : f32
                           linalg.yield %y : f32 }
  %p = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%ex, %sum : tensor<2x16x16xf32>, tensor<2x16xf32>) outs(%e0 : tensor<2x16x16xf16>) {
  ^bb0(%a: f32, %t: f32, %o: f16):
    %y = arith.divf %a, %t : f32
    %h = arith.truncf %y : f32 to f16
    linalg.yield %h : f16
  } -> tensor<2x16x16xf16>
  %e2 = tensor.empty() : tensor<2x16x8xf16>
  %z2 = linalg.fill ins(%zero : f16) outs(%e2 : tensor<2x16x8xf16>) -> tensor<2x16x8xf16>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x16x16xf16>, tensor<2x16x8xf16>) outs(%z2 : tensor<2x16x8xf16>) -> tensor<2x16x8xf16>
  return %o : tensor<2x16x8xf16>
}

// A NaN guard (select(isnan(p), 0, p)) after a softmax over an i1 mask
// tensor: the source zeroes a row that keeps no key, as sdpa does, so it
// is raised without zero-empty-rows.
// CHECK-LABEL: func.func @nan_guard
// CHECK: attn.sdpa {{.*}} {scale = 1.000000e+00 : f32} : (tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x16xi1>)
// CHECK-NOT: arith.cmpf
func.func @nan_guard(%q: tensor<2x16x8xf32>, %k: tensor<2x8x16xf32>, %v: tensor<2x16x8xf32>, %keep: tensor<2x16x16xi1>) -> tensor<2x16x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e0 = tensor.empty() : tensor<2x16x16xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e0 : tensor<2x16x16xf32>) -> tensor<2x16x16xf32>
  %s = linalg.batch_matmul ins(%q, %k : tensor<2x16x8xf32>, tensor<2x8x16xf32>) outs(%z : tensor<2x16x16xf32>) -> tensor<2x16x16xf32>
  %x = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s, %keep : tensor<2x16x16xf32>, tensor<2x16x16xi1>) outs(%e0 : tensor<2x16x16xf32>) {
  ^bb0(%a: f32, %kp: i1, %o: f32):
    %y = arith.select %kp, %a, %ninf : f32
    linalg.yield %y : f32
  } -> tensor<2x16x16xf32>
  %e1 = tensor.empty() : tensor<2x16xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%e1 : tensor<2x16xf32>) -> tensor<2x16xf32>
  %m = linalg.reduce ins(%x : tensor<2x16x16xf32>) outs(%m0 : tensor<2x16xf32>) dimensions = [2]
    (%a: f32, %acc: f32) { %y = arith.maximumf %a, %acc : f32
                           linalg.yield %y : f32 }
  %ex = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %m : tensor<2x16x16xf32>, tensor<2x16xf32>) outs(%e0 : tensor<2x16x16xf32>) {
  ^bb0(%a: f32, %mx: f32, %o: f32):
    %d = arith.subf %a, %mx : f32
    %y = math.exp %d : f32
    linalg.yield %y : f32
  } -> tensor<2x16x16xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<2x16xf32>) -> tensor<2x16xf32>
  %sum = linalg.reduce ins(%ex : tensor<2x16x16xf32>) outs(%z1 : tensor<2x16xf32>) dimensions = [2]
    (%a: f32, %acc: f32) { %y = arith.addf %a, %acc : f32
                           linalg.yield %y : f32 }
  %p = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%ex, %sum : tensor<2x16x16xf32>, tensor<2x16xf32>) outs(%e0 : tensor<2x16x16xf32>) {
  ^bb0(%a: f32, %t: f32, %o: f32):
    %y = arith.divf %a, %t : f32
    %nan = arith.cmpf uno, %y, %y : f32
    %g = arith.select %nan, %zero, %y : f32
    linalg.yield %g : f32
  } -> tensor<2x16x16xf32>
  %e2 = tensor.empty() : tensor<2x16x8xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x16x8xf32>) -> tensor<2x16x8xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x16x16xf32>, tensor<2x16x8xf32>) outs(%z2 : tensor<2x16x8xf32>) -> tensor<2x16x8xf32>
  return %o : tensor<2x16x8xf32>
}

// O written transposed, V first: O[e, i] = Σ_j V[j, e]·P[i, j] (the
// queries are the contraction's n).
// CHECK-LABEL: func.func @transposed_output
// CHECK: attn.sdpa {{.*}} {scale = 1.000000e+00 : f32} : (tensor<1x1x16x8xf32>, tensor<1x1x16x8xf32>, tensor<1x1x16x8xf32>) -> tensor<1x1x16x8xf32>
// CHECK: linalg.transpose
func.func @transposed_output(%q: tensor<16x8xf32>, %k: tensor<16x8xf32>, %v: tensor<16x8xf32>) -> tensor<8x16xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e0 = tensor.empty() : tensor<16x16xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e0 : tensor<16x16xf32>) -> tensor<16x16xf32>
  %s = linalg.matmul indexing_maps = [affine_map<(i, j, d) -> (i, d)>, affine_map<(i, j, d) -> (j, d)>, affine_map<(i, j, d) -> (i, j)>]
         ins(%q, %k : tensor<16x8xf32>, tensor<16x8xf32>) outs(%z : tensor<16x16xf32>) -> tensor<16x16xf32>
  %e1 = tensor.empty() : tensor<16xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%e1 : tensor<16xf32>) -> tensor<16xf32>
  %m = linalg.reduce ins(%s : tensor<16x16xf32>) outs(%m0 : tensor<16xf32>) dimensions = [1]
         (%x: f32, %acc: f32) { %r = arith.maximumf %x, %acc : f32
                               linalg.yield %r : f32 }
  %e = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
         ins(%s, %m : tensor<16x16xf32>, tensor<16xf32>) outs(%e0 : tensor<16x16xf32>) {
  ^bb0(%x: f32, %mx: f32, %o: f32):
    %d = arith.subf %x, %mx : f32
    %y = math.exp %d : f32
    linalg.yield %y : f32
  } -> tensor<16x16xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<16xf32>) -> tensor<16xf32>
  %sum = linalg.reduce ins(%e : tensor<16x16xf32>) outs(%s0 : tensor<16xf32>) dimensions = [1]
           (%x: f32, %acc: f32) { %r = arith.addf %x, %acc : f32
                                 linalg.yield %r : f32 }
  %p = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
         ins(%e, %sum : tensor<16x16xf32>, tensor<16xf32>) outs(%e0 : tensor<16x16xf32>) {
  ^bb0(%x: f32, %t: f32, %o: f32):
    %y = arith.divf %x, %t : f32
    linalg.yield %y : f32
  } -> tensor<16x16xf32>
  %e2 = tensor.empty() : tensor<8x16xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(e, i, j) -> (j, e)>, affine_map<(e, i, j) -> (i, j)>, affine_map<(e, i, j) -> (e, i)>],
                       iterator_types = ["parallel", "parallel", "reduction"]}
         ins(%v, %p : tensor<16x8xf32>, tensor<16x16xf32>) outs(%z2 : tensor<8x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %mm = arith.mulf %a, %b : f32
    %y = arith.addf %acc, %mm : f32
    linalg.yield %y : f32
  } -> tensor<8x16xf32>
  return %o : tensor<8x16xf32>
}
