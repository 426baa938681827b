//===- AttnDialect.td - the attn dialect -------------------*- tablegen -*-===//
#ifndef ATTN_DIALECT_TD
#define ATTN_DIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def Attn_Dialect : Dialect {
  let name = "attn";
  let cppNamespace = "::mlir::attn";
  let summary = "Attention as a small language of tensor ops";
  let description = [{
    The `attn` dialect models attention the way PyTorch and the textbooks
    write it: projection, head split/merge, scores, scaling, masking,
    softmax, dropout and the weighted sum, plus the composite `attn.sdpa`
    and `attn.mha` ops. All ops have value semantics on ranked tensors.
  }];
  let dependentDialects = ["::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect"];
  let useDefaultAttributePrinterParser = 1;
  let hasConstantMaterializer = 0;
}

class Attn_Op<string mnemonic, list<Trait> traits = []>
    : Op<Attn_Dialect, mnemonic, traits>;

#endif // ATTN_DIALECT_TD
