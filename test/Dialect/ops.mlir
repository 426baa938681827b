// Round trip of every attn op, in the pretty and the generic form.
// RUN: attn-opt %s | attn-opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | attn-opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @project
// CHECK: attn.project %{{.*}}, %{{.*}}, %{{.*}} : (tensor<2x10x64xf32>, tensor<32x64xf32>, tensor<32xf32>) -> tensor<2x10x32xf32>
// CHECK: attn.project %{{.*}}, %{{.*}} {layout = #attn.layout<in_out>} : (tensor<2x10x64xf32>, tensor<64x32xf32>) -> tensor<2x10x32xf32>
// GENERIC: "attn.project"(%{{.*}}, %{{.*}}, %{{.*}}) <{layout = #attn.layout<out_in>}>
func.func @project(%x: tensor<2x10x64xf32>, %w: tensor<32x64xf32>, %b: tensor<32xf32>,
                   %wt: tensor<64x32xf32>) -> (tensor<2x10x32xf32>, tensor<2x10x32xf32>) {
  %0 = attn.project %x, %w, %b : (tensor<2x10x64xf32>, tensor<32x64xf32>, tensor<32xf32>) -> tensor<2x10x32xf32>
  %1 = attn.project %x, %wt {layout = #attn.layout<in_out>} : (tensor<2x10x64xf32>, tensor<64x32xf32>) -> tensor<2x10x32xf32>
  return %0, %1 : tensor<2x10x32xf32>, tensor<2x10x32xf32>
}

// CHECK-LABEL: func.func @heads
// CHECK: attn.split_heads %{{.*}} {num_heads = 8 : i64} : (tensor<?x?x64xbf16>) -> tensor<?x8x?x8xbf16>
// CHECK: attn.merge_heads %{{.*}} : (tensor<?x8x?x8xbf16>) -> tensor<?x?x64xbf16>
// GENERIC: "attn.split_heads"(%{{.*}}) <{num_heads = 8 : i64}> : (tensor<?x?x64xbf16>) -> tensor<?x8x?x8xbf16>
func.func @heads(%x: tensor<?x?x64xbf16>) -> tensor<?x?x64xbf16> {
  %0 = attn.split_heads %x {num_heads = 8 : i64} : (tensor<?x?x64xbf16>) -> tensor<?x8x?x8xbf16>
  %1 = attn.merge_heads %0 : (tensor<?x8x?x8xbf16>) -> tensor<?x?x64xbf16>
  return %1 : tensor<?x?x64xbf16>
}

// CHECK-LABEL: func.func @chain
// CHECK: %[[S:.*]] = attn.scores %{{.*}}, %{{.*}} : (tensor<1x12x128x64xf32>, tensor<1x12x128x64xf32>) -> tensor<1x12x128x128xf32>
// CHECK: %[[T:.*]] = attn.scale %[[S]] {scale = 1.250000e-01 : f32} : tensor<1x12x128x128xf32>
// CHECK: %[[U:.*]] = attn.mask %[[T]] {causal = #attn.causal<top_left>} : tensor<1x12x128x128xf32>
// CHECK: %[[U2:.*]] = attn.mask %[[U]], %{{.*}} {causal = #attn.causal<bottom_right>} : tensor<1x12x128x128xf32>, tensor<1x1x128xi1>
// CHECK: %[[U3:.*]] = attn.mask %[[U2]], %{{.*}} : tensor<1x12x128x128xf32>, tensor<128x128xf32>
// CHECK: %[[P:.*]] = attn.softmax %[[U3]] : tensor<1x12x128x128xf32>
// CHECK: %[[D:.*]] = attn.dropout %[[P]] {rate = 1.000000e-01 : f32, seed = 42 : i64} : tensor<1x12x128x128xf32>
// CHECK: attn.weighted_sum %[[D]], %{{.*}} : (tensor<1x12x128x128xf32>, tensor<1x12x128x64xf32>) -> tensor<1x12x128x64xf32>
// GENERIC: "attn.mask"(%{{.*}}) <{causal = #attn.causal<top_left>, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0>}> : (tensor<1x12x128x128xf32>) -> tensor<1x12x128x128xf32>
// GENERIC: "attn.dropout"(%{{.*}}) <{rate = 1.000000e-01 : f32, seed = 42 : i64}>
func.func @chain(%q: tensor<1x12x128x64xf32>, %k: tensor<1x12x128x64xf32>, %v: tensor<1x12x128x64xf32>,
                 %keep: tensor<1x1x128xi1>, %bias: tensor<128x128xf32>) -> tensor<1x12x128x64xf32> {
  %s = attn.scores %q, %k : (tensor<1x12x128x64xf32>, tensor<1x12x128x64xf32>) -> tensor<1x12x128x128xf32>
  %t = attn.scale %s {scale = 0.125 : f32} : tensor<1x12x128x128xf32>
  %u = attn.mask %t {causal = #attn.causal<top_left>} : tensor<1x12x128x128xf32>
  %u2 = attn.mask %u, %keep {causal = #attn.causal<bottom_right>} : tensor<1x12x128x128xf32>, tensor<1x1x128xi1>
  %u3 = attn.mask %u2, %bias : tensor<1x12x128x128xf32>, tensor<128x128xf32>
  %p = attn.softmax %u3 : tensor<1x12x128x128xf32>
  %d = attn.dropout %p {rate = 0.1 : f32, seed = 42 : i64} : tensor<1x12x128x128xf32>
  %r = attn.weighted_sum %d, %v : (tensor<1x12x128x128xf32>, tensor<1x12x128x64xf32>) -> tensor<1x12x128x64xf32>
  return %r : tensor<1x12x128x64xf32>
}

// CHECK-LABEL: func.func @sdpa
// CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} {causal = #attn.causal<top_left>} : (tensor<1x12x1024x64xf32>, tensor<1x12x1024x64xf32>, tensor<1x12x1024x64xf32>) -> tensor<1x12x1024x64xf32>
// CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {scale = 1.250000e-01 : f32} : (tensor<2x4x31x64xf32>, tensor<2x4x129x64xf32>, tensor<2x4x129x64xf32>, tensor<2x1x1x129xi1>) -> tensor<2x4x31x64xf32>
// CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} {causal = #attn.causal<bottom_right>, dropout_rate = 2.500000e-01 : f32, dropout_seed = 3 : i64} : (tensor<?x8x?x64xf16>, tensor<?x2x?x64xf16>, tensor<?x2x?x32xf16>) -> tensor<?x8x?x32xf16>
// GENERIC: "attn.sdpa"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0, 0, 0>, scale = 1.250000e-01 : f32}>
func.func @sdpa(%q: tensor<1x12x1024x64xf32>, %q2: tensor<2x4x31x64xf32>, %k2: tensor<2x4x129x64xf32>,
                %keep: tensor<2x1x1x129xi1>, %qd: tensor<?x8x?x64xf16>, %kd: tensor<?x2x?x64xf16>,
                %vd: tensor<?x2x?x32xf16>) -> (tensor<1x12x1024x64xf32>, tensor<2x4x31x64xf32>, tensor<?x8x?x32xf16>) {
  %o = attn.sdpa %q, %q, %q {causal = #attn.causal<top_left>}
      : (tensor<1x12x1024x64xf32>, tensor<1x12x1024x64xf32>, tensor<1x12x1024x64xf32>)
        -> tensor<1x12x1024x64xf32>
  %o2 = attn.sdpa %q2, %k2, %k2, %keep {scale = 0.125 : f32}
      : (tensor<2x4x31x64xf32>, tensor<2x4x129x64xf32>, tensor<2x4x129x64xf32>, tensor<2x1x1x129xi1>)
        -> tensor<2x4x31x64xf32>
  %o3 = attn.sdpa %qd, %kd, %vd {causal = #attn.causal<bottom_right>, dropout_rate = 0.25 : f32, dropout_seed = 3 : i64}
      : (tensor<?x8x?x64xf16>, tensor<?x2x?x64xf16>, tensor<?x2x?x32xf16>) -> tensor<?x8x?x32xf16>
  return %o, %o2, %o3 : tensor<1x12x1024x64xf32>, tensor<2x4x31x64xf32>, tensor<?x8x?x32xf16>
}

// CHECK-LABEL: func.func @mha
// CHECK: attn.mha %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} qkv_bias(%{{.*}}, %{{.*}}, %{{.*}}) out_bias(%{{.*}}) mask(%{{.*}}) {causal = #attn.causal<top_left>, num_heads = 8 : i64, num_kv_heads = 2 : i64}
// CHECK: attn.mha %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {layout = #attn.layout<in_out>, num_heads = 4 : i64} : (tensor<2x5x32xf32>, tensor<2x9x16xf32>, tensor<32x32xf32>, tensor<16x32xf32>, tensor<16x32xf32>, tensor<32x32xf32>) -> tensor<2x5x32xf32>
// GENERIC: "attn.mha"({{.*}}) <{causal = #attn.causal<top_left>, layout = #attn.layout<out_in>, num_heads = 8 : i64, num_kv_heads = 2 : i64, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0>}>
// GENERIC: "attn.mha"({{.*}}) <{layout = #attn.layout<in_out>, num_heads = 4 : i64, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>}>
func.func @mha(%x: tensor<2x10x64xf32>, %wq: tensor<64x64xf32>, %wkv: tensor<16x64xf32>,
               %bq: tensor<64xf32>, %bkv: tensor<16xf32>, %m: tensor<10x10xi1>,
               %xq: tensor<2x5x32xf32>, %xkv: tensor<2x9x16xf32>, %wq2: tensor<32x32xf32>,
               %wkv2: tensor<16x32xf32>) -> (tensor<2x10x64xf32>, tensor<2x5x32xf32>) {
  %0 = attn.mha %x, %x, %wq, %wkv, %wkv, %wq qkv_bias(%bq, %bkv, %bkv) out_bias(%bq) mask(%m)
      {num_heads = 8 : i64, num_kv_heads = 2 : i64, causal = #attn.causal<top_left>}
      : (tensor<2x10x64xf32>, tensor<2x10x64xf32>, tensor<64x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>,
         tensor<64x64xf32>, tensor<64xf32>, tensor<16xf32>, tensor<16xf32>, tensor<64xf32>, tensor<10x10xi1>)
        -> tensor<2x10x64xf32>
  // Cross-attention with [In,Out] weights: kv width 16 -> 4 heads of 8.
  %1 = attn.mha %xq, %xkv, %wq2, %wkv2, %wkv2, %wq2 {num_heads = 4 : i64, layout = #attn.layout<in_out>}
      : (tensor<2x5x32xf32>, tensor<2x9x16xf32>, tensor<32x32xf32>, tensor<16x32xf32>, tensor<16x32xf32>,
         tensor<32x32xf32>) -> tensor<2x5x32xf32>
  return %0, %1 : tensor<2x10x64xf32>, tensor<2x5x32xf32>
}

// Dialect-prefixed discardable attributes are kept (only unprefixed names an
// op does not define are errors).
// CHECK-LABEL: func.func @prefixed_attribute
// CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} {causal = #attn.causal<top_left>, mytool.tag = 3 : i64}
func.func @prefixed_attribute(%q: tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32> {
  %o = attn.sdpa %q, %q, %q {causal = #attn.causal<top_left>, mytool.tag = 3 : i64} : (tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32>
  return %o : tensor<1x1x4x8xf32>
}

// Wave-2 features: softcap, window, ALiBi, key lengths, RoPE.
// CHECK-LABEL: func.func @features
// CHECK: attn.softcap %{{.*}} {cap = 5.000000e+01 : f32} : tensor<2x8x4x256xf32>
// CHECK: attn.mask %{{.*}} alibi(%{{.*}} : tensor<8xf32>) key_lengths(%{{.*}} : tensor<2xi32>) {causal = #attn.causal<bottom_right>, window = #attn.window<left = 127>} : tensor<2x8x4x256xf32>
// CHECK: attn.mask %{{.*}}, %{{.*}} key_lengths(%{{.*}} : tensor<2xi64>) {window = #attn.window<left = 3, right = 5, align = top_left>} : tensor<2x8x4x256xf32>, tensor<2x1x1x256xi1>
// CHECK: attn.mask %{{.*}} alibi(%{{.*}} : tensor<2x8xf32>) {window = #attn.window<>} : tensor<2x8x4x256xf32>
// CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} alibi(%{{.*}}) key_lengths(%{{.*}}) {causal = #attn.causal<bottom_right>, softcap = 3.000000e+01 : f32, window = #attn.window<left = 127>} : (tensor<2x8x4x64xf32>, tensor<2x2x256x64xf32>, tensor<2x2x256x64xf32>, tensor<8xf32>, tensor<2xi32>) -> tensor<2x8x4x64xf32>
// CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} key_lengths(%{{.*}}) {window = #attn.window<right = 2>} : (tensor<2x8x4x64xf32>, tensor<2x2x256x64xf32>, tensor<2x2x256x64xf32>, tensor<2x1x1x256xi1>, tensor<2xi32>) -> tensor<2x8x4x64xf32>
// CHECK: attn.rope %{{.*}}, %{{.*}}, %{{.*}} : tensor<2x8x4x64xf32>, tensor<4x16xf32>, tensor<4x16xf32>
// CHECK: attn.rope %{{.*}}, %{{.*}}, %{{.*}} {style = #attn.rope<interleaved>} : tensor<2x8x4x64xf32>, tensor<2x4x32xf32>, tensor<2x4x32xf32>
// GENERIC: "attn.sdpa"({{.*}}) <{causal = #attn.causal<bottom_right>, operandSegmentSizes = array<i32: 1, 1, 1, 0, 1, 1, 0, 0, 0>, softcap = 3.000000e+01 : f32, window = #attn.window<left = 127>}>
func.func @features(%q: tensor<2x8x4x64xf32>, %k: tensor<2x2x256x64xf32>, %v: tensor<2x2x256x64xf32>,
                    %slopes: tensor<8xf32>, %slopes2: tensor<2x8xf32>, %len: tensor<2xi32>,
                    %len64: tensor<2xi64>, %keep: tensor<2x1x1x256xi1>, %s: tensor<2x8x4x256xf32>,
                    %cos: tensor<4x16xf32>, %sin: tensor<4x16xf32>,
                    %cosb: tensor<2x4x32xf32>, %sinb: tensor<2x4x32xf32>) {
  %0 = attn.softcap %s {cap = 50.0 : f32} : tensor<2x8x4x256xf32>
  %1 = attn.mask %0 alibi(%slopes : tensor<8xf32>) key_lengths(%len : tensor<2xi32>)
      {causal = #attn.causal<bottom_right>, window = #attn.window<left = 127>} : tensor<2x8x4x256xf32>
  %2 = attn.mask %1, %keep key_lengths(%len64 : tensor<2xi64>)
      {window = #attn.window<right = 5, left = 3, align = top_left>} : tensor<2x8x4x256xf32>, tensor<2x1x1x256xi1>
  %3 = attn.mask %2 alibi(%slopes2 : tensor<2x8xf32>) {window = #attn.window<>} : tensor<2x8x4x256xf32>
  %4 = attn.sdpa %q, %k, %v alibi(%slopes) key_lengths(%len)
      {causal = #attn.causal<bottom_right>, window = #attn.window<left = 127>, softcap = 30.0 : f32}
      : (tensor<2x8x4x64xf32>, tensor<2x2x256x64xf32>, tensor<2x2x256x64xf32>, tensor<8xf32>, tensor<2xi32>)
        -> tensor<2x8x4x64xf32>
  %5 = attn.sdpa %q, %k, %v, %keep key_lengths(%len) {window = #attn.window<right = 2>}
      : (tensor<2x8x4x64xf32>, tensor<2x2x256x64xf32>, tensor<2x2x256x64xf32>, tensor<2x1x1x256xi1>, tensor<2xi32>)
        -> tensor<2x8x4x64xf32>
  %6 = attn.rope %q, %cos, %sin : tensor<2x8x4x64xf32>, tensor<4x16xf32>, tensor<4x16xf32>
  %7 = attn.rope %q, %cosb, %sinb {style = #attn.rope<interleaved>}
      : tensor<2x8x4x64xf32>, tensor<2x4x32xf32>, tensor<2x4x32xf32>
  return
}

// CHECK-LABEL: func.func @mha_features
// CHECK: attn.mha %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} alibi(%{{.*}}) key_lengths(%{{.*}}) rope(%{{.*}}, %{{.*}}) {causal = #attn.causal<top_left>, num_heads = 8 : i64, num_kv_heads = 2 : i64, rope_style = #attn.rope<interleaved>, softcap = 2.000000e+01 : f32, window = #attn.window<left = 4>}
func.func @mha_features(%x: tensor<2x10x64xf32>, %wq: tensor<64x64xf32>, %wkv: tensor<16x64xf32>,
                        %slopes: tensor<8xf32>, %len: tensor<2xi32>, %cos: tensor<10x4xf32>,
                        %sin: tensor<10x4xf32>) -> tensor<2x10x64xf32> {
  %0 = attn.mha %x, %x, %wq, %wkv, %wkv, %wq alibi(%slopes) key_lengths(%len) rope(%cos, %sin)
      {num_heads = 8 : i64, num_kv_heads = 2 : i64, causal = #attn.causal<top_left>,
       softcap = 20.0 : f32, window = #attn.window<left = 4>, rope_style = #attn.rope<interleaved>}
      : (tensor<2x10x64xf32>, tensor<2x10x64xf32>, tensor<64x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>,
         tensor<64x64xf32>, tensor<8xf32>, tensor<2xi32>, tensor<10x4xf32>, tensor<10x4xf32>)
        -> tensor<2x10x64xf32>
  return %0 : tensor<2x10x64xf32>
}

// CHECK-LABEL: func.func @sdpa_partial
// CHECK: attn.sdpa_partial %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {causal = #attn.causal<top_left>, scale = 1.250000e-01 : f32} : (tensor<1x4x32x64xf16>, tensor<1x2x64x64xf16>, tensor<1x2x64x32xf16>, tensor<32x64xi1>) -> (tensor<1x4x32x32xf32>, tensor<1x4x32xf32>)
// CHECK: attn.logsumexp %{{.*}} : tensor<1x4x32x64xf16> -> tensor<1x4x32xf32>
// CHECK: attn.merge_partial %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<1x4x32x32xf32>, tensor<1x4x32xf32>
// GENERIC: "attn.sdpa_partial"
func.func @sdpa_partial(%q: tensor<1x4x32x64xf16>, %k: tensor<1x2x64x64xf16>,
                        %v: tensor<1x2x64x32xf16>, %m: tensor<32x64xi1>, %s: tensor<1x4x32x64xf16>)
    -> (tensor<1x4x32x32xf32>, tensor<1x4x32xf32>, tensor<1x4x32xf32>) {
  %o, %l = attn.sdpa_partial %q, %k, %v, %m {causal = #attn.causal<top_left>, scale = 0.125 : f32}
      : (tensor<1x4x32x64xf16>, tensor<1x2x64x64xf16>, tensor<1x2x64x32xf16>, tensor<32x64xi1>)
        -> (tensor<1x4x32x32xf32>, tensor<1x4x32xf32>)
  %r = attn.logsumexp %s : tensor<1x4x32x64xf16> -> tensor<1x4x32xf32>
  %o2, %l2 = attn.merge_partial %o, %l, %o, %r : tensor<1x4x32x32xf32>, tensor<1x4x32xf32>
  return %o2, %l2, %r : tensor<1x4x32x32xf32>, tensor<1x4x32xf32>, tensor<1x4x32xf32>
}

// Attention sinks on sdpa_partial and logsumexp (the log of softmax's
// denominator with the same sinks).
// CHECK-LABEL: func.func @partial_sinks
// CHECK: attn.sdpa_partial %{{.*}}, %{{.*}}, %{{.*}} sinks(%[[S:.*]]) diagonal(%{{.*}}) {causal = #attn.causal<top_left>} : (tensor<1x4x8x32xf32>, tensor<1x2x16x32xf32>, tensor<1x2x16x32xf32>, tensor<4xf32>, index)
// CHECK: attn.logsumexp %{{.*}} sinks(%[[S]] : tensor<4xf32>) : tensor<1x4x8x16xf32> -> tensor<1x4x8xf32>
// GENERIC: "attn.sdpa_partial"(%{{.*}}) <{causal = #attn.causal<top_left>, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 1, 1, 0, 0>}>
// GENERIC: "attn.logsumexp"(%{{.*}}, %{{.*}}) : (tensor<1x4x8x16xf32>, tensor<4xf32>) -> tensor<1x4x8xf32>
func.func @partial_sinks(%q: tensor<1x4x8x32xf32>, %k: tensor<1x2x16x32xf32>, %s: tensor<4xf32>,
                         %x: tensor<1x4x8x16xf32>, %d: index)
    -> (tensor<1x4x8x32xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>) {
  %o, %l = attn.sdpa_partial %q, %k, %k sinks(%s) diagonal(%d) {causal = #attn.causal<top_left>}
      : (tensor<1x4x8x32xf32>, tensor<1x2x16x32xf32>, tensor<1x2x16x32xf32>, tensor<4xf32>, index)
        -> (tensor<1x4x8x32xf32>, tensor<1x4x8xf32>)
  %r = attn.logsumexp %x sinks(%s : tensor<4xf32>) : tensor<1x4x8x16xf32> -> tensor<1x4x8xf32>
  return %o, %l, %r : tensor<1x4x8x32xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>
}

// CHECK-LABEL: func.func @ring_attribute
// CHECK: attn.ring = #attn.ring<striped>
// CHECK: attn.ring = #attn.ring<zigzag>
// CHECK: attn.ring = #attn.ring<contiguous>
func.func @ring_attribute(%q: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  %a = attn.sdpa %q, %q, %q {attn.ring = #attn.ring<striped>}
      : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  %b = attn.sdpa %a, %a, %a {attn.ring = #attn.ring<zigzag>}
      : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  %c = attn.sdpa %b, %b, %b {attn.ring = #attn.ring<contiguous>}
      : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  return %c : tensor<1x2x8x16xf32>
}

// A run-time diagonal shift (top-left causal): attn.mask and
// attn.sdpa_partial print it as diagonal(%d).
// CHECK-LABEL: func.func @diagonal_shift
// CHECK: attn.mask %{{.*}} diagonal(%[[D:.*]]) {causal = #attn.causal<top_left>} : tensor<1x4x8x16xf32>
// CHECK: attn.sdpa_partial %{{.*}}, %{{.*}}, %{{.*}} diagonal(%[[D]]) {causal = #attn.causal<top_left>} : (tensor<1x4x8x32xf32>, tensor<1x4x16x32xf32>, tensor<1x4x16x32xf32>, index) -> (tensor<1x4x8x32xf32>, tensor<1x4x8xf32>)
// GENERIC: "attn.mask"(%{{.*}}, %{{.*}}) <{causal = #attn.causal<top_left>, operandSegmentSizes = array<i32: 1, 0, 0, 0, 1>}>
// GENERIC: "attn.sdpa_partial"(%{{.*}}) <{causal = #attn.causal<top_left>, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 1, 0, 0>}>
func.func @diagonal_shift(%s: tensor<1x4x8x16xf32>, %q: tensor<1x4x8x32xf32>,
                          %k: tensor<1x4x16x32xf32>, %d: index) {
  %m = attn.mask %s diagonal(%d) {causal = #attn.causal<top_left>} : tensor<1x4x8x16xf32>
  %o, %l = attn.sdpa_partial %q, %k, %k diagonal(%d) {causal = #attn.causal<top_left>}
      : (tensor<1x4x8x32xf32>, tensor<1x4x16x32xf32>, tensor<1x4x16x32xf32>, index)
        -> (tensor<1x4x8x32xf32>, tensor<1x4x8xf32>)
  return
}
