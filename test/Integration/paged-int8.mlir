// Paged int8 K/V: caches of int8 rows with one f32 scale per (block,
// slot, K/V head), dequantized whole and gathered through the block table
// (attn.gather_pages(attn.dequantize(cache, scales))), against NumPy's
// gather, dequantisation and float64 attention (Inputs/paged_int8_case.py).
// The CPU decode tile reads the int8 rows and their scales in place from
// the caches, in both layouts (nhd, hnd), at the host's vector width and
// at 8 lanes; a chunked prefill (Tq 3) reads them in place too. The
// reference pipeline runs the same functions op by op.
// REQUIRES: torch
// RUN: rm -rf %t && mkdir -p %t
// RUN: %torch_python %S/Inputs/paged_int8_case.py %t
// RUN: attn-run %s --entry=decode --pipeline=reference --input=%t/q1.npy --input=%t/kq.npy --input=%t/ks.npy --input=%t/vq.npy --input=%t/vs.npy --input=%t/table.npy --input=%t/lens.npy --expect=%t/expect1.npy --quiet | FileCheck %s
// RUN: attn-run %s --entry=decode --pipeline=cpu --input=%t/q1.npy --input=%t/kq.npy --input=%t/ks.npy --input=%t/vq.npy --input=%t/vs.npy --input=%t/table.npy --input=%t/lens.npy --expect=%t/expect1.npy --quiet | FileCheck %s
// RUN: attn-run %s --entry=decode --pipeline=cpu --vector-width=8 --input=%t/q1.npy --input=%t/kq.npy --input=%t/ks.npy --input=%t/vq.npy --input=%t/vs.npy --input=%t/table.npy --input=%t/lens.npy --expect=%t/expect1.npy --quiet | FileCheck %s
// RUN: attn-run %s --entry=decode_hnd --pipeline=cpu --input=%t/q1.npy --input=%t/kq_hnd.npy --input=%t/ks_hnd.npy --input=%t/vq_hnd.npy --input=%t/vs_hnd.npy --input=%t/table.npy --input=%t/lens.npy --expect=%t/expect1.npy --quiet | FileCheck %s
// RUN: attn-run %s --entry=prefill --pipeline=cpu --input=%t/q3.npy --input=%t/kq.npy --input=%t/ks.npy --input=%t/vq.npy --input=%t/vs.npy --input=%t/table.npy --input=%t/lens.npy --expect=%t/expect3.npy --quiet | FileCheck %s
// RUN: attn-run %s --entry=prefill --pipeline=cpu --vector-width=8 --input=%t/q3.npy --input=%t/kq.npy --input=%t/ks.npy --input=%t/vq.npy --input=%t/vs.npy --input=%t/table.npy --input=%t/lens.npy --expect=%t/expect3.npy --quiet | FileCheck %s
// RUN: attn-run %s --entry=prefill --pipeline=reference --input=%t/q3.npy --input=%t/kq.npy --input=%t/ks.npy --input=%t/vq.npy --input=%t/vs.npy --input=%t/table.npy --input=%t/lens.npy --expect=%t/expect3.npy --quiet | FileCheck %s
// The GPU kernel (emulated) reads the dequantized caches in place.
// RUN: attn-run %s --entry=decode --pipeline=gpu-schedule --input=%t/q1.npy --input=%t/kq.npy --input=%t/ks.npy --input=%t/vq.npy --input=%t/vs.npy --input=%t/table.npy --input=%t/lens.npy --expect=%t/expect1.npy --quiet | FileCheck %s
// CHECK: result #0 vs {{.*}}.npy: {{.*}}, ok
//
// In place: after convert-attn-to-loops the decode's caches are read as
// int8 and no f32 cache is built (the dequantize ops are gone).
// RUN: attn-opt %s --convert-attn-to-loops --canonicalize | FileCheck %s --check-prefix=INPLACE
// INPLACE-LABEL: func.func @decode
// INPLACE-NOT: attn.dequantize
// INPLACE-NOT: attn.gather_pages
// INPLACE-NOT: memref<20x4x2x64xf32
// INPLACE: memref<20x4x2x64xi8,
// INPLACE-NOT: memref<20x4x2x64xf32
// INPLACE-LABEL: func.func @decode_hnd
//
// A block id outside [0, NB) is a run-time error (exit 2), as for float
// caches.
// RUN: %python -c "import numpy as np; t = np.load('%t/table.npy'); t[1, 5] = 20; np.save('%t/bad.npy', t)"
// RUN: %python %S/Inputs/expect_exit.py 2 attn-run %s --entry=decode --pipeline=cpu --input=%t/q1.npy --input=%t/kq.npy --input=%t/ks.npy --input=%t/vq.npy --input=%t/vs.npy --input=%t/bad.npy --input=%t/lens.npy | FileCheck %s --check-prefix=BAD
// BAD: attn-run: decode: block table (argument #5) element [1, 5] is 20, outside [0, NB = 20) of 'attn.gather_pages'

func.func @decode(%q: tensor<3x8x1x64xf32>, %kq: tensor<20x4x2x64xi8>, %ks: tensor<20x4x2xf32>,
                  %vq: tensor<20x4x2x64xi8>, %vs: tensor<20x4x2xf32>,
                  %table: tensor<3x6xi32>, %len: tensor<3xi32>) -> tensor<3x8x1x64xf32> {
  %kc = attn.dequantize %kq, %ks : (tensor<20x4x2x64xi8>, tensor<20x4x2xf32>) -> tensor<20x4x2x64xf32>
  %vc = attn.dequantize %vq, %vs : (tensor<20x4x2x64xi8>, tensor<20x4x2xf32>) -> tensor<20x4x2x64xf32>
  %k = attn.gather_pages %kc, %table lengths(%len)
      : (tensor<20x4x2x64xf32>, tensor<3x6xi32>, tensor<3xi32>) -> tensor<3x2x24x64xf32>
  %v = attn.gather_pages %vc, %table lengths(%len)
      : (tensor<20x4x2x64xf32>, tensor<3x6xi32>, tensor<3xi32>) -> tensor<3x2x24x64xf32>
  %o = attn.sdpa %q, %k, %v key_lengths(%len) {causal = #attn.causal<bottom_right>}
      : (tensor<3x8x1x64xf32>, tensor<3x2x24x64xf32>, tensor<3x2x24x64xf32>, tensor<3xi32>)
        -> tensor<3x8x1x64xf32>
  return %o : tensor<3x8x1x64xf32>
}

func.func @decode_hnd(%q: tensor<3x8x1x64xf32>, %kq: tensor<20x2x4x64xi8>, %ks: tensor<20x2x4xf32>,
                      %vq: tensor<20x2x4x64xi8>, %vs: tensor<20x2x4xf32>,
                      %table: tensor<3x6xi32>, %len: tensor<3xi32>) -> tensor<3x8x1x64xf32> {
  %kc = attn.dequantize %kq, %ks : (tensor<20x2x4x64xi8>, tensor<20x2x4xf32>) -> tensor<20x2x4x64xf32>
  %vc = attn.dequantize %vq, %vs : (tensor<20x2x4x64xi8>, tensor<20x2x4xf32>) -> tensor<20x2x4x64xf32>
  %k = attn.gather_pages %kc, %table lengths(%len) {layout = #attn.kv_layout<hnd>}
      : (tensor<20x2x4x64xf32>, tensor<3x6xi32>, tensor<3xi32>) -> tensor<3x2x24x64xf32>
  %v = attn.gather_pages %vc, %table lengths(%len) {layout = #attn.kv_layout<hnd>}
      : (tensor<20x2x4x64xf32>, tensor<3x6xi32>, tensor<3xi32>) -> tensor<3x2x24x64xf32>
  %o = attn.sdpa %q, %k, %v key_lengths(%len) {causal = #attn.causal<bottom_right>}
      : (tensor<3x8x1x64xf32>, tensor<3x2x24x64xf32>, tensor<3x2x24x64xf32>, tensor<3xi32>)
        -> tensor<3x8x1x64xf32>
  return %o : tensor<3x8x1x64xf32>
}

func.func @prefill(%q: tensor<3x8x3x64xf32>, %kq: tensor<20x4x2x64xi8>, %ks: tensor<20x4x2xf32>,
                   %vq: tensor<20x4x2x64xi8>, %vs: tensor<20x4x2xf32>,
                   %table: tensor<3x6xi32>, %len: tensor<3xi32>) -> tensor<3x8x3x64xf32> {
  %kc = attn.dequantize %kq, %ks : (tensor<20x4x2x64xi8>, tensor<20x4x2xf32>) -> tensor<20x4x2x64xf32>
  %vc = attn.dequantize %vq, %vs : (tensor<20x4x2x64xi8>, tensor<20x4x2xf32>) -> tensor<20x4x2x64xf32>
  %k = attn.gather_pages %kc, %table lengths(%len)
      : (tensor<20x4x2x64xf32>, tensor<3x6xi32>, tensor<3xi32>) -> tensor<3x2x24x64xf32>
  %v = attn.gather_pages %vc, %table lengths(%len)
      : (tensor<20x4x2x64xf32>, tensor<3x6xi32>, tensor<3xi32>) -> tensor<3x2x24x64xf32>
  %o = attn.sdpa %q, %k, %v key_lengths(%len) {causal = #attn.causal<bottom_right>}
      : (tensor<3x8x3x64xf32>, tensor<3x2x24x64xf32>, tensor<3x2x24x64xf32>, tensor<3xi32>)
        -> tensor<3x8x3x64xf32>
  return %o : tensor<3x8x3x64xf32>
}
