// int8 K/V (attn.dequantize) through both pipelines against NumPy's
// dequantisation and float64 attention (Inputs/int8_case.py): a GQA decode
// with key lengths and bottom-right causal, whose decode tile reads the
// int8 rows in place (at the host's vector width, 8 and 4 lanes), and a
// causal prefill, whose tiles read the int8 rows in place too. (The case
// writer needs NumPy: lit's python with torch has it.)
// REQUIRES: torch
// RUN: rm -rf %t && mkdir -p %t
// RUN: %torch_python %S/Inputs/int8_case.py %t
// RUN: attn-run %s --entry=decode --pipeline=reference --input=%t/decode_q.npy --input=%t/decode_kq.npy --input=%t/decode_ks.npy --input=%t/decode_vq.npy --input=%t/decode_vs.npy --input=%t/decode_lens.npy --expect=%t/decode_expect.npy --quiet | FileCheck %s
// RUN: attn-run %s --entry=decode --pipeline=cpu --input=%t/decode_q.npy --input=%t/decode_kq.npy --input=%t/decode_ks.npy --input=%t/decode_vq.npy --input=%t/decode_vs.npy --input=%t/decode_lens.npy --expect=%t/decode_expect.npy --quiet | FileCheck %s
// RUN: attn-run %s --entry=decode --pipeline=cpu --vector-width=8 --input=%t/decode_q.npy --input=%t/decode_kq.npy --input=%t/decode_ks.npy --input=%t/decode_vq.npy --input=%t/decode_vs.npy --input=%t/decode_lens.npy --expect=%t/decode_expect.npy --quiet | FileCheck %s
// RUN: attn-run %s --entry=decode --pipeline=cpu --vector-width=4 --tile-k=16 --input=%t/decode_q.npy --input=%t/decode_kq.npy --input=%t/decode_ks.npy --input=%t/decode_vq.npy --input=%t/decode_vs.npy --input=%t/decode_lens.npy --expect=%t/decode_expect.npy --quiet | FileCheck %s
// RUN: attn-run %s --entry=prefill --pipeline=reference --input=%t/prefill_q.npy --input=%t/prefill_kq.npy --input=%t/prefill_ks.npy --input=%t/prefill_vq.npy --input=%t/prefill_vs.npy --expect=%t/prefill_expect.npy --quiet | FileCheck %s
// RUN: attn-run %s --entry=prefill --pipeline=cpu --input=%t/prefill_q.npy --input=%t/prefill_kq.npy --input=%t/prefill_ks.npy --input=%t/prefill_vq.npy --input=%t/prefill_vs.npy --expect=%t/prefill_expect.npy --quiet | FileCheck %s
// RUN: attn-run %s --entry=prefill --pipeline=cpu --vector-width=4 --tile-k=8 --input=%t/prefill_q.npy --input=%t/prefill_kq.npy --input=%t/prefill_ks.npy --input=%t/prefill_vq.npy --input=%t/prefill_vs.npy --expect=%t/prefill_expect.npy --quiet | FileCheck %s
// CHECK: result #0 vs {{.*}}expect.npy: {{.*}}, ok

// With dynamic dims, the runtime checks the scales against the cache
// (through attn.dequantize's verifier) before the call: a scale array one
// token short is exit 2, never a read past its end.
// RUN: attn-run %s --entry=decode_dynamic --pipeline=cpu --input=%t/decode_q.npy --input=%t/decode_kq.npy --input=%t/decode_ks.npy --input=%t/decode_vq.npy --input=%t/decode_vs.npy --input=%t/decode_lens.npy --expect=%t/decode_expect.npy --quiet | FileCheck %s
// RUN: %python %S/Inputs/expect_exit.py 2 attn-run %s --entry=decode_dynamic --pipeline=cpu --input=%t/decode_q.npy --input=%t/decode_kq.npy --input=%t/decode_ks_short.npy --input=%t/decode_vq.npy --input=%t/decode_vs.npy --input=%t/decode_lens.npy | FileCheck %s --check-prefix=SHORT
// SHORT: attn-run: decode_dynamic: the inputs' shapes do not fit together: 'attn.dequantize' op operand 'scale' tokens (dim 2) is 76, expected 77 (dim 2 of 'input')

// Random inputs: int8 in [-127, 127], lengths in [0, Tk].
// RUN: attn-run %s --entry=decode --pipeline=cpu --random-inputs --seed=3 --compare-with=reference --quiet | FileCheck %s --check-prefix=RANDOM
// RANDOM: result #0 vs reference: max_abs_error {{.*}} max_rel_error {{(0\.0+e\+00|[0-9.]+e-(0[5-9]|[1-9][0-9]))}}

func.func @decode(%q: tensor<2x8x1x64xf32>, %kq: tensor<2x2x77x64xi8>, %ks: tensor<2x2x77xf32>,
                  %vq: tensor<2x2x77x64xi8>, %vs: tensor<2x2x77xf32>,
                  %len: tensor<2xi32>) -> tensor<2x8x1x64xf32> {
  %k = attn.dequantize %kq, %ks : (tensor<2x2x77x64xi8>, tensor<2x2x77xf32>) -> tensor<2x2x77x64xf32>
  %v = attn.dequantize %vq, %vs : (tensor<2x2x77x64xi8>, tensor<2x2x77xf32>) -> tensor<2x2x77x64xf32>
  %o = attn.sdpa %q, %k, %v key_lengths(%len) {causal = #attn.causal<bottom_right>}
      : (tensor<2x8x1x64xf32>, tensor<2x2x77x64xf32>, tensor<2x2x77x64xf32>, tensor<2xi32>)
        -> tensor<2x8x1x64xf32>
  return %o : tensor<2x8x1x64xf32>
}

func.func @prefill(%q: tensor<1x2x20x32xf32>, %kq: tensor<1x2x20x32xi8>, %ks: tensor<1x2x20xf32>,
                   %vq: tensor<1x2x20x32xi8>, %vs: tensor<1x2x20xf32>) -> tensor<1x2x20x32xf32> {
  %k = attn.dequantize %kq, %ks : (tensor<1x2x20x32xi8>, tensor<1x2x20xf32>) -> tensor<1x2x20x32xf32>
  %v = attn.dequantize %vq, %vs : (tensor<1x2x20x32xi8>, tensor<1x2x20xf32>) -> tensor<1x2x20x32xf32>
  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<top_left>}
      : (tensor<1x2x20x32xf32>, tensor<1x2x20x32xf32>, tensor<1x2x20x32xf32>) -> tensor<1x2x20x32xf32>
  return %o : tensor<1x2x20x32xf32>
}

func.func @decode_dynamic(%q: tensor<?x8x1x64xf32>, %kq: tensor<?x2x?x64xi8>, %ks: tensor<?x2x?xf32>,
                          %vq: tensor<?x2x?x64xi8>, %vs: tensor<?x2x?xf32>,
                          %len: tensor<?xi32>) -> tensor<?x8x1x64xf32> {
  %k = attn.dequantize %kq, %ks : (tensor<?x2x?x64xi8>, tensor<?x2x?xf32>) -> tensor<?x2x?x64xf32>
  %v = attn.dequantize %vq, %vs : (tensor<?x2x?x64xi8>, tensor<?x2x?xf32>) -> tensor<?x2x?x64xf32>
  %o = attn.sdpa %q, %k, %v key_lengths(%len) {causal = #attn.causal<bottom_right>}
      : (tensor<?x8x1x64xf32>, tensor<?x2x?x64xf32>, tensor<?x2x?x64xf32>, tensor<?xi32>)
        -> tensor<?x8x1x64xf32>
  return %o : tensor<?x8x1x64xf32>
}
