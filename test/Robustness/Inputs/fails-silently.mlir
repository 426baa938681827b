// Input of every-pass-silent-chunk.mlir: test-attn-fail-silently fails the
// first chunk without a diagnostic; the second chunk passes.
func.func @fails_silently() attributes {attn.test_fail_silently} {
  return
}

// -----

func.func @fine(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
