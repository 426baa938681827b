// What NumPy and PyTorch users have is converted, with one note per file on
// stderr naming the file and the conversions: float64 (NumPy's default) to
// the argument's float type, integer masks (nonzero = keep) to i1, big
// endian (byte-swapped), Fortran order (transposed). Each converted file
// gives exactly the result of the plain float32/bool one. --strict-inputs
// makes every conversion an error; --quiet drops the notes.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/npytool.py make %t/q.npy --shape 1,2,3,4 --fill rand:1
// RUN: %python %S/Inputs/npytool.py make %t/k.npy --shape 1,2,5,4 --fill rand:2
// RUN: %python %S/Inputs/npytool.py make %t/v.npy --shape 1,2,5,4 --fill rand:3
// RUN: %python %S/Inputs/npytool.py make %t/m.npy --dtype b1 --shape 1,1,3,5 --fill mask:4
// RUN: attn-run %s --input=%t/q.npy --input=%t/k.npy --input=%t/v.npy --input=%t/m.npy --output=%t/ref.npy 2>&1 | FileCheck %s --check-prefix=PLAIN
// PLAIN: result #0: float32[1,2,3,4]
// PLAIN-NOT: note

// float64 -> float32.
// RUN: %python %S/Inputs/npytool.py make %t/q64.npy --dtype f8 --shape 1,2,3,4 --fill rand:1
// RUN: attn-run %s --input=%t/q64.npy --input=%t/k.npy --input=%t/v.npy --input=%t/m.npy --output=%t/o64.npy 2> %t/err64.txt
// RUN: cmp %t/ref.npy %t/o64.npy
// RUN: FileCheck %s --check-prefix=F64 < %t/err64.txt
// F64: attn-run: note: {{.*}}q64.npy: converted float64 to float32 for argument #0 (q)
// F64-NOT: attn-run

// Big endian, Fortran order, and all three at once (one line).
// RUN: %python %S/Inputs/npytool.py make %t/kbe.npy --shape 1,2,5,4 --fill rand:2 --big-endian
// RUN: %python %S/Inputs/npytool.py make %t/vf.npy --shape 1,2,5,4 --fill rand:3 --fortran
// RUN: %python %S/Inputs/npytool.py make %t/q64bef.npy --dtype f8 --shape 1,2,3,4 --fill rand:1 --big-endian --fortran
// RUN: attn-run %s --input=%t/q64bef.npy --input=%t/kbe.npy --input=%t/vf.npy --input=%t/m.npy --output=%t/olayout.npy 2> %t/errlayout.txt
// RUN: cmp %t/ref.npy %t/olayout.npy
// RUN: FileCheck %s --check-prefix=LAYOUT < %t/errlayout.txt
// LAYOUT: attn-run: note: {{.*}}q64bef.npy: byte-swapped from big-endian '>f8', transposed from Fortran order, converted float64 to float32 for argument #0 (q)
// LAYOUT-NEXT: attn-run: note: {{.*}}kbe.npy: byte-swapped from big-endian '>f4' for argument #1 (k)
// LAYOUT-NEXT: attn-run: note: {{.*}}vf.npy: transposed from Fortran order for argument #2 (v)
// LAYOUT-NOT: attn-run

// Integer masks as Hugging Face writes them (int64), and int32, uint8,
// int8 (with -3 for keep: any nonzero keeps), a big-endian int16: all the
// same mask.
// RUN: %python %S/Inputs/npytool.py make %t/mi8.npy --dtype i8 --shape 1,1,3,5 --fill mask:4
// RUN: %python %S/Inputs/npytool.py make %t/mi4.npy --dtype i4 --shape 1,1,3,5 --fill mask:4
// RUN: %python %S/Inputs/npytool.py make %t/mu1.npy --dtype u1 --shape 1,1,3,5 --fill mask:4
// RUN: %python %S/Inputs/npytool.py make %t/mi1.npy --dtype i1 --shape 1,1,3,5 --fill mask:4:-3
// RUN: %python %S/Inputs/npytool.py make %t/mi2be.npy --dtype i2 --shape 1,1,3,5 --fill mask:4:256 --big-endian
// RUN: attn-run %s --input=%t/q.npy --input=%t/k.npy --input=%t/v.npy --input=%t/mi8.npy --output=%t/oi8.npy 2> %t/erri8.txt
// RUN: cmp %t/ref.npy %t/oi8.npy
// RUN: FileCheck %s --check-prefix=MASK < %t/erri8.txt
// MASK: attn-run: note: {{.*}}mi8.npy: converted int64 to bool (nonzero = true) for argument #3 (keep)
// RUN: attn-run %s --input=%t/q.npy --input=%t/k.npy --input=%t/v.npy --input=%t/mi4.npy --output=%t/oi4.npy 2>&1 | FileCheck %s --check-prefix=MASK4
// MASK4: converted int32 to bool
// RUN: cmp %t/ref.npy %t/oi4.npy
// RUN: attn-run %s --input=%t/q.npy --input=%t/k.npy --input=%t/v.npy --input=%t/mu1.npy --output=%t/ou1.npy 2>&1 | FileCheck %s --check-prefix=MASKU1
// MASKU1: converted uint8 to bool
// RUN: cmp %t/ref.npy %t/ou1.npy
// RUN: attn-run %s --input=%t/q.npy --input=%t/k.npy --input=%t/v.npy --input=%t/mi1.npy --output=%t/oi1.npy 2>&1 | FileCheck %s --check-prefix=MASKI1
// MASKI1: converted int8 to bool
// RUN: cmp %t/ref.npy %t/oi1.npy
// RUN: attn-run %s --input=%t/q.npy --input=%t/k.npy --input=%t/v.npy --input=%t/mi2be.npy --output=%t/oi2.npy 2>&1 | FileCheck %s --check-prefix=MASKI2
// MASKI2: byte-swapped from big-endian '>i2', converted int16 to bool
// RUN: cmp %t/ref.npy %t/oi2.npy

// float64 -> float16, rounded once (the same bits as NumPy's
// astype(float16) of the doubles).
// RUN: %python %S/Inputs/npytool.py make %t/hq.npy --dtype f2 --shape 1,1,4,8 --fill rand:5
// RUN: %python %S/Inputs/npytool.py make %t/hq64.npy --dtype f8 --shape 1,1,4,8 --fill rand:5
// RUN: attn-run %s --entry=half --input=%t/hq.npy --input=%t/hq.npy --input=%t/hq.npy --output=%t/h.npy
// RUN: attn-run %s --entry=half --input=%t/hq64.npy --input=%t/hq64.npy --input=%t/hq.npy --output=%t/h64.npy 2>&1 | FileCheck %s --check-prefix=HALF
// HALF-COUNT-2: converted float64 to float16
// RUN: cmp %t/h.npy %t/h64.npy

// --json lists the notes too; --quiet keeps them off stderr only.
// RUN: attn-run %s --input=%t/q64.npy --input=%t/k.npy --input=%t/v.npy --input=%t/mi8.npy --json --quiet 2> %t/errquiet.txt | FileCheck %s --check-prefix=JSON
// JSON: "conversions": [
// JSON-NEXT: "{{.*}}q64.npy: converted float64 to float32 for argument #0 (q)",
// JSON-NEXT: "{{.*}}mi8.npy: converted int64 to bool (nonzero = true) for argument #3 (keep)"
// RUN: count 0 < %t/errquiet.txt

// --strict-inputs: each conversion is an error, exit status 2.
// RUN: %python %S/Inputs/expect_exit.py 2 attn-run %s --strict-inputs --input=%t/q64.npy --input=%t/k.npy --input=%t/v.npy --input=%t/m.npy | FileCheck %s --check-prefix=STRICT64
// STRICT64: attn-run: f: input #0: dtype float64, expected float32 (float32[1,2,3,4])
// RUN: %python %S/Inputs/expect_exit.py 2 attn-run %s --strict-inputs --input=%t/q.npy --input=%t/k.npy --input=%t/v.npy --input=%t/mi8.npy | FileCheck %s --check-prefix=STRICTMASK
// STRICTMASK: attn-run: f: input #3: dtype int64, expected bool
// RUN: %python %S/Inputs/expect_exit.py 2 attn-run %s --strict-inputs --input=%t/q.npy --input=%t/kbe.npy --input=%t/v.npy --input=%t/m.npy | FileCheck %s --check-prefix=STRICTBE
// STRICTBE: attn-run: {{.*}}kbe.npy: big-endian dtype '>f4' is not supported (--strict-inputs)
// RUN: %python %S/Inputs/expect_exit.py 2 attn-run %s --strict-inputs --input=%t/q.npy --input=%t/k.npy --input=%t/vf.npy --input=%t/m.npy | FileCheck %s --check-prefix=STRICTF
// STRICTF: attn-run: {{.*}}vf.npy: Fortran-order arrays are not supported (--strict-inputs)

// What is not converted stays an error: integers for a float argument, a
// float mask for an i1 one, and a converted array of the wrong shape.
// RUN: %python %S/Inputs/expect_exit.py 2 attn-run %s --input=%t/mi8.npy --input=%t/k.npy --input=%t/v.npy --input=%t/m.npy | FileCheck %s --check-prefix=INTFLOAT
// INTFLOAT: attn-run: f: input #0: dtype int64, expected float32
// RUN: %python %S/Inputs/expect_exit.py 2 attn-run %s --input=%t/q.npy --input=%t/k.npy --input=%t/v.npy --input=%t/q.npy | FileCheck %s --check-prefix=FLOATMASK
// FLOATMASK: attn-run: f: input #3: dtype float32, expected bool
// RUN: %python %S/Inputs/npytool.py make %t/k64.npy --dtype f8 --shape 1,2,4,4 --fill rand:2
// RUN: %python %S/Inputs/expect_exit.py 2 attn-run %s --input=%t/q.npy --input=%t/k64.npy --input=%t/v.npy --input=%t/m.npy | FileCheck %s --check-prefix=SHAPE
// SHAPE: attn-run: note: {{.*}}k64.npy: converted float64 to float32 for argument #1 (k)
// SHAPE-NEXT: attn-run: f: input #1: shape float32[1,2,4,4] does not match float32[1,2,5,4] at dim 2

func.func @f(%q: tensor<1x2x3x4xf32>, %k: tensor<1x2x5x4xf32>, %v: tensor<1x2x5x4xf32>,
             %keep: tensor<1x1x3x5xi1>) -> tensor<1x2x3x4xf32> {
  %o = attn.sdpa %q, %k, %v, %keep {causal = #attn.causal<bottom_right>}
      : (tensor<1x2x3x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>, tensor<1x1x3x5xi1>) -> tensor<1x2x3x4xf32>
  return %o : tensor<1x2x3x4xf32>
}

func.func @half(%q: tensor<1x1x4x8xf16>, %k: tensor<1x1x4x8xf16>, %v: tensor<1x1x4x8xf16>) -> tensor<1x1x4x8xf16> {
  %o = attn.sdpa %q, %k, %v : (tensor<1x1x4x8xf16>, tensor<1x1x4x8xf16>, tensor<1x1x4x8xf16>) -> tensor<1x1x4x8xf16>
  return %o : tensor<1x1x4x8xf16>
}
