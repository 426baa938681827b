// A batch of 0 through the cpu kernel with key splitting on: the split
// count divides by the number of work items, which is 0 here (it was a
// SIGFPE). attn-run passes --num-threads, so min-work-items is 2 x 2 = 4.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/npytool.py make %t/q.npy --shape 0,4,1,64 --fill zeros
// RUN: %python %S/Inputs/npytool.py make %t/k.npy --shape 0,2,5,64 --fill zeros
// RUN: %python %S/Inputs/npytool.py make %t/v.npy --shape 0,2,5,64 --fill zeros
// RUN: attn-run %s --pipeline=cpu --num-threads=2 --input=%t/q.npy --input=%t/k.npy --input=%t/v.npy --output=%t/o.npy | FileCheck %s
// RUN: %python %S/Inputs/npytool.py info %t/o.npy | FileCheck %s --check-prefix=NPY
// CHECK: result #0: float32[0,4,1,64]
// NPY: (0, 4, 1, 64)
func.func @decode(%q: tensor<?x4x1x64xf32>, %k: tensor<?x2x?x64xf32>, %v: tensor<?x2x?x64xf32>) -> tensor<?x4x1x64xf32> {
  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<bottom_right>}
      : (tensor<?x4x1x64xf32>, tensor<?x2x?x64xf32>, tensor<?x2x?x64xf32>) -> tensor<?x4x1x64xf32>
  return %o : tensor<?x4x1x64xf32>
}
