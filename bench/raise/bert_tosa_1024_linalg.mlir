#map = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d0, 0, d2)>
#map2 = affine_map<(d0, d1, d2) -> (0, 0, 0)>
#map3 = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#map4 = affine_map<(d0, d1, d2) -> (0, 0, d2)>
module {
  func.func @bert_layer(%arg0: tensor<1x1024x768xf32>, %arg1: tensor<1x1x1024xf32>, %arg2: tensor<1x768x768xf32>, %arg3: tensor<1x768x768xf32>, %arg4: tensor<1x768x768xf32>, %arg5: tensor<1x768x768xf32>, %arg6: tensor<1x1x768xf32>, %arg7: tensor<1x1x768xf32>, %arg8: tensor<1x1x768xf32>, %arg9: tensor<1x1x768xf32>) -> tensor<1x1024x768xf32> {
    %cst = arith.constant dense<0.000000e+00> : tensor<1xf32>
    %cst_0 = arith.constant dense<0> : tensor<1xi8>
    %cst_1 = arith.constant dense<1.000000e+00> : tensor<1x1x1xf32>
    %cst_2 = arith.constant dense<-1.000000e+04> : tensor<1x1x1xf32>
    %cst_3 = arith.constant dense<1.250000e-01> : tensor<1x1x1xf32>
    %0 = tosa.const_shape  {values = dense<[1, 1024, 12, 64]> : tensor<4xindex>} : () -> !tosa.shape<4>
    %1 = tosa.const_shape  {values = dense<[12, 1024, 64]> : tensor<3xindex>} : () -> !tosa.shape<3>
    %2 = tosa.const_shape  {values = dense<[12, 64, 1024]> : tensor<3xindex>} : () -> !tosa.shape<3>
    %3 = tosa.const_shape  {values = dense<[1, 1024, 1024]> : tensor<3xindex>} : () -> !tosa.shape<3>
    %4 = tosa.const_shape  {values = dense<[1, 1024, 768]> : tensor<3xindex>} : () -> !tosa.shape<3>
    %5 = tosa.const_shape  {values = dense<[1, 12, 1024, 64]> : tensor<4xindex>} : () -> !tosa.shape<4>
    %cst_4 = arith.constant 0.000000e+00 : f32
    %6 = tensor.empty() : tensor<1x1024x768xf32>
    %7 = linalg.fill ins(%cst_4 : f32) outs(%6 : tensor<1x1024x768xf32>) -> tensor<1x1024x768xf32>
    %8 = linalg.batch_matmul ins(%arg0, %arg2 : tensor<1x1024x768xf32>, tensor<1x768x768xf32>) outs(%7 : tensor<1x1024x768xf32>) -> tensor<1x1024x768xf32>
    %cst_5 = arith.constant 0.000000e+00 : f32
    %9 = tensor.empty() : tensor<1x1024x768xf32>
    %10 = linalg.fill ins(%cst_5 : f32) outs(%9 : tensor<1x1024x768xf32>) -> tensor<1x1024x768xf32>
    %11 = linalg.batch_matmul ins(%arg0, %arg3 : tensor<1x1024x768xf32>, tensor<1x768x768xf32>) outs(%10 : tensor<1x1024x768xf32>) -> tensor<1x1024x768xf32>
    %cst_6 = arith.constant 0.000000e+00 : f32
    %12 = tensor.empty() : tensor<1x1024x768xf32>
    %13 = linalg.fill ins(%cst_6 : f32) outs(%12 : tensor<1x1024x768xf32>) -> tensor<1x1024x768xf32>
    %14 = linalg.batch_matmul ins(%arg0, %arg4 : tensor<1x1024x768xf32>, tensor<1x768x768xf32>) outs(%13 : tensor<1x1024x768xf32>) -> tensor<1x1024x768xf32>
    %15 = tensor.empty() : tensor<1x1024x768xf32>
    %16 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%8, %arg6 : tensor<1x1024x768xf32>, tensor<1x1x768xf32>) outs(%15 : tensor<1x1024x768xf32>) {
    ^bb0(%in: f32, %in_24: f32, %out: f32):
      %58 = arith.addf %in, %in_24 : f32
      linalg.yield %58 : f32
    } -> tensor<1x1024x768xf32>
    %17 = tensor.empty() : tensor<1x1024x768xf32>
    %18 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%11, %arg7 : tensor<1x1024x768xf32>, tensor<1x1x768xf32>) outs(%17 : tensor<1x1024x768xf32>) {
    ^bb0(%in: f32, %in_24: f32, %out: f32):
      %58 = arith.addf %in, %in_24 : f32
      linalg.yield %58 : f32
    } -> tensor<1x1024x768xf32>
    %19 = tensor.empty() : tensor<1x1024x768xf32>
    %20 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%14, %arg8 : tensor<1x1024x768xf32>, tensor<1x1x768xf32>) outs(%19 : tensor<1x1024x768xf32>) {
    ^bb0(%in: f32, %in_24: f32, %out: f32):
      %58 = arith.addf %in, %in_24 : f32
      linalg.yield %58 : f32
    } -> tensor<1x1024x768xf32>
    %expanded = tensor.expand_shape %16 [[0], [1], [2, 3]] output_shape [1, 1024, 12, 64] : tensor<1x1024x768xf32> into tensor<1x1024x12x64xf32>
    %expanded_7 = tensor.expand_shape %18 [[0], [1], [2, 3]] output_shape [1, 1024, 12, 64] : tensor<1x1024x768xf32> into tensor<1x1024x12x64xf32>
    %expanded_8 = tensor.expand_shape %20 [[0], [1], [2, 3]] output_shape [1, 1024, 12, 64] : tensor<1x1024x768xf32> into tensor<1x1024x12x64xf32>
    %21 = tensor.empty() : tensor<1x12x1024x64xf32>
    %transposed = linalg.transpose ins(%expanded : tensor<1x1024x12x64xf32>) outs(%21 : tensor<1x12x1024x64xf32>) permutation = [0, 2, 1, 3] 
    %22 = tensor.empty() : tensor<1x12x64x1024xf32>
    %transposed_9 = linalg.transpose ins(%expanded_7 : tensor<1x1024x12x64xf32>) outs(%22 : tensor<1x12x64x1024xf32>) permutation = [0, 2, 3, 1] 
    %23 = tensor.empty() : tensor<1x12x1024x64xf32>
    %transposed_10 = linalg.transpose ins(%expanded_8 : tensor<1x1024x12x64xf32>) outs(%23 : tensor<1x12x1024x64xf32>) permutation = [0, 2, 1, 3] 
    %collapsed = tensor.collapse_shape %transposed [[0, 1], [2], [3]] : tensor<1x12x1024x64xf32> into tensor<12x1024x64xf32>
    %collapsed_11 = tensor.collapse_shape %transposed_9 [[0, 1], [2], [3]] : tensor<1x12x64x1024xf32> into tensor<12x64x1024xf32>
    %collapsed_12 = tensor.collapse_shape %transposed_10 [[0, 1], [2], [3]] : tensor<1x12x1024x64xf32> into tensor<12x1024x64xf32>
    %cst_13 = arith.constant 0.000000e+00 : f32
    %24 = tensor.empty() : tensor<12x1024x1024xf32>
    %25 = linalg.fill ins(%cst_13 : f32) outs(%24 : tensor<12x1024x1024xf32>) -> tensor<12x1024x1024xf32>
    %26 = linalg.batch_matmul ins(%collapsed, %collapsed_11 : tensor<12x1024x64xf32>, tensor<12x64x1024xf32>) outs(%25 : tensor<12x1024x1024xf32>) -> tensor<12x1024x1024xf32>
    %27 = tensor.empty() : tensor<12x1024x1024xf32>
    %28 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%26, %cst_3 : tensor<12x1024x1024xf32>, tensor<1x1x1xf32>) outs(%27 : tensor<12x1024x1024xf32>) {
    ^bb0(%in: f32, %in_24: f32, %out: f32):
      %58 = arith.mulf %in, %in_24 : f32
      linalg.yield %58 : f32
    } -> tensor<12x1024x1024xf32>
    %29 = tensor.empty() : tensor<1x1x1024xf32>
    %30 = linalg.generic {indexing_maps = [#map3, #map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%cst_1, %arg1 : tensor<1x1x1xf32>, tensor<1x1x1024xf32>) outs(%29 : tensor<1x1x1024xf32>) {
    ^bb0(%in: f32, %in_24: f32, %out: f32):
      %58 = arith.subf %in, %in_24 : f32
      linalg.yield %58 : f32
    } -> tensor<1x1x1024xf32>
    %31 = tensor.empty() : tensor<1x1x1024xf32>
    %32 = linalg.generic {indexing_maps = [#map, #map3, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%30, %cst_2 : tensor<1x1x1024xf32>, tensor<1x1x1xf32>) outs(%31 : tensor<1x1x1024xf32>) {
    ^bb0(%in: f32, %in_24: f32, %out: f32):
      %58 = arith.mulf %in, %in_24 : f32
      linalg.yield %58 : f32
    } -> tensor<1x1x1024xf32>
    %33 = tensor.empty() : tensor<12x1024x1024xf32>
    %34 = linalg.generic {indexing_maps = [#map, #map4, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%28, %32 : tensor<12x1024x1024xf32>, tensor<1x1x1024xf32>) outs(%33 : tensor<12x1024x1024xf32>) {
    ^bb0(%in: f32, %in_24: f32, %out: f32):
      %58 = arith.addf %in, %in_24 : f32
      linalg.yield %58 : f32
    } -> tensor<12x1024x1024xf32>
    %35 = tensor.empty() : tensor<12x1024xf32>
    %cst_14 = arith.constant -3.40282347E+38 : f32
    %36 = linalg.fill ins(%cst_14 : f32) outs(%35 : tensor<12x1024xf32>) -> tensor<12x1024xf32>
    %reduced = linalg.reduce ins(%34 : tensor<12x1024x1024xf32>) outs(%36 : tensor<12x1024xf32>) dimensions = [2] 
      (%in: f32, %init: f32) {
        %58 = arith.maximumf %in, %init : f32
        linalg.yield %58 : f32
      }
    %expanded_15 = tensor.expand_shape %reduced [[0], [1, 2]] output_shape [12, 1024, 1] : tensor<12x1024xf32> into tensor<12x1024x1xf32>
    %37 = tensor.empty() : tensor<12x1024x1024xf32>
    %38 = linalg.generic {indexing_maps = [#map, #map3, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%34, %expanded_15 : tensor<12x1024x1024xf32>, tensor<12x1024x1xf32>) outs(%37 : tensor<12x1024x1024xf32>) {
    ^bb0(%in: f32, %in_24: f32, %out: f32):
      %58 = arith.subf %in, %in_24 : f32
      linalg.yield %58 : f32
    } -> tensor<12x1024x1024xf32>
    %39 = tensor.empty() : tensor<12x1024x1024xf32>
    %40 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%38 : tensor<12x1024x1024xf32>) outs(%39 : tensor<12x1024x1024xf32>) {
    ^bb0(%in: f32, %out: f32):
      %58 = math.exp %in : f32
      linalg.yield %58 : f32
    } -> tensor<12x1024x1024xf32>
    %41 = tensor.empty() : tensor<12x1024xf32>
    %cst_16 = arith.constant 0.000000e+00 : f32
    %42 = linalg.fill ins(%cst_16 : f32) outs(%41 : tensor<12x1024xf32>) -> tensor<12x1024xf32>
    %reduced_17 = linalg.reduce ins(%40 : tensor<12x1024x1024xf32>) outs(%42 : tensor<12x1024xf32>) dimensions = [2] 
      (%in: f32, %init: f32) {
        %58 = arith.addf %in, %init : f32
        linalg.yield %58 : f32
      }
    %expanded_18 = tensor.expand_shape %reduced_17 [[0], [1, 2]] output_shape [12, 1024, 1] : tensor<12x1024xf32> into tensor<12x1024x1xf32>
    %43 = tensor.empty() : tensor<12x1024x1xf32>
    %44 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded_18 : tensor<12x1024x1xf32>) outs(%43 : tensor<12x1024x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %cst_24 = arith.constant 1.000000e+00 : f32
      %58 = arith.divf %cst_24, %in : f32
      linalg.yield %58 : f32
    } -> tensor<12x1024x1xf32>
    %45 = tensor.empty() : tensor<12x1024x1024xf32>
    %46 = linalg.generic {indexing_maps = [#map, #map3, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%40, %44 : tensor<12x1024x1024xf32>, tensor<12x1024x1xf32>) outs(%45 : tensor<12x1024x1024xf32>) {
    ^bb0(%in: f32, %in_24: f32, %out: f32):
      %58 = arith.mulf %in, %in_24 : f32
      linalg.yield %58 : f32
    } -> tensor<12x1024x1024xf32>
    %cst_19 = arith.constant 0.000000e+00 : f32
    %47 = tensor.empty() : tensor<12x1024x64xf32>
    %48 = linalg.fill ins(%cst_19 : f32) outs(%47 : tensor<12x1024x64xf32>) -> tensor<12x1024x64xf32>
    %49 = linalg.batch_matmul ins(%46, %collapsed_12 : tensor<12x1024x1024xf32>, tensor<12x1024x64xf32>) outs(%48 : tensor<12x1024x64xf32>) -> tensor<12x1024x64xf32>
    %expanded_20 = tensor.expand_shape %49 [[0, 1], [2], [3]] output_shape [1, 12, 1024, 64] : tensor<12x1024x64xf32> into tensor<1x12x1024x64xf32>
    %50 = tensor.empty() : tensor<1x1024x12x64xf32>
    %transposed_21 = linalg.transpose ins(%expanded_20 : tensor<1x12x1024x64xf32>) outs(%50 : tensor<1x1024x12x64xf32>) permutation = [0, 2, 1, 3] 
    %collapsed_22 = tensor.collapse_shape %transposed_21 [[0], [1], [2, 3]] : tensor<1x1024x12x64xf32> into tensor<1x1024x768xf32>
    %cst_23 = arith.constant 0.000000e+00 : f32
    %51 = tensor.empty() : tensor<1x1024x768xf32>
    %52 = linalg.fill ins(%cst_23 : f32) outs(%51 : tensor<1x1024x768xf32>) -> tensor<1x1024x768xf32>
    %53 = linalg.batch_matmul ins(%collapsed_22, %arg5 : tensor<1x1024x768xf32>, tensor<1x768x768xf32>) outs(%52 : tensor<1x1024x768xf32>) -> tensor<1x1024x768xf32>
    %54 = tensor.empty() : tensor<1x1024x768xf32>
    %55 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%53, %arg9 : tensor<1x1024x768xf32>, tensor<1x1x768xf32>) outs(%54 : tensor<1x1024x768xf32>) {
    ^bb0(%in: f32, %in_24: f32, %out: f32):
      %58 = arith.addf %in, %in_24 : f32
      linalg.yield %58 : f32
    } -> tensor<1x1024x768xf32>
    %56 = tensor.empty() : tensor<1x1024x768xf32>
    %57 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%55, %arg0 : tensor<1x1024x768xf32>, tensor<1x1024x768xf32>) outs(%56 : tensor<1x1024x768xf32>) {
    ^bb0(%in: f32, %in_24: f32, %out: f32):
      %58 = arith.addf %in, %in_24 : f32
      linalg.yield %58 : f32
    } -> tensor<1x1024x768xf32>
    return %57 : tensor<1x1024x768xf32>
  }
}

