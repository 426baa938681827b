//===- AlignWorkgroupBuffers.cpp - 16-byte aligned shared memory ----------===//
//
// attn-align-workgroup-buffers: convert-gpu-to-nvvm aligns a workgroup
// attribution to its element type unless it carries llvm.align; cp.async of
// 16 bytes and ldmatrix need 16-byte aligned shared addresses.
//
//===----------------------------------------------------------------------===//
#include "attn/GPU/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

using namespace mlir;

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNALIGNWORKGROUPBUFFERS
#include "attn/GPU/Passes.h.inc"
} // namespace mlir::attn

namespace {

struct AttnAlignWorkgroupBuffersPass
    : mlir::attn::impl::AttnAlignWorkgroupBuffersBase<AttnAlignWorkgroupBuffersPass> {
  using AttnAlignWorkgroupBuffersBase::AttnAlignWorkgroupBuffersBase;
  void runOnOperation() override {
    if (alignment < 1 || (alignment & (alignment - 1))) {
      getOperation()->emitError() << "attn-align-workgroup-buffers: alignment must be a "
                                     "power of two, got "
                                  << static_cast<int64_t>(alignment);
      return signalPassFailure();
    }
    auto name = StringAttr::get(&getContext(), LLVM::LLVMDialect::getAlignAttrName());
    getOperation()->walk([&](gpu::GPUFuncOp fn) {
      for (unsigned i = 0; i < fn.getNumWorkgroupAttributions(); ++i) {
        auto have = dyn_cast_or_null<IntegerAttr>(fn.getWorkgroupAttributionAttr(i, name));
        if (!have || have.getInt() < alignment)
          fn.setWorkgroupAttributionAttr(
              i, name, IntegerAttr::get(IntegerType::get(&getContext(), 64), alignment));
      }
    });
  }
};

} // namespace
