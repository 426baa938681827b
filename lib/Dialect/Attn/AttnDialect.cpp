//===- AttnDialect.cpp - the attn dialect ---------------------------------===//
#include "attn/Dialect/AttnDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::attn;

#include "attn/Dialect/AttnDialect.cpp.inc"
#include "attn/Dialect/AttnEnums.cpp.inc"
#include "attn/Dialect/AttnInterfaces.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "attn/Dialect/AttnAttrs.cpp.inc"

void AttnDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "attn/Dialect/AttnAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "attn/Dialect/AttnOps.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// WindowAttr: #attn.window<left = L, right = R, align = top_left|bottom_right>
//===----------------------------------------------------------------------===//

Attribute WindowAttr::parse(AsmParser &p, Type) {
  std::optional<int64_t> left, right;
  std::optional<CausalKind> align;
  SMLoc start = p.getCurrentLocation();
  if (p.parseLess())
    return {};
  auto parseEntry = [&]() -> ParseResult {
    SMLoc keyLoc = p.getCurrentLocation();
    StringRef key;
    if (p.parseKeyword(&key) || p.parseEqual())
      return failure();
    if (key == "left" || key == "right") {
      std::optional<int64_t> &slot = key == "left" ? left : right;
      if (slot)
        return p.emitError(keyLoc) << "window bound '" << key << "' given twice";
      int64_t v = 0;
      if (p.parseInteger(v))
        return failure();
      slot = v;
      return success();
    }
    if (key == "align") {
      if (align)
        return p.emitError(keyLoc) << "window 'align' given twice";
      SMLoc vLoc = p.getCurrentLocation();
      StringRef kind;
      if (p.parseKeyword(&kind))
        return failure();
      align = symbolizeCausalKind(kind);
      if (!align)
        return p.emitError(vLoc) << "window 'align' must be top_left or "
                                    "bottom_right, got '"
                                 << kind << "'";
      return success();
    }
    return p.emitError(keyLoc) << "unknown window parameter '" << key
                               << "' (expected left, right or align)";
  };
  if (failed(p.parseOptionalGreater())) {
    if (p.parseCommaSeparatedList(parseEntry) || p.parseGreater())
      return {};
  }
  return getChecked([&] { return p.emitError(start); }, p.getContext(), left,
                    right, align);
}

void WindowAttr::print(AsmPrinter &p) const {
  SmallVector<std::string> parts;
  if (getLeft())
    parts.push_back("left = " + std::to_string(*getLeft()));
  if (getRight())
    parts.push_back("right = " + std::to_string(*getRight()));
  if (getAlign())
    parts.push_back(("align = " + stringifyCausalKind(*getAlign())).str());
  p << "<" << llvm::join(parts, ", ") << ">";
}

CausalKind mlir::attn::keepRuleDiagonal(std::optional<CausalKind> causal,
                                        WindowAttr window) {
  if (causal)
    return *causal;
  if (window && window.getAlign())
    return *window.getAlign();
  return CausalKind::bottom_right;
}

LogicalResult WindowAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 std::optional<int64_t> left,
                                 std::optional<int64_t> right,
                                 std::optional<CausalKind>) {
  if (left && *left < 0)
    return emitError() << "window bound 'left' must be >= 0 (leave it out for "
                          "unbounded), got "
                       << *left;
  if (right && *right < 0)
    return emitError() << "window bound 'right' must be >= 0 (leave it out for "
                          "unbounded), got "
                       << *right;
  return success();
}
