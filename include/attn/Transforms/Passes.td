//===- Passes.td - attn-to-attn passes ----------------------*- tablegen -*-===//
#ifndef ATTN_TRANSFORMS_PASSES_TD
#define ATTN_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def AttnDecompose : Pass<"attn-decompose"> {
  let summary = "Expand attn.mha, attn.sdpa_varlen and attn.sdpa into the primitive ops";
  let description = [{
    Three rewrites, applied until nothing changes:

    ```
    mha(xq, xkv)  = project(merge_heads(sdpa(split_heads(project(xq,  Wq, bq), H),
                                             split_heads(project(xkv, Wk, bk), Hkv),
                                             split_heads(project(xkv, Wv, bv), Hkv), mask)),
                            Wo, bo)
    sdpa(q, k, v) = weighted_sum(dropout(softmax(mask(scale(scores(q, k), s), m, causal)), r, seed), v)
    sdpa_varlen(q, k, v, cu_q, cu_k) = out, 0 but for: for b, out[0, :, qs_b ..< qe_b] =
        sdpa(q[0, :, qs_b ..< qe_b], k[0, :, ks_b ..< ke_b], v[0, :, ks_b ..< ke_b])
    ```

    - `mha`'s `layout` goes to all four `project`s; its `scale`, `causal`,
      `dropout_rate`, `dropout_seed` and mask go to the `sdpa`; `Hkv` is
      `num_kv_heads` (default `num_heads`).
    - `s` is the `sdpa`'s `scale`, or `1/sqrt(D)` when it has none (computed in
      double, stored as f32: `D = 8` gives `0.353553385`). The `scale` op is
      omitted when `s` is 1 in f32.
    - The `mask` op is emitted only when the `sdpa` has a `causal` kind or a mask
      operand (the operand moves to `attn.mask` unchanged).
    - The `dropout` op is emitted only when `dropout_rate` is present and not 0;
      its `seed` is `dropout_seed`, or 0.
    - `sdpa_varlen` becomes an `scf.for` over its sequences, each an `sdpa`
      (with the varlen op's attributes, ALiBi slopes and sinks) on slices
      of the rows, skipped for a sequence without queries or keys, and
      inserted into a zero-filled output; the offsets are clamped into the
      rows (`qs_b = clamp(cu_q[b], 0, Tq)`, `qe_b = max(clamp(cu_q[b+1], 0,
      Tq), qs_b)`, the same for keys).
    - With `keep-sdpa`, only `mha` and `sdpa_varlen` are expanded and every
      `sdpa` is kept, for a lowering that takes `sdpa` whole.
    - Primitive ops and non-attn ops are left alone.

    **Example.** GQA with 8 query and 2 key/value heads, causal, dropout,
    output bias only:

    ```mlir
    func.func @gqa_mha(%x: tensor<2x10x64xf32>, %wq: tensor<64x64xf32>, %wk: tensor<16x64xf32>,
                   %wv: tensor<16x64xf32>, %wo: tensor<64x64xf32>, %bo: tensor<64xf32>) -> tensor<2x10x64xf32> {
      %y = attn.mha %x, %x, %wq, %wk, %wv, %wo out_bias(%bo)
          {num_heads = 8 : i64, num_kv_heads = 2 : i64, causal = #attn.causal<top_left>,
           dropout_rate = 0.1 : f32, dropout_seed = 7 : i64}
          : (tensor<2x10x64xf32>, tensor<2x10x64xf32>, tensor<64x64xf32>, tensor<16x64xf32>,
             tensor<16x64xf32>, tensor<64x64xf32>, tensor<64xf32>) -> tensor<2x10x64xf32>
      return %y : tensor<2x10x64xf32>
    }
    ```

    `attn-opt --attn-decompose` gives:

    ```mlir
    module {
      func.func @gqa_mha(%arg0: tensor<2x10x64xf32>, %arg1: tensor<64x64xf32>, %arg2: tensor<16x64xf32>, %arg3: tensor<16x64xf32>, %arg4: tensor<64x64xf32>, %arg5: tensor<64xf32>) -> tensor<2x10x64xf32> {
        %0 = attn.project %arg0, %arg1 : (tensor<2x10x64xf32>, tensor<64x64xf32>) -> tensor<2x10x64xf32>
        %1 = attn.project %arg0, %arg2 : (tensor<2x10x64xf32>, tensor<16x64xf32>) -> tensor<2x10x16xf32>
        %2 = attn.project %arg0, %arg3 : (tensor<2x10x64xf32>, tensor<16x64xf32>) -> tensor<2x10x16xf32>
        %3 = attn.split_heads %0 {num_heads = 8 : i64} : (tensor<2x10x64xf32>) -> tensor<2x8x10x8xf32>
        %4 = attn.split_heads %1 {num_heads = 2 : i64} : (tensor<2x10x16xf32>) -> tensor<2x2x10x8xf32>
        %5 = attn.split_heads %2 {num_heads = 2 : i64} : (tensor<2x10x16xf32>) -> tensor<2x2x10x8xf32>
        %6 = attn.scores %3, %4 : (tensor<2x8x10x8xf32>, tensor<2x2x10x8xf32>) -> tensor<2x8x10x10xf32>
        %7 = attn.scale %6 {scale = 0.353553385 : f32} : tensor<2x8x10x10xf32>
        %8 = attn.mask %7 {causal = #attn.causal<top_left>} : tensor<2x8x10x10xf32>
        %9 = attn.softmax %8 : tensor<2x8x10x10xf32>
        %10 = attn.dropout %9 {rate = 1.000000e-01 : f32, seed = 7 : i64} : tensor<2x8x10x10xf32>
        %11 = attn.weighted_sum %10, %5 : (tensor<2x8x10x10xf32>, tensor<2x2x10x8xf32>) -> tensor<2x8x10x8xf32>
        %12 = attn.merge_heads %11 : (tensor<2x8x10x8xf32>) -> tensor<2x10x64xf32>
        %13 = attn.project %12, %arg4, %arg5 : (tensor<2x10x64xf32>, tensor<64x64xf32>, tensor<64xf32>) -> tensor<2x10x64xf32>
        return %13 : tensor<2x10x64xf32>
      }
    }
    ```

    `attn-opt --attn-decompose=keep-sdpa` gives:

    ```mlir
    module {
      func.func @gqa_mha(%arg0: tensor<2x10x64xf32>, %arg1: tensor<64x64xf32>, %arg2: tensor<16x64xf32>, %arg3: tensor<16x64xf32>, %arg4: tensor<64x64xf32>, %arg5: tensor<64xf32>) -> tensor<2x10x64xf32> {
        %0 = attn.project %arg0, %arg1 : (tensor<2x10x64xf32>, tensor<64x64xf32>) -> tensor<2x10x64xf32>
        %1 = attn.project %arg0, %arg2 : (tensor<2x10x64xf32>, tensor<16x64xf32>) -> tensor<2x10x16xf32>
        %2 = attn.project %arg0, %arg3 : (tensor<2x10x64xf32>, tensor<16x64xf32>) -> tensor<2x10x16xf32>
        %3 = attn.split_heads %0 {num_heads = 8 : i64} : (tensor<2x10x64xf32>) -> tensor<2x8x10x8xf32>
        %4 = attn.split_heads %1 {num_heads = 2 : i64} : (tensor<2x10x16xf32>) -> tensor<2x2x10x8xf32>
        %5 = attn.split_heads %2 {num_heads = 2 : i64} : (tensor<2x10x16xf32>) -> tensor<2x2x10x8xf32>
        %6 = attn.sdpa %3, %4, %5 {causal = #attn.causal<top_left>, dropout_rate = 1.000000e-01 : f32, dropout_seed = 7 : i64} : (tensor<2x8x10x8xf32>, tensor<2x2x10x8xf32>, tensor<2x2x10x8xf32>) -> tensor<2x8x10x8xf32>
        %7 = attn.merge_heads %6 : (tensor<2x8x10x8xf32>) -> tensor<2x10x64xf32>
        %8 = attn.project %7, %arg4, %arg5 : (tensor<2x10x64xf32>, tensor<64x64xf32>, tensor<64xf32>) -> tensor<2x10x64xf32>
        return %8 : tensor<2x10x64xf32>
      }
    }
    ```

    **Refuses** an `sdpa` whose head dim `D` is dynamic and that has no
    `scale` (the default `1/sqrt(D)` is not known at compile time). The pass
    fails; give the `sdpa` (or the `mha`) an explicit `scale`. With
    `dynamic_d.mlir`

    ```mlir
    func.func @dynamic_d(%q: tensor<1x2x3x?xf32>) -> tensor<1x2x3x?xf32> {
      %o = attn.sdpa %q, %q, %q : (tensor<1x2x3x?xf32>, tensor<1x2x3x?xf32>, tensor<1x2x3x?xf32>) -> tensor<1x2x3x?xf32>
      return %o : tensor<1x2x3x?xf32>
    }
    ```

    (the `note: see current operation: …` line that follows the error is
    left out):

    ```
    $ attn-opt dynamic_d.mlir --attn-decompose
    dynamic_d.mlir:2:8: error: 'attn.sdpa' op cannot be decomposed: head dim is dynamic and no 'scale' is given
      %o = attn.sdpa %q, %q, %q : (tensor<1x2x3x?xf32>, tensor<1x2x3x?xf32>, tensor<1x2x3x?xf32>) -> tensor<1x2x3x?xf32>
           ^
    ```

    An `mha` whose `wq` output width is dynamic gets the same error, reported
    at the `mha`. With `keep-sdpa` such an `sdpa` is not touched and there is no
    error.
  }];
  let options = [
    Option<"keepSdpa", "keep-sdpa", "bool", /*default=*/"false",
           "Expand attn.mha only; leave attn.sdpa for a fused lowering">
  ];
  let dependentDialects = ["::mlir::attn::AttnDialect", "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect", "::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

def AttnFuse : Pass<"attn-fuse"> {
  let summary = "Raise a primitive attention chain to one attn.sdpa";
  let description = [{
    The inverse of `attn-decompose`'s sdpa expansion. Anchored on
    `attn.weighted_sum(P, V)`, it matches
    `P = dropout?(softmax(X))` with `X` a chain of `scale` and at most one
    `mask` op, in any legal order, over `scores(Q', K)`, where `Q'` may be
    `scale(Q)`. The result is
    `attn.sdpa Q, K, V [, mask] {scale = product of all scales, causal,
    dropout_rate, dropout_seed}`; the scale is always explicit (`1.0` when
    the chain has none), never sdpa's `1/sqrt(D)` default.

    An additive (float) mask does not commute with a scale
    (`a·(S + m) != a·S + m`), so a float mask followed by a scale other than
    1 is not fused; `i1` and causal masks commute with any positive scale.
    The chain is also left alone when one of its intermediate values has a
    user outside the chain (fusing would compute it twice), when the scales
    multiply to an f32 that is not positive and finite, or when K and V do
    not statically have the same number of heads. Leaving a chain alone is
    not an error.

    **Example.** A causal, key-padding-masked chain with two scales:

    ```mlir
    func.func @chain(%q: tensor<1x4x16x8xf32>, %k: tensor<1x4x16x8xf32>, %v: tensor<1x4x16x8xf32>,
                     %keep: tensor<1x1x1x16xi1>) -> tensor<1x4x16x8xf32> {
      %s = attn.scores %q, %k : (tensor<1x4x16x8xf32>, tensor<1x4x16x8xf32>) -> tensor<1x4x16x16xf32>
      %m = attn.mask %s, %keep {causal = #attn.causal<top_left>} : tensor<1x4x16x16xf32>, tensor<1x1x1x16xi1>
      %t = attn.scale %m {scale = 0.5 : f32} : tensor<1x4x16x16xf32>
      %u = attn.scale %t {scale = 0.25 : f32} : tensor<1x4x16x16xf32>
      %p = attn.softmax %u : tensor<1x4x16x16xf32>
      %o = attn.weighted_sum %p, %v : (tensor<1x4x16x16xf32>, tensor<1x4x16x8xf32>) -> tensor<1x4x16x8xf32>
      return %o : tensor<1x4x16x8xf32>
    }
    ```

    `attn-opt --attn-fuse` gives:

    ```mlir
    module {
      func.func @chain(%arg0: tensor<1x4x16x8xf32>, %arg1: tensor<1x4x16x8xf32>, %arg2: tensor<1x4x16x8xf32>, %arg3: tensor<1x1x1x16xi1>) -> tensor<1x4x16x8xf32> {
        %0 = attn.sdpa %arg0, %arg1, %arg2, %arg3 {causal = #attn.causal<top_left>, scale = 1.250000e-01 : f32} : (tensor<1x4x16x8xf32>, tensor<1x4x16x8xf32>, tensor<1x4x16x8xf32>, tensor<1x1x1x16xi1>) -> tensor<1x4x16x8xf32>
        return %0 : tensor<1x4x16x8xf32>
      }
    }
    ```
  }];
  let dependentDialects = ["::mlir::attn::AttnDialect"];
}

def AttnRaise : Pass<"attn-raise"> {
  let summary = "Raise linalg attention chains (Q·Kᵀ, softmax, ·V) to attn.sdpa";
  let description = [{
    Opt-in: finds attention written as generic linalg on tensors, the way
    torch-mlir and other compilers emit it, and replaces it by one
    `attn.sdpa` that the fused lowerings take. Anchored on each contraction
    `O = P·V` (`linalg.matmul`, `linalg.batch_matmul`, or a contraction
    `linalg.generic`, operands transposed or not), it reads `P` through
    elementwise and reducing generics, `linalg.broadcast`,
    `linalg.transpose`, fills, splat constants and unit-dim reshapes, and
    raises when it proves

    - `P = exp(X − c) / Σ_keys exp(X − c)` for a row constant `c` (the row
      max, with `maximumf`, `maxnumf` or compare-and-select), or
      `exp(X − c) · (1 / Σ …)`, or `exp(X − (m + log Σ exp(X − m)))`;
    - `X` is the scores `S = Q·Kᵀ` (another contraction) under positive
      constant scales (also on Q or on K alone), at most one additive mask
      tensor added after the last scale, and keep-masks:
      `select(keep, X, −inf)` or `X + select(keep, 0, −inf)` (any constant
      ≤ −1e30 counts as −inf, so Hugging Face's `finfo.min` does);
    - a keep condition that compares the key position `j` with the query
      position `i` (from `linalg.index`, through index casts and i1 round
      trips through wider integers) keeps a band `lo ≤ j − i ≤ hi`:
      `hi = 0` is `causal = top_left`, `hi = Tk − Tq` `bottom_right`, a
      lower bound a `window`; an `i1` tensor condition becomes the mask
      operand.

    What no named feature holds becomes sdpa's score function (the rest of
    the scores chain, tensors it reads captured) or mask function (keep
    conditions that are not bands nor one `i1` tensor). K/V repeated per
    head group (`repeat_interleave`) are read with their own heads, and
    with `projections` the contractions feeding Q/K/V and reading the
    output become `attn.project`. With `mha` too, a whole block becomes
    one `attn.mha` where each of Q, K and V is provably
    `split_heads(slice(project(x, W) + b))` (a packed QKV projection is
    sliced into `Wq`, `Wk`, `Wv`) and the output projection reads
    `merge_heads` of the attention (static shapes; the output projection's
    bias stays an add after it).

    Batch dims of the contractions become sdpa's `B` and `H` (none: both
    1; one: `H`; more than two: the leading ones fold into `B`), with
    reshapes and transposes around the sdpa that the canonicaliser folds.

    **Numerics.** The sdpa computes the same function with a different
    rounding (online softmax, f32 accumulation in another order): on the
    tests the raised result is within 1e-5 relative of the unraised one in
    f32. Two behaviours differ and are raised only when proven not to
    occur, or with `zero-empty-rows`: a query row that keeps no key (the
    source gives NaN, or a mean of V for a finite fill; sdpa gives 0), which
    a band proves impossible when every row holds a key and a mask tensor
    never does. A softmax without the max subtraction is raised with a
    remark (sdpa's cannot overflow).

    Not raised (the `report` option says why at each attention-like chain):
    two contractions with no softmax between them, scores cast to integers,
    bands that miss both diagonals, mixed element types, contractions
    that accumulate into a non-zero init.

    **Example.** Attention as torch-mlir writes it for 2-D heads:

    ```mlir
    func.func @attention(%q: tensor<16x8xf32>, %k: tensor<16x8xf32>, %v: tensor<16x8xf32>) -> tensor<16x8xf32> {
      %zero = arith.constant 0.0 : f32
      %ninf = arith.constant 0xFF800000 : f32
      %e0 = tensor.empty() : tensor<16x16xf32>
      %z = linalg.fill ins(%zero : f32) outs(%e0 : tensor<16x16xf32>) -> tensor<16x16xf32>
      %s = linalg.matmul indexing_maps = [affine_map<(i, j, d) -> (i, d)>, affine_map<(i, j, d) -> (j, d)>, affine_map<(i, j, d) -> (i, j)>]
             ins(%q, %k : tensor<16x8xf32>, tensor<16x8xf32>) outs(%z : tensor<16x16xf32>) -> tensor<16x16xf32>
      %e1 = tensor.empty() : tensor<16xf32>
      %m0 = linalg.fill ins(%ninf : f32) outs(%e1 : tensor<16xf32>) -> tensor<16xf32>
      %m = linalg.reduce ins(%s : tensor<16x16xf32>) outs(%m0 : tensor<16xf32>) dimensions = [1]
             (%x: f32, %acc: f32) { %r = arith.maximumf %x, %acc : f32
                                   linalg.yield %r : f32 }
      %e = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>],
                           iterator_types = ["parallel", "parallel"]}
             ins(%s, %m : tensor<16x16xf32>, tensor<16xf32>) outs(%e0 : tensor<16x16xf32>) {
      ^bb0(%x: f32, %mx: f32, %o: f32):
        %d = arith.subf %x, %mx : f32
        %y = math.exp %d : f32
        linalg.yield %y : f32
      } -> tensor<16x16xf32>
      %s0 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<16xf32>) -> tensor<16xf32>
      %sum = linalg.reduce ins(%e : tensor<16x16xf32>) outs(%s0 : tensor<16xf32>) dimensions = [1]
               (%x: f32, %acc: f32) { %r = arith.addf %x, %acc : f32
                                     linalg.yield %r : f32 }
      %p = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>],
                           iterator_types = ["parallel", "parallel"]}
             ins(%e, %sum : tensor<16x16xf32>, tensor<16xf32>) outs(%e0 : tensor<16x16xf32>) {
      ^bb0(%x: f32, %t: f32, %o: f32):
        %y = arith.divf %x, %t : f32
        linalg.yield %y : f32
      } -> tensor<16x16xf32>
      %e2 = tensor.empty() : tensor<16x8xf32>
      %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<16x8xf32>) -> tensor<16x8xf32>
      %o = linalg.matmul ins(%p, %v : tensor<16x16xf32>, tensor<16x8xf32>) outs(%z2 : tensor<16x8xf32>) -> tensor<16x8xf32>
      return %o : tensor<16x8xf32>
    }
    ```

    `attn-opt --attn-raise --canonicalize` gives (no scale in the source:
    `scale = 1.0`, never sdpa's `1/sqrt(D)` default):

    ```
    %0 = attn.sdpa %q4, %k4, %v4 {scale = 1.000000e+00 : f32} : (tensor<1x1x16x8xf32>, tensor<1x1x16x8xf32>, tensor<1x1x16x8xf32>) -> tensor<1x1x16x8xf32>
    ```

    between `tensor.expand_shape`s of Q, K, V and a `tensor.collapse_shape`
    of the result.
  }];
  let options = [
    Option<"report", "report", "bool", /*default=*/"false",
           "Remark at each raised chain and at each attention-like chain "
           "left alone, with the reason">,
    Option<"raiseProjections", "projections", "bool", /*default=*/"true",
           "Also raise the contractions around each raised attention to "
           "attn.project: the Q/K/V projections that reach it through "
           "slices, reshapes, transposes and bias adds, and the output "
           "projection that reads it">,
    Option<"raiseMha", "mha", "bool", /*default=*/"true",
           "With projections: also raise each whole block (Q/K/V "
           "projections, head split, attention, head merge, output "
           "projection) to one attn.mha where the split and merge are "
           "proven from the views' index maps">,
    Option<"zeroEmptyRows", "zero-empty-rows", "bool", /*default=*/"false",
           "Raise even where a query row may keep no key (the source's NaN "
           "or mean of V there becomes sdpa's 0)">,
  ];
  let dependentDialects = ["::mlir::attn::AttnDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def AttnExpandMath : Pass<"attn-expand-math"> {
  let summary = "Expand f32 math.exp2 and math.tanh into the kernels' polynomials, math.absf into bit operations";
  let description = [{
    The fused kernels (`convert-attn-to-loops`, `convert-attn-to-gpu`) are
    written with `math.exp2` (the online softmax, the merge weights) and
    `math.tanh` (softcap, score functions). This pass expands every such op
    on `f32` or a vector of `f32` into plain arithmetic, the same code on
    the CPU and on the GPU:

    - `math.exp2`: x clamped to [-127, 127], n = round(x), Cephes'
      degree-6 polynomial for 2^(x-n), 2^n built in the exponent bits;
      x <= -127 (and -inf) gives exactly 0, NaN gives NaN. About 2 ulp.
    - `math.tanh`: sign(x)·(1 - 2/(2^(2|x|·log2 e) + 1)) with the exp2 above,
      and its odd Taylor polynomial to x⁹ for |x| < 1/4; exactly ±1 for
      large |x|.
    - `math.absf`: the sign bit cleared (`arith.bitcast`, `arith.andi`):
      exact, and no libdevice `__nv_fabsf` in a GPU kernel whose score or
      mask function takes an absolute value.

    Why not the upstream lowerings: on the CPU `math.exp2` becomes a libm
    call per element (no vector form), and `math-polynomial-approximation`
    gives a different function on each target; on NVVM both become
    libdevice calls. Other element types, tensors and other math ops are
    left alone. `attn-cpu-pipeline` runs it right after
    `convert-attn-to-loops`, the GPU pipelines right after
    `convert-attn-to-gpu`, so the unfused reference lowering that follows
    keeps the upstream `math` lowering.

    **Example.** `attn-opt --attn-expand-math` on

    ```mlir
    func.func @f(%x: vector<8xf32>) -> vector<8xf32> {
      %y = math.exp2 %x : vector<8xf32>
      return %y : vector<8xf32>
    }
    ```

    leaves `arith` and `vector.fma` ops only (`arith.fptosi`, six
    `vector.fma`, `arith.shli`, `arith.bitcast`, ...).
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::vector::VectorDialect"];
}

def AttnIsolateAllocaScopes : Pass<"attn-isolate-alloca-scopes"> {
  let summary = "Wrap each memref.alloca_scope in a single-block region in scf.execute_region";
  let description = [{
    `finalize-memref-to-llvm` lowers a `memref.alloca_scope` into blocks
    (a stack save, a branch into the scope's body, a stack restore), which
    is only valid where the enclosing region may hold several blocks; and
    it must run before `convert-scf-to-cf`, since the scope's own region
    must keep one block. The fused CPU kernels open a scope in each
    iteration of a parallel loop (`omp.loop_nest` may hold blocks), but a
    loop the canonicalizer proves to run once is replaced by its body,
    which can leave the scope directly in an `scf.if` or `scf.for` (a
    decode of static shapes inside `attn.sdpa_varlen`'s loop over
    sequences). This pass wraps each scope whose parent op keeps a single
    block in `scf.execute_region no_inline`, whose region may hold blocks
    and which `convert-scf-to-cf` then inlines. `buildLowerToLLVMPipeline`
    runs it before `finalize-memref-to-llvm`. Scopes elsewhere are left
    alone.

    **Example.** `attn-opt --attn-isolate-alloca-scopes` on

    ```mlir
    func.func @f(%c: i1, %buf: memref<4xf32>) {
      scf.if %c {
        memref.alloca_scope {
          %t = memref.alloca() : memref<4xf32>
          memref.copy %buf, %t : memref<4xf32> to memref<4xf32>
        }
      }
      return
    }
    ```

    prints the scope as `scf.execute_region no_inline { memref.alloca_scope
    { ... } scf.yield }` inside the `scf.if`.
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect"];
}

def AttnResultDestinations : Pass<"attn-result-destinations", "::mlir::ModuleOp"> {
  let summary = "Let the caller's buffers receive the results of public functions";
  let description = [{
    A bufferised function returns each result in a buffer it allocated; the
    runtime then copied it into the caller's output (a NumPy array, a torch
    tensor): one more pass over every output. This pass gives each public
    function of the module that no other function calls one more argument
    per result, a *destination* of the result's type, after its own
    arguments. Where a result is a `memref.alloc` of the function's body
    (with an identity layout, possibly through `memref.cast`, returned once
    and never deallocated) the allocation becomes

    ```
    %use = <dest's aligned pointer is not null, and its dynamic sizes are the alloc's>
    %buf = scf.if %use -> memref<...> { scf.yield %dest } else { memref.alloc(...) }
    ```

    so the kernel writes into the caller's buffer and returns it; with a
    null destination (or other sizes) it allocates as before. A result
    that is not such an allocation (an argument returned as it is, a view)
    leaves its destination unused. The runtime (`CompiledFunction`) passes
    a destination only where the output is row-major, dense and overlaps
    no input, and copies a result only when the returned buffer is not its
    destination. The JIT's CPU pipeline runs it (`result-destinations`),
    and so does `attn-aot` for cpu kernels, whose C signatures stay as they
    were: `attn_aot_call` passes the outputs the caller gave by the same
    rule (the kernel record's `result_destinations`).

    **Example.** `attn-opt --attn-result-destinations` on

    ```mlir
    func.func @f(%n: index) -> memref<?xf32> {
      %a = memref.alloc(%n) : memref<?xf32>
      return %a : memref<?xf32>
    }
    ```

    gives `@f(%n: index, %dest: memref<?xf32>)`, which returns `%dest`
    when it is not null and holds `%n` elements.
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect", "::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect"];
}

def AttnOpenMPSchedule : Pass<"attn-openmp-schedule"> {
  let summary = "Give every unscheduled omp.wsloop a schedule (guided by default)";
  let description = [{
    `convert-scf-to-openmp` emits `omp.wsloop` without a `schedule` clause,
    which the OpenMP runtime runs as `static`: each thread gets one equal,
    contiguous share of the iterations, decided up front. When threads do
    not run at the same speed (a shared or virtualised host that takes a
    core away for a while, or iterations of unequal cost) the fastest waits
    at the loop's end for the slowest. This pass sets `schedule(kind)` on
    every `omp.wsloop` that has no schedule yet; loops that have one are
    left alone.

    `guided` (the default) hands out chunks of iterations that shrink with
    what is left (the first are about remaining / (2 · threads)), so a loop
    of many tiny iterations costs a few runtime calls per thread while the
    last chunks still even out the threads; `dynamic` hands them out one by
    one; `static` makes the default explicit. `attn-cpu-pipeline` runs it
    with `guided` right after `convert-scf-to-openmp`, so that a thread the
    host slows down no longer holds the others at the end of every loop
    (docs/cpu.md, *Why OpenMP*; measured in bench/NOTES.md, 2026-12-01).

    **Example.** `attn-opt --attn-openmp-schedule=kind=dynamic` on

    ```mlir
    func.func @f(%n: index, %buf: memref<?xf32>) {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %one = arith.constant 1.0 : f32
      omp.parallel {
        omp.wsloop {
          omp.loop_nest (%i) : index = (%c0) to (%n) step (%c1) {
            memref.store %one, %buf[%i] : memref<?xf32>
            omp.yield
          }
        }
        omp.terminator
      }
      return
    }
    ```

    prints the loop as `omp.wsloop schedule(dynamic) { ... }`.
  }];
  let options = [
    Option<"kind", "kind", "std::string", /*default=*/"\"guided\"",
           "static, dynamic or guided">
  ];
  let dependentDialects = ["::mlir::omp::OpenMPDialect"];
}

def AttnDifferentiate : Pass<"attn-differentiate", "::mlir::ModuleOp"> {
  let summary = "Build each attn function's vector-Jacobian product function";
  let description = [{
    Reverse-mode differentiation of functions written with attn ops. For
    each function `@f(x₁ … xₙ) -> (y₁ … yₘ)` it differentiates, it adds

    ```
    @f_grad(x₁ … xₙ, dy₁ … dyₘ) -> (dx for each floating-point tensor xᵢ)
    ```

    the gradients of `Σⱼ ⟨yⱼ, dyⱼ⟩` with respect to the floating-point
    tensor arguments, in argument order (a mask or key lengths gets none; an
    argument that does not reach a result gets zeros; an argument with the
    unit attribute `attn.no_grad` is a constant and gets none). The body is the
    forward, cloned, `attn.mha` decomposed into projections around an
    `attn.sdpa`, then each op's vector-Jacobian product from its
    `DifferentiableOpInterface` rule, last op first, adjoints of values used
    twice added. Rules: `attn.sdpa` (its `attn.sdpa_grad`, with the forward
    recomputed as `attn.sdpa_partial` for its log-sum-exp; with f32
    operands that forward replaces the original), `attn.project`,
    `attn.split_heads`, `attn.merge_heads`, `attn.rope` (and its tables),
    `attn.scores`, `attn.scale`, `attn.softcap`, `attn.mask` (and an
    additive mask operand), `attn.mask_mod`, `attn.softmax`,
    `attn.dropout` (the same elements dropped, from the seed) and
    `attn.weighted_sum`; `attn.mha` through them (an `attn.sdpa` with
    dropout keeps its rate and seed on `attn.sdpa_partial` and
    `attn.sdpa_grad`; with sinks, the sinks' gradient beside it), and an
    `attn.sdpa` with a mask or score function through its primitive chain,
    whose `attn.score_mod` is differentiated by forward-mode rules on its
    body into a derivative score function (and a float capture computed
    from the arguments, a learned bias table, gets the scores' adjoints
    times the body's derivative by each read, scattered to the element
    read). Any other op on the path from an argument to a result is an
    error naming it (non-attn ops, a float op in a score function without
    a rule). docs/training.md.

    **Example.** `attn-opt --attn-differentiate` on

    ```mlir
    func.func @attention(%q: tensor<1x4x16x8xf32>, %k: tensor<1x4x16x8xf32>,
                         %v: tensor<1x4x16x8xf32>) -> tensor<1x4x16x8xf32> {
      %o = attn.sdpa %q, %k, %v {causal = #attn.causal<top_left>}
          : (tensor<1x4x16x8xf32>, tensor<1x4x16x8xf32>, tensor<1x4x16x8xf32>)
            -> tensor<1x4x16x8xf32>
      return %o : tensor<1x4x16x8xf32>
    }
    ```

    adds `@attention_grad(%q, %k, %v, %do)` returning `(dq, dk, dv)` from
    one `attn.sdpa_partial` and one `attn.sdpa_grad`.
  }];
  let options = [
    Option<"functions", "functions", "std::string", /*default=*/"\"\"",
           "comma-separated names of the functions to differentiate; empty: "
           "every function with a body that holds an attn op">
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
}

def AttnEmulateAmx : Pass<"attn-emulate-amx", "::mlir::ModuleOp"> {
  let summary = "Run AMX tile operations as vector code on any CPU";
  let description = [{
    Rewrites the `amx` dialect's tile operations into `vector` and `memref`
    operations with the same results, so that code written for Intel AMX
    (the bf16 prefill tiles and projections of `convert-attn-to-loops{amx}`) runs, and is
    checked against a reference, on a CPU without AMX. Each
    `!amx.tile<R x C x T>` becomes a `vector<R x C x T>`:

    | op | becomes |
    |---|---|
    | `amx.tile_zero` | a zero constant |
    | `amx.tile_load %m[%i, %j]` | R `vector.load`s of rows `%i + r`, bitcast where the memref's element type is not the tile's (bf16 pairs kept as i32) |
    | `amx.tile_store %m[%i, %j], %t` | R `vector.store`s |
    | `amx.tile_mulf %a, %b, %c` (bf16 or f16 pairs) | `c[m][n] += a[m][2p]·b[p][2n] + a[m][2p+1]·b[p][2n+1]` over each pair p, as f32 FMAs, in an `scf.for` over the rows m (a and c in stack buffers of a `memref.alloca_scope`) |

    The sums are f32 FMAs in pair order; the hardware's `tdpbf16ps` rounds
    as it sums and flushes denormal inputs, so results agree to the bf16
    tolerances, not bit for bit. `amx.tile_muli`, and loads and stores with
    an explicit stride operand, are not emulated: the pass fails on them
    with an error. The JIT's cpu pipeline runs this pass when asked to
    (`emulate-amx`; `attn-run --amx --emulate-amx`): the AMX path's
    packing, tile indices and reduction order are then tested on every
    host, and only the instruction selection (`test/Aot/amx.mlir`) needs
    none.

    **Example.** `attn-opt --attn-emulate-amx` on

    ```mlir
    func.func @zero(%m: memref<16x16xf32>) {
      %c0 = arith.constant 0 : index
      %z = amx.tile_zero : !amx.tile<16x16xf32>
      amx.tile_store %m[%c0, %c0], %z : memref<16x16xf32>, !amx.tile<16x16xf32>
      return
    }
    ```

    stores sixteen zero rows with `vector.store`.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::vector::VectorDialect",
                           "::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect"];
}

#endif // ATTN_TRANSFORMS_PASSES_TD
