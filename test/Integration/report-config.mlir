// --json says what the pipeline used: the threads (OpenMP's team size for
// cpu and gpu-schedule, 1 for the reference, null for gpu), the tile sizes
// (the pass options' defaults where none were given; null for the
// reference), the CPU kernel's vector width (the host's widest, narrowed
// until tile-k holds two vectors), the ISA chosen from the target
// features and only the features that matter to the kernels (the full
// string with --verbose); and one error entry per result for
// --compare-with.
// RUN: env OMP_NUM_THREADS=1 attn-run %s --pipeline=cpu --random-inputs --json | FileCheck %s --check-prefix=CPU
// CPU: "cpu_features": "{{(\+[a-z0-9.]+)(,\+[a-z0-9.]+)*}}",
// CPU-NOT: cpu_features_all
// CPU: "isa": "{{avx512|avx2|avx|sse4.2|sse2|sve2|sve|neon|generic}}",
// CPU: "threads": 1,
// CPU-NEXT: "tile_k": 64,
// CPU-NEXT: "tile_q": 64,
// CPU: "vector_width": {{8|16}},
// RUN: attn-run %s --pipeline=cpu --num-threads=2 --tile-q=8 --tile-k=16 --random-inputs --json | FileCheck %s --check-prefix=CPUOPT
// CPUOPT: "threads": 2,
// CPUOPT-NEXT: "tile_k": 16,
// CPUOPT-NEXT: "tile_q": 8,
// CPUOPT-NEXT: "unfused": [],
// CPUOPT-NEXT: "vector_width": 8,
// RUN: env OMP_NUM_THREADS=1 attn-run %s --pipeline=gpu-schedule --random-inputs --json | FileCheck %s --check-prefix=SCHED
// SCHED: "threads": 1,
// SCHED-NEXT: "tile_k": 32,
// SCHED-NEXT: "tile_q": 64,
// SCHED-NOT: vector_width
// RUN: attn-run %s --random-inputs --json | FileCheck %s --check-prefix=REF
// REF: "threads": 1,
// REF-NEXT: "tile_k": null,
// REF-NEXT: "tile_q": null,
// The full feature string (with the disabled "-" ones) only with --verbose.
// RUN: attn-run %s --random-inputs --json --verbose | FileCheck %s --check-prefix=VERBOSE
// VERBOSE: "cpu_features_all": "{{.*}}-{{.*}}",
// RUN: attn-run %s --pipeline=cpu --random-inputs --verbose | FileCheck %s --check-prefix=VTEXT
// VTEXT: isa: {{[a-z0-9.]+}}; threads: {{[0-9]+}}; tile-q 64, tile-k 64, vector-width {{8|16}}
// VTEXT-NEXT: cpu features: {{.*}}

// Per-result errors: one entry per result, the overall maxima as before.
// RUN: attn-run %s --pipeline=cpu --random-inputs --compare-with=reference --json | FileCheck %s --check-prefix=ERRORS
// ERRORS: "max_abs_error": {{[0-9.e+-]+}},
// ERRORS: "result_errors": [
// ERRORS-NEXT: {
// ERRORS-NEXT: "compare_with": {
// ERRORS-NEXT: "max_abs_error": {{[0-9.e+-]+}},
// ERRORS-NEXT: "max_rel_error": {{[0-9.e+-]+}},
// ERRORS-NEXT: "pipeline": "reference"
// ERRORS-NEXT: },
// ERRORS-NEXT: "result": 0
// ERRORS-NEXT: },
// ERRORS-NEXT: {
// ERRORS-NEXT: "compare_with": {
// ERRORS: "result": 1
// ERRORS-NEXT: }
// ERRORS-NEXT: ],

func.func @two(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>)
    -> (tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>) {
  %o = attn.sdpa %q, %k, %v : (tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32>
  %c = attn.sdpa %q, %k, %v {causal = #attn.causal<top_left>}
      : (tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32>
  return %o, %c : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>
}
