// A function whose captures have dynamic dims (a [B] array of first keys,
// FlashAttention's cache_leftpad as a mask function): the runtime
// specialises the captures' block arguments with the inputs' shapes, so it
// runs on both pipelines (before, the specialised op failed its verifier:
// "expected (..., tensor<3xi32>), got (..., tensor<?xi32>)"). A capture
// shorter than the batch is read with clamped indices (docs/recipes.md),
// never past its end. Values against torch float64:
// test/Python/test_serving.py::test_cache_leftpad.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/npytool.py make %t/q.npy --shape 3,4,5,16 --fill rand:1
// RUN: %python %S/Inputs/npytool.py make %t/k.npy --shape 3,2,40,16 --fill rand:2
// RUN: %python %S/Inputs/npytool.py make %t/v.npy --shape 3,2,40,16 --fill rand:3
// RUN: %python %S/Inputs/npytool.py make %t/pad.npy --dtype i4 --shape 3 --fill values:0,7,40
// RUN: %python %S/Inputs/npytool.py make %t/pad1.npy --dtype i4 --shape 1 --fill values:3
// RUN: attn-run %s --pipeline=cpu --input=%t/q.npy --input=%t/k.npy --input=%t/v.npy --input=%t/pad.npy --compare-with=reference | FileCheck %s
// RUN: attn-run %s --pipeline=cpu --input=%t/q.npy --input=%t/k.npy --input=%t/v.npy --input=%t/pad1.npy --compare-with=reference | FileCheck %s
// CHECK: result #0: float32[3,4,5,16]
// An empty capture is refused before the call (it has no element a
// clamped read could land on), with exit status 2, not read out of bounds.
// RUN: %python %S/Inputs/npytool.py make %t/pad0.npy --dtype i4 --shape 0
// RUN: %python %S/Inputs/expect_exit.py 2 attn-run %s --pipeline=cpu --input=%t/q.npy --input=%t/k.npy --input=%t/v.npy --input=%t/pad0.npy 2>&1 | FileCheck %s --check-prefix=EMPTY
// EMPTY: capture #0 of type 'tensor<0xi32>' has no elements
// CHECK: result #0 vs reference: max_abs_error {{.*}} max_rel_error {{(0\.0+e\+00|[0-9.]+e-(0[5-9]|[1-9][0-9]))}}

func.func @leftpad(%q: tensor<?x4x?x16xf32>, %k: tensor<?x2x?x16xf32>, %v: tensor<?x2x?x16xf32>,
                   %pad: tensor<?xi32>) -> tensor<?x4x?x16xf32> {
  %o = attn.sdpa %q, %k, %v captures(%pad) {causal = #attn.causal<bottom_right>} mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index, %p: tensor<?xi32>):
    %pb = tensor.extract %p[%b] : tensor<?xi32>
    %first = arith.index_cast %pb : i32 to index
    %keep = arith.cmpi sge, %j, %first : index
    attn.yield %keep : i1
  } : (tensor<?x4x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?xi32>)
      -> tensor<?x4x?x16xf32>
  return %o : tensor<?x4x?x16xf32>
}
