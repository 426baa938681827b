//===- AttnServingOps.td - KV caches as a server keeps them --*- tablegen -*-===//
//
// A serving engine keeps each sequence's keys and values in fixed-size
// blocks of one shared pool (vLLM's paged attention). attn.gather_pages
// views such a pool as the [B, Hkv, Tk, D] keys or values attn.sdpa
// reads: the reference lowering copies the pages out, the fused CPU
// kernel reads them in place through the block table. attn.dequantize
// reads an int8 or fp8 (e4m3) cache with its scales as floats.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_SERVING_OPS_TD
#define ATTN_SERVING_OPS_TD

include "AttnOpBase.td"

def Attn_BlockTableTensor : RankedTensorOf<[I32, I64], [], "block table: a ranked tensor">;

def Attn_GatherPagesOp : Attn_ShapedOp<"gather_pages"> {
  let summary = "the keys or values of a paged KV cache, sequence by sequence";
  let description = [{
    **Meaning.** For a cache `[NB, BS, Hkv, D]` (`NB` blocks of `BS`
    tokens, FlashAttention's and FlashInfer's NHD layout) and a block
    table `[B, MB]` mapping sequence `b`'s logical block `i` to a
    physical block:

    ```
    y[b, h, j, d] = cache[table[b, j / BS], j mod BS, h, d]   for j < len[b]
    y[b, h, j, d] = 0                                          for j >= len[b]
    ```

    With `layout = #attn.kv_layout<hnd>` the cache is `[NB, Hkv, BS, D]`
    and is read at `[table[b, j / BS], h, j mod BS, d]`.

    with `Tk = MB·BS` and `len[b] = Tk` when no lengths are given. The
    table entries of blocks at or past `len[b]` are not used: they may hold
    anything (serving engines leave them stale).

    vLLM / FlashAttention (`flash_attn_with_kvcache(..., block_table=…,
    cache_seqlens=…)`): `y[b, :, j] = k_cache[block_table[b, j // BS], j % BS]`
    transposed to heads first.

    A contiguous cache `[B, T, Hkv, D]` is the special case `BS = T`,
    `table[b, 0] = b` (or `cache_batch_idx[b]`).

    **Usage.**

    ```
    %k = attn.gather_pages %cache, %table [lengths(%len)]
        [ {layout = #attn.kv_layout<nhd|hnd>} ]
        : (type(%cache), type(%table) [, type(%len)]) -> type(%k)
    ```

    `attn.sdpa` with `key_lengths(%len)` on `%k` and `%v` gathered with
    the same table and the same `%len` (or none) is the paged attention a
    serving step runs: the fused CPU kernel reads the blocks in place and
    never builds `%k`.

    **Run time.** A block id outside `[0, NB)` in a block the sequence
    uses is an error: `attn-run`, the C++ API and Python check a table that
    is a function argument before the call (exit status 2, an error status,
    an exception; each names the entry). The compiled code clamps every
    block id into `[0, NB)`, so it never reads outside the cache whatever
    the table holds.

    **Verifier.**
    - `cache` has rank 4, `[NB,BS,Hkv,D]` (`[NB,Hkv,BS,D]` for `hnd`);
      `table` rank 2 `[B,MB]`,
      `i32` or `i64`; `lengths`, if given, rank 1 `[B]`.
    - The result is `[B, Hkv, MB·BS, D]` with the cache's element type.

    **Folds.** None.

    **Example** (decode against a paged cache of 64 blocks of 16 tokens,
    up to 8 blocks a sequence):

    ```mlir
    func.func @paged_decode(%q: tensor<2x8x1x64xf32>, %kc: tensor<64x16x2x64xf32>,
                            %vc: tensor<64x16x2x64xf32>, %table: tensor<2x8xi32>,
                            %len: tensor<2xi32>) -> tensor<2x8x1x64xf32> {
      %k = attn.gather_pages %kc, %table lengths(%len)
          : (tensor<64x16x2x64xf32>, tensor<2x8xi32>, tensor<2xi32>) -> tensor<2x2x128x64xf32>
      %v = attn.gather_pages %vc, %table lengths(%len)
          : (tensor<64x16x2x64xf32>, tensor<2x8xi32>, tensor<2xi32>) -> tensor<2x2x128x64xf32>
      %o = attn.sdpa %q, %k, %v key_lengths(%len) {causal = #attn.causal<bottom_right>}
          : (tensor<2x8x1x64xf32>, tensor<2x2x128x64xf32>, tensor<2x2x128x64xf32>, tensor<2xi32>)
            -> tensor<2x8x1x64xf32>
      return %o : tensor<2x8x1x64xf32>
    }
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$cache, Attn_BlockTableTensor:$table,
                       Optional<Attn_LengthsTensor>:$lengths,
                       DefaultValuedAttr<Attn_KvLayoutAttr,
                                         "::mlir::attn::KvLayout::nhd">:$layout);
  let extraClassDeclaration = [{
    /// The cache's dims of the block's rows and of the heads.
    int64_t getBlockSizeDim() { return getLayout() == KvLayout::nhd ? 1 : 2; }
    int64_t getHeadsDim() { return getLayout() == KvLayout::nhd ? 2 : 1; }
  }];
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = [{
    $cache `,` $table (`lengths` `(` $lengths^ `)`)?
    attr-dict `:` functional-type(operands, results)
  }];
}

def Attn_DequantizeOp : Attn_Op<"dequantize", [Pure, InferShapedTypeOpAdaptor,
    DeclareOpInterfaceMethods<ReifyRankedShapedTypeOpInterface, ["reifyResultShapes"]>]> {
  let summary = "int8 or fp8 keys or values with their scales, as floats";
  let description = [{
    **Meaning.** A quantised KV cache read as the floats attention takes.
    Two encodings, told apart by the input's element type:

    - `i8`: symmetric int8, `float(x)` is the integer (llama.cpp's and
      OpenVINO's per-token scheme);
    - `f8E4M3FN`: fp8 e4m3 (OCP FP8, `torch.float8_e4m3fn`: 1 sign,
      4 exponent bits of bias 7, 3 mantissa bits; no infinities,
      `S.1111.111` is NaN, the largest finite value 448), `float(x)` its
      exact value (vLLM's and FlashInfer's fp8 caches).

    The scale is one f32 per token and K/V head (`[B,Hkv,T]`), or one for
    the whole tensor (rank 0: vLLM's per-tensor `k_scale`, `v_scale`):

    ```
    y[b, h, j, d] = float(x[b, h, j, d]) · scale[b, h, j]   (per token)
    y[b, h, j, d] = float(x[b, h, j, d]) · scale            (per tensor)
    ```

    PyTorch: `x.float() * scale[..., None]` (or `* scale`).

    **Usage.**

    ```
    %k = attn.dequantize %x, %scale
        : (tensor<BxHkvxTxDx(i8|f8E4M3FN)>, tensor<BxHkvxTxf32> | tensor<f32>)
        -> tensor<BxHkvxTxDx(f32|f16|bf16)>
    ```

    `attn.sdpa` whose K and V both come from `attn.dequantize` is what a
    decode step on a quantised cache runs: the fused CPU kernel's decode
    tile reads the int8 or fp8 rows in place and applies the scales to the
    scores and to the probabilities (docs/serving.md); elsewhere the
    reference lowering builds the float tensor. A paged quantised cache is
    `attn.gather_pages` of `attn.dequantize` of the whole cache
    (`[NB, BS, Hkv, D]` with scales `[NB, BS, Hkv]` or one scale: the dims
    are the cache's, any three leading ones): the decode tile reads it in
    place too, each key's row and scale at the same (block, slot, head).

    At the runtime's boundary (`attn-run`'s `.npy` files, the C++ and C
    APIs, Python) an fp8 tensor is its bytes: a `uint8` array of the
    e4m3 bit patterns (NumPy has no fp8 type).

    **Verifier.**
    - `x` is `i8` or `f8E4M3FN` of rank 4 `[B,Hkv,T,D]`; `scale` is
      `f32`, of rank 0 or `[B,Hkv,T]` (its dims equal to `x`'s first
      three).
    - The result has `x`'s shape, with a float element type.

    **Folds.** None.

    **Example.**

    ```mlir
    func.func @int8_decode(%q: tensor<1x8x1x64xf32>, %kq: tensor<1x2x128x64xi8>,
                           %ks: tensor<1x2x128xf32>, %vq: tensor<1x2x128x64xi8>,
                           %vs: tensor<1x2x128xf32>) -> tensor<1x8x1x64xf32> {
      %k = attn.dequantize %kq, %ks
          : (tensor<1x2x128x64xi8>, tensor<1x2x128xf32>) -> tensor<1x2x128x64xf32>
      %v = attn.dequantize %vq, %vs
          : (tensor<1x2x128x64xi8>, tensor<1x2x128xf32>) -> tensor<1x2x128x64xf32>
      %o = attn.sdpa %q, %k, %v
          : (tensor<1x8x1x64xf32>, tensor<1x2x128x64xf32>, tensor<1x2x128x64xf32>)
            -> tensor<1x8x1x64xf32>
      return %o : tensor<1x8x1x64xf32>
    }

    func.func @fp8_decode(%q: tensor<1x8x1x64xf32>, %kq: tensor<1x2x128x64xf8E4M3FN>,
                          %ks: tensor<f32>, %vq: tensor<1x2x128x64xf8E4M3FN>,
                          %vs: tensor<f32>) -> tensor<1x8x1x64xf32> {
      %k = attn.dequantize %kq, %ks
          : (tensor<1x2x128x64xf8E4M3FN>, tensor<f32>) -> tensor<1x2x128x64xf32>
      %v = attn.dequantize %vq, %vs
          : (tensor<1x2x128x64xf8E4M3FN>, tensor<f32>) -> tensor<1x2x128x64xf32>
      %o = attn.sdpa %q, %k, %v
          : (tensor<1x8x1x64xf32>, tensor<1x2x128x64xf32>, tensor<1x2x128x64xf32>)
            -> tensor<1x8x1x64xf32>
      return %o : tensor<1x8x1x64xf32>
    }
    ```
  }];
  let arguments = (ins RankedTensorOf<[I8, F8E4M3FN]>:$input, RankedTensorOf<[F32]>:$scale);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $scale attr-dict `:` functional-type(operands, results)
  }];
  let extraClassDeclaration = [{
    /// Whether the input is fp8 e4m3 (else int8).
    bool isFp8() { return isa<::mlir::Float8E4M3FNType>(getInput().getType().getElementType()); }
    /// Whether one scale serves the whole tensor (rank 0).
    bool hasTensorScale() { return getScale().getType().getRank() == 0; }
  }];
  let hasVerifier = 1;
}

#endif // ATTN_SERVING_OPS_TD
