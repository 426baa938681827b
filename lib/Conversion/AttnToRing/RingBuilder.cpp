//===- RingBuilder.cpp - the ring for one planned sdpa --------------------===//
//
// One block kernel serves every block: a causal ring passes each block its
// diagonal shift at run time (attn.sdpa_partial diagonal(%s)), so fully
// visible, diagonal and strictly lower blocks are the same code. It is
// emitted once, as a private function @<fn>__ring_block that runs the
// block's sdpa_partial and writes it into the query block's slabs of the
// running (O, lse) buffers: stored on the query block's first block, merged
// after; the step loop and the last step each call it from a loop over the
// block pairs. A kernel takes the whole local Q, both K/V buffers, the
// mask, the state buffers and the offsets of its block, and slices them
// itself, so that it reads the same strided views the inline code did (a
// slice passed across a call would be copied: bufferisation gives function
// arguments identity layouts); it returns nothing, so no buffer ownership
// crosses the call. The ring function holds no loop nest of constant trip
// counts (copies are memcpys of contiguous views, the state is never
// filled): LLVM would unroll such a nest into thousands of stores, slow to
// schedule (bench/NOTES.md, 2026-12-03).
//
//===----------------------------------------------------------------------===//
#include "RingBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringMap.h"
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

using namespace mlir;
using namespace mlir::attn;
using mlir::attn::ring::RingPlan;

namespace {

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

    // The running (O, lse) of this rank's rows, one slab per query block
    // ([blocks, B, H, cq, ...]), as buffers the kernel writes in place: a
    // block's rows are contiguous, so writing them is one memcpy. Not
    // initialised: each query block's first block (step 0, key block 0:
    // its own keys, never skipped) is stored, not merged.
    int64_t qb = plan.qChunks;
    acc = Acc{alloc({qb, batch, heads, plan.cq, dv}), alloc({qb, batch, heads, plan.cq})};

    Value kLocal = op.getKey(), vLocal = op.getValue();
    if (P == 1) {
      // The kernels read K/V as [S, B, Hkv, n, D] (S buffers): S = 1 here.
      // (One op per statement: the IR must not depend on the order a
      // compiler evaluates call arguments in.)
      KV kv{unitBuffer(kLocal), unitBuffer(vLocal), idx(0)};
      attendBlock(rank, kv, /*firstStep=*/i1(true));
    } else {
      // Two buffers per operand, [2, B, Hkv, n, D]; the local block starts
      // in buffer 0.
      Value kBufs = doubleBuffer(kLocal), vBufs = doubleBuffer(vLocal);
      Value next32 = remI32(arith::AddIOp::create(b, loc, rank32, i32(1)));
      Value prev32 = remI32(arith::AddIOp::create(b, loc, rank32, i32(P - 1)));
      scf::ForOp::create(
          b, loc, idx(0), idx(P - 1), idx(1), ValueRange{},
          [&](OpBuilder &nb, Location, Value step, ValueRange) {
            OpBuilder::InsertionGuard g(b);
            b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
            Value parity = arith::RemUIOp::create(b, loc, step, idx(2));
            Value other = arith::SubIOp::create(b, loc, idx(1), parity);
            Value kCur = leading(kBufs, parity), kNext = leading(kBufs, other);
            Value vCur = leading(vBufs, parity), vNext = leading(vBufs, other);
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
            Value firstStep =
                arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, step, idx(0));
            KV kv{asTensor(kBufs), asTensor(vBufs), parity};
            attendBlock(src, kv, firstStep);
            for (Value r : reqs)
              mpi::Wait::create(b, loc, Type(), r);
            scf::YieldOp::create(b, loc);
          });
      // The last block (from rank r + 1), in buffer (P - 1) mod 2.
      Value last = idx((P - 1) % 2);
      Value src = arith::RemUIOp::create(b, loc, arith::AddIOp::create(b, loc, rank, idx(1)),
                                         idx(P));
      KV kv{asTensor(kBufs), asTensor(vBufs), last};
      attendBlock(src, kv, /*firstStep=*/i1(false));
    }

    // O rounded to the input type, the query blocks in local order. Each
    // block is written into its slice of the output (which bufferises in
    // place), not inserted (a strided copy). Sinks join each row's
    // denominator once, here, after every key block is merged.
    Value out = tensor::EmptyOp::create(b, loc, outT.getShape(), elt);
    for (int64_t qi = 0; qi < qb; ++qi) {
      Value dst = slice(out, 2, b.getIndexAttr(qi * plan.cq), plan.cq);
      Value slab = asTensor(leading(acc.o, idx(qi)));
      Value rows = op.getSinks() ? withSinksInto(slab, asTensor(leading(acc.l, idx(qi))),
                                                 op.getSinks(), dst)
                                 : roundInto(slab, dst);
      out = tensor::InsertSliceOp::create(b, loc, rows, out, offsets(2, qi * plan.cq),
                                          sizes4(plan.cq, dv), ones(4));
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
  Value i1(bool v) { return arith::ConstantIntOp::create(b, loc, v, 1); }

  /// The running (O, lse) buffers, [blocks, B, H, cq, Dv] and [blocks, B, H, cq].
  struct Acc {
    Value o, l;
  } acc;

  /// A 64-byte aligned f32 buffer of `shape`.
  Value alloc(ArrayRef<int64_t> shape) {
    return memref::AllocOp::create(b, loc, MemRefType::get(shape, f32), ValueRange{},
                                   b.getI64IntegerAttr(64));
  }
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

  /// [2, dims...] holding the local block `t` in half 0.
  Value doubleBuffer(Value t) {
    auto tt = cast<RankedTensorType>(t.getType());
    SmallVector<int64_t> shape{2};
    llvm::append_range(shape, tt.getShape());
    Value bufs = memref::AllocOp::create(b, loc, MemRefType::get(shape, tt.getElementType()),
                                         ValueRange{}, b.getI64IntegerAttr(64));
    Value src = bufferization::ToBufferOp::create(
        b, loc, MemRefType::get(tt.getShape(), tt.getElementType()), t, /*read_only=*/true);
    // Half 0 is contiguous: a memcpy (a linalg.copy would become loops that
    // LLVM unrolls).
    memref::CopyOp::create(b, loc, src, leading(bufs, idx(0)));
    return bufs;
  }

  /// Entry `which` of the leading dim of `bufs` (a half of a double buffer,
  /// a query block's slab of the running state), as a rank-reduced subview:
  /// contiguous.
  Value leading(Value bufs, Value which) {
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

  /// The K/V a step reads: [S, B, Hkv, n, D] tensors (the S = 2 buffers of
  /// the ring, or S = 1 for P = 1) and the index of the one it holds.
  struct KV {
    Value k, v, which;
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

  /// The ring's one block kernel, built on first use.
  func::FuncOp kernelFn;

  /// The private function @<fn>__ring_block that runs attn.sdpa_partial of
  /// one query block (block `qi`, cq rows) against one key block (ck keys
  /// at `kOff` of half `which`) and writes the result into the block's
  /// slabs of the running (O, lse) buffers: stored on the query block's
  /// `first` block, else merged (attn.merge_partial):
  ///   (q, qi, kBufs, vBufs, which, kOff[, shift][, mask[, maskKeyOff]]
  ///    [, captures..., qBase, kBase], first, accO, accL) -> ()
  /// A causal ring passes the block's diagonal shift (query i sees key j
  /// iff j <= i + shift): every causal block, whether fully visible, on the
  /// diagonal or strictly below it, is this one kernel. Nothing crosses the
  /// call but its arguments: no result buffer, no ownership to track.
  func::FuncOp kernel(const KV &kv) {
    if (kernelFn)
      return kernelFn;
    SdpaOp op = plan.op;
    Value mask = op.getMask();
    Type index = b.getIndexType();
    SmallVector<Type> partTypes{RankedTensorType::get({batch, heads, plan.cq, dv}, f32),
                                RankedTensorType::get({batch, heads, plan.cq}, f32)};
    SmallVector<Type> inputs{op.getQuery().getType(), index, kv.k.getType(), kv.v.getType(),
                             index, index};
    if (plan.causal)
      inputs.push_back(index);
    if (mask)
      inputs.push_back(mask.getType());
    if (maskHasKeys())
      inputs.push_back(index);
    if (hasMods()) {
      llvm::append_range(inputs, op.getCaptures().getTypes());
      inputs.append({index, index});
    }
    inputs.append({b.getI1Type(), acc.o.getType(), acc.l.getType()});
    kernelFn = func::FuncOp::create(loc, (func::FuncOp(plan.func).getSymName() + "__ring_block").str(),
                                    FunctionType::get(ctx, inputs, {}));
    insertHelper(kernelFn);

    OpBuilder::InsertionGuard g(b);
    Block *body = kernelFn.addEntryBlock();
    b.setInsertionPointToStart(body);
    auto args = body->getArguments();
    Value q = args[0], qi = args[1], kBufs = args[2], vBufs = args[3], which = args[4],
          kOff = args[5];
    Value qOff = b.createOrFold<arith::MulIOp>(loc, qi, idx(plan.cq));
    unsigned next = 6;
    Value shift = plan.causal ? args[next++] : Value();
    if (plan.qChunks > 1)
      q = slice(q, 2, qOff, plan.cq);
    Value k = bufferBlock(kBufs, which, kOff, plan.ck);
    Value v = bufferBlock(vBufs, which, kOff, plan.ck);
    Value m;
    if (mask) {
      m = args[next++];
      if (plan.maskQueryDim >= 0 && plan.qChunks > 1)
        m = slice(m, plan.maskQueryDim, qOff, plan.cq);
      if (maskHasKeys())
        m = slice(m, plan.maskKeyDim, args[next++], plan.ck, rowStride());
    }
    SmallVector<Value> captures;
    if (hasMods()) {
      size_t n = op.getCaptures().size();
      llvm::append_range(captures, args.slice(next, n));
      next += n;
      // The block's first query and key positions, read by its functions.
      captures.push_back(tensor::FromElementsOp::create(
          b, loc, RankedTensorType::get({2}, index), ValueRange{args[next], args[next + 1]}));
      next += 2;
    }
    Value first = args[next], accO = args[next + 1], accL = args[next + 2];
    auto part = SdpaPartialOp::create(
        b, loc, TypeRange(partTypes), q, k, v, m, /*alibi_slopes=*/Value(),
        /*key_lengths=*/Value(), /*sinks=*/Value(), shift, /*runtime_seed=*/Value(),
        captures,
        scale,
        plan.causal ? CausalKindAttr::get(ctx, CausalKind::top_left) : CausalKindAttr(),
        op.getSoftcapAttr(), /*window=*/WindowAttr(), /*dropout_rate=*/FloatAttr(),
        /*dropout_seed=*/IntegerAttr());
    globalPositions(op.getScoreMod(), part.getScoreMod(), /*score=*/true);
    globalPositions(op.getMaskMod(), part.getMaskMod(), /*score=*/false);
    // The block's slabs (contiguous): each write is a memcpy in place, no
    // copy loop for LLVM to unroll.
    Value slabO = leading(accO, qi), slabL = leading(accL, qi);
    auto write = [&](ValueRange state) {
      Value slabs[2] = {slabO, slabL};
      for (int i = 0; i < 2; ++i)
        bufferization::MaterializeInDestinationOp::create(
            b, loc, TypeRange{}, state[i], slabs[i], /*restrict=*/b.getUnitAttr(),
            /*writable=*/b.getUnitAttr());
    };
    auto ifOp = scf::IfOp::create(b, loc, TypeRange{}, first, /*withElse=*/true);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    write(part.getResults());
    b.setInsertionPointToStart(&ifOp.getElseRegion().front());
    Value rowsO = asTensor(slabO);
    Value rowsL = asTensor(slabL);
    auto merged =
        MergePartialOp::create(b, loc, rowsO, rowsL, part.getResult(), part.getLse());
    write(merged.getResults());
    b.setInsertionPointAfter(ifOp);
    func::ReturnOp::create(b, loc);
    return kernelFn;
  }


  bool hasMods() { return plan.hasMods(); }

  /// The global distance between consecutive rows of a block (its keys'
  /// mask columns, its positions): striped rows are every P-th, chunks
  /// consecutive.
  int64_t rowStride() { return plan.layout == RingLayout::striped ? plan.ranks : 1; }

  /// Copies function region `from` of the ring's sdpa into `to` (of a
  /// block's attn.sdpa_partial) with global positions: the block's q and kv
  /// (local) become base + stride·q, base + stride·kv, the bases read from
  /// one more capture [qBase, kBase] (run-time: they depend on the rank and
  /// the step) and the stride a constant, so that the kernel still bounds
  /// a mask function per tile (ModBounds.h: constants, additions and
  /// 1-D integer capture reads).
  void globalPositions(Region &from, Region &to, bool score) {
    if (from.empty())
      return;
    IRMapping map;
    from.cloneInto(&to, map);
    Block &body = to.front();
    BlockArgument bases =
        body.addArgument(RankedTensorType::get({2}, b.getIndexType()), loc);
    unsigned first = score ? 1 : 0; // (score,) b, h, q, kv
    OpBuilder rb = OpBuilder::atBlockBegin(&body);
    for (unsigned i = 0; i < 2; ++i) {
      BlockArgument pos = body.getArgument(first + 2 + i);
      Value at = arith::ConstantIndexOp::create(rb, loc, i);
      Value base = tensor::ExtractOp::create(rb, loc, bases, ValueRange{at});
      Value scaled = pos;
      if (int64_t stride = rowStride(); stride != 1)
        scaled = arith::MulIOp::create(rb, loc, pos, arith::ConstantIndexOp::create(rb, loc, stride));
      auto global = arith::AddIOp::create(rb, loc, scaled, base);
      pos.replaceUsesWithIf(global, [&](OpOperand &use) {
        return use.getOwner() != global && use.getOwner() != scaled.getDefiningOp();
      });
    }
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

  bool maskHasKeys() { return plan.op.getMask() && plan.maskKeyDim >= 0; }

  /// Merges every (query block, key block) pair of this rank's rows and the
  /// K/V `kv` that rank `src` holds into the running (O, lse): one loop
  /// over the pairs, one kernel call per pair. `firstStep` (i1): this is
  /// step 0, whose key block 0 is each query block's first.
  void attendBlock(Value src, const KV &kv, Value firstStep) {
    int64_t pairs = plan.qChunks * plan.kChunks;
    if (pairs == 1)
      return attendPair(idx(0), idx(0), src, kv, firstStep);
    scf::ForOp::create(b, loc, idx(0), idx(pairs), idx(1), ValueRange{},
                       [&](OpBuilder &nb, Location, Value pair, ValueRange) {
                         OpBuilder::InsertionGuard g(b);
                         b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
                         Value qi = arith::DivUIOp::create(b, loc, pair, idx(plan.kChunks));
                         Value kj = arith::RemUIOp::create(b, loc, pair, idx(plan.kChunks));
                         attendPair(qi, kj, src, kv, firstStep);
                         scf::YieldOp::create(b, loc);
                       });
  }

  /// Global chunk index of a rank's block `i` (contiguous and zigzag): the
  /// owner's chunk, and for block 1 of a zigzag rank chunk 2P - 1 - owner.
  Value chunkOf(Value owner, Value i, int chunks) {
    if (chunks == 1)
      return owner;
    Value mirrored = arith::SubIOp::create(b, loc, idx(2 * plan.ranks - 1), owner);
    Value first = b.createOrFold<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, i, idx(0));
    return b.createOrFold<arith::SelectOp>(loc, first, owner, mirrored);
  }

  /// Query block `qi` of this rank against key block `kj` of rank `src`,
  /// merged into the running (O, lse).
  void attendPair(Value qi, Value kj, Value src, const KV &kv, Value firstStep) {
    // Where query i (of the block) and key j lie globally decides the
    // causal shift: chunks (contiguous, zigzag) of c rows start at g·c, so
    // j <= i + (gq - gk)·c; striped rows are i·P + r and j·P + src, so
    // j <= i when r >= src, else j < i.
    Value shift, maskKeyOff, qBase, kBase;
    if (plan.layout == RingLayout::striped) {
      if (maskHasKeys())
        maskKeyOff = src;
      // Row i of rank r is global row i·P + r.
      qBase = rank;
      kBase = src;
      if (plan.causal) {
        Value own = b.createOrFold<arith::CmpIOp>(loc, arith::CmpIPredicate::uge, rank, src);
        Value diagonal = idx(0);
        Value below = idx(-1);
        shift = b.createOrFold<arith::SelectOp>(loc, own, diagonal, below);
      }
    } else {
      Value gk = chunkOf(src, kj, plan.kChunks);
      if (maskHasKeys() || hasMods())
        kBase = b.createOrFold<arith::MulIOp>(loc, gk, idx(plan.ck));
      if (maskHasKeys())
        maskKeyOff = kBase;
      if (hasMods())
        qBase = b.createOrFold<arith::MulIOp>(loc, chunkOf(rank, qi, plan.qChunks),
                                              idx(plan.cq));
      if (plan.causal) {
        Value gq = chunkOf(rank, qi, plan.qChunks);
        Value chunks = b.createOrFold<arith::SubIOp>(loc, gq, gk);
        shift = b.createOrFold<arith::MulIOp>(loc, chunks, idx(plan.cq));
      }
    }
    Value kOff = b.createOrFold<arith::MulIOp>(loc, kj, idx(plan.ck));
    auto run = [&] {
      SmallVector<Value> args{plan.op.getQuery(), qi, kv.k, kv.v, kv.which, kOff};
      if (shift)
        args.push_back(shift);
      if (Value mask = plan.op.getMask())
        args.push_back(mask);
      if (maskKeyOff)
        args.push_back(maskKeyOff);
      if (hasMods()) {
        llvm::append_range(args, plan.op.getCaptures());
        args.append({qBase, kBase});
      }
      // Step 0 attends the rank's own keys: block (qi, 0) is never skipped.
      std::optional<int64_t> known = getConstantIntValue(firstStep);
      args.push_back(known && !*known
                         ? firstStep
                         : b.createOrFold<arith::AndIOp>(
                               loc, firstStep,
                               b.createOrFold<arith::CmpIOp>(loc, arith::CmpIPredicate::eq,
                                                             kj, idx(0))));
      args.append({acc.o, acc.l});
      func::CallOp::create(b, loc, kernel(kv), args);
    };
    // Only a chunk or a single striped row can be wholly later.
    if (!shift || (plan.layout == RingLayout::striped && plan.cq > 1))
      return run();
    // A block no row of which sees a key (shift <= -cq: a later chunk, or
    // a single striped row of a later rank) is skipped.
    Value none = b.createOrFold<arith::CmpIOp>(loc, arith::CmpIPredicate::sle, shift,
                                               idx(-plan.cq));
    auto ifOp = scf::IfOp::create(b, loc, TypeRange{}, none, /*withElse=*/true);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&ifOp.getElseRegion().front());
    run();
  }

  /// The merged rows `o` ([B, H, cq, Dv], lse `l`) with the attention
  /// sinks ([H] f32) merged in as one more block that weighs no value (the
  /// attn.merge_partial rule with O2 = 0, lse2 = sink):
  ///   o · exp(l − logaddexp(l, sink)) = o / (1 + exp(sink − l)),
  /// 0 for a row with no key (l = −inf), rounded into `dst`.
  Value withSinksInto(Value o, Value l, Value sinks, Value dst) {
    MLIRContext *c = b.getContext();
    AffineMap id = b.getMultiDimIdentityMap(4);
    AffineMap rows = AffineMap::get(4, 0, id.getResults().drop_back(), c);
    AffineMap head = AffineMap::get(4, 0, {getAffineDimExpr(1, c)}, c);
    SmallVector<utils::IteratorType> par(4, utils::IteratorType::parallel);
    return linalg::GenericOp::create(
               b, loc, TypeRange{dst.getType()}, ValueRange{o, l, sinks}, ValueRange{dst},
               ArrayRef<AffineMap>{id, rows, head, id}, par,
               [&](OpBuilder &nb, Location nl, ValueRange args) {
                 Value lse = args[1];
                 Value ninf = arith::ConstantOp::create(
                     nb, nl, nb.getF32FloatAttr(-std::numeric_limits<float>::infinity()));
                 Value one = arith::ConstantOp::create(nb, nl, nb.getF32FloatAttr(1.0f));
                 Value zero = arith::ConstantOp::create(nb, nl, nb.getF32FloatAttr(0.0f));
                 Value e = math::ExpOp::create(nb, nl, arith::SubFOp::create(nb, nl, args[2], lse));
                 Value w = arith::DivFOp::create(nb, nl, one, arith::AddFOp::create(nb, nl, one, e));
                 Value none = arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OEQ, lse, ninf);
                 w = arith::SelectOp::create(nb, nl, none, zero, w);
                 Value v = arith::MulFOp::create(nb, nl, args[0], w);
                 if (!elt.isF32())
                   v = arith::TruncFOp::create(nb, nl, elt, v);
                 linalg::YieldOp::create(nb, nl, v);
               })
        .getResult(0);
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

} // namespace

void mlir::attn::ring::buildRing(OpBuilder &b, const RingPlan &plan) {
  RingBuilder(b, plan).build();
}
