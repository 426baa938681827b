// attn-shard with score and mask functions: their positions are global.
// Each block's attn.sdpa_partial gets the functions with q and kv replaced
// by base + stride·q, base + stride·kv; the bases (the block's first query
// and key rows, run-time values of the rank and the step) arrive as one
// more capture [qBase, kBase], the stride is a constant (P for striped
// rows, 1 for chunks), and the sdpa's captures (a bias table) stay whole
// on every rank. A zigzag ring with functions splits each rank's rows into
// its two chunks. Values: test/Integration/ring-mpirun.test (mask=mods).
// RUN: attn-opt %s --split-input-file --attn-shard=ranks=2 | FileCheck %s

// CHECK-LABEL: func.func @striped(
// CHECK-SAME: %[[T:[^:]*]]: tensor<127xf32>)
// CHECK: call @striped__ring_block({{.*}}, %[[T]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}})
// CHECK: func.func private @striped__ring_block(
// CHECK-SAME: tensor<127xf32>, %{{[^:]*}}: index, %{{[^:]*}}: index, %{{[^:]*}}: i1
// CHECK: %[[B:.*]] = tensor.from_elements %{{.*}}, %{{.*}} : tensor<2xindex>
// CHECK: attn.sdpa_partial {{.*}} captures(%{{.*}}, %[[B]])
// CHECK: ^bb0(%{{[^:]*}}: f32, %{{[^:]*}}: index, %{{[^:]*}}: index, %[[I:[^:]*]]: index, %[[J:[^:]*]]: index, %{{[^:]*}}: tensor<127xf32>, %[[AT:[^:]*]]: tensor<2xindex>):
// CHECK-DAG: %[[QB:.*]] = tensor.extract %[[AT]][%c0] : tensor<2xindex>
// CHECK-DAG: %[[KB:.*]] = tensor.extract %[[AT]][%c1] : tensor<2xindex>
// CHECK-DAG: %[[IP:.*]] = arith.muli %[[I]], %c2
// CHECK-DAG: %[[JP:.*]] = arith.muli %[[J]], %c2
// CHECK-DAG: %[[GI:.*]] = arith.addi %[[IP]], %[[QB]]
// CHECK-DAG: %[[GJ:.*]] = arith.addi %[[JP]], %[[KB]]
// CHECK: arith.subi %[[GI]], %[[GJ]]
func.func @striped(%q: tensor<1x2x64x16xf32>, %k: tensor<1x2x64x16xf32>, %v: tensor<1x2x64x16xf32>,
                   %t: tensor<127xf32>) -> tensor<1x2x64x16xf32> {
  %o = attn.sdpa %q, %k, %v captures(%t) {attn.ring = #attn.ring<striped>} score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %tab: tensor<127xf32>):
    %c63 = arith.constant 63 : index
    %d = arith.subi %i, %j : index
    %n = arith.addi %d, %c63 : index
    %x = tensor.extract %tab[%n] : tensor<127xf32>
    %y = arith.addf %s, %x : f32
    attn.yield %y : f32
  } : (tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<127xf32>)
      -> tensor<1x2x64x16xf32>
  return %o : tensor<1x2x64x16xf32>
}

// -----

// CHECK-LABEL: func.func @zigzag(
// Two query chunks per rank: the running state holds two slabs.
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<2x1x2x16x16xf32>
// CHECK: func.func private @zigzag__ring_block(
// CHECK: attn.sdpa_partial {{.*}} captures(%{{.*}})
// CHECK: mask_mod {
// CHECK: ^bb0(%{{[^:]*}}: index, %{{[^:]*}}: index, %[[I:[^:]*]]: index, %[[J:[^:]*]]: index, %[[AT:[^:]*]]: tensor<2xindex>):
// CHECK-DAG: %[[QB:.*]] = tensor.extract %[[AT]][%c0] : tensor<2xindex>
// CHECK-DAG: %[[KB:.*]] = tensor.extract %[[AT]][%c1] : tensor<2xindex>
// CHECK-DAG: %[[GI:.*]] = arith.addi %[[I]], %[[QB]]
// CHECK-DAG: %[[GJ:.*]] = arith.addi %[[J]], %[[KB]]
// CHECK: arith.divsi %[[GI]]
// CHECK: arith.divsi %[[GJ]]
func.func @zigzag(%q: tensor<1x2x64x16xf32>, %k: tensor<1x2x64x16xf32>, %v: tensor<1x2x64x16xf32>)
    -> tensor<1x2x64x16xf32> {
  %o = attn.sdpa %q, %k, %v {attn.ring = #attn.ring<zigzag>} mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %c20 = arith.constant 20 : index
    %di = arith.divsi %i, %c20 : index
    %dj = arith.divsi %j, %c20 : index
    %same = arith.cmpi eq, %di, %dj : index
    attn.yield %same : i1
  } : (tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>)
      -> tensor<1x2x64x16xf32>
  return %o : tensor<1x2x64x16xf32>
}
