//===- AttnOpBase.td - what every attn op shares -----------*- tablegen -*-===//
//
// Shapes: B batch, H query heads, Hkv key/value heads, Tq/Tk query/key
// lengths, D head dim, Dv value head dim. Every rule the verifier can check
// it checks in C++ (AttnOps.cpp), naming the operand and the dim.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_OP_BASE_TD
#define ATTN_OP_BASE_TD

include "AttnDialect.td"
include "AttnAttrs.td"
include "AttnInterfaces.td"
include "mlir/IR/OpBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

// f64 is for checking (torch.autograd.gradcheck, finite differences): the
// reference lowering computes it in f64; the fused kernels take f32, f16
// and bf16.
def Attn_FloatTensor : RankedTensorOf<[F32, F16, BF16, F64]>;
def Attn_MaskTensor : RankedTensorOf<[I1, F32, F16, BF16, F64]>;
// What attention accumulates in and its partial results are kept in: f32,
// f64 for f64 operands.
def Attn_AccTensor : RankedTensorOf<[F32, F64]>;
def Attn_SlopesTensor : RankedTensorOf<[F32], [], "ALiBi slopes: a ranked tensor">;
def Attn_SinksTensor : RankedTensorOf<[F32], [], "attention sinks: a ranked tensor">;
def Attn_LengthsTensor : RankedTensorOf<[I32, I64], [], "key lengths: a ranked tensor">;
// A run-time dropout seed: tensor<i64> (buildable, so `seed(%s)` needs no type).
def Attn_SeedTensor : 0DTensorOf<[I64]>,
    BuildableType<"::mlir::RankedTensorType::get({}, $_builder.getIntegerType(64))">;

// Ops whose result shape follows from their operands: InferTypeOpInterface
// gives the result type (builders without a result type use it), the
// verifier checks a declared one with a message naming the dim, and dynamic
// dims are reifiable.
class Attn_ShapedOp<string mnemonic, list<Trait> traits = []>
    : Attn_Op<mnemonic, !listconcat(traits, [Pure,
        InferTypeOpAdaptor,
        DeclareOpInterfaceMethods<ReifyRankedShapedTypeOpInterface,
                                  ["reifyResultShapes"]>])> {
  let hasVerifier = 1;
}

#endif // ATTN_OP_BASE_TD
