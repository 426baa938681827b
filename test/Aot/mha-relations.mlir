// Relations that are not plain equalities: attn.mha with dynamic widths
// over 6 heads. The weights are [out, in]: every projection reads the model
// width of x; Q and K project to one width, a multiple of 6 (the heads);
// V projects to a multiple of 6 that the output projection reads. The
// sequence length and the output width are free.
// RUN: rm -rf %t && attn-aot %s --name=block -o %t > /dev/null
// RUN: FileCheck %s --input-file=%t/block.h
// CHECK: Checked before each call:
// CHECK-NEXT: input #0 dim 2 == input #1 dim 1 == input #2 dim 1 == input #3 dim 1
// CHECK-NEXT: input #1 dim 0 == input #2 dim 0, a multiple of 6
// CHECK-NEXT: input #3 dim 0 == input #4 dim 1, a multiple of 6
// CHECK-NEXT: */

func.func @block(%x: tensor<1x?x?xf32>, %wq: tensor<?x?xf32>, %wk: tensor<?x?xf32>,
                 %wv: tensor<?x?xf32>, %wo: tensor<?x?xf32>) -> tensor<1x?x?xf32> {
  %y = attn.mha %x, %x, %wq, %wk, %wv, %wo {num_heads = 6 : i64, scale = 0.125 : f32}
       : (tensor<1x?x?xf32>, tensor<1x?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>,
          tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<1x?x?xf32>
  return %y : tensor<1x?x?xf32>
}
