// attn-aot's refusals, each with its reason and exit status 1.
// RUN: not attn-aot %s --name=2bad -o %t 2>&1 | FileCheck %s --check-prefix=NAME
// RUN: not attn-aot %s --target-cpu=no-such-cpu -o %t 2>&1 | FileCheck %s --check-prefix=CPU
// RUN: not attn-aot %s --pipeline=gpu-schedule -o %t 2>&1 | FileCheck %s --check-prefix=SCHED
// RUN: not attn-aot %s --pipeline=nope -o %t 2>&1 | FileCheck %s --check-prefix=PIPE
// RUN: not attn-aot %s --entry=missing -o %t 2>&1 | FileCheck %s --check-prefix=ENTRY
// RUN: not attn-aot %s --vector-width=3 -o %t 2>&1 | FileCheck %s --check-prefix=TILE
// RUN: not attn-aot %s --entry=unranked -o %t 2>&1 | FileCheck %s --check-prefix=SIG
// RUN: not attn-aot %s --device-resident -o %t 2>&1 | FileCheck %s --check-prefix=RESIDENT
// RUN: not attn-aot %s --tf32 -o %t 2>&1 | FileCheck %s --check-prefix=TF32

// NAME: attn-aot: the kernel name '2bad' is not a C identifier
// CPU: attn-aot: {{.*}}no-such-cpu
// SCHED: attn-aot: attn-aot compiles the cpu, reference, gpu and ring pipelines
// PIPE: attn-aot: unknown pipeline 'nope'
// ENTRY: attn-aot: {{.*}}no function named 'missing'
// TILE: attn-aot: convert-attn-to-loops: tile-q must be {{.*}} vector-width=3
// RESIDENT: attn-aot: --device-resident needs the gpu pipeline
// TF32: attn-aot: --tf32 needs the gpu pipeline
// SIG: attn-aot: argument #0 of 'unranked' has type tensor<*xf32>

func.func @f(%q: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  %o = attn.sdpa %q, %q, %q : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}

func.func @unranked(%q: tensor<*xf32>) -> tensor<*xf32> {
  return %q : tensor<*xf32>
}
