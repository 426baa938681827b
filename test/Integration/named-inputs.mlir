// Inputs by name: --input=NAME=PATH binds the argument written %NAME in the
// signature (or #N: N=PATH), an .npz archive binds each member to the
// argument of its name (np.savez(q=..., k=...); arr_N of np.savez(a, b) to
// argument N), plain paths fill the arguments left, in order. All of these
// give the result of the plain positional run.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/npytool.py make %t/q.npy --shape 1,2,3,4 --fill rand:1
// RUN: %python %S/Inputs/npytool.py make %t/k.npy --shape 1,2,5,4 --fill rand:2
// RUN: %python %S/Inputs/npytool.py make %t/v.npy --shape 1,2,5,4 --fill rand:3
// RUN: %python %S/Inputs/npytool.py make %t/m.npy --dtype b1 --shape 1,1,3,5 --fill mask:4
// RUN: attn-run %s --input=%t/q.npy --input=%t/k.npy --input=%t/v.npy --input=%t/m.npy --output=%t/ref.npy
// RUN: attn-run %s --input=value=%t/v.npy --input=keep=%t/m.npy --input=query=%t/q.npy --input=key=%t/k.npy --output=%t/o1.npy
// RUN: cmp %t/ref.npy %t/o1.npy
// RUN: attn-run %s --input=3=%t/m.npy --input=query=%t/q.npy --input=%t/k.npy --input=%t/v.npy --output=%t/o2.npy
// RUN: cmp %t/ref.npy %t/o2.npy

// .npz archives, stored (np.savez) and deflated (np.savez_compressed), with
// members converted like files (an int64 mask here).
// RUN: %python %S/Inputs/npytool.py make %t/mi8.npy --dtype i8 --shape 1,1,3,5 --fill mask:4
// RUN: %python %S/Inputs/npytool.py npz %t/all.npz query=%t/q.npy key=%t/k.npy value=%t/v.npy keep=%t/mi8.npy
// RUN: attn-run %s --input=%t/all.npz --output=%t/o3.npy 2>&1 | FileCheck %s --check-prefix=NPZ
// NPZ: attn-run: note: {{.*}}all.npz:keep.npy: converted int64 to bool (nonzero = true) for argument #3 (keep)
// RUN: cmp %t/ref.npy %t/o3.npy
// RUN: %python %S/Inputs/npytool.py npz %t/allz.npz --compressed query=%t/q.npy key=%t/k.npy value=%t/v.npy keep=%t/m.npy
// RUN: attn-run %s --input=%t/allz.npz --output=%t/o4.npy
// RUN: cmp %t/ref.npy %t/o4.npy
// A larger deflated archive (dynamic Huffman blocks, long matches).
// RUN: %python %S/Inputs/npytool.py make %t/bq.npy --shape 1,4,64,32 --fill rand:7
// RUN: %python %S/Inputs/npytool.py make %t/bk.npy --shape 1,4,64,32 --fill arange
// RUN: %python %S/Inputs/npytool.py make %t/bv.npy --shape 1,4,64,32 --fill zeros
// RUN: %python %S/Inputs/npytool.py npz %t/big.npz --compressed q=%t/bq.npy k=%t/bk.npy v=%t/bv.npy
// RUN: attn-run %s --entry=big --input=%t/bq.npy --input=%t/bk.npy --input=%t/bv.npy --output=%t/big1.npy
// RUN: attn-run %s --entry=big --input=%t/big.npz --output=%t/big2.npy
// RUN: cmp %t/big1.npy %t/big2.npy
// np.savez(q, k, v, m): arr_0 ... arr_3 by position; an archive plus a name.
// RUN: %python %S/Inputs/npytool.py npz %t/pos.npz arr_0=%t/q.npy arr_1=%t/k.npy arr_2=%t/v.npy arr_3=%t/m.npy
// RUN: attn-run %s --input=%t/pos.npz --output=%t/o5.npy
// RUN: cmp %t/ref.npy %t/o5.npy
// RUN: %python %S/Inputs/npytool.py npz %t/qkv.npz query=%t/q.npy key=%t/k.npy value=%t/v.npy
// RUN: attn-run %s --input=%t/qkv.npz --input=keep=%t/m.npy --output=%t/o6.npy
// RUN: cmp %t/ref.npy %t/o6.npy

// Every binding problem is one line and exit status 2.
// RUN: %python %S/Inputs/expect_exit.py 2 attn-run %s --input=qq=%t/q.npy | FileCheck %s --check-prefix=NONAME
// NONAME: attn-run: --input=qq={{.*}}q.npy: 'f' has no argument named 'qq' (its arguments: query, key, value, keep)
// RUN: %python %S/Inputs/expect_exit.py 2 attn-run %s --input=7=%t/q.npy | FileCheck %s --check-prefix=INDEX
// INDEX: attn-run: --input=7={{.*}}q.npy: 'f' has 4 argument(s)
// RUN: %python %S/Inputs/expect_exit.py 2 attn-run %s --input=%t/qkv.npz | FileCheck %s --check-prefix=MISSING
// MISSING: attn-run: f: no input for argument #3 (keep)
// RUN: %python %S/Inputs/expect_exit.py 2 attn-run %s --input=%t/all.npz --input=query=%t/q.npy | FileCheck %s --check-prefix=TWICE
// TWICE: attn-run: f: argument #0 (query) is given twice: by {{.*}}all.npz:query.npy and by --input=query={{.*}}q.npy
// RUN: %python %S/Inputs/expect_exit.py 2 attn-run %s --input=%t/all.npz --input=%t/q.npy | FileCheck %s --check-prefix=EXTRA
// EXTRA: attn-run: f: the function takes 4 inputs, got more ({{.*}}q.npy binds none)
// RUN: %python %S/Inputs/npytool.py npz %t/typo.npz query=%t/q.npy key=%t/k.npy value=%t/v.npy kep=%t/m.npy
// RUN: %python %S/Inputs/expect_exit.py 2 attn-run %s --input=%t/typo.npz | FileCheck %s --check-prefix=MEMBER
// MEMBER: attn-run: {{.*}}typo.npz:kep.npy: 'f' has no argument named 'kep' (its arguments: query, key, value, keep)
// RUN: %python %S/Inputs/expect_exit.py 2 attn-run %s --input=query=%t/all.npz | FileCheck %s --check-prefix=NAMEDNPZ
// NAMEDNPZ: attn-run: --input=query={{.*}}all.npz: an .npz archive binds its members by name; pass it as --input={{.*}}all.npz
// A damaged archive: the CRC-32 of each member is checked.
// RUN: %python %S/Inputs/npytool.py damage %t/all.npz %t/damaged.npz
// RUN: %python %S/Inputs/expect_exit.py 2 attn-run %s --input=%t/damaged.npz | FileCheck %s --check-prefix=CRC
// CRC: attn-run: {{.*}}damaged.npz:keep.npy: CRC-32 mismatch (the archive is damaged)
// RUN: head -c 100 %t/all.npz > %t/cut.npz
// RUN: %python %S/Inputs/expect_exit.py 2 attn-run %s --input=%t/cut.npz | FileCheck %s --check-prefix=CUT
// CUT: attn-run: {{.*}}cut.npz: not a valid zip archive: no end of central directory record

// --expect compares each result with a file: |result - expected| <=
// atol + rtol * |expected| everywhere, else exit status 1 naming the worst
// element. Defaults for float32: atol 1e-5, rtol 1e-4.
// RUN: attn-run %s --input=%t/all.npz --expect=%t/ref.npy | FileCheck %s --check-prefix=MATCH
// MATCH: result #0 vs {{.*}}ref.npy: max_abs_error 0.000000e+00 max_rel_error 0.000000e+00, ok (atol 1e-05, rtol 0.0001)
// RUN: attn-run %s --input=%t/all.npz --pipeline=cpu --expect=%t/ref.npy | FileCheck %s --check-prefix=MATCHCPU
// MATCHCPU: result #0 vs {{.*}}ref.npy: {{.*}}, ok
// RUN: %python %S/Inputs/npytool.py perturb %t/ref.npy %t/off.npy --index 7 --delta 0.01
// RUN: %python %S/Inputs/expect_exit.py 1 attn-run %s --input=%t/all.npz --expect=%t/off.npy | FileCheck %s --check-prefix=OFF
// OFF: attn-run: result #0 does not match {{.*}}off.npy: 1 of 24 elements differ by more than atol + rtol * |expected| (atol 1e-05, rtol 0.0001); the worst at [0,0,1,3]: got {{[-0-9.e]+}}, expected {{[-0-9.e]+}}
// OFF: result #0 vs {{.*}}off.npy: max_abs_error 1.0{{[0-9]*}}e-02 {{.*}}, MISMATCH: 1 of 24 elements
// RUN: attn-run %s --input=%t/all.npz --expect=%t/off.npy --atol=0.011 | FileCheck %s --check-prefix=ATOL
// ATOL: ok (atol 0.011, rtol 0.0001)
// RUN: attn-run %s --input=%t/all.npz --expect=%t/off.npy --atol=0 --rtol=0.5 | FileCheck %s --check-prefix=RTOL
// RTOL: ok (atol 0, rtol 0.5)
// A float64 expected file (what torch's .double() gives) is converted.
// RUN: %python %S/Inputs/npytool.py convert %t/ref.npy %t/ref64.npy --dtype f8
// RUN: attn-run %s --input=%t/all.npz --expect=%t/ref64.npy 2>&1 | FileCheck %s --check-prefix=EXP64
// EXP64: attn-run: note: {{.*}}ref64.npy: converted float64 to float32 for result #0
// EXP64: result #0 vs {{.*}}ref64.npy: {{.*}}, ok
// A shape mismatch is a mismatch (exit 1); too many files is a bad
// invocation (exit 2).
// RUN: %python %S/Inputs/expect_exit.py 1 attn-run %s --input=%t/all.npz --expect=%t/k.npy | FileCheck %s --check-prefix=EXPSHAPE
// EXPSHAPE: attn-run: result #0 does not match {{.*}}k.npy: the result is float32[1,2,3,4], {{.*}}k.npy holds float32[1,2,5,4]
// RUN: %python %S/Inputs/expect_exit.py 2 attn-run %s --input=%t/all.npz --expect=%t/ref.npy --expect=%t/ref.npy | FileCheck %s --check-prefix=EXPMANY
// EXPMANY: attn-run: got 2 --expect files, but 'f' has 1 result(s)
// RUN: %python %S/Inputs/expect_exit.py 2 attn-run %s --input=%t/all.npz --expect=%t/missing.npy | FileCheck %s --check-prefix=EXPMISSING
// EXPMISSING: attn-run: {{.*}}missing.npy: cannot open file: No such file or directory
// --json: the same verdict per result, and the exit status.
// RUN: %python %S/Inputs/expect_exit.py 1 attn-run %s --input=%t/all.npz --expect=%t/off.npy --json --quiet | FileCheck %s --check-prefix=JSON
// JSON: "expect_ok": false
// JSON: "result_errors": [
// JSON-NEXT: {
// JSON-NEXT: "expect": {
// JSON-NEXT: "atol": 1.0000000000000001e-05,
// JSON-NEXT: "file": "{{.*}}off.npy",
// JSON-NEXT: "max_abs_error": {{.*}},
// JSON-NEXT: "max_rel_error": {{.*}},
// JSON-NEXT: "mismatches": 1,
// JSON-NEXT: "numel": 24,
// JSON-NEXT: "ok": false,
// JSON-NEXT: "rtol": 0.0001,
// JSON-NEXT: "worst": {
// JSON-NEXT: "expected": {{.*}},
// JSON-NEXT: "got": {{.*}},
// JSON-NEXT: "index": [
// JSON-NEXT: 0,
// JSON-NEXT: 0,
// JSON-NEXT: 1,
// JSON-NEXT: 3
// JSON-NEXT: ]
// JSON-NEXT: }
// JSON-NEXT: },
// JSON-NEXT: "result": 0

func.func @f(%query: tensor<1x2x3x4xf32>, %key: tensor<1x2x5x4xf32>, %value: tensor<1x2x5x4xf32>,
             %keep: tensor<1x1x3x5xi1>) -> tensor<1x2x3x4xf32> {
  %o = attn.sdpa %query, %key, %value, %keep {causal = #attn.causal<bottom_right>}
      : (tensor<1x2x3x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>, tensor<1x1x3x5xi1>) -> tensor<1x2x3x4xf32>
  return %o : tensor<1x2x3x4xf32>
}

func.func @big(%q: tensor<1x4x64x32xf32>, %k: tensor<1x4x64x32xf32>, %v: tensor<1x4x64x32xf32>) -> tensor<1x4x64x32xf32> {
  %o = attn.sdpa %q, %k, %v : (tensor<1x4x64x32xf32>, tensor<1x4x64x32xf32>, tensor<1x4x64x32xf32>) -> tensor<1x4x64x32xf32>
  return %o : tensor<1x4x64x32xf32>
}
