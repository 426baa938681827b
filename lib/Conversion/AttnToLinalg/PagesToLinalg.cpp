//===- PagesToLinalg.cpp - attn.gather_pages, attn.dequantize to linalg ---===//
//
// The reference lowerings of the KV-cache ops. attn.dequantize: one
// elementwise linalg.generic, float(x) · scale broadcast over D (or one
// scale), float() of int8 or of fp8 e4m3 bits.
// attn.gather_pages: one linalg.generic over the
// [B, Hkv, MB·BS, D] result whose body reads the block table and then the
// cache with tensor.extract. Block ids are clamped into [0, NB) and a row
// at or past the sequence's length (or any row of an empty cache) is 0
// without reading the cache, so no table contents make it read outside
// the cache; that a used block id is valid is checked before the call
// (docs/serving.md).
//
//===----------------------------------------------------------------------===//
#include "PagesToLinalg.h"

#include "LinalgBuilders.h"

#include "attn/Dialect/AttnDialect.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cmath>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::linalg_lowering;

namespace {

/// An index-typed copy of an integer scalar.
Value toIndex(OpBuilder &b, Location loc, Value v) {
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
}

/// y[b,h,j,d] = j < len[b] ? cache[clamp(table[b, j / BS]), j mod BS, h, d] : 0
/// (cache[.., h, j mod BS, d] for the hnd layout)
struct GatherPagesToLinalg : OpConversionPattern<GatherPagesOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(GatherPagesOp op, OpAdaptor a,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType ty = op.getType();
    Value cache = a.getCache(), table = a.getTable(), lengths = a.getLengths();
    Value blockSize = tensor::DimOp::create(rewriter, loc, cache, op.getBlockSizeDim());
    bool nhd = op.getLayout() == KvLayout::nhd;
    Value numBlocks = tensor::DimOp::create(rewriter, loc, cache, 0);
    Value init = tensor::EmptyOp::create(rewriter, loc, resultSizes(rewriter, op),
                                         ty.getElementType());
    AffineMap id = rewriter.getMultiDimIdentityMap(4);
    Value y =
        linalg::GenericOp::create(
            rewriter, loc, TypeRange{ty}, ValueRange{}, ValueRange{init},
            ArrayRef<AffineMap>{id}, SmallVector<IteratorType>(4, kPar),
            [&](OpBuilder &b, Location l, ValueRange) {
              auto cidx = [&](int64_t v) {
                return arith::ConstantIndexOp::create(b, l, v).getResult();
              };
              Value bi = linalg::IndexOp::create(b, l, 0);
              Value h = linalg::IndexOp::create(b, l, 1);
              Value j = linalg::IndexOp::create(b, l, 2);
              Value d = linalg::IndexOp::create(b, l, 3);
              using P = arith::CmpIPredicate;
              Value used = arith::CmpIOp::create(b, l, P::sgt, numBlocks, cidx(0));
              if (lengths) {
                Value len = toIndex(b, l, tensor::ExtractOp::create(b, l, lengths, ValueRange{bi}));
                used = arith::AndIOp::create(b, l, used,
                                             arith::CmpIOp::create(b, l, P::slt, j, len));
              }
              auto read = scf::IfOp::create(b, l, used, [&](OpBuilder &t, Location tl) {
                Value blk = arith::DivUIOp::create(t, tl, j, blockSize);
                Value row = arith::RemUIOp::create(t, tl, j, blockSize);
                Value page = toIndex(t, tl, tensor::ExtractOp::create(t, tl, table,
                                                                      ValueRange{bi, blk}));
                Value last = arith::SubIOp::create(t, tl, numBlocks, cidx(1));
                page = arith::MaxSIOp::create(t, tl, cidx(0),
                                              arith::MinSIOp::create(t, tl, page, last));
                SmallVector<Value> at{page, row, h, d};
                if (!nhd)
                  std::swap(at[1], at[2]);
                Value x = tensor::ExtractOp::create(t, tl, cache, at);
                scf::YieldOp::create(t, tl, x);
              }, [&](OpBuilder &e, Location el) {
                scf::YieldOp::create(e, el, floatConst(e, el, ty.getElementType(), 0.0));
              });
              linalg::YieldOp::create(b, l, read.getResult(0));
            })
            .getResult(0);
    rewriter.replaceOp(op, y);
    return success();
  }
};

/// The value of fp8 e4m3 bits `x` (an f8E4M3FN scalar) as f32, from the
/// format's definition: exponent field e, mantissa m, value
/// (8 + m)·2^(e−10) for e > 0 and m·2^−9 for e = 0 (subnormal),
/// NaN for S.1111.111, negated by the sign bit. (The fused kernel decodes
/// by another route, through f16: KernelBuilder::vloadF32.)
Value decodeE4M3(OpBuilder &b, Location l, Value x) {
  Type i32 = b.getI32Type(), f32 = b.getF32Type();
  auto c = [&](int64_t v) { return arith::ConstantIntOp::create(b, l, i32, v).getResult(); };
  auto f = [&](double v) { return floatConst(b, l, f32, v); };
  using P = arith::CmpIPredicate;
  Value bits = arith::ExtUIOp::create(
      b, l, i32, arith::BitcastOp::create(b, l, b.getI8Type(), x));
  Value e = arith::AndIOp::create(b, l, arith::ShRUIOp::create(b, l, bits, c(3)), c(15));
  Value m = arith::AndIOp::create(b, l, bits, c(7));
  // 2^(e − 10) as f32 bits: biased exponent e − 10 + 127.
  Value pow2 = arith::BitcastOp::create(
      b, l, f32, arith::ShLIOp::create(b, l, arith::AddIOp::create(b, l, e, c(117)), c(23)));
  Value mf = arith::UIToFPOp::create(b, l, f32, m);
  Value normal = arith::MulFOp::create(b, l, arith::AddFOp::create(b, l, mf, f(8.0)), pow2);
  Value subnormal = arith::MulFOp::create(b, l, mf, f(1.0 / 512.0));
  Value mag = arith::SelectOp::create(b, l, arith::CmpIOp::create(b, l, P::eq, e, c(0)),
                                      subnormal, normal);
  Value nan = arith::CmpIOp::create(b, l, P::eq, arith::AndIOp::create(b, l, bits, c(0x7F)),
                                    c(0x7F));
  mag = arith::SelectOp::create(b, l, nan, f(std::nan("")), mag);
  Value negative = arith::CmpIOp::create(b, l, P::ne, arith::AndIOp::create(b, l, bits, c(0x80)),
                                         c(0));
  return arith::SelectOp::create(b, l, negative, arith::NegFOp::create(b, l, mag), mag);
}

/// y[b,h,j,d] = float(x[b,h,j,d]) · scale[b,h,j] (or · scale, rank 0);
/// float() of int8 or of fp8 e4m3 bits (decodeE4M3).
struct DequantizeToLinalg : OpConversionPattern<DequantizeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(DequantizeOp op, OpAdaptor a,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType ty = op.getType();
    Type elt = ty.getElementType();
    MLIRContext *ctx = rewriter.getContext();
    AffineMap scaleMap =
        op.hasTensorScale()
            ? AffineMap::get(4, 0, ctx)
            : AffineMap::get(4, 0,
                             {getAffineDimExpr(0, ctx), getAffineDimExpr(1, ctx),
                              getAffineDimExpr(2, ctx)},
                             ctx);
    bool fp8 = op.isFp8();
    Value y = elementwise(rewriter, loc, a.getInput(), ValueRange{a.getScale()}, {scaleMap}, ty,
                          resultSizes(rewriter, op),
                          [&](OpBuilder &b, Location l, ValueRange args) -> Value {
                            Value x = fp8 ? decodeE4M3(b, l, args[0])
                                          : arith::SIToFPOp::create(b, l, b.getF32Type(),
                                                                    args[0]).getResult();
                            Value v = arith::MulFOp::create(b, l, x, args[1]);
                            return castFloat(b, l, v, elt); // f32 → f16/bf16/f64
                          });
    rewriter.replaceOp(op, y);
    return success();
  }
};

} // namespace

void mlir::attn::populatePagesToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<GatherPagesToLinalg, DequantizeToLinalg>(patterns.getContext());
}
