// GPT-2 small self-attention block: d_model 768, 12 heads of 64, T 1024 (rewritten by bench/cpu_suite.py),
// batch 1, causal, with biases on every projection. Weights are in
// nn.Linear layout (d_out, d_in).
func.func @gpt2_small_attention(
    %x: tensor<1x1024x768xf32>,
    %wq: tensor<768x768xf32>, %wk: tensor<768x768xf32>,
    %wv: tensor<768x768xf32>, %wo: tensor<768x768xf32>,
    %bq: tensor<768xf32>, %bk: tensor<768xf32>,
    %bv: tensor<768xf32>, %bo: tensor<768xf32>) -> tensor<1x1024x768xf32> {
  %y = attn.mha %x, %x, %wq, %wk, %wv, %wo
         qkv_bias(%bq, %bk, %bv) out_bias(%bo)
         {num_heads = 12 : i64, causal = #attn.causal<top_left>}
       : (tensor<1x1024x768xf32>, tensor<1x1024x768xf32>,
          tensor<768x768xf32>, tensor<768x768xf32>, tensor<768x768xf32>, tensor<768x768xf32>,
          tensor<768xf32>, tensor<768xf32>, tensor<768xf32>, tensor<768xf32>)
         -> tensor<1x1024x768xf32>
  return %y : tensor<1x1024x768xf32>
}
