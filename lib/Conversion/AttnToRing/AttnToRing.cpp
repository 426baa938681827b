//===- AttnToRing.cpp - a sequence-sharded attn.sdpa as ring attention ----===//
//
// attn-shard: each of P ranks keeps its share of the queries; the K/V
// blocks travel around the ring (mpi.isend / mpi.irecv, double-buffered);
// at every step each rank runs attn.sdpa_partial of its queries against
// the block it holds and merges the result into its running (O, lse) with
// attn.merge_partial (the online-softmax rule), so that after P steps it
// holds its exact output rows.
//
// Each distinct block kernel (full, causal, strictly lower) is emitted once,
// as a private function @<fn>__ring_block_<mode> that the step loop and the
// last step call, and so is the merge (@<fn>__ring_merge): the ring
// compiles in proportion to its block modes, not to steps x blocks. A
// kernel takes the whole local Q, both K/V buffers, the mask and the
// offsets of its block, and slices them itself, so that it reads the same
// strided views the inline code did (a slice passed across a call would be
// copied: bufferisation gives function arguments identity layouts).
//
//===----------------------------------------------------------------------===//
#include "attn/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNSHARD
#include "attn/Conversion/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

constexpr StringLiteral kRingAttr = "attn.ring";
constexpr StringLiteral kShardAttr = "attn.shard";
constexpr StringLiteral kRanksAttr = "attn.ring_ranks";

/// What one sharded sdpa asks for, checked.
struct RingPlan {
  mutable SdpaOp op; // accessors are non-const
  func::FuncOp func;
  RingLayout layout = RingLayout::contiguous;
  int64_t ranks = 1;
  int64_t tq = 0, tk = 0;  ///< global lengths
  int64_t nq = 0, nk = 0;  ///< local lengths (T / P)
  int qChunks = 1, kChunks = 1; ///< blocks per rank on each side
  int64_t cq = 0, ck = 0;  ///< rows per block
  /// The mask's query / key dims (-1: absent or a broadcast 1).
  int64_t maskQueryDim = -1, maskKeyDim = -1;
  bool causal = false;
};

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
  plan.qChunks = zig && plan.causal ? 2 : 1;
  plan.kChunks = zig && (plan.causal || plan.maskKeyDim >= 0) ? 2 : 1;
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

/// Builds the ring for one planned sdpa.
class RingBuilder {
public:
  RingBuilder(OpBuilder &b, const RingPlan &plan)
      : b(b), loc(plan.op.getLoc()), plan(plan), ctx(b.getContext()) {}

  void build() {
    SdpaOp op = plan.op;
    b.setInsertionPoint(op);
    elt = cast<RankedTensorType>(op.getQuery().getType()).getElementType();
    f32 = b.getF32Type();
    auto outT = cast<RankedTensorType>(op.getType());
    batch = outT.getDimSize(0);
    heads = outT.getDimSize(1);
    dv = outT.getDimSize(3);
    scale = b.getF32FloatAttr(static_cast<float>(*op.getEffectiveScale()));

    Value comm = mpi::CommWorldOp::create(b, loc, mpi::CommType::get(ctx));
    Value rank32 = mpi::CommRankOp::create(b, loc, Type(), b.getI32Type(), comm).getRank();
    Value size32 = mpi::CommSizeOp::create(b, loc, Type(), b.getI32Type(), comm).getSize();
    Value sizeOk = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, size32,
                                         i32(plan.ranks));
    cf::AssertOp::create(b, loc, sizeOk,
                         "attn-shard: this ring was compiled for P = " +
                             std::to_string(plan.ranks) +
                             " ranks; run it with that many (mpirun -np " +
                             std::to_string(plan.ranks) + ")");
    rank = arith::IndexCastOp::create(b, loc, b.getIndexType(), rank32);
    int64_t P = plan.ranks;

    // Running (O, lse) per query block.
    SmallVector<Value> accs;
    for (int qi = 0; qi < plan.qChunks; ++qi) {
      accs.push_back(fill(RankedTensorType::get({batch, heads, plan.cq, dv}, f32), 0.0));
      accs.push_back(fill(RankedTensorType::get({batch, heads, plan.cq}, f32),
                          -std::numeric_limits<double>::infinity()));
    }

    Value kLocal = op.getKey(), vLocal = op.getValue();
    if (P == 1) {
      // The kernels read K/V as [S, B, Hkv, n, D] (S buffers): S = 1 here.
      accs = attendBlock(rank, KV{unitBuffer(kLocal), unitBuffer(vLocal), idx(0)}, accs);
    } else {
      // Two buffers per operand, [2, B, Hkv, n, D]; the local block starts
      // in buffer 0.
      Value kBufs = doubleBuffer(kLocal), vBufs = doubleBuffer(vLocal);
      Value next32 = remI32(arith::AddIOp::create(b, loc, rank32, i32(1)));
      Value prev32 = remI32(arith::AddIOp::create(b, loc, rank32, i32(P - 1)));
      auto loop = scf::ForOp::create(
          b, loc, idx(0), idx(P - 1), idx(1), accs,
          [&](OpBuilder &nb, Location, Value step, ValueRange carried) {
            OpBuilder::InsertionGuard g(b);
            b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
            Value parity = arith::RemUIOp::create(b, loc, step, idx(2));
            Value other = arith::SubIOp::create(b, loc, idx(1), parity);
            Value kCur = half(kBufs, parity), kNext = half(kBufs, other);
            Value vCur = half(vBufs, parity), vNext = half(vBufs, other);
            auto reqT = mpi::RequestType::get(ctx);
            // Tag 0: K, tag 1: V. Post the next block's transfer first so
            // that it overlaps this step's compute.
            SmallVector<Value> reqs{
                mpi::ISendOp::create(b, loc, Type(), reqT, kCur, i32(0), next32, comm).getReq(),
                mpi::ISendOp::create(b, loc, Type(), reqT, vCur, i32(1), next32, comm).getReq(),
                mpi::IRecvOp::create(b, loc, Type(), reqT, kNext, i32(0), prev32, comm).getReq(),
                mpi::IRecvOp::create(b, loc, Type(), reqT, vNext, i32(1), prev32, comm).getReq()};
            // The block this rank holds at step s came from rank r - s.
            Value src = arith::RemUIOp::create(
                b, loc, arith::SubIOp::create(b, loc, arith::AddIOp::create(b, loc, rank, idx(P)),
                                              step),
                idx(P));
            SmallVector<Value> next =
                attendBlock(src, KV{asTensor(kBufs), asTensor(vBufs), parity}, carried);
            for (Value r : reqs)
              mpi::Wait::create(b, loc, Type(), r);
            scf::YieldOp::create(b, loc, next);
          });
      // The last block (from rank r + 1), in buffer (P - 1) mod 2.
      Value last = idx((P - 1) % 2);
      Value src = arith::RemUIOp::create(b, loc, arith::AddIOp::create(b, loc, rank, idx(1)),
                                         idx(P));
      accs = attendBlock(src, KV{asTensor(kBufs), asTensor(vBufs), last}, loop.getResults());
    }

    // O rounded to the input type, the query blocks in local order. Each
    // block is written into its slice of the output (which bufferises in
    // place), not inserted (a strided copy).
    Value out = tensor::EmptyOp::create(b, loc, outT.getShape(), elt);
    for (int qi = 0; qi < plan.qChunks; ++qi) {
      Value dst = tensor::ExtractSliceOp::create(b, loc, out, offsets(2, qi * plan.cq),
                                                 sizes4(plan.cq, dv), ones(4));
      out = tensor::InsertSliceOp::create(b, loc, roundInto(accs[2 * qi], dst), out,
                                          offsets(2, qi * plan.cq), sizes4(plan.cq, dv),
                                          ones(4));
    }
    op.replaceAllUsesWith(out);
    op.erase();
  }

private:
  OpBuilder &b;
  Location loc;
  const RingPlan &plan;
  MLIRContext *ctx;
  Type elt, f32;
  int64_t batch = 0, heads = 0, dv = 0;
  FloatAttr scale;
  Value rank;

  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value i32(int64_t v) { return arith::ConstantIntOp::create(b, loc, v, 32); }
  Value remI32(Value x) { return arith::RemUIOp::create(b, loc, x, i32(plan.ranks)); }
  SmallVector<OpFoldResult> ones(int64_t n) {
    return SmallVector<OpFoldResult>(n, b.getIndexAttr(1));
  }
  /// Offsets of a 4-D slice: 0 except `v` at `dim`.
  SmallVector<OpFoldResult> offsets(int64_t dim, int64_t v) {
    SmallVector<OpFoldResult> o(4, b.getIndexAttr(0));
    o[dim] = b.getIndexAttr(v);
    return o;
  }
  SmallVector<OpFoldResult> sizes4(int64_t rows, int64_t last) {
    return {b.getIndexAttr(batch), b.getIndexAttr(heads), b.getIndexAttr(rows),
            b.getIndexAttr(last)};
  }

  Value fill(RankedTensorType t, double v) {
    Value init = tensor::EmptyOp::create(b, loc, t.getShape(), t.getElementType());
    Value c = arith::ConstantOp::create(b, loc, t.getElementType(),
                                        b.getFloatAttr(t.getElementType(), v));
    return linalg::FillOp::create(b, loc, ValueRange{c}, ValueRange{init}).getResult(0);
  }

  /// [2, dims...] holding the local block `t` in half 0.
  Value doubleBuffer(Value t) {
    auto tt = cast<RankedTensorType>(t.getType());
    SmallVector<int64_t> shape{2};
    llvm::append_range(shape, tt.getShape());
    Value bufs = memref::AllocOp::create(b, loc, MemRefType::get(shape, tt.getElementType()),
                                         ValueRange{}, b.getI64IntegerAttr(64));
    Value src = bufferization::ToBufferOp::create(
        b, loc, MemRefType::get(tt.getShape(), tt.getElementType()), t, /*read_only=*/true);
    // (linalg.copy becomes loops; memref.copy of a subview would call the
    // memrefCopy runtime function.)
    linalg::CopyOp::create(b, loc, src, half(bufs, idx(0)));
    return bufs;
  }

  /// Half `which` (0 or 1) of a double buffer, as a rank-reduced subview.
  Value half(Value bufs, Value which) {
    auto bt = cast<MemRefType>(bufs.getType());
    int64_t r = bt.getRank();
    SmallVector<OpFoldResult> off(r, b.getIndexAttr(0)), sz, st(r, b.getIndexAttr(1));
    off[0] = which;
    sz.push_back(b.getIndexAttr(1));
    for (int64_t i = 1; i < r; ++i)
      sz.push_back(b.getIndexAttr(bt.getDimSize(i)));
    auto resT = cast<MemRefType>(memref::SubViewOp::inferRankReducedResultType(
        bt.getShape().drop_front(), bt, off, sz, st));
    return memref::SubViewOp::create(b, loc, resT, bufs, off, sz, st);
  }

  Value asTensor(Value buf) {
    auto mt = cast<MemRefType>(buf.getType());
    return bufferization::ToTensorOp::create(
        b, loc, RankedTensorType::get(mt.getShape(), mt.getElementType()), buf,
        /*restrict=*/true, /*writable=*/false);
  }

  /// Rows [offset, offset + size) of dim `dim` of tensor `t` (with `stride`).
  Value slice(Value t, int64_t dim, OpFoldResult offset, int64_t size, int64_t stride = 1) {
    auto tt = cast<RankedTensorType>(t.getType());
    int64_t r = tt.getRank();
    SmallVector<OpFoldResult> off(r, b.getIndexAttr(0)), sz, st(r, b.getIndexAttr(1));
    for (int64_t i = 0; i < r; ++i)
      sz.push_back(b.getIndexAttr(tt.getDimSize(i)));
    off[dim] = offset;
    sz[dim] = b.getIndexAttr(size);
    st[dim] = b.getIndexAttr(stride);
    SmallVector<int64_t> shape(tt.getShape());
    shape[dim] = size;
    return tensor::ExtractSliceOp::create(b, loc, RankedTensorType::get(shape, tt.getElementType()),
                                          t, off, sz, st);
  }

  /// Global chunk index of a rank's block `i` (contiguous and zigzag).
  Value chunkOf(Value owner, int i, int chunks) {
    if (chunks == 1)
      return owner;
    if (i == 0)
      return owner;
    return arith::SubIOp::create(b, loc, idx(2 * plan.ranks - 1), owner);
  }

  /// The K/V a step reads: [S, B, Hkv, n, D] tensors (the S = 2 buffers of
  /// the ring, or S = 1 for P = 1) and the index of the one it holds.
  struct KV {
    Value k, v, which;
  };

  /// One (query block, key block) pair: where its rows lie in the local Q,
  /// the K/V half and the mask.
  struct BlockPair {
    int64_t qOff = 0;  ///< first query row in the local Q (a multiple of cq)
    int64_t kOff = 0;  ///< first key in the K/V half
    int64_t kRows = 0; ///< keys in the block
    /// The mask column of its first key (null without a key dim in the mask),
    /// the next ones every `maskStride`.
    Value maskKeyOff;
    int64_t maskStride = 1;
  };

  /// `t` [dims...] as [1, dims...] (an expand_shape: no copy).
  Value unitBuffer(Value t) {
    auto tt = cast<RankedTensorType>(t.getType());
    SmallVector<int64_t> shape{1};
    llvm::append_range(shape, tt.getShape());
    SmallVector<ReassociationIndices> re{{0, 1}};
    for (int64_t i = 1; i < tt.getRank(); ++i)
      re.push_back({i + 1});
    return tensor::ExpandShapeOp::create(
        b, loc, RankedTensorType::get(shape, tt.getElementType()), t, re);
  }

  /// The last private function placed after the ring's function.
  Operation *lastHelper = nullptr;

  /// Places `fn` (private) after the ring's function and the helpers before
  /// it, renamed if its name is taken.
  void insertHelper(func::FuncOp fn) {
    fn.setPrivate();
    func::FuncOp ring = plan.func;
    Operation *after = lastHelper ? lastHelper : ring.getOperation();
    SymbolTable(after->getParentOfType<ModuleOp>())
        .insert(fn, std::next(Block::iterator(after)));
    lastHelper = fn;
  }

  /// The outlined kernels of this ring, by mode and block shape.
  llvm::StringMap<func::FuncOp> kernels;

  StringRef modeName(std::optional<CausalKind> causal) {
    if (!causal)
      return "full";
    return *causal == CausalKind::top_left ? "causal" : "lower";
  }

  /// The private function that runs attn.sdpa_partial of one query block
  /// (cq rows at `qOff`) against `kRows` keys (at `kOff` of half `which`),
  /// built on first use:
  ///   (q, qOff, kBufs, vBufs, which, kOff[, mask[, maskKeyOff]]) -> (O, lse)
  func::FuncOp kernel(std::optional<CausalKind> causal, int64_t kRows, int64_t maskStride,
                      const KV &kv) {
    std::string key =
        (modeName(causal) + "/" + Twine(kRows) + "/" + Twine(maskStride)).str();
    if (func::FuncOp f = kernels.lookup(key))
      return f;
    SdpaOp op = plan.op;
    Value mask = op.getMask();
    bool maskCols = mask && plan.maskKeyDim >= 0;
    Type index = b.getIndexType();
    SmallVector<Type> results{RankedTensorType::get({batch, heads, plan.cq, dv}, f32),
                              RankedTensorType::get({batch, heads, plan.cq}, f32)};
    SmallVector<Type> inputs{op.getQuery().getType(), index, kv.k.getType(), kv.v.getType(),
                             index, index};
    if (mask)
      inputs.push_back(mask.getType());
    if (maskCols)
      inputs.push_back(index);
    func::FuncOp ring = plan.func;
    auto fn = func::FuncOp::create(
        loc, (ring.getSymName() + "__ring_block_" + modeName(causal)).str(),
        FunctionType::get(ctx, inputs, results));
    insertHelper(fn);
    kernels[key] = fn;

    OpBuilder::InsertionGuard g(b);
    Block *body = fn.addEntryBlock();
    b.setInsertionPointToStart(body);
    Value q = body->getArgument(0), qOff = body->getArgument(1);
    Value kBufs = body->getArgument(2), vBufs = body->getArgument(3);
    Value which = body->getArgument(4), kOff = body->getArgument(5);
    if (plan.qChunks > 1)
      q = slice(q, 2, qOff, plan.cq);
    Value k = bufferBlock(kBufs, which, kOff, kRows);
    Value v = bufferBlock(vBufs, which, kOff, kRows);
    Value m;
    if (mask) {
      m = body->getArgument(6);
      if (plan.maskQueryDim >= 0 && plan.qChunks > 1)
        m = slice(m, plan.maskQueryDim, qOff, plan.cq);
      if (maskCols)
        m = slice(m, plan.maskKeyDim, body->getArgument(7), kRows, maskStride);
    }
    auto p = SdpaPartialOp::create(
        b, loc, TypeRange(results), q, k, v, m, /*alibi_slopes=*/Value(),
        /*key_lengths=*/Value(), scale,
        causal ? CausalKindAttr::get(ctx, *causal) : CausalKindAttr(),
        op.getSoftcapAttr(), /*window=*/WindowAttr());
    func::ReturnOp::create(b, loc, p.getResults());
    return fn;
  }

  /// Keys [kOff, kOff + rows) of buffer `which` of [S, B, H, n, D] `bufs`:
  /// a [B, H, rows, D] view.
  Value bufferBlock(Value bufs, Value which, Value kOff, int64_t rows) {
    auto bt = cast<RankedTensorType>(bufs.getType());
    SmallVector<OpFoldResult> off(5, b.getIndexAttr(0)), sz, st(5, b.getIndexAttr(1));
    off[0] = which;
    off[3] = kOff;
    sz.push_back(b.getIndexAttr(1));
    for (int64_t i = 1; i < 5; ++i)
      sz.push_back(b.getIndexAttr(bt.getDimSize(i)));
    sz[3] = b.getIndexAttr(rows);
    auto resT = RankedTensorType::get({bt.getDimSize(1), bt.getDimSize(2), rows,
                                       bt.getDimSize(4)},
                                      bt.getElementType());
    return tensor::ExtractSliceOp::create(b, loc, resT, bufs, off, sz, st);
  }

  /// attn.sdpa_partial of one query block against one key block: a call of
  /// its mode's kernel.
  SmallVector<Value> partial(const BlockPair &bp, const KV &kv,
                             std::optional<CausalKind> causal) {
    func::FuncOp fn = kernel(causal, bp.kRows, bp.maskStride, kv);
    SdpaOp op = plan.op;
    SmallVector<Value> args{op.getQuery(), idx(bp.qOff), kv.k, kv.v, kv.which, idx(bp.kOff)};
    if (Value mask = op.getMask()) {
      args.push_back(mask);
      if (plan.maskKeyDim >= 0)
        args.push_back(bp.maskKeyOff);
    }
    auto call = func::CallOp::create(b, loc, fn, args);
    return SmallVector<Value>(call.getResults());
  }

  /// `then` when `cond`, else `otherwise`; each yields `types`.
  SmallVector<Value> ifElse(Value cond, TypeRange types,
                            function_ref<SmallVector<Value>()> then,
                            function_ref<SmallVector<Value>()> otherwise) {
    // A condition known here (P = 1: a block against itself) takes one
    // branch: no call of a kernel that could never run.
    if (std::optional<int64_t> known = getConstantIntValue(cond))
      return *known ? then() : otherwise();
    auto ifOp = scf::IfOp::create(b, loc, types, cond, /*withElse=*/true);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    scf::YieldOp::create(b, loc, then());
    b.setInsertionPointToStart(&ifOp.getElseRegion().front());
    scf::YieldOp::create(b, loc, otherwise());
    return SmallVector<Value>(ifOp.getResults());
  }

  /// Merges every query block of this rank with the key/value block `kv`
  /// that rank `src` holds; returns the new (O, lse) per query block.
  SmallVector<Value> attendBlock(Value src, const KV &kv, ValueRange accs) {
    SmallVector<Value> out(accs);
    // Global chunk indices (the same values when src is this rank).
    SmallVector<Value> gq, gk;
    if (plan.layout != RingLayout::striped) {
      for (int qi = 0; qi < plan.qChunks; ++qi)
        gq.push_back(chunkOf(rank, qi, plan.qChunks));
      for (int kj = 0; kj < plan.kChunks; ++kj)
        gk.push_back(src == rank && plan.kChunks == plan.qChunks
                         ? gq[kj]
                         : chunkOf(src, kj, plan.kChunks));
    }
    for (int qi = 0; qi < plan.qChunks; ++qi) {
      for (int kj = 0; kj < plan.kChunks; ++kj) {
        BlockPair bp;
        bp.qOff = qi * plan.cq;
        bp.kOff = kj * plan.ck;
        bp.kRows = plan.ck;
        Value acc0 = out[2 * qi], acc1 = out[2 * qi + 1];
        SmallVector<Value> merged =
            plan.layout == RingLayout::striped
                ? stripedBlock(src, bp, kv, acc0, acc1)
                : chunkBlock(gq[qi], gk[kj], bp, kv, acc0, acc1);
        out[2 * qi] = merged[0];
        out[2 * qi + 1] = merged[1];
      }
    }
    return out;
  }

  bool maskHasKeys() { return plan.op.getMask() && plan.maskKeyDim >= 0; }

  func::FuncOp mergeFn;

  /// attn.merge_partial of a block's partial result into its running (O,
  /// lse): a call of one private function, @<fn>__ring_merge.
  SmallVector<Value> merge(Value acc0, Value acc1, ArrayRef<Value> part) {
    if (!mergeFn) {
      func::FuncOp ring = plan.func;
      SmallVector<Type> types{acc0.getType(), acc1.getType()};
      SmallVector<Type> inputs{types[0], types[1], types[0], types[1]};
      mergeFn = func::FuncOp::create(loc, (ring.getSymName() + "__ring_merge").str(),
                                     FunctionType::get(ctx, inputs, types));
      insertHelper(mergeFn);
      OpBuilder::InsertionGuard g(b);
      Block *body = mergeFn.addEntryBlock();
      b.setInsertionPointToStart(body);
      auto m = MergePartialOp::create(b, loc, body->getArgument(0), body->getArgument(1),
                                      body->getArgument(2), body->getArgument(3));
      func::ReturnOp::create(b, loc, m.getResults());
    }
    auto call = func::CallOp::create(b, loc, mergeFn, ValueRange{acc0, acc1, part[0], part[1]});
    return SmallVector<Value>(call.getResults());
  }

  /// Contiguous/zigzag blocks: query chunk gq against key chunk gk.
  SmallVector<Value> chunkBlock(Value gq, Value gk, BlockPair bp, const KV &kv, Value acc0,
                                Value acc1) {
    if (maskHasKeys())
      bp.maskKeyOff = arith::MulIOp::create(b, loc, gk, idx(plan.ck));
    if (!plan.causal)
      return merge(acc0, acc1, partial(bp, kv, std::nullopt));
    SmallVector<Type, 2> types{acc0.getType(), acc1.getType()};
    Value later = b.createOrFold<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, gq, gk);
    Value earlier = b.createOrFold<arith::CmpIOp>(loc, arith::CmpIPredicate::ugt, gq, gk);
    return ifElse(
        later, types, [&] { return SmallVector<Value>{acc0, acc1}; },
        [&] {
          SmallVector<Value> part = ifElse(
              earlier, types, [&] { return partial(bp, kv, std::nullopt); },
              [&] { return partial(bp, kv, CausalKind::top_left); });
          return merge(acc0, acc1, part);
        });
  }

  /// Striped blocks: query i·P + r against key j·P + src: j <= i when
  /// r >= src, j < i otherwise.
  SmallVector<Value> stripedBlock(Value src, BlockPair bp, const KV &kv, Value acc0,
                                  Value acc1) {
    int64_t P = plan.ranks, n = plan.nk;
    bp.kRows = n;
    bp.maskStride = P;
    if (maskHasKeys())
      bp.maskKeyOff = src;
    if (!plan.causal)
      return merge(acc0, acc1, partial(bp, kv, std::nullopt));
    SmallVector<Type, 2> types{acc0.getType(), acc1.getType()};
    Value ownOrEarlier =
        b.createOrFold<arith::CmpIOp>(loc, arith::CmpIPredicate::uge, rank, src);
    if (n == 1) // a single row sees no earlier key of a later rank
      return ifElse(
          ownOrEarlier, types,
          [&] { return merge(acc0, acc1, partial(bp, kv, CausalKind::top_left)); },
          [&] { return SmallVector<Value>{acc0, acc1}; });
    // j < i: keys [0, n - 1) with the bottom-right diagonal i - 1.
    BlockPair lower = bp;
    lower.kOff = 0;
    lower.kRows = n - 1;
    SmallVector<Value> part = ifElse(
        ownOrEarlier, types, [&] { return partial(bp, kv, CausalKind::top_left); },
        [&] { return partial(lower, kv, CausalKind::bottom_right); });
    return merge(acc0, acc1, part);
  }

  /// f32 `t` written into `dst` (same shape), rounded to dst's type.
  Value roundInto(Value t, Value dst) {
    // (An identity linalg.generic would be folded away, leaving a strided
    // memref.copy, which lowers to a call of the memrefCopy runtime.)
    if (elt.isF32())
      return linalg::CopyOp::create(b, loc, t, dst).getResult(0);
    auto tt = cast<RankedTensorType>(t.getType());
    AffineMap id = b.getMultiDimIdentityMap(tt.getRank());
    SmallVector<utils::IteratorType> par(tt.getRank(), utils::IteratorType::parallel);
    return linalg::GenericOp::create(
               b, loc, TypeRange{dst.getType()}, ValueRange{t}, ValueRange{dst},
               ArrayRef<AffineMap>{id, id}, par,
               [&](OpBuilder &nb, Location l, ValueRange args) {
                 Value v = args[0];
                 if (!elt.isF32())
                   v = arith::TruncFOp::create(nb, l, elt, v);
                 linalg::YieldOp::create(nb, l, v);
               })
        .getResult(0);
  }
};

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
      RingBuilder(b, plan).build();
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
