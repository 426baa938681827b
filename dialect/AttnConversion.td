//===- AttnConversion.td - attn lowering passes -------------*- tablegen -*-===//
#ifndef ATTN_CONVERSION_TD
#define ATTN_CONVERSION_TD

include "mlir/Pass/PassBase.td"

def ConvertAttnToLinalg : Pass<"convert-attn-to-linalg"> {
  let summary = "Lower the primitive attn ops to linalg on tensors (the reference)";
  let description = [{
    The deliberately unfused reference lowering: every primitive op becomes
    one or more `linalg` ops on tensors, and the scores are materialised as
    a `[B,H,Tq,Tk]` tensor. Dynamic dims come from `tensor.dim` (through
    the ops' shape reification). Composite ops (`sdpa`, `mha`) must be
    decomposed first (`attn-decompose`); the pass fails on any attn op left
    over. f16/bf16 ops compute and accumulate in f32 and round once at the
    end of each op.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
}

def ConvertAttnToLoops : Pass<"convert-attn-to-loops"> {
  let summary = "Lower attn.sdpa to fused FlashAttention-2 loops and attn.project to tiled matmuls (CPU)";
  let description = [{
    Each f32 `attn.sdpa` with static head dims and no dropout becomes one
    fused loop nest on buffers: an `scf.parallel` over (batch, head, Q
    tile), and inside it a loop over K/V tiles with the online softmax
    (running max, running sum, rescaled accumulator, one division at the
    end). `scale·log2(e)` is folded into Q and the exponentials are
    `exp2` through a vectorised polynomial. Causal tiles entirely above the
    diagonal are never visited; only tiles crossing the diagonal, the last
    (partial) K tile and masked tiles pay for masking. GQA reads the shared
    K/V head in place. No `Tq×Tk` buffer exists: the per-thread scratch is
    `O(tile-q·tile-k + tile-q·Dv + D·tile-k)`.

    Each f32 `attn.project` whose output width is a multiple of
    2 x vector-width (and with at most one dynamic leading dim) becomes a
    tiled matmul: W packed once as Wt[i][o], 4 rows x 2 vectors of outputs
    in registers, rows in parallel.

    Any other `attn.sdpa` or `attn.project` (f16/bf16, dropout, dynamic head
    dims, other widths) is left alone for the reference lowering.
  }];
  let options = [
    Option<"tileQ", "tile-q", "int64_t", /*default=*/"64",
           "Query rows per tile (a multiple of 4)">,
    Option<"tileK", "tile-k", "int64_t", /*default=*/"64",
           "Keys per tile (a multiple of 2 x vector-width)">,
    Option<"vectorWidth", "vector-width", "int64_t", /*default=*/"8",
           "f32 lanes per vector (8 for AVX2)">
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::vector::VectorDialect",
                           "::mlir::bufferization::BufferizationDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
}

#endif // ATTN_CONVERSION_TD
