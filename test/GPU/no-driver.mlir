// Without a CUDA driver, the GPU pipeline of attn-run says so in one line
// and exits 2 (the runtime loads libcuda.so.1 with dlopen; nothing links
// against CUDA).
// UNSUPPORTED: cuda-driver
// RUN: %python %S/../Integration/Inputs/expect_exit.py 2 attn-run %s --pipeline=gpu --random-inputs | FileCheck %s
// RUN: %python %S/../Integration/Inputs/expect_exit.py 2 attn-run %s --pipeline=cpu --compare-with=gpu --random-inputs | FileCheck %s
// CHECK: attn-run: --pipeline=gpu: no CUDA driver: cannot load libcuda.so.1
// The emulated schedule needs no driver.
// RUN: attn-run %s --pipeline=gpu-schedule --random-inputs --compare-with=reference | FileCheck %s --check-prefix=EMU
// EMU: result #0 vs reference: max_abs_error {{[0-9.]+}}e-{{0[6-9]|1[0-9]}}
func.func @f(%q: tensor<1x2x9x16xf32>, %k: tensor<1x2x9x16xf32>,
             %v: tensor<1x2x9x16xf32>) -> tensor<1x2x9x16xf32> {
  %o = attn.sdpa %q, %k, %v : (tensor<1x2x9x16xf32>, tensor<1x2x9x16xf32>, tensor<1x2x9x16xf32>) -> tensor<1x2x9x16xf32>
  return %o : tensor<1x2x9x16xf32>
}
