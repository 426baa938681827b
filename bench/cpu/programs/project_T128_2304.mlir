func.func @f(%x: tensor<1x128x768xf32>, %w: tensor<2304x768xf32>, %b: tensor<2304xf32>) -> tensor<1x128x2304xf32> {
  %y = attn.project %x, %w, %b : (tensor<1x128x768xf32>, tensor<2304x768xf32>, tensor<2304xf32>) -> tensor<1x128x2304xf32>
  return %y : tensor<1x128x2304xf32>
}
