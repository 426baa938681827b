//===- ShapeRelationsTest.cpp - AOT shape checks against the verifiers ----===//
//
// The property behind AOT kernels' input checks (docs/aot.md): for every
// function with dynamic input dims in the repository's examples and tests,
// attn-aot derives relations (it may refuse a function whose relations it
// cannot derive, but none of these) that decide every shape tuple as the
// attn verifiers (the JIT's check) do. Tuples come from
// the relations (valid ones), one dim off (mostly invalid), and uniformly
// small sizes (mostly invalid). The check run is the AOT runtime's own
// (checkDimRelations, through ShapeRelations::check).
//
// A call the relations accept must be one the ops accept (else the kernel
// could read out of bounds): that is asserted for every tuple. The other
// direction is asserted too, except for one known, documented strictness:
// a dynamic mask dim that the ops would broadcast from 1 must have its full
// size in an AOT call.
//
//===----------------------------------------------------------------------===//
#include "attn/Dialect/AttnDialect.h"
#include "attn/Runtime/ShapeRelations.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <gtest/gtest.h>

#include <random>

using namespace mlir;
namespace rt = ::attn::runtime;

namespace {

struct Function {
  std::string file, name;
  std::vector<rt::TensorSpec> args;
  ModuleOp module;
};

/// Relations the repository's own files do not exercise (some do not lower:
/// attn-aot derives relations before it lowers): head counts that divide
/// (H a multiple of Hkv), every width of a grouped mha, ALiBi slopes.
const char *kExtra = R"mlir(
func.func @all_dynamic(%q: tensor<?x?x?x?xf32>, %k: tensor<?x?x?x?xf32>,
                       %v: tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32> {
  %o = attn.sdpa %q, %k, %v {scale = 0.125 : f32}
      : (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
  return %o : tensor<?x?x?x?xf32>
}
func.func @gqa_mha(%x: tensor<?x?x?xf32>, %y: tensor<?x?x?xf32>, %wq: tensor<?x?xf32>,
                   %wk: tensor<?x?xf32>, %wv: tensor<?x?xf32>, %wo: tensor<?x?xf32>)
    -> tensor<?x?x?xf32> {
  %o = attn.mha %x, %y, %wq, %wk, %wv, %wo {num_heads = 8 : i64, num_kv_heads = 2 : i64}
      : (tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>,
         tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?x?xf32>
  return %o : tensor<?x?x?xf32>
}
func.func @alibi(%q: tensor<?x8x?x64xf32>, %k: tensor<?x2x?x64xf32>, %v: tensor<?x2x?x64xf32>,
                 %s: tensor<?x8xf32>, %m: tensor<?x1x?x?xi1>) -> tensor<?x8x?x64xf32> {
  %o = attn.sdpa %q, %k, %v, %m alibi(%s)
      : (tensor<?x8x?x64xf32>, tensor<?x2x?x64xf32>, tensor<?x2x?x64xf32>, tensor<?x1x?x?xi1>,
         tensor<?x8xf32>) -> tensor<?x8x?x64xf32>
  return %o : tensor<?x8x?x64xf32>
}
)mlir";

/// Every public function with a dynamic input dim in kExtra and in the
/// .mlir files under `dirs` that parse on their own (lit inputs split with
/// `// -----` are cut at the markers).
std::vector<Function> corpus(MLIRContext &ctx, std::vector<OwningOpRef<ModuleOp>> &keep) {
  std::vector<Function> out;
  auto collect = [&](OwningOpRef<ModuleOp> m, const std::string &file) {
    for (auto fn : m->getOps<func::FuncOp>()) {
      if (fn.isExternal() || !fn.isPublic())
        continue;
      Function f{file, fn.getSymName().str(), {}, *m};
      bool ok = true, dynamic = false;
      for (Type t : fn.getArgumentTypes()) {
        auto tt = dyn_cast<RankedTensorType>(t);
        if (!tt) {
          ok = false;
          break;
        }
        // Only the shape matters to the relations.
        rt::TensorSpec s{rt::ElementType::F32, {}};
        for (int64_t d : tt.getShape())
          s.shape.push_back(ShapedType::isDynamic(d) ? -1 : d);
        dynamic |= llvm::any_of(s.shape, [](int64_t d) { return d < 0; });
        f.args.push_back(s);
      }
      if (ok && dynamic)
        out.push_back(f);
    }
    keep.push_back(std::move(m));
  };
  OwningOpRef<ModuleOp> extra = parseSourceString<ModuleOp>(kExtra, &ctx);
  EXPECT_TRUE(extra);
  if (extra)
    collect(std::move(extra), "kExtra");
  for (const char *dir : {"examples", "test/Aot", "test/Integration", "test/Pipelines",
                          "test/Python", "test/Examples"}) {
    std::error_code ec;
    std::string root = std::string(ATTN_SOURCE_DIR) + "/" + dir;
    for (llvm::sys::fs::recursive_directory_iterator it(root, ec), end; it != end && !ec;
         it.increment(ec)) {
      if (llvm::sys::path::extension(it->path()) != ".mlir")
        continue;
      auto buf = llvm::MemoryBuffer::getFile(it->path());
      if (!buf)
        continue;
      llvm::SmallVector<llvm::StringRef> chunks;
      (*buf)->getBuffer().split(chunks, "// -----");
      for (llvm::StringRef chunk : chunks) {
        ScopedDiagnosticHandler quiet(&ctx, [](Diagnostic &) { return success(); });
        OwningOpRef<ModuleOp> m = parseSourceString<ModuleOp>(chunk, &ctx);
        if (!m)
          continue;
        collect(std::move(m), it->path());
      }
    }
  }
  return out;
}

/// Whether some dynamic dim of a mask operand is 1 in `shapes` (the one
/// place the relations are stricter than the ops).
bool broadcastsAMask(func::FuncOp fn, llvm::ArrayRef<std::vector<int64_t>> shapes) {
  bool found = false;
  auto look = [&](Value mask) {
    auto arg = dyn_cast_or_null<BlockArgument>(mask);
    if (!arg || arg.getOwner() != &fn.getBody().front())
      return;
    for (auto [d, n] : llvm::enumerate(cast<RankedTensorType>(arg.getType()).getShape()))
      if (ShapedType::isDynamic(n) && shapes[arg.getArgNumber()][d] == 1)
        found = true;
  };
  fn.walk([&](Operation *op) {
    if (auto o = dyn_cast<mlir::attn::MaskOp>(op))
      look(o.getMask());
    else if (auto o = dyn_cast<mlir::attn::SdpaOp>(op))
      look(o.getMask());
    else if (auto o = dyn_cast<mlir::attn::MhaOp>(op))
      look(o.getMask());
    else if (auto o = dyn_cast<mlir::attn::SdpaPartialOp>(op))
      look(o.getMask());
  });
  return found;
}

TEST(ShapeRelations, AotDecidesEveryShapeAsTheVerifiersDo) {
  DialectRegistry registry;
  rt::registerJitDialects(registry);
  MLIRContext ctx(registry);
  ctx.loadAllAvailableDialects();
  std::vector<OwningOpRef<ModuleOp>> modules;
  std::vector<Function> functions = corpus(ctx, modules);
  ASSERT_GE(functions.size(), 10u) << "too few dynamic-shape functions found";

  std::mt19937_64 rng(42);
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  int compiled = 0, refused = 0, tuples = 0, accepted = 0, stricter = 0;
  for (const Function &f : functions) {
    ModuleOp module = f.module;
    ASSERT_TRUE(module);
    SCOPED_TRACE(f.file + " @" + f.name);
    llvm::Expected<rt::ShapeRelations> rel = rt::deriveShapeRelations(module, f.name, f.args);
    if (!rel) {
      // attn-aot may refuse what it cannot derive (naming the dims), but
      // every function here has relations it can derive.
      ADD_FAILURE() << "refused: " << llvm::toString(rel.takeError());
      ++refused;
      continue;
    }
    ++compiled;
    // Tuples: from the relations, then one dim off, then small and uniform.
    std::vector<std::vector<std::vector<int64_t>>> cases;
    for (int s = 0; s < 40; ++s) {
      std::vector<int64_t> units(rel->classes.size());
      for (size_t c = rel->classes.size(); c-- > 0;) {
        int64_t l = rel->classes[c].multiple;
        for (size_t d : rel->classes[c].divisors)
          l = std::lcm(l, units[d]);
        units[c] = l * pick(1, 5);
      }
      std::vector<std::vector<int64_t>> shapes;
      for (const rt::TensorSpec &a : f.args)
        shapes.push_back(a.shape);
      for (auto [c, cls] : llvm::enumerate(rel->classes))
        for (const rt::ShapeRelations::Member &m : cls.members)
          shapes[m.dim.input][m.dim.dim] = m.coef * units[c];
      cases.push_back(shapes);
      const rt::ShapeRelations::Class &cls = rel->classes[pick(0, rel->classes.size() - 1)];
      const rt::DimRef &d = cls.members[pick(0, cls.members.size() - 1)].dim;
      shapes[d.input][d.dim] = std::max<int64_t>(1, shapes[d.input][d.dim] + pick(-2, 2));
      cases.push_back(shapes);
      for (auto [i, a] : llvm::enumerate(f.args))
        for (auto [k, n] : llvm::enumerate(a.shape))
          if (n < 0)
            shapes[i][k] = pick(1, 8);
      cases.push_back(shapes);
    }
    for (const auto &shapes : cases) {
      ++tuples;
      bool aot = rel->check(shapes).empty();
      llvm::Error e = rt::checkInputShapes(module, f.name, shapes, nullptr);
      std::string why = e ? llvm::toString(std::move(e)) : "";
      bool jit = why.empty();
      accepted += aot;
      std::string shown;
      for (auto &s : shapes) {
        shown += "[";
        for (int64_t n : s)
          shown += std::to_string(n) + ",";
        shown += "] ";
      }
      // Never accept what the ops refuse.
      EXPECT_TRUE(!aot || jit) << "AOT accepts " << shown << "but the ops say: " << why;
      if (jit && !aot) {
        ++stricter;
        EXPECT_TRUE(broadcastsAMask(module.lookupSymbol<func::FuncOp>(f.name), shapes))
            << "AOT refuses " << shown << "(" << rel->check(shapes)
            << ") which the ops accept";
      }
    }
  }
  std::printf("[ ShapeRelations ] %d functions: %d compiled, %d refused; %d tuples, "
              "%d accepted, %d refused only for a broadcast mask dim\n",
              int(functions.size()), compiled, refused, tuples, accepted, stricter);
  EXPECT_GT(accepted, tuples / 4);
}

} // namespace
