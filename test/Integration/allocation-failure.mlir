// Allocation failure in compiled code is an error with the size it needed
// (exit status 2), never a crash; and attn-run says up front when the
// reference lowering's [B,H,Tq,Tk] buffers cannot fit, skipping the
// comparison instead of dying after the cpu result was computed.
// UNSUPPORTED: asan
// RUN: rm -rf %t && mkdir -p %t

// A 64 GiB projection output under a 6 GiB address-space limit: the
// allocation fails inside the compiled code.
// RUN: %python %S/Inputs/limit_memory.py 6G %python %S/Inputs/expect_exit.py 2 attn-run %s --entry=big_project --pipeline=reference --random-inputs | FileCheck %s --check-prefix=ALLOC
// ALLOC: attn-run: the compiled code could not allocate 68719476{{[0-9]+}} bytes (64.0 GiB); the call was abandoned

// Causal sdpa at T = 16384 under 2.5 GiB: the fused cpu kernel needs no
// Tq x Tk buffer and runs (its result is written), the reference would need
// about 4 x 1 GiB: the comparison is skipped with the reason.
// RUN: %python %S/Inputs/limit_memory.py 2.5G attn-run %s --entry=long_sdpa --pipeline=cpu --random-inputs --compare-with=reference --output=%t/o.npy > %t/out.txt 2> %t/err.txt
// RUN: FileCheck %s --check-prefix=SKIP < %t/err.txt
// RUN: FileCheck %s --check-prefix=RESULT < %t/out.txt
// RUN: %python %S/Inputs/npytool.py info %t/o.npy | FileCheck %s --check-prefix=NPY
// SKIP: attn-run: skipping --compare-with=reference: the reference lowering needs about 4.0 GiB (4 [B,H,Tq,Tk] f32 buffers of 1.0 GiB) and {{[0-9.]+}} GiB of memory are available
// RESULT: result #0: float32[1,1,16384,8] -> {{.*}}o.npy
// RESULT-NOT: max_abs_error
// NPY: float32 (1, 1, 16384, 8) 524288 bytes

// The reference pipeline itself: refused up front, exit status 2.
// RUN: %python %S/Inputs/limit_memory.py 2.5G %python %S/Inputs/expect_exit.py 2 attn-run %s --entry=long_sdpa --pipeline=reference --random-inputs | FileCheck %s --check-prefix=REF
// REF: attn-run: --pipeline=reference: the reference lowering needs about 4.0 GiB (4 [B,H,Tq,Tk] f32 buffers of 1.0 GiB) and {{[0-9.]+}} GiB of memory are available

// --json says the comparison was skipped and why.
// RUN: %python %S/Inputs/limit_memory.py 2.5G attn-run %s --entry=long_sdpa --pipeline=cpu --random-inputs --compare-with=reference --json 2>/dev/null | FileCheck %s --check-prefix=JSON
// JSON: "comparison_skipped": "the reference lowering needs about 4.0 GiB

func.func @big_project(%x: tensor<1x1048576x1xf32>, %w: tensor<16384x1xf32>) -> tensor<1x1048576x16384xf32> {
  %y = attn.project %x, %w : (tensor<1x1048576x1xf32>, tensor<16384x1xf32>) -> tensor<1x1048576x16384xf32>
  return %y : tensor<1x1048576x16384xf32>
}

func.func @long_sdpa(%q: tensor<1x1x16384x8xf32>, %k: tensor<1x1x16384x8xf32>,
                     %v: tensor<1x1x16384x8xf32>) -> tensor<1x1x16384x8xf32> {
  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<top_left>}
      : (tensor<1x1x16384x8xf32>, tensor<1x1x16384x8xf32>, tensor<1x1x16384x8xf32>) -> tensor<1x1x16384x8xf32>
  return %o : tensor<1x1x16384x8xf32>
}
