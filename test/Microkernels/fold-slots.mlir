// foldSlots (lib/Conversion/AttnToLoops/Microkernels.h), on its own: w
// slot vectors folded into one vector whose lane i combines slot i's lanes
// (the fused kernel's row maxima and row sums of w rows at once): a tree of
// w - 1 combineHalves steps (two shuffles and a combine each) and one last
// shuffle that puts the slots in order. Sum and max, w = 8 and 16, run and
// printed.
// RUN: attn-opt %s --test-attn-microkernels | FileCheck %s
// RUN: attn-opt %s --test-attn-microkernels --attn-cpu-pipeline \
// RUN:   | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils \
// RUN:   | FileCheck %s --check-prefix=VALUES

// CHECK-LABEL: func.func private @sum8(
// CHECK-COUNT-8: vector.load
// CHECK-COUNT-7: arith.addf {{.*}} : vector<8xf32>
// CHECK-NOT: arith.addf
// CHECK: %[[F:.*]] = vector.shuffle {{.*}} [0, 4, 2, 6, 1, 5, 3, 7]
// CHECK: vector.store %[[F]], %{{.*}} : memref<8xf32>, vector<8xf32>
// CHECK-NEXT: return
func.func private @sum8(memref<8x8xf32>, memref<8xf32>)
    attributes {attn.test_microkernel = "fold-slots-add"}

// The max by compare and select (fmaxFast: one max instruction on x86).
// CHECK-LABEL: func.func private @max8(
// CHECK-COUNT-7: arith.cmpf ogt
// CHECK-NOT: arith.maximumf
// CHECK: return
func.func private @max8(memref<8x8xf32>, memref<8xf32>)
    attributes {attn.test_microkernel = "fold-slots-max"}

// CHECK-LABEL: func.func private @sum16(
// CHECK-COUNT-15: arith.addf {{.*}} : vector<16xf32>
// CHECK-NOT: arith.addf
// CHECK: return
func.func private @sum16(memref<16x16xf32>, memref<16xf32>)
    attributes {attn.test_microkernel = "fold-slots-add"}

// slots[i][j] = 100·i + j (j < 8 and j ≥ 8 alike); max slot i's 100·i + j
// puts 7 (w = 8) last. sum8[i] = 800·i + 28, max8[i] = 100·i + 7,
// sum16[i] = 1600·i + 120.
func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %s8 = memref.alloc() : memref<8x8xf32>
  %s16 = memref.alloc() : memref<16x16xf32>
  %o8 = memref.alloc() : memref<8xf32>
  %m8 = memref.alloc() : memref<8xf32>
  %o16 = memref.alloc() : memref<16xf32>
  scf.for %i = %c0 to %c16 step %c1 {
    scf.for %j = %c0 to %c16 step %c1 {
      %ii = arith.index_cast %i : index to i32
      %jj = arith.index_cast %j : index to i32
      %c100 = arith.constant 100 : i32
      %v0 = arith.muli %ii, %c100 : i32
      %v1 = arith.addi %v0, %jj : i32
      %v = arith.sitofp %v1 : i32 to f32
      memref.store %v, %s16[%i, %j] : memref<16x16xf32>
      %in8i = arith.cmpi ult, %i, %c8 : index
      %in8j = arith.cmpi ult, %j, %c8 : index
      %in8 = arith.andi %in8i, %in8j : i1
      scf.if %in8 {
        memref.store %v, %s8[%i, %j] : memref<8x8xf32>
      }
    }
  }
  call @sum8(%s8, %o8) : (memref<8x8xf32>, memref<8xf32>) -> ()
  call @max8(%s8, %m8) : (memref<8x8xf32>, memref<8xf32>) -> ()
  call @sum16(%s16, %o16) : (memref<16x16xf32>, memref<16xf32>) -> ()
  %a = vector.load %o8[%c0] : memref<8xf32>, vector<8xf32>
  vector.print %a : vector<8xf32>
  %b = vector.load %m8[%c0] : memref<8xf32>, vector<8xf32>
  vector.print %b : vector<8xf32>
  %c = vector.load %o16[%c0] : memref<16xf32>, vector<16xf32>
  vector.print %c : vector<16xf32>
  return
}
// VALUES: ( 28, 828, 1628, 2428, 3228, 4028, 4828, 5628 )
// VALUES-NEXT: ( 7, 107, 207, 307, 407, 507, 607, 707 )
// VALUES-NEXT: ( 120, 1720, 3320, 4920, 6520, 8120, 9720, 11320, 12920, 14520, 16120, 17720, 19320, 20920, 22520, 24120 )
