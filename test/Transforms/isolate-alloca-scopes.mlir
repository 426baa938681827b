// attn-isolate-alloca-scopes: a memref.alloca_scope in a single-block
// region (scf.if, scf.for) gets an scf.execute_region no_inline around it;
// one in a function body or an omp.loop_nest is left alone. After the
// whole LLVM tail the scope is a stack save / restore pair in the loop.
// RUN: attn-opt %s --attn-isolate-alloca-scopes | FileCheck %s
// RUN: attn-opt %s --attn-isolate-alloca-scopes --finalize-memref-to-llvm --convert-scf-to-cf | FileCheck %s --check-prefix=LLVM
// RUN: not attn-opt %s --finalize-memref-to-llvm 2>&1 | FileCheck %s --check-prefix=BROKEN
// BROKEN: 'scf.if' op expects region #0 to have 0 or 1 blocks

// CHECK-LABEL: func.func @in_if
// CHECK: scf.if
// CHECK-NEXT: scf.execute_region no_inline {
// CHECK-NEXT: memref.alloca_scope {
// CHECK: memref.alloca()
// CHECK: }
// CHECK-NEXT: scf.yield
// LLVM-LABEL: func.func @in_if
// LLVM: llvm.intr.stacksave
// LLVM: llvm.intr.stackrestore
// LLVM-NOT: scf.
func.func @in_if(%c: i1, %buf: memref<4xf32>) {
  scf.if %c {
    memref.alloca_scope {
      %t = memref.alloca() : memref<4xf32>
      memref.copy %buf, %t : memref<4xf32> to memref<4xf32>
    }
  }
  return
}

// CHECK-LABEL: func.func @in_for_with_result
// CHECK: scf.for
// CHECK-NEXT: %[[R:.*]] = scf.execute_region -> f32 no_inline {
// CHECK-NEXT: %[[S:.*]] = memref.alloca_scope -> (f32) {
// CHECK: scf.yield %[[S]] : f32
// CHECK: scf.yield %[[R]] : f32
func.func @in_for_with_result(%n: index, %x: f32) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> f32 {
    %s = memref.alloca_scope -> (f32) {
      %t = memref.alloca() : memref<f32>
      memref.store %acc, %t[] : memref<f32>
      %v = memref.load %t[] : memref<f32>
      %w = arith.addf %v, %acc : f32
      memref.alloca_scope.return %w : f32
    }
    scf.yield %s : f32
  }
  return %r : f32
}

// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: scf.execute_region
// CHECK: return
func.func @left_alone(%n: index, %buf: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  memref.alloca_scope {
    %t = memref.alloca() : memref<4xf32>
    memref.copy %buf, %t : memref<4xf32> to memref<4xf32>
  }
  omp.parallel {
    omp.wsloop {
      omp.loop_nest (%i) : index = (%c0) to (%n) step (%c1) {
        memref.alloca_scope {
          %t = memref.alloca() : memref<4xf32>
          memref.copy %buf, %t : memref<4xf32> to memref<4xf32>
        }
        omp.yield
      }
    }
    omp.terminator
  }
  return
}
