//===- EmulateAmx.cpp - AMX tile operations as vector code ----------------===//
//
// attn-emulate-amx: each !amx.tile becomes a 2-D vector, and the tile
// loads, stores, zeroes and bf16/f16 pair products become vector loads,
// stores and f32 FMAs with the same results (to the hardware's rounding),
// so that the AMX kernels (AmxTiles.cpp) run and are checked on hosts
// without AMX (docs/cpu.md, "AMX tiles").
//
//===----------------------------------------------------------------------===//
#include "attn/Transforms/Passes.h"

#include "mlir/Dialect/AMX/AMXDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNEMULATEAMX
#include "attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {

VectorType vectorOf(amx::TileType t) {
  return VectorType::get(t.getShape(), t.getElementType());
}

/// The memref indices of row `r` of a tile at `indices`: the
/// second-innermost index plus r (the rows of a tile without an explicit
/// stride are the memref's rows).
SmallVector<Value> rowIndices(OpBuilder &b, Location loc, ValueRange indices, int64_t r) {
  SmallVector<Value> at(indices.begin(), indices.end());
  Value &row = at[at.size() - 2];
  row = arith::AddIOp::create(b, loc, row, arith::ConstantIndexOp::create(b, loc, r));
  return at;
}

/// A tile's row and the vector of memref elements it occupies (bf16 pairs
/// read from an i32 buffer: half as many elements); the same type where the
/// memref holds the tile's elements.
struct RowTypes {
  VectorType row, memory;
};
RowTypes rowTypes(VectorType tile, Type memElt) {
  VectorType row = VectorType::get({tile.getDimSize(1)}, tile.getElementType());
  int64_t bits = row.getNumElements() * row.getElementTypeBitWidth();
  return {row, VectorType::get({bits / memElt.getIntOrFloatBitWidth()}, memElt)};
}

/// Why a tile load or store is not emulated, or null: the emulation takes
/// no explicit stride, a memref of rank 2 or more, and memref elements
/// whose width divides a tile row.
const char *unsupportedAccess(Value stride, Type memref, amx::TileType tile) {
  auto m = cast<MemRefType>(memref);
  if (stride)
    return "a tile load or store with an explicit stride";
  if (m.getRank() < 2)
    return "a tile load or store on a memref of rank below 2";
  Type elt = m.getElementType();
  int64_t rowBits = tile.getShape()[1] * tile.getElementType().getIntOrFloatBitWidth();
  if (!elt.isIntOrFloat() || rowBits % elt.getIntOrFloatBitWidth())
    return "a tile load or store whose memref elements do not divide a tile row";
  return nullptr;
}

struct EmulateTileZero : OpConversionPattern<amx::TileZeroOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(amx::TileZeroOp op, OpAdaptor,
                                ConversionPatternRewriter &rewriter) const override {
    VectorType t = vectorOf(op.getTileType());
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(op, t, rewriter.getZeroAttr(t));
    return success();
  }
};

struct EmulateTileLoad : OpConversionPattern<amx::TileLoadOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(amx::TileLoadOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    VectorType t = vectorOf(op.getTileType());
    auto [row, memRow] = rowTypes(t, op.getMemRefType().getElementType());
    Location loc = op.getLoc();
    Value tile = arith::ConstantOp::create(rewriter, loc, t, rewriter.getZeroAttr(t));
    for (int64_t r = 0; r < t.getDimSize(0); ++r) {
      Value v = vector::LoadOp::create(rewriter, loc, memRow, adaptor.getBase(),
                                       rowIndices(rewriter, loc, adaptor.getIndices(), r));
      if (memRow != row)
        v = vector::BitCastOp::create(rewriter, loc, row, v);
      tile = vector::InsertOp::create(rewriter, loc, v, tile, ArrayRef<int64_t>{r});
    }
    rewriter.replaceOp(op, tile);
    return success();
  }
};

struct EmulateTileStore : OpConversionPattern<amx::TileStoreOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(amx::TileStoreOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    VectorType t = vectorOf(cast<amx::TileType>(op.getVal().getType()));
    auto [row, memRow] = rowTypes(t, cast<MemRefType>(op.getBase().getType()).getElementType());
    Location loc = op.getLoc();
    for (int64_t r = 0; r < t.getDimSize(0); ++r) {
      Value v = vector::ExtractOp::create(rewriter, loc, adaptor.getVal(), ArrayRef<int64_t>{r});
      if (memRow != row)
        v = vector::BitCastOp::create(rewriter, loc, memRow, v);
      vector::StoreOp::create(rewriter, loc, v, adaptor.getBase(),
                              rowIndices(rewriter, loc, adaptor.getIndices(), r));
    }
    rewriter.eraseOp(op);
    return success();
  }
};

/// c[m][n] + Σ_p a[m][2p]·b[p][2n] + a[m][2p+1]·b[p][2n+1], each term an
/// f32 FMA (products of bf16 or f16 values are exact in f32). b's pair
/// rows are split into their even and odd halves once, widened to f32;
/// a and c go through stack buffers (in a memref.alloca_scope) so that the
/// rows are an scf.for, not 16 unrolled copies: the AMX kernels' many
/// tile products stay quick to compile.
struct EmulateTileMulF : OpConversionPattern<amx::TileMulFOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(amx::TileMulFOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    VectorType c = vectorOf(op.getTileType());
    VectorType a = vectorOf(op.getLhsTileType());
    int64_t rows = c.getDimSize(0), cols = c.getDimSize(1), pairs = a.getDimSize(1) / 2;
    Type f32 = rewriter.getF32Type();
    VectorType f32Row = VectorType::get({cols}, f32);
    VectorType aRowType = VectorType::get({a.getDimSize(1)}, a.getElementType());
    SmallVector<int64_t> even, odd;
    for (int64_t n = 0; n < cols; ++n) {
      even.push_back(2 * n);
      odd.push_back(2 * n + 1);
    }
    auto widen = [&](Value v, Type to) { return arith::ExtFOp::create(rewriter, loc, to, v); };
    auto idx = [&](int64_t i) { return arith::ConstantIndexOp::create(rewriter, loc, i); };
    SmallVector<Value> bEven, bOdd;
    for (int64_t p = 0; p < pairs; ++p) {
      Value row =
          vector::ExtractOp::create(rewriter, loc, adaptor.getRhs(), ArrayRef<int64_t>{p});
      bEven.push_back(widen(vector::ShuffleOp::create(rewriter, loc, row, row, even), f32Row));
      bOdd.push_back(widen(vector::ShuffleOp::create(rewriter, loc, row, row, odd), f32Row));
    }
    // (The scope returns the rows: a 2-D vector would reach a branch
    // operand before the vector types are converted.)
    auto scope = memref::AllocaScopeOp::create(rewriter, loc,
                                               SmallVector<Type>(rows, Type(f32Row)));
    rewriter.setInsertionPointToStart(&scope.getBodyRegion().emplaceBlock());
    Value aBuf = memref::AllocaOp::create(
        rewriter, loc, MemRefType::get(a.getShape(), a.getElementType()));
    Value cBuf = memref::AllocaOp::create(rewriter, loc, MemRefType::get(c.getShape(), f32));
    for (int64_t m = 0; m < rows; ++m) {
      for (auto [tile, buf] : {std::pair{adaptor.getLhs(), aBuf}, std::pair{adaptor.getAcc(), cBuf}})
        vector::StoreOp::create(
            rewriter, loc, vector::ExtractOp::create(rewriter, loc, tile, ArrayRef<int64_t>{m}),
            buf, ValueRange{idx(m), idx(0)});
    }
    scf::ForOp::create(
        rewriter, loc, idx(0), idx(rows), idx(1), ValueRange{},
        [&](OpBuilder &b, Location, Value m, ValueRange) {
          Value aRow = vector::LoadOp::create(b, loc, aRowType, aBuf, ValueRange{m, idx(0)});
          Value sum = vector::LoadOp::create(b, loc, f32Row, cBuf, ValueRange{m, idx(0)});
          for (int64_t p = 0; p < pairs; ++p)
            for (auto [k, half] : {std::pair<int64_t, Value *>{2 * p, &bEven[p]},
                                   std::pair<int64_t, Value *>{2 * p + 1, &bOdd[p]}}) {
              Value x = vector::ExtractOp::create(b, loc, aRow, ArrayRef<int64_t>{k});
              Value splat = vector::BroadcastOp::create(b, loc, f32Row, widen(x, f32));
              sum = vector::FMAOp::create(b, loc, splat, *half, sum);
            }
          vector::StoreOp::create(b, loc, sum, cBuf, ValueRange{m, idx(0)});
          scf::YieldOp::create(b, loc);
        });
    SmallVector<Value> sums;
    for (int64_t m = 0; m < rows; ++m)
      sums.push_back(
          vector::LoadOp::create(rewriter, loc, f32Row, cBuf, ValueRange{idx(m), idx(0)}));
    memref::AllocaScopeReturnOp::create(rewriter, loc, sums);
    rewriter.setInsertionPointAfter(scope);
    Value result = arith::ConstantOp::create(rewriter, loc, c, rewriter.getZeroAttr(c));
    for (int64_t m = 0; m < rows; ++m)
      result = vector::InsertOp::create(rewriter, loc, scope.getResult(m), result,
                                        ArrayRef<int64_t>{m});
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct AttnEmulateAmxPass : mlir::attn::impl::AttnEmulateAmxBase<AttnEmulateAmxPass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    // What it does not emulate, each named at its op (the conversion's own
    // "failed to legalize" would not say why); the patterns take the rest.
    bool unsupported = false;
    getOperation()->walk([&](Operation *op) {
      const char *why = nullptr;
      if (isa<amx::TileMulIOp>(op))
        why = "amx.tile_muli";
      else if (auto load = dyn_cast<amx::TileLoadOp>(op))
        why = unsupportedAccess(load.getStride(), load.getBase().getType(), load.getTileType());
      else if (auto store = dyn_cast<amx::TileStoreOp>(op))
        why = unsupportedAccess(store.getStride(), store.getBase().getType(),
                                cast<amx::TileType>(store.getVal().getType()));
      if (why) {
        op->emitError() << "attn-emulate-amx: " << why << " is not emulated";
        unsupported = true;
      }
    });
    if (unsupported)
      return signalPassFailure();
    TypeConverter types;
    types.addConversion([](Type t) { return t; });
    types.addConversion([](amx::TileType t) -> Type { return vectorOf(t); });
    ConversionTarget target(*ctx);
    target.addIllegalDialect<amx::AMXDialect>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    RewritePatternSet patterns(ctx);
    patterns.add<EmulateTileZero, EmulateTileLoad, EmulateTileStore, EmulateTileMulF>(types,
                                                                                       ctx);
    if (failed(applyPartialConversion(getOperation(), target, std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
