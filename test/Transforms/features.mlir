// attn-decompose / attn-fuse on the wave-2 features: softcap, window, ALiBi,
// key lengths, RoPE.
// RUN: attn-opt %s -attn-decompose -split-input-file | FileCheck %s --check-prefix=DEC
// RUN: attn-opt %s -attn-decompose -attn-fuse -split-input-file | FileCheck %s --check-prefix=ROUND

// DEC-LABEL: func.func @sdpa_all
// DEC: %[[S:.*]] = attn.scores
// DEC: %[[T:.*]] = attn.scale %[[S]] {scale = 1.250000e-01 : f32}
// DEC: %[[C:.*]] = attn.softcap %[[T]] {cap = 3.000000e+01 : f32}
// DEC: %[[M:.*]] = attn.mask %[[C]], %{{.*}} alibi(%{{.*}} : tensor<8xf32>) key_lengths(%{{.*}} : tensor<2xi32>) {causal = #attn.causal<bottom_right>, window = #attn.window<left = 127>}
// DEC: %[[P:.*]] = attn.softmax %[[M]]
// DEC: attn.weighted_sum %[[P]]
// ROUND-LABEL: func.func @sdpa_all
// ROUND: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} alibi(%{{.*}}) key_lengths(%{{.*}}) {causal = #attn.causal<bottom_right>, scale = 1.250000e-01 : f32, softcap = 3.000000e+01 : f32, window = #attn.window<left = 127>}
func.func @sdpa_all(%q: tensor<2x8x4x64xf32>, %k: tensor<2x2x256x64xf32>, %v: tensor<2x2x256x64xf32>,
                    %keep: tensor<2x1x1x256xi1>, %slopes: tensor<8xf32>, %len: tensor<2xi32>)
    -> tensor<2x8x4x64xf32> {
  %o = attn.sdpa %q, %k, %v, %keep alibi(%slopes) key_lengths(%len)
      {causal = #attn.causal<bottom_right>, window = #attn.window<left = 127>, softcap = 30.0 : f32}
      : (tensor<2x8x4x64xf32>, tensor<2x2x256x64xf32>, tensor<2x2x256x64xf32>, tensor<2x1x1x256xi1>,
         tensor<8xf32>, tensor<2xi32>) -> tensor<2x8x4x64xf32>
  return %o : tensor<2x8x4x64xf32>
}

// -----

// An unbounded window is no window: no attn.mask at all.
// DEC-LABEL: func.func @sdpa_unbounded_window
// DEC-NOT: attn.mask
// DEC: attn.softmax
func.func @sdpa_unbounded_window(%q: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  %o = attn.sdpa %q, %q, %q {window = #attn.window<>}
      : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}

// -----

// mha: RoPE on the split Q and K heads (not V), features forwarded to sdpa.
// DEC-LABEL: func.func @mha_rope
// DEC: %[[Q:.*]] = attn.split_heads %{{.*}} {num_heads = 4 : i64}
// DEC: %[[K:.*]] = attn.split_heads %{{.*}} {num_heads = 2 : i64}
// DEC: %[[V:.*]] = attn.split_heads %{{.*}} {num_heads = 2 : i64}
// DEC: %[[RQ:.*]] = attn.rope %[[Q]], %{{.*}}, %{{.*}} {style = #attn.rope<interleaved>}
// DEC: %[[RK:.*]] = attn.rope %[[K]], %{{.*}}, %{{.*}} {style = #attn.rope<interleaved>}
// DEC: attn.softcap %{{.*}} {cap = 2.000000e+01 : f32}
// DEC: attn.mask %{{.*}} alibi(%{{.*}} : tensor<4xf32>) key_lengths(%{{.*}} : tensor<2xi32>) {causal = #attn.causal<top_left>, window = #attn.window<left = 3>}
// DEC: attn.weighted_sum %{{.*}}, %[[V]]
// ROUND-LABEL: func.func @mha_rope
// ROUND: attn.rope
// ROUND: attn.rope
// ROUND: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} alibi(%{{.*}}) key_lengths(%{{.*}}) {causal = #attn.causal<top_left>, scale = 0.353553385 : f32, softcap = 2.000000e+01 : f32, window = #attn.window<left = 3>}
func.func @mha_rope(%x: tensor<2x10x32xf32>, %wq: tensor<32x32xf32>, %wkv: tensor<16x32xf32>,
                    %slopes: tensor<4xf32>, %len: tensor<2xi32>, %cos: tensor<10x4xf32>,
                    %sin: tensor<10x4xf32>) -> tensor<2x10x32xf32> {
  %0 = attn.mha %x, %x, %wq, %wkv, %wkv, %wq alibi(%slopes) key_lengths(%len) rope(%cos, %sin)
      {num_heads = 4 : i64, num_kv_heads = 2 : i64, causal = #attn.causal<top_left>,
       softcap = 20.0 : f32, window = #attn.window<left = 3>, rope_style = #attn.rope<interleaved>}
      : (tensor<2x10x32xf32>, tensor<2x10x32xf32>, tensor<32x32xf32>, tensor<16x32xf32>, tensor<16x32xf32>,
         tensor<32x32xf32>, tensor<4xf32>, tensor<2xi32>, tensor<10x4xf32>, tensor<10x4xf32>)
        -> tensor<2x10x32xf32>
  return %0 : tensor<2x10x32xf32>
}
