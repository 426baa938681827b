//===- AttnToRing.cpp - a sequence-sharded attn.sdpa as ring attention ----===//
//
// attn-shard: each of P ranks keeps its share of the queries; the K/V
// blocks travel around the ring (mpi.isend / mpi.irecv, double-buffered);
// at every step each rank runs attn.sdpa_partial of its queries against
// the block it holds and merges the result into its running (O, lse) with
// attn.merge_partial (the online-softmax rule), so that after P steps it
// holds its exact output rows.
//
// RingBuilder.cpp emits the ring itself.
//
//===----------------------------------------------------------------------===//
#include "RingBuilder.h"

#include "attn/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringMap.h"

// The dialects the pass loads (dependentDialects in Passes.td).
#include "attn/Dialect/AttnDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MPI/IR/MPI.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNSHARD
#include "attn/Conversion/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;
using mlir::attn::ring::RingPlan;

namespace {

constexpr StringLiteral kRingAttr = "attn.ring";
constexpr StringLiteral kShardAttr = "attn.shard";
constexpr StringLiteral kRanksAttr = "attn.ring_ranks";

StringRef layoutName(RingLayout l) { return stringifyRingLayout(l); }

/// Checks `op` and fills `plan`; emits the diagnostic and fails otherwise.
LogicalResult planRing(SdpaOp op, int64_t ranks, RingPlan &plan) {
  plan.op = op;
  plan.ranks = ranks;
  plan.func = op->getParentOfType<func::FuncOp>();
  if (!plan.func)
    return op.emitOpError("attn-shard: a ring-sharded sdpa must be in a func.func");
  Attribute ring = op->getAttr(kRingAttr);
  plan.causal = bool(op.getCausalAttr());
  if (auto l = dyn_cast<RingLayoutAttr>(ring))
    plan.layout = l.getValue();
  else if (isa<UnitAttr>(ring))
    plan.layout = plan.causal ? RingLayout::zigzag : RingLayout::contiguous;
  else
    return op.emitOpError("attn-shard: attribute 'attn.ring' must be "
                          "#attn.ring<contiguous|striped|zigzag> or unit, got ")
           << ring;
  if (FloatAttr rate = op.getDropoutRateAttr(); rate && !rate.getValue().isZero())
    return op.emitOpError("attn-shard: dropout is not supported in ring attention");
  if (op.getAlibiSlopes())
    return op.emitOpError("attn-shard: ALiBi is not supported in ring attention");
  if (op.getKeyLengths())
    return op.emitOpError("attn-shard: key lengths are not supported in ring attention");
  if (WindowAttr w = op.getWindowAttr(); w && !w.isUnbounded())
    return op.emitOpError("attn-shard: a sliding window is not supported in ring attention");
  for (Value v : op->getOperands())
    if (!cast<ShapedType>(v.getType()).hasStaticShape())
      return op.emitOpError("attn-shard: ring attention needs static shapes, got ")
             << v.getType();
  if (!op.getEffectiveScale())
    return op.emitOpError("attn-shard: no scale");
  auto qT = cast<RankedTensorType>(op.getQuery().getType());
  auto kT = cast<RankedTensorType>(op.getKey().getType());
  plan.tq = qT.getDimSize(2);
  plan.tk = kT.getDimSize(2);
  if (plan.causal && plan.tq != plan.tk)
    return op.emitOpError("attn-shard: a causal ring needs Tq == Tk, got Tq = ")
           << plan.tq << ", Tk = " << plan.tk;
  int64_t parts = plan.layout == RingLayout::zigzag ? 2 * ranks : ranks;
  for (auto [name, t] : {std::pair<StringRef, int64_t>{"Tq", plan.tq}, {"Tk", plan.tk}})
    if (t % parts != 0 || t == 0)
      return op.emitOpError("attn-shard: sequence length ")
             << name << " = " << t << " cannot be split over P = " << ranks
             << " ranks with the " << layoutName(plan.layout) << " layout (it needs "
             << name << " to be a positive multiple of "
             << (plan.layout == RingLayout::zigzag ? "2P = " : "P = ") << parts << ")";
  plan.nq = plan.tq / ranks;
  plan.nk = plan.tk / ranks;
  if (Value m = op.getMask()) {
    auto mT = cast<RankedTensorType>(m.getType());
    int64_t r = mT.getRank();
    if (r >= 1 && mT.getDimSize(r - 1) != 1)
      plan.maskKeyDim = r - 1;
    if (r >= 2 && mT.getDimSize(r - 2) != 1)
      plan.maskQueryDim = r - 2;
  }
  bool zig = plan.layout == RingLayout::zigzag;
  // Score and mask functions read global positions: each block must be one
  // chunk of consecutive rows (a zigzag rank's two chunks are not).
  plan.qChunks = zig && (plan.causal || plan.hasMods()) ? 2 : 1;
  plan.kChunks = zig && (plan.causal || plan.maskKeyDim >= 0 || plan.hasMods()) ? 2 : 1;
  plan.cq = plan.nq / plan.qChunks;
  plan.ck = plan.nk / plan.kChunks;

  // The sharded operands are the function's arguments, used only here; the
  // result is only returned.
  Block &entry = plan.func.getBody().front();
  auto ownArgument = [&](StringRef name, Value v) -> LogicalResult {
    auto arg = dyn_cast<BlockArgument>(v);
    if (!arg || arg.getOwner() != &entry || !v.hasOneUse())
      return op.emitOpError("attn-shard: operand '")
             << name << "' of a ring-sharded sdpa must be an argument of "
             << "its function used only by it";
    return success();
  };
  if (failed(ownArgument("query", op.getQuery())) ||
      failed(ownArgument("key", op.getKey())) ||
      failed(ownArgument("value", op.getValue())) ||
      (plan.maskQueryDim >= 0 && failed(ownArgument("mask", op.getMask()))))
    return failure();
  for (Operation *user : op->getUsers())
    if (!isa<func::ReturnOp>(user))
      return op.emitOpError("attn-shard: the result of a ring-sharded sdpa may only be "
                            "returned (it holds each rank's share of the rows)");
  return success();
}

/// The local type of a sharded value: dim `dim` divided by P.
RankedTensorType localType(Type t, int64_t dim, int64_t ranks) {
  auto tt = cast<RankedTensorType>(t);
  SmallVector<int64_t> shape(tt.getShape());
  shape[dim] /= ranks;
  return RankedTensorType::get(shape, tt.getElementType());
}

struct AttnShardPass : mlir::attn::impl::AttnShardBase<AttnShardPass> {
  using AttnShardBase::AttnShardBase;
  void runOnOperation() override {
    if (ranks < 1) {
      getOperation()->emitError() << "attn-shard: ranks must be >= 1, got " << ranks;
      return signalPassFailure();
    }
    SmallVector<SdpaOp> ops;
    getOperation()->walk([&](SdpaOp op) {
      if (op->hasAttr(kRingAttr))
        ops.push_back(op);
    });
    for (SdpaOp op : ops) {
      RingPlan plan;
      if (failed(planRing(op, ranks, plan)))
        return signalPassFailure();
      shardSignature(plan);
      OpBuilder b(op);
      ring::buildRing(b, plan);
    }
  }

  /// The function's sharded arguments and results become local.
  void shardSignature(const RingPlan &plan) {
    func::FuncOp f = plan.func;
    MLIRContext *ctx = f.getContext();
    auto info = [&](int64_t dim) {
      return DictionaryAttr::get(
          ctx, {NamedAttribute(StringAttr::get(ctx, "dim"),
                               IntegerAttr::get(IntegerType::get(ctx, 64), dim)),
                NamedAttribute(StringAttr::get(ctx, "layout"),
                               RingLayoutAttr::get(ctx, plan.layout))});
    };
    auto shardArg = [&](Value v, int64_t dim) {
      auto arg = cast<BlockArgument>(v);
      arg.setType(localType(arg.getType(), dim, plan.ranks));
      f.setArgAttr(arg.getArgNumber(), kShardAttr, info(dim));
    };
    SdpaOp op = plan.op;
    shardArg(op.getQuery(), 2);
    shardArg(op.getKey(), 2);
    shardArg(op.getValue(), 2);
    if (plan.maskQueryDim >= 0)
      shardArg(op.getMask(), plan.maskQueryDim);
    op.getResult().setType(localType(op.getType(), 2, plan.ranks));
    SmallVector<Type> results(f.getFunctionType().getResults());
    f.walk([&](func::ReturnOp ret) {
      for (OpOperand &o : ret->getOpOperands())
        if (o.get() == op.getResult()) {
          results[o.getOperandNumber()] = op.getType();
          f.setResultAttr(o.getOperandNumber(), kShardAttr, info(2));
        }
    });
    SmallVector<Type> args(f.getBody().front().getArgumentTypes());
    f.setType(FunctionType::get(ctx, args, results));
    f->setAttr(kRanksAttr, IntegerAttr::get(IntegerType::get(ctx, 64), plan.ranks));
  }
};

} // namespace
