func.func @f(%x: tensor<1x1024x768xf32>, %w: tensor<768x768xf32>, %b: tensor<768xf32>) -> tensor<1x1024x768xf32> {
  %y = attn.project %x, %w, %b : (tensor<1x1024x768xf32>, tensor<768x768xf32>, tensor<768xf32>) -> tensor<1x1024x768xf32>
  return %y : tensor<1x1024x768xf32>
}
