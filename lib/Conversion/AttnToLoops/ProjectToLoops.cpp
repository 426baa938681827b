//===- ProjectToLoops.cpp - attn.project to a packed-panel GEMM -----------===//
//
// attn.project (y = x·Wᵀ + b, the projections of attn.mha) as a tiled
// matmul on buffers: W packed in panels of 2 vectors of outputs, row
// blocks of x against a panel in the broadcast-FMA microkernel, or on AMX
// tiles (docs/cpu.md, *Projections*).
//
//===----------------------------------------------------------------------===//
#include "Microkernels.h"
#include "PopulatePatterns.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::flash;

namespace mlir::attn::loops {

/// Rows of x a projection works through per chunk (rounded down to whole
/// row blocks): 256 rows of 768 inputs are 768 KiB, which stay in a 2 MiB
/// L2 beside a weight panel while a thread goes through its panels, and a
/// GPT-2 prefill of up to 256 tokens is one chunk whose panels the threads
/// share (each thread reads half of W, not all of it).
constexpr int64_t kProjectRows = 256;
/// The largest weight panel (In × 2 vectors of f32) a projection packs on a
/// thread's stack: 256 KiB (In up to 2048 at 16 lanes).
constexpr int64_t kInlinePanelBytes = 256 * 1024;

std::string projectRefusal(ProjectOp op, int64_t w) {
  auto xT = cast<RankedTensorType>(op.getInput().getType());
  int64_t rank = xT.getRank();
  int64_t in = xT.getDimSize(rank - 1), out = op.getType().getDimSize(rank - 1);
  Type elt = xT.getElementType();
  if (!elt.isF32() && !elt.isF16() && !elt.isBF16())
    return "only f32, f16 and bf16 are tiled";
  if (rank < 2)
    return "rank-1 input";
  if (ShapedType::isDynamic(in) || ShapedType::isDynamic(out))
    return "the input and output widths must be static";
  if (out % (2 * w) != 0)
    return "the output width " + std::to_string(out) + " is not a multiple of 2 vectors (" +
           std::to_string(2 * w) + ")";
  return "";
}

/// The element type of x when the projection's panel can hold pairs of W
/// along In (bf16-dot's and AMX's layout): 16 lanes, x and W of one type,
/// In static and a multiple of 32; null otherwise.
static Type pairPanelType(ProjectOp op, const ConvertAttnToLoopsOptions &tiling) {
  auto xT = cast<RankedTensorType>(op.getInput().getType());
  int64_t in = xT.getDimSize(xT.getRank() - 1);
  Type elt = xT.getElementType();
  if (tiling.vectorWidth != 16 || ShapedType::isDynamic(in) || in % 32 != 0 ||
      cast<RankedTensorType>(op.getWeight().getType()).getElementType() != elt)
    return {};
  return elt;
}

bool projectTakesBf16Dot(ProjectOp op, const ConvertAttnToLoopsOptions &tiling) {
  Type half = pairPanelType(op, tiling);
  return tiling.bf16Dot && half && half.isBF16();
}

bool projectTakesAmx(ProjectOp op, const ConvertAttnToLoopsOptions &tiling) {
  Type half = pairPanelType(op, tiling);
  return tiling.amx && half && (half.isBF16() || (half.isF16() && tiling.amxFp16));
}

namespace {

/// y[r, o] = b[o] + Σ_i x[r, i] · W[o, i] (W[i, o] for in_out) as a tiled loop
/// nest on buffers. The leading dims of x are collapsed into rows (with two or
/// more dynamic leading dims, row r's indices are delinearised instead). W is
/// taken in panels of 2 vectors of outputs, packed as Wp[p][i][j] =
/// W[p·2w + j][i] (out_in: w × w blocks transposed in registers when In is a
/// multiple of w, element by element otherwise; in_out: rows copied). The rows
/// go in chunks of at most kProjectRows (whole row blocks, spread evenly over
/// the chunks), and the work is parallel over (chunk, panel): an item takes its
/// panel through the chunk's blocks of projectRowBlockFor(w) rows (12 at 16
/// lanes, 4 at 8), each block keeping its rows × 2 vectors of accumulators in
/// registers over i, starting from the bias (0 without one). The chunk of x
/// stays in cache while a thread goes through its panels, and the panel while
/// the chunk's blocks stream past it. When the rows are static and fit one
/// chunk and a panel fits kInlinePanelBytes, each panel serves one item only,
/// which packs it on its own stack just before using it; otherwise W is packed
/// once per call into Wp on the heap, panels in parallel, and every chunk reads
/// it. On AMX (projectTakesAmx), W is packed as for bf16-dot, x is first
/// copied into a buffer of whole 16-row blocks (zeros past the last row:
/// the tiles read it in place), and each block of 16 rows takes its panel
/// on two sum tiles (projectRowsOnAmx), then the bias in vectors.
struct ProjectToTiledLoops : OpRewritePattern<ProjectOp> {
  ProjectToTiledLoops(MLIRContext *ctx, ConvertAttnToLoopsOptions tiling)
      : OpRewritePattern(ctx), tiling(tiling) {}

  LogicalResult matchAndRewrite(ProjectOp op, PatternRewriter &rewriter) const override {
    auto xT = cast<RankedTensorType>(op.getInput().getType());
    auto resT = op.getType();
    int64_t w = tiling.vectorWidth;
    int64_t rank = xT.getRank();
    int64_t in = xT.getDimSize(rank - 1), out = resT.getDimSize(rank - 1);
    Type elt = xT.getElementType();
    if (std::string why = projectRefusal(op, w); !why.empty())
      return rewriter.notifyMatchFailure(op, why);
    Location loc = op.getLoc();
    KernelBuilder e{rewriter, loc, w};

    // x as [rows, In]: the leading dims collapsed. Collapsing two or more
    // dynamic leading dims crashes MLIR 22's expand-strided-metadata further
    // down the pipeline, so such inputs (and their outputs) keep their rank
    // and row r is delinearised over the leading dims instead.
    bool delinearise =
        llvm::count_if(xT.getShape().drop_back(), ShapedType::isDynamic) > 1;
    SmallVector<ReassociationIndices> toRows(2);
    for (int64_t i = 0; i + 1 < rank; ++i)
      toRows[0].push_back(i);
    toRows[1].push_back(rank - 1);
    Value x = op.getInput();
    if (rank != 2 && !delinearise)
      x = tensor::CollapseShapeOp::create(rewriter, loc, x, toRows);
    auto rowsT = cast<RankedTensorType>(x.getType());
    auto buffer = [&](Value t) -> Value {
      return bufferization::ToBufferOp::create(
          rewriter, loc, anyLayoutBuffer(cast<RankedTensorType>(t.getType())), t,
          /*read_only=*/true);
    };
    Value xb = buffer(x), wb = buffer(op.getWeight());
    Value bb = op.getBias() ? buffer(op.getBias()) : Value();
    SmallVector<Value> leading; // the leading dims' sizes (delinearise)
    for (int64_t i = 0; i < (delinearise ? rank - 1 : 1); ++i)
      leading.push_back(memref::DimOp::create(rewriter, loc, xb, i));
    Value rows = leading[0];
    for (size_t i = 1; i < leading.size(); ++i)
      rows = e.mul(rows, leading[i]);
    // The indices of row r in x and y (without the last dim).
    auto rowIndex = [&](Value r) -> SmallVector<Value> {
      if (!delinearise)
        return {r};
      SmallVector<Value> idx(rank - 1);
      for (int64_t i = rank - 2; i > 0; --i) {
        idx[i] = e.rem(r, leading[i]);
        r = e.div(r, leading[i]);
      }
      idx[0] = r;
      return idx;
    };
    auto at = [](SmallVector<Value> idx, Value last) {
      idx.push_back(last);
      return idx;
    };

    bool outIn = op.getLayout() == WeightLayout::out_in;
    int64_t panel = 2 * w, panels = out / panel;

    // bf16 x and W on AVX512-BF16 dot products (the bf16-dot option): the
    // panel holds pairs of W along In, dst[q][j] = (W[o + j][2q],
    // W[o + j][2q + 1]) as i32, and each step of the microkernel
    // broadcasts a pair of x (docs/cpu.md, *bf16 on dot products*).
    // On AMX (the amx option) the panel is the same pairs, and blocks of
    // 16 rows of x multiply it on tiles (AmxTiles.cpp).
    bool amx = projectTakesAmx(op, tiling);
    bool dot = amx || projectTakesBf16Dot(op, tiling);
    int64_t rowBlock = amx ? kAmxRows : projectRowBlockFor(w);
    int64_t depth = dot ? in / 2 : in; // packed rows: In, or In/2 pairs
    Type packedElt = dot ? Type(rewriter.getI32Type()) : e.f32();
    // Panel p of W packed into `dst` at `at(i, j)`: dst[i][j] = W[p·2w + j][i]
    // (out_in: w × w blocks transposed in registers when In allows) or
    // W[i][p·2w + j] (in_out: rows copied); with dot products, pairs.
    bool blocked = outIn && in % w == 0 && llvm::isPowerOf2_64(w);
    auto packPanel = [&](Value p, Value dst,
                         function_ref<SmallVector<Value>(Value, Value)> at) {
      Value o0 = e.mul(p, e.idx(panel));
      if (dot && outIn) {
        // W's rows read as w pairs, transposed w × w (32-bit elements).
        e.loop(e.idx(0), e.idx(depth), w, [&](Value q) {
          for (int64_t h = 0; h < 2; ++h)
            transposeBlock(
                e,
                [&](int64_t x) {
                  return loadBf16Pairs(e, wb, {e.add(o0, e.idx(h * w + x)), e.add(q, q)});
                },
                [&](int64_t x, Value v) { e.vstore(v, dst, at(e.add(q, e.idx(x)), e.idx(h * w))); },
                tiling.avx2);
        });
        return;
      }
      if (dot) {
        // Rows 2q and 2q + 1 of W interleaved into pairs.
        auto row = VectorType::get({w}, elt);
        SmallVector<int64_t> interleave = pairInterleaveMask(w);
        e.loop(e.idx(0), e.idx(depth), 1, [&](Value q) {
          Value i0 = e.add(q, q), i1 = e.add(i0, e.idx(1));
          for (int64_t h = 0; h < 2; ++h) {
            Value o = e.add(o0, e.idx(h * w));
            Value a = vector::LoadOp::create(e.b, loc, row, wb, ValueRange{i0, o});
            Value c = vector::LoadOp::create(e.b, loc, row, wb, ValueRange{i1, o});
            Value pairs = vector::ShuffleOp::create(e.b, loc, a, c, interleave);
            e.vstore(vector::BitCastOp::create(e.b, loc, bf16PairVector(e), pairs), dst,
                     at(q, e.idx(h * w)));
          }
        });
        return;
      }
      if (!outIn) {
        e.loop(e.idx(0), e.idx(in), 1, [&](Value i) {
          for (int64_t h = 0; h < 2; ++h)
            e.vstore(e.vloadF32(wb, {i, e.add(o0, e.idx(h * w))}), dst, at(i, e.idx(h * w)));
        });
        return;
      }
      if (!blocked) {
        e.loop(e.idx(0), e.idx(in), 1, [&](Value i) {
          e.loop(e.idx(0), e.idx(panel), 1, [&](Value j) {
            e.store(e.loadF32(wb, {e.add(o0, j), i}), dst, at(i, j));
          });
        });
        return;
      }
      e.loop(e.idx(0), e.idx(in), w, [&](Value i) {
        for (int64_t h = 0; h < 2; ++h)
          transposeBlock(
              e, [&](int64_t x) { return e.vloadF32(wb, {e.add(o0, e.idx(h * w + x)), i}); },
              [&](int64_t x, Value v) { e.vstore(v, dst, at(e.add(i, e.idx(x)), e.idx(h * w))); },
              tiling.avx2);
      });
    };
    // Rows that are known to fit one chunk use each panel once: the thread
    // that takes it packs it on its stack just before (no packed copy of W
    // on the heap, written out and read back); otherwise W is packed once,
    // in parallel, into Wp[panels][In][2w] and every chunk reads it.
    int64_t staticRows = ShapedType::isDynamic(rowsT.getDimSize(0)) || delinearise
                             ? ShapedType::kDynamic
                             : rowsT.getDimSize(0);
    int64_t chunkBlocks = kProjectRows / rowBlock;
    bool packInline = !ShapedType::isDynamic(staticRows) && staticRows <= chunkBlocks * rowBlock &&
                      depth * panel * 4 <= kInlinePanelBytes;
    Value wp;
    if (!packInline) {
      wp = memref::AllocOp::create(rewriter, loc, MemRefType::get({panels, depth, panel}, packedElt),
                                   ValueRange{}, rewriter.getI64IntegerAttr(64));
      parallelLoop(e, {e.idx(panels)}, /*stackScope=*/false, [&](ValueRange ivs) {
        packPanel(ivs[0], wp, [&](Value i, Value j) { return SmallVector<Value>{ivs[0], i, j}; });
      });
    }

    SmallVector<int64_t> outShape{rowsT.getDimSize(0), out};
    SmallVector<Value> dyn;
    if (delinearise) {
      outShape.assign(resT.getShape().begin(), resT.getShape().end());
      for (int64_t i = 0; i + 1 < rank; ++i)
        if (ShapedType::isDynamic(outShape[i]))
          dyn.push_back(leading[i]);
    } else if (ShapedType::isDynamic(outShape[0])) {
      dyn.push_back(rows);
    }
    auto outBufT = MemRefType::get(outShape, elt);
    Value y = memref::AllocOp::create(rewriter, loc, outBufT, dyn,
                                      rewriter.getI64IntegerAttr(64));
    // Rows in chunks of at most kProjectRows (the chunk of x stays in cache
    // while a thread goes through its panels).
    Value numBlocks = e.ceilDiv(rows, rowBlock);
    Value numChunks = e.ceilDiv(numBlocks, chunkBlocks);
    // The blocks spread evenly over the chunks (a last chunk of a few rows
    // would leave the thread that gets it idle).
    Value blocksPerChunk = e.ceilDiv(numBlocks, e.maxI(numChunks, e.idx(1)));
    // AMX reads 16 rows of x at a time from memory of one row stride: x
    // copied into whole blocks of rows, zeros past the last, in parallel
    // over the blocks.
    Value xTiles;
    if (amx) {
      xTiles = memref::AllocOp::create(
          rewriter, loc, MemRefType::get({ShapedType::kDynamic, in}, elt),
          ValueRange{e.mul(numBlocks, e.idx(rowBlock))}, rewriter.getI64IntegerAttr(64));
      auto halves = VectorType::get({2 * w}, elt);
      Value zeros = arith::ConstantOp::create(rewriter, loc, halves, rewriter.getZeroAttr(halves));
      parallelLoop(e, {numBlocks}, /*stackScope=*/false, [&](ValueRange ivs) {
        e.loop(e.idx(0), e.idx(rowBlock), 1, [&](Value r) {
          Value row = e.add(e.mul(ivs[0], e.idx(rowBlock)), r);
          e.ifThenElse(
              e.lt(row, rows),
              [&] {
                SmallVector<Value> idx = rowIndex(row);
                e.loop(e.idx(0), e.idx(in), 2 * w, [&](Value i) {
                  Value v = vector::LoadOp::create(e.b, loc, halves, xb, at(idx, i));
                  vector::StoreOp::create(e.b, loc, v, xTiles, ValueRange{row, i});
                });
              },
              [&] {
                e.loop(e.idx(0), e.idx(in), 2 * w, [&](Value i) {
                  vector::StoreOp::create(e.b, loc, zeros, xTiles, ValueRange{row, i});
                });
              });
        });
      });
    }
    // y[block rows, panel p] = bias + x[block rows] · panel p (`packed`,
    // element (i, j) at packedAt(i, j)).
    auto projectBlock = [&](Value p, Value block, Value packed,
                            function_ref<SmallVector<Value>(Value, Value)> packedAt) {
      Value o = e.mul(p, e.idx(panel)), o1 = e.add(o, e.idx(w));
      Value r0 = e.mul(block, e.idx(rowBlock));
      Value lastRow = e.sub(rows, e.idx(1));
      SmallVector<SmallVector<Value>> rowIdx;
      for (int64_t r = 0; r < rowBlock; ++r)
        rowIdx.push_back(rowIndex(e.minI(e.add(r0, e.idx(r)), lastRow)));
      Value init0 = bb ? e.vloadF32(bb, {o}) : e.splat(0.0);
      Value init1 = bb ? e.vloadF32(bb, {o1}) : e.splat(0.0);
      SmallVector<Value> init;
      for (int64_t r = 0; r < rowBlock; ++r) {
        init.push_back(init0);
        init.push_back(init1);
      }
      BlockProduct pairs = bf16Pairs(e);
      SmallVector<Value> sums = broadcastFmaBlock(
          e, rowBlock, 2, e.idx(depth), init,
          [&](Value i, int64_t v) {
            return dot ? loadPairHalves(e, packed, packedAt(i, e.idx(v * w)))
                       : e.vload(packed, packedAt(i, e.idx(v * w)));
          },
          [&](int64_t r, Value i) {
            return dot ? loadBf16PairScalar(e, xb, at(rowIdx[r], e.add(i, i)))
                       : e.loadF32(xb, at(rowIdx[r], i));
          },
          /*perStep=*/nullptr, dot ? &pairs : nullptr);
      for (int64_t r = 0; r < rowBlock; ++r) {
        Value row = e.add(r0, e.idx(r));
        e.ifThen(e.lt(row, rows), [&] {
          e.storeFromF32(sums[2 * r], y, at(rowIdx[r], o));
          e.storeFromF32(sums[2 * r + 1], y, at(rowIdx[r], o1));
        });
      }
    };
    // y[block rows, panel p] on AMX tiles: the sums of the block's 16 rows
    // in `sums`, then the bias added in vectors.
    auto projectBlockAmx = [&](Value p, Value block, Value packed,
                               function_ref<SmallVector<Value>(Value, Value)> packedAt,
                               Value sums) {
      Value o = e.mul(p, e.idx(panel)), o1 = e.add(o, e.idx(w));
      Value r0 = e.mul(block, e.idx(rowBlock));
      projectRowsOnAmx(e, xTiles, r0, packed, packedAt, depth, sums);
      Value bias0 = bb ? e.vloadF32(bb, {o}) : e.splat(0.0);
      Value bias1 = bb ? e.vloadF32(bb, {o1}) : e.splat(0.0);
      e.loop(e.idx(0), e.minI(e.idx(rowBlock), e.sub(rows, r0)), 1, [&](Value r) {
        SmallVector<Value> idx = rowIndex(e.add(r0, r));
        e.storeFromF32(e.fadd(e.vload(sums, {r, e.idx(0)}), bias0), y, at(idx, o));
        e.storeFromF32(e.fadd(e.vload(sums, {r, e.idx(w)}), bias1), y, at(idx, o1));
      });
    };
    // In parallel over (chunk, panel): each item takes its panel through
    // the chunk's row blocks, one after the other (the panel stays in
    // cache).
    parallelLoop(e, {numChunks, e.idx(panels)}, /*stackScope=*/packInline || amx,
                 [&](ValueRange ivs) {
      Value p = ivs[1];
      // The panel: its own [In, 2w] stack copy, or panel p of Wp.
      auto packedAt = [&](Value i, Value j) {
        return packInline ? SmallVector<Value>{i, j} : SmallVector<Value>{p, i, j};
      };
      Value packed = wp;
      if (packInline) {
        packed = memref::AllocaOp::create(e.b, e.loc, MemRefType::get({depth, panel}, packedElt),
                                          ValueRange{}, e.b.getI64IntegerAttr(64));
        packPanel(p, packed, packedAt);
      }
      Value sums = amx ? memref::AllocaOp::create(e.b, e.loc,
                                                  MemRefType::get({rowBlock, panel}, e.f32()),
                                                  ValueRange{}, e.b.getI64IntegerAttr(64))
                       : Value();
      Value first = e.mul(ivs[0], blocksPerChunk);
      e.loop(first, e.minI(e.add(first, blocksPerChunk), numBlocks), 1, [&](Value block) {
        if (amx)
          projectBlockAmx(p, block, packed, packedAt, sums);
        else
          projectBlock(p, block, packed, packedAt);
      });
    });
    Value result = bufferization::ToTensorOp::create(
        rewriter, loc, RankedTensorType::get(outBufT.getShape(), elt), y,
        /*restrict=*/true, /*writable=*/true);
    if (rank != 2 && !delinearise) {
      ReifiedRankedShapedTypeDims dims;
      if (failed(reifyResultShapes(rewriter, op, dims)))
        return failure();
      result = tensor::ExpandShapeOp::create(rewriter, loc, resT, result, toRows, dims[0]);
    }
    rewriter.replaceOp(op, result);
    return success();
  }

  ConvertAttnToLoopsOptions tiling;
};

} // namespace

void populateProjectToLoopsPatterns(RewritePatternSet &patterns,
                                    const ConvertAttnToLoopsOptions &options) {
  patterns.add<ProjectToTiledLoops>(patterns.getContext(), options);
}

} // namespace mlir::attn::loops
