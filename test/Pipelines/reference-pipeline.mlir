// attn-reference-pipeline: bufferised loops with every allocation freed,
// then nothing but the LLVM dialect.
// RUN: attn-opt %s -attn-reference-pipeline="lower-to-llvm=false" | FileCheck %s --check-prefix=LOOPS
// RUN: attn-opt %s -attn-reference-pipeline | FileCheck %s --check-prefix=LLVM

// LOOPS-LABEL: func.func @sdpa
// LOOPS-SAME: (%{{.*}}: memref<?x2x?x8xf32>, %{{.*}}: memref<?x2x?x8xf32>, %{{.*}}: memref<?x2x?x8xf32>) -> memref<?x2x?x8xf32>
// The scores are materialised: a [B,H,Tq,Tk] buffer with dynamic sizes.
// LOOPS: memref.alloc(%{{.*}}, %{{.*}}, %{{.*}}) {{.*}}: memref<?x2x?x?xf32>
// LOOPS: scf.for
// LOOPS: math.exp
// LOOPS: memref.dealloc
// LOOPS-NOT: linalg.
// LOOPS-NOT: attn.
// LOOPS: return

// LLVM-LABEL: llvm.func @sdpa
// LLVM-NOT: attn.
// LLVM-NOT: memref.
// LLVM-NOT: scf.
// LLVM-NOT: func.func
// LLVM: llvm.call @malloc
// LLVM: llvm.call @free
func.func @sdpa(%q: tensor<?x2x?x8xf32>, %k: tensor<?x2x?x8xf32>, %v: tensor<?x2x?x8xf32>) -> tensor<?x2x?x8xf32> {
  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<top_left>} : (tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>) -> tensor<?x2x?x8xf32>
  return %o : tensor<?x2x?x8xf32>
}
