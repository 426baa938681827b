// Half-precision attention over a padded batch: a boolean mask (True: the
// key takes part, as in PyTorch's SDPA) broadcast over the 4 heads, and
// per-sequence key lengths (keys at or after len[b] are padding). B, Tq and
// Tk are given at call time; lengths outside [0, Tk] are refused before the
// kernel runs. Compiled ahead of time in examples/aot/CMakeLists.txt.
func.func @masked_f16(%q: tensor<?x4x?x32xf16>, %k: tensor<?x4x?x32xf16>,
                      %v: tensor<?x4x?x32xf16>, %m: tensor<?x1x?x?xi1>,
                      %len: tensor<?xi32>) -> tensor<?x4x?x32xf16> {
  %o = attn.sdpa %q, %k, %v, %m key_lengths(%len)
      : (tensor<?x4x?x32xf16>, tensor<?x4x?x32xf16>, tensor<?x4x?x32xf16>,
         tensor<?x1x?x?xi1>, tensor<?xi32>) -> tensor<?x4x?x32xf16>
  return %o : tensor<?x4x?x32xf16>
}
