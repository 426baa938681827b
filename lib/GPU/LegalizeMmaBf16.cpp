//===- LegalizeMmaBf16.cpp - bf16 nvgpu.mma.sync to nvvm.mma.sync ----------===//
//
// attn-legalize-mma-bf16: upstream's nvgpu → NVVM lowering deduces PTX types
// for f16 (and tf32, integers) but not bf16. A bf16 m16n8k16 mma.sync is
// nvvm.mma.sync with 32-bit registers holding two bf16 each.
//
//===----------------------------------------------------------------------===//
#include "attn/GPU/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNLEGALIZEMMABF16
#include "attn/GPU/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {

struct AttnLegalizeMmaBf16Pass
    : mlir::attn::impl::AttnLegalizeMmaBf16Base<AttnLegalizeMmaBf16Pass> {
  void runOnOperation() override {
    SmallVector<nvgpu::MmaSyncOp> ops;
    getOperation()->walk([&](nvgpu::MmaSyncOp op) {
      if (cast<VectorType>(op.getMatrixA().getType()).getElementType().isBF16())
        ops.push_back(op);
    });
    IRRewriter rw(&getContext());
    for (nvgpu::MmaSyncOp op : ops) {
      if (op.getMmaShapeAsArray() != std::array<int64_t, 3>{16, 8, 16} ||
          !cast<VectorType>(op.getMatrixC().getType()).getElementType().isF32()) {
        op.emitOpError("attn-legalize-mma-bf16: only m16n8k16 bf16 -> f32");
        return signalPassFailure();
      }
      rw.setInsertionPoint(op);
      Location loc = op.getLoc();
      Type i32 = rw.getI32Type(), f32 = rw.getF32Type();
      // Registers: row r of a vector<R x 2 x bf16> fragment, as i32.
      auto registers = [&](Value frag) {
        SmallVector<Value> regs;
        int64_t rows = cast<VectorType>(frag.getType()).getDimSize(0);
        for (int64_t r = 0; r < rows; ++r) {
          Value pair = vector::ExtractOp::create(rw, loc, frag, ArrayRef<int64_t>{r});
          regs.push_back(LLVM::BitcastOp::create(rw, loc, i32, pair));
        }
        return regs;
      };
      SmallVector<Value> a = registers(op.getMatrixA()), b = registers(op.getMatrixB());
      SmallVector<Value> c;
      for (int64_t i = 0; i < 4; ++i)
        c.push_back(vector::ExtractOp::create(rw, loc, op.getMatrixC(),
                                              ArrayRef<int64_t>{i / 2, i % 2}));
      auto resTy = LLVM::LLVMStructType::getLiteral(rw.getContext(), {f32, f32, f32, f32});
      auto mma = NVVM::MmaOp::create(
          rw, loc, resTy, a, b, c, ArrayRef<int64_t>{16, 8, 16},
          std::optional<NVVM::MMAB1Op>(), std::optional<NVVM::MMAIntOverflow>(),
          std::array<NVVM::MMATypes, 2>{NVVM::MMATypes::bf16, NVVM::MMATypes::bf16},
          std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row, NVVM::MMALayout::col});
      SmallVector<Value> d;
      for (int64_t i = 0; i < 4; ++i)
        d.push_back(LLVM::ExtractValueOp::create(rw, loc, mma.getResult(), i));
      rw.replaceOp(op, vector::FromElementsOp::create(rw, loc, op.getRes().getType(), d));
    }
  }
};

} // namespace
