// transposeBlock for a target with AVX2 (lib/Conversion/AttnToLoops/
// Microkernels.h): an 8 x 8 block of f32 by upstream's
// x86vector::avx2::transpose8x8xf32 (20 shuffles and 8 vblendps as inline
// assembly), run and printed; a 16 x 16 block keeps the project's 64
// shuffles.
// REQUIRES: avx2
// RUN: attn-opt %s --test-attn-microkernels | FileCheck %s
// RUN: attn-opt %s --test-attn-microkernels --attn-cpu-pipeline \
// RUN:   | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils \
// RUN:   | FileCheck %s --check-prefix=VALUES

// CHECK-LABEL: func.func private @transpose8(
// CHECK-COUNT-8: vector.load {{.*}} : memref<8x8xf32>, vector<8xf32>
// CHECK-COUNT-12: vector.shuffle
// CHECK-COUNT-8: llvm.inline_asm asm_dialect = intel "vblendps $0, $1, $2, 0x{{cc|33}}"
// CHECK-COUNT-8: vector.shuffle
// CHECK-NOT: vector.shuffle
// CHECK-COUNT-8: vector.store {{.*}} : memref<8x8xf32>, vector<8xf32>
// CHECK-NEXT: return
func.func private @transpose8(memref<8x8xf32>, memref<8x8xf32>)
    attributes {attn.test_microkernel = "transpose-block-avx2"}

// CHECK-LABEL: func.func private @transpose16(
// CHECK-NOT: llvm.inline_asm
// CHECK-COUNT-64: vector.shuffle
// CHECK-NOT: vector.shuffle
// CHECK: return
func.func private @transpose16(memref<16x16xf32>, memref<16x16xf32>)
    attributes {attn.test_microkernel = "transpose-block-avx2"}

// src[i][j] = 100·i + j; prints dst row by row (dst[i][j] = 100·j + i).
func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %src = memref.alloc() : memref<8x8xf32>
  %dst = memref.alloc() : memref<8x8xf32>
  scf.for %i = %c0 to %c8 step %c1 {
    scf.for %j = %c0 to %c8 step %c1 {
      %ii = arith.index_cast %i : index to i32
      %jj = arith.index_cast %j : index to i32
      %c100 = arith.constant 100 : i32
      %v0 = arith.muli %ii, %c100 : i32
      %v1 = arith.addi %v0, %jj : i32
      %v = arith.sitofp %v1 : i32 to f32
      memref.store %v, %src[%i, %j] : memref<8x8xf32>
    }
  }
  call @transpose8(%src, %dst) : (memref<8x8xf32>, memref<8x8xf32>) -> ()
  scf.for %i = %c0 to %c8 step %c1 {
    %row = vector.load %dst[%i, %c0] : memref<8x8xf32>, vector<8xf32>
    vector.print %row : vector<8xf32>
  }
  return
}
// VALUES: ( 0, 100, 200, 300, 400, 500, 600, 700 )
// VALUES-NEXT: ( 1, 101, 201, 301, 401, 501, 601, 701 )
// VALUES-NEXT: ( 2, 102, 202, 302, 402, 502, 602, 702 )
// VALUES-NEXT: ( 3, 103, 203, 303, 403, 503, 603, 703 )
// VALUES-NEXT: ( 4, 104, 204, 304, 404, 504, 604, 704 )
// VALUES-NEXT: ( 5, 105, 205, 305, 405, 505, 605, 705 )
// VALUES-NEXT: ( 6, 106, 206, 306, 406, 506, 606, 706 )
// VALUES-NEXT: ( 7, 107, 207, 307, 407, 507, 607, 707 )
