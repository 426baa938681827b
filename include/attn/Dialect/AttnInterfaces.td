//===- AttnInterfaces.td - interfaces of the attn ops ------*- tablegen -*-===//
#ifndef ATTN_INTERFACES_TD
#define ATTN_INTERFACES_TD

include "mlir/IR/OpBase.td"

def Attn_DifferentiableOpInterface : OpInterface<"DifferentiableOpInterface"> {
  let cppNamespace = "::mlir::attn";
  let description = [{
    An op's vector-Jacobian product (reverse-mode derivative): given the
    adjoints (gradients of a scalar loss) of its results, build the
    adjoints of its operands. `attn-differentiate` calls it on every op of
    a function, last to first. The rules of the attn ops are external
    models (lib/Transforms/Differentiate/VjpRules.cpp), registered by
    `registerDifferentiableOpModels` (which the pass does for itself).
  }];
  let methods = [
    InterfaceMethod<[{
        Builds the operands' adjoints at the builder's insertion point:
        `resultAdjoints` has one entry per result (null: the result does
        not reach the loss); `operandAdjoints` receives one per operand
        (null: no gradient flows to it, e.g. a mask). May also insert ops
        right after the op itself (a forward value the backward reuses).
        Fails, with a diagnostic on the op, when the op's configuration has
        no rule (e.g. dropout).
      }], "::llvm::LogicalResult", "buildVjp",
      (ins "::mlir::OpBuilder &":$builder,
           "::llvm::ArrayRef<::mlir::Value>":$resultAdjoints,
           "::llvm::SmallVectorImpl<::mlir::Value> &":$operandAdjoints)>
  ];
}

def Attn_RuntimeSeedOpInterface : OpInterface<"RuntimeSeedOpInterface"> {
  let cppNamespace = "::mlir::attn";
  let description = [{
    An op that draws a dropout mask and may take the generator's seed as a
    run-time `tensor<i64>` operand (`seed(%s)`) instead of a seed
    attribute: attn.dropout, attn.sdpa, attn.mha, attn.sdpa_partial and
    attn.sdpa_grad. Tools that treat seed inputs specially (`attn-run
    --random-inputs` draws them in [0, 2^24)) ask this interface instead
    of listing the ops. The ops implement it with their ODS accessor.
  }];
  let methods = [
    InterfaceMethod<[{
        The run-time seed operand, or null when the seed (if any) is an
        attribute.
      }], "::mlir::Value", "getRuntimeSeed">,
    InterfaceMethod<[{
        The run-time seed operand as a mutable range (empty or one value),
        to give the op a seed operand or take it away.
      }], "::mlir::MutableOperandRange", "getRuntimeSeedMutable">,
    InterfaceMethod<[{
        The name of the seed attribute a run-time seed replaces (the two
        exclude each other): `dropout_seed`, `seed` on attn.dropout.
      }], "::llvm::StringRef", "getSeedAttributeName", (ins), [{}], [{
        return $_op.getDropoutSeedAttrName().getValue();
      }]>
  ];
}

def Attn_CapturingOpInterface : OpInterface<"CapturingOpInterface"> {
  let cppNamespace = "::mlir::attn";
  let description = [{
    An op whose score/mask function regions read run-time tensors, its
    `captures(...)`: attn.sdpa, attn.sdpa_partial, attn.score_mod and
    attn.mask_mod. Each region takes one trailing block argument per
    capture, of the capture's type (the verifier's rule). Code that changes
    the captures' types (the runtime's shape specialiser gives dynamic
    inputs their call's shapes) calls `syncCaptureArgumentTypes` to keep
    that rule.
  }];
  let methods = [
    InterfaceMethod<[{
        The captured tensors, in the order of the regions' trailing block
        arguments.
      }], "::mlir::OperandRange", "getCaptures">,
    InterfaceMethod<[{
        Gives the trailing block arguments of each non-empty region (one
        per capture) the types of the captures.
      }], "void", "syncCaptureArgumentTypes", (ins), /*methodBody=*/[{}],
      /*defaultImplementation=*/[{
        ::mlir::OperandRange captures = $_op.getCaptures();
        if (captures.empty())
          return;
        for (::mlir::Region &region : $_op->getRegions()) {
          if (region.empty() || region.getNumArguments() < captures.size())
            continue;
          auto args = region.getArguments().take_back(captures.size());
          for (auto [arg, capture] : ::llvm::zip(args, captures))
            arg.setType(capture.getType());
        }
      }]>
  ];
}

#endif // ATTN_INTERFACES_TD
