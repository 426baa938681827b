// fp8 e4m3 K/V (attn.dequantize of f8E4M3FN) through the pipelines against
// NumPy's decoding of the codes from the format's definition and float64
// attention (Inputs/fp8_case.py). fp8 tensors cross the runtime as their
// bytes (uint8 .npy files).
// REQUIRES: torch
// RUN: rm -rf %t && mkdir -p %t
// RUN: %torch_python %S/Inputs/fp8_case.py %t
//
// Every one of the 256 codes (NaN for S.1111.111), by the reference
// lowering.
// RUN: attn-run %s --entry=codes --pipeline=reference --input=%t/codes_x.npy --input=%t/codes_s.npy --expect=%t/codes_expect.npy --rtol=0 --atol=0 --quiet | FileCheck %s
//
// Every code decoded by the CPU decode tile (which reads the fp8 rows in
// place), exactly: the softmax picks one key per head. At the host's
// vector width, 8 and 4 lanes; and a NaN code in V gives NaN where it
// is weighed.
// RUN: attn-run %s --entry=pick --pipeline=cpu --input=%t/pick_q.npy --input=%t/pick_kq.npy --input=%t/pick_s.npy --input=%t/pick_vq.npy --input=%t/pick_s.npy --expect=%t/pick_expect.npy --rtol=1e-6 --atol=1e-6 --quiet | FileCheck %s
// RUN: attn-run %s --entry=pick --pipeline=cpu --vector-width=8 --input=%t/pick_q.npy --input=%t/pick_kq.npy --input=%t/pick_s.npy --input=%t/pick_vq.npy --input=%t/pick_s.npy --expect=%t/pick_expect.npy --rtol=1e-6 --atol=1e-6 --quiet | FileCheck %s
// RUN: attn-run %s --entry=pick --pipeline=cpu --vector-width=4 --input=%t/pick_q.npy --input=%t/pick_kq.npy --input=%t/pick_s.npy --input=%t/pick_vq.npy --input=%t/pick_s.npy --expect=%t/pick_expect.npy --rtol=1e-6 --atol=1e-6 --quiet | FileCheck %s
// RUN: attn-run %s --entry=pick --pipeline=reference --input=%t/pick_q.npy --input=%t/pick_kq.npy --input=%t/pick_s.npy --input=%t/pick_vq.npy --input=%t/pick_s.npy --expect=%t/pick_expect.npy --rtol=1e-6 --atol=1e-6 --quiet | FileCheck %s
// RUN: attn-run %s --entry=pick --pipeline=cpu --input=%t/pick_q.npy --input=%t/pick_kq.npy --input=%t/pick_s.npy --input=%t/nan_vq.npy --input=%t/pick_s.npy --expect=%t/nan_expect.npy --quiet | FileCheck %s
//
// GQA decode with key lengths, per-tensor and per-token scales, contiguous
// and paged (NHD, blocks of 16: every K/V head in one work item).
// RUN: attn-run %s --entry=decode --pipeline=reference --input=%t/decode_q.npy --input=%t/decode_kq.npy --input=%t/decode_ks.npy --input=%t/decode_vq.npy --input=%t/decode_vs.npy --input=%t/decode_lens.npy --expect=%t/decode_expect.npy --quiet | FileCheck %s
// RUN: attn-run %s --entry=decode --pipeline=cpu --input=%t/decode_q.npy --input=%t/decode_kq.npy --input=%t/decode_ks.npy --input=%t/decode_vq.npy --input=%t/decode_vs.npy --input=%t/decode_lens.npy --expect=%t/decode_expect.npy --quiet | FileCheck %s
// RUN: attn-run %s --entry=decode --pipeline=cpu --vector-width=8 --input=%t/decode_q.npy --input=%t/decode_kq.npy --input=%t/decode_ks.npy --input=%t/decode_vq.npy --input=%t/decode_vs.npy --input=%t/decode_lens.npy --expect=%t/decode_expect.npy --quiet | FileCheck %s
// RUN: attn-run %s --entry=decode_tokens --pipeline=cpu --input=%t/decode_q.npy --input=%t/tok_kq.npy --input=%t/tok_ks.npy --input=%t/tok_vq.npy --input=%t/tok_vs.npy --input=%t/decode_lens.npy --expect=%t/tok_expect.npy --quiet | FileCheck %s
// RUN: attn-run %s --entry=decode_tokens --pipeline=reference --input=%t/decode_q.npy --input=%t/tok_kq.npy --input=%t/tok_ks.npy --input=%t/tok_vq.npy --input=%t/tok_vs.npy --input=%t/decode_lens.npy --expect=%t/tok_expect.npy --quiet | FileCheck %s
// RUN: attn-run %s --entry=paged --pipeline=cpu --input=%t/decode_q.npy --input=%t/paged_kc.npy --input=%t/decode_ks.npy --input=%t/paged_vc.npy --input=%t/decode_vs.npy --input=%t/paged_table.npy --input=%t/decode_lens.npy --expect=%t/decode_expect.npy --quiet | FileCheck %s
// RUN: attn-run %s --entry=paged --pipeline=cpu --num-threads=1 --input=%t/decode_q.npy --input=%t/paged_kc.npy --input=%t/decode_ks.npy --input=%t/paged_vc.npy --input=%t/decode_vs.npy --input=%t/paged_table.npy --input=%t/decode_lens.npy --expect=%t/decode_expect.npy --quiet | FileCheck %s
// RUN: attn-run %s --entry=paged --pipeline=reference --input=%t/decode_q.npy --input=%t/paged_kc.npy --input=%t/decode_ks.npy --input=%t/paged_vc.npy --input=%t/decode_vs.npy --input=%t/paged_table.npy --input=%t/decode_lens.npy --expect=%t/decode_expect.npy --quiet | FileCheck %s
// RUN: attn-run %s --entry=paged --pipeline=gpu-schedule --input=%t/decode_q.npy --input=%t/paged_kc.npy --input=%t/decode_ks.npy --input=%t/paged_vc.npy --input=%t/decode_vs.npy --input=%t/paged_table.npy --input=%t/decode_lens.npy --expect=%t/decode_expect.npy --quiet | FileCheck %s
//
// Prefill: the tiles take the dequantized floats.
// RUN: attn-run %s --entry=prefill --pipeline=cpu --input=%t/prefill_q.npy --input=%t/prefill_kq.npy --input=%t/prefill_s.npy --input=%t/prefill_vq.npy --input=%t/prefill_s.npy --expect=%t/prefill_expect.npy --quiet | FileCheck %s
// RUN: attn-run %s --entry=prefill --pipeline=reference --input=%t/prefill_q.npy --input=%t/prefill_kq.npy --input=%t/prefill_s.npy --input=%t/prefill_vq.npy --input=%t/prefill_s.npy --expect=%t/prefill_expect.npy --quiet | FileCheck %s
// CHECK: result #0 vs {{.*}}expect.npy: {{.*}}, ok
//
// A float array for an fp8 argument is refused, naming the convention.
// RUN: %python %S/Inputs/expect_exit.py 2 attn-run %s --entry=pick --pipeline=cpu --input=%t/pick_q.npy --input=%t/pick_q.npy --input=%t/pick_s.npy --input=%t/pick_vq.npy --input=%t/pick_s.npy | FileCheck %s --check-prefix=DTYPE
// DTYPE: input #1: dtype float32, expected float8_e4m3fn (float8_e4m3fn[1,16,16,16]); fp8 is passed as its bytes, a uint8 array
//
// Random inputs: fp8 codes of uniform floats, compared with the reference.
// RUN: attn-run %s --entry=decode --pipeline=cpu --random-inputs --seed=3 --compare-with=reference --quiet | FileCheck %s --check-prefix=RANDOM
// RANDOM: result #0 vs reference: max_abs_error {{.*}} max_rel_error {{(0\.0+e\+00|[0-9.]+e-(0[5-9]|[1-9][0-9]))}}
//
// In place: after convert-attn-to-loops the decode and the prefill read the
// fp8 caches (no f32 K/V is built) and decode them through f16.
// RUN: attn-opt %s --convert-attn-to-loops --canonicalize | FileCheck %s --check-prefix=INPLACE
// INPLACE-LABEL: func.func @decode(
// INPLACE-NOT: attn.dequantize
// INPLACE: vector.load %{{.*}} : memref<2x2x77x64xf8E4M3FN, {{.*}}>, vector<{{[0-9]+}}xf8E4M3FN>
// INPLACE: arith.extf %{{.*}} : vector<{{[0-9]+}}xf16> to vector<{{[0-9]+}}xf32>
// INPLACE-LABEL: func.func @paged(
// INPLACE-NOT: attn.dequantize
// INPLACE-NOT: attn.gather_pages
// INPLACE: memref<12x16x2x64xf8E4M3FN
// INPLACE-LABEL: func.func @prefill(
// INPLACE-NOT: attn.dequantize
// INPLACE: vector.load %{{.*}} : memref<{{.*}}xf8E4M3FN, {{.*}}>, vector<{{[0-9]+}}xf8E4M3FN>

func.func @codes(%x: tensor<1x1x1x256xf8E4M3FN>, %s: tensor<f32>) -> tensor<1x1x1x256xf32> {
  %y = attn.dequantize %x, %s : (tensor<1x1x1x256xf8E4M3FN>, tensor<f32>) -> tensor<1x1x1x256xf32>
  return %y : tensor<1x1x1x256xf32>
}

func.func @pick(%q: tensor<1x16x1x16xf32>, %kq: tensor<1x16x16x16xf8E4M3FN>, %ks: tensor<f32>,
                %vq: tensor<1x16x16x16xf8E4M3FN>, %vs: tensor<f32>) -> tensor<1x16x1x16xf32> {
  %k = attn.dequantize %kq, %ks : (tensor<1x16x16x16xf8E4M3FN>, tensor<f32>) -> tensor<1x16x16x16xf32>
  %v = attn.dequantize %vq, %vs : (tensor<1x16x16x16xf8E4M3FN>, tensor<f32>) -> tensor<1x16x16x16xf32>
  %o = attn.sdpa %q, %k, %v
      : (tensor<1x16x1x16xf32>, tensor<1x16x16x16xf32>, tensor<1x16x16x16xf32>) -> tensor<1x16x1x16xf32>
  return %o : tensor<1x16x1x16xf32>
}

func.func @decode(%q: tensor<2x8x1x64xf32>, %kq: tensor<2x2x77x64xf8E4M3FN>, %ks: tensor<f32>,
                  %vq: tensor<2x2x77x64xf8E4M3FN>, %vs: tensor<f32>,
                  %len: tensor<2xi32>) -> tensor<2x8x1x64xf32> {
  %k = attn.dequantize %kq, %ks : (tensor<2x2x77x64xf8E4M3FN>, tensor<f32>) -> tensor<2x2x77x64xf32>
  %v = attn.dequantize %vq, %vs : (tensor<2x2x77x64xf8E4M3FN>, tensor<f32>) -> tensor<2x2x77x64xf32>
  %o = attn.sdpa %q, %k, %v key_lengths(%len) {causal = #attn.causal<bottom_right>}
      : (tensor<2x8x1x64xf32>, tensor<2x2x77x64xf32>, tensor<2x2x77x64xf32>, tensor<2xi32>)
        -> tensor<2x8x1x64xf32>
  return %o : tensor<2x8x1x64xf32>
}

func.func @decode_tokens(%q: tensor<2x8x1x64xf32>, %kq: tensor<2x2x77x64xf8E4M3FN>,
                         %ks: tensor<2x2x77xf32>, %vq: tensor<2x2x77x64xf8E4M3FN>,
                         %vs: tensor<2x2x77xf32>, %len: tensor<2xi32>) -> tensor<2x8x1x64xf32> {
  %k = attn.dequantize %kq, %ks : (tensor<2x2x77x64xf8E4M3FN>, tensor<2x2x77xf32>) -> tensor<2x2x77x64xf32>
  %v = attn.dequantize %vq, %vs : (tensor<2x2x77x64xf8E4M3FN>, tensor<2x2x77xf32>) -> tensor<2x2x77x64xf32>
  %o = attn.sdpa %q, %k, %v key_lengths(%len) {causal = #attn.causal<bottom_right>}
      : (tensor<2x8x1x64xf32>, tensor<2x2x77x64xf32>, tensor<2x2x77x64xf32>, tensor<2xi32>)
        -> tensor<2x8x1x64xf32>
  return %o : tensor<2x8x1x64xf32>
}

func.func @paged(%q: tensor<2x8x1x64xf32>, %kc: tensor<12x16x2x64xf8E4M3FN>, %ks: tensor<f32>,
                 %vc: tensor<12x16x2x64xf8E4M3FN>, %vs: tensor<f32>, %table: tensor<2x5xi32>,
                 %len: tensor<2xi32>) -> tensor<2x8x1x64xf32> {
  %kd = attn.dequantize %kc, %ks : (tensor<12x16x2x64xf8E4M3FN>, tensor<f32>) -> tensor<12x16x2x64xf32>
  %vd = attn.dequantize %vc, %vs : (tensor<12x16x2x64xf8E4M3FN>, tensor<f32>) -> tensor<12x16x2x64xf32>
  %k = attn.gather_pages %kd, %table lengths(%len)
      : (tensor<12x16x2x64xf32>, tensor<2x5xi32>, tensor<2xi32>) -> tensor<2x2x80x64xf32>
  %v = attn.gather_pages %vd, %table lengths(%len)
      : (tensor<12x16x2x64xf32>, tensor<2x5xi32>, tensor<2xi32>) -> tensor<2x2x80x64xf32>
  %o = attn.sdpa %q, %k, %v key_lengths(%len) {causal = #attn.causal<bottom_right>}
      : (tensor<2x8x1x64xf32>, tensor<2x2x80x64xf32>, tensor<2x2x80x64xf32>, tensor<2xi32>)
        -> tensor<2x8x1x64xf32>
  return %o : tensor<2x8x1x64xf32>
}

func.func @prefill(%q: tensor<1x2x20x32xf32>, %kq: tensor<1x2x20x32xf8E4M3FN>, %ks: tensor<f32>,
                   %vq: tensor<1x2x20x32xf8E4M3FN>, %vs: tensor<f32>) -> tensor<1x2x20x32xf32> {
  %k = attn.dequantize %kq, %ks : (tensor<1x2x20x32xf8E4M3FN>, tensor<f32>) -> tensor<1x2x20x32xf32>
  %v = attn.dequantize %vq, %vs : (tensor<1x2x20x32xf8E4M3FN>, tensor<f32>) -> tensor<1x2x20x32xf32>
  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<top_left>}
      : (tensor<1x2x20x32xf32>, tensor<1x2x20x32xf32>, tensor<1x2x20x32xf32>) -> tensor<1x2x20x32xf32>
  return %o : tensor<1x2x20x32xf32>
}
