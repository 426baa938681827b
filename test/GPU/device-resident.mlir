// attn-gpu-pipeline{device-resident}: the function's arguments are the
// kernel's buffers as they are and its result is allocated on the device;
// no gpu.memcpy anywhere. Host code that reads a kernel's buffer (here, an
// mha's projections on the reference route) is refused, naming the buffer.
// RUN: attn-opt %s --split-input-file --attn-gpu-pipeline="device-resident=1 lower-to-llvm=0" -verify-diagnostics | FileCheck %s
// RUN: attn-opt %s --split-input-file --attn-gpu-pipeline="lower-to-llvm=0" 2>/dev/null | FileCheck %s --check-prefix=COPIES

// CHECK-LABEL: func.func @sdpa(
// CHECK-SAME:    %[[Q:.*]]: memref<?x8x?x64xf16>, %[[K:.*]]: memref<?x2x?x64xf16>, %[[V:.*]]: memref<?x2x?x64xf16>)
// CHECK-NOT:   gpu.memcpy
// CHECK:       %[[OUT:.*]] = gpu.alloc (%{{.*}}, %{{.*}}) : memref<?x8x?x64xf16>
// CHECK-NOT:   gpu.memcpy
// CHECK:       gpu.launch
// CHECK-NOT:   gpu.memcpy
// CHECK-NOT:   gpu.dealloc
// CHECK:       return %[[OUT]]
// COPIES-LABEL: func.func @sdpa(
// COPIES-COUNT-3: gpu.memcpy
// COPIES: gpu.launch
// COPIES: gpu.memcpy
func.func @sdpa(%q: tensor<?x8x?x64xf16>, %k: tensor<?x2x?x64xf16>,
                %v: tensor<?x2x?x64xf16>) -> tensor<?x8x?x64xf16> {
  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<bottom_right>}
      : (tensor<?x8x?x64xf16>, tensor<?x2x?x64xf16>, tensor<?x2x?x64xf16>)
        -> tensor<?x8x?x64xf16>
  return %o : tensor<?x8x?x64xf16>
}

// -----

func.func @mha(%x: tensor<1x16x64xf32>, %wq: tensor<64x64xf32>, %wk: tensor<64x64xf32>,
               %wv: tensor<64x64xf32>, %wo: tensor<64x64xf32>) -> tensor<1x16x64xf32> {
  // expected-error @+1 {{device-resident: buffer}}
  %y = attn.mha %x, %x, %wq, %wk, %wv, %wo {num_heads = 4 : i64}
       : (tensor<1x16x64xf32>, tensor<1x16x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>,
          tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<1x16x64xf32>
  return %y : tensor<1x16x64xf32>
}

// -----

// Returning an argument copies it on the host (bufferisation): refused.
func.func @passthrough(%q: tensor<1x2x8x16xf32>) -> (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) {
  // expected-error @+1 {{device-resident: buffer %arg0 is also read or written on the host}}
  %o = attn.sdpa %q, %q, %q : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  return %o, %q : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
}

// -----

// The same result twice: one device buffer cannot be handed out twice.
func.func @twice(%q: tensor<1x2x8x16xf32>) -> (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) {
  %o = attn.sdpa %q, %q, %q : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  // expected-error @+1 {{device-resident: result #1 is not a device buffer of its own that the function allocates}}
  return %o, %o : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
}

// -----

// Two kernels in a row: the first one's output stays on the device for the
// second; only the last is returned.
// CHECK-LABEL: func.func @chain(
// CHECK-NOT:   gpu.memcpy
// CHECK:       %[[MID:.*]] = gpu.alloc
// CHECK:       gpu.launch
// CHECK:       %[[OUT:.*]] = gpu.alloc
// CHECK:       gpu.launch
// CHECK:       gpu.dealloc %[[MID]]
// CHECK:       return %[[OUT]]
func.func @chain(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  %a = attn.sdpa %q, %k, %k : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  %b = attn.sdpa %a, %k, %k : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  return %b : tensor<1x2x8x16xf32>
}
