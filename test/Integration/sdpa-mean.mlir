// attn-run end to end on .npy files: with zero queries every visible key
// has the same weight, so each output row must be the mean of the visible
// rows of V (checked in plain Python, independently of the compiler).
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/npytool.py make %t/q.npy --shape 2,4,5,8 --fill zeros
// RUN: %python %S/Inputs/npytool.py make %t/k.npy --shape 2,2,7,8 --fill rand:1
// RUN: %python %S/Inputs/npytool.py make %t/v.npy --shape 2,2,7,8 --fill rand:2

// RUN: attn-run %s --entry=plain --input=%t/q.npy --input=%t/k.npy --input=%t/v.npy --output=%t/plain.npy | FileCheck %s --check-prefix=PLAIN
// PLAIN: attn-run: @plain from {{.*}}sdpa-mean.mlir through the reference pipeline (JIT for {{.*}})
// PLAIN: result #0: float32[2,4,5,8] -> {{.*}}plain.npy
// RUN: %python %S/Inputs/npytool.py mean-check %t/plain.npy %t/v.npy --causal none

// RUN: attn-run %s --entry=top_left --input=%t/q.npy --input=%t/k.npy --input=%t/v.npy --output=%t/tl.npy
// RUN: %python %S/Inputs/npytool.py mean-check %t/tl.npy %t/v.npy --causal top_left

// RUN: attn-run %s --entry=bottom_right --input=%t/q.npy --input=%t/k.npy --input=%t/v.npy --output=%t/br.npy
// RUN: %python %S/Inputs/npytool.py mean-check %t/br.npy %t/v.npy --causal bottom_right

// The checker itself must notice a wrong answer: the causal output is not
// the plain mean.
// RUN: not %python %S/Inputs/npytool.py mean-check %t/tl.npy %t/v.npy --causal none

func.func @plain(%q: tensor<?x4x?x8xf32>, %k: tensor<?x2x?x8xf32>, %v: tensor<?x2x?x8xf32>) -> tensor<?x4x?x8xf32> {
  %o = attn.sdpa %q, %k, %v : (tensor<?x4x?x8xf32>, tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>) -> tensor<?x4x?x8xf32>
  return %o : tensor<?x4x?x8xf32>
}

func.func @top_left(%q: tensor<?x4x?x8xf32>, %k: tensor<?x2x?x8xf32>, %v: tensor<?x2x?x8xf32>) -> tensor<?x4x?x8xf32> {
  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<top_left>} : (tensor<?x4x?x8xf32>, tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>) -> tensor<?x4x?x8xf32>
  return %o : tensor<?x4x?x8xf32>
}

func.func @bottom_right(%q: tensor<?x4x?x8xf32>, %k: tensor<?x2x?x8xf32>, %v: tensor<?x2x?x8xf32>) -> tensor<?x4x?x8xf32> {
  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<bottom_right>} : (tensor<?x4x?x8xf32>, tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>) -> tensor<?x4x?x8xf32>
  return %o : tensor<?x4x?x8xf32>
}
