// convert-attn-to-loops bf16-dot: a bf16 prefill tile multiplies on
// AVX512-BF16 dot products (x86vector.avx512.dot) with its operands in bf16
// pairs (docs/cpu.md, *bf16 on dot products*): Q pairs and P pairs
// [tile-q, ·/2] i32, the keys prepacked as [B, Hkv, K/V tiles, D/2,
// tile-k] i32, V's rows interleaved two by two into [tile-k/2, Dv] i32.
// Everything else takes the f32 FMAs: the option off, 8 lanes, D not a
// multiple of 32, f16, a decode tile.
// RUN: attn-opt %s -convert-attn-to-loops="vector-width=16 bf16-dot=1" | FileCheck %s
// RUN: attn-opt %s -attn-cpu-pipeline="vector-width=16 bf16-dot=1 lower-to-llvm=false" | FileCheck %s
// RUN: attn-opt %s -convert-attn-to-loops="vector-width=16" | FileCheck %s --check-prefix=OFF
// RUN: attn-opt %s -convert-attn-to-loops="vector-width=8 bf16-dot=1" | FileCheck %s --check-prefix=OFF
// OFF-NOT: x86vector

// CHECK-LABEL: func.func @prefill
// CHECK-DAG: memref.alloc() {{.*}} : memref<1x2x2x32x64xi32>
// CHECK-DAG: memref.alloca() {{.*}} : memref<64x32xi32>
// CHECK-DAG: memref.alloca() {{.*}} : memref<32x64xi32>
// Per K/V tile: V's rows 2q and 2q + 1 interleaved, the scores (a
// broadcast Q pair against the keys' pairs), P rounded to bf16 into its
// pairs. (The pipeline's canonicalizer spells the interleaving shuffle
// vector.interleave.)
// CHECK: {{vector.shuffle %.*\[0, 16, 1, 17, 2, 18, .*, 15, 31\] : vector<16xbf16>, vector<16xbf16>|vector.interleave %.* : vector<16xbf16> -> vector<32xbf16>}}
// CHECK: vector.broadcast %{{.*}} : i32 to vector<16xi32>
// CHECK: vector.bitcast %{{.*}} : vector<16xi32> to vector<32xbf16>
// CHECK: x86vector.avx512.dot %{{.*}} : vector<32xbf16> -> vector<16xf32>
// CHECK: arith.truncf %{{.*}} : vector<16xf32> to vector<16xbf16>
// CHECK: vector.bitcast %{{.*}} : vector<16xbf16> to vector<8xi32>
// P·V on dot products.
// CHECK: x86vector.avx512.dot %{{.*}} : vector<32xbf16> -> vector<16xf32>
func.func @prefill(%q: tensor<1x4x128x64xbf16>, %k: tensor<1x2x128x64xbf16>, %v: tensor<1x2x128x64xbf16>) -> tensor<1x4x128x64xbf16> {
  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<bottom_right>} : (tensor<1x4x128x64xbf16>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>) -> tensor<1x4x128x64xbf16>
  return %o : tensor<1x4x128x64xbf16>
}

// CHECK-LABEL: func.func @d48
// CHECK-NOT: x86vector
// CHECK: return
func.func @d48(%q: tensor<1x2x128x48xbf16>) -> tensor<1x2x128x48xbf16> {
  %o = attn.sdpa %q, %q, %q : (tensor<1x2x128x48xbf16>, tensor<1x2x128x48xbf16>, tensor<1x2x128x48xbf16>) -> tensor<1x2x128x48xbf16>
  return %o : tensor<1x2x128x48xbf16>
}

// CHECK-LABEL: func.func @f16
// CHECK-NOT: x86vector
// CHECK: return
func.func @f16(%q: tensor<1x2x128x64xf16>) -> tensor<1x2x128x64xf16> {
  %o = attn.sdpa %q, %q, %q : (tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16>) -> tensor<1x2x128x64xf16>
  return %o : tensor<1x2x128x64xf16>
}

// CHECK-LABEL: func.func @decode
// CHECK-NOT: x86vector
// CHECK: return
func.func @decode(%q: tensor<1x8x1x64xbf16>, %k: tensor<1x2x512x64xbf16>) -> tensor<1x8x1x64xbf16> {
  %o = attn.sdpa %q, %k, %k : (tensor<1x8x1x64xbf16>, tensor<1x2x512x64xbf16>, tensor<1x2x512x64xbf16>) -> tensor<1x8x1x64xbf16>
  return %o : tensor<1x8x1x64xbf16>
}

// Projections: a bf16 attn.project with In a multiple of 32 packs its
// panel as pairs of W along In ([In/2, 2 vectors] i32; out_in: W's rows
// read as 16 pairs and transposed, in_out: two rows interleaved) and
// broadcasts a pair of x (a 32-bit load) per dot-product step; 12 rows ×
// 2 vectors of f32 accumulators start from the bias. In = 48 keeps the
// f32 FMAs.
// CHECK-LABEL: func.func @project
// CHECK: memref.alloca() {{.*}} : memref<48x32xi32>
// CHECK: vector.load %{{.*}} : memref<64x96xbf16{{.*}}>, vector<32xbf16>
// CHECK: vector.bitcast %{{.*}} : vector<32xbf16> to vector<16xi32>
// CHECK: scf.for {{.*}} iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>,
// CHECK: vector.load %{{.*}} : memref<150x96xbf16{{.*}}>, vector<2xbf16>
// CHECK: vector.bitcast %{{.*}} : vector<2xbf16> to vector<1xi32>
// CHECK: x86vector.avx512.dot %{{.*}} : vector<32xbf16> -> vector<16xf32>
// CHECK: memref.alloca() {{.*}} : memref<48x32xi32>
// CHECK: {{vector.shuffle %.*\[0, 16, 1, 17, 2, 18, .*, 15, 31\] : vector<16xbf16>, vector<16xbf16>|vector.interleave %.* : vector<16xbf16> -> vector<32xbf16>}}
// CHECK: x86vector.avx512.dot %{{.*}} : vector<32xbf16> -> vector<16xf32>
// CHECK: memref.alloca() {{.*}} : memref<48x32xf32>
// CHECK-NOT: x86vector
// CHECK: return
func.func @project(%x: tensor<3x50x96xbf16>, %w: tensor<64x96xbf16>, %b: tensor<64xbf16>,
                   %wt: tensor<96x32xbf16>, %x48: tensor<20x48xbf16>, %w48: tensor<32x48xbf16>)
    -> (tensor<3x50x64xbf16>, tensor<3x50x32xbf16>, tensor<20x32xbf16>) {
  %0 = attn.project %x, %w, %b : (tensor<3x50x96xbf16>, tensor<64x96xbf16>, tensor<64xbf16>) -> tensor<3x50x64xbf16>
  %1 = attn.project %x, %wt {layout = #attn.layout<in_out>} : (tensor<3x50x96xbf16>, tensor<96x32xbf16>) -> tensor<3x50x32xbf16>
  %2 = attn.project %x48, %w48 : (tensor<20x48xbf16>, tensor<32x48xbf16>) -> tensor<20x32xbf16>
  return %0, %1, %2 : tensor<3x50x64xbf16>, tensor<3x50x32xbf16>, tensor<20x32xbf16>
}
