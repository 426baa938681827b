// bf16 arguments and results through .npy: NumPy has no bfloat16, so a
// float array for a bf16 argument is rounded to bfloat16 (with a note) and a
// bf16 result is written as float32 (exact). Values: with q = 0 every
// visible key gets the same weight, so each output row is the mean of the
// visible rows of V (npytool.py mean-check, a plain-Python computation),
// here within bf16 rounding.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/npytool.py make %t/q.npy --shape 1,2,9,16 --fill zeros
// RUN: %python %S/Inputs/npytool.py make %t/k.npy --shape 1,2,13,16 --fill rand:2
// RUN: %python %S/Inputs/npytool.py make %t/v.npy --shape 1,2,13,16 --fill rand:3
// RUN: attn-run %s --pipeline=cpu --input=%t/q.npy --input=%t/k.npy --input=%t/v.npy --output=%t/o.npy 2>&1 | FileCheck %s --check-prefix=NOTE
// NOTE: attn-run: note: {{.*}}v.npy: converted float32 to bfloat16 for argument #2 (v)
// NOTE: result #0: bfloat16[1,2,9,16] -> {{.*}}o.npy
// RUN: %python %S/Inputs/npytool.py info %t/o.npy | FileCheck %s --check-prefix=NPY
// NPY: float32 (1, 2, 9, 16)
// RUN: %python %S/Inputs/npytool.py mean-check %t/o.npy %t/v.npy --causal bottom_right --tol 1e-2
// Random bf16 inputs, the fused kernel against the reference lowering.
// RUN: attn-run %s --pipeline=cpu --random-inputs --compare-with=reference | FileCheck %s --check-prefix=CMP
// CMP-NOT: not fused
// CMP: result #0 vs reference: max_abs_error
func.func @f(%q: tensor<1x2x9x16xbf16>, %k: tensor<1x2x13x16xbf16>, %v: tensor<1x2x13x16xbf16>)
    -> tensor<1x2x9x16xbf16> {
  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<bottom_right>}
      : (tensor<1x2x9x16xbf16>, tensor<1x2x13x16xbf16>, tensor<1x2x13x16xbf16>) -> tensor<1x2x9x16xbf16>
  return %o : tensor<1x2x9x16xbf16>
}
