// Paged K/V (attn.gather_pages) through the reference, cpu and gpu-schedule
// pipelines against an independent NumPy gather + float64 attention: a
// shuffled block table with garbage past each sequence's length, lengths
// 9, 24 (the table's capacity) and 3 with block size 4, chunked prefill
// (Tq 3, bottom-right causal), GQA. A used block id outside [0, NB) is one line and exit 2.
// REQUIRES: torch
// RUN: rm -rf %t && mkdir -p %t
// RUN: %torch_python %S/Inputs/paged_case.py %t
// RUN: attn-run %s --pipeline=reference --input=%t/q.npy --input=%t/kc.npy --input=%t/vc.npy --input=%t/table.npy --input=%t/lens.npy --expect=%t/expect.npy --quiet | FileCheck %s
// RUN: attn-run %s --pipeline=cpu --input=%t/q.npy --input=%t/kc.npy --input=%t/vc.npy --input=%t/table.npy --input=%t/lens.npy --expect=%t/expect.npy --quiet | FileCheck %s
// RUN: attn-run %s --pipeline=cpu --tile-q=8 --tile-k=8 --vector-width=4 --input=%t/q.npy --input=%t/kc.npy --input=%t/vc.npy --input=%t/table.npy --input=%t/lens.npy --expect=%t/expect.npy --quiet | FileCheck %s
// The GPU's CUDA-core kernel reads the caches in place too (emulated;
// tiles of 2 keys: every K/V tile is part of one block).
// RUN: attn-run %s --pipeline=gpu-schedule --input=%t/q.npy --input=%t/kc.npy --input=%t/vc.npy --input=%t/table.npy --input=%t/lens.npy --expect=%t/expect.npy --quiet | FileCheck %s
// RUN: attn-run %s --pipeline=gpu-schedule --tile-q=16 --tile-k=2 --input=%t/q.npy --input=%t/kc.npy --input=%t/vc.npy --input=%t/table.npy --input=%t/lens.npy --expect=%t/expect.npy --quiet | FileCheck %s
// CHECK: result #0 vs {{.*}}expect.npy: {{.*}}, ok
// No gathered [B, Hkv, MB·BS, D] tensor is built on the host: the kernel
// gets the caches and the table.
// RUN: attn-opt %s --attn-gpu-pipeline=lower-to-llvm=false | FileCheck %s --check-prefix=GPU
// GPU-DAG: gpu.alloc  () : memref<20x4x2x32xf32>
// GPU-DAG: gpu.alloc  () : memref<3x6xi32>
// GPU: gpu.launch
// GPU-NOT: 3x2x24x32

// RUN: %python %S/Inputs/expect_exit.py 2 attn-run %s --input=%t/q.npy --input=%t/kc.npy --input=%t/vc.npy --input=%t/bad.npy --input=%t/lens.npy | FileCheck %s --check-prefix=BAD
// BAD: attn-run: paged: block table (argument #3) element [1, 5] is 20, outside [0, NB = 20) of 'attn.gather_pages'

// Random inputs draw block ids in [0, NB) and lengths in [0, Tk].
// RUN: attn-run %s --pipeline=cpu --random-inputs --seed=5 --compare-with=reference --quiet | FileCheck %s --check-prefix=RANDOM
// RANDOM: max_abs_error {{[0-9.e+-]+}}

func.func @paged(%q: tensor<3x4x3x32xf32>, %kc: tensor<20x4x2x32xf32>, %vc: tensor<20x4x2x32xf32>,
                 %table: tensor<3x6xi32>, %len: tensor<3xi32>) -> tensor<3x4x3x32xf32> {
  %k = attn.gather_pages %kc, %table lengths(%len)
      : (tensor<20x4x2x32xf32>, tensor<3x6xi32>, tensor<3xi32>) -> tensor<3x2x24x32xf32>
  %v = attn.gather_pages %vc, %table lengths(%len)
      : (tensor<20x4x2x32xf32>, tensor<3x6xi32>, tensor<3xi32>) -> tensor<3x2x24x32xf32>
  %o = attn.sdpa %q, %k, %v key_lengths(%len) {causal = #attn.causal<bottom_right>}
      : (tensor<3x4x3x32xf32>, tensor<3x2x24x32xf32>, tensor<3x2x24x32xf32>, tensor<3xi32>)
        -> tensor<3x4x3x32xf32>
  return %o : tensor<3x4x3x32xf32>
}
