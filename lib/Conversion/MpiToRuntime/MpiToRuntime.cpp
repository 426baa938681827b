//===- MpiToRuntime.cpp - the mpi dialect as calls into libattn_mpi -------===//
//
// attn-lower-mpi: every mpi op becomes a func.call of a C function of the
// MPI runtime (lib/MpiRuntime), the only code compiled against mpi.h. A
// buffer travels as (address of its first element, byte count), so any
// rank, element type and subview offset is handled in one place.
//
//===----------------------------------------------------------------------===//
#include "attn/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/IR/Builders.h"

// The dialects the pass loads (dependentDialects in Passes.td).
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MPI/IR/MPI.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNLOWERMPI
#include "attn/Conversion/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {

/// Element type codes of attn_mpi_allreduce (lib/MpiRuntime).
enum AllreduceType : int32_t { kF32 = 0, kF64 = 1, kI32 = 2, kI64 = 3 };

class MpiLowering {
public:
  explicit MpiLowering(ModuleOp module) : module(module), b(module.getContext()) {}

  /// Lowers `op`; fails (with a diagnostic) on what it cannot lower.
  LogicalResult lower(Operation *op) {
    b.setInsertionPoint(op);
    loc = op->getLoc();
    Type i32 = b.getI32Type(), i64 = b.getI64Type();
    if (isa<mpi::InitOp>(op))
      return replace(op, call("attn_mpi_init", {}, {i32}), /*retvalFirst=*/true);
    if (isa<mpi::FinalizeOp>(op))
      return replace(op, call("attn_mpi_finalize", {}, {i32}), true);
    if (isa<mpi::CommWorldOp>(op))
      return replace(op, call("attn_mpi_comm_world", {}, {i64}), false);
    if (auto o = dyn_cast<mpi::CommRankOp>(op))
      return replaceWithRetval(op, call("attn_mpi_comm_rank", {o.getComm()}, {i32}));
    if (auto o = dyn_cast<mpi::CommSizeOp>(op))
      return replaceWithRetval(op, call("attn_mpi_comm_size", {o.getComm()}, {i32}));
    if (auto o = dyn_cast<mpi::CommSplitOp>(op))
      return replaceWithRetval(
          op, call("attn_mpi_comm_split", {o.getComm(), o.getColor(), o.getKey()}, {i64}));
    if (auto o = dyn_cast<mpi::SendOp>(op))
      return pointToPoint(op, "attn_mpi_send", o.getRef(), o.getTag(), o.getDest(),
                          o.getComm(), i32);
    if (auto o = dyn_cast<mpi::RecvOp>(op))
      return pointToPoint(op, "attn_mpi_recv", o.getRef(), o.getTag(), o.getSource(),
                          o.getComm(), i32);
    if (auto o = dyn_cast<mpi::ISendOp>(op))
      return pointToPoint(op, "attn_mpi_isend", o.getRef(), o.getTag(), o.getDest(),
                          o.getComm(), i64);
    if (auto o = dyn_cast<mpi::IRecvOp>(op))
      return pointToPoint(op, "attn_mpi_irecv", o.getRef(), o.getTag(), o.getSource(),
                          o.getComm(), i64);
    if (auto o = dyn_cast<mpi::Wait>(op))
      return replace(op, call("attn_mpi_wait", {o.getReq()}, {i32}), true);
    if (auto o = dyn_cast<mpi::Barrier>(op))
      return replace(op, call("attn_mpi_barrier", {o.getComm()}, {i32}), true);
    if (auto o = dyn_cast<mpi::AllReduceOp>(op))
      return allreduce(o);
    if (auto o = dyn_cast<mpi::RetvalCheckOp>(op)) {
      Value expected = arith::ConstantIntOp::create(
          b, loc, static_cast<int64_t>(o.getErrclass()), 32);
      Value code = call("attn_mpi_error_class", {o.getVal()}, {i32})[0];
      op->getResult(0).replaceAllUsesWith(
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, code, expected));
      op->erase();
      return success();
    }
    if (auto o = dyn_cast<mpi::ErrorClassOp>(op)) {
      op->getResult(0).replaceAllUsesWith(call("attn_mpi_error_class", {o.getVal()}, {i32})[0]);
      op->erase();
      return success();
    }
    return op->emitOpError("attn-lower-mpi: no lowering for this op");
  }

private:
  ModuleOp module;
  OpBuilder b;
  Location loc = UnknownLoc::get(b.getContext());

  /// func.call @name(args) declaring @name on first use.
  SmallVector<Value> call(StringRef name, ValueRange args, TypeRange results) {
    auto fn = module.lookupSymbol<func::FuncOp>(name);
    if (!fn) {
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(module.getBody());
      fn = func::FuncOp::create(b, loc, name, b.getFunctionType(args.getTypes(), results));
      fn.setPrivate();
    }
    auto c = func::CallOp::create(b, loc, fn, args);
    return SmallVector<Value>(c.getResults());
  }

  /// Replaces an op with results (retval?) by the call's single i32
  /// result as the retval (`retvalFirst`) or as its only result.
  LogicalResult replace(Operation *op, SmallVector<Value> results, bool retvalFirst) {
    if (op->getNumResults() == 1)
      op->getResult(0).replaceAllUsesWith(results[0]);
    (void)retvalFirst;
    op->erase();
    return success();
  }

  /// An op with results (retval?, x): x from the call, retval MPI_SUCCESS.
  LogicalResult replaceWithRetval(Operation *op, SmallVector<Value> results) {
    unsigned n = op->getNumResults();
    op->getResult(n - 1).replaceAllUsesWith(results[0]);
    if (n == 2)
      op->getResult(0).replaceAllUsesWith(arith::ConstantIntOp::create(b, loc, 0, 32));
    op->erase();
    return success();
  }

  /// (address of the first element, byte count) of a contiguous buffer.
  FailureOr<std::pair<Value, Value>> bufferArgs(Operation *op, Value buf) {
    auto mt = cast<MemRefType>(buf.getType());
    if (!mt.getLayout().isIdentity() && !memref::isStaticShapeAndContiguousRowMajor(mt))
      return op->emitOpError("attn-lower-mpi: the buffer must be contiguous, got ")
             << mt;
    Type et = mt.getElementType();
    if (!et.isIntOrFloat())
      return op->emitOpError("attn-lower-mpi: unsupported element type ") << et;
    int64_t eltBytes = (et.getIntOrFloatBitWidth() + 7) / 8;
    Type i64 = b.getI64Type();
    Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, buf);
    auto meta = memref::ExtractStridedMetadataOp::create(b, loc, buf);
    Value eltSize = arith::ConstantIndexOp::create(b, loc, eltBytes);
    Value addr = arith::AddIOp::create(
        b, loc, base, arith::MulIOp::create(b, loc, meta.getOffset(), eltSize));
    Value count = arith::ConstantIndexOp::create(b, loc, eltBytes);
    for (int64_t i = 0; i < mt.getRank(); ++i)
      count = arith::MulIOp::create(b, loc, count, memref::DimOp::create(b, loc, buf, i));
    // (In this order whatever the compiler: the IR is stable for tests.)
    Value addr64 = arith::IndexCastOp::create(b, loc, i64, addr);
    Value count64 = arith::IndexCastOp::create(b, loc, i64, count);
    return std::make_pair(addr64, count64);
  }

  /// send/recv/isend/irecv: (ptr, bytes, tag, peer, comm) -> status or request.
  LogicalResult pointToPoint(Operation *op, StringRef fn, Value buf, Value tag, Value peer,
                             Value comm, Type result) {
    FailureOr<std::pair<Value, Value>> args = bufferArgs(op, buf);
    if (failed(args))
      return failure();
    SmallVector<Value> r = call(fn, {args->first, args->second, tag, peer, comm}, {result});
    if (result.isInteger(64)) // isend/irecv: (retval?, request)
      return replaceWithRetval(op, r);
    return replace(op, r, true);
  }

  LogicalResult allreduce(mpi::AllReduceOp o) {
    auto mt = cast<MemRefType>(o.getSendbuf().getType());
    Type et = mt.getElementType();
    int32_t code;
    if (et.isF32())
      code = kF32;
    else if (et.isF64())
      code = kF64;
    else if (et.isInteger(32))
      code = kI32;
    else if (et.isInteger(64))
      code = kI64;
    else
      return o.emitOpError("attn-lower-mpi: allreduce supports f32, f64, i32 and i64, got ")
             << et;
    if (o.getRecvbuf().getType().getElementType() != et)
      return o.emitOpError("attn-lower-mpi: allreduce buffers must have one element type");
    FailureOr<std::pair<Value, Value>> send = bufferArgs(o, o.getSendbuf());
    FailureOr<std::pair<Value, Value>> recv = bufferArgs(o, o.getRecvbuf());
    if (failed(send) || failed(recv))
      return failure();
    Value type = arith::ConstantIntOp::create(b, loc, code, 32);
    Value opCode = arith::ConstantIntOp::create(b, loc, static_cast<int64_t>(o.getOp()), 32);
    return replace(o,
                   call("attn_mpi_allreduce",
                        {send->first, recv->first, send->second, recv->second, type, opCode,
                         o.getComm()},
                        {b.getI32Type()}),
                   true);
  }
};

struct AttnLowerMpiPass : mlir::attn::impl::AttnLowerMpiBase<AttnLowerMpiPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<Operation *> ops;
    module.walk([&](Operation *op) {
      if (isa<mpi::MPIDialect>(op->getDialect()))
        ops.push_back(op);
    });
    // Definitions before uses (walk order), so that each op's operands are
    // already the runtime's handles when it is lowered.
    MpiLowering lowering(module);
    for (Operation *op : ops)
      if (failed(lowering.lower(op)))
        return signalPassFailure();
    WalkResult left = module.walk([](Operation *op) {
      if (isa<mpi::MPIDialect>(op->getDialect())) {
        op->emitOpError("attn-lower-mpi: left unlowered");
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (left.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
