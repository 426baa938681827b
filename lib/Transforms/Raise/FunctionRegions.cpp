//===- FunctionRegions.cpp - terms as score and mask functions -----------===//
#include "FunctionRegions.h"

#include "attn/Dialect/AttnDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"

#include <cmath>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::raise;

LogicalResult FunctionBuilder::addCaptures(const Term *t, std::string &why) {
  if (t->kind == Term::Kind::Reduce) {
    why = "a reduction inside the score function";
    return failure();
  }
  if (t->kind == Term::Kind::Leaf && !sameTerm(t, scores)) {
    Value v = t->tensor;
    if (captureOf.count(v))
      return success();
    Value capture = v;
    if (!isa<RankedTensorType>(v.getType())) {
      capture = tensor::FromElementsOp::create(rewriter, loc, RankedTensorType::get({}, v.getType()),
                                               ValueRange{v});
    }
    captureOf[v] = captures.size();
    captures.push_back(capture);
    return success();
  }
  for (const Term *o : t->operands)
    if (failed(addCaptures(o, why)))
      return failure();
  return success();
}

Block *FunctionBuilder::createBody(Region &region, bool score) {
  SmallVector<Type> types;
  if (score)
    types.push_back(rewriter.getF32Type());
  types.append(4, rewriter.getIndexType());
  for (Value c : captures)
    types.push_back(c.getType());
  SmallVector<Location> locs(types.size(), loc);
  OpBuilder::InsertionGuard guard(rewriter);
  body = rewriter.createBlock(&region, region.end(), types, locs);
  emitted.clear();
  // Point dims from (b, h, q, kv): h is the last batch dim, b the others
  // linearised.
  unsigned first = score ? 1 : 0;
  Value b = body->getArgument(first), h = body->getArgument(first + 1);
  Value q = body->getArgument(first + 2), kv = body->getArgument(first + 3);
  unsigned dims = 0;
  for (int d : positions.batch)
    dims = std::max<unsigned>(dims, d + 1);
  dims = std::max<unsigned>(dims, std::max(positions.queries, positions.keys) + 1);
  pointValues.assign(dims, Value());
  pointValues[positions.queries] = q;
  pointValues[positions.keys] = kv;
  unsigned nb = positions.batch.size();
  if (nb >= 1)
    pointValues[positions.batch.back()] = h;
  if (nb == 2)
    pointValues[positions.batch[0]] = b;
  if (nb > 2) {
    OpBuilder::InsertionGuard inner(rewriter);
    rewriter.setInsertionPointToStart(body);
    int64_t stride = 1;
    for (int k = nb - 2; k >= 0; --k) {
      int64_t size = positions.batchSizes[k];
      Value s = arith::ConstantIndexOp::create(rewriter, loc, stride);
      Value n = arith::ConstantIndexOp::create(rewriter, loc, size);
      Value div = arith::FloorDivSIOp::create(rewriter, loc, b, s);
      pointValues[positions.batch[k]] = arith::RemSIOp::create(rewriter, loc, div, n);
      stride *= size;
    }
  }
  return body;
}

Value FunctionBuilder::emitIndex(OpBuilder &b, AffineExpr e, std::string &why) {
  if (auto d = dyn_cast<AffineDimExpr>(e)) {
    if (d.getPosition() >= pointValues.size() || !pointValues[d.getPosition()]) {
      why = "the function depends on a dim the sdpa has no argument for";
      return Value();
    }
    return pointValues[d.getPosition()];
  }
  if (auto c = dyn_cast<AffineConstantExpr>(e))
    return arith::ConstantIndexOp::create(b, loc, c.getValue());
  auto bin = cast<AffineBinaryOpExpr>(e);
  Value l = emitIndex(b, bin.getLHS(), why), r = emitIndex(b, bin.getRHS(), why);
  if (!l || !r)
    return Value();
  switch (e.getKind()) {
  case AffineExprKind::Add:
    return arith::AddIOp::create(b, loc, l, r);
  case AffineExprKind::Mul:
    return arith::MulIOp::create(b, loc, l, r);
  case AffineExprKind::FloorDiv:
    return arith::FloorDivSIOp::create(b, loc, l, r);
  case AffineExprKind::CeilDiv:
    return arith::CeilDivSIOp::create(b, loc, l, r);
  case AffineExprKind::Mod:
    return arith::RemSIOp::create(b, loc, l, r);
  default:
    why = "an index the function cannot compute";
    return Value();
  }
}

Value FunctionBuilder::emit(OpBuilder &b, const Term *t, std::string &why) {
  if (auto it = emitted.find(t); it != emitted.end())
    return it->second;
  Value v;
  switch (t->kind) {
  case Term::Kind::Constant:
    if (isa<FloatType>(t->type))
      v = arith::ConstantOp::create(b, loc, b.getFloatAttr(t->type, t->constant));
    else if (t->type.isIndex())
      v = arith::ConstantIndexOp::create(b, loc, static_cast<int64_t>(t->constant));
    else
      v = arith::ConstantOp::create(b, loc,
                                    b.getIntegerAttr(t->type, static_cast<int64_t>(t->constant)));
    break;
  case Term::Kind::Index:
    v = emitIndex(b, t->index, why);
    break;
  case Term::Kind::Leaf: {
    if (sameTerm(t, scores)) {
      v = body->getArgument(0);
      if (t->type != v.getType())
        v = arith::TruncFOp::create(b, loc, t->type, v);
      break;
    }
    unsigned first = body->getNumArguments() - captures.size();
    Value capture = body->getArgument(first + captureOf.lookup(t->tensor));
    SmallVector<Value> indices;
    for (AffineExpr e : t->map.getResults()) {
      Value i = emitIndex(b, e, why);
      if (!i)
        return Value();
      indices.push_back(i);
    }
    v = tensor::ExtractOp::create(b, loc, capture, indices);
    break;
  }
  case Term::Kind::Op: {
    SmallVector<Value> operands;
    for (const Term *o : t->operands) {
      Value ov = emit(b, o, why);
      if (!ov)
        return Value();
      operands.push_back(ov);
    }
    if (t->name == "arith.cmpf") {
      v = arith::CmpFOp::create(b, loc, static_cast<arith::CmpFPredicate>(t->predicate),
                                operands[0], operands[1]);
    } else if (t->name == "arith.cmpi") {
      v = arith::CmpIOp::create(b, loc, static_cast<arith::CmpIPredicate>(t->predicate),
                                operands[0], operands[1]);
    } else {
      OperationState state(loc, t->name);
      state.addOperands(operands);
      state.addTypes(t->type);
      v = b.create(state)->getResult(0);
    }
    break;
  }
  case Term::Kind::Reduce:
    why = "a reduction inside the function";
    return Value();
  }
  if (v)
    emitted[t] = v;
  return v;
}

LogicalResult FunctionBuilder::buildScore(Region &region, const Term *t, double scale,
                                          std::string &why) {
  createBody(region, /*score=*/true);
  OpBuilder b = OpBuilder::atBlockEnd(body);
  Value v = emit(b, t, why);
  if (!v)
    return failure();
  if (v.getType() != b.getF32Type()) {
    if (!isa<FloatType>(v.getType())) {
      why = "the score function is not a float";
      return failure();
    }
    v = arith::ExtFOp::create(b, loc, b.getF32Type(), v);
  }
  if (scale != 1.0) {
    Value c = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(static_cast<float>(scale)));
    v = arith::MulFOp::create(b, loc, v, c);
  }
  YieldOp::create(b, loc, v);
  return success();
}

LogicalResult FunctionBuilder::buildMask(Region &region,
                                         ArrayRef<std::pair<const Term *, bool>> conditions,
                                         std::string &why) {
  createBody(region, /*score=*/false);
  OpBuilder b = OpBuilder::atBlockEnd(body);
  Value keep;
  for (auto [cond, keepWhenTrue] : conditions) {
    Value c = emit(b, cond, why);
    if (!c)
      return failure();
    if (!c.getType().isInteger(1)) {
      why = "a keep condition that is not i1";
      return failure();
    }
    if (!keepWhenTrue) {
      Value one = arith::ConstantOp::create(b, loc, b.getBoolAttr(true));
      c = arith::XOrIOp::create(b, loc, c, one);
    }
    keep = keep ? arith::AndIOp::create(b, loc, keep, c).getResult() : c;
  }
  YieldOp::create(b, loc, keep);
  return success();
}

bool mlir::attn::raise::mayBeMinusInf(const Term *t, const Term *scores) {
  switch (t->kind) {
  case Term::Kind::Constant:
    return t->constant <= -1e30 || std::isnan(t->constant);
  case Term::Kind::Index:
    return false;
  case Term::Kind::Leaf: {
    if (sameTerm(t, scores) || !isa<FloatType>(t->type))
      return false;
    DenseElementsAttr dense;
    if (!matchPattern(t->tensor, m_Constant(&dense)))
      return true;
    for (APFloat f : dense.getValues<APFloat>())
      if (!f.isFinite())
        return true;
    return false;
  }
  case Term::Kind::Op:
    if (t->name == "math.log" ||
        (t->name == "arith.divf" && !t->operands[1]->isConstant()))
      return true;
    return llvm::any_of(t->operands, [&](const Term *o) { return mayBeMinusInf(o, scores); });
  case Term::Kind::Reduce:
    return true;
  }
  return true;
}
