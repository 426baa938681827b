//===- Dropout.cpp - the attn.dropout generator, once ---------------------===//
#include "Dropout.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include <cmath>

namespace mlir::attn::flash {

Value dropoutKeeps(OpBuilder &b, Location loc, Value flat, int64_t seed, float rate) {
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
  Value z = arith::AddIOp::create(b, loc, c(static_cast<uint64_t>(seed)),
                                  arith::MulIOp::create(b, loc, counter, c(0x9E3779B97F4A7C15ULL)));
  z = mix(z, 30, 0xBF58476D1CE4E5B9ULL);
  z = mix(z, 27, 0x94D049BB133111EBULL);
  z = mix(z, 31, 0);
  auto threshold = static_cast<uint64_t>(std::ceil(static_cast<double>(rate) * 16777216.0));
  Value bits = arith::ShRUIOp::create(b, loc, z, c(40));
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, bits, c(threshold));
}

double dropoutScale(float rate) { return 1.0 / (1.0 - static_cast<double>(rate)); }

} // namespace mlir::attn::flash
