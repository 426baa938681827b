// Kernels for the ptxas test: every feature of the GPU schedule.
func.func @dynamic_bottom_right(%q: tensor<?x4x?x64xf32>, %k: tensor<?x2x?x64xf32>,
                                %v: tensor<?x2x?x64xf32>) -> tensor<?x4x?x64xf32> {
  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<bottom_right>}
      : (tensor<?x4x?x64xf32>, tensor<?x2x?x64xf32>, tensor<?x2x?x64xf32>) -> tensor<?x4x?x64xf32>
  return %o : tensor<?x4x?x64xf32>
}
func.func @static_noncausal_d128(%q: tensor<2x8x100x128xf32>, %k: tensor<2x8x77x128xf32>,
                                 %v: tensor<2x8x77x128xf32>) -> tensor<2x8x100x128xf32> {
  %o = attn.sdpa %q, %k, %v {scale = 0.1 : f32}
      : (tensor<2x8x100x128xf32>, tensor<2x8x77x128xf32>, tensor<2x8x77x128xf32>) -> tensor<2x8x100x128xf32>
  return %o : tensor<2x8x100x128xf32>
}
func.func @keep_mask(%q: tensor<2x4x31x32xf32>, %k: tensor<2x4x129x32xf32>,
                     %v: tensor<2x4x129x32xf32>, %m: tensor<2x1x1x129xi1>) -> tensor<2x4x31x32xf32> {
  %o = attn.sdpa %q, %k, %v, %m {causal = #attn.causal<top_left>}
      : (tensor<2x4x31x32xf32>, tensor<2x4x129x32xf32>, tensor<2x4x129x32xf32>, tensor<2x1x1x129xi1>) -> tensor<2x4x31x32xf32>
  return %o : tensor<2x4x31x32xf32>
}
func.func @additive_mask_f16(%q: tensor<1x2x?x16xf16>, %k: tensor<1x2x?x16xf16>,
                             %v: tensor<1x2x?x24xf16>, %m: tensor<?x?xf16>) -> tensor<1x2x?x24xf16> {
  %o = attn.sdpa %q, %k, %v, %m
      : (tensor<1x2x?x16xf16>, tensor<1x2x?x16xf16>, tensor<1x2x?x24xf16>, tensor<?x?xf16>) -> tensor<1x2x?x24xf16>
  return %o : tensor<1x2x?x24xf16>
}

// The attention variants: softcap, ALiBi [B,H], a sliding window and key
// lengths (bounding the K/V tile loop), GQA, dynamic lengths.
func.func @features(%q: tensor<2x8x?x64xf32>, %k: tensor<2x2x?x64xf32>, %v: tensor<2x2x?x64xf32>,
                    %slopes: tensor<2x8xf32>, %len: tensor<2xi32>) -> tensor<2x8x?x64xf32> {
  %o = attn.sdpa %q, %k, %v alibi(%slopes) key_lengths(%len)
      {causal = #attn.causal<bottom_right>, window = #attn.window<left = 100>, softcap = 30.0 : f32}
      : (tensor<2x8x?x64xf32>, tensor<2x2x?x64xf32>, tensor<2x2x?x64xf32>, tensor<2x8xf32>, tensor<2xi32>)
        -> tensor<2x8x?x64xf32>
  return %o : tensor<2x8x?x64xf32>
}

// Score and mask functions (CUDA-core kernel): a relative bias from a
// captured table, a sliding window with a prefix.
func.func @functions(%q: tensor<1x4x?x64xf16>, %k: tensor<1x4x?x64xf16>, %v: tensor<1x4x?x64xf16>,
                     %bias: tensor<4x511xf32>) -> tensor<1x4x?x64xf16> {
  %o = attn.sdpa %q, %k, %v captures(%bias) score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %t: tensor<4x511xf32>):
    %c255 = arith.constant 255 : index
    %d = arith.subi %i, %j : index
    %r = arith.addi %d, %c255 : index
    %x = tensor.extract %t[%h, %r] : tensor<4x511xf32>
    %y = math.tanh %s : f32
    %n = arith.addf %y, %x : f32
    attn.yield %n : f32
  } mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index, %t: tensor<4x511xf32>):
    %c64 = arith.constant 64 : index
    %c4 = arith.constant 4 : index
    %d = arith.subi %i, %j : index
    %causal = arith.cmpi sle, %j, %i : index
    %near = arith.cmpi slt, %d, %c64 : index
    %prefix = arith.cmpi slt, %j, %c4 : index
    %w = arith.andi %causal, %near : i1
    %keep = arith.ori %w, %prefix : i1
    attn.yield %keep : i1
  } : (tensor<1x4x?x64xf16>, tensor<1x4x?x64xf16>, tensor<1x4x?x64xf16>, tensor<4x511xf32>)
      -> tensor<1x4x?x64xf16>
  return %o : tensor<1x4x?x64xf16>
}

// Paged f16 decode, GQA, the caches read in place through the block table
// (the tensor-core kernel's tile loads; paged_decode_f32 below takes the
// CUDA-core kernel's).
func.func @paged_decode_f16(%q: tensor<4x32x1x128xf16>, %kc: tensor<256x16x8x128xf16>,
                            %vc: tensor<256x16x8x128xf16>, %table: tensor<4x64xi32>,
                            %len: tensor<4xi32>) -> tensor<4x32x1x128xf16> {
  %k = attn.gather_pages %kc, %table lengths(%len)
      : (tensor<256x16x8x128xf16>, tensor<4x64xi32>, tensor<4xi32>) -> tensor<4x8x1024x128xf16>
  %v = attn.gather_pages %vc, %table lengths(%len)
      : (tensor<256x16x8x128xf16>, tensor<4x64xi32>, tensor<4xi32>) -> tensor<4x8x1024x128xf16>
  %o = attn.sdpa %q, %k, %v key_lengths(%len) {causal = #attn.causal<bottom_right>}
      : (tensor<4x32x1x128xf16>, tensor<4x8x1024x128xf16>, tensor<4x8x1024x128xf16>, tensor<4xi32>)
        -> tensor<4x32x1x128xf16>
  return %o : tensor<4x32x1x128xf16>
}

// The same in f32: the CUDA-core kernel's loads through the block table.
func.func @paged_decode_f32(%q: tensor<4x32x1x128xf32>, %kc: tensor<256x16x8x128xf32>,
                            %vc: tensor<256x16x8x128xf32>, %table: tensor<4x64xi32>,
                            %len: tensor<4xi32>) -> tensor<4x32x1x128xf32> {
  %k = attn.gather_pages %kc, %table lengths(%len)
      : (tensor<256x16x8x128xf32>, tensor<4x64xi32>, tensor<4xi32>) -> tensor<4x8x1024x128xf32>
  %v = attn.gather_pages %vc, %table lengths(%len)
      : (tensor<256x16x8x128xf32>, tensor<4x64xi32>, tensor<4xi32>) -> tensor<4x8x1024x128xf32>
  %o = attn.sdpa %q, %k, %v key_lengths(%len) {causal = #attn.causal<bottom_right>}
      : (tensor<4x32x1x128xf32>, tensor<4x8x1024x128xf32>, tensor<4x8x1024x128xf32>, tensor<4xi32>)
        -> tensor<4x32x1x128xf32>
  return %o : tensor<4x32x1x128xf32>
}

// A continuous-batching step (attn.sdpa_varlen with a block table): one
// kernel launch a sequence inside the host's loop over them, each on its
// rows of Q and its row of the table (strided: staged through dense host
// buffers) and the caches read in place.
func.func @varlen_paged_f16(%q: tensor<1x32x?x128xf16>, %kc: tensor<256x16x8x128xf16>,
                            %vc: tensor<256x16x8x128xf16>, %cuq: tensor<5xi32>,
                            %cuk: tensor<5xi32>, %table: tensor<4x64xi32>)
    -> tensor<1x32x?x128xf16> {
  %o = attn.sdpa_varlen %q, %kc, %vc, %cuq, %cuk block_table(%table)
      {causal = #attn.causal<bottom_right>}
      : (tensor<1x32x?x128xf16>, tensor<256x16x8x128xf16>, tensor<256x16x8x128xf16>,
         tensor<5xi32>, tensor<5xi32>, tensor<4x64xi32>) -> tensor<1x32x?x128xf16>
  return %o : tensor<1x32x?x128xf16>
}

// fp8 e4m3 K/V with per-tensor scales (dequantized by host code, then the kernel).
func.func @fp8_decode(%q: tensor<2x8x1x64xf32>, %kq: tensor<2x2x77x64xf8E4M3FN>, %ks: tensor<f32>,
                  %vq: tensor<2x2x77x64xf8E4M3FN>, %vs: tensor<f32>,
                  %len: tensor<2xi32>) -> tensor<2x8x1x64xf32> {
  %k = attn.dequantize %kq, %ks : (tensor<2x2x77x64xf8E4M3FN>, tensor<f32>) -> tensor<2x2x77x64xf32>
  %v = attn.dequantize %vq, %vs : (tensor<2x2x77x64xf8E4M3FN>, tensor<f32>) -> tensor<2x2x77x64xf32>
  %o = attn.sdpa %q, %k, %v key_lengths(%len) {causal = #attn.causal<bottom_right>}
      : (tensor<2x8x1x64xf32>, tensor<2x2x77x64xf32>, tensor<2x2x77x64xf32>, tensor<2xi32>)
        -> tensor<2x8x1x64xf32>
  return %o : tensor<2x8x1x64xf32>
}
