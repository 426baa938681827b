//===- Passes.td - attn lowering passes ---------------------*- tablegen -*-===//
//
// Each option's default is written here once: the generated
// Convert...Options structs carry it to the pipelines, the JIT, the C++
// API and attn-run.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_CONVERSION_PASSES_TD
#define ATTN_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertAttnToLinalg : Pass<"convert-attn-to-linalg"> {
  let summary = "Lower the primitive attn ops to linalg on tensors (the reference)";
  let description = [{
    The deliberately unfused reference lowering: every primitive op becomes
    one or a few `linalg` ops on tensors, and the scores are materialised as
    a `[B,H,Tq,Tk]` tensor. Dynamic sizes come from `tensor.dim` through the
    ops' shape reification. Composite ops (`sdpa`, `mha`) must be decomposed
    first (`attn-decompose`); the pass fails on any attn op left over.

    | op | becomes |
    |---|---|
    | `project` | `y[l…,o] = b[o] + Σᵢ x[l…,i]·W[o,i]` (`W[i,o]` for `in_out`): a `linalg.generic` contraction into an accumulator initialised with the broadcast bias (or a `linalg.fill` of 0) |
    | `split_heads` | `tensor.expand_shape` `[B,T,h·D] → [B,T,h,D]`, then `linalg.transpose` `(0,2,1,3)` |
    | `merge_heads` | `linalg.transpose` `(0,2,1,3)`, then `tensor.collapse_shape` to `[B,T,h·D]` |
    | `scores` | `S[b,h,i,j] = Σ_d Q[b,h,i,d]·K[b,h floordiv G,j,d]`, `G = H/Hkv`: a `linalg.fill` of 0 and a 5-loop `linalg.generic` |
    | `weighted_sum` | `O[b,h,i,e] = Σ_j P[b,h,i,j]·V[b,h floordiv G,j,e]`, same form |
    | `scale` | elementwise `c·x` |
    | `softcap` | elementwise `c·tanh(x/c)` (`math.tanh`, in f32) |
    | `mask` | one elementwise `linalg.generic`: the ALiBi bias `-slope·|i + L - Tq - j|` and an additive mask `x + m` first, then `-inf` where a keep rule fails: `select(keep, x, -inf)` for an i1 mask (mask read through a broadcasting map: a static-1 dim reads index 0), `j >= L` for key lengths (`L` = the length clamped to `[0, Tk]`), `j > d(i)` for causal and `j < d(i) - left` / `j > d(i) + right` for a window, with `d(i) = i` (`top_left`) or `i + L - Tq` (`bottom_right`), using `linalg.index` |
    | `rope` | one elementwise `linalg.generic` over `[B,H,T,D]` reading the element, its rotation partner and the `cos`/`sin` entries through affine maps (dims `>= R` copied) |
    | `softmax` | three generics: the row max `m`; `s = Σ exp(x - m)`; `p = exp(x - m)/s`. Where `m = -inf` (the whole row is masked) the terms and the result are 0, not NaN |
    | `dropout` | one elementwise generic computing the generator of `attn.dropout` (see the op reference) from the element's row-major flat index |
    | `gather_pages` | one `linalg.generic` over `[B,Hkv,MB·BS,D]`: `tensor.extract` of the block id `table[b, j / BS]` (clamped into `[0, NB)`), then of the cache row `j mod BS`, inside an `scf.if` that gives 0 for `j >= len[b]` |
    | `score_mod` / `mask_mod` | one elementwise `linalg.generic` with the function's body inlined: `linalg.index` 0–3 for `(b, h, q, kv)`, captures read by `tensor.extract` at indices clamped into their shape, f16/bf16 scores widened to f32 and rounded after; a mask function gives `select(keep, x, -inf)` |

    **Example.** Scores with GQA, and a bottom-right causal mask with a
    key-padding keep mask on dynamic shapes:

    ```mlir
    func.func @scores_gqa(%q: tensor<1x4x3x8xf32>, %k: tensor<1x2x5x8xf32>) -> tensor<1x4x3x5xf32> {
      %s = attn.scores %q, %k : (tensor<1x4x3x8xf32>, tensor<1x2x5x8xf32>) -> tensor<1x4x3x5xf32>
      return %s : tensor<1x4x3x5xf32>
    }
    func.func @mask_br(%s: tensor<?x4x?x?xf32>, %keep: tensor<?x1x1x?xi1>) -> tensor<?x4x?x?xf32> {
      %y = attn.mask %s, %keep {causal = #attn.causal<bottom_right>} : tensor<?x4x?x?xf32>, tensor<?x1x1x?xi1>
      return %y : tensor<?x4x?x?xf32>
    }
    ```

    `attn-opt --convert-attn-to-linalg` gives (the GQA head map is
    `d1 floordiv 2`; the bottom-right offset `Tk - Tq` is computed once from
    `tensor.dim`):

    ```mlir
    #map = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
    #map1 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1 floordiv 2, d3, d4)>
    #map2 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
    #map3 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
    #map4 = affine_map<(d0, d1, d2, d3) -> (d0, 0, 0, d3)>
    module {
      func.func @scores_gqa(%arg0: tensor<1x4x3x8xf32>, %arg1: tensor<1x2x5x8xf32>) -> tensor<1x4x3x5xf32> {
        %0 = tensor.empty() : tensor<1x4x3x5xf32>
        %cst = arith.constant 0.000000e+00 : f32
        %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<1x4x3x5xf32>) -> tensor<1x4x3x5xf32>
        %2 = linalg.generic {indexing_maps = [#map, #map1, #map2], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%arg0, %arg1 : tensor<1x4x3x8xf32>, tensor<1x2x5x8xf32>) outs(%1 : tensor<1x4x3x5xf32>) {
        ^bb0(%in: f32, %in_0: f32, %out: f32):
          %3 = arith.mulf %in, %in_0 : f32
          %4 = arith.addf %out, %3 : f32
          linalg.yield %4 : f32
        } -> tensor<1x4x3x5xf32>
        return %2 : tensor<1x4x3x5xf32>
      }
      func.func @mask_br(%arg0: tensor<?x4x?x?xf32>, %arg1: tensor<?x1x1x?xi1>) -> tensor<?x4x?x?xf32> {
        %c0 = arith.constant 0 : index
        %dim = tensor.dim %arg0, %c0 : tensor<?x4x?x?xf32>
        %c2 = arith.constant 2 : index
        %dim_0 = tensor.dim %arg0, %c2 : tensor<?x4x?x?xf32>
        %c3 = arith.constant 3 : index
        %dim_1 = tensor.dim %arg0, %c3 : tensor<?x4x?x?xf32>
        %0 = arith.subi %dim_1, %dim_0 : index
        %1 = tensor.empty(%dim, %dim_0, %dim_1) : tensor<?x4x?x?xf32>
        %2 = linalg.generic {indexing_maps = [#map3, #map4, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg0, %arg1 : tensor<?x4x?x?xf32>, tensor<?x1x1x?xi1>) outs(%1 : tensor<?x4x?x?xf32>) {
        ^bb0(%in: f32, %in_2: i1, %out: f32):
          %cst = arith.constant 0xFF800000 : f32
          %3 = linalg.index 2 : index
          %4 = linalg.index 3 : index
          %5 = arith.addi %3, %0 : index
          %6 = arith.cmpi sgt, %4, %5 : index
          %7 = arith.select %in_2, %in, %cst : f32
          %8 = arith.select %6, %cst, %7 : f32
          linalg.yield %8 : f32
        } -> tensor<?x4x?x?xf32>
        return %2 : tensor<?x4x?x?xf32>
      }
    }
    ```

    `attn.softmax` on `tensor<2x8xf32>`: the last two of its three generics
    (the first is the row max):

    ```
        %5 = linalg.generic {indexing_maps = [#map, #map1, #map1], iterator_types = ["parallel", "reduction"]} ins(%arg0, %2 : tensor<2x8xf32>, tensor<2xf32>) outs(%4 : tensor<2xf32>) {
        ^bb0(%in: f32, %in_1: f32, %out: f32):
          %8 = arith.subf %in, %in_1 : f32
          %9 = math.exp %8 : f32
          %cst_2 = arith.constant 0xFF800000 : f32
          %10 = arith.cmpf oeq, %in_1, %cst_2 : f32
          %cst_3 = arith.constant 0.000000e+00 : f32
          %11 = arith.select %10, %cst_3, %9 : f32
          %12 = arith.addf %out, %11 : f32
          linalg.yield %12 : f32
        } -> tensor<2xf32>
        %6 = tensor.empty() : tensor<2x8xf32>
        %7 = linalg.generic {indexing_maps = [#map, #map1, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0, %2, %5 : tensor<2x8xf32>, tensor<2xf32>, tensor<2xf32>) outs(%6 : tensor<2x8xf32>) {
        ^bb0(%in: f32, %in_1: f32, %in_2: f32, %out: f32):
          %8 = arith.subf %in, %in_1 : f32
          %9 = math.exp %8 : f32
          %10 = arith.divf %9, %in_2 : f32
          %cst_3 = arith.constant 0xFF800000 : f32
          %11 = arith.cmpf oeq, %in_1, %cst_3 : f32
          %cst_4 = arith.constant 0.000000e+00 : f32
          %12 = arith.select %11, %cst_4, %10 : f32
          linalg.yield %12 : f32
        } -> tensor<2x8xf32>
    ```

    **f16 and bf16: compute in f32.** For `f16` and `bf16` ops every input
    element is extended to `f32` (`arith.extf`), the op computes and
    accumulates in `f32`, and the result is rounded once (`arith.truncf`) at
    the end of the op. Contractions (`project`, `scores`, `weighted_sum`)
    accumulate into an `f32` tensor and round it with a final elementwise
    generic; softmax keeps its row max and sum in `f32`. A chain of ops
    therefore rounds to `f16`/`bf16` between ops, as the IR says, and not
    inside them. `attn.scale %x {scale = 0.125 : f32} : tensor<2x8xf16>`
    becomes:

    ```
      func.func @scale_f16(%arg0: tensor<2x8xf16>) -> tensor<2x8xf16> {
        %0 = tensor.empty() : tensor<2x8xf16>
        %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0 : tensor<2x8xf16>) outs(%0 : tensor<2x8xf16>) {
        ^bb0(%in: f16, %out: f16):
          %2 = arith.extf %in : f16 to f32
          %cst = arith.constant 1.250000e-01 : f32
          %3 = arith.mulf %2, %cst : f32
          %4 = arith.truncf %3 : f32 to f16
          linalg.yield %4 : f16
        } -> tensor<2x8xf16>
        return %1 : tensor<2x8xf16>
      }
    ```

    **Dropout.** `attn.dropout %p {rate = 0.1 : f32, seed = 42 : i64}` on
    `tensor<2x8xf32>` computes the generator inline (the 64-bit constants
    print as signed integers):

    ```
        ^bb0(%in: f32, %out: f32):
          %2 = linalg.index 0 : index
          %3 = linalg.index 1 : index
          %4 = arith.muli %2, %c8 : index
          %5 = arith.addi %4, %3 : index
          %6 = arith.index_cast %5 : index to i64
          %c42_i64 = arith.constant 42 : i64
          %c1_i64 = arith.constant 1 : i64
          %7 = arith.addi %6, %c1_i64 : i64
          %c-7046029254386353131_i64 = arith.constant -7046029254386353131 : i64
          %8 = arith.muli %7, %c-7046029254386353131_i64 : i64
          %9 = arith.addi %c42_i64, %8 : i64
          ...
          %c40_i64 = arith.constant 40 : i64
          %18 = arith.shrui %17, %c40_i64 : i64
          %c1677722_i64 = arith.constant 1677722 : i64
          %19 = arith.cmpi uge, %18, %c1677722_i64 : i64
          %cst = arith.constant 1.11111116 : f32
          %20 = arith.mulf %in, %cst : f32
          %cst_0 = arith.constant 0.000000e+00 : f32
          %21 = arith.select %19, %20, %cst_0 : f32
          linalg.yield %21 : f32
    ```

    **Refusals.** `attn.sdpa` and `attn.mha` are not lowered here; run
    `attn-decompose` first (the `note: see current operation: …` line that
    follows each error is left out):

    ```mlir
    func.func @sdpa(%q: tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32> {
      %o = attn.sdpa %q, %q, %q : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32>
      return %o : tensor<1x2x3x4xf32>
    }
    ```

    ```
    $ attn-opt sdpa.mlir --convert-attn-to-linalg
    sdpa.mlir:2:8: error: 'attn.sdpa' op must be decomposed before convert-attn-to-linalg (run attn-decompose first)
      %o = attn.sdpa %q, %q, %q : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32>
           ^
    ```

    `scores` and `weighted_sum` need static head counts (the key/value head
    map `h floordiv (H/Hkv)` is an affine map with a constant):

    ```mlir
    func.func @dynamic_heads(%q: tensor<1x?x3x4xf32>, %k: tensor<1x2x5x4xf32>) -> tensor<1x?x3x5xf32> {
      %s = attn.scores %q, %k : (tensor<1x?x3x4xf32>, tensor<1x2x5x4xf32>) -> tensor<1x?x3x5xf32>
      return %s : tensor<1x?x3x5xf32>
    }
    ```

    ```
    $ attn-opt dynamic_heads.mlir --convert-attn-to-linalg
    dynamic_heads.mlir:2:8: error: 'attn.scores' op needs static head counts for convert-attn-to-linalg, got H = ?, Hkv = 2
      %s = attn.scores %q, %k : (tensor<1x?x3x4xf32>, tensor<1x2x5x4xf32>) -> tensor<1x?x3x5xf32>
           ^
    ```

    Batch, sequence and head-dim sizes may be dynamic.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::scf::SCFDialect"];
}

def ConvertAttnToLoops : Pass<"convert-attn-to-loops"> {
  let summary = "Lower attn.sdpa to fused FlashAttention-2 loops and attn.project to tiled matmuls (CPU)";
  let description = [{
    Each `attn.sdpa` (f32, f16 or bf16 operands) with static head counts
    and head dims and no dropout becomes one fused loop nest on buffers: an `scf.parallel` over (batch, head, Q
    tile), and inside it a loop over K/V tiles with the online softmax
    (running max, running sum, rescaled accumulator, one division at the
    end). `scale·log2(e)` is folded into Q and the exponentials are
    `exp2` through a vectorised polynomial. Causal tiles entirely above the
    diagonal are never visited; only tiles crossing the diagonal, the last
    (partial) K tile and masked tiles pay for masking. GQA reads the shared
    K/V head in place. No `Tq×Tk` buffer exists: the per-thread scratch is
    `O(tile-q·tile-k + tile-q·Dv + D·tile-k)`. f16 and bf16 operands are
    converted to f32 as the tiles are packed (everything is computed in
    f32) and the output is rounded once.

    `attn.sdpa_partial` takes the same kernel and also writes each row's
    log-sum-exp, `ln2·m + ln l` from the tile state (merged over the splits
    when the keys are split); `attn.merge_partial` becomes one parallel loop
    over the rows (the merged lse and two weights per row, then
    `w1·O1 + w2·O2` in vectors).

    Register blocking follows `vector-width`: at 16 lanes (AVX-512, 32
    vector registers) the two microkernels keep 8 rows x 2 vectors of
    accumulators, at 8 lanes (AVX2, 16 registers) 4 rows x 2. K tiles are
    transposed w x w at a time in registers (w·log2 w shuffles per block)
    when D and tile-k are multiples of the width. P·V reads an f32 V whose
    Dv is a multiple of the width in place (f16/bf16 V and other Dv are
    copied per tile). When B, Tq and Tk are static, Tq is above tile-q and
    the f32 copy of K fits `prepack-limit-mib` (32 MiB by default), the
    keys are transposed once per call by a first parallel loop into a
    `[B, Hkv, K/V tiles, D, tile-k]` buffer whose tile slices every Q tile
    reads; otherwise each Q tile transposes the K/V tiles it visits.

    Decode and short queries: when the static Tq is below `tile-q`, a Q tile
    holds the `G·Tq` rows of the G query heads that share one K/V head (GQA
    group), rounded up to the row block, so every K/V tile is read once per
    group. When there are fewer work items (K/V head x batch x [query head]
    x Q tile) than `min-work-items`, each tile's keys are split into runs of
    at least 4 K/V tiles that run in parallel (flash-decoding): each split
    keeps its (m, l, acc), and a second parallel loop merges them with the
    online-softmax rule; the split states are the only heap scratch,
    `splits x items x tile-q x (Dv + 2)` floats.

    The attention variants are computed in the kernel, each rule once in
    the shared FlashAttention core: `softcap` (`c·tanh(s/c)` on the score
    registers, tanh built from the same `exp2`), ALiBi (`-slope·|i + L -
    Tq - j|` added to the scores) and the keep rules. A sliding window and
    key lengths bound the K/V tile loop of each Q tile: it runs from the
    first tile holding a key visible to any of its rows to the last one, so
    tiles outside the window (on both sides) and past a batch row's key
    length are never loaded, and the work of a window of `W` keys is
    `O(T·W)`. Key lengths are clamped to `[0, Tk]` in the kernel.

    Score and mask functions (the `score_mod` / `mask_mod` regions of
    `attn.sdpa`) are cloned into the kernel lane-wide: the score function
    on the score registers after the softcap (in natural units), the mask
    function after the mask operand, with `kv` a vector of key positions
    and captures read as scalars, contiguous vectors (`±kv + offset`),
    gathers or lane by lane, every index clamped. A mask function is first
    evaluated on intervals per (Q tile, K/V tile) where its body allows
    (integer arithmetic and compares on positions, 1-D integer captures
    bounded by their min and max): a tile it keeps nothing of is skipped,
    one it keeps whole is not masked per element.

    K and V that come from `attn.gather_pages` with one block table and
    layout (and lengths, if any, that are the sdpa's key lengths) are read
    in place from the paged caches: each key row's address is block
    `table[b, key / BS]` (clamped into `[0, NB)`), row `key mod BS`; the
    gathers are left dead. Any other gather is built by the reference
    lowering first.

    Each f32, f16 or bf16 `attn.project` (computed in f32, output rounded
    once) with static input and output widths, the output width a multiple
    of 2 x vector-width, becomes a tiled matmul (two or more dynamic
    leading dims are not collapsed: each row's index is delinearised): W packed once per call into panels of 2 vectors of
    outputs (w x w blocks transposed in registers), then 12 (16 lanes) or 4
    rows x 2 vectors of outputs in registers, parallel over (chunk of at
    most 256 rows, panel); rows known to fit one chunk pack each panel on
    the stack of the one item that uses it.

    Any other `attn.sdpa` (dropout, dynamic head counts or head dims) or
    `attn.project` (other widths) is left alone for the reference
    lowering.
  }];
  let options = [
    Option<"tileQ", "tile-q", "int64_t", /*default=*/"64",
           "Query rows per tile (a multiple of 4)">,
    Option<"tileK", "tile-k", "int64_t", /*default=*/"64",
           "Keys per tile (a multiple of 2 x vector-width)">,
    Option<"vectorWidth", "vector-width", "int64_t", /*default=*/"8",
           "f32 lanes per vector (8 for AVX2, 16 for AVX-512)">,
    Option<"reportUnfused", "report-unfused", "bool", /*default=*/"false",
           "Emit a remark at each attn.sdpa (and each primitive chain) left "
           "to the unfused reference lowering, and at each attn.project the "
           "packed-panel kernel does not take, with the reason">,
    Option<"minWorkItems", "min-work-items", "int64_t", /*default=*/"0",
           "Split the keys of each Q tile across threads when an sdpa has "
           "fewer work items than this (0 or 1: never split; attn-run and "
           "the compile-and-call API use 2 x threads)">,
    Option<"prepackLimitMiB", "prepack-limit-mib", "int64_t", /*default=*/"32",
           "The most MiB the keys transposed once per call (an f32 copy of "
           "K, static shapes only) may take; a larger problem, or 0, packs "
           "the keys per Q tile and K/V tile">,
    Option<"bf16Dot", "bf16-dot", "bool", /*default=*/"false",
           "bf16 prefill tiles multiply on AVX512-BF16 dot products "
           "(x86vector.avx512.dot: vdpbf16ps, P rounded to bf16) instead of "
           "f32 FMAs after widening; needs 16 lanes, D a multiple of 32, Dv "
           "of 16, tile-k of 32 (otherwise the f32 path). bf16 projections "
           "too, where In is a multiple of 32">,
    Option<"amx", "amx", "bool", /*default=*/"false",
           "bf16 prefill tiles multiply on Intel AMX tiles (amx.tile_mulf: "
           "tdpbf16ps on 16x32 bf16 tiles, P rounded to bf16) instead of "
           "f32 FMAs or bf16 dots; the same layouts and conditions as "
           "bf16-dot, plus tile-q a multiple of 16. Takes precedence over "
           "bf16-dot for the prefill tile. bf16 projections too, where In "
           "is a multiple of 32 (16-row blocks on two sum tiles)">,
    Option<"amxFp16", "amx-fp16", "bool", /*default=*/"false",
           "With amx, f16 prefill tiles multiply on AMX-FP16 tiles "
           "(tdpfp16ps, f32 sums, P rounded to f16) too, and f16 "
           "projections">,
    Option<"avx2", "avx2", "bool", /*default=*/"false",
           "The target has AVX2: at 8 lanes, the w × w transposes that pack "
           "K and the projections' weights take upstream's AVX2 sequence "
           "(x86vector's 8 × 8 transpose, vblendps as inline assembly) "
           "instead of the project's shuffles; the JIT sets it from the "
           "host, attn-aot from --target-cpu">
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::vector::VectorDialect",
                           "::mlir::x86vector::X86VectorDialect",
                           "::mlir::amx::AMXDialect",
                           "::mlir::bufferization::BufferizationDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           // llvm.inline_asm: x86vector's AVX2 8 × 8
                           // transpose blends with vblendps.
                           "::mlir::LLVM::LLVMDialect"];
}


def ConvertAttnToGpu : Pass<"convert-attn-to-gpu"> {
  let summary = "Lower attn.sdpa to a GPU kernel schedule (scf.forall over blocks and threads)";
  let description = [{
    Each `attn.sdpa` (f32, f16 or bf16 operands, static head counts and head
    dims, no dropout) becomes one kernel schedule on buffers, written with
    `scf.forall` loops carrying GPU mappings:

    - an outer `scf.forall` over (batch·head, Q tile) mapped to
      `[#gpu.block<x>, #gpu.block<y>]` (one thread block per pair);
    - inside it, workgroup buffers (`#gpu.address_space<workgroup>`) for
      the transposed Q tile (loaded once per block), the K tile, the V
      tile, the per-row running max and sum and the transposed
      accumulator, and a sequential loop over K/V tiles that
      stops at the causal limit of the Q tile (tiles above the diagonal are
      never loaded);
    - in every step, `scf.forall` loops over `tile-q` threads
      (`#gpu.thread<x>`): cooperative loads of the K/V tile, then one query
      row per thread: scores, mask, online softmax update, `P·V` into the
      accumulator; finally one normalisation per row.

    A thread-level `scf.forall` completes before the next one starts, which
    is exactly the semantics of a barrier between them: the same IR runs on
    the CPU (`attn-emulate-gpu-schedule`) and maps to `gpu.launch` with
    `gpu.barrier` (`attn-map-schedule-to-gpu`). `tile-k` is halved down to
    8, then `tile-q` down to 16, then `tile-k` further, until the workgroup
    buffers fit in 48 KiB of static shared memory. No `Tq×Tk`
    buffer exists. Softcap, ALiBi, sliding windows and key lengths follow
    the same shared rules as the CPU kernel (window and key lengths bound
    the K/V tile loop). Any other sdpa (dropout, dynamic head dims) is
    refused with a diagnostic.

    With `tensor-cores` (the default), an sdpa with f16 or bf16 operands and
    head dims 64 or 128 takes a FlashAttention-2 schedule on tensor cores
    instead: blocks of 4 warps × 16 query rows, one 128-thread loop whose
    threads run in lockstep, Q fragments in registers (`nvgpu.ldmatrix`),
    K/V tiles of 32 keys double-buffered in workgroup memory by cp.async
    (`nvgpu.device_async_copy`, commit/wait as inline PTX) with a swizzle
    against bank conflicts, `nvgpu.mma.sync` m16n8k16 with f32
    accumulators, the online softmax in registers (quad shuffles,
    ex2.approx), P reused in registers as the A operand of P·V. The
    lane ↔ element maps come from `include/attn/GPU/FragmentLayout.h`.
    `report-kernel` remarks at every sdpa that keeps the CUDA-core kernel.

    An `attn.sdpa_partial` (a training step's forward) takes the CUDA-core
    schedule, which then also writes each row's log-sum-exp.

    Each `attn.sdpa_grad` becomes two CUDA-core schedules in the same
    style: a dK/dV kernel (blocks over batch·K/V head and key tiles, one
    key per thread, the group's query heads and the Q tiles that see the
    tile walked inside) and a dQ kernel (blocks over batch·head and Q
    tiles, one query row per thread), each gradient element summed by one
    thread in a fixed order (deterministic, no atomics), their workgroup
    buffers shrunk to fit 48 KiB. An sdpa_partial or sdpa_grad the kernels
    do not take (dropout, `grad_mask`, paged or int8 K/V, f64) keeps the
    reference route on the host; `report-kernel` says why.

    With `tf32` (off by default: it trades accuracy for speed), an f32 sdpa
    with head dims 64 or 128 takes the same kernel with TF32 operands:
    `nvgpu.mma.sync` m16n8k8 `tf32Enabled`, Q·Kᵀ and P·V operands rounded
    to 10 mantissa bits (`cvt.rna.tf32.f32`: round to nearest, ties
    away), f32 accumulators and softmax; Q read into registers from
    global memory, K by 32-bit `ldmatrix`, P's accumulators as the A
    operand with each k-step's keys permuted (no data between lanes), V read
    per element from the swizzled tile; 32 keys per tile at head dims 64,
    16 when one is 128. Relative error about that of f16 (2^-11 per
    operand), with f32's range.
  }];
  let options = [
    Option<"tileQ", "tile-q", "int64_t", /*default=*/"64",
           "Query rows per block = threads per block (1..1024; halved to fit 48 KiB)">,
    Option<"tileK", "tile-k", "int64_t", /*default=*/"32",
           "Keys per K/V tile staged in shared memory (halved to fit 48 KiB)">,
    Option<"tensorCores", "tensor-cores", "bool", /*default=*/"true",
           "f16/bf16 sdpa with head dims 64/128 take the mma.sync FlashAttention-2 kernel">,
    Option<"tf32", "tf32", "bool", /*default=*/"false",
           "f32 sdpa with head dims 64/128 take the tensor-core kernel with TF32 "
           "operands (10 mantissa bits; with tensor-cores)">,
    Option<"reportKernel", "report-kernel", "bool", /*default=*/"false",
           "A remark at every sdpa that takes the CUDA-core kernel, with the reason">
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::nvgpu::NVGPUDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::vector::VectorDialect",
                           "::mlir::bufferization::BufferizationDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::attn::ptx::PtxDialect"];
}

def AttnShard : Pass<"attn-shard", "::mlir::ModuleOp"> {
  let summary = "Rewrite a sequence-sharded attn.sdpa into ring attention over MPI";
  let description = [{
    An `attn.sdpa` carrying the discardable attribute
    `attn.ring = #attn.ring<contiguous|striped|zigzag>` (or `attn.ring =
    unit`: zigzag when causal, contiguous otherwise) is computed by P
    ranks (the `ranks` option), each holding its share of the sequence
    (see `#attn.ring`). The pass rewrites the function that holds it:

    - Its query, key and value arguments, a mask argument with a query dim,
      and the result become the rank's local share (`T/P` positions in dim
      2; the mask's query dim likewise, its key dim stays whole). Each
      sharded argument and the result get
      `attn.shard = {dim = 2 : i64, layout = #attn.ring<...>}`, the function
      `attn.ring_ranks = P : i64`: what a runner needs to slice the inputs
      and gather the output.
    - The body runs the ring: the local K/V are copied into one of two
      buffers; for P - 1 steps each rank posts `mpi.isend` of the K/V block
      it holds to rank r+1 and `mpi.irecv` of the next one from rank r-1
      into the other buffer, computes `attn.sdpa_partial` of its Q block(s)
      against the block it holds, merges the result into its running
      `(O, lse)` with `attn.merge_partial`, waits, and swaps the buffers;
      a last step computes against the final block. O is rounded to the
      input type at the end; with `sinks` (replicated: every rank gets the
      whole `[H]`), each row is first merged with its head's sink, a block
      that weighs no value, once: `O · 1/(1 + exp(sink − lse))`.
    - Per step and block the causal rule follows the layout, as a
      diagonal shift passed at run time (`attn.sdpa_partial ...
      diagonal(%s)`: query i of the block sees key j iff j <= i + s): for
      contiguous or zigzag chunks of c rows, s = (query chunk - key
      chunk)·c (an earlier key chunk is seen in full, the same chunk
      causally, a later one is skipped without a call); striped: s = 0
      when r >= the block's owner, -1 otherwise. Without `causal` there is
      no shift and every block is full.
    - The block's `attn.sdpa_partial`, and its write into the query
      block's slabs of the running `(O, lse)` buffers (stored on the query
      block's first block, merged with `attn.merge_partial` after), are
      emitted once, in a private function `@<fn>__ring_block` that takes
      the whole local Q, the K/V buffers, the state buffers and the block's
      offsets and slices them itself (no copy at the call, no result). The
      step loop and the last step each call it from a loop over the block
      pairs: a ring compiles one kernel, not one per step, block or mode.
    - Score and mask functions see global positions: the block's
      `attn.sdpa_partial` carries them with q and kv replaced by
      `base + stride·q` and `base + stride·kv` (the block's first rows as
      one more `tensor<2xindex>` capture, the stride `P` for striped rows
      and 1 for chunks); the sdpa's captures are replicated; a zigzag ring
      with functions attends each rank's two chunks as separate blocks.

    Refused with a diagnostic: a sequence length that the layout cannot
    split (T not a multiple of P, or 2P for zigzag; naming T, P and the
    layout), `causal` with Tq != Tk, dropout, ALiBi, key lengths, a window,
    dynamic shapes, and an sdpa whose query/key/value are not arguments of
    its function used only by it or whose result is used other than by the
    return.
  }];
  let options = [
    Option<"ranks", "ranks", "int64_t", /*default=*/"1",
           "Number of ranks P the sequence is sharded over">
  ];
  let dependentDialects = ["::mlir::attn::AttnDialect",
                           "::mlir::mpi::MPIDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::bufferization::BufferizationDialect",
                           "::mlir::cf::ControlFlowDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
}

def AttnLowerMpi : Pass<"attn-lower-mpi", "::mlir::ModuleOp"> {
  let summary = "Lower the upstream mpi dialect to calls into attn's MPI runtime";
  let description = [{
    Replaces every `mpi` op by a call to a C function of `libattn_mpi`
    (`attn_mpi_isend`, ...), which calls Open MPI (or any MPI: the runtime
    is the only code compiled against `mpi.h`). `!mpi.comm` and
    `!mpi.request` become `i64` handles (communicator 0 is the runtime's own
    duplicate of `MPI_COMM_WORLD`, so a host program's messages never match
    a kernel's), `!mpi.retval` an `i32`: the library's return code where a
    call returns one (`init`, `finalize`, `wait`, `barrier`, `send`,
    `recv`, `allreduce`), `MPI_SUCCESS` for the others (MPI's default error
    handler aborts the job on an error). `retval_check` and `error_class`
    translate the library's error class into the dialect's
    `MPI_ErrorClassEnum` numbering.

    Unlike upstream's `mpi` → LLVM patterns (see `docs/distributed.md`):
    a buffer of any rank moves all its elements (the byte count is the
    product of every dim times the element size, including f16/bf16 as
    2-byte words), at the offset of a subview; a count above 2³¹ - 1 bytes
    is sent in several messages; every op of the dialect is lowered
    (`init`, `finalize`, `comm_world`, `comm_rank`, `comm_size`,
    `comm_split`, `send`, `recv`, `isend`, `irecv`, `wait`, `barrier`,
    `allreduce` on f32/f64/i32/i64, `retval_check`, `error_class`), and the
    pass fails if any `mpi` op is left or a buffer is not contiguous.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect"];
}

#endif // ATTN_CONVERSION_PASSES_TD
