// Causal self-attention whose sequence is sharded over the ranks of an MPI
// job (docs/distributed.md): zigzag layout, so that every rank does the same
// work. T = 2048 splits over P = 1, 2, 4, 8 ... ranks (T a multiple of 2P).
//
//   OMP_NUM_THREADS=1 mpirun -np 2 build/bin/attn-run examples/ring_causal.mlir \
//       --pipeline=ring --random-inputs --compare-with=reference
func.func @ring_causal(%q: tensor<1x12x2048x64xf32>, %k: tensor<1x12x2048x64xf32>,
                       %v: tensor<1x12x2048x64xf32>) -> tensor<1x12x2048x64xf32> {
  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<top_left>, attn.ring = #attn.ring<zigzag>}
      : (tensor<1x12x2048x64xf32>, tensor<1x12x2048x64xf32>, tensor<1x12x2048x64xf32>)
        -> tensor<1x12x2048x64xf32>
  return %o : tensor<1x12x2048x64xf32>
}
