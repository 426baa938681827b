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

#endif // ATTN_CONVERSION_TD
