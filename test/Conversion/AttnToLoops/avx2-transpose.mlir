// The 8-lane transposes that pack K (prefill) and the projections' weights
// take upstream's AVX2 sequence with avx2 (the target has AVX2: the JIT
// and attn-aot set it from the CPU): x86vector::avx2::transpose8x8xf32,
// 20 shuffles and 8 vblendps as llvm.inline_asm per 8 x 8 block. Without
// it (a CPU without AVX, where LLVM legalises shuffles but not inline
// assembly) and at 16 lanes, the project's w·log2(w) shuffles
// (docs/cpu.md, *Packing K*).
// RUN: attn-opt %s --convert-attn-to-loops=avx2=true -split-input-file | FileCheck %s
// RUN: attn-opt %s --convert-attn-to-loops -split-input-file | FileCheck %s --check-prefix=PLAIN --implicit-check-not=llvm.inline_asm
// RUN: attn-opt %s --convert-attn-to-loops="vector-width=16 avx2=true" -split-input-file | FileCheck %s --check-prefix=W16 --implicit-check-not=llvm.inline_asm
// The pipeline passes the option on.
// RUN: attn-opt %s --attn-cpu-pipeline="avx2=true lower-to-llvm=false" -split-input-file | FileCheck %s --check-prefix=PIPE
// PIPE-COUNT-8: llvm.inline_asm asm_dialect = intel "vblendps
//
// Values: the JIT at 8 lanes on an AVX2 host takes the sequence (its object
// code has the 8 vblendps of one block per packing loop) and matches the
// reference pipeline.
// REQUIRES: avx2
// RUN: rm -rf %t && mkdir -p %t
// RUN: attn-run %s --entry=prefill --pipeline=cpu --vector-width=8 --random-inputs --seed=2 --compare-with=reference --dump-object=%t/p.o | FileCheck %s --check-prefix=OK
// RUN: attn-run %s --entry=project --pipeline=cpu --vector-width=8 --random-inputs --seed=2 --compare-with=reference --dump-object=%t/w.o | FileCheck %s --check-prefix=OK
// OK: result #0 vs reference: max_abs_error {{[0-9.]+e-(0[6-9]|[1-9][0-9])}} max_rel_error {{[0-9.]+e-(0[6-9]|[1-9][0-9])}}
// RUN: llvm-objdump -d %t/p.o | FileCheck %s --check-prefix=OBJ
// RUN: llvm-objdump -d %t/w.o | FileCheck %s --check-prefix=OBJ
// OBJ-COUNT-8: vblendps

// CHECK-LABEL: func.func @prefill
// The keys transposed once per call, 8 x 8 blocks: 8 row loads, upstream's
// unpacks and shuffles, the blends, the 128-bit permutes, 8 stores.
// CHECK: scf.parallel
// CHECK-COUNT-8: vector.load
// CHECK-COUNT-12: vector.shuffle
// CHECK-COUNT-8: llvm.inline_asm asm_dialect = intel "vblendps $0, $1, $2, 0x{{cc|33}}", "=x,x,x" {{.*}} : (vector<8xf32>, vector<8xf32>) -> vector<8xf32>
// CHECK-COUNT-8: vector.shuffle
// CHECK-COUNT-8: vector.store
// PLAIN-LABEL: func.func @prefill
// PLAIN: scf.parallel
// PLAIN-COUNT-8: vector.load
// PLAIN-COUNT-24: vector.shuffle
// PLAIN-COUNT-8: vector.store
// W16-LABEL: func.func @prefill
// W16: scf.parallel
// W16-COUNT-16: vector.load
// W16-COUNT-64: vector.shuffle
// W16-COUNT-16: vector.store
func.func @prefill(%q: tensor<1x2x128x64xf32>, %k: tensor<1x2x128x64xf32>, %v: tensor<1x2x128x64xf32>)
    -> tensor<1x2x128x64xf32> {
  %o = attn.sdpa %q, %k, %v : (tensor<1x2x128x64xf32>, tensor<1x2x128x64xf32>, tensor<1x2x128x64xf32>)
      -> tensor<1x2x128x64xf32>
  return %o : tensor<1x2x128x64xf32>
}

// -----

// An out_in weight's panels: W's rows transposed 8 x 8 the same way.
// CHECK-LABEL: func.func @project
// CHECK-COUNT-8: vector.load
// CHECK-COUNT-12: vector.shuffle
// CHECK-COUNT-8: llvm.inline_asm asm_dialect = intel "vblendps
// CHECK-COUNT-8: vector.shuffle
// CHECK-COUNT-8: vector.store
// PLAIN-LABEL: func.func @project
// PLAIN-COUNT-8: vector.load
// PLAIN-COUNT-24: vector.shuffle
// PLAIN-COUNT-8: vector.store
// W16-LABEL: func.func @project
func.func @project(%x: tensor<2x40x64xf32>, %w: tensor<48x64xf32>) -> tensor<2x40x48xf32> {
  %y = attn.project %x, %w : (tensor<2x40x64xf32>, tensor<48x64xf32>) -> tensor<2x40x48xf32>
  return %y : tensor<2x40x48xf32>
}
