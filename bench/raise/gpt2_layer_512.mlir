#bias = affine_map<(i, j) -> (j)>
#id2 = affine_map<(i, j) -> (i, j)>
#id3 = affine_map<(h, i, j) -> (h, i, j)>
#row3 = affine_map<(h, i, j) -> (h, i)>
#tri3 = affine_map<(h, i, j) -> (i, j)>
func.func @gpt2_layer(%x: tensor<512x768xf32>, %wqkv: tensor<768x2304xf32>, %bqkv: tensor<2304xf32>,
                      %wo: tensor<768x768xf32>, %bo: tensor<768xf32>) -> tensor<512x768xf32> {
  %zero = arith.constant 0.0 : f32
  %min = arith.constant -3.40282347E+38 : f32
  %scale = arith.constant 0.125 : f32
  %e3 = tensor.empty() : tensor<512x2304xf32>
  %z3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<512x2304xf32>) -> tensor<512x2304xf32>
  %mm = linalg.matmul ins(%x, %wqkv : tensor<512x768xf32>, tensor<768x2304xf32>) outs(%z3 : tensor<512x2304xf32>) -> tensor<512x2304xf32>
  %qkv = linalg.generic {indexing_maps = [#id2, #bias, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%mm, %bqkv : tensor<512x2304xf32>, tensor<2304xf32>) outs(%e3 : tensor<512x2304xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %y = arith.addf %a, %b : f32
    linalg.yield %y : f32
  } -> tensor<512x2304xf32>
  %q2 = tensor.extract_slice %qkv[0, 0] [512, 768] [1, 1] : tensor<512x2304xf32> to tensor<512x768xf32>
  %k2 = tensor.extract_slice %qkv[0, 768] [512, 768] [1, 1] : tensor<512x2304xf32> to tensor<512x768xf32>
  %v2 = tensor.extract_slice %qkv[0, 1536] [512, 768] [1, 1] : tensor<512x2304xf32> to tensor<512x768xf32>
  %q3 = tensor.expand_shape %q2 [[0], [1, 2]] output_shape [512, 12, 64] : tensor<512x768xf32> into tensor<512x12x64xf32>
  %k3 = tensor.expand_shape %k2 [[0], [1, 2]] output_shape [512, 12, 64] : tensor<512x768xf32> into tensor<512x12x64xf32>
  %v3 = tensor.expand_shape %v2 [[0], [1, 2]] output_shape [512, 12, 64] : tensor<512x768xf32> into tensor<512x12x64xf32>
  %eh = tensor.empty() : tensor<12x512x64xf32>
  %qh = linalg.transpose ins(%q3 : tensor<512x12x64xf32>) outs(%eh : tensor<12x512x64xf32>) permutation = [1, 0, 2]
  %vh = linalg.transpose ins(%v3 : tensor<512x12x64xf32>) outs(%eh : tensor<12x512x64xf32>) permutation = [1, 0, 2]
  %ekt = tensor.empty() : tensor<12x64x512xf32>
  %kt = linalg.transpose ins(%k3 : tensor<512x12x64xf32>) outs(%ekt : tensor<12x64x512xf32>) permutation = [1, 2, 0]
  %es = tensor.empty() : tensor<12x512x512xf32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<12x512x512xf32>) -> tensor<12x512x512xf32>
  %s = linalg.batch_matmul ins(%qh, %kt : tensor<12x512x64xf32>, tensor<12x64x512xf32>) outs(%zs : tensor<12x512x512xf32>) -> tensor<12x512x512xf32>
  %x2 = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s : tensor<12x512x512xf32>) outs(%es : tensor<12x512x512xf32>) {
  ^bb0(%a: f32, %o: f32):
    %i = linalg.index 1 : index
    %j = linalg.index 2 : index
    %w = arith.mulf %a, %scale : f32
    %later = arith.cmpi sgt, %j, %i : index
    %y = arith.select %later, %min, %w : f32
    linalg.yield %y : f32
  } -> tensor<12x512x512xf32>
  %er = tensor.empty() : tensor<12x512xf32>
  %m0 = linalg.fill ins(%min : f32) outs(%er : tensor<12x512xf32>) -> tensor<12x512xf32>
  %m = linalg.reduce ins(%x2 : tensor<12x512x512xf32>) outs(%m0 : tensor<12x512xf32>) dimensions = [2]
    (%a: f32, %acc: f32) { %y = arith.maximumf %a, %acc : f32
                           linalg.yield %y : f32 }
  %ex = linalg.generic {indexing_maps = [#id3, #row3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x2, %m : tensor<12x512x512xf32>, tensor<12x512xf32>) outs(%es : tensor<12x512x512xf32>) {
  ^bb0(%a: f32, %mx: f32, %o: f32):
    %w = arith.subf %a, %mx : f32
    %y = math.exp %w : f32
    linalg.yield %y : f32
  } -> tensor<12x512x512xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%er : tensor<12x512xf32>) -> tensor<12x512xf32>
  %sum = linalg.reduce ins(%ex : tensor<12x512x512xf32>) outs(%z1 : tensor<12x512xf32>) dimensions = [2]
    (%a: f32, %acc: f32) { %y = arith.addf %a, %acc : f32
                           linalg.yield %y : f32 }
  %p = linalg.generic {indexing_maps = [#id3, #row3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%ex, %sum : tensor<12x512x512xf32>, tensor<12x512xf32>) outs(%es : tensor<12x512x512xf32>) {
  ^bb0(%a: f32, %r: f32, %o: f32):
    %y = arith.divf %a, %r : f32
    linalg.yield %y : f32
  } -> tensor<12x512x512xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eh : tensor<12x512x64xf32>) -> tensor<12x512x64xf32>
  %oh = linalg.batch_matmul ins(%p, %vh : tensor<12x512x512xf32>, tensor<12x512x64xf32>) outs(%zo : tensor<12x512x64xf32>) -> tensor<12x512x64xf32>
  %et = tensor.empty() : tensor<512x12x64xf32>
  %ot = linalg.transpose ins(%oh : tensor<12x512x64xf32>) outs(%et : tensor<512x12x64xf32>) permutation = [1, 0, 2]
  %o2 = tensor.collapse_shape %ot [[0], [1, 2]] : tensor<512x12x64xf32> into tensor<512x768xf32>
  %ee = tensor.empty() : tensor<512x768xf32>
  %ze = linalg.fill ins(%zero : f32) outs(%ee : tensor<512x768xf32>) -> tensor<512x768xf32>
  %pr = linalg.matmul ins(%o2, %wo : tensor<512x768xf32>, tensor<768x768xf32>) outs(%ze : tensor<512x768xf32>) -> tensor<512x768xf32>
  %out = linalg.generic {indexing_maps = [#id2, #bias, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%pr, %bo, %x : tensor<512x768xf32>, tensor<768xf32>, tensor<512x768xf32>) outs(%ee : tensor<512x768xf32>) {
  ^bb0(%a: f32, %b: f32, %r: f32, %o: f32):
    %u = arith.addf %a, %b : f32
    %y = arith.addf %u, %r : f32
    linalg.yield %y : f32
  } -> tensor<512x768xf32>
  return %out : tensor<512x768xf32>
}
