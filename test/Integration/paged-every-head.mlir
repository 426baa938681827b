// Paged decode with every K/V head in one work item
// (FlashKernel::attendEveryHead, docs/serving.md): GQA (8 query heads on 4
// K/V heads), blocks of 16 (NHD and HND) and of 1 token, lengths 640 (the
// table's capacity), 1, 37 and 0, garbage ids past each length; one long sequence
// whose keys are split across threads (1 and 2 threads: 2 and 3 splits);
// and sinks, ALiBi, softcap and a window together. Against NumPy's gather
// + float64 attention (Inputs/paged_heads_case.py), and the features entry
// against the reference pipeline, which gathers the pages into dense K/V.
// REQUIRES: torch
// RUN: rm -rf %t && mkdir -p %t
// RUN: %torch_python %S/Inputs/paged_heads_case.py %t
// RUN: attn-run %s --entry=decode16 --pipeline=cpu --input=%t/q.npy --input=%t/kc16.npy --input=%t/vc16.npy --input=%t/table16.npy --input=%t/lens.npy --expect=%t/expect.npy --quiet | FileCheck %s
// RUN: attn-run %s --entry=decode16 --pipeline=cpu --num-threads=1 --vector-width=8 --input=%t/q.npy --input=%t/kc16.npy --input=%t/vc16.npy --input=%t/table16.npy --input=%t/lens.npy --expect=%t/expect.npy --quiet | FileCheck %s
// RUN: attn-run %s --entry=decode16_hnd --pipeline=cpu --input=%t/q.npy --input=%t/kc16_hnd.npy --input=%t/vc16_hnd.npy --input=%t/table16.npy --input=%t/lens.npy --expect=%t/expect.npy --quiet | FileCheck %s
// RUN: attn-run %s --entry=decode1 --pipeline=cpu --input=%t/q.npy --input=%t/kc1.npy --input=%t/vc1.npy --input=%t/table1.npy --input=%t/lens.npy --expect=%t/expect.npy --quiet | FileCheck %s
// RUN: attn-run %s --entry=decode_long --pipeline=cpu --num-threads=1 --input=%t/q_long.npy --input=%t/kc16.npy --input=%t/vc16.npy --input=%t/table_long.npy --input=%t/lens_long.npy --expect=%t/expect_long.npy --quiet | FileCheck %s
// RUN: attn-run %s --entry=decode_long --pipeline=cpu --num-threads=2 --input=%t/q_long.npy --input=%t/kc16.npy --input=%t/vc16.npy --input=%t/table_long.npy --input=%t/lens_long.npy --expect=%t/expect_long.npy --quiet | FileCheck %s
// CHECK: result #0 vs {{.*}}: {{.*}}, ok
// RUN: attn-run %s --entry=features --pipeline=reference --input=%t/q.npy --input=%t/kc16.npy --input=%t/vc16.npy --input=%t/table16.npy --input=%t/lens.npy --input=%t/sinks.npy --input=%t/slopes.npy --output=%t/features.npy --quiet
// RUN: attn-run %s --entry=features --pipeline=cpu --input=%t/q.npy --input=%t/kc16.npy --input=%t/vc16.npy --input=%t/table16.npy --input=%t/lens.npy --input=%t/sinks.npy --input=%t/slopes.npy --expect=%t/features.npy --quiet | FileCheck %s
// RUN: attn-run %s --entry=features --pipeline=cpu --num-threads=1 --input=%t/q.npy --input=%t/kc16.npy --input=%t/vc16.npy --input=%t/table16.npy --input=%t/lens.npy --input=%t/sinks.npy --input=%t/slopes.npy --expect=%t/features.npy --quiet | FileCheck %s
// A head-dependent mask function (per head, a verdict per tile: the
// heads' score loops stay apart): keys j >= 100·h, so that heads past 0
// see none of sequence 2's 37.
// RUN: attn-run %s --entry=masked --pipeline=reference --input=%t/q.npy --input=%t/kc16.npy --input=%t/vc16.npy --input=%t/table16.npy --input=%t/lens.npy --output=%t/masked.npy --quiet
// RUN: attn-run %s --entry=masked --pipeline=cpu --input=%t/q.npy --input=%t/kc16.npy --input=%t/vc16.npy --input=%t/table16.npy --input=%t/lens.npy --expect=%t/masked.npy --quiet | FileCheck %s
// RUN: attn-run %s --entry=masked --pipeline=cpu --num-threads=1 --input=%t/q.npy --input=%t/kc16.npy --input=%t/vc16.npy --input=%t/table16.npy --input=%t/lens.npy --expect=%t/masked.npy --quiet | FileCheck %s

// The kernel: one work item per (batch row, key split), each K/V head's
// query rows and state a slice of [Hkv, G·Tq, ...] scratch.
// RUN: attn-opt %s --convert-attn-to-loops="min-work-items=4 vector-width=16" --canonicalize | FileCheck %s --check-prefix=LOOPS
// LOOPS-LABEL: func.func @decode16
// LOOPS: scf.parallel
// LOOPS-DAG: memref.alloca() {alignment = 64 : i64} : memref<4x2x32xf32>
// LOOPS-DAG: memref.alloca() {alignment = 64 : i64} : memref<4x2xf32>
// LOOPS: memref.subview %{{.*}}[%{{.*}}, 0, 0] [1, 2, 32] [1, 1, 1] : memref<4x2x32xf32> to memref<2x32xf32, strided<[32, 1], offset: ?>>

func.func @decode16(%q: tensor<4x8x1x32xf32>, %kc: tensor<165x16x4x32xf32>, %vc: tensor<165x16x4x32xf32>,
                    %table: tensor<4x40xi32>, %len: tensor<4xi32>) -> tensor<4x8x1x32xf32> {
  %k = attn.gather_pages %kc, %table lengths(%len)
      : (tensor<165x16x4x32xf32>, tensor<4x40xi32>, tensor<4xi32>) -> tensor<4x4x640x32xf32>
  %v = attn.gather_pages %vc, %table lengths(%len)
      : (tensor<165x16x4x32xf32>, tensor<4x40xi32>, tensor<4xi32>) -> tensor<4x4x640x32xf32>
  %o = attn.sdpa %q, %k, %v key_lengths(%len) {causal = #attn.causal<bottom_right>}
      : (tensor<4x8x1x32xf32>, tensor<4x4x640x32xf32>, tensor<4x4x640x32xf32>, tensor<4xi32>)
        -> tensor<4x8x1x32xf32>
  return %o : tensor<4x8x1x32xf32>
}

func.func @decode1(%q: tensor<4x8x1x32xf32>, %kc: tensor<2567x1x4x32xf32>, %vc: tensor<2567x1x4x32xf32>,
                   %table: tensor<4x640xi32>, %len: tensor<4xi32>) -> tensor<4x8x1x32xf32> {
  %k = attn.gather_pages %kc, %table lengths(%len)
      : (tensor<2567x1x4x32xf32>, tensor<4x640xi32>, tensor<4xi32>) -> tensor<4x4x640x32xf32>
  %v = attn.gather_pages %vc, %table lengths(%len)
      : (tensor<2567x1x4x32xf32>, tensor<4x640xi32>, tensor<4xi32>) -> tensor<4x4x640x32xf32>
  %o = attn.sdpa %q, %k, %v key_lengths(%len) {causal = #attn.causal<bottom_right>}
      : (tensor<4x8x1x32xf32>, tensor<4x4x640x32xf32>, tensor<4x4x640x32xf32>, tensor<4xi32>)
        -> tensor<4x8x1x32xf32>
  return %o : tensor<4x8x1x32xf32>
}

func.func @decode_long(%q: tensor<1x8x1x32xf32>, %kc: tensor<165x16x4x32xf32>, %vc: tensor<165x16x4x32xf32>,
                       %table: tensor<1x40xi32>, %len: tensor<1xi32>) -> tensor<1x8x1x32xf32> {
  %k = attn.gather_pages %kc, %table lengths(%len)
      : (tensor<165x16x4x32xf32>, tensor<1x40xi32>, tensor<1xi32>) -> tensor<1x4x640x32xf32>
  %v = attn.gather_pages %vc, %table lengths(%len)
      : (tensor<165x16x4x32xf32>, tensor<1x40xi32>, tensor<1xi32>) -> tensor<1x4x640x32xf32>
  %o = attn.sdpa %q, %k, %v key_lengths(%len) {causal = #attn.causal<bottom_right>}
      : (tensor<1x8x1x32xf32>, tensor<1x4x640x32xf32>, tensor<1x4x640x32xf32>, tensor<1xi32>)
        -> tensor<1x8x1x32xf32>
  return %o : tensor<1x8x1x32xf32>
}

func.func @features(%q: tensor<4x8x1x32xf32>, %kc: tensor<165x16x4x32xf32>, %vc: tensor<165x16x4x32xf32>,
                    %table: tensor<4x40xi32>, %len: tensor<4xi32>, %sinks: tensor<8xf32>,
                    %slopes: tensor<8xf32>) -> tensor<4x8x1x32xf32> {
  %k = attn.gather_pages %kc, %table lengths(%len)
      : (tensor<165x16x4x32xf32>, tensor<4x40xi32>, tensor<4xi32>) -> tensor<4x4x640x32xf32>
  %v = attn.gather_pages %vc, %table lengths(%len)
      : (tensor<165x16x4x32xf32>, tensor<4x40xi32>, tensor<4xi32>) -> tensor<4x4x640x32xf32>
  %o = attn.sdpa %q, %k, %v alibi(%slopes) key_lengths(%len) sinks(%sinks)
      {causal = #attn.causal<bottom_right>, softcap = 30.0 : f32, window = #attn.window<left = 200>}
      : (tensor<4x8x1x32xf32>, tensor<4x4x640x32xf32>, tensor<4x4x640x32xf32>, tensor<8xf32>,
         tensor<4xi32>, tensor<8xf32>) -> tensor<4x8x1x32xf32>
  return %o : tensor<4x8x1x32xf32>
}

func.func @masked(%q: tensor<4x8x1x32xf32>, %kc: tensor<165x16x4x32xf32>, %vc: tensor<165x16x4x32xf32>,
                  %table: tensor<4x40xi32>, %len: tensor<4xi32>) -> tensor<4x8x1x32xf32> {
  %k = attn.gather_pages %kc, %table lengths(%len)
      : (tensor<165x16x4x32xf32>, tensor<4x40xi32>, tensor<4xi32>) -> tensor<4x4x640x32xf32>
  %v = attn.gather_pages %vc, %table lengths(%len)
      : (tensor<165x16x4x32xf32>, tensor<4x40xi32>, tensor<4xi32>) -> tensor<4x4x640x32xf32>
  %o = attn.sdpa %q, %k, %v key_lengths(%len) {causal = #attn.causal<bottom_right>} mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %c100 = arith.constant 100 : index
    %first = arith.muli %h, %c100 : index
    %keep = arith.cmpi sge, %j, %first : index
    attn.yield %keep : i1
  } : (tensor<4x8x1x32xf32>, tensor<4x4x640x32xf32>, tensor<4x4x640x32xf32>, tensor<4xi32>)
      -> tensor<4x8x1x32xf32>
  return %o : tensor<4x8x1x32xf32>
}

func.func @decode16_hnd(%q: tensor<4x8x1x32xf32>, %kc: tensor<165x4x16x32xf32>,
                        %vc: tensor<165x4x16x32xf32>, %table: tensor<4x40xi32>,
                        %len: tensor<4xi32>) -> tensor<4x8x1x32xf32> {
  %k = attn.gather_pages %kc, %table lengths(%len) {layout = #attn.kv_layout<hnd>}
      : (tensor<165x4x16x32xf32>, tensor<4x40xi32>, tensor<4xi32>) -> tensor<4x4x640x32xf32>
  %v = attn.gather_pages %vc, %table lengths(%len) {layout = #attn.kv_layout<hnd>}
      : (tensor<165x4x16x32xf32>, tensor<4x40xi32>, tensor<4xi32>) -> tensor<4x4x640x32xf32>
  %o = attn.sdpa %q, %k, %v key_lengths(%len) {causal = #attn.causal<bottom_right>}
      : (tensor<4x8x1x32xf32>, tensor<4x4x640x32xf32>, tensor<4x4x640x32xf32>, tensor<4xi32>)
        -> tensor<4x8x1x32xf32>
  return %o : tensor<4x8x1x32xf32>
}
