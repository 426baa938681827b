// attn.sdpa_varlen: a ragged batch along the rows (Inputs/varlen_case.py:
// 5 sequences, query lengths 5, 0, 1, 37, 70 and key lengths 5, 3, 9, 37,
// 100, GQA 4:1, 3 rows of no sequence) against float64 attention of each
// sequence's rows, through the reference, cpu and gpu-schedule pipelines:
// bottom-right and top-left causal, no mask, and window + softcap + ALiBi
// + sinks. Offsets out of order and past the rows are clamped (no read
// outside Q, K, V), as the expected output computes them.
// REQUIRES: torch
// RUN: rm -rf %t && mkdir -p %t
// RUN: %torch_python %S/Inputs/varlen_case.py %t
// RUN: attn-run %s --entry=causal --pipeline=reference --input=%t/q.npy --input=%t/k.npy --input=%t/v.npy --input=%t/cuq.npy --input=%t/cuk.npy --expect=%t/causal_expect.npy --quiet | FileCheck %s
// RUN: attn-run %s --entry=causal --pipeline=cpu --input=%t/q.npy --input=%t/k.npy --input=%t/v.npy --input=%t/cuq.npy --input=%t/cuk.npy --expect=%t/causal_expect.npy --quiet | FileCheck %s
// RUN: attn-run %s --entry=causal --pipeline=cpu --vector-width=8 --num-threads=1 --input=%t/q.npy --input=%t/k.npy --input=%t/v.npy --input=%t/cuq.npy --input=%t/cuk.npy --expect=%t/causal_expect.npy --quiet | FileCheck %s
// RUN: attn-run %s --entry=causal --pipeline=gpu-schedule --input=%t/q.npy --input=%t/k.npy --input=%t/v.npy --input=%t/cuq.npy --input=%t/cuk.npy --expect=%t/causal_expect.npy --quiet | FileCheck %s
// RUN: attn-run %s --entry=top_left --pipeline=cpu --input=%t/q.npy --input=%t/k.npy --input=%t/v.npy --input=%t/cuq.npy --input=%t/cuk.npy --expect=%t/tl_expect.npy --quiet | FileCheck %s
// RUN: attn-run %s --entry=full --pipeline=cpu --input=%t/q.npy --input=%t/k.npy --input=%t/v.npy --input=%t/cuq.npy --input=%t/cuk.npy --expect=%t/full_expect.npy --quiet | FileCheck %s
// RUN: attn-run %s --entry=full --pipeline=reference --input=%t/q.npy --input=%t/k.npy --input=%t/v.npy --input=%t/cuq.npy --input=%t/cuk.npy --expect=%t/full_expect.npy --quiet | FileCheck %s
// RUN: attn-run %s --entry=features --pipeline=cpu --input=%t/q.npy --input=%t/k.npy --input=%t/v.npy --input=%t/cuq.npy --input=%t/cuk.npy --input=%t/slopes.npy --input=%t/sinks.npy --expect=%t/feat_expect.npy --quiet | FileCheck %s
// RUN: attn-run %s --entry=features --pipeline=reference --input=%t/q.npy --input=%t/k.npy --input=%t/v.npy --input=%t/cuq.npy --input=%t/cuk.npy --input=%t/slopes.npy --input=%t/sinks.npy --expect=%t/feat_expect.npy --quiet | FileCheck %s
// RUN: attn-run %s --entry=features --pipeline=gpu-schedule --input=%t/q.npy --input=%t/k.npy --input=%t/v.npy --input=%t/cuq.npy --input=%t/cuk.npy --input=%t/slopes.npy --input=%t/sinks.npy --expect=%t/feat_expect.npy --quiet | FileCheck %s
// RUN: attn-run %s --entry=causal --pipeline=cpu --input=%t/q.npy --input=%t/k.npy --input=%t/v.npy --input=%t/badq.npy --input=%t/badk.npy --expect=%t/bad_expect.npy --quiet | FileCheck %s
// RUN: attn-run %s --entry=causal --pipeline=reference --input=%t/q.npy --input=%t/k.npy --input=%t/v.npy --input=%t/badq.npy --input=%t/badk.npy --expect=%t/bad_expect.npy --quiet | FileCheck %s
// RUN: attn-run %s --entry=tokens_first --pipeline=cpu --input=%t/qt.npy --input=%t/kt.npy --input=%t/vt.npy --input=%t/cuq.npy --input=%t/cuk.npy --expect=%t/causal_expect.npy --quiet | FileCheck %s
// RUN: attn-run %s --entry=tokens_first --pipeline=cpu --vector-width=8 --num-threads=1 --input=%t/qt.npy --input=%t/kt.npy --input=%t/vt.npy --input=%t/cuq.npy --input=%t/cuk.npy --expect=%t/causal_expect.npy --quiet | FileCheck %s
// RUN: attn-run %s --entry=tokens_first --pipeline=reference --input=%t/qt.npy --input=%t/kt.npy --input=%t/vt.npy --input=%t/cuq.npy --input=%t/cuk.npy --expect=%t/causal_expect.npy --quiet | FileCheck %s
// CHECK: result #0 vs {{.*}}expect.npy: {{.*}}, ok
//
// attn-decompose (keep-sdpa, as the fused pipelines run it) makes one
// attn.sdpa a sequence on slices of the rows, no padded copy; the CPU
// kernel then reads the slices in place (no copy of Q, K or V). A
// sequence of one query (decoding) gets an sdpa of static Tq = 1, which
// the kernels run as a decode.
// RUN: attn-opt %s --attn-decompose=keep-sdpa | FileCheck %s --check-prefix=LOOP
// LOOP-LABEL: func.func @causal(
// LOOP: linalg.fill
// LOOP: scf.for
// LOOP: scf.if
// LOOP: %[[ONE:.*]] = arith.cmpi eq, %[[LEN:.*]], %c1 : index
// LOOP: scf.if %[[ONE]]
// LOOP: tensor.extract_slice %arg0[0, 0, %{{.*}}, 0] [1, 8, 1, 32] [1, 1, 1, 1] : tensor<1x8x?x32xf32> to tensor<1x8x1x32xf32>
// LOOP: attn.sdpa %{{.*}} {causal = #attn.causal<bottom_right>} : (tensor<1x8x1x32xf32>, tensor<1x2x?x32xf32>, tensor<1x2x?x32xf32>) -> tensor<1x8x1x32xf32>
// LOOP: tensor.insert_slice %{{.*}}[0, 0, %{{.*}}, 0] [1, 8, 1, 32]
// LOOP: } else {
// LOOP: tensor.extract_slice %arg0[0, 0, %{{.*}}, 0] [1, 8, %[[LEN]], 32] [1, 1, 1, 1] : tensor<1x8x?x32xf32> to tensor<1x8x?x32xf32>
// LOOP: attn.sdpa %{{.*}} {causal = #attn.causal<bottom_right>} : (tensor<1x8x?x32xf32>, tensor<1x2x?x32xf32>, tensor<1x2x?x32xf32>) -> tensor<1x8x?x32xf32>
// LOOP: tensor.insert_slice
// LOOP-NOT: attn.sdpa_varlen
// int8 K/V: each sequence dequantizes its own rows of the codes and
// scales, which the CPU tiles then read in place (no f32 K or V is built).
// (Values: test_varlen_quantized in test/Python/test_serving.py.)
// LOOP-LABEL: func.func @int8(
// LOOP: scf.for
// LOOP-DAG: %[[KR:.*]] = tensor.extract_slice %arg1[0, 0, %[[KS:.*]], 0] [1, 2, %[[KL:.*]], 32] [1, 1, 1, 1] : tensor<1x2x?x32xi8> to tensor<1x2x?x32xi8>
// LOOP-DAG: %[[SR:.*]] = tensor.extract_slice %arg2[0, 0, %[[KS]]] [1, 2, %[[KL]]] [1, 1, 1] : tensor<1x2x?xf32> to tensor<1x2x?xf32>
// LOOP: attn.dequantize %[[KR]], %[[SR]] : (tensor<1x2x?x32xi8>, tensor<1x2x?xf32>) -> tensor<1x2x?x32xf32>
// Tokens-first arrays: a sequence's rows are a transpose of its rows of
// the array, not rows of a transpose of the whole array.
// LOOP-LABEL: func.func @tokens_first(
// LOOP: scf.for
// LOOP: %[[QR:.*]] = tensor.extract_slice %arg0[0, %{{.*}}, 0, 0] [1, 1, 8, 32] [1, 1, 1, 1] : tensor<1x?x8x32xf32> to tensor<1x1x8x32xf32>
// LOOP: linalg.transpose ins(%[[QR]] : tensor<1x1x8x32xf32>) outs(%{{.*}} : tensor<1x8x1x32xf32>) permutation = [0, 2, 1, 3]
// LOOP: %[[KR:.*]] = tensor.extract_slice %arg1[0, %{{.*}}, 0, 0] [1, %{{.*}}, 2, 32] [1, 1, 1, 1] : tensor<1x?x2x32xf32> to tensor<1x?x2x32xf32>
// LOOP: linalg.transpose ins(%[[KR]] : tensor<1x?x2x32xf32>) outs(%{{.*}} : tensor<1x2x?x32xf32>) permutation = [0, 2, 1, 3]
// RUN: attn-opt %s --attn-cpu-pipeline=lower-to-llvm=false | FileCheck %s --check-prefix=CPU
// CPU-LABEL: func.func @int8(
// CPU-NOT: linalg.generic
// CPU: vector.load %{{.*}} : memref<1x2x?x32xi8, {{.*}}>, vector<{{[0-9]+}}xi8>
// CPU: return
// Tokens-first arrays: the kernel reads transposed views of each
// sequence's rows of them; no transposed copy is made.
// CPU-LABEL: func.func @tokens_first(
// CPU-NOT: linalg.transpose
// CPU: memref.transpose %{{.*}} (d0, d1, d2, d3) -> (d0, d2, d1, d3) : memref<1x1x8x32xf32
// CPU: memref.transpose %{{.*}} (d0, d1, d2, d3) -> (d0, d2, d1, d3) : memref<1x?x2x32xf32
// CPU: memref.transpose %{{.*}} (d0, d1, d2, d3) -> (d0, d2, d1, d3) : memref<1x?x2x32xf32
// CPU-NOT: linalg.transpose
// CPU: return

func.func @causal(%q: tensor<1x8x?x32xf32>, %k: tensor<1x2x?x32xf32>, %v: tensor<1x2x?x32xf32>,
                  %cuq: tensor<?xi32>, %cuk: tensor<?xi32>) -> tensor<1x8x?x32xf32> {
  %o = attn.sdpa_varlen %q, %k, %v, %cuq, %cuk {causal = #attn.causal<bottom_right>}
      : (tensor<1x8x?x32xf32>, tensor<1x2x?x32xf32>, tensor<1x2x?x32xf32>, tensor<?xi32>,
         tensor<?xi32>) -> tensor<1x8x?x32xf32>
  return %o : tensor<1x8x?x32xf32>
}

func.func @top_left(%q: tensor<1x8x?x32xf32>, %k: tensor<1x2x?x32xf32>, %v: tensor<1x2x?x32xf32>,
                    %cuq: tensor<?xi32>, %cuk: tensor<?xi32>) -> tensor<1x8x?x32xf32> {
  %o = attn.sdpa_varlen %q, %k, %v, %cuq, %cuk {causal = #attn.causal<top_left>}
      : (tensor<1x8x?x32xf32>, tensor<1x2x?x32xf32>, tensor<1x2x?x32xf32>, tensor<?xi32>,
         tensor<?xi32>) -> tensor<1x8x?x32xf32>
  return %o : tensor<1x8x?x32xf32>
}

func.func @full(%q: tensor<1x8x?x32xf32>, %k: tensor<1x2x?x32xf32>, %v: tensor<1x2x?x32xf32>,
                %cuq: tensor<?xi32>, %cuk: tensor<?xi32>) -> tensor<1x8x?x32xf32> {
  %o = attn.sdpa_varlen %q, %k, %v, %cuq, %cuk
      : (tensor<1x8x?x32xf32>, tensor<1x2x?x32xf32>, tensor<1x2x?x32xf32>, tensor<?xi32>,
         tensor<?xi32>) -> tensor<1x8x?x32xf32>
  return %o : tensor<1x8x?x32xf32>
}

func.func @features(%q: tensor<1x8x?x32xf32>, %k: tensor<1x2x?x32xf32>, %v: tensor<1x2x?x32xf32>,
                    %cuq: tensor<?xi32>, %cuk: tensor<?xi32>, %slopes: tensor<8xf32>,
                    %sinks: tensor<8xf32>) -> tensor<1x8x?x32xf32> {
  %o = attn.sdpa_varlen %q, %k, %v, %cuq, %cuk alibi(%slopes) sinks(%sinks)
      {causal = #attn.causal<bottom_right>, window = #attn.window<left = 16>, softcap = 20.0 : f32}
      : (tensor<1x8x?x32xf32>, tensor<1x2x?x32xf32>, tensor<1x2x?x32xf32>, tensor<?xi32>,
         tensor<?xi32>, tensor<8xf32>, tensor<8xf32>) -> tensor<1x8x?x32xf32>
  return %o : tensor<1x8x?x32xf32>
}

func.func @int8(%q: tensor<1x8x?x32xf32>, %kq: tensor<1x2x?x32xi8>, %ks: tensor<1x2x?xf32>,
                %vq: tensor<1x2x?x32xi8>, %vs: tensor<1x2x?xf32>, %cuq: tensor<?xi32>,
                %cuk: tensor<?xi32>) -> tensor<1x8x?x32xf32> {
  %k = attn.dequantize %kq, %ks : (tensor<1x2x?x32xi8>, tensor<1x2x?xf32>) -> tensor<1x2x?x32xf32>
  %v = attn.dequantize %vq, %vs : (tensor<1x2x?x32xi8>, tensor<1x2x?xf32>) -> tensor<1x2x?x32xf32>
  %o = attn.sdpa_varlen %q, %k, %v, %cuq, %cuk {causal = #attn.causal<bottom_right>}
      : (tensor<1x8x?x32xf32>, tensor<1x2x?x32xf32>, tensor<1x2x?x32xf32>, tensor<?xi32>,
         tensor<?xi32>) -> tensor<1x8x?x32xf32>
  return %o : tensor<1x8x?x32xf32>
}

// Tokens-first arrays ([1, T, heads, D], flash_attn_varlen_func's layout)
// transposed to the op's operands: each sequence's sdpa takes a transpose
// of its rows of the arrays, which the CPU kernel reads in place.
func.func @tokens_first(%qt: tensor<1x?x8x32xf32>, %kt: tensor<1x?x2x32xf32>,
                        %vt: tensor<1x?x2x32xf32>, %cuq: tensor<?xi32>,
                        %cuk: tensor<?xi32>) -> tensor<1x8x?x32xf32> {
  %c1 = arith.constant 1 : index
  %tq = tensor.dim %qt, %c1 : tensor<1x?x8x32xf32>
  %tk = tensor.dim %kt, %c1 : tensor<1x?x2x32xf32>
  %eq = tensor.empty(%tq) : tensor<1x8x?x32xf32>
  %ek = tensor.empty(%tk) : tensor<1x2x?x32xf32>
  %q = linalg.transpose ins(%qt : tensor<1x?x8x32xf32>) outs(%eq : tensor<1x8x?x32xf32>)
      permutation = [0, 2, 1, 3]
  %k = linalg.transpose ins(%kt : tensor<1x?x2x32xf32>) outs(%ek : tensor<1x2x?x32xf32>)
      permutation = [0, 2, 1, 3]
  %v = linalg.transpose ins(%vt : tensor<1x?x2x32xf32>) outs(%ek : tensor<1x2x?x32xf32>)
      permutation = [0, 2, 1, 3]
  %o = attn.sdpa_varlen %q, %k, %v, %cuq, %cuk {causal = #attn.causal<bottom_right>}
      : (tensor<1x8x?x32xf32>, tensor<1x2x?x32xf32>, tensor<1x2x?x32xf32>, tensor<?xi32>,
         tensor<?xi32>) -> tensor<1x8x?x32xf32>
  return %o : tensor<1x8x?x32xf32>
}
