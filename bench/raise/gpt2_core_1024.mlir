#qk = [affine_map<(b, h, i, j, d) -> (b, h, i, d)>, affine_map<(b, h, i, j, d) -> (b, h, j, d)>, affine_map<(b, h, i, j, d) -> (b, h, i, j)>]
#pv = [affine_map<(b, h, i, e, j) -> (b, h, i, j)>, affine_map<(b, h, i, e, j) -> (b, h, j, e)>, affine_map<(b, h, i, e, j) -> (b, h, i, e)>]
#id4 = affine_map<(b, h, i, j) -> (b, h, i, j)>
#row = affine_map<(b, h, i, j) -> (b, h, i, 0)>
#tri = affine_map<(b, h, i, j) -> (i, j)>
func.func @gpt2_core(%q: tensor<1x12x1024x64xf32>, %k: tensor<1x12x1024x64xf32>, %v: tensor<1x12x1024x64xf32>) -> tensor<1x12x1024x64xf32> {
  %zero = arith.constant 0.0 : f32
  %min = arith.constant -3.40282347E+38 : f32
  %dd = arith.constant 64.0 : f32
  %sq = math.sqrt %dd : f32
  %s0 = tensor.empty() : tensor<1x12x1024x1024xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%s0 : tensor<1x12x1024x1024xf32>) -> tensor<1x12x1024x1024xf32>
  %s = linalg.generic {indexing_maps = #qk, iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<1x12x1024x64xf32>, tensor<1x12x1024x64xf32>) outs(%sz : tensor<1x12x1024x1024xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %y = arith.addf %acc, %m : f32
    linalg.yield %y : f32
  } -> tensor<1x12x1024x1024xf32>
  %c0 = tensor.empty() : tensor<1024x1024xf32>
  %causal = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      outs(%c0 : tensor<1024x1024xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %later = arith.cmpi sgt, %j, %i : index
    %y = arith.select %later, %min, %zero : f32
    linalg.yield %y : f32
  } -> tensor<1024x1024xf32>
  %x = linalg.generic {indexing_maps = [#id4, #tri, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s, %causal : tensor<1x12x1024x1024xf32>, tensor<1024x1024xf32>) outs(%s0 : tensor<1x12x1024x1024xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %w = arith.divf %a, %sq : f32
    %y = arith.addf %w, %c : f32
    linalg.yield %y : f32
  } -> tensor<1x12x1024x1024xf32>
  %r0 = tensor.empty() : tensor<1x12x1024x1xf32>
  %m0 = linalg.fill ins(%min : f32) outs(%r0 : tensor<1x12x1024x1xf32>) -> tensor<1x12x1024x1xf32>
  %m = linalg.generic {indexing_maps = [#id4, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x : tensor<1x12x1024x1024xf32>) outs(%m0 : tensor<1x12x1024x1xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %y = arith.maximumf %a, %acc : f32
    linalg.yield %y : f32
  } -> tensor<1x12x1024x1xf32>
  %ex = linalg.generic {indexing_maps = [#id4, #row, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %m : tensor<1x12x1024x1024xf32>, tensor<1x12x1024x1xf32>) outs(%s0 : tensor<1x12x1024x1024xf32>) {
  ^bb0(%a: f32, %mx: f32, %o: f32):
    %w = arith.subf %a, %mx : f32
    %y = math.exp %w : f32
    linalg.yield %y : f32
  } -> tensor<1x12x1024x1024xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%r0 : tensor<1x12x1024x1xf32>) -> tensor<1x12x1024x1xf32>
  %sum = linalg.generic {indexing_maps = [#id4, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%ex : tensor<1x12x1024x1024xf32>) outs(%z1 : tensor<1x12x1024x1xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %y = arith.addf %a, %acc : f32
    linalg.yield %y : f32
  } -> tensor<1x12x1024x1xf32>
  %p = linalg.generic {indexing_maps = [#id4, #row, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%ex, %sum : tensor<1x12x1024x1024xf32>, tensor<1x12x1024x1xf32>) outs(%s0 : tensor<1x12x1024x1024xf32>) {
  ^bb0(%a: f32, %r: f32, %o: f32):
    %y = arith.divf %a, %r : f32
    linalg.yield %y : f32
  } -> tensor<1x12x1024x1024xf32>
  %o0 = tensor.empty() : tensor<1x12x1024x64xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%o0 : tensor<1x12x1024x64xf32>) -> tensor<1x12x1024x64xf32>
  %o = linalg.generic {indexing_maps = #pv, iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v : tensor<1x12x1024x1024xf32>, tensor<1x12x1024x64xf32>) outs(%oz : tensor<1x12x1024x64xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %mm = arith.mulf %a, %b : f32
    %y = arith.addf %acc, %mm : f32
    linalg.yield %y : f32
  } -> tensor<1x12x1024x64xf32>
  return %o : tensor<1x12x1024x64xf32>
}
