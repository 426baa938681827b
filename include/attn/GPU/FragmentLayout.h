//===- FragmentLayout.h - lane <-> element maps of mma.sync and ldmatrix -*- C++ -*-===//
//
// The one table of which element of a warp-level matrix each lane holds, for
// the tensor-core instructions the FlashAttention-2 kernel uses:
//
//   mma.sync.aligned.m16n8k16.row.col  (16-bit A and B, f32 C/D)
//     A  16x16 (M x K)  vector<4x2xf16>  8 values per lane
//     B  16x8  (K x N)  vector<2x2xf16>  4 values per lane
//     C  16x8  (M x N)  vector<2x2xf32>  4 values per lane
//   ldmatrix.sync.aligned.m8n8.x{1,2,4}[.trans].b16
//     lane l supplies the address of row l % 8 of matrix l / 8; register j
//     of lane l holds two elements of matrix j.
//
// Value v of a fragment vector<Rx2xT> is element [v / 2][v % 2], the order
// upstream's convert-vector-to-gpu numbers them. The maps are the ones
// upstream derives in mlir/Dialect/NVGPU/Utils/MMAUtils.h
// (getLaneIdAndValueIdToOperandCoord, getLaneIdToLdMatrixMatrixCoord), which
// upstream validates on hardware; test/unit/FragmentLayoutTest.cpp
// evaluates upstream's affine maps for every lane and value and compares.
//
// Used by the kernel emitter (ldmatrix addresses, which accumulator value is
// which score) and by the CPU emulation of the warp instructions
// (lib/Runtime/WarpEmulation.cpp), so both read the same table.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_GPU_FRAGMENTLAYOUT_H
#define ATTN_GPU_FRAGMENTLAYOUT_H

namespace attn::gpu::frag {

inline constexpr int kWarpSize = 32;

// Every map below is a template over the lane's integer type: plain `int`
// for the emulation and the tests, an IR value wrapper (with +, *, /, % by
// constants) for the kernel emitter, which so builds its lane arithmetic
// from this very table.

/// A (row, col) position in a warp-level matrix.
template <typename I> struct CoordOf {
  I row, col;
};
using Coord = CoordOf<int>;
constexpr bool operator==(const Coord &a, const Coord &b) {
  return a.row == b.row && a.col == b.col;
}

/// The quad (group of 4 lanes) of a lane and its place in the quad.
template <typename I> constexpr I groupOf(I lane) { return lane / 4; }
template <typename I> constexpr I threadInGroup(I lane) { return lane % 4; }

// --- mma.sync m16n8k16 ---------------------------------------------------

inline constexpr int kMmaM = 16, kMmaN = 8, kMmaK = 16;
inline constexpr int kValuesA = 8, kValuesB = 4, kValuesC = 4;

/// A (16 x 16, row-major operand): value v of lane l.
template <typename I> constexpr CoordOf<I> mmaA(I lane, int v) {
  return {groupOf(lane) + 8 * ((v / 2) % 2), 2 * threadInGroup(lane) + (v % 2 + 8 * (v / 4))};
}
/// B (16 x 8, K x N, column operand): value v of lane l.
template <typename I> constexpr CoordOf<I> mmaB(I lane, int v) {
  return {2 * threadInGroup(lane) + (v % 2 + 8 * (v / 2)), groupOf(lane)};
}
/// C and D (16 x 8, f32): value v of lane l. Lane l holds rows
/// groupOf(l) (values 0, 1) and groupOf(l) + 8 (values 2, 3).
template <typename I> constexpr CoordOf<I> mmaC(I lane, int v) {
  return {groupOf(lane) + 8 * (v / 2), 2 * threadInGroup(lane) + v % 2};
}

// --- ldmatrix m8n8 b16 -----------------------------------------------------

/// The matrix and the row within it whose address lane l supplies.
constexpr int ldmatrixMatrixOf(int lane) { return lane / 8; }
constexpr int ldmatrixRowOf(int lane) { return lane % 8; }

/// Element e (0, 1) of register j of lane l: a position in matrix j (8 x 8,
/// rows as addressed). Without .trans lane l gets row l / 4, columns
/// 2(l % 4) + e; with .trans the transpose.
constexpr Coord ldmatrixElement(int lane, int e, bool transpose) {
  Coord c{lane / 4, 2 * (lane % 4) + e};
  return transpose ? Coord{c.col, c.row} : c;
}

/// The address (row, col of the first of 8 elements) lane l supplies to one
/// ldmatrix.x4 that fills:
///  - an A fragment from a row-major 16 x 16 tile (registers = a0a1, a2a3,
///    a4a5, a6a7);
template <typename I> constexpr CoordOf<I> ldmatrixAddressA(I lane) {
  return {lane % 16, 8 * (lane / 16)};
}
///  - the B fragments of two n-tiles from a tile stored N-major, [n][k]
///    (16 n x 16 k; K rows for Q·Kᵀ): registers 0, 1 = n-tile 0, 2, 3 =
///    n-tile 1 (no .trans);
template <typename I> constexpr CoordOf<I> ldmatrixAddressBNMajor(I lane) {
  return {lane % 8 + 8 * (lane / 16), 8 * ((lane / 8) % 2)};
}
///  - the B fragments of two n-tiles from a tile stored K-major, [k][n]
///    (16 k x 16 n; V rows for P·V): the same registers, with .trans.
template <typename I> constexpr CoordOf<I> ldmatrixAddressBKMajor(I lane) {
  return {lane % 8 + 8 * ((lane / 8) % 2), 8 * (lane / 16)};
}

// --- the accumulator as the next A operand ---------------------------------

/// FlashAttention-2 reuses the scores' accumulators as the A operand of P·V
/// without moving data between lanes: A value v of k-step s comes from C
/// value accumulatorForA(v).value of n-tile 2s + accumulatorForA(v).tile.
struct AccumulatorSource {
  int tile, value;
};
constexpr AccumulatorSource accumulatorForA(int v) { return {v / 4, v % 4}; }

// --- mma.sync m16n8k8 tf32 (f32 inputs as TF32) ----------------------------
//
//   mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
//     A  16x8 (M x K)  vector<4x1xf32>  4 values per lane (one 32-bit register each)
//     B  8x8  (K x N)  vector<2x1xf32>  2 values per lane
//     C  16x8 (M x N)  vector<2x2xf32>  as m16n8k16 (mmaC)
//   ldmatrix.sync.aligned.m8n8.x{1,2,4}.b16 on 32-bit data: each 16-byte row
//     is 4 elements; register j of lane l holds one element of matrix j.

inline constexpr int kMmaKTf32 = 8;
/// TF32 in an f32's bits: the low 13 mantissa bits are dropped (kept: the
/// mask); rounding to nearest, ties away, adds half of the dropped range
/// first.
inline constexpr unsigned kTf32KeepMask = 0xffffe000u, kTf32RoundHalf = 0x1000u;
inline constexpr int kValuesATf32 = 4, kValuesBTf32 = 2;
/// Elements of an ldmatrix row (16 bytes) for 16-bit and 32-bit data.
inline constexpr int kLdmatrixRowB16 = 8, kLdmatrixRowB32 = 4;

/// A (16 x 8, tf32): value v of lane l: rows groupOf(l) (v = 0, 2) and
/// groupOf(l) + 8 (v = 1, 3), columns threadInGroup(l) (v = 0, 1) and + 4.
template <typename I> constexpr CoordOf<I> mmaATf32(I lane, int v) {
  return {groupOf(lane) + 8 * (v % 2), threadInGroup(lane) + 4 * (v / 2)};
}
/// B (8 x 8, K x N, tf32): value v of lane l.
template <typename I> constexpr CoordOf<I> mmaBTf32(I lane, int v) {
  return {threadInGroup(lane) + 4 * v, groupOf(lane)};
}

/// Element of register j of lane l for 32-bit ldmatrix (no .trans: a
/// transposed load would split the 32-bit elements): row l / 4, column
/// l % 4 of matrix j.
constexpr Coord ldmatrixElementB32(int lane) { return {lane / 4, lane % 4}; }

/// The address an ldmatrix.x4 on 32-bit data needs from lane l to fill
/// the tf32 B fragments (registers 0, 1 = n-tile 0, 2, 3 = n-tile 1) of
/// one k-step from a tile stored N-major, [n][k] (16 n x 8 k; K rows for
/// Q·Kᵀ).
template <typename I> constexpr CoordOf<I> ldmatrixAddressBNMajorTf32(I lane) {
  return {lane % 8 + 8 * (lane / 16), kLdmatrixRowB32 * ((lane / 8) % 2)};
}

/// tf32 P·V takes the scores' accumulators as its A operand without moving
/// data between lanes by permuting the keys of each k-step: column k of the
/// A operand (and row k of the B operand, V) is key keyOfColumnTf32(k) of
/// the 8 in the step, so that A value v of k-step s is C value
/// accumulatorForATf32(v) of n-tile s. (C holds keys 2t, 2t + 1 of each
/// row in lane t of a quad; A wants columns t and t + 4.)
template <typename I> constexpr I keyOfColumnTf32(I k) { return 2 * (k % 4) + k / 4; }
constexpr int accumulatorForATf32(int v) { return 2 * (v % 2) + v / 2; }

// --- swizzled shared-memory tiles ------------------------------------------

/// Shared memory: 32 banks, 4 bytes wide.
inline constexpr int kSharedBanks = 32;

/// The kernel's shared tiles (the K and V stages; Q staged through K) are
/// stored swizzled: the 16-byte chunk c of row r sits at chunk c ^ (r % 8),
/// so that the 8 rows one ldmatrix phase reads (and, for TF32, the keys a
/// warp reads V at) fall on different banks. `chunk` is the elements per 16
/// bytes (kLdmatrixRowB16 or kLdmatrixRowB32); `col` is the first element
/// of a chunk.
template <typename I> constexpr I swizzledChunk(I row, I col, int chunk) {
  I c = col / chunk;
  I r = row % 8;
  return chunk * (c ^ r);
}
/// The physical column of element `col` of row `row` of a swizzled tile.
template <typename I> constexpr I swizzledColumn(I row, I col, int chunk) {
  I start = swizzledChunk(row, col, chunk);
  return start + col % chunk;
}

} // namespace attn::gpu::frag


#endif // ATTN_GPU_FRAGMENTLAYOUT_H
