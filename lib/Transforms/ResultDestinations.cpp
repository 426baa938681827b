//===- ResultDestinations.cpp - results written into the caller's buffers -===//
//
// attn-result-destinations: each public function that nothing calls takes
// one destination buffer per result; a result allocated by the function
// itself is that buffer when the caller passes one of the right sizes
// (docs/embedding.md, "Buffers"; measured in bench/NOTES.md, 2026-12-07).
//
//===----------------------------------------------------------------------===//
#include "attn/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNRESULTDESTINATIONS
#include "attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {

/// The allocation a returned value is, through casts: a memref.alloc of the
/// function's entry block with an identity layout, whose value (and casts
/// of it) nothing deallocates. Null when the value is anything else.
memref::AllocOp returnedAllocation(Value v, Block &entry) {
  while (auto cast = v.getDefiningOp<memref::CastOp>())
    v = cast.getSource();
  auto alloc = v.getDefiningOp<memref::AllocOp>();
  if (!alloc || alloc->getBlock() != &entry || !alloc.getType().getLayout().isIdentity() ||
      alloc.getType().getMemorySpace())
    return nullptr;
  SmallVector<Value> aliases{alloc.getResult()};
  while (!aliases.empty()) {
    Value a = aliases.pop_back_val();
    for (Operation *user : a.getUsers()) {
      if (isa<memref::DeallocOp>(user))
        return nullptr;
      if (auto cast = dyn_cast<memref::CastOp>(user))
        aliases.push_back(cast.getResult());
    }
  }
  return alloc;
}

/// `%use = dest != null && dest's sizes are the allocation's`, and the
/// allocation replaced by `scf.if %use { dest } else { alloc }`. The
/// destination has the returned type, which may be a cast of the
/// allocation's (dynamic where the allocation is static): each size the
/// destination's type leaves dynamic is compared at run time.
void allocateIntoDestination(memref::AllocOp alloc, Value dest) {
  OpBuilder b(alloc);
  Location loc = alloc.getLoc();
  MemRefType type = alloc.getType();
  auto destType = cast<MemRefType>(dest.getType());
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value pointer = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, dest);
  Value use = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, pointer, zero);
  unsigned dynamic = 0;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    Value allocSize = type.isDynamicDim(d) ? alloc.getDynamicSizes()[dynamic++] : Value();
    if (!destType.isDynamicDim(d))
      continue;
    Value want = allocSize ? allocSize
                           : Value(arith::ConstantIndexOp::create(b, loc, type.getDimSize(d)));
    Value size = memref::DimOp::create(b, loc, dest, d);
    Value same = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, size, want);
    use = arith::AndIOp::create(b, loc, use, same);
  }
  auto choice = scf::IfOp::create(b, loc, TypeRange{type}, use, /*withElse=*/true);
  b.setInsertionPointToStart(choice.thenBlock());
  Value chosen = dest;
  if (destType != type)
    chosen = memref::CastOp::create(b, loc, type, dest);
  scf::YieldOp::create(b, loc, chosen);
  b.setInsertionPointToStart(choice.elseBlock());
  auto fresh = cast<memref::AllocOp>(b.clone(*alloc));
  scf::YieldOp::create(b, loc, fresh.getResult());
  alloc.getResult().replaceAllUsesWith(choice.getResult(0));
  alloc.erase();
}

struct AttnResultDestinationsPass
    : mlir::attn::impl::AttnResultDestinationsBase<AttnResultDestinationsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (auto fn : module.getOps<func::FuncOp>()) {
      if (fn.isPrivate() || fn.isExternal() || fn.getNumResults() == 0 ||
          !SymbolTable::symbolKnownUseEmpty(fn, module))
        continue;
      if (!llvm::all_of(fn.getResultTypes(), llvm::IsaPred<MemRefType>)) {
        fn.emitError("attn-result-destinations: a result that is not a ranked memref (run "
                     "it after bufferisation)");
        return signalPassFailure();
      }
      Block &entry = fn.getBody().front();
      unsigned first = fn.getNumArguments();
      SmallVector<Type> types(fn.getResultTypes());
      SmallVector<unsigned> positions(types.size(), first);
      SmallVector<DictionaryAttr> attrs(types.size(), DictionaryAttr());
      SmallVector<Location> locs(types.size(), fn.getLoc());
      if (failed(fn.insertArguments(positions, types, attrs, locs))) {
        fn.emitError("attn-result-destinations: could not add the destination arguments");
        return signalPassFailure();
      }
      // Each allocation once: a buffer returned twice goes to the first
      // result's destination (the runtime copies it for the second).
      llvm::SmallPtrSet<Operation *, 4> wired;
      SmallVector<func::ReturnOp> returns(fn.getOps<func::ReturnOp>());
      if (returns.size() != 1)
        continue;
      for (auto [i, v] : llvm::enumerate(returns.front().getOperands())) {
        memref::AllocOp alloc = returnedAllocation(v, entry);
        if (!alloc || !wired.insert(alloc).second)
          continue;
        Value dest = fn.getArgument(first + i);
        if (!memref::CastOp::areCastCompatible(dest.getType(), alloc.getType()))
          continue;
        allocateIntoDestination(alloc, dest);
      }
    }
  }
};

} // namespace
