//===- AttnServingOps.td - KV caches as a server keeps them --*- tablegen -*-===//
//
// A serving engine keeps each sequence's keys and values in fixed-size
// blocks of one shared pool (vLLM's paged attention). attn.gather_pages
// views such a pool as the [B, Hkv, Tk, D] keys or values attn.sdpa
// reads: the reference lowering copies the pages out, the fused CPU
// kernel reads them in place through the block table. attn.dequantize
// reads an int8 or fp8 (e4m3) cache with its scales as floats.
// attn.sdpa_varlen is attention over a ragged batch (FlashAttention's
// varlen layout).
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
    decode step (or a prefill chunk) on a quantised cache runs: the fused
    CPU kernel's decode and prefill tiles read the int8 or fp8 rows in
    place and apply the scales to the scores (or to K as a prefill tile
    transposes it) and to the probabilities (docs/serving.md); elsewhere
    the reference lowering builds the float tensor. A paged quantised cache
    is `attn.gather_pages` of `attn.dequantize` of the whole cache
    (`[NB, BS, Hkv, D]` with scales `[NB, BS, Hkv]` or one scale: the dims
    are the cache's, any three leading ones): the tiles read it in place
    too, each key's row and scale at the same (block, slot, head).

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

def Attn_SdpaVarlenOp : Attn_ShapedOp<"sdpa_varlen", [AttrSizedOperandSegments]> {
  let summary = "attention over a ragged batch: each sequence its own rows of Q, K and V";
  let description = [{
    **Meaning.** The sequences of a ragged batch (FlashAttention's varlen
    layout) lie one after another along the rows of `query` `[1,H,Tq,D]`
    and of `key`, `value` `[1,Hkv,Tk,D]`: sequence `b`'s queries are rows
    `cu_seqlens_q[b] .. cu_seqlens_q[b+1]`, its keys rows
    `cu_seqlens_k[b] .. cu_seqlens_k[b+1]`. Each sequence attends to its
    own keys only, as one `attn.sdpa` of its rows would, with its own
    lengths: bottom-right causal, windows and ALiBi align to each
    sequence's last query and key (query `i` of sequence `b` sees key `j`
    under `bottom_right` iff `j ≤ i + len_k(b) − len_q(b)`). Rows of
    `query` that belong to no sequence (at or past `cu_seqlens_q[B]`) are 0.

    **Paged keys.** With `block_table(%table)` (`[B, MB]`, `i32` or
    `i64`), `key` and `value` are paged caches `[NB, BS, Hkv, D]` (`[NB,
    Hkv, BS, D]` with `layout = #attn.kv_layout<hnd>`), as for
    `attn.gather_pages`: sequence `b` has `len_k(b) = cu_seqlens_k[b+1] −
    cu_seqlens_k[b]` keys, key `j` at block `table[b, j / BS]`, row
    `j mod BS`. This is a continuous-batching step: some sequences
    prefilling a chunk, others decoding one token, all against their own
    pages, in one op and without padding the queries.

    FlashAttention: `flash_attn_varlen_func(q, k, v, cu_seqlens_q,
    cu_seqlens_k, max_seqlen_q, max_seqlen_k, causal=...)` with `q`
    `[total_q, H, D]` viewed as `[1, H, total_q, D]`.

    **Usage.**

    ```
    %o = attn.sdpa_varlen %q, %k, %v, %cu_q, %cu_k [alibi(%slopes)] [sinks(%sinks)]
        {scale = s, causal = #attn.causal<…>, softcap = c, window = #attn.window<…>}
        : (type(%q), type(%k), type(%v), tensor<(B+1)xi32>, tensor<(B+1)xi32>, …) -> type(%o)
    %o = attn.sdpa_varlen %q, %kc, %vc, %cu_q, %cu_k block_table(%table) …
        { layout = #attn.kv_layout<nhd|hnd> (default nhd), … } : (…) -> type(%o)
    ```

    The attributes and `alibi` (`[H]`), `sinks` (`[H]`) mean what they
    mean on `attn.sdpa`, per sequence. `attn-decompose` expands the op into
    a loop over the sequences of `attn.sdpa` on slices of the rows (no
    padding, no copies of the inputs), which every pipeline then lowers
    (the CPU pipeline's fused kernel reads each sequence's rows in place).
    With a block table each sequence's `attn.sdpa` takes its keys from
    `attn.gather_pages` of its row of the table with `key_lengths`, which
    the fused kernels read from the pages in place.

    **Run time.** Offsets are clamped into `[0, Tq]` / `[0, Tk]` and each
    sequence's end to at least its start, so no contents of the offset
    arrays make the compiled code read outside Q, K or V; the Python call
    refuses offsets that do not start at 0 or decrease. With a block
    table, `len_k(b)` is clamped into `[0, MB·BS]` and every block id into
    `[0, NB)`; `attn-run`, the C++ API and Python check a table and
    `cu_seqlens_k` that are function arguments before the call: a length
    outside `[0, MB·BS]` or a block id outside `[0, NB)` in a block a
    sequence uses is an error (exit status 2, an error status, an
    exception).

    **Verifier.**
    - `query` rank 4 `[1,H,Tq,D]`, `key` `[1,Hkv,Tk,D]`, `value`
      `[1,Hkv,Tk,Dv]` (batch dims 1, one element type); `H % Hkv = 0`.
    - `cu_seqlens_q`, `cu_seqlens_k` rank 1, `i32`, of one size `B+1 ≥ 1`.
    - With `block_table`: `key` `[NB,BS,Hkv,D]` and `value`
      `[NB,BS,Hkv,Dv]` (`[NB,Hkv,BS,·]` for `hnd`) with one `NB`, `BS`,
      `Hkv`; `block_table` rank 2 `[B,MB]`. Without, `layout` must not be
      given.
    - `alibi`, `sinks` `[H]`; `scale`, `softcap` finite, positive.
    - The result is `[1,H,Tq,Dv]` with the query's element type.

    **Folds.** None.

    **Example** (two sequences of 3 and 5 tokens, GQA, causal):

    ```mlir
    func.func @varlen(%q: tensor<1x8x8x64xf32>, %k: tensor<1x2x8x64xf32>, %v: tensor<1x2x8x64xf32>,
                      %cu: tensor<3xi32>) -> tensor<1x8x8x64xf32> {
      %o = attn.sdpa_varlen %q, %k, %v, %cu, %cu {causal = #attn.causal<bottom_right>}
          : (tensor<1x8x8x64xf32>, tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32>, tensor<3xi32>,
             tensor<3xi32>) -> tensor<1x8x8x64xf32>
      return %o : tensor<1x8x8x64xf32>
    }
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$query, Attn_FloatTensor:$key, Attn_FloatTensor:$value,
                       RankedTensorOf<[I32]>:$cu_seqlens_q, RankedTensorOf<[I32]>:$cu_seqlens_k,
                       Optional<Attn_BlockTableTensor>:$block_table,
                       Optional<Attn_SlopesTensor>:$alibi_slopes,
                       Optional<Attn_SinksTensor>:$sinks,
                       OptionalAttr<Attn_F32Attr>:$scale,
                       OptionalAttr<Attn_CausalKindAttr>:$causal,
                       OptionalAttr<Attn_F32Attr>:$softcap,
                       OptionalAttr<Attn_WindowAttr>:$window,
                       OptionalAttr<Attn_KvLayoutAttr>:$layout);
  let results = (outs Attn_FloatTensor:$result);
  let extraClassDeclaration = [{
    /// The layout of paged caches (nhd unless given).
    KvLayout getCacheLayout() { return getLayout().value_or(KvLayout::nhd); }
  }];
  let assemblyFormat = [{
    $query `,` $key `,` $value `,` $cu_seqlens_q `,` $cu_seqlens_k
    (`block_table` `(` $block_table^ `)`)? (`alibi` `(` $alibi_slopes^ `)`)? (`sinks` `(` $sinks^ `)`)?
    attr-dict `:` functional-type(operands, results)
  }];
}

#endif // ATTN_SERVING_OPS_TD
