// A function whose result is one of its arguments — directly, or after ops
// that fold away (merge_heads of split_heads) — returns a copy of it on
// every CPU pipeline. The deallocation pipeline leaves a
// bufferization.clone there, which used to reach LLVM unlowered ("LLVM
// Translation failed for operation: builtin.unrealized_conversion_cast").
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/npytool.py make %t/x.npy --shape 1,6,8 --fill rand:1
// RUN: attn-run %s --entry=same --pipeline=cpu --input=%t/x.npy --expect=%t/x.npy --atol=0 --rtol=0 | FileCheck %s
// RUN: attn-run %s --entry=same --pipeline=reference --input=%t/x.npy --expect=%t/x.npy --atol=0 --rtol=0 | FileCheck %s
// RUN: attn-run %s --entry=round_trip --pipeline=cpu --input=%t/x.npy --expect=%t/x.npy --atol=0 --rtol=0 | FileCheck %s
// RUN: attn-run %s --entry=round_trip --pipeline=reference --input=%t/x.npy --expect=%t/x.npy --atol=0 --rtol=0 | FileCheck %s
// The copy is a new buffer: the result of `twice` (x and x) is read back
// as two arrays, each equal to x.
// RUN: attn-run %s --entry=twice --pipeline=cpu --input=%t/x.npy --output=%t/a.npy --output=%t/b.npy
// RUN: cmp %t/a.npy %t/x.npy
// RUN: cmp %t/b.npy %t/x.npy
// The GPU pipeline's host code copies it the same way (no GPU needed to
// compile): an allocation and a memcpy, nothing left unconverted.
// RUN: attn-opt %s --attn-gpu-pipeline | FileCheck %s --check-prefix=GPU
// GPU-NOT: unrealized_conversion_cast
// GPU-LABEL: llvm.func @same(
// GPU: llvm.call @malloc
// GPU: "llvm.intr.memcpy"
// GPU-NOT: unrealized_conversion_cast
// CHECK: result #0 vs {{.*}}x.npy: max_abs_error 0.000000e+00 max_rel_error 0.000000e+00, ok
func.func @same(%x: tensor<1x6x8xf32>) -> tensor<1x6x8xf32> {
  return %x : tensor<1x6x8xf32>
}
func.func @round_trip(%x: tensor<1x6x8xf32>) -> tensor<1x6x8xf32> {
  %h = attn.split_heads %x {num_heads = 2 : i64} : (tensor<1x6x8xf32>) -> tensor<1x2x6x4xf32>
  %y = attn.merge_heads %h : (tensor<1x2x6x4xf32>) -> tensor<1x6x8xf32>
  return %y : tensor<1x6x8xf32>
}
func.func @twice(%x: tensor<1x6x8xf32>) -> (tensor<1x6x8xf32>, tensor<1x6x8xf32>) {
  return %x, %x : tensor<1x6x8xf32>, tensor<1x6x8xf32>
}
