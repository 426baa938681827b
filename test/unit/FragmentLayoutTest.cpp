//===- FragmentLayoutTest.cpp - our fragment table vs upstream's maps ------===//
//
// include/attn/GPU/FragmentLayout.h is the one table of lane <-> element
// maps the tensor-core kernel and its CPU emulation use. Here it is checked
// against the affine maps upstream MLIR derives for convert-vector-to-gpu's
// mma.sync lowering (mlir/Dialect/NVGPU/Utils/MMAUtils.h, validated upstream
// on hardware), for every lane and value, and for self-consistency: the
// ldmatrix addresses the kernel uses load exactly the mma.sync fragments.
//
//===----------------------------------------------------------------------===//
#include "attn/GPU/FragmentLayout.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/NVGPU/Utils/MMAUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <set>

namespace frag = attn::gpu::frag;
using frag::Coord;
using frag::kValuesA;
using frag::kValuesB;
using frag::kValuesC;
using frag::mmaA;
using frag::mmaB;
using frag::mmaC;
using frag::ldmatrixElement;
using frag::ldmatrixAddressA;
using frag::ldmatrixAddressBNMajor;
using frag::ldmatrixAddressBKMajor;
using frag::AccumulatorSource;
using frag::accumulatorForA;
using frag::kValuesATf32;
using frag::kValuesBTf32;
using frag::mmaATf32;
using frag::mmaBTf32;
using frag::ldmatrixElementB32;
using frag::ldmatrixAddressBNMajorTf32;
using frag::keyOfColumnTf32;
using frag::accumulatorForATf32;
static_assert(kWarpSize == frag::kWarpSize, "upstream and our warp size");

namespace {

struct Upstream : ::testing::Test {
  mlir::MLIRContext ctx;
  mlir::OpBuilder b{&ctx};
  mlir::Location loc = b.getUnknownLoc();

  Upstream() {
    ctx.loadDialect<mlir::affine::AffineDialect, mlir::arith::ArithDialect,
                    mlir::vector::VectorDialect, mlir::nvgpu::NVGPUDialect>();
  }

  /// Evaluates `map` at the given dims (no symbols).
  Coord eval(mlir::AffineMap map, std::initializer_list<int64_t> dims) {
    llvm::SmallVector<mlir::Attribute> in, out;
    for (int64_t d : dims)
      in.push_back(b.getIndexAttr(d));
    EXPECT_TRUE(mlir::succeeded(map.constantFold(in, out)));
    EXPECT_EQ(out.size(), 2u);
    return {int(mlir::cast<mlir::IntegerAttr>(out[0]).getInt()),
            int(mlir::cast<mlir::IntegerAttr>(out[1]).getInt())};
  }

  mlir::nvgpu::WarpMatrixInfo info(llvm::ArrayRef<int64_t> shape, mlir::Type elt,
                                   mlir::nvgpu::MatMulOperandRole role) {
    return {mlir::VectorType::get(shape, elt), role};
  }

  /// Compares our (lane, value) -> coord with upstream's for one operand.
  void compareOperand(mlir::nvgpu::WarpMatrixInfo wi, int values,
                      Coord (*ours)(int, int), const char *name) {
    mlir::FailureOr<mlir::AffineMap> map =
        mlir::nvgpu::getLaneIdAndValueIdToOperandCoord(b, loc, wi);
    ASSERT_TRUE(mlir::succeeded(map)) << name;
    for (int lane = 0; lane < kWarpSize; ++lane)
      for (int v = 0; v < values; ++v) {
        Coord up = eval(*map, {lane, v});
        Coord our = ours(lane, v);
        EXPECT_EQ(our.row, up.row) << name << " lane " << lane << " value " << v;
        EXPECT_EQ(our.col, up.col) << name << " lane " << lane << " value " << v;
      }
  }
};

TEST_F(Upstream, MmaSyncOperandsMatchConvertVectorToGpu) {
  using Role = mlir::nvgpu::MatMulOperandRole;
  compareOperand(info({16, 16}, b.getF16Type(), Role::A), kValuesA, mmaA, "A f16");
  // Upstream derives no map for bf16 (nor does its mma.sync lowering take
  // bf16); the PTX ISA gives .bf16 the same 16-bit fragment layout, and the
  // kernel uses this one table for both.
  EXPECT_TRUE(mlir::failed(mlir::nvgpu::getLaneIdAndValueIdToOperandCoord(
      b, loc, info({16, 16}, b.getBF16Type(), Role::A))));
  // Upstream's B operand is the N x K (transposed) warp tile.
  compareOperand(info({8, 16}, b.getF16Type(), Role::B), kValuesB,
                 [](int lane, int v) {
                   Coord c = mmaB(lane, v);
                   return Coord{c.col, c.row};
                 },
                 "B f16 (as N x K)");
  compareOperand(info({16, 8}, b.getF32Type(), Role::C), kValuesC, mmaC, "C f32");
}

TEST_F(Upstream, Tf32OperandsMatchConvertVectorToGpu) {
  // m16n8k8 with f32 operands (TF32): upstream's warp tiles are A 16 x 8
  // and B as N x K, 8 x 8.
  using Role = mlir::nvgpu::MatMulOperandRole;
  compareOperand(info({16, 8}, b.getF32Type(), Role::A), kValuesATf32, mmaATf32, "A tf32");
  compareOperand(info({8, 8}, b.getF32Type(), Role::B), kValuesBTf32,
                 [](int lane, int v) {
                   Coord c = mmaBTf32(lane, v);
                   return Coord{c.col, c.row};
                 },
                 "B tf32 (as N x K)");
}

TEST_F(Upstream, LdmatrixAddressOfAMatchesUpstream) {
  using Role = mlir::nvgpu::MatMulOperandRole;
  auto params = mlir::nvgpu::getLdMatrixParams(info({16, 16}, b.getF16Type(), Role::A),
                                               /*transpose=*/false);
  ASSERT_TRUE(mlir::succeeded(params));
  EXPECT_EQ(params->numTiles, 4);
  mlir::FailureOr<mlir::AffineMap> map =
      mlir::nvgpu::getLaneIdToLdMatrixMatrixCoord(b, loc, *params);
  ASSERT_TRUE(mlir::succeeded(map));
  for (int lane = 0; lane < kWarpSize; ++lane) {
    Coord up = eval(*map, {lane});
    EXPECT_EQ(ldmatrixAddressA(lane).row, up.row) << "lane " << lane;
    EXPECT_EQ(ldmatrixAddressA(lane).col, up.col) << "lane " << lane;
  }
}

/// ldmatrix as the PTX ISA defines it, read through the table: element e of
/// register j of `lane`, for the addresses `address` gives each lane.
Coord loaded(Coord (*address)(int), int lane, int j, int e, bool transpose) {
  Coord within = ldmatrixElement(lane, e, transpose);
  // The row of matrix j that holds the element was supplied by lane
  // 8j + row; the element is `col` elements after that row's address.
  int row = within.row, col = within.col;
  Coord a = address(8 * j + row);
  return {a.row, a.col + col};
}

TEST(FragmentTable, LdmatrixAddressesLoadTheMmaFragments) {
  for (int lane = 0; lane < kWarpSize; ++lane)
    for (int j = 0; j < 4; ++j)
      for (int e = 0; e < 2; ++e) {
        // A from a row-major tile.
        EXPECT_EQ(loaded(ldmatrixAddressA, lane, j, e, false), mmaA(lane, 2 * j + e))
            << "A lane " << lane << " reg " << j;
        // B of n-tile j / 2 from a [n][k] tile: element (k, n) sits at
        // tile position (n, k).
        Coord kb = mmaB(lane, 2 * (j % 2) + e);
        Coord nk = loaded(ldmatrixAddressBNMajor, lane, j, e, false);
        EXPECT_EQ(nk, (Coord{kb.col + 8 * (j / 2), kb.row}))
            << "B (N-major) lane " << lane << " reg " << j;
        // B of n-tile j / 2 from a [k][n] tile with .trans.
        Coord kn = loaded(ldmatrixAddressBKMajor, lane, j, e, true);
        EXPECT_EQ(kn, (Coord{kb.row, kb.col + 8 * (j / 2)}))
            << "B (K-major) lane " << lane << " reg " << j;
      }
}

TEST(FragmentTable, Ldmatrix32BitAddressesLoadTheTf32Fragments) {
  // 32-bit ldmatrix: one element per register, row l / 4, column l % 4 of
  // the 4-element (16-byte) row that lane 8j + l / 4 addressed.
  for (int lane = 0; lane < kWarpSize; ++lane)
    for (int j = 0; j < 4; ++j) {
      Coord within = ldmatrixElementB32(lane);
      Coord a = ldmatrixAddressBNMajorTf32(8 * j + within.row);
      Coord nk{a.row, a.col + within.col};
      // Register j: value j % 2 of the B fragment of n-tile j / 2; element
      // (k, n) of B sits at tile position (n, k).
      Coord kb = mmaBTf32(lane, j % 2);
      EXPECT_EQ(nk, (Coord{kb.col + 8 * (j / 2), kb.row})) << "lane " << lane << " reg " << j;
    }
}

TEST(FragmentTable, EveryElementHeldOnce) {
  auto check = [](int rows, int cols, int values, Coord (*f)(int, int)) {
    std::set<std::pair<int, int>> seen;
    for (int lane = 0; lane < kWarpSize; ++lane)
      for (int v = 0; v < values; ++v) {
        Coord c = f(lane, v);
        EXPECT_TRUE(c.row >= 0 && c.row < rows && c.col >= 0 && c.col < cols);
        seen.insert({c.row, c.col});
      }
    EXPECT_EQ(int(seen.size()), rows * cols);
  };
  check(16, 16, kValuesA, mmaA);
  check(16, 8, kValuesB, mmaB);
  check(16, 8, kValuesC, mmaC);
  check(16, 8, kValuesATf32, mmaATf32);
  check(8, 8, kValuesBTf32, mmaBTf32);
}

TEST(FragmentTable, AccumulatorsOfTwoNTilesAreTheNextAOperand) {
  for (int lane = 0; lane < kWarpSize; ++lane)
    for (int v = 0; v < kValuesA; ++v) {
      AccumulatorSource s = accumulatorForA(v);
      Coord c = mmaC(lane, s.value);
      EXPECT_EQ(mmaA(lane, v), (Coord{c.row, c.col + 8 * s.tile})) << lane << " " << v;
    }
}

// The kernel's shared-memory reads through the swizzle (swizzledChunk,
// swizzledColumn, the same functions the emitter instantiates) touch 32
// different banks per warp-wide access: each ldmatrix phase (8 lanes × 16
// bytes) and each TF32 V read (32 lanes × 4 bytes), for every stage base,
// tile offset and head dim the kernel uses. Without the swizzle the 8 rows
// of a K phase would share one bank group (8-way conflicts).
int bankOf(int64_t element, int bytes) { return int(element * bytes / 4 % frag::kSharedBanks); }

/// The banks of one ldmatrix phase m (lanes 8m .. 8m + 7): each lane's
/// address gives a 16-byte row of a tile `width` elements wide.
std::set<int> phaseBanks(Coord (*address)(int), int m, int rowOffset, int colOffset, int width,
                         int bytes) {
  int chunk = 16 / bytes;
  std::set<int> banks;
  for (int lane = 8 * m; lane < 8 * m + 8; ++lane) {
    Coord a = address(lane);
    int row = a.row + rowOffset, col = a.col + colOffset;
    int64_t first = int64_t(row) * width + frag::swizzledChunk(row, col, chunk);
    for (int e = 0; e < chunk; e += 4 / bytes)
      banks.insert(bankOf(first + e, bytes));
  }
  return banks;
}

TEST(SharedTiles, LdmatrixPhasesAreBankConflictFree) {
  for (int width : {64, 128})
    for (int base : {0, 16, 32}) // stage rows: 0, or BK (16 or 32)
      for (int m = 0; m < 4; ++m) {
        for (int j2 = 0; j2 < 2; ++j2)
          for (int kk = 0; kk < width / 16; ++kk) {
            // f16/bf16: Q's A fragments, K's B fragments ([n][k]) and V's
            // (.trans, [k][n]), at the offsets the kernel adds.
            EXPECT_EQ(phaseBanks(ldmatrixAddressA<int>, m, 0, 16 * kk, width, 2).size(), 32u);
            EXPECT_EQ(phaseBanks(ldmatrixAddressBNMajor<int>, m, base + 16 * j2, 16 * kk, width, 2)
                          .size(),
                      32u)
                << "K f16 width " << width << " base " << base << " phase " << m;
            EXPECT_EQ(phaseBanks(ldmatrixAddressBKMajor<int>, m, base + 16 * j2, 16 * kk, width, 2)
                          .size(),
                      32u)
                << "V f16 width " << width << " base " << base << " phase " << m;
          }
        // TF32: K's B fragments by 32-bit ldmatrix, k-steps of 8.
        for (int j2 = 0; j2 < 2; ++j2)
          for (int kk = 0; kk < width / 8; ++kk)
            EXPECT_EQ(phaseBanks(ldmatrixAddressBNMajorTf32<int>, m, base + 16 * j2, 8 * kk, width,
                                 4)
                          .size(),
                      32u)
                << "K tf32 width " << width << " base " << base << " phase " << m;
      }
}

TEST(SharedTiles, Tf32ValueReadsAreBankConflictFree) {
  // valuesTf32: lane l reads V[base + 8·st + keyOfColumnTf32(k)][8n + c]
  // for its B value v at (k, c) = mmaBTf32(l, v).
  for (int dv : {64, 128})
    for (int base : {0, 16, 32})
      for (int st = 0; st < 4; ++st)
        for (int n = 0; n < dv / 8; ++n)
          for (int v = 0; v < kValuesBTf32; ++v) {
            std::set<int> banks;
            for (int lane = 0; lane < kWarpSize; ++lane) {
              Coord e = mmaBTf32(lane, v);
              int key = base + 8 * st + keyOfColumnTf32(e.row), col = e.col + 8 * n;
              banks.insert(bankOf(int64_t(key) * dv + frag::swizzledColumn(key, col, 4), 4));
            }
            EXPECT_EQ(banks.size(), 32u) << "Dv " << dv << " base " << base << " st " << st
                                         << " n " << n << " v " << v;
          }
}

TEST(FragmentTable, Tf32AccumulatorsAreTheNextAOperandUnderTheKeyPermutation) {
  // Value v of the A operand of a tf32 P·V k-step is (row, column k); the
  // key it stands for is keyOfColumnTf32(k), and the scores' accumulator
  // value accumulatorForATf32(v) of the same lane holds exactly (row, key).
  std::set<int> keys;
  for (int k = 0; k < frag::kMmaKTf32; ++k)
    keys.insert(keyOfColumnTf32(k));
  EXPECT_EQ(int(keys.size()), frag::kMmaKTf32); // a permutation of the 8 keys
  for (int lane = 0; lane < kWarpSize; ++lane)
    for (int v = 0; v < kValuesATf32; ++v) {
      Coord a = mmaATf32(lane, v);
      Coord c = mmaC(lane, accumulatorForATf32(v));
      EXPECT_EQ((Coord{a.row, keyOfColumnTf32(a.col)}), c) << lane << " " << v;
    }
}

} // namespace
