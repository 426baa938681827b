// Generic IR whose bufferisation copies into strided views (a concat by
// tensor.insert_slice, as torch.cat lowers): the lowered memref.copy calls
// memrefCopy, which the JIT takes from attn's runtime (no
// libmlir_c_runner_utils). @concat_minus_generic computes the same concat
// a second way (a generic reading either input by linalg.index) and
// returns the difference, which must be exactly zero, through the
// reference and cpu pipelines.
// RUN: rm -rf %t && mkdir -p %t
// RUN: attn-run %s --entry=zeros --random-inputs --output=%t/zero.npy --quiet
// RUN: attn-run %s --entry=concat_minus_generic --random-inputs --seed=3 --expect=%t/zero.npy --atol=0 --rtol=0 --quiet | FileCheck %s
// RUN: attn-run %s --entry=concat_minus_generic --pipeline=cpu --random-inputs --seed=3 --expect=%t/zero.npy --atol=0 --rtol=0 --quiet | FileCheck %s
// CHECK: ok

#id = affine_map<(t, h, d) -> (t, h, d)>
#lo = affine_map<(t, h, d) -> (t, h, d mod 4)>

func.func @concat_minus_generic(%a: tensor<6x3x4xf32>, %b: tensor<6x3x4xf32>) -> tensor<6x3x8xf32> {
  %e = tensor.empty() : tensor<6x3x8xf32>
  %c0 = tensor.insert_slice %a into %e[0, 0, 0] [6, 3, 4] [1, 1, 1] : tensor<6x3x4xf32> into tensor<6x3x8xf32>
  %cat = tensor.insert_slice %b into %c0[0, 0, 4] [6, 3, 4] [1, 1, 1] : tensor<6x3x4xf32> into tensor<6x3x8xf32>
  %gen = linalg.generic {indexing_maps = [#lo, #lo, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%a, %b : tensor<6x3x4xf32>, tensor<6x3x4xf32>) outs(%e : tensor<6x3x8xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %d = linalg.index 2 : index
    %c4 = arith.constant 4 : index
    %first = arith.cmpi slt, %d, %c4 : index
    %v = arith.select %first, %x, %y : f32
    linalg.yield %v : f32
  } -> tensor<6x3x8xf32>
  %diff = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%cat, %gen : tensor<6x3x8xf32>, tensor<6x3x8xf32>) outs(%e : tensor<6x3x8xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %v = arith.subf %x, %y : f32
    linalg.yield %v : f32
  } -> tensor<6x3x8xf32>
  return %diff : tensor<6x3x8xf32>
}

func.func @zeros(%a: tensor<6x3x4xf32>, %b: tensor<6x3x4xf32>) -> tensor<6x3x8xf32> {
  %z = arith.constant dense<0.0> : tensor<6x3x8xf32>
  return %z : tensor<6x3x8xf32>
}
