// What the GPU lowering refuses, with the reason.
// RUN: attn-opt %s --convert-attn-to-gpu -split-input-file -verify-diagnostics

func.func @dropout(%q: tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32> {
  // expected-error @+1 {{dropout is not supported by the GPU kernel}}
  %o = attn.sdpa %q, %q, %q {dropout_rate = 0.1 : f32, dropout_seed = 1 : i64}
      : (tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32>
  return %o : tensor<1x1x4x8xf32>
}

// -----

func.func @dynamic_head_dim(%q: tensor<1x1x4x?xf32>) -> tensor<1x1x4x?xf32> {
  // expected-error @+1 {{the GPU kernel needs static head counts and head dims}}
  %o = attn.sdpa %q, %q, %q {scale = 0.5 : f32}
      : (tensor<1x1x4x?xf32>, tensor<1x1x4x?xf32>, tensor<1x1x4x?xf32>) -> tensor<1x1x4x?xf32>
  return %o : tensor<1x1x4x?xf32>
}

// -----

func.func @too_wide(%q: tensor<1x1x4x4096xf32>) -> tensor<1x1x4x4096xf32> {
  // expected-error @+1 {{head dims D = 4096, Dv = 4096 need more than 48 KiB of shared memory even with tile-q = 16 and tile-k = 1}}
  %o = attn.sdpa %q, %q, %q
      : (tensor<1x1x4x4096xf32>, tensor<1x1x4x4096xf32>, tensor<1x1x4x4096xf32>) -> tensor<1x1x4x4096xf32>
  return %o : tensor<1x1x4x4096xf32>
}

// Bad options fail the run with a message, never an abort.
// RUN: not attn-opt %s --split-input-file --convert-attn-to-gpu="tile-q=0" 2>&1 | FileCheck %s --check-prefix=TILE
// TILE: tile-q must be in [1, 1024] and tile-k positive, got tile-q=0 tile-k=32
// RUN: not attn-opt %s --split-input-file --attn-gpu-pipeline="chip=gfx90a" 2>&1 | FileCheck %s --check-prefix=CHIP
// CHIP: attn-gpu-pipeline: chip 'gfx90a' is not an NVIDIA target of the form sm_<number> (e.g. sm_90)
// RUN: not attn-opt %s --split-input-file --attn-gpu-pipeline="format=elf" 2>&1 | FileCheck %s --check-prefix=FORMAT
// FORMAT: attn-gpu-pipeline: format 'elf' is not one of isa, bin, fatbin
