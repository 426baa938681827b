// The attn_ptx ops: they round-trip, the buffer deallocation pass takes
// them (their memory effects are declared: the reason they exist), and
// attn-lower-ptx-ops writes each as its PTX instruction in llvm.inline_asm.
// RUN: attn-opt %s | attn-opt | FileCheck %s --check-prefix=ROUND
// RUN: attn-opt %s --ownership-based-buffer-deallocation | FileCheck %s --check-prefix=DEALLOC
// RUN: attn-opt %s --attn-lower-ptx-ops | FileCheck %s

// ROUND-LABEL: func.func @all
// ROUND: attn_ptx.bar_sync
// ROUND: attn_ptx.cp_async_commit_group
// ROUND: attn_ptx.cp_async_wait_group 1
// ROUND: attn_ptx.ex2_approx
// ROUND: attn_ptx.cvt_rna_tf32
// DEALLOC-LABEL: func.func @all
// DEALLOC: attn_ptx.bar_sync
// DEALLOC: bufferization.dealloc
// CHECK-LABEL: func.func @all
// CHECK: llvm.inline_asm has_side_effects "bar.sync 0;", ""  : () -> ()
// CHECK: llvm.inline_asm has_side_effects "cp.async.commit_group;", ""  : () -> ()
// CHECK: llvm.inline_asm has_side_effects "cp.async.wait_group 1;", ""  : () -> ()
// CHECK: llvm.inline_asm "ex2.approx.ftz.f32 $0, $1;", "=f,f" %{{.*}} : (f32) -> f32
// CHECK: llvm.inline_asm "cvt.rna.tf32.f32 $0, $1;", "=r,f" %{{.*}} : (f32) -> i32
// CHECK-NOT: attn_ptx
func.func @all(%x: f32, %i: index) -> (f32, i32) {
  %buf = memref.alloc() : memref<4xf32>
  memref.store %x, %buf[%i] : memref<4xf32>
  attn_ptx.bar_sync
  attn_ptx.cp_async_commit_group
  attn_ptx.cp_async_wait_group 1
  %y = memref.load %buf[%i] : memref<4xf32>
  %e = attn_ptx.ex2_approx %y
  %t = attn_ptx.cvt_rna_tf32 %x
  return %e, %t : f32, i32
}
