// Cross-attention (a decoder attending to an encoder), nn.MultiheadAttention
// style: queries from a [2, 16, 128] decoder state, keys and values from a
// [2, 40, 96] encoder output (kdim = vdim = 96), 8 heads of 16, biases on
// every projection, and a key-padding keep mask [B, 1, 1, Tk] (true = attend).
func.func @cross_attention(%dec: tensor<2x16x128xf32>, %enc: tensor<2x40x96xf32>,
                           %wq: tensor<128x128xf32>, %wk: tensor<128x96xf32>,
                           %wv: tensor<128x96xf32>, %wo: tensor<128x128xf32>,
                           %bq: tensor<128xf32>, %bk: tensor<128xf32>,
                           %bv: tensor<128xf32>, %bo: tensor<128xf32>,
                           %keep: tensor<2x1x1x40xi1>) -> tensor<2x16x128xf32> {
  %y = attn.mha %dec, %enc, %wq, %wk, %wv, %wo qkv_bias(%bq, %bk, %bv) out_bias(%bo) mask(%keep)
         {num_heads = 8 : i64}
       : (tensor<2x16x128xf32>, tensor<2x40x96xf32>, tensor<128x128xf32>, tensor<128x96xf32>,
          tensor<128x96xf32>, tensor<128x128xf32>, tensor<128xf32>, tensor<128xf32>,
          tensor<128xf32>, tensor<128xf32>, tensor<2x1x1x40xi1>) -> tensor<2x16x128xf32>
  return %y : tensor<2x16x128xf32>
}
