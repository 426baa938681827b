//===- Microkernels.h - register-level blocks of the kernels -- -*- C++ -*-===//
//
// What the fused CPU kernels (FlashKernel, the projection GEMM, the merge)
// are built from: w × w transposes and lane-folding trees made of
// two-input shuffles, the broadcast-FMA register block, the register
// budget that sizes the blocks, and the parallel loop with its per-thread
// stack scope.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_LIB_CONVERSION_ATTNTOLOOPS_MICROKERNELS_H
#define ATTN_LIB_CONVERSION_ATTNTOLOOPS_MICROKERNELS_H

#include "Conversion/FlashCore/FlashCore.h"
#include "Conversion/FlashCore/ModBounds.h"
#include "Conversion/FlashCore/ModFunctions.h"

#include <functional>
#include <utility>

namespace mlir::attn::loops {

using flash::KernelBuilder;

constexpr int64_t kRowBlock = 4; // rows per register block (16-register ISAs)

/// Rows per register block of the projection microkernel: 12 rows × 2
/// vectors of accumulators with AVX-512 (24 of its 32 registers; each
/// weight vector loaded serves 12 FMAs instead of 8), 4 × 2 with AVX2's 16
/// registers. (On the 2-vCPU development VM the 12-row block with 256-row
/// chunks was 0.85-1.15× the time of 8 rows with 128-row chunks over
/// GPT-2's 768×768 and 768×2304 weights, T 128-2048: within the host's
/// noise, faster at the larger sizes. That comparison has no entry in
/// bench/NOTES.md; the change as a whole is its 2026-12-01 entry, Decode
/// in place, projections, guided schedule.)
int64_t projectRowBlockFor(int64_t vectorWidth);

/// Rows per register block of the microkernels: 8 rows × 2 vectors of
/// accumulators fit 32 vector registers (16 lanes: AVX-512), 4 × 2 fit 16
/// (8 lanes: AVX2).
int64_t rowBlockFor(int64_t vectorWidth);

/// Vector accumulators the microkernels keep in registers: half the
/// register file (32 with AVX-512, 16 with AVX2), the rest for loads and
/// broadcasts.
int64_t accumulatorBudget(int64_t vectorWidth);

/// The two shuffles of vectors a, b (width w) that swap halves at lane bit
/// h: `low` takes a's lanes where bit h is clear and b's lanes (moved down
/// by h) where it is set; `high` takes a's lanes moved up by h and b's own.
/// Shuffle lane indices: b's lanes are w + j.
std::pair<SmallVector<int64_t>, SmallVector<int64_t>> halfSwapMasks(int64_t w, int64_t h);

/// Transposes a w × w block (w = e.width, a power of two) of 32-bit
/// elements in registers: store(x, column x) for the w vectors load(0 ..
/// w-1). With `avx2` (the target has AVX2) an 8 × 8 block takes upstream's
/// AVX2 sequence (x86vector::avx2::transpose8x8xf32: 20 shuffles and 8
/// vblendps as inline assembly). Otherwise w·log2(w) two-input shuffles:
/// for each bit h of the index, rows i and i + h (bit h clear in i) swap
/// the lanes where the row's and the lane's bit h differ, which moves
/// element (i, j) to (j, i) once every bit is done.
void transposeBlock(KernelBuilder &e, function_ref<Value(int64_t)> load,
                    function_ref<void(int64_t, Value)> store, bool avx2);

/// One step of a lane-folding tree (foldSlots): lanes with bit h clear
/// hold combine(a[j], a[j ^ h]), lanes with bit h set combine(b[j], b[j ^
/// h]). With a and b each holding one slot per aligned run of 2h lanes,
/// the result holds one slot per run of h lanes: a's slots where bit h is
/// clear, b's where it is set.
Value combineHalves(KernelBuilder &e, Value a, Value b, int64_t h,
                    function_ref<Value(Value, Value)> combine);

/// i with its lowest `bits` bits reversed.
int64_t reverseBits(int64_t i, int64_t bits);

/// Folds, for each of `rows` rows, w = e.width slot vectors slotOf(slot,
/// row) into one vector whose lane i is the combination of slot i's lanes,
/// and hands it to done(row, vector): a tree of combineHalves, log2(w)
/// levels and w - 1 steps of two shuffles and a combine each (a binary
/// counter pairs equal levels as soon as both exist; the rows' trees are
/// emitted slot by slot, interleaved), instead of w horizontal reductions
/// of log2(w) dependent steps and a scalar at the end. The tree leaves
/// slot i in lane reverseBits(i); one last shuffle per row puts the slots
/// in order.
void foldSlotsOfRows(KernelBuilder &e, int64_t rows,
                     function_ref<Value(int64_t, int64_t)> slotOf,
                     function_ref<Value(Value, Value)> combine,
                     function_ref<void(int64_t, Value)> done);

/// foldSlotsOfRows for one row: `slots` (w vectors) folded into one.
Value foldSlots(KernelBuilder &e, ArrayRef<Value> slots,
                function_ref<Value(Value, Value)> combine);

/// How broadcastFmaBlock multiplies: `bcast` makes the A vector from the
/// scalar loadA returns, `step(a, b, acc)` is the multiply-add. The default
/// (no product given) is an f32 broadcast and vector.fma; bf16Pairs() the
/// AVX512-BF16 dot product.
struct BlockProduct {
  std::function<Value(Value)> bcast;
  std::function<Value(Value, Value, Value)> step;
};

/// The AVX512-BF16 product: loadA's i32 (a pair of bf16) broadcast to w
/// lanes and viewed as 2w bf16; step is x86vector.avx512.dot (vdpbf16ps:
/// acc[l] += a[2l]·b[2l] + a[2l+1]·b[2l+1], f32 accumulation). loadB
/// returns 2w bf16 (w pairs).
BlockProduct bf16Pairs(KernelBuilder &e);

/// w bf16 pairs (w = e.width): a vector of w i32, the layout the dot
/// product's B operand is packed in.
VectorType bf16PairVector(KernelBuilder &e);

/// 2w bf16 at `ivs` of the bf16 buffer `m`, as w pairs (i32); f16 of an
/// f16 buffer likewise.
Value loadBf16Pairs(KernelBuilder &e, Value m, ValueRange ivs);

/// w pairs (i32) at `ivs` of the i32 buffer `m`, as the 2w bf16 the dot
/// product takes.
Value loadPairHalves(KernelBuilder &e, Value m, ValueRange ivs);

/// The pair of bf16 at `ivs` and the next column of the bf16 buffer `m`,
/// as one i32 (the A operand bf16Pairs broadcasts).
Value loadBf16PairScalar(KernelBuilder &e, Value m, ValueRange ivs);

/// The shuffle mask that interleaves two w-lane vectors a, b into
/// (a0, b0, a1, b1, ...): two rows' elements side by side, as pairs.
SmallVector<int64_t> pairInterleaveMask(int64_t w);

/// Rows of the AMX projection block: a tile's 16 rows.
constexpr int64_t kAmxRows = 16;

/// The AMX projection block (AmxTiles.cpp): sums[16][32] = Σ over `pairs`
/// pairs of x[r0..+16][2q, 2q+1] · panel[q][0..32], on two 16 × 16 f32 sum
/// tiles (tdpbf16ps, or tdpfp16ps for f16). `x` is a half buffer of
/// identity layout with at least r0 + 16 rows; the panel holds pairs (i32)
/// at panelAt(q, column); `sums` is an f32 [16, 32] buffer, overwritten.
/// `pairs` is a multiple of 16.
void projectRowsOnAmx(KernelBuilder &e, Value x, Value r0, Value panel,
                      function_ref<SmallVector<Value>(Value, Value)> panelAt, int64_t pairs,
                      Value sums);

/// The register-blocked loop every microkernel here is: for k in [0, n),
/// load `cols` vectors b_v = loadB(k, v), then for each of `rows` rows
/// acc[r·cols + v] += broadcast(loadA(r, k)) · b_v. Returns the `rows·cols`
/// accumulators, started from `init`. `perStep`, when given, is emitted at
/// the start of each step k (the decode's prefetches); `product`, when
/// given, replaces the f32 broadcast and FMA.
SmallVector<Value> broadcastFmaBlock(KernelBuilder &e, int64_t rows, int64_t cols, Value n,
                                     ValueRange init,
                                     function_ref<Value(Value, int64_t)> loadB,
                                     function_ref<Value(int64_t, Value)> loadA,
                                     function_ref<void(Value)> perStep = nullptr,
                                     const BlockProduct *product = nullptr);

/// scf.parallel over [0, upper) (step 1), body(ivs) emitted inside it;
/// with `stackScope`, inside a memref.alloca_scope, so that each
/// iteration's stack scratch is its own.
void parallelLoop(KernelBuilder &e, ValueRange upper, bool stackScope,
                  function_ref<void(ValueRange)> body);

/// A strided memref type for reading a tensor in place: any offset and
/// outer strides, unit innermost stride (rows are contiguous, so vector loads
/// apply).
MemRefType anyLayoutBuffer(RankedTensorType t);

} // namespace mlir::attn::loops

#endif // ATTN_LIB_CONVERSION_ATTNTOLOOPS_MICROKERNELS_H
