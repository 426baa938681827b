// attn-openmp-schedule: every omp.wsloop without a schedule gets one
// (guided by default); a loop that has one keeps it.
// RUN: attn-opt %s --attn-openmp-schedule | FileCheck %s
// RUN: attn-opt %s --attn-openmp-schedule=kind=dynamic | FileCheck %s --check-prefix=DYN
// RUN: attn-opt %s --attn-openmp-schedule=kind=static | FileCheck %s --check-prefix=STATIC
// RUN: not attn-opt %s --attn-openmp-schedule=kind=bogus 2>&1 | FileCheck %s --check-prefix=BAD
// attn-cpu-pipeline runs it with guided after convert-scf-to-openmp.
// RUN: attn-opt %S/../Pipelines/Inputs/small-sdpa.mlir --attn-cpu-pipeline | FileCheck %s --check-prefix=PIPE

// CHECK-LABEL: func.func @f
// CHECK: omp.wsloop schedule(guided) {
// The loop that already had a schedule keeps it.
// CHECK: omp.wsloop schedule(static = %{{.*}} : i32) {
// DYN: omp.wsloop schedule(dynamic) {
// DYN: omp.wsloop schedule(static = %{{.*}} : i32) {
// STATIC: omp.wsloop schedule(static) {
// BAD: error: attn-openmp-schedule: kind must be static, dynamic or guided, got 'bogus'
// PIPE: omp.wsloop schedule(guided)
// PIPE-NOT: omp.wsloop {
func.func @f(%n: index, %buf: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : i32
  %one = arith.constant 1.0 : f32
  omp.parallel {
    omp.wsloop {
      omp.loop_nest (%i) : index = (%c0) to (%n) step (%c1) {
        memref.store %one, %buf[%i] : memref<?xf32>
        omp.yield
      }
    }
    omp.wsloop schedule(static = %c4 : i32) {
      omp.loop_nest (%i) : index = (%c0) to (%n) step (%c1) {
        memref.store %one, %buf[%i] : memref<?xf32>
        omp.yield
      }
    }
    omp.terminator
  }
  return
}
