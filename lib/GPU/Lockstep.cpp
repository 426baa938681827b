//===- Lockstep.cpp - a thread loop with warp instructions, run in lockstep -===//
//
// A thread-mapped scf.forall whose body uses warp-wide instructions
// (nvgpu.ldmatrix, nvgpu.mma.sync, gpu.shuffle) or attn_ptx barriers
// cannot run one thread after another: each of those needs every lane's
// value at once. Here its N threads run in lockstep instead, lanes as
// vector elements:
//
//   - a value that depends on the thread id is "varying": a scalar T becomes
//     vector<N x T>, a per-thread vector<S x T> becomes vector<S x N x T>
//     (lanes innermost); uniform values stay as they are;
//   - elementwise arith/math ops and static vector.extract/insert/
//     from_elements work on those types unchanged; scf.for/scf.if carry
//     varying values; an scf.if on a varying condition masks the stores in it
//     (one that only computes, as a score or mask function's, runs both
//     branches on every lane and selects);
//   - memref.load/store with varying indices, cp.async copies
//     (nvgpu.device_async_copy, with its zero fill) loop over the lanes;
//   - gpu.shuffle xor is a vector.shuffle across lanes;
//   - nvgpu.ldmatrix and nvgpu.mma.sync call attn_emu_ldmatrix /
//     attn_emu_mma_m16n8k16 / attn_emu_mma_m16n8k8_tf32
//     (attn/Runtime/WarpEmulation.h), which follow the fragment table
//     attn/GPU/FragmentLayout.h;
//   - attn_ptx ops: ex2_approx becomes exp2 (2^x; -inf gives 0),
//     cvt_rna_tf32 rounds the f32 bits in integer arithmetic, bar_sync and
//     the cp.async group commit/wait disappear (every lane has finished every earlier
//     op, and every copy is complete when it returns).
//
// What this cannot catch: a missing barrier or cp.async wait (lockstep
// execution and synchronous copies satisfy any ordering), bank conflicts,
// speed.
//
//===----------------------------------------------------------------------===//
#include "Lockstep.h"

#include "attn/GPU/FragmentLayout.h"
#include "attn/GPU/PtxDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

namespace {

namespace ptx = ::mlir::attn::ptx;

class Lockstep {
public:
  Lockstep(RewriterBase &rw, scf::ForallOp forall, int64_t n)
      : rw(rw), b(rw), forall(forall), N(n), loc(forall.getLoc()) {}

  LogicalResult run() {
    Block *body = forall.getBody();
    analyze(body);
    b.setInsertionPoint(forall);
    SmallVector<Attribute> ids;
    for (int64_t i = 0; i < N; ++i)
      ids.push_back(b.getIndexAttr(i));
    auto idsType = VectorType::get({N}, b.getIndexType());
    lastScratch =
        arith::ConstantOp::create(b, loc, idsType, DenseElementsAttr::get(idsType, ids));
    map.map(forall.getInductionVar(0), lastScratch->getResult(0));
    if (failed(convertBlock(*body)))
      return failure();
    rw.eraseOp(forall);
    return success();
  }

private:
  RewriterBase &rw;
  OpBuilder b;
  scf::ForallOp forall;
  int64_t N;
  Location loc;
  DenseSet<Value> varying;
  IRMapping map;
  Value mask; ///< the lanes an scf.if on a varying condition runs (or null)
  Operation *lastScratch = nullptr; ///< scratch buffers go after it
  DenseMap<std::pair<Type, unsigned>, Value> scratchBuffers;

  bool isVarying(Value v) const { return varying.contains(v); }

  // --- which values depend on the thread -----------------------------------

  void analyze(Block *body) {
    varying.insert(forall.getInductionVar(0));
    bool changed = true;
    auto mark = [&](Value v) {
      if (varying.insert(v).second)
        changed = true;
    };
    while (changed) {
      changed = false;
      body->walk([&](Operation *op) {
        if (auto loop = dyn_cast<scf::ForOp>(op)) {
          auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
          for (unsigned i = 0; i < loop.getNumResults(); ++i)
            if (isVarying(loop.getInitArgs()[i]) || isVarying(yield.getOperand(i))) {
              mark(loop.getRegionIterArgs()[i]);
              mark(loop.getResult(i));
            }
          return;
        }
        if (auto ifOp = dyn_cast<scf::IfOp>(op)) {
          for (unsigned i = 0; i < ifOp.getNumResults(); ++i) {
            bool v = isVarying(ifOp.getCondition()) ||
                     isVarying(ifOp.thenYield().getOperand(i)) ||
                     (ifOp.elseBlock() && isVarying(ifOp.elseYield().getOperand(i)));
            if (v)
              mark(ifOp.getResult(i));
          }
          return;
        }
        bool v = isa<nvgpu::LdMatrixOp, nvgpu::MmaSyncOp, gpu::ShuffleOp>(op) ||
                 llvm::any_of(op->getOperands(), [&](Value x) { return isVarying(x); });
        if (v)
          for (Value r : op->getResults())
            mark(r);
      });
    }
  }

  // --- types and values ----------------------------------------------------

  Type laneType(Type t) {
    if (auto vt = dyn_cast<VectorType>(t)) {
      SmallVector<int64_t> shape(vt.getShape());
      shape.push_back(N);
      return VectorType::get(shape, vt.getElementType());
    }
    return VectorType::get({N}, t);
  }

  /// The lockstep value of `old`: its mapping, broadcast to every lane if
  /// it is uniform.
  Value lanes(Value old) {
    Value v = map.lookupOrDefault(old);
    if (isVarying(old))
      return v;
    Type want = laneType(old.getType());
    auto vt = dyn_cast<VectorType>(old.getType());
    if (!vt)
      return vector::BroadcastOp::create(b, loc, want, v);
    // vector<S x T>: each element broadcast to its lanes (small fragments).
    auto wt = cast<VectorType>(want);
    Value acc = arith::ConstantOp::create(b, loc, wt, b.getZeroAttr(wt));
    for (int64_t i = 0; i < vt.getNumElements(); ++i) {
      SmallVector<int64_t> pos = delinearize(i, vt.getShape());
      Value e = vector::ExtractOp::create(b, loc, v, pos);
      acc = vector::InsertOp::create(
          b, loc, vector::BroadcastOp::create(b, loc, VectorType::get({N}, vt.getElementType()), e),
          acc, pos);
    }
    return acc;
  }

  /// The position of element i of a row-major vector of `shape`.
  static SmallVector<int64_t> delinearize(int64_t i, ArrayRef<int64_t> shape) {
    SmallVector<int64_t> pos(shape.size());
    for (int64_t d = int64_t(shape.size()) - 1; d >= 0; --d) {
      pos[d] = i % shape[d];
      i /= shape[d];
    }
    return pos;
  }

  Value lane(Value vec, Value l) {
    return vector::ExtractOp::create(b, loc, vec, ArrayRef<OpFoldResult>{l});
  }
  /// The scalar of old value `old` for lane `l` (uniform values as they are).
  Value atLane(Value old, Value l) {
    return isVarying(old) ? lane(map.lookupOrDefault(old), l) : map.lookupOrDefault(old);
  }
  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value i32(int64_t v) {
    return arith::ConstantOp::create(b, loc, b.getI32Type(), b.getI32IntegerAttr(v));
  }

  /// for (l = 0; l < N; ++l) body(l), with the lanes outside the current
  /// mask skipped.
  void forEachLane(function_ref<void(Value)> body) {
    auto loop = scf::ForOp::create(b, loc, idx(0), idx(N), idx(1));
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPoint(loop.getBody()->getTerminator());
    Value l = loop.getInductionVar();
    if (!mask) {
      body(l);
      return;
    }
    auto ifOp = scf::IfOp::create(b, loc, lane(mask, l), /*withElse=*/false);
    b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
    body(l);
  }

  /// A buffer of type `t` at the top of the lockstep region (outside every
  /// loop), one per (type, slot): a warp instruction's operands are stored,
  /// the call made and its result loaded before the next one, so each slot
  /// is reused by every instruction (slot 0 the inputs, 1 and 2 what must
  /// not alias them).
  Value scratch(MemRefType t, unsigned slot = 0) {
    Value &buf = scratchBuffers[{t, slot}];
    if (buf)
      return buf;
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointAfter(lastScratch);
    auto a = memref::AllocaOp::create(b, loc, t);
    lastScratch = a;
    buf = a;
    return buf;
  }
  Value address(Value buffer) {
    Value p = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, buffer);
    return arith::IndexCastOp::create(b, loc, b.getI64Type(), p);
  }
  void call(StringRef name, ValueRange args) {
    auto module = forall->getParentOfType<ModuleOp>();
    if (!module.lookupSymbol(name)) {
      OpBuilder mb = OpBuilder::atBlockBegin(module.getBody());
      auto fn = func::FuncOp::create(mb, loc, name,
                                     b.getFunctionType(TypeRange(args.getTypes()), {}));
      fn.setPrivate();
    }
    func::CallOp::create(b, loc, name, TypeRange{}, args);
  }

  // --- the conversion --------------------------------------------------------

  LogicalResult convertBlock(Block &block) {
    for (Operation &op : block.without_terminator())
      if (failed(convert(&op)))
        return failure();
    return success();
  }

  LogicalResult convert(Operation *op) {
    if (auto loop = dyn_cast<scf::ForOp>(op))
      return convertFor(loop);
    if (auto ifOp = dyn_cast<scf::IfOp>(op))
      return convertIf(ifOp);
    if (isa<ptx::PtxDialect>(op->getDialect()))
      return convertPtx(op);
    bool anyVarying = llvm::any_of(op->getResults(), [&](Value r) { return isVarying(r); }) ||
                      llvm::any_of(op->getOperands(), [&](Value x) { return isVarying(x); });
    if (auto store = dyn_cast<memref::StoreOp>(op); store && (anyVarying || mask))
      return convertStore(store);
    if (!anyVarying) {
      if (mask && !isMemoryEffectFree(op))
        return op->emitOpError("lockstep emulation: side effect under a varying condition");
      if (op->getNumRegions())
        return op->emitOpError("lockstep emulation: unsupported op with regions");
      b.clone(*op, map);
      return success();
    }
    if (auto load = dyn_cast<memref::LoadOp>(op))
      return convertLoad(load);
    if (auto copy = dyn_cast<nvgpu::DeviceAsyncCopyOp>(op))
      return convertAsyncCopy(copy);
    if (auto ld = dyn_cast<nvgpu::LdMatrixOp>(op))
      return convertLdMatrix(ld);
    if (auto mma = dyn_cast<nvgpu::MmaSyncOp>(op))
      return convertMma(mma);
    if (auto shfl = dyn_cast<gpu::ShuffleOp>(op))
      return convertShuffle(shfl);
    if (auto ex = dyn_cast<vector::ExtractOp>(op)) {
      if (!ex.getDynamicPosition().empty())
        return op->emitOpError("lockstep emulation: dynamic position");
      map.map(ex.getResult(),
              vector::ExtractOp::create(b, loc, lanes(ex.getSource()), ex.getStaticPosition()));
      return success();
    }
    if (auto ins = dyn_cast<vector::InsertOp>(op)) {
      if (!ins.getDynamicPosition().empty())
        return op->emitOpError("lockstep emulation: dynamic position");
      map.map(ins.getResult(), vector::InsertOp::create(b, loc, lanes(ins.getValueToStore()),
                                                        lanes(ins.getDest()),
                                                        ins.getStaticPosition()));
      return success();
    }
    if (auto fe = dyn_cast<vector::FromElementsOp>(op)) {
      auto t = cast<VectorType>(laneType(fe.getType()));
      Value acc = arith::ConstantOp::create(b, loc, t, b.getZeroAttr(t));
      ArrayRef<int64_t> shape = fe.getType().getShape();
      for (auto [i, e] : llvm::enumerate(fe.getElements()))
        acc = vector::InsertOp::create(b, loc, lanes(e), acc, delinearize(i, shape));
      map.map(fe.getResult(), acc);
      return success();
    }
    if (auto te = dyn_cast<vector::ToElementsOp>(op)) {
      Value src = lanes(te.getSource());
      ArrayRef<int64_t> shape = te.getSource().getType().getShape();
      for (auto [i, r] : llvm::enumerate(te.getResults()))
        map.map(r, vector::ExtractOp::create(b, loc, src, delinearize(i, shape)));
      return success();
    }
    if (auto sc = dyn_cast<vector::ShapeCastOp>(op)) {
      map.map(sc.getResult(), vector::ShapeCastOp::create(b, loc, laneType(sc.getType()),
                                                          lanes(sc.getSource())));
      return success();
    }
    if (auto bc = dyn_cast<vector::BroadcastOp>(op); bc && !isa<VectorType>(bc.getSourceType())) {
      // A per-thread scalar to vector<S x T>: vector<N x T> to
      // vector<S x N x T> (broadcast adds leading dims).
      map.map(bc.getResult(), vector::BroadcastOp::create(b, loc, laneType(bc.getType()),
                                                          lanes(bc.getSource())));
      return success();
    }
    if (op->hasTrait<OpTrait::Elementwise>() && op->getNumRegions() == 0) {
      OperationState st(op->getLoc(), op->getName());
      for (Value x : op->getOperands())
        st.addOperands(lanes(x));
      for (Value r : op->getResults())
        st.addTypes(laneType(r.getType()));
      st.addAttributes(op->getAttrs());
      Operation *n = b.create(st);
      map.map(op->getResults(), n->getResults());
      return success();
    }
    return op->emitOpError("lockstep emulation: unsupported op on per-thread values");
  }

  LogicalResult convertFor(scf::ForOp loop) {
    for (Value bound : {loop.getLowerBound(), loop.getUpperBound(), loop.getStep()})
      if (isVarying(bound))
        return loop.emitOpError("lockstep emulation: loop bounds differ between threads");
    SmallVector<Value> init;
    for (auto [arg, v] : llvm::zip(loop.getRegionIterArgs(), loop.getInitArgs()))
      init.push_back(isVarying(arg) ? lanes(v) : map.lookupOrDefault(v));
    auto n = scf::ForOp::create(b, loc, map.lookupOrDefault(loop.getLowerBound()),
                                map.lookupOrDefault(loop.getUpperBound()), map.lookupOrDefault(loop.getStep()),
                                init);
    map.map(loop.getInductionVar(), n.getInductionVar());
    map.map(loop.getRegionIterArgs(), n.getRegionIterArgs());
    {
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(n.getBody());
      if (failed(convertBlock(*loop.getBody())))
        return failure();
      auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
      SmallVector<Value> out;
      for (auto [arg, v] : llvm::zip(loop.getRegionIterArgs(), yield.getOperands()))
        out.push_back(isVarying(arg) ? lanes(v) : map.lookupOrDefault(v));
      if (n.getBody()->mightHaveTerminator())
        rw.eraseOp(n.getBody()->getTerminator());
      scf::YieldOp::create(b, loc, out);
    }
    map.map(loop.getResults(), n.getResults());
    return success();
  }

  /// Whether both branches of `ifOp` only compute (loads and ops free of
  /// memory effects) and yield scalars: then every lane may run both.
  static bool speculatable(scf::IfOp ifOp) {
    for (Type t : ifOp.getResultTypes())
      if (isa<VectorType>(t))
        return false;
    WalkResult r = ifOp->walk([&](Operation *op) {
      if (op == ifOp.getOperation() || isa<memref::LoadOp>(op) || isMemoryEffectFree(op))
        return WalkResult::advance();
      return WalkResult::interrupt();
    });
    return !r.wasInterrupted();
  }

  LogicalResult convertIf(scf::IfOp ifOp) {
    if (isVarying(ifOp.getCondition())) {
      if (ifOp.getNumResults() || ifOp.elseBlock()) {
        // A score or mask function's scf.if (its reads clamped into the
        // captures, so a lane may read on the branch it does not take):
        // both branches on every lane, then a per-lane select.
        if (!speculatable(ifOp))
          return ifOp.emitOpError("lockstep emulation: a varying condition with results or "
                                  "an else branch, and stores or vector results in it");
        SmallVector<Value> taken[2];
        Block *blocks[2] = {ifOp.thenBlock(), ifOp.elseBlock()};
        for (auto [i, block] : llvm::enumerate(blocks)) {
          if (!block)
            continue;
          if (failed(convertBlock(*block)))
            return failure();
          for (Value v : block->getTerminator()->getOperands())
            taken[i].push_back(lanes(v));
        }
        Value cond = map.lookupOrDefault(ifOp.getCondition());
        for (auto [r, t, e] : llvm::zip(ifOp.getResults(), taken[0], taken[1]))
          map.map(r, arith::SelectOp::create(b, loc, cond, t, e));
        return success();
      }
      Value saved = mask;
      Value cond = map.lookupOrDefault(ifOp.getCondition());
      mask = saved ? Value(arith::AndIOp::create(b, loc, saved, cond)) : cond;
      LogicalResult r = convertBlock(*ifOp.thenBlock());
      mask = saved;
      return r;
    }
    SmallVector<Type> types;
    for (Value r : ifOp.getResults())
      types.push_back(isVarying(r) ? laneType(r.getType()) : r.getType());
    auto n = scf::IfOp::create(b, loc, types, map.lookupOrDefault(ifOp.getCondition()),
                               /*withElse=*/bool(ifOp.elseBlock()));
    auto fill = [&](Block *from, Block *to) -> LogicalResult {
      OpBuilder::InsertionGuard g(b);
      if (to->mightHaveTerminator())
        rw.eraseOp(to->getTerminator());
      b.setInsertionPointToEnd(to);
      if (failed(convertBlock(*from)))
        return failure();
      SmallVector<Value> out;
      for (auto [r, v] : llvm::zip(ifOp.getResults(), from->getTerminator()->getOperands()))
        out.push_back(isVarying(r) ? lanes(v) : map.lookupOrDefault(v));
      scf::YieldOp::create(b, loc, out);
      return success();
    };
    if (failed(fill(ifOp.thenBlock(), n.thenBlock())))
      return failure();
    if (ifOp.elseBlock() && failed(fill(ifOp.elseBlock(), n.elseBlock())))
      return failure();
    map.map(ifOp.getResults(), n.getResults());
    return success();
  }

  /// The attn_ptx ops: the barrier and the cp.async group ops are no-ops
  /// (the lanes run in order and the copies are synchronous), ex2.approx
  /// is exp2, the TF32 rounding is done in integer arithmetic.
  LogicalResult convertPtx(Operation *op) {
    if (isa<ptx::BarSyncOp, ptx::CpAsyncCommitGroupOp, ptx::CpAsyncWaitGroupOp>(op))
      return success();
    if (auto ex2 = dyn_cast<ptx::Ex2ApproxOp>(op)) {
      map.map(ex2.getResult(), exp2(map.lookupOrDefault(ex2.getX())));
      return success();
    }
    if (auto cvt = dyn_cast<ptx::CvtRnaTf32Op>(op)) {
      map.map(cvt.getResult(), roundTf32(map.lookupOrDefault(cvt.getX())));
      return success();
    }
    return op->emitOpError("lockstep emulation: unknown attn_ptx op");
  }

  /// 2^x for f32 x (scalar or vector): math.exp2 (its CPU lowering gives 0
  /// for -inf and NaN for NaN, as ex2.approx does).
  Value exp2(Value x) { return math::Exp2Op::create(b, loc, x); }

  LogicalResult convertLoad(memref::LoadOp load) {
    auto t = cast<VectorType>(laneType(load.getType()));
    Value init = arith::ConstantOp::create(b, loc, t, b.getZeroAttr(t));
    auto loop = scf::ForOp::create(b, loc, idx(0), idx(N), idx(1), ValueRange{init});
    {
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(loop.getBody());
      Value l = loop.getInductionVar();
      SmallVector<Value> ivs;
      for (Value i : load.getIndices())
        ivs.push_back(atLane(i, l));
      Value x = memref::LoadOp::create(b, loc, map.lookupOrDefault(load.getMemRef()), ivs);
      Value acc = vector::InsertOp::create(b, loc, x, loop.getRegionIterArgs()[0],
                                           ArrayRef<OpFoldResult>{l});
      // (A loop built with iter_args and no body builder has no yield yet.)
      scf::YieldOp::create(b, loc, acc);
    }
    map.map(load.getResult(), loop.getResult(0));
    return success();
  }

  LogicalResult convertStore(memref::StoreOp store) {
    forEachLane([&](Value l) {
      SmallVector<Value> ivs;
      for (Value i : store.getIndices())
        ivs.push_back(atLane(i, l));
      memref::StoreOp::create(b, loc, atLane(store.getValueToStore(), l),
                              map.lookupOrDefault(store.getMemRef()), ivs);
    });
    return success();
  }

  /// Each lane copies dstElements elements, those past srcElements zero.
  LogicalResult convertAsyncCopy(nvgpu::DeviceAsyncCopyOp copy) {
    if (!copy.getAsyncToken().use_empty())
      return copy.emitOpError("lockstep emulation: the copy's token is used");
    int64_t n = copy.getDstElements().getZExtValue();
    Type elt = cast<MemRefType>(copy.getSrc().getType()).getElementType();
    forEachLane([&](Value l) {
      SmallVector<Value> src, dst;
      for (Value i : copy.getSrcIndices())
        src.push_back(atLane(i, l));
      for (Value i : copy.getDstIndices())
        dst.push_back(atLane(i, l));
      Value count = copy.getSrcElements() ? atLane(copy.getSrcElements(), l) : idx(n);
      Value srcCol = src.back(), dstCol = dst.back();
      for (int64_t e = 0; e < n; ++e) {
        Value in = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, idx(e), count);
        auto ifOp = scf::IfOp::create(b, loc, TypeRange{elt}, in, /*withElse=*/true);
        {
          OpBuilder::InsertionGuard g(b);
          b.setInsertionPointToStart(ifOp.thenBlock());
          src.back() = arith::AddIOp::create(b, loc, srcCol, idx(e));
          scf::YieldOp::create(b, loc,
                               memref::LoadOp::create(b, loc, map.lookupOrDefault(copy.getSrc()), src)
                                   .getResult());
          b.setInsertionPointToStart(ifOp.elseBlock());
          scf::YieldOp::create(b, loc,
                               arith::ConstantOp::create(b, loc, elt, b.getZeroAttr(elt))
                                   .getResult());
        }
        dst.back() = arith::AddIOp::create(b, loc, dstCol, idx(e));
        memref::StoreOp::create(b, loc, ifOp.getResult(0), map.lookupOrDefault(copy.getDst()), dst);
      }
    });
    return success();
  }

  /// A lane-innermost vector through memory: stored to a scratch buffer
  /// of its shape, whose address is returned.
  Value spill(Value v, unsigned slot = 0) {
    auto t = cast<VectorType>(v.getType());
    Value buf = scratch(MemRefType::get(t.getShape(), t.getElementType()), slot);
    forEachRow(t, [&](ArrayRef<int64_t> pos, ValueRange at) {
      vector::StoreOp::create(b, loc, vector::ExtractOp::create(b, loc, v, pos), buf, at);
    });
    return buf;
  }
  Value reload(Value buf, Type t) {
    auto vt = cast<VectorType>(t);
    Value acc = arith::ConstantOp::create(b, loc, vt, b.getZeroAttr(vt));
    auto row = VectorType::get({N}, vt.getElementType());
    forEachRow(vt, [&](ArrayRef<int64_t> pos, ValueRange at) {
      acc = vector::InsertOp::create(b, loc, vector::LoadOp::create(b, loc, row, buf, at), acc,
                                     pos);
    });
    return acc;
  }
  /// body(position, indices) for each lane row (the leading dims) of a
  /// lane-innermost vector type: 1-d loads and stores only.
  void forEachRow(VectorType t, function_ref<void(ArrayRef<int64_t>, ValueRange)> body) {
    ArrayRef<int64_t> lead = t.getShape().drop_back();
    int64_t rows = 1;
    for (int64_t d : lead)
      rows *= d;
    for (int64_t i = 0; i < rows; ++i) {
      SmallVector<int64_t> pos = delinearize(i, lead);
      SmallVector<Value> at;
      for (int64_t p : pos)
        at.push_back(idx(p));
      at.push_back(idx(0));
      body(pos, at);
    }
  }

  LogicalResult convertLdMatrix(nvgpu::LdMatrixOp ld) {
    auto mt = cast<MemRefType>(ld.getSrcMemref().getType());
    unsigned bits = mt.getElementType().getIntOrFloatBitWidth();
    if (mt.getRank() != 2 || !mt.hasStaticShape() || !(bits == 16 || bits == 32))
      return ld.emitOpError(
          "lockstep emulation: ldmatrix from a static 2-d 16- or 32-bit buffer only");
    auto i64s = VectorType::get({N}, b.getI64Type());
    Value rows = spill(arith::IndexCastOp::create(b, loc, i64s, lanes(ld.getIndices()[0])), 0);
    Value cols = spill(arith::IndexCastOp::create(b, loc, i64s, lanes(ld.getIndices()[1])), 1);
    Type rt = laneType(ld.getRes().getType());
    auto rvt = cast<VectorType>(rt);
    Value out = scratch(MemRefType::get(rvt.getShape(), rvt.getElementType()), 2);
    Value src = map.lookupOrDefault(ld.getSrcMemref());
    call("attn_emu_ldmatrix",
         {address(src), arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(mt.getDimSize(0))),
          arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(mt.getDimSize(1))),
          address(rows), address(cols), address(out), i32(ld.getNumTiles()),
          i32(ld.getTranspose() ? 1 : 0), i32(bits / 8), i32(N)});
    map.map(ld.getRes(), reload(out, rt));
    return success();
  }

  LogicalResult convertMma(nvgpu::MmaSyncOp mma) {
    std::array<int64_t, 3> shape = mma.getMmaShapeAsArray();
    Type elt = cast<VectorType>(mma.getMatrixA().getType()).getElementType();
    bool halves = shape == std::array<int64_t, 3>{16, 8, 16} && (elt.isF16() || elt.isBF16());
    bool tf32 = shape == std::array<int64_t, 3>{16, 8, 8} && elt.isF32() && mma.getTf32Enabled();
    if (!(halves || tf32) ||
        !cast<VectorType>(mma.getMatrixC().getType()).getElementType().isF32())
      return mma.emitOpError("lockstep emulation: mma.sync m16n8k16 f16/bf16 or m16n8k8 tf32 "
                             "-> f32 only");
    Value a = spill(lanes(mma.getMatrixA()));
    Value bb = spill(lanes(mma.getMatrixB()));
    Value c = spill(lanes(mma.getMatrixC()));
    Type dt = laneType(mma.getRes().getType());
    auto dvt = cast<VectorType>(dt);
    Value d = scratch(MemRefType::get(dvt.getShape(), dvt.getElementType()), 1);
    if (tf32)
      call("attn_emu_mma_m16n8k8_tf32", {address(a), address(bb), address(c), address(d), i32(N)});
    else
      call("attn_emu_mma_m16n8k16", {address(a), address(bb), address(c), address(d),
                                     i32(elt.isBF16() ? 1 : 0), i32(N)});
    map.map(mma.getRes(), reload(d, dt));
    return success();
  }

  /// cvt.rna.tf32.f32 of an f32 (one thread's, or every lane's as a
  /// vector): the bits rounded to 10 mantissa bits, ties away from zero (add
  /// half of the dropped range, clear it); NaN keeps its bits.
  Value roundTf32(Value x) {
    Type it = b.getI32Type();
    if (auto vt = dyn_cast<VectorType>(x.getType()))
      it = vt.clone(it);
    auto constant = [&](uint32_t v) -> Value {
      TypedAttr a = b.getI32IntegerAttr(int32_t(v));
      if (auto vt = dyn_cast<VectorType>(it))
        a = DenseElementsAttr::get(vt, a);
      return arith::ConstantOp::create(b, loc, a);
    };
    Value bits = arith::BitcastOp::create(b, loc, it, x);
    Value rounded = arith::AndIOp::create(
        b, loc, arith::AddIOp::create(b, loc, bits, constant(::attn::gpu::frag::kTf32RoundHalf)),
        constant(::attn::gpu::frag::kTf32KeepMask));
    Value nan = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, x, x);
    return arith::SelectOp::create(b, loc, nan, bits, rounded);
  }

  LogicalResult convertShuffle(gpu::ShuffleOp shfl) {
    std::optional<int64_t> off = getConstantIntValue(shfl.getOffset());
    std::optional<int64_t> width = getConstantIntValue(shfl.getWidth());
    if (shfl.getMode() != gpu::ShuffleMode::XOR || !off || !width ||
        *width != ::attn::gpu::frag::kWarpSize)
      return shfl.emitOpError("lockstep emulation: xor shuffles of a whole warp by a constant "
                              "only");
    SmallVector<int64_t> perm;
    for (int64_t i = 0; i < N; ++i)
      perm.push_back((i & ~int64_t(31)) | ((i & 31) ^ *off));
    Value v = lanes(shfl.getValue());
    map.map(shfl.getShuffleResult(), vector::ShuffleOp::create(b, loc, v, v, perm));
    auto bt = VectorType::get({N}, b.getI1Type());
    map.map(shfl.getValid(),
            arith::ConstantOp::create(b, loc, bt, DenseElementsAttr::get(bt, true)));
    return success();
  }
};

} // namespace

bool mlir::attn::needsLockstep(scf::ForallOp threadLoop) {
  WalkResult r = threadLoop.getBody()->walk([](Operation *op) {
    if (isa<nvgpu::NVGPUDialect>(op->getDialect()) || isa<gpu::ShuffleOp>(op) ||
        isa<ptx::PtxDialect>(op->getDialect()))
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return r.wasInterrupted();
}

LogicalResult mlir::attn::runInLockstep(RewriterBase &rewriter, scf::ForallOp threadLoop) {
  std::optional<int64_t> n = getConstantIntValue(threadLoop.getMixedUpperBound()[0]);
  if (threadLoop.getRank() != 1 || !n || getConstantIntValue(threadLoop.getMixedLowerBound()[0]) != 0 ||
      getConstantIntValue(threadLoop.getMixedStep()[0]) != 1 || *n % 32 != 0)
    return threadLoop.emitOpError(
        "lockstep emulation: a 1-d thread loop over a static multiple of 32 threads only");
  return Lockstep(rewriter, threadLoop, *n).run();
}
