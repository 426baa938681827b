//===- IsolateAllocaScopes.cpp - alloca scopes where blocks may follow -----===//
//
// finalize-memref-to-llvm turns a memref.alloca_scope into blocks; a scope
// directly inside a single-block region (scf.if, scf.for) is wrapped in
// scf.execute_region no_inline first, whose region may hold them
// (attn-isolate-alloca-scopes).
//
//===----------------------------------------------------------------------===//
#include "attn/Transforms/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNISOLATEALLOCASCOPES
#include "attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {

struct AttnIsolateAllocaScopesPass
    : mlir::attn::impl::AttnIsolateAllocaScopesBase<AttnIsolateAllocaScopesPass> {
  void runOnOperation() override {
    SmallVector<memref::AllocaScopeOp> scopes;
    getOperation()->walk([&](memref::AllocaScopeOp scope) {
      Operation *parent = scope->getParentOp();
      if (parent && parent->hasTrait<OpTrait::SingleBlock>())
        scopes.push_back(scope);
    });
    for (memref::AllocaScopeOp scope : scopes) {
      OpBuilder b(scope);
      auto region = scf::ExecuteRegionOp::create(b, scope.getLoc(), scope.getResultTypes());
      region.setNoInline(true);
      Block &body = region.getRegion().emplaceBlock();
      scope->replaceAllUsesWith(region.getResults());
      scope->moveBefore(&body, body.end());
      b.setInsertionPointToEnd(&body);
      scf::YieldOp::create(b, scope.getLoc(), scope.getResults());
    }
  }
};

} // namespace
