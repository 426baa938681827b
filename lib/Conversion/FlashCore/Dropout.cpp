//===- Dropout.cpp - the attn.dropout generator, once ---------------------===//
#include "Dropout.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <cmath>

namespace mlir::attn::flash {

Value dropoutKeeps(OpBuilder &b, Location loc, Value flat, Value seed, float rate) {
  Type type = flat.getType();
  auto c = [&](uint64_t v) -> Value {
    auto attr = b.getI64IntegerAttr(static_cast<int64_t>(v));
    if (auto vt = dyn_cast<VectorType>(type))
      return arith::ConstantOp::create(b, loc, DenseElementsAttr::get(vt, attr.getValue()));
    return arith::ConstantOp::create(b, loc, type, attr);
  };
  // splitmix64: z ^= z >> shift, then z *= mul (no multiply in the last step).
  auto mix = [&](Value z, int64_t shift, uint64_t mul) -> Value {
    Value x = arith::XOrIOp::create(b, loc, z, arith::ShRUIOp::create(b, loc, z, c(shift)));
    return mul ? arith::MulIOp::create(b, loc, x, c(mul)).getResult() : x;
  };
  Value counter = arith::AddIOp::create(b, loc, flat, c(1));
  if (auto vt = dyn_cast<VectorType>(type))
    seed = vector::BroadcastOp::create(b, loc, vt, seed);
  Value z = arith::AddIOp::create(b, loc, seed,
                                  arith::MulIOp::create(b, loc, counter, c(0x9E3779B97F4A7C15ULL)));
  z = mix(z, 30, 0xBF58476D1CE4E5B9ULL);
  z = mix(z, 27, 0x94D049BB133111EBULL);
  z = mix(z, 31, 0);
  auto threshold = static_cast<uint64_t>(std::ceil(static_cast<double>(rate) * 16777216.0));
  Value bits = arith::ShRUIOp::create(b, loc, z, c(40));
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, bits, c(threshold));
}

Value dropoutSeedValue(OpBuilder &b, Location loc, Value runtimeSeed, int64_t seed) {
  if (!runtimeSeed)
    return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(seed));
  if (isa<MemRefType>(runtimeSeed.getType()))
    return memref::LoadOp::create(b, loc, runtimeSeed, ValueRange());
  return tensor::ExtractOp::create(b, loc, runtimeSeed, ValueRange());
}

double dropoutScale(float rate) { return 1.0 / (1.0 - static_cast<double>(rate)); }

Value dropoutFactors(KernelBuilder &e, Value first, Value seed, float rate) {
  int64_t w = e.width;
  auto lanes = VectorType::get({w}, e.b.getI64Type());
  Value base = vector::BroadcastOp::create(
      e.b, e.loc, lanes, arith::IndexCastOp::create(e.b, e.loc, e.b.getI64Type(), first));
  SmallVector<int64_t> iota(w);
  for (int64_t l = 0; l < w; ++l)
    iota[l] = l;
  Value offsets = arith::ConstantOp::create(e.b, e.loc, e.b.getI64VectorAttr(iota));
  Value keep = dropoutKeeps(e.b, e.loc, arith::AddIOp::create(e.b, e.loc, base, offsets), seed, rate);
  return e.select(keep, e.splat(static_cast<float>(dropoutScale(rate))), e.splat(0.0));
}

Value probabilityIndex(KernelBuilder &e, Value b, int64_t heads, Value h, Value tq, Value q,
                       Value tk, Value key) {
  Value row = e.add(e.mul(e.add(e.mul(b, e.idx(heads)), h), tq), q);
  return e.add(e.mul(row, tk), key);
}

} // namespace mlir::attn::flash
