// attn-every-pass judges each chunk of a split input file on its own: a
// pipeline that fails one chunk without a diagnostic is "silent" even when
// another chunk of the file failed with one (attn-opt -split-input-file
// reports that file as one failure with an error printed). Here the first
// chunk does not parse; the second fails test-attn-fail-silently without a
// diagnostic; the third passes everything.
// RUN: %attn_tools_dir/attn-every-pass %s test-attn-fail-silently canonicalize attn-decompose | FileCheck %s
// CHECK: 0 silent
// CHECK-NEXT: 1 diag
// CHECK-NEXT: 2 diag
// CHECK-NOT: {{.}}

// The pass on its own: a silent failure is a failure with nothing printed.
// RUN: not attn-opt %s -split-input-file -test-attn-fail-silently -o /dev/null 2>&1 | FileCheck %s --check-prefix=OPT
// OPT: error: custom op 'attn.no_such_op' is unknown
// OPT-NOT: error

// Without the chunk that does not parse: the silent chunk, and a pipeline
// that passes both chunks.
// RUN: %attn_tools_dir/attn-every-pass %S/Inputs/fails-silently.mlir test-attn-fail-silently canonicalize | FileCheck %s --check-prefix=SPLIT
// SPLIT: 0 silent
// SPLIT-NEXT: 1 ok

func.func @bad(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = attn.no_such_op %x : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @fails_silently() attributes {attn.test_fail_silently} {
  return
}

// -----

func.func @fine(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
