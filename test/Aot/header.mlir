// attn-aot writes an object whose only external definition is the kernel
// record, and a header naming the inputs and the relations checked at run
// time (found from the attn verifiers).
// RUN: rm -rf %t && attn-aot %s --name=padded -o %t | FileCheck %s --check-prefix=TOOL
// RUN: FileCheck %s --input-file=%t/padded.h
// RUN: llvm-nm --defined-only --extern-only %t/padded.o | FileCheck %s --check-prefix=NM
// RUN: llvm-nm --undefined-only %t/padded.o | FileCheck %s --check-prefix=UNDEF

// TOOL: attn-aot: {{.*}}padded.o ({{[0-9]+}} bytes, host code for {{.*}}), {{.*}}padded.h

// CHECK: function @masked, pipeline cpu
// CHECK: Link the object with libattn_aot and libomp
// CHECK: #include "attn-c/Aot.h"
// CHECK:      #0 float32[?,4,?,32]
// CHECK-NEXT: #1 float32[?,2,?,32]
// CHECK-NEXT: #2 float32[?,2,?,16]
// CHECK-NEXT: #3 bool[?,1,?,?]
// CHECK-NEXT: #4 int64[?]
// CHECK: Outputs:
// CHECK-NEXT: #0 float32[?,4,?,16]
// CHECK: Checked before each call:
// CHECK-NEXT: input #0 dim 0 == input #1 dim 0 == input #2 dim 0 == input #3 dim 0 == input #4 dim 0
// CHECK-NEXT: input #0 dim 2 == input #3 dim 2
// CHECK-NEXT: input #1 dim 2 == input #2 dim 2 == input #3 dim 3
// CHECK-NEXT: input #4 (key lengths) in [0, input #1 dim 2]
// CHECK: extern const attn_aot_kernel padded_kernel;
// CHECK: static inline int padded(const attn_tensor inputs[5], attn_tensor outputs[1]) {
// CHECK-NEXT: return attn_aot_call(&padded_kernel, inputs, 5, outputs, 1);

// NM: padded_kernel
// NM-NOT: {{.}}

// The compiled code allocates through the guarded allocator and runs on
// OpenMP; nothing from MLIR or LLVM.
// UNDEF-DAG: __kmpc_fork_call
// UNDEF-DAG: attnGuardedMalloc
// UNDEF-NOT: mlir
// UNDEF-NOT: {{ malloc$}}

func.func @masked(%q: tensor<?x4x?x32xf32>, %k: tensor<?x2x?x32xf32>,
                  %v: tensor<?x2x?x16xf32>, %m: tensor<?x1x?x?xi1>,
                  %len: tensor<?xi64>) -> tensor<?x4x?x16xf32> {
  %o = attn.sdpa %q, %k, %v, %m key_lengths(%len)
      : (tensor<?x4x?x32xf32>, tensor<?x2x?x32xf32>, tensor<?x2x?x16xf32>,
         tensor<?x1x?x?xi1>, tensor<?xi64>) -> tensor<?x4x?x16xf32>
  return %o : tensor<?x4x?x16xf32>
}

// Static shapes: no relation to check, but the key lengths still are.
// RUN: attn-aot %attn_src_root/examples/decode_key_lengths.mlir --name=decode -o %t > /dev/null
// RUN: FileCheck %s --input-file=%t/decode.h --check-prefix=STATIC
// STATIC: #3 int32[4]
// STATIC: input #3 (key lengths) in [0, 256]
