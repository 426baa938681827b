//===- AttnModFunctions.cpp - the rules of score and mask functions ------===//
//
// One verifier for every region that holds a score or mask function
// (attn.score_mod, attn.mask_mod, and attn.sdpa's score_mod / mask_mod):
// the kernels clone such a body lane by lane, so it may hold only scalar
// arithmetic a vector lane can compute and reads of the captured tensors.
//
//===----------------------------------------------------------------------===//
#include "attn/Dialect/AttnDialect.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::attn;

static bool isScalar(Type t) { return isa<IntegerType, IndexType, FloatType>(t); }

/// The element types a capture may hold: what a kernel can load per lane.
static bool isCaptureElement(Type t) {
  if (auto i = dyn_cast<IntegerType>(t))
    return llvm::is_contained({1u, 8u, 16u, 32u, 64u}, i.getWidth());
  return isa<IndexType, Float16Type, BFloat16Type, Float32Type, Float64Type>(t);
}

static std::string typeList(TypeRange types) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "(";
  llvm::interleaveComma(types, os);
  os << ")";
  return s;
}

/// Whether `nested` may appear in a function body; sets `why` otherwise.
static bool allowedInBody(Operation *nested, Block &entry, std::string &why) {
  if (isa<YieldOp>(nested)) {
    if (nested->getBlock() == &entry)
      return true;
    why = "'attn.yield' may only end the function body";
    return false;
  }
  if (auto extract = dyn_cast<tensor::ExtractOp>(nested)) {
    auto arg = dyn_cast<BlockArgument>(extract.getTensor());
    if (arg && arg.getOwner() == &entry)
      return true;
    why = "'tensor.extract' may only read a captured tensor";
    return false;
  }
  if (isa<scf::IfOp, scf::YieldOp>(nested))
    return true;
  Dialect *d = nested->getDialect();
  if (isa_and_present<arith::ArithDialect, math::MathDialect>(d))
    return true;
  why = "op '" + nested->getName().getStringRef().str() +
        "' is not allowed (allowed: arith and math ops on scalars, scf.if, "
        "tensor.extract of a capture, attn.yield)";
  return false;
}

LogicalResult mlir::attn::verifyModFunction(Operation *op, Region &region, ModKind kind,
                                            ValueRange captures, StringRef name) {
  if (region.empty())
    return success();
  if (!region.hasOneBlock())
    return op->emitOpError() << "'" << name << "' region must have one block";
  Block &entry = region.front();

  // The signature: the kind's scalars, then one argument per capture.
  SmallVector<Type> expected;
  Builder b(op->getContext());
  if (kind == ModKind::Score)
    expected.push_back(b.getF32Type());
  expected.append(4, b.getIndexType());
  for (Value c : captures)
    expected.push_back(c.getType());
  if (TypeRange(entry.getArgumentTypes()) != TypeRange(expected))
    return op->emitOpError()
           << "'" << name << "' region must take "
           << (kind == ModKind::Score ? "(score: f32, b, h, q, kv: index)"
                                      : "(b, h, q, kv: index)")
           << " followed by one argument per capture: expected " << typeList(expected)
           << ", got " << typeList(entry.getArgumentTypes());

  for (auto [i, c] : llvm::enumerate(captures)) {
    auto t = cast<RankedTensorType>(c.getType());
    if (!isCaptureElement(t.getElementType()))
      return op->emitOpError() << "capture #" << i << " has element type "
                               << t.getElementType()
                               << "; a capture holds i1, i8, i16, i32, i64, index, "
                                  "f16, bf16, f32 or f64";
    // Reads are clamped into the capture's shape, which an empty capture
    // does not have: any read would fall outside it. (At run time the
    // runtime's shape check specialises dynamic dims and meets this rule.)
    if (llvm::is_contained(t.getShape(), 0))
      return op->emitOpError() << "capture #" << i << " of type " << t
                               << " has no elements: a function's reads of it would "
                                  "fall outside it";
  }

  // The body: allowed ops on scalars only.
  std::string why;
  WalkResult walk = region.walk([&](Operation *nested) {
    if (!allowedInBody(nested, entry, why)) {
      nested->emitOpError() << "in the '" << name << "' function of '"
                            << op->getName() << "': " << why;
      return WalkResult::interrupt();
    }
    for (Type t : nested->getResultTypes())
      if (!isScalar(t)) {
        nested->emitOpError() << "in the '" << name << "' function of '" << op->getName()
                              << "' produces " << t
                              << "; a function computes on scalars (integers, index, "
                                 "floats) lane by lane";
        return WalkResult::interrupt();
      }
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();

  auto yield = dyn_cast<YieldOp>(entry.getTerminator());
  if (!yield)
    return op->emitOpError() << "'" << name << "' region must end in 'attn.yield'";
  Type want = kind == ModKind::Score ? Type(b.getF32Type()) : Type(b.getI1Type());
  if (yield.getValue().getType() != want)
    return op->emitOpError() << "'" << name << "' function must yield " << want
                             << (kind == ModKind::Score ? " (the new score)"
                                                        : " (true = keep the key)")
                             << ", got " << yield.getValue().getType();
  return success();
}

/// The rules attn.score_mod and attn.mask_mod share: scores of rank 4.
static LogicalResult verifyModOp(Operation *op, Value input, Region &body, ModKind kind,
                                 ValueRange captures, StringRef name) {
  auto t = cast<RankedTensorType>(input.getType());
  if (t.getRank() != 4)
    return op->emitOpError() << "operand 'input' must have rank 4 [B,H,Tq,Tk], got rank "
                             << t.getRank();
  return verifyModFunction(op, body, kind, captures, name);
}

LogicalResult ScoreModOp::verify() {
  return verifyModOp(*this, getInput(), getBody(), ModKind::Score, getCaptures(), "body");
}

LogicalResult MaskModOp::verify() {
  return verifyModOp(*this, getInput(), getBody(), ModKind::Mask, getCaptures(), "body");
}

LogicalResult BlockMaskOp::verify() {
  int64_t qLen = getQLen(), kvLen = getKvLen();
  ArrayRef<int64_t> block = getBlockSize();
  if (qLen < 1 || kvLen < 1)
    return emitOpError() << "needs q_len and kv_len of at least 1, got " << qLen << " and "
                         << kvLen;
  if (block.size() != 2 || block[0] < 1 || block[1] < 1)
    return emitOpError() << "block_size must be two sizes [BQ, BK] of at least 1, got ["
                         << llvm::make_range(block.begin(), block.end()) << "]";
  int64_t nq = llvm::divideCeil(qLen, block[0]), nk = llvm::divideCeil(kvLen, block[1]);
  auto counts = cast<RankedTensorType>(getKvNumBlocks().getType());
  if (!counts.hasStaticShape() || counts.getRank() != 3)
    return emitOpError() << "result 'kv_num_blocks' must be a static [B,H,NQ] tensor, got "
                         << counts;
  int64_t batch = counts.getDimSize(0), heads = counts.getDimSize(1);
  if (batch < 1 || heads < 1)
    return emitOpError() << "needs B and H of at least 1, got " << counts;
  SmallVector<int64_t> countShape{batch, heads, nq}, listShape{batch, heads, nq, nk};
  for (auto [name, result, shape] :
       {std::tuple<StringRef, Value, ArrayRef<int64_t>>{"kv_num_blocks", getKvNumBlocks(),
                                                        countShape},
        {"kv_indices", getKvIndices(), listShape},
        {"full_kv_num_blocks", getFullKvNumBlocks(), countShape},
        {"full_kv_indices", getFullKvIndices(), listShape}}) {
    auto t = cast<RankedTensorType>(result.getType());
    if (t.getShape() != shape)
      return emitOpError() << "result '" << name << "' must be " << RankedTensorType::get(shape, t.getElementType())
                           << " (B = " << batch << ", H = " << heads << ", NQ = ceil(" << qLen
                           << " / " << block[0] << "), NK = ceil(" << kvLen << " / "
                           << block[1] << ")), got " << t;
  }
  return verifyModFunction(*this, getBody(), ModKind::Mask, getCaptures(), "body");
}
