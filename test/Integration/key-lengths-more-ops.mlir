// Key lengths of attn.sdpa_partial and attn.sdpa_grad, and lengths that
// reach attn.sdpa through tensor.extract_slice (a batch-tiled program):
// --random-inputs draws them in [0, Tk] of the op they feed (each run
// checked against the reference pipeline), and a length past Tk is a
// run-time error naming the op, never a read past the keys.
// RUN: rm -rf %t && mkdir -p %t
// RUN: attn-run %s --entry=partial --pipeline=cpu --random-inputs --seed=2 --compare-with=reference | FileCheck %s --check-prefix=PART
// PART: result #0 vs reference: max_abs_error {{(0\.0+e\+00|[0-9.]+e-(0[6-9]|[1-9][0-9]))}}
// PART: result #1 vs reference: max_abs_error {{(0\.0+e\+00|[0-9.]+e-(0[6-9]|[1-9][0-9]))}}
// RUN: attn-run %s --entry=grad --pipeline=cpu --random-inputs --seed=3 --compare-with=reference | FileCheck %s --check-prefix=GRAD
// GRAD: result #0 vs reference: max_abs_error {{(0\.0+e\+00|[0-9.]+e-(0[6-9]|[1-9][0-9]))}}
// GRAD: result #1 vs reference: max_abs_error {{(0\.0+e\+00|[0-9.]+e-(0[6-9]|[1-9][0-9]))}}
// GRAD: result #2 vs reference: max_abs_error {{(0\.0+e\+00|[0-9.]+e-(0[6-9]|[1-9][0-9]))}}
// RUN: attn-run %s --entry=sliced --pipeline=cpu --random-inputs --seed=4 --compare-with=reference | FileCheck %s --check-prefix=SLICED
// SLICED: result #0 vs reference: max_abs_error {{(0\.0+e\+00|[0-9.]+e-(0[6-9]|[1-9][0-9]))}}
// RUN: %python %S/Inputs/npytool.py make %t/q.npy --shape 2,2,5,16 --fill rand:1
// RUN: %python %S/Inputs/npytool.py make %t/k.npy --shape 2,2,8,16 --fill rand:2
// RUN: %python %S/Inputs/npytool.py make %t/lse.npy --shape 2,2,5 --fill rand:3
// RUN: %python %S/Inputs/npytool.py make %t/long.npy --dtype i4 --shape 2 --fill values:3,9
// RUN: %python %S/Inputs/expect_exit.py 2 attn-run %s --entry=sliced --input=%t/q.npy --input=%t/k.npy --input=%t/k.npy --input=%t/long.npy | FileCheck %s --check-prefix=LONG
// LONG: attn-run: sliced: key lengths (argument #3) element 1 is 9, outside [0, Tk = 8] of 'attn.sdpa'
// RUN: %python %S/Inputs/expect_exit.py 2 attn-run %s --entry=partial --input=%t/q.npy --input=%t/k.npy --input=%t/k.npy --input=%t/long.npy | FileCheck %s --check-prefix=LONGP
// LONGP: attn-run: partial: key lengths (argument #3) element 1 is 9, outside [0, Tk = 8] of 'attn.sdpa_partial'
// RUN: %python %S/Inputs/expect_exit.py 2 attn-run %s --entry=grad --input=%t/q.npy --input=%t/k.npy --input=%t/k.npy --input=%t/q.npy --input=%t/q.npy --input=%t/lse.npy --input=%t/long.npy | FileCheck %s --check-prefix=LONGG
// LONGG: attn-run: grad: key lengths (argument #6) element 1 is 9, outside [0, Tk = 8] of 'attn.sdpa_grad'

func.func @partial(%q: tensor<2x2x5x16xf32>, %k: tensor<2x2x8x16xf32>, %v: tensor<2x2x8x16xf32>,
                   %len: tensor<2xi32>) -> (tensor<2x2x5x16xf32>, tensor<2x2x5xf32>) {
  %o, %l = attn.sdpa_partial %q, %k, %v key_lengths(%len) {causal = #attn.causal<bottom_right>}
      : (tensor<2x2x5x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2xi32>)
        -> (tensor<2x2x5x16xf32>, tensor<2x2x5xf32>)
  return %o, %l : tensor<2x2x5x16xf32>, tensor<2x2x5xf32>
}
func.func @grad(%q: tensor<2x2x5x16xf32>, %k: tensor<2x2x8x16xf32>, %v: tensor<2x2x8x16xf32>,
                %o: tensor<2x2x5x16xf32>, %do: tensor<2x2x5x16xf32>, %lse: tensor<2x2x5xf32>,
                %len: tensor<2xi32>)
    -> (tensor<2x2x5x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>) {
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %do, %lse key_lengths(%len)
      {causal = #attn.causal<bottom_right>}
      : (tensor<2x2x5x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x5x16xf32>,
         tensor<2x2x5x16xf32>, tensor<2x2x5xf32>, tensor<2xi32>)
        -> (tensor<2x2x5x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>)
  return %dq, %dk, %dv : tensor<2x2x5x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>
}
func.func @sliced(%q: tensor<2x2x5x16xf32>, %k: tensor<2x2x8x16xf32>, %v: tensor<2x2x8x16xf32>,
                  %len: tensor<2xi32>) -> tensor<1x2x5x16xf32> {
  %q1 = tensor.extract_slice %q[1, 0, 0, 0] [1, 2, 5, 16] [1, 1, 1, 1] : tensor<2x2x5x16xf32> to tensor<1x2x5x16xf32>
  %k1 = tensor.extract_slice %k[1, 0, 0, 0] [1, 2, 8, 16] [1, 1, 1, 1] : tensor<2x2x8x16xf32> to tensor<1x2x8x16xf32>
  %v1 = tensor.extract_slice %v[1, 0, 0, 0] [1, 2, 8, 16] [1, 1, 1, 1] : tensor<2x2x8x16xf32> to tensor<1x2x8x16xf32>
  %l1 = tensor.extract_slice %len[1] [1] [1] : tensor<2xi32> to tensor<1xi32>
  %o = attn.sdpa %q1, %k1, %v1 key_lengths(%l1)
      : (tensor<1x2x5x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1xi32>) -> tensor<1x2x5x16xf32>
  return %o : tensor<1x2x5x16xf32>
}
