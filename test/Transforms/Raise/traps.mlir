// What attn-raise must not raise, and the reason its report gives: each
// function is attention-like generic IR that differs from sdpa's semantics
// (or that sdpa cannot hold), and stays as written.
// RUN: attn-opt %s --attn-raise=report --verify-diagnostics | FileCheck %s

#q = affine_map<(i, j, d) -> (i, d)>
#k = affine_map<(i, j, d) -> (j, d)>
#s = affine_map<(i, j, d) -> (i, j)>
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>

// Two contractions with no softmax between them: not attention (no report).
// CHECK-LABEL: func.func @no_softmax
// CHECK-NOT: attn.sdpa
// CHECK: linalg.matmul
// CHECK: linalg.matmul
func.func @no_softmax(%q: tensor<16x8xf32>, %k: tensor<16x8xf32>, %v: tensor<16x8xf32>) -> tensor<16x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<16x16xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e0 : tensor<16x16xf32>) -> tensor<16x16xf32>
  %s = linalg.matmul indexing_maps = [#q, #k, #s]
         ins(%q, %k : tensor<16x8xf32>, tensor<16x8xf32>) outs(%z : tensor<16x16xf32>) -> tensor<16x16xf32>
  %e2 = tensor.empty() : tensor<16x8xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<16x8xf32>) -> tensor<16x8xf32>
  %o = linalg.matmul ins(%s, %v : tensor<16x16xf32>, tensor<16x8xf32>) outs(%z2 : tensor<16x8xf32>) -> tensor<16x8xf32>
  return %o : tensor<16x8xf32>
}

// The probabilities scaled after the softmax.
// CHECK-LABEL: func.func @scaled_after_softmax
// CHECK-NOT: attn.sdpa
func.func @scaled_after_softmax(%q: tensor<16x8xf32>, %k: tensor<16x8xf32>, %v: tensor<16x8xf32>) -> tensor<16x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e0 = tensor.empty() : tensor<16x16xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e0 : tensor<16x16xf32>) -> tensor<16x16xf32>
  %s = linalg.matmul indexing_maps = [#q, #k, #s]
         ins(%q, %k : tensor<16x8xf32>, tensor<16x8xf32>) outs(%z : tensor<16x16xf32>) -> tensor<16x16xf32>
  %x = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<16x16xf32>) outs(%e0 : tensor<16x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<16x16xf32>
  %e1 = tensor.empty() : tensor<16xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%e1 : tensor<16xf32>) -> tensor<16xf32>
  %m = linalg.reduce ins(%x : tensor<16x16xf32>) outs(%m0 : tensor<16xf32>) dimensions = [1]
         (%a: f32, %acc: f32) { %r = arith.maximumf %a, %acc : f32
                                linalg.yield %r : f32 }
  %ex = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %m : tensor<16x16xf32>, tensor<16xf32>) outs(%e0 : tensor<16x16xf32>) {
  ^bb0(%a: f32, %mx: f32, %o: f32):
    %d = arith.subf %a, %mx : f32
    %y = math.exp %d : f32
    linalg.yield %y : f32
  } -> tensor<16x16xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<16xf32>) -> tensor<16xf32>
  %sum = linalg.reduce ins(%ex : tensor<16x16xf32>) outs(%s0 : tensor<16xf32>) dimensions = [1]
           (%a: f32, %acc: f32) { %r = arith.addf %a, %acc : f32
                                  linalg.yield %r : f32 }
  %p = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%ex, %sum : tensor<16x16xf32>, tensor<16xf32>) outs(%e0 : tensor<16x16xf32>) {
  ^bb0(%a: f32, %t: f32, %o: f32):
    %w = arith.divf %a, %t : f32
    %c = arith.constant 0.5 : f32
    %y = arith.mulf %w, %c : f32
    linalg.yield %y : f32
  } -> tensor<16x16xf32>
  %e2 = tensor.empty() : tensor<16x8xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<16x8xf32>) -> tensor<16x8xf32>
// expected-remark @below {{attn-raise: not raised: the probabilities are not exp(·) divided by their sum over the keys}}
  %o = linalg.matmul ins(%p, %v : tensor<16x16xf32>, tensor<16x8xf32>) outs(%z2 : tensor<16x8xf32>) -> tensor<16x8xf32>
  return %o : tensor<16x8xf32>
}

// Scores rounded through integers.
// CHECK-LABEL: func.func @integer_scores
// CHECK-NOT: attn.sdpa
func.func @integer_scores(%q: tensor<16x8xf32>, %k: tensor<16x8xf32>, %v: tensor<16x8xf32>) -> tensor<16x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e0 = tensor.empty() : tensor<16x16xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e0 : tensor<16x16xf32>) -> tensor<16x16xf32>
  %s = linalg.matmul indexing_maps = [#q, #k, #s]
         ins(%q, %k : tensor<16x8xf32>, tensor<16x8xf32>) outs(%z : tensor<16x16xf32>) -> tensor<16x16xf32>
  %x = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<16x16xf32>) outs(%e0 : tensor<16x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %i = arith.fptosi %a : f32 to i32
    %y = arith.sitofp %i : i32 to f32
    linalg.yield %y : f32
  } -> tensor<16x16xf32>
  %e1 = tensor.empty() : tensor<16xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%e1 : tensor<16xf32>) -> tensor<16xf32>
  %m = linalg.reduce ins(%x : tensor<16x16xf32>) outs(%m0 : tensor<16xf32>) dimensions = [1]
         (%a: f32, %acc: f32) { %r = arith.maximumf %a, %acc : f32
                                linalg.yield %r : f32 }
  %ex = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %m : tensor<16x16xf32>, tensor<16xf32>) outs(%e0 : tensor<16x16xf32>) {
  ^bb0(%a: f32, %mx: f32, %o: f32):
    %d = arith.subf %a, %mx : f32
    %y = math.exp %d : f32
    linalg.yield %y : f32
  } -> tensor<16x16xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<16xf32>) -> tensor<16xf32>
  %sum = linalg.reduce ins(%ex : tensor<16x16xf32>) outs(%s0 : tensor<16xf32>) dimensions = [1]
           (%a: f32, %acc: f32) { %r = arith.addf %a, %acc : f32
                                  linalg.yield %r : f32 }
  %p = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%ex, %sum : tensor<16x16xf32>, tensor<16xf32>) outs(%e0 : tensor<16x16xf32>) {
  ^bb0(%a: f32, %t: f32, %o: f32):
    %y = arith.divf %a, %t : f32
    linalg.yield %y : f32
  } -> tensor<16x16xf32>
  %e2 = tensor.empty() : tensor<16x8xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<16x8xf32>) -> tensor<16x8xf32>
// expected-remark @below {{attn-raise: not raised: the scores pass through arith.sitofp}}
  %o = linalg.matmul ins(%p, %v : tensor<16x16xf32>, tensor<16x8xf32>) outs(%z2 : tensor<16x8xf32>) -> tensor<16x8xf32>
  return %o : tensor<16x8xf32>
}

// A scale after an additive mask scales the mask too: only a score
// function holds it, and the mask tensor may hold -inf (an empty row).
// CHECK-LABEL: func.func @scale_after_mask
// CHECK-NOT: attn.sdpa
func.func @scale_after_mask(%q: tensor<16x8xf32>, %k: tensor<16x8xf32>, %v: tensor<16x8xf32>, %bias: tensor<16x16xf32>) -> tensor<16x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e0 = tensor.empty() : tensor<16x16xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e0 : tensor<16x16xf32>) -> tensor<16x16xf32>
  %s = linalg.matmul indexing_maps = [#q, #k, #s]
         ins(%q, %k : tensor<16x8xf32>, tensor<16x8xf32>) outs(%z : tensor<16x16xf32>) -> tensor<16x16xf32>
  %x = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%s, %bias : tensor<16x16xf32>, tensor<16x16xf32>) outs(%e0 : tensor<16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %u = arith.addf %a, %b : f32
    %c = arith.constant 0.5 : f32
    %y = arith.mulf %u, %c : f32
    linalg.yield %y : f32
  } -> tensor<16x16xf32>
  %e1 = tensor.empty() : tensor<16xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%e1 : tensor<16xf32>) -> tensor<16xf32>
  %m = linalg.reduce ins(%x : tensor<16x16xf32>) outs(%m0 : tensor<16xf32>) dimensions = [1]
         (%a: f32, %acc: f32) { %r = arith.maximumf %a, %acc : f32
                                linalg.yield %r : f32 }
  %ex = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %m : tensor<16x16xf32>, tensor<16xf32>) outs(%e0 : tensor<16x16xf32>) {
  ^bb0(%a: f32, %mx: f32, %o: f32):
    %d = arith.subf %a, %mx : f32
    %y = math.exp %d : f32
    linalg.yield %y : f32
  } -> tensor<16x16xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<16xf32>) -> tensor<16xf32>
  %sum = linalg.reduce ins(%ex : tensor<16x16xf32>) outs(%s0 : tensor<16xf32>) dimensions = [1]
           (%a: f32, %acc: f32) { %r = arith.addf %a, %acc : f32
                                  linalg.yield %r : f32 }
  %p = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%ex, %sum : tensor<16x16xf32>, tensor<16xf32>) outs(%e0 : tensor<16x16xf32>) {
  ^bb0(%a: f32, %t: f32, %o: f32):
    %y = arith.divf %a, %t : f32
    linalg.yield %y : f32
  } -> tensor<16x16xf32>
  %e2 = tensor.empty() : tensor<16x8xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<16x8xf32>) -> tensor<16x8xf32>
// expected-remark @below {{attn-raise: not raised: a query row may keep no key: the source gives NaN (or a mean of V) there and attn.sdpa gives 0; pass zero-empty-rows to raise anyway}}
  %o = linalg.matmul ins(%p, %v : tensor<16x16xf32>, tensor<16x8xf32>) outs(%z2 : tensor<16x8xf32>) -> tensor<16x8xf32>
  return %o : tensor<16x8xf32>
}

// A lower bound on the key position that is a run-time value: a mask
// function can hold it, but a row may then keep no key.
// CHECK-LABEL: func.func @runtime_bound
// CHECK-NOT: attn.sdpa
func.func @runtime_bound(%q: tensor<16x8xf32>, %k: tensor<16x8xf32>, %v: tensor<16x8xf32>, %n: index) -> tensor<16x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e0 = tensor.empty() : tensor<16x16xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e0 : tensor<16x16xf32>) -> tensor<16x16xf32>
  %s = linalg.matmul indexing_maps = [#q, #k, #s]
         ins(%q, %k : tensor<16x8xf32>, tensor<16x8xf32>) outs(%z : tensor<16x16xf32>) -> tensor<16x16xf32>
  %x = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<16x16xf32>) outs(%e0 : tensor<16x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %lo = arith.subi %i, %n : index
    %keep = arith.cmpi sge, %j, %lo : index
    %y = arith.select %keep, %a, %ninf : f32
    linalg.yield %y : f32
  } -> tensor<16x16xf32>
  %e1 = tensor.empty() : tensor<16xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%e1 : tensor<16xf32>) -> tensor<16xf32>
  %m = linalg.reduce ins(%x : tensor<16x16xf32>) outs(%m0 : tensor<16xf32>) dimensions = [1]
         (%a: f32, %acc: f32) { %r = arith.maximumf %a, %acc : f32
                                linalg.yield %r : f32 }
  %ex = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %m : tensor<16x16xf32>, tensor<16xf32>) outs(%e0 : tensor<16x16xf32>) {
  ^bb0(%a: f32, %mx: f32, %o: f32):
    %d = arith.subf %a, %mx : f32
    %y = math.exp %d : f32
    linalg.yield %y : f32
  } -> tensor<16x16xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<16xf32>) -> tensor<16xf32>
  %sum = linalg.reduce ins(%ex : tensor<16x16xf32>) outs(%s0 : tensor<16xf32>) dimensions = [1]
           (%a: f32, %acc: f32) { %r = arith.addf %a, %acc : f32
                                  linalg.yield %r : f32 }
  %p = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%ex, %sum : tensor<16x16xf32>, tensor<16xf32>) outs(%e0 : tensor<16x16xf32>) {
  ^bb0(%a: f32, %t: f32, %o: f32):
    %y = arith.divf %a, %t : f32
    linalg.yield %y : f32
  } -> tensor<16x16xf32>
  %e2 = tensor.empty() : tensor<16x8xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<16x8xf32>) -> tensor<16x8xf32>
// expected-remark @below {{attn-raise: not raised: a query row may keep no key: the source gives NaN (or a mean of V) there and attn.sdpa gives 0; pass zero-empty-rows to raise anyway}}
  %o = linalg.matmul ins(%p, %v : tensor<16x16xf32>, tensor<16x8xf32>) outs(%z2 : tensor<16x8xf32>) -> tensor<16x8xf32>
  return %o : tensor<16x8xf32>
}

// An i1 mask tensor can drop every key of a row: NaN in the source, 0 in
// sdpa (raised only with zero-empty-rows).
// CHECK-LABEL: func.func @mask_tensor
// CHECK-NOT: attn.sdpa
func.func @mask_tensor(%q: tensor<16x8xf32>, %k: tensor<16x8xf32>, %v: tensor<16x8xf32>, %keep: tensor<16x16xi1>) -> tensor<16x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e0 = tensor.empty() : tensor<16x16xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e0 : tensor<16x16xf32>) -> tensor<16x16xf32>
  %s = linalg.matmul indexing_maps = [#q, #k, #s]
         ins(%q, %k : tensor<16x8xf32>, tensor<16x8xf32>) outs(%z : tensor<16x16xf32>) -> tensor<16x16xf32>
  %x = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%s, %keep : tensor<16x16xf32>, tensor<16x16xi1>) outs(%e0 : tensor<16x16xf32>) {
  ^bb0(%a: f32, %kp: i1, %o: f32):
    %y = arith.select %kp, %a, %ninf : f32
    linalg.yield %y : f32
  } -> tensor<16x16xf32>
  %e1 = tensor.empty() : tensor<16xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%e1 : tensor<16xf32>) -> tensor<16xf32>
  %m = linalg.reduce ins(%x : tensor<16x16xf32>) outs(%m0 : tensor<16xf32>) dimensions = [1]
         (%a: f32, %acc: f32) { %r = arith.maximumf %a, %acc : f32
                                linalg.yield %r : f32 }
  %ex = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %m : tensor<16x16xf32>, tensor<16xf32>) outs(%e0 : tensor<16x16xf32>) {
  ^bb0(%a: f32, %mx: f32, %o: f32):
    %d = arith.subf %a, %mx : f32
    %y = math.exp %d : f32
    linalg.yield %y : f32
  } -> tensor<16x16xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<16xf32>) -> tensor<16xf32>
  %sum = linalg.reduce ins(%ex : tensor<16x16xf32>) outs(%s0 : tensor<16xf32>) dimensions = [1]
           (%a: f32, %acc: f32) { %r = arith.addf %a, %acc : f32
                                  linalg.yield %r : f32 }
  %p = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%ex, %sum : tensor<16x16xf32>, tensor<16xf32>) outs(%e0 : tensor<16x16xf32>) {
  ^bb0(%a: f32, %t: f32, %o: f32):
    %y = arith.divf %a, %t : f32
    linalg.yield %y : f32
  } -> tensor<16x16xf32>
  %e2 = tensor.empty() : tensor<16x8xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<16x8xf32>) -> tensor<16x8xf32>
// expected-remark @below {{attn-raise: not raised: a query row may keep no key: the source gives NaN (or a mean of V) there and attn.sdpa gives 0; pass zero-empty-rows to raise anyway}}
  %o = linalg.matmul ins(%p, %v : tensor<16x16xf32>, tensor<16x8xf32>) outs(%z2 : tensor<16x8xf32>) -> tensor<16x8xf32>
  return %o : tensor<16x8xf32>
}

// Strictly earlier keys (j < i): row 0 keeps none.
// CHECK-LABEL: func.func @strictly_lower
// CHECK-NOT: attn.sdpa
func.func @strictly_lower(%q: tensor<16x8xf32>, %k: tensor<16x8xf32>, %v: tensor<16x8xf32>) -> tensor<16x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e0 = tensor.empty() : tensor<16x16xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e0 : tensor<16x16xf32>) -> tensor<16x16xf32>
  %s = linalg.matmul indexing_maps = [#q, #k, #s]
         ins(%q, %k : tensor<16x8xf32>, tensor<16x8xf32>) outs(%z : tensor<16x16xf32>) -> tensor<16x16xf32>
  %x = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<16x16xf32>) outs(%e0 : tensor<16x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %keep = arith.cmpi slt, %j, %i : index
    %y = arith.select %keep, %a, %ninf : f32
    linalg.yield %y : f32
  } -> tensor<16x16xf32>
  %e1 = tensor.empty() : tensor<16xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%e1 : tensor<16xf32>) -> tensor<16xf32>
  %m = linalg.reduce ins(%x : tensor<16x16xf32>) outs(%m0 : tensor<16xf32>) dimensions = [1]
         (%a: f32, %acc: f32) { %r = arith.maximumf %a, %acc : f32
                                linalg.yield %r : f32 }
  %ex = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %m : tensor<16x16xf32>, tensor<16xf32>) outs(%e0 : tensor<16x16xf32>) {
  ^bb0(%a: f32, %mx: f32, %o: f32):
    %d = arith.subf %a, %mx : f32
    %y = math.exp %d : f32
    linalg.yield %y : f32
  } -> tensor<16x16xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<16xf32>) -> tensor<16xf32>
  %sum = linalg.reduce ins(%ex : tensor<16x16xf32>) outs(%s0 : tensor<16xf32>) dimensions = [1]
           (%a: f32, %acc: f32) { %r = arith.addf %a, %acc : f32
                                  linalg.yield %r : f32 }
  %p = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%ex, %sum : tensor<16x16xf32>, tensor<16xf32>) outs(%e0 : tensor<16x16xf32>) {
  ^bb0(%a: f32, %t: f32, %o: f32):
    %y = arith.divf %a, %t : f32
    linalg.yield %y : f32
  } -> tensor<16x16xf32>
  %e2 = tensor.empty() : tensor<16x8xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<16x8xf32>) -> tensor<16x8xf32>
// expected-remark @below {{attn-raise: not raised: the mask keeps the band -inf <= key - query <= -1, which does not hold either diagonal}}
  %o = linalg.matmul ins(%p, %v : tensor<16x16xf32>, tensor<16x8xf32>) outs(%z2 : tensor<16x8xf32>) -> tensor<16x8xf32>
  return %o : tensor<16x8xf32>
}

// A band that holds neither diagonal (2 <= j - i <= 5).
// CHECK-LABEL: func.func @off_diagonal_band
// CHECK-NOT: attn.sdpa
func.func @off_diagonal_band(%q: tensor<16x8xf32>, %k: tensor<16x8xf32>, %v: tensor<16x8xf32>) -> tensor<16x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e0 = tensor.empty() : tensor<16x16xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e0 : tensor<16x16xf32>) -> tensor<16x16xf32>
  %s = linalg.matmul indexing_maps = [#q, #k, #s]
         ins(%q, %k : tensor<16x8xf32>, tensor<16x8xf32>) outs(%z : tensor<16x16xf32>) -> tensor<16x16xf32>
  %x = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<16x16xf32>) outs(%e0 : tensor<16x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %c2 = arith.constant 2 : index
    %c5 = arith.constant 5 : index
    %d = arith.subi %j, %i : index
    %ge = arith.cmpi sge, %d, %c2 : index
    %le = arith.cmpi sle, %d, %c5 : index
    %keep = arith.andi %ge, %le : i1
    %y = arith.select %keep, %a, %ninf : f32
    linalg.yield %y : f32
  } -> tensor<16x16xf32>
  %e1 = tensor.empty() : tensor<16xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%e1 : tensor<16xf32>) -> tensor<16xf32>
  %m = linalg.reduce ins(%x : tensor<16x16xf32>) outs(%m0 : tensor<16xf32>) dimensions = [1]
         (%a: f32, %acc: f32) { %r = arith.maximumf %a, %acc : f32
                                linalg.yield %r : f32 }
  %ex = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %m : tensor<16x16xf32>, tensor<16xf32>) outs(%e0 : tensor<16x16xf32>) {
  ^bb0(%a: f32, %mx: f32, %o: f32):
    %d = arith.subf %a, %mx : f32
    %y = math.exp %d : f32
    linalg.yield %y : f32
  } -> tensor<16x16xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<16xf32>) -> tensor<16xf32>
  %sum = linalg.reduce ins(%ex : tensor<16x16xf32>) outs(%s0 : tensor<16xf32>) dimensions = [1]
           (%a: f32, %acc: f32) { %r = arith.addf %a, %acc : f32
                                  linalg.yield %r : f32 }
  %p = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%ex, %sum : tensor<16x16xf32>, tensor<16xf32>) outs(%e0 : tensor<16x16xf32>) {
  ^bb0(%a: f32, %t: f32, %o: f32):
    %y = arith.divf %a, %t : f32
    linalg.yield %y : f32
  } -> tensor<16x16xf32>
  %e2 = tensor.empty() : tensor<16x8xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<16x8xf32>) -> tensor<16x8xf32>
// expected-remark @below {{attn-raise: not raised: the mask keeps the band 2 <= key - query <= 5, which does not hold either diagonal}}
  %o = linalg.matmul ins(%p, %v : tensor<16x16xf32>, tensor<16x8xf32>) outs(%z2 : tensor<16x8xf32>) -> tensor<16x8xf32>
  return %o : tensor<16x8xf32>
}

// P·V accumulated into a tensor that is not zero (O = init + P·V): not a
// plain product, so not a candidate (no report).
// CHECK-LABEL: func.func @accumulating_init
// CHECK-NOT: attn.sdpa
func.func @accumulating_init(%q: tensor<16x8xf32>, %k: tensor<16x8xf32>, %v: tensor<16x8xf32>, %init: tensor<16x8xf32>) -> tensor<16x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e0 = tensor.empty() : tensor<16x16xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e0 : tensor<16x16xf32>) -> tensor<16x16xf32>
  %s = linalg.matmul indexing_maps = [#q, #k, #s]
         ins(%q, %k : tensor<16x8xf32>, tensor<16x8xf32>) outs(%z : tensor<16x16xf32>) -> tensor<16x16xf32>
  %x = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<16x16xf32>) outs(%e0 : tensor<16x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<16x16xf32>
  %e1 = tensor.empty() : tensor<16xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%e1 : tensor<16xf32>) -> tensor<16xf32>
  %m = linalg.reduce ins(%x : tensor<16x16xf32>) outs(%m0 : tensor<16xf32>) dimensions = [1]
         (%a: f32, %acc: f32) { %r = arith.maximumf %a, %acc : f32
                                linalg.yield %r : f32 }
  %ex = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %m : tensor<16x16xf32>, tensor<16xf32>) outs(%e0 : tensor<16x16xf32>) {
  ^bb0(%a: f32, %mx: f32, %o: f32):
    %d = arith.subf %a, %mx : f32
    %y = math.exp %d : f32
    linalg.yield %y : f32
  } -> tensor<16x16xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<16xf32>) -> tensor<16xf32>
  %sum = linalg.reduce ins(%ex : tensor<16x16xf32>) outs(%s0 : tensor<16xf32>) dimensions = [1]
           (%a: f32, %acc: f32) { %r = arith.addf %a, %acc : f32
                                  linalg.yield %r : f32 }
  %p = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%ex, %sum : tensor<16x16xf32>, tensor<16xf32>) outs(%e0 : tensor<16x16xf32>) {
  ^bb0(%a: f32, %t: f32, %o: f32):
    %y = arith.divf %a, %t : f32
    linalg.yield %y : f32
  } -> tensor<16x16xf32>
  %e2 = tensor.empty() : tensor<16x8xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<16x8xf32>) -> tensor<16x8xf32>
  %o = linalg.matmul ins(%p, %v : tensor<16x16xf32>, tensor<16x8xf32>) outs(%init : tensor<16x8xf32>) -> tensor<16x8xf32>
  return %o : tensor<16x8xf32>
}
