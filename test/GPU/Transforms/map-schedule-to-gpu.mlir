// RUN: attn-opt %s --attn-map-schedule-to-gpu -split-input-file | FileCheck %s

// attn-map-schedule-to-gpu on hand-written schedules: which buffers are
// copied in and out follows what the kernel's ops do to them (their
// MemoryEffectOpInterface), through views made inside the kernel.

// A kernel that writes through vector.store, memref.copy and a subview made
// inside it: each written buffer is copied back. The three are not fresh
// allocations, and are written only in part as far as the pass can tell, so
// they are copied in as well; the buffer only read is copied in, not out.
// CHECK-LABEL: func.func @writes_through_other_ops
// CHECK-SAME:    (%[[SRC:.*]]: memref<64xf32>, %[[VEC:.*]]: memref<64xf32>, %[[CPY:.*]]: memref<64xf32>, %[[VIEW:.*]]: memref<4x16xf32>)
// CHECK-DAG:   gpu.memcpy  %[[DSRC:[a-z0-9_]+]], %[[SRC]] :
// CHECK-DAG:   gpu.memcpy  %[[DVEC:[a-z0-9_]+]], %[[VEC]] :
// CHECK-DAG:   gpu.memcpy  %[[DCPY:[a-z0-9_]+]], %[[CPY]] :
// CHECK-DAG:   gpu.memcpy  %[[DVIEW:[a-z0-9_]+]], %[[VIEW]] :
// CHECK:       gpu.launch
// CHECK:         vector.store %{{.*}}, %[[DVEC]]
// CHECK:         memref.copy %[[DSRC]], %[[DCPY]]
// CHECK:         memref.subview %[[DVIEW]]
// CHECK:         gpu.terminator
// CHECK-NOT:   gpu.memcpy  %[[SRC]]
// CHECK-DAG:   gpu.memcpy  %[[VEC]], %[[DVEC]]
// CHECK-DAG:   gpu.memcpy  %[[CPY]], %[[DCPY]]
// CHECK-DAG:   gpu.memcpy  %[[VIEW]], %[[DVIEW]]
// CHECK-COUNT-4: gpu.dealloc
func.func @writes_through_other_ops(%src: memref<64xf32>, %vec: memref<64xf32>,
                                    %cpy: memref<64xf32>, %view: memref<4x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant dense<1.0> : vector<8xf32>
  %f = arith.constant 2.0 : f32
  scf.forall (%b) in (1) {
    scf.forall (%t) in (8) {
      %i = arith.muli %t, %c1 : index
      vector.store %one, %vec[%i] : memref<64xf32>, vector<8xf32>
      scf.forall.in_parallel {}
    } {mapping = [#gpu.thread<x>]}
    memref.copy %src, %cpy : memref<64xf32> to memref<64xf32>
    %row = memref.subview %view[%b, 0] [1, 16] [1, 1]
        : memref<4x16xf32> to memref<16xf32, strided<[1], offset: ?>>
    memref.store %f, %row[%c0] : memref<16xf32, strided<[1], offset: ?>>
    scf.forall.in_parallel {}
  } {mapping = [#gpu.block<x>]}
  return
}

// -----

// A freshly allocated output the kernel writes is copied out but not in
// (its contents are undefined before the kernel); an input only read is
// copied in and not out; memref.dim is no access at all.
// CHECK-LABEL: func.func @fresh_output
// CHECK-SAME:    (%[[IN:.*]]: memref<?xf32>)
// CHECK:       %[[OUT:.*]] = memref.alloc(%{{.*}}) : memref<?xf32>
// CHECK:       gpu.memcpy  %[[DIN:[a-z0-9_]+]], %[[IN]] :
// CHECK-NOT:   gpu.memcpy
// CHECK:       gpu.launch blocks({{.*}}) in (%{{.*}} = %{{.*}}, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) threads({{.*}}) in (%{{.*}} = %c32{{.*}}, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}})
// CHECK:         memref.load %[[DIN]]
// CHECK:         memref.store %{{.*}}, %[[DOUT:[a-z0-9_]+]][
// CHECK:         gpu.barrier
// CHECK:       gpu.memcpy  %[[OUT]], %[[DOUT]] :
// CHECK-NOT:   gpu.memcpy  %[[IN]], %[[DIN]]
// CHECK-COUNT-2: gpu.dealloc
func.func @fresh_output(%in: memref<?xf32>) -> memref<?xf32> {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %n = memref.dim %in, %c0 : memref<?xf32>
  %out = memref.alloc(%n) : memref<?xf32>
  %blocks = arith.ceildivsi %n, %c32 : index
  scf.forall (%b) in (%blocks) {
    %len = memref.dim %in, %c0 : memref<?xf32>
    scf.forall (%t) in (32) {
      %base = arith.muli %b, %c32 : index
      %i = arith.addi %base, %t : index
      %ok = arith.cmpi ult, %i, %len : index
      scf.if %ok {
        %x = memref.load %in[%i] : memref<?xf32>
        %y = arith.addf %x, %x : f32
        memref.store %y, %out[%i] : memref<?xf32>
      }
      scf.forall.in_parallel {}
    } {mapping = [#gpu.thread<x>]}
    scf.forall.in_parallel {}
  } {mapping = [#gpu.block<x>]}
  return %out : memref<?xf32>
}

// -----

// Thread loops shorter than the block are predicated on the thread id;
// workgroup allocations become attributions of the launch.
// CHECK-LABEL: func.func @predicated
// CHECK:       gpu.launch {{.*}} threads({{.*}}) in (%{{.*}} = %c64, {{.*}} workgroup(%[[WG:[a-z0-9_]+]] : memref<64xf32, #gpu.address_space<workgroup>>)
// CHECK:         memref.store %{{.*}}, %[[WG]]
// CHECK:         gpu.barrier
// CHECK:         %[[ACTIVE:.*]] = arith.cmpi ult, %{{.*}}, %c16
// CHECK:         scf.if %[[ACTIVE]]
// CHECK:           memref.load %[[WG]]
// CHECK:         gpu.barrier
func.func @predicated(%out: memref<16xf32>) {
  %f = arith.constant 1.0 : f32
  scf.forall (%b) in (1) {
    %wg = memref.alloca() : memref<64xf32, #gpu.address_space<workgroup>>
    scf.forall (%t) in (64) {
      memref.store %f, %wg[%t] : memref<64xf32, #gpu.address_space<workgroup>>
      scf.forall.in_parallel {}
    } {mapping = [#gpu.thread<x>]}
    scf.forall (%t) in (16) {
      %x = memref.load %wg[%t] : memref<64xf32, #gpu.address_space<workgroup>>
      memref.store %x, %out[%t] : memref<16xf32>
      scf.forall.in_parallel {}
    } {mapping = [#gpu.thread<x>]}
    scf.forall.in_parallel {}
  } {mapping = [#gpu.block<x>]}
  return
}
