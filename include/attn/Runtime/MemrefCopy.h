//===- MemrefCopy.h - memref.copy between strided buffers -------*- C++ -*-===//
//
// Upstream's memref-to-LLVM lowering turns a memref.copy it cannot do as
// one memcpy (a strided subview: tensor.insert_slice, a concat, a
// transpose's view) into a call to `memrefCopy`, which
// libmlir_c_runner_utils defines. The JIT and attn-aot objects call ours
// instead, so that generic IR with such copies runs without that library.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_RUNTIME_MEMREFCOPY_H
#define ATTN_RUNTIME_MEMREFCOPY_H

#include <utility>
#include <vector>

namespace attn::runtime {

/// (symbol, address) pairs to register with the JIT: memrefCopy.
std::vector<std::pair<const char *, void *>> memrefCopySymbols();

} // namespace attn::runtime

#endif // ATTN_RUNTIME_MEMREFCOPY_H
