//===- Differentiate.cpp - the attn-differentiate pass --------------------===//
//
// Reverse mode over one block: clone the forward into @f_grad, decompose
// attn.mha (and each attn.sdpa the fused backward does not take), seed the results' adjoints with the extra arguments, then visit
// the forward ops last to first, asking each op's DifferentiableOpInterface
// for its operands' adjoints and adding them into a map; return the
// arguments' adjoints (zeros where none arrived), and drop the forward ops
// nothing reads any more.
//
//===----------------------------------------------------------------------===//
#include "attn/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include "llvm/ADT/StringExtras.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNDIFFERENTIATE
#include "attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

bool isFloatTensor(Type t) {
  auto rt = dyn_cast<RankedTensorType>(t);
  return rt && isa<FloatType>(rt.getElementType());
}

/// a + b elementwise (same type).
Value addTensors(OpBuilder &b, Location loc, Value x, Value y) {
  auto t = cast<RankedTensorType>(x.getType());
  int64_t rank = t.getRank();
  AffineMap id = b.getMultiDimIdentityMap(rank);
  Value init = tensor::EmptyOp::create(b, loc, tensor::getMixedSizes(b, loc, x),
                                       t.getElementType());
  return linalg::GenericOp::create(
             b, loc, TypeRange{t}, ValueRange{x, y}, ValueRange{init},
             ArrayRef<AffineMap>{id, id, id},
             SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               linalg::YieldOp::create(nb, nl,
                                       Value(arith::AddFOp::create(nb, nl, args[0], args[1])));
             })
      .getResult(0);
}

/// A tensor of zeros shaped like `x`.
Value zerosLike(OpBuilder &b, Location loc, Value x) {
  auto t = cast<RankedTensorType>(x.getType());
  Value zero = arith::ConstantOp::create(b, loc, t.getElementType(),
                                         b.getFloatAttr(t.getElementType(), 0.0));
  Value init = tensor::EmptyOp::create(b, loc, tensor::getMixedSizes(b, loc, x),
                                       t.getElementType());
  return linalg::FillOp::create(b, loc, ValueRange{zero}, ValueRange{init}).getResult(0);
}

struct AttnDifferentiatePass
    : mlir::attn::impl::AttnDifferentiateBase<AttnDifferentiatePass> {
  using AttnDifferentiateBase::AttnDifferentiateBase;

  void getDependentDialects(DialectRegistry &registry) const override {
    AttnDifferentiateBase::getDependentDialects(registry);
    registerDifferentiableOpModels(registry);
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<StringRef> names;
    llvm::SplitString(functions, names, ",");
    SmallVector<func::FuncOp> todo;
    for (StringRef name : names) {
      auto fn = module.lookupSymbol<func::FuncOp>(name.trim());
      if (!fn || fn.isExternal()) {
        module.emitError() << "attn-differentiate: no function with a body named '"
                           << name.trim() << "'";
        return signalPassFailure();
      }
      todo.push_back(fn);
    }
    if (names.empty())
      for (auto fn : module.getOps<func::FuncOp>())
        if (!fn.isExternal() && fn->walk([](Operation *op) {
                                     return isa<AttnDialect>(op->getDialect())
                                                ? WalkResult::interrupt()
                                                : WalkResult::advance();
                                   }).wasInterrupted())
          todo.push_back(fn);
    for (func::FuncOp fn : todo)
      if (failed(differentiate(fn)))
        return signalPassFailure();
  }

  LogicalResult differentiate(func::FuncOp fn) {
    std::string gradName = (fn.getSymName() + "_grad").str();
    if (SymbolTable::lookupSymbolIn(getOperation(), gradName))
      return fn.emitOpError() << "attn-differentiate: a symbol '" << gradName
                              << "' exists already";
    if (!fn.getBody().hasOneBlock())
      return fn.emitOpError("attn-differentiate: takes functions of one block");
    FunctionType type = fn.getFunctionType();
    for (Type t : type.getResults())
      if (!isFloatTensor(t))
        return fn.emitOpError() << "attn-differentiate: result type " << t
                                << " is not a floating-point tensor";

    OpBuilder b(fn.getContext());
    b.setInsertionPointAfter(fn);
    Location loc = fn.getLoc();
    auto grad = func::FuncOp::create(b, loc, gradName, type);
    // Arguments marked attn.no_grad stay constants: no gradient result,
    // and the rules treat values computed from them as constants
    // (isNoGradArgument).
    for (unsigned i = 0; i < type.getNumInputs(); ++i)
      if (fn.getArgAttr(i, kNoGradAttr))
        grad.setArgAttr(i, kNoGradAttr, b.getUnitAttr());
    IRMapping map;
    fn.getBody().cloneInto(&grad.getBody(), map);
    Block &body = grad.getBody().front();
    // The results' adjoints: more arguments (signature, block and argument
    // attributes kept in step).
    unsigned numInputs = type.getNumInputs(), numResults = type.getNumResults();
    if (failed(grad.insertArguments(
            SmallVector<unsigned>(numResults, numInputs), type.getResults(),
            SmallVector<DictionaryAttr>(numResults, b.getDictionaryAttr({})),
            SmallVector<Location>(numResults, loc))))
      return grad.emitOpError("attn-differentiate: cannot add the adjoint arguments");
    SmallVector<Value> resultAdjointArgs(body.getArguments().drop_front(numInputs));

    // attn.mha → projections, heads, sdpa: each has a rule.
    RewritePatternSet patterns(fn.getContext());
    populateDecomposeMhaPatterns(patterns);
    GreedyRewriteConfig config;
    config.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
    if (failed(applyPatternsGreedily(grad, std::move(patterns), config)))
      return grad.emitOpError("attn-differentiate: decomposing attn.mha failed");
    // An sdpa attn.sdpa_grad does not take (a score function whose
    // captures get gradients: they are scattered from the [B,H,Tq,Tk]
    // score adjoints) → its primitive chain, whose ops have rules of their
    // own (or name what has none). Other functions go to attn.sdpa_grad's
    // regions.
    auto needsChain = [](SdpaOp op) { return scoreFunctionNeedsChain(op); };
    SmallVector<Operation *> chains;
    grad.walk([&](SdpaOp op) {
      if (needsChain(op))
        chains.push_back(op);
    });
    if (!chains.empty()) {
      RewritePatternSet sdpaPatterns(fn.getContext());
      populateDecomposeSdpaPatterns(sdpaPatterns);
      GreedyRewriteConfig only;
      only.setStrictness(GreedyRewriteStrictness::ExistingOps);
      (void)applyOpPatternsGreedily(chains, std::move(sdpaPatterns), only);
      WalkResult left = grad.walk([&](SdpaOp op) {
        if (!needsChain(op))
          return WalkResult::advance();
        op.emitOpError("attn-differentiate: cannot decompose it into the primitive chain (a "
                       "dynamic head dim needs an explicit scale)");
        return WalkResult::interrupt();
      });
      if (left.wasInterrupted())
        return failure();
    }

    auto ret = cast<func::ReturnOp>(body.getTerminator());
    DenseMap<Value, Value> adjoint;
    b.setInsertionPoint(ret);
    auto accumulate = [&](Value v, Value a) {
      auto [it, inserted] = adjoint.try_emplace(v, a);
      if (!inserted)
        it->second = addTensors(b, loc, it->second, a);
    };
    for (auto [v, a] : llvm::zip(ret.getOperands(), resultAdjointArgs))
      accumulate(v, a);

    SmallVector<Operation *> forward;
    for (Operation &op : body.without_terminator())
      forward.push_back(&op);
    for (Operation *op : llvm::reverse(forward)) {
      SmallVector<Value> resultAdjoints;
      bool any = false;
      for (Value r : op->getResults()) {
        resultAdjoints.push_back(adjoint.lookup(r));
        any |= bool(resultAdjoints.back());
      }
      if (!any)
        continue;
      auto rule = dyn_cast<DifferentiableOpInterface>(op);
      if (!rule)
        return op->emitOpError()
               << "cannot be differentiated by attn-differentiate: it has no "
                  "vector-Jacobian rule (rules: attn.sdpa, attn.mha, attn.project, "
                  "attn.split_heads, attn.merge_heads, attn.rope, attn.scores, attn.scale, "
                  "attn.softcap, attn.mask, attn.mask_mod, attn.score_mod, attn.softmax, "
                  "attn.dropout, attn.weighted_sum)";
      SmallVector<Value> operandAdjoints;
      if (failed(rule.buildVjp(b, resultAdjoints, operandAdjoints)))
        return failure();
      for (auto [operand, a] : llvm::zip(op->getOperands(), operandAdjoints))
        if (a && isFloatTensor(operand.getType()))
          accumulate(operand, a);
    }

    SmallVector<Value> results;
    SmallVector<Type> resultTypes;
    for (BlockArgument arg : body.getArguments().take_front(type.getNumInputs())) {
      if (!isFloatTensor(arg.getType()) || isNoGradArgument(arg))
        continue;
      Value a = adjoint.lookup(arg);
      results.push_back(a ? a : zerosLike(b, loc, arg));
      resultTypes.push_back(arg.getType());
    }
    func::ReturnOp::create(b, ret.getLoc(), results);
    ret.erase();
    // The forward values no gradient reads (the sdpa an sdpa_partial
    // replaced, the output projection...), last first.
    SmallVector<Operation *> ops;
    for (Operation &op : body.without_terminator())
      ops.push_back(&op);
    for (Operation *op : llvm::reverse(ops))
      if (isOpTriviallyDead(op))
        op->erase();
    grad.setFunctionType(
        FunctionType::get(fn.getContext(), grad.getArgumentTypes(), resultTypes));
    grad.setVisibility(fn.getVisibility());
    return success();
  }
};

} // namespace
