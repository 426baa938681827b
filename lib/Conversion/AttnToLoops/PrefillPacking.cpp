//===- PrefillPacking.cpp - Q, K and V packed for the prefill tile --------===//
//
// The copies the prefill tile (FlashKernel.cpp) multiplies from: Qs (Q's
// rows times scale·log2(e)), Kt (K transposed w × w in registers, per
// tile or prepacked once per call when it fits prepack-limit-mib) and Vt
// (V's rows, unless V is read in place), in f32, converting f16, bf16,
// int8 and fp8 on the way. The bf16/f16 pair layouts are Bf16Dot.cpp's.
//
//===----------------------------------------------------------------------===//
#include "FlashKernel.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::flash;

namespace mlir::attn::loops {

bool FlashKernel::takesPrepackedKeys(const SdpaProblem &problem,
                                     const ConvertAttnToLoopsOptions &opts, bool directKeys) {
  int64_t tq = problem.queryType.getDimSize(2), tk = problem.keyType.getDimSize(2);
  int64_t batch = problem.queryType.getDimSize(0);
  if (directKeys || ShapedType::isDynamic(tq) || ShapedType::isDynamic(tk) ||
      ShapedType::isDynamic(batch) || tq <= opts.tileQ)
    return false;
  int64_t bytes =
      batch * problem.kvHeads * llvm::divideCeil(tk, opts.tileK) * opts.tileK * problem.d * 4;
  return bytes <= (opts.prepackLimitMiB << 20);
}

bool FlashKernel::mayPrepackKeys(const SdpaProblem &problem, const ConvertAttnToLoopsOptions &opts,
                                 bool directKeys) {
  int64_t tq = problem.queryType.getDimSize(2), tk = problem.keyType.getDimSize(2);
  int64_t batch = problem.queryType.getDimSize(0);
  bool dynamic =
      ShapedType::isDynamic(tq) || ShapedType::isDynamic(tk) || ShapedType::isDynamic(batch);
  return dynamic && !directKeys && opts.prepackLimitMiB > 0 &&
         (ShapedType::isDynamic(tq) || tq > opts.tileQ);
}

Value FlashKernel::prepackFits(KernelBuilder &b, const SdpaProblem &problem,
                               const SdpaBuffers &bufs, const ConvertAttnToLoopsOptions &opts,
                               Value tiles) {
  Value bytes = b.mul(b.mul(bufs.batch, tiles),
                      b.idx(problem.kvHeads * opts.tileK * problem.d * 4));
  return b.andI(b.gt(bufs.tq, b.idx(opts.tileQ)),
                b.le(bytes, b.idx(opts.prepackLimitMiB << 20)));
}

MemRefType FlashKernel::prepackedKeysType(const SdpaProblem &problem,
                                          const ConvertAttnToLoopsOptions &opts) {
  int64_t tk = problem.keyType.getDimSize(2);
  int64_t tiles = ShapedType::isDynamic(tk) ? ShapedType::kDynamic : llvm::divideCeil(tk, opts.tileK);
  MLIRContext *ctx = problem.keyType.getContext();
  bool pairs = takesBf16Pairs(problem, opts, /*directKeys=*/false);
  return MemRefType::get({problem.queryType.getDimSize(0), problem.kvHeads, tiles,
                          pairs ? problem.d / 2 : problem.d, opts.tileK},
                         pairs ? Type(IntegerType::get(ctx, 32)) : Float32Type::get(ctx));
}

void FlashKernel::prepackKeyTile(Value bIdx, Value kvHead, Value kTile) {
  this->bIdx = bIdx;
  hkv = kvHead;
  Value k0 = b.mul(kTile, b.idx(opts.tileK));
  Value kRows = b.minI(b.idx(opts.tileK), b.sub(bufs.tk, k0));
  packKeys(k0, kRows, packedKeyTile(kTile));
}

/// Copies `n` elements of the row of `src` at indices `row` (all but the
/// last: {b, h, t} of Q, SdpaBuffers::keyRow of K/V) into row `dstRow`
/// of `dst`, times `scale` when given: vectors when n is a multiple of
/// the width, scalars otherwise.
void FlashKernel::copyRow(Value src, ArrayRef<Value> row, int64_t n, Value dst, Value dstRow,
                          std::optional<double> scale) {
  int64_t w = opts.vectorWidth;
  auto at = [&](Value col) { return withColumn(row, col); };
  if (n % w == 0) {
    Value c = scale ? b.splat(*scale) : Value();
    b.loop(b.idx(0), b.idx(n), w, [&](Value col) {
      Value x = b.vloadF32(src, at(col));
      if (c)
        x = b.fmul(x, c);
      b.vstore(x, dst, {dstRow, col});
    });
    return;
  }
  Value c = scale ? b.f(*scale) : Value();
  b.loop(b.idx(0), b.idx(n), 1, [&](Value col) {
    Value x = b.loadF32(src, at(col));
    if (c)
      x = b.fmul(x, c);
    b.store(x, dst, {dstRow, col});
  });
}

/// Zeroes rows [from, rows) of the 2-D scratch `buf` of width `n`.
void FlashKernel::zeroRows(Value buf, Value from, int64_t rows, int64_t n) {
  b.loop(from, b.idx(rows), 1, [&](Value r) {
    b.loop(b.idx(0), b.idx(n), 1, [&](Value c) { b.store(b.f(0.0), buf, {r, c}); });
  });
}

/// Qs[i][d] = Q[b, h_i, q_i, d] · scale · log2(e), zero past the valid
/// rows.
void FlashKernel::packQueryTile() {
  if (pairs)
    return packQueryPairs();
  b.loop(b.idx(0), rows.count, 1, [&](Value i) {
    Value r = b.add(rows.r0, i);
    copyRow(bufs.q, {bIdx, headOf(r), queryOf(r)}, problem.d, qs, i, problem.scaleLog2);
  });
  zeroRows(qs, rows.count, opts.tileQ, problem.d);
}

/// The [D, tile-k] slice of the prepacked keys for this batch row, K/V
/// head and tile `kTile`.
Value FlashKernel::packedKeyTile(Value kTile) {
  OpFoldResult zero = b.b.getIndexAttr(0), one = b.b.getIndexAttr(1);
  SmallVector<OpFoldResult> offsets{bIdx, hkv, kTile, zero, zero};
  int64_t depth = packedKeyTileType().getDimSize(0); // D, or D/2 pairs
  SmallVector<OpFoldResult> sizes{one, one, one, b.b.getIndexAttr(depth),
                                  b.b.getIndexAttr(opts.tileK)};
  SmallVector<OpFoldResult> strides(5, one);
  return memref::SubViewOp::create(b.b, b.loc, packedKeyTileType(), packedKeys, offsets, sizes,
                                   strides);
}

/// [depth, tile-k] with strides [tile-k, 1] at a dynamic offset: a tile's
/// slice of the prepacked keys (and the scratch a tile packs into instead,
/// cast to it, where the choice is made at run time).
MemRefType FlashKernel::packedKeyTileType() {
  auto srcType = cast<MemRefType>(packedKeys.getType());
  int64_t depth = srcType.getDimSize(3);
  MLIRContext *ctx = srcType.getContext();
  return MemRefType::get({depth, opts.tileK}, srcType.getElementType(),
                         StridedLayoutAttr::get(ctx, ShapedType::kDynamic, {opts.tileK, 1}));
}

/// The tile's Kt (packKeys into the stack scratch, or the tile's slice
/// of the prepacked keys) and Vt (unless V is read in place).
void FlashKernel::packKeyValueTile(Value kTile, Value k0, Value kRows) {
  if (packedKeys && packedKeysFilled) {
    // Chosen at run time: the prepacked slice, or this tile packed into
    // ktScratch, as one view type.
    kt = b.ifElse(
        packedKeysFilled, packedKeyTileType(),
        [&] { return packedKeyTile(kTile); },
        [&] {
          packKeys(k0, kRows, ktScratch);
          return memref::CastOp::create(b.b, b.loc, packedKeyTileType(), ktScratch).getResult();
        });
  } else if (packedKeys) {
    kt = packedKeyTile(kTile);
  } else {
    packKeys(k0, kRows, kt);
  }
  if (!valuesInPlace)
    packValues(k0, kRows);
}

/// dst[d][j] = K[b, h/G, k0 + j, d] (dst: a [D, tile-k] f32 memref). K
/// is transposed a w × w block at a time in registers when D and tile-k
/// allow (rows past the tile's keys repeat its last key: the keep rules
/// hide those columns), element by element otherwise (zero past the
/// keys). int8/fp8 K (takesQuantizedTiles) is converted and times each
/// key's scale on the way.
void FlashKernel::packKeys(Value k0, Value kRows, Value dst) {
  if (pairs)
    return packKeyPairs(k0, kRows, dst);
  int64_t w = opts.vectorWidth;
  if (problem.d % w == 0 && opts.tileK % w == 0 && llvm::isPowerOf2_64(w)) {
    Value lastKey = b.add(k0, b.sub(kRows, b.idx(1)));
    b.loop(b.idx(0), b.idx(opts.tileK), w, [&](Value j) {
      SmallVector<SmallVector<Value, 4>> keyRows;
      SmallVector<Value> scales;
      for (int64_t x = 0; x < w; ++x) {
        Value key = b.minI(b.add(k0, b.add(j, b.idx(x))), lastKey);
        keyRows.push_back(bufs.keyRow(b, bIdx, hkv, key));
        if (bufs.keyScales)
          scales.push_back(b.bcast(bufs.rowScale(b, bufs.k, bufs.keyScales, bIdx, hkv, key)));
      }
      b.loop(b.idx(0), b.idx(problem.d), w, [&](Value d) {
        transposeBlock(
            b,
            [&](int64_t x) {
              Value row = b.vloadF32(bufs.k, withColumn(keyRows[x], d));
              return scales.empty() ? row : b.fmul(row, scales[x]);
            },
            [&](int64_t x, Value v) { b.vstore(v, dst, {b.add(d, b.idx(x)), j}); }, opts.avx2);
      });
    });
    return;
  }
  assert(!bufs.keyScales && "quantized K takes whole vectors (takesQuantizedTiles)");
  b.loop(b.idx(0), kRows, 1, [&](Value j) {
    SmallVector<Value, 4> row = bufs.keyRow(b, bIdx, hkv, b.add(k0, j));
    b.loop(b.idx(0), b.idx(problem.d), 1, [&](Value d) {
      b.store(b.loadF32(bufs.k, withColumn(row, d)), dst, {d, j});
    });
  });
  b.loop(kRows, b.idx(opts.tileK), 1, [&](Value j) {
    b.loop(b.idx(0), b.idx(problem.d), 1, [&](Value d) { b.store(b.f(0.0), dst, {d, j}); });
  });
}

/// Vt[j][c] = V[b, h/G, k0 + j, c], zero past the tile's keys (and past
/// Dv).
void FlashKernel::packValues(Value k0, Value kRows) {
  if (pairs)
    return packValuePairs(k0, kRows);
  b.loop(b.idx(0), kRows, 1,
         [&](Value j) { copyRow(bufs.v, bufs.keyRow(b, bIdx, hkv, b.add(k0, j)), problem.dv, vt, j); });
  zeroRows(vt, kRows, opts.tileK, dvPadded);
  if (dvPadded != problem.dv) {
    // The padding columns of Vt stay zero.
    b.loop(b.idx(0), kRows, 1, [&](Value j) {
      b.loop(b.idx(problem.dv), b.idx(dvPadded), 1,
             [&](Value c) { b.store(b.f(0.0), vt, {j, c}); });
    });
  }
}

} // namespace mlir::attn::loops
