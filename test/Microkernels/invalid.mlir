// test-attn-microkernels refuses what it cannot fill, naming the rule.
// RUN: attn-opt %s --test-attn-microkernels -split-input-file -verify-diagnostics

// expected-error @below {{unknown kernel 'transpose' (transpose-block, transpose-block-avx2, fold-slots-add, fold-slots-max)}}
func.func private @f(memref<8x8xf32>, memref<8x8xf32>)
    attributes {attn.test_microkernel = "transpose"}

// -----

// expected-error @below {{expected (memref<WxWxf32>, memref<Wxf32>) -> () with W a power of two above 1}}
func.func private @g(memref<8x8xf32>, memref<4xf32>)
    attributes {attn.test_microkernel = "fold-slots-add"}

// -----

// expected-error @below {{expected (memref<WxWxf32>, memref<WxWxf32>) -> () with W a power of two above 1}}
func.func private @h(memref<6x6xf32>, memref<6x6xf32>)
    attributes {attn.test_microkernel = "transpose-block"}

// -----

// expected-error @below {{the function must have no body}}
func.func @k(%a: memref<8x8xf32>, %b: memref<8x8xf32>)
    attributes {attn.test_microkernel = "transpose-block"} {
  return
}
