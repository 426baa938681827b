//===- Microkernels.cpp - register-level building blocks ------------------===//
//
// See Microkernels.h.
//
//===----------------------------------------------------------------------===//
#include "Microkernels.h"

#include "mlir/Dialect/X86Vector/Transforms.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

using namespace mlir;

namespace mlir::attn::loops {

int64_t projectRowBlockFor(int64_t vectorWidth) {
  return vectorWidth >= 16 ? 3 * kRowBlock : kRowBlock;
}

int64_t rowBlockFor(int64_t vectorWidth) {
  return vectorWidth >= 16 ? 2 * kRowBlock : kRowBlock;
}

int64_t accumulatorBudget(int64_t vectorWidth) { return vectorWidth >= 16 ? 16 : 8; }

std::pair<SmallVector<int64_t>, SmallVector<int64_t>> halfSwapMasks(int64_t w, int64_t h) {
  SmallVector<int64_t> low, high;
  for (int64_t j = 0; j < w; ++j) {
    bool set = (j & h) != 0;
    low.push_back(set ? w + j - h : j);
    high.push_back(set ? w + j : j + h);
  }
  return {low, high};
}

/// The 8 × 8 transpose of 32-bit rows by upstream's AVX2 lowering
/// (x86vector::avx2::transpose8x8xf32: unpacks, shuffles, vblendps and
/// 128-bit permutes; integer rows bitcast to f32 and back), for a target
/// with AVX2 (its vblendps is inline assembly, which LLVM would not
/// legalise for a CPU without AVX). At 16 lanes the project's shuffles stay:
/// upstream's vector.transpose lowered by shuffle16x16 (unpacks, then
/// vshuff64x2) made the projections 4–11 % slower on Zen 5, and the
/// 8-lane swap was neither faster nor slower (bench/NOTES.md, 2026-12-08:
/// Upstream transposes for the packing).
static bool transposeByAvx2(KernelBuilder &e, SmallVectorImpl<Value> &block, bool avx2) {
  auto rowType = cast<VectorType>(block[0].getType());
  if (!avx2 || e.width != 8 || rowType.getElementTypeBitWidth() != 32)
    return false;
  auto f32Row = VectorType::get({8}, e.b.getF32Type());
  for (Value &row : block)
    if (row.getType() != f32Row)
      row = vector::BitCastOp::create(e.b, e.loc, f32Row, row);
  ImplicitLocOpBuilder ib(e.loc, e.b);
  x86vector::avx2::transpose8x8xf32(ib, block);
  if (rowType != f32Row)
    for (Value &row : block)
      row = vector::BitCastOp::create(e.b, e.loc, rowType, row);
  return true;
}

void transposeBlock(KernelBuilder &e, function_ref<Value(int64_t)> load,
                    function_ref<void(int64_t, Value)> store, bool avx2) {
  int64_t w = e.width;
  SmallVector<Value> block;
  for (int64_t x = 0; x < w; ++x)
    block.push_back(load(x));
  if (transposeByAvx2(e, block, avx2)) {
    for (int64_t x = 0; x < w; ++x)
      store(x, block[x]);
    return;
  }
  for (int64_t h = w / 2; h >= 1; h /= 2) {
    auto [low, high] = halfSwapMasks(w, h);
    for (int64_t i = 0; i < w; ++i) {
      if (i & h)
        continue;
      Value a = block[i], b = block[i + h];
      block[i] = vector::ShuffleOp::create(e.b, e.loc, a, b, low);
      block[i + h] = vector::ShuffleOp::create(e.b, e.loc, a, b, high);
    }
  }
  for (int64_t x = 0; x < w; ++x)
    store(x, block[x]);
}

Value combineHalves(KernelBuilder &e, Value a, Value b, int64_t h,
                    function_ref<Value(Value, Value)> combine) {
  auto [low, high] = halfSwapMasks(e.width, h);
  Value lowHalves = vector::ShuffleOp::create(e.b, e.loc, a, b, low);
  Value highHalves = vector::ShuffleOp::create(e.b, e.loc, a, b, high);
  return combine(lowHalves, highHalves);
}

int64_t reverseBits(int64_t i, int64_t bits) {
  int64_t r = 0;
  for (int64_t k = 0; k < bits; ++k)
    r |= ((i >> k) & 1) << (bits - 1 - k);
  return r;
}

void foldSlotsOfRows(KernelBuilder &e, int64_t rows,
                     function_ref<Value(int64_t, int64_t)> slotOf,
                     function_ref<Value(Value, Value)> combine,
                     function_ref<void(int64_t, Value)> done) {
  int64_t w = e.width, bits = llvm::Log2_64(w);
  // Per row, the folded vectors not yet paired: (vector, levels done).
  SmallVector<SmallVector<std::pair<Value, int64_t>>> pending(rows);
  for (int64_t slot = 0; slot < w; ++slot) {
    for (int64_t r = 0; r < rows; ++r) {
      auto &stack = pending[r];
      stack.push_back({slotOf(slot, r), 0});
      while (stack.size() >= 2 && stack[stack.size() - 2].second == stack.back().second) {
        auto [b, l] = stack.pop_back_val();
        Value a = stack.pop_back_val().first;
        stack.push_back({combineHalves(e, a, b, w >> (l + 1), combine), l + 1});
      }
    }
  }
  SmallVector<int64_t> order; // lane l of the tree's result: slot reverseBits(l)
  for (int64_t l = 0; l < w; ++l)
    order.push_back(reverseBits(l, bits));
  for (int64_t r = 0; r < rows; ++r) {
    assert(pending[r].size() == 1 && pending[r][0].second == bits && "tree not complete");
    Value folded = pending[r][0].first;
    done(r, vector::ShuffleOp::create(e.b, e.loc, folded, folded, order));
  }
}

Value foldSlots(KernelBuilder &e, ArrayRef<Value> slots,
                function_ref<Value(Value, Value)> combine) {
  assert(static_cast<int64_t>(slots.size()) == e.width && "one slot per lane");
  Value result;
  foldSlotsOfRows(
      e, 1, [&](int64_t slot, int64_t) { return slots[slot]; }, combine,
      [&](int64_t, Value v) { result = v; });
  return result;
}

SmallVector<Value> broadcastFmaBlock(KernelBuilder &e, int64_t rows, int64_t cols, Value n,
                                     ValueRange init,
                                     function_ref<Value(Value, int64_t)> loadB,
                                     function_ref<Value(int64_t, Value)> loadA,
                                     function_ref<void(Value)> perStep,
                                     const BlockProduct *product) {
  return e.loopCarry(e.idx(0), n, 1, init, [&](Value k, ValueRange a) {
    if (perStep)
      perStep(k);
    SmallVector<Value> b;
    for (int64_t v = 0; v < cols; ++v)
      b.push_back(loadB(k, v));
    SmallVector<Value> next;
    for (int64_t r = 0; r < rows; ++r) {
      Value x = product ? product->bcast(loadA(r, k)) : e.bcast(loadA(r, k));
      for (int64_t v = 0; v < cols; ++v)
        next.push_back(product ? product->step(x, b[v], a[r * cols + v])
                               : e.fma(x, b[v], a[r * cols + v]));
    }
    return next;
  });
}

BlockProduct bf16Pairs(KernelBuilder &e) {
  int64_t w = e.width;
  auto pairs = VectorType::get({w}, e.b.getI32Type());
  auto halves = VectorType::get({2 * w}, e.b.getBF16Type());
  return BlockProduct{
      [&e, pairs, halves](Value pair) -> Value {
        Value v = vector::BroadcastOp::create(e.b, e.loc, pairs, pair);
        return vector::BitCastOp::create(e.b, e.loc, halves, v);
      },
      [&e](Value a, Value b, Value acc) -> Value {
        return x86vector::DotBF16Op::create(e.b, e.loc, acc.getType(), acc, a, b);
      }};
}

VectorType bf16PairVector(KernelBuilder &e) {
  return VectorType::get({e.width}, e.b.getI32Type());
}

Value loadBf16Pairs(KernelBuilder &e, Value m, ValueRange ivs) {
  // (bf16, or f16 for AMX-FP16 tiles: the same 16-bit pairs.)
  auto halves = VectorType::get({2 * e.width}, cast<MemRefType>(m.getType()).getElementType());
  Value v = vector::LoadOp::create(e.b, e.loc, halves, m, ivs);
  return vector::BitCastOp::create(e.b, e.loc, bf16PairVector(e), v);
}

Value loadPairHalves(KernelBuilder &e, Value m, ValueRange ivs) {
  auto halves = VectorType::get({2 * e.width}, e.b.getBF16Type());
  Value pairs = vector::LoadOp::create(e.b, e.loc, bf16PairVector(e), m, ivs);
  return vector::BitCastOp::create(e.b, e.loc, halves, pairs);
}

Value loadBf16PairScalar(KernelBuilder &e, Value m, ValueRange ivs) {
  Value two = vector::LoadOp::create(e.b, e.loc, VectorType::get({2}, e.b.getBF16Type()), m, ivs);
  Value one = vector::BitCastOp::create(e.b, e.loc, VectorType::get({1}, e.b.getI32Type()), two);
  return vector::ExtractOp::create(e.b, e.loc, one, ArrayRef<int64_t>{0});
}

SmallVector<int64_t> pairInterleaveMask(int64_t w) {
  SmallVector<int64_t> mask;
  for (int64_t l = 0; l < w; ++l)
    mask.append({l, w + l});
  return mask;
}

void parallelLoop(KernelBuilder &e, ValueRange upper, bool stackScope,
                  function_ref<void(ValueRange)> body) {
  SmallVector<Value> zeros(upper.size(), e.idx(0)), ones(upper.size(), e.idx(1));
  scf::ParallelOp::create(
      e.b, e.loc, zeros, upper, ones, [&](OpBuilder &nb, Location, ValueRange ivs) {
        OpBuilder::InsertionGuard g(e.b);
        e.b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
        if (!stackScope)
          return body(ivs);
        auto scope = memref::AllocaScopeOp::create(e.b, e.loc, TypeRange{});
        e.b.setInsertionPointToStart(&scope.getBodyRegion().emplaceBlock());
        body(ivs);
        memref::AllocaScopeReturnOp::create(e.b, e.loc, ValueRange{});
      });
}

MemRefType anyLayoutBuffer(RankedTensorType t) {
  SmallVector<int64_t> strides(t.getRank(), ShapedType::kDynamic);
  if (!strides.empty())
    strides.back() = 1;
  return MemRefType::get(
      t.getShape(), t.getElementType(),
      StridedLayoutAttr::get(t.getContext(), ShapedType::kDynamic, strides));
}

} // namespace mlir::attn::loops
