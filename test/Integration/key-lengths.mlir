// Key lengths are an integer input: read from int32 or int64 .npy files
// (int64, NumPy's default, is converted exactly), drawn in [0, Tk] by
// --random-inputs, and a length outside [0, Tk] is one line and exit 2 —
// never a read past the keys.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/npytool.py make %t/q.npy --shape 2,2,3,8 --fill rand:1
// RUN: %python %S/Inputs/npytool.py make %t/k.npy --shape 2,2,5,8 --fill rand:2
// RUN: %python %S/Inputs/npytool.py make %t/v.npy --shape 2,2,5,8 --fill rand:3
// RUN: %python %S/Inputs/npytool.py make %t/len32.npy --dtype i4 --shape 2 --fill values:5,2
// RUN: %python %S/Inputs/npytool.py make %t/len64.npy --dtype i8 --shape 2 --fill values:0,5
// RUN: %python %S/Inputs/npytool.py make %t/long.npy --dtype i4 --shape 2 --fill values:3,6
// RUN: %python %S/Inputs/npytool.py make %t/neg.npy --dtype i8 --shape 2 --fill values:-1,2
// RUN: %python %S/Inputs/npytool.py make %t/f.npy --dtype f4 --shape 2 --fill values:1,2

// RUN: attn-run %s --pipeline=reference --input=%t/q.npy --input=%t/k.npy --input=%t/v.npy --input=%t/len32.npy --quiet | FileCheck %s --check-prefix=OK
// RUN: attn-run %s --pipeline=cpu --input=%t/q.npy --input=%t/k.npy --input=%t/v.npy --input=%t/len64.npy 2>&1 | FileCheck %s --check-prefix=CONV
// RUN: attn-run %s --pipeline=cpu --random-inputs --seed=3 --quiet | FileCheck %s --check-prefix=OK
// OK: result #0: float32[2,2,3,8]
// CONV: attn-run: note: {{.*}}len64.npy: converted int64 to int32 for argument #3 (len)
// CONV: result #0: float32[2,2,3,8]

// RUN: %python %S/Inputs/expect_exit.py 2 attn-run %s --input=%t/q.npy --input=%t/k.npy --input=%t/v.npy --input=%t/long.npy | FileCheck %s --check-prefix=LONG
// LONG: attn-run: f: key lengths (argument #3) element 1 is 6, outside [0, Tk = 5] of 'attn.sdpa'
// RUN: %python %S/Inputs/expect_exit.py 2 attn-run %s --input=%t/q.npy --input=%t/k.npy --input=%t/v.npy --input=%t/neg.npy | FileCheck %s --check-prefix=NEG
// NEG: attn-run: f: key lengths (argument #3) element 0 is -1, outside [0, Tk = 5] of 'attn.sdpa'
// RUN: %python %S/Inputs/expect_exit.py 2 attn-run %s --input=%t/q.npy --input=%t/k.npy --input=%t/v.npy --input=%t/f.npy | FileCheck %s --check-prefix=FLOAT
// FLOAT: attn-run: f: input #3: dtype float32, expected int32 (int32[2])

func.func @f(%q: tensor<2x2x3x8xf32>, %k: tensor<2x2x5x8xf32>, %v: tensor<2x2x5x8xf32>,
             %len: tensor<2xi32>) -> tensor<2x2x3x8xf32> {
  %o = attn.sdpa %q, %k, %v key_lengths(%len) {causal = #attn.causal<bottom_right>}
      : (tensor<2x2x3x8xf32>, tensor<2x2x5x8xf32>, tensor<2x2x5x8xf32>, tensor<2xi32>) -> tensor<2x2x3x8xf32>
  return %o : tensor<2x2x3x8xf32>
}
