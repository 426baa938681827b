// Every bad input gets one line naming the problem and exit status 2.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/npytool.py make %t/q.npy --shape 1,2,3,4 --fill rand:1
// RUN: %python %S/Inputs/npytool.py make %t/q16.npy --dtype f2 --shape 1,2,3,4
// RUN: %python %S/Inputs/npytool.py make %t/q3.npy --shape 2,3,4
// RUN: %python %S/Inputs/npytool.py make %t/q5.npy --shape 1,2,5,4
// RUN: %python %S/Inputs/expect_exit.py 2 attn-run %s --input=%t/missing.npy --input=%t/q.npy | FileCheck %s --check-prefix=MISSING
// MISSING: attn-run: {{.*}}missing.npy: cannot open file: No such file or directory
// RUN: %python %S/Inputs/expect_exit.py 2 attn-run %s --input=%t --input=%t/q.npy | FileCheck %s --check-prefix=DIR
// DIR: attn-run: {{.*}}: is a directory
// RUN: %python %S/Inputs/npytool.py bad %t/magic.npy bad-magic
// RUN: %python %S/Inputs/expect_exit.py 2 attn-run %s --input=%t/magic.npy --input=%t/q.npy | FileCheck %s --check-prefix=MAGIC
// MAGIC: attn-run: {{.*}}magic.npy: bad magic (not a .npy file)
// RUN: %python %S/Inputs/npytool.py bad %t/hdr.npy header-past-end
// RUN: %python %S/Inputs/expect_exit.py 2 attn-run %s --input=%t/hdr.npy --input=%t/q.npy | FileCheck %s --check-prefix=HDR
// HDR: attn-run: {{.*}}hdr.npy: header length 5000 runs past the end of the file
// RUN: %python %S/Inputs/npytool.py bad %t/trunc.npy truncated
// RUN: %python %S/Inputs/expect_exit.py 2 attn-run %s --input=%t/trunc.npy --input=%t/q.npy | FileCheck %s --check-prefix=TRUNC
// TRUNC: attn-run: {{.*}}trunc.npy: truncated data: expected 24 bytes, found 20
// RUN: %python %S/Inputs/npytool.py bad %t/i64.npy int64
// RUN: %python %S/Inputs/expect_exit.py 2 attn-run %s --input=%t/i64.npy --input=%t/q.npy | FileCheck %s --check-prefix=DTYPE
// DTYPE: attn-run: f: input #0: dtype int64, expected float32
// RUN: %python %S/Inputs/npytool.py make %t/i16.npy --dtype i2 --shape 1,2,3,4
// RUN: %python %S/Inputs/expect_exit.py 2 attn-run %s --input=%t/i16.npy --input=%t/q.npy | FileCheck %s --check-prefix=DTYPE16
// DTYPE16: attn-run: {{.*}}i16.npy: unsupported dtype '<i2' (int16 for a float32 destination
// RUN: %python %S/Inputs/expect_exit.py 2 attn-run %s --input=%t/q16.npy --input=%t/q.npy | FileCheck %s --check-prefix=WRONGDTYPE
// WRONGDTYPE: attn-run: f: input #0: dtype float16, expected float32 (float32[1,2,?,4])
// RUN: %python %S/Inputs/expect_exit.py 2 attn-run %s --input=%t/q3.npy --input=%t/q.npy | FileCheck %s --check-prefix=RANK
// RANK: attn-run: f: input #0: rank 3 float32[2,3,4], expected rank 4 float32[1,2,?,4]
// RUN: %python %S/Inputs/expect_exit.py 2 attn-run %s --input=%t/q.npy --input=%t/q5.npy | FileCheck %s --check-prefix=SHAPE
// SHAPE: attn-run: f: input #1: shape float32[1,2,5,4] does not match float32[1,2,3,4] at dim 2
// RUN: %python %S/Inputs/expect_exit.py 2 attn-run %s --input=%t/q.npy | FileCheck %s --check-prefix=ARITY
// ARITY: attn-run: f: the function takes 2 inputs, got 1
// RUN: %python %S/Inputs/expect_exit.py 2 attn-run %s --entry=nope --input=%t/q.npy --input=%t/q.npy | FileCheck %s --check-prefix=ENTRY
// ENTRY: attn-run: {{.*}}bad-inputs.mlir: no function named 'nope'
// RUN: %python %S/Inputs/expect_exit.py 2 attn-run %s --pipeline=tpu | FileCheck %s --check-prefix=BADPIPE
// BADPIPE: attn-run: unknown pipeline 'tpu' (expected reference, cpu, gpu, gpu-schedule or ring)
// RUN: %python %S/Inputs/expect_exit.py 2 attn-run %t/none.mlir | FileCheck %s --check-prefix=NOFILE
// NOFILE: attn-run: {{.*}}none.mlir: cannot open file: No such file or directory
// RUN: %python %S/Inputs/expect_exit.py 2 attn-run %s --input=%t/q.npy --input=%t/q.npy --output=%t/a.npy --output=%t/b.npy | FileCheck %s --check-prefix=OUTS
// OUTS: attn-run: got 2 --output files, but 'f' has 1 result(s)
// RUN: %python %S/Inputs/expect_exit.py 2 attn-run %s --random-inputs | FileCheck %s --check-prefix=RANDDYN
// RANDDYN: attn-run: --random-inputs: argument #0 float32[1,2,?,4] has dynamic dims; pass --input files instead
// RUN: %python %S/Inputs/npytool.py bad %t/ovf.npy overflow
// RUN: %python %S/Inputs/expect_exit.py 2 attn-run %s --input=%t/ovf.npy --input=%t/q.npy | FileCheck %s --check-prefix=OVERFLOW
// OVERFLOW: attn-run: {{.*}}ovf.npy: shape (1099511627776, 1099511627776, 1099511627776) overflows
// RUN: %python %S/Inputs/npytool.py bad %t/empty.npy empty
// RUN: %python %S/Inputs/expect_exit.py 2 attn-run %s --input=%t/empty.npy --input=%t/q.npy | FileCheck %s --check-prefix=EMPTY
// EMPTY: attn-run: {{.*}}empty.npy: empty file
// Fortran order and big endian are converted (a note; see
// input-conversions.mlir) unless --strict-inputs asks for exactly the
// function's dtypes: then they are errors.
// RUN: %python %S/Inputs/npytool.py bad %t/fortran.npy fortran
// RUN: %python %S/Inputs/expect_exit.py 2 attn-run %s --strict-inputs --input=%t/fortran.npy --input=%t/q.npy | FileCheck %s --check-prefix=FORTRAN
// FORTRAN: attn-run: {{.*}}fortran.npy: Fortran-order arrays are not supported (--strict-inputs)
// RUN: %python %S/Inputs/npytool.py bad %t/be.npy big-endian
// RUN: %python %S/Inputs/expect_exit.py 2 attn-run %s --strict-inputs --input=%t/be.npy --input=%t/q.npy | FileCheck %s --check-prefix=BIGENDIAN
// BIGENDIAN: attn-run: {{.*}}be.npy: big-endian dtype '>f4' is not supported (--strict-inputs)
// Converted, they still have to fit the signature: a wrong rank is an error.
// RUN: %python %S/Inputs/expect_exit.py 2 attn-run %s --input=%t/fortran.npy --input=%t/q.npy | FileCheck %s --check-prefix=FORTRANRANK
// FORTRANRANK: attn-run: note: {{.*}}fortran.npy: transposed from Fortran order for argument #0 (q)
// FORTRANRANK-NEXT: attn-run: f: input #0: rank 2 float32[2,3], expected rank 4 float32[1,2,?,4]
// RUN: %python %S/Inputs/npytool.py bad %t/ver.npy bad-version
// RUN: %python %S/Inputs/expect_exit.py 2 attn-run %s --input=%t/ver.npy --input=%t/q.npy | FileCheck %s --check-prefix=VERSION
// VERSION: attn-run: {{.*}}ver.npy: unsupported .npy version 9.0
// RUN: mkfifo %t/fifo.npy
// RUN: %python %S/Inputs/expect_exit.py 2 attn-run %s --input=%t/fifo.npy --input=%t/q.npy | FileCheck %s --check-prefix=FIFO
// FIFO: attn-run: {{.*}}fifo.npy: not a regular file
// RUN: %python %S/Inputs/expect_exit.py 2 attn-run %s --no-such-flag | FileCheck %s --check-prefix=FLAG
// FLAG: attn-run: Unknown command line argument '--no-such-flag'
// RUN: %python %S/Inputs/expect_exit.py 2 attn-run %s --repeat=many | FileCheck %s --check-prefix=NUMBER
// NUMBER: attn-run: for the --repeat option: 'many' value invalid for uint argument!
// Tile sizes are checked by the pipeline that uses them, with its own rule
// and defaults: 6 rows is not a multiple of the CPU kernel's 4-row block,
// while the GPU schedule takes any tile-q in [1, 1024] and any positive
// tile-k.
// RUN: %python %S/Inputs/expect_exit.py 2 attn-run %s --pipeline=cpu --tile-q=6 | FileCheck %s --check-prefix=TILE
// TILE: attn-run: convert-attn-to-loops: tile-q must be a positive multiple of 4 and tile-k a positive multiple of 2 x vector-width, got tile-q=6 tile-k=64 vector-width={{8|16}}
// RUN: %python %S/Inputs/expect_exit.py 2 attn-run %s --pipeline=gpu-schedule --tile-q=2000 | FileCheck %s --check-prefix=GTILE
// GTILE: attn-run: convert-attn-to-gpu: tile-q must be in [1, 1024] and tile-k positive, got tile-q=2000 tile-k=32
// RUN: attn-run %s --pipeline=gpu-schedule --tile-q=6 --tile-k=8 --input=%t/q.npy --input=%t/q.npy --compare-with=reference | FileCheck %s --check-prefix=GPUTILE
// GPUTILE: result #0 vs reference: max_abs_error
// Dynamic dims are checked against each other before running: the function
// is specialised to the inputs' shapes and the attn verifiers run again.
// RUN: %python %S/Inputs/npytool.py make %t/k7.npy --shape 1,2,7,4 --fill rand:2
// RUN: %python %S/Inputs/npytool.py make %t/v9.npy --shape 1,2,9,4 --fill rand:3
// RUN: %python %S/Inputs/npytool.py make %t/k2.npy --shape 2,2,7,4 --fill rand:4
// RUN: %python %S/Inputs/expect_exit.py 2 attn-run %S/Inputs/dynamic-sdpa.mlir --input=%t/q.npy --input=%t/k7.npy --input=%t/v9.npy | FileCheck %s --check-prefix=KVLEN
// KVLEN: attn-run: dyn: the inputs' shapes do not fit together: 'attn.sdpa' op operand 'value' length (dim 2) is 9, expected 7 (length Tk of 'key')
// RUN: %python %S/Inputs/expect_exit.py 2 attn-run %S/Inputs/dynamic-sdpa.mlir --pipeline=cpu --input=%t/q.npy --input=%t/k2.npy --input=%t/k2.npy | FileCheck %s --check-prefix=BATCH
// BATCH: attn-run: dyn: the inputs' shapes do not fit together: 'attn.sdpa' op operand 'key' batch (dim 0) is 2, expected 1 (batch B of 'query')
// RUN: attn-run %S/Inputs/dynamic-sdpa.mlir --input=%t/q.npy --input=%t/k7.npy --input=%t/k7.npy | FileCheck %s --check-prefix=FITS
// FITS: result #0: float32[1,2,3,4]
// Bad IR is a diagnostic and exit status 1, never a crash.
// RUN: %python %S/Inputs/expect_exit.py 1 attn-run %S/Inputs/invalid-ir.mlir | FileCheck %s --check-prefix=BADIR
// BADIR: error: 'attn.sdpa' op operand 'value' length (dim 2) is 5, expected 4 (length Tk of 'key')

func.func @f(%q: tensor<1x2x?x4xf32>, %k: tensor<1x2x3x4xf32>) -> tensor<1x2x?x4xf32> {
  %o = attn.sdpa %q, %k, %k : (tensor<1x2x?x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>) -> tensor<1x2x?x4xf32>
  return %o : tensor<1x2x?x4xf32>
}
