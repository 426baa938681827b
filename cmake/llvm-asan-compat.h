//===- llvm-asan-compat.h - force-included in the ATTN_SANITIZE build -----===//
//
// LLVM's header-only allocators (BumpPtrAllocator, Recycler, ArrayRecycler)
// poison and unpoison their memory with ASan annotations when the code that
// includes them is built with -fsanitize=address. Debian's libMLIR.so and
// libLLVM.so are not, yet they share those allocators with our code (an
// attribute we create and one libMLIR creates come from the same
// StorageUniquer slab). A slab that our inlined copy of AllocateSlow
// poisoned is then filled by libMLIR without unpoisoning, and ASan reports
// a false use-after-poison (found by attn-fuzz-parse). So, like the
// libraries, our code must use these allocators without the annotations:
// this header is included before anything else (-include) and turns them
// off. Every other ASan check (our heap, stack and globals) stays on.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_LLVM_ASAN_COMPAT_H
#define ATTN_LLVM_ASAN_COMPAT_H

#include <sanitizer/asan_interface.h>

#include "llvm/Support/Compiler.h"

#undef LLVM_ADDRESS_SANITIZER_BUILD
#define LLVM_ADDRESS_SANITIZER_BUILD 0
#define __asan_poison_memory_region(p, size) ((void)(p), (void)(size))
#define __asan_unpoison_memory_region(p, size) ((void)(p), (void)(size))

#endif // ATTN_LLVM_ASAN_COMPAT_H
