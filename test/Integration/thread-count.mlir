// The JIT compiles the cpu kernel's thread count in (lib/Runtime/Jit.cpp):
// --num-threads when given, else OMP_NUM_THREADS, else one per CPU the
// process may run on; each parallel loop pushes that count
// (__kmpc_push_num_threads, its third argument in %edx) instead of taking
// OpenMP's current default, which a library loaded later may change. The
// report says the same count.
// REQUIRES: avx2
// RUN: rm -rf %t && mkdir -p %t
// RUN: env OMP_NUM_THREADS=3 attn-run %s --pipeline=cpu --random-inputs --json --dump-object=%t/env.o | FileCheck %s --check-prefix=JSON3
// RUN: llvm-objdump -dr %t/env.o | FileCheck %s --check-prefix=THREE
// RUN: env OMP_NUM_THREADS=3 attn-run %s --pipeline=cpu --num-threads=5 --random-inputs --quiet --dump-object=%t/flag.o
// RUN: llvm-objdump -dr %t/flag.o | FileCheck %s --check-prefix=FIVE
// JSON3: "threads": 3
// THREE: __kmpc_push_num_threads
// THREE: movl $0x3, %edx
// FIVE: __kmpc_push_num_threads
// FIVE: movl $0x5, %edx
func.func @attend(%q: tensor<1x4x256x32xf32>, %k: tensor<1x4x256x32xf32>,
                  %v: tensor<1x4x256x32xf32>) -> tensor<1x4x256x32xf32> {
  %o = attn.sdpa %q, %k, %v : (tensor<1x4x256x32xf32>, tensor<1x4x256x32xf32>,
                               tensor<1x4x256x32xf32>) -> tensor<1x4x256x32xf32>
  return %o : tensor<1x4x256x32xf32>
}
