//===- MapScheduleToGpu.cpp - a kernel schedule to gpu.launch -------------===//
//
// attn-map-schedule-to-gpu: each block-mapped scf.forall becomes a
// gpu.launch; thread-mapped loops inside become predicated bodies followed
// by gpu.barrier; workgroup allocations become workgroup attributions. The
// buffers the kernel touches get device copies, copied in when the kernel
// may read them (or writes only part of them) and out when it may write
// them, as the ops' MemoryEffectOpInterface says, through views made inside
// the kernel too.
//
//===----------------------------------------------------------------------===//
#include "attn/GPU/Passes.h"

#include "ScheduleMapping.h"

#include "attn/GPU/PtxDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNMAPSCHEDULETOGPU
#include "attn/GPU/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// How a kernel uses one buffer.
struct BufferAccess {
  bool read = false, written = false;
};

/// What the ops inside `kernel` do to `buffer`, following views made inside
/// the kernel (ViewLikeOpInterface). Effects come from each op's
/// MemoryEffectOpInterface; an op without it (a call, an unknown op) is taken
/// to read and write.
BufferAccess accessInside(Operation *kernel, Value buffer) {
  BufferAccess access;
  SmallVector<Value> worklist{buffer};
  DenseSet<Value> seen{buffer};
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      if (!kernel->isProperAncestor(user))
        continue;
      if (auto view = dyn_cast<ViewLikeOpInterface>(user);
          view && view.getViewSource() == v) {
        for (Value r : user->getResults())
          if (isa<BaseMemRefType>(r.getType()) && seen.insert(r).second)
            worklist.push_back(r);
        continue;
      }
      auto mem = dyn_cast<MemoryEffectOpInterface>(user);
      if (!mem) {
        access.read = access.written = true;
        continue;
      }
      SmallVector<MemoryEffects::EffectInstance> effects;
      mem.getEffectsOnValue(v, effects);
      for (const MemoryEffects::EffectInstance &e : effects) {
        if (isa<MemoryEffects::Read>(e.getEffect()))
          access.read = true;
        else if (isa<MemoryEffects::Write>(e.getEffect()))
          access.written = true;
      }
    }
  }
  return access;
}

/// Whether `buffer` is a memref.alloc in `kernel`'s block that nothing uses
/// before the kernel: its contents are undefined, so there is nothing to copy
/// in.
bool isFreshAllocation(Value buffer, Operation *kernel) {
  auto alloc = buffer.getDefiningOp<memref::AllocOp>();
  if (!alloc || alloc->getBlock() != kernel->getBlock())
    return false;
  return llvm::all_of(buffer.getUsers(), [&](Operation *user) {
    Operation *anc = kernel->getBlock()->findAncestorOpInBlock(*user);
    return anc && (anc == kernel || kernel->isBeforeInBlock(anc));
  });
}

/// Whether `op` runs on the device: inside a gpu.launch or a block-mapped
/// forall (a kernel not mapped yet).
bool onDevice(Operation *op) {
  for (Operation *p = op; p; p = p->getParentOp())
    if (isa<gpu::LaunchOp>(p) ||
        (isa<scf::ForallOp>(p) && hasGpuMapping(cast<scf::ForallOp>(p), /*threads=*/false)))
      return true;
  return false;
}

/// Whether every use of `buffer` on the host only reads its descriptor
/// (memref.dim), returns it, or frees it: then host code never touches its
/// elements and it can live on the device.
bool onlyDescribedOnHost(Value buffer) {
  return llvm::all_of(buffer.getUsers(), [&](Operation *user) {
    return onDevice(user) ||
           isa<memref::DimOp, func::ReturnOp, memref::DeallocOp, gpu::DeallocOp>(user);
  });
}

struct AttnMapScheduleToGpuPass
    : mlir::attn::impl::AttnMapScheduleToGpuBase<AttnMapScheduleToGpuPass> {
  using AttnMapScheduleToGpuBase::AttnMapScheduleToGpuBase;
  void runOnOperation() override {
    SmallVector<scf::ForallOp> blockLoops;
    getOperation()->walk([&](scf::ForallOp op) {
      if (hasGpuMapping(op, /*threads=*/false) &&
          !op->getParentOfType<scf::ForallOp>())
        blockLoops.push_back(op);
    });
    for (scf::ForallOp op : blockLoops)
      if (failed(mapToLaunch(op)))
        return signalPassFailure();
    if (deviceResident && failed(checkDeviceResidentFunctions()))
      return signalPassFailure();
  }

  /// device-resident: no host code touches an argument's elements, and
  /// every result is a distinct device buffer the function allocated (so a
  /// caller may free each one, and nothing host-side is handed out as
  /// device memory).
  LogicalResult checkDeviceResidentFunctions() {
    WalkResult r = getOperation()->walk([&](func::FuncOp fn) {
      if (fn.isExternal())
        return WalkResult::advance();
      for (BlockArgument arg : fn.getArguments())
        if (isa<BaseMemRefType>(arg.getType()) && !onlyDescribedOnHost(arg)) {
          fn.emitOpError("device-resident: argument #")
              << arg.getArgNumber() << " is read or written on the host";
          return WalkResult::interrupt();
        }
      WalkResult ret = fn.walk([&](func::ReturnOp op) {
        DenseSet<Value> seen;
        for (auto [i, v] : llvm::enumerate(op.getOperands()))
          if (isa<BaseMemRefType>(v.getType()) &&
              (!v.getDefiningOp<gpu::AllocOp>() || !seen.insert(v).second)) {
            op.emitOpError("device-resident: result #")
                << i << " is not a device buffer of its own that the function allocates";
            return WalkResult::interrupt();
          }
        return WalkResult::advance();
      });
      return ret.wasInterrupted() ? WalkResult::interrupt() : WalkResult::advance();
    });
    return failure(r.wasInterrupted());
  }

  /// device-resident: `buffer` (a function argument, or an allocation of
  /// the function) is used on the device as it is; an allocation becomes a
  /// gpu.alloc (and its frees gpu.dealloc).
  LogicalResult useOnDevice(RewriterBase &rewriter, scf::ForallOp forall, Value buffer) {
    auto describe = [&] {
      std::string s;
      llvm::raw_string_ostream os(s);
      buffer.printAsOperand(os, OpPrintingFlags());
      return s;
    };
    if (!onlyDescribedOnHost(buffer))
      return forall.emitOpError("device-resident: buffer ")
             << describe() << " is also read or written on the host";
    if (auto arg = dyn_cast<BlockArgument>(buffer);
        arg && isa<FunctionOpInterface>(arg.getOwner()->getParentOp()))
      return success();
    if (buffer.getDefiningOp<gpu::AllocOp>())
      return success(); // already moved to the device for an earlier kernel
    auto alloc = buffer.getDefiningOp<memref::AllocOp>();
    if (!alloc)
      return forall.emitOpError("device-resident: buffer ")
             << describe() << " is neither an argument nor an allocation of the function";
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPoint(alloc);
    Value device = gpu::AllocOp::create(rewriter, alloc.getLoc(), alloc.getType(),
                                        /*asyncToken=*/Type(), ValueRange{},
                                        alloc.getDynamicSizes(), ValueRange{})
                       .getMemref();
    for (Operation *user : llvm::make_early_inc_range(alloc->getUsers()))
      if (auto dealloc = dyn_cast<memref::DeallocOp>(user)) {
        rewriter.setInsertionPoint(dealloc);
        rewriter.replaceOpWithNewOp<gpu::DeallocOp>(dealloc, TypeRange{}, ValueRange{},
                                                    device);
      }
    rewriter.replaceOp(alloc, device);
    return success();
  }

  LogicalResult mapToLaunch(scf::ForallOp forall) {
    MLIRContext *ctx = &getContext();
    Location loc = forall.getLoc();
    if (forall.getRank() > 3 || forall.getNumResults() != 0)
      return forall.emitOpError("cannot map: more than 3 block dims or results");
    for (OpFoldResult lb : forall.getMixedLowerBound())
      if (getConstantIntValue(lb) != 0)
        return forall.emitOpError("cannot map: non-zero lower bound");
    for (OpFoldResult st : forall.getMixedStep())
      if (getConstantIntValue(st) != 1)
        return forall.emitOpError("cannot map: non-unit step");
    // The block size: the largest thread-level trip count inside.
    int64_t blockSize = 1;
    SmallVector<scf::ForallOp> threadLoops;
    WalkResult wr = forall.getBody()->walk([&](scf::ForallOp inner) {
      if (!hasGpuMapping(inner, /*threads=*/true) || inner.getRank() != 1) {
        inner.emitOpError("cannot map: nested loops must be 1-d thread loops");
        return WalkResult::interrupt();
      }
      std::optional<int64_t> ub = getConstantIntValue(inner.getMixedUpperBound()[0]);
      if (!ub || getConstantIntValue(inner.getMixedLowerBound()[0]) != 0 ||
          getConstantIntValue(inner.getMixedStep()[0]) != 1) {
        inner.emitOpError("cannot map: thread loops need 0..static bound, step 1");
        return WalkResult::interrupt();
      }
      blockSize = std::max(blockSize, *ub);
      threadLoops.push_back(inner);
      return WalkResult::advance();
    });
    if (wr.wasInterrupted())
      return failure();
    if (blockSize > 1024)
      return forall.emitOpError("cannot map: more than 1024 threads per block");

    IRRewriter rewriter(ctx);
    rewriter.setInsertionPoint(forall);
    // Buffers the kernel touches get device copies.
    SetVector<Value> captured;
    getUsedValuesDefinedAbove(forall.getRegion(), captured);
    // A strided host buffer (a subview: one sequence's rows of a ragged
    // batch, a row of a block table) goes through a dense host staging
    // buffer, which gpu.memcpy can copy.
    struct DeviceCopy {
      Value host, device, staging;
      bool read = false, written = false;
    };
    SmallVector<DeviceCopy> copies;
    for (Value v : captured) {
      auto mt = dyn_cast<MemRefType>(v.getType());
      if (!mt)
        continue;
      bool strided = !mt.getLayout().isIdentity();
      // A strided one is staged dense (below) and the kernel's accesses
      // take the dense device copy as it is: a cast back to the view's type
      // would keep the view's strides where they are static and address
      // the copy wrongly. So only accesses whose meaning does not depend on
      // the layout may use it.
      if (strided)
        for (Operation *user : v.getUsers())
          if (forall->isProperAncestor(user) &&
              !isa<memref::LoadOp, memref::StoreOp, memref::DimOp, memref::PrefetchOp,
                   vector::LoadOp, vector::StoreOp, vector::TransferReadOp,
                   vector::TransferWriteOp>(user))
            return user->emitOpError("cannot map: a strided host buffer (staged dense for the "
                                     "device) is used by this op");
      if (deviceResident) {
        if (strided)
          return forall.emitOpError("cannot map: device-resident buffer with a non-identity "
                                    "layout");
        if (failed(useOnDevice(rewriter, forall, v)))
          return failure();
        continue;
      }
      DeviceCopy c;
      c.host = v;
      BufferAccess access = accessInside(forall, v);
      c.written = access.written;
      // A buffer the kernel writes only in part keeps the rest of its
      // contents: copy it in too, unless it is freshly allocated (nothing to
      // keep).
      c.read = access.read || (access.written && !isFreshAllocation(v, forall));
      SmallVector<Value> dyn;
      for (int64_t i = 0; i < mt.getRank(); ++i)
        if (mt.isDynamicDim(i))
          dyn.push_back(memref::DimOp::create(rewriter, loc, v, i));
      auto dense = MemRefType::get(mt.getShape(), mt.getElementType());
      if (strided) {
        c.staging = memref::AllocOp::create(rewriter, loc, dense, dyn);
        if (c.read)
          memref::CopyOp::create(rewriter, loc, v, c.staging);
      }
      c.device = gpu::AllocOp::create(rewriter, loc, dense, /*asyncToken=*/Type(),
                                      ValueRange{}, dyn, ValueRange{})
                     .getMemref();
      if (c.read)
        gpu::MemcpyOp::create(rewriter, loc, TypeRange{}, ValueRange{}, c.device,
                              strided ? c.staging : v);
      copies.push_back(c);
    }

    // The grid: the forall's trip counts, 1 for missing dims.
    SmallVector<Value> grid;
    for (OpFoldResult ub : forall.getMixedUpperBound())
      grid.push_back(getValueOrCreateConstantIndexOp(rewriter, loc, ub));
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    while (grid.size() < 3)
      grid.push_back(one);
    Value bx = arith::ConstantIndexOp::create(rewriter, loc, blockSize);
    auto launch = gpu::LaunchOp::create(rewriter, loc, grid[0], grid[1], grid[2],
                                        bx, one, one);
    Block &body = launch.getBody().front();
    rewriter.setInsertionPointToEnd(&body);
    auto terminator = gpu::TerminatorOp::create(rewriter, loc);

    // Move the forall body in; its ivs are the block ids.
    Block *forallBody = forall.getBody();
    forallBody->getTerminator()->erase();
    gpu::KernelDim3 ids = launch.getBlockIds();
    Value idVals[3] = {ids.x, ids.y, ids.z};
    SmallVector<Value> repl;
    for (unsigned i = 0; i < forall.getRank(); ++i)
      repl.push_back(idVals[i]);
    rewriter.inlineBlockBefore(forallBody, terminator, repl);
    rewriter.eraseOp(forall);
    for (DeviceCopy &c : copies) {
      // A staged buffer is dense on the device, with its own strides: the
      // kernel's accesses take it as it is (checked above: only accesses
      // whose meaning does not depend on the layout).
      c.host.replaceUsesWithIf(c.device, [&](OpOperand &use) {
        return launch->isProperAncestor(use.getOwner());
      });
    }

    // Thread loops → predicated bodies + barrier.
    Value tid = launch.getThreadIds().x;
    for (scf::ForallOp inner : threadLoops) {
      rewriter.setInsertionPoint(inner);
      int64_t n = *getConstantIntValue(inner.getMixedUpperBound()[0]);
      Block *innerBody = inner.getBody();
      innerBody->getTerminator()->erase();
      if (n == blockSize) {
        rewriter.inlineBlockBefore(innerBody, inner, ValueRange{tid});
      } else {
        Value nv = arith::ConstantIndexOp::create(rewriter, loc, n);
        Value active = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ult, tid, nv);
        auto ifOp = scf::IfOp::create(rewriter, loc, active, /*withElse=*/false);
        rewriter.inlineBlockBefore(innerBody, ifOp.thenBlock()->getTerminator(),
                                   ValueRange{tid});
      }
      gpu::BarrierOp::create(rewriter, loc);
      rewriter.eraseOp(inner);
    }

    // Barriers inside a thread loop (a schedule whose threads run in
    // lockstep) become gpu.barrier.
    SmallVector<ptx::BarSyncOp> barriers;
    launch.getBody().walk([&](ptx::BarSyncOp a) { barriers.push_back(a); });
    for (ptx::BarSyncOp a : barriers) {
      rewriter.setInsertionPoint(a);
      rewriter.replaceOpWithNewOp<gpu::BarrierOp>(a);
    }

    // Allocation scopes dissolve; workgroup buffers become attributions and
    // private ones move to the top of the kernel.
    SmallVector<memref::AllocaScopeOp> scopes;
    launch.getBody().walk([&](memref::AllocaScopeOp s) { scopes.push_back(s); });
    for (memref::AllocaScopeOp s : llvm::reverse(scopes)) {
      Block *sb = &s.getBodyRegion().front();
      Operation *ret = sb->getTerminator();
      SmallVector<Value> results(ret->getOperands());
      rewriter.eraseOp(ret);
      rewriter.inlineBlockBefore(sb, s);
      rewriter.replaceOp(s, results);
    }
    SmallVector<memref::AllocaOp> allocas;
    launch.getBody().walk([&](memref::AllocaOp a) { allocas.push_back(a); });
    for (memref::AllocaOp a : allocas) {
      MemRefType t = a.getType();
      if (!t.hasStaticShape())
        return a.emitOpError("cannot map: dynamically sized kernel buffer");
      if (auto as = dyn_cast_or_null<gpu::AddressSpaceAttr>(t.getMemorySpace());
          as && as.getValue() == gpu::AddressSpace::Workgroup) {
        BlockArgument attr = launch.addWorkgroupAttribution(t, a.getLoc());
        rewriter.replaceOp(a, attr);
      } else {
        a->moveBefore(&body, body.begin());
      }
    }

    // Results back, device buffers freed.
    rewriter.setInsertionPointAfter(launch);
    for (DeviceCopy &c : copies) {
      if (c.written)
        gpu::MemcpyOp::create(rewriter, loc, TypeRange{}, ValueRange{},
                              c.staging ? c.staging : c.host, c.device);
      if (c.written && c.staging)
        memref::CopyOp::create(rewriter, loc, c.staging, c.host);
    }
    for (DeviceCopy &c : copies) {
      gpu::DeallocOp::create(rewriter, loc, TypeRange{}, ValueRange{}, c.device);
      if (c.staging)
        memref::DeallocOp::create(rewriter, loc, c.staging);
    }
    return success();
  }
};

} // namespace
