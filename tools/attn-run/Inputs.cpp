//===- Inputs.cpp - attn-run's inputs: files bound to arguments -----------===//
//
// NAME=PATH, .npz members and plain paths bound to the entry's arguments,
// each array converted for its destination through rt::toHostTensor.
//
//===----------------------------------------------------------------------===//
#include "Inputs.h"

#include "Diagnostics.h"

#include "attn/Dialect/AttnDialect.h"
#include "llvm/ADT/DenseSet.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"

#include <random>

using namespace mlir;

namespace attnrun {

/// The dtype an argument or result of this type is exchanged as; nullopt
/// when it has none (the compile step says why).
std::optional<rt::ElementType> dtypeOf(Type t) {
  auto rt = dyn_cast<RankedTensorType>(t);
  if (!rt)
    return std::nullopt;
  return rt::elementTypeOf(rt.getElementType());
}

/// The source names of the entry's arguments (`%q` -> "q"), from the
/// parser's record of the block argument definitions; empty strings where
/// unknown (bytecode input).
std::vector<std::string> argumentNames(func::FuncOp f, const AsmParserState *state) {
  std::vector<std::string> names(f.getNumArguments());
  if (!state || f.isExternal())
    return names;
  const AsmParserState::BlockDefinition *def = state->getBlockDef(&f.getBody().front());
  if (!def)
    return names;
  for (auto [i, a] : llvm::enumerate(def->arguments)) {
    if (i >= names.size() || !a.loc.isValid())
      break;
    llvm::StringRef text(a.loc.Start.getPointer(),
                         a.loc.End.getPointer() - a.loc.Start.getPointer());
    text.consume_front("%");
    names[i] = text.str();
  }
  return names;
}

/// "argument #1 (k)" / "argument #1".
static std::string argLabel(size_t i, llvm::ArrayRef<std::string> names) {
  std::string s = "argument #" + std::to_string(i);
  if (i < names.size() && !names[i].empty())
    s += " (" + names[i] + ")";
  return s;
}

namespace {
/// A raw array read from a file (or archive member) and where it goes.
struct BoundInput {
  std::string label; ///< path, or archive:member.npy
  rt::NpyArray array;
};
} // namespace

/// Converts a raw array for a destination of `target`; notes what was
/// converted, or, with --strict-inputs, makes any conversion an error.
static rt::HostTensor convertInput(const BoundInput &in, std::optional<rt::ElementType> target,
                                   const std::string &destination, bool strict) {
  std::vector<std::string> applied;
  auto t = rt::toHostTensor(in.array, in.label, target, !strict, &applied);
  if (!t) {
    std::string msg = errorText(t.takeError());
    if (strict) {
      // Would it have been converted without --strict-inputs?
      auto lenient = rt::toHostTensor(in.array, in.label, target, true);
      if (lenient)
        msg += " (--strict-inputs)";
      else
        llvm::consumeError(lenient.takeError());
    }
    fail(2, msg);
  }
  if (!applied.empty())
    note(in.label + ": " + llvm::join(applied, ", ") + " for " + destination);
  return std::move(*t);
}

static rt::NpyArray readArray(const std::string &path) {
  auto a = rt::readNpyArray(path);
  if (!a)
    fail(2, errorText(a.takeError()));
  return std::move(*a);
}

/// Reads the --input files and binds them to the entry's arguments:
/// NAME=PATH and .npz members by name, then plain paths in order to the
/// arguments left. Returns the tensors in argument order (converted to
/// the arguments' dtypes), or, when only plain .npy paths are given, in the
/// order given (the caller checks the count).
std::vector<rt::HostTensor> readInputs(func::FuncOp entry,
                                       llvm::ArrayRef<std::string> names,
                                       const std::string &fnName,
                                       llvm::ArrayRef<std::string> inputs, bool strict) {
  size_t numArgs = entry.getNumArguments();
  auto argumentList = [&] {
    std::string s;
    for (size_t i = 0; i < numArgs; ++i)
      s += (i ? ", " : "") + (names[i].empty() ? "#" + std::to_string(i) : names[i]);
    return s;
  };
  auto argByName = [&](llvm::StringRef name) -> std::optional<size_t> {
    for (size_t i = 0; i < numArgs; ++i)
      if (!names[i].empty() && names[i] == name)
        return i;
    return std::nullopt;
  };
  std::vector<std::optional<BoundInput>> bound(numArgs);
  std::vector<BoundInput> positional;
  bool byName = false;
  auto bind = [&](size_t i, BoundInput in, const std::string &how) {
    if (bound[i])
      fail(2, fnName + ": " + argLabel(i, names) + " is given twice: by " +
                  bound[i]->label + " and by " + how);
    bound[i] = std::move(in);
  };
  for (const std::string &text : inputs) {
    llvm::StringRef value = text;
    std::optional<size_t> target;
    std::string path = text;
    auto [prefix, rest] = value.split('=');
    if (value.contains('=') && !prefix.empty() && !prefix.contains('/')) {
      unsigned index;
      if (std::optional<size_t> i = argByName(prefix))
        target = *i;
      else if (!prefix.getAsInteger(10, index)) {
        if (index >= numArgs)
          fail(2, "--input=" + text + ": '" + fnName + "' has " + llvm::Twine(numArgs) +
                      " argument(s)");
        target = index;
      } else if (!llvm::sys::fs::exists(text)) {
        fail(2, "--input=" + text + ": '" + fnName + "' has no argument named '" +
                    prefix + "' (its arguments: " + argumentList() + ")");
      }
      if (target)
        path = rest.str();
    }
    if (rt::isZipFile(path)) {
      if (target)
        fail(2, "--input=" + text +
                    ": an .npz archive binds its members by name; pass it as --input=" +
                    path);
      auto members = rt::readNpz(path);
      if (!members)
        fail(2, errorText(members.takeError()));
      byName = true;
      for (rt::NpzMember &m : *members) {
        std::optional<size_t> i = argByName(m.name);
        unsigned index;
        llvm::StringRef n = m.name;
        if (!i && n.consume_front("arr_") && !n.getAsInteger(10, index) && index < numArgs)
          i = index; // np.savez(a, b): arr_0, arr_1
        std::string label = path + ":" + m.name + ".npy";
        if (!i)
          fail(2, label + ": '" + fnName + "' has no argument named '" + m.name +
                      "' (its arguments: " + argumentList() + ")");
        bind(*i, BoundInput{label, std::move(m.array)}, label);
      }
      continue;
    }
    BoundInput in{path, readArray(path)};
    if (target) {
      byName = true;
      bind(*target, std::move(in), "--input=" + text);
    } else {
      positional.push_back(std::move(in));
    }
  }

  std::vector<rt::HostTensor> args;
  if (!byName) {
    // Plain paths in order: the count is checked before converting (so
    // that a surplus file is an arity error, not a dtype one).
    if (positional.size() != numArgs)
      fail(2, fnName + ": the function takes " + llvm::Twine(numArgs) + " inputs, got " +
                  llvm::Twine(positional.size()));
    for (auto [i, in] : llvm::enumerate(positional))
      args.push_back(convertInput(in, dtypeOf(entry.getArgumentTypes()[i]), argLabel(i, names),
                                  strict));
    return args;
  }
  // Plain paths fill the arguments that no name bound, in order.
  size_t next = 0;
  for (BoundInput &in : positional) {
    while (next < numArgs && bound[next])
      ++next;
    if (next == numArgs)
      fail(2, fnName + ": the function takes " + llvm::Twine(numArgs) +
                  " inputs, got more (" + in.label + " binds none)");
    bound[next] = std::move(in);
  }
  std::vector<std::string> missing;
  for (size_t i = 0; i < numArgs; ++i)
    if (!bound[i])
      missing.push_back(argLabel(i, names));
  if (!missing.empty())
    fail(2, fnName + ": no input for " + llvm::join(missing, ", "));
  for (size_t i = 0; i < numArgs; ++i)
    args.push_back(convertInput(*bound[i], dtypeOf(entry.getArgumentTypes()[i]),
                                argLabel(i, names), strict));
  return args;
}

std::vector<rt::HostTensor> randomTensors(const rt::CompiledFunction &fn,
                                          ModuleOp module, llvm::StringRef entry,
                                          unsigned seed) {
  return randomTensors(fn.argSpecs(), module, entry, seed);
}

/// The entry's arguments that are some attn op's run-time dropout seed
/// (`seed(%s)`).
static llvm::SmallDenseSet<unsigned> seedArguments(ModuleOp module, llvm::StringRef entry) {
  llvm::SmallDenseSet<unsigned> args;
  auto fn = module.lookupSymbol<func::FuncOp>(entry);
  if (!fn || fn.isExternal())
    return args;
  fn.walk([&](Operation *op) {
    auto seeded = dyn_cast<mlir::attn::RuntimeSeedOpInterface>(op);
    if (!seeded)
      return;
    if (auto ba = dyn_cast_or_null<BlockArgument>(seeded.getRuntimeSeed());
        ba && ba.getOwner() == &fn.getBody().front())
      args.insert(ba.getArgNumber());
  });
  return args;
}

std::vector<rt::HostTensor> randomTensors(llvm::ArrayRef<rt::TensorSpec> specs,
                                          ModuleOp module, llvm::StringRef entry,
                                          unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> uni(-1.0f, 1.0f);
  std::vector<std::vector<int64_t>> shapes;
  for (auto [i, spec] : llvm::enumerate(specs)) {
    for (int64_t d : spec.shape)
      if (d < 0)
        fail(2, "--random-inputs: argument #" + llvm::Twine(i) + " " + spec.str() +
                    " has dynamic dims; pass --input files instead");
    shapes.push_back(spec.shape);
  }
  // Integer arguments are key lengths, uniform in [0, Tk] of their op,
  // block tables, uniform in [0, NB) of their cache, or dropout seeds,
  // uniform in [0, 2^24); int8 arguments (quantised caches) are uniform in
  // [-127, 127].
  std::vector<std::optional<rt::KeyLengthBound>> bounds =
      rt::keyLengthBounds(module, entry, shapes);
  std::vector<int64_t> range(specs.size(), 0);
  for (auto [i, b] : llvm::enumerate(bounds))
    if (b)
      range[i] = b->keyLen + 1;
  for (const rt::BlockTableCheck &c : rt::blockTableChecks(module, entry, shapes))
    range[c.tableArg] = c.numBlocks;
  for (unsigned a : seedArguments(module, entry))
    if (a < range.size())
      range[a] = int64_t(1) << 24; // exact as the float setFromFloat takes

  std::vector<rt::HostTensor> out;
  for (auto [i, spec] : llvm::enumerate(specs)) {
    rt::HostTensor t = rt::HostTensor::zeros(spec.dtype, spec.shape);
    bool integer = spec.dtype == rt::ElementType::I32 || spec.dtype == rt::ElementType::I64;
    if (integer && range[i] <= 0)
      fail(2, "--random-inputs: argument #" + llvm::Twine(i) + " " + spec.str() +
                  " is an integer tensor but not the key lengths of an attn op, a "
                  "block table of a non-empty cache nor a dropout seed; pass --input files "
                  "instead");
    for (int64_t k = 0, n = t.numel(); k < n; ++k) {
      if (integer)
        t.setFromFloat(k, float(gen() % range[i]));
      else if (spec.dtype == rt::ElementType::I8)
        t.setFromFloat(k, float(int64_t(gen() % 255) - 127));
      else
        t.setFromFloat(k, spec.dtype == rt::ElementType::Bool ? float(gen() % 4 != 0)
                                                         : uni(gen));
    }
    out.push_back(std::move(t));
  }
  return out;
}

std::vector<rt::HostTensor> readExpected(func::FuncOp entry,
                                         llvm::ArrayRef<std::string> expects, bool strict) {
  std::vector<rt::HostTensor> expected;
  for (auto [i, path] : llvm::enumerate(expects)) {
    if (rt::isZipFile(path))
      fail(2, "--expect=" + path + ": an .npz archive; --expect takes one .npy per result");
    BoundInput in{path, readArray(path)};
    expected.push_back(convertInput(in, dtypeOf(entry.getResultTypes()[i]),
                                    "result #" + std::to_string(i), strict));
  }
  return expected;
}

} // namespace attnrun
