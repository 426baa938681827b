// RUN: attn-opt %s --attn-align-workgroup-buffers | FileCheck %s
// RUN: attn-opt %s --attn-align-workgroup-buffers=alignment=32 | FileCheck %s --check-prefix=A32
// RUN: not attn-opt %s --attn-align-workgroup-buffers=alignment=12 2>&1 | FileCheck %s --check-prefix=BAD

// Every workgroup attribution gets llvm.align = 16 unless it has more;
// private attributions and arguments are left alone.
// CHECK-LABEL: gpu.func @k
// CHECK-SAME: workgroup(%{{.*}} : memref<64x64xf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<8xf32, #gpu.address_space<workgroup>> {llvm.align = 64 : i64})
// CHECK-SAME: private(%{{.*}} : memref<4xf32, #gpu.address_space<private>>) kernel
// A32: workgroup(%{{.*}} {llvm.align = 32 : i64}, %{{.*}} {llvm.align = 64 : i64}) private(%{{[a-z0-9]+}} : memref<4xf32, #gpu.address_space<private>>) kernel
// BAD: attn-align-workgroup-buffers: alignment must be a power of two, got 12
gpu.module @m {
  gpu.func @k(%g: memref<8xf32>)
      workgroup(%a: memref<64x64xf16, #gpu.address_space<workgroup>>,
                %b: memref<8xf32, #gpu.address_space<workgroup>> {llvm.align = 64 : i64})
      private(%p: memref<4xf32, #gpu.address_space<private>>) kernel {
    gpu.return
  }
}
