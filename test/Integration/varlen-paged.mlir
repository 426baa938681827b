// attn.sdpa_varlen with a block table: the ragged batch of varlen.mlir
// (Inputs/varlen_case.py: query lengths 5, 0, 1, 37, 70, key lengths 5,
// 3, 9, 37, 100, GQA 4:1, 3 rows of no sequence) with its keys in paged
// caches of 16 rows a block at shuffled ids, stale out-of-range entries
// past each sequence's blocks. The expected outputs are float64 attention
// of each sequence's contiguous rows: prefill chunks and one-token decodes
// in one op, the queries not padded.
// REQUIRES: torch
// RUN: rm -rf %t && mkdir -p %t
// RUN: %torch_python %S/Inputs/varlen_case.py %t
// RUN: attn-run %s --entry=causal --pipeline=reference --input=%t/q.npy --input=%t/kc.npy --input=%t/vc.npy --input=%t/cuq.npy --input=%t/cuk.npy --input=%t/table.npy --expect=%t/causal_expect.npy --quiet | FileCheck %s
// RUN: attn-run %s --entry=causal --pipeline=cpu --input=%t/q.npy --input=%t/kc.npy --input=%t/vc.npy --input=%t/cuq.npy --input=%t/cuk.npy --input=%t/table.npy --expect=%t/causal_expect.npy --quiet | FileCheck %s
// RUN: attn-run %s --entry=causal --pipeline=cpu --vector-width=8 --num-threads=1 --input=%t/q.npy --input=%t/kc.npy --input=%t/vc.npy --input=%t/cuq.npy --input=%t/cuk.npy --input=%t/table.npy --expect=%t/causal_expect.npy --quiet | FileCheck %s
// RUN: attn-run %s --entry=causal --pipeline=gpu-schedule --input=%t/q.npy --input=%t/kc.npy --input=%t/vc.npy --input=%t/cuq.npy --input=%t/cuk.npy --input=%t/table.npy --expect=%t/causal_expect.npy --quiet | FileCheck %s
// RUN: attn-run %s --entry=hnd --pipeline=cpu --input=%t/q.npy --input=%t/kch.npy --input=%t/vch.npy --input=%t/cuq.npy --input=%t/cuk.npy --input=%t/table.npy --expect=%t/full_expect.npy --quiet | FileCheck %s
// RUN: attn-run %s --entry=hnd --pipeline=reference --input=%t/q.npy --input=%t/kch.npy --input=%t/vch.npy --input=%t/cuq.npy --input=%t/cuk.npy --input=%t/table.npy --expect=%t/full_expect.npy --quiet | FileCheck %s
// RUN: attn-run %s --entry=features --pipeline=cpu --input=%t/q.npy --input=%t/kc.npy --input=%t/vc.npy --input=%t/cuq.npy --input=%t/cuk.npy --input=%t/table.npy --input=%t/slopes.npy --input=%t/sinks.npy --expect=%t/feat_expect.npy --quiet | FileCheck %s
// RUN: attn-run %s --entry=features --pipeline=reference --input=%t/q.npy --input=%t/kc.npy --input=%t/vc.npy --input=%t/cuq.npy --input=%t/cuk.npy --input=%t/table.npy --input=%t/slopes.npy --input=%t/sinks.npy --expect=%t/feat_expect.npy --quiet | FileCheck %s
// CHECK: result #0 vs {{.*}}expect.npy: {{.*}}, ok
//
// A block id outside [0, NB) in a block a sequence uses, and a sequence
// longer than its row of the table holds, are errors before the call.
// RUN: %python %S/Inputs/expect_exit.py 2 attn-run %s --entry=causal --input=%t/q.npy --input=%t/kc.npy --input=%t/vc.npy --input=%t/cuq.npy --input=%t/cuk.npy --input=%t/badtable.npy | FileCheck %s --check-prefix=BADID
// BADID: attn-run: causal: block table (argument #5) element [4, 6] is 16, outside [0, NB = 16) of 'attn.sdpa_varlen'
// RUN: %python %S/Inputs/expect_exit.py 2 attn-run %s --entry=causal --input=%t/q.npy --input=%t/kc.npy --input=%t/vc.npy --input=%t/cuq.npy --input=%t/longk.npy --input=%t/table.npy | FileCheck %s --check-prefix=LONG
// LONG: attn-run: causal: block table (argument #5) sequence 4 has 113 keys (cu_seqlens_k[5] - [4]), outside [0, MB*BS = 112] of 'attn.sdpa_varlen'
//
// attn-decompose gives each sequence one attn.sdpa on its query rows and
// on gather_pages of its row of the table, which the CPU kernel reads in
// place.
// RUN: attn-opt %s --attn-decompose=keep-sdpa | FileCheck %s --check-prefix=LOOP
// LOOP-LABEL: func.func @causal(
// LOOP: scf.for %[[S:[a-z0-9_]+]] =
// LOOP: %[[ROW:.*]] = tensor.extract_slice %arg5[%[[S]], 0] [1, 7] [1, 1] : tensor<5x7xi32> to tensor<1x7xi32>
// LOOP: %[[LEN:.*]] = tensor.from_elements %{{.*}} : tensor<1xi32>
// LOOP: %[[K:.*]] = attn.gather_pages %arg1, %[[ROW]] lengths(%[[LEN]]) : (tensor<16x16x2x32xf32>, tensor<1x7xi32>, tensor<1xi32>) -> tensor<1x2x112x32xf32>
// LOOP: %[[V:.*]] = attn.gather_pages %arg2, %[[ROW]] lengths(%[[LEN]])
// LOOP: attn.sdpa %{{.*}}, %[[K]], %[[V]] key_lengths(%[[LEN]]) {causal = #attn.causal<bottom_right>}
// LOOP-NOT: attn.sdpa_varlen
// RUN: attn-opt %s --attn-cpu-pipeline=lower-to-llvm=false | FileCheck %s --check-prefix=CPU
// CPU-LABEL: func.func @causal(
// CPU-NOT: 1x2x112x32
// CPU: return
// int8 caches (attn.dequantize of the pools): the decode and prefill tiles
// read the codes in place; no f32 pool or gathered tensor is built.
// (Values: test_varlen_quantized in test/Python/test_serving.py.)
// CPU-LABEL: func.func @int8(
// CPU-NOT: 16x16x2x32xf32
// CPU-NOT: 1x2x112x32
// CPU: vector.load %{{.*}} : memref<16x16x2x32xi8>, vector<{{[0-9]+}}xi8>
// CPU-NOT: 16x16x2x32xf32
// CPU: return

func.func @causal(%q: tensor<1x8x?x32xf32>, %kc: tensor<16x16x2x32xf32>, %vc: tensor<16x16x2x32xf32>,
                  %cuq: tensor<6xi32>, %cuk: tensor<6xi32>, %table: tensor<5x7xi32>)
    -> tensor<1x8x?x32xf32> {
  %o = attn.sdpa_varlen %q, %kc, %vc, %cuq, %cuk block_table(%table)
      {causal = #attn.causal<bottom_right>}
      : (tensor<1x8x?x32xf32>, tensor<16x16x2x32xf32>, tensor<16x16x2x32xf32>, tensor<6xi32>,
         tensor<6xi32>, tensor<5x7xi32>) -> tensor<1x8x?x32xf32>
  return %o : tensor<1x8x?x32xf32>
}

// (The JIT takes any number of sequences; attn-aot needs it static: the
// table's B and the offsets' B + 1 are not a relation it derives.)
func.func @hnd(%q: tensor<1x8x?x32xf32>, %kc: tensor<?x2x16x32xf32>, %vc: tensor<?x2x16x32xf32>,
               %cuq: tensor<6xi32>, %cuk: tensor<6xi32>, %table: tensor<5x?xi32>)
    -> tensor<1x8x?x32xf32> {
  %o = attn.sdpa_varlen %q, %kc, %vc, %cuq, %cuk block_table(%table)
      {layout = #attn.kv_layout<hnd>}
      : (tensor<1x8x?x32xf32>, tensor<?x2x16x32xf32>, tensor<?x2x16x32xf32>, tensor<6xi32>,
         tensor<6xi32>, tensor<5x?xi32>) -> tensor<1x8x?x32xf32>
  return %o : tensor<1x8x?x32xf32>
}

func.func @features(%q: tensor<1x8x?x32xf32>, %kc: tensor<16x16x2x32xf32>,
                    %vc: tensor<16x16x2x32xf32>, %cuq: tensor<6xi32>, %cuk: tensor<6xi32>,
                    %table: tensor<5x7xi32>, %slopes: tensor<8xf32>, %sinks: tensor<8xf32>)
    -> tensor<1x8x?x32xf32> {
  %o = attn.sdpa_varlen %q, %kc, %vc, %cuq, %cuk block_table(%table) alibi(%slopes) sinks(%sinks)
      {causal = #attn.causal<bottom_right>, window = #attn.window<left = 16>, softcap = 20.0 : f32}
      : (tensor<1x8x?x32xf32>, tensor<16x16x2x32xf32>, tensor<16x16x2x32xf32>, tensor<6xi32>,
         tensor<6xi32>, tensor<5x7xi32>, tensor<8xf32>, tensor<8xf32>) -> tensor<1x8x?x32xf32>
  return %o : tensor<1x8x?x32xf32>
}

func.func @int8(%q: tensor<1x8x?x32xf32>, %kq: tensor<16x16x2x32xi8>, %ks: tensor<16x16x2xf32>,
                %vq: tensor<16x16x2x32xi8>, %vs: tensor<16x16x2xf32>, %cuq: tensor<6xi32>,
                %cuk: tensor<6xi32>, %table: tensor<5x7xi32>) -> tensor<1x8x?x32xf32> {
  %kc = attn.dequantize %kq, %ks : (tensor<16x16x2x32xi8>, tensor<16x16x2xf32>) -> tensor<16x16x2x32xf32>
  %vc = attn.dequantize %vq, %vs : (tensor<16x16x2x32xi8>, tensor<16x16x2xf32>) -> tensor<16x16x2x32xf32>
  %o = attn.sdpa_varlen %q, %kc, %vc, %cuq, %cuk block_table(%table)
      {causal = #attn.causal<bottom_right>}
      : (tensor<1x8x?x32xf32>, tensor<16x16x2x32xf32>, tensor<16x16x2x32xf32>, tensor<6xi32>,
         tensor<6xi32>, tensor<5x7xi32>) -> tensor<1x8x?x32xf32>
  return %o : tensor<1x8x?x32xf32>
}
