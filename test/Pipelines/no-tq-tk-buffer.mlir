// The fused CPU pipeline allocates nothing whose size depends on Tq·Tk:
// after lowering, the only dynamically sized allocations are the
// [B,H,Tq,Dv] output (sizes B and Tq) and the keys transposed once per
// call, [B, Hkv, K/V tiles, D, tile-k] (sizes B and Tk/tile-k, no tiles
// past prepack-limit-mib); every other buffer has a static tile size. The
// reference pipeline, by contrast, materialises [B,H,Tq,Tk].
// RUN: attn-opt %s -attn-cpu-pipeline="lower-to-llvm=false" | FileCheck %s --check-prefix=CPU
// RUN: attn-opt %s -attn-reference-pipeline="lower-to-llvm=false" | FileCheck %s --check-prefix=REF
// With result-destinations (the JIT's convention) the output is the
// caller's destination when it has the output's sizes, and that
// allocation the fallback.
// RUN: attn-opt %s -attn-cpu-pipeline="lower-to-llvm=false result-destinations" | FileCheck %s --check-prefix=DEST

// DEST-LABEL: func.func @sdpa
// DEST-SAME: %[[DEST:[^:]*]]: memref<?x12x?x64xf32>) -> memref<?x12x?x64xf32>
// DEST: %[[OUT:.*]] = scf.if %{{.*}} -> (memref<?x12x?x64xf32>) {
// DEST-NEXT: scf.yield %[[DEST]]
// DEST-NEXT: } else {
// DEST-NEXT: memref.alloc(%{{[^,]*}}, %{{[^,]*}}) {{.*}}: memref<?x12x?x64xf32>
// DEST: return %[[OUT]]

// CPU-LABEL: func.func @sdpa
// CPU-SAME: (%[[Q:.*]]: memref<?x12x?x64xf32>, %[[K:.*]]: memref<?x12x?x64xf32>
// CPU: memref.alloc(%{{[^,]*}}, %{{[^,]*}}) {{.*}}: memref<?x12x?x64xf32>
// CPU: memref.alloc(%{{[^,]*}}, %{{[^,]*}}) {{.*}}: memref<?x12x?x64x64xf32>
// CPU-NOT: memref.alloc(
// CPU-NOT: memref.alloca(%
// CPU-NOT: memref<{{.*}}?x?{{.*}}>
// CPU: return

// REF-LABEL: func.func @sdpa
// REF: memref.alloc({{.*}}) {{.*}}: memref<?x12x?x?xf32>
func.func @sdpa(%q: tensor<?x12x?x64xf32>, %k: tensor<?x12x?x64xf32>, %v: tensor<?x12x?x64xf32>) -> tensor<?x12x?x64xf32> {
  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<top_left>}
      : (tensor<?x12x?x64xf32>, tensor<?x12x?x64xf32>, tensor<?x12x?x64xf32>) -> tensor<?x12x?x64xf32>
  return %o : tensor<?x12x?x64xf32>
}

// A primitive chain is fused first, so it too runs without a Tq x Tk buffer.
// CPU-LABEL: func.func @chain
// CPU: memref.alloc(%{{[^,]*}}, %{{[^,]*}}) {{.*}}: memref<?x12x?x64xf32>
// CPU: memref.alloc(%{{[^,]*}}, %{{[^,]*}}) {{.*}}: memref<?x12x?x64x64xf32>
// CPU-NOT: memref.alloc(
// CPU-NOT: memref<{{.*}}?x?{{.*}}>
// CPU: return
func.func @chain(%q: tensor<?x12x?x64xf32>, %k: tensor<?x12x?x64xf32>, %v: tensor<?x12x?x64xf32>) -> tensor<?x12x?x64xf32> {
  %s = attn.scores %q, %k : (tensor<?x12x?x64xf32>, tensor<?x12x?x64xf32>) -> tensor<?x12x?x?xf32>
  %t = attn.scale %s {scale = 0.125 : f32} : tensor<?x12x?x?xf32>
  %m = attn.mask %t {causal = #attn.causal<top_left>} : tensor<?x12x?x?xf32>
  %p = attn.softmax %m : tensor<?x12x?x?xf32>
  %o = attn.weighted_sum %p, %v : (tensor<?x12x?x?xf32>, tensor<?x12x?x64xf32>) -> tensor<?x12x?x64xf32>
  return %o : tensor<?x12x?x64xf32>
}
