// attn-run's report: --compare-with, --repeat, --json, --random-inputs.
// RUN: attn-run %s --random-inputs --seed=3 --compare-with=reference --repeat=3 | FileCheck %s
// CHECK: attn-run: @gqa from {{.*}} through the reference pipeline
// CHECK: result #0: float32[1,4,16,32]
// CHECK: result #0 vs reference: max_abs_error 0.000000e+00 max_rel_error 0.000000e+00
// CHECK: time: median {{[0-9.]+}} ms over 3 runs, {{[0-9.]+}} GFLOP/s

// RUN: attn-run %s --random-inputs --compare-with=reference --repeat=2 --json | FileCheck %s --check-prefix=JSON
// JSON: "compare_with": "reference"
// JSON: "entry": "gqa"
// JSON: "gflops": {{[0-9.e+-]+}}
// JSON: "max_abs_error": 0
// JSON: "max_rel_error": 0
// JSON: "median_ms": {{[0-9.e+-]+}}
// JSON: "dtype": "float32"
// JSON: "pipeline": "reference"
// JSON: "repeat": 2

// --min-seconds keeps timing runs past --repeat until they add up to S
// seconds: one call of this function takes well under a millisecond, so
// 0.05 s is many more than 2 runs, and "repeat" counts them; without it
// exactly --repeat runs are timed.
// RUN: attn-run %s --random-inputs --pipeline=cpu --repeat=2 --min-seconds=0.05 --json | %python -c "import json, sys; r = json.load(sys.stdin); print('MANY' if r['repeat'] > 2 else 'FEW', r['repeat'])" | FileCheck %s --check-prefix=MINSEC
// MINSEC: MANY
// RUN: attn-run %s --random-inputs --pipeline=cpu --repeat=2 --min-seconds=0 --json | FileCheck %s --check-prefix=MINSEC0
// MINSEC0: "repeat": 2

// The same seed gives the same inputs, so the same output file.
// RUN: rm -rf %t && mkdir -p %t
// RUN: attn-run %s --random-inputs --seed=5 --output=%t/a.npy
// RUN: attn-run %s --random-inputs --seed=5 --output=%t/b.npy
// RUN: cmp %t/a.npy %t/b.npy
// RUN: attn-run %s --random-inputs --seed=6 --output=%t/c.npy
// RUN: not cmp %t/a.npy %t/c.npy

func.func @gqa(%q: tensor<1x4x16x32xf32>, %k: tensor<1x2x24x32xf32>, %v: tensor<1x2x24x32xf32>,
               %keep: tensor<1x1x16x24xi1>) -> tensor<1x4x16x32xf32> {
  %o = attn.sdpa %q, %k, %v, %keep {causal = #attn.causal<bottom_right>}
      : (tensor<1x4x16x32xf32>, tensor<1x2x24x32xf32>, tensor<1x2x24x32xf32>, tensor<1x1x16x24xi1>) -> tensor<1x4x16x32xf32>
  return %o : tensor<1x4x16x32xf32>
}
