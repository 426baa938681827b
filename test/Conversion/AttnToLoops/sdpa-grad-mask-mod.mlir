// attn.sdpa_grad with a mask function on the fused backward: in both
// parallel loops (dK/dV over (b, K/V head, K/V tile), dQ over (b, head,
// Q tile)) each (Q tile, K/V tile) pair is first bounded over the function
// (the document ids scanned over the tile's rows and keys): a pair it keeps
// nothing of is skipped, one it keeps whole is not masked per element,
// the others evaluate it 8 keys a vector (the ids gathered) and select
// -inf. Values: test/Integration/sdpa-grad-mask-mod.mlir.
// RUN: attn-opt %s --convert-attn-to-loops="vector-width=8 tile-q=8 tile-k=16" | FileCheck %s

// CHECK-LABEL: func.func @documents
// CHECK: %[[IDS:.*]] = bufferization.to_buffer %arg6
// CHECK: scf.parallel ({{.*}}) = (%c0, %c0, %c0) to (%c2, %c2, %c3)
// CHECK: memref.load %[[IDS]][
// CHECK: scf.if
// CHECK: scf.if
// CHECK: vector.gather %[[IDS]]
// CHECK: arith.cmpi eq, {{.*}} : vector<8xi32>
// CHECK: arith.select {{.*}} : vector<8xi1>, vector<8xf32>
// CHECK: scf.parallel ({{.*}}) = (%c0, %c0, %c0) to (%c2, %c4, %c6)
// CHECK: memref.load %[[IDS]][
// CHECK: scf.if
// CHECK: scf.if
// CHECK: vector.gather %[[IDS]]
// CHECK: arith.cmpi eq, {{.*}} : vector<8xi32>
// CHECK: arith.select {{.*}} : vector<8xi1>, vector<8xf32>
func.func @documents(%q: tensor<2x4x45x16xf32>, %k: tensor<2x2x45x16xf32>,
                     %v: tensor<2x2x45x16xf32>, %o: tensor<2x4x45x16xf32>,
                     %do: tensor<2x4x45x16xf32>, %lse: tensor<2x4x45xf32>,
                     %doc: tensor<45xi32>)
    -> (tensor<2x4x45x16xf32>, tensor<2x2x45x16xf32>, tensor<2x2x45x16xf32>) {
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %do, %lse captures(%doc)
      {scale = 0.25 : f32} mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index, %d: tensor<45xi32>):
    %di = tensor.extract %d[%i] : tensor<45xi32>
    %dj = tensor.extract %d[%j] : tensor<45xi32>
    %same = arith.cmpi eq, %di, %dj : i32
    %causal = arith.cmpi sle, %j, %i : index
    %c0 = arith.constant 0 : i32
    %c5 = arith.constant 5 : index
    %later = arith.cmpi sgt, %di, %c0 : i32
    %early = arith.cmpi slt, %i, %c5 : index
    %row = arith.ori %later, %early : i1
    %a = arith.andi %same, %causal : i1
    %keep = arith.andi %a, %row : i1
    attn.yield %keep : i1
  } : (tensor<2x4x45x16xf32>, tensor<2x2x45x16xf32>, tensor<2x2x45x16xf32>,
       tensor<2x4x45x16xf32>, tensor<2x4x45x16xf32>, tensor<2x4x45xf32>, tensor<45xi32>)
      -> (tensor<2x4x45x16xf32>, tensor<2x2x45x16xf32>, tensor<2x2x45x16xf32>)
  return %dq, %dk, %dv : tensor<2x4x45x16xf32>, tensor<2x2x45x16xf32>, tensor<2x2x45x16xf32>
}
